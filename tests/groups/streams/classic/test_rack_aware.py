"""Rack-aware task assignment (KIP-925): Kafka's RackAwareTaskAssignorTest translated, properties,
the scenario fields and the hooks in the high-availability and sticky assignors."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign.core.errors import KassignError, ScenarioError
from kassign.groups.streams.classic import assign_streams_classic
from kassign.groups.streams.classic.high_availability import Clients
from kassign.groups.streams.classic.rack_aware import (LegacyRackAwareAssignor, tag_standby_predicate)

# -- AssignmentTestUtils' cluster: node i sits in rack i -----------------------------------------------

REPLICAS = [["rack0", "rack1"], ["rack1", "rack2"], ["rack0", "rack2"], ["rack1", "rack3"], ["rack3", "rack4"]]
SOURCE_REPLICAS = {  # topic -> replica set index per partition
    "topic0": [0, 1, 1, 2, 3, 4, 2], "topic1": [2, 3, 0, 1], "topic2": [4, 3, 4, 0], "topic3": [2, 3, 4],
}
CHANGELOG_REPLICAS = {
    "store-0-changelog": [0, 1, 1, 2, 3, 4, 0], "store-1-changelog": [2, 3, 0, 4],
    "store-2-changelog": [1, 2, 4, 3], "store-3-changelog": [4, 3, 1],
}
PARTITION_RACKS = {t: [REPLICAS[i] for i in rows] for t, rows in {**SOURCE_REPLICAS, **CHANGELOG_REPLICAS}.items()}
TASKS = [(s, p) for s in range(4) for p in range(len(SOURCE_REPLICAS[f"topic{s}"]))]
PROCESS_RACK = {1: "rack0", 2: "rack1", 3: "rack2", 4: "rack3", 5: "rack4", 6: "rack0", 7: "rack1"}
STRATEGIES = ["min_traffic", "balance_subtopology"]
STATEFUL_COSTS, STATELESS_COSTS = (10, 1), (1, 0)


def t(name: str) -> int:
    sub, part = map(int, name.split("_"))
    return TASKS.index((sub, part))


def assignor(strategy: str, pids: list[int], standbys: int = 0, changelogs: bool = False,
             partition_racks: dict = PARTITION_RACKS) -> LegacyRackAwareAssignor:
    sources = [[(f"topic{s}", p)] for s, p in TASKS]
    logs = [[(f"store-{s}-changelog", p)] for s, p in TASKS] if changelogs else [[] for _ in TASKS]
    made = LegacyRackAwareAssignor(strategy, TASKS, sources, logs, partition_racks,
                                   [[PROCESS_RACK[p]] for p in pids], standbys)
    made.process_ids = [f"00000000-0000-0000-0000-{p:012d}" for p in pids]
    return made


def clients_with(active: list[list[str]], standby: list[list[str]] | None = None) -> Clients:
    clients = Clients([1] * len(active), len(TASKS))
    for c, names in enumerate(active):
        for name in names:
            clients.add_active(c, t(name))
    for c, names in enumerate(standby or []):
        for name in names:
            clients.add_standby(c, t(name))
    return clients


def actives(clients: Clients) -> list[set[str]]:
    return [{"%d_%d" % TASKS[x] for x in a} for a in clients.active]


PARAMS = [(stateful, strategy) for stateful in (True, False) for strategy in STRATEGIES]


# -- RackAwareTaskAssignorTest: enabling -----------------------------------------------------------------

def test_disabled_by_config():
    assert not assignor("none", [1]).can_enable()


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("racks, consumers, enabled", [
    ({"topic0": [["rack1", "rack2"]]}, [["rack0"]], True),
    ({}, [["rack0"]], False),                               # partition missing in cluster metadata
    ({"topic0": []}, [["rack0"]], False),                   # partition 0 does not exist
    ({"topic0": [[]]}, [["rack0"]], False),                 # no replicas, and none when described
    ({"topic0": [["rack1", None]]}, [["rack0"]], False),    # a node without rack
    ({"topic0": [["rack1"]]}, [["rack0", None]], False),    # a consumer without rack
    ({"topic0": [["rack1"]]}, [["rack0", "rack1"]], False),  # consumers of one process in two racks
    ({"topic0": [["rack1"]]}, [[]], False),                 # a process without consumers' racks
])
def test_can_enable(strategy, racks, consumers, enabled):
    made = LegacyRackAwareAssignor(strategy, [(0, 0)], [[("topic0", 0)]], [[]], racks, consumers, 0)
    assert made.can_enable() is enabled
    assert made.can_enable() is enabled  # cached


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("changelog_racks, enabled", [([["rack1", "rack2"]], True), ([], False)])
def test_standbys_need_changelog_racks(strategy, changelog_racks, enabled):
    racks = {"topic0": [["rack1", "rack2"]], "store-0-changelog": changelog_racks}
    made = LegacyRackAwareAssignor(strategy, [(0, 0)], [[("topic0", 0)]], [[("store-0-changelog", 0)]], racks,
                                   [["rack0"]], 1)
    assert made.can_enable() is enabled
    without_standbys = LegacyRackAwareAssignor(strategy, [(0, 0)], [[("topic0", 0)]], [[("store-0-changelog", 0)]],
                                               racks, [["rack0"]], 0)
    assert without_standbys.can_enable()


# -- RackAwareTaskAssignorTest: active tasks ------------------------------------------------------------

@pytest.mark.parametrize("stateful, strategy", PARAMS)
def test_optimize_empty_active_tasks(stateful, strategy):
    made = assignor(strategy, [1])
    clients = clients_with([["0_1", "1_1"]])
    costs = STATEFUL_COSTS if stateful else STATELESS_COSTS
    assert made.can_enable()
    assert made.active_tasks_cost([], clients.active, *costs) == 0
    assert made.optimize_active_tasks([], clients, *costs) == 0
    assert actives(clients) == [{"0_1", "1_1"}]


@pytest.mark.parametrize("stateful, strategy", PARAMS)
def test_optimize_active_tasks(stateful, strategy):
    made = assignor(strategy, [1, 2, 3])
    clients = clients_with([["0_1", "1_1"], ["1_0"], ["0_0"]])
    costs = STATEFUL_COSTS if stateful else STATELESS_COSTS
    tasks = [t(n) for n in ("0_0", "0_1", "1_0", "1_1")]
    assert made.can_enable()
    assert made.active_tasks_cost(tasks, clients.active, *costs) == (40 if stateful else 4)
    assert made.optimize_active_tasks(tasks, clients, *costs) == (4 if stateful else 0)
    assert actives(clients) == [{"0_0", "1_0"}, {"1_1"}, {"0_1"}]


@pytest.mark.parametrize("stateful, strategy", PARAMS)
@pytest.mark.parametrize("before, names, after", [
    ([[], ["1_0"], ["0_0"]], ["0_0", "1_0"], [set(), {"0_0"}, {"1_0"}]),  # an empty client stays empty
    ([[], ["0_1", "1_0"], ["0_0"]], ["0_0", "0_1", "1_0"], [set(), {"0_0", "0_1"}, {"1_0"}]),
])
def test_optimize_active_tasks_with_more_clients(stateful, strategy, before, names, after):
    made = assignor(strategy, [1, 2, 3])
    clients = clients_with(before)
    costs = STATEFUL_COSTS if stateful else STATELESS_COSTS
    tasks = [t(n) for n in names]
    assert made.can_enable()
    assert made.active_tasks_cost(tasks, clients.active, *costs) == (20 if stateful else 2)
    assert made.optimize_active_tasks(tasks, clients, *costs) == (2 if stateful else 0)
    assert actives(clients) == after


@pytest.mark.parametrize("stateful, strategy", PARAMS)
def test_balance_assignment_with_more_cost(stateful, strategy):
    made = assignor(strategy, [2, 5])  # process 5 shares a rack with no task
    clients = clients_with([["0_0", "1_1"], ["0_1"]])
    costs = STATEFUL_COSTS if stateful else STATELESS_COSTS
    tasks = [t(n) for n in ("0_0", "0_1", "1_1")]
    assert made.can_enable()
    expected = 10 if stateful else 1
    assert made.active_tasks_cost(tasks, clients.active, *costs) == expected
    assert made.optimize_active_tasks(tasks, clients, *costs) == expected
    if stateful or strategy == "min_traffic":
        assert actives(clients) == [{"0_0", "1_1"}, {"0_1"}]
    else:  # costs 1 and 0: balance_subtopology spreads subtopology 0 at no extra cost
        assert actives(clients) == [{"0_0", "0_1"}, {"1_1"}]


@pytest.mark.parametrize("stateful, strategy", PARAMS)
def test_refuses_without_can_enable(stateful, strategy):
    made = assignor(strategy, [2, 5])
    clients = clients_with([["0_0", "1_1"], ["0_1"]])
    with pytest.raises(KassignError, match="^TopicPartition topic0-0 has no rack information. Maybe forgot"):
        made.optimize_active_tasks([t("0_0"), t("0_1"), t("1_1")], clients, 10, 1)


@pytest.mark.parametrize("stateful, strategy", PARAMS)
def test_refuses_a_task_on_two_clients(stateful, strategy):
    made = assignor(strategy, [2, 5])
    clients = clients_with([["0_0", "1_1"], ["0_1", "1_1"]])
    assert made.can_enable()
    with pytest.raises(KassignError) as err:
        made.optimize_active_tasks([t("0_0"), t("0_1"), t("1_1")], clients, 10, 1)
    assert str(err.value) == ("Task 1_1 assigned to multiple clients 00000000-0000-0000-0000-000000000005, "
                              "00000000-0000-0000-0000-000000000002")


@pytest.mark.parametrize("stateful, strategy", PARAMS)
def test_refuses_a_task_on_no_client(stateful, strategy):
    made = assignor(strategy, [2, 5])
    clients = clients_with([["0_0", "1_1"], ["0_1"]])
    assert made.can_enable()
    with pytest.raises(KassignError, match="^Task 1_0 not assigned to any client$"):
        made.optimize_active_tasks([t(n) for n in ("0_0", "0_1", "1_0", "1_1")], clients, 10, 1)


# -- RackAwareTaskAssignorTest: standby tasks -------------------------------------------------------------

STANDBY_PIDS = [1, 2, 3, 4, 6, 7]
STANDBY_ACTIVE = [["0_0"], ["0_1"], ["1_0"], ["1_1"], ["0_2"], ["1_2"]]
STANDBY_STANDBY = [["0_1", "1_1"], ["0_0", "1_0"], ["0_0", "0_2"], ["0_1", "1_2"], ["1_0", "1_2"], ["0_2", "1_1"]]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_standbys(strategy):
    made = assignor(strategy, [1, 2, 3], standbys=1, changelogs=True)
    clients = clients_with([["0_1", "1_1"], ["1_0"], ["0_0"]])
    assert made.standby_tasks_cost(clients.standby, 10, 1) == 0
    assert made.optimize_standby_tasks(clients, 10, 1, lambda s, d, task: True) == 0


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("constrained, expected", [(False, 20), (True, 50)])
def test_optimize_standby_tasks(strategy, constrained, expected):
    made = assignor(strategy, STANDBY_PIDS, standbys=2, changelogs=True)
    clients = clients_with(STANDBY_ACTIVE, STANDBY_STANDBY)
    counts = [len(s) for s in clients.standby]
    assert made.can_enable()
    assert made.standby_tasks_cost(clients.standby, 10, 1) == 60
    if constrained:  # the client-tag rule with each process's rack as its one tag
        may_move = tag_standby_predicate([{"rack": PROCESS_RACK[p]} for p in STANDBY_PIDS], clients.holds,
                                         len(STANDBY_PIDS))
    else:
        def may_move(source, destination, task):
            return True
    assert made.optimize_standby_tasks(clients, 10, 1, may_move) == expected
    assert [len(s) for s in clients.standby] == counts
    for task in {t(n) for names in STANDBY_ACTIVE for n in names}:
        holders = [c for c in range(len(STANDBY_PIDS)) if clients.holds(c, task)]
        assert len(holders) == 3 and sum(task in a for a in clients.active) == 1
        if constrained:  # still one copy per rack
            assert len({PROCESS_RACK[STANDBY_PIDS[c]] for c in holders}) == 3


# -- properties ----------------------------------------------------------------------------------

@st.composite
def random_case(draw):
    n_clients = draw(st.integers(1, 6))
    n_racks = draw(st.integers(1, 4))
    pids = list(range(1, n_clients + 1))
    racks = {p: f"rack{draw(st.integers(0, n_racks - 1))}" for p in pids}
    partition_racks = {topic: [sorted({f"rack{draw(st.integers(0, n_racks - 1))}" for _ in range(2)}) for _ in rows]
                       for topic, rows in SOURCE_REPLICAS.items()}
    tasks = sorted(draw(st.sets(st.integers(0, len(TASKS) - 1), min_size=1)))
    owner = {task: draw(st.integers(0, n_clients - 1)) for task in tasks}
    return pids, racks, partition_racks, tasks, owner


def _random_assignor(strategy, pids, racks, partition_racks):
    made = LegacyRackAwareAssignor(strategy, TASKS, [[(f"topic{s}", p)] for s, p in TASKS], [[] for _ in TASKS],
                                   partition_racks, [[racks[p]] for p in pids], 0)
    assert made.can_enable()
    return made


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_case(), st.sampled_from(STRATEGIES), st.sampled_from([STATEFUL_COSTS, STATELESS_COSTS]))
def test_optimizing_keeps_counts_and_never_costs_more_with_min_traffic(case, strategy, costs):
    pids, racks, partition_racks, tasks, owner = case
    made = _random_assignor(strategy, pids, racks, partition_racks)
    clients = Clients([1] * len(pids), len(TASKS))
    for task, c in owner.items():
        clients.add_active(c, task)
    counts = [len(a) for a in clients.active]
    before = made.active_tasks_cost(tasks, clients.active, *costs)
    after = made.optimize_active_tasks(tasks, clients, *costs)
    assert [len(a) for a in clients.active] == counts  # the assignor's balance stands
    assert sorted(x for a in clients.active for x in a) == tasks
    moved = sum(task not in clients.active[c] for task, c in owner.items())
    assert made.active_tasks_cost(tasks, clients.active, *costs) + moved * costs[1] == after
    if strategy == "min_traffic":
        assert after <= before


@settings(max_examples=40, deadline=None)
@given(random_case(), st.sampled_from(STRATEGIES))
def test_all_racks_equal_nothing_moves_with_min_traffic(case, strategy):
    pids, _, partition_racks, tasks, owner = case
    made = _random_assignor("min_traffic", pids, {p: "rack0" for p in pids}, partition_racks)
    clients = Clients([1] * len(pids), len(TASKS))
    for task, c in owner.items():
        clients.add_active(c, task)
    made.optimize_active_tasks(tasks, clients, *STATEFUL_COSTS)
    assert {task: c for c in range(len(pids)) for task in clients.active[c]} == owner


@settings(max_examples=40, deadline=None)
@given(random_case())
def test_no_traffic_cost_keeps_the_assignment(case):
    pids, racks, partition_racks, tasks, owner = case
    made = _random_assignor("min_traffic", pids, racks, partition_racks)
    clients = Clients([1] * len(pids), len(TASKS))
    for task, c in owner.items():
        clients.add_active(c, task)
    assert made.active_tasks_cost(tasks, clients.active, 0, 1) == 0
    assert made.optimize_active_tasks(tasks, clients, 0, 1) == 0
    assert {task: c for c in range(len(pids)) for task in clients.active[c]} == owner


# -- the assignors, from scenario documents -------------------------------------------------------------

def pid(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012d}"


def scenario(partitions: dict[int, int], clients: dict[int, dict], strategy: str = "min_traffic",
             stateful: bool = True, **settings) -> dict:
    """A scenario on AssignmentTestUtils' cluster: subtopology s reads topic{s}, logs to store-s-changelog."""
    doc = {
        "subtopologies": {str(s): {"partitions": n, "stateful": stateful, "source_topics": [f"topic{s}"],
                                   **({"changelog_topics": [f"store-{s}-changelog"]} if stateful else {})}
                          for s, n in partitions.items()},
        "clients": {pid(p): {"rack": PROCESS_RACK[p], "consumers": {f"c{p}": spec}} for p, spec in clients.items()},
        "partition_racks": PARTITION_RACKS,
        "rack_aware_assignment_strategy": strategy,
    }
    doc.update(settings)
    return doc


