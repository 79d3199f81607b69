"""BroadcastAssignor: every subscriber of a topic gets all of its partitions.

Rule. Kafka's built-in strategies give each partition to exactly one member of a
group. This custom strategy (an "in-group broadcast") deliberately breaks
that: each member receives every partition of every topic it subscribes to, so a
group can fan a topic out to all its members while still committing offsets as a
group.

Example. C0 subscribes to t0 (2 partitions) and t1 (1); C1 to t0 only::

    C0: [t0p0, t0p1, t1p0]
    C1: [t0p0, t0p1]
"""

from __future__ import annotations


from kassign.groups.classic.assignors.base import (
    AbstractPartitionAssignor,
    PartitionCounts,
    PartitionLists,
    Subscriptions,
    TopicPartition,
)
from kassign.core.cluster import Cluster


class BroadcastAssignor(AbstractPartitionAssignor):
    name = "broadcast"
    exclusive = False  # every subscriber gets every partition, on purpose

    def assign_partitions(self, partitions_per_topic: PartitionCounts, subscriptions: Subscriptions,
                          cluster: Cluster) -> PartitionLists:
        return {
            member: [
                TopicPartition(topic, p)
                for topic in dict.fromkeys(subscription.topics)
                if topic in partitions_per_topic
                for p in range(partitions_per_topic[topic])
            ]
            for member, subscription in subscriptions.items()
        }
