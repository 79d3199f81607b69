"""Stages of a count-balanced plan: replica window, fewest moves (optionally within a budget), leaders.

Everything here is int64 arrays indexed by partition and by target broker position; the
flow engine (``_flow``) does the work, this module chooses windows and checks results.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kassign.replicas.plan._bounds import caps_for, replica_window
from kassign.replicas.plan._flow import keep_current, solve_window
from kassign.replicas.plan._model import PlanError, Problem


@dataclass
class Layout:
    """Target brokers grouped by rack (one group when no broker has a rack)."""

    num_groups: int
    group_of_broker: np.ndarray  # int64[n]
    group_sizes: list[int]
    group_names: list[str | None]
    rack_aware: bool
    list_start: np.ndarray  # CSR over groups: the brokers of each group
    list_items: np.ndarray


def layout(problem: Problem) -> Layout:
    racks = problem.target_racks
    rack_aware = racks[0] is not None
    names = sorted(set(racks)) if rack_aware else [None]
    code = {name: i for i, name in enumerate(names)}
    group_of_broker = np.array([code[r] for r in racks], np.int64)
    order = np.argsort(group_of_broker, kind="stable")
    sizes = np.bincount(group_of_broker, minlength=len(names))
    start = np.zeros(len(names) + 1, np.int64)
    np.cumsum(sizes, out=start[1:])
    return Layout(len(names), group_of_broker, sizes.tolist(), names, rack_aware, start, order.astype(np.int64))


class ReplicaStage:
    """Min-cost flows for replicas over one problem; each ``solve`` starts from the current
    replicas that may stay (the zero-cost pseudo-flow)."""

    def __init__(self, problem: Problem, lay: Layout) -> None:
        self.problem = problem
        self.layout = lay
        self.rf = problem.rf
        self.pref = problem.target_index()
        self.cap, self.low = caps_for(self.rf, lay.num_groups, lay.rack_aware)
        self.start = keep_current(self.pref, self.rf, self.cap, self.low, lay.group_of_broker, lay.num_groups)
        self.list_of = np.tile(np.arange(lay.num_groups, dtype=np.int64), len(self.rf))
        # Cost = kept followers + move * moves = sum(rf) + (move - 1) * moves - kept leaders, and
        # kept leaders range over at most P values: with move - 1 > P the flow minimises moves
        # first and, among plans with the fewest moves, keeps the most current leaders' replicas.
        move = len(self.rf) + 2
        self.unit_cost = np.full(len(self.rf), (move << 1) | 1, np.int64)
        self.n = len(problem.targets)

    def window(self) -> tuple[int, int]:
        return replica_window(self.rf, self.layout.group_sizes, self.layout.rack_aware)

    def solve(self, lo: int, hi: int) -> np.ndarray | None:
        """Fewest moves with every broker's replica count in [lo, hi]; None when impossible."""
        assign = self.start.copy()
        lows = np.full(self.n, lo, np.int64)
        highs = np.full(self.n, min(hi, len(self.rf)), np.int64)
        ok, _ = solve_window(assign, self.rf, self.cap, self.low, self.layout.num_groups, self.list_of,
                             self.layout.list_start, self.layout.list_items, self.pref, self.unit_cost,
                             self.layout.group_of_broker, lows, highs, np.zeros(self.n, np.int64))
        return assign if ok else None

    def moves(self, assign: np.ndarray) -> int:
        kept = ((assign[:, :, None] == self.pref[:, None, :]) & (assign[:, :, None] >= 0)).any(axis=2).sum()
        return int(self.rf.sum() - kept)