@pytest.mark.parametrize("strategy", ["none", *STRATEGIES])
def test_high_availability_assigns_to_most_caught_up(strategy):
    # HighAvailabilityTaskAssignorTest.shouldAssignToMostCaughtUpIfActiveTasksWasNotOnCaughtUpClient
    end = 10_000_000
    doc = scenario({0: 1}, {1: {}, 2: {"offset_sums": {"0_0": end - 1000}}, 3: {"offset_sums": {"0_0": end - 500}}},
                   strategy, end_offset_sums={"0_0": end}, num_standby_replicas=1, acceptable_recovery_lag=100)
    answer = assign_streams_classic("high-availability", doc)
    assert answer["clients"] == {pid(1): {"active": [], "standby": ["0_0"]},  # a warm-up
                                 pid(2): {"active": [], "standby": ["0_0"]},
                                 pid(3): {"active": ["0_0"], "standby": []}}
    assert answer["probing_rebalance"]


@pytest.mark.parametrize("strategy", ["none", *STRATEGIES])
def test_high_availability_assigns_standbys_for_stateful_tasks(strategy):
    # HighAvailabilityTaskAssignorTest.shouldAssignStandbysForStatefulTasks
    doc = scenario({0: 2}, {1: {"owned": ["0_0"], "offset_sums": {"0_0": -2}},
                            2: {"owned": ["0_1"], "offset_sums": {"0_1": -2}}},
                   strategy, end_offset_sums={"0_0": 10, "0_1": 10}, num_standby_replicas=1)
    answer = assign_streams_classic("high-availability", doc)
    assert answer["clients"] == {pid(1): {"active": ["0_0"], "standby": ["0_1"]},
                                 pid(2): {"active": ["0_1"], "standby": ["0_0"]}}
    assert not answer["probing_rebalance"]


