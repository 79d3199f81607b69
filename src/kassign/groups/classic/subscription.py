"""What a classic group's members and leader exchange, as plain values: a ``TopicPartition``, a member's
``Subscription`` (Kafka's ConsumerProtocolSubscription, v0-v3) and the ``Assignment`` it is handed.

A module of its own, below the assignors, so that reading a live group's Subscription bytes
(``kassign.groups.classic.protocol.wire``) loads these few types and nothing of the assignors.
Example: ``Subscription(("orders",), owned_partitions=(TopicPartition("orders", 0),), generation=3)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple


class TopicPartition(NamedTuple):
    """A partition of a topic; sorts by topic, then partition number."""

    topic: str
    partition: int


# A TopicPartition from a (topic, partition) tuple in C, without the namedtuple's Python-level __new__:
# the way to build a million of them.
new_topic_partition = partial(tuple.__new__, TopicPartition)


@dataclass(frozen=True)
class Subscription:
    """What a member tells the leader when it joins (Kafka's Subscription, protocol v0-v3)."""

    topics: tuple[str, ...]
    user_data: bytes = b""
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation: int = -1
    rack: str | None = None
    group_instance_id: str | None = None


@dataclass(frozen=True)
class Assignment:
    """What the leader hands one member: its partitions and optional user data."""

    partitions: tuple[TopicPartition, ...] = ()
    user_data: bytes = b""
