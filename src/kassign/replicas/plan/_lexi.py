"""Goals in order: one integer program per stage, each goal kept at what it reached while the next is optimised.

The rule (``_goals`` says what each goal measures):

1. Every hard goal in force is a constraint of every stage: the rack rule, each broker's planned
   bytes plus its other bytes at most its disk limit, its replicas at most ``max_replicas``,
   its bytes in at most ``network_in_bytes_per_s``; ``max_moves`` too when given. When no plan
   meets them the hard goals are added one at a time, in the table's order, and the first that
   makes the program infeasible is named, with the broker and the amount from a program that
   minimises the largest excess over that limit (``PlanError``, one line).
2. Soft goals in the order given: minimise the goal, then keep it (as a constraint) at the value
   reached while the later goals are optimised. ``disk``, ``network-in`` and ``leader-bytes-in``
   minimise the largest broker and are then kept within the tolerance of the mean, or at the
   least largest broker where that is above it (so a reachable tolerance leaves the later goals
   free inside it); ``replicas``, ``leaders`` and ``topic-spread`` are kept at their max - min.
3. Then the fewest replica moves, the fewest bytes moved (with sizes), the fewest leader changes.

The program: 0/1 variables ``x[p, b]`` (a replica of p on target broker b) and ``y[p, b]`` (b
leads p) with ``sum_b x[p, b] = rf[p]``, ``low[p] <= sum_{b in rack g} x[p, b] <= cap[p]``,
``y[p, b] <= x[p, b]``, ``sum_b y[p, b] = 1``. Per-broker sums are rows of that matrix (bytes,
rates, counts; a topic's replicas per broker for ``topic-spread``), a max - min goal two
continuous variables ``hi >= row >= lo``. Bytes and rates are in units of their greatest common
divisor, scaled by a power of two so that no row's figure is above about 2**24: HiGHS's absolute
tolerances then stay far below one unit, and every answer is checked again in integers (valid,
every hard goal, every goal kept) before it is used; one that fails counts as no answer.

Starts: the scale path's plan (``_scale``: counts and topic spread by flows, bytes and rates by same-topic
swaps, leaders by the flow and leadership swaps), or where it breaks a hard goal the count and byte stages'
(``_solve``, ``_bytes``), is the first plan to beat where it meets the hard goals (else a first program finds
one, or proves none exists); every program is handed the
best plan known as a start (HiGHS as scipy bundles it, driven directly: scipy's ``milp`` takes no start);
``descend`` and ``hand_over`` lower the byte, rate and leader goals by single steps before their programs.

What is proven: a stage that HiGHS finishes (zero gap) is optimal for its goal given the goals
before it (the summary's ``goals_optimal``); one cut short by its node or time limit keeps the
best plan known (the previous stage's plan always satisfies the stage) and its dual bound. A
goal's ``bound`` is proven over every plan that meets the hard goals (not only those keeping the
goals before it): for the first soft goal that is its own stage's proof, for each later one a
program over the hard goals alone (its optimum, or its dual bound when cut short). Every stage
is a flow-free integer program: the count goals alone (``replicas``, ``leaders``,
``topic-spread`` under caps) have totally unimodular special cases, but with the others in the
same program they do not, so none is claimed exact unless its stage finished.

Size: the program has ``2 x partitions x brokers`` binary variables (x alone until a leader goal
or the leader tie-break is reached); above ``SETTINGS.variables`` the plan comes from the scale path
(``_scale``): replica counts (under ``max_replicas`` too) and topic spread exact by flows, the byte and rate
goals by swaps that keep every count (moves where a hard room or an earlier goal needs them), leaders by the
leader flow and leadership swaps; its hard goals are checked in integers, and bounds come from the flows
(``replicas``) and from counting (``_goals.cheap_bound``).

Worked example (``tests/replicas/test_plan_goals.py`` has it): brokers 0, 1, 2 without racks,
``max_replicas`` 4 each, six partitions of rf 2 on brokers 0 and 1, sizes 1 to 6 bytes. Stage
1 (hard): 12 replicas on three brokers of at most 4 forces 4 each. ``disk``: 42 bytes in all,
mean 14; the least largest broker is 14 (proven: every broker holds exactly 14), so the goal
is kept at max(floor(1.05 x 14), 14) = 14. ``replicas``: 0, already forced. ``topic-spread``:
one topic of 12 replicas over 3 brokers: 0. ``leaders``: 6 over 3: 0. Then the fewest moves
(4: broker 2 needs four replicas), bytes moved, leader changes.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from kassign.core.units import human_bytes
from kassign.replicas.plan._exact import _quiet_native_stdout
from kassign.replicas.plan._goals import (GOALS, HARD, NONE, RATIO, Context, cheap_bound, holding, is_met, loads,
                                          measure, means, ratio_limit, topic_spread)
from kassign.replicas.plan._model import PlanError


@dataclass
class Settings:
    variables: int = 60_000  # largest program (2 x partitions x brokers binaries)
    nodes: int = 500  # branch-and-bound nodes per stage
    bound_nodes: int = 1  # nodes of a program run for its bound alone: the root (its LP and cuts)
    seconds: float = 2.0  # wall clock per stage (a safety net; node limits keep answers repeatable)
    total: float = 20.0  # wall clock for all stages of one plan


SETTINGS = Settings()
if os.environ.get("KASSIGN_PLAN_DETERMINISTIC"):
    SETTINGS.seconds = SETTINGS.total = 1e9

_KEY = {"disk": "bytes", "network-in": "in", "leader-bytes-in": "leader_in"}
_RESOURCE = {"disk-capacity": ("disk", "bytes"), "replica-capacity": ("replicas", "replicas"),
             "network-capacity": ("network in", "in")}


@dataclass
class Block:
    """Rows ``lo <= A @ v <= hi`` (A as coordinates; ``rows`` local to the block)."""

    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


@dataclass
class Plan:
    h: np.ndarray  # bool[P, n]
    leaders: np.ndarray  # int64[P], target index


@dataclass
class Stage:
    plan: Plan | None
    optimal: bool
    infeasible: bool
    dual: float | None  # a proven lower bound on the objective, in the objective's scaled units


@dataclass
class Outcome:
    plan: Plan
    bounds: dict[str, float | None] = field(default_factory=dict)
    optimal: dict[str, bool] = field(default_factory=dict)
    solver: str = "milp"


def _scale1(weights: np.ndarray, rf: np.ndarray | None = None) -> float:
    """A power of two keeping the largest row figure near 2**24, for rows in whole bytes (unit 1)."""
    total = int((weights * (rf if rf is not None else 1)).sum())
    return 2.0 ** max(0, math.ceil(math.log2(max(total, 1))) - 24)


def _scale(weights: np.ndarray, rf: np.ndarray | None = None) -> tuple[int, float]:
    """(unit, scale): the weights' gcd, and a power of two keeping the largest row figure near 2**24."""
    nz = weights[weights > 0]
    unit = int(np.gcd.reduce(nz)) if len(nz) else 1
    total = int((weights * (rf if rf is not None else 1)).sum()) // unit
    return unit, 2.0 ** max(0, math.ceil(math.log2(max(total, 1))) - 24)


