"""The optimal general-case sticky assignment (``assign_general``).

Optimality is checked against an independent oracle: a staged integer program over the
partition-level bipartite graph (scipy's HiGHS MILP), where each member's load is the sum
of unit "level" variables whose costs 1, 3, 5, ... make the total equal the sum of squared
loads. Stage 1 minimises that; stage 2 keeps it at its optimum and minimises rack mismatches
as Kafka counts them (``Group.mismatch``); stage 3 keeps both and maximises partitions kept by
their owner. Our solver works on partition classes with a min-cost flow, so the two share no
code and no formulation.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp

from kassign.groups.classic.assignors.sticky.optimal import assign_general
from tests.conftest import load_vectors, vector_params

# ---------------------------------------------------------------------------------------------
# Problem helpers (plain Python, shared by oracle and checks)


class Group:
    """A small group in the shapes ``assign_general`` takes, plus flat views for checking."""

    def __init__(self, counts, subs, owners, member_racks=None, partition_racks=None):
        self.counts = [int(c) for c in counts]
        self.subs = [sorted(set(s)) for s in subs]
        self.owners = [list(o) for o in owners]
        self.member_racks = member_racks
        self.partition_racks = partition_racks
        self.partitions = [(t, p) for t, n in enumerate(self.counts) for p in range(n)]

    def __repr__(self) -> str:
        return (
            f"Group(counts={self.counts}, subs={self.subs}, owners={self.owners}, "
            f"member_racks={self.member_racks}, partition_racks={self.partition_racks})"
        )

    def run(self) -> list[np.ndarray]:
        return assign_general(
            np.array(self.counts, np.int64),
            [np.array(s, np.int32) for s in self.subs],
            [np.array(o, np.int32) for o in self.owners],
            self.member_racks,
            self.partition_racks,
        )

    def subscribers(self, t: int) -> list[int]:
        return [m for m, s in enumerate(self.subs) if t in s]

    def rightful_owner(self, t: int, p: int) -> int:
        owner = self.owners[t][p]
        return owner if 0 <= owner < len(self.subs) and t in self.subs[owner] else -1

    def rack_aware(self) -> bool:
        """Kafka weighs racks only when some member's rack holds a replica of some subscribed
        partition (``assign_general`` is handed racks only when the rest of Kafka's rule says yes)."""
        if self.member_racks is None or self.partition_racks is None:
            return False
        replica_racks = {r for t, topic in enumerate(self.partition_racks) if self.subscribers(t)
                         for racks in topic for r in racks}
        return any(r and r in replica_racks for r in self.member_racks)

    def mismatch(self, t: int, p: int, m: int) -> bool:
        """Kafka's racksMismatch: the member has a (non-empty) rack and no replica of the
        partition sits on it. A member without a rack never mismatches; a racked member
        mismatches a partition whose replicas have no racks."""
        if not self.rack_aware():
            return False
        rack = self.member_racks[m]
        return bool(rack) and rack not in self.partition_racks[t][p]

    def scores(self, who: dict[tuple[int, int], int]) -> tuple[list[int], int, int]:
        """(sorted loads, partitions kept by their owner, rack mismatches as Kafka counts them)."""
        loads = [0] * len(self.subs)
        kept = mismatches = 0
        for (t, p), m in who.items():
            loads[m] += 1
            kept += m == self.rightful_owner(t, p)
            mismatches += self.mismatch(t, p, m)
        return sorted(loads), kept, mismatches


def as_dict(result: list[np.ndarray]) -> dict[tuple[int, int], int]:
    return {(t, p): int(m) for t, arr in enumerate(result) for p, m in enumerate(arr) if m >= 0}


def spread(sorted_loads: list[int]) -> int:
    return sorted_loads[-1] - sorted_loads[0] if sorted_loads else 0


# ---------------------------------------------------------------------------------------------
# The independent oracle


def oracle(group: Group, fixed: dict[tuple[int, int], int] | None = None) -> tuple[list[int], int, int]:
    """Lexicographic optimum by staged MILP; ``fixed`` pins some partitions to members."""
    fixed = fixed or {}
    pairs = [(t, p, m) for (t, p) in group.partitions for m in group.subscribers(t)]
    if not pairs:
        return sorted([0] * len(group.subs)), 0, 0
    num_members = len(group.subs)
    levels = len(group.partitions)
    n_x, n_y = len(pairs), num_members * levels
    size = n_x + n_y
    rows, lows, highs = [], [], []

    def add_row(coeffs: dict[int, float], low: float, high: float) -> None:
        row = np.zeros(size)
        for i, c in coeffs.items():
            row[i] += c
        rows.append(row)
        lows.append(low)
        highs.append(high)

    by_partition: dict[tuple[int, int], list[int]] = {}
    for i, (t, p, m) in enumerate(pairs):
        by_partition.setdefault((t, p), []).append(i)
    for (t, p), idx in by_partition.items():
        add_row(dict.fromkeys(idx, 1.0), 1, 1)
    for m in range(num_members):
        coeffs = {i: 1.0 for i, (_, _, mm) in enumerate(pairs) if mm == m}
        for k in range(levels):
            coeffs[n_x + m * levels + k] = -1.0
        add_row(coeffs, 0, 0)
    upper = np.ones(size)
    lower = np.zeros(size)
    for i, (t, p, m) in enumerate(pairs):
        if (t, p) in fixed:
            lower[i] = upper[i] = 1.0 if fixed[(t, p)] == m else 0.0
    square = np.zeros(size)
    for m in range(num_members):
        square[n_x + m * levels : n_x + (m + 1) * levels] = 2 * np.arange(levels) + 1
    kept = np.array([1.0 if m == group.rightful_owner(t, p) else 0.0 for t, p, m in pairs] + [0.0] * n_y)
    mismatch = np.array([1.0 if group.mismatch(t, p, m) else 0.0 for t, p, m in pairs] + [0.0] * n_y)

    def solve(objective: np.ndarray) -> np.ndarray:
        res = milp(
            objective,
            constraints=LinearConstraint(np.array(rows), lows, highs),
            integrality=np.ones(size),
            bounds=Bounds(lower, upper),
        )
        assert res.success, res.message
        return np.round(res.x)

    # Kafka's order: balance, then rack mismatches, then stickiness.
    best_square = square @ solve(square)
    add_row(dict(enumerate(square)), -np.inf, best_square + 0.5)
    best_mismatches = mismatch @ solve(mismatch)
    add_row(dict(enumerate(mismatch)), -np.inf, best_mismatches + 0.5)
    x = solve(-kept)
    who = {(t, p): m for i, (t, p, m) in enumerate(pairs) if x[i] > 0.5}
    return group.scores(who)


# ---------------------------------------------------------------------------------------------
# Invariants


def check_complete(group: Group, result: list[np.ndarray]) -> None:
    """Every partition of a subscribed topic goes to one subscriber; -1 only for unsubscribed topics."""
    assert [len(r) for r in result] == group.counts
    for t, arr in enumerate(result):
        subscribers = set(group.subscribers(t))
        assert arr.dtype == np.int32
        if subscribers:
            assert set(arr.tolist()) <= subscribers, (t, arr, subscribers)
        else:
            assert (arr == -1).all()


def no_improving_chain(group: Group, who: dict[tuple[int, int], int]) -> bool:
    """No member with load L can hand a partition, along a chain of subscriptions, to one with load <= L-2."""
    loads = [0] * len(group.subs)
    held: dict[int, set[int]] = {}
    for (t, _), m in who.items():
        loads[m] += 1
        held.setdefault(m, set()).add(t)
    for source in range(len(group.subs)):
        seen, queue = {source}, deque([source])
        while queue:
            m = queue.popleft()
            if loads[m] <= loads[source] - 2:
                return False
            for t in held.get(m, ()):
                for nxt in group.subscribers(t):
                    if nxt not in seen:
                        seen.add(nxt)
                        queue.append(nxt)
    return True


# ---------------------------------------------------------------------------------------------
# Random groups


@st.composite
def groups(draw, with_racks: bool) -> Group:
    num_topics = draw(st.integers(1, 4))
    counts = draw(st.lists(st.integers(1, 6), min_size=num_topics, max_size=num_topics))
    num_members = draw(st.integers(1, 6))
    subs = [draw(st.lists(st.integers(0, num_topics - 1), max_size=num_topics, unique=True)) for _ in range(num_members)]
    owners = [draw(st.lists(st.integers(-1, num_members), min_size=n, max_size=n)) for n in counts]
    member_racks = partition_racks = None
    if with_racks:
        member_racks = draw(st.lists(st.sampled_from([None, "", "a", "b", "c"]), min_size=num_members, max_size=num_members))
        rack_sets = st.frozensets(st.sampled_from(["a", "b", "c", "d"]), max_size=3)
        partition_racks = [draw(st.lists(rack_sets, min_size=n, max_size=n)) for n in counts]
    return Group(counts, subs, owners, member_racks, partition_racks)


@st.composite
def settled_groups(draw) -> tuple[Group, bool]:
    """A group whose owners are a previous optimal result, then perhaps one member leaves
    (its partitions become unowned) or one joins: the follow-ups the keep-everything path
    is for, and one (a join) where it must give way to the flow."""
    first = draw(groups(with_racks=False))
    owners = [list(map(int, arr)) for arr in first.run()]
    subs = [list(s) for s in first.subs]
    change = draw(st.sampled_from(["none", "leave", "join"]))
    if change == "leave" and len(subs) > 1:
        gone = draw(st.integers(0, len(subs) - 1))
        subs.pop(gone)
        owners = [[-1 if o == gone else o - (o > gone) for o in topic] for topic in owners]
    elif change == "join":
        subs.append(draw(st.lists(st.integers(0, len(first.counts) - 1), min_size=1, unique=True)))
    return Group(first.counts, subs, owners), change == "none"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(settled_groups())
def test_follow_ups_match_the_independent_optimum(case: tuple[Group, bool]) -> None:
    from kassign.groups.classic.assignors.sticky import optimal

    group, unchanged = case
    result = group.run()
    check_complete(group, result)
    loads, kept, _ = group.scores(as_dict(result))
    best_loads, best_kept, _ = oracle(group)
    assert (loads, kept) == (best_loads, best_kept)
    if unchanged:  # a settled group re-joining keeps everything, and the fast path says so
        flat_owners = np.concatenate([np.array(o, np.int64) for o in group.owners] or [np.zeros(0, np.int64)])
        offsets = np.concatenate([[0], np.cumsum(group.counts)]).astype(np.int64)
        pairs = sorted((t, m) for m, s in enumerate(group.subs) for t in s)
        sub_topic = np.array([t for t, _ in pairs], np.int64)
        sub_member = np.array([m for _, m in pairs], np.int64)
        settled = optimal._keep_everything(flat_owners, offsets, sub_topic, sub_member, len(group.subs))
        if (flat_owners >= 0).sum() * 2 >= len(flat_owners):
            assert settled is not None and (settled == flat_owners).all()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(with_racks=False))
