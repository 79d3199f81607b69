"""kassign's assignors for aiokafka consumers.

Each class here is an aiokafka ``AbstractPartitionAssignor`` that runs a kassign
assignor: put an instance in ``AIOKafkaConsumer(partition_assignment_strategy=...)``.
Unlike aiokafka's own sticky assignor, which keeps its history on the class, every
instance here keeps its own, so two consumers in one process do not disturb each
other; give each consumer its own instance.

- :class:`RangeAssignor`, :class:`RoundRobinAssignor`;
- :class:`StickyAssignor` (``sticky``, Kafka's StickyAssignor user-data bytes, so Java
  ``StickyAssignor`` members can share the group);
- :class:`LoadAwareAssignor` (``load-aware``, ``capacity`` in the user data);
- :func:`kassign_assignor` for any other eager kassign assignor, yours included.

**No cooperative-sticky.** aiokafka implements only the eager rebalance protocol
(it revokes everything before every rebalance and never sends owned partitions or
asks for a follow-up rebalance), so an assignor that needs KIP-429 is refused here.

**Generation.** aiokafka does not tell its assignor the group generation
(``on_assignment`` gets the assignment only, and the leader's ``assign`` no
generation either), which the sticky strategies need to settle two members claiming
one partition. A kassign leader therefore writes a group-wide generation (one past the
highest any member reported) into Assignment user data that would otherwise be empty,
and members read it back. Under a leader that is not a kassign adapter the member
counts its own assignments instead. ``on_generation_assignment(g)`` sets it explicitly.

Example::

    from aiokafka import AIOKafkaConsumer
    from kassign.groups.classic.clients.aiokafka import StickyAssignor

    consumer = AIOKafkaConsumer("orders", group_id="billing", bootstrap_servers="localhost:9092",
                                partition_assignment_strategy=[StickyAssignor()])

The module imports aiokafka when it is imported; ``import kassign`` never does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kassign.groups.classic.assignors.base import Subscription
from kassign.groups.classic.clients._core import (
    COOPERATIVE_NAME,
    JoinedMember,
    MemberAssignor,
    cluster_topology,
    read_stamp,
    require,
    resolve,
)
from kassign.core.errors import KassignError
from kassign.groups.classic.protocol import wire

require("aiokafka", "aiokafka")

from aiokafka.coordinator.assignors.abstract import (  # noqa: E402  (after the friendly check above)
    AbstractPartitionAssignor as _AiokafkaAssignor,
)

__all__ = [
    "KassignAssignor",
    "LoadAwareAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "kassign_assignor",
]


def _as_v0(metadata: Any) -> bytes:
    """aiokafka decodes subscriptions with the version-0 layout (topics and user data only): write
    what it kept as version-0 bytes, so kassign reads exactly that and nothing it dropped."""
    if isinstance(metadata, (bytes, bytearray)):
        return bytes(metadata)
    subscription = Subscription(tuple(metadata.subscription), bytes(metadata.user_data or b""))
    return wire.encode_subscription(subscription, version=0)


class KassignAssignor(_AiokafkaAssignor):
    """An aiokafka assignor running the kassign strategy ``strategy`` (or the class's default)."""

    strategy: str = ""

    def __init__(self, strategy: Any = None, *, rack: str | None = None, **options: Any) -> None:
        assignor = resolve(strategy or self.strategy, options)
        if tuple(getattr(assignor, "supported_protocols", ("eager",)))[:1] == (COOPERATIVE_NAME,):
            raise KassignError(f"assignor {assignor.name!r} needs the cooperative rebalance protocol, which aiokafka "
                               "does not implement; use 'sticky' with aiokafka, or kafka-python for cooperative-sticky")
        self._member = MemberAssignor(assignor, rack=rack)

    # aiokafka's base declares these as classmethods; instance methods keep the state per consumer.
    @property
    def name(self) -> str:  # type: ignore[override]
        return self._member.name

    @property
    def kassign(self) -> MemberAssignor:
        """The member-side state: ``owned`` partitions and ``generation``."""
        return self._member

    def metadata(self, topics: Iterable[str]) -> bytes:  # type: ignore[override]
        return self._member.subscription_bytes(topics)

    def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, bytes]:  # type: ignore[override]
        joined = [JoinedMember(member_id, None, _as_v0(meta)) for member_id, meta in members.items()]
        topics = {t for m in joined for t in wire.decode_subscription(m.metadata).topics}
        counts = {t: len(cluster.partitions_for_topic(t) or ()) for t in topics}
        replicas, racks = cluster_topology(cluster, topics, broker_id="nodeId", replicas="replicas")
        return self._member.assign(counts, joined, stamp=True, replicas=replicas, broker_racks=racks)

    def on_assignment(self, assignment: Any) -> None:  # type: ignore[override]
        user_data = bytes(getattr(assignment, "user_data", None) or b"")
        stamped = read_stamp(user_data)
        generation = self._member.generation + 1 if stamped is None else stamped
        partitions = [(tp.topic, tp.partition) for tp in assignment.partitions()]
        self._member.remember(partitions, generation, b"" if stamped is not None else user_data)

    def on_generation_assignment(self, generation: int) -> None:  # type: ignore[override]
        self._member.generation = generation

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, generation={self._member.generation})"


class RangeAssignor(KassignAssignor):
    strategy = "range"


class RoundRobinAssignor(KassignAssignor):
    strategy = "roundrobin"


class StickyAssignor(KassignAssignor):
    strategy = "sticky"


class LoadAwareAssignor(KassignAssignor):
    """``partition_loads`` (leader side) and ``capacity`` (this member's) as for kassign's load-aware."""

    strategy = "load-aware"

    def __init__(self, partition_loads: Mapping[Any, float] | None = None, capacity: float = 1.0, *,
                 rack: str | None = None, **options: Any) -> None:
        super().__init__(rack=rack, partition_loads=partition_loads, capacity=capacity, **options)


def kassign_assignor(assignor: Any, *, rack: str | None = None, **options: Any) -> KassignAssignor:
    """An aiokafka assignor instance running ``assignor``: a kassign strategy name,
    ``package.module:Class``, an assignor instance, or a class/factory called with ``options``."""
    return KassignAssignor(assignor, rack=rack, **options)
