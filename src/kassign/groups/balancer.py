"""The least and the most loaded of a topic's subscribers, handed out in turn (numba).

Kafka's uniform assignor walks a topic's subscribers from the least loaded up when it hands
out partitions, and from the most loaded down when it balances them; kassign's sticky
follow-up fills unowned partitions the same way. One implementation serves both.

Example: loads a=2, b=0, c=0 (member numbers in that order). Handing out five partitions
gives b, c (level 0), b, c (level 1), then at level 2 the range is b, c, a, walked in the
order fixed at reset: b, c, b, c, b.

Data layout: ``order`` holds the subscribers sorted by (load, member number) at reset,
``state`` a few int64 cursors; loads are read live from the caller's array.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# The balancer hands out the least and the most loaded of one topic's subscribers in turn.
# Members are sorted by (load, member number) into ``order``. The least loaded range grows
# from the left: each member in it gets one partition per level, then the level rises and
# members at the new level join. The most loaded range grows from the right in the same
# way. The order is fixed at reset; loads are read live as partitions move. Members with
# nothing of the topic to give are swapped out of the most loaded range. Its state lives in
# one small int array so the compiled loops can share it.
LOW_END, LOW_LEVEL, LOW_NEXT, HIGH_START, HIGH_END, HIGH_LEVEL, HIGH_NEXT = 0, 1, 2, 3, 4, 5, 6


@njit(cache=True)
def reset_balancer(state, order, sizes, members):
    n = len(members)
    keys = np.empty(n, dtype=np.int64)
    for i in range(n):
        keys[i] = sizes[members[i]] * (len(sizes) + 1) + members[i]
    ranked = np.argsort(keys, kind="mergesort")
    for i in range(n):
        order[i] = members[ranked[i]]
    state[LOW_END] = 0
    state[LOW_LEVEL] = sizes[order[0]] - 1
    state[LOW_NEXT] = 0
    state[HIGH_START] = n
    state[HIGH_END] = n
    state[HIGH_LEVEL] = sizes[order[n - 1]] + 1
    state[HIGH_NEXT] = n - 1
    return sizes[order[n - 1]] - sizes[order[0]]


@njit(cache=True)
def next_least_loaded(state, order, sizes, n):
    if state[LOW_NEXT] >= state[LOW_END]:
        state[LOW_LEVEL] += 1
        while state[LOW_END] < n and sizes[order[state[LOW_END]]] == state[LOW_LEVEL]:
            state[LOW_END] += 1
        state[LOW_NEXT] = 0
    member = order[state[LOW_NEXT]]
    state[LOW_NEXT] += 1
    return member


@njit(cache=True)
def next_most_loaded(state, order, sizes):
    if state[HIGH_NEXT] < state[HIGH_START]:
        if state[HIGH_END] <= state[HIGH_START] and state[HIGH_START] > 0:
            # every member of the range was excluded: restart from the next member's level
            state[HIGH_LEVEL] = sizes[order[state[HIGH_START] - 1]]
        else:
            state[HIGH_LEVEL] -= 1
        while state[HIGH_START] > 0 and sizes[order[state[HIGH_START] - 1]] == state[HIGH_LEVEL]:
            state[HIGH_START] -= 1
        state[HIGH_NEXT] = state[HIGH_END] - 1
    if state[HIGH_NEXT] < 0:
        return -1
    member = order[state[HIGH_NEXT]]
    state[HIGH_NEXT] -= 1
    return member


@njit(cache=True)
def exclude_last_most_loaded(state, order):
    """Swap the member just returned by ``_next_most_loaded`` out of the most loaded range."""
    i, last = state[HIGH_NEXT] + 1, state[HIGH_END] - 1
    order[i], order[last] = order[last], order[i]
    state[HIGH_END] -= 1
