"""The client-neutral half of every adapter: one group member's view of a kassign assignor.

A Kafka client asks its assignor three things: the subscription bytes to send in
JoinGroup (``metadata``), the group's assignment when this member leads
(``assign``), and what to remember once its own assignment arrives
(``on_assignment``). :class:`MemberAssignor` answers all three with kassign's own
types and wire bytes (:mod:`kassign.groups.classic.protocol.wire`), so the per-client modules only
translate the client's objects.

State (what this member owns, the generation it owns it in) lives on the instance:
two consumers in one process, each with its own instance, never share history.

Example::

    member = MemberAssignor(get_assignor("sticky"))
    raw = member.subscription_bytes({"orders"})        # what JoinGroup carries
    member.remember([("orders", 0)], generation=4)     # after SyncGroup
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kassign.groups.classic.assignors.base import (
    COOPERATIVE,
    Assignment,
    ConsumerPartitionAssignor,
    Subscription,
    TopicPartition,
)
from kassign.core.cluster import Cluster, Node
from kassign.core.errors import KassignError
from kassign.groups.classic.protocol import wire

log = logging.getLogger(__name__)

NO_GENERATION = -1
COOPERATIVE_NAME = COOPERATIVE
# Appended to an otherwise empty Assignment user data by a leader whose client does not report the
# generation to its assignor (aiokafka): 4 magic bytes, then the int32 generation. Java members
# ignore Assignment user data for the sticky strategies, so this is invisible to them.
_STAMP_MAGIC = b"KAg1"
_STAMP = struct.Struct(">4si")


class ClientMissingError(KassignError):
    """The Kafka client an adapter is for is not installed."""


def require(module: str, extra: str) -> None:
    """Fail with the pip command to run when ``module`` cannot be imported."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ClientMissingError(f"this adapter needs the {module!r} package: pip install 'kassign[{extra}]'")


def cluster_topology(cluster: Any, topics: Iterable[str], *, broker_id: str,
                     replicas: str) -> tuple[dict[str, list[tuple[int, ...]]], dict[int, str | None]]:
    """Each topic's partition replicas and each broker's rack, from a client's ClusterMetadata.

    Brokers and racks come from ``cluster.brokers()`` (attribute ``broker_id`` names a broker's
    id: ``node_id`` in kafka-python, ``nodeId`` in aiokafka); replicas from the per-partition
    metadata both clients keep in ``_partitions`` (attribute ``replicas``), for which neither
    offers a public accessor. Where either is missing the result is empty and no racks are used."""
    racks = {getattr(b, broker_id): getattr(b, "rack", None) for b in cluster.brokers()
             if isinstance(getattr(b, broker_id), int)}
    per_topic = getattr(cluster, "_partitions", None)
    if not any(racks.values()) or not isinstance(per_topic, dict):
        return {}, {}
    found: dict[str, list[tuple[int, ...]]] = {}
    for topic in topics:
        partitions = per_topic.get(topic) or {}
        try:
            found[topic] = [tuple(getattr(partitions[p], replicas)) for p in range(len(partitions))]
        except (KeyError, AttributeError):  # a gap or another layout: no racks for this topic
            continue
    return found, racks


def resolve(strategy: Any, options: Mapping[str, Any]) -> ConsumerPartitionAssignor:
    """A fresh kassign assignor for a name, ``package.module:Class``, an instance, or a class/factory.

    An instance is used as given (its state becomes this member's); anything else is built anew
    here, so two adapters never share one assignor by accident."""
    from kassign.groups.classic.assignors import get_assignor

    if isinstance(strategy, str):
        return get_assignor(strategy, **options)
    if isinstance(strategy, type) or (callable(strategy) and not hasattr(strategy, "assign")):
        return get_assignor(strategy(**options))
    if options:
        raise KassignError(f"options {sorted(options)} apply when the assignor is given by name or class, "
                           f"not to the instance {strategy!r}")
    return get_assignor(strategy)


