"""One consumer in a group: its strategies, what it owns, and how it rebalances.

A member lists its strategies in preference order (``partition.assignment.strategy``)
and holds its own instance of each assignor, as every Java consumer does. From
that list it derives its rebalance protocol: only protocols every listed
assignor supports count, and of those the most advanced wins, so a member is
COOPERATIVE only when all its assignors can cooperate.

- EAGER: before rejoining, the member gives up everything it owns (its
  subscription then claims no partitions; an assignor that wants history, like
  sticky, carries it in its user data).
- COOPERATIVE: the member keeps what it owns while rejoining (giving up only
  partitions of topics it no longer subscribes to). When the new assignment
  arrives it revokes only what it lost, and if it lost anything it rejoins at
  once so that a follow-up round can hand those partitions to their new owner.

Subscriptions and assignments travel as the consumer protocol's bytes, exactly
as between Java clients and the coordinator.

Data layout: a member's partitions are a small tuple of ``TopicPartition``
(the assignor interface speaks them); group-wide work on partitions is done on
integer arrays elsewhere (see ``kassign.groups.simulate.metrics``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from kassign.groups.classic.assignors import COOPERATIVE, EAGER, ConsumerPartitionAssignor, get_assignor
from kassign.core.releases import ReleaseLike
from kassign.groups.classic.assignors.base import Subscription, TopicPartition
from kassign.core.errors import KassignError
from kassign.groups.classic.protocol.wire import decode_assignment, encode_subscription

log = logging.getLogger(__name__)


class RebalanceProtocol(IntEnum):
    """Ordered from least to most advanced, as Kafka numbers them."""

    EAGER = 0
    COOPERATIVE = 1


_PROTOCOL_NAMES = {EAGER: RebalanceProtocol.EAGER, COOPERATIVE: RebalanceProtocol.COOPERATIVE}


def rebalance_protocol_for(assignors: Sequence[ConsumerPartitionAssignor]) -> RebalanceProtocol:
    """The protocol a consumer with these assignors runs: the most advanced one they all support."""
    if not assignors:
        raise KassignError("a member needs at least one assignment strategy")
    common: set[RebalanceProtocol] | None = None
    for assignor in assignors:
        supported = getattr(assignor, "supported_protocols", (EAGER,))
        mine = {_PROTOCOL_NAMES[p] for p in supported if p in _PROTOCOL_NAMES}
        common = mine if common is None else common & mine
    if not common:
        names = ", ".join(a.name for a in assignors)
        raise KassignError(
            f"strategies [{names}] share no rebalance protocol (eager or cooperative); list strategies that agree"
        )
    return max(common)


@dataclass(frozen=True)
class SyncOutcome:
    """What one member did with the assignment it received."""

    added: tuple[TopicPartition, ...]
    revoked: tuple[TopicPartition, ...]
    needs_rejoin: bool


class GroupMember:
    """A consumer: ``member_id``, subscribed topics, strategies, and the partitions it owns."""

    def __init__(
        self,
        member_id: str,
        topics: Iterable[str],
        strategies: Sequence[str | ConsumerPartitionAssignor],
        *,
        instance_id: str | None = None,
        rack: str | None = None,
        session_timeout: float = 45.0,
        kafka_version: ReleaseLike | None = None,
    ) -> None:
        self.member_id = member_id
        self.kafka_version = kafka_version  # the release the member's assignors named by strategy answer as
        self.topics = tuple(dict.fromkeys(topics))
        self.instance_id = instance_id
        self.rack = rack
        self.session_timeout = session_timeout
        self._strategy_specs = list(strategies)
        self.assignors: dict[str, ConsumerPartitionAssignor] = {}
        self.protocol = RebalanceProtocol.EAGER
        self.restart()

    # -- lifecycle

    def restart(self) -> None:
        """A fresh process: new assignor instances, nothing owned, no generation."""
        instances = [get_assignor(spec, kafka_version=self.kafka_version) if isinstance(spec, str) else spec
                     for spec in self._strategy_specs]
        self.assignors = {}
        for assignor in instances:
            self.assignors.setdefault(assignor.name, assignor)
        self.protocol = rebalance_protocol_for(list(self.assignors.values()))
        self.owned: tuple[TopicPartition, ...] = ()
        self.history: tuple[TopicPartition, ...] = ()  # the last assignment received, kept after an eager revoke
        self.generation = -1

    @property
    def strategy_names(self) -> list[str]:
        return list(self.assignors)

    def subscribe(self, topics: Iterable[str]) -> None:
        self.topics = tuple(dict.fromkeys(topics))

    # -- join

    def prepare_join(self) -> tuple[TopicPartition, ...]:
        """Revoke before rejoining: everything (eager) or what is no longer subscribed (cooperative)."""
        if self.protocol == RebalanceProtocol.EAGER:
            revoked = self.owned
        else:
            subscribed = set(self.topics)
            revoked = tuple(tp for tp in self.owned if tp.topic not in subscribed)
        if revoked:
            gone = set(revoked)
            self.owned = tuple(tp for tp in self.owned if tp not in gone)
        return revoked

    def subscription_for(self, assignor: ConsumerPartitionAssignor) -> Subscription:
        make_user_data = getattr(assignor, "subscription_user_data", None)
        user_data = make_user_data(self.topics, self.history, self.generation) if make_user_data else b""
        return Subscription(
            topics=self.topics,
            user_data=user_data or b"",
            owned_partitions=self.owned,
            generation=self.generation,
            rack=self.rack,
            group_instance_id=self.instance_id,
        )

    def join_protocols(self) -> list[tuple[str, bytes]]:
        """The (strategy name, subscription bytes) list of a JoinGroup request, in preference order."""
        return [(name, encode_subscription(self.subscription_for(a))) for name, a in self.assignors.items()]

    # -- sync

    def on_sync(self, protocol_name: str, assignment_bytes: bytes, generation: int) -> SyncOutcome:
        assignment = decode_assignment(assignment_bytes)
        assigned = assignment.partitions
        assigned_set = set(assigned)
        owned_set = set(self.owned)
        revoked = tuple(tp for tp in self.owned if tp not in assigned_set)
        added = tuple(tp for tp in assigned if tp not in owned_set)
        self.owned = tuple(dict.fromkeys(assigned))
        self.history = self.owned
        self.generation = generation
        self.assignors[protocol_name].on_assignment(assignment, generation)
        needs_rejoin = self.protocol == RebalanceProtocol.COOPERATIVE and bool(revoked)
        return SyncOutcome(added=added, revoked=revoked, needs_rejoin=needs_rejoin)

    def adopt(self, protocol_name: str, assignment_bytes: bytes, generation: int) -> None:
        """A static member back from a restart takes the assignment the coordinator kept for it."""
        self.on_sync(protocol_name, assignment_bytes, generation)

    def drop_topic(self, topic: str) -> tuple[TopicPartition, ...]:
        """The topic was deleted: its partitions are simply gone (lost, not revoked)."""
        lost = tuple(tp for tp in self.owned if tp.topic == topic)
        if lost:
            self.owned = tuple(tp for tp in self.owned if tp.topic != topic)
            self.history = tuple(tp for tp in self.history if tp.topic != topic)
        return lost

    def __repr__(self) -> str:
        return f"GroupMember({self.member_id!r}, {self.protocol.name.lower()}, owns {len(self.owned)})"