def test_high_availability_moves_actives_to_their_racks():
    """The docs' example: four fresh clients in racks 0 to 3; the round robin deal puts 1_2 and 1_3
    where none of their partition's replicas is; min_traffic finds places without cross-rack reads
    for all four tasks, moving three of them."""
    doc = scenario({1: 4}, {1: {}, 2: {}, 3: {}, 4: {}}, "none")
    plain = assign_streams_classic("high-availability", doc)
    assert {p: c["active"] for p, c in plain["clients"].items()} == {
        pid(1): ["1_0"], pid(2): ["1_1"], pid(3): ["1_2"], pid(4): ["1_3"]}
    doc["rack_aware_assignment_strategy"] = "min_traffic"
    aware = assign_streams_classic("high-availability", doc)
    assert {p: c["active"] for p, c in aware["clients"].items()} == {
        pid(1): ["1_0"], pid(2): ["1_2"], pid(3): ["1_3"], pid(4): ["1_1"]}
    made = assignor("min_traffic", [1, 2, 3, 4])
    clients = clients_with([["1_0"], ["1_1"], ["1_2"], ["1_3"]])
    tasks = [t(n) for n in ("1_0", "1_1", "1_2", "1_3")]
    assert made.can_enable()
    assert made.active_tasks_cost(tasks, clients.active, 10, 1) == 20
    assert made.optimize_active_tasks(tasks, clients, 10, 1) == 3  # no traffic, three moves


