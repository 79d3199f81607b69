"""Cluster metadata: topics, partitions, leaders, replicas and racks.

Both sides of kassign read it: the producer's partitioner asks which partitions
are *available* (have a leader), the consumer assignors ask how many partitions a
topic has and on which racks each partition's replicas live.

Metadata is kept per topic as plain lists so that a million-partition cluster
costs a few arrays, not a million objects; ``PartitionInfo`` is built only when
asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kassign.core.errors import KassignError, shown
from kassign.core.limits import whole_number


@dataclass(frozen=True)
class Node:
    """A broker: its id and, when ``broker.rack`` is set, its rack."""

    id: int
    rack: str | None = None


def broker_entries(brokers: Any, *, fenced: bool = False, ordered: bool = True,
                   error: type[KassignError] = KassignError) -> list[Any]:
    """The entries of a broker list, each still to be checked: ``[(id, rack_or_None), ...]`` (or bare ids)
    as given, or a mapping of id -> rack_or_None read as those pairs, so its racks are kept (iterating
    it would give the ids alone). With ``fenced`` (the striped placer) a mapping's value may also be
    ``(rack_or_None, fenced)``. Where placement follows the order given (``ordered``), a set is refused."""
    shape = "(id, rack_or_None[, fenced])" if fenced else "(id, rack_or_None)"
    if isinstance(brokers, Mapping):
        return [(broker_id, *value) if fenced and isinstance(value, (tuple, list)) and len(value) == 2
                else (broker_id, value) for broker_id, value in brokers.items()]
    if ordered and isinstance(brokers, (set, frozenset)):
        raise error(f"brokers: a set has no order, and replicas are placed over the brokers in the order given; "
                    f"pass a list of {shape} or a dict of id -> rack_or_None")
    if isinstance(brokers, (str, bytes, bytearray)) or not isinstance(brokers, Iterable):
        raise error(f"brokers must be a list of {shape} pairs or plain ids, or a dict of id -> rack_or_None, "
                    f"got {shown(brokers) if isinstance(brokers, (str, bytes)) else type(brokers).__name__}")
    return list(brokers)


@dataclass(frozen=True)
class PartitionInfo:
    topic: str
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    replica_racks: frozenset[str]


class Cluster:
    """What a Kafka client knows of the cluster from its metadata.

    ``topics`` maps each topic to its partition count. Optional per-topic,
    per-partition lists give leaders (``None`` = no leader, so unavailable) and
    replica broker ids; ``nodes`` gives broker racks. ``partition_racks`` gives
    replica racks directly, for scenarios that know racks but not brokers.
    Without leader information every partition counts as available.
    """

    def __init__(
        self,
        topics: Mapping[str, int],
        *,
        leaders: Mapping[str, Sequence[int | None]] | None = None,
        replicas: Mapping[str, Sequence[Sequence[int]]] | None = None,
        nodes: Sequence[Node] = (),
        partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None,
    ) -> None:
        self._counts: dict[str, int] = {}
        for topic, count in topics.items():
            # Kafka keeps partition counts in Java ints
            self._counts[topic] = whole_number(count, f"topic {topic!r}: partition count", low=0)
        self._nodes = {node.id: node for node in nodes}
        self._leaders = {t: list(v) for t, v in (leaders or {}).items()}
        self._replicas = {t: [tuple(r) for r in v] for t, v in (replicas or {}).items()}
        self._racks = {t: [frozenset(r) for r in v] for t, v in (partition_racks or {}).items()}
        for name, per_topic in (("leaders", self._leaders), ("replicas", self._replicas), ("partition_racks", self._racks)):
            for topic, values in per_topic.items():
                if topic in self._counts and len(values) != self._counts[topic]:
                    raise KassignError(
                        f"{name} for topic {topic!r} lists {len(values)} partitions, but the topic has {self._counts[topic]}"
                    )

    @property
    def topics(self) -> list[str]:
        return list(self._counts)

    @property
    def nodes(self) -> list[Node]:
        return list(self._nodes.values())

    def partition_count(self, topic: str) -> int | None:
        """Partition count, or ``None`` when the topic has no metadata."""
        return self._counts.get(topic)

    def leader(self, topic: str, partition: int) -> int | None:
        leaders = self._leaders.get(topic)
        if leaders is None:
            return partition  # no leader data: treat every partition as led
        return leaders[partition]

    def available_partitions(self, topic: str) -> list[int]:
        """Partitions that have a leader, ascending (Kafka's availablePartitionsForTopic)."""
        count = self._counts.get(topic, 0)
        leaders = self._leaders.get(topic)
        if leaders is None:
            return list(range(count))
        return [p for p in range(count) if leaders[p] is not None]

    def available_partition_ids(self, topic: str) -> Sequence[int]:
        """``available_partitions`` without building the list where every partition is available
        (no leader data): a ``range``, so a topic of two billion partitions costs nothing."""
        if topic not in self._leaders:
            return range(self._counts.get(topic, 0))
        return self.available_partitions(topic)

    def replica_racks(self, topic: str) -> list[frozenset[str]]:
        """Per partition, the racks of its replicas (empty sets when unknown)."""
        count = self._counts.get(topic, 0)
        if topic in self._racks:
            return self._racks[topic]
        replicas = self._replicas.get(topic)
        if replicas is None or not self._nodes:
            return [frozenset()] * count
        return [
            frozenset(rack for b in brokers if (rack := self._rack_of(b)) is not None) for brokers in replicas
        ]

    def has_rack_info(self, topic: str) -> bool:
        return topic in self._racks or (topic in self._replicas and any(n.rack for n in self._nodes.values()))

    def partitions_for_topic(self, topic: str) -> list[PartitionInfo]:
        count = self._counts.get(topic, 0)
        racks = self.replica_racks(topic)
        replicas = self._replicas.get(topic)
        return [
            PartitionInfo(topic, p, self.leader(topic, p), tuple(replicas[p]) if replicas else (), racks[p])
            for p in range(count)
        ]

    def _rack_of(self, broker: int) -> str | None:
        node = self._nodes.get(broker)
        return node.rack if node else None

    def __repr__(self) -> str:
        return f"Cluster(topics={self._counts!r})"
