"""Forensics: which producer's partitioner put the keyed records of a live topic where they are.

The rule: a keyed record is *explained* by a partitioner when its actual partition is the one
that partitioner picks for its key on the topic's partition count (``partition_for_key``; a
client that would not hash the key, such as ``librdkafka:consistent_random`` with an empty
key, explains nothing). For each partitioner of ``kassign.producer.clients`` (``java``
first, then the order ``kassign partition --help`` lists them):

- ``records``: keyed records it explains; ``keys``: distinct keys all of whose records it
  explains (so never a split key: one partitioner puts one key on one partition);
- ``unexplained_records`` / ``unexplained_keys``: keyed records no partitioner explains, and
  the keys with at least one such record (a producer that named the partition, a custom
  partitioner, or a partition count that changed);
- ``split_keys``: keys whose records sit on more than one partition (their order is not kept);
- ``best``: the partitioner with the most records (ties: the earlier in that order).

Worked example, 12 partitions: key ``b"user-8"`` goes to 9 under ``java`` (murmur2) and to 0
under ``librdkafka:consistent_random`` (CRC32). Three records of it on partition 9 and one on
partition 0: ``java`` explains 3 records, ``consistent_random`` 1; neither explains the key
(it is split); unexplained 0; split keys 1.

Where no partitioner explains a record, Java's rule on a smaller count is tried too: records
that ``(murmur2 & 0x7fffffff) % m`` puts where they are for some ``m`` below today's count were
most likely written before the count was raised to today's (``earlier_partition_count``).

Keyless records (``keyless_placement``): a producer that is rack-aware (Kafka 4.4, KIP-1123) draws its sticky
partition among the partitions led in its rack only, so over the records read its keyless records sit only on
partitions led in the producers' racks, while a plain sticky producer's reach every rack's partitions. A rack
whose partitions got no keyless record although others got many tells the two apart when a plain sticky
producer would have reached it: at least one draw per ``2 x batch.size`` keyless bytes (16 KiB, Kafka's default),
each landing in the avoided racks with probability (their partitions / all partitions). Where that chance of
avoiding them is above 1%, or every partition is led in one rack, or no rack is known, forensics say they cannot
tell, and why. Worked example: 6 partitions led in ``a, b, c, a, b, c``, 2 MB of keyless records all on
partitions 1 and 4: rack ``a`` and ``c`` (4 of 6 partitions) were avoided over at least 61 draws, a chance of
(2/6)^61 for a plain producer: rack-aware producers in ``b``. The leaders are the cluster's as the topics were
read (a leader that moved since is not seen), and the window is the records read (``--since``/``--last``).

Input: the key figures of one shuffle partition at a time (``kassign.spark.digest``), one row
per (topic, key, partition); all rows of a key are in the same piece, so keys are grouped
exactly without the driver holding more than one piece. Data layout: per piece, numpy arrays
(an int32 partition matrix, one row per partitioner, from ``partitions_for_clients``); per
topic, int64 sums.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kassign.producer.clients import NAMES
from kassign.producer.partitioner import partitions_for_clients

PARTITIONERS = NAMES
JAVA = PARTITIONERS.index("java")
KEYS_SCHEMA = pa.schema([
    ("topic", pa.string()), ("key", pa.binary()), ("key_display", pa.string()), ("split", pa.bool_()),
    ("unexplained", pa.bool_()), ("partitions", pa.list_(pa.int32())), ("records", pa.list_(pa.int64())),
    ("bytes", pa.list_(pa.int64())), ("explained_by", pa.list_(pa.list_(pa.string())))])

# How a person names each partitioner, and who writes that way (for the verdict).
_LIBRDKAFKA = "a librdkafka-based producer (confluent-kafka, kcat, ...)"
DESCRIPTIONS = {
    "java": ("Kafka's Java producer", "a Java producer (or one with a Java-compatible partitioner) writes here"),
    "librdkafka:consistent": ("librdkafka's consistent (CRC32)", f"{_LIBRDKAFKA} with partitioner=consistent writes here"),
    "librdkafka:consistent_random": ("librdkafka's default (CRC32)",
                                     f"{_LIBRDKAFKA} writes here without partitioner=murmur2_random"),
    "librdkafka:murmur2": ("librdkafka's murmur2", f"{_LIBRDKAFKA} with partitioner=murmur2 writes here"),
    "librdkafka:murmur2_random": ("librdkafka's murmur2_random",
                                  f"{_LIBRDKAFKA} with partitioner=murmur2_random writes here"),
    "librdkafka:fnv1a": ("librdkafka's fnv1a", f"{_LIBRDKAFKA} with partitioner=fnv1a writes here"),
    "librdkafka:fnv1a_random": ("librdkafka's fnv1a_random", f"{_LIBRDKAFKA} with partitioner=fnv1a_random writes here"),
    "kafkajs:default": ("KafkaJS's default", "a KafkaJS producer writes here"),
    "kafkajs:legacy": ("KafkaJS's legacy partitioner",
                       "a KafkaJS producer with Partitioners.LegacyPartitioner writes here"),
    "kafkajs:java-compatible": ("KafkaJS's Java-compatible partitioner", "a KafkaJS producer writes here"),
    "sarama:hash": ("Sarama's default (FNV-1a)", "a Go producer with Sarama's default hash partitioner writes here"),
    "sarama:reference-abs": ("Sarama's reference hash partitioner",
                             "a Go producer with Sarama's NewReferenceHashPartitioner writes here"),
    "sarama:hash-unsigned": ("Sarama's unsigned hash partitioner",
                             "a Go producer with Sarama's hash partitioner and WithHashUnsigned writes here"),
    "sarama:crc": ("Sarama's CRC32 partitioner", "a Go producer with Sarama's NewConsistentCRCHashPartitioner "
                   "writes here"),
    "sarama:murmur2": ("Sarama's murmur2 partitioner", "a Go producer with Sarama's murmur2 partitioner writes here"),
}


@dataclass
class TopicForensics:
    partitions: int
    keyed_records: int = 0
    null_key_records: int = 0
    distinct_keys: int = 0
    split_keys: int = 0
    unexplained_records: int = 0
    unexplained_keys: int = 0
    records: np.ndarray = field(default_factory=lambda: np.zeros(len(PARTITIONERS), np.int64))
    keys: np.ndarray = field(default_factory=lambda: np.zeros(len(PARTITIONERS), np.int64))
    # both[p, q]: keyed records that p and q both explain (the diagonal is ``records``)
    both: np.ndarray = field(default_factory=lambda: np.zeros((len(PARTITIONERS),) * 2, np.int64))
    patterns: dict[int, int] = field(default_factory=dict)  # bit p set: partitioner p explains; -> keyed records
    most_partitions: int = 0  # the most partitions one key sits on
    earlier: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # java on m = 1.. count-1


def _segments(keys: pa.Array, partitions: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(order that sorts the rows by key, then partition, start of each key's run in that order): a split
    key's partitions are listed in ascending order, whatever order its rows arrived in."""
    order = pc.sort_indices(pa.table({"key": keys, "partition": partitions}),
                            sort_keys=[("key", "ascending"), ("partition", "ascending")]).to_numpy()
    ordered = keys.take(pa.array(order))
    if len(ordered) <= 1:
        return order, np.zeros(len(ordered), np.int64)[: len(ordered)]
    differs = pc.not_equal(ordered.slice(1), ordered.slice(0, len(ordered) - 1)).to_numpy(zero_copy_only=False)
    return order, np.flatnonzero(np.r_[True, differs])