@pytest.mark.parametrize("costs, moves", [((None, None), False), ((10, 1), True), ((0, 1), False)])
def test_sticky_needs_both_costs_configured(costs, moves):
    # Kafka's canPerformRackAwareOptimization reads the configured costs, not the sticky defaults
    doc = scenario({1: 4}, {1: {}, 2: {}, 3: {}, 4: {}}, "min_traffic",
                   rack_aware_assignment_traffic_cost=costs[0], rack_aware_assignment_non_overlap_cost=costs[1])
    plain = assign_streams_classic("sticky", {**doc, "rack_aware_assignment_strategy": "none"})
    aware = assign_streams_classic("sticky", doc)
    assert (aware != plain) is moves
    for answer in (plain, aware):
        assert sorted(len(c["active"]) for c in answer["clients"].values()) == [1, 1, 1, 1]
    if moves:  # the sticky assignor prices a task's source and changelog partitions
        def cross(answer):
            return sum(PROCESS_RACK[int(p[-12:])] not in PARTITION_RACKS[topic][int(task[2:])]
                       for p, c in answer["clients"].items() for task in c["active"]
                       for topic in ("topic1", "store-1-changelog"))
        assert (cross(plain), cross(aware)) == (3, 1)  # 1 is the least: 1_3 reads rack1/2 and rack3/4


