"""The order in which a Java ``HashMap<String, ...>`` hands back its keys.

Kafka's sticky assignor walks its members through a HashMap when it gives back
previously owned partitions, and the first members walked take the slots for an
extra partition. To hand out those slots as Kafka does we need the same walk:

* ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, in 32-bit arithmetic;
* the map spreads it, ``h ^ (h >>> 16)``, and keeps bucket ``spread & (capacity - 1)``;
* capacity starts at 16 and doubles whenever the size passes 3/4 of it; a bucket
  that reaches 8 keys while the table is below 64 also doubles it;
* iteration goes bucket by bucket, and within a bucket in insertion order (a
  resize splits buckets without reordering them).

Bins that Java turns into trees (8+ colliding keys in a table of 64 or more) are
not modelled: that needs hundreds of keys sharing one hash bucket.
"""

from __future__ import annotations

from collections.abc import Sequence

from kassign.javaorder import java_string_hash

__all__ = ["java_hashmap_order", "java_string_hash"]

def _spread(h: int) -> int:
    return h ^ (h >> 16)


def _final_capacity(spread_hashes: Sequence[int]) -> int:
    capacity = 16
    for size in range(1, len(spread_hashes) + 1):
        if size > capacity * 3 // 4:
            capacity *= 2
    # Too many keys in one bucket of a small table makes Java grow the table instead of treeifying.
    while capacity < 64:
        buckets: dict[int, int] = {}
        for h in spread_hashes:
            buckets[h & (capacity - 1)] = buckets.get(h & (capacity - 1), 0) + 1
        if max(buckets.values(), default=0) <= 8:
            break
        capacity *= 2
    return capacity


def java_hashmap_order(keys_in_insertion_order: Sequence[str]) -> list[str]:
    """The keys in the order a ``HashMap`` filled with them (in this order) iterates them."""
    spread_hashes = [_spread(java_string_hash(k)) for k in keys_in_insertion_order]
    capacity = _final_capacity(spread_hashes)
    order = sorted(range(len(keys_in_insertion_order)), key=lambda i: (spread_hashes[i] & (capacity - 1), i))
    return [keys_in_insertion_order[i] for i in order]
