"""The topic-count transportation problem of the scale path (``_scale.topic_counts``) as a min-cost flow.

Given ``K`` topics, ``n`` brokers in ``G`` groups (racks), each topic ``t`` places ``r[t]`` units, at most one
on each broker (``x[t, b]`` in {0, 1}), with every (topic, group) total in ``[glo[t, g], ghi[t, g]]`` and every
broker's total in ``[blo[b], bhi[b]]``; a unit on ``(t, b)`` costs ``cost[t, b]`` (0 or more). Find the ``x`` of
least cost, or None where none exists.

It is a network (the same one the linear program of the earlier implementation described: rows in two laminar
families, so its vertices are integral), solved here as one directly::

    topic t --[glo, ghi], cost 0--> (t, g) --1, cost[t, b]--> broker b --[blo, bhi], cost 0--> sink

Lower bounds are taken out first (``glo`` units forced onto each (topic, group) arc, ``blo`` onto each broker's
arc): node supplies are then ``r[t] - sum_g glo[t, g]`` on topics, ``glo[t, g]`` on (t, g), ``-blo[b]`` on brokers
and the rest of the demand on the sink, and every arc starts empty with a non-negative cost, so the zero flow
with zero potentials is optimal for its own imbalances. Successive shortest paths then keep that invariant:
each round runs Dijkstra on reduced costs from every node with excess, raises the potentials by the distances
(capped at the nearest deficit's), and pushes a blocking flow along zero-reduced-cost arcs from excess to
deficit (Dinic: BFS levels, then depth-first augmentations with current-arc pointers). Every augmentation is
along a shortest path, so the final flow is a min-cost flow; where excess remains that reaches no deficit there
is no solution (None). Costs are small integers (0 or 1 in the scale path), so path costs take few values and
the rounds are few: the cost is about (rounds) x (arcs), arcs = K x (n + G) + n, linear in topics, where the
simplex on the same rows grew about cubically (1.7 s at 300 topics x 110 brokers).
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

_INF = np.int64(1) << np.int64(60)


@njit(cache=True, inline="always")
def _add(u, v, c, w, fill, head, cap, cst, rev):
    i = fill[u]
    j = fill[v]
    head[i] = v
    cap[i] = c
    cst[i] = w
    rev[i] = j
    head[j] = u
    cap[j] = 0
    cst[j] = -w
    rev[j] = i
    fill[u] += 1
    fill[v] += 1


@njit(cache=True)
def _build(K, n, G, gob, glo, ghi, blo, bhi, cost):
    """CSR arcs with paired reverses: (start[v], head, cap, cst, rev); node supplies."""
    N = K + K * G + n + 1
    sink = N - 1
    B0 = K + K * G
    deg = np.zeros(N + 1, np.int64)
    for t in range(K):
        for g in range(G):
            deg[t] += 1
            deg[K + t * G + g] += 1
        for b in range(n):
            deg[K + t * G + gob[b]] += 1
            deg[B0 + b] += 1
    for b in range(n):
        deg[B0 + b] += 1
        deg[sink] += 1
    start = np.zeros(N + 1, np.int64)
    for v in range(N):
        start[v + 1] = start[v] + deg[v]
    M = start[N]
    head = np.empty(M, np.int64)
    cap = np.empty(M, np.int64)
    cst = np.empty(M, np.int64)
    rev = np.empty(M, np.int64)
    fill = start[:N].copy()
    supply = np.zeros(N, np.int64)

    for t in range(K):
        for g in range(G):
            tg = K + t * G + g
            _add(t, tg, ghi[t, g] - glo[t, g], 0, fill, head, cap, cst, rev)
            supply[t] -= glo[t, g]
            supply[tg] += glo[t, g]
        for b in range(n):
            _add(K + t * G + gob[b], B0 + b, 1, cost[t, b], fill, head, cap, cst, rev)
    for b in range(n):
        _add(B0 + b, sink, bhi[b] - blo[b], 0, fill, head, cap, cst, rev)
        supply[B0 + b] -= blo[b]
    return start, head, cap, cst, rev, supply


@njit(cache=True)
def _solve(K, n, G, r, start, head, cap, cst, rev, supply):
    """Successive shortest paths (module docstring); True where every supply is met."""
    N = len(start) - 1
    sink = N - 1
    for t in range(K):
        supply[t] += r[t]
    total = 0
    for t in range(K):
        total += r[t]
    for b in range(n):
        total += supply[K + K * G + b]  # minus the forced broker units
    supply[sink] -= total
    pi = np.zeros(N, np.int64)
    dist = np.empty(N, np.int64)
    level = np.empty(N, np.int64)
    cur = np.empty(N, np.int64)
    queue = np.empty(N, np.int64)
    stack = np.empty(N, np.int64)
    via = np.empty(N, np.int64)
    while True:
        # Dijkstra on reduced costs from every excess node
        heap = [(np.int64(0), np.int64(0))]
        heap.pop()
        any_excess = False
        for v in range(N):
            dist[v] = _INF
            if supply[v] > 0:
                dist[v] = 0
                heapq.heappush(heap, (np.int64(0), np.int64(v)))
                any_excess = True
        if not any_excess:
            return True
        D = _INF
        while len(heap) > 0:
            d, u = heapq.heappop(heap)
            if d > D:
                break
            if d > dist[u]:
                continue
            if supply[u] < 0 and d < D:
                D = d
            for a in range(start[u], start[u + 1]):
                if cap[a] <= 0:
                    continue
                v = head[a]
                nd = d + cst[a] + pi[u] - pi[v]
                if nd < d:
                    raise RuntimeError("negative reduced cost")
                if nd < dist[v]:
                    dist[v] = nd
                    heapq.heappush(heap, (nd, v))
        if D == _INF:
            return False
        for v in range(N):
            pi[v] += min(dist[v], D)
        # blocking flows along zero reduced cost arcs, excess -> deficit
        while True:
            qh = 0
            qt = 0
            for v in range(N):
                level[v] = -1
                if supply[v] > 0:
                    level[v] = 0
                    queue[qt] = v
                    qt += 1
            reach = False
            while qh < qt:
                u = queue[qh]
                qh += 1
                if supply[u] < 0:
                    reach = True
                    continue  # a deficit ends paths
                for a in range(start[u], start[u + 1]):
                    v = head[a]
                    if cap[a] > 0 and level[v] < 0 and cst[a] + pi[u] - pi[v] == 0:
                        level[v] = level[u] + 1
                        queue[qt] = v
                        qt += 1
            if not reach:
                break
            for v in range(N):
                cur[v] = start[v]
            pushed = False
            for s in range(N):
                while supply[s] > 0:
                    # depth-first path from s along level + 1 admissible arcs to a deficit
                    depth = 0
                    stack[0] = s
                    found = False
                    while depth >= 0:
                        u = stack[depth]
                        if supply[u] < 0 and depth > 0:
                            found = True
                            break
                        advanced = False
                        while cur[u] < start[u + 1]:
                            a = cur[u]
                            v = head[a]
                            if cap[a] > 0 and level[v] == level[u] + 1 and cst[a] + pi[u] - pi[v] == 0:
                                via[depth] = a
                                depth += 1
                                stack[depth] = v
                                advanced = True
                                break
                            cur[u] += 1
                        if not advanced:
                            level[u] = -1  # dead end
                            depth -= 1
                            if depth >= 0:
                                cur[stack[depth]] += 1
                    if not found:
                        break
                    t_ = stack[depth]
                    amount = min(supply[s], -supply[t_])
                    for i in range(depth):
                        amount = min(amount, cap[via[i]])
                    for i in range(depth):
                        a = via[i]
                        cap[a] -= amount
                        cap[rev[a]] += amount
                    supply[s] -= amount
                    supply[t_] += amount
                    pushed = True
            if not pushed:
                break


def transport(r: np.ndarray, gob: np.ndarray, glo: np.ndarray, ghi: np.ndarray, blo: np.ndarray, bhi: np.ndarray,
              cost: np.ndarray) -> np.ndarray | None:
    """The least-cost ``x[t, b]`` in {0, 1} (module docstring), int64[K, n]; None where no ``x`` meets every bound."""
    K, n = cost.shape
    G = glo.shape[1]
    r, gob, glo, ghi, blo, bhi, cost = (np.ascontiguousarray(a, np.int64) for a in (r, gob, glo, ghi, blo, bhi, cost))
    if (glo > ghi).any() or (blo > bhi).any() or (cost < 0).any():
        return None
    glo = np.maximum(glo, 0)
    blo = np.maximum(blo, 0)
    if (ghi < 0).any() or (bhi < 0).any():
        return None
    start, head, cap, cst, rev, supply = _build(K, n, G, gob, glo, ghi, blo, bhi, cost)
    if not _solve(K, n, G, r, start, head, cap, cst, rev, supply):
        return None
    x = np.zeros((K, n), np.int64)
    _read(K, n, G, gob, start, head, cap, x)
    return x


@njit(cache=True)
def _read(K, n, G, gob, start, head, cap, x):
    B0 = K + K * G
    for t in range(K):
        for g in range(G):
            u = K + t * G + g
            for a in range(start[u], start[u + 1]):
                v = head[a]
                if v >= B0 and cap[a] == 0:
                    x[t, v - B0] = 1
