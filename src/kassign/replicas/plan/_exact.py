"""Byte balance by integer programming: the exact stage of a plan with ``sizes``, and when it is exact.

The rule (what a byte plan optimises, in strict order):

1. Valid: each partition on ``rf`` distinct target brokers, over min(rf, racks) racks with no
   rack holding more than ceil(rf / racks) of its replicas; excluded and removed brokers end
   empty; at most ``max_moves`` replica moves.
2. Every broker at most ``bytes_limit = floor((1 + tolerance) * total / brokers)`` bytes when
   some valid plan allows it. When none does (the summary says so: ``bytes_tolerance_reachable:
   False``, with the proof in the notes), (a) the largest broker as small as possible
   (``bytes_least_max``), then (b) the fewest bytes above the limit summed over the brokers
   (``bytes_over_limit``): one partition too big for any broker does not leave the other
   brokers unbalanced.
3. The fewest bytes moved (a replica on a broker that did not hold it moves its partition's
   bytes); then, where the program decides, the fewest replica moves.

The program: a 0/1 variable ``x[p, b]`` ("a replica of p on target broker b") per partition and
target broker, with

- ``sum_b x[p, b] = rf[p]`` (distinct brokers, as each variable is 0 or 1);
- ``low[p] <= sum_{b in rack g} x[p, b] <= cap[p]`` per rack (``cap`` = ceil(rf / racks),
  ``low`` = 1 where rf >= racks, so that min(rf, racks) racks are used);
- ``load[b] = sum_p size[p] * x[p, b] <= limit`` per broker (only target brokers have variables);
- ``sum x[p, b]`` over brokers b that did not hold p ``<= max_moves`` when a budget is given;

minimising ``sum size[p] * x[p, b]`` over those same new places (each weight times one more than
the number of replicas, plus 1: the fewest replica moves break ties while the sums stay exact in
doubles). If the heuristic's plan is not within the limit, a first program minimises a ``z >=
load[b]`` (bounded below by the limit and by the counting bound below, above by the heuristic's
maximum): ``z = limit`` shows the limit reachable; an optimum above it (or a proven bound above
it, the solver's dual bound) proves it is not. Then, if not, a program minimises ``sum e[b]``
with ``e[b] >= load[b] - limit``, every load at most that least maximum; and the last one the
bytes moved with both kept.

Numbers: coefficients are in units of the greatest common divisor of the sizes, and load rows
are divided by a power of two (exact in doubles) so that their largest figure is about 2**24:
HiGHS's absolute tolerances (about 1e-7) then stay far below one unit and every accepted row is
exact in integers. HiGHS runs with a zero relative gap, so an "optimal" status is a proof up to
its tolerances; every answer is checked again in integers (validity, loads, budget) before it is
used, and one that fails, or an "infeasible" although a known plan satisfies the program, counts
as no answer, never as a proof.

What is exact and what is not, and why:

- A partition of 0 bytes stays where the fewest-moves placement puts it: moving it changes no
  load and costs no bytes, and that placement already gives it its fewest moves.
- Whole program: when the sized partitions times the target brokers make at most
  ``SETTINGS.variables`` variables, all partitions are free. If HiGHS finishes each stage
  (``SETTINGS.nodes`` branch-and-bound nodes each, ``SETTINGS.seconds`` of wall clock for all),
  the plan is optimal for 1-3 and says so: ``bytes_optimal: True``, ``bytes_solver: "milp"``.
  Balancing indivisible partitions is bin packing (NP-hard), so this cannot hold at any size:
  100,000 partitions on 110 brokers make 11 million variables.
- Larger inputs, or a whole program cut short: the greedy heuristic's plan (``_bytes``; or the
  program's best answer, if better) is improved by small programs over neighbourhoods, the rest
  of the plan fixed. Within the limit: one program per broker that had to shed bytes (the ones
  that shed the most beyond their excess first, ``SETTINGS.rounds`` of them), re-choosing what it
  gives away among the partitions the plan moved off it, its smallest others and those sized
  just right to replace a moved one, each allowed on the brokers with the most room. Not within:
  one program over what the plan moved and the best candidates of every broker above the limit.
  ``bytes_solver`` is then ``"heuristic"`` or ``"milp-neighbourhood"``, and the plan is valid and
  no worse than the heuristic's, but optimal only if the bounds below prove it.
- Proofs that need no program: the largest broker is at least ``max(ceil(total / brokers),
  largest partition)``; the bytes above the limit at least ``max(total - brokers * limit,
  sum of rf * (size - limit) over partitions larger than the limit)`` (two such replicas on one
  broker only add up); and ``bytes_moved_bound``, always reported, is a proven lower bound on the
  bytes moved by any valid plan at least as good by rule 2 (largest broker at most this plan's,
  bytes above the limit at most this plan's): the larger of the bytes the fewest-moves placement
  must move, and ``total`` minus what can stay, where each broker keeps at most what it holds now
  and at most the limit, plus up to this plan's bytes above the limit in all. A plan whose
  figures meet these bounds is optimal whatever found it (``bytes_optimal: True`` with
  ``bytes_solver: "heuristic"`` means exactly that).
- Repeatability: node limits are the working limits, and HiGHS is deterministic up to them, so
  the same input gives the same plan. The wall-clock limits are safety nets (a slow machine, or a
  large whole program whose root alone takes longer); a plan they cut short may differ between
  runs, and is still reported optimal only when proven.

Worked examples:

- rf 1, partitions of 8, 7, 6, 5, 4, 3, 2, 1 bytes all on broker 0, brokers 0-3, tolerance 10%.
  Total 36, mean 9, limit floor(9.9) = 9, so every broker must hold exactly 9: broker 0 keeps
  one pair summing to 9, the other three pairs move: 27 bytes in 6 replica moves. The bound
  proves it (36 - 9 = 27 cannot stay), so the plan is optimal.
- rf 1, three partitions of 6 bytes on broker 0, brokers 0 and 1, 5%: mean 9, limit 9, and no
  counting bound rules it out, but one broker must hold two partitions: the first program's
  optimum is 12 > 9, a proof. The plan moves one partition (6 bytes): loads 12 and 6.
- rf 1, one partition of 100 bytes on broker 0 and twelve of 10 bytes on broker 1, brokers 0-3,
  5%: mean 55, limit 57. The 100-byte partition alone exceeds the limit (a proof without any
  program), so the largest broker is at least 100, and broker 0 reaches it as it is. Rule 2b
  then keeps every other broker within 57: broker 1 keeps five of its partitions and sends the
  other seven to brokers 2 and 3 (70 bytes moved, 43 bytes above the limit in all, broker 0's).
"""

