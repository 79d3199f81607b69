"""How the group leader spreads a client's tasks over that client's consumers (stream threads).

After the client-level assignment, ``StreamsPartitionAssignor`` splits each client's tasks
over its consumers, taken in member id order, in three passes sharing one running count of
tasks per consumer: stateful active tasks, then standbys, then stateless active tasks. Each
pass aims every consumer at ``floor(tasks so far / consumers)`` (``min``):

1. (stateful passes only) each consumer first takes back tasks it reported state for, least
   lagged first, up to its ``min``; a task it could not take is remembered for it;
2. consumers still under ``min`` take the lowest remaining tasks in turn (round robin) until
   at ``min``;
3. what is left goes one each to consumers exactly at ``min``: first to a remembered previous
   holder (in task order), then the rest in the order they sit in Java's ``PriorityQueue``
   array, which is heap order and not sorted order.

Example: one client, consumers C1 and C2; stateful actives ``0_0``, ``0_1``, ``0_2``; C2 reported
state for ``0_2`` (lag 5) and ``0_0`` (lag 50). ``min`` is 1. Pass 1: C1 reported nothing; C2
takes ``0_2``, remembers ``0_0``. Pass 2: C1 takes ``0_0``. Pass 3: ``0_1`` is left and both are at
``min``; its previous holder is nobody, so it goes to the first consumer at ``min``, C1.
Result: C1 ``0_0``, ``0_1``; C2 ``0_2``.

That is Kafka 3.2 and later (KAFKA-12959). Kafka 3.0 and 3.1 split a client's tasks in two
passes, each counting from zero: its actives (stateful ones as above, ``min`` being the stateful
tasks per consumer; then the stateless ones, sorted, first one each to the consumers the stateful
pass left at ``min``, then round robin over all consumers) and its standbys (as above, alone). So
a consumer can get both an active and a standby while another gets nothing. Kafka 3.0 also sorts
every task a consumer reported an offset sum for by its lag, and a task without changelogs has
none: the rebalance fails (``IllegalStateException``, a :class:`KassignError` here) when a client
with stateful actives or standbys has a consumer reporting one; 3.1 skips such tasks.

This is the split the leader decides, which is what kassign answers (and what the Kafka Streams
reference vectors hold). What a consumer receives in this very round can be less: under cooperative
rebalancing Kafka holds back an active task whose partition another consumer still owns (and
lets the receiving consumer keep it as a standby meanwhile if its client had state for it),
and asks for an immediate follow-up rebalance, after which the task arrives as decided here.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from kassign.core.errors import KassignError
from kassign.core.javaorder import java_sorted_positions
from kassign.groups.streams.classic.high_availability import Clients
from kassign.groups.streams.classic.scenario import task_hash
from kassign.core.javaqueue import JavaPriorityQueue
from kassign.core.javasets import hash_set_order
from kassign.groups.streams.classic.lags import lag_of
from kassign.groups.streams.classic.scenario import StreamsClassicScenario
from kassign.core.releases import (BEFORE_KAFKA_12648, KAFKA_12959, KSTREAMS_THREAD_SPLIT, LATEST, KafkaRelease,
                                   rule)


@dataclass
class ConsumerAssignment:
    active: list[int]
    standby: list[int]


def _hash_set_order(tasks: list[int], scenario: StreamsClassicScenario) -> list[int]:
    """Tasks (given sorted) as a ``HashSet<TaskId>`` filled one by one iterates them. (Tasks
    ``s_p`` and ``(s+1)_(p-31)`` share a hash code, so big topologies do crowd buckets.)"""
    return hash_set_order([task_hash(*scenario.tasks[t]) for t in tasks], tasks)


def assign_tasks_to_threads(tasks: list[int], stateful: bool, consumers: list[int], previous: dict[int, list[int]],
                            thread_load: dict[int, int], left_at_min: list[int] | None = None) -> dict[int, list[int]]:
    """One pass of the split: ``tasks`` in the collection's iteration order, ``consumers`` in
    member id order, ``previous``: consumer -> tasks it reported state for, least lagged first.
    Updates ``thread_load``. ``left_at_min``, where given, receives the consumers still waiting
    at ``min`` when the pass ends, in queue order (before KAFKA-12959 stateless tasks go to them
    first)."""
    assignment: dict[int, list[int]] = {c: [] for c in consumers}
    total = len(tasks) + sum(thread_load.values())
    minimum = total // len(consumers)
    unassigned = JavaPriorityQueue(lambda t: t, tasks)
    to_fill: deque[int] = deque()
    skipped: dict[int, int] = {}  # task -> previous holder it could not go to yet

    if unassigned:
        for consumer in consumers:
            mine = assignment[consumer]
            target = minimum - thread_load.get(consumer, 0)
            if stateful:
                for task in previous.get(consumer, ()):
                    if task in unassigned:
                        if len(mine) < target:
                            mine.append(task)
                            unassigned.remove(task)
                        else:
                            skipped[task] = consumer
            if len(mine) < target:
                to_fill.append(consumer)

        while to_fill:
            task = unassigned.poll()
            if task is None:
                raise KassignError("Kafka Streams ran out of tasks while spreading them over a client's threads "
                                   "(its TaskAssignmentException); the rebalance fails")
            consumer = to_fill.popleft()
            assignment[consumer].append(task)
            if len(assignment[consumer]) + thread_load.get(consumer, 0) < minimum:
                to_fill.append(consumer)

        if unassigned:
            for consumer in consumers:
                if len(assignment[consumer]) + thread_load.get(consumer, 0) == minimum:
                    to_fill.append(consumer)
            for task in sorted(skipped):
                consumer = skipped[task]
                if consumer in to_fill and task in unassigned:
                    assignment[consumer].append(task)
                    unassigned.remove(task)
                    to_fill.remove(consumer)
            for task in unassigned:
                if not to_fill:
                    raise KassignError("Kafka Streams has more tasks than threads at their share while spreading "
                                       "a client's tasks (a NullPointerException in Kafka); the rebalance fails")
                assignment[to_fill.popleft()].append(task)

    if left_at_min is not None:
        left_at_min.extend(to_fill)
    for consumer, mine in assignment.items():
        thread_load[consumer] = thread_load.get(consumer, 0) + len(mine)
    return assignment


def high_availability_orders(scenario: StreamsClassicScenario, clients: Clients):
    """For the high-availability assignor: per client, its stateful actives, standbys and stateless
    actives in the order the thread split meets them. ``ClientState`` keeps its tasks in sorted
    sets and hands out the stateful and stateless actives as HashSets filled from them."""
    def orders(ci: int) -> tuple[list[int], list[int], list[int]]:
        active = sorted(clients.active[ci])
        return (_hash_set_order([t for t in active if scenario.stateful[t]], scenario),
                sorted(clients.standby[ci]),
                _hash_set_order([t for t in active if not scenario.stateful[t]], scenario))
    return orders


def _stateless_before_kafka_12959(stateless: list[int], consumers: list[int], assignment: dict[int, list[int]],
                                  left_at_min: list[int]) -> None:
    """Kafka 3.0 and 3.1: the stateless actives (sorted) go first one each to the consumers the stateful
    pass left at ``min``, then round robin over all consumers (queued after any still waiting)."""
    waiting = deque(left_at_min)
    i = 0
    while i < len(stateless) and waiting:
        assignment[waiting.popleft()].append(stateless[i])
        i += 1
    waiting.extend(consumers)
    for task in stateless[i:]:
        consumer = waiting.popleft()
        assignment[consumer].append(task)
        waiting.append(consumer)


def _unknown_lag_failure(scenario: StreamsClassicScenario, client) -> None:
    """Kafka 3.0 sorts every task a consumer reported an offset sum for by its lag; a task without a
    changelog has none, and the rebalance fails."""
    for consumer in client.consumers:
        for task in consumer.offset_sums:
            if not scenario.stateful[task]:
                raise KassignError(
                    f"Kafka 3.0 fails this rebalance: consumer {consumer.member_id!r} reports an offset sum for "
                    f"task {scenario.task_name(task)}, which has no changelog, and 3.0's split over stream threads "
                    f"looks up its lag (IllegalStateException: Tried to lookup lag for unknown task "
                    f"{scenario.task_name(task)}); 3.1 and later skip it")


def split_over_consumers(scenario: StreamsClassicScenario, merged_sums: list[dict[int, int]],
                         orders, per_client: list[tuple[list[int], list[int]]],
                         release: KafkaRelease = LATEST) -> list[dict[int, ConsumerAssignment]]:
    """Every client's tasks spread over its consumers: per client, {consumer index: assignment}.
    ``orders(client)``: its stateful actives, standbys and stateless actives, each in the order of
    the collection Kafka builds its ``PriorityQueue`` from. ``per_client``: each client's actives and
    standbys, sorted. ``release``: 3.2 and later split as the module says; 3.0 and 3.1 split a
    client's actives (stateful, then stateless) and its standbys apart, each from zero."""
    how = rule(release, KSTREAMS_THREAD_SPLIT)
    split: list[dict[int, ConsumerAssignment]] = []
    for ci, client in enumerate(scenario.clients):
        if how == BEFORE_KAFKA_12648 and (per_client[ci][1] or any(scenario.stateful[t] for t in per_client[ci][0])):
            _unknown_lag_failure(scenario, client)  # it sorts what each consumer reported when it has such tasks
        if len(client.consumers) == 1:
            # one consumer takes all three passes whole (its share is everything, no error is possible):
            # no iteration order matters
            split.append({0: ConsumerAssignment(*per_client[ci])})
            continue
        sums, ends, stateful = merged_sums[ci], scenario.end_offset_sums, scenario.stateful
        consumers = java_sorted_positions([c.member_id for c in client.consumers])
        # the stateful tasks each consumer reported, least lagged (at the client's merged sums) first
        previous = {
            mi: sorted((t for t in client.consumers[mi].offset_sums if stateful[t]),
                       key=lambda t: (lag_of(sums[t], ends[t]), t))
            for mi in consumers
        }
        stateful_active, standby, stateless_active = orders(ci)
        if how != KAFKA_12959:
            left_at_min: list[int] = []
            stateful_active = assign_tasks_to_threads(stateful_active, True, consumers, previous, {}, left_at_min)
            standby = assign_tasks_to_threads(standby, True, consumers, previous, {})
            stateless_active = {mi: [] for mi in consumers}
            _stateless_before_kafka_12959([t for t in per_client[ci][0] if not stateful[t]], consumers,
                                          stateless_active, left_at_min)
        else:
            thread_load: dict[int, int] = {}
            stateful_active = assign_tasks_to_threads(stateful_active, True, consumers, previous, thread_load)
            standby = assign_tasks_to_threads(standby, True, consumers, previous, thread_load)
            stateless_active = assign_tasks_to_threads(stateless_active, False, consumers, previous, thread_load)
        split.append({
            mi: ConsumerAssignment(sorted(stateful_active[mi] + stateless_active[mi]), sorted(standby[mi]))
            for mi in consumers
        })
    return split
