"""Range and roundrobin: every Kafka vector line, the seeds' examples, and the balance rules."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from tests.conftest import vector_params


def _as_sorted_lists(expected: dict) -> dict:
    return {member: sorted((t, p) for t, p in partitions) for member, partitions in expected.items()}


@pytest.mark.parametrize("line", vector_params("assign-range.jsonl"))
def test_range_vector(line: dict) -> None:
    assert kassign.assign("range", line["scenario"]) == _as_sorted_lists(line["expected"])


@pytest.mark.parametrize("line", vector_params("assign-roundrobin.jsonl"))
def test_roundrobin_vector(line: dict) -> None:
    assert kassign.assign("roundrobin", line["scenario"]) == _as_sorted_lists(line["expected"])


def _group(topics: dict, subscriptions: dict) -> dict:
    return {"topics": topics, "members": {m: {"topics": t} for m, t in subscriptions.items()}}


def tp(text: str) -> tuple[str, int]:
    topic, _, partition = text.partition("p")
    return (topic, int(partition))


def test_seed_range_two_members_two_topics_four_partitions() -> None:
    group = _group({"t0": 4, "t1": 4}, {"C0": ["t0", "t1"], "C1": ["t0", "t1"]})
    assert kassign.assign("range", group) == {
        "C0": [tp("t0p0"), tp("t0p1"), tp("t1p0"), tp("t1p1")],
        "C1": [tp("t0p2"), tp("t0p3"), tp("t1p2"), tp("t1p3")],
    }


def test_seed_range_three_partitions_favours_the_first_member() -> None:
    group = _group({"t0": 3, "t1": 3}, {"C0": ["t0", "t1"], "C1": ["t0", "t1"]})
    assert kassign.assign("range", group) == {
        "C0": [tp("t0p0"), tp("t0p1"), tp("t1p0"), tp("t1p1")],
        "C1": [tp("t0p2"), tp("t1p2")],
    }


def test_seed_roundrobin_equal_subscriptions() -> None:
    group = _group({"t0": 3, "t1": 3}, {"C0": ["t0", "t1"], "C1": ["t0", "t1"]})
    assert kassign.assign("roundrobin", group) == {
        "C0": [tp("t0p0"), tp("t0p2"), tp("t1p1")],
        "C1": [tp("t0p1"), tp("t1p0"), tp("t1p2")],
    }


def test_seed_roundrobin_unequal_subscriptions_is_lopsided() -> None:
    group = _group({"t0": 1, "t1": 2, "t2": 3}, {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]})
    assert kassign.assign("roundrobin", group) == {
        "C0": [tp("t0p0")],
        "C1": [tp("t1p0")],
        "C2": [tp("t1p1"), tp("t2p0"), tp("t2p1"), tp("t2p2")],
    }


def test_seed_roundrobin_c1_only_t1() -> None:
    group = _group({"t1": 4, "t2": 4}, {"c1": ["t1", "t2"], "c2": ["t1"]})
    assert kassign.assign("roundrobin", group) == {
        "c1": [tp("t1p0"), tp("t1p2"), tp("t2p0"), tp("t2p1"), tp("t2p2"), tp("t2p3")],
        "c2": [tp("t1p1"), tp("t1p3")],
    }


def test_static_members_come_first_in_instance_id_order() -> None:
    scenario = {
        "topics": {"t": 3},
        "members": {"a": {"topics": ["t"]}, "z": {"topics": ["t"], "instance_id": "i-2"}, "y": {"topics": ["t"], "instance_id": "i-1"}},
    }
    assert kassign.assign("range", scenario) == {"a": [("t", 2)], "y": [("t", 0)], "z": [("t", 1)]}
    assert kassign.assign("roundrobin", scenario) == {"a": [("t", 2)], "y": [("t", 0)], "z": [("t", 1)]}


def test_topic_without_metadata_gets_nothing() -> None:
    group = _group({"t0": 2}, {"C0": ["t0", "ghost"], "C1": ["ghost"]})
    for strategy in ("range", "roundrobin"):
        assert kassign.assign(strategy, group) == {"C0": [("t0", 0), ("t0", 1)], "C1": []}


def test_rack_aware_range_prefers_local_partitions() -> None:
    scenario = {
        "topics": {"t": 4},
        "members": {"C0": {"topics": ["t"], "rack": "r1"}, "C1": {"topics": ["t"], "rack": "r2"}},
        "partition_racks": {"t": [["r2"], ["r1"], ["r2"], ["r1"]]},
    }
    assert kassign.assign("range", scenario) == {"C0": [("t", 1), ("t", 3)], "C1": [("t", 0), ("t", 2)]}


def test_rack_aware_range_an_empty_rack_is_no_rack() -> None:
    # Kafka drops an empty client.rack: C0 has no rack, so every partition matches it and, first
    # in member order, it takes t0 and t1 in the rack-matching pass; C1 (rack a) then takes t2, the
    # one partition left on its rack, and t3 in the plain pass. Read as a rack named "", C0 would
    # match nothing and end with t1 and t3.
    scenario = {
        "topics": {"t": 4},
        "members": {"C0": {"topics": ["t"], "rack": ""}, "C1": {"topics": ["t"], "rack": "a"}},
        "partition_racks": {"t": [["a"], ["b"], ["a"], ["b"]]},
    }
    expected = {"C0": [("t", 0), ("t", 1)], "C1": [("t", 2), ("t", 3)]}
    assert kassign.assign("range", scenario) == expected
    del scenario["members"]["C0"]["rack"]
    assert kassign.assign("range", scenario) == expected


# --- properties ----------------------------------------------------------------------------------

@st.composite
def groups(draw, same_subscriptions: bool = False):
    topics = {f"t{i}": draw(st.integers(0, 9)) for i in range(draw(st.integers(1, 4)))}
    names = list(topics) + ["ghost"]
    count = draw(st.integers(1, 6))
    shared = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    members = {}
    for i in range(count):
        subscribed = shared if same_subscriptions else draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        member = {"topics": subscribed}
        if draw(st.booleans()):
            member["instance_id"] = f"inst-{draw(st.integers(0, 99)):02d}-{i}"  # distinct, as Kafka requires
        members[f"m{draw(st.integers(0, 999)):03d}-{i}"] = member
    return {"topics": topics, "members": members}


def _check_exclusive_cover(scenario: dict, assignment: dict) -> None:
    owners = Counter(tp for partitions in assignment.values() for tp in partitions)
    subscribed = {t for m in scenario["members"].values() for t in m["topics"] if t in scenario["topics"]}
    expected = {(t, p) for t in subscribed for p in range(scenario["topics"][t])}
    assert set(owners) == expected and set(owners.values()) <= {1}, "each partition exactly once"
    for member, partitions in assignment.items():
        assert {t for t, _ in partitions} <= set(scenario["members"][member]["topics"]), "only subscribers"
    assert set(assignment) == set(scenario["members"])


@settings(max_examples=150, deadline=None)
@given(groups())
def test_range_rules(scenario: dict) -> None:
    assignment = kassign.assign("range", scenario)
    _check_exclusive_cover(scenario, assignment)
    for topic, count in scenario["topics"].items():
        takers = [m for m, s in scenario["members"].items() if topic in s["topics"]]
        per_member = [sorted(p for t, p in assignment[m] if t == topic) for m in takers]
        sizes = [len(p) for p in per_member]
        if takers and count:
            assert max(sizes) - min(sizes) <= 1, "per topic, counts differ by at most one"
            assert all(p == list(range(p[0], p[0] + len(p))) for p in per_member if p), "contiguous ranges"


@settings(max_examples=150, deadline=None)
@given(groups())
def test_roundrobin_covers_each_partition_once(scenario: dict) -> None:
    _check_exclusive_cover(scenario, kassign.assign("roundrobin", scenario))


@settings(max_examples=100, deadline=None)
@given(groups(same_subscriptions=True))
def test_roundrobin_balances_equal_subscriptions(scenario: dict) -> None:
    sizes = [len(p) for p in kassign.assign("roundrobin", scenario).values()]
    assert max(sizes) - min(sizes) <= 1
