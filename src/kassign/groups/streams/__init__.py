"""Streams groups: Kafka Streams applications. ``classic``: the group leader's task assignment under the classic
protocol (high-availability, sticky); the broker's own assignor of KIP-1071 streams groups sits beside it."""
