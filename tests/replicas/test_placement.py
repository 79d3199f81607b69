"""replica -> broker: Kafka's placement, every vector line, plus the rules as properties."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign.core.errors import KassignError, ReplicaPlacementError
from kassign.replicas.brokers import parse_broker_list
from kassign.replicas.placement import placement_rule, rack_alternated_brokers, reassignment_json
from tests.conftest import load_vectors, vector_params


# AdminUtils answers alike in every release that has it: 3.0 to 3.9 (ZooKeeper mode) and 4.0 (--generate)
LEGACY_RELEASES = [None, "3.0", "3.0.2", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "3.9.2", "4.0",
                   "4.0.0"]


@pytest.mark.parametrize("line", vector_params("replicas.jsonl"))
def test_replicas_vector(line: dict) -> None:
    # the SPEC's call: no kafka_version, no placer
    _check_line(line)


def test_replicas_vectors_every_release_with_adminutils() -> None:
    lines = load_vectors("replicas.jsonl")
    for version in LEGACY_RELEASES:
        for line in lines:
            _check_line(line, kafka_version=version, placer="legacy")
            if version is not None and version.startswith("3."):
                _check_line(line, kafka_version=version)  # a 3.x release without a placer means AdminUtils


def _check_line(line: dict, **release: object) -> None:
    request = line["request"]
    brokers = [(b[0], b[1]) for b in request["brokers"]]
    args = (brokers, request["partitions"], request["rf"], request["fixedStartIndex"], request["startPartitionId"])
    if "expected_error" in line:
        with pytest.raises(ReplicaPlacementError) as caught:
            kassign.assign_replicas(*args, **release)
        assert caught.value.kafka_exception == line["expected_error"]
    else:
        got = kassign.assign_replicas(*args, **release)
        assert {str(p): replicas for p, replicas in got.items()} == line["expected"]


@pytest.mark.parametrize("version", ["4.1", "4.1.0", "4.2", "4.3.1", "4.4"])
def test_adminutils_asked_of_a_release_without_it_is_one_line_that_says_so(version: str) -> None:
    with pytest.raises(KassignError) as caught:
        kassign.assign_replicas([(0, None), (1, None)], 2, 2, 0, placer="legacy", kafka_version=version)
    message = str(caught.value)
    assert "\n" not in message and f"Kafka {version} has no AdminUtils placement" in message
    assert "KAFKA-18798" in message and "striped" in message


@pytest.mark.parametrize("version, placer, chosen, label", [
    (None, None, "legacy", "3.9"),  # the SPEC's call answers as it always has
    (None, "legacy", "legacy", "3.9"),
    (None, "striped", "striped", "4.4"),
    ("3.0", None, "legacy", "3.0"), ("3.9.2", None, "legacy", "3.9.2"),
    ("4.0", None, "striped", "4.0"), ("4.0", "legacy", "legacy", "4.0"), ("4.4", None, "striped", "4.4"),
    ("3.1", "striped", "striped", "3.1"), ("3.3", "striped", "striped", "3.3"),
])
def test_which_placer_answers(version, placer, chosen, label) -> None:
    found = placement_rule(version, placer)
    assert (found.placer, found.kafka_version) == (chosen, label)
    assert found.what.startswith(f"Kafka {label}: ")


def test_what_each_answer_says() -> None:
    assert "early access" in placement_rule("3.2", "striped").what
    assert "early access" not in placement_rule("3.3", "striped").what
    assert "ZooKeeper-mode topic creation" in placement_rule("3.9").what
    assert "no ZooKeeper mode" in placement_rule("4.0", "legacy").what
    assert "--generate" not in placement_rule("4.0").what and "--generate too" in placement_rule("4.1").what


def test_a_4x_release_without_a_placer_is_the_striped_placer() -> None:
    brokers = [(0, "a", False), (1, "b", False), (2, "c", False)]
    assert kassign.assign_replicas(brokers, 5, 2, kafka_version="4.3", seed=9) == kassign.assign_replicas(
        brokers, 5, 2, placer="striped", seed=9)


@pytest.mark.parametrize("bad, message", [("5.0", "not a release kassign models"), ("2.8", "not a release"),
                                          ("4.x", "MAJOR.MINOR"), (4.3, "MAJOR.MINOR")])
def test_bad_releases(bad, message) -> None:
    with pytest.raises(KassignError, match=message):
        kassign.assign_replicas([(0, None)], 1, 1, kafka_version=bad)


def test_rack_unaware_worked_example() -> None:
    assert kassign.assign_replicas([(0, None), (1, None), (2, None)], 4, 2, start_index=0) == {
        0: [0, 1], 1: [1, 2], 2: [2, 0], 3: [0, 2]
    }


def test_rack_alternated_list_interleaves_sorted_racks() -> None:
    racks = {0: "r2", 1: "r1", 2: "r1", 3: "r3", 4: "r2", 5: "r1"}
    assert rack_alternated_brokers(racks) == [1, 0, 3, 2, 4, 5]


def test_errors_name_kafkas_exceptions() -> None:
    three = [(0, None), (1, None), (2, None)]
    cases = [
        ((three, 0, 1), "InvalidPartitionsException", "Number of partitions must be larger than 0."),
        ((three, 3, 0), "InvalidReplicationFactorException", "Replication factor must be larger than 0."),
        ((three, 3, 4), "InvalidReplicationFactorException", "Replication factor: 4 larger than available brokers: 3."),
        (([(0, "a"), (1, None)], 3, 2), "AdminOperationException", "Not all brokers have rack information"),
    ]
    for args, name, message in cases:
        with pytest.raises(ReplicaPlacementError, match=message) as caught:
            kassign.assign_replicas(*args)
        assert caught.value.kafka_exception == name


def test_random_start_is_reproducible_with_a_seed_and_varies_without() -> None:
    brokers = [(i, None) for i in range(6)]
    runs = [kassign.assign_replicas(brokers, 12, 3, seed=s) for s in range(8)]
    assert runs[0] == kassign.assign_replicas(brokers, 12, 3, seed=0)
    assert len({tuple(r[0]) for r in runs}) > 1


def test_reassignment_json_shape() -> None:
    placement = kassign.assign_replicas([(0, None), (1, None)], 2, 2, start_index=0)
    assert reassignment_json("orders", placement) == {
        "version": 1,
        "partitions": [
            {"topic": "orders", "partition": 0, "replicas": [0, 1]},
            {"topic": "orders", "partition": 1, "replicas": [1, 0]},
        ],
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [("0,,1", "empty entry"), ("a:r1", "not a broker id"), ("0:", "empty rack"), ("0,0", "listed twice"), ("-1", "must be")],
)
def test_bad_broker_lists(text: str, message: str) -> None:
    with pytest.raises(KassignError, match=message):
        parse_broker_list(text)


def test_broker_list_parses_racks() -> None:
    assert parse_broker_list("0:rack1, 1:rack3,2") == [(0, "rack1"), (1, "rack3"), (2, None)]


brokers_strategy = st.integers(min_value=1, max_value=12).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=n, max_size=n))
)


@settings(max_examples=150, deadline=None)
@given(brokers_strategy, st.integers(1, 40), st.data())
def test_placement_rules(brokers_and_racks, partitions, data) -> None:
    n, racks = brokers_and_racks
    rf = data.draw(st.integers(1, n))
    start = data.draw(st.integers(0, n - 1))
    rack_aware = data.draw(st.booleans())
    brokers = [(i * 3, racks[i] if rack_aware else None) for i in range(n)]
    placement = kassign.assign_replicas(brokers, partitions, rf, start_index=start)
    assert sorted(placement) == list(range(partitions))
    for replicas in placement.values():
        assert len(replicas) == rf and len(set(replicas)) == rf, "no broker twice in one partition"
    leaders = Counter(r[0] for r in placement.values())
    if not rack_aware:
        # first replicas walk the broker list round-robin
        assert max(leaders.values()) - min(leaders.get(b, 0) for b, _ in brokers) <= 1
    else:
        rack_of = dict(brokers)
        distinct_racks = len(set(racks))
        for replicas in placement.values():
            assert len({rack_of[b] for b in replicas}) == min(rf, distinct_racks), "one replica per rack first"


# --- brokers as a dict (issue #20): id -> rack, racks kept ------------------------------------------

racks_of = st.dictionaries(st.integers(0, 50), st.sampled_from(["r1", "r2", "r3"]), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(racks_of, st.integers(1, 12), st.integers(1, 3), st.integers(0, 7))
def test_a_dict_of_id_to_rack_places_as_the_pairs_do(racks: dict, partitions: int, rf: int, start: int) -> None:
    pairs = list(racks.items())
    start %= len(pairs)
    try:
        expected = kassign.assign_replicas(pairs, partitions, rf, start_index=start)
    except ReplicaPlacementError as err:
        with pytest.raises(ReplicaPlacementError, match=str(err)):
            kassign.assign_replicas(racks, partitions, rf, start_index=start)
        return
    assert kassign.assign_replicas(racks, partitions, rf, start_index=start) == expected


def test_the_racks_of_a_dict_are_used_not_dropped() -> None:
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    placed = kassign.assign_replicas(racks, 4, 2, start_index=0)
    assert all({racks[b] for b in replicas} == {"a", "b"} for replicas in placed.values())
    # the rack-unaware placement (what dropping the racks gave) puts 0 and 1, both on rack a, together
    assert kassign.assign_replicas(list(racks), 4, 2, start_index=0)[0] == [0, 1]
    # a dict with no racks at all places rack-unaware, and one with some racks missing is refused as Kafka refuses
    assert kassign.assign_replicas(dict.fromkeys(racks), 4, 2, start_index=0)[0] == [0, 1]
    with pytest.raises(ReplicaPlacementError, match="Not all brokers have rack information"):
        kassign.assign_replicas({0: "a", 1: None}, 2, 2)


@pytest.mark.parametrize(("brokers", "message"), [
    ({0: ("a", False)}, "rack must be a non-empty string or None"),
    ({0: 5}, "rack must be a non-empty string or None"),
    ({"0": "a"}, "broker id must be a whole number"),
    ({0, 1, 2}, "a set has no order"),
    (frozenset({0}), "a set has no order"),
    (None, "brokers must be a list of"),
])
def test_broker_collections_that_would_lose_something_are_refused(brokers: object, message: str) -> None:
    with pytest.raises(KassignError, match=message):
        kassign.assign_replicas(brokers, 3, 1)


@pytest.mark.parametrize("placer", ["legacy", "striped"])
def test_racks_utf8_cannot_carry_are_refused(placer: str) -> None:
    # a shell argument that is not UTF-8 reaches Python as lone surrogates (b"\xff" -> "\udcff")
    with pytest.raises(KassignError, match="rack '\\\\udcff' has a lone surrogate"):
        kassign.assign_replicas([(0, "\udcff"), (1, "b")], 2, 2, placer=placer, seed=1)
    with pytest.raises(KassignError, match="rack 'r\\\\ud800' has a lone surrogate"):
        kassign.assign_replicas({0: "a", 1: "r\ud800"}, 2, 2, placer=placer, seed=1)


# --- Java's 32-bit arithmetic -------------------------------------------------------------------------------------

@pytest.mark.parametrize("start_index, start_partition, partitions", [
    (0, (1 << 31) - 2, 3),  # the third partition id passes 2^31 - 1: Kafka's wraps to -2^31
    ((1 << 31) - 1, 0, 3),  # partition 1 + start index passes 2^31 - 1: Kafka indexes its broker list below 0
])
def test_where_kafkas_int_arithmetic_would_overflow_kassign_refuses_in_one_line(start_index, start_partition,
                                                                                partitions) -> None:
    with pytest.raises(KassignError, match="32-bit") as caught:
        kassign.assign_replicas([(0, None), (1, None)], partitions, 1, start_index, start_partition)
    assert "\n" not in str(caught.value)


def test_the_largest_ids_that_do_not_overflow_still_place() -> None:
    got = kassign.assign_replicas([(0, None), (1, None)], 2, 2, 0, (1 << 31) - 3)
    assert got == {(1 << 31) - 3: [1, 0], (1 << 31) - 2: [0, 1]}
