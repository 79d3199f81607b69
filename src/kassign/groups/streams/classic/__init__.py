"""Kafka Streams' classic task assignment: what the group leader's StreamsPartitionAssignor computes."""

from kassign.groups.streams.classic.assign import assign_streams_classic

__all__ = ["assign_streams_classic"]
