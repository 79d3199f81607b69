"""Kafka 4's server-side assignors (uniform, range): every vector line, Kafka's documented
examples, Java's iteration order, and the properties each assignor promises.

The vectors and examples here are Kafka 4.0.0's, so every call names that release (``OLD``);
the later releases' rule is tested in ``test_server_side_releases.py``."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kassign
from kassign.groups.consumer.group import build_server_group, derived_topic_id, parse_topic_id
from kassign.groups.scenario import parse_scenario
from tests.conftest import vector_params

OLD = "4.0.0"  # the release these vectors and examples come from (before KAFKA-18688)


def assign_400(strategy: object, scenario: dict) -> dict:
    """The group coordinator's new target as Kafka 4.0.0 computes it."""
    return kassign.assign(strategy, scenario, protocol="consumer", kafka_version=OLD)


def _expected(line: dict) -> dict:
    return {member: [(t, p) for t, p in partitions] for member, partitions in line["expected"].items()}


@pytest.mark.parametrize("line", vector_params("assign-uniform.jsonl"))
def test_uniform_vector(line: dict) -> None:
    assert build_server_group(parse_scenario(line["scenario"])).homogeneous == line["homogeneous"]
    assert assign_400("uniform", line["scenario"]) == _expected(line)


@pytest.mark.parametrize("line", vector_params("assign-range-server.jsonl"))
def test_range_server_vector(line: dict) -> None:
    assert assign_400("range", line["scenario"]) == _expected(line)


def consumer(strategy: str, topics: dict, members: dict, **extra) -> dict:
    return assign_400(strategy, {"topics": topics, "members": members, **extra})


def tps(topic: str, *partitions: int) -> list[tuple[str, int]]:
    return [(topic, p) for p in partitions]


# -- Kafka's own documented examples -------------------------------------------------------------

def test_range_javadoc_co_partitioned_example() -> None:
    members = {"M0": {"topics": ["T1", "T2"]}, "M1": {"topics": ["T1", "T2"]}}
    assert consumer("range", {"T1": 3, "T2": 3}, members) == {
        "M0": tps("T1", 0, 1) + tps("T2", 0, 1),
        "M1": tps("T1", 2) + tps("T2", 2),
    }


def test_range_static_members_keep_their_ranges_under_new_member_ids() -> None:
    before = {"M0": {"topics": ["T1", "T2"], "instance_id": "I0"}, "M1": {"topics": ["T1", "T2"], "instance_id": "I1"}}
    after = {"M3": {"topics": ["T1", "T2"], "instance_id": "I0"}, "M2": {"topics": ["T1", "T2"], "instance_id": "I1"}}
    first, second = consumer("range", {"T1": 3, "T2": 3}, before), consumer("range", {"T1": 3, "T2": 3}, after)
    assert second["M3"] == first["M0"] and second["M2"] == first["M1"]


def test_range_static_members_come_before_dynamic_ones() -> None:
    members = {"a": {"topics": ["t"]}, "z": {"topics": ["t"], "instance_id": "host"}}
    assert consumer("range", {"t": 3}, members) == {"a": tps("t", 2), "z": tps("t", 0, 1)}


def test_uniform_first_assignment_two_members_two_topics() -> None:
    # Kafka's UniformHeterogeneousAssignmentBuilderTest: A on t1 (3) and t3 (6), B on t3 only
    members = {"A": {"topics": ["t1", "t3"]}, "B": {"topics": ["t3"]}}
    assert consumer("uniform", {"t1": 3, "t3": 6}, members) == {
        "A": tps("t1", 0, 1, 2) + tps("t3", 4),
        "B": tps("t3", 0, 1, 2, 3, 5),
    }


def test_uniform_rebalances_an_unbalanced_previous_target() -> None:
    # Kafka's UniformHeterogeneousAssignmentBuilderTest, reassignment of an unbalanced target
    topics = {"t1": 6, "t2": 4, "t3": 4}
    members = {
        "A": {"topics": ["t1"], "owned": [["t1", 0], ["t1", 1], ["t1", 2]]},
        "B": {"topics": ["t1", "t2"], "owned": [["t1", 3], ["t2", 0]]},
        "C": {"topics": ["t1", "t2", "t3"],
              "owned": [["t1", 4], ["t1", 5], ["t2", 1], ["t2", 2], ["t2", 3]] + [["t3", p] for p in range(4)]},
    }
    assert consumer("uniform", topics, members) == {
        "A": tps("t1", 0, 1, 2, 5),
        "B": tps("t1", 3) + tps("t2", 0, 1, 2, 3),
        "C": tps("t1", 4) + tps("t3", 0, 1, 2, 3),
    }


