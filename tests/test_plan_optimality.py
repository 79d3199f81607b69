"""plan_reassignment against an integer program (scipy milp) on seeded random clusters.

The integer program states objectives (1)-(4) directly over 0/1 variables "partition p has a
replica on broker b" and shares no code with kassign's flow, so agreement on the optimal
values is evidence the flow is exact, not a restatement of it.
"""

from __future__ import annotations

import random

import pytest

from kassign.plan import PlanError, plan_reassignment
from tests.plan_helpers import (
    check_valid,
    counts,
    ilp_leaders,
    ilp_replicas,
    leader_changes,
    moves,
    random_case,
    spread,
    targets_of,
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
