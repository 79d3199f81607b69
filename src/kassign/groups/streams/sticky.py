"""``sticky``: the broker's task assignor for streams groups (KIP-1071), as Kafka 4.2, 4.3 and 4.4 run it.

The group coordinator runs it to compute each member's new target assignment: active tasks, standby
replicas of stateful tasks (``num_standby_replicas`` per task, never on the process that runs the task
or holds another replica of it) and warm-up tasks (this assignor hands out none). Balance is counted
per member, over active and standby tasks together; processes are compared by load, their task count
divided by their member count.

Quotas: ``ceil(active tasks / members)`` active tasks per member, and ``ceil(all replicas / members)``
tasks per member overall. Whenever a member reaches a quota exactly, it and its tasks leave the
count and the quota is computed again from the rest.

Previous owners: a task's previous active owner is the member whose current assignment lists it
active. Its previous standby owners are the members whose assignment lists it as a standby, in the
coordinator's member order (below); Kafka 4.4 (KAFKA-20719) adds the members that report an offset sum
of it (``offset_sums``: state of the task on their local disk, as after a restart, when a member comes
back with a new member id and nothing assigned), and ranks them: first those listing it as a standby,
then those only reporting an offset sum, each part by offset sum, highest first (a standby without a
reported sum counts 0), then in member order. 4.2 and 4.3 read no offset sums.

Active tasks:

1. in the order partition, then subtopology: a task goes back to the member that held it active, if
   that member is below the active quota;
2. same order, the tasks left: to one of its previous standby owners, if below the active quota.
   The first one listed is the candidate, and a later one replaces it when both its process load and
   its own task count are lower;
3. the rest, in the order subtopology, then partition: each to the process of lowest load (a Java
   ``PriorityQueue``, ties as that heap breaks them), inside it to the member with fewest tasks
   (another ``PriorityQueue``, per process), whatever the quota.

Standby tasks (when ``num_standby_replicas`` > 0), stateful tasks in the order partition, then
subtopology, both descending, each replica in turn:

1. to the member that held the task active, if its process does not hold the task now and it is
   below the overall quota;
2. else to one of its previous standby owners whose process does not hold the task (chosen as above),
   if below the quota. Kafka 4.2 and 4.3 start from the first one listed and give up when its process
   holds the task, even if a later one would do; 4.4 passes over the owners whose process holds it
   (KAFKA-20899);
3. else the replicas still missing go, once the loop above is done and in the order subtopology,
   then partition, both descending, each to the least loaded process that does not hold the task
   (processes holding it are taken off the heap until one is found, then put back). A replica with
   no such process is left out (Kafka logs a warning).

Where Java's iteration order decides (which member of a process comes first, how heaps break ties),
it is Java's: members sit in a ``HashMap`` keyed by member id, put in the order the scenario lists
them; processes in a ``HashMap`` sized for the member count, put as their first member comes up in
that order; each process's members in a ``HashMap`` in that order too. Kafka 4.2 and 4.3 fill the
process map with ``putIfAbsent``; 4.4 with ``computeIfAbsent``, which puts a new process at the head
of its bucket and grows the table before an insertion rather than after, so processes can come out
in another order and the heap breaks ties between equally loaded processes otherwise (most visible
in a fresh group, where every process starts at load 0).

Example (every release): subtopology ``0`` (3 partitions, stateful), one standby replica, members ``a``
(process ``P``, previously active on ``0_0``) and ``b`` (process ``Q``, previously a standby of
``0_1``). Quotas: 2 active (3 tasks, 2 members), 3 overall (6 replicas). Actives: ``0_0`` stays with
``a``; ``0_1`` goes to ``b`` (its standby); ``0_2`` to the less loaded process: both hold one task per
member, and the heap yields ``P`` first, so ``a``. Standbys, ``0_2`` first: its previous owners are
nobody, so it waits; ``0_1``: ``b`` held it but ``Q`` now runs it, so it waits; ``0_0``: waits. Then
``0_2``, ``0_1``, ``0_0`` each go to the only process without the task: ``Q``, ``P``, ``Q``. Result:
``a`` active ``0_0, 0_2``, standby ``0_1``; ``b`` active ``0_1``, standby ``0_0, 0_2``.

Example (4.3 and 4.4 differ): the same subtopology and standby, a fresh group of ``east-t1`` (process
``east``) and ``west-t1`` (process ``west``). The coordinator meets ``west-t1`` first, so ``west`` goes
into the process map first; the map has 2 buckets (2 members) and both names fall into one. 4.3
iterates ``west, east``, so the heap (both at load 0) yields ``west`` for ``0_0``: ``west-t1`` active
``0_0, 0_2``, standby ``0_1``, ``east-t1`` the other way round. 4.4 put ``east`` in front of ``west``:
``east-t1`` active ``0_0, 0_2``, standby ``0_1``, ``west-t1`` active ``0_1``, standby ``0_0, 0_2``.

Example (4.4, offset sums): 4 stateful tasks ``0_0`` to ``0_3``, fresh members ``m1`` (process ``P``)
reporting offset sums of ``0_0`` and ``0_1`` and ``m2`` (process ``Q``) of ``0_2`` and ``0_3``: step 2
hands each member the tasks it has state of (``m1``: ``0_0, 0_1``); 4.3 ignores the sums and deals the
tasks out in turn (``m1``: ``0_0, 0_2``).

Because quotas shrink as members reach them, a follow-up round with the same members can still move
a task (Kafka does too); a group whose task count divides evenly among its members keeps every active
task.

Releases: 4.2.0 to 4.3.1 run one assignor; 4.4 (Kafka's 4.4 branch at Apache commit 87943b2ff8) the
one above with KAFKA-20719 and KAFKA-20899 (:data:`kassign.core.releases.STREAMS_STICKY`). KAFKA-20899
also went into Kafka's 4.2 and 4.3 branches after 4.3.1, in no release of those lines the stored
source has: asked as 4.2 or 4.3, kassign answers as 4.3.1 does. A group with tasks and no members makes
Kafka's assignor throw a ``TaskAssignorException``; kassign raises a ``KassignError`` quoting its
message.

Data layout: tasks, members and processes are integers (:mod:`kassign.groups.streams.tasks`); the
assignment runs in one compiled function over arrays (each process's load is its task count over its
member count, computed in ``double`` as Java does); names come back only in the answer, which
``_native.c`` builds where it was compiled (the same dicts as the Python builder).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from kassign.core.errors import KassignError, UnknownAssignorError
from kassign.core.javaorder import (
    compute_if_absent_order,
    hash_iteration_order,
    hashmap_positions,
    insert_only_capacity,
    java_string_hashes,
    table_size_for,
)
from kassign.core.releases import (
    DEFAULT_KAFKA_VERSION,
    KAFKA_20719,
    STREAMS_STICKY,
    KafkaRelease,
    ReleaseLike,
    release_for,
    rule,
)
from kassign.groups.flat import no_cyclic_gc
from kassign.groups.streams.tasks import StreamsGroup, native, parse_streams_group

STRATEGIES = ("sticky",)

StreamsAnswer = dict[str, dict[str, dict[str, list[int]]]]


def assign_streams(strategy: str, scenario: Mapping[str, Any],
                   kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION) -> StreamsAnswer:
    """A streams group's new target assignment, as the broker's assignor of Kafka ``kafka_version`` computes it.

    ``scenario``: a streams group's scenario document. Returns ``{member: {"active": {subtopology: [partitions]},
    "standby": {...}, "warmup": {...}}}`` for every member, subtopologies and partitions sorted, a
    subtopology present only where the member has a task of it."""
    if strategy not in STRATEGIES:
        raise UnknownAssignorError(f"unknown streams group assignor {strategy!r}: Kafka's broker offers 'sticky'")
    release = check_streams_release(kafka_version)
    with no_cyclic_gc():  # thousands of small dicts and lists, none of them in a cycle
        return sticky_assign(parse_streams_group(scenario), release)


def check_streams_release(kafka_version: ReleaseLike) -> KafkaRelease:
    """The release, refused where kassign does not model its streams group assignor (:mod:`kassign.core.releases`,
    feature ``streams``: 4.2 to 4.4; 4.1's early-access groups are named as such)."""
    return release_for(kafka_version, "streams")


def sticky_assign(group: StreamsGroup, release: KafkaRelease) -> StreamsAnswer:
    """Kafka's ``sticky`` task assignor over a parsed group, as ``release`` runs it."""
    if group.num_tasks and not group.member_ids:
        first = group.subtopology_ids[int(np.flatnonzero(np.diff(group.task_start))[0])]
        raise KassignError(f"no members: Kafka's sticky assignor fails with 'No process available to assign active "
                           f"task {first}_0.' (a streams group with tasks needs at least one member)")
    kafka_20719 = rule(release, STREAMS_STICKY) == KAFKA_20719
    iteration, member_spreads = _member_iteration_order(group)
    process_order, process_members = _processes(group, iteration, member_spreads, kafka_20719)
    rank = np.empty(len(iteration), dtype=np.int64)
    rank[iteration] = np.arange(len(iteration))
    member_process = process_order[group.member_process[iteration]]
    previous_active = np.where(group.previous_active >= 0, rank[group.previous_active], -1)
    standby_start, standby_members = _previous_standbys(group, rank, kafka_20719)
    active, standby_task, standby_member = _sticky(
        group.task_start, group.stateful, group.num_standby_replicas, member_process,
        process_members[0], process_members[1], previous_active, standby_start, standby_members, kafka_20719)
    return _answer(group, iteration, active, standby_task, standby_member)


def _member_iteration_order(group: StreamsGroup) -> tuple[np.ndarray, np.ndarray]:
    """Listed positions of the members in the order the coordinator's ``HashMap`` yields them, and
    every member's ``String.hashCode`` spread as ``HashMap`` spreads it (by listed position)."""
    hashes = java_string_hashes(group.member_ids) if group.member_ids else np.zeros(0, dtype=np.int64)
    spreads = (hashes & 0xFFFFFFFF) ^ ((hashes & 0xFFFFFFFF) >> 16)
    return _java_map_order(hashes, spreads, None), spreads


def _java_map_order(hashes: np.ndarray, spreads: np.ndarray, initial_capacity: int | None) -> np.ndarray:
    """Positions of distinct keys put in this order into a ``HashMap``, in its iteration order; the
    slower model with tree bins only where one could form (:func:`_may_form_tree_bin`)."""
    table = 16 if initial_capacity is None else table_size_for(initial_capacity)
    if _may_form_tree_bin(spreads, table):
        return np.array(hashmap_positions(hashes.tolist(), initial_capacity), dtype=np.int64)
    return hash_iteration_order(hashes, initial_capacity).astype(np.int64)


@njit(cache=True)
def _may_form_tree_bin(spreads, table):
    """Whether keys put in this order into a ``HashMap`` of ``table`` buckets could make one bucket of
    64 or more hold 9 (Java turns it into a tree, which orders it otherwise). A table of ``c`` buckets
    holds at most the first ``3c/4`` keys, so each size from 64 up is checked on that prefix."""
    final = insert_only_capacity(spreads, table)
    capacity = max(table, 64)
    while capacity <= final:
        prefix = spreads[:min(len(spreads), capacity * 3 // 4)]
        if len(prefix) >= 9 and np.bincount(prefix & (capacity - 1)).max() >= 9:
            return True
        capacity *= 2
    return False


def _processes(group: StreamsGroup, iteration: np.ndarray, member_spreads: np.ndarray,
               compute_if_absent: bool) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Each process's number in the assignor's process map order, and each process's members (by
    iteration rank) in the order its member-count map yields them. The process map is sized for the
    member count and filled member by member: by ``putIfAbsent`` (4.2, 4.3) or ``computeIfAbsent`` (4.4)."""
    listed_process = group.member_process[iteration]
    first_seen, first_at = np.unique(listed_process, return_index=True)
    by_first = np.argsort(first_at, kind="stable")
    put_order = first_seen[by_first]  # processes as the member walk meets them
    if not len(put_order):
        walk = put_order
    elif compute_if_absent:
        hashes = java_string_hashes([group.process_ids[p] for p in put_order.tolist()])
        # a member after the last new process's first one calls computeIfAbsent again (it may grow the table)
        looked_up_after = int(first_at[by_first[-1]]) < len(iteration) - 1
        walk = compute_if_absent_order(hashes, len(iteration), looked_up_after)
    else:
        hashes = java_string_hashes([group.process_ids[p] for p in put_order.tolist()])
        walk = _java_map_order(hashes, (hashes & 0xFFFFFFFF) ^ ((hashes & 0xFFFFFFFF) >> 16), len(iteration))
    process_order = np.empty(len(group.process_ids), dtype=np.int64)
    process_order[put_order[walk]] = np.arange(len(walk))
    by_process = process_order[listed_process]
    start = np.zeros(len(walk) + 1, dtype=np.int64)
    np.cumsum(np.bincount(by_process, minlength=len(walk)), out=start[1:])
    grouped = np.argsort(by_process, kind="stable")  # iteration ranks, process by process, in put order
    order, tree_bins = _member_maps(member_spreads[iteration[grouped]], start)
    members = grouped[order]
    for p in np.flatnonzero(tree_bins).tolist():
        part = grouped[start[p]:start[p + 1]]
        hashes = java_string_hashes([group.member_ids[i] for i in iteration[part].tolist()])
        members[start[p]:start[p + 1]] = part[hashmap_positions(hashes.tolist())]
    return process_order, (start, members)


@njit(cache=True)
def _member_maps(spreads, start):
    """Each process's member-count ``HashMap`` (default capacity, members put in iteration order), as
    Java iterates it: positions into ``spreads`` (grouped by process), and which processes' maps could
    hold a tree bin (the caller orders those)."""
    order = np.empty(len(spreads), dtype=np.int64)
    tree_bins = np.zeros(len(start) - 1, dtype=np.bool_)
    for p in range(len(start) - 1):
        a, b = start[p], start[p + 1]
        if b - a >= 9 and _may_form_tree_bin(spreads[a:b], 16):
            tree_bins[p] = True
        capacity = insert_only_capacity(spreads[a:b], 16)
        order[a:b] = a + np.argsort(spreads[a:b] & (capacity - 1), kind="mergesort")
    return order, tree_bins


_NO_OFFSETS = (np.zeros(0, dtype=np.int64),) * 3


def _previous_standbys(group: StreamsGroup, rank: np.ndarray, with_offsets: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per task, the members (iteration ranks) the assignor counts as its previous standby owners, each
    once (a member's lists are sets in Kafka): those that held it as a standby, in iteration order; with
    ``with_offsets`` (4.4) ranked as KAFKA-20719 ranks them, first those that held it as a standby, then
    those that only reported an offset sum of it, each part by offset sum, highest first (0 where none
    was reported), then in iteration order. Returns (start, ranks): task t's at start[t] .. start[t + 1] - 1."""
    tasks, members = group.previous_standby
    offset_task, offset_member, offset_sum = group.task_offsets if with_offsets else _NO_OFFSETS
    return _standby_owners(group.num_tasks, len(rank), tasks, rank[members], offset_task, rank[offset_member],
                           offset_sum)


@njit(cache=True)
def _standby_owners(num_tasks, width, tasks, ranks, offset_task, offset_rank, offset_sum):
    """:func:`_previous_standbys` over arrays: the (task, rank) standby pairs (in any order, repeats
    allowed) and the (task, rank, sum) offset sums reported (a member reports a task once)."""
    keys = np.sort(tasks * width + ranks)  # the held pairs, by task, then rank
    held = 0
    for i in range(len(keys)):
        if i == 0 or keys[i] != keys[i - 1]:
            keys[held] = keys[i]
            held += 1
    keys = keys[:held]
    start = np.zeros(num_tasks + 1, dtype=np.int64)
    for i in range(held):
        start[keys[i] // width + 1] += 1
    for t in range(num_tasks):
        start[t + 1] += start[t]
    if len(offset_task) == 0:
        return start, keys % width
    # Offset sums: a held pair's (0 when not reported) and the pairs known only by their sum. Within a
    # task: held pairs with a positive sum (by sum, highest first, then rank), held pairs of sum 0 (by
    # rank, as they stand), then the pairs only reported (by sum, highest first, then rank).
    held_sum = np.zeros(held, dtype=np.int64)
    only_reported = np.zeros(len(offset_task), dtype=np.bool_)
    for i in range(len(offset_task)):
        key = offset_task[i] * width + offset_rank[i]
        j = np.searchsorted(keys, key)
        if j < held and keys[j] == key:
            held_sum[j] = offset_sum[i]
        else:
            only_reported[i] = True
    ranked = np.flatnonzero(held_sum > 0)
    reported = np.flatnonzero(only_reported)
    count = len(ranked) + len(reported)
    ranked_task = np.empty(count, dtype=np.int64)  # 2 * task + (1 if only reported)
    ranked_sum = np.empty(count, dtype=np.int64)
    ranked_rank = np.empty(count, dtype=np.int64)
    for n in range(len(ranked)):
        j = ranked[n]
        ranked_task[n] = 2 * (keys[j] // width)
        ranked_sum[n] = ~held_sum[j]  # ~x: descending, without overflow
        ranked_rank[n] = keys[j] % width
    for n in range(len(reported)):
        i = reported[n]
        ranked_task[len(ranked) + n] = 2 * offset_task[i] + 1
        ranked_sum[len(ranked) + n] = ~offset_sum[i]
        ranked_rank[len(ranked) + n] = offset_rank[i]
    order = np.argsort(ranked_rank, kind="mergesort")  # stable sorts, least significant key first
    order = order[np.argsort(ranked_sum[order], kind="mergesort")]
    order = order[np.argsort(ranked_task[order], kind="mergesort")]
    owners = np.empty(held + len(reported), dtype=np.int64)
    out = 0
    r = 0  # next in order
    for t in range(num_tasks):
        begin = out
        while r < count and ranked_task[order[r]] == 2 * t:
            owners[out] = ranked_rank[order[r]]
            out += 1
            r += 1
        for j in range(start[t], start[t + 1]):
            if held_sum[j] == 0:
                owners[out] = keys[j] % width
                out += 1
        while r < count and ranked_task[order[r]] == 2 * t + 1:
            owners[out] = ranked_rank[order[r]]
            out += 1
            r += 1
        start[t] = begin
    start[num_tasks] = out
    return start, owners


def _answer(group: StreamsGroup, iteration: np.ndarray, active: np.ndarray, standby_task: np.ndarray,
            standby_member: np.ndarray) -> StreamsAnswer:
    """The answer: every member, its tasks grouped by subtopology, sorted."""
    if native is not None:
        return native.build_answer(group.member_ids, group.subtopology_ids,
                                   _member_rows(iteration, group.task_start, active, np.arange(group.num_tasks)),
                                   _member_rows(iteration, group.task_start, standby_member, standby_task))
    task_sub = np.repeat(np.arange(len(group.subtopology_ids)), np.diff(group.task_start))
    actives = _task_maps(group, task_sub, iteration[active], np.arange(group.num_tasks))
    standbys = _task_maps(group, task_sub, iteration[standby_member], standby_task)
    ids = group.member_ids
    return {ids[m]: {"active": actives[m], "standby": standbys[m], "warmup": {}}
            for m in sorted(range(len(ids)), key=ids.__getitem__)}


@njit(cache=True)
def _member_rows(iteration, task_start, members, tasks):
    """(member, subtopology, partition) columns of these (member by iteration rank, task) pairs, listed
    in task order: members as listed positions, the rows by member, then task (a stable counting sort)."""
    num_members = len(iteration)
    start = np.zeros(num_members + 1, dtype=np.int64)
    for i in range(len(members)):
        start[iteration[members[i]] + 1] += 1
    for m in range(num_members):
        start[m + 1] += start[m]
    out_member = np.empty(len(members), dtype=np.int64)
    out_sub = np.empty(len(members), dtype=np.int64)
    out_partition = np.empty(len(members), dtype=np.int64)
    s = 0
    for i in range(len(members)):
        task = tasks[i]
        while task >= task_start[s + 1]:
            s += 1
        m = iteration[members[i]]
        row = start[m]
        start[m] += 1
        out_member[row] = m
        out_sub[row] = s
        out_partition[row] = task - task_start[s]
    return out_member, out_sub, out_partition


def _task_maps(group: StreamsGroup, task_sub: np.ndarray, members: np.ndarray,
               tasks: np.ndarray) -> list[dict[str, list[int]]]:
    """Per listed member, ``{subtopology: [partitions]}`` of these (member, task) pairs, sorted."""
    maps: list[dict[str, list[int]]] = [{} for _ in group.member_ids]
    if not len(tasks):
        return maps
    order = np.lexsort((tasks, members))  # by member, then task (subtopology, then partition)
    members, tasks = members[order], tasks[order]
    subs = task_sub[tasks]
    heads = np.flatnonzero(np.concatenate(([True], (members[1:] != members[:-1]) | (subs[1:] != subs[:-1]))))
    partitions = (tasks - group.task_start[subs]).tolist()
    if len(heads) == len(tasks):  # one partition per (member, subtopology), as when tasks outnumber members little
        lists = [[p] for p in partitions]
    else:
        bounds = np.append(heads, len(tasks)).tolist()
        lists = [partitions[low:high] for low, high in zip(bounds, bounds[1:])]
    sids = group.subtopology_ids
    for member, sub, partitions_of in zip(members[heads].tolist(), subs[heads].tolist(), lists):
        maps[member][sids[sub]] = partitions_of
    return maps


# --- the assignor over arrays -------------------------------------------------------------------------

# The helpers below allocate nothing and are compiled without numba's reference counting (its option
# ``_nrt``): counting references to the arrays handed to them, atomically, call after call, took longer
# than their work (half the kernel's time).
_bare = njit(cache=True, _nrt=False)


@_bare
def _tasks_per_member(tasks: int, members: int) -> int:
    """The quota: tasks over members rounded up, in Java int arithmetic (a count that went negative
    divides toward zero), 0 with no members left."""
    if members == 0:
        return 0
    if tasks >= 0:
        return (tasks + members - 1) // members
    return -((-tasks) // members)


@_bare
def _heap_add(heap, size, p, proc_load):
    """``PriorityQueue.add`` of a process, by load: sift up from the end."""
    k = size
    load = proc_load[p]
    while k > 0:
        parent = (k - 1) >> 1
        e = heap[parent]
        if load >= proc_load[e]:
            break
        heap[k] = e
        k = parent
    heap[k] = p
    return size + 1


@_bare
def _heap_poll(heap, size, proc_load):
    """``PriorityQueue.poll``: the root out, the last element sifted down from the top."""
    result = heap[0]
    n = size - 1
    if n > 0:
        x = heap[n]
        load = proc_load[x]
        k = 0
        half = n >> 1
        while k < half:
            child = 2 * k + 1
            c = heap[child]
            right = child + 1
            if right < n and proc_load[c] > proc_load[heap[right]]:
                child = right
                c = heap[child]
            if load <= proc_load[c]:
                break
            heap[k] = c
            k = child
        heap[k] = x
    return result, n


@_bare
def _member_heap_add(keys, values, base, size, member, value):
    """``PriorityQueue.add`` of a (member, task count) entry into one process's heap at ``base``."""
    k = size
    while k > 0:
        parent = (k - 1) >> 1
        if value >= values[base + parent]:
            break
        keys[base + k] = keys[base + parent]
        values[base + k] = values[base + parent]
        k = parent
    keys[base + k] = member
    values[base + k] = value


@_bare
def _member_heap_poll(keys, values, base, size):
    """``PriorityQueue.poll`` on one process's member heap; returns the member (its count is known)."""
    result = keys[base]
    n = size - 1
    if n > 0:
        x, xv = keys[base + n], values[base + n]
        k = 0
        half = n >> 1
        while k < half:
            child = 2 * k + 1
            right = child + 1
            if right < n and values[base + child] > values[base + right]:
                child = right
            if xv <= values[base + child]:
                break
            keys[base + k] = keys[base + child]
            values[base + k] = values[base + child]
            k = child
        keys[base + k] = x
        values[base + k] = xv
    return result


@_bare
def _holds(task, p, holder, held):
    for j in range(held[task]):
        if holder[task, j] == p:
            return True
    return False


@_bare
def _prev_member_with_least_load(task, check, first, stop, prev, skip_holders, member_process, member_tasks,
                                 proc_load, holder, held):
    """Kafka's choice among a task's previous (standby) owners: the first listed one, replaced by a
    later one whose process load and own count are both lower; with ``check`` (a standby to place),
    none whose process holds the task. Kafka 4.2/4.3 start from the first listed one whatever its
    process holds, and give up (-1) when that process holds the task, even if another was chosen;
    Kafka 4.4 (``skip_holders``, KAFKA-20899) passes over such members and starts from the first
    that remains (-1 when none does)."""
    candidate = -1
    candidate_load = 0.0
    candidate_count = 0
    for i in range(first, stop):
        member = prev[i]
        p = member_process[member]
        if check and (skip_holders or candidate >= 0) and _holds(task, p, holder, held):
            continue
        load = proc_load[p]
        if candidate < 0 or (load < candidate_load and member_tasks[member] < candidate_count):
            candidate_load = load
            candidate_count = member_tasks[member]
            candidate = member
    if check and not skip_holders and _holds(task, member_process[prev[first]], holder, held):
        return -1
    return candidate


# The state _sticky threads through its helpers, passed array by array (numba counts references to
# arrays taken out of a tuple, which costs more than the assignment itself in these loops):
#   member_process, member_tasks: member m's process and task count (active and standby);
#   proc_tasks, proc_members, proc_load: process p's task count, member count and load (tasks / members,
#   as a Java double); holder[t, :held[t]], the processes holding task t (its active one first),
#   owner[t, :held[t]] the members;
#   pm_start, pm_members, heap_keys, heap_values, heap_built: process p's members, in its member map's
#   order, at pm_start[p] .. pm_start[p + 1] - 1, and its member heap (member, task count) laid out over
#   the same slots, valid while heap_built[p].


@_bare
def _give(task, member, member_process, member_tasks, proc_tasks, proc_members, proc_load, holder, owner, held):
    """``addTaskInternal``: the task to this member and its process; the member's new task count.
    The process's load is kept beside its count, divided once here (as Java's ``computeLoad``)."""
    p = member_process[member]
    proc_tasks[p] += 1
    proc_load[p] = proc_tasks[p] / proc_members[p]
    holder[task, held[task]] = p
    owner[task, held[task]] = member
    held[task] += 1
    member_tasks[member] += 1
    return member_tasks[member]


@_bare
def _give_to(task, member, member_process, member_tasks, proc_tasks, proc_members, proc_load, holder, owner, held,
             heap_built):
    """``ProcessState.addTask``: straight to this member; its process's member heap is dropped (Kafka
    cannot reorder it for one member and builds it again when next needed)."""
    heap_built[member_process[member]] = False
    return _give(task, member, member_process, member_tasks, proc_tasks, proc_members, proc_load, holder, owner, held)


@_bare
def _give_to_least_loaded_member(task, p, member_process, member_tasks, proc_tasks, proc_members, proc_load, holder,
                                 owner, held, pm_start, pm_members, heap_keys, heap_values, heap_built):
    """``addTaskToLeastLoadedMember``: a lone member takes it; otherwise the process's member heap
    (built from its member map on first use after a direct assignment) yields the member."""
    base = pm_start[p]
    size = pm_start[p + 1] - base
    if size == 1:
        return _give(task, pm_members[base], member_process, member_tasks, proc_tasks, proc_members, proc_load,
                     holder, owner, held)
    if not heap_built[p]:
        for i in range(size):
            member = pm_members[base + i]
            _member_heap_add(heap_keys, heap_values, base, i, member, member_tasks[member])
        heap_built[p] = True
    member = _member_heap_poll(heap_keys, heap_values, base, size)
    count = _give(task, member, member_process, member_tasks, proc_tasks, proc_members, proc_load, holder, owner,
                  held)
    _member_heap_add(heap_keys, heap_values, base, size - 1, member, count)
    return count


@njit(cache=True)
def _by_partition(task_start):
    """The tasks in the order partition, then subtopology (a counting sort by partition, subtopologies
    taken in order)."""
    num_subs = len(task_start) - 1
    widest = 0
    for s in range(num_subs):
        widest = max(widest, task_start[s + 1] - task_start[s])
    start = np.zeros(widest + 1, dtype=np.int64)
    for s in range(num_subs):
        start[1:task_start[s + 1] - task_start[s] + 1] += 1
    for p in range(widest):
        start[p + 1] += start[p]
    order = np.empty(task_start[num_subs], dtype=np.int64)
    for s in range(num_subs):
        for p in range(task_start[s + 1] - task_start[s]):
            order[start[p]] = task_start[s] + p
            start[p] += 1
    return order


@njit(cache=True)
def _sticky(task_start, stateful, standbys, member_process, pm_start, pm_members, previous_active,
            standby_start, standby_members, skip_holders):
    """The assignment: each task's active member, then the standby (task, member) pairs. Members are
    iteration ranks, processes positions in the process map's iteration order; ``skip_holders``: Kafka
    4.4's choice among previous standby owners (:func:`_prev_member_with_least_load`)."""
    num_subs = len(stateful)
    num_tasks = task_start[num_subs]
    num_members = len(member_process)
    num_procs = len(pm_start) - 1
    task_stateful = np.zeros(num_tasks, dtype=np.bool_)
    total_active = 0
    total = 0
    for s in range(num_subs):
        n = task_start[s + 1] - task_start[s]
        task_stateful[task_start[s]:task_start[s + 1]] = stateful[s]
        total_active += n
        total += n + (n * standbys if stateful[s] else 0)
    slots = max(1, min(standbys + 1, num_procs))
    member_tasks = np.zeros(num_members, dtype=np.int64)
    proc_tasks = np.zeros(num_procs, dtype=np.int64)
    proc_members = np.diff(pm_start)
    proc_load = np.zeros(num_procs, dtype=np.float64)  # every process has a member: load 0
    holder = np.full((num_tasks, slots), -1, dtype=np.int64)
    owner = np.full((num_tasks, slots), -1, dtype=np.int64)
    held = np.zeros(num_tasks, dtype=np.int64)
    heap_keys = np.zeros(num_members, dtype=np.int64)
    heap_values = np.zeros(num_members, dtype=np.int64)
    heap_built = np.zeros(num_procs, dtype=np.bool_)
    # quotas: [tasks left, members left, quota] for active tasks and for all replicas
    active_quota = np.array([total_active, num_members, _tasks_per_member(total_active, num_members)])
    total_quota = np.array([total, num_members, _tasks_per_member(total, num_members)])

    by_partition = _by_partition(task_start)
    done = np.zeros(num_tasks, dtype=np.bool_)

    # 1. back to the previous active owner, below the active quota
    for task in by_partition:
        member = previous_active[task]
        if member >= 0 and member_tasks[member] < active_quota[2]:
            count = _give_to(task, member, member_process, member_tasks, proc_tasks, proc_members, proc_load,
                             holder, owner, held, heap_built)
            _reached(active_quota, count)
            _reached(total_quota, count)
            done[task] = True
    # 2. to a previous standby owner, below the active quota
    for task in by_partition:
        if done[task] or standby_start[task] == standby_start[task + 1]:
            continue
        member = _prev_member_with_least_load(task, False, standby_start[task], standby_start[task + 1],
                                              standby_members, skip_holders, member_process, member_tasks,
                                              proc_load, holder, held)
        if member_tasks[member] < active_quota[2]:
            count = _give_to(task, member, member_process, member_tasks, proc_tasks, proc_members, proc_load,
                             holder, owner, held, heap_built)
            _reached(active_quota, count)
            _reached(total_quota, count)
            done[task] = True
    # 3. the rest, subtopology by subtopology, to the least loaded process
    heap = np.empty(num_procs, dtype=np.int64)
    size = 0
    for p in range(num_procs):
        size = _heap_add(heap, size, p, proc_load)
    for task in range(num_tasks):
        if done[task]:
            continue
        p, size = _heap_poll(heap, size, proc_load)
        count = _give_to_least_loaded_member(task, p, member_process, member_tasks, proc_tasks, proc_members,
                                             proc_load, holder, owner, held, pm_start, pm_members, heap_keys,
                                             heap_values, heap_built)
        _reached(active_quota, count)
        _reached(total_quota, count)
        size = _heap_add(heap, size, p, proc_load)

    if standbys > 0:
        _assign_standbys(standbys, task_stateful, by_partition, previous_active, standby_start, standby_members,
                         total_quota, skip_holders, member_process, member_tasks, proc_tasks, proc_members,
                         proc_load, holder, owner, held, pm_start, pm_members, heap_keys, heap_values, heap_built,
                         np.zeros(num_tasks, dtype=np.int64), heap, np.empty(num_procs, dtype=np.int64))

    active = owner[:, 0].copy()
    num_standby = held.sum() - num_tasks
    standby_task = np.empty(num_standby, dtype=np.int64)
    standby_member = np.empty(num_standby, dtype=np.int64)
    i = 0
    for task in range(num_tasks):
        for j in range(1, held[task]):
            standby_task[i] = task
            standby_member[i] = owner[task, j]
            i += 1
    return active, standby_task, standby_member


@_bare
def _reached(quota, count):
    """``maybeUpdate...TasksPerMember``: a member that reached the quota exactly leaves the count."""
    if count == quota[2]:
        quota[1] -= 1
        quota[0] -= count
        quota[2] = _tasks_per_member(quota[0], quota[1])


@_bare
def _assign_standbys(standbys, task_stateful, by_partition, previous_active, standby_start, standby_members,
                     total_quota, skip_holders, member_process, member_tasks, proc_tasks, proc_members, proc_load,
                     holder, owner, held, pm_start, pm_members, heap_keys, heap_values, heap_built, missing, heap,
                     polled):
    """The standby replicas; ``missing`` (zeros, a slot per task), ``heap`` and ``polled`` (a slot per
    process) are its scratch space."""
    num_tasks = len(task_stateful)
    for i in range(num_tasks - 1, -1, -1):  # partition, then subtopology, both descending
        task = by_partition[i]
        if not task_stateful[task]:
            continue
        for replica in range(standbys):
            member = previous_active[task]
            if member >= 0:
                if not _holds(task, member_process[member], holder, held) and member_tasks[member] < total_quota[2]:
                    _reached(total_quota, _give_to(task, member, member_process, member_tasks, proc_tasks,
                                                   proc_members, proc_load, holder, owner, held, heap_built))
                    continue
            if standby_start[task] < standby_start[task + 1]:
                member = _prev_member_with_least_load(task, True, standby_start[task], standby_start[task + 1],
                                                      standby_members, skip_holders, member_process, member_tasks,
                                                      proc_load, holder, held)
                if member >= 0 and member_tasks[member] < total_quota[2]:
                    _reached(total_quota, _give_to(task, member, member_process, member_tasks, proc_tasks,
                                                   proc_members, proc_load, holder, owner, held, heap_built))
                    continue
            missing[task] = standbys - replica
            break

    size = 0
    for p in range(len(proc_load)):
        size = _heap_add(heap, size, p, proc_load)
    for task in range(num_tasks - 1, -1, -1):  # subtopology, then partition, both descending
        for _ in range(missing[task]):
            # take processes off the heap until one does not hold the task; all go back, last taken first
            taken = 0
            found = False
            while size > 0:
                p, size = _heap_poll(heap, size, proc_load)
                polled[taken] = p
                taken += 1
                if not _holds(task, p, holder, held):
                    _reached(total_quota, _give_to_least_loaded_member(
                        task, p, member_process, member_tasks, proc_tasks, proc_members, proc_load, holder, owner,
                        held, pm_start, pm_members, heap_keys, heap_values, heap_built))
                    found = True
                    break
            for j in range(taken - 1, -1, -1):
                size = _heap_add(heap, size, polled[j], proc_load)
            if not found:
                break  # Kafka logs that it cannot place the remaining replicas of this task