def test_matches_independent_optimum(group: Group) -> None:
    result = group.run()
    check_complete(group, result)
    who = as_dict(result)
    assert no_improving_chain(group, who)
    loads, kept, _ = group.scores(who)
    best_loads, best_kept, _ = oracle(group)
    assert loads == best_loads
    assert kept == best_kept


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(with_racks=True))
def test_matches_independent_optimum_with_racks(group: Group) -> None:
    result = group.run()
    check_complete(group, result)
    assert group.scores(as_dict(result)) == oracle(group)


@settings(max_examples=30, deadline=None)
@given(groups(with_racks=True))
def test_deterministic(group: Group) -> None:
    first, second = group.run(), group.run()
    assert all((a == b).all() for a, b in zip(first, second))


# ---------------------------------------------------------------------------------------------
# Worked examples


def test_seed_example_fresh_then_member_leaves() -> None:
    fresh = Group([1, 2, 3], [[0], [0, 1], [0, 1, 2]], [[-1], [-1, -1], [-1, -1, -1]]).run()
    assert [r.tolist() for r in fresh] == [[0], [1, 1], [2, 2, 2]]
    # C0 leaves: members are now old C1 (index 0) and old C2 (index 1), owning what they had.
    after = Group([1, 2, 3], [[0, 1], [0, 1, 2]], [[-1], [0, 0], [1, 1, 1]]).run()
    assert [r.tolist() for r in after] == [[0], [0, 0], [1, 1, 1]]