from __future__ import annotations

import ctypes
import math
import os
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np


@dataclass
class Settings:
    """How far the exact stage goes (module-wide; tests and benches may change them).

    Node limits are the working limits: HiGHS is deterministic up to them, so the same input
    gives the same plan. The wall-clock limits are safety nets for slow machines and for roots
    that alone take longer (large whole programs); a plan they cut short may differ between
    runs, and is never reported optimal unless the lower bound proves it."""

    variables: int = 250_000  # largest whole program (sized partitions x target brokers)
    nodes: int = 4_000  # branch-and-bound nodes per stage of the whole program
    seconds: float = 3.0  # wall clock for all stages of the whole program
    local_nodes: int = 60  # nodes per neighbourhood program
    local_seconds: float = 1.0  # wall clock for all neighbourhood programs of one plan
    local_call: float = 0.3  # wall clock for one neighbourhood program
    rounds: int = 12  # per-broker neighbourhood programs (largest waste first)
    neighbourhood_variables: int = 20_000  # size of the neighbourhood program when the limit is not reached
    receivers: int = 16  # brokers with the most room offered to each free partition of a neighbourhood
    per_broker: int = 8  # partitions freed per broker and per kind of candidate


SETTINGS = Settings()
if os.environ.get("KASSIGN_PLAN_DETERMINISTIC"):
    # Node limits only: the same plan on every machine, however loaded, at the cost of no wall-clock bound.
    SETTINGS.seconds = SETTINGS.local_seconds = SETTINGS.local_call = 3600.0

OPTIMAL, FEASIBLE, INFEASIBLE, UNKNOWN = "optimal", "feasible", "infeasible", "unknown"


