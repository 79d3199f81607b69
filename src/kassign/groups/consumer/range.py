"""``range`` on the server: Kafka 4's group-coordinator RangeAssignor.

Each topic is cut into contiguous ranges, one per subscriber, in member order:
static members first, ordered by ``group.instance.id``, then the others ordered by
member id (Java string order). A topic of ``P`` partitions with ``S`` subscribers
gives each ``P // S`` partitions, and the first ``P % S`` subscribers one more.

When every member subscribes to the same topics and the topics have the same number
of partitions, member ``i`` gets the same partition numbers of every topic
(co-partitioning, for joins).

Example: topics ``t1``, ``t2`` with 3 partitions each, members ``M0``, ``M1``::

    M0: t1-0, t1-1, t2-0, t2-1
    M1: t1-2, t2-2

Unlike the client-side RangeAssignor of the classic protocol, the previous target
plays no part and racks are ignored (Kafka 4.0). A member of the same instance id
gets the same ranges after a restart with a new member id, which is what static
membership is for.

Data layout: one pass per topic over the sorted subscriber numbers; owners are an
integer array per topic.
"""

from __future__ import annotations

import numpy as np

from kassign.groups.consumer.group import ServerGroup
from kassign.core.javaorder import java_sorted_positions
from kassign.core.releases import LATEST, KafkaRelease


def range_assign(group: ServerGroup, release: KafkaRelease = LATEST) -> np.ndarray:
    """Each partition's owner (member number, -1 none) in the new target, by flat partition id
    (the same in every release kassign models: ``release`` is accepted for a uniform call)."""
    owners = np.full(int(group.offsets[-1]), -1, dtype=np.int64)
    ranked = _ranked(group)
    for t, members in enumerate(_subscribers_in_rank_order(group, ranked)):
        if not len(members):
            continue
        base, extra = divmod(int(group.num_partitions[t]), len(members))
        sizes = np.full(len(members), base, dtype=np.int64)
        sizes[:extra] += 1
        owners[group.offsets[t]:group.offsets[t + 1]] = np.repeat(members, sizes)
    return owners


def _subscribers_in_rank_order(group: ServerGroup, ranked: list[int]) -> list[np.ndarray]:
    """Per topic, its subscribers in rank order; members sharing a subscription are handled as one block."""
    ranked_members = np.array(ranked, dtype=np.int64)
    classes = group.member_class[ranked_members]
    by_class = np.argsort(classes, kind="stable")  # each class's members, in rank order
    bounds = np.searchsorted(classes[by_class], np.arange(group.num_classes + 1))
    rank = np.empty(group.num_members, dtype=np.int64)
    rank[ranked_members] = np.arange(group.num_members)
    per_topic: list[list[np.ndarray]] = [[] for _ in range(group.num_topics)]
    for cls in range(group.num_classes):
        block = ranked_members[by_class[bounds[cls]:bounds[cls + 1]]]
        for t in group.class_topic_list(cls).tolist():
            per_topic[t].append(block)
    result = []
    for parts in per_topic:
        if len(parts) <= 1:
            result.append(parts[0] if parts else np.zeros(0, dtype=np.int64))
        else:
            merged = np.concatenate(parts)
            result.append(merged[np.argsort(rank[merged], kind="stable")])
    return result


def _ranked(group: ServerGroup) -> list[int]:
    """Member numbers in range order: static members by ``group.instance.id``, then the others by
    member id, each in Java's string order."""
    static = [m for m, instance_id in enumerate(group.instance_ids) if instance_id is not None]
    dynamic = [m for m, instance_id in enumerate(group.instance_ids) if instance_id is None]
    by_instance = java_sorted_positions([group.instance_ids[m] for m in static])
    by_id = java_sorted_positions([group.member_ids[m] for m in dynamic])
    return [static[i] for i in by_instance] + [dynamic[i] for i in by_id]