def test_owner_that_stopped_subscribing_is_no_owner() -> None:
    # Member 0 owned all of t0 but now only subscribes to t1; member 1 alone takes t0.
    result = Group([2, 2], [[1], [0, 1]], [[0, 0], [1, 1]]).run()
    assert result[0].tolist() == [1, 1]
    assert result[1].tolist() == [0, 0]  # balance: 2/2, so t1 moves to member 0


def test_balance_beats_stickiness_and_stickiness_beats_racks() -> None:
    # Member 0 owns all 4 partitions of t0 and member 1 also subscribes: balance wins (2/2) over
    # keeping all 4. Any 2 kept is equally sticky, so racks decide: member 0 (rack x) keeps p0, p1,
    # member 1 (rack y) takes p2, p3.
    group = Group([4], [[0], [0]], [[0, 0, 0, 0]], ["x", "y"], [[frozenset({"x"}), frozenset({"x"}), frozenset({"y"}), frozenset({"y"})]])
    result = group.run()[0].tolist()
    assert sorted(result) == [0, 0, 1, 1]
    assert result == [0, 0, 1, 1]


def test_a_member_without_a_rack_never_mismatches() -> None:
    # Issue #20. Member 1 has no rack and owns t0p0-p2; member 0 (rack a) owns t0p3, p4; member 2
    # alone takes t1. Every t0 replica is on rack a. Loads 3/2 or 2/3 are equally balanced and a
    # member without a rack mismatches nothing (Kafka's racksMismatch), so moving t0p2 to member 0
    # gains nothing: everything stays.
    a, c = frozenset({"a"}), frozenset({"c"})
    for rackless in (None, ""):  # Kafka ignores an empty client.rack
        group = Group([5, 1], [[0], [0], [1]], [[1, 1, 1, 0, 0], [2]], ["a", rackless, "c"], [[a] * 5, [c]])
        assert [r.tolist() for r in group.run()] == [[1, 1, 1, 0, 0], [2]], repr(rackless)


