"""Reassignment plans: where replicas should go when brokers come, go, or are drained.

``plan_reassignment(current, brokers)`` reads kafka-reassign-partitions.sh's JSON and returns
a document in the same shape that the same tool executes.

Data layout: partitions and brokers are integer indexes into int64 numpy arrays from the
moment the input is read (``_model``) until the documents are written (``_document``); the
flow engine (``_flow``) and the byte balancer (``_bytes``) are numba-compiled loops over those
arrays, and the exact byte stage (``_exact``) builds its sparse integer programs from them.
(topic, partition) names exist only at those two edges.

Objectives, in strict order:

1. Valid: every partition on distinct target brokers, spread over min(rf, racks) racks with no
   rack holding more than ceil(rf / racks) of its replicas.
2. Replica counts per target broker as even as (1) allows: the smallest max - min.
3. Among those, the fewest replica moves (a replica placed on a broker that did not hold it).
4. Leaders (first replicas) per target broker as even as possible given the chosen replica
   sets (smallest max - min), then the fewest leader changes. Replicas that stay keep their
   current order; only the leader is brought to the front. (Where several replica choices tie
   on 1-3, the one keeping the most current leaders' replicas is taken, which spares leader
   changes.)

Worked example (no racks): six partitions of rf 2 on brokers 0, 1, 2; broker 3 is added::

    current   t-0 [0, 1]  t-1 [1, 2]  t-2 [2, 0]  t-3 [0, 1]  t-4 [1, 2]  t-5 [2, 0]
    proposed  t-0 [3, 0]  t-1 [1, 3]  t-2 [2, 3]  t-3 [0, 1]  t-4 [1, 2]  t-5 [2, 0]

12 replicas over 4 brokers: 3 each is the only max - min = 0 outcome, and broker 3 must
receive 3 replicas, so 3 moves is the least possible; this plan moves exactly 3 (each
partition that moves drops a follower, not its leader). Leaders: 6 over 4 brokers means 1 or
2 each, so broker 3 must take at least one leadership: exactly one changes (t-0 to broker 3,
which goes first; the replica that stays, 0, keeps its place after it). Kafka's --generate
on the same input (seed 0) moves 6 replicas and changes all 6 leaders as 3.x and 4.0 run it
(AdminUtils), 8 replicas and 6 leaders as 4.1 and later do (the striped placer, KAFKA-18798).

Why the result is optimal:

- (1) is the arc capacities of a flow network ``partition -> (partition, rack) -> broker``:
  a partition sends rf units, at most ceil(rf / racks) (and, where rf >= racks, at least one)
  into each rack, at most one to each broker.
- (2): any plan's maximum is at least ``M*`` (the smallest possible maximum) and its minimum
  at most ``m*`` (the largest possible minimum), so max - min >= M* - m*, with equality exactly
  when every broker lies in ``[m*, M*]``; and that window is jointly reachable (a
  decreasingly-minimal load vector of this M-convex set attains both). ``M*`` and ``m*`` come
  exactly from a network over racks and replication-factor classes (``_bounds``).
- (3): the min-cost flow with broker totals bounded by ``[m*, M*]``, cost ``K`` per unit on a
  broker that did not hold the partition and 1 per kept follower (``K - 1`` > partitions, so
  moves dominate: cost = sum(rf) + (K - 1) moves - kept leaders) has an integral optimum
  (network matrix); the solver (``_flow``) runs successive shortest paths from the pseudo-flow
  "keep every current replica that may stay", which is optimal for its own excesses, so it
  ends at that optimum: the fewest moves.
- (4): the same engine on ``partition -> one of its replicas``, cost 1 per leader that is not
  the current one, inside the leader window; the window's ends come from feasibility flows
  whose failures yield Hall-type cuts (a set of brokers that must lead a known number of
  partitions), which bound the ends until a flow succeeds.

With ``sizes`` the goal becomes bytes: every broker within ``tolerance`` (default 5%) above the
mean where the partitions allow (else the least possible largest broker, then the fewest bytes
above the limit), then the fewest bytes moved; validity stays exact. That is bin packing
(NP-hard): a greedy heuristic (``_bytes``) gives a plan fast, and integer programs (``_exact``,
HiGHS through scipy) make it exact where the input is small enough for them to finish, or
improve it over neighbourhoods where it is not. The summary says which (``bytes_solver``),
whether the result is proven optimal (``bytes_optimal``), whether the tolerance is reachable
(``bytes_tolerance_reachable``: true, false with a proof, or null when unknown) and a proven
lower bound on the bytes moved (``bytes_moved_bound``). ``max_moves``
gives the smallest spread reachable within that many moves, then the fewest moves (exact:
convex in the window's position, monotone in its width). ``exclude`` drains brokers. ``batches``
splits the changed partitions into steps that each run on their own.

Goals (``rates``, ``capacity``, ``disk``, ``goals``): what operators balance beyond counts. ``_goals``
names them, reads their inputs and measures each one (the summary's ``goals``: before, after and a
proven bound); ``_lexi`` optimises them in order by integer programs, hard goals (rack, disk
capacity, replicas per broker, network in) as constraints throughout, each soft goal kept at what it
reached while the next is optimised, then the fewest moves, bytes moved and leader changes. Where those
programs do not fit (2 x partitions x brokers above ``_lexi.SETTINGS.variables``, any real cluster) ``_scale``
plans the goals in the same order with flows and swaps: replica counts and topic spread exact (flows), bytes and
bytes in by swaps of same-topic replicas that keep every count, leaders by the leader flow and leadership swaps;
its plan is also the programs' first plan where they fit. Without those inputs the plan is exactly the one
above, and its goals are measured with counting bounds.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from kassign.core.limits import is_whole_number
from kassign.replicas.plan._bytes import balance_bytes
from kassign.replicas.plan._describe import parse_describe
from kassign.replicas.plan._goals import GOALS, RATIO, build_context, cheap_bound, check_fraction, means, measure
from kassign.replicas.plan._goals import inputs as goal_inputs
from kassign.replicas.plan._goals import row as goal_row
from kassign.replicas.plan._lexi import Outcome, fits, solve_goals
from kassign.replicas.plan._scale import plan_scale
from kassign.replicas.plan._exact import Instance, improve, limit_for, moved_bound, over, unreachable_reason
from kassign.replicas.plan._document import document, kafka_generate, order_replicas, split_batches
from kassign.replicas.plan._model import PlanError, Problem, build_problem
from kassign.replicas.plan._report import figures
from kassign.core.units import human_bytes
from kassign.replicas.plan._solve import ReplicaStage, layout, solve_leaders, solve_replicas, solve_replicas_capped

__all__ = ["PlanError", "ReassignmentPlan", "human_bytes", "kafka_generate_document", "parse_describe",
           "plan_reassignment"]

OPTIONS = ("max_moves", "exclude", "batches")
ROOMLESS = np.int64(1) << np.int64(62)  # no disk room set: no broker's bytes come near it


class ReassignmentPlan(dict):
    """The proposed document itself (``{"version": 1, "partitions": [...]}``, ready for
    ``json.dump``), with what went into it as attributes:

    - ``rollback``: the current document, as given (run it to undo the plan);
    - ``batches``: the plan as a list of documents to run one after another (one when no
      ``batches`` option was given);
    - ``summary``: figures (replicas, leaders, bytes per broker and rack before and after,
      replicas/bytes moved, leader changes, the balance windows reached);
    - ``problem`` and ``replicas``: the arrays behind it (for the CLI and tests);
    - ``context``: the goals' inputs and measures (``_goals.Context``), which ``_why`` reads to say
      which goal each move serves.
    """

    rollback: dict
    batches: list[dict]
    summary: dict[str, Any]
    problem: Problem
    replicas: np.ndarray
    context: Any


def _whole(value: Any, name: str, least: int) -> int:
    if not is_whole_number(value) or value < least:
        raise PlanError(f"{name} must be a whole number >= {least}, got {value!r}")
    return int(value)


def plan_reassignment(current: Any, brokers: Any, *, sizes: Any = None, rates: Any = None, capacity: Any = None,
                      goals: Any = None, disk: Any = None, disk_limit: float = 0.8, tolerance: float = 0.05,
                      **options: Any) -> ReassignmentPlan:
    """Plan a reassignment (see the module docstring for the objectives and why they hold).

    ``current``: kafka-reassign-partitions.sh's JSON (dict or text): ``{"version": 1,
    "partitions": [{"topic", "partition", "replicas"}]}``, leader first. ``brokers``: ``[(id,
    rack_or_None), ...]`` (or plain ids, or a dict of id -> rack_or_None) that should hold replicas afterwards. ``sizes``: bytes per partition
    (``{(topic, partition): bytes}``, ``{topic: [bytes, ...]}`` or a table with topic, partition,
    bytes such as the pipeline's partition_load); turns on byte balancing.

    Goals (``_goals``, ``_lexi``): ``rates`` (``{topic: {partition: bytes in per second}}``, the
    forms ``sizes`` takes), ``capacity`` (``{"default": {...}, "brokers": {"ID": {...}}}`` with any of
    ``disk_bytes``, ``network_in_bytes_per_s``, ``network_out_bytes_per_s``, ``max_replicas``), ``disk``
    (per broker as its log dirs report it: ``{id: {"total_bytes": T, "usable_bytes": U}}``, or ``{id:
    T}``; a capacity's ``disk_bytes`` overrides ``T``), ``goals`` (goal names, in order; default every goal
    in force, in the table's order), ``disk_limit`` (the fraction of a broker's disk it may fill, in (0,
    1]). Given any of ``rates``, ``capacity``, ``goals`` or ``disk``, the plan optimises the goals in
    order; without them it is exactly the plan of the objectives above. Either way ``summary["goals"]``
    measures every goal in force before and after.

    Options: ``max_moves`` (at most this many replica moves), ``exclude`` (broker ids to drain),
    ``batches`` (split into this many steps); ``tolerance`` (bytes, and bytes in: largest broker at
    most this fraction above the mean, default 0.05).

    Returns the proposed document (a ``ReassignmentPlan``, a dict) listing every partition of
    ``current`` with its replication factor ([reassignment documents](formats.md#reassignment-documents)); its
    ``summary`` holds the figures ``kassign plan --json`` prints as ``summary``
    ([JSON output](outputs.md#kassign-plan)). Raises ``PlanError`` (a ``KassignError``).
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise PlanError(f"unknown option(s) {', '.join(unknown)}; choose from {', '.join(OPTIONS)}")
    max_moves = options.get("max_moves")
    if max_moves is not None:
        max_moves = _whole(max_moves, "max_moves", 0)
    batches = _whole(options.get("batches", 1), "batches", 1)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance < 10:
        raise PlanError(f"tolerance must be a fraction >= 0 such as 0.05, got {tolerance!r}")
    exclude = options.get("exclude") or ()
    if is_whole_number(exclude):
        exclude = [int(exclude)]
    disk_limit = check_fraction(disk_limit, "disk_limit")
    problem = build_problem(current, brokers, exclude, sizes)
    lay = layout(problem)
    stage = ReplicaStage(problem, lay)
    ctx = build_context(problem, lay, stage.cap, stage.low, rates=rates, capacity=capacity, disk=disk, goals=goals,
                        disk_limit=disk_limit, tolerance=float(tolerance))
    with_goals = any(x is not None for x in (rates, capacity, goals, disk))
    window = stage.window()  # raises when the racks cannot hold some replication factor
    info: dict[str, Any] = {}
    outcome = None
    # too large for the programs: the scale path (flows and swaps); it knows no move budget, so a plan over one
    # falls to the count and byte stages below, which do
    scale = _scale_plan(ctx, stage, max_moves) if with_goals and not fits(ctx) else None
    if scale is not None:
        assign, leaders = scale.assign, scale.leaders
        info, leader_info = _windows(assign, leaders, len(problem.targets))
        outcome = Outcome(None, {"replicas": float(scale.window[1] - scale.window[0])}, dict(scale.optimal), "scale")
        problem.notes.extend(scale.notes)
    elif with_goals and fits(ctx):
        try:
            first = _scale_plan(ctx, stage, max_moves)
        except PlanError:  # it breaks a hard goal: the count and byte stages' plan is the programs' start instead
            first = None
        seed = (first.assign, first.leaders) if first is not None else \
            _seed(problem, stage, max_moves, float(tolerance), disk_room(ctx))
        outcome = solve_goals(ctx, max_moves, seed)
        h = outcome.plan.h
        assign = np.full((problem.num_partitions, problem.current.shape[1]), -1, np.int64)
        rows, cols = np.nonzero(h)
        slot = np.arange(len(rows)) - (np.cumsum(np.bincount(rows, minlength=len(h))) - h.sum(axis=1))[rows]
        assign[rows, slot] = cols
        leaders = outcome.plan.leaders
        info, leader_info = _windows(assign, leaders, len(problem.targets))
    else:
        if with_goals and problem.sizes is None and max_moves is None and "replica-capacity" in ctx.goals:
            assign, info = solve_replicas_capped(stage, ctx.max_replicas)  # exact: the flow with per-broker caps
        elif problem.sizes is None:
            assign, info = solve_replicas(stage, max_moves)
        else:
            assign, info = _bytes_plan(problem, stage, max_moves, float(tolerance),
                                       disk_room(ctx) if with_goals else None)
        leaders, leader_info = solve_leaders(assign, stage.pref[:, 0], len(problem.targets))
    targets = problem.targets
    final_ids = np.where(assign >= 0, targets[np.maximum(assign, 0)], -1)
    leader_ids = targets[leaders]
    proposed = order_replicas(problem.current, final_ids, leader_ids, problem.rf)
    plan = ReassignmentPlan(document(problem, proposed))
    plan.rollback = problem.document
    plan.problem = problem
    plan.replicas = proposed
    plan.context = ctx
    plan.batches = [document(problem, proposed, rows) for rows in split_batches(problem, proposed, batches)]
    summary = figures(problem, proposed)
    summary.update(replica_window=info.get("window"), leader_window=leader_info["window"],
                   notes=list(problem.notes), racks_used=lay.rack_aware, batches=len(plan.batches))
    if scale is not None and scale.moves_bound is not None:
        summary["moves_bound"] = scale.moves_bound
    if "optimal_moves" in info:
        summary["optimal_window"] = info["optimal_window"]
        summary["moves_for_optimal_window"] = info["optimal_moves"]
    if max_moves is not None:
        summary["max_moves"] = max_moves
    if problem.sizes is not None and outcome is None:
        summary.update({k: v for k, v in info.items() if k.startswith("bytes_") or k == "tolerance"})
    _goal_rows(summary, ctx, assign, leaders, outcome, info, window, with_goals)
    summary["inputs"] = goal_inputs(ctx, disk)
    summary["notes"] += ctx.notes
    plan.summary = summary
    return plan


def _goal_rows(summary: dict, ctx: Any, assign: np.ndarray, leaders: np.ndarray, outcome: Any, info: dict,
               window: tuple[int, int], with_goals: bool) -> None:
    """``summary["goals"]``: each goal in force, before and after, with its proven bound (``_goals``)."""
    rows = []
    for goal in ctx.goals:
        before = measure(ctx, goal, ctx.now, ctx.leader_now)
        after = measure(ctx, goal, assign, leaders)
        if outcome is not None:  # the program's bound, or counting's where that is better
            bound = outcome.bounds.get(goal)
            floor = cheap_bound(ctx, goal)
            if floor is not None and (bound is None or floor > bound):
                bound = floor
        else:
            bound = cheap_bound(ctx, goal)
            if goal == "replicas" and info.get("window_exact"):  # exact: the capped flow's window
                bound = float(info["window"][1] - info["window"][0])
            elif goal == "replicas":  # exact without caps, a lower bound with them: the window of _bounds
                bound = float(window[1] - window[0])
            elif goal == "disk" and info.get("bytes_least_max") is not None:
                bound = info["bytes_least_max"] / means(ctx)["disk"]
        if bound is not None and bound > after:  # a counting bound can only be as good as a plan
            bound = after
        rows.append(goal_row(ctx, goal, before, after, bound))
        if GOALS[goal] == "hard" and after > 1 + 1e-9:
            raise PlanError(f"{goal} is not met by the plan the fast stages found ({after:.3f} of the limit), and the "
                            f"input ({ctx.problem.num_partitions} partitions x {ctx.n} brokers) is too large for the "
                            "exact goal stage; not proven impossible")
    summary["goals"] = rows
    def shown(goal: str, x: float) -> str:
        return f"{x:.4f}x the mean" if goal in RATIO else f"{x:,}"

    earlier: list[str] = []
    for r in rows:  # an unmet soft goal: its bound is over every valid plan, not over those keeping the goals before
        if r["kind"] == "soft" and not r["met"] and earlier and r["bound"] is not None:
            ctx.notes.append(f"{r['name']} is not met ({shown(r['name'], r['after'])}, where no valid plan does better "
                             f"than {shown(r['name'], r['bound'])}): the goals before it ({', '.join(earlier)}) are "
                             "kept at what they reached, which may leave it no room to get there; name it earlier in "
                             "--goals (goals=) to balance it before them")
        if r["kind"] == "soft":
            earlier.append(r["name"])
    if outcome is not None:
        summary["goals_solver"] = outcome.solver
        summary["goals_optimal"] = dict(outcome.optimal)
    else:
        summary["goals_solver"] = "flow" if ctx.sizes is None else "flow+bytes"


def disk_room(ctx: Any) -> np.ndarray:
    """Per target broker: the planned bytes it may hold under disk-capacity (its limit less its other bytes);
    ``ROOMLESS`` where the goal sets none."""
    room = np.full(ctx.n, ROOMLESS, np.int64)
    if "disk-capacity" in ctx.goals:
        on = ctx.disk_room >= 0
        room[on] = np.maximum(ctx.disk_room[on] - ctx.disk_other[on], 0)
    return room


def _scale_plan(ctx: Any, stage: ReplicaStage, max_moves: int | None) -> Any:
    """The scale path's plan (``_scale``: counts and topic spread by flows, bytes and rates by swaps, leaders), or
    None where it takes more than ``max_moves``; raises ``PlanError`` where it breaks a hard goal. The plan where
    the programs do not fit, and their first plan where they do."""
    scale = plan_scale(ctx, stage)
    if max_moves is not None and stage.moves(scale.assign) > max_moves:
        return None
    return scale


def _windows(assign: np.ndarray, leaders: np.ndarray, n: int) -> tuple[dict, dict]:
    """The replica and leader windows (fewest and most per target broker) of a plan made by the goal stages."""
    counts = np.bincount(assign[assign >= 0], minlength=n)
    leader_counts = np.bincount(leaders, minlength=n)
    return ({"window": [int(counts.min()), int(counts.max())]},
            {"window": [int(leader_counts.min()), int(leader_counts.max())]})


def _seed(problem: Problem, stage: ReplicaStage, max_moves: int | None, tolerance: float,
          room: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The fast stages' plan (counts: the flow; bytes: the flow and the greedy balancer), leaders by the
    leader flow: a start for the goal programs. None where it cannot be made (a move budget too small)."""
    try:
        if problem.sizes is None:
            assign, _ = solve_replicas(stage, max_moves)
        else:
            assign = stage.solve(0, problem.num_partitions)
            if assign is None or (max_moves is not None and stage.moves(assign) > max_moves):
                return None
            n = len(problem.targets)
            balance_bytes(assign, stage.pref, problem.sizes, stage.cap, stage.low, stage.layout.group_of_broker,
                          n, limit_for(problem.sizes, problem.rf, n, tolerance),
                          -1 if max_moves is None else max_moves, 20 * int(problem.rf.sum()) + 100, 8, room)
    except PlanError:
        return None
    leaders, _ = solve_leaders(assign, stage.pref[:, 0], len(problem.targets))
    return assign, leaders


def _bytes_plan(problem: Problem, stage: ReplicaStage, max_moves: int | None,
                tolerance: float, room: np.ndarray | None = None) -> tuple[np.ndarray, dict]:
    """The valid placement with the fewest moves, greedy byte balancing from it (``_bytes``),
    then the integer programs (``_exact``): exact where they fit, an improvement otherwise.

    ``room`` (per broker, goals too large for the goal programs): bytes no broker may exceed (disk-capacity).
    The greedy stage never exceeds it; the programs do not know it, so their plan is taken only where it
    stays within it (else the greedy plan, and the summary says ``bytes_solver: "heuristic"``)."""
    P = problem.num_partitions
    start = stage.solve(0, P)
    if start is None:  # pragma: no cover - an open window always admits a flow
        raise AssertionError("no valid placement")
    forced = stage.moves(start)
    if max_moves is not None and forced > max_moves:
        raise PlanError(f"max_moves={max_moves} is too few: making every partition valid (off removed or excluded "
                        f"brokers, racks spread) already takes {forced} replica moves")
    n = len(problem.targets)
    limit = limit_for(problem.sizes, problem.rf, n, tolerance)
    heuristic = start.copy()
    roomy = room is None or bool((room == ROOMLESS).all())
    balance_bytes(heuristic, stage.pref, problem.sizes, stage.cap, stage.low, stage.layout.group_of_broker,
                  n, limit, -1 if max_moves is None else max_moves, 20 * int(problem.rf.sum()) + 100, 8,
                  np.full(n, ROOMLESS, np.int64) if room is None else room)
    inst = Instance(problem.sizes, problem.rf, stage.pref, stage.cap, stage.low, stage.layout.group_of_broker,
                    stage.layout.num_groups, n, max_moves)
    result = improve(inst, start, heuristic, limit)
    if not roomy and (inst.loads(result.assign) > room).any():  # the programs do not know the disk room
        result = replace(result, assign=heuristic, solver="heuristic", optimal=False,
                         reachable=False if result.reachable is False else None, least_max=None, least_over=None)
    assign = result.assign
    loads = inst.loads(assign)
    top = int(loads.max())
    within = top <= limit
    moved = inst.moved(assign)[0]
    excess = over(loads, limit)
    bound = moved if result.optimal else moved_bound(inst, start, inst.loads(inst.held), limit, top, excess)
    counts = np.bincount(assign[assign >= 0], minlength=n)
    info = {"window": [int(counts.min()), int(counts.max())], "tolerance": tolerance, "bytes_limit": limit,
            "bytes_within_tolerance": within, "bytes_tolerance_reachable": result.reachable,
            "bytes_optimal": result.optimal, "bytes_solver": result.solver, "bytes_moved_bound": bound,
            "bytes_over_limit": excess}
    mean = float((problem.sizes * problem.rf).sum()) / n
    budget = f" within max_moves={max_moves}" if max_moves is not None else ""
    if result.reachable is False:
        info["bytes_least_max"] = result.least_max
        reached = ""
        if result.least_max is not None:
            reached = (f"; the least possible largest broker is {human_bytes(result.least_max)} "
                       f"({result.least_max / mean:.3f} x the mean), which this plan reaches")
            if result.least_over is not None:
                reached += (f", with the fewest bytes above the limit summed over the brokers "
                            f"({human_bytes(result.least_over)})")
        problem.notes.append(f"bytes: the partitions do not allow the largest broker within {tolerance:.0%} of the "
                             f"mean{budget} ({unreachable_reason(inst, limit)}){reached}")
    elif result.reachable is None:
        problem.notes.append(f"bytes: the largest broker is not within {tolerance:.0%} of the mean{budget}, and the "
                             "search stopped before proving whether any plan could be (too large for the exact stage)")
    return assign, info


def kafka_generate_document(current: Any, brokers: Any, *, exclude: Any = (), seed: int = 0,
                            kafka_version: str | None = None) -> dict:
    """What ``kafka-reassign-partitions.sh --generate`` of ``kafka_version`` (default the newest, 4.4) would
    propose for the same input: AdminUtils per topic up to 4.0, the striped placer from 4.1 (KAFKA-18798); its
    random start fixed by ``seed``."""
    problem = build_problem(current, brokers, exclude or ())
    return document(problem, kafka_generate(problem, seed, kafka_version))
