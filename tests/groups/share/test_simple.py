"""Share groups (KIP-932): the ``simple`` assignor against Kafka 4.3.1's vectors, a literal model,
properties, and cases from Kafka's own SimpleAssignorTest."""

from __future__ import annotations

import base64
import json

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kassign.core.errors import KassignError, ScenarioError, UnknownAssignorError
from kassign.core.javaorder import hashmap_positions
from kassign.groups.consumer.group import build_server_group
from kassign.groups.share import assign_share, assign_share_table, share_release
from kassign.groups.share.scenario import parse_share_scenario
from kassign.groups.share.simple import ShareAssignorError
from tests.conftest import vector_params
from tests.groups.share import java_model

VECTORS = "kafka-4.3/assign-share.jsonl"


def as_sets(assignment):
    return {member: {(t, p) for t, p in pairs} for member, pairs in assignment.items()}


# -- Kafka 4.3.1's own answers --------------------------------------------------------------------

@pytest.mark.parametrize("line", vector_params(VECTORS))
def test_vector(line: dict) -> None:
    scenario = line["scenario"]
    assert line["strategy"] == "simple"
    if "expected_error" in line:
        with pytest.raises(KassignError):
            assign_share("simple", scenario)
        return
    got = assign_share("simple", scenario)
    assert list(got) == sorted(scenario["members"])
    assert all(pairs == sorted(pairs) for pairs in got.values())
    assert as_sets(got) == as_sets(line["expected"])  # Kafka lists them in its own iteration order
    share = parse_share_scenario(scenario)
    assert build_server_group(share.scenario).homogeneous == line["homogeneous"]


def test_vector_file_is_all_there() -> None:
    assert len(vector_params(VECTORS)) == 300


@pytest.mark.parametrize("line", vector_params(VECTORS, lambda line: line["round"] > 0 and "expected" in line)[:40])
def test_vector_table_matches_dict(line: dict) -> None:
    table = assign_share_table("simple", line["scenario"])
    assert table.schema == pa.schema([("member", pa.string()), ("topic", pa.string()), ("partition", pa.int32())])
    rows = list(zip(*(table.column(c).to_pylist() for c in ("member", "topic", "partition"))))
    expected = [(m, t, p) for m, pairs in assign_share("simple", line["scenario"]).items() for t, p in pairs]
    assert rows == expected


@pytest.mark.parametrize("line", vector_params(VECTORS)[:60])
def test_the_model_used_below_agrees_with_kafka(line: dict) -> None:
    assert java_model.simple_assign(line["scenario"]) == as_sets(line["expected"])


# -- generated groups ---------------------------------------------------------------------------

def _topic_id(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@st.composite
def groups(draw, owned: bool = False) -> dict:
    """A share group: up to 4 topics (maybe with ids), a subscribed name without metadata, up to 30
    members, homogeneous or not, maybe ``initialized``; with ``owned``, arbitrary current targets
    (shared, over-full, uninitialised, of unsubscribed or deleted topics)."""
    counts = draw(st.lists(st.integers(0, 8), min_size=1, max_size=4))
    topics = {f"t{i}": c for i, c in enumerate(counts)}
    doc: dict = {"topics": topics, "members": {}}
    if draw(st.booleans()):
        raw = draw(st.lists(st.binary(min_size=16, max_size=16), min_size=len(topics) + 1,
                            max_size=len(topics) + 1, unique=True))
        doc["topic_ids"] = {name: _topic_id(r) for name, r in zip([*topics, "old"], raw)}
    names = [*topics, "nowhere"]
    common = draw(st.lists(st.sampled_from(names), max_size=4, unique=True))
    homogeneous = draw(st.booleans())
    for i in range(draw(st.integers(0, 30))):
        subs = common if homogeneous else draw(st.lists(st.sampled_from(names), max_size=4, unique=True))
        member: dict = {"topics": draw(st.permutations(subs))}
        if owned:
            held = [[t, p] for t, n in topics.items() if n for p in draw(st.lists(st.integers(0, n - 1), max_size=3))]
            held += [["old", p] for p in draw(st.lists(st.integers(0, 5), max_size=2))]
            member["owned"] = draw(st.permutations(held))
        doc["members"][draw(st.sampled_from(["m", "consumer-", "X"])) + str(i)] = member
    if draw(st.booleans()):
        doc["initialized"] = {t: sorted(draw(st.sets(st.integers(0, n - 1), max_size=n))) if n else []
                              for t, n in topics.items() if draw(st.booleans())}
    return doc


def _follow_up(doc: dict, answer: dict) -> dict:
    """The next round: the same members, each holding what the last answer gave it."""
    members = {m: {**spec, "owned": [list(pair) for pair in answer[m]]} for m, spec in doc["members"].items()}
    return {**doc, "members": members}


def _assignable(doc: dict, topic: str, partition: int) -> bool:
    return "initialized" not in doc or partition in doc["initialized"].get(topic, [])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(owned=True))
