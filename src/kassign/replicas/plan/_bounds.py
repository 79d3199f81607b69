"""The balance window for replica counts, from a network of racks (exact, and tiny).

For balance only the number of replicas each rack gets matters: inside a rack any total
can be split evenly over its brokers (an even column vector is majorised by every other
one, so Gale-Ryser always admits it), and partitions with the same replication factor are
interchangeable (the per-partition constraints form a laminar, totally unimodular system, so
a class total splits back into valid partitions: integer decomposition). So the whole cluster
reduces to::

    source -> replication-factor class k (exactly N_k * rf_k)
           -> rack g (between N_k * low_k and N_k * min(cap_k, brokers in g))
           -> sink (between l * |g| and h * |g|)

where ``l`` and ``h`` bound every broker. The smallest feasible ``h`` is the smallest possible
maximum ``M*``, the largest feasible ``l`` the largest possible minimum ``m*``; both hold at
once (a decreasingly-minimal point of an M-convex set minimises the maximum and maximises the
minimum together), so ``[m*, M*]`` is the window of every plan with the smallest max-min.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from kassign.replicas.plan._model import PlanError


def caps_for(rf: np.ndarray, num_groups: int, rack_aware: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per partition: most replicas one rack may hold (ceil(rf / racks)) and fewest it must
    (1 when rf >= racks, so that min(rf, racks) racks are used)."""
    if not rack_aware or num_groups == 1:
        return rf.copy(), np.zeros_like(rf)
    cap = -(-rf // num_groups)
    low = (rf >= num_groups).astype(np.int64)
    return cap, low


class _TinyFlow:
    """Edmonds-Karp on a handful of nodes; enough for racks x replication-factor classes."""

    def __init__(self, nodes: int) -> None:
        self.graph: list[list[list[int]]] = [[] for _ in range(nodes)]  # [head, cap, rev index]

    def add(self, u: int, v: int, cap: int) -> None:
        self.graph[u].append([v, cap, len(self.graph[v])])
        self.graph[v].append([u, 0, len(self.graph[u]) - 1])

    def max_flow(self, s: int, t: int) -> int:
        flow = 0
        while True:
            parent: list[tuple[int, int] | None] = [None] * len(self.graph)
            parent[s] = (s, -1)
            queue = deque([s])
            while queue and parent[t] is None:
                u = queue.popleft()
                for i, (v, cap, _) in enumerate(self.graph[u]):
                    if cap > 0 and parent[v] is None:
                        parent[v] = (u, i)
                        queue.append(v)
            if parent[t] is None:
                return flow
            push = None
            v = t
            while v != s:
                u, i = parent[v]
                push = self.graph[u][i][1] if push is None else min(push, self.graph[u][i][1])
                v = u
            v = t
            while v != s:
                u, i = parent[v]
                arc = self.graph[u][i]
                arc[1] -= push
                self.graph[v][arc[2]][1] += push
                v = u
            flow += push


def _feasible(classes: list[tuple[int, int, int, int]], group_sizes: list[int], lo: int, hi: int) -> bool:
    """Is there a rack-level flow with every broker's share inside [lo, hi]?

    ``classes``: (count, rf, cap, low) per replication-factor class. Lower bounds are moved
    into node balances (the textbook reduction) and checked with one max flow.
    """
    k, g = len(classes), len(group_sizes)
    source, sink = 0, 1 + k + g
    super_s, super_t = sink + 1, sink + 2
    flow = _TinyFlow(sink + 3)
    balance = [0] * (sink + 1)

    def arc(u: int, v: int, low: int, cap: int) -> None:
        flow.add(u, v, cap - low)
        balance[v] += low
        balance[u] -= low

    for i, (count, rf, cap, low) in enumerate(classes):
        arc(source, 1 + i, count * rf, count * rf)
        for j, size in enumerate(group_sizes):
            arc(1 + i, 1 + k + j, count * low, count * min(cap, size))
    for j, size in enumerate(group_sizes):
        arc(1 + k + j, sink, lo * size, hi * size)
    flow.add(sink, source, sum(c * r for c, r, _, _ in classes))
    need = 0
    for v, b in enumerate(balance):
        if b > 0:
            flow.add(super_s, v, b)
            need += b
        elif b < 0:
            flow.add(v, super_t, -b)
    return flow.max_flow(super_s, super_t) == need


def replica_window(rf: np.ndarray, group_sizes: list[int], rack_aware: bool) -> tuple[int, int]:
    """``(m*, M*)``: the largest possible minimum and smallest possible maximum replica count
    over the target brokers, under the rack rules; every partition's rf must fit the racks."""
    num_groups = len(group_sizes)
    values, counts = np.unique(rf, return_counts=True)
    classes = []
    for r, count in zip(values.tolist(), counts.tolist()):
        cap, low = (int(x[0]) for x in caps_for(np.array([r], np.int64), num_groups, rack_aware))
        room = sum(min(cap, size) for size in group_sizes)
        if room < r:
            raise PlanError(
                f"replication factor {r} cannot be spread over {num_groups} racks of "
                f"{', '.join(map(str, group_sizes))} broker(s) with at most {cap} replica(s) of a partition per rack "
                f"(to cover min(rf, racks) racks); add brokers to the smaller racks")
        classes.append((count, r, cap, low))
    total = int(rf.sum())
    n = sum(group_sizes)
    most = int(len(rf))  # a broker holds at most one replica of each partition
    lo_h, hi_h = -(-total // n), most
    while lo_h < hi_h:
        mid = (lo_h + hi_h) // 2
        if _feasible(classes, group_sizes, 0, mid):
            hi_h = mid
        else:
            lo_h = mid + 1
    lo_l, hi_l = 0, total // n
    while lo_l < hi_l:
        mid = (lo_l + hi_l + 1) // 2
        if _feasible(classes, group_sizes, mid, most):
            lo_l = mid
        else:
            hi_l = mid - 1
    if not _feasible(classes, group_sizes, lo_l, lo_h):
        raise AssertionError(f"balance window [{lo_l}, {lo_h}] infeasible; the linking property says it cannot be")
    return lo_l, lo_h
