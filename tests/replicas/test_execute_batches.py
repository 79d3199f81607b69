"""The batch planner (``kassign.replicas.execute.batches``): every move exactly once, never more than the
concurrency touching a broker in one batch, never above a disk limit at any moment (a moving replica counted on both
brokers), the largest moves spread, and where the planner gives up, a brute-force search agrees that no order
exists; 10,000 moves in well under a second."""

from __future__ import annotations

import itertools
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core.errors import KassignError
from kassign.replicas.execute import Disk, Move, moves_between, plan_batches


def peak_ok(batches, disks) -> bool:
    """Disk at every moment of every batch, whatever finishes first: the state before + all of the batch's copies."""
    state = {b: d.used for b, d in disks.items()}
    for batch in batches:
        for b, d in disks.items():
            top = state[b] + sum(m.size for m in batch if b in m.adding)
            if d.limit is not None and top > max(d.limit, d.used):
                return False
        for m in batch:
            for b in m.adding:
                state[b] = state.get(b, 0) + m.size
            for b in m.removing:
                state[b] = state.get(b, 0) - m.size
    return True


def some_order_exists(moves, disks) -> bool:
    """Brute force: one move at a time, every permutation."""
    for order in itertools.permutations(moves):
        state = {b: d.used for b, d in disks.items()}
        ok = True
        for m in order:
            if any(disks.get(b) and disks[b].limit is not None
                   and state[b] + m.size > max(disks[b].limit, disks[b].used) for b in m.adding):
                ok = False
                break
            for b in m.adding:
                state[b] = state.get(b, 0) + m.size
            for b in m.removing:
                state[b] = state.get(b, 0) - m.size
        if ok:
            return True
    return False


@st.composite
def cases(draw, most: int = 30):
    brokers = draw(st.integers(2, 7))
    count = draw(st.integers(0, most))
    moves = []
    for p in range(count):
        rf = draw(st.integers(1, min(3, brokers)))
        current = draw(st.permutations(range(brokers)))[:rf]
        target = list(draw(st.permutations(range(brokers)))[:rf])
        if draw(st.booleans()):  # often keep some replicas, as plans do
            keep = draw(st.integers(0, rf))
            target = list(current[:keep]) + [b for b in target if b not in current[:keep]][:rf - keep]
        moves.append(Move("t", p, tuple(current), tuple(target), draw(st.integers(0, 100))))
    disks = {}
    for b in range(brokers):
        if draw(st.booleans()):
            used = draw(st.integers(0, 300))
            disks[b] = Disk(used, draw(st.one_of(st.none(), st.integers(0, 400))))
    return moves, draw(st.integers(1, 4)), disks


@settings(max_examples=300, deadline=None)
@given(cases())
def test_every_move_once_concurrency_and_disk(case):
    moves, concurrency, disks = case
    try:
        schedule = plan_batches(moves, concurrency, disks)
    except KassignError as err:
        assert "disk limit" in str(err) and "\n" not in str(err)
        if len(moves) <= 7:
            assert not some_order_exists([m for m in moves if m.brokers], disks)
        return
    placed = [m for batch in schedule.batches for m in batch]
    assert sorted((m.topic, m.partition) for m in placed) == sorted((m.topic, m.partition) for m in moves)
    for batch in schedule.batches:
        assert batch
        for b in {b for m in batch for b in m.brokers}:
            assert sum(b in m.brokers for m in batch) <= concurrency
    assert peak_ok(schedule.batches, disks)
    for b, top in schedule.peak.items():
        d = disks[b]
        assert d.limit is None or top <= max(d.limit, d.used)


@settings(max_examples=300, deadline=None)
@given(cases(most=6))
def test_gives_up_only_where_no_order_exists(case):
    moves, concurrency, disks = case
    try:
        plan_batches(moves, concurrency, disks)
    except KassignError:
        assert not some_order_exists([m for m in moves if m.brokers], disks)
    else:
        assert some_order_exists([m for m in moves if m.brokers], disks) or not [m for m in moves if m.brokers]


