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
from kassign.groups.streams.classic.sticky_kernels import (DONE, REORDERS, assign_actives, assign_standbys, given_lists,
                                                          new_pairs)

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


class _State:
    """The arrays :mod:`~kassign.groups.streams.classic.sticky_kernels` keep the assignment in (see there)."""

    def __init__(self, n_clients: int, n_tasks: int, wanted: int, capacity: list[int]) -> None:
        self.n_tasks = n_tasks
        self.capacity = np.asarray(capacity, dtype=np.int64)
        copies = max(1, min(1 + wanted, n_clients))  # of a task: its active and standbys on other clients
        self.slots = n_tasks * copies
        self.loc = np.empty((n_tasks, copies), dtype=np.int64)
        self.pairs, self.meta = new_pairs(n_tasks)
        self._fill(n_clients)

    def _fill(self, n_clients: int) -> None:
        self.count = np.zeros(n_clients, dtype=np.int64)
        self.n_active = np.zeros(n_clients, dtype=np.int64)
        self.loads = np.zeros(n_clients, dtype=np.float64)
        self.head = np.full(n_clients, -1, dtype=np.int64)
        self.tail = np.full(n_clients, -1, dtype=np.int64)
        self.slot_task = np.empty(self.slots, dtype=np.int64)
        self.slot_next = np.empty(self.slots, dtype=np.int64)
        self.slot_active = np.empty(self.slots, dtype=np.bool_)
        self.nloc = np.zeros(self.n_tasks, dtype=np.int64)

    def arrays(self) -> tuple:
        return (self.capacity, self.count, self.n_active, self.loads, self.head, self.tail, self.slot_task,
                self.slot_next, self.slot_active, self.loc, self.nloc, self.pairs, self.meta)

    def holders(self, task: int) -> list[int]:
        return self.loc[task, :self.nloc[task]].tolist()

    def load(self, given: list[list[int]], active: list[set[int]]) -> None:
        """The arrays again from ``given`` and ``active`` (after the rack-aware moves); the pairs stay."""
        self._fill(len(given))
        s = 0
        for c, tasks in enumerate(given):
            if not tasks:
                continue
            self.head[c] = s
            for task in tasks:
                self.slot_task[s] = task
                self.slot_active[s] = task in active[c]
                self.slot_next[s] = s + 1
                self.loc[task, self.nloc[task]] = c
                self.nloc[task] += 1
                s += 1
            self.slot_next[s - 1] = -1
            self.tail[c] = s - 1
            self.count[c] = len(tasks)
            self.n_active[c] = len(active[c])
        self.loads[:] = self.count / self.capacity
        self.meta[0] = s


