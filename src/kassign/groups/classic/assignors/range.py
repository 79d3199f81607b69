"""RangeAssignor: contiguous ranges of each topic, per topic, in member order.

Rule. For each topic on its own, the members that subscribe to it are put in
Kafka's member order (static members first, by ``group.instance.id``, then the
rest by member id). With N partitions and M members, the first ``N % M`` members
get ``N // M + 1`` consecutive partitions, the others ``N // M``.

Example. Members C0 and C1 both subscribe to t0 and t1, each with 3 partitions::

    C0: [t0p0, t0p1, t1p0, t1p1]
    C1: [t0p2, t1p2]

Because every topic favours the same first members, C0 ends up with one extra
partition per topic: range is balanced per topic, not across topics.

Rack awareness (KIP-881, Kafka 3.5.0 and later). When members set ``client.rack``
and some partitions have no replica on some rack, members first take, within their
range quota, partitions with a replica on their own rack; topics with the same
subscribers and the same partition count are matched partition by partition, so
co-partitioned topics still land together. Whatever is left is handed out by the
plain rule.

Releases (``kafka_version``, default the newest). Kafka 3.0.0 to 3.4.x ignore racks:
there the plain rule is the whole rule, whatever the members' and partitions' racks.
From 3.5.0 (KAFKA-14451, and KAFKA-14891 for co-partitioned topics) every release
deals alike. Example: t with 4 partitions on racks r0, r1, r0, r1, member A on r1 and
B on r0: 3.4 gives A t-0, t-1 and B t-2, t-3; 3.5 and later give A t-1, t-3 and B t-0,
t-2.

Data layout: partitions are integers per topic; member ids stay strings because
per topic there are at most a few thousand of them.
"""

from __future__ import annotations

from collections.abc import Mapping

from kassign.groups.classic.assignors.base import (
    PartitionCounts,
    PartitionLists,
    Subscriptions,
    AbstractPartitionAssignor,
    TopicPartition,
    client_rack,
    members_in_kafka_order,
    topic_subscribers,
)
from kassign.groups.classic.assignors import options
from kassign.core.cluster import Cluster
from kassign.core.releases import CLASSIC_RACKS, DEFAULT_KAFKA_VERSION, RACK_AWARE, KafkaRelease, rule


class _TopicRanges:
    """One topic's range bookkeeping: quota per member and what is still unassigned."""

    def __init__(
        self,
        topic: str,
        num_partitions: int,
        members: list[str],
        member_racks: Mapping[str, str],
        partition_racks: list[frozenset[str]],
        prefer_rack_aware: bool,
    ) -> None:
        self.topic = topic
        self.members = members
        self.member_rack = {m: member_racks.get(m) for m in members}
        self.unassigned: dict[int, None] = dict.fromkeys(range(num_partitions))
        self.assigned_count = dict.fromkeys(members, 0)
        self.per_member = num_partitions // len(members)
        self.members_with_extra = num_partitions % len(members)

        racks_of_members = {r for r in self.member_rack.values() if r is not None}
        # Kafka only looks at partition racks when some subscriber has a rack.
        self.partition_racks = partition_racks if racks_of_members else []
        all_partition_racks = frozenset().union(*self.partition_racks) if self.partition_racks else frozenset()
        # Rack matching only helps when racks overlap and some partition is missing a rack.
        self.needs_rack_matching = bool(racks_of_members & all_partition_racks) and (
            prefer_rack_aware or not all(racks == all_partition_racks for racks in self.partition_racks)
        )

    def racks_match(self, member: str, partition: int) -> bool:
        rack = self.member_rack[member]
        if rack is None:
            return True
        return bool(self.partition_racks) and rack in self.partition_racks[partition]

    def max_assignable(self, member: str) -> int:
        quota = self.per_member + (1 if self.members_with_extra > 0 else 0)
        return max(0, quota - self.assigned_count[member])

    def give(self, member: str, partitions: list[int], out: dict[str, list[TopicPartition]]) -> None:
        out[member].extend(TopicPartition(self.topic, p) for p in partitions)
        self.assigned_count[member] += len(partitions)
        if self.assigned_count[member] > self.per_member:
            self.members_with_extra -= 1
        for p in partitions:
            del self.unassigned[p]

    def assign_ranges(self, out: dict[str, list[TopicPartition]], rack_matched_only: bool) -> None:
        for member in self.members:
            if not self.unassigned:
                return
            limit = self.max_assignable(member)
            if limit == 0:
                continue
            chosen = []
            for p in self.unassigned:
                if not rack_matched_only or self.racks_match(member, p):
                    chosen.append(p)
                    if len(chosen) == limit:
                        break
            if chosen:
                self.give(member, chosen, out)


def _assign_co_partitioned(states: list[_TopicRanges], out: dict[str, list[TopicPartition]]) -> None:
    """Same subscribers, same partition count: give partition p of every topic to one rack-matched member."""
    remaining = list(states[0].members)
    for p in range(len(states[0].partition_racks)):
        member = next(
            (m for m in remaining if all(s.racks_match(m, p) and s.max_assignable(m) > 0 for s in states)),
            None,
        )
        if member is None:
            continue
        for state in states:
            state.give(member, [p], out)
        if all(state.max_assignable(member) == 0 for state in states):
            remaining.remove(member)
            if not remaining:
                return


class RangeAssignor(AbstractPartitionAssignor):
    name = "range"
    release_rules = (CLASSIC_RACKS,)  # the rules of core.releases this assignor follows

    def __init__(self, prefer_rack_aware: bool = False, kafka_version: str | KafkaRelease = DEFAULT_KAFKA_VERSION) -> None:
        # Kafka's AbstractPartitionAssignor.preferRackAwareLogic (off by default): rack-match even
        # when every partition has a replica on every rack.
        self.prefer_rack_aware = options.flag(self.name, "prefer_rack_aware", prefer_rack_aware)
        self.release = options.release(self.name, kafka_version)
        self.rack_aware = rule(self.release, CLASSIC_RACKS) == RACK_AWARE

    @property
    def kafka_version(self) -> str:
        """The Kafka release this assignor answers as, as the user named it."""
        return self.release.label

    def assign_partitions(self, partitions_per_topic: PartitionCounts, subscriptions: Subscriptions,
                          cluster: Cluster) -> PartitionLists:
        member_racks = {m: rack for m, s in subscriptions.items() if (rack := client_rack(s.rack)) is not None} \
            if self.rack_aware else {}  # before 3.5.0 a member's rack changes nothing
        subscribers = topic_subscribers(subscriptions)
        states = [
            _TopicRanges(
                topic,
                count,
                members_in_kafka_order(subscriptions, subscribers[topic]),
                member_racks,
                cluster.replica_racks(topic),
                self.prefer_rack_aware,
            )
            for topic, count in partitions_per_topic.items()
            if count > 0
        ]

        out: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        if any(s.needs_rack_matching for s in states):
            self._assign_with_rack_matching(states, out)
        for state in states:
            state.assign_ranges(out, rack_matched_only=False)
        return out

    @staticmethod
    def _assign_with_rack_matching(states: list[_TopicRanges], out: dict[str, list[TopicPartition]]) -> None:
        groups: dict[tuple, list[_TopicRanges]] = {}
        for state in states:
            subscribers = tuple((m, state.member_rack[m]) for m in state.members)
            groups.setdefault((subscribers, len(state.partition_racks)), []).append(state)
        for same_shape in groups.values():
            if len(same_shape) > 1:
                _assign_co_partitioned(same_shape, out)
            elif same_shape[0].needs_rack_matching:
                same_shape[0].assign_ranges(out, rack_matched_only=True)
