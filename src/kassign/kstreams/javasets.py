"""Iteration order of the small ``java.util.HashSet`` s the assignor walks, fast for the common case.

Kafka Streams' assignor walks hash sets of ``TaskId`` s and of process ids (``ProcessId`` wraps a
UUID) filled one ``add`` at a time. Java then visits buckets in index order, and a bucket in
insertion order, unless the bucket became a tree bin (9 or more keys in one bucket of a table
of 64 or more). No bucket of a table of 64 or more buckets can reach 9 keys when no 9 of the
keys share their low 6 bits of the spread hash (larger tables split those buckets further), so
that test sends the common case to :func:`kassign.javaorder.hash_iteration_order` and the rest
to :func:`kassign.javaorder.hashmap_positions`, which models tree bins. Both key types are
``Comparable`` to themselves, so Java orders equal hashes inside a tree bin with ``compareTo``:
``items`` must compare the same way (task indexes in ``TaskId`` order, client indexes in UUID
order).

Example: hash codes 17, 1, 33 (spread: the same, all below 2^16) in a 16-bucket table fall in
buckets 1, 1, 1, so the set iterates them as inserted; 20, 3 iterate as 3, 20.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kassign.javaorder import hash_iteration_order, hashmap_positions

_SMALL = 8  # up to 8 keys: one 16-bucket table, no bucket can reach 9


def hash_set_order(hashes: Sequence[int], items: Sequence) -> list:
    """``items`` (distinct, added in this order, with these ``hashCode`` values as unsigned 32
    bits) in the order a ``java.util.HashSet`` iterates them."""
    n = len(items)
    if n <= 1:
        return list(items)
    if n <= _SMALL:
        buckets = [(h ^ (h >> 16)) & 15 for h in hashes]
        return [items[i] for i in sorted(range(n), key=buckets.__getitem__)]
    spread = np.asarray(hashes, dtype=np.int64)
    spread ^= spread >> 16
    if np.bincount(spread & 63, minlength=64).max() <= _SMALL:
        positions = hash_iteration_order(np.asarray(hashes, dtype=np.int64)).tolist()
    else:
        positions = hashmap_positions(list(hashes), tie=items.__getitem__)
    return [items[i] for i in positions]