def test_disabled_when_a_consumer_has_no_rack():
    doc = scenario({0: 4}, {1: {}, 2: {}, 3: {}, 4: {"rack": None}}, "min_traffic")
    doc["clients"][pid(4)].pop("rack")
    plain = assign_streams_classic("high-availability", {**doc, "rack_aware_assignment_strategy": "none"})
    assert assign_streams_classic("high-availability", doc) == plain


@st.composite
def random_scenario(draw):
    n_racks = draw(st.integers(1, 3))
    subs = {s: draw(st.integers(1, 4)) for s in range(draw(st.integers(1, 3)))}
    stateful = {s: draw(st.booleans()) for s in subs}
    n_clients = draw(st.integers(1, 4))
    tasks = [f"{s}_{p}" for s, n in subs.items() for p in range(n)]
    owner = {task: draw(st.integers(-1, n_clients - 1)) for task in tasks}
    clients = {}
    for c in range(n_clients):
        consumers = {}
        for m in range(draw(st.integers(1, 2))):
            owned = [task for task in tasks if owner[task] == c] if m == 0 else []
            consumers[f"c{c}-{m}"] = {"owned": owned, "offset_sums": {task: -2 for task in owned
                                                                      if stateful[int(task.split("_")[0])]}}
        clients[pid(c + 1)] = {"rack": f"r{draw(st.integers(0, n_racks - 1))}", "consumers": consumers}
    topics = {}
    for s, n in subs.items():
        topics[f"in{s}"] = [sorted({f"r{draw(st.integers(0, n_racks - 1))}" for _ in range(2)}) for _ in range(n)]
        topics[f"log{s}"] = [sorted({f"r{draw(st.integers(0, n_racks - 1))}" for _ in range(2)}) for _ in range(n)]
    return {
        "subtopologies": {str(s): {"partitions": n, "stateful": stateful[s], "source_topics": [f"in{s}"],
                                   **({"changelog_topics": [f"log{s}"]} if stateful[s] else {})}
                          for s, n in subs.items()},
        "end_offset_sums": {task: 100 for task in tasks if stateful[int(task.split("_")[0])]},
        "clients": clients,
        "partition_racks": topics,
        "num_standby_replicas": draw(st.integers(0, 1)),
        "rack_aware_assignment_traffic_cost": draw(st.sampled_from([None, 10])),
        "rack_aware_assignment_non_overlap_cost": draw(st.sampled_from([None, 1])),
    }


