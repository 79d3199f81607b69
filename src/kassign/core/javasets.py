"""Iteration order of the small ``java.util.HashSet`` s the assignor walks, fast for the common case.

Kafka Streams' assignor walks hash sets of ``TaskId`` s and of process ids (``ProcessId`` wraps a
UUID) filled one ``add`` at a time. Java then visits buckets in index order, and a bucket in
insertion order, unless the bucket became a tree bin: 9 keys in one bucket while the table has
64 buckets or more (below 64 the table doubles instead). Whether that ever happened follows
from the keys present at each table size: at ``c`` buckets a table holds at most ``3c/4 + 1``
keys, the first ones inserted, so if no 9 of those share a bucket at any size from 64 up,
there is no tree bin and :func:`kassign.core.javaorder.hash_iteration_order` gives the order;
otherwise :func:`kassign.core.javaorder.hashmap_positions`, which models tree bins, does. Both key
types are ``Comparable`` to themselves, so Java orders equal hashes inside a tree bin with
``compareTo``: ``items`` must compare the same way (task indexes in ``TaskId`` order, client
indexes in UUID order).

Example: hash codes 17, 1, 33 (spread: the same, all below 2^16) in a 16-bucket table fall in
buckets 1, 1, 1, so the set iterates them as inserted; 20, 3 iterate as 3, 20.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kassign.core.javaorder import hash_iteration_order, hashmap_positions, insert_only_capacity, table_size_for

_SMALL = 8  # up to 8 keys: one 16-bucket table, no bucket can reach 9
_MEDIUM = 64  # up to this many keys plain Python beats numpy's call overheads


def hash_set_order(hashes: Sequence[int], items: Sequence, capacity: int | None = None) -> list:
    """``items`` (distinct, added in this order, with these ``hashCode`` values as unsigned 32
    bits) in the order a ``java.util.HashSet`` iterates them. ``capacity``: the initial capacity
    the set was made with (``new HashSet<>(n)``; the copy constructor asks for
    :func:`kassign.core.javaorder.copy_constructor_capacity`), else the default 16."""
    n = len(items)
    table = 16 if capacity is None else int(table_size_for(capacity))
    if n <= 1:
        return list(items)
    if n <= _SMALL and table >= 16:
        mask = table - 1
        buckets = [(h ^ (h >> 16)) & mask for h in hashes]
        return [items[i] for i in sorted(range(n), key=buckets.__getitem__)]
    if n <= _MEDIUM and table >= 16:
        order = _load_factor_order(hashes, items, table)
        if order is not None:
            return order
    spread = np.asarray(hashes, dtype=np.int64)
    spread ^= spread >> 16
    if may_have_tree_bins(spread, table):
        positions = hashmap_positions(list(hashes), capacity, tie=items.__getitem__)
    else:
        positions = hash_iteration_order(np.asarray(hashes, dtype=np.int64), capacity).tolist()
    return [items[i] for i in positions]


def _load_factor_order(hashes: Sequence[int], items: Sequence, table: int) -> list | None:
    """The iteration order where no bucket of the first table (``table`` buckets) gets 9 keys: then
    none does in the larger tables either (they split buckets), so the table only grows by its load
    factor and the order is by bucket of the final table, then insertion. None where a bucket is
    that full (the general path decides)."""
    spread = [h ^ (h >> 16) for h in hashes]
    mask = table - 1
    filled = [0] * table
    for h in spread:
        filled[h & mask] += 1
    if max(filled) >= 9:
        return None
    final = table
    while len(spread) > final * 3 // 4:
        final *= 2
    mask = final - 1
    buckets = [h & mask for h in spread]
    return [items[i] for i in sorted(range(len(spread)), key=buckets.__getitem__)]


def may_have_tree_bins(spread: np.ndarray, table: int = 16) -> bool:
    """Whether a HashMap of ``table`` buckets given keys with these spread hashes, in this order,
    may have made a tree bin: 9 of the keys present at some table size of 64 buckets or more
    sharing a bucket."""
    final = insert_only_capacity(spread, table)
    capacity = max(64, table)
    while capacity <= final:
        present = spread[:capacity * 3 // 4 + 1]
        if np.bincount(present & (capacity - 1), minlength=capacity).max() >= 9:
            return True
        capacity *= 2
    return False
