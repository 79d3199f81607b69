"""CooperativeStickyAssignor: Kafka's vectors, revoke-before-reassign, generation from fields or user data."""

from __future__ import annotations

import logging
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kassign
from kassign.groups.classic.assignors import COOPERATIVE, get_assignor
from kassign.groups.classic.assignors.base import Assignment, Subscription, TopicPartition
from kassign.groups.classic.assignors.cooperative_sticky import CooperativeStickyAssignor
from kassign.core.cluster import Cluster
from tests.groups.classic.assignors.test_sticky import lines, per_member_sorted, uniform_groups


@pytest.mark.parametrize("line", lines("assign-cooperative-sticky.jsonl", uniform=True))
def test_uniform_vectors_match_kafka_this_round(line):
    got = kassign.assign("cooperative-sticky", line["scenario"])
    assert per_member_sorted(got) == per_member_sorted(line["expected"])


@pytest.mark.parametrize("line", lines("assign-cooperative-sticky.jsonl", uniform=False))
def test_general_lines_hand_nothing_over_directly(line):
    scenario = line["scenario"]
    got = kassign.assign("cooperative-sticky", scenario)
    _assert_no_direct_handover(scenario, got)


def _assert_no_direct_handover(scenario, got):
    owners = Counter(tp for v in got.values() for tp in v)
    assert all(c == 1 for c in owners.values())
    previous = {tuple(tp): m for m, spec in scenario["members"].items() for tp in spec.get("owned", [])}
    for member, partitions in got.items():
        for tp in partitions:
            assert previous.get(tuple(tp), member) == member, f"{tp} goes from {previous[tuple(tp)]} to {member}"


def test_supports_both_protocols_cooperative_first():
    assignor = get_assignor("cooperative-sticky")
    assert isinstance(assignor, CooperativeStickyAssignor)
    assert assignor.supported_protocols[0] == COOPERATIVE


def test_joiner_waits_one_round_for_revoked_partitions():
    topics = {"t0": 4}
    round1 = {
        "topics": topics,
        "members": {"C0": {"topics": ["t0"], "owned": [["t0", p] for p in range(4)], "generation": 4},
                    "C1": {"topics": ["t0"]}},
    }
    first = kassign.assign("cooperative-sticky", round1)
    assert first == {"C0": [("t0", 0), ("t0", 1)], "C1": []}
    round2 = {
        "topics": topics,
        "members": {"C0": {"topics": ["t0"], "owned": [list(tp) for tp in first["C0"]], "generation": 5},
                    "C1": {"topics": ["t0"], "generation": 5}},
    }
    assert kassign.assign("cooperative-sticky", round2) == {"C0": [("t0", 0), ("t0", 1)], "C1": [("t0", 2), ("t0", 3)]}


def test_generation_read_from_user_data_when_the_field_is_absent():
    # B's subscription has no generation field, only the int32 in its user data (5 > A's 2): B wins t0p0.
    subs = {
        "A": Subscription(("t0",), owned_partitions=(TopicPartition("t0", 0),), generation=2),
        "B": Subscription(("t0",), user_data=b"\x00\x00\x00\x05", owned_partitions=(TopicPartition("t0", 0),)),
    }
    resolved = CooperativeStickyAssignor().previous_ownership(Cluster({"t0": 2}), subs)
    assert resolved.owned_partitions() == {"A": (), "B": (TopicPartition("t0", 0),)}


def test_unreadable_user_data_generation_is_a_warning(caplog):
    subs = {"A": Subscription(("t0",), user_data=b"\x01", owned_partitions=(TopicPartition("t0", 1),))}
    with caplog.at_level(logging.WARNING, logger="kassign"):
        got = CooperativeStickyAssignor().assign(Cluster({"t0": 2}), subs)
    assert "unreadable cooperative-sticky user data" in caplog.text
    assert set(got["A"].partitions) == {TopicPartition("t0", 0), TopicPartition("t0", 1)}


def test_subscription_user_data_carries_the_generation():
    member = CooperativeStickyAssignor()
    assert member.subscription(["t0"]).user_data == b"\xff\xff\xff\xff"
    member.on_assignment(Assignment(()), generation=9)
    assert member.subscription(["t0"]).user_data == b"\x00\x00\x00\x09"
    assert member.subscription(["t0"], generation=3).user_data == b"\x00\x00\x00\x03"


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(uniform_groups())
def test_two_rounds_never_hand_over_directly_and_end_balanced(scenario):
    first = kassign.assign("cooperative-sticky", scenario)
    _assert_no_direct_handover(scenario, first)
    generation = max(spec["generation"] for spec in scenario["members"].values()) + 1
    follow_up = {
        "topics": scenario["topics"],
        "members": {
            m: {"topics": spec["topics"], "owned": [list(tp) for tp in first[m]], "generation": generation}
            for m, spec in scenario["members"].items()
        },
    }
    second = kassign.assign("cooperative-sticky", follow_up)
    _assert_no_direct_handover(follow_up, second)
    assert sum(len(v) for v in second.values()) == sum(scenario["topics"].values())
    sizes = [len(v) for v in second.values()]
    assert max(sizes) - min(sizes) <= 1


