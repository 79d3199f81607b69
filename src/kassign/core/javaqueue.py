"""``java.util.PriorityQueue``, step for step, where Kafka Streams' answer depends on its insides.

A priority queue is an array kept as a binary heap. Two places in Kafka Streams' task
assignment look past its "least element first" contract:

* The high-availability assignor keeps clients in a queue ordered by their *current* load and
  changes the load of a client while it sits in the queue (it then re-offers it: remove and
  add). Until then the heap is out of order, and which client ``poll`` returns depends on where
  every element sits in the array.
* Spreading a client's tasks over its stream threads ends by walking the queue's array with
  its iterator, which is heap order, not sorted order.

So this class keeps Java's array and moves elements exactly as ``siftUp``, ``siftDown``,
``heapify`` and ``removeAt`` do (JDK 8 to 21 agree). The order comes from ``key``, called
afresh on every comparison, so a changed weight shows the way it does in Java. Elements are
compared with ``==``; the queue never holds one element twice where kassign uses it.
:class:`LoadPriorityQueue`, the high-availability assignor's queue of clients by load, makes
the same steps compiled (:mod:`kassign.core.loadheap`); the tests hold it to this class.

Example: keys 5, 3, 4 offered in that order give the array ``[3, 5, 4]``; iterating gives
3, 5, 4, while polling gives 3, 4, 5.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

import numpy as np

from kassign.core import loadheap


class JavaPriorityQueue:
    """A min-heap ordered by ``key(element)`` (re-evaluated on each comparison)."""

    __slots__ = ("_heap", "_key")

    def __init__(self, key: Callable[[Any], Any], elements: Iterable[Hashable] = ()) -> None:
        self._key = key
        # PriorityQueue(Collection): the collection's iteration order, then heapify.
        self._heap: list = list(elements)
        for i in range((len(self._heap) >> 1) - 1, -1, -1):
            self._sift_down(i, self._heap[i])

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def __iter__(self) -> Iterator:
        """The array, front to back: Java's iteration order."""
        return iter(list(self._heap))

    def __contains__(self, element: Hashable) -> bool:
        return element in self._heap

    def offer(self, element: Hashable) -> None:
        self._heap.append(element)
        self._sift_up(len(self._heap) - 1, element)

    def poll(self) -> Any:
        """The head, removed; None when empty."""
        heap = self._heap
        if not heap:
            return None
        result = heap[0]
        last = heap.pop()
        if heap:
            self._sift_down(0, last)
        return result

    def poll_first(self, accept: Callable[[Any], bool]) -> tuple[Any, list]:
        """``poll`` until ``accept(head)`` holds: that head (None when the queue runs out) and the
        heads polled before it, in order (they are out of the queue)."""
        heap, passed = self._heap, []
        while heap:
            head = heap[0]
            last = heap.pop()
            if heap:
                self._sift_down(0, last)
            if accept(head):
                return head, passed
            passed.append(head)
        return None, passed

    def remove(self, element: Hashable) -> bool:
        """``remove(Object)``: the first array slot equal to ``element`` goes, as ``removeAt`` does it."""
        try:
            i = self._heap.index(element)
        except ValueError:
            return False
        self._remove_at(i)
        return True

    def _remove_at(self, i: int) -> None:
        heap = self._heap
        moved = heap.pop()
        if i == len(heap):
            return
        self._sift_down(i, moved)
        if heap[i] == moved:
            self._sift_up(i, moved)

    def _sift_up(self, k: int, x: Any) -> None:
        heap, key = self._heap, self._key
        kx = key(x)
        while k > 0:
            parent = (k - 1) >> 1
            e = heap[parent]
            if kx >= key(e):
                break
            heap[k] = e
            k = parent
        heap[k] = x

    def _sift_down(self, k: int, x: Any) -> None:
        heap, key = self._heap, self._key
        n = len(heap)
        half = n >> 1
        kx = key(x)
        while k < half:
            child = 2 * k + 1
            c = heap[child]
            kc = key(c)
            right = child + 1
            if right < n:
                kr = key(heap[right])
                if kc > kr:
                    child = right
                    c = heap[right]
                    kc = kr
            if kx <= kc:
                break
            heap[k] = c
            k = child
        heap[k] = x