def _counts(answer: dict) -> list[tuple[int, int]]:
    return [(len(c["active"]), len(c["standby"])) for c in answer["clients"].values()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_scenario(), st.sampled_from(["high-availability", "sticky"]), st.sampled_from(STRATEGIES))
def test_rack_aware_keeps_the_assignors_balance(doc, strategy, rack_strategy):
    plain = assign_streams_classic(strategy, doc)
    aware = assign_streams_classic(strategy, {**doc, "rack_aware_assignment_strategy": rack_strategy})
    tasks = sorted(f"{s}_{p}" for s, spec in doc["subtopologies"].items() for p in range(spec["partitions"]))
    assert sorted(t for c in aware["clients"].values() for t in c["active"]) == tasks
    for c in aware["clients"].values():
        assert not set(c["active"]) & set(c["standby"])
    fresh = all(not m["owned"] for c in doc["clients"].values() for m in c["consumers"].values())
    if strategy == "sticky" or fresh:  # no warm-up movements afterwards: each client's actives as many as plain
        assert [a for a, _ in _counts(aware)] == [a for a, _ in _counts(plain)]
        # standbys are placed after the actives moved, so they may land elsewhere, but as many
        assert sum(s for _, s in _counts(aware)) == sum(s for _, s in _counts(plain))
    assert aware["probing_rebalance"] == plain["probing_rebalance"] or strategy == "high-availability"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_scenario(), st.sampled_from(["high-availability", "sticky"]))
