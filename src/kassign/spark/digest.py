"""Stages 2-3 from the one-pass key figures: partition load, hot keys, the partition-count sweep.

The pipeline's one pass gives one row per (topic, key, partition) and one per set-aside reason
(``records``, ``bytes``; keyed rows also carry ``key_display`` and the key's 31-bit murmur2
``hash``): as an Arrow table merged on the driver (``kassign.spark.key_merge``), or as Parquet
that Spark's aggregation wrote (the Arrow engine, and counts beyond Spark's result limit). Those rows
are as many as the distinct keys, so the driver takes them in Arrow batches (from Parquet, streamed)
and keeps only what is per partition, per partition count or per reason, and no further Spark job
(each one a query to plan and compile) is needed. On the way it writes the ``key_stats``
table (the keyed rows).

Example: keys "a" (hash 6, 10 bytes) and "b" (hash 9, 30 bytes) in topic t give, for the
sweep, partition counts n=1: [40]; n=2: [10, 30] (6 mod 2 = 0, 9 mod 2 = 1); n=3: [40, 0, 0]
(both hashes are 0 mod 3); and "b" is the hot key of its partition under the current count.

Changing the partition count: for each candidate count ``m`` the sweep also sums the keys and
bytes that Java's partitioner would put on another partition than under today's count ``n``
(``hash % m != hash % n``): what ``kafka-topics --alter --partitions m`` does to per-key order.

Live topics (``live``): the rows' partition is where the records are, and three more figures are
kept: per partition, where Java's partitioner would put the same records (keyless ones where
they are); the offsets not read, per partition and reason (rows whose reason starts with
``GAP_PREFIX``, their offsets counted in ``bytes``); and the forensics
(``kassign.spark.forensics``), for which every piece holds each of its keys whole: a table merged
on the driver is cut where the key hash changes, Parquet is read one file (one shuffle partition,
clustered by key) at a time.

Data layout: per batch, numpy arrays (int64 hashes and sizes, int32 partitions) and pyarrow
group-bys; per topic, int64 arrays per partition count (keyed bytes per partition, moved
bytes, staying keys).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from kassign.spark.forensics import Forensics

KEY_STATS_COLUMNS = ("topic", "key", "partition", "key_records", "key_bytes", "key_display", "hash")
# The key-figure columns key_stats is written from, in KEY_STATS_COLUMNS' order.
_KEY_STATS_SOURCE = ["topic", "key", "partition", "records", "bytes", "key_display", "hash"]
GAP_PREFIX = "offsets not read: "  # figure rows of a live read that count offsets, not records
HOT_KEY_ORDER = [("topic", "ascending"), ("partition", "ascending"), ("key_bytes", "descending"),
                 ("key_display", "ascending")]


@dataclass
class PartitionFigures:
    records: int = 0
    bytes: int = 0
    keyed_records: int = 0
    distinct_keys: int = 0
    keyless_bytes: int = 0


@dataclass
class Digest:
    """What the later stages need from the key figures, all of it small."""

    reasons: dict[str, int] = field(default_factory=dict)
    partitions: dict[tuple[str, int], PartitionFigures] = field(default_factory=dict)
    keyless_bytes: dict[str, int] = field(default_factory=dict)
    hot_keys: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    sweep: dict[str, list[np.ndarray]] = field(default_factory=dict)  # topic -> [bytes per partition, n = 1..max]
    moved_bytes: dict[str, np.ndarray] = field(default_factory=dict)  # topic -> keyed bytes that move, n = 1..max
    staying_keys: dict[str, np.ndarray] = field(default_factory=dict)  # topic -> keys that stay, n = 1..max
    keyed_rows: dict[str, int] = field(default_factory=dict)  # topic -> distinct keys
    java: dict[tuple[str, int], list[int]] = field(default_factory=dict)  # live: [records, bytes] Java would put there
    gaps: dict[tuple[str, int, str], int] = field(default_factory=dict)  # live: offsets not read, by reason

    def topics(self) -> dict[str, dict[str, int]]:
        """Per topic: records, bytes and keyless bytes."""
        result: dict[str, dict[str, int]] = {}
        for (topic, _), figures in self.partitions.items():
            entry = result.setdefault(topic, {"records": 0, "bytes": 0, "null_bytes": self.keyless_bytes.get(topic, 0)})
            entry["records"] += figures.records
            entry["bytes"] += figures.bytes
        return result

    def hottest_key_bytes(self, topic: str) -> int:
        return max((hot[0]["bytes"] for (t, _), hot in self.hot_keys.items() if t == topic and hot), default=0)


def _batches(path: Path, columns: list[str]) -> Iterator[pa.Table]:
    dataset = ds.dataset(path.as_posix(), format="parquet")
    for batch in dataset.to_batches(columns=columns, batch_size=1 << 18):
        if batch.num_rows:
            yield pa.Table.from_batches([batch])


def _add_totals(digest: Digest, table: pa.Table) -> None:
    keyed = pc.is_valid(table["key"])
    table = table.append_column("keyed_records", pc.if_else(keyed, table["records"], 0)).append_column(
        "keyless_bytes", pc.if_else(keyed, 0, table["bytes"]))
    sums = table.group_by(["topic", "partition", "reason"]).aggregate(
        [("records", "sum"), ("bytes", "sum"), ("keyed_records", "sum"), ("key", "count"), ("keyless_bytes", "sum")])
    for row in sums.to_pylist():
        reason = row["reason"]
        if reason is not None and reason.startswith(GAP_PREFIX):
            slot = (row["topic"], row["partition"], reason[len(GAP_PREFIX):])
            digest.gaps[slot] = digest.gaps.get(slot, 0) + (row["bytes_sum"] or 0)
            continue
        if reason is not None:
            digest.reasons[reason] = digest.reasons.get(reason, 0) + row["records_sum"]
            continue
        figures = digest.partitions.setdefault((row["topic"], row["partition"]), PartitionFigures())
        figures.records += row["records_sum"]
        figures.bytes += row["bytes_sum"] or 0
        figures.keyed_records += row["keyed_records_sum"]
        figures.distinct_keys += row["key_count"]
        figures.keyless_bytes += row["keyless_bytes_sum"] or 0
        digest.keyless_bytes[row["topic"]] = digest.keyless_bytes.get(row["topic"], 0) + (row["keyless_bytes_sum"] or 0)


def _topic_numbers(topic: pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    """The column's distinct topics, and each row's number among them (-1 for null): from the column's
    dictionary encoding, not by sorting and comparing a Python string per row (a few topics, many rows)."""
    encoded = topic.combine_chunks().dictionary_encode()
    return encoded.dictionary.to_pylist(), encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)


def _topic_rows(topic: pa.ChunkedArray) -> Iterator[tuple[str, np.ndarray]]:
    """Each distinct topic of the column with a mask of its rows."""
    names, numbers = _topic_numbers(topic)
    for number, name in enumerate(names):
        yield name, numbers == number


def _add_java(digest: Digest, good: pa.Table, counts: Mapping[str, int]) -> None:
    """Live: records and bytes per partition where Java's partitioner puts them (keyless ones where they are)."""
    actual = good["partition"].to_numpy(zero_copy_only=False).astype(np.int64)
    hashes = good["hash"].fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    records = good["records"].to_numpy(zero_copy_only=False).astype(np.int64)
    sizes = good["bytes"].fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    for topic, rows in sorted(_topic_rows(good["topic"])):
        n = counts[topic]
        h = hashes[rows]
        java = np.where(h >= 0, h % n, actual[rows])
        per_records = np.bincount(java, weights=records[rows].astype(np.float64), minlength=n)
        per_bytes = np.bincount(java, weights=sizes[rows].astype(np.float64), minlength=n)
        for p in np.flatnonzero(per_records):
            slot = digest.java.setdefault((topic, int(p)), [0, 0])
            slot[0] += int(per_records[p])
            slot[1] += int(per_bytes[p])