def test_worked_example_frees_space_first():
    a = Move("t", 0, (2,), (1,), 60)
    b = Move("t", 1, (1,), (2,), 50)
    schedule = plan_batches([a, b], 1, {1: Disk(90, 100), 2: Disk(0, 100)})
    assert [[m.name for m in batch] for batch in schedule.batches] == [["t-1"], ["t-0"]]
    assert schedule.peak == {1: 100, 2: 50}


def test_impossible_disk_names_the_broker():
    a = Move("t", 0, (2,), (1,), 60)
    with pytest.raises(KassignError, match=r"^no order of the moves keeps broker 1 within its disk limit \(100 bytes\)"
                                           r": moving t-0 \(60 bytes\) onto it needs 50 bytes more"):
        plan_batches([a], 1, {1: Disk(90, 100)})


def test_broker_above_its_limit_may_stay_but_not_grow():
    out = Move("t", 0, (1,), (2,), 30)
    into = Move("t", 1, (2,), (1,), 20)
    schedule = plan_batches([into, out], 5, {1: Disk(150, 100)})
    assert [[m.name for m in batch] for batch in schedule.batches] == [["t-0"], ["t-1"]]
    assert schedule.peak[1] == 150


def test_concurrency_counts_moves_in_and_out_together():
    # broker 0 gives away three partitions and receives three: six touches, concurrency 2 -> 3 batches
    moves = [Move("t", p, (0,), (1,), 10) for p in range(3)] + [Move("u", p, (2,), (0,), 10) for p in range(3)]
    schedule = plan_batches(moves, 2)
    assert schedule.least_batches == 3 and len(schedule.batches) == 3
    assert all(sum(0 in m.brokers for m in batch) <= 2 for batch in schedule.batches)


def test_largest_moves_are_spread_over_the_batches():
    moves = [Move("t", p, (0,), (1,), size) for p, size in enumerate([1000, 900, 800, 700, 10, 9, 8, 7])]
    schedule = plan_batches(moves, 2)
    assert len(schedule.batches) == 4
    assert [max(m.size for m in batch) for batch in schedule.batches] == [1000, 900, 800, 700]
    # the small ones dealt back (the snake): the batch with the largest move gets the smallest one
    assert [min(m.size for m in batch) for batch in schedule.batches] == [7, 8, 9, 10]


def test_order_only_changes_go_first_and_touch_no_broker():
    reorder = Move("t", 0, (1, 2), (2, 1), 500)
    real = Move("t", 1, (1,), (3,), 5)
    assert reorder.brokers == () and reorder.bytes_to_copy == 0
    schedule = plan_batches([real, reorder], 1)
    assert schedule.batches[0][0] == reorder


def test_bad_concurrency_is_one_line():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(KassignError, match=r"^--concurrency must be a whole number of moves, at least 1"):
            plan_batches([], bad)


def test_moves_between_plans():
    current = {("t", 0): [1, 2], ("t", 1): [2, 3], ("t", 2): [3, 1]}
    target = {("t", 0): [3, 2], ("t", 1): [2, 3], ("t", 2): [1, 3]}
    moves = moves_between(current, target, {("t", 0): 7})
    assert [(m.name, m.adding, m.removing, m.size) for m in moves] == [("t-0", (3,), (1,), 7), ("t-2", (), (), 0)]
    with pytest.raises(KassignError, match="t-9 is in the plan but not in the current assignment"):
        moves_between(current, {("t", 9): [1]})


def test_ten_thousand_moves_in_under_a_second():
    rng = random.Random(7)
    moves = []
    for p in range(10_000):
        current = rng.sample(range(90), 3)
        target = list(current)
        target[rng.randrange(3)] = rng.choice([b for b in range(100) if b not in current])
        moves.append(Move(f"t{p % 50}", p, tuple(current), tuple(target), rng.randint(1, 10**9)))
    disks = {b: Disk(rng.randint(10**12, 2 * 10**12), 3 * 10**12) for b in range(100)}
    started = time.perf_counter()
    schedule = plan_batches(moves, 5, disks)
    took = time.perf_counter() - started
    assert sum(len(b) for b in schedule.batches) == 10_000
    assert len(schedule.batches) <= schedule.least_batches + 3
    assert took < 1.0, f"{took:.2f} s"
