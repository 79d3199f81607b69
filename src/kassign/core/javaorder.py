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
  ``new HashMap<>(max((int) (size / .75f) + 1, 16))`` filled from the collection
  (:meth:`JavaHashOrder.copy_of`), so a set built at once can have twice the table of
  one grown an add at a time (12 elements: 32 buckets against 16), and iterate
  differently. (JDK 19 on sizes that copy as ``HashMap.newHashMap(max(size, 12))``,
  which gives the grown table; kassign follows JDK 17.)
* It doubles whenever the size exceeds three quarters of it.
* It also doubles, while below 64, when an insertion makes one bucket hold 9 keys
  (Java grows the table rather than turning such a small bucket into a tree).

Buckets that Java does turn into trees (9+ keys sharing one bucket of a table of 64
or more) iterate along a list threaded through a red-black tree; only
:func:`hashmap_positions` (insertions only) models them, for keys that can be crafted or
patterned to collide: rack names chosen by hand, and partition numbers a stride apart
(:func:`java_int_set_order`: a member dealt every 16th partition of a topic holds, in a
set of 40, four buckets of 10).

Hash codes, as Java computes them: :func:`java_string_hash` (``String``),
``Integer.hashCode`` is the value itself, and :func:`java_uuid_hash` (Kafka's
``Uuid``: the two 64-bit halves xor-ed, then the two 32-bit halves of that).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np
from numba import njit

from kassign.core.errors import KassignError
from kassign.core.javastrings import java_sorted_positions, java_string_hash, java_string_key

__all__ = ["java_sorted_positions", "java_string_hash", "java_string_key"]  # re-exported: their home is javastrings

_MASK32 = 0xFFFFFFFF

_TREEIFY_KEYS = 9  # the insertion that makes a bucket this full grows a small table
_MIN_TREEIFY_CAPACITY = 64


def signed32(value: int) -> int:
    """A 32-bit value as Java's signed ``int``."""
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def java_uuid_hash(most: int, least: int) -> int:
    """Kafka's ``Uuid.hashCode()`` as an unsigned 32-bit value (``most``/``least`` as unsigned 64-bit)."""
    x = most ^ least
    return ((x >> 32) ^ x) & _MASK32


def spread(hash32: int) -> int:
    """``HashMap.hash``: the high half folded into the low half, so small tables see all bits."""
    h = hash32 & _MASK32
    return h ^ (h >> 16)


@njit(cache=True)
def table_size_for(capacity: int) -> int:
    """The least power of two >= ``capacity`` (at least 1), as ``HashMap(int)`` sizes its table."""
    size = 1
    while size < capacity:
        size <<= 1
    return size


@njit(cache=True)
def copy_constructor_capacity(size: int) -> int:
    """Initial capacity that ``new HashSet<>(collection)`` asks for, for a collection of ``size``
    (repeats included): ``max((int) (size / .75f) + 1, 16)``, divided in ``float`` as Java does
    (from about 25 million on, double arithmetic would give another table)."""
    return max(int(np.float32(size) / np.float32(0.75)) + 1, 16)


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
        """A map (or set) given these keys one ``put``/``add`` at a time."""
        order = cls(initial_capacity)
        for key in keys:
            order.add(key, hash_of(key))
        return order

    @classmethod
    def copy_of(cls, keys: Sequence[Hashable], hash_of) -> JavaHashOrder:
        """``new HashSet<>(keys)``: a table sized for the whole collection first, then its keys
        added in its order."""
        return cls.of(keys, hash_of, copy_constructor_capacity(len(keys)))

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

    def grow_for(self, size: int) -> None:
        """Grow as the table did when it once held ``size`` entries."""
        while size > self._capacity * 3 // 4:
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
    capacity = insert_only_capacity(spreads, 16 if initial_capacity is None else table_size_for(initial_capacity))
    return _bucket_order(spreads & (capacity - 1), capacity)