def test_agrees_with_the_literal_model_on_any_current_targets(doc: dict) -> None:
    assert_agrees_with_model(doc, "4.3", java_model.simple_assign, java_model.NoSuchElement, "NoSuchElementException")


def assert_agrees_with_model(doc: dict, kafka_version: str, model, thrown: type[Exception],
                             kafka_exception: str) -> None:
    """kassign's answer as ``kafka_version`` is the literal ``model``'s, or both throw (Kafka's ``kafka_exception``);
    examples the model cannot replay (tree bins) are skipped."""
    try:
        expected = model(doc)
    except java_model.TreeBin:
        assume(False)
    except thrown:
        with pytest.raises(ShareAssignorError) as raised:
            assign_share("simple", doc, kafka_version=kafka_version)
        assert raised.value.kafka_exception == kafka_exception
        return
    assert as_sets(assign_share("simple", doc, kafka_version=kafka_version)) == expected


@st.composite
def settled_groups(draw, kafka_version: str = "4.3") -> dict:
    """A group after a first assignment (as ``kafka_version`` runs it), then some members gone and some new
    ones (the coordinator's usual case: every current target is a previous answer)."""
    doc = draw(groups())
    answer = assign_share("simple", doc, kafka_version=kafka_version)
    doc = _follow_up(doc, answer)
    members = list(doc["members"])
    for member in draw(st.lists(st.sampled_from(members), unique=True)) if members else []:
        del doc["members"][member]
    subscriptions = [spec["topics"] for spec in doc["members"].values()] or [list(doc["topics"])]
    for i in range(draw(st.integers(0, 4))):
        doc["members"][f"new{i}"] = {"topics": draw(st.sampled_from(subscriptions))}
    return doc


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(groups(), settled_groups()))
def test_properties_of_a_group_whose_targets_are_kafka_answers(doc: dict) -> None:
    answer = assign_share("simple", doc)
    assert_readers_get_all_they_may(doc, answer)
    assert assign_share("simple", json.loads(json.dumps(doc))) == answer  # deterministic
    assert assign_share("simple", _follow_up(doc, answer)) == answer  # a settled group stays put


def assert_readers_get_all_they_may(doc: dict, answer: dict) -> None:
    """Every member present, holding only initialized partitions of its topics; every initialized partition
    of a topic somebody reads assigned (both rules, on a group whose targets are their own answers)."""
    assert set(answer) == set(doc["members"])
    for member, pairs in answer.items():
        subscribed = set(doc["members"][member]["topics"])
        for topic, partition in pairs:
            assert topic in subscribed, f"{member} got {topic}, which it does not subscribe to"
            assert _assignable(doc, topic, partition), f"{topic}-{partition} is not initialized"
    for topic, count in doc["topics"].items():
        readers = [m for m, spec in doc["members"].items() if topic in spec["topics"]]
        for partition in range(count):
            if readers and _assignable(doc, topic, partition):
                assert any((topic, partition) in answer[m] for m in readers), f"{topic}-{partition} unassigned"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups())
def test_a_new_homogeneous_group_is_balanced(doc: dict) -> None:
    names = {frozenset(spec["topics"]) for spec in doc["members"].values()}
    assume(len(names) == 1)
    counts = [len(pairs) for pairs in assign_share("simple", doc).values()]
    assert max(counts) - min(counts) <= 1


# -- hand-written cases (facts from Kafka's SimpleAssignorTest) -------------------------------------

def _distinct(answer: dict) -> set:
    return {pair for pairs in answer.values() for pair in pairs}


def test_no_members_no_assignment() -> None:
    assert assign_share("simple", {"topics": {"t1": 3}, "members": {}}) == {}


def test_a_member_subscribed_to_nothing_gets_nothing() -> None:
    assert assign_share("simple", {"topics": {"t1": 3}, "members": {"A": {"topics": []}}}) == {"A": []}


def test_two_members_two_topics_every_partition_assigned() -> None:
    doc = {"topics": {"topic1": 3, "topic3": 2}, "members": {m: {"topics": ["topic1", "topic3"]} for m in "AB"}}
    assert len(_distinct(assign_share("simple", doc))) == 5