class Forensics:
    """Accumulates forensics over the key-figure pieces of a run; writes the split and unexplained keys."""

    def __init__(self, counts: Mapping[str, int], keys_path: Path) -> None:
        self.counts = dict(counts)
        self.topics: dict[str, TopicForensics] = {}
        self.keys_path = keys_path
        keys_path.mkdir(parents=True, exist_ok=True)
        self._writer: pq.ParquetWriter | None = None

    def _topic(self, topic: str) -> TopicForensics:
        if topic not in self.topics:
            n = self.counts[topic]
            self.topics[topic] = TopicForensics(n, earlier=np.zeros(max(n - 1, 0), np.int64))
        return self.topics[topic]

    def add_keyless(self, topic: str, records: int) -> None:
        self._topic(topic).null_key_records += int(records)

    def add(self, piece: pa.Table) -> np.ndarray:
        """One piece of keyed rows (topic, key, partition, records, bytes, key_display, hash); returns, per
        row in the piece's order, True for one row of each key (a split key has several rows)."""
        first = np.zeros(piece.num_rows, bool)
        topics = piece["topic"].to_numpy(zero_copy_only=False)
        for topic in np.unique(topics):
            rows = np.flatnonzero(topics == topic)
            first[rows] = self._add_topic(str(topic), piece.take(pa.array(rows)))
        return first

    def _add_topic(self, topic: str, table: pa.Table) -> np.ndarray:
        state = self._topic(topic)
        rows = {name: table[name].combine_chunks() for name in table.column_names}
        keys = rows["key"]
        actual = rows["partition"].to_numpy(zero_copy_only=False).astype(np.int32)
        records = rows["records"].to_numpy(zero_copy_only=False).astype(np.int64)
        placed = partitions_for_clients(keys, state.partitions, PARTITIONERS)
        match = placed == actual[None, :]
        weighted = match * records[None, :]
        state.records += weighted.sum(axis=1)
        state.both += weighted @ match.T.astype(np.int64)
        bits = (match.astype(np.int64) * (np.int64(1) << np.arange(len(PARTITIONERS), dtype=np.int64))[:, None]).sum(0)
        found, where = np.unique(bits, return_inverse=True)
        for pattern, total in zip(found.tolist(), np.bincount(where, weights=records).tolist()):
            state.patterns[pattern] = state.patterns.get(pattern, 0) + int(total)
        explained = match.any(axis=0)
        order, starts = _segments(keys, rows["partition"])
        sizes = np.diff(np.r_[starts, len(order)])
        split_sorted = np.repeat(sizes > 1, sizes)
        split = np.empty(len(order), bool)
        split[order] = split_sorted
        first = np.zeros(len(order), bool)
        first[order[starts]] = True
        state.keys += (match & ~split[None, :]).sum(axis=1)
        state.keyed_records += int(records.sum())
        state.distinct_keys += len(starts)
        state.split_keys += int((sizes > 1).sum())
        state.most_partitions = max(state.most_partitions, int(sizes.max()) if len(sizes) else 0)
        unexplained = ~explained
        state.unexplained_records += int(records[unexplained].sum())
        key_unexplained = np.maximum.reduceat(unexplained[order], starts) if len(starts) else np.zeros(0, bool)
        state.unexplained_keys += int(key_unexplained.sum())
        if unexplained.any() and len(state.earlier):
            hashes = rows["hash"].to_numpy(zero_copy_only=False)[unexplained].astype(np.int64)
            for m in range(1, state.partitions):
                state.earlier[m - 1] += int(records[unexplained][hashes % m == actual[unexplained]].sum())
        notable = np.repeat(np.asarray(key_unexplained, bool) | (sizes > 1), sizes)
        if notable.any():
            self._write_keys(topic, rows, order[notable], starts, sizes, notable, match, split_sorted, unexplained)
        return first

    def _write_keys(self, topic: str, rows: Mapping[str, pa.Array], picked: np.ndarray, starts: np.ndarray, sizes: np.ndarray,
                    notable: np.ndarray, match: np.ndarray, split_sorted: np.ndarray, unexplained: np.ndarray) -> None:
        """The split and unexplained keys of this piece: one row per key, its partitions and records on each."""
        run_sizes = sizes[np.asarray(notable[starts], bool)]
        offsets = pa.array(np.r_[0, np.cumsum(run_sizes)].astype(np.int32))
        firsts = picked[np.r_[0, np.cumsum(run_sizes)[:-1]].astype(np.int64)] if len(run_sizes) else picked[:0]
        take = pa.array(picked)
        names = [[PARTITIONERS[p] for p in np.flatnonzero(match[:, i])] for i in picked]
        key_unexplained = np.maximum.reduceat(unexplained[picked], np.r_[0, np.cumsum(run_sizes)[:-1]].astype(np.int64))
        table = pa.table({
            "topic": pa.array([topic] * len(run_sizes), pa.string()),
            "key": rows["key"].take(pa.array(firsts)),
            "key_display": rows["key_display"].take(pa.array(firsts)),
            "split": pa.array(run_sizes > 1),
            "unexplained": pa.array(key_unexplained.astype(bool)),
            "partitions": pa.ListArray.from_arrays(offsets, pc.cast(rows["partition"].take(take), pa.int32())),
            "records": pa.ListArray.from_arrays(offsets, pc.cast(rows["records"].take(take), pa.int64())),
            "bytes": pa.ListArray.from_arrays(offsets, pc.cast(rows["bytes"].take(take), pa.int64())),
            "explained_by": pa.ListArray.from_arrays(offsets, pa.array(names, pa.list_(pa.string()))),
        }, schema=KEYS_SCHEMA)
        if self._writer is None:
            self._writer = pq.ParquetWriter((self.keys_path / "part-0.parquet").as_posix(), KEYS_SCHEMA)
        self._writer.write_table(table)

    def close(self) -> None:
        if self._writer is None:
            pq.write_table(KEYS_SCHEMA.empty_table(), (self.keys_path / "part-0.parquet").as_posix())
        else:
            self._writer.close()
            self._writer = None

    def summary(self) -> dict[str, Any]:
        """Per topic, summary.json's ``forensics`` entry (plus the figures the verdict uses)."""
        return {topic: _topic_summary(state) for topic, state in sorted(self.topics.items())}


