"""Min-cost flow with a convex cost on each member's load, for the optimal sticky assignor.

The network is source -> (partition classes, hubs, ...) -> members -> sink. Every arc but the
member -> sink ones has a linear integer cost; member ``m`` pays ``weight * (2 L + 1)`` for its
``L+1``-th unit, so the total sink cost is ``weight * sum(L_m ** 2)``: minimising it yields the
least-majorized load vector (for integer points of a polymatroid base, least square-sum and
decreasingly-minimal coincide).

Method: successive shortest paths in primal-dual form. Each phase runs one Dijkstra on
reduced costs (all non-negative thanks to the node potentials), moves the potentials, then
pushes a blocking flow (Dinic, BFS levels) through the arcs whose reduced cost is zero.
Every intermediate flow is optimal for its value, so the final flow is optimal. The sink
arcs are implicit: a member's next unit costs ``weight * (2 load + 1)``, which turns
inadmissible right after a push, so a member takes at most one unit per phase.

Hot path: everything is int64 arrays in CSR form (node -> its residual arcs), compiled with
numba; no Python objects inside the loops.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_INF = np.int64(1) << np.int64(62)


def build_residual_csr(
    num_nodes: int, tails: np.ndarray, heads: np.ndarray, caps: np.ndarray, costs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Forward arcs plus zero-capacity reverses, grouped by tail node.

    Returns ``start, head, cap, cost, rev, forward_pos`` where ``forward_pos[i]`` is where
    input arc ``i`` sits in the CSR arrays (its flow is ``caps[i] - cap[forward_pos[i]]``).
    """
    n_arcs = len(tails)
    all_tails = np.concatenate([tails, heads]).astype(np.int64)
    all_heads = np.concatenate([heads, tails]).astype(np.int64)
    all_caps = np.concatenate([caps, np.zeros(n_arcs, np.int64)]).astype(np.int64)
    all_costs = np.concatenate([costs, -costs]).astype(np.int64)
    order = np.argsort(all_tails, kind="stable")
    position = np.empty(2 * n_arcs, np.int64)
    position[order] = np.arange(2 * n_arcs)
    partner = np.concatenate([np.arange(n_arcs, 2 * n_arcs), np.arange(n_arcs)])
    rev = position[partner][order]
    start = np.zeros(num_nodes + 1, np.int64)
    np.cumsum(np.bincount(all_tails, minlength=num_nodes), out=start[1:])
    return start, all_heads[order], all_caps[order], all_costs[order], rev, position[:n_arcs]


@njit(cache=True)
def _heap_push(keys, vals, size, key, val):
    i = size
    keys[i] = key
    vals[i] = val
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] <= keys[i]:
            break
        keys[parent], keys[i] = keys[i], keys[parent]
        vals[parent], vals[i] = vals[i], vals[parent]
        i = parent
    return size + 1