@njit(cache=True)
def _bucket_order(buckets, capacity):
    """Positions by bucket, in insertion order within one (a counting sort: buckets are below ``capacity``)."""
    start = np.zeros(capacity + 1, dtype=np.int64)
    for b in buckets:
        start[b + 1] += 1
    for b in range(capacity):
        start[b + 1] += start[b]
    order = np.empty(len(buckets), dtype=np.int64)
    for i in range(len(buckets)):
        order[start[buckets[i]]] = i
        start[buckets[i]] += 1
    return order


@njit(cache=True)
def insert_only_capacity(spreads: np.ndarray, table: int) -> int:
    """The table size a ``HashMap`` of ``table`` buckets reaches as distinct keys with these
    spread hash codes go in one ``put`` at a time, by :class:`JavaHashOrder`'s rules: it doubles
    when it holds more than 3/4 of its buckets and, below 64 buckets, when one bucket reaches 9
    keys (from 64 buckets on such a bucket becomes a tree bin, which only
    :func:`hashmap_positions` models)."""
    return insert_only_capacity_with(spreads, table, np.zeros(_MIN_TREEIFY_CAPACITY, dtype=np.int64))


@njit(cache=True)
def insert_only_capacity_with(spreads: np.ndarray, table: int, in_bucket: np.ndarray) -> int:
    """:func:`insert_only_capacity` counting in ``in_bucket`` (64 zeros; a caller walking many small maps
    keeps one and zeroes it, rather than allocate one per map)."""
    capacity = table
    for i in range(len(spreads)):
        if capacity < _MIN_TREEIFY_CAPACITY:
            bucket = spreads[i] & (capacity - 1)
            in_bucket[bucket] += 1
            if in_bucket[bucket] >= _TREEIFY_KEYS:
                capacity = _doubled(spreads[:i + 1], capacity, in_bucket)
        if i + 1 > capacity * 3 // 4:
            capacity = _doubled(spreads[:i + 1], capacity, in_bucket)
    return capacity


@njit(cache=True)
def _doubled(inserted: np.ndarray, capacity: int, in_bucket: np.ndarray) -> int:
    """Double the table; below 64 buckets, count the keys per bucket again (only there do they matter)."""
    capacity *= 2
    if capacity < _MIN_TREEIFY_CAPACITY:
        in_bucket[:] = 0
        for spread_hash in inserted:
            in_bucket[spread_hash & (capacity - 1)] += 1
    return capacity


@njit(cache=True)
def _spread_of(h):
    return h ^ (h >> 16)


@njit(cache=True)
def _bucket_counts(hashes, lo, hi, table):
    counts = np.zeros(table, dtype=np.int64)
    for i in range(lo, hi):
        counts[_spread_of(hashes[i]) & (table - 1)] += 1
    return counts


@njit(cache=True)
def hash_table_shape(hashes, lo, hi, table, head, looked_up_after=False):
    """``(capacity, tree)`` of a HashMap of ``table`` buckets after the distinct keys with hash codes
    ``hashes[lo:hi]`` (unsigned 32-bit ``hashCode()`` values) went in one at a time: by ``put``/``add``,
    or (``head``) by ``computeIfAbsent`` (grows before inserting, a bucket of 8 is full). ``tree``: a
    bucket of a table of 64+ filled up (Java makes it a tree bin, whose order only
    :func:`hashmap_positions` knows).

    ``computeIfAbsent`` grows a full table even when its key is present; between insertions that
    changes nothing (the next insertion would grow it alike), after the last one it adds a doubling:
    ``looked_up_after`` says such a call came."""
    capacity = table
    counts = np.zeros(capacity, dtype=np.int64)
    full = 8 if head else 9
    tree = False
    for i in range(lo, hi):
        if head and i - lo > capacity * 3 // 4:
            capacity *= 2
            counts = _bucket_counts(hashes, lo, i, capacity)
        bucket = _spread_of(hashes[i]) & (capacity - 1)
        counts[bucket] += 1
        if counts[bucket] >= full:
            if capacity < _MIN_TREEIFY_CAPACITY:
                capacity *= 2
                counts = _bucket_counts(hashes, lo, i + 1, capacity)
            else:
                tree = True
        if not head and i + 1 - lo > capacity * 3 // 4:
            capacity *= 2
            counts = _bucket_counts(hashes, lo, i + 1, capacity)
    if head and looked_up_after and hi - lo > capacity * 3 // 4:
        capacity *= 2
    return capacity, tree


