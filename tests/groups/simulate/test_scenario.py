"""The simulation scenario reader (kassign.groups.simulate.scenario): bad YAML/JSON timelines are one ScenarioError that
says where, checked before anything is simulated (issue #20)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core.errors import KassignError, ScenarioError
from kassign.core.limits import JAVA_INT_MAX, MAX_PARTITIONS
from kassign.groups.simulate import parse_sim_scenario
from kassign.groups.simulate.scenario import load_sim_scenario

ONE = {"C0": {"topics": ["t0"]}}


def refused(doc: dict) -> str:
    with pytest.raises(ScenarioError) as caught:
        parse_sim_scenario(doc)
    return str(caught.value)


# -- partition counts: a Java int per topic, and no more than kassign materialises in all -------------

@pytest.mark.parametrize(("start", "add"), [(4, JAVA_INT_MAX), (40_000_000, JAVA_INT_MAX - 39_999_999),
                                           (2, JAVA_INT_MAX - 1)])
def test_adding_partitions_past_a_java_int_is_refused_at_the_event(start: int, add: int) -> None:
    doc = {"topics": {"t0": start}, "members": ONE,
           "events": [{"at": 10, "type": "add_partitions", "topic": "t0", "add": add}]}
    message = refused(doc)
    assert "events[0] (add_partitions at 10s)" in message
    assert f"topic 't0' would have {start + add:,} partitions" in message and "Java int" in message


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, JAVA_INT_MAX), min_size=1, max_size=6))
def test_no_sequence_of_additions_takes_a_topic_past_a_java_int(adds: list[int]) -> None:
    doc = {"topics": {"t0": 1}, "members": ONE,
           "events": [{"at": i, "type": "add_partitions", "topic": "t0", "add": n} for i, n in enumerate(adds)]}
    total = 1
    for i, n in enumerate(adds):
        total += n
        if total > JAVA_INT_MAX:
            assert f"events[{i}]" in refused(doc)
            return
        if total > MAX_PARTITIONS:
            assert "more than kassign materialises" in refused(doc)
            return
    assert parse_sim_scenario(doc).topics == {"t0": 1}


@pytest.mark.parametrize("doc", [
    {"topics": {"t0": JAVA_INT_MAX}, "members": ONE},
    {"topics": {"t0": 30_000_000, "t1": 30_000_000}, "members": ONE},
    {"topics": {"t0": 40_000_000}, "members": ONE,
     "events": [{"at": 10, "type": "create_topic", "topic": "t1", "partitions": 40_000_000}]},
    {"topics": {"t0": 40_000_000}, "members": ONE,
     "events": [{"at": 10, "type": "add_partitions", "topic": "t0", "add": 20_000_000}]},
])
def test_more_partitions_than_kassign_materialises_are_refused_up_front(doc: dict) -> None:
    assert "more than kassign materialises" in refused(doc)


def test_deleting_a_topic_gives_its_partitions_back_to_the_budget() -> None:
    doc = {"topics": {"t0": 40_000_000}, "members": ONE,
           "events": [{"at": 5, "type": "delete_topic", "topic": "t0"},
                      {"at": 10, "type": "create_topic", "topic": "t1", "partitions": 40_000_000}]}
    assert parse_sim_scenario(doc).topics == {"t0": 40_000_000}


# -- ids read as text: YAML's 1 and '1' are one name -------------------------------------------------

def write(tmp_path, text: str) -> str:
    path = tmp_path / "sim.yaml"
    path.write_text(text)
    return str(path)


def test_members_1_and_quoted_1_collide_and_are_refused(tmp_path) -> None:
    path = write(tmp_path, "topics: {t0: 4}\nmembers:\n  1: {topics: [t0]}\n  '1': {topics: [t0]}\n")
    with pytest.raises(ScenarioError, match=r"members: members 1 and '1' have the same id once read as text \('1'\)"):
        load_sim_scenario(path)


def test_topics_1_and_quoted_1_collide_and_are_refused(tmp_path) -> None:
    path = write(tmp_path, "topics: {1: 4, '1': 5}\nmembers: {C0: {topics: ['1']}}\n")
    with pytest.raises(ScenarioError, match=r"topics: topics 1 and '1' have the same name once read as text \('1'\)"):
        load_sim_scenario(path)


def test_a_number_as_a_member_id_is_read_as_its_text(tmp_path) -> None:
    path = write(tmp_path, "topics: {7: 2}\nmembers:\n  1: {topics: ['7']}\n  C2: {topics: ['7']}\n"
                           "events:\n  - {at: 5, type: leave, member: '1'}\n")
    scenario = load_sim_scenario(path)
    assert list(scenario.members) == ["1", "C2"] and scenario.topics == {"7": 2}
    from kassign.groups.simulate.engine import TimelineRun

    timeline = TimelineRun(scenario, "range")
    timeline.run()
    assert {m: sorted(mb.owned) for m, mb in timeline.members.items()} == {"C2": [("7", 0), ("7", 1)]}


@pytest.mark.parametrize(("yaml_key", "shown"), [("on", "true"), ("no", "false"), ("null", "null"), ("1.5", "1.5"),
                                                 ("2024-01-01", "2024-01-01")])
def test_ids_yaml_reads_as_something_else_are_refused_with_a_hint_to_quote(tmp_path, yaml_key: str, shown: str) -> None:
    path = write(tmp_path, f"topics: {{t0: 4}}\nmembers:\n  {yaml_key}: {{topics: [t0]}}\n")
    with pytest.raises(ScenarioError, match="quote it") as caught:
        load_sim_scenario(path)
    assert "members: member id" in str(caught.value)


def test_a_number_where_a_name_goes_says_to_quote_it() -> None:
    doc = {"topics": {"t0": 2}, "members": {"1": {"topics": ["t0"]}}, "events": [{"at": 1, "type": "leave", "member": 1}]}
    assert "got the number 1; quote it" in refused(doc)


# -- names UTF-8 cannot carry ---------------------------------------------------------------------------

LONE = "\ud800"


@pytest.mark.parametrize(("doc", "where"), [
    ({"topics": {LONE: 2}, "members": ONE}, "topics: topic name '\\ud800'"),
    ({"topics": {"t0": 2}, "members": {"C" + LONE: {"topics": ["t0"]}}}, "members: member id 'C\\ud800'"),
    ({"topics": {"t0": 2}, "members": {"C0": {"topics": ["t0", LONE]}}}, "members.C0.topics: topic name '\\ud800'"),
    ({"topics": {"t0": 2}, "members": {"C0": {"topics": ["t0"], "rack": LONE}}}, "members.C0.rack: rack '\\ud800'"),
    ({"topics": {"t0": 2}, "members": {"C0": {"topics": ["t0"], "instance_id": LONE}}},
     "members.C0.instance_id: instance_id '\\ud800'"),
    ({"topics": {"t0": 2}, "members": ONE, "events": [{"at": 1, "type": "join", "member": LONE, "topics": ["t0"]}]},
     "events[0].member: member id '\\ud800'"),
    ({"topics": {"t0": 2}, "members": ONE, "events": [{"at": 1, "type": "create_topic", "topic": LONE, "partitions": 1}]},
     "events[0].topic: topic name '\\ud800'"),
])
def test_names_with_a_lone_surrogate_are_refused_where_they_are(doc: dict, where: str) -> None:
    message = refused(doc)
    assert f"simulation scenario {where}" in message and "lone surrogate" in message
    message.encode("utf-8")


def test_the_wire_format_refuses_what_utf8_cannot_carry() -> None:
    # the classic protocol's JoinGroup encodes names; reached only by a scenario built in Python: never a UnicodeEncodeError
    from kassign.groups.classic.assignors.base import Subscription
    from kassign.groups.classic.protocol.wire import encode_subscription

    with pytest.raises(KassignError, match="rack id '\\\\ud800' has a lone surrogate"):
        encode_subscription(Subscription(("t0",), rack=LONE))


# -- values YAML reads as something other than text (dates, lists) are input errors, not TypeErrors ----

@pytest.mark.parametrize(("text", "where"), [
    ("events:\n  - {at: 1, type: 2024-01-01}\n", "events[0].type: expected one of join"),
    ("events:\n  - {at: 1, type: [leave]}\n", "events[0].type: expected one of join"),
    ("members:\n  C0: {topics: [t0], group_protocol: 2024-01-01}\n", "members.C0.group_protocol: expected classic"),
    ("members:\n  C0: {topics: [t0], group_protocol: consumer, remote_assignor: 2024-01-01}\n",
     "members.C0.remote_assignor: expected one of uniform, range"),
    ("members:\n  C0: {topics: [t0, 2024-01-01]}\n", "members.C0.topics: expected a list of names"),
])
def test_values_yaml_reads_as_dates_or_lists_are_one_line_errors(tmp_path, text: str, where: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(f"simulation scenario {where}")):
        load_sim_scenario(write(tmp_path, "topics: {t0: 2}\n" + text))


@pytest.mark.parametrize("text", [
    "events:\n  - {at: 1" + "0" * 400 + ", type: delete_topic, topic: t0}\n",
    "settings: {round_seconds: 1" + "0" * 400 + "}\n",
    "members:\n  C0: {topics: [t0], session_timeout: 1" + "0" * 400 + "}\n",
])
def test_times_of_hundreds_of_digits_are_refused_not_overflowing(tmp_path, text: str) -> None:
    with pytest.raises(ScenarioError, match="expected a number of seconds from .* got an integer of about 400 digits"):
        load_sim_scenario(write(tmp_path, "topics: {t0: 2}\n" + text))