class Program:
    """The program's fixed part (variables x, y and the hard rows) and the rows goals add."""

    def __init__(self, ctx: Context, budget: int | None, leaders: bool = True) -> None:
        self.ctx = ctx
        P, n = ctx.problem.num_partitions, ctx.n
        self.P, self.n = P, n
        self.nx = P * n
        self.with_y = leaders  # without y (no leader goal kept yet) the program is half the size
        self.columns = (2 if leaders else 1) * self.nx
        self.col_lower = [np.zeros(self.columns)]
        self.col_upper = [np.ones(self.columns)]
        self.col_int = [np.ones(self.columns)]
        self.blocks: list[Block] = []
        self.checks: list[Callable[[Plan], bool]] = []
        pidx = np.repeat(np.arange(P), n)
        bidx = np.tile(np.arange(n), P)
        self.pidx, self.bidx = pidx, bidx
        xs = np.arange(self.nx)
        rf = ctx.problem.rf.astype(np.float64)
        self.add(pidx, xs, np.ones(self.nx), rf, rf)  # rf replicas on distinct brokers
        if ctx.rack_aware:
            g = ctx.group_of_broker[bidx]
            G = ctx.num_groups
            self.add(pidx * G + g, xs, np.ones(self.nx), np.repeat(ctx.low, G).astype(np.float64),
                     np.repeat(ctx.cap, G).astype(np.float64))
        if leaders:  # y <= x; one leader each
            self.add(np.concatenate([xs, xs]), np.concatenate([xs, self.nx + xs]),
                     np.concatenate([np.ones(self.nx), -np.ones(self.nx)]), np.zeros(self.nx),
                     np.full(self.nx, np.inf))
            self.add(pidx, self.nx + xs, np.ones(self.nx), np.ones(P), np.ones(P))
        self.new = ~ctx.held.reshape(-1)  # x[p, b] on a broker that does not hold p now
        if budget is not None:
            self.add(np.zeros(int(self.new.sum()), np.int64), xs[self.new], np.ones(int(self.new.sum())),
                     np.array([-np.inf]), np.array([float(budget)]))
            self.checks.append(lambda plan: int((plan.h & ~ctx.held).sum()) <= budget)
        self.checks.append(self._valid)

    # -- building
    def add(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        self.blocks.append(Block(np.asarray(rows, np.int64), np.asarray(cols, np.int64),
                                 np.asarray(vals, np.float64), np.asarray(lo, np.float64), np.asarray(hi, np.float64)))

    def column(self, count: int, lower: float = -np.inf, upper: float = np.inf) -> int:
        first = self.columns
        self.columns += count
        self.col_lower.append(np.full(count, lower))
        self.col_upper.append(np.full(count, upper))
        self.col_int.append(np.zeros(count))
        return first

    def snapshot(self) -> tuple[int, int, int]:
        return len(self.blocks), self.columns, len(self.checks)

    def restore(self, mark: tuple[int, int, int]) -> None:
        blocks, columns, checks = mark
        del self.blocks[blocks:]
        del self.checks[checks:]
        while self.columns > columns:
            last = len(self.col_lower[-1])
            del self.col_lower[-1], self.col_upper[-1], self.col_int[-1]
            self.columns -= last

    def per_broker(self, weights: np.ndarray, leaders: bool, unit: int, scale: float) -> tuple[np.ndarray, ...]:
        """Coordinates of the rows ``sum_p weights[p] * (y or x)[p, b]`` (one row per broker), scaled."""
        if leaders and not self.with_y:
            raise AssertionError("a leader row in a program without leader variables")
        base = self.nx if leaders else 0
        w = weights[self.pidx].astype(np.float64) / (unit * scale)
        keep = w != 0
        return self.bidx[keep], base + np.arange(self.nx)[keep], w[keep]

    def cap_rows(self, weights: np.ndarray, leaders: bool, limits: np.ndarray, fixed: np.ndarray | None = None) -> None:
        """Per broker ``sum w * var + fixed <= limit`` where the limit is set (whole units: exact)."""
        unit, scale = _scale(weights, None if leaders else self.ctx.problem.rf)
        rows, cols, vals = self.per_broker(weights, leaders, unit, scale)
        fixed = np.zeros(self.n, np.int64) if fixed is None else fixed
        on = limits != NONE
        room = np.where(on, (limits - fixed) // unit, 0) / scale
        keep = on[rows]
        self.add(rows[keep], cols[keep], vals[keep], np.full(self.n, -np.inf),
                 np.where(on, room, np.inf))

    def _valid(self, plan: Plan) -> bool:
        ctx = self.ctx
        h = plan.h
        if not (h.sum(axis=1) == ctx.problem.rf).all():
            return False
        if not h[np.arange(self.P), plan.leaders].all():
            return False
        if ctx.rack_aware:
            for g in range(ctx.num_groups):
                c = h[:, ctx.group_of_broker == g].sum(axis=1)
                if (c > ctx.cap).any() or (c < ctx.low).any():
                    return False
        return True

    # -- solving
    def solve(self, cost_extra: Callable[["Program"], np.ndarray], nodes: int, seconds: float,
              start: Plan | None = None) -> Stage:
        """Minimise the objective ``cost_extra`` builds (it may add rows and columns, removed after), from the
        plan ``start`` where given (handed to HiGHS as a partial solution of x and y)."""
        from scipy.sparse import coo_array

        mark = self.snapshot()
        try:
            cost = cost_extra(self)
            rows, cols, vals, lo, hi = [], [], [], [], []
            top = 0
            for b in self.blocks:
                count = len(b.lo)
                rows.append(b.rows + top)
                cols.append(b.cols)
                vals.append(b.vals)
                lo.append(b.lo)
                hi.append(b.hi)
                top += count
            matrix = coo_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                               shape=(top, self.columns))
            full = np.zeros(self.columns)
            full[:len(cost)] = cost
            hint = None
            if start is not None:
                hint = start.h.reshape(-1).astype(np.float64)
                if self.with_y:
                    y = np.zeros((self.P, self.n))
                    y[np.arange(self.P), start.leaders] = 1.0
                    hint = np.concatenate([hint, y.reshape(-1)])
            with _quiet_native_stdout():
                status, x, dual, fun = run_program(full, matrix, np.concatenate(lo), np.concatenate(hi),
                                                   np.concatenate(self.col_lower), np.concatenate(self.col_upper),
                                                   np.concatenate(self.col_int), hint, seconds, nodes)
            if status == 2:
                return Stage(None, False, True, None)
            plan = None
            if x is not None and status in (0, 1):
                h = (x[:self.nx] > 0.5).reshape(self.P, self.n)
                if self.with_y:
                    leaders = np.argmax(x[self.nx:2 * self.nx].reshape(self.P, self.n), axis=1).astype(np.int64)
                else:  # the start's leader where it still holds the partition, else its first replica
                    leaders = np.argmax(h, axis=1).astype(np.int64)
                    if start is not None:
                        keep = h[np.arange(self.P), start.leaders]
                        leaders[keep] = start.leaders[keep]
                plan = Plan(h, leaders)
                if not all(check(plan) for check in self.checks):
                    plan = None
            optimal = plan is not None and status == 0
            if status == 0 and dual is None and fun is not None:
                dual = float(fun)
            return Stage(plan, optimal, False, dual)
        finally:
            self.restore(mark)


def run_program(cost: np.ndarray, matrix: Any, row_lo: np.ndarray, row_hi: np.ndarray, col_lo: np.ndarray,
                col_hi: np.ndarray, integrality: np.ndarray, hint: np.ndarray | None, seconds: float,
                nodes: int) -> tuple[int, np.ndarray | None, float | None, float | None]:
    """HiGHS on one program: ``(status, x, dual bound, objective)``, status 0 optimal, 1 stopped at a limit with
    a solution, 2 infeasible, 3 nothing known. HiGHS as scipy bundles it, driven directly so that a known plan
    can be handed over as a start; scipy's ``milp`` (no start) where that interface is missing."""
    try:
        import scipy.optimize._highspy._core as core
    except ImportError:  # pragma: no cover - another scipy layout
        core = None
    if core is not None and hasattr(core, "_Highs"):
        csc = matrix.tocsc()
        lp = core.HighsLp()
        lp.num_col_, lp.num_row_ = len(cost), len(row_lo)
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = len(cost), len(row_lo)
        lp.a_matrix_.format_ = core.MatrixFormat.kColwise
        lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, col_lo, col_hi
        lp.row_lower_, lp.row_upper_ = row_lo, row_hi
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = csc.indptr, csc.indices, csc.data
        lp.integrality_ = [core.HighsVarType(int(i)) for i in integrality]
        highs = core._Highs()
        for key, value in (("output_flag", False), ("time_limit", float(max(seconds, 0.01))),
                           ("mip_max_nodes", int(nodes)), ("mip_rel_gap", 0.0), ("random_seed", 0)):
            highs.setOptionValue(key, value)
        if highs.passModel(lp) != core.HighsStatus.kError:
            if hint is not None:
                highs.setSolution(len(hint), np.arange(len(hint), dtype=np.int32), hint)
            if highs.run() != core.HighsStatus.kError:
                model = highs.getModelStatus()
                info = highs.getInfo()
                dual = float(info.mip_dual_bound)
                dual = dual if np.isfinite(dual) else None
                if model == core.HighsModelStatus.kInfeasible:
                    return 2, None, None, None
                value = float(info.objective_function_value)
                x = np.asarray(highs.getSolution().col_value, np.float64) if np.isfinite(value) else None
                if model == core.HighsModelStatus.kOptimal:
                    return 0, x, dual, value
                return (1 if x is not None and len(x) == len(cost) else 3), x, dual, value
    from scipy.optimize import Bounds, LinearConstraint, milp

    result = milp(cost, constraints=LinearConstraint(matrix.tocsr(), row_lo, row_hi), integrality=integrality,
                  bounds=Bounds(col_lo, col_hi), options={"time_limit": max(seconds, 0.01), "node_limit": int(nodes),
                                                          "mip_rel_gap": 0.0, "disp": False})
    dual = getattr(result, "mip_dual_bound", None)
    dual = float(dual) if dual is not None and np.isfinite(dual) else None
    if result.status == 2:
        return 2, None, None, None
    status = 0 if result.status == 0 else 1 if result.x is not None else 3
    return status, result.x, dual, (float(result.fun) if result.x is not None else None)


# -- goals as objectives and as kept constraints -----------------------------------------------------------------

def _weights(ctx: Context, goal: str) -> tuple[np.ndarray, bool]:
    """(weight per partition, on leaders?) of a goal's per-broker sum."""
    if goal in ("disk", "disk-capacity"):
        return ctx.sizes, False
    if goal in ("network-in", "network-capacity"):
        return ctx.rates, False
    if goal == "leader-bytes-in":
        return ctx.rates, True
    if goal in ("replicas", "replica-capacity"):
        return np.ones(ctx.problem.num_partitions, np.int64), False
    return np.ones(ctx.problem.num_partitions, np.int64), True  # leaders


def add_hard(prog: Program, goal: str) -> None:
    ctx = prog.ctx
    if goal == "rack":
        return  # part of the base program
    w, on_leaders = _weights(ctx, goal)
    limits = {"disk-capacity": ctx.disk_room, "replica-capacity": ctx.max_replicas,
              "network-capacity": ctx.net_in}[goal]
    fixed = ctx.disk_other if goal == "disk-capacity" else None
    prog.cap_rows(w, on_leaders, limits, fixed)
    key = _RESOURCE[goal][1]
    other = ctx.disk_other if goal == "disk-capacity" else 0
    on = limits != NONE
    prog.checks.append(lambda plan: bool(((loads(ctx, plan.h, plan.leaders)[key] + other)[on] <= limits[on]).all()))


def _minmax(prog: Program, goal: str) -> tuple[Callable[[Program], np.ndarray], Callable[[float], float]]:
    """Objective builder for a soft goal, and the map from its scaled dual bound to the goal's unit."""
    ctx = prog.ctx
    n = ctx.n
    if goal in RATIO:
        w, on_leaders = _weights(ctx, goal)
        unit, scale = _scale(w, None if on_leaders else ctx.problem.rf)

        def build(p: Program) -> np.ndarray:
            rows, cols, vals = p.per_broker(w, on_leaders, unit, scale)
            z = p.column(1, 0.0)
            p.add(np.concatenate([rows, np.arange(n)]), np.concatenate([cols, np.full(n, z)]),
                  np.concatenate([vals, -np.ones(n)]), np.full(n, -np.inf), np.zeros(n))
            cost = np.zeros(p.columns)
            cost[z] = 1.0
            return cost

        mean = means(ctx)[goal]
        return build, lambda d: (math.ceil(d * scale - 1e-6) * unit) / mean if mean else 1.0
    if goal in ("replicas", "leaders"):
        w, on_leaders = _weights(ctx, goal)

        def build(p: Program) -> np.ndarray:
            rows, cols, vals = p.per_broker(w, on_leaders, 1, 1.0)
            hi = p.column(1, 0.0)
            lo = p.column(1, 0.0)
            p.add(np.concatenate([rows, np.arange(n)]), np.concatenate([cols, np.full(n, hi)]),
                  np.concatenate([vals, -np.ones(n)]), np.full(n, -np.inf), np.zeros(n))
            p.add(np.concatenate([rows, np.arange(n)]), np.concatenate([cols, np.full(n, lo)]),
                  np.concatenate([vals, -np.ones(n)]), np.zeros(n), np.full(n, np.inf))
            cost = np.zeros(p.columns)
            cost[hi], cost[lo] = 1.0, -1.0
            return cost

        return build, lambda d: float(max(0, math.ceil(d - 1e-6)))
    if goal == "topic-spread":
        T = len(ctx.problem.topics)
        topic = ctx.problem.topic_of

        def build(p: Program) -> np.ndarray:
            hi = p.column(T, 0.0)
            lo = p.column(T, 0.0)
            r = topic[p.pidx] * n + p.bidx  # row (topic, broker)
            xs = np.arange(p.nx)
            tb = np.arange(T * n)
            p.add(np.concatenate([r, tb]), np.concatenate([xs, hi + tb // n]),
                  np.concatenate([np.ones(p.nx), -np.ones(T * n)]), np.full(T * n, -np.inf), np.zeros(T * n))
            p.add(np.concatenate([r, tb]), np.concatenate([xs, lo + tb // n]),
                  np.concatenate([np.ones(p.nx), -np.ones(T * n)]), np.zeros(T * n), np.full(T * n, np.inf))
            cost = np.zeros(p.columns)
            cost[hi:hi + T], cost[lo:lo + T] = 1.0, -1.0
            return cost

        return build, lambda d: float(max(0, math.ceil(d - 1e-6)))
    raise AssertionError(goal)


def _keep(prog: Program, goal: str, value: float, plan: Plan) -> None:
    """Keep a soft goal at (at most) what the plan reached: ratio goals at the larger of the tolerance
    limit and the plan's largest broker, max - min goals at the plan's value."""
    ctx = prog.ctx
    n = ctx.n
    if goal in RATIO:
        w, on_leaders = _weights(ctx, goal)
        top = int(loads(ctx, plan.h, plan.leaders)[_KEY[goal]].max())
        limit = max(ratio_limit(ctx, goal), top)
        prog.cap_rows(w, on_leaders, np.full(n, limit, np.int64))
        key = _KEY[goal]
        prog.checks.append(lambda pl: int(loads(ctx, pl.h, pl.leaders)[key].max()) <= limit)
        return
    build, _ = _minmax(prog, goal)
    before = prog.columns
    cost = build(prog)  # its rows and columns stay; the objective becomes a row
    idx = np.flatnonzero(cost)
    prog.add(np.zeros(len(idx), np.int64), idx, cost[idx], np.array([-np.inf]), np.array([value + 0.5]))
    assert prog.columns > before
    prog.checks.append(lambda pl: measure(ctx, goal, pl.h, pl.leaders) <= value + 1e-9)


def _tiebreak(prog: Program, name: str) -> tuple[Callable[[Program], np.ndarray], Callable[[Plan], int]] | None:
    ctx = prog.ctx
    new = prog.new
    if name == "moves":
        def build(p: Program) -> np.ndarray:
            cost = np.zeros(p.columns)
            cost[:p.nx] = new
            return cost
        return build, lambda pl: int((pl.h & ~ctx.held).sum())
    if name == "bytes moved":
        if ctx.sizes is None:
            return None
        unit, scale = _scale(ctx.sizes, ctx.problem.rf)

        def build(p: Program) -> np.ndarray:
            cost = np.zeros(p.columns)
            cost[:p.nx] = np.where(new, ctx.sizes[p.pidx] / (unit * scale), 0.0)
            return cost
        return build, lambda pl: int((ctx.sizes[:, None] * (pl.h & ~ctx.held)).sum())
    lead = ctx.leader_now

    def build(p: Program) -> np.ndarray:
        cost = np.zeros(p.columns)
        cost[p.nx:2 * p.nx] = (lead[p.pidx] != p.bidx)
        return cost
    return build, lambda pl: int((pl.leaders != lead).sum())


def _keep_tiebreak(prog: Program, build: Callable[[Program], np.ndarray], value_of: Callable[[Plan], int],
                   value: int, name: str) -> None:
    cost = build(prog)
    idx = np.flatnonzero(cost)
    if name == "bytes moved":  # scaled: keep with a margin below one unit, check in integers
        unit, scale = _scale(prog.ctx.sizes, prog.ctx.problem.rf)
        rhs = (value // unit) / scale + 0.5 / scale
    else:
        rhs = value + 0.5
    prog.add(np.zeros(len(idx), np.int64), idx, cost[idx], np.array([-np.inf]), np.array([rhs]))
    prog.checks.append(lambda pl: value_of(pl) <= value)


# -- the stages ------------------------------------------------------------------------------------------------

def fits(ctx: Context) -> bool:
    return 2 * ctx.problem.num_partitions * ctx.n <= SETTINGS.variables


def solve_goals(ctx: Context, budget: int | None, seed: tuple[np.ndarray, np.ndarray] | None = None) -> Outcome:
    """The plan (see the module docstring); raises PlanError when a hard goal cannot be met."""
    deadline = time.monotonic() + SETTINGS.total

    def left() -> float:
        return max(0.05, min(SETTINGS.seconds, deadline - time.monotonic()))

    replay: list[Callable[[Program], None]] = []  # every goal kept so far, to rebuild the program with y

    def program(leaders: bool) -> Program:
        new = Program(ctx, budget, leaders)
        for goal in ctx.hard:
            add_hard(new, goal)
        for keep in replay:
            keep(new)
        return new

    prog = program(False)
    given = None
    if seed is not None:  # the count or byte stages' plan: a start, and the plan to beat where it is valid
        given = Plan(holding(ctx, seed[0]), seed[1].astype(np.int64))
        if not all(check(given) for check in prog.checks):
            given = None
    if given is None:
        moves_build, _ = _tiebreak(prog, "moves")
        first = prog.solve(moves_build, SETTINGS.nodes, left())
        if first.infeasible:
            raise PlanError(_why_not(ctx, budget))
        if first.plan is None:
            raise PlanError(f"no plan meeting the hard goals ({', '.join(ctx.hard) or 'valid placement'}) was "
                            "found within the search limits; not proven impossible")
        given = first.plan
    best = given
    out = Outcome(best)
    base = Program(ctx, budget, False)  # the hard goals alone: bounds over every valid plan
    for goal in ctx.hard:
        add_hard(base, goal)
    base_y: list[Program] = []
    for goal in ctx.hard:
        out.bounds[goal] = _hard_bound(base, goal, left(), SETTINGS.bound_nodes, best)
        out.optimal[goal] = True  # a constraint: met by construction
    for i, goal in enumerate(ctx.soft):
        if goal in ("leaders", "leader-bytes-in") and not prog.with_y:
            prog = program(True)
        within = goal in RATIO and int(loads(ctx, best.h, best.leaders)[_KEY[goal]].max()) <= ratio_limit(ctx, goal)
        if goal in RATIO and not within:  # integer programs of this kind are slow to find plans: a descent first
            best = descend(prog, goal, best, deadline)
        elif goal == "leaders":
            best = _leader_flow(prog, best)
            best = hand_over(prog, best, deadline)
        build, to_unit = _minmax(prog, goal)
        stage = prog.solve(build, SETTINGS.nodes, left(), best)
        now = measure(ctx, goal, best.h, best.leaders)
        # a ratio goal already within its tolerance is a window: the plan in hand stays (later goals are free
        # inside the window, and the plan in hand is usually better for them than the stage's)
        if stage.plan is not None and not within and measure(ctx, goal, stage.plan.h, stage.plan.leaders) <= now:
            best = stage.plan
            now = measure(ctx, goal, best.h, best.leaders)
        lower = to_unit(stage.dual) if stage.dual is not None else None
        out.optimal[goal] = lower is not None and lower >= now - 1e-9
        floor = cheap_bound(ctx, goal)
        if i == 0:  # nothing kept yet: the stage's own proof holds over every valid plan
            out.bounds[goal] = lower
        elif floor is not None and floor >= now - 1e-9:  # counting already proves the plan's value the best
            out.bounds[goal] = floor
        else:  # a program over the hard goals alone
            if goal in ("leaders", "leader-bytes-in") and not base_y:
                base_y.append(Program(ctx, budget, True))
                for hard in ctx.hard:
                    add_hard(base_y[0], hard)
            over_hard = base_y[0] if goal in ("leaders", "leader-bytes-in") else base
            free = over_hard.solve(build, SETTINGS.bound_nodes, left(), best)
            out.bounds[goal] = to_unit(free.dual) if free.dual is not None else None
        _keep(prog, goal, now, best)
        replay.append(lambda pr, g=goal, v=now, pl=best: _keep(pr, g, v, pl))
    best = undo_moves(prog, best, max(deadline, time.monotonic() + 2.0))
    for name in ("moves", "bytes moved", "leader changes"):
        if name == "leader changes" and not prog.with_y:
            prog = program(True)
        tb = _tiebreak(prog, name)
        if tb is None:
            continue
        build, value_of = tb
        stage = prog.solve(build, SETTINGS.nodes, left(), best)
        if stage.plan is not None and value_of(stage.plan) <= value_of(best):
            best = stage.plan
        out.optimal[f"fewest {name}"] = bool(stage.optimal and value_of(stage.plan) <= value_of(best))
        _keep_tiebreak(prog, build, value_of, value_of(best), name)
        replay.append(lambda pr, nm=name, v=value_of(best): _keep_tiebreak(pr, *_tiebreak(pr, nm), v, nm))
    out.plan = best
    return out


def descend(prog: Program, goal: str, plan: Plan, deadline: float) -> Plan:
    """Lower a ratio goal's largest broker by single steps that keep every constraint of the program (its
    checks): move a replica off the largest broker, hand a leadership to another replica, or swap two
    replicas; each step lowers (largest, brokers at it, sum of squares), so the descent ends. A heuristic:
    it gives the stage's program a plan to beat, it proves nothing."""
    ctx = prog.ctx
    w, _ = _weights(ctx, goal)
    key = _KEY[goal]

    def score(pl: Plan) -> tuple[int, int, float]:
        v = loads(ctx, pl.h, pl.leaders)[key]
        top = int(v.max())
        return top, int((v == top).sum()), float((v.astype(np.float64) ** 2).sum())

    def ok(pl: Plan) -> bool:
        return all(check(pl) for check in prog.checks)

    best, current = plan, score(plan)
    for _ in range(4 * ctx.problem.num_partitions + 20):
        if time.monotonic() > deadline:
            break
        v = loads(ctx, best.h, best.leaders)[key]
        heavy = int(np.argmax(v))
        light = np.argsort(v, kind="stable")
        if key == "leader_in":
            mine = np.flatnonzero(best.leaders == heavy)
        else:
            mine = np.flatnonzero(best.h[:, heavy])
        mine = mine[np.argsort(-w[mine], kind="stable")]
        found = None
        for p in mine:
            if w[p] == 0:
                break
            for b in light:
                if b == heavy:
                    continue
                h = best.h.copy()
                leaders = best.leaders.copy()
                if h[p, b]:  # b holds p already: hand it the leadership (leader goals only)
                    if key != "leader_in":
                        continue
                    leaders[p] = b
                else:
                    h[p, heavy], h[p, b] = False, True
                    if leaders[p] == heavy:
                        leaders[p] = b
                cand = Plan(h, leaders)
                sc = score(cand)
                if sc < current and ok(cand):
                    found = (cand, sc)
                    break
            if found:
                break
        if found is None and key != "leader_in":  # swaps: p off the heavy broker, q back from a light one
            for p in mine[:8]:
                for b in light[:4]:
                    if b == heavy or best.h[p, b]:
                        continue
                    others = np.flatnonzero(best.h[:, b] & ~best.h[:, heavy] & (w < w[p]))
                    for q in others[np.argsort(w[others], kind="stable")][:8]:
                        h = best.h.copy()
                        leaders = best.leaders.copy()
                        h[p, heavy], h[p, b], h[q, b], h[q, heavy] = False, True, False, True
                        leaders[p] = b if leaders[p] == heavy else leaders[p]
                        leaders[q] = heavy if leaders[q] == b else leaders[q]
                        cand = Plan(h, leaders)
                        sc = score(cand)
                        if sc < current and ok(cand):
                            found = (cand, sc)
                            break
                    if found:
                        break
                if found:
                    break
        if found is None:
            break
        best, current = found
    return best


def undo_moves(prog: Program, plan: Plan, deadline: float) -> Plan:
    """Send moved replicas back to a broker that holds them now, one at a time, wherever every constraint of
    the program (hard goals, every goal kept) still holds: fewer moves before the fewest-moves program, which
    starts from the result. A heuristic; the program decides what is proven."""
    ctx = prog.ctx
    held = ctx.held
    best = plan
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        moved = np.argwhere(best.h & ~held)
        if ctx.sizes is not None:  # the largest first: most bytes saved
            moved = moved[np.argsort(-ctx.sizes[moved[:, 0]], kind="stable")]
        for p, b in moved:
            if time.monotonic() > deadline:
                break
            for a in np.flatnonzero(held[p] & ~best.h[p]):
                h = best.h.copy()
                h[p, b], h[p, a] = False, True
                leaders = best.leaders.copy()
                if leaders[p] == b:
                    leaders[p] = a
                cand = Plan(h, leaders)
                if all(check(cand) for check in prog.checks):
                    best, changed = cand, True
                    break
    return best


def _leader_flow(prog: Program, plan: Plan) -> Plan:
    """The leader flow (``_solve.solve_leaders``: the smallest leader spread for these replica sets, then the
    fewest changes; exact for fixed sets) as a candidate, taken where it keeps every constraint and is better."""
    from kassign.replicas.plan._solve import solve_leaders

    ctx = prog.ctx
    width = int(ctx.problem.rf.max())
    assign = np.full((prog.P, width), -1, np.int64)
    rows, cols = np.nonzero(plan.h)
    first = np.cumsum(plan.h.sum(axis=1)) - plan.h.sum(axis=1)
    assign[rows, np.arange(len(rows)) - first[rows]] = cols
    leaders, _ = solve_leaders(assign, ctx.leader_now, ctx.n)
    cand = Plan(plan.h, leaders.astype(np.int64))
    if measure(ctx, "leaders", cand.h, cand.leaders) < measure(ctx, "leaders", plan.h, plan.leaders) and \
            all(check(cand) for check in prog.checks):
        return cand
    return plan


def hand_over(prog: Program, plan: Plan, deadline: float) -> Plan:
    """Even out leader counts by handing leaderships to other replicas of the same partitions (replica sets
    unchanged), each step lowering (max - min, brokers at the max, sum of squares) and keeping every
    constraint of the program. A heuristic start for the leaders stage, as ``descend`` is for the others."""
    ctx = prog.ctx

    def score(leaders: np.ndarray) -> tuple[int, int, int]:
        c = np.bincount(leaders, minlength=ctx.n)
        return int(c.max() - c.min()), int((c == c.max()).sum()), int((c * c).sum())

    best, current = plan, score(plan.leaders)
    for _ in range(2 * ctx.problem.num_partitions + 10):
        if time.monotonic() > deadline or current[0] <= 1:
            break
        counts = np.bincount(best.leaders, minlength=ctx.n)
        found = None
        for p in np.flatnonzero(best.leaders == int(np.argmax(counts))):
            for b in sorted(np.flatnonzero(best.h[p]), key=lambda x: counts[x]):
                if counts[b] + 1 >= counts[best.leaders[p]]:
                    break
                leaders = best.leaders.copy()
                leaders[p] = b
                sc = score(leaders)
                cand = Plan(best.h, leaders)
                if sc < current and all(check(cand) for check in prog.checks):
                    found = (cand, sc)
                    break
            if found:
                break
        if found is None:
            break
        best, current = found
    return best


def _hard_bound(prog: Program, goal: str, seconds: float, nodes: int, start: Plan) -> float | None:
    """The least largest use / limit over the plans meeting the hard goals (a lower bound where cut short)."""
    if goal == "rack":
        return 1.0
    limits, _, on, build = _over_limit(prog, goal, ratio=True)
    if not on.any():
        return None
    stage = prog.solve(build, nodes, seconds, start)
    if stage.dual is None:
        return None
    # The optimum is some broker's whole use over its limit, and at least the dual bound d: at least
    # the least of ceil(d x limit) / limit over the brokers (d less HiGHS's tolerance).
    d = max(0.0, stage.dual - 1e-7)
    lim = limits[on].astype(np.float64)
    return float((np.ceil(d * lim - 1e-6 * np.maximum(1.0, d * lim)) / lim).min())


def _over_limit(prog: Program, goal: str, ratio: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                   Callable[[Program], np.ndarray]]:
    """A hard goal's per-broker program, minimising one column c: every broker with a limit keeps its use plus its
    other bytes at most c x its limit (``ratio``: c is the largest use / limit, the goal's measure) or at most its
    limit + c (c: the largest excess, in the resource's units). Gives (limits, other, brokers with a limit,
    build)."""
    ctx = prog.ctx
    w, on_leaders = _weights(ctx, goal)
    limits = {"disk-capacity": ctx.disk_room, "replica-capacity": ctx.max_replicas,
              "network-capacity": ctx.net_in}[goal]
    other = ctx.disk_other if goal == "disk-capacity" else np.zeros(ctx.n, np.int64)
    on = (limits != NONE) & (limits > 0) if ratio else limits != NONE
    scale = _scale1(w, None if on_leaders else ctx.problem.rf)

    def build(p: Program) -> np.ndarray:
        rows, cols, vals = p.per_broker(w, on_leaders, 1, scale)
        c = p.column(1, 0.0)
        b = np.flatnonzero(on)
        keep = on[rows]
        coefficient = -limits[b] / scale if ratio else -np.ones(len(b))
        high = -other / scale if ratio else np.where(on, (limits - other) / scale, np.inf)
        p.add(np.concatenate([rows[keep], b]), np.concatenate([cols[keep], np.full(len(b), c)]),
              np.concatenate([vals[keep], coefficient]), np.full(ctx.n, -np.inf), high)
        cost = np.zeros(p.columns)
        cost[c] = 1.0
        return cost

    return limits, other, on, build


def _why_not(ctx: Context, budget: int | None) -> str:
    """One line: the first hard goal (in the table's order) that no plan can meet, where and by how much."""
    prog = Program(ctx, budget, False)
    order = [g for g in GOALS if g in ctx.hard]
    for goal in order:
        mark = prog.snapshot()
        add_hard(prog, goal)
        moves_build, _ = _tiebreak(prog, "moves")
        stage = prog.solve(moves_build, SETTINGS.nodes, SETTINGS.seconds)
        if not stage.infeasible:
            continue
        prog.restore(mark)
        return _excess_line(prog, goal)
    if budget is not None:
        return f"max_moves={budget} is too few for a plan meeting the hard goals ({', '.join(ctx.hard)})"
    return f"no plan meets the hard goals {', '.join(ctx.hard)} together"  # pragma: no cover


def _excess_line(prog: Program, goal: str) -> str:
    """The least largest excess over the goal's limit any plan (meeting the hard goals before it) leaves."""
    ctx = prog.ctx
    resource, key = _RESOURCE[goal]
    w, on_leaders = _weights(ctx, goal)
    limits, other, on, build = _over_limit(prog, goal, ratio=False)
    stage = prog.solve(build, SETTINGS.nodes, SETTINGS.seconds)

    def amount(v: float) -> str:
        if goal == "disk-capacity":
            return human_bytes(int(v))
        if goal == "network-capacity":
            return f"{human_bytes(int(v))}/s"
        return f"{int(v)} replica(s)"

    if stage.plan is None:
        need = int(((w * (ctx.problem.rf if not on_leaders else 1)).sum()))
        return (f"{goal} cannot be met: no plan keeps every broker within its {resource} limit "
                f"({amount(need)} to place; no plan found to say by how much)")
    use = loads(ctx, stage.plan.h, stage.plan.leaders)[key] + other
    excess = np.where(on, use - limits, np.iinfo(np.int64).min)
    b = int(np.argmax(excess))
    proven = "" if stage.optimal else " (the least found, not proven the least)"
    what = f"{ctx.disk_limit:.0%} of its disk, " if goal == "disk-capacity" else ""
    return (f"{goal} cannot be met: every valid plan puts a broker above its {resource} limit; the best puts "
            f"broker {int(ctx.problem.targets[b])} {amount(int(excess[b]))} above it ({what}limit "
            f"{amount(int(limits[b]))}){proven}")
