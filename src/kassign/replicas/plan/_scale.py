"""Goal plans where the integer programs do not fit: flows for the counts, swaps for bytes and rates, in order.

Used by ``plan_reassignment`` for every goal plan above ``_lexi.SETTINGS.variables`` program variables, and as
the first plan (the seed) of the programs where they fit. Everything is int64 arrays; the loops are numba
kernels (``_swap_phase``, ``_move_phase``, ``_leader_phase``, ``_leader_counts``). The steps, each with its
rule:

1. **Counts and topic spread (exact where the flows succeed).** The replica window ``[m*, M*]`` is the count
   flow's (``_bounds``; under ``max_replicas`` the capped window of ``_solve.solve_replicas_capped``, computed
   only where a cap is below ``M*``). Each topic ``t`` with ``R_t`` replicas then gets ``c[t, b]`` in
   ``[floor(R_t / n), ceil(R_t / n)]`` on every broker ``b``, jointly with every broker's total in its window
   and every (topic, rack) total within what its partitions' rack rules allow: a transportation problem
   (topics -> (topic, rack) -> brokers; two laminar families of rows, so totally unimodular and its linear
   program's vertex is integral; solved as the min-cost flow it is, ``_transport``, linear in topics where
   HiGHS's simplex on the same rows took 22 s at 1,000 topics) whose cost is the moves it forces, ``sum max(0,
   c[t, b] - now[t, b])`` (a proven lower bound on the moves of every plan with replica counts and topic
   spread at their optimum: ``moves_bound``). Then one count flow per topic (``_flow.solve_window`` with
   ``lo = hi = c[t, :]``: fewest moves, current leaders' replicas kept where moves tie). Both goals are then at
   their ideal, ``replicas`` at ``M* - m*`` and ``topic-spread`` at the number of topics whose replicas do not
   divide by ``n``: proven optimal. Where the transportation problem or a topic's flow has no solution the
   whole count flow is used instead (counts exact, topic spread not aimed at; the summary says so).
   Example: one topic of 4 partitions, rf 2, brokers 0-2 (no racks), all on 0 and 1: ``R = 8``, each broker
   gets 2 or 3; the flow gives ``[m*, M*] = [2, 3]``; the transport gives broker 2 two (it holds none: 2 forced
   moves, the bound), brokers 0 and 1 three each; the topic's flow moves two replicas from 0 and 1 to 2.
2. **Hard rooms, disk, then network in, by swaps that keep every count.** A swap exchanges a replica of
   partition ``p`` (topic ``t``) on broker ``A`` with one of ``q`` (the same topic) on ``B``: every broker's
   replica count and every (topic, broker) count stay as they are, so step 1's goals stay exact. Each phase
   has a resource (bytes or bytes in), a target per broker (its room in the hard phases; the tolerance limit
   ``floor((1 + tolerance) x mean)`` in ``disk`` and ``network-in``) and ceilings no step may cross (hard rooms of both resources, and the level
   an earlier goal reached: network in never pushes a broker's bytes above ``max(disk limit, largest broker
   after the disk phase)``). The broker A furthest above its target sheds, to receivers with the most room
   first (the first receiver offering any gain is taken): per topic, for each replica p of A (largest first),
   a binary search in B's (topic, broker) list, kept sorted by weight, finds the q whose difference
   ``d = w[p] - w[q] > 0`` comes nearest to ``min(A's excess, B's room)``; the pair taken removes the most excess
   in all (A's excess shed, less what B ends above its target), then leaves the lower larger load of the two,
   then adds the fewest moves. A pair removing no excess is taken only where it lowers the larger of the two
   loads. A broker nothing helps is set aside; in the ``disk`` and ``network-in`` phases (one limit for every
   broker) the phase ends when the largest broker is set aside: the goal's measure is its load, and every
   other broker is below it. Phases: the disk room and the network room (hard), ``disk``, ``network-in``.
   Example: topic t has replicas of 9 and 1 GB on A (load 20, target 12: excess 8) and of 4 and 2 GB on B
   (load 6: room 6); the pairs with d > 0 are 9 for 4 (d = 5: A 15, B 11, 5 removed) and 9 for 2 (d = 7: A 13,
   B 13, 8 shed less 1 above B's target, 6 removed): 9 for 2 is taken, and A and B each shed 1 later.
3. **Where swaps cannot, moves.** A hard room still broken after its swaps, or ``disk`` / ``network-in``
   still above both its tolerance and its bound where the goal comes before ``replicas`` and
   ``topic-spread`` in the goals' order (the default puts ``disk`` first), is lowered by moving single
   replicas to valid receivers within every room and ``max_replicas`` (fewest replicas on the receiver first):
   counts are traded for the earlier goal, as the order asks. For ``disk`` and ``network-in`` the moves aim at
   ``max(tolerance limit, bound)``, not the limit: the goal's measure is the largest broker, which cannot go
   below the bound, so lowering brokers between the two would trade counts for nothing the goal measures (the
   10,000-partition bench: 855 moves instead of 1,148, ``replicas`` 288 and ``topic-spread`` 317 instead of 295
   and 327, ``disk`` at its bound either way).
4. **Leaders.** The leader flow (``_solve.solve_leaders``: exact smallest leader spread for these replica
   sets, then the fewest changes). With rates, ``leader-bytes-in`` by leadership swaps that keep every
   leader count (p led by A goes to B, q led by B goes to A, both holding both; chosen as the swaps above),
   then, where ``leader-bytes-in`` comes before ``leaders`` (the default) and is still above its limit, single
   hand-overs (counts traded for it, as the order asks); then leader counts are evened again by hand-overs that
   keep every broker's leader writes within the level reached (``_leader_counts``). Example: A leads p (10
   MB/s) and q (1 MB/s), B leads s (2 MB/s), both hold all three, limit 7 (mean 6.5). Swapping p for s gives A
   3 (q, s) and B 10 (p): the larger load falls from 11 to 10 and both counts stay (2 and 1), so it is taken
   (handing q to B would reach 10 too, but changes the counts: swaps are tried first). B at 10 is then above the
   limit but nothing lowers it (p alone is 10): leader-bytes-in ends at 10 / 6.5, its bound (the largest
   partition's rate). Where the largest partition's rate is far above the mean (the benchmark's), reaching
   that bound leaves its leader leading it alone, so the leader spread is about the cluster's average leader
   count: that is the order's doing (``leaders`` last); ``goals`` with ``leaders`` before
   ``leader-bytes-in`` keeps the counts instead (swaps only).
5. **Fewest moves** is the tie-break inside every choice above (swaps undoing moves first), and
   ``moves_bound`` is proven where step 1 was exact and no counts were traded.

What is proven and reported: ``replicas`` and (where step 1's flows succeeded) ``topic-spread`` are optimal;
every other bound is ``_goals.cheap_bound`` (true over every valid plan); a goal at its ideal is met. Every
hard goal is checked in integers at the end; one still broken raises ``PlanError`` in one line (the goal, the
broker, by how much; "not proven impossible" unless a flow proved it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
import numpy as np
from numba import njit

from kassign.core.units import human_bytes
from kassign.replicas.plan._flow import solve_window
from kassign.replicas.plan._goals import NONE, Context, loads, ratio_limit
from kassign.replicas.plan._model import PlanError
from kassign.replicas.plan._solve import ReplicaStage, solve_leaders, solve_replicas_capped
from kassign.replicas.plan._transport import transport

ROOMLESS = np.int64(1) << np.int64(62)


@dataclass
class ScalePlan:
    assign: np.ndarray  # int64[P, W] target indexes, -1 empty
    leaders: np.ndarray  # int64[P]
    window: tuple[int, int]
    window_exact: bool
    topics_exact: bool
    moves_bound: int | None
    optimal: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    traded: list[str] = field(default_factory=list)  # goals that moved replicas (counts traded for them)


# -- step 1: counts and topic spread ------------------------------------------------------------------------------

def _window(ctx: Context, stage: ReplicaStage) -> tuple[np.ndarray, np.ndarray, tuple[int, int], bool]:
    """Per-broker [lo, hi] replica bounds: the count window, within max_replicas where replica-capacity is in force."""
    n, P = ctx.n, ctx.problem.num_partitions
    lo, hi = stage.window()
    caps = ctx.max_replicas if "replica-capacity" in ctx.goals else np.full(n, NONE, np.int64)
    capped = np.where(caps < 0, P, np.minimum(caps, P)).astype(np.int64)
    if (capped >= hi).all():  # the uncapped optimum fits under every cap: it is the capped optimum too
        return np.full(n, lo, np.int64), np.full(n, hi, np.int64), (lo, hi), True
    _, info = solve_replicas_capped(stage, caps)  # exact; raises PlanError where the caps leave no room
    lo, hi = info["window"]
    return np.minimum(lo, capped), np.minimum(hi, capped), (lo, hi), True


def topic_counts(ctx: Context, stage: ReplicaStage, lo_b: np.ndarray, hi_b: np.ndarray) \
        -> tuple[np.ndarray, int] | None:
    """``(c[t, b], moves_bound)``: every topic's replicas per broker within [floor, ceil] of its ideal, every broker
    within [lo_b, hi_b], every (topic, rack) total within its partitions' rack rules, fewest forced moves; None
    where no such counts exist (or the solver fails)."""
    problem, n = ctx.problem, ctx.n
    T = len(problem.topics)
    topic_of, rf = problem.topic_of, problem.rf
    R = np.bincount(topic_of, weights=rf, minlength=T).astype(np.int64)
    fl = R // n
    r = R - fl * n
    rows, cols = np.nonzero(stage.pref >= 0)
    cur = np.bincount(topic_of[rows] * n + stage.pref[rows, cols], minlength=T * n).reshape(T, n)
    F = fl.sum()
    if (hi_b - F < 0).any() or (lo_b - F > r.sum()).any():
        return None
    G = ctx.num_groups if ctx.rack_aware else 1
    gob = ctx.group_of_broker if ctx.rack_aware else np.zeros(n, np.int64)
    gsize = np.bincount(gob, minlength=G)
    if G > 1:
        Lg = np.bincount(topic_of, weights=stage.low, minlength=T).astype(np.int64)[:, None] * np.ones(G, np.int64)
        Ug = np.zeros((T, G), np.int64)
        for g in range(G):
            Ug[:, g] = np.bincount(topic_of, weights=np.minimum(stage.cap, gsize[g]), minlength=T).astype(np.int64)
        base = fl[:, None] * gsize[None, :]
        if ((r == 0)[:, None] & ((base < Lg) | (base > Ug))).any():
            return None
    free = np.flatnonzero(r > 0)
    forced = int(np.maximum(fl[:, None] - cur, 0).sum())
    if len(free) == 0:
        c = np.repeat(fl[:, None], n, axis=1)
        tot = c.sum(axis=0)
        return (c, forced) if ((tot >= lo_b) & (tot <= hi_b)).all() else None
    cost = (cur[free] <= fl[free, None]).astype(np.int64)
    if G > 1:
        base = fl[free, None] * gsize[None, :]
        glo, ghi = Lg[free] - base, Ug[free] - base
    else:
        glo, ghi = np.zeros((len(free), 1), np.int64), r[free, None].astype(np.int64)
    x = transport(r[free], gob, glo, ghi, lo_b - F, hi_b - F, cost)
    if x is None:
        return None
    c = np.repeat(fl[:, None], n, axis=1)
    c[free] += x
    # checked again in integers
    tot = c.sum(axis=0)
    if not ((tot >= lo_b) & (tot <= hi_b)).all() or not (c.sum(axis=1) == R).all():
        return None
    if G > 1:
        S = np.zeros((T, G), np.int64)
        for g in range(G):
            S[:, g] = c[:, gob == g].sum(axis=1)
        if ((S < Lg) | (S > Ug)).any():
            return None
    return c, forced + int((np.maximum(c - cur, 0) - np.maximum(fl[:, None] - cur, 0)).sum())


def counts_and_topics(ctx: Context, stage: ReplicaStage) -> tuple[np.ndarray, tuple[int, int], bool, int | None]:
    """Step 1: ``(assign, window, topics exact, moves bound)``."""
    lo_b, hi_b, window, _ = _window(ctx, stage)
    problem = ctx.problem
    found = topic_counts(ctx, stage, lo_b, hi_b)
    lay = stage.layout
    if found is not None:
        c, bound = found
        order = np.argsort(problem.topic_of, kind="stable")
        starts = np.concatenate([[0], np.cumsum(np.bincount(problem.topic_of, minlength=len(problem.topics)))])
        assign = stage.start.copy()
        ok = True
        for t in range(len(problem.topics)):
            idx = order[starts[t]:starts[t + 1]]
            if len(idx) == 0:
                continue
            sub = stage.start[idx].copy()
            good, _ = solve_window(sub, stage.rf[idx], stage.cap[idx], stage.low[idx], lay.num_groups,
                                   np.tile(np.arange(lay.num_groups, dtype=np.int64), len(idx)), lay.list_start,
                                   lay.list_items, stage.pref[idx], stage.unit_cost[idx], lay.group_of_broker,
                                   c[t].astype(np.int64), c[t].astype(np.int64), np.zeros(ctx.n, np.int64))
            if not good:
                ok = False
                break
            assign[idx] = sub
        if ok:
            return assign, window, True, bound
    assign = stage.start.copy()
    good, _ = solve_window(assign, stage.rf, stage.cap, stage.low, lay.num_groups, stage.list_of, lay.list_start,
                           lay.list_items, stage.pref, stage.unit_cost, lay.group_of_broker, lo_b, hi_b,
                           np.zeros(ctx.n, np.int64))
    if not good:  # pragma: no cover - the window is feasible by construction
        raise AssertionError("the replica window admits no flow")
    return assign, window, False, None


# -- numba helpers -------------------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _has(row, b):
    for j in range(len(row)):
        if row[j] == b:
            return True
    return False


@njit(cache=True, inline="always")
def _in_group(row, gob, g):
    c = 0
    for j in range(len(row)):
        if row[j] >= 0 and gob[row[j]] == g:
            c += 1
    return c


@njit(cache=True, inline="always")
def _can_move(assign, p, src, dst, gob, cap, low):
    """p's replica on src may go to dst: dst does not hold p, and the rack rule still holds."""
    row = assign[p]
    if _has(row, dst):
        return False
    ga, gb = gob[src], gob[dst]
    if ga == gb:
        return True
    if _in_group(row, gob, gb) + 1 > cap[p]:
        return False
    return _in_group(row, gob, ga) - 1 >= low[p]