def test_uniform_takes_away_partitions_of_deleted_and_unsubscribed_topics() -> None:
    members = {
        "A": {"topics": ["keep"], "owned": [["keep", 0], ["gone", 0], ["dropped", 1]]},
        "B": {"topics": ["keep"], "owned": [["keep", 1]]},
    }
    result = consumer("uniform", {"keep": 2, "dropped": 2}, members)
    assert result == {"A": tps("keep", 0), "B": tps("keep", 1)}


def test_nonexistent_topics_get_nothing_and_still_count_for_homogeneity() -> None:
    scenario = {"topics": {"t": 4}, "members": {"A": {"topics": ["t", "ghost"]}, "B": {"topics": ["t"]}}}
    assert not build_server_group(parse_scenario(scenario)).homogeneous
    result = assign_400("uniform", scenario)
    assert sorted(len(v) for v in result.values()) == [2, 2]


# -- Java's order ----------------------------------------------------------------------------------

def test_uniform_homogeneous_extra_partitions_follow_the_member_map_order_not_the_listing() -> None:
    # "B" (hash 66) iterates before "C" (67) before "A0" (2063): 5 partitions, 3 members -> B and C get 2
    members = {name: {"topics": ["t"]} for name in ("A0", "C", "B")}
    result = consumer("uniform", {"t": 5}, members)
    assert {m: len(p) for m, p in result.items()} == {"A0": 1, "B": 2, "C": 2}


# A member's owned partitions of one topic form a HashSet built at once from the record's list
# (HashSet's copy constructor): 12 of them get a 32-bucket table, where 12 adds one at a time
# would stay at 16 buckets and iterate 16, 18, 20, 22 between the smaller numbers.
TWELVE_EVENS = list(range(0, 24, 2))


def test_a_members_owned_partitions_iterate_as_the_copy_constructor_built_them() -> None:
    scenario = {"topics": {"t": 24}, "members": {"A": {"topics": ["t"], "owned": [["t", p] for p in TWELVE_EVENS]}}}
    group = build_server_group(parse_scenario(scenario))
    assert group.current_target(0) == [(0, TWELVE_EVENS)]  # not [0, 16, 2, 18, 4, 20, 6, 22, 8, 10, 12, 14]


def test_uniform_homogeneous_member_over_quota_gives_up_the_last_of_its_set_order() -> None:
    # 24 partitions, 3 members (A, B, C iterate in that order): quota 8 each. A holds the 12 even
    # partitions and keeps the first 8 its set yields, 0..14; it gives up 16, 18, 20, 22. B takes
    # the first 8 unheld partitions (odd 1..15), C the other 4 unheld (17..23) and the released 4.
    members = {"A": {"topics": ["t"], "owned": [["t", p] for p in TWELVE_EVENS]},
               "B": {"topics": ["t"]}, "C": {"topics": ["t"]}}
    assert consumer("uniform", {"t": 24}, members) == {
        "A": tps("t", *range(0, 16, 2)),
        "B": tps("t", *range(1, 16, 2)),
        "C": tps("t", *range(16, 24)),
    }


def test_uniform_homogeneous_owned_set_order_with_two_topics() -> None:
    # 28 partitions, 3 members: A's quota is 10 (9, and A, first in member order, one more). A holds
    # 12 of "a" and 2 of "b"; whichever topic its map yields first, of "a" it keeps a prefix of the
    # set's order, which for the copy constructor's 32 buckets is ascending.
    members = {"A": {"topics": ["a", "b"], "owned": [["a", p] for p in TWELVE_EVENS] + [["b", 0], ["b", 1]]},
               "B": {"topics": ["a", "b"]}, "C": {"topics": ["a", "b"]}}
    result = consumer("uniform", {"a": 24, "b": 4}, members)
    kept_of_a = [p for t, p in result["A"] if t == "a"]
    assert kept_of_a == TWELVE_EVENS[:len(kept_of_a)]


def test_uniform_homogeneous_owned_set_with_tree_bins() -> None:
    # A holds every 16th partition of a 640-partition topic (as 16 equally loaded subscribers are
    # dealt them): 40 partitions make a 64-bucket table with 10 in each of 4 buckets, so each
    # bucket is a tree bin. 20 members: quota 32. A keeps the first 32 that JDK 17's HashSet yields
    # (195, 3, 67, ... 243, 51) and gives up the last 8.
    jdk17_order = [195, 3, 67, 131, 259, 323, 387, 451, 515, 579, 211, 19, 83, 147, 275, 339, 403, 467, 531,
                   595, 227, 35, 99, 163, 291, 355, 419, 483, 547, 611, 243, 51, 115, 179, 307, 371, 435, 499,
                   563, 627]
    members = {"A": {"topics": ["t"], "owned": [["t", p] for p in range(3, 640, 16)]}}
    members.update({f"m{i:02d}": {"topics": ["t"]} for i in range(19)})
    result = consumer("uniform", {"t": 640}, members)
    assert result["A"] == tps("t", *sorted(jdk17_order[:32]))