class StickyAssignor:
    """One run of Kafka Streams' StickyTaskAssignor; clients by index in UUID order. The steps run over arrays
    (:mod:`kassign.groups.streams.classic.sticky_kernels`); this class works out the Java orders they walk and
    hands the answer on: ``given`` (per client, its tasks in the order it was given them) and ``active``."""

    def __init__(self, scenario: StreamsClassicScenario, merged_sums: list[dict[int, int]],
                 release: KafkaRelease = LATEST) -> None:
        self.scenario = scenario
        self.n_tasks = len(scenario.tasks)
        self.room_rule = rule(release, KSTREAMS_STICKY_ROOM)
        self.task_hashes, self._unassigned, self._removals_may_reorder = _task_orders(tuple(scenario.tasks))
        self.client_hashes = [c.hash_code for c in scenario.clients]
        self.capacity = [c.capacity for c in scenario.clients]
        self.prev_active, self.prev_standby = previous_tasks(scenario, merged_sums)
        # What each client was given, in order (its KafkaStreamsAssignment's map), and its active tasks.
        self.given: list[list[int]] = [[] for _ in scenario.clients]
        self.active: list[set[int]] = [set() for _ in scenario.clients]
        # taskCount * (taskCount - 1) / 2 in Java ints: the product wraps, the division truncates
        product = _java_int(self.n_tasks * (self.n_tasks - 1))
        self.max_pairs = product // 2 if product >= 0 else -(-product // 2)
        if self.max_pairs < 0:
            raise KassignError(f"Kafka Streams' sticky task assignor fails for {self.n_tasks:,} tasks: the number of "
                               "task pairs it sizes a HashSet for overflows a Java int (its IllegalArgumentException)")
        self._client_order = self._streams_states_order()
        self._state = _State(len(scenario.clients), self.n_tasks, max(0, scenario.num_standby_replicas), self.capacity)

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

    def _previous_orders(self) -> tuple[np.ndarray, list[int], tuple[np.ndarray, ...]]:
        """Each task's previous active client (-1: none), the tasks of that HashMap in its order, and per task
        its previous standby clients as their HashSet iterates them and as a copy of it iterates them (offsets,
        clients; offsets, clients)."""
        # Previous owners: HashMap<TaskId, ProcessId> (the last client met wins) and
        # HashMap<TaskId, HashSet<ProcessId>>, filled client by client, tasks in order.
        active_client: dict[int, int] = {}
        standby_sets: dict[int, list[int]] = {}
        for c in self._client_order:
            for task in sorted(self.prev_active[c]):
                active_client[task] = c
            for task in sorted(self.prev_standby[c]):
                standby_sets.setdefault(task, []).append(c)
        previous = np.full(self.n_tasks, -1, dtype=np.int64)
        keys = list(active_client)
        previous[keys] = list(active_client.values())
        active_keys = hash_set_order([self.task_hashes[t] for t in keys], keys)
        standby_ptr = np.zeros(self.n_tasks + 1, dtype=np.int64)
        copy_ptr = np.zeros(self.n_tasks + 1, dtype=np.int64)
        standbys: list[int] = []
        copies: list[int] = []
        for task in sorted(standby_sets):
            ids = standby_sets[task]
            if len(ids) > 1:
                ids = self._client_set(ids)
            standbys += ids
            standby_ptr[task + 1] = len(ids)
            # new HashSet<>(ids), then retainAll(clients): the copy's table, the survivors in place (a copy of
            # up to 8 keys has the original's 16 buckets and order)
            if len(ids) > 8:
                ids = self._client_set(ids, copy_constructor_capacity(len(ids)))
            copies += ids
            copy_ptr[task + 1] = len(ids)
        np.cumsum(standby_ptr, out=standby_ptr)
        np.cumsum(copy_ptr, out=copy_ptr)
        return previous, active_keys, (standby_ptr, np.asarray(standbys, dtype=np.int64), copy_ptr,
                                       np.asarray(copies, dtype=np.int64))

    def _without_copy_orders(self, wanted: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the standby step's HashSets of the clients without a copy of a task (all clients but at most
        ``wanted``, added in the order of the map of clients): the spread hash of each client, and for each table
        size such a set can have where none of them can crowd a bucket (9 keys at a table size it passes through:
        the first ``3c/4 + 1`` keys sit in a table of ``c`` buckets, among the first ``3c/4 + 1 + wanted`` clients),
        the order of all clients in a table of that size."""
        hashes = np.asarray(self.client_hashes, dtype=np.int64)
        spreads = hashes ^ (hashes >> 16)
        order = np.asarray(self._client_order, dtype=np.int64)
        in_order = spreads[order]
        n = len(order)
        tables: list[int] = []
        perms: list[np.ndarray] = []
        for size in range(max(n - wanted, 1), n):
            table = 16
            while size > table * 3 // 4:
                table *= 2
            if table in tables:
                continue
            c = 16
            while c <= table:
                keys = in_order[:min(n, c * 3 // 4 + 1 + wanted)]
                if np.bincount(keys & (c - 1), minlength=c).max() >= 9:
                    break
                c *= 2
            else:
                tables.append(table)
                perms.append(order[np.argsort(in_order & (table - 1), kind="stable")])
        stacked = np.asarray(perms, dtype=np.int64).reshape(len(perms), n)
        return spreads, np.asarray(tables, dtype=np.int64), stacked

    # -- the assignment -------------------------------------------------------------------------

    def assign(self) -> None:
        previous, active_keys, (standby_ptr, standbys, copy_ptr, copies) = self._previous_orders()
        state = self._state
        everyone = np.asarray(self._client_set(self._client_order), dtype=np.int64)
        status, state.pairs = assign_actives(
            np.asarray(self.active_limits(), dtype=np.int64), np.asarray(active_keys, dtype=np.int64), previous,
            np.asarray(self._unassigned, dtype=np.int64), standby_ptr, standbys, copy_ptr, copies, everyone,
            self._removals_may_reorder, self.max_pairs, *state.arrays())
        if status == REORDERS:
            raise KassignError(
                "kassign cannot reproduce the order in which Kafka Streams' sticky assignor revisits tasks here "
                "(its HashSet of tasks holds tree bins, and removals reorder them); the high-availability "
                "assignor has no such limit")
        rack_aware = self._rack_aware()
        if rack_aware is not None:
            self._read_state()
            self._optimize_active(rack_aware)
            state.load(self.given, self.active)
        self._assign_standbys(previous, copy_ptr, copies)
        self._read_state()
        if rack_aware is not None and self.scenario.num_standby_replicas > 0:
            self._optimize_standby(rack_aware)

    def _assign_standbys(self, previous: np.ndarray, copy_ptr: np.ndarray, copies: np.ndarray) -> None:
        wanted = self.scenario.num_standby_replicas
        if wanted <= 0:
            return
        stateful = np.flatnonzero(np.asarray(self.scenario.stateful, dtype=bool)).astype(np.int64)
        spreads, tables, perms = self._without_copy_orders(wanted)
        order = np.asarray(self._client_order, dtype=np.int64)
        state = self._state
        start, forced = 0, np.empty(0, dtype=np.int64)
        while True:
            status, start, state.pairs = assign_standbys(stateful, wanted, start, forced, order, spreads, tables, perms,
                                                         previous, copy_ptr, copies, self.max_pairs, *state.arrays())
            if status == DONE:
                return
            # a set of clients that may hold a tree bin: the general model orders it
            holders = set(state.holders(int(stateful[start // wanted])))
            forced = np.asarray(self._client_set([c for c in self._client_order if c not in holders]), dtype=np.int64)

    def _read_state(self) -> None:
        """``given`` and ``active`` from the arrays."""
        state = self._state
        ptr, tasks, active = given_lists(state.head, state.slot_task, state.slot_next, state.slot_active, state.count)
        bounds = ptr.tolist()
        flat = tasks.tolist()
        self.given = [flat[bounds[c]:bounds[c + 1]] for c in range(len(bounds) - 1)]
        actives = tasks[active].tolist()
        active_bounds = [0, *np.cumsum(state.n_active).tolist()]
        self.active = [set(actives[active_bounds[c]:active_bounds[c + 1]]) for c in range(len(bounds) - 1)]

    # -- rack-aware optimisation (KIP-925) --------------------------------------------------------

    def _rack_aware(self) -> Kip924RackAware | None:
        if self.scenario.rack_aware_assignment_strategy == "none":
            return None
        return Kip924RackAware(self.scenario, self._client_order)

    def _move(self, task: int, source: int, destination: int, active: bool) -> None:
        """A moved task leaves its client's map of tasks and joins the end of the other's."""
        self.given[source].remove(task)
        self.given[destination].append(task)
        if active:
            self.active[source].discard(task)
            self.active[destination].add(task)

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
        active, given = self.active, self.given
        held = [set(tasks) for tasks in given]

        def standbys(c: int) -> list[int]:
            return [t for t in held[c] if t not in active[c]]

        def holds_standby(c: int, t: int) -> bool:
            return t in held[c] and t not in active[c]

        def move(t: int, s: int, d: int) -> None:
            self._move(t, s, d, False)
            held[s].discard(t)
            held[d].add(t)
        rack_aware.optimize_standby(standbys, lambda c, t: t in held[c], holds_standby, *sticky_costs(self.scenario), move)

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
