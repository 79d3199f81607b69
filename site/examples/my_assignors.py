"""A user's own assignor, for the manual's example: the first subscriber (by member id) of each topic takes
all of its partitions."""

from kassign.assignors import AbstractPartitionAssignor, TopicPartition


class FirstTakesAll(AbstractPartitionAssignor):
    name = "first-takes-all"

    def assign_partitions(self, partitions_per_topic, subscriptions, cluster):
        out = {m: [] for m in subscriptions}
        for topic, count in partitions_per_topic.items():
            first = min(m for m, s in subscriptions.items() if topic in s.topics)
            out[first] += [TopicPartition(topic, p) for p in range(count)]
        return out