@njit(cache=True, inline="always")
def _delta(held, p, src, dst):
    """Change in moved replicas when p's replica goes from src to dst."""
    return (0 if _has(held[p], dst) else 1) - (0 if _has(held[p], src) else 1)


@njit(cache=True, inline="always")
def _better(t, s, x, d, bt, bs, bx, bd):
    """Key (tier, score, -extra moves, -d), larger is better."""
    if t != bt:
        return t > bt
    if s != bs:
        return s > bs
    if x != bx:
        return x < bx
    return d < bd


@njit(cache=True, inline="always")
def _better_k(t, s, x, d, k, bt, bs, bx, bd, bk):
    """``_better``, then the candidate gathered first (the order a plain scan would meet them in)."""
    if t != bt or s != bs or x != bx or d != bd:
        return _better(t, s, x, d, bt, bs, bx, bd)
    return k < bk


@njit(cache=True, inline="always")
def _better2(t, s, peak, x, bt, bs, bpeak, bx):
    """Key (tier, score, -peak, -extra moves), larger is better."""
    if t != bt:
        return t > bt
    if s != bs:
        return s > bs
    if peak != bpeak:
        return peak < bpeak
    return x < bx


@njit(cache=True, inline="always")
def _set(row, old, new):
    for j in range(len(row)):
        if row[j] == old:
            row[j] = new
            return
    raise RuntimeError("broker does not hold the partition")


