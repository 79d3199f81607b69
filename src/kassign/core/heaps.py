"""An indexed binary min-heap on arrays (numba), for the hot loops that keep items by a changing key.

The rule: ``heap[:size]`` holds item numbers with the least key at ``heap[0]``; ``where[item]`` is the
item's slot, so a caller can lower an item's key and move it up in place (Dijkstra's decrease-key, or
a member's next heartbeat). ``tie`` breaks equal keys (the smaller first); ``None`` compares keys alone,
and numba then compiles the comparison without it.

Example: keys ``[5, 3, 3]`` with ties ``[0, 9, 1]`` pushed as items 0, 1, 2 pop as 2 (key 3, tie 1),
then 1 (key 3, tie 9), then 0.

Used by the reassignment plan's shortest paths and the consumer-protocol simulator's heartbeat clock.
Data layout: the heap, positions, keys and ties are flat numpy arrays owned by the caller.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def before(key, tie, a, b):
    """Whether item ``a`` comes off the heap before item ``b``."""
    if tie is None:
        return key[a] < key[b]
    return key[a] < key[b] or (key[a] == key[b] and tie[a] < tie[b])


@njit(cache=True)
def sift_up(heap, where, key, tie, i):
    """Move the item in slot ``i`` up to where its key belongs."""
    item = heap[i]
    while i > 0:
        parent = (i - 1) >> 1
        if not before(key, tie, item, heap[parent]):
            break
        heap[i] = heap[parent]
        where[heap[i]] = i
        i = parent
    heap[i] = item
    where[item] = i


@njit(cache=True)
def sift_down(heap, where, key, tie, i, size):
    """Move the item in slot ``i`` down to where its key belongs, within ``heap[:size]``."""
    item = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and before(key, tie, heap[child + 1], heap[child]):
            child += 1
        if not before(key, tie, heap[child], item):
            break
        heap[i] = heap[child]
        where[heap[i]] = i
        i = child
    heap[i] = item
    where[item] = i


@njit(cache=True)
def pop(heap, where, key, tie, size):
    """The least item and the heap's new size; the last item takes the top slot and sinks."""
    top = heap[0]
    size -= 1
    if size > 0:
        heap[0] = heap[size]
        sift_down(heap, where, key, tie, 0, size)
    return top, size