def test_one_rack_for_everyone_is_the_plain_answer(doc, strategy):
    doc = copy.deepcopy(doc)
    for c in doc["clients"].values():
        c["rack"] = "r0"
    doc["partition_racks"] = {t: [["r0"] for _ in rows] for t, rows in doc["partition_racks"].items()}
    plain = assign_streams_classic(strategy, doc)
    assert assign_streams_classic(strategy, {**doc, "rack_aware_assignment_strategy": "min_traffic"}) == plain


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(rack_aware_assignment_strategy="min-traffic"), "rack_aware_assignment_strategy must be"),
    (lambda d: d.update(rack_aware_assignment_traffic_cost=1.5), "rack_aware_assignment_traffic_cost"),
    (lambda d: d.update(rack_aware_assignment_non_overlap_cost=2**31), "rack_aware_assignment_non_overlap_cost"),
    (lambda d: d["subtopologies"]["0"].pop("source_topics"), "give subtopology 0 its source_topics"),
    (lambda d: d["subtopologies"]["0"].pop("changelog_topics"), "changelog_topics"),
    (lambda d: d["subtopologies"]["0"].update(source_topics="topic0"), "list of topic names"),
    (lambda d: d["subtopologies"]["0"].update(stateful=False), "is not stateful"),
    (lambda d: d.update(partition_racks={"topic0": [["rack0", 7]]}), "partition_racks: topic0 partition 0"),
    (lambda d: d.update(partition_racks={"topic0": "rack0"}), "partition_racks: topic0 must be a list"),
    (lambda d: d["clients"][pid(1)].update(rack=""), "rack must be a non-empty string"),
    (lambda d: d["clients"][pid(1)]["consumers"]["c1"].update(rack=3), "rack must be a non-empty string"),
])
def test_bad_input(change, message):
    doc = scenario({0: 2}, {1: {}, 2: {}})
    change(doc)
    with pytest.raises(ScenarioError, match=message) as err:
        assign_streams_classic("high-availability", doc)
    assert "\n" not in str(err.value)