def test_a_partition_without_replica_racks_mismatches_every_racked_member() -> None:
    # t0p0's replicas have no rack: a mismatch at member 0 (rack a), none at member 1 (no rack).
    # Giving t0p0 to member 1 clears the only mismatch with one move; also moving t0p2 to
    # member 0 (loads 2/1 instead of 1/2, equally balanced) would be a move for nothing.
    a, c = frozenset({"a"}), frozenset({"c"})
    group = Group([3, 1], [[0], [0], [1]], [[0, 0, 1], [2]], ["a", None, "c"], [[frozenset(), a, a], [c]])
    assert [r.tolist() for r in group.run()] == [[1, 0, 1], [2]]


def test_topics_without_subscribers_stay_unassigned() -> None:
    result = Group([3, 2], [[1], [1]], [[-1] * 3, [-1, -1]]).run()
    assert result[0].tolist() == [-1, -1, -1]
    assert sorted(result[1].tolist()) == [0, 1]


def test_out_of_range_owner_is_ignored_with_warning(caplog) -> None:
    result = Group([2], [[0], [0]], [[7, 0]]).run()
    assert sorted(result[0].tolist()) == [0, 1]
    assert result[0][1] == 0
    assert "not members" in caplog.text


def test_bad_subscription_index_is_a_kassign_error() -> None:
    from kassign.core.errors import KassignError

    with pytest.raises(KassignError, match="topic index 5"):
        Group([2], [[5]], [[-1, -1]]).run()


# ---------------------------------------------------------------------------------------------
# Against Kafka's own StickyAssignor / CooperativeStickyAssignor


def scenario_group(scenario: dict) -> tuple[Group, list[str], list[str]]:
    """Arrays from a SPEC scenario: topics and members in document order, owners by highest generation."""
    topics = [t for t, n in scenario["topics"].items() if n > 0]
    topic_index = {t: i for i, t in enumerate(topics)}
    members = list(scenario["members"])
    counts = [scenario["topics"][t] for t in topics]
    subs = [[topic_index[t] for t in spec["topics"] if t in topic_index] for spec in scenario["members"].values()]
    owners = [[-1] * n for n in counts]
    best_generation = [[None] * n for n in counts]
    for m, spec in enumerate(scenario["members"].values()):
        generation = spec.get("generation", -1)
        for topic, p in spec.get("owned", []):
            t = topic_index.get(topic)
            if t is None or p >= counts[t]:
                continue
            if best_generation[t][p] is None or generation > best_generation[t][p]:
                best_generation[t][p] = generation
                owners[t][p] = m
    return Group(counts, subs, owners), topics, members