@njit(cache=True)
def hash_table_order(values, hashes, lo, hi, capacity, head):
    """``values[lo:hi]`` in the iteration order of a table of ``capacity`` buckets they went into in
    this order: by bucket, then in insertion order (``head``: the reverse, ``computeIfAbsent``)."""
    n = hi - lo
    out = np.empty(n, dtype=np.int64)
    if capacity <= 8 * n + 64:  # counting sort over the buckets
        start = np.zeros(capacity + 1, dtype=np.int64)
        for i in range(lo, hi):
            start[(_spread_of(hashes[i]) & (capacity - 1)) + 1] += 1
        for b in range(capacity):
            start[b + 1] += start[b]
        for k in range(n):
            i = hi - 1 - k if head else lo + k
            b = _spread_of(hashes[i]) & (capacity - 1)
            out[start[b]] = values[i]
            start[b] += 1
        return out
    key = np.empty(n, dtype=np.int64)
    for k in range(n):
        key[k] = (_spread_of(hashes[lo + k]) & (capacity - 1)) * n + (n - 1 - k if head else k)
    order = np.argsort(key)
    for k in range(n):
        out[k] = values[lo + order[k]]
    return out


def compute_if_absent_order(hashes: np.ndarray, initial_capacity: int | None = None,
                            looked_up_after: bool = False) -> np.ndarray:
    """Positions of distinct keys put in this order by ``computeIfAbsent`` into a new ``HashMap``, in its
    iteration order (``hashes``: their ``hashCode()``, unsigned 32-bit); tree bins through
    :func:`hashmap_positions`. ``looked_up_after``: a ``computeIfAbsent`` of a present key came after the
    last insertion (it may grow the table once more)."""
    hashes = np.asarray(hashes, dtype=np.int64)
    table = 16 if initial_capacity is None else table_size_for(initial_capacity)
    capacity, tree = hash_table_shape(hashes, 0, len(hashes), table, True, looked_up_after)
    if tree:
        return np.array(hashmap_positions(hashes.tolist(), initial_capacity, compute_if_absent=True,
                                          looked_up_after=looked_up_after), dtype=np.int64)
    return hash_table_order(np.arange(len(hashes), dtype=np.int64), hashes, 0, len(hashes), capacity, True)


def java_string_hashes(texts: Sequence[str]) -> np.ndarray:
    """``String.hashCode()`` of each text, unsigned 32-bit, computed over all of them at once."""
    if texts:
        joined = "\0".join(texts)
        if joined.count("\0") == len(texts) - 1:  # no text has a NUL: NULs mark where each ends
            units = np.frombuffer(joined.encode("utf-16-le", "surrogatepass"), dtype="<u2")
            return _polynomial_hashes_between_nuls(units.astype(np.uint16, copy=False), len(texts))
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


@njit(cache=True)
def _polynomial_hashes_between_nuls(units, count):
    """The hashes of ``count`` texts written one after another, a 0 code unit after each but the last
    (UTF-16 writes a NUL as that unit and nothing else with it)."""
    out = np.empty(count, dtype=np.int64)
    h = 0
    i = 0
    for j in range(len(units)):
        unit = units[j]
        if unit == 0:
            out[i] = h
            i += 1
            h = 0
        else:
            h = (31 * h + unit) & 0xFFFFFFFF
    out[i] = h
    return out


