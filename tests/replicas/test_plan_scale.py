"""Goal plans on the scale path (``_scale``: flows for counts and topic spread, swaps for bytes and rates, leaders),
forced on small inputs by setting the programs' size limit to 0, and checked against independent figures:

- every hard goal holds in the plan document (read straight off it), or the plan stops with one line naming it;
- replica counts and topic spread are at their flow optimum wherever ``goals_optimal`` says so (an independent
  integer program over whole replica-set choices, ``test_plan_goals.Model``, on small clusters);
- every ``bound`` is true (no plan meeting the hard goals does better), ``moves_bound`` too;
- swaps keep every broker's and every (topic, broker) replica count.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kassign
from kassign.replicas.plan import PlanError

from .plan_helpers import check_valid, moves
from .test_plan_goals import HARD, RATIO, Model, cluster


@pytest.fixture
def scale(monkeypatch):
    from kassign.replicas.plan import _lexi

    monkeypatch.setattr(_lexi.SETTINGS, "variables", 0)


def zipf_cluster(seed: int, partitions: int = 600, exponent: float = 1.1, topics: int = 4):
    """Nine brokers in three racks placed as Kafka places topics, three added; sizes ~ 1 GB / rank^exponent."""
    rng = random.Random(seed)
    racks = ["a", "b", "c"]
    old = [(b, racks[b % 3]) for b in range(9)]
    place = kassign.assign_replicas(old, partitions, 3, seed=seed)
    current = {"version": 1, "partitions": [{"topic": f"t{p % topics}", "partition": p, "replicas": r}
                                            for p, r in place.items()]}
    brokers = old + [(9, "a"), (10, "b"), (11, "c")]
    ranks = list(range(1, partitions + 1))
    rng.shuffle(ranks)
    sizes: dict = {}
    rates: dict = {}
    rate_ranks = ranks[:]
    rng.shuffle(rate_ranks)
    for e, k, j in zip(current["partitions"], ranks, rate_ranks):
        sizes.setdefault(e["topic"], {})[e["partition"]] = int(1e9 / k ** exponent) + 1
        rates.setdefault(e["topic"], {})[e["partition"]] = int(1e7 / j ** exponent) + 1
    return current, brokers, sizes, rates


def test_leaders_reach_their_ideal_where_bytes_fit_in_balanced_counts(scale):
    """Issue #39's "leaders 780 (bound 1)": above the programs' size the plan used to come from the greedy byte
    balancer, which moves replicas without regard to counts and left some broker holding fewer replicas than the
    leaders it would need to lead (the leader flow is exact for the replica sets it is given, so the spread was
    forced by those sets). Here the disk tolerance is reachable with every count balanced, so every later goal
    must reach its ideal too."""
    current, brokers, sizes, _ = zipf_cluster(0)
    plan = kassign.plan_reassignment(current, brokers, sizes=sizes, goals=["disk", "replicas", "topic-spread",
                                                                          "leaders"])
    rows = {r["name"]: r for r in plan.summary["goals"]}
    assert rows["leaders"]["after"] == rows["leaders"]["bound"] == 0, rows["leaders"]  # was 43
    assert rows["disk"]["after"] <= 1.05 and rows["disk"]["met"]
    assert rows["replicas"]["after"] == 0 and rows["topic-spread"]["after"] == rows["topic-spread"]["bound"] == 4


def _counts(doc: dict) -> tuple[Counter, Counter]:
    per_broker = Counter(b for e in doc["partitions"] for b in e["replicas"])
    per_topic = Counter((e["topic"], b) for e in doc["partitions"] for b in e["replicas"])
    return per_broker, per_topic


def test_a_few_thousand_partitions_every_goal(scale):
    """3,000 partitions on 12 brokers with sizes, rates and capacities: every hard goal kept, counts and topic
    spread at their ideal (claimed and true), disk and network in within the tolerance, bounds true."""
    current, brokers, sizes, rates = zipf_cluster(1, partitions=3000, exponent=0.8, topics=7)
    total = sum(v for t in sizes.values() for v in t.values()) * 3 / 12
    rate_total = sum(v for t in rates.values() for v in t.values()) * 3 / 12
    capacity = {"default": {"disk_bytes": int(total / 0.7), "network_in_bytes_per_s": int(1.5 * rate_total),
                            "max_replicas": math.ceil(1.05 * 9000 / 12)}}
    plan = kassign.plan_reassignment(current, brokers, sizes=sizes, rates=rates, capacity=capacity)
    check_valid(dict(plan), current, brokers)
    s = plan.summary
    assert s["goals_solver"] == "scale" and s["goals_optimal"]["replicas"] and s["goals_optimal"]["topic-spread"]
    rows = {r["name"]: r for r in s["goals"]}
    for goal in ("rack", "disk-capacity", "replica-capacity", "network-capacity"):
        assert rows[goal]["met"] and rows[goal]["after"] <= 1, rows[goal]
    per_broker, per_topic = _counts(dict(plan))
    assert max(per_broker.values()) - min(per_broker.values()) == rows["replicas"]["after"] == 0
    for t in {e["topic"] for e in current["partitions"]}:
        c = [per_topic[(t, b)] for b, _ in brokers]
        assert max(c) - min(c) <= 1
    assert rows["disk"]["after"] <= 1.05 and rows["network-in"]["after"] <= 1.05
    for r in s["goals"]:
        assert r["bound"] is None or r["bound"] <= r["after"] + 1e-9, r
    assert s["moves_bound"] <= moves(dict(plan), current)


def test_swaps_keep_every_count():
    """``_swap_phase`` on a random placement: per-broker and per-(topic, broker) counts unchanged, loads as
    recomputed, the rack rule kept, and no broker's load above the ceiling it was given."""
    from kassign.replicas.plan import _scale

    rng = np.random.default_rng(5)
    P, n, T, G = 400, 10, 5, 2
    gob = np.arange(n) % G
    assign = np.zeros((P, 2), np.int64)
    for p in range(P):  # rf 2 over both racks
        assign[p] = [rng.choice(np.flatnonzero(gob == 0)), rng.choice(np.flatnonzero(gob == 1))]
    topic = rng.integers(0, T, P)
    cap, low = np.ones(P, np.int64), np.ones(P, np.int64)
    w = (1e6 / np.arange(1, P + 1) ** 0.9).astype(np.int64)[rng.permutation(P)]
    ws = rng.integers(1, 1000, P)
    before = Counter(zip(topic[np.repeat(np.arange(P), 2)], assign.ravel()))

    def load(weights: np.ndarray) -> np.ndarray:
        return np.bincount(assign.ravel(), weights=np.repeat(weights, 2), minlength=n).astype(np.int64)

    Lp, Ls = load(w), load(ws)
    grp = topic[np.repeat(np.arange(P), 2)] * n + assign.ravel()
    order = np.lexsort((np.repeat(w, 2), grp))
    entries = np.arange(2 * P)[order].astype(np.int64)
    seg = np.zeros(T * n + 1, np.int64)
    np.cumsum(np.bincount(grp, minlength=T * n), out=seg[1:])
    limit = int(1.05 * Lp.mean())
    ceil_s = np.full(n, int(Ls.max()), np.int64)
    swaps, _ = _scale._swap_phase(assign, assign.copy(), gob, cap, low, entries, seg, n, T, w, ws, Lp, Ls,
                                  np.full(n, limit, np.int64), np.full(n, 1 << 62, np.int64), ceil_s, 10_000, 3, 1,
                                  np.zeros(4, np.int64), True)
    assert swaps > 0
    assert Counter(zip(topic[np.repeat(np.arange(P), 2)], assign.ravel())) == before
    assert (Lp == load(w)).all() and (Ls == load(ws)).all() and (Ls <= ceil_s).all()
    assert (gob[assign[:, 0]] != gob[assign[:, 1]]).all() and (assign[:, 0] != assign[:, 1]).all()
    for t in range(T):  # each (topic, broker) group still sorted by weight
        for b in range(n):
            seg_w = w[entries[seg[t * n + b]:seg[t * n + b + 1]] // 2]
            assert (np.diff(seg_w) >= 0).all()


def check_scale(seed: int) -> str:
    """One small seeded cluster (``test_plan_goals.cluster``) on the scale path, against the independent program."""
    current, brokers, sizes, rates, capacity, goals = cluster(seed)
    model = Model(current, brokers, sizes, rates, capacity, 0.8, 0.05)
    feasible = model.solve(None) is not None
    try:
        plan = kassign.plan_reassignment(current, brokers, sizes=sizes, rates=rates, capacity=capacity, goals=goals)
    except PlanError as err:
        text = str(err)
        assert "\n" not in text and any(g in text for g in HARD), text
        if feasible:  # the scale path may miss a hard goal, but must not call it impossible
            assert "not proven impossible" in text, (seed, text)
        return "stopped"
    assert feasible, f"seed {seed}: planned although no plan meets the hard goals"
    check_valid(dict(plan), current, brokers)
    doc = {(e["topic"], e["partition"]): e["replicas"] for e in plan["partitions"]}
    fig = model.figures_of(doc)
    for name, lim in model.limits.items():
        for b, value in lim.items():
            assert fig[name][b] <= value, (seed, name, b, fig[name][b], value)
    rows = {r["name"]: r for r in plan.summary["goals"]}
    optimal = plan.summary["goals_optimal"]
    for goal in plan.summary["inputs"]["goals"]:
        row = rows[goal]
        if goal in HARD:
            assert row["met"], row
            continue
        free = model.solve(goal)
        if row["bound"] is not None:
            if goal in RATIO:
                assert row["bound"] * model.mean(goal) <= free + 1e-6 * max(1, free), (seed, goal, row, free)
            else:
                assert row["bound"] <= free, (seed, goal, row, free)
        if goal in ("replicas", "topic-spread") and optimal.get(goal):  # claimed: the best any plan reaches
            assert model.value(goal, fig) == free, (seed, goal, model.value(goal, fig), free)
    if "moves_bound" in plan.summary:
        assert plan.summary["moves_bound"] <= moves(dict(plan), current)
    return "planned"


@pytest.mark.parametrize("seed", range(40))
def test_scale_path_against_the_independent_program(seed, scale):
    check_scale(seed)


@pytest.mark.slow
def test_scale_path_against_the_independent_program_sweep(scale):
    outcomes = Counter(check_scale(seed) for seed in range(40, 400))
    assert outcomes["planned"] > 200, outcomes


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 10 ** 6), st.integers(3, 8), st.booleans(), st.integers(20, 200))
def test_scale_properties(scale, seed, n, racked, partitions):
    """Random clusters (mixed replication factors, skewed sizes and rates, a new broker, racks or none): valid,
    counts at their flow window, every bound at most the plan's value, swaps never break a hard goal."""
    rng = random.Random(seed)
    racks = ["x", "y", "z"][:max(1, min(3, n - 2))] if racked else [None]
    brokers = [(b, racks[b % len(racks)]) for b in range(n)]
    holders = [b for b, _ in brokers[:-1]]
    parts = []
    for p in range(partitions):
        rf = min(rng.choice([1, 2, 3, 3]), len(holders))
        parts.append({"topic": f"t{p % 5}", "partition": p, "replicas": rng.sample(holders, rf)})
    current = {"version": 1, "partitions": parts}
    sizes = {f"t{k}": {} for k in range(5)}
    rates = {f"t{k}": {} for k in range(5)}
    for e in parts:
        sizes[e["topic"]][e["partition"]] = int(rng.paretovariate(1.1) * 1000)
        rates[e["topic"]][e["partition"]] = int(rng.paretovariate(1.3) * 100)
    reps = sum(len(e["replicas"]) for e in parts)
    capacity = {"default": {"max_replicas": math.ceil(reps / n * 1.1) + 1}}
    try:
        plan = kassign.plan_reassignment(current, brokers, sizes=sizes, rates=rates, capacity=capacity)
    except PlanError as err:
        assert "\n" not in str(err) and any(g in str(err) for g in HARD)
        return
    check_valid(dict(plan), current, brokers)
    rows = {r["name"]: r for r in plan.summary["goals"]}
    for r in plan.summary["goals"]:
        assert r["bound"] is None or r["bound"] <= r["after"] + 1e-9, r
        if r["kind"] == "hard":
            assert r["after"] <= 1 + 1e-9
    per_broker, _ = _counts(dict(plan))
    assert max(per_broker[b] for b, _ in brokers) <= capacity["default"]["max_replicas"]
    if plan.summary["goals_optimal"]["replicas"]:
        lo, hi = plan.summary["replica_window"]
        assert rows["replicas"]["after"] == rows["replicas"]["bound"] == hi - lo