@pytest.mark.parametrize(("initialized", "assigned"), [
    ({"topic1": [0, 1, 2], "topic3": [0, 1]}, 5),  # topic3-2 not initialised
    ({"topic1": [0, 1, 2]}, 3),                     # topic3 not at all
])
def test_only_initialized_partitions_are_assigned(initialized: dict, assigned: int) -> None:
    doc = {"topics": {"topic1": 3, "topic3": 3}, "members": {m: {"topics": ["topic1", "topic3"]} for m in "AB"},
           "initialized": initialized}
    answer = assign_share("simple", doc)
    assert len(_distinct(answer)) == assigned
    assert all(p in initialized.get(t, []) for t, p in _distinct(answer))


def test_three_members_three_topics_heterogeneous() -> None:
    doc = {"topics": {"topic1": 3, "topic2": 3, "topic3": 2},
           "members": {"A": {"topics": ["topic1", "topic2"]}, "B": {"topics": ["topic3"]},
                       "C": {"topics": ["topic2", "topic3"]}}}
    answer = assign_share("simple", doc)
    assert len(_distinct(answer)) == 8
    assert {t for t, _ in answer["B"]} == {"topic3"}


def test_a_member_without_topics_beside_one_with_two() -> None:
    doc = {"topics": {"topic1": 3, "topic2": 2},
           "members": {"A": {"topics": ["topic1", "topic2"]}, "B": {"topics": []}}}
    assert assign_share("simple", doc) == {
        "A": [("topic1", 0), ("topic1", 1), ("topic1", 2), ("topic2", 0), ("topic2", 1)], "B": []}


def test_current_assignment_heterogeneous_after_subscriptions_change() -> None:
    doc = {"topics": {"topic1": 3, "topic2": 3, "topic3": 2, "topic4": 1},
           "members": {"A": {"topics": ["topic1", "topic2", "topic3"],
                             "owned": [["topic1", 0], ["topic1", 1], ["topic1", 2], ["topic2", 0], ["topic2", 2]]},
                       "B": {"topics": ["topic3", "topic4"], "owned": [["topic3", 0], ["topic3", 1]]}}}
    assert len(_distinct(assign_share("simple", doc))) == 9


SUBSCRIPTIONS = [["topic1", "topic2", "topic3"], ["topic2"], ["topic3"], ["topic1", "topic2"]]


@pytest.mark.parametrize("heterogeneous", [False, True])
def test_members_joining_one_by_one_keep_every_partition_assigned(heterogeneous: bool) -> None:
    topics = {"topic1": 12, "topic2": 8, "topic3": 4} if heterogeneous else {"topic1": 24}
    members: dict = {}
    for i in range(101):
        members[f"M{i}"] = {"topics": SUBSCRIPTIONS[i % 4] if heterogeneous else ["topic1"]}
        answer = assign_share("simple", {"topics": topics, "members": members})
        assert len(_distinct(answer)) == 24
        members = {m: {**spec, "owned": [list(pair) for pair in answer[m]]} for m, spec in members.items()}


@pytest.mark.parametrize("heterogeneous", [False, True])
def test_members_leaving_one_by_one_keep_every_partition_assigned(heterogeneous: bool) -> None:
    topics = {"topic1": 12, "topic2": 8, "topic3": 4} if heterogeneous else {"topic1": 24}
    members = {f"M{i}": {"topics": SUBSCRIPTIONS[i % 4] if heterogeneous else ["topic1"]} for i in range(101)}
    for leaving in range(100, -1, -1):
        answer = assign_share("simple", {"topics": topics, "members": members})
        assert len(_distinct(answer)) == 24
        members = {m: {**spec, "owned": [list(pair) for pair in answer[m]]} for m, spec in members.items()}
        del members[f"M{leaving}"]
        if not members:
            break


# -- kassign's own cases --------------------------------------------------------------------------

ZERO_ID = "AAAAAAAAAAAAAAAAAAAAAA"


def test_module_docstring_example() -> None:
    doc = {"topics": {"t0": 3}, "topic_ids": {"t0": ZERO_ID}, "members": {m: {"topics": ["t0"]} for m in "ABCDE"}}
    first = assign_share("simple", doc)
    assert first == {"A": [("t0", 0), ("t0", 2)], "B": [("t0", 0)], "C": [("t0", 1)], "D": [("t0", 1)],
                     "E": [("t0", 2)]}
    del doc["members"]["E"]
    doc = _follow_up(doc, first)
    assert assign_share("simple", doc) == {"A": [("t0", 0), ("t0", 2)], "B": [("t0", 0)],
                                           "C": [("t0", 1), ("t0", 2)], "D": [("t0", 1)]}