def replica_counts(assign: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(assign[assign >= 0], minlength=n)


def solve_replicas(stage: ReplicaStage, max_moves: int | None) -> tuple[np.ndarray, dict]:
    """The replica sets: the smallest max-min, then the fewest moves (within ``max_moves``)."""
    lo, hi = stage.window()
    best = stage.solve(lo, hi)
    if best is None:  # pragma: no cover - the window is feasible by construction
        raise AssertionError("the balance window admits no flow")
    info = {"window": [lo, hi], "optimal_window": [lo, hi], "optimal_moves": stage.moves(best), "budget": max_moves}
    if max_moves is None or info["optimal_moves"] <= max_moves:
        return best, info
    return _within_budget(stage, max_moves, lo, hi, info)


def _within_budget(stage: ReplicaStage, budget: int, lo: int, hi: int, info: dict) -> tuple[np.ndarray, dict]:
    """Smallest spread reachable with at most ``budget`` moves, then the fewest moves.

    Exact: for a spread ``D`` the least moves over windows ``[l, l + D]`` is a convex function
    of ``l`` (a linear program's optimum as its bounds shift along a line; the windows that
    matter contain ``[lo, hi]``), and its minimum over ``l`` can only fall as ``D`` grows. A
    counting bound prunes most flows: units above ``u`` (plus replicas with nowhere to stay)
    must move, and so must units filling brokers below ``l``, except replicas that return to a
    broker that held them (``free_back``). Flows are run only where that bound is within the
    budget, so the typical search costs a handful of solves.
    """
    P = len(stage.rf)
    free = stage.solve(0, P)
    if free is None:  # pragma: no cover - bounds [0, P] always admit a flow
        raise AssertionError("no valid placement at all")
    forced = stage.moves(free)
    if forced > budget:
        raise PlanError(f"max_moves={budget} is too few: making every partition valid (off removed or excluded "
                        f"brokers, racks spread) already takes {forced} replica moves")
    counts = replica_counts(free, stage.n)
    spread_free = int(counts.max() - counts.min())
    kept = np.sort(replica_counts(stage.start, stage.n))
    prefix = np.concatenate([[0], np.cumsum(kept)])
    orphans = int(stage.rf.sum() - kept.sum())
    free_back = int(((stage.pref >= 0).sum()) - kept.sum())

    def bound(starts: np.ndarray, spread: int) -> np.ndarray:
        tops = starts + spread
        above = np.searchsorted(kept, tops, side="right")
        out = (prefix[-1] - prefix[above]) - tops * (len(kept) - above)
        below = np.searchsorted(kept, starts, side="left")
        into = starts * below - prefix[below]
        return np.maximum(out + orphans, into) - free_back

    def candidates(spread: int) -> tuple[int, int] | None:
        starts = np.arange(max(0, hi - spread), lo + 1)
        ok = starts[bound(starts, spread) <= budget]
        return (int(ok[0]), int(ok[-1])) if len(ok) else None

    cache: dict[tuple[int, int], tuple[int, np.ndarray | None]] = {}

    def cost(low: int, spread: int) -> int:
        if (low, spread) not in cache:
            assign = stage.solve(low, low + spread)
            cache[(low, spread)] = (stage.moves(assign), assign) if assign is not None else (1 << 62, None)
        return cache[(low, spread)][0]

    def best_start(spread: int, stop_within_budget: bool) -> int | None:
        """The window start with the fewest moves (ternary search over the convex cost), or with
        ``stop_within_budget`` the first start found within the budget; None if none is."""
        span = candidates(spread)
        if span is None:
            return None
        a, b = span
        while b - a > 2:
            m1, m2 = a + (b - a) // 3, b - (b - a) // 3
            c1, c2 = cost(m1, spread), cost(m2, spread)
            if stop_within_budget and min(c1, c2) <= budget:
                return m1 if c1 <= c2 else m2
            if c1 <= c2:
                b = m2
            else:
                a = m1
        best = min(range(a, b + 1), key=lambda x: (cost(x, spread), x))
        return best if cost(best, spread) <= budget else None

    # The free placement's window [min, max] contains [lo, hi] (its max is at least the smallest
    # possible maximum, its min at most the largest possible minimum), so spread `spread_free`
    # is reachable within `forced` <= budget moves; the optimal spread is not.
    small, large = hi - lo + 1, spread_free
    while small < large:  # smallest spread the counting bound allows (no flows)
        mid = (small + large) // 2
        if candidates(mid) is not None:
            large = mid
        else:
            small = mid + 1
    failed, spread, step = small - 1, small, 1
    while best_start(spread, True) is None:  # gallop up from there with real flows
        failed, spread, step = spread, min(spread_free, spread + step), step * 2
    while failed + 1 < spread:
        mid = (failed + spread) // 2
        if best_start(mid, True) is None:
            failed = mid
        else:
            spread = mid
    low = best_start(spread, False)
    if low is None:  # pragma: no cover - guaranteed by the argument above
        raise AssertionError("budget search lost its feasible window")
    info["window"] = [low, low + spread]
    return cache[(low, spread)][1], info


class LeaderStage:
    """Leaders over chosen replica sets: one unit per partition to one of its replicas."""

    def __init__(self, assign: np.ndarray, current_leader: np.ndarray, n: int) -> None:
        P = assign.shape[0]
        valid = assign >= 0
        self.rf = valid.sum(axis=1).astype(np.int64)
        items = assign[valid]  # row-major: each partition's replicas in slot order
        self.list_start = np.zeros(P + 1, np.int64)
        np.cumsum(self.rf, out=self.list_start[1:])
        self.list_items = items.astype(np.int64)
        in_set = (assign == current_leader[:, None]).any(axis=1) & (current_leader >= 0)
        self.pref = np.where(in_set, current_leader, -1).astype(np.int64).reshape(P, 1)
        self.ones = np.ones(P, np.int64)
        self.change = np.full(P, 1 << 1, np.int64)  # cost 1 per leader change (see _flow._weight)
        self.zeros = np.zeros(P, np.int64)
        self.list_of = np.arange(P, dtype=np.int64)
        self.group_of_broker = np.zeros(n, np.int64)
        self.n = n

    def solve(self, lo: int, hi: int, costs: bool = True) -> np.ndarray | None:
        """Leaders with every broker's count in [lo, hi] (None: impossible); with ``costs`` the
        fewest changes, without them any (a plain max flow, for feasibility tests)."""
        return self.attempt(lo, hi, costs)[0]

    def attempt(self, lo: int, hi: int, costs: bool = True) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """``(leaders or None, counts where the search stopped, brokers its excess still reaches)``."""
        assign = self.pref.copy()
        lows = np.full(self.n, lo, np.int64)
        highs = np.full(self.n, hi, np.int64)
        reached = np.zeros(self.n, np.int64)
        ok, _ = solve_window(assign, self.ones, self.ones, self.zeros, 1, self.list_of, self.list_start,
                             self.list_items, self.pref, self.change if costs else self.zeros, self.group_of_broker,
                             lows, highs, reached)
        loads = np.bincount(assign[assign >= 0], minlength=self.n)
        return (assign[:, 0] if ok else None), loads, reached.astype(bool)

    def changes(self, leaders: np.ndarray) -> int:
        return int((leaders != self.pref[:, 0]).sum())


def solve_leaders(assign: np.ndarray, current_leader: np.ndarray, n: int) -> tuple[np.ndarray, dict]:
    """Leaders: smallest max-min of leader counts over the target brokers, then fewest changes.

    The window is ``[floor, ceil]`` of the mean when the replica sets allow it (one solve; not
    tried when some broker holds fewer replicas than the floor, which rules it out);
    otherwise each end is found by feasibility-only flows whose failures yield cuts that bound
    it (``_leader_max``, ``_leader_min``), then one costed flow inside the window."""
    stage = LeaderStage(assign, current_leader, n)
    P = assign.shape[0]
    floor, ceil = P // n, -(-P // n)
    # a broker leads at most the partitions it holds: the largest possible minimum is at most
    # the fewest replicas on a broker (byte plans often leave a broker with few, large ones)
    fewest = int(replica_counts(assign, n).min())
    if fewest >= floor:
        best = stage.solve(floor, ceil)
        if best is not None:
            return best, {"window": [floor, ceil], "changes": stage.changes(best)}
    hi = _leader_max(stage, ceil, P)
    lo = _leader_min(stage, min(floor, fewest), P)
    best = stage.solve(lo, hi)
    if best is None:  # pragma: no cover - linking property
        raise AssertionError(f"leader window [{lo}, {hi}] infeasible")
    return best, {"window": [lo, hi], "changes": stage.changes(best)}


def _leader_max(stage: LeaderStage, start: int, P: int) -> int:
    """The smallest possible maximum leader count. Each failed flow with cap ``h`` leaves a set
    X of brokers its excess reaches, all at ``h``; every partition led inside X has all its
    replicas inside X (else the excess would reach further), so the maximum is at least
    ceil(those partitions / |X|) > h: test that next (a Hall-type cut; few rounds)."""
    h = start
    while True:
        leaders, loads, reached = stage.attempt(0, h, costs=False)
        if leaders is not None:
            return h
        inside = int(reached.sum())
        unled = P - int(loads.sum())  # partitions still without a leader: all their replicas are in X too
        bound = -(-(int(loads[reached].sum()) + unled) // inside) if inside else h + 1
        h = max(h + 1, min(bound, P))


def _leader_min(stage: LeaderStage, start: int, P: int) -> int:
    """The largest possible minimum leader count, by the mirror argument: when a flow with floor
    ``l`` fails, the brokers Y its excess cannot reach lead every partition that has a replica
    in Y (else the excess would reach them), so the minimum is at most floor(those / |Y|)."""
    low = start
    while low > 0:
        leaders, loads, reached = stage.attempt(low, P, costs=False)
        if leaders is not None:
            return low
        outside = ~reached
        count = int(outside.sum())
        bound = int(loads[outside].sum()) // count if count else low - 1
        low = max(0, min(low - 1, bound))
    return 0


def solve_replicas_capped(stage: ReplicaStage, caps: np.ndarray) -> tuple[np.ndarray, dict]:
    """Replica sets with every broker at most ``caps[b]`` replicas (-1: no cap): the smallest max - min under
    the caps, then the fewest moves. Exact, by the same flow with per-broker upper bounds.

    The count vectors of valid plans under per-broker caps are the integer points of a flow's projection
    onto the brokers, an M-convex set; its decreasingly-minimal points minimise the maximum and maximise the
    minimum at once, so the best window is ``[m, M]`` with ``M`` the smallest feasible maximum (flows with
    upper bounds ``min(h, caps)``) and ``m`` the largest feasible minimum (lower bounds ``l``), each found by
    bisection. Raises PlanError naming a broker when even ``[0, caps]`` admits no flow."""
    P, n = len(stage.rf), stage.n
    cap = np.where(caps < 0, P, np.minimum(caps, P)).astype(np.int64)

    def attempt(lo: int, hi: int) -> np.ndarray | None:
        assign = stage.start.copy()
        reached = np.zeros(n, np.int64)
        ok, _ = solve_window(assign, stage.rf, stage.cap, stage.low, stage.layout.num_groups, stage.list_of,
                             stage.layout.list_start, stage.layout.list_items, stage.pref, stage.unit_cost,
                             stage.layout.group_of_broker, np.minimum(np.full(n, lo, np.int64), cap),
                             np.minimum(np.full(n, hi, np.int64), cap), reached)
        return assign if ok and lo <= int(cap.min()) else None

    if attempt(0, P) is None:
        raise PlanError("replica-capacity cannot be met: the brokers' max_replicas leave no room for every replica "
                        f"({int(stage.rf.sum())} replicas, {int(cap.sum())} places under the caps)")
    total = int(stage.rf.sum())
    small, large = -(-total // n), P
    while small < large:
        mid = (small + large) // 2
        if attempt(0, mid) is not None:
            large = mid
        else:
            small = mid + 1
    top = small
    small, large = 0, min(total // n, top)
    while small < large:
        mid = (small + large + 1) // 2
        if attempt(mid, P) is not None:
            small = mid
        else:
            large = mid - 1
    best = attempt(small, top)
    if best is None:  # pragma: no cover - the M-convexity argument above
        raise AssertionError(f"capped window [{small}, {top}] infeasible")
    return best, {"window": [small, top], "window_exact": True}
