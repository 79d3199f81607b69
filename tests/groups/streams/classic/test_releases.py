"""Kafka Streams' classic task assignment as each release 3.0 to 4.4 runs it: every line of the per-release
vectors asked as its release, what separates the releases, what a release lacks, and the facts of Kafka's own
tests of the releases where the rules changed (3.3.2's HighAvailabilityTaskAssignorTest and
StreamsPartitionAssignorTest, asked as 3.3 and, where the older rule answers otherwise, as 3.0)."""

from __future__ import annotations

import pytest

from kassign.core.errors import KassignError
from kassign.groups.streams.classic import assign_streams_classic
from kassign.groups.streams.classic.high_availability import _movement_order
from tests.conftest import load_vectors, vector_params
from tests.groups.streams.classic.test_high_availability import pid

LONG_MAX = 2**63 - 1
RELEASES_3X = ["3.4.0", "3.5.1", "3.6.2", "3.7.2", "3.8.1", "3.9.2"]
RACK_3X = ["3.6.2", "3.7.2", "3.8.1", "3.9.2"]


def _params(files: list[tuple[str, str]]) -> list:
    out = []
    for name, version in files:
        for param in vector_params(name):
            out.append(pytest.param(version, *param.values, id=f"{version}-{param.id}", marks=param.marks))
    return out


# --- every line of the vectors, asked as its release ---------------------------------------------------

@pytest.mark.parametrize("version, line", _params(
    [(f"kafka-3.x/{r}/assign-streams-client.jsonl", r) for r in RELEASES_3X]
    + [(f"kafka-3.x/{r}/assign-streams-client-rack.jsonl", r) for r in RACK_3X]
    + [("kafka-4.4/assign-streams-client.jsonl", "4.4"), ("kafka-4.4/assign-streams-client-rack.jsonl", "4.4")]))
def test_vector(version: str, line: dict | None) -> None:
    got = assign_streams_classic(line["strategy"], line["scenario"], kafka_version=version)
    assert got == line["expected"]
    assert list(got["clients"]) == list(line["expected"]["clients"])


@pytest.mark.parametrize("line", vector_params("kafka-4.4/assign-streams-client-rack.jsonl"))
def test_44_is_the_default(line: dict) -> None:
    assert assign_streams_classic(line["strategy"], line["scenario"]) == line["expected"]


# --- what separates the releases (the counts the vectors' READMEs give) --------------------------------

def _differing(name: str, version: str) -> list[int]:
    return [i + 1 for i, line in enumerate(load_vectors(name))
            if assign_streams_classic(line["strategy"], line["scenario"], kafka_version=version) != line["expected"]]


def test_3_6_min_traffic_differs_from_3_7_on_two_lines() -> None:
    # KAFKA-15022's solver changes (#14696, #14198) landed in 3.7.0: 3.7 answers 2 of 3.6.2's 100 rack lines otherwise
    assert len(_differing("kafka-3.x/3.6.2/assign-streams-client-rack.jsonl", "3.7")) == 2


def test_4_4_sticky_differs_from_3_9_on_twelve_lines() -> None:
    # KAFKA-20198: 12 of the 38 sticky lines of 3.9.2 get another answer from 4.4, no high-availability line does
    lines = load_vectors("kafka-3.x/3.9.2/assign-streams-client-rack.jsonl")
    differing = _differing("kafka-3.x/3.9.2/assign-streams-client-rack.jsonl", "4.4")
    assert len(differing) == 12 and all(lines[i - 1]["strategy"] == "sticky" for i in differing)


def test_4_3_sticky_differs_from_4_4_on_28_lines() -> None:
    lines = load_vectors("kafka-4.4/assign-streams-client-rack.jsonl")
    differing = _differing("kafka-4.4/assign-streams-client-rack.jsonl", "4.3")
    assert len(differing) == 28 and all(lines[i - 1]["strategy"] == "sticky" for i in differing)


@pytest.mark.parametrize("version", ["3.3", "3.3.0", "3.4.0", "4.3"])
def test_high_availability_from_3_3_answers_as_4_4(version: str) -> None:
    for line in load_vectors("kafka-4.3/assign-streams-client.jsonl")[:100]:
        assert assign_streams_classic(line["strategy"], line["scenario"], kafka_version=version) == line["expected"]


# --- what a release lacks: one line naming what it has ------------------------------------------------