@dataclass
class Instance:
    """A byte-balancing problem as integer arrays over partitions and target broker positions."""

    sizes: np.ndarray  # int64[P]
    rf: np.ndarray  # int64[P]
    held: np.ndarray  # int64[P, W]: target positions holding each partition now (-1: none)
    cap: np.ndarray  # int64[P]: most replicas per rack
    low: np.ndarray  # int64[P]: fewest replicas per rack
    group: np.ndarray  # int64[n]: rack of each target broker
    num_groups: int
    n: int
    budget: int | None  # most replica moves (None: no limit)

    def __post_init__(self) -> None:
        nonzero = self.sizes[self.sizes > 0]
        self.unit = int(np.gcd.reduce(nonzero)) if len(nonzero) else 1
        self.float_exact = float(self.sizes.sum()) * float(self.rf.max(initial=1)) < 2.0**52

    def loads(self, assign: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Bytes per target broker (of ``rows`` only, if given), exactly."""
        a = assign if rows is None else assign[rows]
        s = self.sizes if rows is None else self.sizes[rows]
        valid = a >= 0
        weights = np.broadcast_to(s[:, None], a.shape)[valid]
        if self.float_exact:  # every partial sum is an integer below 2**53: doubles add exactly
            return np.bincount(a[valid], weights=weights, minlength=self.n).astype(np.int64)
        out = np.zeros(self.n, np.int64)
        np.add.at(out, a[valid], weights)
        return out

    def new_places(self, assign: np.ndarray) -> np.ndarray:
        """bool[P, W]: replicas on a broker that did not hold them."""
        return (assign >= 0) & ~(assign[:, :, None] == self.held[:, None, :]).any(axis=2)

    def moved(self, assign: np.ndarray) -> tuple[int, int]:
        """(bytes moved, replicas moved)."""
        new = self.new_places(assign)
        return int((new.sum(axis=1) * self.sizes).sum()), int(new.sum())

    def valid(self, assign: np.ndarray) -> bool:
        """Distinct brokers, rf replicas, rack caps, move budget: checked in integers."""
        P, W = assign.shape
        present = assign >= 0
        if not (present.sum(axis=1) == self.rf).all() or (assign >= self.n).any():
            return False
        ordered = np.sort(np.where(present, assign, -1 - np.arange(W)), axis=1)
        if W > 1 and (ordered[:, 1:] == ordered[:, :-1]).any():
            return False
        if self.num_groups > 1:
            per = np.zeros((P, self.num_groups), np.int64)
            rows = np.broadcast_to(np.arange(P)[:, None], assign.shape)[present]
            np.add.at(per, (rows, self.group[assign[present]]), 1)
            if (per > self.cap[:, None]).any() or (per < self.low[:, None]).any():
                return False
        return self.budget is None or self.moved(assign)[1] <= self.budget


_SILENCE = threading.Lock()


def _flush_native() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):  # pragma: no cover - no C library to flush
        pass


@contextmanager
def _quiet_native_stdout():
    """HiGHS (as bundled in scipy) prints some debug lines with C printf whatever ``disp`` says;
    on standard output they would corrupt ``kassign plan --json``. Point file descriptor 1 at
    the null device while the solver runs (Python's and C's buffers flushed on both sides)."""
    with _SILENCE:
        try:
            sys.stdout.flush()
        except (AttributeError, ValueError, OSError):
            pass
        _flush_native()
        try:
            saved = os.dup(1)
        except OSError:  # no descriptor 1 at all: nothing to protect
            yield
            return
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            yield
        finally:
            _flush_native()
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)


@dataclass
class Outcome:
    status: str
    assign: np.ndarray | None = None
    floor: int | None = None  # "max" and "excess" programs: a proven lower bound on the objective (bytes)


def solve_program(inst: Instance, base: np.ndarray, free: np.ndarray, allowed: np.ndarray, *, objective: str,
                  limit: int, seconds: float, nodes: int | None = None, cap: int | None = None,
                  excess: int | None = None, floor: int = 0, ceiling: int | None = None) -> Outcome:
    """One program over the partitions ``free`` (sorted rows; ``allowed[k, b]``: may partition
    ``free[k]`` use broker b), every other partition fixed as in ``base`` (a valid plan).

    ``objective``: ``"max"``, the smallest ``z`` in ``[floor, ceiling]`` with every broker at
    most ``z``; ``"excess"``, the fewest bytes above ``limit`` summed over the brokers, every
    broker at most ``cap``; ``"bytes"``, the fewest bytes moved (then replica moves), every
    broker at most ``cap`` and, if ``excess`` is given, at most ``excess`` bytes above ``limit``
    in all. The answer is checked in integers before it is returned; one that fails the check,
    or an "infeasible" although ``base`` is a solution, is ``UNKNOWN`` (numerical trouble),
    never a proof."""
    # scipy loads in about half a second: only when a byte plan needs a program
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    P, W = base.shape
    n, g, unit = inst.n, inst.num_groups, inst.unit
    fixed = np.ones(P, bool)
    fixed[free] = False
    fixed_load = inst.loads(base, fixed)
    fixed_moves = int(inst.new_places(base)[fixed].sum())
    if (inst.budget is not None and fixed_moves > inst.budget) or (cap is not None and (fixed_load > cap).any()):
        return Outcome(INFEASIBLE)
    k, vb = np.nonzero(allowed)
    vp = free[k]
    nv = len(k)
    size = inst.sizes[vp] // unit
    new = ~(inst.held[vp] == vb[:, None]).any(axis=1)
    var = np.arange(nv)
    # rf replicas each, on distinct brokers (x is 0/1)
    rows, cols, data = [k], [var], [np.ones(nv)]
    lows, highs = [inst.rf[free].astype(np.float64)], [inst.rf[free].astype(np.float64)]
    top = len(free)
    if g > 1:  # rack rows, only where the rule binds
        need = (inst.cap[free] < inst.rf[free]) | (inst.low[free] > 0)
        on = need[k]
        index = np.cumsum(need) - 1
        count = int(need.sum())
        rows.append(top + index[k[on]] * g + inst.group[vb[on]])
        cols.append(var[on])
        data.append(np.ones(int(on.sum())))
        lows.append(np.repeat(inst.low[free][need], g).astype(np.float64))
        highs.append(np.repeat(inst.cap[free][need], g).astype(np.float64))
        top += count * g
    # Loads in units of the sizes' gcd, divided by a power of two (exact in doubles) so that the
    # largest figure is about 2**24: HiGHS's absolute tolerances (about 1e-7) stay far below one
    # unit, and integral loads make every accepted load row exact.
    largest = max(limit, cap or 0, ceiling or 0, floor, int(fixed_load.max(initial=0)), 1) // unit
    scale = 2.0 ** max(0, math.ceil(math.log2(max(largest, 1))) - 24)
    fixed_u = fixed_load // unit
    columns = nv
    z = e = -1
    if objective == "max":
        z, columns = columns, columns + 1
    if objective == "excess" or excess is not None:
        e, columns = columns, columns + n  # bytes above the limit per broker, in units * scale
    brokers = np.arange(n)
    if objective == "max":  # load[b] - z <= 0
        rows.append(top + vb)
        cols.append(var)
        data.append(size / scale)
        rows.append(top + brokers)
        cols.append(np.full(n, z))
        data.append(np.full(n, -1.0))
        lows.append(np.full(n, -np.inf))
        highs.append(-fixed_u / scale)
    else:  # load[b] <= cap
        rows.append(top + vb)
        cols.append(var)
        data.append(size / scale)
        lows.append(np.full(n, -np.inf))
        highs.append(((cap - fixed_load) // unit) / scale)
    top += n
    if e >= 0:  # load[b] - e[b] <= limit
        rows.append(top + vb)
        cols.append(var)
        data.append(size / scale)
        rows.append(top + brokers)
        cols.append(e + brokers)
        data.append(np.full(n, -1.0))
        lows.append(np.full(n, -np.inf))
        highs.append((limit - fixed_load) / (unit * scale))
        top += n
        if excess is not None:  # sum of e <= excess
            rows.append(np.full(n, top))
            cols.append(e + brokers)
            data.append(np.ones(n))
            lows.append(np.array([-np.inf]))
            highs.append(np.array([excess / (unit * scale)]))
            top += 1
    if inst.budget is not None:
        rows.append(np.full(int(new.sum()), top))
        cols.append(var[new])
        data.append(np.ones(int(new.sum())))
        lows.append(np.array([-np.inf]))
        highs.append(np.array([float(inst.budget - fixed_moves)]))
        top += 1
    matrix = coo_array((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(top, columns))
    cost = np.zeros(columns)
    lower, upper = np.zeros(columns), np.ones(columns)
    integrality = np.ones(columns)
    if z >= 0:
        cost[z] = 1.0
        lower[z] = (floor // unit) / scale
        upper[z] = np.inf if ceiling is None else max(ceiling // unit, floor // unit) / scale
        integrality[z] = 0
    if e >= 0:
        upper[e:e + n] = np.inf
        integrality[e:e + n] = 0
        if objective == "excess":
            cost[e:e + n] = 1.0
    if objective == "bytes":  # integral costs: bytes first, then replica moves, while the sums stay exact
        replicas = int(inst.rf[free].sum())
        weight = replicas + 1
        exact = float(size.max(initial=0)) * weight * replicas < 2.0**50
        cost[:nv] = np.where(new, size * weight + 1, 0) if exact else np.where(new, size, 0)
    with _quiet_native_stdout():
        result = milp(cost, constraints=LinearConstraint(matrix.tocsr(), np.concatenate(lows), np.concatenate(highs)),
                      integrality=integrality, bounds=Bounds(lower, upper),
                      options={"time_limit": max(seconds, 0.01), "mip_rel_gap": 0.0, "disp": False,
                               **({} if nodes is None else {"node_limit": int(nodes)})})
    proven = None
    if objective != "bytes":
        if result.status == 2:  # base itself is a solution: numerical trouble
            return Outcome(UNKNOWN)
        bound = getattr(result, "mip_dual_bound", None)
        if bound is not None and np.isfinite(bound):  # HiGHS's gap is at most 1e-6 of a scaled unit
            if objective == "max":  # loads are whole units
                proven = max(int(math.ceil((bound - 1e-6) * scale)) * unit, floor)
            else:  # bytes above a limit that need not be a whole number of units: whole bytes
                proven = max(int(math.ceil((bound - 1e-6) * scale * unit)), 0)
    if result.status == 2:
        return Outcome(INFEASIBLE)
    if result.x is None or result.status not in (0, 1):
        return Outcome(UNKNOWN, floor=proven)
    chosen = np.flatnonzero(result.x[:nv] > 0.5)
    pp, bb = vp[chosen], vb[chosen]  # sorted by partition: np.nonzero is row-major, free is sorted
    counts = np.bincount(pp, minlength=P)
    if not (counts[free] == inst.rf[free]).all():
        return Outcome(UNKNOWN, floor=proven)
    assign = base.copy()
    assign[free] = -1
    first = np.cumsum(counts) - counts
    assign[pp, np.arange(len(pp)) - first[pp]] = bb
    load = inst.loads(assign)
    if (not inst.valid(assign) or (cap is not None and load.max() > cap)
            or (excess is not None and over(load, limit) > excess)):
        return Outcome(UNKNOWN, floor=proven)  # the solver's tolerances let something through: not used
    return Outcome(OPTIMAL if result.status == 0 else FEASIBLE, assign, proven)


def over(load: np.ndarray, limit: int) -> int:
    """Bytes above the limit, summed over the brokers."""
    return int(np.maximum(load - limit, 0).sum())


def moved_bound(inst: Instance, start: np.ndarray, current_load: np.ndarray, limit: int, top: int,
                excess: int) -> int:
    """Least bytes any valid plan must move whose largest broker is at most ``top`` and whose
    bytes above ``limit`` sum to at most ``excess`` (``top <= limit``, ``excess = 0``: plans
    within the limit). The larger of the forced bytes of the fewest-moves placement ``start``
    and what cannot stay: a broker keeps at most what it holds now and at most ``limit``, plus
    its share of ``excess`` (at most ``top - limit`` each); everything else arrives by moves."""
    total = int((inst.sizes * inst.rf).sum())
    kept = int(np.minimum(current_load, limit).sum())
    if top > limit:
        kept += min(excess, int(np.maximum(np.minimum(current_load, top) - limit, 0).sum()))
    return max(inst.moved(start)[0], total - kept)


def max_floor(inst: Instance) -> int:
    """A proven lower bound on the largest broker of any valid plan: the mean (rounded up) and
    the largest partition (a broker holds it whole)."""
    total = int((inst.sizes * inst.rf).sum())
    return max(-(-total // inst.n), int(inst.sizes.max(initial=0)))


def excess_floor(inst: Instance, limit: int) -> int:
    """A proven lower bound on the bytes above the limit, summed over the brokers: what the
    brokers cannot hold at the limit, and every replica larger than the limit alone (replicas
    sharing a broker add up, which only raises its excess)."""
    total = int((inst.sizes * inst.rf).sum())
    alone = int((np.maximum(inst.sizes - limit, 0) * inst.rf).sum())
    return max(total - inst.n * limit, alone, 0)


def unreachable_reason(inst: Instance, limit: int) -> str:
    """Why no plan is within the limit, given that none is: the cheapest proof that holds."""
    if int(inst.sizes.max(initial=0)) > limit:
        return "a partition alone is larger than the limit"
    if max_floor(inst) > limit:
        return "the mean itself rounds up above the limit"
    return "proven by integer program"


def _receivers(inst: Instance, load: np.ndarray, limit: int) -> list[int]:
    """The brokers with the most room under the limit, spread over the racks."""
    receivers = []
    per_rack = max(1, -(-SETTINGS.receivers // inst.num_groups))
    taken = np.zeros(inst.num_groups, np.int64)
    for b in np.argsort(load - limit, kind="stable"):
        if taken[inst.group[b]] < per_rack:
            receivers.append(int(b))
            taken[inst.group[b]] += 1
    return receivers


def _allowed(inst: Instance, free: np.ndarray, receivers: list[int], *plans: np.ndarray) -> np.ndarray:
    """Each free partition may use the receivers and any broker that holds it in ``plans`` or now."""
    allowed = np.zeros((len(free), inst.n), bool)
    allowed[:, receivers] = True
    for source in (*plans, inst.held):
        rows = source[free]
        k, j = np.nonzero(rows >= 0)
        allowed[k, rows[k, j]] = True
    return allowed


def _around(inst: Instance, start: np.ndarray, plan: np.ndarray, b: int, waste: int) -> np.ndarray:
    """Partitions to free around broker ``b``, which shed ``waste`` bytes more than it had to:
    those ``plan`` moved off it, its smallest others, and the others just big enough to replace a
    moved one (a smaller replacement: up to ``waste`` fewer bytes moved)."""
    sizes = inst.sizes
    was = (start == b).any(axis=1) & (sizes > 0)
    gone = was & ~(plan == b).any(axis=1)
    moved, stay = np.flatnonzero(gone), np.flatnonzero(was & ~gone)
    k = SETTINGS.per_broker
    pool = [moved, stay[np.argsort(sizes[stay], kind="stable")[:k]]]
    order = stay[np.argsort(sizes[stay], kind="stable")]
    for m in moved[np.argsort(-sizes[moved], kind="stable")][:k]:
        at = np.searchsorted(sizes[order], sizes[m] - waste)
        pool.append(order[at:at + 2])
    return np.unique(np.concatenate(pool))


def _polish(inst: Instance, start: np.ndarray, plan: np.ndarray, limit: int, deadline: float) -> np.ndarray:
    """Per-broker programs over a plan within the limit, largest waste first (``SETTINGS.rounds``
    of them): each re-chooses what one shedding broker gives away (fewest bytes, then replica
    moves), the rest of the plan fixed."""
    start_load = inst.loads(start)
    load = inst.loads(plan)
    shedders = np.flatnonzero(start_load > limit)
    waste = limit - load[shedders]  # bytes shed beyond the excess
    for i in np.argsort(-waste, kind="stable")[: SETTINGS.rounds]:
        b = int(shedders[i])
        if waste[i] <= 0 or deadline - time.perf_counter() < 0.02:
            break
        load = inst.loads(plan)
        free = _around(inst, start, plan, b, int(limit - load[b]))
        if not len(free):
            continue
        allowed = _allowed(inst, free, _receivers(inst, load, limit), start, plan)
        run = solve_program(inst, plan, free, allowed, objective="bytes", limit=limit, cap=limit,
                            nodes=SETTINGS.local_nodes,
                            seconds=min(SETTINGS.local_call, deadline - time.perf_counter()))
        if run.assign is not None and _better(inst, run.assign, plan, limit):
            plan = run.assign
    return plan


def _neighbourhood(inst: Instance, start: np.ndarray, plan: np.ndarray, limit: int,
                   budget_vars: int) -> tuple[np.ndarray, np.ndarray]:
    """Free partitions (sorted) and their allowed brokers around ``plan``, which is not within
    the limit: what it moved and, for every broker that had to shed or still is the largest, its
    smallest partitions and those nearest what it had to shed, its room and its excess."""
    P, W = plan.shape
    sizes = inst.sizes
    load = inst.loads(plan)
    start_load = inst.loads(start)
    changed = (np.sort(plan, axis=1) != np.sort(start, axis=1)).any(axis=1) & (sizes > 0)
    flat = plan.ravel()  # each broker's sized partitions: slots sorted by broker
    slots = np.flatnonzero(flat >= 0)
    slots = slots[sizes[slots // W] > 0]
    slots = slots[np.argsort(flat[slots], kind="stable")]
    edges = np.searchsorted(flat[slots], np.arange(inst.n + 1))
    heavy = np.flatnonzero((start_load > limit) | (load > limit))
    extra: list[np.ndarray] = []
    for b in heavy[np.argsort(-load[heavy], kind="stable")]:
        mine = slots[edges[b]:edges[b + 1]] // W
        mine = mine[~changed[mine]]
        if not len(mine):
            continue
        extra.append(mine[np.argsort(sizes[mine], kind="stable")][: SETTINGS.per_broker])
        for target in (start_load[b] - limit, limit - load[b], load[b] - limit):
            if target > 0:
                extra.append(mine[np.argsort(np.abs(sizes[mine] - target), kind="stable")][: SETTINGS.per_broker])
    receivers = _receivers(inst, load, limit)
    moved_rows = np.flatnonzero(changed)
    moved_rows = moved_rows[np.argsort(-sizes[moved_rows], kind="stable")]  # the largest first
    pool = np.concatenate([moved_rows, *extra]).astype(np.int64)
    _, first = np.unique(pool, return_index=True)
    most = max(1, budget_vars // (len(receivers) + 2 * W))
    free = np.sort(pool[np.sort(first)][:most])
    return free, _allowed(inst, free, receivers, start, plan)


@dataclass
class Result:
    assign: np.ndarray | None
    solver: str  # "milp", "milp-neighbourhood" or "heuristic"
    optimal: bool  # proven optimal for the rule
    reachable: bool | None  # the limit is reachable (None: not known)
    least_max: int | None = None  # the smallest possible largest broker, when proven (limit unreachable)
    least_over: int | None = None  # the fewest bytes above the limit at it, when proven


def _key(inst: Instance, x: np.ndarray, limit: int) -> tuple[int, int, int, int]:
    """The rule as a sort key: largest broker (the limit if within), bytes above the limit,
    bytes moved, replicas moved."""
    load = inst.loads(x)
    return (max(int(load.max()), limit), over(load, limit), *inst.moved(x))


def _better(inst: Instance, a: np.ndarray, b: np.ndarray, limit: int) -> bool:
    return _key(inst, a, limit) < _key(inst, b, limit)


def _lexicographic(inst: Instance, base: np.ndarray, free: np.ndarray, allowed: np.ndarray, limit: int,
                   deadline: float, nodes: int) -> Result:
    """The rule over one program's variables (``base`` is a valid plan, fixed outside
    ``free``): within the limit if possible, else the least maximum, then the fewest bytes above
    the limit; then the fewest bytes moved. The proofs (``optimal``, ``reachable``, ``least_*``)
    hold for the whole problem only when the program covers every sized partition on every
    broker; the caller keeps only what is global."""
    def left():
        return deadline - time.perf_counter()

    load = inst.loads(base)
    top = int(load.max())
    floor_max = max_floor(inst)
    reachable = True if top <= limit else (False if floor_max > limit else None)
    best = base
    cap, proven, least, least_over, excess = limit, True, None, None, None
    if top > limit:
        if top <= floor_max:
            cap = top  # base meets the bound: its maximum is the least possible
        else:
            run = solve_program(inst, base, free, allowed, objective="max", limit=limit, floor=max(limit, floor_max),
                                ceiling=top, seconds=left(), nodes=nodes)
            if run.floor is not None and run.floor > limit:
                reachable = False
            if run.assign is None:
                return Result(None, "milp", False, reachable)
            best = run.assign
            cap = max(limit, int(inst.loads(best).max()))
            proven = cap <= limit or (run.floor is not None and run.floor >= cap)
        if cap <= limit:
            reachable = True
        else:
            least = cap if proven else None
            excess = over(inst.loads(best), limit)
            if excess > excess_floor(inst, limit) and left() > 0.01:
                run = solve_program(inst, base, free, allowed, objective="excess", limit=limit, cap=cap,
                                    seconds=left(), nodes=nodes)
                if run.assign is not None and over(inst.loads(run.assign), limit) <= excess:
                    best, excess = run.assign, over(inst.loads(run.assign), limit)
                done = run.floor is not None and run.floor >= excess
            else:
                done = excess <= excess_floor(inst, limit)
            proven = proven and done
            least_over = excess if proven else None
        if left() < 0.01:
            return Result(best, "milp", False, reachable, least, least_over)
    run = solve_program(inst, base, free, allowed, objective="bytes", limit=limit, cap=cap, excess=excess,
                        seconds=left(), nodes=nodes)
    if run.assign is None or not _key(inst, run.assign, limit) <= _key(inst, best, limit):
        return Result(best, "milp", False, reachable, least, least_over)
    return Result(run.assign, "milp", run.status == OPTIMAL and proven, reachable, least, least_over)


def _proven_by_bounds(inst: Instance, start: np.ndarray, plan: np.ndarray, limit: int,
                      current_load: np.ndarray) -> bool:
    """Is ``plan`` optimal by the counting bounds alone (no program needed)?"""
    load = inst.loads(plan)
    top = int(load.max())
    if top <= limit:
        return inst.moved(plan)[0] == moved_bound(inst, start, current_load, limit, limit, 0)
    excess = over(load, limit)
    return (top <= max_floor(inst) and excess <= excess_floor(inst, limit)
            and inst.moved(plan)[0] == moved_bound(inst, start, current_load, limit, top, excess))


def improve(inst: Instance, start: np.ndarray, heuristic: np.ndarray, limit: int) -> Result:
    """The best plan the programs find within ``SETTINGS``, starting from the heuristic's."""
    deadline = time.perf_counter() + SETTINGS.seconds
    best, solver = heuristic, "heuristic"
    floor_max = max_floor(inst)
    reachable: bool | None = True if inst.loads(heuristic).max() <= limit else (False if floor_max > limit else None)
    least, least_over = None, None
    current_load = inst.loads(inst.held)
    if _proven_by_bounds(inst, start, heuristic, limit, current_load):
        return _finish(inst, best, solver, True, reachable, limit)
    sized = np.flatnonzero(inst.sizes > 0)
    if len(sized) * inst.n <= SETTINGS.variables:
        # the whole program; zero-byte partitions stay where the fewest-moves placement puts them
        base = start.copy()
        base[sized] = heuristic[sized]
        run = _lexicographic(inst, base, sized, np.ones((len(sized), inst.n), bool), limit, deadline, SETTINGS.nodes)
        reachable = run.reachable if run.reachable is not None else reachable
        least, least_over = run.least_max, run.least_over
        if run.assign is not None and (run.optimal or _better(inst, run.assign, best, limit)):
            best, solver = run.assign, "milp"
        if run.optimal:
            return Result(best, solver, True, reachable, least, least_over)
    local_deadline = time.perf_counter() + SETTINGS.local_seconds
    if inst.loads(best).max() <= limit:
        polished = _polish(inst, start, best, limit, local_deadline)
        if polished is not best:
            best, solver = polished, ("milp" if solver == "milp" else "milp-neighbourhood")
    else:
        free, allowed = _neighbourhood(inst, start, best, limit, SETTINGS.neighbourhood_variables)
        local = _lexicographic(inst, best, free, allowed, limit, local_deadline, 10 * SETTINGS.local_nodes)
        if local.assign is not None and _better(inst, local.assign, best, limit):
            best, solver = local.assign, "milp-neighbourhood"
    optimal = _proven_by_bounds(inst, start, best, limit, current_load)
    result = _finish(inst, best, solver, optimal, reachable, limit)
    if result.least_max is None and least is not None and int(inst.loads(best).max()) == least:
        result.least_max = least
        if least_over is not None and over(inst.loads(best), limit) == least_over:
            result.least_over = least_over
    return result


def _finish(inst: Instance, plan: np.ndarray, solver: str, optimal: bool, reachable: bool | None,
            limit: int) -> Result:
    """The result, with what the counting bounds prove about it."""
    load = inst.loads(plan)
    top = int(load.max())
    if top <= limit:
        return Result(plan, solver, optimal, True)
    least = top if top <= max_floor(inst) else None
    least_over = over(load, limit) if least is not None and over(load, limit) <= excess_floor(inst, limit) else None
    return Result(plan, solver, optimal, reachable, least, least_over)


def limit_for(sizes: np.ndarray, rf: np.ndarray, n: int, tolerance: float) -> int:
    """``floor((1 + tolerance) * total / n)``, the largest load a broker may carry."""
    total = int((sizes * rf).sum())
    return int((1 + tolerance) * total / n)