def _topic_summary(state: TopicForensics) -> dict[str, Any]:
    best = int(np.argmax(state.records)) if state.keyed_records else JAVA  # argmax: the first of equals
    entry: dict[str, Any] = {
        "keyed_records": state.keyed_records,
        "null_key_records": state.null_key_records,
        "partitioners": {name: {"records": int(state.records[i]), "keys": int(state.keys[i])}
                         for i, name in enumerate(PARTITIONERS)},
        "unexplained_records": state.unexplained_records,
        "unexplained_keys": state.unexplained_keys,
        "split_keys": state.split_keys,
        "best": PARTITIONERS[best],
        "distinct_keys": state.distinct_keys,
        "most_partitions_per_key": state.most_partitions,
    }
    entry["explanation"] = _families(state, best)
    also = entry["explanation"][1:]
    if also:
        entry["also"] = {"partitioner": preferred_name(also[0]["partitioners"]), "records": also[0]["gain"]}
    if state.unexplained_records and len(state.earlier) and state.earlier.max() > 0:
        m = int(np.argmax(state.earlier))
        entry["earlier_partition_count"] = {"partitions": m + 1, "records": int(state.earlier[m])}
    entry["verdict"] = verdict(entry, state.partitions, PARTITIONERS[_spoken(state, best)])
    return entry