RACKS = {
    "subtopologies": {"0": {"partitions": 2, "stateful": True, "source_topics": ["in"], "changelog_topics": ["cl"]}},
    "partition_racks": {"in": [["r1"], ["r2"]], "cl": [["r1"], ["r2"]]},
    "clients": {pid(1): {"rack": "r1", "consumers": {"a": {}}}, pid(2): {"rack": "r2", "consumers": {"b": {}}}},
}


@pytest.mark.parametrize("version, change, message", [
    ("3.5", {"rack_aware_assignment_strategy": "min_traffic"},
     r"Kafka 3\.5 has no rack-aware task assignment \(rack_aware_assignment_strategy min_traffic: .*came with 3\.6\)"),
    ("3.0.2", {"rack_aware_assignment_traffic_cost": 5},
     r"Kafka 3\.0\.2 has no rack-aware task assignment \(rack_aware_assignment_traffic_cost: .*came with 3\.6\)"),
    ("3.6", {"rack_aware_assignment_strategy": "balance_subtopology"},
     r"Kafka 3\.6 rejects rack_aware_assignment_strategy balance_subtopology \(its StreamsConfig throws "
     r"ConfigException: balance_subtopology came with 3\.7\); Kafka 3\.6 takes none or min_traffic"),
    ("3.1", {"rack_aware_assignment_tags": ["zone"]},
     r"Kafka 3\.1 has no rack_aware_assignment_tags \(rack\.aware\.assignment\.tags, KIP-708, came with 3\.2\)"),
])
def test_a_release_without_the_feature_says_so(version: str, change: dict, message: str) -> None:
    doc = {**RACKS, **change}
    if "rack_aware_assignment_tags" in change:
        doc["clients"] = {p: {**c, "client_tags": {"zone": c["rack"]}} for p, c in RACKS["clients"].items()}
    with pytest.raises(KassignError, match=message) as err:
        assign_streams_classic("high-availability", doc, kafka_version=version)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("version, change", [
    ("3.6", {"rack_aware_assignment_strategy": "min_traffic"}), ("3.7", {"rack_aware_assignment_strategy":
                                                                        "balance_subtopology"}),
    ("3.2", {"rack_aware_assignment_tags": ["zone"]}),
])
def test_the_first_release_with_the_feature_takes_it(version: str, change: dict) -> None:
    doc = {**RACKS, **change}
    doc["clients"] = {p: {**c, "client_tags": {"zone": c["rack"]}} for p, c in RACKS["clients"].items()}
    assert sum(len(c["active"]) for c in assign_streams_classic("high-availability", doc, kafka_version=version)
               ["clients"].values()) == 2


# --- KAFKA-13600 (3.2): a task moves to the most caught-up client even when none is caught up ------------

def _lags(lags: dict[int, int]) -> dict:
    """One stateful task 0_0 with end offset sum 2^63 - 1; client n (one thread) that far behind (MAX: no state)."""
    clients = {}
    for n, lag in lags.items():
        sums = {} if lag == LONG_MAX else {"0_0": LONG_MAX - lag}
        clients[pid(n)] = {"consumers": {f"c{n}": {"offset_sums": sums}}}
    return {"subtopologies": {"0": {"partitions": 1, "stateful": True}}, "end_offset_sums": {"0_0": LONG_MAX},
            "clients": clients, "num_standby_replicas": 1, "max_warmup_replicas": 2, "acceptable_recovery_lag": 100}


@pytest.mark.parametrize("version", ["3.2", "3.3", "4.4"])
def test_to_the_most_caught_up_client_when_none_is_caught_up(version: str) -> None:
    # shouldAssignToMostCaughtUpIfActiveTasksWasNotOnCaughtUpClient: lags MAX, 1000, 500 with acceptable lag 100;
    # the task is dealt to client 1 and moves to client 3 (lag 500), client 1 keeps a warm-up, client 2 the standby
    got = assign_streams_classic("high-availability", _lags({1: LONG_MAX, 2: 1000, 3: 500}), kafka_version=version)
    assert got["clients"] == {pid(1): {"active": [], "standby": ["0_0"]}, pid(2): {"active": [], "standby": ["0_0"]},
                              pid(3): {"active": ["0_0"], "standby": []}}
    assert got["probing_rebalance"] is True


