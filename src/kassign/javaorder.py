"""Java's orderings, for the places where Kafka's output depends on them.

Two kinds of order leak out of Kafka's Java code into its results:

* **Sorting strings.** Java compares strings by UTF-16 code units, Python by code
  points; the two differ only for characters outside the Basic Multilingual Plane.
  Big-endian UTF-16 bytes compare exactly like Java's code units, so they serve as a
  sort key (:func:`java_string_key`).
* **Walking a ``HashMap`` or ``HashSet``.** Iteration goes bucket by bucket, and
  within a bucket in insertion order (a resize splits a bucket without reordering
  it; a removed key leaves the others in place; a re-inserted key goes to the end of
  its bucket). A key sits in bucket ``spread(hashCode) & (capacity - 1)`` with
  ``spread(h) = h ^ (h >>> 16)``. So the order follows from the keys' hash codes,
  the order they went in and the table's capacity (:class:`JavaHashOrder`).

How the capacity evolves (``java.util.HashMap``, JDK 8 to 17):

* ``new HashMap<>()``: 16 at the first insertion. ``new HashMap<>(n)``: the least
  power of two >= n (1 for n = 0). ``new HashSet<>(collection)``:
  ``new HashMap<>(max((int) (size / .75f) + 1, 16))`` filled from the collection.
* It doubles whenever the size exceeds three quarters of it.
* It also doubles, while below 64, when an insertion makes one bucket hold 9 keys
  (Java grows the table rather than turning such a small bucket into a tree).

Buckets that Java does turn into trees (9+ keys sharing one bucket of a table of 64
or more) iterate in an order that is not modelled here; it takes hundreds of keys
crafted to collide.

Hash codes, as Java computes them: :func:`java_string_hash` (``String``),
``Integer.hashCode`` is the value itself, and :func:`java_uuid_hash` (Kafka's
``Uuid``: the two 64-bit halves xor-ed, then the two 32-bit halves of that).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np
from numba import njit

_MASK32 = 0xFFFFFFFF
_TREEIFY_KEYS = 9  # the insertion that makes a bucket this full grows a small table
_MIN_TREEIFY_CAPACITY = 64


def java_string_key(text: str) -> bytes:
    """Sort key that orders strings as Java's ``String.compareTo`` does."""
    return text.encode("utf-16-be", "surrogatepass")


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` (31-based polynomial over UTF-16 code units) as an unsigned 32-bit value."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & _MASK32
    return h


def java_uuid_hash(most: int, least: int) -> int:
    """Kafka's ``Uuid.hashCode()`` as an unsigned 32-bit value (``most``/``least`` as unsigned 64-bit)."""
    x = most ^ least
    return ((x >> 32) ^ x) & _MASK32


def spread(hash32: int) -> int:
    """``HashMap.hash``: the high half folded into the low half, so small tables see all bits."""
    h = hash32 & _MASK32
    return h ^ (h >> 16)


def table_size_for(capacity: int) -> int:
    """The least power of two >= ``capacity`` (at least 1), as ``HashMap(int)`` sizes its table."""
    size = 1
    while size < capacity:
        size <<= 1
    return size


def copy_constructor_capacity(size: int) -> int:
    """Initial capacity that ``new HashSet<>(collection)`` asks for, for a collection of ``size``."""
    return max(int(size / 0.75) + 1, 16)


class JavaHashOrder:
    """The keys of one ``java.util.HashMap`` (or ``HashSet``) in Java's iteration order.

    Feed it the same insertions and removals, with each key's Java hash code; ``keys()``
    then lists the keys as Java would iterate them.
    """

    __slots__ = ("_capacity", "_entries", "_next_seq", "_bucket_sizes")

    def __init__(self, initial_capacity: int | None = None) -> None:
        self._capacity = 16 if initial_capacity is None else table_size_for(initial_capacity)
        self._entries: dict[Hashable, tuple[int, int]] = {}  # key -> (spread hash, insertion number)
        self._next_seq = 0
        self._bucket_sizes: dict[int, int] | None = {} if self._capacity < _MIN_TREEIFY_CAPACITY else None

    @classmethod
    def of(cls, keys: Iterable[Hashable], hash_of, initial_capacity: int | None = None) -> JavaHashOrder:
        order = cls(initial_capacity)
        for key in keys:
            order.add(key, hash_of(key))
        return order

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    @property
    def capacity(self) -> int:
        return self._capacity

    def add(self, key: Hashable, hash32: int) -> None:
        """``put``/``add`` of a key (a key already present keeps its place)."""
        if key in self._entries:
            return
        h = spread(hash32)
        self._entries[key] = (h, self._next_seq)
        self._next_seq += 1
        if self._bucket_sizes is not None:
            bucket = h & (self._capacity - 1)
            filled = self._bucket_sizes.get(bucket, 0) + 1
            self._bucket_sizes[bucket] = filled
            if filled >= _TREEIFY_KEYS:
                self._grow()
        if len(self._entries) > self._capacity * 3 // 4:
            self._grow()

    def remove(self, key: Hashable) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None and self._bucket_sizes is not None:
            self._bucket_sizes[entry[0] & (self._capacity - 1)] -= 1

    def _grow(self) -> None:
        self._capacity *= 2
        if self._capacity >= _MIN_TREEIFY_CAPACITY:
            self._bucket_sizes = None
            return
        sizes: dict[int, int] = {}
        for h, _ in self._entries.values():
            sizes[h & (self._capacity - 1)] = sizes.get(h & (self._capacity - 1), 0) + 1
        self._bucket_sizes = sizes

    def keys(self) -> list:
        mask = self._capacity - 1
        return sorted(self._entries, key=lambda k: (self._entries[k][0] & mask, self._entries[k][1]))


def hash_iteration_order(hashes: np.ndarray, initial_capacity: int | None = None) -> np.ndarray:
    """Positions of distinct keys, inserted in this order with these hash codes, in Java's iteration order.

    The array form of :class:`JavaHashOrder` for large maps filled by insertions only."""
    spreads = np.asarray(hashes, dtype=np.int64) & _MASK32
    spreads ^= spreads >> 16
    # Only a table below 64 can grow for a crowded bucket, so replaying the first insertions
    # until the table reaches 64 settles that; beyond it only the size matters.
    order = JavaHashOrder(initial_capacity)
    i = 0
    while i < len(spreads) and order.capacity < _MIN_TREEIFY_CAPACITY:
        order.add(i, int(spreads[i]))
        i += 1
    capacity = order.capacity
    while len(spreads) > capacity * 3 // 4:
        capacity *= 2
    return np.lexsort((np.arange(len(spreads)), spreads & (capacity - 1)))


def java_string_hashes(texts: Sequence[str]) -> np.ndarray:
    """``String.hashCode()`` of each text, unsigned 32-bit, computed over all of them at once."""
    joined = "".join(texts)
    units = np.frombuffer(joined.encode("utf-16-be", "surrogatepass"), dtype=">u2").astype(np.int64)
    if len(units) == len(joined):  # no surrogate pairs: one code unit per character
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    else:
        lengths = np.array([len(t.encode("utf-16-be", "surrogatepass")) // 2 for t in texts], dtype=np.int64)
    ends = np.cumsum(lengths)
    return _polynomial_hashes(units, ends - lengths, ends)


@njit(cache=True)
def _polynomial_hashes(units, starts, ends):
    out = np.empty(len(starts), dtype=np.int64)
    for i in range(len(starts)):
        h = 0
        for j in range(starts[i], ends[i]):
            h = (31 * h + units[j]) & 0xFFFFFFFF
        out[i] = h
    return out


def java_hash_order(keys: Sequence[Hashable], hashes: Sequence[int], initial_capacity: int | None = None) -> list:
    """``keys`` (distinct, in insertion order) in the order a HashMap filled with them iterates them."""
    order = JavaHashOrder(initial_capacity)
    for key, h in zip(keys, hashes):
        order.add(key, h)
    return order.keys()


def java_string_hash_order(keys: Sequence[str], initial_capacity: int | None = None) -> list[str]:
    """String keys in ``HashMap<String, ...>`` iteration order, inserted in the order given."""
    return java_hash_order(keys, [java_string_hash(k) for k in keys], initial_capacity)


def java_int_set_order(values: Iterable[int], initial_capacity: int | None = None) -> list[int]:
    """A ``HashSet<Integer>`` filled with ``values`` in this order, as Java iterates it."""
    order = JavaHashOrder(initial_capacity)
    for v in values:
        order.add(v, v)
    return order.keys()
