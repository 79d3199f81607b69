"""The scenario document (SPEC section 1): accepted shapes and the errors for everything else."""

from __future__ import annotations

import json

import pytest

import kassign
from kassign.errors import KassignError, ScenarioError
from kassign.scenario import load_scenario, parse_scenario

GOOD = {
    "topics": {"t0": 3, "t1": 4},
    "members": {
        "C0": {"topics": ["t0", "t1"]},
        "C1": {"topics": ["t0"], "owned": [["t0", 2]], "generation": 7, "rack": "rack-a", "instance_id": "host-1"},
    },
    "partition_racks": {"t0": [["rack-a"], ["rack-b", "rack-a"], ["rack-c"]]},
}


def test_spec_example_parses() -> None:
    scenario = parse_scenario(GOOD)
    assert scenario.members["C1"].owned == (("t0", 2),)
    assert scenario.members["C1"].generation == 7
    assert scenario.members["C0"].generation == -1
    assert scenario.cluster().replica_racks("t0")[1] == frozenset({"rack-a", "rack-b"})


def test_every_member_appears_even_with_nothing() -> None:
    doc = {"topics": {"t": 1}, "members": {"a": {"topics": ["t"]}, "b": {"topics": ["t"]}, "c": {"topics": []}}}
    result = kassign.assign("range", doc)
    assert list(result) == ["a", "b", "c"] and result["b"] == [] and result["c"] == []


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "expected a JSON object"),
        ({"members": {}}, 'missing "topics"'),
        ({"topics": {}}, 'missing "members"'),
        ({"topics": {}, "members": {}, "extra": 1}, "unknown field"),
        ({"topics": {"t": -1}, "members": {}}, "topics.t: partition count must be a whole number >= 0, got -1"),
        ({"topics": {"t": "3"}, "members": {}}, 'got "3"'),
        ({"topics": {"t": True}, "members": {}}, "got true"),
        ({"topics": [], "members": {}}, "topic name -> partition count"),
        ({"topics": {}, "members": []}, "member id -> subscription"),
        ({"topics": {}, "members": {"a": {}}}, 'members.a: missing "topics"'),
        ({"topics": {}, "members": {"a": {"topics": "t0"}}}, "members.a.topics: expected a list"),
        ({"topics": {}, "members": {"a": {"topics": [], "owned": [["t", "x"]]}}}, r"members.a.owned\[0\]"),
        ({"topics": {}, "members": {"a": {"topics": [], "owned": {}}}}, "members.a.owned: expected a list"),
        ({"topics": {}, "members": {"a": {"topics": [], "generation": "7"}}}, "members.a.generation"),
        ({"topics": {}, "members": {"a": {"topics": [], "rack": 3}}}, "members.a.rack: expected a string"),
        ({"topics": {}, "members": {"a": {"topics": [], "colour": 3}}}, "unknown field"),
        ({"topics": {"t": 2}, "members": {}, "partition_racks": {"t": [["r"]]}}, "lists racks for 1 partitions"),
        ({"topics": {"t": 1}, "members": {}, "partition_racks": {"t": ["r"]}}, "one list of rack names per partition"),
    ],
)
def test_malformed_scenarios_say_where(doc, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(doc)


def test_scenario_errors_are_kassign_errors() -> None:
    assert issubclass(ScenarioError, KassignError)


def test_load_scenario_file_errors(tmp_path) -> None:
    with pytest.raises(ScenarioError, match="cannot read scenario file"):
        load_scenario(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"topics": {')
    with pytest.raises(ScenarioError, match="not valid JSON"):
        load_scenario(bad)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))
    assert load_scenario(good).topics == {"t0": 3, "t1": 4}