# A member's subscribed names are a HashSet built at once from its listed names, too
# (ConsumerGroupMember's builder: new HashSet<>(list)), sized by the list's length, repeats included.
# "q" (hash 113) and "a" (97) share bucket 1 of 16 but sit in buckets 17 and 1 of 32. Their ids
# (least significant bits 5 and 37) share bucket 5 of the id set, so there they keep the names'
# order, and the homogeneous builder lists the unheld partitions in the id set's order.
NAMES_TOPIC_IDS = {"q": "00000000-0000-0000-0000-000000000005", "a": "00000000-0000-0000-0000-000000000025"}
GHOSTS = [f"g{i}" for i in range(10)]  # topics that do not exist: they still count in the names' set


@pytest.mark.parametrize("names", [
    ["q", "a", *GHOSTS],  # 12 names: 32 buckets copied at once, 16 after 12 adds
    ["q", "a", *GHOSTS[:9], "q"],  # 12 listed, 11 distinct: the copy is sized for the 12
])
def test_subscribed_names_iterate_as_the_copy_constructor_built_them(names: list[str]) -> None:
    members = {"A": {"topics": names}, "B": {"topics": names}}
    scenario = {"topics": {"q": 1, "a": 1}, "members": members, "topic_ids": NAMES_TOPIC_IDS}
    group = build_server_group(parse_scenario(scenario))
    assert [group.topic_names[t] for t in group.subscription_order(0)] == ["a", "q"]
    # A comes first in member order and takes the first unheld partition
    assert assign_400("uniform", scenario) == {"A": tps("a", 0), "B": tps("q", 0)}


def test_topic_ids_parse_in_both_forms_and_derive_deterministically() -> None:
    assert parse_topic_id("zlHH1P2WR-GsRZQpv0_Hxw", "t") == parse_topic_id("ce51c7d4-fd96-47e1-ac45-9429bf4fc7c7", "t")
    assert derived_topic_id("orders") == derived_topic_id("orders") != derived_topic_id("payments")
    assert len(derived_topic_id("orders")) == 22


@pytest.mark.parametrize("bad", [{"t": "short"}, {"t": 5}, {"t": "!" * 22}])
def test_bad_topic_ids_are_errors(bad: dict) -> None:
    with pytest.raises(kassign.KassignError, match="topic_ids"):
        assign_400("uniform", {"topics": {"t": 1}, "members": {}, "topic_ids": bad})


def test_two_members_holding_one_partition_is_an_error() -> None:
    members = {"A": {"topics": ["t"], "owned": [["t", 0]]}, "B": {"topics": ["t"], "owned": [["t", 0]]}}
    with pytest.raises(kassign.KassignError, match="t-0"):
        consumer("uniform", {"t": 2}, members)


@pytest.mark.parametrize("strategy, protocol, match", [
    ("sticky", "consumer", "no server-side assignor"),
    ("uniform", "classic", "uniform"),
    ("range", "eager", "protocol must be"),
    (None, "consumer", "strategy must be"),
])
def test_wrong_strategy_or_protocol(strategy, protocol, match) -> None:
    with pytest.raises(kassign.KassignError, match=match):
        kassign.assign(strategy, {"topics": {"t": 1}, "members": {"a": {"topics": ["t"]}}}, protocol=protocol,
                       kafka_version=OLD)


def test_kafka_class_names_are_accepted() -> None:
    scenario = {"topics": {"t": 3}, "members": {"a": {"topics": ["t"]}, "b": {"topics": ["t"]}}}
    for short, cls in [("uniform", "UniformAssignor"), ("range", "RangeAssignor")]:
        full = f"org.apache.kafka.coordinator.group.assignor.{cls}"
        assert assign_400(full, scenario) == assign_400(short, scenario)


# -- properties ----------------------------------------------------------------------------------

TOPICS = ["t0", "t1", "t2", "t3", "t4"]


@st.composite
def groups(draw, homogeneous: bool | None = None, with_targets: bool = True):
    topics = {t: draw(st.integers(0, 12)) for t in draw(st.lists(st.sampled_from(TOPICS), min_size=1, unique=True))}
    names = draw(st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=1, max_size=8, unique=True))
    shared = draw(st.lists(st.sampled_from(TOPICS), min_size=1, unique=True))
    members = {}
    for name in names:
        subscribed = shared if homogeneous else draw(st.lists(st.sampled_from(TOPICS), unique=True))
        members[name] = {"topics": subscribed, "owned": []}
    if with_targets:  # a current target: each existing partition to at most one member
        for t, n in topics.items():
            for p in range(n):
                holder = draw(st.sampled_from([None, *names]))
                if holder is not None:
                    members[holder]["owned"].append([t, p])
    return {"topics": topics, "members": members}


