"""Stages 2-3 from the one-pass key figures: partition load, hot keys, the partition-count sweep.

The pipeline's single Spark aggregation writes one row per (topic, key, partition) and one
per set-aside reason (``records``, ``bytes``; keyed rows also carry ``key_display`` and the
key's 31-bit murmur2 ``hash``). Those rows are as many as the distinct keys, so the driver
streams them from the written Parquet in Arrow batches and keeps only what is per partition,
per partition count or per reason: memory does not grow with the keys, and no further Spark
job (each one a query to plan and compile) is needed. On the way it writes the ``key_stats``
table (the keyed rows).

Example: keys "a" (hash 6, 10 bytes) and "b" (hash 9, 30 bytes) in topic t give, for the
sweep, partition counts n=1: [40]; n=2: [10, 30] (6 mod 2 = 0, 9 mod 2 = 1); n=3: [40, 0, 0]
(both hashes are 0 mod 3); and "b" is the hot key of its partition under the current count.

Data layout: per batch, numpy arrays (int64 hashes and sizes, int32 partitions) and pyarrow
group-bys; per topic, one int64 array of keyed bytes per partition count.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

KEY_STATS_COLUMNS = ("topic", "key", "partition", "key_records", "key_bytes", "key_display", "hash")
# The key-figure columns key_stats is written from, in KEY_STATS_COLUMNS' order.
_KEY_STATS_SOURCE = ["topic", "key", "partition", "records", "bytes", "key_display", "hash"]
HOT_KEY_ORDER = [("topic", "ascending"), ("partition", "ascending"), ("key_bytes", "descending"),
                 ("key_display", "ascending")]


@dataclass
class PartitionFigures:
    records: int = 0
    bytes: int = 0
    keyed_records: int = 0
    distinct_keys: int = 0


@dataclass
class Digest:
    """What the later stages need from the key figures, all of it small."""

    reasons: dict[str, int] = field(default_factory=dict)
    partitions: dict[tuple[str, int], PartitionFigures] = field(default_factory=dict)
    keyless_bytes: dict[str, int] = field(default_factory=dict)
    hot_keys: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    sweep: dict[str, list[np.ndarray]] = field(default_factory=dict)  # topic -> [bytes per partition, n = 1..max]

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
        if row["reason"] is not None:
            digest.reasons[row["reason"]] = digest.reasons.get(row["reason"], 0) + row["records_sum"]
            continue
        figures = digest.partitions.setdefault((row["topic"], row["partition"]), PartitionFigures())
        figures.records += row["records_sum"]
        figures.bytes += row["bytes_sum"] or 0
        figures.keyed_records += row["keyed_records_sum"]
        figures.distinct_keys += row["key_count"]
        digest.keyless_bytes[row["topic"]] = digest.keyless_bytes.get(row["topic"], 0) + (row["keyless_bytes_sum"] or 0)


def _top_keys(candidates: pa.Table, hot_keys: int) -> pa.Table:
    """The first ``hot_keys`` rows of each (topic, partition) in hot-key order."""
    ordered = candidates.sort_by(HOT_KEY_ORDER)
    topic = ordered["topic"].to_numpy(zero_copy_only=False)
    partition = ordered["partition"].to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.r_[True, (topic[1:] != topic[:-1]) | (partition[1:] != partition[:-1])])
    rank = np.arange(len(topic)) - np.repeat(starts, np.diff(np.r_[starts, len(topic)]))
    return ordered.filter(pa.array(rank < hot_keys))


def _add_sweep(digest: Digest, keyed: pa.Table, max_partitions: int) -> None:
    topics = keyed["topic"].to_numpy(zero_copy_only=False)
    hashes = keyed["hash"].to_numpy(zero_copy_only=False).astype(np.int64)
    sizes = keyed["key_bytes"].to_numpy(zero_copy_only=False).astype(np.float64)  # exact below 2^53 per batch
    for topic in np.unique(topics):
        rows = topics == topic
        h, w = hashes[rows], sizes[rows]
        per_count = digest.sweep.setdefault(str(topic), [np.zeros(n, np.int64) for n in range(1, max_partitions + 1)])
        for n, acc in enumerate(per_count, start=1):
            acc += np.bincount(h % n, weights=w, minlength=n).astype(np.int64)


def digest_figures(figures_path: Path, key_stats_path: Path, max_partitions: int, hot_keys: int) -> Digest:
    """Stream the key figures once: totals per partition and reason, hot keys, the sweep; write key_stats."""
    digest = Digest()
    candidates: pa.Table | None = None
    key_stats_path.mkdir(parents=True, exist_ok=True)
    writer: pq.ParquetWriter | None = None
    columns = ["topic", "key", "partition", "reason", "records", "bytes", "key_display", "hash"]
    try:
        for table in _batches(figures_path, columns):
            _add_totals(digest, table)
            keyed = table.filter(pc.and_(pc.is_null(table["reason"]), pc.is_valid(table["key"])))
            if not keyed.num_rows:
                continue
            keyed = keyed.select(_KEY_STATS_SOURCE).rename_columns(list(KEY_STATS_COLUMNS))
            if writer is None:
                writer = pq.ParquetWriter((key_stats_path / "part-0.parquet").as_posix(), keyed.schema)
            writer.write_table(keyed)
            _add_sweep(digest, keyed, max_partitions)
            top = _top_keys(keyed, hot_keys)
            candidates = top if candidates is None else _top_keys(pa.concat_tables([candidates, top]), hot_keys)
        if writer is None:  # no keyed record: an empty table with the columns
            schema = ds.dataset(figures_path.as_posix(), format="parquet").schema
            empty = pa.table({new: pa.array([], schema.field(old).type)
                              for old, new in zip(_KEY_STATS_SOURCE, KEY_STATS_COLUMNS)})
            pq.write_table(empty, (key_stats_path / "part-0.parquet").as_posix())
    finally:
        if writer is not None:
            writer.close()
    for row in (candidates.to_pylist() if candidates is not None else []):
        figures = digest.partitions[(row["topic"], row["partition"])]
        digest.hot_keys.setdefault((row["topic"], row["partition"]), []).append({
            "key": row["key_display"], "records": row["key_records"], "bytes": row["key_bytes"],
            "share": round(row["key_bytes"] / max(figures.bytes, 1), 6)})
    return digest
