"""Share groups as Kafka 4.1 runs them: the ``simple`` assignor before KAFKA-19362/19363, against a literal model,
its invariants, Kafka 4.1's own SimpleAssignorTest cases, and where it differs from 4.3's rule."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kassign.core.javaorder import java_string_hashes
from kassign.groups.share import assign_share
from kassign.groups.share.hashed import _deal_with_count, hash_picks
from kassign.groups.share.simple import ShareAssignorError
from tests.groups.share import java_model
from tests.groups.share.test_simple import (
    ZERO_ID,
    _distinct,
    _follow_up,
    assert_agrees_with_model,
    assert_readers_get_all_they_may,
    groups,
    settled_groups,
)


def assign41(doc: dict) -> dict:
    return assign_share("simple", doc, kafka_version="4.1")


def _pairs(**members: dict[str, list[int]]) -> dict[str, list[tuple[str, int]]]:
    return {m: sorted((t, p) for t, ps in topics.items() for p in ps) for m, topics in members.items()}


# -- Kafka 4.1's SimpleAssignorTest, as scenarios -------------------------------------------------

def test_no_members_and_no_subscribed_topic() -> None:
    assert assign41({"topics": {"topic1": 3}, "members": {}}) == {}
    assert assign41({"topics": {"topic1": 3}, "members": {"A": {"topics": []}}}) == {"A": []}


def test_a_subscribed_name_without_metadata_gives_nothing() -> None:
    # Kafka's test throws because it hands the assignor a topic id missing from the metadata; a coordinator's
    # view of subscribed names skips names without metadata, so there is nothing to assign
    assert assign41({"topics": {"topic1": 3}, "members": {"A": {"topics": ["topic2"]}}}) == {"A": []}


HOMOGENEOUS = {"topics": {"topic1": 3, "topic3": 2}, "members": {m: {"topics": ["topic1", "topic3"]} for m in "AB"}}


@pytest.mark.parametrize("initialized", [None, {"topic1": [0, 1, 2], "topic3": [0, 1]}])
def test_two_members_two_topics_homogeneous(initialized) -> None:
    # hashes 65 and 66 mod 5 place A on topic1-0 and B on topic1-1; topic1-2, topic3-0, topic3-1 go round robin
    doc = {**HOMOGENEOUS, "initialized": initialized}
    assert assign41(doc) == _pairs(A={"topic1": [0, 2], "topic3": [1]}, B={"topic1": [1], "topic3": [0]})


def test_two_members_two_topics_homogeneous_one_topic_not_initialized() -> None:
    doc = {**HOMOGENEOUS, "initialized": {"topic1": [0, 1, 2]}}
    assert assign41(doc) == _pairs(A={"topic1": [1, 2]}, B={"topic1": [0]})


THREE = {"topics": {"topic1": 3, "topic2": 3, "topic3": 2},
         "members": {"A": {"topics": ["topic1", "topic2"]}, "B": {"topics": ["topic3"]},
                     "C": {"topics": ["topic2", "topic3"]}}}
THREE_ANSWER = _pairs(A={"topic1": [0, 1, 2], "topic2": [0, 2]}, B={"topic3": [0, 1]}, C={"topic2": [1, 2]})


@pytest.mark.parametrize("initialized", [None, {"topic1": [0, 1, 2], "topic2": [0, 1, 2], "topic3": [0, 1]}])
def test_three_members_three_topics_heterogeneous(initialized) -> None:
    assert assign41({**THREE, "initialized": initialized}) == THREE_ANSWER


def test_three_members_three_topics_heterogeneous_one_topic_not_initialized() -> None:
    doc = {**THREE, "initialized": {"topic1": [0, 1, 2], "topic2": [0, 1, 2]}}
    assert assign41(doc) == _pairs(A={"topic1": [0, 1, 2], "topic2": [0, 2]}, B={}, C={"topic2": [1]})


def test_one_member_without_topics_heterogeneous() -> None:
    doc = {"topics": {"topic1": 3, "topic2": 2},
           "members": {"A": {"topics": ["topic1", "topic2"]}, "B": {"topics": []}}}
    assert assign41(doc) == _pairs(A={"topic1": [0, 1, 2], "topic2": [0, 1]}, B={})


def test_member_hash_assignment() -> None:
    ids = ["member1", "member2", "member3", "member4", "AaAaAaAa"]
    hashes = java_string_hashes(ids)
    assert hashes.tolist()[:4] == [948881623, 948881624, 948881625, 948881626]
    assert int(hashes[4]) - (1 << 32) == -540425984  # a negative hashCode: the remainder is negative, then abs
    assert hash_picks(hashes, 3).tolist() == [1, 2, 0, 1, 2]
    # as a group: five members, three partitions, a count of one each: hashing places everybody
    doc = {"topics": {"t": 3}, "members": {m: {"topics": ["t"]} for m in ids}}
    assert assign41(doc) == {"member1": [("t", 1)], "member2": [("t", 2)], "member3": [("t", 0)],
                             "member4": [("t", 1)], "AaAaAaAa": [("t", 2)]}


def test_round_robin_with_count() -> None:
    # both members hold one partition already, count 2: they take turns and may reach 3
    assert _deal_with_count(np.array([1, 1]), 3, 2).tolist() == [0, 1, 0]


def test_round_robin_with_count_too_many_partitions() -> None:
    # five to deal, room for four: every member leaves the round and Kafka throws
    assert len(_deal_with_count(np.array([1, 1]), 5, 2)) == 4


def test_current_assignment_homogeneous() -> None:
    first = {"topics": {"topic1": 3, "topic2": 2}, "members": {m: {"topics": ["topic1", "topic2"]} for m in "AB"}}
    answer = assign41(first)
    assert answer == _pairs(A={"topic1": [0, 2], "topic2": [1]}, B={"topic1": [1], "topic2": [0]})
    # topic1 deleted, topic3 created, C joins; all subscribe to topic2 and topic3
    members = {m: {"topics": ["topic2", "topic3"], "owned": [list(tp) for tp in answer[m]]} for m in "AB"}
    second = {"topics": {"topic2": 2, "topic3": 3}, "members": {**members, "C": {"topics": ["topic2", "topic3"]}}}
    assert assign41(second) == _pairs(A={"topic2": [0], "topic3": [1]}, B={"topic2": [1], "topic3": [2]},
                                      C={"topic3": [0]})


def test_current_assignment_heterogeneous() -> None:
    answer = assign41(THREE)
    assert answer == THREE_ANSWER
    second = {"topics": {"topic1": 3, "topic2": 3, "topic3": 2, "topic4": 1},
              "members": {"A": {"topics": ["topic1", "topic2", "topic3"], "owned": [list(tp) for tp in answer["A"]]},
                          "B": {"topics": ["topic3", "topic4"], "owned": [list(tp) for tp in answer["B"]]}}}
    assert assign41(second) == _pairs(A={"topic1": [0, 1, 2], "topic2": [0, 1, 2]}, B={"topic3": [0, 1], "topic4": [0]})


# -- where 4.1 and 4.3 differ, and where they agree -------------------------------------------------

def test_the_module_docstring_example_differs_from_4_3() -> None:
    doc = {"topics": {"t0": 3}, "topic_ids": {"t0": ZERO_ID}, "members": {m: {"topics": ["t0"]} for m in "ABCDE"}}
    assert assign41(doc) == {"A": [("t0", 2)], "B": [("t0", 0)], "C": [("t0", 1)], "D": [("t0", 2)],
                             "E": [("t0", 0)]}
    assert assign_share("simple", doc) == {"A": [("t0", 0), ("t0", 2)], "B": [("t0", 0)], "C": [("t0", 1)],
                                           "D": [("t0", 1)], "E": [("t0", 2)]}
    # E leaves: 4.1 hashes everybody again (65..68 mod 3), which leaves nothing to keep or deal
    doc = _follow_up(doc, assign41(doc))
    del doc["members"]["E"]
    assert assign41(doc) == {"A": [("t0", 2)], "B": [("t0", 0)], "C": [("t0", 1)], "D": [("t0", 2)]}


def test_4_1_keeps_partitions_of_deleted_or_unsubscribed_topics_nowhere() -> None:
    # 4.3's heterogeneous path keeps a current partition of a deleted topic; 4.1 drops it
    members = {"A": {"topics": ["t0"], "owned": [["gone", 3]]}, "B": {"topics": ["t0", "t1"]}}
    doc = {"topics": {"t0": 2, "t1": 1}, "members": members}
    assert ("gone", 3) in assign_share("simple", doc)["A"]
    assert ("gone", 3) not in assign41(doc)["A"]


@pytest.mark.parametrize("doc", [
    {"topics": {"t0": 5}, "members": {"A": {"topics": ["t0"]}}},
    {"topics": {"t0": 5, "t1": 2}, "members": {"solo": {"topics": ["t0", "t1"], "owned": [["t0", 4]]}}},
    {"topics": {"topic1": 3, "topic2": 2}, "members": {"A": {"topics": ["topic1", "topic2"]}, "B": {"topics": []}}},
    {"topics": {"t0": 2, "t1": 3}, "members": {"A": {"topics": ["t0"]}, "B": {"topics": ["t1"]}}},
])
def test_4_1_and_4_3_agree_where_each_topic_has_one_reader(doc: dict) -> None:
    assert assign41(doc) == assign_share("simple", doc)


def test_kafka_4_1_throws_when_uninitialized_holdings_leave_no_room() -> None:
    # A and E hash to t-1 (65 and 69 mod 4); both keep t-4 (not initialized), so both are at their count of 2
    # and three partitions are left to deal: each takes one more, then both leave the round
    doc = {"topics": {"t": 6}, "initialized": {"t": [0, 1, 2, 3]},
           "members": {m: {"topics": ["t"], "owned": [["t", 4], ["t", 5]]} for m in "AE"}}
    with pytest.raises(ShareAssignorError, match="PartitionAssignorException") as raised:
        assign41(doc)
    assert raised.value.kafka_exception == "PartitionAssignorException"
    with pytest.raises(java_model.PartitionAssignorError):
        java_model.simple_assign_41(doc)
    # the same group as 4.3 runs it answers
    assert assign_share("simple", doc)["A"]


# -- generated groups -----------------------------------------------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(owned=True))
def test_agrees_with_the_literal_model_on_any_current_targets(doc: dict) -> None:
    assert_agrees_with_model(doc, "4.1", java_model.simple_assign_41, java_model.PartitionAssignorError,
                             "PartitionAssignorException")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(groups(), settled_groups(kafka_version="4.1")))
def test_properties_of_a_group_whose_targets_are_4_1_answers(doc: dict) -> None:
    answer = assign41(doc)
    assert_readers_get_all_they_may(doc, answer)
    assert assign41(json.loads(json.dumps(doc))) == answer  # deterministic


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups())
def test_a_new_homogeneous_group_holds_at_most_its_count_plus_one(doc: dict) -> None:
    names = {frozenset(spec["topics"]) for spec in doc["members"].values()}
    assume(len(names) == 1)
    answer = assign41(doc)
    assignable = len(_distinct(assign41({**doc, "members": {"only": next(iter(doc["members"].values()))}})))
    count = -(-assignable // len(answer))
    assert all(len(pairs) <= count + 1 for pairs in answer.values())
    assert len(_distinct(answer)) == assignable
