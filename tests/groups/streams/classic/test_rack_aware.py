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
    clients = Clients([1] * len(active))
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
    clients = Clients([1] * len(pids))
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
    clients = Clients([1] * len(pids))
    for task, c in owner.items():
        clients.add_active(c, task)
    made.optimize_active_tasks(tasks, clients, *STATEFUL_COSTS)
    assert {task: c for c in range(len(pids)) for task in clients.active[c]} == owner


@settings(max_examples=40, deadline=None)
@given(random_case())
def test_no_traffic_cost_keeps_the_assignment(case):
    pids, racks, partition_racks, tasks, owner = case
    made = _random_assignor("min_traffic", pids, racks, partition_racks)
    clients = Clients([1] * len(pids))
    for task, c in owner.items():
        clients.add_active(c, task)
    assert made.active_tasks_cost(tasks, clients.active, 0, 1) == 0
    assert made.optimize_active_tasks(tasks, clients, 0, 1) == 0
    assert {task: c for c in range(len(pids)) for task in clients.active[c]} == owner