def _check_valid(scenario: dict, result: dict) -> None:
    counts = Counter(tp for partitions in result.values() for tp in partitions)
    assert all(c == 1 for c in counts.values()), "a partition went to two members"
    for member, partitions in result.items():
        subscribed = set(scenario["members"][member]["topics"])
        assert all(t in subscribed and p < scenario["topics"][t] for t, p in partitions)
    wanted = {(t, p) for m in scenario["members"].values() for t in m["topics"] if t in scenario["topics"]
              for p in range(scenario["topics"][t])}
    assert set(counts) == wanted, "every subscribed partition is assigned"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(), st.sampled_from(["uniform", "range"]))
def test_every_partition_once_and_only_to_subscribers(scenario: dict, strategy: str) -> None:
    _check_valid(scenario, assign_400(strategy, scenario))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(homogeneous=True))
def test_uniform_homogeneous_is_balanced_and_keeps_what_it_can(scenario: dict) -> None:
    result = assign_400("uniform", scenario)
    sizes = [len(p) for p in result.values()]
    assert max(sizes) - min(sizes) <= 1
    quota = sum(sizes) // len(sizes)
    for member, spec in scenario["members"].items():
        current = {tuple(tp) for tp in spec["owned"] if tp[0] in spec["topics"]}
        # a member keeps its current partitions of subscribed topics up to its quota
        assert len(current & set(result[member])) >= min(len(current), quota)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(), st.sampled_from(["uniform", "range"]))
def test_a_settled_target_stays_put(scenario: dict, strategy: str) -> None:
    first = assign_400(strategy, scenario)
    again = {m: {**spec, "owned": [list(tp) for tp in first[m]]} for m, spec in scenario["members"].items()}
    assert assign_400(strategy, {**scenario, "members": again}) == first


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(homogeneous=True, with_targets=False), st.data())
def test_range_co_partitions_topics_of_equal_size(scenario: dict, data) -> None:
    n = data.draw(st.integers(0, 9))
    scenario = {**scenario, "topics": {t: n for t in scenario["topics"]}}
    result = assign_400("range", scenario)
    for partitions in result.values():
        by_topic: dict[str, set[int]] = {}
        for t, p in partitions:
            by_topic.setdefault(t, set()).add(p)
        assert len({frozenset(ps) for ps in by_topic.values()}) <= 1


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(with_targets=False), st.randoms(use_true_random=False))
def test_range_ignores_the_order_members_are_listed_in(scenario: dict, rng) -> None:
    items = list(scenario["members"].items())
    rng.shuffle(items)
    shuffled = {**scenario, "members": dict(items)}
    assert assign_400("range", shuffled) == assign_400("range", scenario)


# -- the compiled walk of current targets --------------------------------------------------------

@st.composite
def tangled_targets(draw):
    """Members whose current targets stress Java's order: up to 30 topics (the map grows past 16
    buckets), topic ids crowding one bucket (it grows for a 9th key below 64 buckets), partitions a
    stride apart (tree bins), repeats, topics that no longer exist, partitions beyond a topic's count."""
    count = draw(st.integers(1, 30))
    names = [f"t{i}" for i in range(count)]
    crowded = draw(st.booleans())  # ids 16 apart share a bucket of a 16-bucket map
    topic_ids = {name: f"00000000-0000-0000-0000-{(16 * i + 5 if crowded else 7919 * i + 1):012x}"
                 for i, name in enumerate(names)}
    existing = draw(st.lists(st.sampled_from(names), unique=True))
    topics = {name: draw(st.integers(0, 700)) for name in existing}
    partition = st.one_of(st.integers(0, 40), st.integers(-3, 700), st.sampled_from(range(3, 700, 16)))
    members = {}
    for m in range(draw(st.integers(1, 5))):
        owned = draw(st.lists(st.tuples(st.sampled_from(names), partition), max_size=80))
        if draw(st.booleans()):  # every 16th partition of one topic: four buckets of a 64-bucket set hold 10 each
            owned += [(draw(st.sampled_from(names)), p) for p in range(3, 640, 16)]
        members[f"m{m}"] = {"topics": existing[:1], "owned": [list(pair) for pair in owned]}
    return {"topics": topics, "members": members, "topic_ids": topic_ids}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tangled_targets())
def test_the_compiled_walk_lists_current_targets_as_java_iterates_them(scenario: dict) -> None:
    group = build_server_group(parse_scenario(scenario))
    members = np.arange(group.num_members)[::-1]  # any members, in any order
    start, topic, partition = group.walk_current_targets(members)
    for i, member in enumerate(members.tolist()):
        expected = [(t, p) for t, partitions in group.current_target(member) for p in partitions]
        got = list(zip(topic[start[i]:start[i + 1]].tolist(), partition[start[i]:start[i + 1]].tolist()))
        assert got == expected