@dataclass(frozen=True)
class JoinedMember:
    """One member as the leader sees it in a JoinGroup response: id, static id, raw subscription bytes."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


def stamp_generation(user_data: bytes, generation: int) -> bytes:
    """Assignment user data carrying ``generation`` when the assignor itself had nothing to say."""
    return user_data if user_data else _STAMP.pack(_STAMP_MAGIC, generation)


def read_stamp(user_data: bytes) -> int | None:
    """The generation a kassign leader stamped, or None (other user data, or none)."""
    if len(user_data) == _STAMP.size and user_data.startswith(_STAMP_MAGIC):
        return _STAMP.unpack(user_data)[1]
    return None


class MemberAssignor:
    """A kassign assignor wrapped for one group member (see module docstring)."""

    def __init__(self, assignor: ConsumerPartitionAssignor, *, rack: str | None = None,
                 subscription_version: int = wire.LATEST_VERSION) -> None:
        self.assignor = assignor
        self.rack = rack
        self.subscription_version = subscription_version
        self.owned: tuple[TopicPartition, ...] = ()
        self.generation = NO_GENERATION
        self.assignments_led = 0  # rebalances this member ran the assignor for, as the group's leader

    @property
    def name(self) -> str:
        return self.assignor.name

    @property
    def cooperative(self) -> bool:
        """True when the assignor prefers KIP-429 incremental rebalancing."""
        return tuple(getattr(self.assignor, "supported_protocols", ()))[:1] == (COOPERATIVE,)

    def subscription(self, topics: Iterable[str]) -> Subscription:
        """This member's Subscription for ``topics``.

        Under the eager protocol a member has revoked everything before it joins, so the
        owned-partitions field is empty (as a Java member's is) and any history travels in
        the assignor's user data; a cooperative member reports what it still owns."""
        topic_list = tuple(sorted(set(topics)))
        user_data = self.assignor.subscription_user_data(topic_list, self.owned, self.generation)
        owned = self.owned if self.cooperative else ()
        return Subscription(topics=topic_list, user_data=user_data, owned_partitions=owned,
                            generation=self.generation, rack=self.rack)

    def subscription_bytes(self, topics: Iterable[str]) -> bytes:
        return wire.encode_subscription(self.subscription(topics), self.subscription_version)

    def assign(self, partition_counts: Mapping[str, int], members: Iterable[JoinedMember],
               stamp: bool = False, *, replicas: Mapping[str, Sequence[Sequence[int]]] | None = None,
               broker_racks: Mapping[int, str | None] | None = None) -> dict[str, bytes]:
        """Run the assignor as the group leader; every member's Assignment as wire bytes.

        ``stamp``: for clients that hide the generation from their assignor, put a group-wide one
        in empty Assignment user data (see :func:`stamp_generation`). ``replicas`` (topic -> each
        partition's replica broker ids) and ``broker_racks`` (broker id -> rack) come from the
        client's metadata; with them the rack-aware strategies (KIP-881) see partition racks."""
        joined = list(members)
        self.assignments_led += 1
        subscriptions = {m.member_id: wire.decode_subscription(m.metadata, m.group_instance_id) for m in joined}
        generation = next_generation(subscriptions.values(), self.generation) if stamp else None
        topics = {t for s in subscriptions.values() for t in s.topics}
        counts = {t: partition_counts[t] for t in topics if partition_counts.get(t)}
        cluster = cluster_for(counts, replicas or {}, broker_racks or {})
        result = self.assignor.assign(cluster, subscriptions)
        out: dict[str, bytes] = {}
        for member in joined:
            assignment = result.get(member.member_id, Assignment())
            if generation is not None:
                assignment = Assignment(assignment.partitions, stamp_generation(assignment.user_data, generation))
            # Same layout for v0-v3; answer in the member's own version as a Java leader does.
            version = min(wire.read_version(member.metadata), wire.LATEST_VERSION)
            out[member.member_id] = wire.encode_assignment(assignment, max(version, 0))
        return out

    def remember(self, partitions: Iterable[tuple[str, int]], generation: int, user_data: bytes = b"") -> None:
        """Record this member's new assignment, for its next subscription."""
        self.owned = tuple(sorted(TopicPartition(t, p) for t, p in partitions))
        self.generation = generation
        on_assignment = getattr(self.assignor, "on_assignment", None)
        if on_assignment is not None:
            on_assignment(Assignment(self.owned, user_data), generation)


def cluster_for(partition_counts: Mapping[str, int], replicas: Mapping[str, Sequence[Sequence[int]]],
                broker_racks: Mapping[int, str | None]) -> Cluster:
    """kassign's Cluster for the leader: partition counts, plus replica racks where the client's
    metadata knows every partition's replicas of a topic and some broker has a rack."""
    nodes = [Node(b, rack or None) for b, rack in sorted(broker_racks.items())]
    if not any(n.rack for n in nodes):
        return Cluster(partition_counts)
    known = {t: [tuple(r) for r in replicas[t]] for t, n in partition_counts.items()
             if t in replicas and len(replicas[t]) == n}
    return Cluster(partition_counts, replicas=known, nodes=nodes)


def claimed_generation(subscription: Subscription) -> int:
    """The generation a member reports: the subscription field, else what its user data says.

    Reads the formats of kassign's history-keeping strategies (StickyAssignor user data
    version 1, load-aware JSON); anything else counts as no generation."""
    if subscription.generation != NO_GENERATION or not subscription.user_data:
        return subscription.generation
    from kassign.groups.classic.assignors.load_aware import decode_user_data
    from kassign.groups.classic.assignors.sticky.userdata import UserDataError, decode_sticky_user_data

    data = bytes(subscription.user_data)
    if data[:1] == b"{":
        generation = decode_user_data("?", data)[2]
        return NO_GENERATION if generation is None else generation
    try:
        generation = decode_sticky_user_data(data).generation
    except UserDataError:
        return NO_GENERATION
    return NO_GENERATION if generation is None else generation


def next_generation(subscriptions: Iterable[Subscription], own: int) -> int:
    """A group-wide generation for clients that hide the broker's: one past the highest any member reports."""
    return max([own, *(claimed_generation(s) for s in subscriptions)]) + 1