def _top_keys(candidates: pa.Table, hot_keys: int) -> pa.Table:
    """The first ``hot_keys`` rows of each (topic, partition) in hot-key order. Only rows whose bytes reach
    their partition's ``hot_keys``-th biggest can be among them (``hot_key_contenders``), so only those are
    sorted by every column of the order, text included."""
    ordered = hot_key_contenders(candidates, hot_keys).sort_by(HOT_KEY_ORDER)
    topic = ordered["topic"].to_numpy(zero_copy_only=False)
    partition = ordered["partition"].to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.r_[True, (topic[1:] != topic[:-1]) | (partition[1:] != partition[:-1])])
    rank = np.arange(len(topic)) - np.repeat(starts, np.diff(np.r_[starts, len(topic)]))
    return ordered.filter(pa.array(rank < hot_keys))


def hot_key_contenders(table: pa.Table, hot_keys: int) -> pa.Table:
    """The rows of ``table`` whose ``key_bytes`` are at least the ``hot_keys``-th biggest of their (topic,
    partition), ties included: every row among the first ``hot_keys`` of its partition in hot-key order is
    one (those ahead of a row with fewer bytes number ``hot_keys`` already). ``table`` itself where some bytes
    are null (their place in the order is Arrow's to say) or it is small."""
    if table.num_rows <= 4 * hot_keys or table["key_bytes"].null_count or hot_keys <= 0:
        return table
    _, topic = _topic_numbers(table["topic"])
    partition = table["partition"].fill_null(-1).to_numpy(zero_copy_only=False)
    size = table["key_bytes"].to_numpy(zero_copy_only=False).astype(np.int64)
    order = np.lexsort((-size, partition, topic))  # by (topic, partition), biggest first
    topic, partition = topic[order], partition[order]
    starts = np.flatnonzero(np.r_[True, (topic[1:] != topic[:-1]) | (partition[1:] != partition[:-1])])
    counts = np.diff(np.r_[starts, len(order)])
    threshold = np.empty(len(order), np.int64)
    threshold[order] = np.repeat(size[order[starts + np.minimum(counts, hot_keys) - 1]], counts)
    return table.filter(pa.array(size >= threshold))


