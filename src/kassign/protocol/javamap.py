"""Iteration order of a ``java.util.HashMap<String, ...>``.

Kafka's group coordinator keeps members in a HashMap keyed by member id, and the
leader collects subscriptions into one. Where the protocol then says "the first
member", it means the first in that map's iteration order: that is who becomes
leader when the leader leaves, and the order in which the assignor sees the
subscriptions. To replay a group faithfully we reproduce that order.

The order is fully determined by the keys: a key sits in bucket
``spread(hashCode) & (capacity - 1)``; buckets are visited in index order and
keys sharing a bucket in insertion order (a resize splits a bucket without
reordering it). Capacity starts at 16 and doubles whenever the size passes three
quarters of it, and never shrinks, so it depends on the largest size the map has
ever had. (Java turns a bucket of 8+ colliding keys into a tree; with member ids
that does not happen in practice and is not modelled.)
"""

from __future__ import annotations

from collections.abc import Iterable


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: 31-based polynomial over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _bucket_hash(text: str) -> int:
    h = java_string_hash(text) & 0xFFFFFFFF
    return h ^ (h >> 16)


def hashmap_capacity(largest_size: int) -> int:
    """Table size of a default HashMap after it once held ``largest_size`` entries."""
    capacity = 16
    while largest_size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def hashmap_order(keys_in_insertion_order: Iterable[str], largest_size: int | None = None) -> list[str]:
    """The keys as a HashMap built by inserting them in this order would iterate them."""
    keys = list(keys_in_insertion_order)
    mask = hashmap_capacity(max(len(keys), largest_size or 0)) - 1
    # sorted() is stable, so keys in one bucket keep insertion order
    return sorted(keys, key=lambda k: _bucket_hash(k) & mask)
