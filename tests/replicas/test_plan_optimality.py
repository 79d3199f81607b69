"""plan_reassignment against an integer program (scipy milp) on seeded random clusters.

The integer program states objectives (1)-(4) directly over 0/1 variables "partition p has a
replica on broker b" and shares no code with kassign's flow, so agreement on the optimal
values is evidence the flow is exact, not a restatement of it.

With sizes, the byte rule is checked two ways that share nothing with kassign: every valid
placement of tiny clusters enumerated (plan_helpers.brute_force_bytes), and an integer program
written out row by row (plan_helpers.ilp_bytes) on 150 small seeded clusters.
"""

from __future__ import annotations

import random

import pytest

from kassign.replicas.plan import PlanError, plan_reassignment
from tests.replicas.plan_helpers import (
    broker_bytes,
    brute_force_bytes,
    byte_limit,
    bytes_moved,
    check_valid,
    counts,
    ilp_bytes,
    ilp_leaders,
    ilp_replicas,
    leader_changes,
    moves,
    random_case,
    rule_key,
    spread,
    targets_of,
    tiny_byte_case,
)


def _check_against_ilp(current, brokers, exclude=(), **options):
    plan = plan_reassignment(current, brokers, exclude=exclude, **options)
    check_valid(plan, current, brokers, exclude)
    ids = sorted(targets_of(brokers, exclude))
    replicas, leaders = counts(plan, ids)
    best_spread, best_moves = ilp_replicas(current, brokers, exclude, budget=options.get("max_moves"))
    assert spread(replicas) == best_spread
    assert moves(plan, current) == best_moves
    best_leader_spread, best_changes = ilp_leaders(plan, current, brokers, exclude)
    assert spread(leaders) == best_leader_spread
    assert leader_changes(plan, current) == best_changes
    return plan


@pytest.mark.parametrize("seed", range(40))
def test_replicas_and_leaders_match_the_integer_program(seed):
    current, brokers = random_case(seed)
    _check_against_ilp(current, brokers)


@pytest.mark.parametrize("seed", range(100, 115))
def test_rack_aware_clusters_match_the_integer_program(seed):
    current, brokers = random_case(seed, racks=True, max_partitions=12)
    _check_against_ilp(current, brokers)


@pytest.mark.parametrize("seed", range(200, 210))
def test_mixed_replication_factors_match_the_integer_program(seed):
    current, brokers = random_case(seed, mixed_rf=True, max_partitions=12)
    _check_against_ilp(current, brokers)