@st.composite
def mixed_groups(draw):
    topics = {f"t{i}": draw(st.integers(1, 5)) for i in range(draw(st.integers(2, 4)))}
    names = [f"m{i}" for i in range(draw(st.integers(2, 5)))]
    members = {n: {"topics": draw(st.lists(st.sampled_from(list(topics)), min_size=1, unique=True)),
                   "generation": 1} for n in names}
    for t, n in topics.items():
        for p in range(n):
            holder = draw(st.sampled_from([*names, None]))
            if holder is not None and t in members[holder]["topics"]:
                members[holder].setdefault("owned", []).append([t, p])
    return {"topics": topics, "members": members}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_groups())
def test_different_subscriptions_never_hand_over_directly(scenario):
    got = kassign.assign("cooperative-sticky", scenario)
    _assert_no_direct_handover(scenario, got)
    for member, partitions in got.items():
        assert {t for t, _ in partitions} <= set(scenario["members"][member]["topics"])


# Kafka's AbstractStickyAssignorTest.testRackAwareAssignmentWithNonEqualSubscription, replication
# factor 1: brokers and consumers on racks a, b, c; partition p of a topic sits on broker
# (p + the topic's first index) % 3, topics numbered t1 (0..5), t2 (6..12), t3 (13..14).
RACK_CASE_RACKS = {"t1": [[r] for r in "abcabc"], "t2": [[r] for r in "abcabca"], "t3": [[r] for r in "bc"]}
RACK_CASE_TOPICS = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]


def _rack_case(owned: list[list[tuple[str, int]]]) -> dict:
    return {"topics": {"t1": 6, "t2": 7, "t3": 2}, "partition_racks": RACK_CASE_RACKS,
            "members": {f"consumer{i}": {"topics": RACK_CASE_TOPICS[i], "rack": "abc"[i],
                                         "owned": [list(tp) for tp in owned[i]]} for i in range(3)}}


def _misaligned(assignment: dict) -> int:
    return sum(RACK_CASE_RACKS[t][p] != [member_rack] for member, parts in assignment.items()
               for member_rack in ["abc"[int(member[-1])]] for t, p in parts)


def test_kafkas_rack_case_with_different_subscriptions_puts_racks_before_stickiness() -> None:
    def tps(text: str) -> list[tuple[str, int]]:
        return [(t, int(p)) for t, p in (item.rsplit("-", 1) for item in text.split(", "))]

    owned = [tps("t1-0, t1-1, t1-2, t1-3, t1-4"), tps("t1-5, t2-0, t2-1, t2-2, t2-3"),
             tps("t2-4, t2-5, t2-6, t3-0, t3-1")]
    kafka_final = [tps("t1-3, t2-0, t2-2, t2-3, t2-6"), tps("t1-4, t2-1, t2-4, t2-5, t3-0"),
                   tps("t1-0, t1-1, t1-2, t1-5, t3-1")]
    first = kassign.assign("cooperative-sticky", _rack_case(owned))
    final = kassign.assign("cooperative-sticky", _rack_case([first[f"consumer{i}"] for i in range(3)]))
    assert sorted(len(parts) for parts in final.values()) == [5, 5, 5]
    # Kafka ends with 4 misaligned partitions; with racks before stickiness kassign needs no more
    kafka = {f"consumer{i}": kafka_final[i] for i in range(3)}
    assert _misaligned(kafka) == 4
    assert _misaligned(final) <= 4
    # ... and keeps at least as many partitions where they were
    def kept(result: dict) -> int:
        return sum(tp in owned[i] for i in range(3) for tp in result[f"consumer{i}"])
    assert kept(final) >= kept(kafka)
    # the first round hands out nothing that moves: partitions changing owner are revoked first
    for i in range(3):
        assert set(first[f"consumer{i}"]) <= set(owned[i]) & set(final[f"consumer{i}"])
    # misaligned partitions its owner could have kept were revoked: consumer0 (rack a) owned t1-1, t1-2, t1-4
    assert not {("t1", 1), ("t1", 2), ("t1", 4)} & set(final["consumer0"])
    # the eager assignor reaches the same target in one round
    assert kassign.assign("sticky", _rack_case(owned)) == final
