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


class LoadPriorityQueue(JavaPriorityQueue):
    """:class:`JavaPriorityQueue` of client indexes ordered by ``(counts[c] / capacity[c], c)``, the
    weights read afresh from the two lists at every comparison, as Java's comparator reads them.

    The same steps as the general queue, with the comparison written out: the assignors' hot loop
    spends most of its time here, and a key function building a tuple per comparison doubles it."""

    __slots__ = ("_counts", "_capacity")

    def __init__(self, counts: list[int], capacity: list[int]) -> None:
        self._counts = counts
        self._capacity = capacity
        super().__init__(None)

    def _sift_up(self, k: int, x: Any) -> None:
        heap, counts, capacity = self._heap, self._counts, self._capacity
        wx = counts[x] / capacity[x]
        while k > 0:
            parent = (k - 1) >> 1
            e = heap[parent]
            we = counts[e] / capacity[e]
            if wx > we or (wx == we and x >= e):
                break
            heap[k] = e
            k = parent
        heap[k] = x

    def _sift_down(self, k: int, x: Any) -> None:
        heap, counts, capacity = self._heap, self._counts, self._capacity
        n = len(heap)
        half = n >> 1
        wx = counts[x] / capacity[x]
        while k < half:
            child = 2 * k + 1
            c = heap[child]
            wc = counts[c] / capacity[c]
            right = child + 1
            if right < n:
                r = heap[right]
                wr = counts[r] / capacity[r]
                if wc > wr or (wc == wr and c > r):
                    child, c, wc = right, r, wr
            if wx < wc or (wx == wc and x <= c):
                break
            heap[k] = c
            k = child
        heap[k] = x
