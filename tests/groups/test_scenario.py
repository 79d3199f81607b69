"""The scenario document (SPEC section 1): accepted shapes and the errors for everything else."""

from __future__ import annotations

import json

import pytest

import kassign
from kassign.core.errors import KassignError, ScenarioError
from kassign.groups.scenario import load_scenario, parse_scenario

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


# --- names UTF-8 cannot carry (issue #20) ------------------------------------------------------------

LONE = "\ud800"
STRATEGY_CALLS = [
    ("range", {}), ("roundrobin", {}), ("sticky", {}), ("cooperative-sticky", {}), ("random", {}),
    ("load-aware", {}), ("broadcast", {}), ("uniform", {"protocol": "consumer"}), ("range", {"protocol": "consumer"}),
]


def _group(**member_a) -> dict:
    return {"topics": {"t0": 3}, "members": {"a": {"topics": ["t0"], **member_a}, "b": {"topics": ["t0"]}}}


SURROGATE_SCENARIOS = [
    ({"topics": {LONE: 3}, "members": {"a": {"topics": [LONE]}}}, "topics: topic name '\\ud800'"),
    ({"topics": {"t" + LONE: 3}, "members": {"a": {"topics": ["t0"]}}}, "topics: topic name 't\\ud800'"),
    (_group(topics=["t0", "x" + LONE]), "members.a.topics: topic name 'x\\ud800'"),
    (_group(owned=[[LONE, 0]], generation=1), "members.a.owned: topic name '\\ud800'"),
    ({"topics": {"t0": 3}, "members": {"a" + LONE: {"topics": ["t0"]}}}, "members: member id 'a\\ud800'"),
    (_group(rack="r" + LONE), "members.a.rack: rack 'r\\ud800'"),
    (_group(instance_id=LONE + "h"), "members.a.instance_id: instance_id '\\ud800h'"),
    ({**_group(), "partition_racks": {"t0": [["r"], [LONE], ["r"]]}}, "partition_racks.t0: rack '\\ud800'"),
    ({**_group(), "partition_racks": {LONE: [["r"]]}}, "partition_racks: topic name '\\ud800'"),
    ({**_group(), "topic_ids": {LONE: "zlHH1P2WR-GsRZQpv0_Hxw"}}, "topic_ids: topic name '\\ud800'"),
]


@pytest.mark.parametrize(("doc", "where"), SURROGATE_SCENARIOS)
def test_names_with_a_lone_surrogate_are_refused_where_they_are(doc: dict, where: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(doc)
    message = str(caught.value)
    assert f"scenario {where}" in message and "lone surrogate" in message and "UTF-8" in message
    message.encode("utf-8")  # the message itself can be printed anywhere


@pytest.mark.parametrize(("strategy", "options"), STRATEGY_CALLS, ids=lambda v: str(v))
@pytest.mark.parametrize(("doc", "where"), SURROGATE_SCENARIOS[:7])
def test_every_strategy_refuses_them_the_same_way(strategy: str, options: dict, doc: dict, where: str) -> None:
    with pytest.raises(KassignError, match="lone surrogate"):
        kassign.assign(strategy, doc, **options)
    with pytest.raises(KassignError, match="lone surrogate"):
        kassign.assign_table(strategy, doc, **options)


def test_surrogate_pairs_written_as_one_character_are_fine() -> None:
    # "\U0001F642" is one code point (JSON writes it as the pair "\ud83d\ude42", which the decoder joins)
    doc = json.loads('{"topics": {"t\\ud83d\\ude42": 2}, "members": {"m\\ud83d\\ude42": {"topics": ["t\\ud83d\\ude42"]}}}')
    assert kassign.assign("sticky", doc) == {"m\U0001F642": [("t\U0001F642", 0), ("t\U0001F642", 1)]}


@pytest.mark.parametrize(("doc", "where"), [
    ({"topics": {}, "members": {}, "partition_racks": {5: []}}, "scenario partition_racks: names must be strings"),
    ({"topics": {}, "members": {}, "topic_ids": {5: "zlHH1P2WR-GsRZQpv0_Hxw"}}, "scenario topic_ids: names must be strings"),
])
def test_topic_names_of_racks_and_ids_must_be_strings(doc: dict, where: str) -> None:
    with pytest.raises(ScenarioError, match=where):
        parse_scenario(doc)