def kafka_dict(kafka_result: dict, topics: list[str], members: list[str]) -> dict[tuple[int, int], int]:
    topic_index = {t: i for i, t in enumerate(topics)}
    member_index = {m: i for i, m in enumerate(members)}
    return {(topic_index[t], p): member_index[m] for m, parts in kafka_result.items() for t, p in parts}


def moved(group: Group, who: dict[tuple[int, int], int]) -> int:
    """Partitions with a rightful previous owner that do not end up with it."""
    return sum(
        1 for (t, p) in group.partitions if group.rightful_owner(t, p) >= 0 and who.get((t, p)) != group.rightful_owner(t, p)
    )


def kafka_result_params(name: str) -> list:
    """Vector lines that carry ``kafka_result`` (non-uniform subscriptions), or the skip marker."""
    return vector_params(name, where=lambda line: "kafka_result" in line)


def assert_eager_no_worse_than_kafka(group, ours: dict, theirs: dict) -> None:
    """Kafka's eager result is complete. Ours must have a spread no larger; where the sorted load
    vectors are the same (equally balanced), ours moves no more partitions; where they differ,
    ours must be strictly more even (smaller sum of squares)."""
    our_loads, _, _ = group.scores(ours)
    their_loads, _, _ = group.scores(theirs)
    assert spread(our_loads) <= spread(their_loads)
    if our_loads == their_loads:
        assert moved(group, ours) <= moved(group, theirs)
    else:
        assert sum(x * x for x in our_loads) < sum(x * x for x in their_loads)


@pytest.mark.parametrize("line", kafka_result_params("assign-sticky.jsonl"))
def test_never_worse_than_kafka_sticky(line) -> None:
    """Eager sticky, our general path directly: see ``assert_eager_no_worse_than_kafka``."""
    group, topics, members = scenario_group(line["scenario"])
    assert_eager_no_worse_than_kafka(group, as_dict(group.run()), kafka_dict(line["kafka_result"], topics, members))


@pytest.mark.parametrize("line", kafka_result_params("assign-cooperative-sticky.jsonl"))
def test_never_worse_than_kafka_cooperative_sticky(line) -> None:
    """Cooperative sticky: Kafka withholds every partition that changes owner, so its result is
    incomplete and its final ownership is unknown. We compare with the most balanced completion
    of Kafka's round (withheld partitions placed by the oracle): our spread must be no larger, and
    when that completion is as balanced as ours (same sorted loads) our moved count (partitions not
    with their rightful owner) must be no larger than Kafka's (every withheld or reassigned owned
    partition counts as moved for Kafka, whoever gets it next round)."""
    group, topics, members = scenario_group(line["scenario"])
    ours = as_dict(group.run())
    theirs = kafka_dict(line["kafka_result"], topics, members)
    our_loads, _, _ = group.scores(ours)
    completed_loads, _, _ = oracle(group, fixed=theirs)
    assert spread(our_loads) <= spread(completed_loads)
    if our_loads == completed_loads:
        assert moved(group, ours) <= moved(group, theirs)


def test_end_to_end_sticky_never_worse_than_kafka() -> None:
    """The same comparison through ``kassign.assign('sticky', scenario)`` on every kafka_result line."""
    import kassign

    for line in load_vectors("assign-sticky.jsonl"):
        if "kafka_result" not in line:
            continue
        group, topics, members = scenario_group(line["scenario"])
        ours = kafka_dict(kassign.assign("sticky", line["scenario"]), topics, members)
        assert_eager_no_worse_than_kafka(group, ours, kafka_dict(line["kafka_result"], topics, members))


def test_end_to_end_cooperative_sticky_never_worse_than_kafka() -> None:
    """Through ``kassign.assign('cooperative-sticky', scenario)``: both rounds withhold moved partitions,
    so each round is compared by its most balanced completion (oracle) and by partitions moved."""
    import kassign

    for line in load_vectors("assign-cooperative-sticky.jsonl"):
        if "kafka_result" not in line:
            continue
        group, topics, members = scenario_group(line["scenario"])
        ours = kafka_dict(kassign.assign("cooperative-sticky", line["scenario"]), topics, members)
        theirs = kafka_dict(line["kafka_result"], topics, members)
        our_loads, _, _ = oracle(group, fixed=ours)
        their_loads, _, _ = oracle(group, fixed=theirs)
        assert spread(our_loads) <= spread(their_loads), line["scenario"]
        if our_loads == their_loads:
            assert moved(group, ours) <= moved(group, theirs), line["scenario"]