def test_several_members_may_own_one_partition_and_keep_it() -> None:
    doc = {"topics": {"t0": 1}, "members": {m: {"topics": ["t0"], "owned": [["t0", 0]]} for m in "ABC"}}
    assert assign_share("simple", doc) == {m: [("t0", 0)] for m in "ABC"}


def test_heterogeneous_keeps_partitions_of_deleted_topics_homogeneous_drops_them() -> None:
    members = {"A": {"topics": ["t0"], "owned": [["gone", 3]]}, "B": {"topics": ["t0", "t1"]}}
    doc = {"topics": {"t0": 2, "t1": 1}, "members": members}
    assert ("gone", 3) in assign_share("simple", doc)["A"]
    doc["members"]["B"]["topics"] = ["t0"]
    assert ("gone", 3) not in assign_share("simple", doc)["A"]


def test_kafka_throws_when_uninitialized_holdings_leave_no_room() -> None:
    # A holds t-1, which is not initialized; t-0 (map order first: topic id 0) wants both members.
    doc = {"topics": {"t": 2}, "topic_ids": {"t": ZERO_ID},
           "members": {"A": {"topics": ["t"], "owned": [["t", 1]]}, "B": {"topics": ["t"]}},
           "initialized": {"t": [0]}}
    with pytest.raises(ShareAssignorError, match="NoSuchElementException") as raised:
        assign_share("simple", doc)
    assert raised.value.kafka_exception == "NoSuchElementException"
    # with t-1 first in map order, B joins A on t-1, and t-0 stays unassigned: Kafka's answer too
    doc["topic_ids"]["t"] = _topic_id(bytes(15) + b"\x01")
    assert assign_share("simple", doc) == {"A": [("t", 1)], "B": [("t", 1)]}
    assert java_model.simple_assign(doc) == {"A": {("t", 1)}, "B": {("t", 1)}}


def test_a_partition_map_with_a_tree_bin() -> None:
    # ten initialised partitions 64 apart share a bucket of t's partition map as it grows to 64 buckets,
    # where Java makes that bucket a tree (the literal model refuses; kassign orders it by javaorder's model)
    initialized = {"t": [64 * k for k in range(10)], "u": [0]}
    doc = {"topics": {"t": 640, "u": 1}, "initialized": initialized,
           "members": {"A": {"topics": ["t"]}, "B": {"topics": ["t", "u"]}}}
    with pytest.raises(java_model.TreeBin):
        java_model.simple_assign(doc)
    answer = assign_share("simple", doc)
    assert sorted(pair for pairs in answer.values() for pair in pairs) == sorted(
        [("t", p) for p in initialized["t"]] + [("u", 0)])
    assert len(answer["A"]) == 5 and ("u", 0) in answer["B"]
    # the same group again (its answer as current targets) keeps it
    assert assign_share("simple", _follow_up(doc, answer)) == answer


# Java 17's HashSet<Integer> of 0, 64, 128, ... added in that order, 11 or 12 of them: the bucket of a
# 64-bucket table becomes a tree at the 11th (checked on JDK 17).
TREE_SET_ORDER = [192, 0, 64, 128, 256, 320, 384, 448, 512, 576, 640, 704]


def test_a_member_over_its_count_whose_set_has_a_tree_bin() -> None:
    # topic id 0: TopicIdPartition's hash is the partition number, so A's 12 partitions 64 apart make a tree
    held = [64 * k for k in range(12)]
    members = {"A": {"topics": ["t"], "owned": [["t", p] for p in held]}}
    members.update({f"m{i}": {"topics": ["t"]} for i in range(99)})
    answer = assign_share("simple", {"topics": {"t": 705}, "topic_ids": {"t": ZERO_ID}, "members": members})
    kept = len(answer["A"])
    assert kept in (7, 8)  # 705 partitions over 100 members
    assert {p for _, p in answer["A"]} == set(TREE_SET_ORDER[12 - kept:])  # the first of its set go


def _members_at_positions(count: int) -> list[str]:
    """``count`` member ids, in the order of the coordinator's member map."""
    from kassign.core.javaorder import java_string_hash_order
    return java_string_hash_order([f"member-{i:03d}" for i in range(count)])


def test_a_crowded_partition_whose_holder_set_has_a_tree_bin() -> None:
    ids = _members_at_positions(700)
    holders = [ids[64 * k] for k in range(11)]  # member numbers 0, 64, ..., 640
    members = {m: {"topics": ["t"], **({"owned": [["t", 0]]} if m in holders else {})} for m in sorted(ids)}
    doc = {"topics": {"t": 1000}, "topic_ids": {"t": ZERO_ID}, "members": members}
    answer = assign_share("simple", doc)
    # sharing is 1: the holders leave t-0 in their set's order, so the last one, number 640, keeps it
    assert [m for m, pairs in answer.items() if ("t", 0) in pairs] == [ids[640]]
    # had one of them lost t-0 before (over its count), Java would reorder the tree: refused
    members[ids[0]]["owned"] = [["t", p] for p in range(10)]
    with pytest.raises(KassignError, match="tree bin"):
        assign_share("simple", doc)


