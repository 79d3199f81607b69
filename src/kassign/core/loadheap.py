"""numba kernels of :class:`kassign.core.javaqueue.LoadPriorityQueue`: ``java.util.PriorityQueue``'s
array steps over client numbers ordered by their load, and Kafka Streams' ``ConstrainedPrioritySet``
poll (polling until a client passes, then putting the passed-over ones back) in one call.

The rule, as in Java: ``heap[:size]`` is the queue's array; client ``a`` comes before ``b`` when
``counts[a] / capacity[a]`` is smaller, ties by the smaller number (clients are numbered in UUID
order). Loads are read from ``counts`` at every comparison, so a client whose count changed while it
sat in the queue stays where it is until a sift passes it, exactly as in Java: the kernels make the
very moves ``siftUp``, ``siftDown`` and ``removeAt`` make (JDK 8 to 21), never more.

The passed-over clients go back in the iteration order of the ``HashSet`` they were collected in
(default capacity, one ``add`` each): by bucket of the table's final size, insertion order within a
bucket. Where a bucket might have become a tree bin (9 keys in one bucket of 64 or more) the kernel
leaves them out and says so, and the caller orders them with the general model
(:func:`kassign.core.javasets.hash_set_order`).

Example: counts ``[2, 0, 1]``, capacities ``[1, 1, 1]``, clients 0, 1, 2 offered give the array
``[1, 0, 2]``; polling for a client in ``{0}`` pops 1 (passed over), then 2 (passed over), then 0; 1 and
2 go back: ``[1, 2]``.

Data layout: ``heap`` int64 (room for every client), ``counts`` and ``capacity`` int64, one per client;
``spreads``: each client's ``hashCode ^ (hashCode >>> 16)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kassign.core.javaorder import _bucket_order, insert_only_capacity

_TREEIFY_KEYS = 9
_MIN_TREEIFY_CAPACITY = 64


@njit(cache=True, inline="always")
def _before(counts, capacity, a, b):
    """Whether client ``a`` sorts strictly before ``b`` (Java's comparator below zero)."""
    wa = counts[a] / capacity[a]
    wb = counts[b] / capacity[b]
    return wa < wb or (wa == wb and a < b)


@njit(cache=True)
def sift_up(heap, counts, capacity, k, x):
    while k > 0:
        parent = (k - 1) >> 1
        e = heap[parent]
        if not _before(counts, capacity, x, e):
            break
        heap[k] = e
        k = parent
    heap[k] = x


@njit(cache=True)
def sift_down(heap, size, counts, capacity, k, x):
    half = size >> 1
    while k < half:
        child = 2 * k + 1
        c = heap[child]
        right = child + 1
        if right < size and _before(counts, capacity, heap[right], c):
            child = right
            c = heap[right]
        if not _before(counts, capacity, c, x):
            break
        heap[k] = c
        k = child
    heap[k] = x


@njit(cache=True)
def offer(heap, size, counts, capacity, x):
    """``offer(x)``; gives the new size."""
    sift_up(heap, counts, capacity, size, x)
    return size + 1


@njit(cache=True)
def poll(heap, size, counts, capacity):
    """``poll()``: (head, new size); head -1 when empty."""
    if size == 0:
        return -1, 0
    head = heap[0]
    size -= 1
    if size > 0:
        sift_down(heap, size, counts, capacity, 0, heap[size])
    return head, size


@njit(cache=True)
def remove_at(heap, size, counts, capacity, i):
    """``removeAt(i)``; gives the new size."""
    size -= 1
    if i == size:
        return size
    moved = heap[size]
    sift_down(heap, size, counts, capacity, i, moved)
    if heap[i] == moved:
        sift_up(heap, counts, capacity, i, moved)
    return size


@njit(cache=True)
def index_of(heap, size, x):
    for i in range(size):
        if heap[i] == x:
            return i
    return -1


@njit(cache=True)
def requeue(heap, size, counts, capacity, x):
    """``ConstrainedPrioritySet.offer(x)``: where ``x`` is queued already it is removed first."""
    i = index_of(heap, size, x)
    if i >= 0:
        size = remove_at(heap, size, counts, capacity, i)
    return offer(heap, size, counts, capacity, x)


@njit(cache=True)
def reoffer(heap, size, counts, capacity, clients):
    """:func:`requeue` of each client in turn."""
    for x in clients:
        size = requeue(heap, size, counts, capacity, x)
    return size


@njit(cache=True)
def deal(heap, size, counts, capacity, n):
    """``n`` times: poll the head, count one more for it, offer it again. Gives the heads in turn
    (``counts`` changes; the queue must not run empty) and the new size."""
    heads = np.empty(n, dtype=np.int64)
    for j in range(n):
        head, size = poll(heap, size, counts, capacity)
        heads[j] = head
        counts[head] += 1
        size = offer(heap, size, counts, capacity, head)
    return heads, size


@njit(cache=True)
def _may_have_tree_bins(spreads, final):
    """Whether 9 of the keys present at some table size from 64 buckets up to ``final`` share a bucket
    (a table of ``c`` buckets holds at most its first ``3c/4 + 1`` keys)."""
    table = _MIN_TREEIFY_CAPACITY
    while table <= final:
        filled = np.zeros(table, dtype=np.int64)
        for i in range(min(len(spreads), table * 3 // 4 + 1)):
            b = spreads[i] & (table - 1)
            filled[b] += 1
            if filled[b] >= _TREEIFY_KEYS:
                return True
        table *= 2
    return False


@njit(cache=True)
def hash_set_positions(spreads):
    """Positions of keys added one by one to a default ``HashSet``, in its iteration order; an empty
    array where a tree bin may have formed (only the general model orders those)."""
    final = insert_only_capacity(spreads, 16)
    if _may_have_tree_bins(spreads, final):
        return np.empty(0, dtype=np.int64)
    return _bucket_order(spreads & (final - 1), final)


@njit(cache=True)
def poll_constrained(heap, size, counts, capacity, accept, spreads, passed):
    """``ConstrainedPrioritySet.poll``: poll until ``accept[head]``, then offer the heads passed over
    back in ``HashSet`` order. Gives (the accepted client or -1, new size, how many were passed over,
    whether they are back in the queue). Where they are not (a possible tree bin), ``passed[:count]``
    holds them in polling order for the caller to put back."""
    found = -1
    count = 0
    while size > 0:
        head = heap[0]
        size -= 1
        if size > 0:
            sift_down(heap, size, counts, capacity, 0, heap[size])
        if accept[head]:
            found = head
            break
        passed[count] = head
        count += 1
    if count == 0:
        return found, size, 0, True
    mine = passed[:count]
    order = hash_set_positions(spreads[mine])
    if len(order) == 0:
        return found, size, count, False
    for i in order:
        size = offer(heap, size, counts, capacity, mine[i])
    return found, size, count, True
