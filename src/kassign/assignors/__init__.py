"""Everything you need to write your own consumer-group assignor, at a short path that stays put.

Subclass :class:`AbstractPartitionAssignor` (partition counts per topic in, partitions per member out) or
implement :class:`ConsumerPartitionAssignor` (the whole interface: ``name``, ``subscription(...)`` with user
data, ``assign(cluster, subscriptions)``, ``on_assignment(assignment, generation)``), then name your class by
its dotted path (``kassign assign --strategy my_assignors:FirstTakesAll``, ``kassign.assign("my_assignors:
FirstTakesAll", scenario)``) or register it under a short name with :func:`register_assignor`.

Example::

    from kassign.assignors import AbstractPartitionAssignor, TopicPartition

    class FirstTakesAll(AbstractPartitionAssignor):
        name = "first-takes-all"

        def assign_partitions(self, partitions_per_topic, subscriptions, cluster):
            out = {m: [] for m in subscriptions}
            for topic, count in partitions_per_topic.items():
                first = min(m for m, s in subscriptions.items() if topic in s.topics)
                out[first] += [TopicPartition(topic, p) for p in range(count)]
            return out

The built-in assignors are here too (:class:`RangeAssignor`, :class:`RoundRobinAssignor`,
:class:`StickyAssignor`, :class:`CooperativeStickyAssignor`, ...), loaded on first use. This path is the public
one; the classes live in ``kassign.groups.classic.assignors``, which may be reorganised, and are the very same
objects here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kassign.core.lazy import lazy_names
from kassign.groups.classic.assignors import (
    COOPERATIVE,
    EAGER,
    AbstractPartitionAssignor,
    Assignment,
    ConsumerPartitionAssignor,
    MemberInfo,
    Subscription,
    TopicPartition,
    available_assignors,
    get_assignor,
    load_assignor_class,
    register_assignor,
)

if TYPE_CHECKING:
    from kassign.groups.classic.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kassign.groups.classic.assignors.eager_sticky import StickyAssignor
    from kassign.groups.classic.assignors.load_aware import LoadAwareAssignor
    from kassign.groups.classic.assignors.range import RangeAssignor
    from kassign.groups.classic.assignors.roundrobin import RoundRobinAssignor

_BUILT_IN = {
    "RangeAssignor": "kassign.groups.classic.assignors.range",
    "RoundRobinAssignor": "kassign.groups.classic.assignors.roundrobin",
    "StickyAssignor": "kassign.groups.classic.assignors.eager_sticky",
    "CooperativeStickyAssignor": "kassign.groups.classic.assignors.cooperative_sticky",
    "LoadAwareAssignor": "kassign.groups.classic.assignors.load_aware",
}

__all__ = [
    "COOPERATIVE",
    "EAGER",
    "AbstractPartitionAssignor",
    "Assignment",
    "ConsumerPartitionAssignor",
    "CooperativeStickyAssignor",
    "LoadAwareAssignor",
    "MemberInfo",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "Subscription",
    "TopicPartition",
    "available_assignors",
    "get_assignor",
    "load_assignor_class",
    "register_assignor",
]

__getattr__, __dir__ = lazy_names(__name__, _BUILT_IN)