@pytest.mark.parametrize("seed", range(8))
def test_leader_candidates_by_rate_and_leader(seed):
    """``_by_rate`` lists each broker's partitions by rate, largest first (then by partition); ``_gather`` gives
    exactly A's led partitions per other holder, by rate, largest first, and A's other partitions bucketed by
    their leader (``qS``), each bucket by rate."""
    from kassign.replicas.plan._scale import _by_rate, _gather

    rng = np.random.default_rng(seed)
    n, P, W = 5 + seed, 40 + 9 * seed, 3
    assign = np.array([rng.choice(n, W, replace=False) for _ in range(P)], np.int64)
    rates = rng.integers(0, 6 if seed % 2 else 1000, size=P).astype(np.int64)
    leaders = assign[np.arange(P), rng.integers(0, W, size=P)].copy()
    start, items = _by_rate(assign, rates, n)
    for b in range(n):
        mine = items[start[b]:start[b + 1]].tolist()
        assert sorted(mine) == sorted(p for p in range(P) if b in assign[p])
        assert mine == sorted(mine, key=lambda p: (-rates[p], p))
    m = int(np.diff(start).max())
    bufs = [np.empty(m * W, np.int64) for _ in range(4)] + [np.empty(m, np.int64) for _ in range(3)]
    qS, cnt = np.zeros(n + 1, np.int64), np.empty(n + 1, np.int64)
    for A in range(n):
        np_, nq = _gather(A, n, start, items, leaders, assign, rates, *bufs, qS, cnt)
        pB, pR, pI, pK, qB, qR, qI = bufs
        want = sorted((int(pI[k]), int(pB[k])) for k in range(np_))
        assert want == sorted((p, int(b)) for p in range(P) if leaders[p] == A for b in assign[p] if b != A)
        assert all(pR[k] == rates[pI[k]] and pK[k] == pI[k] * W + list(assign[pI[k]]).index(pB[k])
                   for k in range(np_))
        assert list(pR[:np_]) == sorted(pR[:np_], reverse=True)
        assert sorted(qI[:nq].tolist()) == [p for p in range(P) if A in assign[p] and leaders[p] != A]
        assert qS[n] == nq
        for b in range(n):
            bucket = range(qS[b], qS[b + 1])
            assert all(qB[i] == b == leaders[qI[i]] and qR[i] == rates[qI[i]] for i in bucket)
            assert [qR[i] for i in bucket] == sorted(qR[i] for i in bucket)


