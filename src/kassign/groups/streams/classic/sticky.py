"""Kafka Streams' own StickyTaskAssignor (KIP-924, ``task.assignor.class``): tasks stay where they ran.

Kafka 3.8 brought it; earlier releases have only the high-availability assignor (asking for
``sticky`` as 3.7 or older is a :class:`~kassign.core.errors.KassignError`).

This assignor ignores lags; it goes by what each client held before: its *previous active*
tasks (those its consumers own, and those reported with offset sum -2) and its *previous
standby* tasks (the other tasks it reported offset sums for). A client's load is its assigned
tasks (active and standby) per stream thread. Steps 1 and 2 give a client back a task only
while it has *room* for another active task, and the releases differ there:

* 3.8 to 4.3: while it holds fewer than ``threads x (tasks // all threads)``;
* 4.4 (KAFKA-20198): while it holds fewer than ``ceil(tasks x threads / all threads)``, its
  fair share rounded up (Java ``int`` arithmetic).

So in 3.8 to 4.3 a client keeps less than its share whenever the tasks do not divide evenly
over all threads (450 tasks over two clients of 10 threads: 220 each, not 225), and the rest
goes round through step 3; a group scaling out took several rebalances to settle.

1. Each task goes back to its previous active client while that one has room (tasks in the
   order of Kafka's ``HashMap`` of previous actives).
2. Each task still open goes to the first of its previous standby clients with room.
3. The rest, in task order, go to the best client: the previous active client, else the least
   loaded previous standby client; but if that one holds a task per thread or more while some
   client is lighter, the least loaded previous standby client instead, unless it is as loaded,
   then simply the least loaded client. "Least loaded" prefers a client without a pair of
   co-assigned tasks it would repeat (Kafka's ``TaskPairs``: two tasks once put on one client
   are a pair) and takes the first client in ``HashSet`` order among equals; an empty client
   wins at once.
4. Standbys: each stateful task gets ``num_standby_replicas`` standbys, each on the best client
   (as in step 3) among those without a copy.

No probing rebalance follows (the assignor asks for none).

Example: two clients with one thread each, A (UUID ``00..01``) owning ``0_0`` and ``0_1``, B
(``00..02``) owning nothing; tasks ``0_0`` to ``0_2``, stateless.

* Kafka 4.3: A's room is 1 x (3 // 2) = 1. Step 1 gives A one of its tasks (the first of
  ``0_0``, ``0_1`` in the HashMap: ``0_1``, whose hash falls in an earlier bucket), then A is
  full. Step 3: ``0_0`` would go back to A, but A holds one task per thread and B holds none, so
  B (empty) takes it; ``0_2`` goes to the least loaded client, both holding one task: the first
  in HashSet order, A. Answer: A ``0_1``, ``0_2``; B ``0_0`` (a task moved).
* Kafka 4.4: A's room is ceil(3 x 1 / 2) = 2, so A keeps ``0_0`` and ``0_1``; step 3 gives
  ``0_2`` to the empty B. Answer: A ``0_0``, ``0_1``; B ``0_2`` (nothing moved).

Where Kafka's answer is not reproducible, kassign says how it chooses: Kafka walks the stateful
tasks for standbys in a ``HashSet`` of task descriptions hashed by object identity, so the order
(and, where loads tie, the standbys' placement) changes from run to run; kassign takes them in
task order, one of the orders Kafka can take. Without standby replicas the answer is exact.
With ``rack_aware_assignment_strategy`` (KIP-925) and both rack-aware costs set, a min-cost flow
trims cross-rack traffic after step 3 (stateful actives at the configured costs, then stateless
actives at 1 and 0) and after step 4 (standbys); a moved task leaves its client's map of tasks
and joins the end of the other's. See :mod:`kassign.groups.streams.classic.rack_aware`. ``HashSet`` copies follow JDK 17 (a
copied set's table is sized ``size / 0.75 + 1``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from kassign.core.errors import KassignError
from kassign.core.javaorder import copy_constructor_capacity, table_size_for
from kassign.groups.streams.classic.scenario import task_hash
from kassign.core.javasets import hash_set_order, may_have_tree_bins
from kassign.groups.streams.classic.rack_aware import STATELESS_COSTS, Kip924RackAware, sticky_costs
from kassign.groups.streams.classic.scenario import LATEST_OFFSET, StreamsClassicScenario
from kassign.core.releases import KSTREAMS_STICKY_ROOM, LATEST, THREADS_TIMES_FLOOR, KafkaRelease, rule

_INT_MASK = 0xFFFFFFFF


def _java_int(value: int) -> int:
    value &= _INT_MASK
    return value - (1 << 32) if value >> 31 else value


def previous_tasks(scenario: StreamsClassicScenario, merged_sums: list[dict[int, int]]) -> tuple[list, list]:
    """Per client, its previous active tasks (owned, or reported with -2) and previous standby
    tasks (reported otherwise), as ``ClientState`` derives them."""
    active, standby = [], []
    for ci, client in enumerate(scenario.clients):
        owned = {t for c in client.consumers for t in c.owned}
        sums = merged_sums[ci]
        active.append(owned | {t for t, s in sums.items() if s == LATEST_OFFSET})
        standby.append({t for t, s in sums.items() if t not in owned and s != LATEST_OFFSET})
    return active, standby


def partition_grouper_order(tasks: Sequence[tuple[int, int]]) -> list[int]:
    """The tasks (``(subtopology, partition)``, sorted) in the order Kafka's ``PartitionGrouper`` puts
    them in its map: subtopologies as a ``HashMap`` of subtopologies iterates them, each one's
    partitions in order."""
    first: dict[int, int] = {}
    count: dict[int, int] = {}
    for t, (sub, _) in enumerate(tasks):
        first.setdefault(sub, t)
        count[sub] = count.get(sub, 0) + 1
    subtopologies = list(first)  # ascending
    # Subtopology.hashCode is Objects.hash(id, null); ids 0..n-1, as Kafka numbers them, never
    # share a bucket, so the map's own filling order (taken as ascending here) cannot show.
    order = hash_set_order([((31 + sub) * 31) & _INT_MASK for sub in subtopologies], subtopologies)
    return [first[sub] + p for sub in order for p in range(count[sub])]


@lru_cache(maxsize=16)
def _task_orders(tasks: tuple[tuple[int, int], ...]) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """What follows from the task list alone, worked out once per topology (a simulator asks for the
    same one rebalance after rebalance): each task's hash code; ``new HashSet<>(allTaskIds)``, Kafka's
    map of tasks (filled as the partition grouper lists them) copied; and whether a tree bin may form in
    that copy, so that removing tasks from it could reorder it."""
    hashes = [task_hash(*t) for t in tasks]
    grouped = partition_grouper_order(tasks)
    in_map = hash_set_order([hashes[t] for t in grouped], grouped)  # the grouper's map
    in_map = hash_set_order([hashes[t] for t in in_map], in_map)  # the task map built from it
    capacity = copy_constructor_capacity(len(in_map))
    unassigned = hash_set_order([hashes[t] for t in in_map], in_map, capacity)
    spread = np.asarray([hashes[t] for t in unassigned], dtype=np.int64)
    spread ^= spread >> 16
    return tuple(hashes), tuple(unassigned), may_have_tree_bins(spread, int(table_size_for(capacity)))


class StickyAssignor:
    """One run of Kafka Streams' StickyTaskAssignor; clients by index in UUID order."""

    def __init__(self, scenario: StreamsClassicScenario, merged_sums: list[dict[int, int]],
                 release: KafkaRelease = LATEST) -> None:
        self.scenario = scenario
        self.n_tasks = len(scenario.tasks)
        self.room_rule = rule(release, KSTREAMS_STICKY_ROOM)
        self.task_hashes, self._unassigned, self._removals_may_reorder = _task_orders(tuple(scenario.tasks))
        self.client_hashes = [c.hash_code for c in scenario.clients]
        self.capacity = [c.capacity for c in scenario.clients]
        self.prev_active, self.prev_standby = previous_tasks(scenario, merged_sums)
        # What each client was given, in order (its KafkaStreamsAssignment's map), and task kinds.
        self.given: list[list[int]] = [[] for _ in scenario.clients]
        self.held: list[set[int]] = [set() for _ in scenario.clients]
        self.active: list[set[int]] = [set() for _ in scenario.clients]
        self.locations: dict[int, set[int]] = {}
        self.loads = [0.0] * len(scenario.clients)  # tasks per thread
        # taskCount * (taskCount - 1) / 2 in Java ints: the product wraps, the division truncates
        product = _java_int(self.n_tasks * (self.n_tasks - 1))
        self.max_pairs = product // 2 if product >= 0 else -(-product // 2)
        if self.max_pairs < 0:
            raise KassignError(f"Kafka Streams' sticky task assignor fails for {self.n_tasks:,} tasks: the number of "
                               "task pairs it sizes a HashSet for overflows a Java int (its IllegalArgumentException)")
        # Task pairs as ints (lower * n_tasks + higher): cheaper to build and look up than tuples.
        self.pairs: set[int] = set()
        self._client_order = self._streams_states_order()
        # The same HashSets of clients are built again and again (the clients without a copy of a
        # task; the previous standby clients of a task): their orders, worked out once.
        self._sets_without: dict[frozenset[int], list[int]] = {}
        self._standby_copies: dict[int, list[int]] = {}

    # -- Java's orders ------------------------------------------------------------------------

    def _streams_states_order(self) -> list[int]:
        """Clients as the assignor's map of KafkaStreamsState iterates them: a HashMap filled from
        the leader's HashMap of client metadata, itself filled as subscriptions reveal clients."""
        seen: list[int] = []
        known: set[int] = set()
        for ci, _ in self.scenario.subscription_order:
            if ci not in known:
                known.add(ci)
                seen.append(ci)
        first = hash_set_order([self.client_hashes[c] for c in seen], seen)
        return hash_set_order([self.client_hashes[c] for c in first], first)

    def _client_set(self, clients: list[int], capacity: int | None = None) -> list[int]:
        return hash_set_order([self.client_hashes[c] for c in clients], clients, capacity)

    # -- state ----------------------------------------------------------------------------------

    def load(self, c: int) -> float:
        return self.loads[c]

    def finalize(self, task: int, client: int, active: bool) -> None:
        n = self.n_tasks
        self.pairs.update([other * n + task if other < task else task * n + other for other in self.held[client]])
        self.given[client].append(task)
        self.loads[client] = len(self.given[client]) / self.capacity[client]
        self.held[client].add(task)
        if active:
            self.active[client].add(task)
        self.locations.setdefault(task, set()).add(client)

    def active_limits(self) -> list[int]:
        """Per client, how many active tasks it may hold while steps 1 and 2 give tasks back: its threads x
        floor(tasks / all threads) (3.8 to 4.3), or ceil(tasks x its threads / all threads) in Java int
        arithmetic (4.4, KAFKA-20198)."""
        total = sum(self.capacity)
        if self.room_rule == THREADS_TIMES_FLOOR:
            per_thread = self.n_tasks // total
            return [capacity * per_thread for capacity in self.capacity]
        limits = []
        for capacity in self.capacity:
            numerator = _java_int(self.n_tasks * capacity + total - 1)
            # Java's int division truncates toward zero (a wrapped, negative numerator gives no room at all)
            limits.append(numerator // total if numerator >= 0 else -(-numerator // total))
        return limits

    def has_room(self, c: int, limits: list[int]) -> bool:
        return len(self.active[c]) < limits[c]

    def has_new_pair(self, task: int, client: int) -> bool:
        if len(self.pairs) == self.max_pairs:
            return False
        pairs, n = self.pairs, self.n_tasks
        return any((t * n + task if t < task else task * n + t) not in pairs for t in self.held[client])

    # -- choosing a client ----------------------------------------------------------------------

    def least_loaded(self, task: int, clients: list[int]) -> int | None:
        loads = self.loads
        best, best_load = None, 0.0
        for c in clients:
            load = loads[c]
            if load == 0:
                return c
            if (best is None or load < best_load) and self.has_new_pair(task, c):
                best, best_load = c, load
        if best is not None:
            return best
        for c in clients:
            if best is None or loads[c] < best_load:
                best, best_load = c, loads[c]
        return best

    def least_loaded_previous_standby(self, task: int, clients: list[int]) -> int | None:
        copy = self._standby_copies.get(task)
        if copy is None:
            ids = self.standby_clients.get(task, [])
            # new HashSet<>(ids), then retainAll(clients): the copy's table, the survivors in place
            copy = self._standby_copies[task] = self._client_set(ids, copy_constructor_capacity(len(ids)))
        within = set(clients)
        return self.least_loaded(task, [c for c in copy if c in within])

    def should_balance(self, client: int) -> bool:
        load = self.loads[client]
        return load >= 1 and min(self.loads) < load

    def best_client(self, task: int, clients: list[int]) -> int:
        if len(clients) == 1:
            return clients[0]
        previous = self.active_client.get(task)
        if previous is None or previous not in clients:
            previous = self.least_loaded_previous_standby(task, clients)
        if previous is None:
            return self.least_loaded(task, clients)
        if self.should_balance(previous):
            standby = self.least_loaded_previous_standby(task, clients)
            if standby is None or self.should_balance(standby):
                return self.least_loaded(task, clients)
            return standby
        return previous

    # -- the assignment -------------------------------------------------------------------------

    def assign(self) -> None:
        order = self._client_order
        # Previous owners: HashMap<TaskId, ProcessId> (the last client met wins) and
        # HashMap<TaskId, HashSet<ProcessId>>, filled client by client, tasks in order.
        active_client: dict[int, int] = {}
        standby_sets: dict[int, list[int]] = {}
        for c in order:
            for task in sorted(self.prev_active[c]):
                active_client[task] = c
            for task in sorted(self.prev_standby[c]):
                standby_sets.setdefault(task, []).append(c)
        self.active_client = active_client
        self.standby_clients = {t: self._client_set(cs) for t, cs in standby_sets.items()}
        active_keys = hash_set_order([self.task_hashes[t] for t in active_client], list(active_client))

        self._assign_active(active_keys)
        rack_aware = self._rack_aware()
        if rack_aware is not None:
            self._optimize_active(rack_aware)
        self._assign_standbys()
        if rack_aware is not None and self.scenario.num_standby_replicas > 0:
            self._optimize_standby(rack_aware)

    # -- rack-aware optimisation (KIP-925) --------------------------------------------------------

    def _rack_aware(self) -> Kip924RackAware | None:
        if self.scenario.rack_aware_assignment_strategy == "none":
            return None
        return Kip924RackAware(self.scenario, self._client_order)

    def _move(self, task: int, source: int, destination: int, active: bool) -> None:
        self.given[source].remove(task)
        self.held[source].discard(task)
        self.given[destination].append(task)
        self.held[destination].add(task)
        if active:
            self.active[source].discard(task)
            self.active[destination].add(task)
        self.locations[task].discard(source)
        self.locations[task].add(destination)

    def _optimize_active(self, rack_aware: Kip924RackAware) -> None:
        stateful = self.scenario.stateful
        active = self.active
        traffic, non_overlap = sticky_costs(self.scenario)

        def holds(c: int, t: int) -> bool:
            return t in active[c]

        def move(t: int, s: int, d: int) -> None:
            self._move(t, s, d, True)
        rack_aware.optimize_active([t for t in range(self.n_tasks) if stateful[t]], traffic, non_overlap, holds, move)
        rack_aware.optimize_active([t for t in range(self.n_tasks) if not stateful[t]], *STATELESS_COSTS, holds, move)

    def _optimize_standby(self, rack_aware: Kip924RackAware) -> None:
        active, held = self.active, self.held

        def standbys(c: int) -> list[int]:
            return [t for t in held[c] if t not in active[c]]

        def holds_standby(c: int, t: int) -> bool:
            return t in held[c] and t not in active[c]

        def move(t: int, s: int, d: int) -> None:
            self._move(t, s, d, False)
        rack_aware.optimize_standby(standbys, lambda c, t: t in held[c], holds_standby, *sticky_costs(self.scenario), move)

    def _assign_active(self, active_keys: list[int]) -> None:
        limits = self.active_limits()
        unassigned = self._unassigned
        open_tasks = set(unassigned)
        for task in active_keys:
            client = self.active_client[task]
            if self.has_room(client, limits):
                self.finalize(task, client, True)
                open_tasks.discard(task)
        if len(open_tasks) < len(unassigned) and self._removals_may_reorder:
            raise KassignError(
                "kassign cannot reproduce the order in which Kafka Streams' sticky assignor revisits tasks here "
                "(its HashSet of tasks holds tree bins, and removals reorder them); the high-availability "
                "assignor has no such limit")
        for task in unassigned:
            if task not in open_tasks:
                continue
            for client in self.standby_clients.get(task, ()):
                if self.has_room(client, limits):
                    self.finalize(task, client, True)
                    open_tasks.discard(task)
                    break
        everyone = self._client_set(self._client_order)
        for task in sorted(open_tasks):
            self.finalize(task, self.best_client(task, everyone), True)

    def _assign_standbys(self) -> None:
        wanted = self.scenario.num_standby_replicas
        if wanted <= 0:
            return
        for task in (t for t, stateful in enumerate(self.scenario.stateful) if stateful):
            for _ in range(wanted):
                holders = frozenset(self.locations.get(task, ()))
                candidates = self._sets_without.get(holders)
                if candidates is None:
                    candidates = self._client_set([c for c in self._client_order if c not in holders])
                    self._sets_without[holders] = candidates
                if not candidates:
                    break  # Kafka logs that the standbys could not all be placed
                self.finalize(task, self.best_client(task, candidates), False)

    # -- what the thread split reads ------------------------------------------------------------

    def thread_split_orders(self, client: int) -> tuple[list[int], list[int], list[int]]:
        """The client's stateful actives, standbys and stateless actives in the iteration order of
        the sets ``ClientState`` hands the thread split after ``setAssignedTasks``: HashSets filled
        from the assignment's HashMap of tasks."""
        hashes, stateful = self.task_hashes, self.scenario.stateful
        given = self.given[client]
        in_map = hash_set_order([hashes[t] for t in given], given)
        active_set = [t for t in in_map if t in self.active[client]]
        actives = hash_set_order([hashes[t] for t in active_set], active_set)
        standby_set = [t for t in in_map if t not in self.active[client]]
        standbys = hash_set_order([hashes[t] for t in standby_set], standby_set)
        stateful_actives = [t for t in actives if stateful[t]]
        stateless_actives = [t for t in actives if not stateful[t]]
        return (hash_set_order([hashes[t] for t in stateful_actives], stateful_actives), standbys,
                hash_set_order([hashes[t] for t in stateless_actives], stateless_actives))
