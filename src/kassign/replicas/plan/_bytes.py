"""Bytes balance, fast: the greedy heuristic that starts every plan with ``sizes``.

The rule a byte plan follows (stated in full, with its proofs, in ``_exact``): every target
broker at most ``bytes_limit = floor((1 + tolerance) * mean)`` bytes where the partitions allow
it (else the smallest possible largest broker, then the fewest bytes above the limit), then the
fewest bytes moved; validity (distinct brokers, racks spread, ``max_moves``) always holds.

This module is heuristic, not exact. Balancing indivisible partitions is bin packing
(NP-hard), and this loop is linear-ish so that 100,000 partitions take under a second. Its
plan is the warm start of the exact stage (``_exact``) and its fallback: on inputs small
enough for the whole integer program the program decides (reaching the limit whenever any plan
can, with the fewest bytes); on larger ones neighbourhood programs improve this plan, and the
summary says whether the result is proven optimal (``bytes_optimal``).

The loop starts from the valid placement with the fewest moves (the flow engine with an open
window), then repeatedly takes the heaviest broker above the limit and moves one of its
replicas to a valid receiver (distinct brokers, rack rules kept), choosing

1. moves that cost nothing (back to a broker that held the partition before, or a replica
   already moved once),
2. else a replica no larger than what the broker must shed (the largest such: every byte
   moved is a byte shed), else the smallest larger one (best fit),
3. receivers lightest first, preferring those that stay within the limit.

When no single move keeps the receiver within the limit, a swap is tried: a larger replica of
the heavy broker for a smaller one of one of the lightest brokers, both ending within the limit
if possible. Failing that, a move or swap that still lowers the larger load of the pair is
taken. A broker that nothing can lower (a partition too big for the limit, say) is set aside and
the next heaviest is balanced, so one oversized partition does not stop the rest. Every step
lowers the sum of squared loads (a receiver always ends below the broker it took from), so the
loop ends: when every broker left is within the limit, when nothing lowers any of them, or at
the move budget.

Worked example, and where it falls short (a greedy step never undoes an earlier one, so it can
miss packings that need several coordinated moves): rf 1, no racks, partitions of 6, 4, 4, 3, 3
and 2 bytes all on broker 0, brokers 0 and 1, tolerance 0; mean and limit 11. The loop moves 6
(the largest replica no larger than the 11 bytes broker 0 must shed), then 4 (loads 12 and 10).
Broker 0 must shed one more byte; its smallest replica has 2, which would put broker 1 at 12, and
no swap lowers the larger load: it stops one byte over. The packing 6 + 3 + 2 = 11, 4 + 4 + 3 =
11 exists; the integer program finds it (moving 4, 4 and 3: 11 bytes, the optimum).

With a disk-capacity goal each broker also has a room (bytes it may never exceed): no step puts a
receiver above its room, and the broker furthest above min(limit, room) is balanced first, to any
receiver that stays within its own; without rooms every step is as described above.

Hot path: one numba loop over int64 arrays (per-broker lists of replica slots).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _count_in(assign, p, group_of_broker, g):
    c = 0
    for j in range(assign.shape[1]):
        b = assign[p, j]
        if b >= 0 and group_of_broker[b] == g:
            c += 1
    return c


@njit(cache=True)
def _holds(row, b):
    for j in range(len(row)):
        if row[j] == b:
            return True
    return False


@njit(cache=True)
def balance_bytes(assign, held, sizes, cap, low, group_of_broker, n, limit, budget, max_steps, swap_receivers, room):
    """Greedy byte balancing in place. Returns (steps, moves_now): ``moves_now`` counts replicas
    on brokers that did not hold them before. ``room[b]``: bytes broker b may never exceed (a disk
    limit; ``1 << 62`` where none): no step puts a broker above it, and a broker above it sheds first
    (the broker furthest above min(limit, room) is balanced next; with no room given that is the
    heaviest, as above), to any receiver that stays within its own min(limit, room)."""
    P, W = assign.shape
    load = np.zeros(n, np.int64)
    # Each broker's replicas as a doubly linked list over slots (p * W + j).
    head = np.full(n, -1, np.int64)
    nxt = np.full(P * W, -1, np.int64)
    prv = np.full(P * W, -1, np.int64)
    for p in range(P):
        for j in range(W):
            b = assign[p, j]
            if b >= 0:
                load[b] += sizes[p]
                slot = p * W + j
                nxt[slot] = head[b]
                if head[b] >= 0:
                    prv[head[b]] = slot
                head[b] = slot
    moves = 0
    for p in range(P):
        for j in range(W):
            b = assign[p, j]
            if b >= 0 and not _holds(held[p], b):
                moves += 1
    steps = 0
    stuck = np.zeros(n, np.bool_)  # brokers no move or swap could lower: set aside
    while steps < max_steps:
        heavy = -1
        excess = np.int64(0)
        for b in range(n):
            if stuck[b]:
                continue
            over_b = load[b] - min(limit, room[b])
            if heavy < 0 or over_b > excess:
                heavy = b
                excess = over_b
        if heavy < 0 or excess <= 0:
            break
        shed = excess
        over_room = load[heavy] > room[heavy]
        order = np.argsort(load)
        best_p, best_to, best_i = -1, -1, -1
        best_key0, best_key1, best_key2 = np.int64(9), np.int64(0), np.int64(0)  # lower is better
        g_from = group_of_broker[heavy]
        from_held = False
        slot = head[heavy]
        while slot >= 0:
            i = slot
            slot = nxt[slot]
            p = i // W
            s = sizes[p]
            if s == 0:
                continue
            from_held = _holds(held[p], heavy)
            # candidate receivers: the lightest valid one, and any earlier holder (free moves)
            for pass_ in range(2):
                k = 0
                while True:
                    if pass_ == 0:
                        if k >= n:
                            break
                        r = order[k]
                    else:
                        if k >= W:
                            break
                        r = held[p, k]
                        if r < 0:
                            k += 1
                            continue
                    k += 1
                    if r == heavy or _holds(assign[p], r):
                        continue
                    if load[r] + s > room[r]:
                        continue  # never above a broker's room
                    if load[r] + s >= load[heavy] and not (over_room and load[r] + s <= min(limit, room[r])):
                        if pass_ == 0 and not over_room:
                            break  # heavier receivers cannot help either
                        continue
                    g_to = group_of_broker[r]
                    if g_to != g_from:
                        if _count_in(assign, p, group_of_broker, g_to) + 1 > cap[p]:
                            continue
                        if _count_in(assign, p, group_of_broker, g_from) - 1 < low[p]:
                            continue
                    to_held = _holds(held[p], r)
                    extra = (0 if to_held else 1) - (0 if from_held else 1)  # change in moved replicas
                    if budget >= 0 and extra > 0 and moves + extra > budget:
                        continue
                    fits = load[r] + s <= min(limit, room[r])
                    if extra <= 0:
                        key0 = 0 if fits else 3
                        key1 = -min(s, shed)
                    elif s <= shed:
                        key0 = 1 if fits else 4
                        key1 = -s
                    else:
                        key0 = 2 if fits else 5
                        key1 = s
                    key2 = load[r]
                    if (key0 < best_key0 or (key0 == best_key0 and key1 < best_key1)
                            or (key0 == best_key0 and key1 == best_key1 and key2 < best_key2)):
                        best_key0, best_key1, best_key2 = key0, key1, key2
                        best_p, best_to, best_i = p, r, i
                    if pass_ == 0:
                        break  # the lightest valid receiver is the one this pass wants
        fitting_move = best_p >= 0 and best_key0 <= 2
        if not fitting_move:
            sw_i, sw_r, sw_j, sw_fits = _best_swap(assign, held, sizes, cap, low, group_of_broker, load, order, heavy,
                                                   limit, budget, moves, head, nxt, W, swap_receivers, room)
            if sw_i >= 0 and (sw_fits or best_p < 0):
                p, q = sw_i // W, sw_j // W
                moves += _move_delta(held, p, heavy, sw_r) + _move_delta(held, q, sw_r, heavy)
                _relocate(assign, load, sizes, head, nxt, prv, W, sw_i, heavy, sw_r)
                _relocate(assign, load, sizes, head, nxt, prv, W, sw_j, sw_r, heavy)
                steps += 1
                continue
        if best_p < 0:
            stuck[heavy] = True  # the partitions do not let it come down; balance the others
            continue
        moves += _move_delta(held, best_p, heavy, best_to)
        _relocate(assign, load, sizes, head, nxt, prv, W, best_i, heavy, best_to)
        steps += 1
    return steps, moves


@njit(cache=True)
def _move_delta(held, p, src, dst):
    """Change in moved replicas when p's replica goes from src to dst."""
    return (0 if _holds(held[p], dst) else 1) - (0 if _holds(held[p], src) else 1)