def test_compute_if_absent_maps_put_new_keys_first_in_their_bucket() -> None:
    # java.util.HashMap on JDK 17 (checked there): keys 0, 16, 32 share bucket 0 of 16; put keeps them in
    # insertion order, computeIfAbsent puts each new one first
    assert hashmap_positions([0, 16, 32, 1]) == [0, 1, 2, 3]
    assert hashmap_positions([0, 16, 32, 1], compute_if_absent=True) == [2, 1, 0, 3]
    # 0..11 then 16: put grows the table to 32 at the 13th key, so 16 comes last; computeIfAbsent grows it
    # only at its next call, even one for a present key
    keys = [*range(12), 16]
    assert hashmap_positions(keys) == list(range(13))
    assert hashmap_positions(keys, compute_if_absent=True) == [12, *range(12)]
    assert hashmap_positions(keys, compute_if_absent=True, looked_up_after=True) == list(range(13))
    # ten keys 64 apart through computeIfAbsent into new HashMap<>(15): the bucket becomes a tree
    tree = [64 * k for k in range(10)]
    assert [tree[i] for i in hashmap_positions(tree, 15, compute_if_absent=True)] == [
        384, 576, 512, 448, 320, 256, 192, 128, 64, 0]


# -- input checks ---------------------------------------------------------------------------------

BASE = {"topics": {"t0": 3}, "members": {"A": {"topics": ["t0"]}}}


@pytest.mark.parametrize(("initialized", "message"), [
    ([0, 1], "expected an object"),
    ({"t9": [0]}, "no topic 't9'"),
    ({"t0": [3]}, "is not a partition of 't0'"),
    ({"t0": [-1]}, "is not a partition"),
    ({"t0": [True]}, "is not a partition"),
    ({"t0": "0"}, "expected a list"),
    ({"t0": 0}, "expected a list"),
])
def test_bad_initialized_is_refused(initialized, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        assign_share("simple", {**BASE, "initialized": initialized})


def test_initialized_null_means_every_partition() -> None:
    assert assign_share("simple", {**BASE, "initialized": None}) == {"A": [("t0", 0), ("t0", 1), ("t0", 2)]}


@pytest.mark.parametrize("owned", [[["t0", 3]], [["t0", -1]], [["gone", -2]]])
def test_owned_partitions_out_of_range_are_refused(owned: list) -> None:
    with pytest.raises(ScenarioError, match=r"members\.A\.owned"):
        assign_share("simple", {**BASE, "members": {"A": {"topics": ["t0"], "owned": owned}}})


def test_unknown_strategy_names_simple() -> None:
    with pytest.raises(UnknownAssignorError, match="'simple'"):
        assign_share("uniform", BASE)
    with pytest.raises(UnknownAssignorError, match="'simple'"):
        assign_share(None, BASE)  # type: ignore[arg-type]
    assert assign_share("org.apache.kafka.coordinator.group.assignor.SimpleAssignor", BASE) == \
        assign_share("simple", BASE)


@pytest.mark.parametrize(("version", "line"), [("4.4", "4.4"), ("4.4.0", "4.4"), ("4.3", "4.3"), ("4.3.1", "4.3"),
                                               ("4.2", "4.2"), ("4.2.0", "4.2"),
                                               (" 4.3 ", "4.3"), ("4.1", "4.1"), ("4.1.0", "4.1"), ("4.1.1", "4.1")])
def test_modelled_releases(version: str, line: str) -> None:
    assert share_release(version) == line
    # one member reading one topic: every rule gives it everything
    assert assign_share("simple", BASE, kafka_version=version) == assign_share("simple", BASE)


@pytest.mark.parametrize(("version", "message"), [
    ("4.0", "early access"), ("4.0.1", "early access"), ("4.0.0", "early access"),
    ("3.9", "Kafka 3.9 has no share groups"), ("3.9", "Kafka 4.1, 4.2, 4.3 and 4.4"),
    ("4.5", "every release from 3.0 to 4.4"), ("latest", 'such as "4.4"'), (4.3, 'such as "4.4"'),
])
def test_other_releases_are_refused(version, message: str) -> None:
    with pytest.raises(KassignError, match=message):
        assign_share("simple", BASE, kafka_version=version)
