"""RandomAssignor: each partition goes to a randomly chosen subscriber of its topic.

Rule. For every partition of every subscribed topic, pick one of the members that
subscribe to that topic uniformly at random. A seed makes the result reproducible:
the same seed, members and topics always give the same assignment (partitions are
drawn in topic-then-partition order, subscribers in member-id order).

Example. C0 and C1 both subscribe to t0 (4 partitions); with seed 7 one possible
outcome is ``C0: [t0p1, t0p3]``, ``C1: [t0p0, t0p2]``; with another seed the
counts may be uneven, even 4 and 0. Balance is not a goal: this is an
example of a custom assignor, useful as a baseline in simulations.

Data layout: one numpy draw per topic, an array of subscriber indexes.
"""

from __future__ import annotations


import numpy as np

from kassign.groups.classic.assignors.base import (
    AbstractPartitionAssignor,
    PartitionCounts,
    PartitionLists,
    Subscriptions,
    TopicPartition,
    topic_subscribers,
)
from kassign.groups.classic.assignors import options
from kassign.core.cluster import Cluster


class RandomAssignor(AbstractPartitionAssignor):
    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = options.seed(self.name, "seed", seed)

    def assign_partitions(self, partitions_per_topic: PartitionCounts, subscriptions: Subscriptions,
                          cluster: Cluster) -> PartitionLists:
        rng = np.random.default_rng(self.seed)
        out: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        subscribers = topic_subscribers(subscriptions)
        for topic in sorted(partitions_per_topic):
            takers = sorted(subscribers.get(topic, []))
            picks = rng.integers(0, len(takers), size=partitions_per_topic[topic])
            for partition, pick in enumerate(picks.tolist()):
                out[takers[pick]].append(TopicPartition(topic, partition))
        return out
