"""The goal each move of a plan serves (``_why``): hand-made cases, and the rule checked by undoing moves.

The properties undo each move independently of ``_why``'s arithmetic: the undone placement is built
as an array and measured with ``_goals.measure``, the same function that writes the summary's goals.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import kassign
from kassign.replicas.plan import PlanError
from kassign.replicas.plan._goals import GOALS, build_context, measure
from kassign.replicas.plan._model import build_problem
from kassign.replicas.plan._solve import ReplicaStage, layout
from kassign.replicas.plan._why import VALID, explain, moves_json


def doc(rows):
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in rows]}


def by_move(plan):
    m = explain(plan.context, plan.replicas)
    return {(plan.problem.names(int(p)), int(a), int(b)): g for p, a, b, g in zip(m.partition, m.source, m.dest, m.goal)}


def test_moves_off_a_drained_broker_serve_valid():
    current = doc([("t", p, [p % 3, (p + 1) % 3]) for p in range(6)])
    plan = kassign.plan_reassignment(current, [0, 1, 2, 3], exclude=[0])
    served = by_move(plan)
    assert len(served) == plan.summary["replicas_moved"]
    off = {k: g for k, g in served.items() if k[1] == 0}
    assert len(off) == 4 and set(off.values()) == {VALID}  # broker 0 held 4 replicas
    assert all(g != VALID for k, g in served.items() if k[1] != 0)


def test_moves_onto_an_added_broker_serve_replicas():
    current = doc([("t", p, [p % 2, (p + 1) % 2]) for p in range(6)])
    plan = kassign.plan_reassignment(current, [0, 1, 2, 3])
    served = by_move(plan)
    assert len(served) == 6 and set(served.values()) == {"replicas"}
    assert {b for _, _, b in served} == {2, 3}


def test_a_move_off_a_full_disk_serves_disk_capacity_first():
    # rf 1, no racks, replica counts even after the disk limits: broker 0 (1,000 bytes of disk, limit 800) holds the
    # 750-byte partition alone, broker 1 three of 100. Two replicas each means broker 0 takes two small ones, so the
    # big one must go: undone, broker 0 would hold 950 bytes (disk-capacity), though counts would suffer too
    sizes = {("t", 0): 750, ("t", 1): 100, ("t", 2): 100, ("t", 3): 100}
    current = doc([("t", 0, [0]), ("t", 1, [1]), ("t", 2, [1]), ("t", 3, [1])])
    plan = kassign.plan_reassignment(current, [0, 1], sizes=sizes, goals=["disk-capacity", "replicas"],
                                     capacity={"brokers": {"0": {"disk_bytes": 1000}}}, disk_limit=0.8)
    assert [g["name"] for g in plan.summary["goals"]] == ["disk-capacity", "replicas"]
    served = by_move(plan)
    assert served[(("t", 0), 0, 1)] == "disk-capacity"
    small = {k: g for k, g in served.items() if k[0] != ("t", 0)}
    assert len(small) == 2 and set(small.values()) == {"replicas"}


def test_moves_json_fields():
    current = doc([("t", p, [p % 2, (p + 1) % 2]) for p in range(4)])
    plan = kassign.plan_reassignment(current, [0, 1, 2], sizes={"t": [10, 20, 30, 40]})
    rows = moves_json(plan.context, explain(plan.context, plan.replicas))
    assert rows and all(set(r) == {"topic", "partition", "from", "to", "bytes", "goal"} for r in rows)
    assert all(r["bytes"] == [10, 20, 30, 40][r["partition"]] for r in rows)


def test_no_moves():
    current = doc([("t", p, [p % 3, (p + 1) % 3]) for p in range(6)])
    plan = kassign.plan_reassignment(current, [0, 1, 2])
    assert len(explain(plan.context, plan.replicas)) == 0


# -- the rule, on random plans ---------------------------------------------------------------------------------

@st.composite
def cases(draw):
    racks = draw(st.sampled_from([None, 2, 3]))
    old = draw(st.integers(2, 5))
    brokers_now = list(range(old))
    added = draw(st.integers(0, 2))
    removed = draw(st.integers(0, 1)) if old > 2 else 0
    ids = list(range(removed, old + added))
    rack_of = {b: (None if racks is None else f"r{b % racks}") for b in range(old + added)}
    P = draw(st.integers(1, 8))
    top = min(3, len(ids), old)
    rows, new_rows = [], []
    for p in range(P):
        rf = draw(st.integers(1, top))
        rows.append(("t" if p % 2 else "u", p, draw(st.permutations(brokers_now))[:rf]))
        new_rows.append(draw(st.permutations(ids))[:rf])
    sizes = draw(st.one_of(st.none(), st.lists(st.integers(0, 1000), min_size=P, max_size=P)))
    rates = draw(st.one_of(st.none(), st.lists(st.integers(0, 100), min_size=P, max_size=P)))
    capacity = {"default": {}}
    if draw(st.booleans()):
        capacity["default"]["max_replicas"] = draw(st.integers(1, 6))
    if sizes is not None and draw(st.booleans()):
        capacity["default"]["disk_bytes"] = draw(st.integers(100, 4000))
    if rates is not None and draw(st.booleans()):
        capacity["default"]["network_in_bytes_per_s"] = draw(st.integers(10, 400))
    return rows, new_rows, [(b, rack_of[b]) for b in ids], sizes, rates, capacity


def context(rows, brokers, sizes, rates, capacity):
    current = doc(rows)
    size_map = None if sizes is None else {(t, p): s for (t, p, _), s in zip(rows, sizes)}
    problem = build_problem(current, brokers, (), size_map)
    lay = layout(problem)
    stage = ReplicaStage(problem, lay)
    rate_map = None if rates is None else {(t, p): r for (t, p, _), r in zip(rows, rates)}
    return build_context(problem, lay, stage.cap, stage.low, rates=rate_map, capacity=capacity, disk=None,
                         goals=None, disk_limit=0.8, tolerance=0.05)


def to_targets(ctx, placement):
    t = ctx.problem.targets
    return np.where(placement >= 0, np.searchsorted(t, np.maximum(placement, 0)), -1)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_move_gets_one_goal_and_undoing_it_worsens_that_goal(case):
    rows, new_rows, brokers, sizes, rates, capacity = case
    try:
        ctx = context(rows, brokers, sizes, rates, capacity)
    except PlanError:  # e.g. racks that cannot hold a replication factor
        event("no context")
        return
    W = ctx.problem.current.shape[1]
    proposed = np.full((len(rows), W), -1, np.int64)
    for p, r in enumerate(new_rows):
        proposed[p, :len(r)] = r
    moves = explain(ctx, proposed)
    # the moves are exactly the replicas placed on brokers that did not hold them
    expected = sum(len(set(n) - set(o)) for (_, _, o), n in zip(rows, new_rows))
    assert len(moves) == expected == len(moves.goal)
    labels = [VALID, *ctx.goals]
    assert all(g is None or g in labels for g in moves.goal)
    plan_t = to_targets(ctx, proposed)
    targets = set(ctx.problem.targets.tolist())
    for k in range(len(moves)):
        p, a, b, g = int(moves.partition[k]), int(moves.source[k]), int(moves.dest[k]), moves.goal[k]
        assert a in rows[p][2] and a not in new_rows[p] and b in new_rows[p] and b not in rows[p][2]
        if a not in targets:
            assert g == VALID
            continue
        assert g != VALID
        undone = plan_t.copy()
        ai = int(np.searchsorted(ctx.problem.targets, a))
        bi = int(np.searchsorted(ctx.problem.targets, b))
        undone[p][undone[p] == bi] = ai
        worse = []
        for goal in ctx.goals:
            before = measure(ctx, goal, plan_t, plan_t[:, 0])
            after = measure(ctx, goal, undone, undone[:, 0])
            bad = after > max(1.0, before) if GOALS[goal] == "hard" else after > before
            worse.append(goal) if bad else None
        event(f"served: {g}")
        # the first goal the undone move worsens, or none
        assert g == (worse[0] if worse else None), (k, g, worse)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.booleans())
def test_real_plans_every_move_once(case, drain):
    """Plans the planner makes (counts, or bytes with sizes): one goal per move, as many moves as the summary says,
    and ``valid`` exactly for the replicas leaving brokers that are not targets."""
    rows, _, brokers, sizes, _, _ = case
    ids = [b for b, _ in brokers]
    exclude = [ids[0]] if drain and len(ids) > 3 else []
    size_map = None if sizes is None else {(t, p): s for (t, p, _), s in zip(rows, sizes)}
    try:
        plan = kassign.plan_reassignment(doc(rows), brokers, sizes=size_map, exclude=exclude)
    except PlanError:
        return
    moves = explain(plan.context, plan.replicas)
    assert len(moves) == plan.summary["replicas_moved"] == len(moves.goal)
    targets = set(plan.problem.targets.tolist())
    assert [g == VALID for g in moves.goal] == [int(a) not in targets for a in moves.source]
    assert sum(moves.counts().values()) == len(moves)
    assert {r["goal"] for r in moves_json(plan.context, moves)} <= {VALID, None, *plan.context.goals}