class LoadPriorityQueue:
    """:class:`JavaPriorityQueue` of client numbers ordered by ``(counts[c] / capacity[c], c)``, the
    weights read afresh from the two arrays at every comparison, as Java's comparator reads them.

    The same steps as the general queue, compiled (:mod:`kassign.core.loadheap`): the assignors' hot
    loop spends most of its time here. ``counts`` is the caller's int64 array, changed in place by it;
    a client is in the queue at most once."""

    __slots__ = ("_heap", "_size", "_counts", "_capacity", "_passed")

    def __init__(self, counts: np.ndarray, capacity: np.ndarray) -> None:
        self._counts = counts
        self._capacity = np.asarray(capacity, dtype=np.int64)
        self._heap = np.empty(len(counts), dtype=np.int64)
        self._passed = np.empty(len(counts), dtype=np.int64)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def __iter__(self) -> Iterator[int]:
        """The array, front to back: Java's iteration order."""
        return iter(self._heap[:self._size].tolist())

    def __contains__(self, client: int) -> bool:
        return loadheap.index_of(self._heap, self._size, client) >= 0

    def offer(self, client: int) -> None:
        if self._size == len(self._heap):
            raise ValueError("a load queue holds each client at most once")  # the kernel does not check bounds
        self._size = loadheap.offer(self._heap, self._size, self._counts, self._capacity, client)

    def requeue(self, client: int) -> None:
        """``ConstrainedPrioritySet.offer``: a client already queued is removed, then offered."""
        self._size = loadheap.requeue(self._heap, self._size, self._counts, self._capacity, client)

    def deal(self, n: int) -> list[int]:
        """Poll the head ``n`` times, each time counting one more for it (in a copy of the counts, the
        caller's stay as they are) and offering it again; gives the heads polled. The queue must hold
        a client."""
        counts, self._counts = self._counts, self._counts.copy()
        try:
            heads, self._size = loadheap.deal(self._heap, self._size, self._counts, self._capacity, n)
        finally:
            self._counts = counts
        return heads.tolist()

    def offer_all(self, clients: np.ndarray) -> None:
        """``ConstrainedPrioritySet.offer`` of each client in turn: one already queued is removed, then
        offered (int64 array)."""
        self._size = loadheap.reoffer(self._heap, self._size, self._counts, self._capacity, clients)

    def poll(self) -> int | None:
        """The head, removed; None when empty."""
        head, self._size = loadheap.poll(self._heap, self._size, self._counts, self._capacity)
        return None if head < 0 else int(head)

    def remove(self, client: int) -> bool:
        i = loadheap.index_of(self._heap, self._size, client)
        if i < 0:
            return False
        self._size = loadheap.remove_at(self._heap, self._size, self._counts, self._capacity, i)
        return True

    def poll_first(self, accept: Callable[[int], bool]) -> tuple[int | None, list[int]]:
        """``poll`` until ``accept(head)`` holds: that head (None when the queue runs out) and the
        heads polled before it, in order (they are out of the queue)."""
        passed = []
        while self._size:
            head = self.poll()
            if accept(head):
                return head, passed
            passed.append(head)
        return None, passed

    def poll_constrained(self, accept: np.ndarray, spreads: np.ndarray) -> tuple[int | None, list[int]]:
        """Kafka Streams' ``ConstrainedPrioritySet.poll``: poll until ``accept[head]`` (a bool per
        client), then offer the heads passed over back in the order of a default ``HashSet`` of them
        (``spreads``: each client's spread hash code). Gives the accepted head (None when the queue
        ran out) and the passed-over heads still to put back, in polling order: none, unless a tree
        bin may have formed in that set (the caller orders those with the general model)."""
        found, self._size, count, back = loadheap.poll_constrained(self._heap, self._size, self._counts,
                                                                   self._capacity, accept, spreads, self._passed)
        return (None if found < 0 else int(found)), ([] if back else self._passed[:count].tolist())
