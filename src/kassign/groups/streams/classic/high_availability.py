"""Kafka Streams' HighAvailabilityTaskAssignor (KIP-441): which client runs which task.

The group leader of a classic Kafka Streams application gives every task one active client
and, for stateful tasks, standby replicas on other clients. A client weighs
``assigned tasks / capacity``, its capacity being its number of stream threads (consumers).
Clients are taken in process UUID order (both halves compared as signed longs) and tasks in
``(subtopology, partition)`` order. The steps:

1. **Stateful actives, dealt then balanced.** The stateful tasks are dealt round robin over
   the clients, ignoring history; then, for every ordered pair of clients (source,
   destination) and again until nothing moves, the source's tasks in order move to the
   destination while that lowers the difference of their loads without turning it round.
2. **Standbys.** Each stateful task gets ``num_standby_replicas`` standbys, each on the least
   loaded client (ties: lower UUID) that holds no copy of it yet; then they are balanced as in
   step 1. With ``rack_aware_assignment_tags`` the standbys first go to the least loaded
   clients whose tag values the task's other copies do not use yet (the client-tag-aware
   standby assignor), balancing only moves a standby between clients with equal tags.
3. **Active movements.** A client is *caught up* on a task when its lag is ``-2`` (it runs
   it), at most ``acceptable_recovery_lag``, or always when that setting is ``2^63 - 1``.
   An active task on a client that is not caught up, where some client has a smaller lag,
   moves, tasks with the fewest caught-up clients first: to a caught-up client holding a
   standby of it (they swap roles), else to the least loaded caught-up client, else to the
   client with the smallest lag (swapping if that one holds a standby). The client it leaves
   keeps a *warm-up* replica (a standby) while ``max_warmup_replicas`` last.
4. **Standby movements.** A standby (not a warm-up) on a client that is not caught up moves
   the same way to a caught-up client (else the least-lagged one) without a copy, keeping a
   warm-up where one is left. With two or more standby replicas one task can have several
   standbys to move; their movements tie in Kafka's priority queue (fewest caught-up clients,
   then task), so the heap's array decides which goes first, not the destination's UUID.
5. **Stateless actives** go one by one, in task order, to the client with the fewest active
   tasks per thread (ties: lower UUID).

A probing rebalance follows (after ``probing_rebalance_interval_ms``) when step 3 or 4 had
anything to move: warm-ups then report their lag again.

Example: two clients with one thread each, A (UUID ``00..01``) and B (``00..02``); one
stateful subtopology of 2 partitions with end offset sums 100 each; A runs both tasks
(offset sums -2), B has no state; no standbys; ``acceptable_recovery_lag`` 10.
Step 1 deals ``0_0`` to A and ``0_1`` to B. Step 3: B is not caught up on ``0_1`` and A is, so
``0_1`` moves back to A and B gets a warm-up of it. Answer: A active ``0_0``, ``0_1``; B standby
``0_1``; a probing rebalance follows. Once B's lag on ``0_1`` is within 10, the next rebalance
leaves ``0_1`` with B.

Java's data structures decide ties here, and kassign reproduces them: the least loaded client
comes from a ``java.util.PriorityQueue`` whose weights change while clients sit in it (see
:mod:`kassign.core.javaqueue`), and clients passed over while searching are put back in
``HashSet`` order of their UUID hash codes.

With ``rack_aware_assignment_strategy`` (``rack.aware.assignment.strategy``, KIP-925; off by
default) a min-cost flow then trims cross-rack traffic where Kafka calls it: after step 1 (the
stateful actives), after step 2 (the standbys) and after step 5 (the stateless actives); see
:mod:`kassign.groups.streams.classic.rack_aware` (3.6 and later; 3.6's min-cost flow searches
differently from 3.7's).

Releases (``kafka_version``, rules in :mod:`kassign.core.releases`): 3.3 to 4.4 run the steps above
alike (3.3 differs from 3.4 in log lines only). Earlier releases differ in steps 2 to 4:

* 3.2 (``KSTREAMS_MOVEMENTS`` ``KAFKA_13600``): as above, but Kafka walks the queue of planned
  movements with its iterator, so they go in the order of the heap's array, not by priority (3.3
  polls them, hotfix #12585); the first movements take the least loaded clients and the warm-ups.
* 3.0 and 3.1 (``BEFORE_KAFKA_13600``): in step 3 a task is planned to move only when some client
  is caught up on it, and only to a caught-up client (no fallback to the client with the smallest
  lag); in step 4 a standby with no caught-up client free to take it stays. Movements go in the
  heap's array order too. No client tags (KIP-708 came with 3.2): standbys by load alone.

3.0.2, 3.1.2, 3.2.3 and 3.3.2's own classes give the answers kassign gives on the vectors' groups
and on a few thousand generated ones (a local check; nothing of Kafka's is kept here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from kassign.core.javaqueue import JavaPriorityQueue, LoadPriorityQueue
from kassign.core.releases import (BEFORE_KAFKA_13600, KSTREAMS_MOVEMENTS, KSTREAMS_RACK_FLOW, LATEST, MOVEMENTS_POLLED,
                                   KafkaRelease, rule)
from kassign.core.javasets import hash_set_order
from kassign.groups.streams.classic.rack_aware import (STATELESS_COSTS, LegacyRackAwareAssignor,
                                                       high_availability_costs, tag_standby_predicate)
from kassign.groups.streams.classic.scenario import JAVA_LONG_MAX, LATEST_OFFSET, StreamsClassicScenario, task_hash


class Clients:
    """Every client's assigned tasks (``ClientState``), clients by index in UUID order.

    Counts are kept beside the sets (int64 arrays: the compiled priority queue reads them on every
    comparison), and so is, per task, which clients run it or hold a standby of it (the queue's
    constraints read a whole row per poll)."""

    def __init__(self, capacities: list[int], n_tasks: int) -> None:
        self.capacity = capacities
        self.active: list[set[int]] = [set() for _ in capacities]
        self.standby: list[set[int]] = [set() for _ in capacities]
        self.assigned = np.zeros(len(capacities), dtype=np.int64)  # active + standby
        self.actives = np.zeros(len(capacities), dtype=np.int64)
        self.is_active = np.zeros((n_tasks, len(capacities)), dtype=bool)  # [task, client]
        self.is_standby = np.zeros((n_tasks, len(capacities)), dtype=bool)

    def __len__(self) -> int:
        return len(self.capacity)

    def load(self, c: int) -> float:
        return self.assigned[c] / self.capacity[c]

    def active_load(self, c: int) -> float:
        return self.actives[c] / self.capacity[c]

    def holds(self, c: int, task: int) -> bool:
        return task in self.active[c] or task in self.standby[c]

    def without_copy(self, task: int) -> np.ndarray:
        """Per client: holds no copy of ``task``."""
        return ~(self.is_active[task] | self.is_standby[task])

    def add_active(self, c: int, task: int) -> None:
        self.active[c].add(task)
        self.is_active[task, c] = True
        self.actives[c] += 1
        self.assigned[c] += 1

    def remove_active(self, c: int, task: int) -> None:
        self.active[c].remove(task)
        self.is_active[task, c] = False
        self.actives[c] -= 1
        self.assigned[c] -= 1

    def add_standby(self, c: int, task: int) -> None:
        self.standby[c].add(task)
        self.is_standby[task, c] = True
        self.assigned[c] += 1

    def remove_standby(self, c: int, task: int) -> None:
        self.standby[c].remove(task)
        self.is_standby[task, c] = False
        self.assigned[c] -= 1


class ConstrainedPrioritySet:
    """Kafka's ConstrainedPrioritySet: clients by (weight, UUID), polled subject to a constraint.

    ``counts[c] / capacity[c]`` is the weight, read afresh at every comparison. ``constraint(task)``
    gives, per client, whether it may take ``task``. Clients that fail it are put back, in the
    ``HashSet`` order of their hash codes, once the search ends (the compiled queue does all of a
    poll at once)."""

    def __init__(self, constraint: Callable[[int], np.ndarray], counts: np.ndarray, capacity: list[int],
                 hash_codes: list[int], spreads: np.ndarray) -> None:
        self._constraint = constraint
        self._queue = LoadPriorityQueue(counts, capacity)
        self._hash_codes = hash_codes
        self._spreads = spreads

    def offer(self, client: int) -> None:
        """Queue ``client``, first removing it where it is queued already."""
        self._queue.requeue(client)

    def offer_all(self, clients: Iterable[int]) -> None:
        self._queue.offer_all(np.fromiter(clients, dtype=np.int64))

    def deal(self, tasks: int) -> list[int]:
        """Where every client passes the constraint: :meth:`poll` and give the client one more task
        (counted in the queue's weights only), then :meth:`offer` it, ``tasks`` times; the clients."""
        return self._queue.deal(tasks)

    def poll(self, task: int, extra: np.ndarray | None = None) -> int | None:
        """The least loaded client that passes the constraint on ``task`` (and ``extra``, a bool per
        client, where given); None when none does."""
        accept = self._constraint(task)
        if extra is not None:
            accept = accept & extra
        found, passed_over = self._queue.poll_constrained(accept, self._spreads)
        if passed_over:
            # a tree bin may have formed in Kafka's HashSet<ProcessId> of them (equal hashes in a tree
            # bin: by UUID, compareTo); none of them is in the queue, so each offer is a plain add
            hashes, offer = self._hash_codes, self._queue.offer
            for client in hash_set_order([hashes[c] for c in passed_over], passed_over):
                offer(client)
        return found


def _should_move(clients: Clients, source: int, destination: int) -> bool:
    """Whether moving one task from source to destination lowers their load difference."""
    source_count, destination_count = clients.assigned[source], clients.assigned[destination]
    source_capacity, destination_capacity = clients.capacity[source], clients.capacity[destination]
    skew = source_count / source_capacity - destination_count / destination_capacity
    if skew <= 0:
        return False
    proposed = (source_count - 1.0) / source_capacity - (destination_count + 1.0) / destination_capacity
    return 0 <= proposed < skew


def balance(clients: Clients, standby: bool, may_move: Callable[[int, int], bool]) -> None:
    """Move tasks of one kind (active or standby) from loaded to lighter clients, pair by pair in
    UUID order, until a whole pass moves nothing.

    A move out of the source only lowers the source's load, which can only make further moves out
    of it less wanted; so the destinations worth trying for a source are found at once, from the
    loads when its turn starts (the same double arithmetic, in numpy), and each is checked again
    exactly as Kafka does when reached. A source whose ``(count - 1) / capacity`` lies below every
    client's ``(count + 1) / capacity`` has none (the difference after a move would be negative), and
    is passed at once."""
    n = len(clients)
    tasks_of = clients.standby if standby else clients.active
    move_out, move_in = ((clients.remove_standby, clients.add_standby) if standby
                         else (clients.remove_active, clients.add_active))
    capacity = np.array(clients.capacity, dtype=np.float64)
    moved_any = True
    while moved_any:
        moved_any = False
        lowest = None  # the least (count + 1) / capacity of any client, worked out again after a move
        for source in range(n):
            if lowest is None:
                lowest = float(((clients.assigned + 1.0) / capacity).min())
            if (clients.assigned[source] - 1.0) / clients.capacity[source] < lowest:
                continue  # the difference after a move would be negative for every destination
            counts = np.array(clients.assigned, dtype=np.float64)
            source_count, source_capacity = counts[source], capacity[source]
            skew = source_count / source_capacity - counts / capacity
            proposed = (source_count - 1.0) / source_capacity - (counts + 1.0) / capacity
            worth = np.flatnonzero((skew > 0) & (proposed >= 0))
            for destination in worth.tolist():
                if destination == source or not _should_move(clients, source, destination):
                    continue
                for task in sorted(tasks_of[source]):
                    if not _should_move(clients, source, destination):
                        break
                    if not clients.holds(destination, task) and may_move(source, destination):
                        move_out(source, task)
                        move_in(destination, task)
                        moved_any = True
                        lowest = None


def _movement_order(movements: list[tuple[int, int, int]], polled: bool = True) -> list[tuple[int, int, int]]:
    """Scheduled movements ``(caught-up clients, task, destination)``, offered in that list's order, as Kafka's
    ``PriorityQueue`` of them hands them out: by caught-up clients, then task. Two movements of one task (two
    standbys of it to move, which takes two standby replicas) compare equal: then the heap's array decides, not
    the destination, and the first one polled takes the least loaded caught-up client and the warm-up left.
    ``polled`` False: the order Kafka 3.0 to 3.2 walk them in, the queue's array front to back (heap order,
    not priority order)."""
    if len(movements) < 2:
        return movements
    keys = [m[:2] for m in movements]
    queue = JavaPriorityQueue(keys.__getitem__)
    for i in range(len(movements)):
        queue.offer(i)
    if not polled:
        return [movements[i] for i in queue]
    return [movements[queue.poll()] for _ in range(len(movements))]


class HighAvailabilityAssignor:
    """One run of the assignor over a scenario; :meth:`assign` gives whether a probing rebalance follows."""

    def __init__(self, scenario: StreamsClassicScenario, lags: np.ndarray, release: KafkaRelease = LATEST) -> None:
        self.scenario = scenario
        movements = rule(release, KSTREAMS_MOVEMENTS)
        # before KAFKA-13600 a task moves only where some client is caught up on it, and only to such a client
        self._most_caught_up_fallback = movements != BEFORE_KAFKA_13600
        self._movements_polled = movements == MOVEMENTS_POLLED
        self.flow = rule(release, KSTREAMS_RACK_FLOW)
        self.lags = lags  # [client, task]
        self.clients = Clients([c.capacity for c in scenario.clients], len(scenario.tasks))
        self.hash_codes = [c.hash_code for c in scenario.clients]
        hashes = np.array(self.hash_codes, dtype=np.int64) & 0xFFFFFFFF
        self.spreads = hashes ^ (hashes >> 16)
        self.stateful = [t for t, s in enumerate(scenario.stateful) if s]
        self.stateless = [t for t, s in enumerate(scenario.stateful) if not s]
        self.rack_aware: LegacyRackAwareAssignor | None = None
        if scenario.rack_aware_assignment_strategy != "none":
            self.rack_aware = LegacyRackAwareAssignor.from_scenario(scenario, self.flow)

    def _rack_aware_enabled(self) -> bool:
        return self.rack_aware is not None and self.rack_aware.can_enable()

    def assign(self) -> bool:
        self._assign_stateful_actives()
        if self.scenario.num_standby_replicas > 0:
            self._assign_standbys()
        self._warmups_left = self.scenario.max_warmup_replicas
        self._index_lags()
        warmups: dict[int, set[int]] = {}
        active_moves = self._move_actives(warmups)
        standby_moves = self._move_standbys(warmups)
        self._assign_stateless_actives()
        return active_moves + standby_moves > 0

    def by_load(self, constraint: Callable[[int], np.ndarray], active_only: bool = False) -> ConstrainedPrioritySet:
        clients = self.clients
        counts = clients.actives if active_only else clients.assigned
        return ConstrainedPrioritySet(constraint, counts, clients.capacity, self.hash_codes, self.spreads)

    # -- steps 1 and 2 ----------------------------------------------------------------------

    def _assign_stateful_actives(self) -> None:
        clients = self.clients
        n = len(clients)
        for i, task in enumerate(self.stateful):
            clients.add_active(i % n, task)
        balance(clients, False, lambda s, d: True)
        if self._rack_aware_enabled():
            self.rack_aware.optimize_active_tasks(self.stateful, clients, *high_availability_costs(self.scenario))

    def _assign_standbys(self) -> None:
        clients = self.clients
        if self.scenario.rack_aware_assignment_tags:
            from kassign.groups.streams.classic.client_tags import assign_tag_aware_standbys, same_tags

            assign_tag_aware_standbys(self)
            tags = [c.client_tags for c in self.scenario.clients]
            balance(clients, True, lambda s, d: same_tags(tags[s], tags[d]))
        else:
            by_load = self.least_loaded_without_copy()
            by_load.offer_all(range(len(clients)))
            for task in self.stateful:
                self.assign_standbys_least_loaded(task, self.scenario.num_standby_replicas, by_load)
            balance(clients, True, lambda s, d: True)
        if self._rack_aware_enabled():
            if self.scenario.rack_aware_assignment_tags:
                tags = [c.client_tags for c in self.scenario.clients]
                may_move = tag_standby_predicate(tags, clients.holds, len(clients))
            else:
                def may_move(source: int, destination: int, task: int) -> bool:
                    return True
            self.rack_aware.optimize_standby_tasks(clients, *high_availability_costs(self.scenario), may_move)

    def least_loaded_without_copy(self) -> ConstrainedPrioritySet:
        return self.by_load(self.clients.without_copy)

    def assign_standbys_least_loaded(self, task: int, wanted: int, by_load: ConstrainedPrioritySet) -> int:
        """Give ``task`` up to ``wanted`` standbys on the least loaded clients without a copy;
        gives how many could not be placed (Kafka logs a warning for them)."""
        while wanted > 0:
            client = by_load.poll(task)
            if client is None:
                break
            self.clients.add_standby(client, task)
            wanted -= 1
            by_load.offer(client)
        return wanted

    # -- steps 3 and 4 ----------------------------------------------------------------------

    def _index_lags(self) -> None:
        lags = self.lags
        bound = self.scenario.acceptable_recovery_lag
        if bound == JAVA_LONG_MAX:
            caught_up = np.ones(lags.shape, dtype=bool)
        else:
            caught_up = (lags == LATEST_OFFSET) | ((lags >= 0) & (lags <= bound))
        self.caught_up = caught_up
        self.caught_up_by_task = np.ascontiguousarray(caught_up.T)  # a row per task: the queue's constraint
        self.caught_up_count = caught_up.sum(axis=0).tolist()
        self.least_lag = lags.min(axis=0).tolist() if len(self.clients) else []
        self._by_lag: dict[int, list[int]] = {}

    def by_lag(self, task: int) -> list[int]:
        """Clients by (lag on ``task``, UUID)."""
        order = self._by_lag.get(task)
        if order is None:
            order = self._by_lag[task] = np.argsort(self.lags[:, task], kind="stable").tolist()
        return order

    def _needs_moving(self, task: int, client: int) -> bool:
        """Not caught up on ``task`` while another client has a smaller lag on it (before KAFKA-13600: while
        another client is caught up on it)."""
        if self.caught_up[client, task]:
            return False
        if not self._most_caught_up_fallback:
            return self.caught_up_count[task] > 0
        return self.least_lag[task] < self.lags[client, task]

    def _scheduled(self, tasks_of: list[set[int]], skip: dict[int, set[int]]) -> tuple[list, ConstrainedPrioritySet]:
        by_load = self.by_load(self.caught_up_by_task.__getitem__)
        movements = []
        for client in range(len(self.clients)):
            for task in sorted(tasks_of[client]):
                if task not in skip.get(client, ()) and self._needs_moving(task, client):
                    movements.append((self.caught_up_count[task], task, client))
            by_load.offer(client)
        return _movement_order(movements, self._movements_polled), by_load

    def _take_warmup(self) -> bool:
        left = self._warmups_left
        self._warmups_left -= 1
        return left > 0

    def _move_actives(self, warmups: dict[int, set[int]]) -> int:
        clients = self.clients
        movements, by_load = self._scheduled(clients.active, {})
        for _, task, destination in movements:
            source = by_load.poll(task, clients.is_standby[task])
            if source is not None:
                self._swap(task, source, destination)
            else:
                source = by_load.poll(task)
                if source is None:
                    source = self._most_caught_up(task, destination, lambda c: True)
                    if source is None:
                        raise AssertionError("a scheduled movement found no client to move to")
                    if task in clients.standby[source]:
                        self._swap(task, source, destination)
                    else:
                        self._move_active(task, source, destination, warmups)
                else:
                    self._move_active(task, source, destination, warmups)
            by_load.offer_all((source, destination))
        return len(movements)

    def _move_standbys(self, warmups: dict[int, set[int]]) -> int:
        clients = self.clients
        movements, by_load = self._scheduled(clients.standby, warmups)
        done = 0
        for _, task, destination in movements:
            source = by_load.poll(task, clients.without_copy(task))
            if source is None and self._most_caught_up_fallback:
                source = self._most_caught_up(task, destination, lambda c, task=task: not clients.holds(c, task))
            if source is None:
                continue  # every closer client already holds a copy: nowhere to move it
            clients.add_standby(source, task)
            if not self._take_warmup():
                clients.remove_standby(destination, task)
            by_load.offer_all((source, destination))
            done += 1
        return done

    def _most_caught_up(self, task: int, destination: int, eligible: Callable[[int], bool]) -> int | None:
        """The first eligible client by lag ranked ahead of ``destination``."""
        for client in self.by_lag(task):
            if client == destination:
                return None
            if eligible(client):
                return client
        return None

    def _swap(self, task: int, source: int, destination: int) -> None:
        clients = self.clients
        clients.remove_standby(source, task)
        clients.add_active(source, task)
        clients.remove_active(destination, task)
        clients.add_standby(destination, task)

    def _move_active(self, task: int, source: int, destination: int, warmups: dict[int, set[int]]) -> None:
        clients = self.clients
        clients.add_active(source, task)
        clients.remove_active(destination, task)
        if self._take_warmup():
            clients.add_standby(destination, task)
            warmups.setdefault(destination, set()).add(task)

    # -- step 5 -----------------------------------------------------------------------------

    def _assign_stateless_actives(self) -> None:
        clients = self.clients
        everyone = np.ones(len(clients), dtype=bool)
        by_active_load = self.by_load(lambda task: everyone, active_only=True)
        by_active_load.offer_all(range(len(clients)))
        if clients.capacity:
            for task, client in zip(self.stateless, by_active_load.deal(len(self.stateless))):
                clients.add_active(client, task)
        if self._rack_aware_enabled():
            self.rack_aware.optimize_active_tasks(self.stateless, clients, *STATELESS_COSTS)