# -- step 2: swaps ---------------------------------------------------------------------------------------------

@njit(cache=True)
def _swap_phase(assign, held, gob, cap, low, entries, seg_start, n, T, wp, ws, Lp, Ls, target, ceil_p, ceil_s,
                max_steps, rounds, receivers, stats, only_max):
    """Swaps of same-topic replicas (see the module docstring, step 2). ``entries``: replica slots (p * W + j)
    grouped by (topic, broker) (``seg_start[t * n + b]``), each group sorted by ``wp``. Loads ``Lp`` (the
    resource lowered) and ``Ls`` (the other) are kept up to date. Returns (swaps, change in moves). A's group is
    scanned largest first and left as soon as B's smallest replica of the topic is at least as large (no later p
    has a ``d > 0``); the rack test of p is made once per p, before the search."""
    W = assign.shape[1]
    swaps = 0
    dmoves = 0
    stuck = np.zeros(n, np.bool_)
    key = np.empty(n, np.int64)
    for _ in range(rounds):
        for b in range(n):
            stuck[b] = False
        before = swaps
        while swaps < max_steps:
            A = -1
            e = np.int64(0)
            for b in range(n):
                if not stuck[b] and Lp[b] - target[b] > e:
                    e = Lp[b] - target[b]
                    A = b
            if A < 0:
                break
            for b in range(n):
                key[b] = Lp[b] - target[b]
            order = np.argsort(key)
            bt, bs, bx, bd = 0, np.int64(0), 9, np.int64(1) << np.int64(62)
            bi, bk, bB = -1, -1, -1
            tried = 0
            for kk in range(n):
                B = order[kk]
                if B == A:
                    continue
                room = target[B] - Lp[B]
                if room <= 0 and bt == 2:
                    break
                if room <= 0 and Lp[B] >= Lp[A] - 1:
                    break
                if tried >= receivers and bt > 0:
                    break
                tried += 1
                dstar = min(e, room) if room > 0 else (Lp[A] - Lp[B]) // 2
                if dstar <= 0:
                    continue
                for t in range(T):
                    sA = seg_start[t * n + A]
                    eA = seg_start[t * n + A + 1]
                    sB = seg_start[t * n + B]
                    eB = seg_start[t * n + B + 1]
                    if sA == eA or sB == eB:
                        continue
                    for i in range(eA - 1, sA - 1, -1):
                        p = entries[i] // W
                        w = wp[p]
                        if w <= 0 or (bt == 2 and w < bs):
                            break  # d < w: no better swap in this group
                        if wp[entries[sB] // W] >= w:
                            break  # B's smallest is at least w: no d > 0 for this p or any smaller one
                        if not _can_move(assign, p, A, B, gob, cap, low):
                            continue  # (the same test as below, for every q: once per p)
                        # first q in B's group with wp[q] >= w - dstar
                        lo_, hi_ = sB, eB
                        goal = w - dstar
                        while lo_ < hi_:
                            mid = (lo_ + hi_) >> 1
                            if wp[entries[mid] // W] < goal:
                                lo_ = mid + 1
                            else:
                                hi_ = mid
                        for k in range(max(sB, lo_ - 1), min(eB, lo_ + 2)):
                            q = entries[k] // W
                            d = w - wp[q]
                            if d <= 0 or q == p:
                                continue
                            nb = Lp[B] + d
                            if nb > ceil_p[B]:
                                continue
                            # excess removed in all: A's, less what B gets above its target
                            gain = min(d, e) - max(0, nb - target[B]) + max(0, Lp[B] - target[B])
                            peak = max(Lp[A] - d, nb)
                            if gain > 0:
                                tier = 2
                                score = gain
                            elif nb < Lp[A]:
                                tier = 1
                                score = -peak
                            else:
                                continue
                            ds = ws[p] - ws[q]
                            if ds > 0 and Ls[B] + ds > ceil_s[B]:
                                continue
                            if ds < 0 and Ls[A] - ds > ceil_s[A]:
                                continue
                            if not _can_move(assign, q, B, A, gob, cap, low):
                                continue
                            x = _delta(held, p, A, B) + _delta(held, q, B, A)
                            if _better2(tier, score, peak, x, bt, bs, bd, bx):
                                bt, bs, bx, bd = tier, score, x, peak
                                bi, bk, bB = i, k, B
                if bt == 2 and bs == e:
                    break
            if bi < 0:
                stuck[A] = True
                stats[3] += 1
                if only_max:
                    break  # the largest load cannot come down: the goal's measure is final
                continue
            if bt == 2 and bs == e:
                stats[0] += 1
            elif bt == 2:
                stats[1] += 1
            else:
                stats[2] += 1
            B = bB
            sp, sq = entries[bi], entries[bk]
            p, q = sp // W, sq // W
            assign[p, sp - p * W] = B
            assign[q, sq - q * W] = A
            d = wp[p] - wp[q]
            ds = ws[p] - ws[q]
            Lp[A] -= d
            Lp[B] += d
            Ls[A] -= ds
            Ls[B] += ds
            dmoves += bx
            swaps += 1
            # q takes p's place in A's group and p q's in B's: restore each group's order
            entries[bi] = sq
            tA = bi  # bubble down within A's group
            startA = _group_start(seg_start, bi)
            while tA > startA and wp[entries[tA - 1] // W] > wp[entries[tA] // W]:
                entries[tA - 1], entries[tA] = entries[tA], entries[tA - 1]
                tA -= 1
            entries[bk] = sp
            tB = bk
            endB = _group_end(seg_start, bk)
            while tB + 1 < endB and wp[entries[tB + 1] // W] < wp[entries[tB] // W]:
                entries[tB + 1], entries[tB] = entries[tB], entries[tB + 1]
                tB += 1
        if swaps == before or only_max:
            break
    return swaps, dmoves


@njit(cache=True)
def _group_start(seg_start, i):
    lo_, hi_ = 0, len(seg_start) - 1  # the last start <= i
    while lo_ < hi_:
        mid = (lo_ + hi_ + 1) >> 1
        if seg_start[mid] <= i:
            lo_ = mid
        else:
            hi_ = mid - 1
    return seg_start[lo_]


@njit(cache=True)
def _group_end(seg_start, i):
    lo_, hi_ = 0, len(seg_start) - 1  # the first start > i
    while lo_ < hi_:
        mid = (lo_ + hi_) >> 1
        if seg_start[mid] > i:
            hi_ = mid
        else:
            lo_ = mid + 1
    return seg_start[lo_]


# -- step 3: moves -----------------------------------------------------------------------------------------------

@njit(cache=True)
def _move_phase(assign, held, gob, cap, low, n, wp, ws, Lp, Ls, count, max_count, target, ceil_p, ceil_s,
                max_steps, receivers):
    """Single replica moves lowering ``Lp`` where above ``target``, never crossing ``ceil_p``, ``ceil_s`` or
    ``max_count`` on the receiver (step 3). Per step: the broker furthest above its target; its replica and a
    receiver (most room first, ``receivers`` of them, plus every broker that held the replica before): one that
    ends within the receiver's target first (the most excess shed, then fewest replicas on the receiver, then
    fewest moves), else one lowering the larger load. Returns (moves made, change in moved replicas)."""
    P, W = assign.shape
    steps = 0
    dmoves = 0
    stuck = np.zeros(n, np.bool_)
    key = np.empty(n, np.int64)
    while steps < max_steps:
        A = -1
        e = np.int64(0)
        for b in range(n):
            if not stuck[b] and Lp[b] - target[b] > e:
                e = Lp[b] - target[b]
                A = b
        if A < 0:
            break
        for b in range(n):
            key[b] = Lp[b] - target[b]
        order = np.argsort(key)
        bt, bs, bx, bc = 0, np.int64(0), 9, np.int64(0)
        bp, bB = -1, -1
        for p in range(P):
            if not _has(assign[p], A):
                continue
            w = wp[p]
            if w <= 0 or (bt == 2 and min(w, e) < bs):
                continue  # a gain is at most min(w, e): this p cannot reach the best's
            tried = 0
            for kk in range(n + W):
                if kk < n:
                    if tried >= receivers:
                        continue  # (skipped to the brokers that held p below)
                    B = order[kk]
                else:
                    B = held[p, kk - n] if kk - n < held.shape[1] else -1
                    if B < 0:
                        continue
                if B == A:
                    continue
                nb = Lp[B] + w
                if nb > ceil_p[B] or count[B] + 1 > max_count[B]:
                    continue
                gain = min(w, e) - max(0, nb - target[B]) + max(0, Lp[B] - target[B])
                if gain <= 0 and nb >= Lp[A]:
                    continue
                if Ls[B] + ws[p] > ceil_s[B]:
                    continue
                if not _can_move(assign, p, A, B, gob, cap, low):
                    continue
                if kk < n:
                    tried += 1
                if gain > 0:
                    tier = 2
                    score = gain
                else:
                    tier = 1
                    score = -max(Lp[A] - w, nb)
                x = _delta(held, p, A, B)
                c = count[B]
                if (tier > bt or (tier == bt and (score > bs or (score == bs and (c < bc or (c == bc and x < bx)))))):
                    bt, bs, bx, bc = tier, score, x, c
                    bp, bB = p, B
        if bp < 0:
            stuck[A] = True
            continue
        _set(assign[bp], A, bB)
        Lp[A] -= wp[bp]
        Lp[bB] += wp[bp]
        Ls[A] -= ws[bp]
        Ls[bB] += ws[bp]
        count[A] -= 1
        count[bB] += 1
        dmoves += bx
        steps += 1
    return steps, dmoves


# -- step 4: leaders -------------------------------------------------------------------------------------------

@njit(cache=True)
def _held(assign, n):
    """The partitions each broker holds, ascending: ``items[start[b]:start[b + 1]]``."""
    P, W = assign.shape
    cnt = np.zeros(n + 1, np.int64)
    for p in range(P):
        for j in range(W):
            if assign[p, j] >= 0:
                cnt[assign[p, j] + 1] += 1
    start = np.cumsum(cnt)
    fill = start[:n].copy()
    items = np.empty(start[n], np.int64)
    for p in range(P):
        for j in range(W):
            b = assign[p, j]
            if b >= 0:
                items[fill[b]] = p
                fill[b] += 1
    return start, items


@njit(cache=True)
def _leader_phase(assign, leaders, now, rates, n, target, handover, max_steps):
    """Lower leader writes above ``target`` by leadership swaps (counts kept) and, with ``handover``, single
    hand-overs (step 4). Per step: the broker A furthest above the target; candidates are partitions it leads
    (each other holder B a receiver) and partitions it holds that B leads. Order: a swap ending within B's
    target, a hand-over ending within it, a swap lowering the larger load, a hand-over lowering it; among equals
    the most excess shed, then the fewest leader changes. Returns the steps taken.

    Cost: A's candidates are gathered in linear time when A changes (``_gather``, from lists by rate made once)
    and scanned largest rate first; a candidate whose receiver has no room for a better tier is skipped, and the
    scan stops once the best tier-4 score is above the next candidate's rate (its swaps and hand-overs score at
    most that). Both filters only drop candidates that cannot win, so the rule is unchanged."""
    P, W = assign.shape
    L = np.zeros(n, np.int64)
    for p in range(P):
        L[leaders[p]] += rates[p]
    start, items = _by_rate(assign, rates, n)  # replica sets are fixed here
    cnt = np.empty(n + 1, np.int64)
    qS = np.zeros(n + 1, np.int64)
    stuck = np.zeros(n, np.bool_)
    fresh = True
    steps = 0
    maxc = 0
    for b in range(n):
        maxc = max(maxc, start[b + 1] - start[b])
    pB = np.empty(maxc * W, np.int64)
    pR = np.empty(maxc * W, np.int64)
    pI = np.empty(maxc * W, np.int64)
    pK = np.empty(maxc * W, np.int64)
    qB = np.empty(maxc, np.int64)
    qR = np.empty(maxc, np.int64)
    qI = np.empty(maxc, np.int64)
    last = -1
    np_ = 0
    nq = 0
    while steps < max_steps:
        A = -1
        e = np.int64(0)
        for b in range(n):
            if not stuck[b] and L[b] - target > e:
                e = L[b] - target
                A = b
        if A < 0:
            break
        if A != last:  # the same broker again: its candidates as gathered (stale ones are skipped below)
            np_, nq = _gather(A, n, start, items, leaders, assign, rates, pB, pR, pI, pK, qB, qR, qI, qS, cnt)
            last = A
            fresh = True
        bt, bs, bx, bd, bk = 0, np.int64(0), 9, np.int64(0), np.int64(1) << 62
        bp, bq, bB = -1, -1, -1
        for k in range(np_):
            p = pI[k]
            r = pR[k]
            B = pB[k]
            if bt == 4 and r < bs:
                break  # every step below scores at most r (d <= r): none reaches the best's tier-4 score
            if r <= 0 or leaders[p] != A:
                continue
            pk = pK[k]
            room = target - L[B]
            if (bt == 4 and room < bs) or (bt >= 3 and room <= 0):
                continue  # a tier-4 swap needs d <= room (and a tier-3 hand-over r <= room): none beats the best
            # hand-over
            if handover:
                nb = L[B] + r
                if nb < L[A]:
                    if nb <= target:
                        tier, score = 3, min(r, e)
                    else:
                        tier, score = 1, -max(L[A] - r, nb)
                    x = (1 if B != now[p] else 0) - (1 if A != now[p] else 0)
                    if _better_k(tier, score, x, r, pk, bt, bs, bx, bd, bk):
                        bt, bs, bx, bd, bk = tier, score, x, r, pk
                        bp, bq, bB = p, -1, B
            # swaps with q led by B, held by A
            dstar = min(e, room) if room > 0 else (L[A] - L[B]) // 2
            if dstar <= 0:
                continue
            sB = qS[B]  # B's bucket of the second list
            eB = qS[B + 1]
            if sB == eB:
                continue
            goal = r - dstar
            lo_, hi_ = sB, eB
            while lo_ < hi_:
                mid = (lo_ + hi_) >> 1
                if qR[mid] < goal:
                    lo_ = mid + 1
                else:
                    hi_ = mid
            for m in range(max(sB, lo_ - 2), min(eB, lo_ + 3)):
                q = qI[m]
                if leaders[q] != B:
                    continue
                d = r - qR[m]
                if d <= 0 or q == p:
                    continue
                nb = L[B] + d
                if nb >= L[A]:
                    continue
                if nb <= target:
                    tier, score = 4, min(d, e)
                else:
                    tier, score = 2, -max(L[A] - d, nb)
                x = ((1 if B != now[p] else 0) - (1 if A != now[p] else 0)
                     + (1 if A != now[q] else 0) - (1 if B != now[q] else 0))
                if _better_k(tier, score, x, d, pk, bt, bs, bx, bd, bk):
                    bt, bs, bx, bd, bk = tier, score, x, d, pk
                    bp, bq, bB = p, q, B
        if bp < 0:
            if not fresh:  # gathered before the last steps: gather afresh before setting A aside
                last = -1
                continue
            stuck[A] = True
            continue
        fresh = False
        B = bB
        leaders[bp] = B
        L[A] -= rates[bp]
        L[B] += rates[bp]
        if bq >= 0:
            leaders[bq] = A
            L[B] -= rates[bq]
            L[A] += rates[bq]
        steps += 1
    return steps


@njit(cache=True)
def _by_rate(assign, rates, n):
    """The partitions each broker holds, ``items[start[b]:start[b + 1]]``, by rate, largest first (then by
    partition)."""
    P, W = assign.shape
    order = np.argsort(-rates, kind="mergesort")
    cnt = np.zeros(n + 1, np.int64)
    for p in range(P):
        for j in range(W):
            if assign[p, j] >= 0:
                cnt[assign[p, j] + 1] += 1
    start = np.cumsum(cnt)
    fill = start[:n].copy()
    items = np.empty(start[n], np.int64)
    for i in range(P):
        p = order[i]
        for j in range(W):
            b = assign[p, j]
            if b >= 0:
                items[fill[b]] = p
                fill[b] += 1
    return start, items


@njit(cache=True)
def _gather(A, n, start, items, leaders, assign, rates, pB, pR, pI, pK, qB, qR, qI, qS, cnt):
    """A's leadership candidates: (holder, rate, partition) of each partition A leads, per other holder, by rate,
    largest first (``pK = p * W + j``: the order a scan of partitions and slots would meet them in, the
    tie-break); and (leader, rate, partition) of each partition A holds but another broker leads, by (leader,
    rate), leader b's in ``[qS[b], qS[b + 1])``. Linear in A's replicas: ``items`` lists them by rate already (``_by_rate``); the second list is a
    counting sort by leader of that order reversed."""
    W = assign.shape[1]
    np_ = 0
    nq = 0
    for b in range(n + 1):
        cnt[b] = 0
    for k in range(start[A], start[A + 1]):
        p = items[k]
        if leaders[p] == A:
            for j in range(W):
                b = assign[p, j]
                if b >= 0 and b != A:
                    pB[np_] = b
                    pR[np_] = rates[p]
                    pI[np_] = p
                    pK[np_] = p * W + j
                    np_ += 1
        else:
            cnt[leaders[p] + 1] += 1
            nq += 1
    for b in range(n):
        cnt[b + 1] += cnt[b]
    for b in range(n + 1):
        qS[b] = cnt[b]  # leader b's bucket: [qS[b], qS[b + 1])
    for k in range(start[A + 1] - 1, start[A] - 1, -1):
        p = items[k]
        if leaders[p] != A:
            i = cnt[leaders[p]]
            qB[i] = leaders[p]
            qR[i] = rates[p]
            qI[i] = p
            cnt[leaders[p]] += 1
    return np_, nq


@njit(cache=True)
def _leader_counts(assign, leaders, now, rates, n, ceiling, max_steps):
    """Even leader counts by hand-overs that keep every broker's leader writes at most ``ceiling`` (step 4):
    per step the partition led by a broker with the most leaders handed to a holder with the fewest, where that
    lowers the sum of squared counts (receiver ends below the giver); fewest leader changes among equals."""
    P, W = assign.shape
    L = np.zeros(n, np.int64)
    c = np.zeros(n, np.int64)
    for p in range(P):
        L[leaders[p]] += rates[p]
        c[leaders[p]] += 1
    start, items = _held(assign, n)  # only A's partitions are looked at: A leads only what it holds
    steps = 0
    stuck = np.zeros(n, np.bool_)
    while steps < max_steps:
        A = -1
        for b in range(n):
            if not stuck[b] and (A < 0 or c[b] > c[A]):
                A = b
        if A < 0:
            break
        bp, bB, bc, bx = -1, -1, np.int64(1) << 40, 9
        for k in range(start[A], start[A + 1]):
            p = items[k]
            if leaders[p] != A:
                continue
            for j in range(W):
                B = assign[p, j]
                if B < 0 or B == A or c[B] + 1 >= c[A] or L[B] + rates[p] > ceiling:
                    continue
                x = (1 if B != now[p] else 0) - (1 if A != now[p] else 0)
                if c[B] < bc or (c[B] == bc and x < bx):
                    bp, bB, bc, bx = p, B, c[B], x
        if bp < 0:
            stuck[A] = True
            continue
        leaders[bp] = bB
        L[A] -= rates[bp]
        L[bB] += rates[bp]
        c[A] -= 1
        c[bB] += 1
        steps += 1
    return steps


# -- the plan ----------------------------------------------------------------------------------------------------

def _segments(ctx: Context, assign: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Replica slots grouped by (topic, broker), each group sorted by ``w``; the groups' starts."""
    P, W = assign.shape
    n = ctx.n
    rows, cols = np.nonzero(assign >= 0)
    grp = ctx.problem.topic_of[rows] * n + assign[rows, cols]
    order = np.lexsort((w[rows], grp))
    entries = (rows * W + cols)[order].astype(np.int64)
    seg_start = np.zeros(len(ctx.problem.topics) * n + 1, np.int64)
    np.cumsum(np.bincount(grp, minlength=len(ctx.problem.topics) * n), out=seg_start[1:])
    return entries, seg_start


def _before(ctx: Context, goal: str, later: tuple[str, ...]) -> bool:
    """Whether ``goal`` comes before every goal of ``later`` (in force) in the goals' order."""
    order = ctx.goals
    return all(order.index(goal) < order.index(g) for g in later if g in order)


def plan_scale(ctx: Context, stage: ReplicaStage) -> ScalePlan:
    """The scale path (module docstring). Raises PlanError where a hard goal is proven impossible (replica
    capacity, by the capped flow) or still broken after every step."""
    problem, n = ctx.problem, ctx.n
    P = problem.num_partitions
    assign, window, topics_exact, moves_bound = counts_and_topics(ctx, stage)
    out = ScalePlan(assign, np.zeros(P, np.int64), window, True, topics_exact, moves_bound)
    out.optimal["replicas"] = True
    out.optimal["topic-spread"] = topics_exact
    if not topics_exact:
        out.notes.append("topic-spread: no per-topic counts fit the replica window and the rack rules together (or a "
                         "topic's flow failed); the count flow alone was used, topic spread not aimed at")
    held = stage.pref
    gob, cap, low = ctx.group_of_broker, stage.cap, stage.low
    zeros = np.zeros(P, np.int64)
    sizes = ctx.sizes.astype(np.int64) if ctx.sizes is not None else zeros
    rates = ctx.rates.astype(np.int64) if ctx.rates is not None else zeros
    load = loads(ctx, assign, np.zeros(P, np.int64))
    Ld = load["bytes"].copy() if ctx.sizes is not None else np.zeros(n, np.int64)
    Ln = load["in"].copy() if ctx.rates is not None else np.zeros(n, np.int64)
    room_d = np.full(n, ROOMLESS, np.int64)
    if "disk-capacity" in ctx.goals:
        on = ctx.disk_room >= 0
        room_d[on] = np.maximum(ctx.disk_room[on] - ctx.disk_other[on], 0)
    room_n = np.full(n, ROOMLESS, np.int64)
    if "network-capacity" in ctx.goals:
        on = ctx.net_in >= 0
        room_n[on] = ctx.net_in[on]
    max_count = np.full(n, P, np.int64)
    if "replica-capacity" in ctx.goals:
        on = ctx.max_replicas >= 0
        max_count[on] = ctx.max_replicas[on]
    T = len(problem.topics)
    steps = 20 * P + 1000
    moved = [0]

    def swaps(wp: np.ndarray, ws: np.ndarray, Lp: np.ndarray, Ls: np.ndarray, target: np.ndarray, ceil_p: np.ndarray,
              ceil_s: np.ndarray, only_max: bool = False) -> None:
        entries, seg_start = _segments(ctx, assign, wp)
        stats = np.zeros(4, np.int64)
        _, dm = _swap_phase(assign, held, gob, cap, low, entries, seg_start, n, T, wp, ws, Lp, Ls, target, ceil_p,
                            ceil_s, steps, 3, 1, stats, only_max)
        moved[0] += dm

    def moves(wp: np.ndarray, ws: np.ndarray, Lp: np.ndarray, Ls: np.ndarray, target: np.ndarray,
              ceil_p: np.ndarray, ceil_s: np.ndarray) -> int:
        count = np.bincount(assign[assign >= 0], minlength=n).astype(np.int64)
        made, dm = _move_phase(assign, held, gob, cap, low, n, wp, ws, Ld if wp is sizes else Ln,
                               Ln if wp is sizes else Ld, count, max_count, target, ceil_p, ceil_s, steps, 16)
        moved[0] += dm
        return made

    # hard rooms: swaps, then moves where swaps cannot
    if "disk-capacity" in ctx.goals and (Ld > room_d).any():
        swaps(sizes, rates, Ld, Ln, room_d, room_d, room_n)
    if "network-capacity" in ctx.goals and (Ln > room_n).any():
        swaps(rates, sizes, Ln, Ld, room_n, room_n, room_d)
    for goal, over in (("disk-capacity", lambda: (Ld > room_d).any()), ("network-capacity", lambda: (Ln > room_n).any())):
        if goal in ctx.goals and over():
            if goal == "disk-capacity":
                made = moves(sizes, rates, Ld, Ln, room_d, room_d, room_n)
            else:
                made = moves(rates, sizes, Ln, Ld, room_n, room_n, room_d)
            if made:
                out.traded.append(goal)
    # disk
    if "disk" in ctx.goals:
        limit = ratio_limit(ctx, "disk")
        target = np.full(n, limit, np.int64)
        swaps(sizes, rates, Ld, Ln, target, room_d, room_n, True)
        floor = _cheap_top(ctx, "disk")
        if Ld.max() > max(limit, floor) and _before(ctx, "disk", ("replicas", "topic-spread")):
            # only the brokers above the level the goal can reach move: the measure is the largest broker
            if moves(sizes, rates, Ld, Ln, np.full(n, max(limit, floor), np.int64), room_d, room_n):
                out.traded.append("disk")
                swaps(sizes, rates, Ld, Ln, target, room_d, room_n, True)
    # network in: bytes kept at what disk reached
    if "network-in" in ctx.goals:
        keep_d = np.minimum(room_d, max(ratio_limit(ctx, "disk"), int(Ld.max()))) if "disk" in ctx.goals else room_d
        limit = ratio_limit(ctx, "network-in")
        target = np.full(n, limit, np.int64)
        swaps(rates, sizes, Ln, Ld, target, room_n, keep_d, True)
        floor = _cheap_top(ctx, "network-in")
        if Ln.max() > max(limit, floor) and _before(ctx, "network-in", ("replicas", "topic-spread")):
            if moves(rates, sizes, Ln, Ld, np.full(n, max(limit, floor), np.int64), room_n, keep_d):
                out.traded.append("network-in")
                swaps(rates, sizes, Ln, Ld, target, room_n, keep_d, True)
    if out.traded:
        out.moves_bound = None
        counts = np.bincount(assign[assign >= 0], minlength=n)
        if int(counts.max() - counts.min()) > window[1] - window[0]:
            out.optimal["replicas"] = False
        out.optimal["topic-spread"] = False
        out.notes.append(f"replica counts traded for {', '.join(out.traded)} (earlier in the goals' order): moves "
                         "beyond the count flow's")
    # leaders
    leaders, _ = solve_leaders(assign, stage.pref[:, 0], n)
    leaders = leaders.astype(np.int64)
    if "leader-bytes-in" in ctx.goals:
        limit = ratio_limit(ctx, "leader-bytes-in")
        now = stage.pref[:, 0].astype(np.int64)
        _leader_phase(assign, leaders, now, rates, n, limit, False, steps)
        first = "leaders" not in ctx.goals or _before(ctx, "leader-bytes-in", ("leaders",))
        top = int(np.bincount(leaders, weights=rates, minlength=n).max()) if P else 0
        if first and top > limit:
            _leader_phase(assign, leaders, now, rates, n, limit, True, steps)
            top = int(np.bincount(leaders, weights=rates, minlength=n).astype(np.int64).max())
            if "leaders" in ctx.goals:
                _leader_counts(assign, leaders, now, rates, n, max(limit, top), steps)
    out.assign = assign
    out.leaders = leaders
    _check_hard(ctx, assign, leaders, room_d, room_n)
    return out


def _cheap_top(ctx: Context, goal: str) -> int:
    """The cheap bound of a ratio goal as a load (the largest partition's figure, or the mean)."""
    w = ctx.sizes if goal == "disk" else ctx.rates
    total = int((w * ctx.problem.rf).sum())
    return max(int(math.ceil(total / ctx.n)), int(w.max(initial=0)))


def _check_hard(ctx: Context, assign: np.ndarray, leaders: np.ndarray, room_d: np.ndarray,
                room_n: np.ndarray) -> None:
    """Every hard goal in integers; one line naming the goal, the broker and the amount where one is broken."""
    load = loads(ctx, assign, leaders)
    ids = ctx.problem.targets
    checks = []
    if "disk-capacity" in ctx.goals:
        checks.append(("disk-capacity", load["bytes"], room_d, human_bytes))
    if "replica-capacity" in ctx.goals:
        lim = np.where(ctx.max_replicas >= 0, ctx.max_replicas, ROOMLESS)
        checks.append(("replica-capacity", load["replicas"], lim, lambda v: f"{int(v)} replica(s)"))
    if "network-capacity" in ctx.goals:
        checks.append(("network-capacity", load["in"], room_n, lambda v: f"{human_bytes(int(v))}/s"))
    for goal, use, lim, fmt in checks:
        over = use - lim
        b = int(np.argmax(over))
        if over[b] > 0:
            raise PlanError(f"{goal} is not met: the scale path (the input is too large for the exact goal programs) "
                            f"leaves broker {int(ids[b])} {fmt(int(over[b]))} above its limit ({fmt(int(lim[b]))}) "
                            "after swaps and moves; not proven impossible")