@njit(cache=True)
def _relocate(assign, load, sizes, head, nxt, prv, W, i, src, dst):
    """Slot i (partition i // W) moves from broker src to dst: assignment, loads, lists."""
    p = i // W
    assign[p, i - p * W] = dst
    load[src] -= sizes[p]
    load[dst] += sizes[p]
    if prv[i] >= 0:
        nxt[prv[i]] = nxt[i]
    else:
        head[src] = nxt[i]
    if nxt[i] >= 0:
        prv[nxt[i]] = prv[i]
    prv[i] = -1
    nxt[i] = head[dst]
    if head[dst] >= 0:
        prv[head[dst]] = i
    head[dst] = i


@njit(cache=True)
def _fits_racks(assign, p, group_of_broker, cap, low, src, dst):
    g_from, g_to = group_of_broker[src], group_of_broker[dst]
    if g_from == g_to:
        return True
    if _count_in(assign, p, group_of_broker, g_to) + 1 > cap[p]:
        return False
    return _count_in(assign, p, group_of_broker, g_from) - 1 >= low[p]


@njit(cache=True)
def _best_swap(assign, held, sizes, cap, low, group_of_broker, load, order, heavy, limit, budget, moves, head, nxt,
               W, receivers, room):
    """A larger replica of the heavy broker for a smaller one of a light broker (the lightest
    ``receivers`` brokers are tried), when no single move fits. Both loads must end below the
    heavy one's (so the sum of squares falls); prefers swaps leaving both within the limit, then
    the fewest extra moves, then the lowest larger load. Returns (slot, receiver, slot, fits)."""
    n = len(load)
    best_i, best_r, best_j = -1, -1, -1
    best_fits, best_extra, best_peak = False, np.int64(1 << 40), np.int64(1 << 62)
    tried = 0
    for k in range(n):
        r = order[k]
        if r == heavy:
            continue
        if tried >= receivers:
            break
        tried += 1
        i = head[heavy]
        while i >= 0:
            p = i // W
            sp = sizes[p]
            if sp > 0 and not _holds(assign[p], r) and _fits_racks(assign, p, group_of_broker, cap, low, heavy, r):
                j = head[r]
                while j >= 0:
                    q = j // W
                    sq = sizes[q]
                    if q != p and sq < sp and not _holds(assign[q], heavy):
                        new_heavy = load[heavy] - sp + sq
                        new_r = load[r] + sp - sq
                        peak = max(new_heavy, new_r)
                        if peak < load[heavy] and new_r <= room[r] and _fits_racks(assign, q, group_of_broker, cap,
                                                                                     low, r, heavy):
                            extra = _move_delta(held, p, heavy, r) + _move_delta(held, q, r, heavy)
                            if budget < 0 or extra <= 0 or moves + extra <= budget:
                                fits = peak <= limit
                                if ((fits and not best_fits) or (fits == best_fits and (extra < best_extra or (
                                        extra == best_extra and peak < best_peak)))):
                                    best_i, best_r, best_j = i, r, j
                                    best_fits, best_extra, best_peak = fits, extra, peak
                    j = nxt[j]
            i = nxt[i]
    return best_i, best_r, best_j, best_fits
