"""KRaft's striped replica placement: every vector line, Kafka's own examples, the rules as properties."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign.core.errors import KassignError, ReplicaPlacementError
from kassign.core.javarandom import JavaRandom
from kassign.replicas.brokers import normalise_striped_brokers, parse_striped_broker_list
from kassign.replicas.striped import StripedPlacer, check_striped_request, place_striped
from kassign.core.javaorder import JavaOrderUndefined, hashmap_positions, java_string_hash, signed32
from tests.conftest import load_vectors, vector_params


def striped(brokers, partitions, rf, seed, start_partition=0, kafka_version=None):
    return kassign.assign_replicas(brokers, partitions, rf, start_partition=start_partition, placer="striped", seed=seed,
                                   kafka_version=kafka_version)


# --- Kafka's reference vectors ----------------------------------------------------------------

# replicas-striped.jsonl came from Kafka's trunk of October 2024 (the placer 4.0.0 shipped, worded as every release
# from 3.0 to 4.2); kafka-4.3/replicas-striped.jsonl from Kafka 4.3.1 (worded as 4.3.0 and later, KAFKA-19774)
OLD_WORDING = ["3.0", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0.0", "4.0", "4.1", "4.2"]
NEW_WORDING = ["4.3.0", "4.3", "4.4"]


@pytest.mark.parametrize("line", vector_params("replicas-striped.jsonl"))
def test_striped_vector(line: dict) -> None:
    _check_striped_line(line, "4.0")


@pytest.mark.parametrize("line", vector_params("kafka-4.3/replicas-striped.jsonl"))
def test_striped_vector_43(line: dict) -> None:
    # Kafka 4.3.1's placer: the same placements; two messages are worded differently, the exception names are not
    _check_striped_line(line, "4.3")


def test_striped_vectors_every_release() -> None:
    """Every line of both files asked as every release from 3.0 to 4.4: the placements never changed; a refusal
    reads as the release that is asked words it (the 2024 file's words up to 4.2, 4.3.1's from 4.3.0 on)."""
    files = {"old": load_vectors("replicas-striped.jsonl"), "new": load_vectors("kafka-4.3/replicas-striped.jsonl")}
    words = {"old": {}, "new": {}}
    for wording, lines in files.items():
        for line in lines:
            if "error_message" in line:
                key = (line["error_message"].split(" ")[0], _numbers(line["error_message"]))
                words[wording][key] = line["error_message"]
    checked = 0
    for lines in files.values():
        for line in lines:
            for version in OLD_WORDING + NEW_WORDING:
                wording = "old" if version in OLD_WORDING else "new"
                expected = dict(line)
                if "error_message" in line:
                    key = (line["error_message"].split(" ")[0], _numbers(line["error_message"]))
                    if key not in words[wording]:
                        continue  # that refusal is not in the other file with these numbers
                    expected["error_message"] = words[wording][key]
                _check_striped_line(expected, version)
                checked += 1
    assert checked > 7000


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(t) for t in text.replace(":", " ").split() if t.lstrip("-").isdigit())


def _check_striped_line(line: dict, kafka_version: str) -> None:
    request = line["request"]
    brokers = [(b[0], b[1], b[2]) for b in request["brokers"]]
    args = (brokers, request["numPartitions"], request["rf"], request["seed"], request["startPartition"])
    if "expected_error" in line:
        with pytest.raises(ReplicaPlacementError) as caught:
            striped(*args, kafka_version=kafka_version)
        assert caught.value.kafka_exception == line["expected_error"]
        assert str(caught.value) == line["error_message"]
    else:
        got = striped(*args, kafka_version=kafka_version)
        first = request["startPartition"]
        assert list(got) == list(range(first, first + request["numPartitions"]))
        assert list(got.values()) == line["expected"]


# --- facts from Kafka's StripedReplicaPlacerTest ----------------------------------------------


class MockRandom(JavaRandom):
    """The generator Kafka's placer tests use: java.util.Random with next(bits) replaced by a
    64-bit LCG (multiplier 2862933555777941757, increment 3037000493, state 17), the top
    ``bits`` bits of the new state as the result."""

    def __init__(self, state: int = 17) -> None:
        self.state = state

    def next_bits(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & ((1 << 64) - 1)
        value = self.state >> (64 - bits)
        return value - (1 << 32) if value >= 1 << 31 else value


def rack_list(*brokers):
    return StripedPlacer(normalise_striped_brokers(brokers), MockRandom())


def test_queue_hands_out_each_broker_once_per_round_and_moves_its_start() -> None:
    class Zero(JavaRandom):
        def next_int(self, bound=None):
            return 0

    placer = StripedPlacer(normalise_striped_brokers([(0, None, False), (1, None, False), (2, None, False),
                                                      (3, None, False)]), Zero(0))
    assert [placer._take(0, 0) for _ in range(6)] == [0, 1, 2, 3, -1, -1]
    assert [placer._take(0, 1) for _ in range(5)] == [1, 2, 3, 0, -1]
    assert placer._take(1, 1) == -1  # the empty fenced queue


def test_single_rack_keeps_the_fenced_broker_out_while_it_can() -> None:
    placer = rack_list((3, None, False), (1, None, True), (0, None, False), (4, None, False), (2, None, False))
    assert (placer.num_brokers, placer.num_unfenced, placer.num_racks) == (5, 4, 1)
    assert [placer.place(4) for _ in range(5)] == [
        [3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4], [2, 3, 4, 0], [0, 4, 3, 2]
    ]


def test_one_unfenced_broker_leads_every_partition() -> None:
    assert place_striped(normalise_striped_brokers([(0, None, False), (1, None, True)]), 3, 1, MockRandom()) == [
        [0], [0], [0]
    ]


def test_fenced_broker_is_used_when_the_replication_factor_needs_it() -> None:
    placer = rack_list((3, None, False), (1, None, True), (2, None, False))
    assert [placer.place(3) for _ in range(4)] == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_three_racks() -> None:
    placer = rack_list((11, "1", False), (10, "1", False), (30, "3", False), (31, "3", False),
                       (21, "2", False), (20, "2", True))
    assert (placer.num_brokers, placer.num_unfenced) == (6, 5)
    assert [placer.place(4) for _ in range(3)] == [[11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]]


def test_racks_with_only_fenced_brokers_hold_followers_only() -> None:
    placer = rack_list((11, "1", False), (10, "1", False), (30, "3", True), (31, "3", True),
                       (20, "2", True), (21, "2", True), (41, "4", False), (40, "4", True))
    assert (placer.num_brokers, placer.num_unfenced, placer.num_racks) == (8, 3, 4)
    assert [placer.place(4) for _ in range(3)] == [[41, 11, 21, 30], [10, 20, 31, 41], [41, 21, 30, 11]]


def test_successful_placement_over_four_brokers() -> None:
    brokers = normalise_striped_brokers([(0, None, False), (3, None, False), (2, None, False), (1, None, False)])
    assert place_striped(brokers, 5, 3, MockRandom()) == [[2, 3, 0], [3, 0, 1], [0, 1, 2], [1, 2, 3], [1, 0, 2]]


def test_two_hundred_partitions_spread_over_all_ordered_pairs() -> None:
    brokers = normalise_striped_brokers([(b, None, False) for b in range(4)])
    counts = Counter(tuple(r) for r in place_striped(brokers, 200, 2, MockRandom()))
    assert counts == {
        (0, 1): 14, (0, 2): 22, (0, 3): 14, (1, 0): 17, (1, 2): 17, (1, 3): 16,
        (2, 0): 13, (2, 1): 17, (2, 3): 20, (3, 0): 20, (3, 1): 19, (3, 2): 11,
    }


OLD_FENCED = "All brokers are currently fenced."
NEW_FENCED = "All brokers are currently fenced, or have all their log directories cordoned."


@pytest.mark.parametrize(
    ("brokers", "rf", "version", "message"),
    [
        ([(11, "1", True), (10, "1", True)], 1, "4.2", OLD_FENCED),
        ([(11, "1", True), (10, "1", True)], 1, "4.3", NEW_FENCED),
        ([], 1, "3.9", OLD_FENCED),  # no broker at all reads as "all fenced" too
        ([], 1, "4.4", NEW_FENCED),
        ([(11, "1", False), (10, "1", False)], 3, "4.0",
         "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered."),
        ([(11, "1", False), (10, "1", False)], 3, "4.3.0",
         "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered or some "
         "brokers have all their log directories cordoned."),
        ([(11, "1", False), (10, "1", False)], 0, "3.3", "Invalid replication factor 0: the replication factor must be positive."),
        ([(11, "1", False)], -1, "4.4", "Invalid replication factor -1: the replication factor must be positive."),
    ],
)
def test_kafkas_refusals_in_each_releases_words(brokers, rf, version, message) -> None:
    with pytest.raises(ReplicaPlacementError) as caught:
        striped(brokers, 1, rf, seed=1, kafka_version=version)
    assert str(caught.value) == message
    assert caught.value.kafka_exception == "InvalidReplicationFactorException"


def test_refusals_default_to_the_newest_wording() -> None:
    with pytest.raises(ReplicaPlacementError) as caught:
        striped([(0, None, True)], 1, 1, seed=1)
    assert str(caught.value) == NEW_FENCED


def test_refusals_come_in_kafkas_order() -> None:
    all_fenced = normalise_striped_brokers([(0, None, True)])
    with pytest.raises(ReplicaPlacementError, match="must be positive"):
        check_striped_request(all_fenced, 0)  # rf first, though every broker is fenced
    with pytest.raises(ReplicaPlacementError, match="fenced"):
        check_striped_request(all_fenced, 5)  # then fencing, though rf exceeds the broker count
    # and the checks apply even when no partition is asked for
    with pytest.raises(ReplicaPlacementError):
        striped([(0, None, False)], 0, 2, seed=1)


# --- this module's own examples and the Java details it depends on ----------------------------


def test_module_docstring_worked_example() -> None:
    brokers = [(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c"), (5, "c")]
    assert striped(brokers, 4, 3, seed=1) == {0: [1, 2, 4], 1: [3, 5, 0], 2: [4, 1, 2], 3: [0, 3, 5]}


def test_start_partition_only_renumbers() -> None:
    brokers = [(0, "a", False), (1, "b", False), (2, "c", True), (3, "a", False)]
    base = striped(brokers, 7, 2, seed=99)
    moved = striped(brokers, 7, 2, seed=99, start_partition=40)
    assert list(moved) == list(range(40, 47)) and list(moved.values()) == list(base.values())
    assert striped(brokers, 7, 2, seed=99, start_partition=-1) == base


def test_zero_partitions_give_an_empty_placement() -> None:
    assert striped([(0, None, False)], 0, 1, seed=3) == {}


def test_kafkas_reshuffle_can_unbalance_leaders() -> None:
    # After as many partitions as there are unfenced brokers Kafka reshuffles and restarts its
    # round counter; a rack queue last used in round 0 then still counts as used up. With two
    # single-broker racks this skews leadership 22 : 13 over 35 partitions (checked against
    # Kafka's own StripedReplicaPlacer with this seed).
    got = striped([(0, "r0", False), (1, "r1", False)], 35, 1, seed=674039160)
    assert Counter(r[0] for r in got.values()) == {0: 22, 1: 13}


def test_java_string_hash() -> None:
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert signed32(java_string_hash("rack-a")) == -938608917
    assert java_string_hash("\U0001F600") == 1772899  # two UTF-16 code units, as Java counts them


def test_hashmap_order_is_bucket_order_then_insertion_order() -> None:
    # hashes: "b" 98 -> bucket 2, "a" 97 -> bucket 1, empty rack 0 -> bucket 0; "q" 113 -> bucket 1
    assert hashmap_positions([java_string_hash("b"), java_string_hash("a"), 0, java_string_hash("q")]) == [2, 1, 3, 0]


def test_hashmap_order_after_growing_to_32_buckets() -> None:
    names = [f"k{i}" for i in range(13)]  # the 13th key doubles the table to 32 buckets
    hashes = [java_string_hash(n) for n in names]
    order = hashmap_positions(hashes)
    spread = [(h ^ ((h & 0xFFFFFFFF) >> 16)) & 31 for h in hashes]
    assert order == sorted(range(13), key=lambda i: (spread[i], i))


def test_hashmap_tree_bin_order() -> None:
    # 25 keys grow the table to 64 buckets; nine more, chosen to share bucket 5 with "rack-21",
    # turn that bucket into a red-black tree bin, which Java iterates root first. The expected
    # order is what java.util.HashMap<Optional<String>, ?> iterated in Java 17.
    fill = [f"rack-{k}" for k in range(25)]
    crowd = ["z106", "z128", "z205", "z227", "z249", "z304", "z326", "z348", "z403"]
    names = fill + crowd
    order = [names[i] for i in hashmap_positions([java_string_hash(n) for n in names])]
    in_bucket_5 = [n for n in order if n in crowd or n == "rack-21"]
    assert in_bucket_5 == ["z227", "rack-21", "z403", "z106", "z128", "z205", "z249", "z304", "z326", "z348"]


def test_equal_hashes_in_a_tree_bin_are_refused() -> None:
    # Java orders equal hashes in a tree bin by identity hash codes, which change from run to run.
    fill = [f"rack-{k}" for k in range(25)]
    crowd = ["Aa" * 4, "BB" * 4, "AaBB" * 2, "BBAa" * 2, "AaAaBBAa", "BBBBAaAa", "AaBBBBAa", "BBAaAaBB", "AaAaAaBB"]
    hashes = [java_string_hash(n) for n in fill + crowd]
    with pytest.raises(JavaOrderUndefined, match="identity"):
        hashmap_positions(hashes)
    # the placer says what to do about it
    brokers = [(i, rack, False) for i, rack in enumerate(fill + crowd)]
    with pytest.raises(KassignError, match="rename the racks"):
        striped(brokers, 3, 3, seed=1)


# --- input checking ---------------------------------------------------------------------------


BAD_INPUT = [
    (lambda: striped([(0, None, False), (0, "a", True)], 1, 1, 1), "listed twice"),
    (lambda: striped([(0, None, "yes")], 1, 1, 1), "fenced must be True or False"),
    (lambda: striped([(0, "", False)], 1, 1, 1), "non-empty string"),
    (lambda: striped([(-1, None, False)], 1, 1, 1), "broker id"),
    (lambda: striped([(1 << 31, None, False)], 1, 1, 1), "broker id"),
    (lambda: striped([(0, None, False, 1)], 1, 1, 1), "a broker must be"),
    (lambda: striped(["0"], 1, 1, 1), "a broker must be"),
    (lambda: striped([(0, None, False)], 1, 32768, 1), "16-bit"),
    (lambda: striped([(0, None, False)], 1, 1.0, 1), "whole number"),
    (lambda: striped([(0, None, False)], -1, 1, 1), "0 or more"),
    (lambda: striped([(0, None, False)], 1, 1, 1 << 63), "Java long"),
    (lambda: striped([(0, None, False)], 1, 1, 1, start_partition=-2), "start partition"),
    (lambda: striped([(0, None, False)], 2, 1, 1, start_partition=(1 << 31) - 1), "must stay below"),
    (lambda: kassign.assign_replicas([(0, None, False)], 1, 1, 0, placer="striped"), "start_index"),
    (lambda: kassign.assign_replicas([(0, None)], 1, 1, placer="nope"), "unknown replica placer"),
]


@pytest.mark.parametrize(("call", "message"), BAD_INPUT, ids=[m for _, m in BAD_INPUT])
def test_bad_input(call, message) -> None:
    with pytest.raises(KassignError, match=message):
        call()


def test_pairs_and_bare_ids_are_unfenced_brokers() -> None:
    assert normalise_striped_brokers([(0, "a"), 1, [2, None, True]]) == [(0, "a", False), (1, None, False), (2, None, True)]


def test_rf_limit_is_kafkas_int16() -> None:
    with pytest.raises(ReplicaPlacementError, match="32767"):
        striped([(0, None, False)], 1, 32767, seed=1)


def test_parse_striped_broker_list() -> None:
    assert parse_striped_broker_list("0:r1, 1:r1:fenced,2,3:fenced,4::fenced") == [
        (0, "r1", False), (1, "r1", True), (2, None, False), (3, None, True), (4, None, True)
    ]
    for text, message in [("0,,1", "empty entry"), ("x:r1", "not a broker id"), ("0:", "empty rack"),
                          ("0,0:fenced", "listed twice")]:
        with pytest.raises(KassignError, match=message):
            parse_striped_broker_list(text)


def test_random_seed_when_none() -> None:
    brokers = [(b, f"r{b % 3}", False) for b in range(9)]
    runs = {tuple(map(tuple, striped(brokers, 6, 3, seed=None).values())) for _ in range(12)}
    assert len(runs) > 1


# --- the rules as properties ------------------------------------------------------------------


@st.composite
def clusters(draw):
    num_racks = draw(st.integers(1, 5))
    rack_names = [None] + [f"rack-{i}" for i in range(num_racks - 1)] if draw(st.booleans()) else [
        f"az-{i}" for i in range(num_racks)
    ]
    ids = draw(st.lists(st.integers(0, 200), min_size=1, max_size=12, unique=True))
    brokers = [(b, draw(st.sampled_from(rack_names)), draw(st.booleans()) and draw(st.booleans())) for b in ids]
    if all(fenced for _, _, fenced in brokers):
        b, rack, _ = brokers[0]
        brokers[0] = (b, rack, False)
    rf = draw(st.integers(1, len(brokers)))
    partitions = draw(st.integers(0, 40))
    seed = draw(st.integers(-(1 << 63), (1 << 63) - 1))
    return brokers, partitions, rf, seed


@settings(max_examples=120, deadline=None)
@given(clusters())
def test_properties(cluster) -> None:
    brokers, partitions, rf, seed = cluster
    got = striped(brokers, partitions, rf, seed)
    assert got == striped(brokers, partitions, rf, seed)  # a seed fixes the result
    rack = {b: r for b, r, _ in brokers}
    fenced = {b for b, _, f in brokers if f}
    num_racks = len(set(rack.values()))
    assert list(got) == list(range(partitions))
    for replicas in got.values():
        assert len(replicas) == rf and len(set(replicas)) == rf  # distinct brokers
        assert set(replicas) <= set(rack)
        assert replicas[0] not in fenced  # never a fenced leader
        assert len({rack[b] for b in replicas}) == min(rf, num_racks)  # as many racks as possible


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 5), st.integers(1, 3), st.data())
def test_leaders_stripe_evenly_over_equal_racks(num_racks, per_rack, data) -> None:
    # Until the first reshuffle (one partition per unfenced broker), leaders take the racks in
    # turn: over any prefix of those partitions no rack leads twice more than another.
    brokers = [(r * per_rack + i, f"r{r}", False) for r in range(num_racks) for i in range(per_rack)]
    brokers = data.draw(st.permutations(brokers))
    rf = data.draw(st.integers(1, len(brokers)))
    seed = data.draw(st.integers(-(1 << 63), (1 << 63) - 1))
    got = list(striped(brokers, len(brokers), rf, seed).values())
    rack = {b: r for b, r, _ in brokers}
    for end in range(1, len(got) + 1):
        counts = Counter(rack[r[0]] for r in got[:end])
        per = [counts.get(f"r{r}", 0) for r in range(num_racks)]
        assert max(per) - min(per) <= 1
    assert Counter(rack[r[0]] for r in got) == {f"r{r}": per_rack for r in range(num_racks)}


@settings(max_examples=60, deadline=None)
@given(clusters(), st.integers(0, 1000))
def test_start_partition_never_changes_the_placement(cluster, start) -> None:
    brokers, partitions, rf, seed = cluster
    a = striped(brokers, partitions, rf, seed)
    b = striped(brokers, partitions, rf, seed, start_partition=start)
    assert list(b.values()) == list(a.values()) and list(b) == [start + i for i in range(partitions)]


# --- brokers as a dict, numpy ids, and bad collections (issue #20) -------------------------------------

def test_a_dict_of_id_to_rack_places_as_the_pairs_do() -> None:
    racks = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}
    expected = kassign.assign_replicas(list(racks.items()), 6, 3, placer="striped", seed=7)
    assert kassign.assign_replicas(racks, 6, 3, placer="striped", seed=7) == expected
    assert expected != kassign.assign_replicas(list(racks), 6, 3, placer="striped", seed=7), "racks change the result"
    assert all({racks[b] for b in replicas} == {"a", "b", "c"} for replicas in expected.values())


def test_a_dict_value_may_carry_the_fenced_flag() -> None:
    triples = [(0, "a", False), (1, "a", True), (2, "b", False), (3, "b", True)]
    expected = kassign.assign_replicas(triples, 4, 2, placer="striped", seed=3)
    as_dict = {0: ("a", False), 1: ("a", True), 2: ["b", False], 3: ("b", True)}
    assert kassign.assign_replicas(as_dict, 4, 2, placer="striped", seed=3) == expected


def test_numpy_broker_ids_are_taken_as_elsewhere() -> None:
    import numpy as np

    brokers = [(np.int64(0), "a", False), (np.int32(1), "b", np.bool_(True)), np.int16(2)]
    expected = kassign.assign_replicas([(0, "a", False), (1, "b", True), 2], 3, 2, placer="striped", seed=5)
    assert kassign.assign_replicas(brokers, 3, 2, placer="striped", seed=5) == expected


@pytest.mark.parametrize(("brokers", "message"), [
    (None, "brokers must be a list of"),
    (5, "brokers must be a list of"),
    ("0,1", "brokers must be a list of"),
    ({0, 1}, "a set has no order"),
    ({0: ("a", "no")}, "fenced must be True or False"),
    ({0: ("a", False, 1)}, "rack must be a non-empty string or None"),
])
def test_striped_broker_collections_that_are_not_lists_are_refused(brokers: object, message: str) -> None:
    with pytest.raises(KassignError, match=message):
        kassign.assign_replicas(brokers, 3, 1, placer="striped", seed=1)
