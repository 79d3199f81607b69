"""What both rules of share groups' ``simple`` assignor build on (Kafka 4.1's, in
:mod:`kassign.groups.share.hashed`, and 4.2's and later, in :mod:`kassign.groups.share.simple`): the error Kafka's
assignor throws, the homogeneous group's target list, a member's subscribed topics in the coordinator's
``HashSet`` order, partition names for messages, and the compiled replay of Java's ``HashMap`` tables.

Example: for members subscribed to ``["b", "a"]`` on topics ``a`` (2 partitions) and ``b`` (1),
:func:`homogeneous_targets` lists the assignable partitions of ``a`` then ``b`` (the names' ``HashSet``
order: ``"a".hashCode()`` 97 before ``"b"``'s 98), as flat ids ``[0, 1, 2]``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from kassign.core.errors import KassignError
from kassign.core.javaorder import JavaHashOrder, java_string_hash
from kassign.core.javaorder import hash_table_order as _java_order  # noqa: F401  (the share assignors' name)
from kassign.core.javaorder import hash_table_shape as _java_table  # noqa: F401
from kassign.groups.consumer.group import ServerGroup

class ShareAssignorError(KassignError):
    """Kafka's share assignor throws for this group; ``kafka_exception`` names what it throws."""

    def __init__(self, message: str, kafka_exception: str) -> None:
        super().__init__(message)
        self.kafka_exception = kafka_exception


def homogeneous_targets(group: ServerGroup, scenario, assignable: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(targets, subscribed)`` of the homogeneous path (every release): the assignable partitions of
    the first member's topics as Kafka lists them (flat ids), and which topic numbers that member
    subscribes to; None when it lists no topic at all."""
    members = scenario.members
    listing = members.subscriptions[int(members.subscription[int(group.given_position[0])])]
    if not listing:
        return None
    topics = subscription_topics(dict(zip(group.topic_names, range(group.num_topics))), listing)
    subscribed = np.zeros(group.num_topics, dtype=bool)
    subscribed[topics] = True
    return partitions_of(group, topics, assignable), subscribed


def subscription_topics(index: dict[str, int], listing) -> list[int]:
    """The topic numbers (``index``: name -> number) of a member's subscribed names as the coordinator's
    view of them iterates (the names' ``HashSet`` order, names that do not exist skipped)."""
    return [index[name] for name in _name_set_order(tuple(listing)) if name in index]


def partitions_of(group: ServerGroup, topics: list[int], assignable: np.ndarray) -> np.ndarray:
    """The assignable partitions (flat ids) of ``topics``, topic after topic, ascending within one."""
    topics = np.asarray(topics, dtype=np.int64)
    sizes = group.num_partitions[topics]
    # topic after topic: each run starts at its topic's offset and counts up
    run_start = np.cumsum(sizes) - sizes
    targets = np.arange(int(sizes.sum()), dtype=np.int64) + np.repeat(group.offsets[topics] - run_start, sizes)
    return targets[assignable[targets]]


@lru_cache(maxsize=256)
def _name_set_order(listing: tuple[str, ...]) -> tuple[str, ...]:
    """A member's subscribed names as its ``new HashSet<>(list)`` iterates them (kept: a group's
    subscriptions change far less often than its target is computed)."""
    return tuple(JavaHashOrder.copy_of(listing, java_string_hash).keys())


def partition_name(group: ServerGroup, flat: int) -> str:
    """Flat partition id ``flat`` as ``topic-partition``, for messages."""
    topic = int(np.searchsorted(group.offsets, flat, side="right")) - 1
    return f"{group.topic_names[topic]}-{flat - int(group.offsets[topic])}"


# -- compiled parts -------------------------------------------------------------------------------

@njit(cache=True)
def unlink(nxt, prv, head, k):
    """Take ``k`` out of the doubly linked list ``nxt``/``prv`` (-1 ends it); returns the new head."""
    if prv[k] >= 0:
        nxt[prv[k]] = nxt[k]
    else:
        head = nxt[k]
    if nxt[k] >= 0:
        prv[nxt[k]] = prv[k]
    return head
