"""Kafka Streams' rack-aware task assignment (KIP-925, ``rack.aware.assignment.strategy``).

Releases: Kafka 3.6 brought it with ``min_traffic`` only (its ``StreamsConfig`` rejects
``balance_subtopology``); 3.7.0 added ``balance_subtopology`` and changed how the min-cost flow
searches for negative cycles (KAFKA-15022), which can break ties between equal-cost answers
otherwise (:mod:`kassign.groups.streams.classic.mincostflow` takes the release's rule); 3.7 to
4.4 optimise alike. Before 3.6 a strategy other than ``none``, or a cost, is a
:class:`~kassign.core.errors.KassignError`.

With a strategy other than ``none``, the assignor first decides as usual, then lets a min-cost
flow (:mod:`kassign.groups.streams.classic.mincostflow`, Kafka's own ``Graph``) move tasks
between clients so that fewer of the partitions a task reads sit in another rack, without
changing how many tasks each client holds. The rule:

* **Cost of a task on a client**: ``traffic_cost`` for each of the task's partitions none of
  whose replicas is in the client's rack, plus ``non_overlap_cost`` if the client does not
  hold the task now (Java ``int`` arithmetic). An active task reads its source partitions
  (high-availability) or its source and changelog partitions (sticky); a standby reads its
  changelog partitions.
* **min_traffic**: tasks are nodes 0..T-1 (in task order), clients T..T+C-1, an edge task ->
  client of capacity 1 at that cost, and client -> sink with capacity *the number of those
  tasks the client holds now*; the current assignment is the starting flow, and negative
  cycles are cancelled. So every client keeps its count of the tasks optimised.
* **balance_subtopology**: the same, but each client has one node per subtopology, whose edge
  onwards carries at most ``ceil(held / T * tasks of that subtopology)`` tasks (Java double
  arithmetic), so one client does not collect a subtopology's tasks; the starting flow is
  found afresh by max flow (Ford-Fulkerson), so the answer need not stay close to the input.
* Each task then goes where its unit of flow ends (tasks in order; clients' edges in node
  order), leaving the client that held it.
* **Actives**: the stateful actives (after they are balanced, before standbys) and the
  stateless actives (after they are placed, at costs 1 and 0) are optimised over all clients.
  **Standbys**: for up to 4 rounds, while a round moves anything, each pair of clients (i < j,
  in the assignor's client order) in different racks where each holds standbys the other
  could take is optimised with min_traffic (the sticky assignor: the configured strategy).

Costs: ``rack_aware_assignment_traffic_cost`` and ``rack_aware_assignment_non_overlap_cost``,
or, when null, the assignor's defaults: high-availability 10 and 1 (traffic first). The sticky
assignor's defaults (1 and 10) never apply: Kafka's ``canPerformRackAwareOptimization`` needs
both costs configured, so the sticky assignor optimises only when both are set.

When it is off, as Kafka decides (no error, the plain assignment stands):

* high-availability: a consumer without ``rack``; two consumers of one client in different
  racks; a partition the task reads that ``partition_racks`` does not list, lists with no
  replicas, or lists with a replica on a broker without a rack (``null``); with standby
  replicas, the same for the changelog partitions. Checked once, for the whole assignment.
* sticky: a client whose first consumer (in the leader's subscription order) has no rack (its
  other consumers do not count); a partition without any rack among its replicas (a ``null``
  beside a rack is fine); actives and standbys are checked apart (standbys by changelogs).

Example (Kafka's RackAwareTaskAssignorTest): clients P1 (rack0), P2 (rack1), P3 (rack2), one
active task each before optimising except P1 with two: P1 {0_1, 1_1}, P2 {1_0}, P3 {0_0}.
Task 0_0 reads a partition with replicas in rack0 and rack1, 0_1 in rack1 and rack2, 1_0 in
rack0 and rack2, 1_1 in rack1 and rack3. Costs 10 and 1: now every task is cross-rack, 40.
min_traffic moves to P1 {0_0, 1_0}, P2 {1_1}, P3 {0_1}: no cross-rack read, four moves, cost 4.

What it trades: a traffic cost above the non-overlap cost buys less cross-rack traffic with
moved tasks (a moved stateful task restores its state); the reverse keeps tasks where they
are. balance_subtopology spreads each subtopology's tasks over the clients at the price of
more traffic, and may move tasks even when nothing is gained.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kassign.core.errors import KassignError
from kassign.core.releases import KAFKA_15022
from kassign.groups.streams.classic.scenario import StreamsClassicScenario

if TYPE_CHECKING:
    from kassign.groups.streams.classic.mincostflow import FlowGraph

HIGH_AVAILABILITY_COSTS = (10, 1)  # traffic, non-overlap: HighAvailabilityTaskAssignor's defaults
STICKY_COSTS = (1, 10)  # StickyTaskAssignor's defaults (unreachable, see above)
STATELESS_COSTS = (1, 0)
STANDBY_OPTIMIZER_MAX_ITERATION = 4
SOURCE_ID = -1

Partition = tuple[str, int]


def _java_int(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


# -- what a task reads and where it sits ----------------------------------------------------------


def task_partitions(scenario: StreamsClassicScenario) -> tuple[list[list[Partition]], list[list[Partition]]]:
    """Per task, its source partitions and its changelog partitions (task ``S_P`` reads partition P
    of each of subtopology S's topics)."""
    sources, changelogs = [], []
    for sub, part in scenario.tasks:
        sources.append([(topic, part) for topic in scenario.source_topics.get(sub, [])])
        changelogs.append([(topic, part) for topic in scenario.changelog_topics.get(sub, [])])
    return sources, changelogs


def _replicas(partition_racks: dict[str, list[list[str | None]]], partition: Partition) -> list[str | None] | None:
    topic, part = partition
    rows = partition_racks.get(topic)
    if rows is None or part >= len(rows):
        return None
    return rows[part]


def legacy_racks(partition_racks: dict, partitions: Iterable[Partition]) -> dict[Partition, frozenset] | None:
    """The high-availability assignor's reading: every replica must have a rack, else ``None``."""
    out = {}
    for partition in partitions:
        replicas = _replicas(partition_racks, partition)
        if not replicas or any(r is None for r in replicas):
            return None
        out[partition] = frozenset(replicas)
    return out


def kip924_racks(partition_racks: dict, partitions: Iterable[Partition]) -> dict[Partition, frozenset] | None:
    """The sticky assignor's reading (``RackUtils``): the racks among the replicas, at least one."""
    out = {}
    for partition in partitions:
        racks = frozenset(r for r in (_replicas(partition_racks, partition) or ()) if r is not None)
        if not racks:
            return None
        out[partition] = racks
    return out


def cross_rack_counts(partitions: Sequence[Sequence[Partition]], racks: dict[Partition, frozenset],
                      client_racks: Sequence[str], tasks: Iterable[int] | None = None) -> np.ndarray:
    """``[task, client]``: how many of the task's partitions have no replica in the client's rack
    (for ``tasks`` only when given; other rows stay 0)."""
    counts = np.zeros((len(partitions), len(client_racks)), dtype=np.int64)
    for t in range(len(partitions)) if tasks is None else tasks:
        parts = partitions[t]
        for c, rack in enumerate(client_racks):
            counts[t, c] = sum(rack not in racks[p] for p in parts)
    return counts


@dataclass
class Costs:
    """The cost function of one optimisation: ``cross[task, client] * traffic`` plus ``non_overlap``
    for a client that does not hold the task now, in Java ints."""

    cross: np.ndarray
    traffic: int
    non_overlap: int

    def __call__(self, task: int, client: int, in_current: bool) -> int:
        return _java_int(int(self.cross[task, client]) * self.traffic + (0 if in_current else self.non_overlap))


# -- the graph constructors -------------------------------------------------------------------------


def _flow_graph() -> FlowGraph:
    # numba loads only when a rack-aware assignment runs, not with every Streams assignment
    from kassign.groups.streams.classic.mincostflow import FlowGraph

    return FlowGraph()


@dataclass
class _Built:
    graph: FlowGraph
    task_client: dict[int, int] = field(default_factory=dict)  # the client that holds each task now
    held: dict[int, int] = field(default_factory=dict)  # per client (all clients): tasks of the list it holds


def _count_held(tasks: Sequence[int], all_clients: Iterable[int], holds: Callable[[int, int], bool]) -> dict[int, int]:
    held: dict[int, int] = {}
    clients = list(all_clients)
    for task in tasks:
        for c in clients:
            if holds(c, task):
                held[c] = held.get(c, 0) + 1
    return held


def _note_holder(built: _Built, task: int, client: int, has_replica: bool, name: Callable[[int], str]) -> None:
    if not has_replica and task in built.task_client:
        raise KassignError(f"Task {name(task)} assigned to multiple clients {name(~client)}, "
                           f"{name(~built.task_client[task])}")
    built.task_client[task] = client


class MinTraffic:
    """``MinTrafficGraphConstructor``: start from the current assignment, cancel negative cycles."""

    def build(self, clients: Sequence[int], tasks: Sequence[int], all_clients: Iterable[int],
              holds: Callable[[int, int], bool], cost: Costs, has_replica: bool, name: Callable[[int], str]) -> _Built:
        graph = _flow_graph()
        built = _Built(graph, held=_count_held(tasks, all_clients, holds))
        n_tasks = len(tasks)
        for node, task in enumerate(tasks):
            for j, c in enumerate(clients):
                flow = 1 if holds(c, task) else 0
                if flow:
                    _note_holder(built, task, c, has_replica, name)
                graph.add_edge(node, n_tasks + j, 1, cost(task, c, flow == 1), flow)
            if task not in built.task_client:
                raise KassignError(f"Task {name(task)} not assigned to any client")
            graph.add_edge(SOURCE_ID, node, 1, 0, 1)
        sink = n_tasks + len(clients)
        for j, c in enumerate(clients):
            capacity = built.held.get(c, 0)
            graph.add_edge(n_tasks + j, sink, capacity, 0, capacity)
        graph.source, graph.sink = SOURCE_ID, sink
        return built

    def placements(self, built: _Built, clients: Sequence[int], tasks: Sequence[int]) -> list[tuple[int, int, int]]:
        n_tasks = len(tasks)
        return [p for node, task in enumerate(tasks)
                for p in _placement(built, node, task, lambda dest: clients[dest - n_tasks])]


class BalanceSubtopology:
    """``BalanceSubtopologyGraphConstructor``: a per-subtopology cap on each client, a fresh max flow."""

    def __init__(self, groups: Sequence[Sequence[int]]) -> None:
        self.groups = [sorted(g) for g in groups]  # tasks per subtopology, subtopologies in order

    def build(self, clients: Sequence[int], tasks: Sequence[int], all_clients: Iterable[int],
              holds: Callable[[int, int], bool], cost: Costs, has_replica: bool, name: Callable[[int], str]) -> _Built:
        graph = _flow_graph()
        built = _Built(graph, held=_count_held(tasks, all_clients, holds))
        wanted = set(tasks)
        if not wanted <= {t for g in self.groups for t in g}:
            raise KassignError("rack-aware assignment: a task to optimise belongs to no subtopology")
        n_tasks, n_clients, n_groups = len(tasks), len(clients), len(self.groups)
        second_stage = n_tasks + n_clients * n_groups
        sink = n_clients + second_stage
        first_node = 0
        for g, group in enumerate(self.groups):
            members = [t for t in group if t in wanted]
            for j, c in enumerate(clients):
                client_node = n_tasks + n_clients * g + j
                for k, task in enumerate(members):
                    in_current = holds(c, task)
                    graph.add_edge(first_node + k, client_node, 1, cost(task, c, in_current), 0)
                    if in_current:
                        _note_holder(built, task, c, has_replica, name)
                if members:
                    held = built.held.get(c)
                    capacity = 0 if held is None else math.ceil(held * 1.0 / n_tasks * len(members))
                    graph.add_edge(client_node, second_stage + j, capacity, 0, 0)
            first_node += len(members)
        for node in range(first_node):
            graph.add_edge(SOURCE_ID, node, 1, 0, 0)
        for j, c in enumerate(clients):
            graph.add_edge(second_stage + j, sink, built.held.get(c, 0), 0, 0)
        graph.source, graph.sink = SOURCE_ID, sink
        max_flow = graph.calculate_max_flow()
        if max_flow != n_tasks:
            raise KassignError(f"rack-aware assignment: max flow calculated: {max_flow} doesn't match taskSize: {n_tasks}")
        return built

    def placements(self, built: _Built, clients: Sequence[int], tasks: Sequence[int]) -> list[tuple[int, int, int]]:
        wanted = set(tasks)
        n_tasks, n_clients = len(tasks), len(clients)
        out = []
        node = 0
        for g, group in enumerate(self.groups):
            for task in group:
                if task not in wanted:
                    continue
                out.extend(_placement(built, node, task, lambda dest, g=g: clients[dest - n_tasks - n_clients * g]))
                node += 1
        return out


def _placement(built: _Built, node: int, task: int, client_of: Callable[[int], int]) -> list[tuple[int, int, int]]:
    """Where the task's unit of flow goes: ``[(task, from, to)]``, empty when it stays."""
    for dest, edge in built.graph.edges(node).items():
        if edge.flow > 0:
            client = client_of(dest)
            original = built.task_client.get(task)
            if client == original:
                return []
            return [(task, original, client)]
    return []


def constructor(strategy: str, groups: Sequence[Sequence[int]]) -> MinTraffic | BalanceSubtopology:
    """``RackAwareGraphConstructorFactory.create``."""
    if strategy == "min_traffic":
        return MinTraffic()
    if strategy == "balance_subtopology":
        return BalanceSubtopology(groups)
    raise KassignError("Rack aware assignment is disabled")


def subtopology_groups(scenario_tasks: Sequence[tuple[int, int]], tasks: Iterable[int]) -> list[list[int]]:
    """The given tasks by subtopology, subtopologies in order."""
    groups: dict[int, list[int]] = {}
    for t in tasks:
        groups.setdefault(scenario_tasks[t][0], []).append(t)
    return [sorted(groups[s]) for s in sorted(groups)]


def optimize(make: MinTraffic | BalanceSubtopology, clients: Sequence[int], tasks: Sequence[int],
             all_clients: Iterable[int], holds: Callable[[int, int], bool], cost: Costs, has_replica: bool,
             move: Callable[[int, int, int], None], name: Callable[[int], str] = str,
             flow: str = KAFKA_15022) -> tuple[int, bool]:
    """Build, solve and apply one graph: the cost after, and whether any task moved. ``name(t)``
    names task ``t``, ``name(~c)`` client ``c`` (for Kafka's messages); ``flow``: the release's
    ``KSTREAMS_RACK_FLOW`` rule (how the solver searches for negative cycles)."""
    built = make.build(clients, tasks, all_clients, holds, cost, has_replica, name)
    built.graph.solve_min_cost_flow(flow)
    total = built.graph.total_cost()
    moves = make.placements(built, clients, tasks)
    for task, source, destination in moves:
        move(task, source, destination)
    return total, bool(moves)


def assignment_cost(clients: Sequence[int], tasks: Sequence[int], holds: Callable[[int, int], bool],
                    cost: Costs) -> int:
    """The cost of the assignment as it stands (every task on the clients holding it)."""
    return sum(cost(t, c, True) for t in tasks for c in clients if holds(c, t))


def optimize_standby_pairs(clients: Sequence[int], client_racks: Sequence[str], standbys: Callable[[int], Iterable[int]],
                           holds_any: Callable[[int, int], bool], may_move: Callable[[int, int, int], bool],
                           make: MinTraffic | BalanceSubtopology, all_clients: Sequence[int],
                           holds_standby: Callable[[int, int], bool], cost: Costs,
                           move: Callable[[int, int, int], None], name: Callable[[int], str] = str,
                           flow: str = KAFKA_15022) -> int:
    """``optimizeStandbyTasks``: pairs of clients in different racks, up to 4 rounds; the rounds run."""
    moved, rounds = True, 0
    while moved and rounds < STANDBY_OPTIMIZER_MAX_ITERATION:
        moved = False
        rounds += 1
        for i, first in enumerate(clients):
            for second in clients[i + 1:]:
                if client_racks[first] == client_racks[second]:
                    continue  # the same rack: moving cannot lower cross-rack traffic
                one = [t for t in sorted(standbys(first)) if not holds_any(second, t) and may_move(first, second, t)]
                two = [t for t in sorted(standbys(second)) if not holds_any(first, t) and may_move(second, first, t)]
                if not one or not two:
                    continue  # only swaps keep both loads, so both sides must offer a task
                pair = sorted((first, second))
                _, changed = optimize(make, pair, sorted(one + two), all_clients, holds_standby, cost, True, move, name,
                                      flow)
                moved |= changed
    return rounds


# -- the high-availability assignor's RackAwareTaskAssignor ---------------------------------------------


class LegacyRackAwareAssignor:
    """Kafka's ``RackAwareTaskAssignor`` as the high-availability assignor uses it; clients by
    index in UUID order, tasks by index in task order."""

    def __init__(self, strategy: str, tasks: Sequence[tuple[int, int]], sources: Sequence[Sequence[Partition]],
                 changelogs: Sequence[Sequence[Partition]], partition_racks: dict,
                 consumer_racks: Sequence[Sequence[str | None]], num_standby_replicas: int,
                 flow: str = KAFKA_15022) -> None:
        self.strategy = strategy
        self.flow = flow  # the release's KSTREAMS_RACK_FLOW rule
        self.tasks = list(tasks)
        self.sources, self.changelogs = sources, changelogs
        self.partition_racks = partition_racks
        self.num_standby_replicas = num_standby_replicas
        self.client_racks = self._client_racks(consumer_racks)
        self._enabled: bool | None = None
        self._racks: dict[Partition, frozenset] = {}
        self.process_ids: list[str] = []

    @classmethod
    def from_scenario(cls, scenario: StreamsClassicScenario, flow: str = KAFKA_15022) -> LegacyRackAwareAssignor:
        sources, changelogs = task_partitions(scenario)
        stateful_changelogs = [c if s else [] for c, s in zip(changelogs, scenario.stateful)]
        made = cls(scenario.rack_aware_assignment_strategy, scenario.tasks, sources, stateful_changelogs,
                   scenario.partition_racks, [[m.rack for m in c.consumers] for c in scenario.clients],
                   scenario.num_standby_replicas, flow)
        made.process_ids = [c.process_id for c in scenario.clients]
        return made

    @staticmethod
    def _client_racks(consumer_racks: Sequence[Sequence[str | None]]) -> list[str] | None:
        """``validateClientRack``: every consumer has a rack, the same within a client."""
        out = []
        for racks in consumer_racks:
            if not racks or any(r is None for r in racks) or len(set(racks)) > 1:
                return None
            out.append(racks[0])
        return out

    def name(self, task: int) -> str:
        """Task ``task``'s name; ``name(~c)``: client ``c``'s process id."""
        if task < 0:
            return self.process_ids[~task] if self.process_ids else f"client {~task}"
        return "%d_%d" % self.tasks[task]

    def can_enable(self) -> bool:
        """``canEnableRackAwareAssignor``, decided once."""
        if self.strategy == "none":
            return False
        if self._enabled is None:
            self._enabled = self.client_racks is not None and self._read_racks(self.sources)
            if self._enabled and self.num_standby_replicas > 0:
                self._enabled = self._read_racks(self.changelogs)
        return self._enabled

    def _read_racks(self, partitions: Sequence[Sequence[Partition]]) -> bool:
        racks = legacy_racks(self.partition_racks, (p for parts in partitions for p in parts))
        if racks is None:
            return False
        self._racks.update(racks)
        return True

    def _costs(self, tasks: Sequence[int], standby: bool, traffic: int, non_overlap: int) -> Costs:
        """The cost function over ``tasks``, refused as Kafka's ``getCost`` refuses."""
        if self.client_racks is None:
            raise KassignError("rack-aware assignment: a client has no rack configured; "
                               "check can_enable() first")
        partitions = self.changelogs if standby else self.sources
        for t in tasks:
            if not partitions[t]:
                raise KassignError(f"Task {self.name(t)} has no TopicPartitions")
            for p in partitions[t]:
                if p not in self._racks:
                    raise KassignError(f"TopicPartition {p[0]}-{p[1]} has no rack information. "
                                       "Maybe forgot to call canEnableRackAwareAssignor first")
        return Costs(cross_rack_counts(partitions, self._racks, self.client_racks, tasks), traffic, non_overlap)

    def active_tasks_cost(self, tasks: Sequence[int], active: Sequence[set[int]], traffic: int, non_overlap: int) -> int:
        if not tasks:
            return 0
        cost = self._costs(tasks, False, traffic, non_overlap)
        return assignment_cost(range(len(active)), tasks, lambda c, t: t in active[c], cost)

    def standby_tasks_cost(self, standby: Sequence[set[int]], traffic: int, non_overlap: int) -> int:
        tasks = sorted(set().union(*standby)) if standby else []
        if not tasks:
            return 0
        cost = self._costs(tasks, True, traffic, non_overlap)
        return assignment_cost(range(len(standby)), tasks, lambda c, t: t in standby[c], cost)

    def optimize_active_tasks(self, tasks: Sequence[int], clients, traffic: int, non_overlap: int) -> int:
        """``optimizeActiveTasks`` over ``clients`` (a high-availability ``Clients``): the cost after."""
        tasks = sorted(tasks)
        if not tasks:
            return 0
        cost = self._costs(tasks, False, traffic, non_overlap)
        groups = subtopology_groups(self.tasks, range(len(self.tasks)))
        everyone = list(range(len(clients)))

        def move(task: int, source: int, destination: int) -> None:
            clients.remove_active(source, task)
            clients.add_active(destination, task)

        def holds(c: int, t: int) -> bool:
            return t in clients.active[c]
        # Kafka first prices the assignment as it stands (for its log), which checks it: every task
        # on exactly one client
        MinTraffic().build(everyone, tasks, everyone, holds, cost, False, self.name)
        total, _ = optimize(constructor(self.strategy, groups), everyone, tasks, everyone, holds, cost, False, move,
                            self.name, self.flow)
        return total

    def optimize_standby_tasks(self, clients, traffic: int, non_overlap: int,
                               may_move: Callable[[int, int, int], bool]) -> int:
        """``optimizeStandbyTasks``: min_traffic over pairs of clients in different racks; the cost after."""
        everyone = list(range(len(clients)))
        standby_tasks = sorted(set().union(*clients.standby)) if everyone else []
        cost = self._costs(standby_tasks, True, traffic, non_overlap)

        def move(task: int, source: int, destination: int) -> None:
            clients.remove_standby(source, task)
            clients.add_standby(destination, task)

        optimize_standby_pairs(everyone, self.client_racks, lambda c: clients.standby[c], clients.holds, may_move,
                               MinTraffic(), everyone, lambda c, t: t in clients.standby[c], cost, move, self.name,
                               self.flow)
        return assignment_cost(everyone, standby_tasks, lambda c, t: t in clients.standby[c], cost)


def tag_standby_predicate(client_tags: Sequence[dict[str, str]], holds: Callable[[int, int], bool],
                          n_clients: int) -> Callable[[int, int, int], bool]:
    """``ClientTagAwareStandbyTaskAssignor.isAllowedTaskMovement`` (per task): the move keeps at
    least as many distinct tags among the task's copies."""
    def may_move(source: int, destination: int, task: int) -> bool:
        others: set[tuple[str, str]] = set()
        for c in range(n_clients):
            if c not in (source, destination) and holds(c, task):
                others.update(client_tags[c].items())
        with_source = others | set(client_tags[source].items())
        with_destination = others | set(client_tags[destination].items())
        return len(with_destination) >= len(with_source)
    return may_move


def configured_costs(scenario: StreamsClassicScenario, defaults: tuple[int, int]) -> tuple[int, int]:
    """``(traffic, non_overlap)``: the scenario's rack-aware costs, each of ``defaults`` where it gives none
    (the assignors' own defaults differ: :data:`HIGH_AVAILABILITY_COSTS`, :data:`STICKY_COSTS`)."""
    traffic, non_overlap = defaults
    if scenario.rack_aware_assignment_traffic_cost is not None:
        traffic = scenario.rack_aware_assignment_traffic_cost
    if scenario.rack_aware_assignment_non_overlap_cost is not None:
        non_overlap = scenario.rack_aware_assignment_non_overlap_cost
    return traffic, non_overlap


def high_availability_costs(scenario: StreamsClassicScenario) -> tuple[int, int]:
    return configured_costs(scenario, HIGH_AVAILABILITY_COSTS)


# -- the sticky assignor's TaskAssignmentUtils ------------------------------------------------------------


class Kip924RackAware:
    """``TaskAssignmentUtils.optimizeRackAware*Tasks`` as Kafka Streams' StickyTaskAssignor calls
    them. ``client_order``: the clients as its ``HashMap`` of ``KafkaStreamsState`` iterates them."""

    def __init__(self, scenario: StreamsClassicScenario, client_order: Sequence[int]) -> None:
        self.scenario = scenario
        self.client_order = list(client_order)
        sources, changelogs = task_partitions(scenario)
        self.changelogs = [c if s else [] for c, s in zip(changelogs, scenario.stateful)]
        # the task's TaskTopicPartitions: source and changelog partitions, each once
        self.all_partitions = [list(dict.fromkeys(s + c)) for s, c in zip(sources, self.changelogs)]
        # KafkaStreamsState.rackId: the rack of the first consumer the leader met for the client
        first: dict[int, str | None] = {}
        for ci, mi in scenario.subscription_order:
            first.setdefault(ci, scenario.clients[ci].consumers[mi].rack)
        self.client_racks = [first.get(ci) for ci in range(len(scenario.clients))]

    def name(self, task: int) -> str:
        return self.scenario.clients[~task].process_id if task < 0 else self.scenario.task_name(task)

    def _enabled(self, standby: bool) -> dict[Partition, frozenset] | None:
        s = self.scenario
        if (s.rack_aware_assignment_strategy == "none" or s.rack_aware_assignment_traffic_cost is None
                or s.rack_aware_assignment_non_overlap_cost is None):
            return None
        if any(r is None for r in self.client_racks):
            return None
        partitions = self.changelogs if standby else self.all_partitions
        return kip924_racks(s.partition_racks, (p for parts in partitions for p in parts))

    def optimize_active(self, tasks: Sequence[int], traffic: int, non_overlap: int,
                        holds: Callable[[int, int], bool], move: Callable[[int, int, int], None]) -> None:
        tasks = sorted(tasks)
        if not tasks:
            return
        racks = self._enabled(False)
        if racks is None:
            return
        cost = Costs(cross_rack_counts(self.all_partitions, racks, self.client_racks), traffic, non_overlap)
        make = constructor(self.scenario.rack_aware_assignment_strategy, subtopology_groups(self.scenario.tasks, tasks))
        MinTraffic().build(self.client_order, tasks, self.client_order, holds, cost, False, self.name)  # Kafka's check
        optimize(make, self.client_order, tasks, self.client_order, holds, cost, False, move, self.name)

    def optimize_standby(self, standbys: Callable[[int], Iterable[int]], holds_any: Callable[[int, int], bool],
                         holds_standby: Callable[[int, int], bool], traffic: int, non_overlap: int,
                         move: Callable[[int, int, int], None]) -> None:
        order = self.client_order
        tasks = sorted({t for c in order for t in standbys(c)})
        if not tasks:
            return
        racks = self._enabled(True)
        if racks is None:
            return
        cost = Costs(cross_rack_counts(self.changelogs, racks, self.client_racks), traffic, non_overlap)
        make = constructor(self.scenario.rack_aware_assignment_strategy, subtopology_groups(self.scenario.tasks, tasks))
        # Kafka's movable-task filter compares the source with itself (its destination state is the
        # source's), so with client tags every standby may move, as without them.
        optimize_standby_pairs(order, self.client_racks, standbys, holds_any, lambda s, d, t: True, make, order,
                               holds_standby, cost, move, self.name)


def sticky_costs(scenario: StreamsClassicScenario) -> tuple[int, int]:
    return configured_costs(scenario, STICKY_COSTS)