def _add_sweep(digest: Digest, keyed: pa.Table, max_partitions: int, first: np.ndarray | None = None,
               counts: Mapping[str, int] | None = None) -> None:
    """The sweep, and for each count what changing to it moves: a key moves when Java's partition for it
    under that count differs from its partition under today's count (``counts``; without them, the rows'
    partition, which is Java's). ``first`` marks one row per key (a live topic's split key has several)."""
    hashes = keyed["hash"].to_numpy(zero_copy_only=False).astype(np.int64)
    sizes = keyed["key_bytes"].to_numpy(zero_copy_only=False).astype(np.float64)  # exact below 2^53 per batch
    partitions = keyed["partition"].to_numpy(zero_copy_only=False).astype(np.int64)
    one_per_key = np.ones(keyed.num_rows, bool) if first is None else first
    for name, rows in sorted(_topic_rows(keyed["topic"])):
        h, w, once = hashes[rows], sizes[rows], one_per_key[rows]
        today = h % counts[name] if counts is not None else partitions[rows]
        per_count = digest.sweep.setdefault(name, [np.zeros(n, np.int64) for n in range(1, max_partitions + 1)])
        moved = digest.moved_bytes.setdefault(name, np.zeros(max_partitions, np.int64))
        staying = digest.staying_keys.setdefault(name, np.zeros(max_partitions, np.int64))
        digest.keyed_rows[name] = digest.keyed_rows.get(name, 0) + int(once.sum())
        for n, acc in enumerate(per_count, start=1):
            position = h % n
            acc += np.bincount(position, weights=w, minlength=n).astype(np.int64)
            stays = position == today
            moved[n - 1] += int(w[~stays].sum())
            staying[n - 1] += int((stays & once).sum())


PIECE_ROWS = 1 << 18  # rows the forensics hold at once (their matrices are 15 x rows)


def _pieces(figures: Path | pa.Table, columns: list[str], whole_keys: bool) -> Iterator[pa.Table]:
    """The figures in Arrow batches; or, with ``whole_keys``, in pieces that each hold every row of their keys:
    one file (one shuffle partition, clustered by key) at a time, a big file read again for each slice of the
    key hashes (``hash & (k - 1) == i``), so that no piece is much bigger than ``PIECE_ROWS``."""
    if isinstance(figures, pa.Table):  # merged on the driver
        yield from _table_pieces(figures.select(columns), whole_keys)
        return
    if not whole_keys:
        yield from _batches(figures, columns)
        return
    for part in sorted(figures.rglob("*.parquet")):
        rows = pq.ParquetFile(part.as_posix()).metadata.num_rows
        slices = 1
        while slices * PIECE_ROWS < rows:
            slices *= 2
        if slices == 1:
            table = pq.read_table(part.as_posix(), columns=columns)
            if table.num_rows:
                yield table
            continue
        dataset = ds.dataset(part.as_posix(), format="parquet")
        hashed = pc.bit_wise_and(ds.field("hash"), slices - 1)
        for i in range(slices):
            chosen = hashed == i
            if i == 0:  # keyless rows and gap rows have no hash
                chosen = chosen | ds.field("hash").is_null()
            table = dataset.to_table(columns=columns, filter=chosen)
            if table.num_rows:
                yield table


