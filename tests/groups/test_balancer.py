"""The least/most loaded walk shared by Kafka 4's uniform assignor and the sticky follow-up fill."""

from __future__ import annotations

import numpy as np

from kassign.groups.balancer import next_least_loaded, reset_balancer


def test_docstring_example() -> None:
    loads = np.array([2, 0, 0], dtype=np.int64)
    state, order = np.zeros(8, np.int64), np.empty(3, np.int64)
    reset_balancer(state, order, loads, np.arange(3, dtype=np.int64))
    taken = []
    for _ in range(5):
        member = next_least_loaded(state, order, loads, 3)
        taken.append("abc"[member])
        loads[member] += 1
    assert taken == ["b", "c", "b", "c", "b"]