@pytest.mark.parametrize("version", ["3.0", "3.1.2"])
def test_before_kafka_13600_nothing_moves_when_none_is_caught_up(version: str) -> None:
    # the same group in 3.0 and 3.1: no client is within the acceptable lag, so the deal stands (client 1 active,
    # the standby on the least loaded other client) and no probing rebalance follows; Kafka 3.0.2's own classes
    # answer so
    got = assign_streams_classic("high-availability", _lags({1: LONG_MAX, 2: 1000, 3: 500}), kafka_version=version)
    assert got["clients"] == {pid(1): {"active": ["0_0"], "standby": []}, pid(2): {"active": [], "standby": ["0_0"]},
                              pid(3): {"active": [], "standby": []}}
    assert got["probing_rebalance"] is False


def test_before_hotfix_12585_movements_go_in_the_heap_s_array_order() -> None:
    # 3.0 to 3.2 walk the queue of movements with its iterator (the array, heap order), 3.3 polls it: the array
    # after offering these is [3, 0, 2, 1]; polling gives 3, 1, 2, 0 (java.util.PriorityQueue, JDK 17)
    moves = [(1, 0, 0), (1, 0, 1), (1, 0, 2), (0, 5, 3)]
    assert _movement_order(moves, polled=False) == [moves[3], moves[0], moves[2], moves[1]]
    assert _movement_order(moves, polled=True) == [moves[3], moves[1], moves[2], moves[0]]
    # a priority order and a heap order that disagree on distinct keys: 3 movements offered 2, 1, 0 caught-up
    moves = [(3, 0, 0), (2, 1, 1), (1, 2, 2), (0, 3, 3)]
    assert _movement_order(moves, polled=False) == [moves[3], moves[2], moves[1], moves[0]]
    moves = [(0, 0, 0), (2, 1, 1), (1, 2, 2), (3, 3, 3), (1, 4, 4)]
    assert _movement_order(moves, polled=False) == [moves[0], moves[4], moves[2], moves[3], moves[1]]
    assert _movement_order(moves, polled=True) == [moves[0], moves[2], moves[4], moves[1], moves[3]]


# --- KAFKA-12959 (3.2): actives and standbys balanced over a client's threads together --------------------

def _no_state(c1: list[str], c2: list[str], stateless: bool = False) -> dict:
    subtopologies = {"0": {"partitions": 3, "stateful": True}}
    if stateless:
        subtopologies["1"] = {"partitions": 3, "stateful": False}
    return {"subtopologies": subtopologies, "end_offset_sums": {f"0_{p}": 3 for p in range(3)},
            "num_standby_replicas": 1,
            "clients": {pid(1): {"consumers": {m: {} for m in c1}}, pid(2): {"consumers": {m: {} for m in c2}}}}


def _per_consumer(got: dict) -> dict[str, tuple[int, int]]:
    return {m: (len(a["active"]), len(a["standby"])) for m, a in got["consumers"].items()}


@pytest.mark.parametrize("version, most", [("3.2", 1), ("3.3.2", 1), ("4.4", 1), ("3.0", 2), ("3.1", 2)])
def test_standby_replicas_balance_sparse(version: str, most: int) -> None:
    # testAssignWithStandbyReplicasBalanceSparse: 3 stateful tasks, 1 standby, clients of 4 and 3 threads: from 3.2
    # no thread holds more than one task; 3.0 and 3.1 split actives and standbys apart, each from the first thread,
    # so a thread of each client holds an active and a standby
    got = assign_streams_classic("high-availability", _no_state(
        ["consumer10", "consumer11", "consumer12", "consumer13"], ["consumer20", "consumer21", "consumer22"]),
        kafka_version=version)
    assert max(a + s for a, s in _per_consumer(got).values()) == most


@pytest.mark.parametrize("version", ["3.0", "3.2", "4.4"])
def test_standby_replicas_balance_dense(version: str) -> None:
    # testAssignWithStandbyReplicasBalanceDense: two clients of one thread each hold 3 tasks, not all 3 actives
    per = _per_consumer(assign_streams_classic("high-availability", _no_state(["consumer10"], ["consumer20"]),
                                               kafka_version=version))
    assert all(a + s == 3 and a < 3 for a, s in per.values())


