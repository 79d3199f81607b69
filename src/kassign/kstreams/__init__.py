"""Kafka Streams' classic task assignment: what the group leader's StreamsPartitionAssignor computes (SPEC section 8)."""

from kassign.kstreams.assign import assign_streams_classic

__all__ = ["assign_streams_classic"]