# Which name to give a set of partitioners that place this data identically (their defaults first).
_PREFERRED = ("java", "librdkafka:consistent_random", "sarama:hash", "kafkajs:legacy")


def preferred_name(names: list[str]) -> str:
    """Of partitioners that place some data alike, the one people most likely run."""
    return next((n for n in _PREFERRED if n in names), names[0])


def _spoken(state: TopicForensics, chosen: int) -> int:
    """``chosen``, or the partitioner people more likely run among those that explain exactly the same records."""
    same = [q for q in range(len(PARTITIONERS))
            if state.records[q] == state.records[chosen] == state.both[chosen, q]]
    for name in _PREFERRED:
        if PARTITIONERS.index(name) in same:
            return PARTITIONERS.index(name)
    return chosen




def _family_of(state: TopicForensics, p: int) -> list[int]:
    """The partitioners that place this topic's keyed records exactly as ``p`` does."""
    return [q for q in range(len(PARTITIONERS)) if state.records[p] == state.records[q] == state.both[p, q]]


def _families(state: TopicForensics, best: int) -> list[dict[str, Any]]:
    """The explanation, greedily: the best partitioner's family, then each family that explains the most records
    the ones before it do not, while it explains clearly more than a wrong rule would by chance (a wrong rule
    agrees on about one record in ``partitions``). Each family: its partitioners, records, keys, and ``gain``:
    the records it explains that the families before it do not."""
    if not state.keyed_records:
        return []
    chosen = [best]
    families = []
    covered = 0
    for _ in range(len(PARTITIONERS)):
        head = chosen[-1]
        mask = sum(1 << p for p in chosen)
        gain = sum(n for pattern, n in state.patterns.items() if pattern >> head & 1 and not pattern & mask & ~(1 << head))
        members = _family_of(state, head)
        families.append({"partitioners": [PARTITIONERS[p] for p in members], "records": int(state.records[head]),
                         "keys": int(state.keys[head]), "gain": int(gain)})
        covered += gain
        remaining = {pattern: n for pattern, n in state.patterns.items() if pattern and not pattern & mask}
        left = sum(remaining.values())
        if not left:
            break
        gains = np.zeros(len(PARTITIONERS), np.int64)
        for pattern, n in remaining.items():
            for p in range(len(PARTITIONERS)):
                if pattern >> p & 1:
                    gains[p] += n
        candidate = int(np.argmax(gains))
        by_chance = left / max(state.partitions, 1)
        if gains[candidate] <= min(2 * by_chance, 0.9 * left):
            break
        chosen.append(_spoken(state, candidate))
    return families


