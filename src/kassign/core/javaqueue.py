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

Example: keys 5, 3, 4 offered in that order give the array ``[3, 5, 4]``; iterating gives
3, 5, 4, while polling gives 3, 4, 5.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any


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