def _table_pieces(table: pa.Table, whole_keys: bool) -> Iterator[pa.Table]:
    """``table`` in pieces of about ``PIECE_ROWS`` rows; with ``whole_keys`` sorted by hash and cut only where
    the hash changes, so that every row of a key (same topic and key, so same hash) is in one piece."""
    if not whole_keys:
        for batch in table.to_batches(max_chunksize=PIECE_ROWS):
            if batch.num_rows:
                yield pa.Table.from_batches([batch])
        return
    if table.num_rows > PIECE_ROWS:
        table = table.sort_by([("hash", "ascending")])
    hashes = table["hash"].fill_null(-1).to_numpy(zero_copy_only=False)
    start = 0
    while start < len(hashes):
        end = min(start + PIECE_ROWS, len(hashes))
        while end < len(hashes) and hashes[end] == hashes[end - 1]:
            end += 1
        yield table.slice(start, end - start)
        start = end


class _KeyStats:
    """key_stats' Parquet file, written piece by piece on a thread of its own: Arrow lets go of the GIL while it
    encodes and compresses, so writing a piece overlaps its sweep and hot keys. Pieces are written in order."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kassign-key-stats")
        self._writes: list[Future] = []
        self._writer: pq.ParquetWriter | None = None
        self._closed = False

    @property
    def written(self) -> bool:
        return bool(self._writes)

    def write(self, table: pa.Table) -> None:
        self._writes.append(self._pool.submit(self._write, table))

    def _write(self, table: pa.Table) -> None:
        if self._writer is None:
            self._writer = pq.ParquetWriter(self._path.as_posix(), table.schema)
        self._writer.write_table(table)

    def close(self) -> None:
        """Waits for every piece and closes the file, raising the first failed write's error; once only."""
        if self._closed:
            return
        self._closed = True
        self._pool.shutdown(wait=True)
        try:
            for write in self._writes:
                write.result()
        finally:
            if self._writer is not None:
                self._writer.close()


def digest_figures(figures: Path | pa.Table, key_stats_path: Path, max_partitions: int, hot_keys: int,
                   live: LiveFigures | None = None) -> Digest:
    """Stream the key figures once: totals per partition and reason, hot keys, the sweep; write key_stats.
    With ``live``, also the Java-modelled load, the offsets not read and the forensics. The figures are
    the Parquet Spark wrote, or the table merged on the driver (``kassign.spark.key_merge``)."""
    digest = Digest()
    candidates: pa.Table | None = None
    key_stats_path.mkdir(parents=True, exist_ok=True)
    key_stats = _KeyStats(key_stats_path / "part-0.parquet")
    columns = ["topic", "key", "partition", "reason", "records", "bytes", "key_display", "hash"]
    try:
        for table in _pieces(figures, columns, live is not None and live.forensics is not None):
            _add_totals(digest, table)
            good = table.filter(pc.is_null(table["reason"]))
            keyed = good.filter(pc.is_valid(good["key"]))
            first = None
            if live is not None:
                _add_java(digest, good, live.counts)
            if live is not None and live.forensics is not None:
                keyless = good.filter(pc.is_null(good["key"])).group_by("topic").aggregate([("records", "sum")])
                for topic, records in zip(keyless["topic"].to_pylist(), keyless["records_sum"].to_pylist()):
                    live.forensics.add_keyless(topic, records)
                if keyed.num_rows:
                    first = live.forensics.add(keyed)
            if not keyed.num_rows:
                continue
            keyed = keyed.select(_KEY_STATS_SOURCE).rename_columns(list(KEY_STATS_COLUMNS))
            key_stats.write(keyed)
            _add_sweep(digest, keyed, max_partitions, first, live.counts if live is not None else None)
            top = _top_keys(keyed, hot_keys)
            candidates = top if candidates is None else _top_keys(pa.concat_tables([candidates, top]), hot_keys)
        key_stats.close()
        if not key_stats.written:  # no keyed record: an empty table with the columns
            schema = figures.schema if isinstance(figures, pa.Table) else ds.dataset(
                figures.as_posix(), format="parquet").schema
            empty = pa.table({new: pa.array([], schema.field(old).type)
                              for old, new in zip(_KEY_STATS_SOURCE, KEY_STATS_COLUMNS)})
            pq.write_table(empty, (key_stats_path / "part-0.parquet").as_posix())
    finally:
        key_stats.close()
        if live is not None and live.forensics is not None:
            live.forensics.close()
    for row in (candidates.to_pylist() if candidates is not None else []):
        figures = digest.partitions[(row["topic"], row["partition"])]
        digest.hot_keys.setdefault((row["topic"], row["partition"]), []).append({
            "key": row["key_display"], "records": row["key_records"], "bytes": row["key_bytes"],
            "share": round(row["key_bytes"] / max(figures.bytes, 1), 6)})
    return digest


@dataclass
class LiveFigures:
    """What the digest needs for a live read: each topic's partition count, and the forensics to feed
    (None: no forensics; then a split key counts once per partition it is on)."""

    counts: Mapping[str, int]
    forensics: Forensics | None
