"""Racks for the sticky assignors (KIP-881): when they count, and what counts as a mismatch.

One definition for every sticky path (the uniform algorithm, the optimal general one and the
cooperative round), the one Kafka's sticky assignors use:

* A member's rack is its ``client.rack``; an empty one is no rack (``base.client_rack``).
* Racks play a part only if some member has a rack, some member's rack holds a replica of
  some subscribed partition, and (unless rack-aware logic is preferred) not every subscribed
  partition has its replicas on the same set of racks.
* Then member ``m`` and partition ``p`` *mismatch* when ``m`` has a rack and none of ``p``'s
  replicas is on it. A member without a rack mismatches nothing; a partition whose replicas
  have no rack mismatches every member that has one.

``rack_context`` returns None when racks play no part, else a ``RackContext``, and
``RackContext.mismatched`` is the mismatch rule, on integer arrays. Nothing else decides
whether a pair mismatches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kassign.groups.classic.assignors.base import client_rack


@dataclass
class RackContext:
    """Racks as integers, for a group where rack-aware assignment applies.

    Members are indexes and partitions global ids (``TopicLayout`` numbering)."""

    member_rack: np.ndarray  # int32 [M]: rack index of each member, -1 without rack
    partition_on_rack: np.ndarray  # bool [R, N]: a replica of the partition is on member rack r
    members_on_partition_racks: np.ndarray  # int64 [N]: members whose rack hosts a replica of the partition

    def mismatched(self, members: int | np.ndarray, partitions: int | np.ndarray) -> np.ndarray:
        """Whether each member/partition pair mismatches (arguments broadcast like numpy's)."""
        rack = np.asarray(self.member_rack[members])
        on_rack = self.partition_on_rack[np.maximum(rack, 0), partitions]
        return (rack >= 0) & ~on_rack

    def mismatch(self, member: int, partition: int) -> bool:
        """``mismatched`` for one pair."""
        return bool(self.mismatched(member, partition))

    def matches(self, member: int, partition: int) -> bool:
        """The member has a rack and does not mismatch the partition: a member Kafka's rack round
        robin looks for. Unlike "no mismatch", a member without a rack never matches."""
        return bool(self.member_rack[member] >= 0) and not self.mismatch(member, partition)


def rack_context(
    member_racks: Sequence[str | None],
    partition_racks: Sequence[Sequence[frozenset[str]]],
    prefer_rack_aware: bool = False,
) -> RackContext | None:
    """Rack data when Kafka would assign rack-aware, else None.

    ``member_racks``: per member index. ``partition_racks``: per subscribed topic (in global id
    order), per partition, the racks of its replicas.
    """
    racks = sorted({r for r in map(client_rack, member_racks) if r is not None})
    if not racks:
        return None
    flat = [frozenset(r) for per_topic in partition_racks for r in per_topic]
    if not flat:
        return None
    all_partition_racks = frozenset().union(*flat)
    if not set(racks) & all_partition_racks:
        return None
    if not prefer_rack_aware and all(r == all_partition_racks for r in flat):
        return None
    rack_index = {r: i for i, r in enumerate(racks)}
    member_rack_ids = np.array([rack_index.get(client_rack(r), -1) for r in member_racks], dtype=np.int32)
    on_rack = np.zeros((len(racks), len(flat)), dtype=bool)
    for g, replica_racks in enumerate(flat):
        for r in replica_racks:
            if r in rack_index:
                on_rack[rack_index[r], g] = True
    members_per_rack = np.bincount(member_rack_ids[member_rack_ids >= 0], minlength=len(racks))
    return RackContext(member_rack_ids, on_rack, members_per_rack @ on_rack.astype(np.int64))
