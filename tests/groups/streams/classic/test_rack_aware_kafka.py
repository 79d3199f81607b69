"""Kafka 4.3.1's rack-aware test cases translated: HighAvailabilityTaskAssignorTest's runs under each
``rack.aware.assignment.strategy`` (on AssignmentTestUtils' cluster: process n in the rack its
``getProcessRacksForAllProcess`` gives, every topic's partitions where ``getClusterForAllTopics`` puts them),
TaskAssignmentUtilsTest's rack cases (KIP-924's utilities, as kassign's sticky assignor calls them) and
CustomStickyTaskAssignorTest's rack parameterisations. Exact results where Kafka asserts them, its
invariants otherwise (hypothesis where they hold in general)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign.groups.streams.classic import assign_streams_classic
from kassign.groups.streams.classic.rack_aware import Kip924RackAware, LegacyRackAwareAssignor
from kassign.groups.streams.classic.scenario import parse_streams_classic
from tests.groups.streams.classic.test_rack_aware import PARTITION_RACKS, PROCESS_RACK, pid, random_scenario

STRATEGIES = ["none", "min_traffic", "balance_subtopology"]
MAX_SKEW = {"none": 1, "min_traffic": 1, "balance_subtopology": 4}  # Kafka's parameter() per strategy
END = 10_000_000
NO_STATE = None  # Kafka's lag Long.MAX_VALUE: nothing on disk


# -- HighAvailabilityTaskAssignorTest ------------------------------------------------------------------


def tasks_of(subs: dict[int, int]) -> list[str]:
    return [f"{s}_{p}" for s, n in subs.items() for p in range(n)]


def ha_doc(subs: dict[int, int], clients: dict[int, dict], strategy: str, stateful: bool = True,
           stateless: dict[int, int] | None = None, **config) -> dict:
    """``clients``: process -> {"threads": n, "lags": {task: lag or NO_STATE}, "active": [previous actives]};
    subtopology s reads topic{s} and logs to store-s-changelog (AssignmentTestUtils' topics)."""
    stateless = stateless or {}
    subtopologies = {}
    for s, n in {**subs, **stateless}.items():
        spec: dict = {"partitions": n, "stateful": stateful and s in subs, "source_topics": [f"topic{s}"]}
        if spec["stateful"]:
            spec["changelog_topics"] = [f"store-{s}-changelog"]
        subtopologies[str(s)] = spec
    doc: dict = {
        "subtopologies": subtopologies,
        "end_offset_sums": {t: END for t in tasks_of(subs)} if stateful else {},
        "clients": {},
        "partition_racks": PARTITION_RACKS,
        "rack_aware_assignment_strategy": strategy,
        **config,
    }
    for p, spec in clients.items():
        consumers = {f"c{p}-{k}": {} for k in range(spec.get("threads", 1))}
        first = consumers[f"c{p}-0"]
        sums = {t: END - lag for t, lag in spec.get("lags", {}).items() if lag is not NO_STATE and stateful}
        for t in spec.get("active", []):
            sums[t] = -2
        first["owned"] = list(spec.get("active", []))
        first["offset_sums"] = sums
        doc["clients"][pid(p)] = {"rack": PROCESS_RACK[p], "consumers": consumers}
    return doc


class Calls:
    """How often the high-availability assignor ran each rack-aware optimisation."""

    def __init__(self, monkeypatch) -> None:
        self.active = self.standby = 0
        real_active, real_standby = LegacyRackAwareAssignor.optimize_active_tasks, \
            LegacyRackAwareAssignor.optimize_standby_tasks

        def active(this, *args, **kwargs):
            self.active += 1
            return real_active(this, *args, **kwargs)

        def standby(this, *args, **kwargs):
            self.standby += 1
            return real_standby(this, *args, **kwargs)
        monkeypatch.setattr(LegacyRackAwareAssignor, "optimize_active_tasks", active)
        monkeypatch.setattr(LegacyRackAwareAssignor, "optimize_standby_tasks", standby)


@pytest.fixture
def calls(monkeypatch) -> Calls:
    return Calls(monkeypatch)


def run_ha(doc: dict, calls: Calls) -> dict:
    """The assignment, checked as Kafka's verifyTaskPlacementWithRackAwareAssignor checks every case:
    each task one active, never an active and a standby of a task on one client; the optimiser ran twice
    on actives (stateful, stateless) and once on standbys where standbys are configured, never when off."""
    standbys = doc.get("num_standby_replicas", 0) > 0
    answer = assign_streams_classic("high-availability", doc)
    tasks = [f"{s}_{p}" for s, spec in doc["subtopologies"].items() for p in range(spec["partitions"])]
    for task in tasks:
        assert sum(task in c["active"] for c in answer["clients"].values()) == 1
    for c in answer["clients"].values():
        assert not set(c["active"]) & set(c["standby"])
    enabled = doc["rack_aware_assignment_strategy"] != "none"
    assert (calls.active, calls.standby) == ((2, 1 if standbys else 0) if enabled else (0, 0))
    return answer


def capacities(doc: dict) -> dict[str, int]:
    return {p: len(c["consumers"]) for p, c in doc["clients"].items()}


def assert_valid(answer: dict, doc: dict, standbys: int = 0, warmups: int = 0) -> None:
    """assertValidAssignment: every stateful task 1 + standbys copies (fewer when clients run out), at most
    ``warmups`` tasks with one more; stateless tasks one copy."""
    clients = answer["clients"].values()
    left = warmups
    for s, spec in doc["subtopologies"].items():
        for p in range(spec["partitions"]):
            task = f"{s}_{p}"
            copies = sum(task in c["active"] or task in c["standby"] for c in clients)
            expected = min(len(answer["clients"]), 1 + (standbys if spec["stateful"] else 0))
            if copies == expected + 1 and left > 0:
                left -= 1
                continue
            assert copies == expected, task


def assert_balanced_active(answer: dict, doc: dict) -> None:
    loads = [len(c["active"]) / capacities(doc)[p] for p, c in answer["clients"].items()]
    assert max(loads) - min(loads) <= 1.0


def assert_balanced_stateful(answer: dict, doc: dict) -> None:
    stateful = {f"{s}_{p}" for s, spec in doc["subtopologies"].items() if spec["stateful"]
                for p in range(spec["partitions"])}
    loads = [len(stateful & {*c["active"], *c["standby"]}) / capacities(doc)[p] for p, c in answer["clients"].items()]
    assert max(loads) - min(loads) <= 1.0


def run_balanced(doc: dict, calls: Calls) -> dict:
    """The assignment of a case Kafka checks as stable and balanced: no probing rebalance, every task
    placed once, active and stateful loads per thread within one of each other."""
    answer = run_ha(doc, calls)
    assert not answer["probing_rebalance"]
    assert_valid(answer, doc)
    assert_balanced_active(answer, doc)
    assert_balanced_stateful(answer, doc)
    return answer


def subtopology_skew(answer: dict) -> int:
    """analyzeTaskAssignmentBalance's largest skew: per subtopology, actives per client, max - min."""
    subs = {t.split("_")[0] for c in answer["clients"].values() for t in c["active"]}
    skews = [0]
    for s in subs:
        counts = [sum(t.split("_")[0] == s for t in c["active"]) for c in answer["clients"].values()]
        skews.append(max(counts) - min(counts))
    return max(skews)


NINE = {0: 3, 1: 3, 2: 3}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_sticky_for_active_and_standby_while_warming_up(strategy, calls):
    tasks = tasks_of(NINE)
    doc = ha_doc(NINE, {1: {"lags": dict.fromkeys(tasks, 0), "active": tasks}, 2: {"lags": dict.fromkeys(tasks, 10)},
                        3: {}}, strategy, acceptable_recovery_lag=11, max_warmup_replicas=2, num_standby_replicas=1)
    answer = run_ha(doc, calls)
    sizes = [len(c["active"]) + len(c["standby"]) for c in answer["clients"].values()]
    assert sizes == [9, 9, 2] and answer["probing_rebalance"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_skip_warmups_when_acceptable_lag_is_max(strategy, calls):
    tasks = tasks_of(NINE)
    doc = ha_doc(NINE, {1: {"lags": dict.fromkeys(tasks, 0), "active": tasks}, 2: {}, 3: {}}, strategy,
                 acceptable_recovery_lag=2**63 - 1, max_warmup_replicas=1, num_standby_replicas=1)
    answer = run_ha(doc, calls)
    assert [len(c["active"]) + len(c["standby"]) for c in answer["clients"].values()] == [6, 6, 6]
    assert not answer["probing_rebalance"]


EVEN_CASES = {  # Kafka's test: (subtopologies, threads per process, subtopology balance asserted under min_traffic)
    "clients_integral_divisor_of_tasks": (NINE, {1: 1, 2: 1, 3: 1}, False),
    "threads_integral_divisor_of_tasks": (NINE, {1: 3, 2: 3, 3: 3}, False),
    "clients_not_integral_divisor_of_tasks": (NINE, {1: 1, 2: 1}, True),
    "more_clients_than_tasks": ({0: 2}, {1: 1, 2: 1, 3: 1}, True),
    "equal_threads_per_client_as_tasks": (NINE, {1: 9, 2: 9, 3: 9}, False),
}


@pytest.mark.parametrize("case", list(EVEN_CASES))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_stateful_actives_spread_evenly(case, strategy, calls):
    # shouldAssignActiveStatefulTasksEvenlyOverClientsWhere...: everyone 10 behind, acceptable lag 0
    subs, threads, balanced_under_min_traffic = EVEN_CASES[case]
    tasks = tasks_of(subs)
    doc = ha_doc(subs, {p: {"threads": n, "lags": dict.fromkeys(tasks, 10)} for p, n in threads.items()}, strategy,
                 acceptable_recovery_lag=0, max_warmup_replicas=1)
    answer = run_balanced(doc, calls)
    if strategy != "min_traffic" or balanced_under_min_traffic:  # min_traffic may pile a subtopology up
        assert subtopology_skew(answer) <= MAX_SKEW[strategy]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_uneven_threads_get_actives_by_capacity(strategy, calls):
    subs = {0: 3, 1: 3}
    tasks = tasks_of(subs)
    doc = ha_doc(subs, {p: {"threads": p, "lags": dict.fromkeys(tasks, 10)} for p in (1, 2, 3)}, strategy,
                 acceptable_recovery_lag=0, max_warmup_replicas=1)
    answer = run_balanced(doc, calls)
    assert [len(c["active"]) for c in answer["clients"].values()] == [1, 2, 3]
    assert subtopology_skew(answer) > 1  # Kafka expects a skewed assignment here


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_best_effort_over_clients(strategy, calls):
    tasks = tasks_of(NINE)
    doc = ha_doc(NINE, {1: {"threads": 6, "lags": dict.fromkeys(tasks, 10)},
                        2: {"threads": 3, "lags": dict.fromkeys(tasks, 10)}}, strategy,
                 acceptable_recovery_lag=0, max_warmup_replicas=1)
    answer = run_balanced(doc, calls)
    assert [len(c["active"]) for c in answer["clients"].values()] == [6, 3]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_warmups_when_balanced_over_threads_but_not_clients(strategy, calls):
    subs = {0: 2, 1: 2}
    tasks = tasks_of(subs)
    warmups = len(tasks) // 3 + 1
    doc = ha_doc(subs, {1: {"threads": 5, "lags": dict.fromkeys(tasks, 0), "active": tasks},
                        2: {"threads": 5}, 3: {"threads": 5}}, strategy,
                 acceptable_recovery_lag=0, max_warmup_replicas=warmups)
    answer = run_ha(doc, calls)
    assert answer["probing_rebalance"]
    for p in (2, 3):
        assert len(answer["clients"][pid(p)]["standby"]) >= len(tasks) // 3
    assert_valid(answer, doc, warmups=warmups)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_warmed_up_clients_take_their_share(strategy, calls):
    # with the optimiser on, Kafka warms 1_1 on process 2 (rack1: topic1-1 is in rack1, rack3) and 0_1 on
    # process 3 (rack2: topic0-1 is in rack1, rack2), where the optimised deal puts them
    subs = {0: 2, 1: 2}
    tasks = tasks_of(subs)
    on = strategy != "none"
    first, second = ("1_1", "0_1") if on else ("0_1", "1_0")
    doc = ha_doc(subs, {1: {"threads": 5, "lags": dict.fromkeys(tasks, 0), "active": tasks},
                        2: {"threads": 5, "lags": {first: 0}}, 3: {"threads": 5, "lags": {second: 0}}}, strategy,
                 acceptable_recovery_lag=0, max_warmup_replicas=len(tasks) // 3 + 1)
    answer = run_balanced(doc, calls)
    assert subtopology_skew(answer) <= MAX_SKEW[strategy]
    assert first in answer["clients"][pid(2)]["active"] and second in answer["clients"][pid(3)]["active"]


# Kafka's stateless task 0_1 beside stateful 0_0: kassign's subtopologies are stateful or not as a
# whole, so the stateless task is 1_0 here (its own subtopology, reading topic1)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_new_assignment_for_unassigned_actives_and_standbys(strategy, calls):
    # shouldComputeNewAssignmentIfThereAreUnassigned{Active,Standby}Tasks
    doc = ha_doc({0: 1}, {1: {"lags": {"0_0": 0}, "active": ["0_0"]}}, strategy, stateless={1: 1},
                 acceptable_recovery_lag=100)
    answer = run_ha(doc, calls)
    assert answer["clients"][pid(1)] == {"active": ["0_0", "1_0"], "standby": []}
    assert not answer["probing_rebalance"]
    calls.active = calls.standby = 0
    doc = ha_doc({0: 1}, {1: {"lags": {"0_0": 0}, "active": ["0_0"]}, 2: {"lags": {"0_0": 0}}}, strategy,
                 acceptable_recovery_lag=100, num_standby_replicas=1)
    answer = run_ha(doc, calls)
    assert answer["clients"][pid(2)]["standby"] == ["0_0"] and not answer["probing_rebalance"]
    assert_valid(answer, doc, standbys=1)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_active_not_on_the_caught_up_client_moves(strategy, calls):
    # shouldComputeNewAssignmentIfActiveTasksWasNotOnCaughtUpClient: client 1 ran 0_0 but is 500 behind,
    # client 2 ran the stateless task and is caught up on 0_0: they swap, client 1 warms 0_0 up
    doc = ha_doc({0: 1}, {1: {"lags": {"0_0": 500}}, 2: {"lags": {"0_0": 0}}}, strategy, stateless={1: 1},
                 acceptable_recovery_lag=100)
    doc["clients"][pid(1)]["consumers"]["c1-0"]["owned"] = ["0_0"]
    doc["clients"][pid(2)]["consumers"]["c2-0"]["owned"] = ["1_0"]
    answer = run_ha(doc, calls)
    assert answer["clients"][pid(1)]["active"] == ["1_0"] and answer["clients"][pid(2)]["active"] == ["0_0"]
    assert answer["probing_rebalance"]
    assert_valid(answer, doc, warmups=1)
    assert_balanced_active(answer, doc)
    assert subtopology_skew(answer) <= MAX_SKEW[strategy]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_standbys_for_stateless_tasks(strategy, calls):
    doc = ha_doc({}, {1: {}, 2: {}}, strategy, stateless={0: 2}, num_standby_replicas=1)
    answer = run_ha(doc, calls)
    assert all(c["standby"] == [] for c in answer["clients"].values())
    assert sorted(len(c["active"]) for c in answer["clients"].values()) == [1, 1]
    assert not answer["probing_rebalance"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_warmups_without_standbys_configured(strategy, calls):
    doc = ha_doc({0: 2}, {1: {"lags": {"0_0": 0, "0_1": 0}, "active": ["0_0", "0_1"]}, 2: {}}, strategy,
                 acceptable_recovery_lag=100)
    answer = run_ha(doc, calls)
    assert answer["clients"][pid(1)] == {"active": ["0_0", "0_1"], "standby": []}
    assert answer["clients"][pid(2)]["active"] == [] and len(answer["clients"][pid(2)]["standby"]) == 1
    assert answer["probing_rebalance"]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("standbys", [0, 1])
def test_at_most_max_warmups_and_never_beside_a_standby(strategy, standbys, calls):
    # shouldNotAssignMoreThanMaxWarmupReplicas, shouldNotAssignWarmupAndStandbyToTheSameClient
    tasks = tasks_of({0: 4})
    doc = ha_doc({0: 4}, {1: {"lags": dict.fromkeys(tasks, 0), "active": tasks}, 2: {}}, strategy,
                 acceptable_recovery_lag=100, max_warmup_replicas=1, num_standby_replicas=standbys)
    answer = run_ha(doc, calls)
    assert answer["clients"][pid(1)] == {"active": tasks, "standby": []}
    assert answer["clients"][pid(2)] == {"active": [], "standby": tasks if standbys else answer["clients"][pid(2)]
                                         ["standby"]}
    assert len(answer["clients"][pid(2)]["standby"]) == (4 if standbys else 1)
    assert answer["probing_rebalance"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_standbys_with_one_client_and_actives_to_a_lagging_one(strategy, calls):
    # shouldNotAssignAnyStandbysWithInsufficientCapacity, shouldAssignActiveTasksToNotCaughtUpClientIfNoneExist
    doc = ha_doc({0: 2}, {1: {"lags": {"0_0": 0, "0_1": 0}, "active": ["0_0", "0_1"]}}, strategy,
                 acceptable_recovery_lag=100, num_standby_replicas=1)
    assert run_ha(doc, calls)["clients"][pid(1)] == {"active": ["0_0", "0_1"], "standby": []}
    calls.active = calls.standby = 0
    doc = ha_doc({0: 2}, {1: {}}, strategy, acceptable_recovery_lag=100, num_standby_replicas=1)
    answer = run_ha(doc, calls)
    assert answer["clients"][pid(1)] == {"active": ["0_0", "0_1"], "standby": []}
    assert not answer["probing_rebalance"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_max_warmups_with_standbys(strategy, calls):
    # shouldNotAssignMoreThanMaxWarmupReplicasWithStandbys: 3 clients, one caught up on all four tasks
    tasks = tasks_of({0: 4})
    doc = ha_doc({0: 4}, {1: {"lags": dict.fromkeys(tasks, 0), "active": tasks}, 2: {}, 3: {}}, strategy,
                 acceptable_recovery_lag=100, max_warmup_replicas=1, num_standby_replicas=1)
    answer = run_ha(doc, calls)
    assert_valid(answer, doc, standbys=1, warmups=2)
    assert answer["probing_rebalance"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_stateless_tasks_balance_the_total_load(strategy, calls):
    # shouldDistributeStatelessTasksToBalanceTotalTaskLoad
    stateful = tasks_of({0: 4})
    doc = ha_doc({0: 4}, {1: {"lags": dict.fromkeys(stateful, 0), "active": stateful}, 2: {}}, strategy,
                 stateless={1: 3}, acceptable_recovery_lag=100, num_standby_replicas=1)
    answer = run_ha(doc, calls)
    assert_valid(answer, doc, standbys=1, warmups=2)
    assert_balanced_active(answer, doc)
    assert_balanced_stateful(answer, doc)
    assert subtopology_skew(answer) > 1  # client 1 keeps the stateful actives, client 2 takes the stateless ones
    assert answer["probing_rebalance"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_stateful_actives_reach_every_client(strategy, calls):
    # shouldDistributeStatefulActiveTasksToAllClients: capacities 100, 50 and 1, everyone caught up
    subs = {0: 4, 1: 4, 2: 1}
    tasks = tasks_of(subs)
    doc = ha_doc(subs, {p: {"threads": n, "lags": dict.fromkeys(tasks, 0)} for p, n in ((1, 100), (2, 50), (3, 1))},
                 strategy, acceptable_recovery_lag=100)
    answer = run_ha(doc, calls)
    assert all(c["active"] for c in answer["clients"].values()) and not answer["probing_rebalance"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_previous_assignment_reused(strategy, calls):
    # shouldReturnFalseIfPreviousAssignmentIsReused: with the optimiser on, the deal Kafka keeps is
    # {0_0, 0_3} / {0_1, 0_2} (each task where its partition has a replica: topic0-2 and -3 sit in rack1)
    on = strategy != "none"
    held = {1: ["0_0", "0_3"], 2: ["0_1", "0_2"]} if on else {1: ["0_0", "0_2"], 2: ["0_1", "0_3"]}
    doc = ha_doc({0: 4}, {p: {"lags": dict.fromkeys(tasks, 0), "active": tasks} for p, tasks in held.items()},
                 strategy, acceptable_recovery_lag=100)
    answer = run_ha(doc, calls)
    assert {p: c["active"] for p, c in answer["clients"].items()} == {pid(p): t for p, t in held.items()}
    assert not answer["probing_rebalance"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_probing_only_with_warmups(strategy, calls):
    # shouldReturnFalseIfNoWarmupTasksAreAssigned, shouldReturnTrueIfWarmupTasksAreAssigned
    doc = ha_doc({}, {1: {}, 2: {}}, strategy, stateless={0: 4}, acceptable_recovery_lag=100)
    answer = run_ha(doc, calls)
    assert not answer["probing_rebalance"] and all(not c["standby"] for c in answer["clients"].values())
    calls.active = calls.standby = 0
    doc = ha_doc({0: 2}, {1: {"lags": {"0_0": 0, "0_1": 0}, "active": ["0_0", "0_1"]}, 2: {}}, strategy,
                 acceptable_recovery_lag=100)
    answer = run_ha(doc, calls)
    assert answer["probing_rebalance"] and len(answer["clients"][pid(2)]["standby"]) == 1


@pytest.mark.parametrize("threads, previous", [((7, 7, 7), False), ((2, 2, 2), False), ((1, 2, 3), False),
                                               ((3, 3, 3), True)])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_stateless_tasks_spread_over_clients(strategy, threads, previous, calls):
    # shouldDistributeStatelessTasksEvenly...AndNoStatefulTasks: seven stateless tasks (the last case
    # previously all on client 1)
    stateless = {0: 4, 1: 3}
    clients = {p: {"threads": n} for p, n in zip((1, 2, 3), threads)}
    doc = ha_doc({}, clients, strategy, stateless=stateless, acceptable_recovery_lag=0, max_warmup_replicas=1)
    if previous:
        doc["clients"][pid(1)]["consumers"]["c1-0"]["owned"] = tasks_of(stateless)
    answer = run_ha(doc, calls)
    assert_valid(answer, doc)
    assert not answer["probing_rebalance"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_scenario())
def test_no_traffic_cost_keeps_the_stateful_assignment(doc):
    # shouldRemainOriginalAssignmentWithoutTrafficCostForMinCostStrategy: traffic cost 0, non-overlap 10:
    # min_traffic keeps every stateful active and standby where the plain assignor put it (stateless
    # actives are optimised at Kafka's fixed costs 1 and 0, so they may move)
    doc = {**doc, "rack_aware_assignment_traffic_cost": 0, "rack_aware_assignment_non_overlap_cost": 10}
    stateful = {f"{s}_{p}" for s, spec in doc["subtopologies"].items() if spec["stateful"]
                for p in range(spec["partitions"])}
    plain = assign_streams_classic("high-availability", {**doc, "rack_aware_assignment_strategy": "none"})
    aware = assign_streams_classic("high-availability", {**doc, "rack_aware_assignment_strategy": "min_traffic"})
    for p in plain["clients"]:
        assert set(aware["clients"][p]["active"]) & stateful == set(plain["clients"][p]["active"]) & stateful
        assert aware["clients"][p]["standby"] == plain["clients"][p]["standby"]


# -- TaskAssignmentUtilsTest ---------------------------------------------------------------------------


class Kip924:
    """A KIP-924 assignment kassign's sticky assignor would hand to TaskAssignmentUtils: per client
    (process n, in Kafka's HashMap order of ``new UUID(0, n)``: by n) its actives and standbys; every task
    reads partition P of test-topic-S, its source and its changelog."""

    def __init__(self, strategy: str, task_racks: dict[str, list[str]], client_racks: dict[int, str],
                 active: dict[int, list[str]], standby: dict[int, list[str]] | None = None) -> None:
        subs: dict[int, int] = {}
        for name in task_racks:
            s, p = map(int, name.split("_"))
            subs[s] = max(subs.get(s, 0), p + 1)
        racks: dict[str, list] = {f"test-topic-{s}": [[] for _ in range(n)] for s, n in subs.items()}
        for name, where in task_racks.items():
            s, p = map(int, name.split("_"))
            racks[f"test-topic-{s}"][p] = sorted(where)
        doc = {
            "subtopologies": {str(s): {"partitions": n, "stateful": True, "source_topics": [f"test-topic-{s}"],
                                       "changelog_topics": [f"test-topic-{s}"]} for s, n in subs.items()},
            "clients": {pid(n): {"rack": rack, "consumers": {f"c{n}": {}}} for n, rack in client_racks.items()},
            "partition_racks": racks,
            "rack_aware_assignment_strategy": strategy,
            "rack_aware_assignment_traffic_cost": 100, "rack_aware_assignment_non_overlap_cost": 1,
        }
        self.scenario = parse_streams_classic(doc)
        self.index = {name: i for i, name in enumerate(self.scenario.task_name(t) for t in range(len(self.scenario.tasks)))}
        self.processes = sorted(client_racks)
        self.active = [{self.index[t] for t in active.get(n, [])} for n in self.processes]
        self.standby = [{self.index[t] for t in (standby or {}).get(n, [])} for n in self.processes]
        self.optimiser = Kip924RackAware(self.scenario, list(range(len(self.processes))))

    def optimize_active(self, tasks: list[str] | None = None) -> None:
        chosen = sorted({t for held in self.active for t in held} if tasks is None else {self.index[t] for t in tasks})

        def move(t: int, s: int, d: int) -> None:
            self.active[s].discard(t)
            self.active[d].add(t)
        self.optimiser.optimize_active(chosen, 100, 1, lambda c, t: t in self.active[c], move)

    def optimize_standby(self) -> None:
        def move(t: int, s: int, d: int) -> None:
            self.standby[s].discard(t)
            self.standby[d].add(t)
        self.optimiser.optimize_standby(lambda c: self.standby[c], lambda c, t: t in self.active[c] | self.standby[c],
                                        lambda c, t: t in self.standby[c], 100, 1, move)

    def tasks(self) -> dict[int, set[str]]:
        name = self.scenario.task_name
        return {n: {name(t) for t in self.active[i] | self.standby[i]} for i, n in enumerate(self.processes)}


@pytest.mark.parametrize("strategy", STRATEGIES[1:])
def test_utils_optimize_active_tasks_simple(strategy):
    made = Kip924(strategy, {"0_0": ["rack-2"], "0_1": ["rack-1"]}, {1: "rack-1", 2: "rack-2"},
                  {1: ["0_0"], 2: ["0_1"]})
    made.optimize_active()
    assert made.tasks() == {1: {"0_1"}, 2: {"0_0"}}
    made.optimize_active()  # a second round moves nothing
    assert made.tasks() == {1: {"0_1"}, 2: {"0_0"}}


@pytest.mark.parametrize("strategy", STRATEGIES[1:])
def test_utils_optimize_standby_tasks_basic(strategy):
    made = Kip924(strategy, {"0_0": ["rack-2"], "0_1": ["rack-3"]}, {1: "rack-1", 2: "rack-2", 3: "rack-3"},
                  {1: ["0_0", "0_1"]}, {2: ["0_1"], 3: ["0_0"]})
    made.optimize_standby()
    assert made.tasks() == {1: {"0_0", "0_1"}, 2: {"0_0"}, 3: {"0_1"}}


@pytest.mark.parametrize("strategy", STRATEGIES[1:])
def test_utils_standby_optimisation_keeps_client_tag_spread(strategy):
    # shouldNotViolateClientTagsAssignmentDuringStandbyOptimization: one rack for all, nothing to gain
    made = Kip924(strategy, {"0_0": ["r1"], "0_1": ["r1"]}, {1: "r1", 2: "r1", 3: "r1", 4: "r1"},
                  {1: ["0_0"], 2: ["0_1"]}, {1: ["0_1"], 2: ["0_0"], 3: ["0_0", "0_1"]})
    made.optimize_standby()
    assert made.tasks() == {1: {"0_0", "0_1"}, 2: {"0_0", "0_1"}, 3: {"0_0", "0_1"}, 4: set()}


@pytest.mark.parametrize("strategy", STRATEGIES[1:])
def test_utils_optimize_with_multiple_racks_keeps_local_tasks(strategy):
    made = Kip924(strategy, {"0_0": ["rack-1", "rack-2"], "0_1": ["rack-2", "rack-3"], "0_2": ["rack-3", "rack-4"]},
                  {1: "rack-1", 2: "rack-2", 3: "rack-3"}, {1: ["0_0"], 2: ["0_1"], 3: ["0_2"]})
    made.optimize_active(["0_0", "0_1", "0_2"])
    assert made.tasks() == {1: {"0_0"}, 2: {"0_1"}, 3: {"0_2"}}


# -- CustomStickyTaskAssignorTest ------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_scenario(), st.sampled_from(STRATEGIES[1:]))
def test_sticky_without_client_racks_answers_as_none(doc, strategy):
    # every case but the last runs clients without a rack (Optional.empty()) and without costs under each
    # strategy, asserting the same: the optimiser never runs
    doc = copy.deepcopy(doc)
    for c in doc["clients"].values():
        c.pop("rack", None)
    doc["rack_aware_assignment_traffic_cost"], doc["rack_aware_assignment_non_overlap_cost"] = 100, 1
    plain = assign_streams_classic("sticky", doc)
    assert assign_streams_classic("sticky", {**doc, "rack_aware_assignment_strategy": strategy}) == plain


# (largeAssignmentShouldTerminateWithinAcceptableTime, the one case with racks, is in test_sticky.py with the rest
# of CustomStickyTaskAssignorTest)