def _share(part: int, whole: int) -> str:
    value = 100.0 * part / whole if whole else 0.0
    if 0 < value < 1:
        return "<1%"
    if 99 < value < 100:
        return ">99%"
    return f"{value:.0f}%"


def verdict(entry: Mapping[str, Any], partitions: int, spoken_best: str | None = None) -> str:
    """The forensics of one topic in words (``spoken_best``: the name to give the best partitioner's rule)."""
    keyed = entry["keyed_records"]
    if not keyed:
        return "no keyed records: nothing to attribute (records without a key go wherever their producer puts them)"
    best = entry["best"]
    best_records = entry["partitioners"][best]["records"]
    text = f"{_share(best_records, keyed)} of keyed records are where {DESCRIPTIONS[spoken_best or best][0]} puts them"
    for i, family in enumerate(entry.get("explanation", [])[1:]):
        name = preferred_name(family["partitioners"])
        text += (f"{' and' if i == 0 else ';'} {_share(family['gain'], keyed)} where {DESCRIPTIONS[name][0]} does: "
                 f"{DESCRIPTIONS[name][1]}")
    if entry["unexplained_records"]:
        text += (f"; {entry['unexplained_records']:,} keyed records ({_share(entry['unexplained_records'], keyed)}) "
                 "are where no known partitioner puts them")
        earlier = entry.get("earlier_partition_count")
        if earlier and earlier["records"] * 2 >= entry["unexplained_records"]:
            text += (f" ({_share(earlier['records'], entry['unexplained_records'])} of them where Java's rule puts "
                     f"them on {earlier['partitions']} partitions: written before the count was raised to "
                     f"{partitions}?)")
        else:
            text += " (a producer that names the partition, or a custom partitioner)"
    split = entry["split_keys"]
    if split:
        most = entry.get("most_partitions_per_key", 2)
        where = "two partitions" if most == 2 else f"up to {most} partitions"
        text += f"; {split:,} key{'s' if split > 1 else ''} sit{'' if split > 1 else 's'} on {where}, so " \
                f"{'their' if split > 1 else 'its'} order is not kept"
    elif best_records == keyed:
        text += "; every key is on one partition"
    return text + "."