def java_hash_order(keys: Sequence[Hashable], hashes: Sequence[int], initial_capacity: int | None = None) -> list:
    """``keys`` (distinct, in insertion order) in the order a HashMap filled with them iterates them."""
    order = JavaHashOrder(initial_capacity)
    for key, h in zip(keys, hashes):
        order.add(key, h)
    return order.keys()


def java_string_hash_order(keys: Iterable[str], initial_capacity: int | None = None,
                           largest_size: int = 0) -> list[str]:
    """String keys in ``HashMap<String, ...>`` iteration order, inserted in the order given.

    ``largest_size``: the most entries the map ever held, if others were removed since (a
    table never shrinks, so the capacity it reached still decides the buckets)."""
    distinct = list(dict.fromkeys(keys))  # a key put again keeps its place
    hashes = java_string_hashes(distinct)
    if largest_size <= len(distinct):
        return [distinct[i] for i in hash_iteration_order(hashes, initial_capacity).tolist()]
    order = JavaHashOrder(initial_capacity)
    for key, h in zip(distinct, hashes.tolist()):
        order.add(key, h)
    order.grow_for(largest_size)
    return order.keys()


def java_int_set_order(values: Iterable[int], initial_capacity: int | None = None) -> list[int]:
    """A ``HashSet<Integer>`` filled with ``values`` in this order (repeats allowed), as Java
    iterates it, tree bins included (``Integer`` hash codes are distinct, so they always have
    an order)."""
    distinct = list(dict.fromkeys(values))
    table = 16 if initial_capacity is None else table_size_for(initial_capacity)
    positions, plain = int_set_positions(np.array(distinct, dtype=np.int64), table)
    if not plain:
        return [distinct[i] for i in hashmap_positions(distinct, initial_capacity)]
    return [distinct[i] for i in positions.tolist()]


@njit(cache=True)
def int_set_positions(distinct: np.ndarray, table: int) -> tuple[np.ndarray, bool]:
    """Positions of ``distinct`` (no repeats), added in this order to a ``HashSet<Integer>`` of
    ``table`` buckets, in the order it iterates them; ``(empty, False)`` when 9 or more of them
    share a bucket of that table (tree bins: :func:`hashmap_positions` orders those).

    A table only grows, so a bucket never holds more keys than at the start with every key
    in: at most 8 there, no bucket ever grows the table or becomes a tree, and the order is
    by bucket of the final table, then insertion."""
    spreads = distinct & _MASK32
    spreads ^= spreads >> 16
    if len(distinct) >= _TREEIFY_KEYS:
        in_bucket = np.bincount(spreads & (table - 1))
        if in_bucket.max() >= _TREEIFY_KEYS:
            return np.zeros(0, dtype=np.int64), False
    capacity = table
    while len(distinct) > capacity * 3 // 4:
        capacity *= 2
    buckets = spreads & (capacity - 1)
    if strictly_ascending(buckets):  # e.g. ascending partition numbers below the capacity: as added
        return np.arange(len(distinct)), True
    return np.argsort(buckets, kind="mergesort"), True  # stable: insertion order


@njit(cache=True)
def strictly_ascending(values: np.ndarray) -> bool:
    """Whether each value is greater than the one before it."""
    for i in range(1, len(values)):
        if values[i] <= values[i - 1]:
            return False
    return True


def java_int_set_copy_order(values: Sequence[int]) -> list[int]:
    """``new HashSet<>(values)`` of ``Integer``s (a list, repeats allowed), as Java iterates it."""
    return java_int_set_order(values, copy_constructor_capacity(len(values)))


# --- insert-only maps with tree bins ------------------------------------------------------------


class JavaOrderUndefined(KassignError):
    """Java's iteration order depends on identity hash codes here, so no run reproduces another's."""


_EQUAL_HASHES = (
    "9 or more keys share one Java hash bucket and some of them have equal hash codes; Java orders "
    "those by object identity, which changes from run to run"
)