@pytest.mark.parametrize("seed", range(12))
def test_leader_phase_keeps_its_promises(seed):
    """Leadership swaps keep every broker's leader count; no step raises the largest leader load; leaders stay
    among each partition's replicas; hand-overs only lower the largest load too."""
    from kassign.replicas.plan._scale import _leader_phase

    rng = np.random.default_rng(seed)
    n, P = 4 + seed % 5, 60 + 37 * seed
    assign = np.array([rng.choice(n, 3, replace=False) for _ in range(P)], np.int64)
    rates = (1000 / (rng.permutation(P) + 1) ** 0.8).astype(np.int64) + 1
    if seed % 3 == 0:
        rates[: P // 2] = 7  # many equal rates
    leaders = assign[:, 0].copy()
    now = assign[:, rng.integers(0, 3)].copy()
    target = int(rates.sum() / n * 1.05)
    top = int(np.bincount(leaders, weights=rates, minlength=n).max())
    for handover in (False, True):
        before = np.bincount(leaders, minlength=n)
        _leader_phase(assign, leaders, now, rates, n, target, handover, 20 * P)
        assert all(leaders[p] in assign[p] for p in range(P))
        if not handover:
            assert (np.bincount(leaders, minlength=n) == before).all()
        reached = int(np.bincount(leaders, weights=rates, minlength=n).max())
        assert reached <= top
        top = reached