# -- keyless records: rack-aware producers or not ---------------------------------------------------------------

DEFAULT_BATCH_SIZE = 16384  # Kafka's batch.size default: a sticky producer draws at least once per 2x this
_CHANCE = 0.01


def keyless_placement(keyless: list[tuple[int, int]], leader_racks: list[str | None],
                      batch_size: int = DEFAULT_BATCH_SIZE) -> dict[str, Any] | None:
    """Whether a topic's keyless records sit only on partitions led in some racks, as rack-aware producers put
    them, or anywhere, as plain sticky producers do. ``keyless``: per partition (records, bytes);
    ``leader_racks``: per partition, its leader's rack (None: no rack, or no leader). None without keyless records."""
    records = sum(r for r, _ in keyless)
    size = sum(b for _, b in keyless)
    if not records:
        return None
    n = len(keyless)
    racks: dict[str, dict[str, Any]] = {}
    for p, (r, b) in enumerate(keyless):
        name = leader_racks[p] if p < len(leader_racks) and leader_racks[p] else "(none)"
        entry = racks.setdefault(name, {"partitions": [], "keyless_records": 0, "keyless_bytes": 0})
        entry["partitions"].append(p)
        entry["keyless_records"] += r
        entry["keyless_bytes"] += b
    used = [name for name, e in racks.items() if e["keyless_records"]]
    avoided = [name for name, e in racks.items() if not e["keyless_records"]]
    draws = size // (2 * batch_size)
    result: dict[str, Any] = {"records": records, "bytes": size,
                              "partitions_with_keyless": sum(1 for r, _ in keyless if r), "racks": racks,
                              "draws_at_least": int(draws)}
    known = [name for name in racks if name != "(none)"]
    if not known:
        return {**result, "placement": "undetermined",
                "verdict": "keyless records: no leader has a rack, so rack-aware producers cannot be told apart"}
    if len(known) == 1 and "(none)" not in racks:
        return {**result, "placement": "undetermined",
                "verdict": f"keyless records: every partition is led in {known[0]}, so rack-aware producers look "
                           "like any other"}
    if "(none)" in used or not avoided:
        return {**result, "placement": "spread",
                "verdict": f"keyless records sit on partitions led in every rack ({result['partitions_with_keyless']} "
                           f"of {n} partitions): plain sticky producers (rack-aware producers in every rack would look "
                           "alike)"}
    share = sum(len(racks[name]["partitions"]) for name in avoided) / n
    chance = (1 - share) ** draws if draws else 1.0
    result["chance_plain"] = float(f"{chance:.3g}")
    where = ", ".join(used)
    away = ", ".join(avoided)
    if chance > _CHANCE:
        return {**result, "placement": "undetermined", "producer_racks": used,
                "verdict": f"keyless records sit only on partitions led in {where}, but too few of them to tell "
                           f"rack-aware producers from plain ones ({size:,} bytes: a plain sticky producer would "
                           f"miss {away} by chance {chance:.0%} of the time)"}
    return {**result, "placement": "rack-aware", "producer_racks": used,
            "verdict": f"keyless records sit only on partitions led in {where} and never on the "
                       f"{sum(len(racks[a]['partitions']) for a in avoided)} led in {away}: rack-aware producers "
                       f"(partitioner.rack.aware, Kafka 4.4) in {where} (a plain sticky producer would have reached "
                       f"{away} over these {size:,} bytes; leaders as the topic was read)"}
