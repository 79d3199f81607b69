"""Inputs of a plan, checked and turned into integer arrays (the only place that sees names).

``current`` (kafka-reassign-partitions.sh's JSON), the target brokers, ``exclude`` and
``sizes`` come in as Python objects; everything after this module works on int64 arrays:
partition index -> topic code, partition number, replication factor, current replica ids.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kassign.replicas.brokers import normalise_brokers as checked_brokers
from kassign.core.errors import KassignError, shown
from kassign.core.limits import JAVA_INT_MAX, is_whole_number
from kassign.core.text import utf8_problem


class PlanError(KassignError):
    """A reassignment plan cannot be made from this input; the message says what to fix."""


@dataclass
class Problem:
    """A current assignment and the brokers that should hold it, as arrays.

    Broker ids are Kafka's; ``targets`` (sorted ids) are the brokers that may hold replicas
    afterwards, index ``i`` of every per-broker array means ``targets[i]``.
    """

    topics: list[str]
    topic_of: np.ndarray  # int64[P], index into topics
    partition_of: np.ndarray  # int64[P]
    rf: np.ndarray  # int64[P]
    current: np.ndarray  # int64[P, W]: current replica ids in order (leader first), -1 padding
    targets: np.ndarray  # int64[n], sorted broker ids
    target_racks: list[str | None]
    racks: dict[int, str | None]  # every broker we know a rack for (targets and excluded)
    excluded: list[int]
    sizes: np.ndarray | None = None  # int64[P] bytes per replica, or None
    unsized: int = 0  # partitions the sizes did not mention (taken as 0 bytes)
    notes: list[str] = field(default_factory=list)
    document: dict = field(default_factory=dict)  # the current document as given (the rollback)

    @property
    def num_partitions(self) -> int:
        return len(self.rf)

    def target_index(self) -> np.ndarray:
        """``current`` with ids replaced by target indexes (-1: not a target broker)."""
        at = np.searchsorted(self.targets, self.current)
        at = np.minimum(at, len(self.targets) - 1)
        return np.where((self.current >= 0) & (self.targets[at] == self.current), at, -1).astype(np.int64)

    def names(self, index: int) -> tuple[str, int]:
        return self.topics[int(self.topic_of[index])], int(self.partition_of[index])


def _java_id(value: Any) -> bool:
    """A partition number or broker id as Kafka keeps it: a whole number (numpy integers too) in 0 .. 2^31-1."""
    return is_whole_number(value) and 0 <= value <= JAVA_INT_MAX


def load_document(current: Any) -> dict:
    """The current document as a dict: a dict as given, or JSON text/bytes parsed."""
    if isinstance(current, (str, bytes, bytearray)):
        try:
            current = json.loads(current)
        except ValueError as err:
            raise PlanError(f"current assignment is not valid JSON: {err}") from None
    if not isinstance(current, Mapping):
        raise PlanError("current assignment must be a JSON object like "
                        '{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}]}, '
                        f"got {type(current).__name__}")
    return dict(current)


def parse_current(current: Any) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict, list[str]]:
    """Check the document; return topics, topic codes, partitions, rf, replica ids, the document, notes."""
    doc = load_document(current)
    version = doc.get("version", 1)
    if version != 1:
        raise PlanError(f"current assignment: version must be 1 (the only one kafka-reassign-partitions.sh "
                        f"reads), got {version!r}")
    entries = doc.get("partitions")
    if not isinstance(entries, list):
        raise PlanError('current assignment has no "partitions" list')
    if not entries:
        raise PlanError('current assignment lists no partitions: nothing to plan')
    topic_codes: dict[str, int] = {}
    topic_of = np.empty(len(entries), np.int64)
    partition_of = np.empty(len(entries), np.int64)
    rf = np.empty(len(entries), np.int64)
    replica_lists: list[list[int]] = []
    seen: set[tuple[str, int]] = set()
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise PlanError(f"current assignment: partitions[{i}] must be an object with topic, partition, replicas")
        topic, partition, replicas = entry.get("topic"), entry.get("partition"), entry.get("replicas")
        if not isinstance(topic, str) or not topic:
            raise PlanError(f"current assignment: partitions[{i}] needs a non-empty \"topic\" string, got {topic!r}")
        if topic not in topic_codes and utf8_problem(topic, "topic name"):
            raise PlanError(f"current assignment: partitions[{i}]: {utf8_problem(topic, 'topic name')}")
        if not _java_id(partition):
            raise PlanError(f"current assignment: {topic} partitions[{i}]: \"partition\" must be a whole number "
                            f"from 0 to {JAVA_INT_MAX}, got {shown(partition)}")
        partition = int(partition)
        name = f"{topic}-{partition}"
        if (topic, partition) in seen:
            raise PlanError(f"current assignment lists {name} twice; each partition may appear once")
        seen.add((topic, partition))
        if not isinstance(replicas, list) or not replicas:
            raise PlanError(f"current assignment: {name} needs a non-empty \"replicas\" list of broker ids")
        if not all(type(b) is int for b in replicas) or not 0 <= min(replicas) <= max(replicas) <= JAVA_INT_MAX:
            for b in replicas:  # the common case above costs one pass
                if not _java_id(b):
                    raise PlanError(f"current assignment: {name} has replica {shown(b)}; broker ids are whole "
                                    f"numbers from 0 to {JAVA_INT_MAX}")
            replicas = [int(b) for b in replicas]
        if len(set(replicas)) != len(replicas):
            raise PlanError(f"current assignment: {name} lists a broker twice in {replicas}")
        log_dirs = entry.get("log_dirs")
        if log_dirs is not None and (not isinstance(log_dirs, list) or len(log_dirs) != len(replicas)):
            raise PlanError(f"current assignment: {name}: \"log_dirs\" must list one directory per replica")
        topic_of[i] = topic_codes.setdefault(topic, len(topic_codes))
        partition_of[i] = partition
        rf[i] = len(replicas)
        replica_lists.append(replicas)
    width = int(rf.max())
    current_ids = np.full((len(entries), width), -1, np.int64)
    for i, replicas in enumerate(replica_lists):
        current_ids[i, : len(replicas)] = replicas
    notes = []
    mixed = [t for t, code in topic_codes.items() if len(set(rf[topic_of == code].tolist())) > 1]
    if mixed:
        notes.append(f"replication factor differs between partitions of {', '.join(mixed[:5])}"
                     f"{' and more' if len(mixed) > 5 else ''}; each partition keeps its own")
    return list(topic_codes), topic_of, partition_of, rf, current_ids, doc, notes


def normalise_brokers(brokers: Iterable[Any]) -> list[tuple[int, str | None]]:
    """The target brokers, checked as every broker list is (:func:`kassign.replicas.brokers.normalise_brokers`; their
    order is free, since targets are sorted), and at least one."""
    result = checked_brokers(brokers, ordered=False, error=PlanError, context="brokers: ")
    if not result:
        raise PlanError("brokers: no brokers given; list the brokers that should hold replicas afterwards")
    return result


def build_problem(current: Any, brokers: Iterable[Any], exclude: Iterable[Any] = (),
                  sizes: Any = None) -> Problem:
    topics, topic_of, partition_of, rf, current_ids, doc, notes = parse_current(current)
    broker_list = normalise_brokers(brokers)
    racks = dict(broker_list)
    known = set(racks) | set(int(b) for b in np.unique(current_ids[current_ids >= 0]))
    excluded: list[int] = []
    for b in exclude or ():
        if not _java_id(b):
            raise PlanError(f"exclude: broker id must be a whole number from 0 to {JAVA_INT_MAX}, got {shown(b)}")
        b = int(b)
        if b not in known:
            raise PlanError(f"exclude: broker {b} is unknown: it is neither in the broker list nor holds a "
                            "replica now")
        excluded.append(b)
    targets = sorted(b for b in racks if b not in set(excluded))
    if not targets:
        raise PlanError("no broker is left to hold replicas once the excluded ones are drained")
    target_racks = [racks[b] for b in targets]
    with_rack = sum(r is not None for r in target_racks)
    if 0 < with_rack < len(targets):
        missing = [b for b, r in zip(targets, target_racks) if r is None]
        raise PlanError(f"brokers {', '.join(map(str, missing[:10]))} have no rack while others do; give every "
                        "broker a rack or none (as Kafka's rack-aware placement requires)")
    largest = int(rf.max())
    if largest > len(targets):
        where = int(np.argmax(rf))
        raise PlanError(f"{topics[topic_of[where]]}-{partition_of[where]} has replication factor {largest} but "
                        f"only {len(targets)} broker(s) would hold replicas")
    problem = Problem(topics, topic_of, partition_of, rf, current_ids, np.array(targets, np.int64), target_racks,
                      racks, excluded, notes=notes, document=doc)
    if sizes is not None:
        problem.sizes, problem.unsized = align_sizes(problem, sizes)
        total = float((problem.sizes.astype(np.float64) * rf).sum())
        if total > 2.0**62:  # loads and sums are int64 throughout
            raise PlanError(f"sizes: the replicas add up to about {total:.3g} bytes, more than a plan can count "
                            "exactly (2**62, about 4.6e18); give sizes in a coarser unit such as MiB")
        if problem.unsized:
            problem.notes.append(f"{problem.unsized} partition(s) have no size and count as 0 bytes")
    return problem


def _size_value(key: Any, value: Any, what: str = "sizes") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise PlanError(f"{what}: {key!r} -> {value!r} is not a number of bytes")
    if not math.isfinite(float(value)) or value < 0:
        raise PlanError(f"{what}: {key!r} -> {value!r}; {what} must be finite and >= 0")
    return int(round(float(value)))


def _size_pairs(sizes: Any, what: str = "sizes") -> Iterable[tuple[tuple[str, int], int]]:
    columns = getattr(sizes, "column_names", None)
    if columns is None and hasattr(sizes, "columns") and hasattr(sizes, "to_dict"):
        columns = list(sizes.columns)  # pandas
        sizes = {c: sizes[c].tolist() for c in columns}
    elif columns is not None:
        sizes = {c: sizes.column(c).to_pylist() for c in ("topic", "partition", "bytes") if c in columns}
    if columns is not None:
        missing = [c for c in ("topic", "partition", "bytes") if c not in columns]
        if missing:
            raise PlanError(f"sizes table needs columns topic, partition, bytes (the pipeline's partition_load); "
                            f"missing {', '.join(missing)}")
        for topic, partition, size in zip(sizes["topic"], sizes["partition"], sizes["bytes"]):
            yield (topic, partition), 0 if size is None else size
        return
    if not isinstance(sizes, Mapping):
        raise PlanError(f"{what} must map (topic, partition) -> bytes, topic -> [bytes per partition], or be a "
                        "table with columns topic, partition, bytes")
    for key, value in sizes.items():
        if isinstance(key, tuple) and len(key) == 2:
            yield key, value
        elif isinstance(key, str) and isinstance(value, list):
            for partition, size in enumerate(value):
                yield (key, partition), size
        elif isinstance(key, str) and isinstance(value, Mapping):
            for partition, size in value.items():
                try:
                    number = int(partition)
                except (TypeError, ValueError):
                    raise PlanError(f"{what}: topic {key!r}: {partition!r} is not a partition number") from None
                yield (key, number), size
        else:
            raise PlanError(f"{what}: {key!r} -> {value!r} is neither (topic, partition) -> bytes nor "
                            "topic -> [bytes per partition]")


def align_sizes(problem: Problem, sizes: Any, what: str = "sizes") -> tuple[np.ndarray, int]:
    """Bytes per partition, in the problem's partition order; partitions not mentioned are 0."""
    index = {(problem.topics[t], int(p)): i for i, (t, p) in enumerate(zip(problem.topic_of, problem.partition_of))}
    result = np.zeros(problem.num_partitions, np.int64)
    given = np.zeros(problem.num_partitions, bool)
    for (topic, partition), value in _size_pairs(sizes, what):
        i = index.get((topic, partition))
        size = _size_value((topic, partition), value, what)
        if i is not None:
            result[i] = size
            given[i] = True
    return result, int((~given).sum())