def _signed_spread(hash_code: int) -> int:
    """``HashMap.hash`` as Java's signed int: tree bins compare these signed."""
    return signed32(spread(hash_code))


class _TreeBin:
    """A HashMap bin that grew past 8 entries on a table of 64+ buckets.

    Java then keeps the bin as a red-black tree ordered by hash, and iteration follows a
    linked list threaded through it whose order depends on the tree's shape (the root
    always moves to the front). Here only the shape and that list are kept. Java breaks
    ties between equal hashes by ``compareTo`` where the keys' class is ``Comparable`` to
    itself (``tie``: position -> a key ordering as ``compareTo`` does), else by identity hash
    codes, which differ from run to run, so without ``tie`` a bin with two equal hashes has no
    reproducible order and is refused.
    """

    __slots__ = ("order", "left", "right", "parent", "red", "root", "tie")

    def __init__(self, items: list[tuple[int, int]], tie=None) -> None:
        self.order: list[tuple[int, int]] = []
        self.tie = tie
        self._build(items)

    def _build(self, items: list[tuple[int, int]]) -> None:
        if self.tie is None and len({h for h, _ in items}) < len(items):
            raise JavaOrderUndefined(_EQUAL_HASHES)
        self.left: dict[tuple[int, int], tuple[int, int] | None] = {}
        self.right: dict[tuple[int, int], tuple[int, int] | None] = {}
        self.parent: dict[tuple[int, int], tuple[int, int] | None] = {}
        self.red: dict[tuple[int, int], bool] = {}
        self.root: tuple[int, int] | None = None
        for item in items:
            self._insert(item)
        self.order = list(items)
        self._root_to_front()

    def _root_to_front(self) -> None:
        self.order.remove(self.root)  # type: ignore[arg-type]
        self.order.insert(0, self.root)  # type: ignore[arg-type]

    def _insert(self, x: tuple[int, int]) -> tuple[int, int] | None:
        """Plain binary-search-tree insert by hash, then Java's rebalancing; returns the parent."""
        self.left[x] = self.right[x] = None
        if self.root is None:
            self.parent[x] = None
            self.red[x] = False
            self.root = x
            return None
        p = self.root
        while True:
            go_left = p[0] > x[0] or (p[0] == x[0] and self.tie is not None and self.tie(p[1]) > self.tie(x[1]))
            child = self.left[p] if go_left else self.right[p]
            if child is None:
                self.parent[x] = p
                if go_left:
                    self.left[p] = x
                else:
                    self.right[p] = x
                self._rebalance(x)
                return p
            p = child

    def add(self, x: tuple[int, int]) -> None:
        if self.tie is None and any(h == x[0] for h, _ in self.order):
            raise JavaOrderUndefined(_EQUAL_HASHES)
        parent = self._insert(x)
        self.order.insert(self.order.index(parent) + 1, x)  # type: ignore[arg-type]
        self._root_to_front()

    def _rotate(self, p: tuple[int, int], to_left: bool) -> None:
        near, far = (self.left, self.right) if to_left else (self.right, self.left)
        r = far[p]
        if r is None:
            return
        inner = near[r]
        far[p] = inner
        if inner is not None:
            self.parent[inner] = p
        pp = self.parent[p]
        self.parent[r] = pp
        if pp is None:
            self.root = r
            self.red[r] = False
        elif self.left[pp] == p:
            self.left[pp] = r
        else:
            self.right[pp] = r
        near[r] = p
        self.parent[p] = r

    def _rebalance(self, x: tuple[int, int]) -> None:
        self.red[x] = True
        while True:
            xp = self.parent[x]
            if xp is None:
                self.red[x] = False
                self.root = x
                return
            xpp = self.parent[xp]
            if not self.red[xp] or xpp is None:
                return
            xp_is_left = self.left[xpp] == xp
            uncle = self.right[xpp] if xp_is_left else self.left[xpp]
            if uncle is not None and self.red[uncle]:
                self.red[uncle] = self.red[xp] = False
                self.red[xpp] = True
                x = xpp
                continue
            inner = self.right[xp] if xp_is_left else self.left[xp]
            if x == inner:
                x = xp
                self._rotate(x, to_left=xp_is_left)
                xp = self.parent[x]
                xpp = None if xp is None else self.parent[xp]
            if xp is not None:
                self.red[xp] = False
                if xpp is not None:
                    self.red[xpp] = True
                    self._rotate(xpp, to_left=not xp_is_left)