@njit(cache=True)
def _heap_pop(keys, vals, size):
    key = keys[0]
    val = vals[0]
    size -= 1
    keys[0] = keys[size]
    vals[0] = vals[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and keys[left + 1] < keys[left]:
            child = left + 1
        if keys[i] <= keys[child]:
            break
        keys[child], keys[i] = keys[i], keys[child]
        vals[child], vals[i] = vals[i], vals[child]
        i = child
    return key, val, size


@njit(cache=True)
def _shortest_distances(start, head, cap, cost, pi, load, first_member, weight, dist, heap_keys, heap_vals):
    """Dijkstra on reduced costs from node 0; returns the distance to the implicit sink."""
    n = len(start) - 1
    sink = n
    for v in range(n):
        dist[v] = _INF
    dist[0] = 0
    to_sink = _INF
    size = _heap_push(heap_keys, heap_vals, 0, np.int64(0), np.int64(0))
    while size > 0:
        d, u, size = _heap_pop(heap_keys, heap_vals, size)
        if d > dist[u]:
            continue
        if d >= to_sink:
            break
        if u >= first_member:
            via = d + weight * (2 * load[u - first_member] + 1) + pi[u] - pi[sink]
            if via < to_sink:
                to_sink = via
        for e in range(start[u], start[u + 1]):
            if cap[e] > 0:
                v = head[e]
                nd = d + cost[e] + pi[u] - pi[v]
                if nd < dist[v]:
                    dist[v] = nd
                    size = _heap_push(heap_keys, heap_vals, size, nd, v)
    return to_sink


@njit(cache=True)
def _sink_admissible(u, first_member, load, weight, pi, sink):
    return u >= first_member and weight * (2 * load[u - first_member] + 1) + pi[u] - pi[sink] == 0


@njit(cache=True)
def _bfs_levels(start, head, cap, cost, pi, load, first_member, weight, level, queue):
    """Hop levels over zero-reduced-cost arcs; returns the sink's level or -1."""
    n = len(start) - 1
    for v in range(n):
        level[v] = -1
    level[0] = 0
    queue[0] = 0
    read, write = 0, 1
    sink_level = -1
    while read < write:
        u = queue[read]
        read += 1
        if sink_level >= 0 and level[u] >= sink_level:
            break
        if _sink_admissible(u, first_member, load, weight, pi, n):
            sink_level = level[u] + 1
            continue
        for e in range(start[u], start[u + 1]):
            v = head[e]
            if cap[e] > 0 and level[v] < 0 and cost[e] + pi[u] - pi[v] == 0:
                level[v] = level[u] + 1
                queue[write] = v
                write += 1
    return sink_level


@njit(cache=True)
def _blocking_flow(start, head, cap, cost, rev, pi, load, first_member, weight, level, sink_level, wanted):
    """Unit augmentations along level-increasing admissible arcs; returns how many were pushed."""
    n = len(start) - 1
    current = start[:-1].copy()
    path_nodes = np.empty(sink_level + 1, np.int64)
    path_arcs = np.empty(sink_level + 1, np.int64)
    pushed = 0
    depth = 0
    path_nodes[0] = 0
    while depth >= 0 and pushed < wanted:
        u = path_nodes[depth]
        if level[u] + 1 == sink_level and _sink_admissible(u, first_member, load, weight, pi, n):
            for i in range(depth):
                e = path_arcs[i]
                cap[e] -= 1
                cap[rev[e]] += 1
            load[u - first_member] += 1
            pushed += 1
            depth = 0
            continue
        advanced = False
        if level[u] + 1 < sink_level:
            while current[u] < start[u + 1]:
                e = current[u]
                v = head[e]
                if cap[e] > 0 and level[v] == level[u] + 1 and cost[e] + pi[u] - pi[v] == 0:
                    path_arcs[depth] = e
                    depth += 1
                    path_nodes[depth] = v
                    advanced = True
                    break
                current[u] += 1
        if not advanced:
            level[u] = -2  # dead end for the rest of this blocking flow
            depth -= 1
    return pushed


@njit(cache=True)
def convex_min_cost_flow(start, head, cap, cost, rev, first_member, num_members, weight, demand):
    """Push ``demand`` units from node 0 at least cost; updates ``cap`` in place, returns member loads.

    Returns the loads; if fewer than ``demand`` units fit, the loads sum to less (the caller checks).
    """
    n = len(start) - 1
    pi = np.zeros(n + 1, np.int64)
    load = np.zeros(num_members, np.int64)
    dist = np.empty(n, np.int64)
    level = np.empty(n, np.int64)
    queue = np.empty(n, np.int64)
    heap_keys = np.empty(len(head) + n + 1, np.int64)
    heap_vals = np.empty(len(head) + n + 1, np.int64)
    sent = 0
    while sent < demand:
        to_sink = _shortest_distances(start, head, cap, cost, pi, load, first_member, weight, dist, heap_keys, heap_vals)
        if to_sink >= _INF:
            break
        for v in range(n):
            pi[v] += min(dist[v], to_sink)
        pi[n] += to_sink
        while sent < demand:
            sink_level = _bfs_levels(start, head, cap, cost, pi, load, first_member, weight, level, queue)
            if sink_level < 0:
                break
            sent += _blocking_flow(start, head, cap, cost, rev, pi, load, first_member, weight, level, sink_level, demand - sent)
    return load
