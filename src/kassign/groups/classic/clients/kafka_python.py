"""kassign's assignors for kafka-python (3.x) consumers.

Each class here is a kafka-python ``AbstractPartitionAssignor`` that runs a kassign
assignor inside the consumer: put an instance (or the class) in
``partition_assignment_strategy``. The bytes on the wire are Kafka's
ConsumerProtocol Subscription/Assignment (version 3, as a current Java consumer
writes them), so Java members and librdkafka members of the same strategy share the
group with these:

- :class:`RangeAssignor` (``range``), :class:`RoundRobinAssignor` (``roundrobin``);
- :class:`StickyAssignor` (``sticky``): kassign's optimal sticky assignor, with its
  history in Kafka's StickyAssignor user-data bytes, so Java ``StickyAssignor``
  members can lead or follow;
- :class:`CooperativeStickyAssignor` (``cooperative-sticky``): KIP-429 incremental
  rebalancing, which kafka-python 3.x supports (partitions that change owner are
  revoked first and handed over in a follow-up rebalance);
- :class:`LoadAwareAssignor` (``load-aware``): balances partition loads; each member
  announces its ``capacity`` in its user data;
- :func:`kassign_assignor`: any kassign assignor (a name, an instance, a class or
  ``package.module:Class``), yours included.

State (owned partitions and generation) lives on each instance, updated on every
assignment, so give each consumer its own instance.

Example::

    from kafka import KafkaConsumer
    from kassign.groups.classic.clients.kafka_python import StickyAssignor

    consumer = KafkaConsumer("orders", group_id="billing", bootstrap_servers="localhost:9092",
                             partition_assignment_strategy=[StickyAssignor()])

The module imports kafka-python when it is imported; ``import kassign`` never does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kassign.groups.classic.clients._core import COOPERATIVE_NAME, JoinedMember, MemberAssignor, cluster_topology, require, resolve

require("kafka", "kafka-python")

from kafka.coordinator.assignors.abstract import (  # noqa: E402  (after the friendly check above)
    AbstractPartitionAssignor as _KafkaPythonAssignor,
    RebalanceProtocol,
)

__all__ = [
    "CooperativeStickyAssignor",
    "KassignAssignor",
    "LoadAwareAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "kassign_assignor",
]


def _raw(metadata: Any) -> bytes:
    """kafka-python hands the leader decoded subscriptions; kassign reads the bytes."""
    return metadata if isinstance(metadata, (bytes, bytearray)) else metadata.encode()


def _partition_counts(cluster: Any, topics: Iterable[str]) -> dict[str, int]:
    return {t: len(cluster.partitions_for_topic(t) or ()) for t in topics}


class KassignAssignor(_KafkaPythonAssignor):
    """A kafka-python assignor running the kassign strategy ``strategy`` (or the class's default).

    ``rack`` is this member's ``client.rack`` (sent in the subscription, as ``client_rack``
    is not visible to assignors); ``options`` go to the kassign assignor's constructor. As the
    group's leader it reads partition replicas and broker racks from the consumer's cluster
    metadata, so rack-aware range and sticky (KIP-881) work when members set ``rack``."""

    strategy: str = ""

    def __init__(self, strategy: Any = None, *, rack: str | None = None, **options: Any) -> None:
        self._member = MemberAssignor(resolve(strategy or self.strategy, options), rack=rack)

    @property
    def name(self) -> str:
        return self._member.name

    @property
    def kassign(self) -> MemberAssignor:
        """The member-side state: ``owned`` partitions and ``generation``."""
        return self._member

    def supported_protocols(self) -> list[RebalanceProtocol]:
        names = tuple(getattr(self._member.assignor, "supported_protocols", ("eager",)))
        return [RebalanceProtocol.COOPERATIVE if n == COOPERATIVE_NAME else RebalanceProtocol.EAGER for n in names]

    def metadata(self, topics: Iterable[str]) -> bytes:
        return self._member.subscription_bytes(topics)

    def assign(self, cluster: Any, members: Iterable[Any]) -> dict[str, bytes]:
        joined = [JoinedMember(m.member_id, getattr(m, "group_instance_id", None), _raw(m.metadata)) for m in members]
        topics = {t for m in members for t in _topics_of(m.metadata)}
        replicas, racks = cluster_topology(cluster, topics, broker_id="node_id", replicas="replica_nodes")
        return self._member.assign(_partition_counts(cluster, topics), joined, replicas=replicas, broker_racks=racks)

    def on_assignment(self, assignment: Any, generation: int) -> None:
        partitions = [(tp.topic, tp.partition) for tp in assignment.partitions()]
        self._member.remember(partitions, generation, bytes(getattr(assignment, "user_data", None) or b""))

    def on_generation_assignment(self, generation: int) -> None:
        self._member.generation = generation

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, generation={self._member.generation})"


def _topics_of(metadata: Any) -> list[str]:
    if isinstance(metadata, (bytes, bytearray)):
        from kassign.groups.classic.protocol.wire import decode_subscription

        return list(decode_subscription(bytes(metadata)).topics)
    return list(metadata.topics)


class RangeAssignor(KassignAssignor):
    strategy = "range"


class RoundRobinAssignor(KassignAssignor):
    strategy = "roundrobin"


class StickyAssignor(KassignAssignor):
    strategy = "sticky"


class CooperativeStickyAssignor(KassignAssignor):
    strategy = "cooperative-sticky"


class LoadAwareAssignor(KassignAssignor):
    """``partition_loads`` (leader side) and ``capacity`` (this member's) as for kassign's load-aware."""

    strategy = "load-aware"

    def __init__(self, partition_loads: Mapping[Any, float] | None = None, capacity: float = 1.0, *,
                 rack: str | None = None, **options: Any) -> None:
        super().__init__(rack=rack, partition_loads=partition_loads, capacity=capacity, **options)


def kassign_assignor(assignor: Any, *, rack: str | None = None, **options: Any) -> KassignAssignor:
    """A kafka-python assignor instance running ``assignor``: a kassign strategy name,
    ``package.module:Class``, an assignor instance, or a class/factory called with ``options``."""
    return KassignAssignor(assignor, rack=rack, **options)
