"""The consumer-side assignor interface, as Kafka's ConsumerPartitionAssignor defines it.

A group's leader collects every member's ``Subscription`` (topics, opaque user
data, the partitions it owned, the generation it owned them in, its rack and its
static ``group.instance.id``), runs one assignor over all of them, and hands each
member an ``Assignment``. Each member then learns its share through
``on_assignment``.

``AbstractPartitionAssignor`` does the part every simple strategy shares: it turns
cluster metadata into a partition count per subscribed topic (skipping, with a
debug log, topics the cluster does not know) and wraps the per-member partition
lists into ``Assignment`` objects.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kassign.core.cluster import Cluster
from kassign.groups.classic.subscription import Assignment, Subscription, TopicPartition, new_topic_partition
from kassign.groups.flat import FlatAssignment
from kassign.core.javaorder import java_string_key

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

# The shapes Kafka's AbstractPartitionAssignor.assign(partitionsPerTopic, subscriptions) takes and gives,
# named once so that each assignor's signature reads as one line.
PartitionCounts = Mapping[str, int]
Subscriptions = Mapping[str, "Subscription"]
PartitionLists = dict[str, list["TopicPartition"]]

EAGER = "eager"
COOPERATIVE = "cooperative"


def client_rack(rack: str | None) -> str | None:
    """The rack a member's ``client.rack`` names for Kafka's rack-aware assignors (KIP-881), or
    None: they drop an empty one, so such a member has no rack."""
    return rack or None


@dataclass(frozen=True, order=False)
class MemberInfo:
    """A member as Kafka orders members: static members first, by instance id, then dynamic ones by member id."""

    member_id: str
    group_instance_id: str | None = None

    def sort_key(self) -> tuple[int, bytes]:
        if self.group_instance_id is not None:
            return (0, java_string_key(self.group_instance_id))
        return (1, java_string_key(self.member_id))


def members_in_kafka_order(subscriptions: Mapping[str, Subscription], member_ids: Iterable[str] | None = None) -> list[str]:
    """Member ids sorted the way Kafka's MemberInfo sorts them."""
    ids = subscriptions.keys() if member_ids is None else member_ids
    infos = [MemberInfo(m, subscriptions[m].group_instance_id) for m in ids]
    return [info.member_id for info in sorted(infos, key=MemberInfo.sort_key)]


class ConsumerPartitionAssignor(ABC):
    """A strategy the group leader runs to spread partitions over members.

    Subclasses set ``name`` (the value members list in ``partition.assignment.strategy``)
    and implement ``assign``. ``supported_protocols`` says which rebalance protocols the
    assignor can run under; the first is preferred. ``exclusive`` (True) means each
    partition goes to one member at most, and kassign refuses a result that breaks it;
    an assignor that hands a partition to several members on purpose sets it False.
    """

    name: str = ""
    supported_protocols: tuple[str, ...] = (EAGER,)
    exclusive: bool = True

    def subscription_user_data(
        self, topics: Sequence[str], owned_partitions: Sequence[TopicPartition], generation: int
    ) -> bytes:
        """Opaque bytes this member adds to its subscription (weights, history, ...).

        Eager assignors that need history (Kafka's StickyAssignor) encode the
        member's owned partitions and generation here, since an eager member
        gives everything up before it joins.
        """
        return b""

    def batch_user_data(self, owned_start: np.ndarray, owned_code: np.ndarray, owned_names: Sequence[str],
                        owned_partitions: np.ndarray, generations: Sequence[int]) -> list[bytes] | None:
        """Every member's :meth:`subscription_user_data` at once, from the owned columns of
        :class:`kassign.groups.scenario.Members`, where an assignor can do it faster than member by member
        (the same bytes); None (this default): ask member by member."""
        return None

    def subscription(
        self,
        topics: Iterable[str],
        *,
        owned_partitions: Iterable[TopicPartition] = (),
        generation: int = -1,
        rack: str | None = None,
        group_instance_id: str | None = None,
    ) -> Subscription:
        topic_list = tuple(topics)
        owned = tuple(tp if type(tp) is TopicPartition else TopicPartition(*tp) for tp in owned_partitions)
        return Subscription(
            topics=topic_list,
            user_data=self.subscription_user_data(topic_list, owned, generation),
            owned_partitions=owned,
            generation=generation,
            rack=rack,
            group_instance_id=group_instance_id,
        )

    @abstractmethod
    def assign(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        """Run by the leader over every member's subscription."""

    def assign_flat(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> FlatAssignment:
        """The same assignment as integer arrays (:mod:`kassign.groups.flat`), checked.

        This default runs :meth:`assign` and converts and checks its result, so a user's own
        assignor gets it for free; assignors that work on arrays return theirs directly."""
        result = self.assign(cluster, subscriptions)
        topics_of = {member: s.topics for member, s in subscriptions.items()}
        return FlatAssignment.from_mapping(result, subscribed_partition_counts(cluster, subscriptions), topics_of,
                                           f"assignor {self.name!r}", exclusive=getattr(self, "exclusive", True))

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        """Called on every member with its own assignment; stateless assignors ignore it."""


class AbstractPartitionAssignor(ConsumerPartitionAssignor):
    """Base for assignors that only need partition counts per topic.

    Subclasses implement ``assign_partitions(partitions_per_topic, subscriptions)``
    and return ``{member: [TopicPartition, ...]}``.
    """

    def assign(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        partitions_per_topic = subscribed_partition_counts(cluster, subscriptions)
        raw = self.assign_partitions(partitions_per_topic, subscriptions, cluster)
        return {member: Assignment(tuple(partitions)) for member, partitions in raw.items()}

    @abstractmethod
    def assign_partitions(self, partitions_per_topic: PartitionCounts, subscriptions: Subscriptions,
                          cluster: Cluster) -> PartitionLists:
        """Assign every partition of ``partitions_per_topic`` to the members that subscribe to its topic."""


def subscribed_partition_counts(cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, int]:
    """Partition count for every subscribed topic that has metadata; others are skipped with a debug log."""
    counts: dict[str, int] = {}
    skipped: set[str] = set()
    for topics in _distinct_topic_lists(subscriptions.values()):
        for topic in topics:
            if topic in counts or topic in skipped:
                continue
            count = cluster.partition_count(topic)
            if count:
                counts[topic] = count
            else:
                skipped.add(topic)
                log.debug("Skipping assignment for topic %s since no metadata is available", topic)
    return counts


def _distinct_topic_lists(subscriptions: Iterable[Subscription]) -> list[Sequence[str]]:
    """Each distinct topic list once (big groups mostly share one), in first-seen order."""
    by_identity: dict[int, Sequence[str]] = {}
    for subscription in subscriptions:  # members parsed together share one tuple: compare objects before contents
        by_identity.setdefault(id(subscription.topics), subscription.topics)
    seen: dict[tuple[str, ...], None] = {}
    for topics in by_identity.values():
        seen.setdefault(tuple(topics), None)
    return list(seen)


def topic_subscribers(subscriptions: Mapping[str, Subscription]) -> dict[str, list[str]]:
    """Topic -> members subscribing to it, in subscription iteration order."""
    result: dict[str, list[str]] = {}
    for member, subscription in subscriptions.items():
        for topic in dict.fromkeys(subscription.topics):
            result.setdefault(topic, []).append(member)
    return result
