"""A min-cost flow solved for several objectives in strict priority order, exactly.

The optimal Streams task assignor (:mod:`kassign.groups.streams.classic.optimal`) states its
goal as a list of objectives, each one mattering only among the answers best for the ones
before it. Folding them into one cost with big multipliers overflows 64-bit integers as soon
as changelog offsets are large, so the stages are solved one after the other instead:

1. Solve the network for the stage's costs (successive shortest paths, Dijkstra on reduced
   costs, a blocking flow per distance like Dinic's), keeping the node potentials.
2. The potentials are an optimal dual for *every* optimal flow of the stage (complementary
   slackness): an arc with positive reduced cost carries its lower bound in all of them, one
   with negative reduced cost its upper bound, and one with reduced cost 0 anything between.
   So the next stage solves the same network with those arcs' bounds pinned, and its optimum
   is the best for its costs among the flows best for every earlier stage.

Example: tasks x and y each go to client A or B; A takes at most one. Stage 1 costs 1 for x at
B, stage 2 costs 5 for y at B and 1 for x at A. Stage 1's only optimum is x at A, y at B (cost
0); its potentials pin x -> B to 0, so stage 2 answers x at A, y at B (cost 6), though x at B,
y at A would cost 0 there: stage 1 comes first.

Networks are arcs ``tail -> head`` with ``lower <= flow <= upper`` and integer costs that are
never negative; nodes have integer supplies summing to 0 (a feasible flow must exist). Hot
path: numba on int64 CSR arrays; when the costs are so large that a potential might leave
int64, the same kernel runs as plain Python on Python integers (exact, slower).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kassign.core.errors import KassignError

_INT64_SAFE = 1 << 62


def _residual_csr(num_nodes: int, tails: np.ndarray, heads: np.ndarray, caps: np.ndarray, costs: np.ndarray,
                  dtype) -> tuple:
    """Forward arcs and their zero-capacity reverses, grouped by tail: ``start, head, cap, cost, rev, where``
    (``where[i]``: input arc ``i``'s place, so its flow is ``caps[i] - cap[where[i]]``)."""
    m = len(tails)
    all_tails = np.concatenate([tails, heads]).astype(np.int64)
    all_heads = np.concatenate([heads, tails]).astype(np.int64)
    order = np.argsort(all_tails, kind="stable")
    position = np.empty(2 * m, np.int64)
    position[order] = np.arange(2 * m)
    partner = np.concatenate([np.arange(m, 2 * m), np.arange(m)])
    start = np.zeros(num_nodes + 1, np.int64)
    np.cumsum(np.bincount(all_tails, minlength=num_nodes), out=start[1:])
    cap = np.concatenate([np.asarray(caps, dtype=dtype), np.zeros(m, dtype=dtype)])
    if dtype is object:
        neg = np.array([-c for c in costs], dtype=object)
    else:
        neg = -np.asarray(costs, dtype=dtype)
    cost = np.concatenate([np.asarray(costs, dtype=dtype), neg])
    return start, all_heads[order], cap[order], cost[order], position[partner][order], position[:m]


@njit(cache=True)
def _solve(n, s, t, start, head, cap, cost, rev, pi, inf, zero):
    """Successive shortest paths from ``s`` to ``t`` until ``t`` is cut off; ``cap`` becomes the residual
    capacities and ``pi`` the final potentials (every residual arc then has a reduced cost >= 0)."""
    dist = np.empty_like(pi)
    level = np.empty(n, np.int64)
    queue = np.empty(n, np.int64)
    it = np.empty(n, np.int64)
    path = np.empty(n, np.int64)
    m = len(head)
    keys = np.empty(m + n + 1, dtype=pi.dtype)
    vals = np.empty(m + n + 1, np.int64)
    while True:
        for v in range(n):
            dist[v] = inf
        dist[s] = zero
        # Dijkstra on a binary heap of (distance, node) with stale entries skipped; written out here
        # (no helper calls) so that the same function also runs as plain Python on Python integers
        keys[0] = zero
        vals[0] = s
        size = 1
        while size > 0:
            d, u = keys[0], vals[0]
            size -= 1
            keys[0], vals[0] = keys[size], vals[size]
            i = 0
            while True:
                child = 2 * i + 1
                if child >= size:
                    break
                if child + 1 < size and keys[child + 1] < keys[child]:
                    child += 1
                if keys[i] <= keys[child]:
                    break
                keys[child], keys[i] = keys[i], keys[child]
                vals[child], vals[i] = vals[i], vals[child]
                i = child
            if d > dist[u]:
                continue
            for a in range(start[u], start[u + 1]):
                if cap[a] > 0:
                    v = head[a]
                    nd = d + cost[a] + pi[u] - pi[v]
                    if nd < dist[v]:
                        dist[v] = nd
                        i = size
                        keys[i] = nd
                        vals[i] = v
                        size += 1
                        while i > 0:
                            parent = (i - 1) >> 1
                            if keys[parent] <= keys[i]:
                                break
                            keys[parent], keys[i] = keys[i], keys[parent]
                            vals[parent], vals[i] = vals[i], vals[parent]
                            i = parent
        if dist[t] >= inf:
            return
        far = dist[t]
        for v in range(n):
            pi[v] += dist[v] if dist[v] < far else far
        # a blocking flow along arcs of reduced cost 0, in BFS levels (zero-cost cycles cannot trap it)
        for v in range(n):
            level[v] = -1
        level[s] = 0
        qh, qt = 0, 1
        queue[0] = s
        while qh < qt:
            u = queue[qh]
            qh += 1
            for a in range(start[u], start[u + 1]):
                v = head[a]
                if cap[a] > 0 and level[v] < 0 and cost[a] + pi[u] - pi[v] == 0:
                    level[v] = level[u] + 1
                    queue[qt] = v
                    qt += 1
        if level[t] < 0:
            continue
        for v in range(n):
            it[v] = start[v]
        while True:
            u = s
            depth = 0
            found = False
            while True:
                if u == t:
                    found = True
                    break
                advanced = False
                while it[u] < start[u + 1]:
                    a = it[u]
                    v = head[a]
                    if cap[a] > 0 and level[v] == level[u] + 1 and cost[a] + pi[u] - pi[v] == 0:
                        path[depth] = a
                        depth += 1
                        u = v
                        advanced = True
                        break
                    it[u] += 1
                if not advanced:
                    if u == s:
                        break
                    level[u] = -1  # a dead end for the rest of this phase
                    depth -= 1
                    u = head[rev[path[depth]]]
                    it[u] += 1
            if not found:
                break
            push = cap[path[0]]
            for i in range(1, depth):
                if cap[path[i]] < push:
                    push = cap[path[i]]
            for i in range(depth):
                a = path[i]
                cap[a] -= push
                cap[rev[a]] += push


def lexicographic_flow(num_nodes: int, tails: np.ndarray, heads: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                       supply: np.ndarray, stages: list[np.ndarray]) -> np.ndarray:
    """The flow (one integer per arc) that minimises ``stages[0] . flow``, then among those
    ``stages[1] . flow``, and so on. Costs must not be negative."""
    tails = np.asarray(tails, np.int64)
    heads = np.asarray(heads, np.int64)
    lo = np.asarray(lower, np.int64).copy()
    up = np.asarray(upper, np.int64).copy()
    if np.any(lo > up):
        raise KassignError("internal: an arc's lower bound exceeds its upper bound")
    flow = lo.copy()
    supply = np.asarray(supply, np.int64)
    for k, costs in enumerate(stages):
        flow, pi = _stage(num_nodes, tails, heads, lo, up, supply, costs)
        if k + 1 < len(stages):
            sign = _reduced_cost_signs(costs, pi, tails, heads)
            # pin what every optimum of this stage agrees on
            up, lo = np.where(sign > 0, lo, up), np.where(sign < 0, up, lo)
    return flow


def _reduced_cost_signs(costs, pi: np.ndarray, tails: np.ndarray, heads: np.ndarray) -> np.ndarray:
    if pi.dtype == object:
        reduced = [int(c) + int(pi[a]) - int(pi[b]) for c, a, b in zip(costs, tails.tolist(), heads.tolist())]
        return np.array([(r > 0) - (r < 0) for r in reduced], dtype=np.int64)
    return np.sign(np.asarray(costs, np.int64) + pi[tails] - pi[heads])


def _stage(num_nodes: int, tails, heads, lo, up, supply, costs) -> tuple[np.ndarray, np.ndarray]:
    """One stage: the min-cost flow within ``[lo, up]`` meeting ``supply``; its flow and potentials."""
    balance = supply.astype(np.int64).copy()
    np.subtract.at(balance, tails, lo)
    np.add.at(balance, heads, lo)
    s, t = num_nodes, num_nodes + 1
    sources = np.flatnonzero(balance > 0)
    sinks = np.flatnonzero(balance < 0)
    all_tails = np.concatenate([tails, np.full(len(sources), s), sinks])
    all_heads = np.concatenate([heads, sources, np.full(len(sinks), t)])
    caps = np.concatenate([up - lo, balance[sources], -balance[sinks]])
    costs = np.asarray(costs)
    if costs.dtype != object and len(costs):
        biggest = max(int(costs.max()), 1)  # costs are never negative
    else:
        biggest = max(max((int(c) for c in costs.tolist()), default=0), 1)
    n = num_nodes + 2
    exact = 8 * (n + 2) * biggest >= _INT64_SAFE
    dtype = object if exact else np.int64
    extra = [0] * (len(sources) + len(sinks))
    all_costs = (np.array(list(costs) + extra, dtype=object) if exact
                 else np.concatenate([np.asarray(costs, np.int64), np.zeros(len(extra), np.int64)]))
    start, head, cap, cost, rev, where = _residual_csr(n, all_tails, all_heads, caps, all_costs, dtype)
    if exact:
        inf = 64 * (n + 2) * biggest + 1
        pi = np.array([0] * n, dtype=object)
        _solve.py_func(n, s, t, start, head, cap, cost, rev, pi, inf, 0)
    else:
        pi = np.zeros(n, np.int64)
        _solve(n, s, t, start, head, cap, cost, rev, pi, np.int64(_INT64_SAFE), np.int64(0))
    pushed = np.asarray(caps[: len(tails)], np.int64) - np.asarray(cap[where[: len(tails)]], np.int64)
    wanted = int(balance[sources].sum())
    delivered = int(np.asarray(caps[len(tails):len(tails) + len(sources)], np.int64).sum()
                    - np.asarray(cap[where[len(tails):len(tails) + len(sources)]], np.int64).sum())
    if delivered != wanted:
        raise KassignError("internal: the task network has no feasible flow")
    return lo + pushed, pi