def hashmap_positions(hash_codes: Sequence[int], initial_capacity: int | None = None, tie=None, *,
                      compute_if_absent: bool = False, looked_up_after: bool = False) -> list[int]:
    """Positions of distinct keys, put in this order into a new ``java.util.HashMap``, in the
    order the map iterates them. ``hash_codes`` are the keys' ``hashCode()`` values.

    ``compute_if_absent``: the keys went in by ``computeIfAbsent``, which differs from ``put``
    three ways: a new key goes to the head of its bucket, the table grows before an insertion
    (when it already holds more than 3/4 of its capacity) rather than after, and a bucket of 8
    keys, not 9, grows a small table or becomes a tree. It grows the table even when the key is
    present, which matters only after the last insertion: ``looked_up_after`` says such a call came.

    Buckets are visited in index order (``spread(hash) & (capacity - 1)``); a bucket lists
    its keys in insertion order. The table starts at 16 buckets (or ``table_size_for(
    initial_capacity)``) and doubles when it holds more than 3/4 of its capacity, or when one
    bucket reaches 9 keys on a table below 64 buckets; from 64 buckets on such a bucket
    becomes a tree bin instead (``_TreeBin``).
    Unlike :class:`JavaHashOrder` this models tree bins, for maps filled by insertions only.
    ``tie``: for keys Java compares with ``compareTo`` (``TaskId``, ``String``), position -> a
    key that orders them so; equal hashes in a tree bin are refused without it.
    """
    capacity = 16 if initial_capacity is None else table_size_for(initial_capacity)
    threshold = capacity * 3 // 4
    bins: dict[int, list[tuple[int, int]] | _TreeBin] = {}

    def resize() -> None:
        nonlocal capacity, threshold, bins
        capacity *= 2
        threshold = capacity * 3 // 4
        old, bins = bins, {}
        for index in sorted(old):
            content = old[index]
            items = content.order if isinstance(content, _TreeBin) else content
            halves: dict[int, list[tuple[int, int]]] = {}
            for item in items:
                halves.setdefault(item[0] & (capacity - 1), []).append(item)
            for new_index, part in halves.items():
                if isinstance(content, _TreeBin) and len(part) > 6:
                    # stays a tree: rebuilt only if the bin really split, else kept as it was
                    bins[new_index] = _TreeBin(part, tie) if len(halves) > 1 else content
                else:
                    bins[new_index] = part

    most_in_list = 7 if compute_if_absent else 8
    for position, hash_code in enumerate(hash_codes):
        if compute_if_absent and position > threshold:
            resize()
        item = (_signed_spread(hash_code), position)
        index = item[0] & (capacity - 1)
        content = bins.get(index)
        if content is None:
            bins[index] = [item]
        elif isinstance(content, _TreeBin):
            content.add(item)
        else:
            if compute_if_absent:
                content.insert(0, item)
            else:
                content.append(item)
            if len(content) > most_in_list:
                if capacity < 64:
                    resize()
                else:
                    bins[index] = _TreeBin(content, tie)
        if not compute_if_absent and position + 1 > threshold:
            resize()
    if compute_if_absent and looked_up_after and len(hash_codes) > threshold:
        resize()
    order: list[int] = []
    for index in sorted(bins):
        content = bins[index]
        order.extend(position for _, position in (content.order if isinstance(content, _TreeBin) else content))
    return order


