"""RoundRobinAssignor: all partitions in one sorted list, dealt to members in turn.

Rule. Every partition of every subscribed topic is listed, sorted by topic name
then partition number. Members are put in a circle in Kafka's member order (static
members first, by ``group.instance.id``, then the rest by member id). Each
partition goes to the next member in the circle that subscribes to its topic; the
circle then moves on past that member.

Example. C0 subscribes to t0; C1 to t0 and t1; C2 to t0, t1 and t2; t0 has 1
partition, t1 has 2, t2 has 3::

    C0: [t0p0]
    C1: [t1p0]
    C2: [t1p1, t2p0, t2p1, t2p2]

With equal subscriptions counts differ by at most one; with unequal ones the
result can be lopsided (C1 could have taken t1p1), which is what sticky fixes.

Releases. Every Kafka release from 3.0 to 4.4 deals alike, racks or not; the
``kafka_version`` option is accepted (and checked) so that every Kafka assignor
takes it, and an answer can say which release it is for.

Data layout: members are indexes into the ordered member list, and each topic
carries the boolean array of which member indexes subscribe to it, so dealing a
partition is a scan over small integers.
"""

from __future__ import annotations


from kassign.groups.classic.assignors.base import (
    AbstractPartitionAssignor,
    PartitionCounts,
    PartitionLists,
    Subscriptions,
    TopicPartition,
    members_in_kafka_order,
)
from kassign.groups.classic.assignors import options
from kassign.core.cluster import Cluster
from kassign.core.releases import DEFAULT_KAFKA_VERSION, KafkaRelease
from kassign.core.javaorder import java_string_key


class RoundRobinAssignor(AbstractPartitionAssignor):
    name = "roundrobin"
    release_rules: tuple[str, ...] = ()  # no rule of core.releases changes it

    def __init__(self, kafka_version: str | KafkaRelease = DEFAULT_KAFKA_VERSION) -> None:
        self.release = options.release(self.name, kafka_version)

    @property
    def kafka_version(self) -> str:
        """The Kafka release this assignor answers as (every release deals alike)."""
        return self.release.label

    def assign_partitions(self, partitions_per_topic: PartitionCounts, subscriptions: Subscriptions,
                          cluster: Cluster) -> PartitionLists:
        members = members_in_kafka_order(subscriptions)
        out: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        if not members:
            return out
        topic_sets = [frozenset(subscriptions[m].topics) for m in members]
        subscribed_topics = sorted(partitions_per_topic, key=java_string_key)
        cursor = 0
        n = len(members)
        for topic in subscribed_topics:
            takers = [topic in topics for topics in topic_sets]
            for partition in range(partitions_per_topic[topic]):
                while not takers[cursor]:
                    cursor = (cursor + 1) % n
                out[members[cursor]].append(TopicPartition(topic, partition))
                cursor = (cursor + 1) % n
        return out