@pytest.mark.parametrize("seed", range(300, 312))
def test_move_budget_matches_the_integer_program(seed):
    current, brokers = random_case(seed, max_partitions=12)
    unlimited = plan_reassignment(current, brokers)
    needed = moves(unlimited, current)
    forced = ilp_replicas(current, brokers, balance=False)[1]
    if forced:
        with pytest.raises(PlanError, match=f"already takes {forced} replica moves"):
            plan_reassignment(current, brokers, max_moves=forced - 1)
    for budget in sorted({forced, (forced + needed) // 2, max(forced, needed - 1)}):
        _check_against_ilp(current, brokers, max_moves=budget)


@pytest.mark.parametrize("seed", range(400, 406))
def test_draining_a_broker_matches_the_integer_program(seed):
    current, brokers = random_case(seed)
    held = sorted({b for e in current["partitions"] for b in e["replicas"]} & set(dict(brokers)))
    if len(brokers) - 1 < max(len(e["replicas"]) for e in current["partitions"]):
        pytest.skip("no broker can be spared here")
    _check_against_ilp(current, brokers, exclude=[held[0]])


@pytest.mark.parametrize("seed", range(500, 520))
def test_leaders_over_uneven_replica_sets_match_the_integer_program(seed):
    # byte balancing leaves replica counts uneven, so the leader window is often wider than
    # floor/ceil of the mean: the cut-based search for its ends must still be exact
    current, brokers = random_case(seed, max_partitions=14)
    rnd = random.Random(seed)
    sizes = {(e["topic"], e["partition"]): rnd.choice([1, 1, 2, 50, 400]) for e in current["partitions"]}
    plan = plan_reassignment(current, brokers, sizes=sizes)
    check_valid(plan, current, brokers)
    ids = sorted(targets_of(brokers))
    best_spread, best_changes = ilp_leaders(plan, current, brokers)
    assert spread(counts(plan, ids)[1]) == best_spread
    assert leader_changes(plan, current) == best_changes


# -- bytes: the exact stage against enumeration and an independent integer program ----------------------------------

def _byte_figures(plan, current, brokers, sizes, exclude=()):
    ids = sorted(targets_of(brokers, exclude))
    loads = broker_bytes(plan, sizes, ids)
    return loads, bytes_moved(plan, current, sizes)


@pytest.mark.parametrize("seed", range(60))
def test_bytes_match_every_placement_enumerated(seed):
    # tiny clusters: every valid placement is enumerated, so the rule's optimum is known exactly;
    # the plan must reach the tolerance exactly when some placement does, and claim optimality
    # (it always can at this size) with the least key: largest broker, bytes above the limit, bytes moved
    current, brokers, sizes, options = tiny_byte_case(seed)
    exclude = options.get("exclude", ())
    try:
        plan = plan_reassignment(current, brokers, sizes=sizes, **options)
    except PlanError as err:
        assert "is too few" in str(err)  # the budget cannot even make the placement valid
        return
    check_valid(plan, current, brokers, exclude)
    s = plan.summary
    limit = byte_limit(current, brokers, sizes, options["tolerance"], exclude)
    assert s["bytes_limit"] == limit
    reachable, best, fewest_replicas = brute_force_bytes(current, brokers, sizes, limit, exclude,
                                                         options.get("max_moves"))
    loads, moved = _byte_figures(plan, current, brokers, sizes, exclude)
    assert s["bytes_within_tolerance"] is reachable is (max(loads) <= limit)
    assert s["bytes_tolerance_reachable"] is reachable
    assert s["bytes_optimal"] is True
    assert rule_key(loads, limit, moved) == best
    assert s["bytes_moved"] == moved and s["bytes_moved_bound"] == moved
    assert s["bytes_over_limit"] == best[1]
    if not reachable:
        assert s["bytes_least_max"] == best[0]
    if s["bytes_solver"] == "milp":  # the program also breaks ties by the fewest replica moves
        assert moves(plan, current) == fewest_replicas


@pytest.mark.parametrize("seed", range(7000, 7150))
def test_bytes_reach_the_tolerance_whenever_an_integer_program_says_it_is_reachable(seed):
    # 150 seeded clusters (up to 18 partitions, 6 brokers, sizes 1-100 bytes, 5%): an integer
    # program written independently (plan_helpers.ilp_bytes) decides whether any valid placement
    # keeps every broker within the limit. The greedy heuristic alone misses some of these.
    current, brokers = random_case(seed, max_partitions=10, max_brokers=5)
    rnd = random.Random(seed)
    sizes = {(e["topic"], e["partition"]): rnd.randint(1, 100) for e in current["partitions"]}
    plan = plan_reassignment(current, brokers, sizes=sizes)
    check_valid(plan, current, brokers)
    s = plan.summary
    loads, moved = _byte_figures(plan, current, brokers, sizes)
    fewest = ilp_bytes(current, brokers, sizes, s["bytes_limit"])
    assert s["bytes_within_tolerance"] is (fewest is not None) is (max(loads) <= s["bytes_limit"])
    assert s["bytes_tolerance_reachable"] is not (fewest is None) or s["bytes_tolerance_reachable"] is None
    assert s["bytes_moved_bound"] <= moved == s["bytes_moved"]
    if fewest is not None:
        assert s["bytes_moved_bound"] <= fewest <= moved
        if s["bytes_optimal"]:
            assert moved == fewest


def test_bytes_worked_example_of_the_exact_stage():
    # module docstring of kassign.replicas.plan._exact: 8..1 bytes (rf 1) all on broker 0, four brokers,
    # 10%: the limit is floor(9.9) = 9, so every broker holds exactly 9; 27 bytes in 6 moves
    current = {"version": 1, "partitions": [{"topic": "t", "partition": p, "replicas": [0]} for p in range(8)]}
    sizes = {("t", p): 8 - p for p in range(8)}
    brokers = [(b, None) for b in range(4)]
    plan = plan_reassignment(current, brokers, sizes=sizes, tolerance=0.1)
    assert broker_bytes(plan, sizes, range(4)) == [9, 9, 9, 9]
    s = plan.summary
    assert (s["bytes_moved"], s["replicas_moved"], s["bytes_optimal"], s["bytes_moved_bound"]) == (27, 6, True, 27)


def test_bytes_example_the_heuristic_misses():
    # module docstring of kassign.replicas.plan._bytes: 6, 4, 4, 3, 3, 2 bytes (rf 1) on broker 0 of two,
    # tolerance 0 (limit 11): the greedy loop stops at 12 / 10, the program packs 11 / 11
    from kassign.replicas.plan import _exact

    current = {"version": 1, "partitions": [{"topic": "t", "partition": p, "replicas": [0]} for p in range(6)]}
    sizes = {("t", p): v for p, v in enumerate([6, 4, 4, 3, 3, 2])}
    brokers = [(0, None), (1, None)]
    plan = plan_reassignment(current, brokers, sizes=sizes, tolerance=0)
    assert broker_bytes(plan, sizes, [0, 1]) == [11, 11]
    s = plan.summary
    assert (s["bytes_moved"], s["replicas_moved"], s["bytes_optimal"], s["bytes_solver"]) == (11, 3, True, "milp")
    assert sorted(sizes[("t", e["partition"])] for e in plan["partitions"] if e["replicas"] == [1]) == [3, 4, 4]
    original = _exact.SETTINGS.variables
    try:  # without the whole program (as for large inputs) the neighbourhood must find it or say so
        _exact.SETTINGS.variables = 0
        local = plan_reassignment(current, brokers, sizes=sizes, tolerance=0).summary
        assert local["bytes_within_tolerance"] or (not local["bytes_optimal"]
                                                   and local["bytes_tolerance_reachable"] is None)
    finally:
        _exact.SETTINGS.variables = original


def test_bytes_unreachable_by_packing_is_proven_and_the_least_maximum_reached():
    # three partitions of 6 bytes on two brokers: the mean is 9 (limit 9 at 5%), no partition is
    # larger than that, yet one broker must hold two: only the integer program can tell
    current = {"version": 1, "partitions": [{"topic": "t", "partition": p, "replicas": [0]} for p in range(3)]}
    sizes = {("t", p): 6 for p in range(3)}
    plan = plan_reassignment(current, [(0, None), (1, None)], sizes=sizes)
    s = plan.summary
    assert broker_bytes(plan, sizes, [0, 1]) == [12, 6]
    assert (s["bytes_tolerance_reachable"], s["bytes_least_max"], s["bytes_optimal"], s["bytes_moved"]) == \
        (False, 12, True, 6)
    assert any("proven by integer program" in note and "12 B" in note for note in s["notes"])


def test_bytes_one_oversized_partition_does_not_leave_the_others_unbalanced():
    # one 100-byte partition (rf 1) on broker 0 and twelve of 10 bytes on broker 1; four brokers,
    # mean 55, limit 57. Nothing brings broker 0 under 100, but the others can all stay within the
    # limit: broker 1 keeps 5 x 10 and sends 70 bytes away (bytes above the limit: only broker 0's 43)
    partitions = [{"topic": "big", "partition": 0, "replicas": [0]}]
    partitions += [{"topic": "t", "partition": p, "replicas": [1]} for p in range(12)]
    current = {"version": 1, "partitions": partitions}
    sizes = {("big", 0): 100, **{("t", p): 10 for p in range(12)}}
    plan = plan_reassignment(current, [(b, None) for b in range(4)], sizes=sizes)
    s = plan.summary
    loads = broker_bytes(plan, sizes, range(4))
    assert loads[0] == 100 and max(loads[1:]) <= s["bytes_limit"] == 57
    assert (s["bytes_over_limit"], s["bytes_moved"], s["bytes_optimal"], s["bytes_least_max"]) == (43, 70, True, 100)
    assert any("a partition alone is larger than the limit" in note for note in s["notes"])
