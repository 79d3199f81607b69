"""kassign.core.heaps: items come off in key order (ties by the tie array, else any order), and a
lowered key moves its item up in place."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core import heaps


def _fill(keys, ties):
    n = len(keys)
    heap, where = np.zeros(n, np.int64), np.full(n, -1, np.int64)
    for item in range(n):
        heap[item] = item
        heaps.sift_up(heap, where, keys, ties, item)
    return heap, where


def _drain(heap, where, keys, ties, size):
    out = []
    while size:
        item, size = heaps.pop(heap, where, keys, ties, size)
        out.append(int(item))
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1000)), min_size=1, max_size=40, unique_by=lambda t: t[1]))
def test_items_come_off_in_key_then_tie_order(pairs) -> None:
    keys = np.array([k for k, _ in pairs], np.float64)
    ties = np.array([t for _, t in pairs], np.int64)
    heap, where = _fill(keys, ties)
    assert _drain(heap, where, keys, ties, len(pairs)) == sorted(range(len(pairs)), key=lambda i: pairs[i])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=40), st.data())
def test_keys_alone_and_a_lowered_key(values, data) -> None:
    keys = np.array(values, np.int64)
    heap, where = _fill(keys, None)
    item = data.draw(st.integers(0, len(values) - 1))
    keys[item] = -100  # lowered below every other key: it must come off first
    heaps.sift_up(heap, where, keys, None, where[item])
    order = _drain(heap, where, keys, None, len(values))
    assert order[0] == item
    assert [int(keys[i]) for i in order] == sorted(int(k) for k in keys)


def test_the_documented_example() -> None:
    keys, ties = np.array([5.0, 3.0, 3.0]), np.array([0, 9, 1])
    heap, where = _fill(keys, ties)
    assert _drain(heap, where, keys, ties, 3) == [2, 1, 0]
