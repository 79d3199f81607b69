"""The min-cost flow engine behind reassignment plans: partitions -> (partition, group) -> brokers.

One network serves both stages of a plan:

- replicas: a partition sends ``rf`` units, at most ``cap`` (and, where every rack must be
  used, at least ``low``) into each group (rack), and at most one unit to each broker (distinct
  replicas). A unit on a broker that did not hold the partition is a move; keeping a current
  follower instead of the current leader costs a little (1, less than any move), so among the
  plans with the fewest moves the flow keeps leaders' replicas where it can.
- leaders: a partition sends 1 unit to one of its chosen replicas; the current leader costs 0,
  anyone else 1 (one leader change).

Costs are packed per partition: ``unit_cost[p] >> 1`` per move, ``unit_cost[p] & 1`` per kept
follower; the first preferred broker (``pref[p, 0]``, the current leader) costs 0.

Each broker's total is held inside ``[lo, hi]`` (the balance window). Nodes::

    [0, P)            partition p
    [P, P + P*G)      (partition p, group g), at P + p*G + g
    [B0, B0 + n)      broker b, B0 = P + P*G
    T = B0 + n        the sink every broker feeds (its arcs carry each broker's total)

Arcs are implicit (never stored): (p, g) reaches every broker of its list that p does not
hold yet; a broker reaches back every partition it holds (a list per broker, kept up to date).
So memory stays O(P*G + replicas) however many brokers a group has.

Method: successive shortest paths from a pseudo-flow. The caller's starting assignment keeps
every current replica that may stay (the current leader always); with potentials equal to the
follower cost on brokers and 0 elsewhere every residual arc then has a non-negative reduced
cost, so this pseudo-flow is optimal for its own imbalances. What remains unbalanced is excess
(replicas to place, brokers above ``hi``) and deficit (brokers below ``lo``). Each phase runs
one Dijkstra from all excess nodes on reduced costs, moves the potentials (capped at the
distance of the nearest deficit, which keeps every reduced cost non-negative), then pushes
blocking flows (Dinic: BFS levels, unit augmentations) along zero-reduced-cost arcs. Every
augmentation follows a shortest path, so every intermediate pseudo-flow stays optimal for its
own imbalances and the final flow is a min-cost flow (the classical SSP invariant; a negative
reduced cost met on the way raises instead of returning a wrong answer). Path costs are sums
of a few move and follower costs, so distances take few distinct values: few phases. If some
excess cannot reach any deficit, no flow inside the window exists (``ok`` is False), and the
brokers it reaches form the cut the leader-window search uses.

Hot path: int64 numpy arrays only, compiled with numba; no Python objects inside the loops.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kassign.core import heaps

_INF = np.int64(1) << np.int64(60)


@njit(cache=True, inline="always")
def _holds(assign, p, b):
    for j in range(assign.shape[1]):
        if assign[p, j] == b:
            return True
    return False


@njit(cache=True, inline="always")
def _weight(pref, unit_cost, p, b):
    """0 on the partition's first preferred broker (its current leader), ``unit_cost[p] & 1``
    on its other preferred ones (its current followers: 1 when the caller wants leaders kept
    where moves tie), ``unit_cost[p] >> 1`` anywhere else (a move)."""
    if pref[p, 0] == b:
        return np.int64(0)
    for j in range(1, pref.shape[1]):
        if pref[p, j] == b:
            return unit_cost[p] & 1
    return unit_cost[p] >> 1


@njit(cache=True, inline="always")
def _num_arcs(u, P, G, B0, T, n, list_of, list_start, bsize):
    if u < P:
        return G
    if u < B0:
        lid = list_of[u - P]
        return 1 + list_start[lid + 1] - list_start[lid]
    if u < T:
        return 1 + bsize[u - B0]
    return n


@njit(cache=True, inline="always")
def _arc(u, k, P, G, B0, T, W, assign, fpg, cap, low, list_of, list_start, list_items, pref, unit_cost,
         fb, lo, hi, bstart, blist, group_of_broker):
    """Arc ``k`` of node ``u``: (head, cost, residual capacity > 0)."""
    if u < P:
        v = P + u * G + k
        return v, np.int64(0), fpg[u * G + k] < cap[u]
    if u < B0:
        idx = u - P
        p = idx // G
        if k == 0:
            return p, np.int64(0), fpg[idx] > low[p]
        lid = list_of[idx]
        b = list_items[list_start[lid] + k - 1]
        if _holds(assign, p, b):
            return B0 + b, np.int64(0), False
        return B0 + b, _weight(pref, unit_cost, p, b), True
    if u < T:
        b = u - B0
        if k == 0:
            return T, np.int64(0), fb[b] < hi[b]
        slot = blist[bstart[b] + k - 1]
        p = slot // W
        return P + p * G + group_of_broker[b], -_weight(pref, unit_cost, p, b), True
    return B0 + k, np.int64(0), fb[k] > lo[k]


@njit(cache=True)
def _heap_up(heap, where, key, i):
    heaps.sift_up(heap, where, key, None, i)


@njit(cache=True)
def _heap_pop(heap, where, key, size):
    top, size = heaps.pop(heap, where, key, None, size)
    where[top] = -2  # settled: never queued again
    return top, size


@njit(cache=True)
def _assign_slot(p, b, W, assign, bstart, bsize, blist, pos):
    for j in range(W):
        if assign[p, j] < 0:
            assign[p, j] = b
            slot = p * W + j
            at = bstart[b] + bsize[b]
            blist[at] = slot
            pos[slot] = at
            bsize[b] += 1
            return
    raise RuntimeError("partition has no free replica slot")


@njit(cache=True)
def _release_slot(p, b, W, assign, bstart, bsize, blist, pos):
    for j in range(W):
        if assign[p, j] == b:
            slot = p * W + j
            at = pos[slot]
            last = bstart[b] + bsize[b] - 1
            moved = blist[last]
            blist[at] = moved
            pos[moved] = at
            bsize[b] -= 1
            assign[p, j] = -1
            return
    raise RuntimeError("broker does not hold the partition")


@njit(cache=True, inline="always")
def _reset_open(shared, list_start, list_items, open_items, open_count, open_pos, group_of_broker):
    if not shared:
        return
    for g in range(len(open_count)):
        open_count[g] = list_start[g + 1] - list_start[g]
        for i in range(list_start[g], list_start[g + 1]):
            open_items[i] = list_items[i]
            open_pos[list_items[i]] = i


@njit(cache=True, inline="always")
def _close(b, list_start, open_items, open_count, open_pos, group_of_broker):
    g = group_of_broker[b]
    i = open_pos[b]
    last = list_start[g] + open_count[g] - 1
    other = open_items[last]
    open_items[i] = other
    open_pos[other] = i
    open_items[last] = b
    open_pos[b] = last
    open_count[g] -= 1


@njit(cache=True)
def _dijkstra(P, G, B0, T, W, N, n, assign, fpg, cap, low, list_of, list_start, list_items, pref, unit_cost, fb, lo,
              hi, bstart, bsize, blist, group_of_broker, excess, pi, dist, heap, where, shared, open_items,
              open_count, open_pos):
    """Distances on reduced costs from every excess node, settled up to the nearest deficit
    (returned; _INF when no deficit is reachable). Unsettled nodes keep a tentative distance."""
    _reset_open(shared, list_start, list_items, open_items, open_count, open_pos, group_of_broker)
    size = 0
    for v in range(N):
        where[v] = -1
        if excess[v] > 0:
            dist[v] = 0
            heap[size] = v
            where[v] = size
            size += 1
        else:
            dist[v] = _INF
    nearest = _INF
    while size > 0:
        u, size = _heap_pop(heap, where, dist, size)
        d = dist[u]
        if d > nearest:
            break
        if excess[u] < 0 and nearest == _INF:
            nearest = d
        if shared and B0 <= u < T:
            _close(u - B0, list_start, open_items, open_count, open_pos, group_of_broker)
        if shared and P <= u < B0:
            idx = u - P
            p = idx // G
            g = idx % G
            if fpg[idx] > low[p] and where[p] != -2:
                if pi[u] < pi[p]:
                    raise RuntimeError("negative reduced cost: the flow's optimality invariant is broken")
                size = _relax(p, d + pi[u] - pi[p], dist, heap, where, size)
            base = list_start[g]
            for k in range(open_count[g]):
                b = open_items[base + k]
                if _holds(assign, p, b):
                    continue
                v = B0 + b
                nd = d + _weight(pref, unit_cost, p, b) + pi[u] - pi[v]
                if nd < d:
                    raise RuntimeError("negative reduced cost: the flow's optimality invariant is broken")
                if nd < dist[v]:
                    size = _relax(v, nd, dist, heap, where, size)
            continue
        arcs = _num_arcs(u, P, G, B0, T, n, list_of, list_start, bsize)
        for k in range(arcs):
            v, c, ok = _arc(u, k, P, G, B0, T, W, assign, fpg, cap, low, list_of, list_start, list_items, pref,
                            unit_cost, fb, lo, hi, bstart, blist, group_of_broker)
            if not ok or where[v] == -2:
                continue
            nd = d + c + pi[u] - pi[v]
            if nd < d:
                raise RuntimeError("negative reduced cost: the flow's optimality invariant is broken")
            if nd < dist[v]:
                size = _relax(v, nd, dist, heap, where, size)
    return nearest


@njit(cache=True, inline="always")
def _relax(v, nd, dist, heap, where, size):
    """Lower v's key to nd (if lower); returns the heap's new size."""
    if nd >= dist[v]:
        return size
    dist[v] = nd
    if where[v] == -1:
        heap[size] = v
        where[v] = size
        _heap_up(heap, where, dist, size)
        return size + 1
    _heap_up(heap, where, dist, where[v])
    return size


@njit(cache=True)
def _levels(P, G, B0, T, W, N, n, assign, fpg, cap, low, list_of, list_start, list_items, pref, unit_cost, fb, lo,
            hi, bstart, bsize, blist, group_of_broker, excess, pi, level, queue, shared, open_items, open_count,
            open_pos):
    """BFS hop levels over zero-reduced-cost residual arcs from every excess node; returns the
    level of the nearest deficit, or -1."""
    _reset_open(shared, list_start, list_items, open_items, open_count, open_pos, group_of_broker)
    for v in range(N):
        level[v] = -1
    read = 0
    write = 0
    for v in range(N):
        if excess[v] > 0:
            level[v] = 0
            queue[write] = v
            write += 1
            if shared and B0 <= v < T:
                _close(v - B0, list_start, open_items, open_count, open_pos, group_of_broker)
    sink_level = -1
    while read < write:
        u = queue[read]
        read += 1
        if sink_level >= 0 and level[u] >= sink_level:
            break
        if excess[u] < 0:
            sink_level = level[u]
            continue
        if shared and P <= u < B0:
            idx = u - P
            p = idx // G
            g = idx % G
            if fpg[idx] > low[p] and level[p] < 0 and pi[u] == pi[p]:
                level[p] = level[u] + 1
                queue[write] = p
                write += 1
            base = list_start[g]
            k = 0
            while k < open_count[g]:
                b = open_items[base + k]
                v = B0 + b
                if not _holds(assign, p, b) and _weight(pref, unit_cost, p, b) + pi[u] - pi[v] == 0:
                    level[v] = level[u] + 1
                    queue[write] = v
                    write += 1
                    _close(b, list_start, open_items, open_count, open_pos, group_of_broker)
                else:
                    k += 1
            continue
        arcs = _num_arcs(u, P, G, B0, T, n, list_of, list_start, bsize)
        for k in range(arcs):
            v, c, ok = _arc(u, k, P, G, B0, T, W, assign, fpg, cap, low, list_of, list_start, list_items, pref,
                            unit_cost, fb, lo, hi, bstart, blist, group_of_broker)
            if ok and level[v] < 0 and c + pi[u] - pi[v] == 0:
                level[v] = level[u] + 1
                queue[write] = v
                write += 1
                if shared and B0 <= v < T:
                    _close(v - B0, list_start, open_items, open_count, open_pos, group_of_broker)
    return sink_level


@njit(cache=True)
def solve_window(assign, rf, cap, low, G, list_of, list_start, list_items, pref, unit_cost,
                 group_of_broker, lo, hi, reached):
    """Min-cost flow inside the window ``lo[b] <= total(b) <= hi[b]``; ``assign`` is updated in place.

    ``assign[p]`` holds partition p's brokers (-1: free slot); on entry it is the starting
    pseudo-flow and must respect ``cap`` and ``low`` (the caller keeps what may stay).
    Returns ``(ok, phases)``: ok is False when no assignment fits the window; then ``assign`` is
    the pseudo-flow the search stopped at and ``reached[b]`` is 1 for the brokers its remaining
    excess can still reach (a cut that proves the window infeasible), 0 for the others.
    """
    P, W = assign.shape
    n = len(lo)
    B0 = P + P * G
    T = B0 + n
    N = T + 1
    # -- pseudo-flow from the starting assignment
    fpg = np.zeros(P * G, np.int64)
    excess = np.zeros(N, np.int64)
    load = np.zeros(n, np.int64)
    total = np.int64(0)
    for p in range(P):
        total += rf[p]
        sent = np.int64(0)
        for j in range(W):
            b = assign[p, j]
            if b >= 0:
                fpg[p * G + group_of_broker[b]] += 1
                load[b] += 1
        for g in range(G):
            count = fpg[p * G + g]
            if count < low[p]:
                fpg[p * G + g] = low[p]
                excess[P + p * G + g] = low[p] - count
            sent += fpg[p * G + g]
        excess[p] = rf[p] - sent
        if excess[p] < 0:
            raise RuntimeError("starting assignment exceeds a replication factor")
    fb = np.zeros(n, np.int64)
    sink_in = np.int64(0)
    for b in range(n):
        fb[b] = min(max(load[b], lo[b]), hi[b])
        excess[B0 + b] = load[b] - fb[b]
        sink_in += fb[b]
    excess[T] = sink_in - total
    # Each augmenting path enters a broker at most once, and a broker never ends above
    # max(its start, hi): that bounds the room its list of partitions needs.
    augmentations = np.int64(0)
    for v in range(N):
        if excess[v] > 0:
            augmentations += excess[v]
    bstart = np.zeros(n + 1, np.int64)
    for b in range(n):
        room = min(max(load[b], hi[b]), load[b] + augmentations)
        bstart[b + 1] = bstart[b] + max(room, load[b]) + 1
    blist = np.empty(bstart[n], np.int64)
    bsize = np.zeros(n, np.int64)
    pos = np.full(P * W, -1, np.int64)
    for p in range(P):
        for j in range(W):
            b = assign[p, j]
            if b >= 0:
                slot = p * W + j
                at = bstart[b] + bsize[b]
                blist[at] = slot
                pos[slot] = at
                bsize[b] += 1
    # -- successive shortest paths. Starting potentials: F (the follower cost, 0 or 1) on brokers
    # and the sink, 0 elsewhere. Then every residual arc has a reduced cost >= 0: a kept
    # follower's reverse arc costs -F + F, an arc to a broker not held yet at least F - F (moves
    # cost at least F; a current leader on a target broker is always kept at the start, so no
    # arc of cost 0 leads to a broker from outside).
    follower = np.int64(0)
    for p in range(P):
        follower = max(follower, unit_cost[p] & 1)
        if pref[p, 0] >= 0 and not _holds(assign, p, pref[p, 0]):
            raise RuntimeError("the starting assignment must keep each partition's current leader")
    for p in range(P):
        if (unit_cost[p] >> 1) < follower:
            raise RuntimeError("a move must cost at least as much as keeping a follower")
    pi = np.zeros(N, np.int64)
    for v in range(B0, N):
        pi[v] = follower
    dist = np.empty(N, np.int64)
    heap = np.empty(N, np.int64)
    where = np.empty(N, np.int64)
    level = np.empty(N, np.int64)
    queue = np.empty(N, np.int64)
    cur = np.empty(N, np.int64)
    path = np.empty(N + 1, np.int64)
    phases = 0
    # Where every (partition, group) reaches the brokers of its group (the replica stage), a
    # search only needs the brokers it has not reached yet: one open list per group.
    shared = len(list_start) - 1 == G and G * P == len(list_of)
    if shared:
        for i in range(len(list_of)):
            if list_of[i] != i % G:
                shared = False
                break
    open_items = list_items.copy()
    open_count = np.zeros(len(list_start) - 1, np.int64)
    open_pos = np.zeros(n, np.int64)
    while True:
        remaining = False
        for v in range(N):
            if excess[v] > 0:
                remaining = True
                break
        if not remaining:
            return True, phases
        phases += 1
        # Dijkstra from every excess node
        nearest = _dijkstra(P, G, B0, T, W, N, n, assign, fpg, cap, low, list_of, list_start, list_items, pref,
                            unit_cost, fb, lo, hi, bstart, bsize, blist, group_of_broker, excess, pi, dist, heap,
                            where, shared, open_items, open_count, open_pos)
        if nearest == _INF:
            for b in range(n):
                reached[b] = 1 if dist[B0 + b] < _INF else 0
            return False, phases
        for v in range(N):
            pi[v] += min(dist[v], nearest)
        # blocking flows on zero-reduced-cost arcs
        while True:
            sink_level = _levels(P, G, B0, T, W, N, n, assign, fpg, cap, low, list_of, list_start, list_items, pref,
                                 unit_cost, fb, lo, hi, bstart, bsize, blist, group_of_broker, excess, pi, level,
                                 queue, shared, open_items, open_count, open_pos)
            if sink_level < 0:
                break
            for v in range(N):
                cur[v] = 0
            for root in range(N):
                while excess[root] > 0 and level[root] == 0:
                    depth = 0
                    path[0] = root
                    found = False
                    while depth >= 0:
                        u = path[depth]
                        if depth > 0 and excess[u] < 0:
                            found = True
                            break
                        advanced = False
                        if level[u] < sink_level:
                            arcs = _num_arcs(u, P, G, B0, T, n, list_of, list_start, bsize)
                            while cur[u] < arcs:
                                v, c, ok = _arc(u, cur[u], P, G, B0, T, W, assign, fpg, cap, low, list_of, list_start,
                                                list_items, pref, unit_cost, fb, lo, hi, bstart, blist,
                                                group_of_broker)
                                if ok and level[v] == level[u] + 1 and c + pi[u] - pi[v] == 0:
                                    depth += 1
                                    path[depth] = v
                                    advanced = True
                                    break
                                cur[u] += 1
                        if not advanced:
                            level[u] = -2
                            depth -= 1
                    if not found:
                        break
                    for i in range(depth):
                        u = path[i]
                        v = path[i + 1]
                        if u < P:
                            fpg[v - P] += 1
                        elif u < B0:
                            if v < P:
                                fpg[u - P] -= 1
                            else:
                                _assign_slot((u - P) // G, v - B0, W, assign, bstart, bsize, blist, pos)
                        elif u < T:
                            if v == T:
                                fb[u - B0] += 1
                            else:
                                _release_slot((v - P) // G, u - B0, W, assign, bstart, bsize, blist, pos)
                        else:
                            fb[v - B0] -= 1
                    excess[root] -= 1
                    excess[path[depth]] += 1


@njit(cache=True)
def keep_current(pref, rf, cap, low, group_of_broker, G):
    """The starting assignment: current replicas on target brokers, in order, as far as the
    per-group caps (and the room the per-group minimums need) allow."""
    P, W = pref.shape
    assign = np.full((P, W), -1, np.int64)
    count = np.zeros(G, np.int64)
    for p in range(P):
        for g in range(G):
            count[g] = 0
        kept = 0
        for j in range(W):
            b = pref[p, j]
            if b < 0:
                continue
            g = group_of_broker[b]
            if count[g] >= cap[p]:
                continue
            count[g] += 1
            if low[p] > 0:
                need = 0
                for h in range(G):
                    need += max(count[h], low[p])
                if need > rf[p]:
                    count[g] -= 1
                    continue
            assign[p, kept] = b
            kept += 1
    return assign