@pytest.mark.parametrize("version, split", [
    ("3.2", {"consumer10": (1, 1), "consumer11": (2, 0), "consumer20": (2, 1), "consumer21": (1, 1)}),
    ("4.4", {"consumer10": (1, 1), "consumer11": (2, 0), "consumer20": (2, 1), "consumer21": (1, 1)}),
    ("3.0", {"consumer10": (2, 1), "consumer11": (1, 0), "consumer20": (2, 1), "consumer21": (1, 1)}),
])
def test_standby_replicas_balance_with_stateless_tasks(version: str, split: dict) -> None:
    # testAssignWithStandbyReplicasBalanceWithStatelessTasks: 9 tasks over 4 threads, at most 3 each and at most one
    # standby each (3.3.2's facts, which 3.0 meets too, with another split)
    got = assign_streams_classic("high-availability", _no_state(["consumer10", "consumer11"],
                                                                ["consumer20", "consumer21"], True),
                                 kafka_version=version)
    per = _per_consumer(got)
    assert all(a + s <= 3 and s <= 1 for a, s in per.values())
    assert per == split


# --- 3.0: a reported task without a changelog fails the split over threads ------------------------------

def test_3_0_fails_on_an_offset_sum_of_a_stateless_task() -> None:
    doc = _no_state(["consumer10", "consumer11"], ["consumer20"], stateless=True)
    doc["clients"][pid(1)]["consumers"]["consumer10"] = {"offset_sums": {"1_0": 5}}
    with pytest.raises(KassignError, match=r"Kafka 3\.0 fails this rebalance: consumer 'consumer10' reports an "
                                           r"offset sum for task 1_0, which has no changelog.*3\.1 and later skip "
                                           r"it") as err:
        assign_streams_classic("high-availability", doc, kafka_version="3.0.2")
    assert "\n" not in str(err.value)
    assert assign_streams_classic("high-availability", doc, kafka_version="3.1") == \
        assign_streams_classic("high-availability", {**doc, "clients": _no_state(
            ["consumer10", "consumer11"], ["consumer20"])["clients"]}, kafka_version="3.1")


# --- StreamsPartitionAssignorTest facts both 3.0.2 and 3.3.2 hold ------------------------------------------------

@pytest.mark.parametrize("version", ["3.0", "3.1", "3.2", "3.3", "4.4"])
def test_evenly_across_consumers_of_one_client(version: str) -> None:
    # shouldAssignEvenlyAcrossConsumersOneClientMultipleThreads: two stateless subtopologies of 4 partitions, one
    # client of two threads: consumer10 runs 0_0, 0_2, 1_0, 1_2 and consumer11 the odd partitions
    doc = {"subtopologies": {"0": {"partitions": 4}, "1": {"partitions": 4}},
           "clients": {pid(1): {"consumers": {"consumer10": {}, "consumer11": {}}}}}
    got = assign_streams_classic("high-availability", doc, kafka_version=version)
    assert got["consumers"] == {"consumer10": {"active": ["0_0", "0_2", "1_0", "1_2"], "standby": []},
                                "consumer11": {"active": ["0_1", "0_3", "1_1", "1_3"], "standby": []}}


@pytest.mark.parametrize("version", ["3.0", "3.2", "3.3", "4.4"])
def test_with_standby_replicas(version: str) -> None:
    # testAssignWithStandbyReplicas: one stateful subtopology of 3 partitions (changelog end offsets 2^63 - 1), one
    # standby; client 1 runs 0_0 (consumer10) and 0_1 (consumer11, a standby of 0_2 at offset 0), client 2 runs 0_2
    # (a standby of 0_0). Client 1 keeps 0_0 and 0_1 and holds the standby of 0_2; its two consumers do not get
    # the same standbys; every task is active once and standby once
    stateful = ["0_0", "0_1", "0_2"]
    doc = {"subtopologies": {"0": {"partitions": 3, "stateful": True}}, "num_standby_replicas": 1,
           "end_offset_sums": {t: LONG_MAX for t in stateful},
           "clients": {pid(1): {"consumers": {"consumer10": {"owned": ["0_0"], "offset_sums": {"0_0": -2}},
                                              "consumer11": {"owned": ["0_1"], "offset_sums": {"0_1": -2, "0_2": 0}}}},
                       pid(2): {"consumers": {"consumer20": {"owned": ["0_2"], "offset_sums": {"0_2": -2, "0_0": 0}}}}}}
    got = assign_streams_classic("high-availability", doc, kafka_version=version)
    assert got["clients"][pid(1)] == {"active": ["0_0", "0_1"], "standby": ["0_2"]}
    consumers = got["consumers"]
    assert consumers["consumer10"]["standby"] != consumers["consumer11"]["standby"]
    assert sorted(t for c in consumers.values() for t in c["active"]) == stateful
    assert sorted(t for c in consumers.values() for t in c["standby"]) == stateful
