"""LoadAwareAssignor: the docstring's worked example, invariants as properties, stickiness, bad user data."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign.groups.classic.assignors import get_assignor
from kassign.groups.classic.assignors.base import Subscription, TopicPartition
from kassign.groups.classic.assignors.load_aware import LoadAwareAssignor, encode_user_data
from kassign.core.cluster import Cluster
from kassign.core.errors import KassignError

EXAMPLE_LOADS = {("t0", 0): 8, ("t0", 1): 4, ("t0", 2): 2, ("t0", 3): 2}


def _scenario(n_members: int, partitions: dict[str, int], owned: dict[str, list] | None = None) -> dict:
    members = {}
    for m in range(n_members):
        name = f"C{m}"
        spec: dict = {"topics": sorted(partitions)}
        if owned and owned.get(name):
            spec["owned"] = owned[name]
            spec["generation"] = 1
        members[name] = spec
    return {"topics": partitions, "members": members}


def _member_loads(assignment: dict, loads: dict) -> dict[str, float]:
    return {m: sum(loads.get(tp, 0) for tp in tps) for m, tps in assignment.items()}


def test_worked_example_from_the_docstring():
    scenario = _scenario(2, {"t0": 4})
    assert kassign.assign("load-aware", scenario, partition_loads=EXAMPLE_LOADS) == {
        "C0": [("t0", 0)],
        "C1": [("t0", 1), ("t0", 2), ("t0", 3)],
    }
    assert kassign.assign("range", scenario) == {"C0": [("t0", 0), ("t0", 1)], "C1": [("t0", 2), ("t0", 3)]}


def test_overloaded_owner_keeps_its_heaviest_partition_and_releases_the_rest():
    scenario = _scenario(2, {"t0": 4}, owned={"C0": [["t0", 0], ["t0", 1]]})
    assert kassign.assign("load-aware", scenario, partition_loads=EXAMPLE_LOADS)["C0"] == [("t0", 0)]


def test_refinement_swaps_what_heaviest_first_placement_gets_wrong():
    # Heaviest-first alone: C0 = 3+2+2 = 7, C1 = 3+2 = 5. Swapping a 3 for a 2 gives 6 and 6.
    loads = {("t0", p): w for p, w in enumerate([3, 3, 2, 2, 2])}
    result = kassign.assign("load-aware", _scenario(2, {"t0": 5}), partition_loads=loads)
    assert sorted(_member_loads(result, loads).values()) == [6, 6]


def test_without_loads_it_balances_partition_counts():
    result = kassign.assign("load-aware", _scenario(3, {"t0": 7, "t1": 2}))
    assert sorted(len(v) for v in result.values()) == [3, 3, 3]


def test_capacity_from_user_data_draws_proportional_load():
    loads = {("t0", p): 1.0 for p in range(12)}
    assignor = LoadAwareAssignor(partition_loads=loads)
    subscriptions = {
        "big": Subscription(("t0",), user_data=encode_user_data(2.0, [], -1)),
        "small": Subscription(("t0",), user_data=encode_user_data(1.0, [], -1)),
    }
    result = assignor.assign(Cluster({"t0": 12}), subscriptions)
    assert len(result["big"].partitions) == 8 and len(result["small"].partitions) == 4


@pytest.mark.parametrize("bad", [b"\xff\xfe not utf-8", b"[1, 2]", b'{"capacity": -3}', b'{"capacity": "x"}',
                                 b'{"owned": "t0-1"}'])
def test_malformed_user_data_from_another_member_is_ignored_with_a_warning(bad, caplog):
    assignor = LoadAwareAssignor(partition_loads={("t0", p): 1.0 for p in range(4)})
    subscriptions = {"C0": Subscription(("t0",), user_data=bad), "C1": Subscription(("t0",))}
    with caplog.at_level(logging.WARNING, logger="kassign.groups.classic.assignors.load_aware"):
        result = assignor.assign(Cluster({"t0": 4}), subscriptions)
    assert "C0" in caplog.text and caplog.records[0].levelno == logging.WARNING
    assert sorted(len(a.partitions) for a in result.values()) == [2, 2]  # capacity 1 each, as if no user data


def test_bad_options_are_one_line_errors():
    with pytest.raises(KassignError, match="capacity"):
        get_assignor("load-aware", capacity=0)
    with pytest.raises(KassignError, match=r"partition_loads \(t0-0\) takes a finite number >= 0"):
        get_assignor("load-aware", partition_loads={("t0", 0): -1})


weights = st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(weights=weights, n_members=st.integers(min_value=1, max_value=6))
def test_every_partition_once_and_load_within_one_partition_of_fair(weights, n_members):
    loads = {("t0", p): w for p, w in enumerate(weights)}
    result = kassign.assign("load-aware", _scenario(n_members, {"t0": len(weights)}), partition_loads=loads)
    assigned = [tp for tps in result.values() for tp in tps]
    assert sorted(assigned) == [("t0", p) for p in range(len(weights))]
    per_member = _member_loads(result, loads)
    # Greedy heaviest-first: the busiest member exceeds the least busy by at most one partition's weight.
    assert max(per_member.values()) - min(per_member.values()) <= max(weights)


@settings(max_examples=60, deadline=None)
@given(weights=weights, n_members=st.integers(min_value=2, max_value=5))
def test_a_balanced_assignment_is_kept_as_it_is(weights, n_members):
    loads = {("t0", p): w for p, w in enumerate(weights)}
    first = kassign.assign("load-aware", _scenario(n_members, {"t0": len(weights)}), partition_loads=loads)
    owned = {m: [[t, p] for t, p in tps] for m, tps in first.items()}
    again = kassign.assign("load-aware", _scenario(n_members, {"t0": len(weights)}, owned), partition_loads=loads)
    per_member = _member_loads(first, loads)
    fair = sum(weights) / n_members
    if all(load <= fair * 1.1 for load in per_member.values()):
        assert again == first
    # Either way no member ends above its sticky limit by more than one partition's weight.
    assert max(_member_loads(again, loads).values()) <= fair * 1.1 + max(weights) + 1e-9


@settings(max_examples=40, deadline=None)
@given(n_members=st.integers(min_value=1, max_value=4), data=st.data())
def test_only_subscribers_get_a_topic(n_members, data):
    partitions = {"a": data.draw(st.integers(1, 6)), "b": data.draw(st.integers(1, 6))}
    members = {f"C{m}": {"topics": data.draw(st.sampled_from([["a"], ["b"], ["a", "b"]]))} for m in range(n_members)}
    result = kassign.assign("load-aware", {"topics": partitions, "members": members})
    for member, tps in result.items():
        assert all(t in members[member]["topics"] for t, _ in tps)
    subscribed = {t for spec in members.values() for t in spec["topics"]}
    assert sorted(tp for tps in result.values() for tp in tps) == [
        (t, p) for t in sorted(subscribed) for p in range(partitions[t])]


def test_higher_generation_wins_a_contested_partition():
    loads = {("t0", p): 1.0 for p in range(2)}
    assignor = LoadAwareAssignor(partition_loads=loads)
    subscriptions = {
        "C0": Subscription(("t0",), user_data=encode_user_data(1.0, [TopicPartition("t0", 0)], 3)),
        "C1": Subscription(("t0",), user_data=encode_user_data(1.0, [TopicPartition("t0", 0)], 5)),
    }
    result = assignor.assign(Cluster({"t0": 2}), subscriptions)
    assert result["C1"].partitions == (TopicPartition("t0", 0),)


def test_json_friendly_loads_equal_the_tuple_form() -> None:
    scenario = {"topics": {"t0": 4}, "members": {"C0": {"topics": ["t0"]}, "C1": {"topics": ["t0"]}}}
    by_topic = kassign.assign("load-aware", scenario, partition_loads={"t0": [8, 4, 2, 2]})
    by_pair = kassign.assign("load-aware", scenario, partition_loads={("t0", p): w for p, w in enumerate([8, 4, 2, 2])})
    assert by_topic == by_pair == {"C0": [("t0", 0)], "C1": [("t0", 1), ("t0", 2), ("t0", 3)]}


@pytest.mark.parametrize("loads", [{"t0": 5}, {"t0": [1, "x"]}, {"t0": [1, -2]}, {("t0",): 1}])
def test_malformed_loads_are_one_clear_error(loads) -> None:
    scenario = {"topics": {"t0": 2}, "members": {"C0": {"topics": ["t0"]}}}
    with pytest.raises(KassignError, match="partition_loads|load of partition"):
        kassign.assign("load-aware", scenario, partition_loads=loads)


def test_loads_from_the_command_line(tmp_path) -> None:
    import json
    import subprocess
    import sys

    path = tmp_path / "s.json"
    path.write_text(json.dumps({"topics": {"t0": 4}, "members": {"C0": {"topics": ["t0"]}, "C1": {"topics": ["t0"]}}}))
    done = subprocess.run([sys.executable, "-m", "kassign.cli.main", "assign", "-s", "load-aware", "--json",
                           "-o", 'partition_loads={"t0": [8, 4, 2, 2]}', str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"assignment": {"C0": [["t0", 0]], "C1": [["t0", 1], ["t0", 2], ["t0", 3]]}}


def test_no_members_get_nothing_and_nothing_fails() -> None:
    assert kassign.assign("load-aware", {"topics": {"t0": 3}, "members": {}}) == {}
