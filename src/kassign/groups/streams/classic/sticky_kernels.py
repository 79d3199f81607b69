"""numba kernels of Kafka Streams' StickyTaskAssignor (:mod:`kassign.groups.streams.classic.sticky`): its
``AssignmentState`` over arrays, and its three active steps and its standby step in two calls.

The Java orders are worked out by the caller (:mod:`kassign.core.javasets`) and handed in as arrays of client
numbers: the ``HashSet`` of all clients, each task's ``HashSet`` of previous standby clients and its copy. The
standby step builds, per placement, the ``HashSet`` of the clients without a copy of the task (default capacity,
one ``add`` each in the order of the assignor's map of clients); where that set cannot have crowded a bucket,
its order is that of all clients by bucket of its table size (``perms``), else :func:`hash_set_positions` orders
it, else (a possible tree bin) the kernel stops and says so, and the caller orders that set with the general
model and calls again.

State (one ``_State``-like set of arrays, clients and tasks by number):

* what each client was given, in order (its ``KafkaStreamsAssignment``'s map): a linked list of slots,
  ``head``/``tail`` per client, ``slot_task``/``slot_next``/``slot_active`` per slot;
* per client: ``count`` (tasks given), ``n_active``, ``loads`` (``count / threads`` as a Java double);
* per task: ``loc[task, :nloc[task]]``, the clients holding it (``newTaskLocations``);
* ``TaskPairs``: an open-addressing hash set of ``lower * n_tasks + higher + 1`` (0 is empty) in ``pairs``,
  ``meta[1]`` of them, in a table of ``2 ** meta[2]`` entries; ``meta[0]`` is the number of slots used.

``least_loaded`` is ``findLeastLoadedClient``: the first empty client in the set's order; else the first of the
least loaded among those with a task the task was never paired with; else the first of the least loaded.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kassign.core.loadheap import hash_set_positions

DONE, REORDERS, NEEDS_ORDER = 0, 1, 2

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


# -- TaskPairs ---------------------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _bucket(key, bits):
    return np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(64 - bits))


@njit(cache=True, inline="always")
def _pair_key(a, b, n):
    return (a * n + b if a < b else b * n + a) + 1


@njit(cache=True)
def _has_pair(pairs, bits, key):
    mask = (1 << bits) - 1
    i = _bucket(key, bits)
    while True:
        k = pairs[i]
        if k == key:
            return True
        if k == 0:
            return False
        i = (i + 1) & mask


@njit(cache=True)
def _add_pair(pairs, bits, key):
    """Adds ``key``; whether it was new (the table must have room)."""
    mask = (1 << bits) - 1
    i = _bucket(key, bits)
    while True:
        k = pairs[i]
        if k == key:
            return False
        if k == 0:
            pairs[i] = key
            return True
        i = (i + 1) & mask


@njit(cache=True)
def _room_for(pairs, meta, more):
    """``pairs``, or a larger copy, with room for ``more`` keys beyond ``meta[1]`` at half load at most."""
    bits = meta[2]
    if (meta[1] + more) * 2 <= (1 << bits):
        return pairs
    while (meta[1] + more) * 2 > (1 << bits):
        bits += 1
    grown = np.zeros(1 << bits, dtype=np.int64)
    for k in pairs:
        if k != 0:
            _add_pair(grown, bits, k)
    meta[2] = bits
    return grown


def new_pairs(n_tasks: int) -> tuple[np.ndarray, np.ndarray]:
    """An empty ``TaskPairs`` table and the ``meta`` array (no slots used, no pairs)."""
    bits = max(10, int(8 * max(n_tasks, 1)).bit_length())
    return np.zeros(1 << bits, dtype=np.int64), np.array([0, 0, bits], dtype=np.int64)


# -- AssignmentState -------------------------------------------------------------------------------------------

@njit(cache=True)
def _finalize(task, c, active, n_tasks, capacity, count, n_active, loads, head, tail, slot_task, slot_next,
              slot_active, loc, nloc, pairs, meta):
    """``finalizeAssignment``: the pairs of ``task`` with what ``c`` holds, then ``task`` to ``c``. Gives the pairs
    table (grown where it had to)."""
    pairs = _room_for(pairs, meta, count[c])
    bits = meta[2]
    s = head[c]
    added = 0
    while s >= 0:
        if _add_pair(pairs, bits, _pair_key(slot_task[s], task, n_tasks)):
            added += 1
        s = slot_next[s]
    meta[1] += added
    s = meta[0]
    meta[0] = s + 1
    slot_task[s] = task
    slot_next[s] = -1
    slot_active[s] = active
    if tail[c] >= 0:
        slot_next[tail[c]] = s
    else:
        head[c] = s
    tail[c] = s
    count[c] += 1
    loads[c] = count[c] / capacity[c]
    if active:
        n_active[c] += 1
    loc[task, nloc[task]] = c
    nloc[task] += 1
    return pairs


@njit(cache=True)
def _has_new_pair(task, c, n_tasks, head, slot_task, slot_next, pairs, meta, max_pairs):
    if meta[1] == max_pairs:
        return False
    bits = meta[2]
    s = head[c]
    while s >= 0:
        if not _has_pair(pairs, bits, _pair_key(slot_task[s], task, n_tasks)):
            return True
        s = slot_next[s]
    return False


@njit(cache=True)
def _least_loaded(task, order, member, loads, n_tasks, head, slot_task, slot_next, pairs, meta, max_pairs):
    """``findLeastLoadedClient`` over the members of ``order`` (in that order); -1 where there is none."""
    best = -1
    best_load = 0.0
    for c in order:
        if not member[c]:
            continue
        load = loads[c]
        if load == 0:
            return c
        if (best < 0 or load < best_load) and _has_new_pair(task, c, n_tasks, head, slot_task, slot_next, pairs,
                                                            meta, max_pairs):
            best = c
            best_load = load
    if best >= 0:
        return best
    for c in order:
        if member[c] and (best < 0 or loads[c] < best_load):
            best = c
            best_load = loads[c]
    return best


@njit(cache=True)
def _should_balance(c, loads):
    """``shouldBalanceLoad``: a task per thread or more while some client is lighter."""
    load = loads[c]
    return load >= 1 and loads.min() < load


@njit(cache=True)
def _best_client(task, order, size, member, prev_active, copy_ptr, copy_clients, loads, n_tasks, head, slot_task,
                 slot_next, pairs, meta, max_pairs):
    """``findBestClientForTask`` among the ``size`` members of ``order``."""
    if size == 1:
        for c in order:
            if member[c]:
                return c
    copies = copy_clients[copy_ptr[task]:copy_ptr[task + 1]]
    previous = prev_active[task]
    if previous < 0 or not member[previous]:
        previous = _least_loaded(task, copies, member, loads, n_tasks, head, slot_task, slot_next, pairs, meta,
                                 max_pairs)
    if previous < 0:
        return _least_loaded(task, order, member, loads, n_tasks, head, slot_task, slot_next, pairs, meta, max_pairs)
    if _should_balance(previous, loads):
        standby = _least_loaded(task, copies, member, loads, n_tasks, head, slot_task, slot_next, pairs, meta,
                                max_pairs)
        if standby < 0 or _should_balance(standby, loads):
            return _least_loaded(task, order, member, loads, n_tasks, head, slot_task, slot_next, pairs, meta,
                                 max_pairs)
        return standby
    return previous


# -- the steps -------------------------------------------------------------------------------------------------

@njit(cache=True)
def assign_actives(limits, active_keys, prev_active, unassigned, standby_ptr, standby_clients, copy_ptr,
                   copy_clients, everyone, removals_may_reorder, max_pairs, capacity, count, n_active, loads, head,
                   tail, slot_task, slot_next, slot_active, loc, nloc, pairs, meta):
    """Steps 1 to 3 (``assignActive``). Gives (status, pairs table): ``REORDERS`` where step 1 placed a task while
    removals may reorder the set of unassigned tasks (nothing further done), else ``DONE``."""
    n_tasks = len(prev_active)
    for task in active_keys:
        c = prev_active[task]
        if n_active[c] < limits[c]:
            pairs = _finalize(task, c, True, n_tasks, capacity, count, n_active, loads, head, tail, slot_task,
                              slot_next, slot_active, loc, nloc, pairs, meta)
    if removals_may_reorder and meta[0] > 0:
        return REORDERS, pairs
    for task in unassigned:
        if nloc[task] > 0:
            continue
        for c in standby_clients[standby_ptr[task]:standby_ptr[task + 1]]:
            if n_active[c] < limits[c]:
                pairs = _finalize(task, c, True, n_tasks, capacity, count, n_active, loads, head, tail, slot_task,
                                  slot_next, slot_active, loc, nloc, pairs, meta)
                break
    member = np.ones(len(capacity), dtype=np.bool_)
    for task in range(n_tasks):
        if nloc[task] > 0:
            continue
        c = _best_client(task, everyone, len(everyone), member, prev_active, copy_ptr, copy_clients, loads, n_tasks,
                         head, slot_task, slot_next, pairs, meta, max_pairs)
        pairs = _finalize(task, c, True, n_tasks, capacity, count, n_active, loads, head, tail, slot_task, slot_next,
                          slot_active, loc, nloc, pairs, meta)
    return DONE, pairs


@njit(cache=True)
def assign_standbys(stateful_tasks, wanted, start, forced, client_order, spreads, perm_tables, perms, prev_active,
                    copy_ptr, copy_clients, max_pairs, capacity, count, n_active, loads, head, tail, slot_task,
                    slot_next, slot_active, loc, nloc, pairs, meta):
    """Step 4 (``assignStandby``) from placement ``start`` (``task position * wanted + replica``). ``perms[i]``: all
    clients in the order of a ``HashSet`` of ``perm_tables[i]`` buckets, where no set of the clients without a
    copy of a task can crowd a bucket. ``forced``: the order of the clients without a copy for placement ``start``
    (empty: work it out). Gives (status, placement, pairs table): ``NEEDS_ORDER`` and the placement whose set of
    clients the caller must order (a tree bin may have formed), else ``DONE``."""
    n_tasks = len(prev_active)
    n_clients = len(capacity)
    member = np.ones(n_clients, dtype=np.bool_)
    for position in range(start // wanted, len(stateful_tasks)):
        task = stateful_tasks[position]
        for replica in range(start % wanted if position == start // wanted else 0, wanted):
            placement = position * wanted + replica
            size = n_clients - nloc[task]
            if size == 0:
                break  # every client has a copy: Kafka logs that the task's standbys could not all be placed
            for j in range(nloc[task]):
                member[loc[task, j]] = False
            if placement == start and len(forced) > 0:
                order = forced
            else:
                table = 16
                while size > table * 3 // 4:
                    table *= 2
                order = np.empty(0, dtype=np.int64)
                found = False
                for i in range(len(perm_tables)):
                    if perm_tables[i] == table:
                        order = perms[i]
                        found = True
                if not found:
                    within = np.empty(size, dtype=np.int64)
                    k = 0
                    for c in client_order:
                        if member[c]:
                            within[k] = c
                            k += 1
                    positions = hash_set_positions(spreads[within])
                    if len(positions) == 0:
                        for j in range(nloc[task]):
                            member[loc[task, j]] = True
                        return NEEDS_ORDER, placement, pairs
                    order = within[positions]
            c = _best_client(task, order, size, member, prev_active, copy_ptr, copy_clients, loads, n_tasks, head,
                             slot_task, slot_next, pairs, meta, max_pairs)
            for j in range(nloc[task]):
                member[loc[task, j]] = True
            pairs = _finalize(task, c, False, n_tasks, capacity, count, n_active, loads, head, tail, slot_task,
                              slot_next, slot_active, loc, nloc, pairs, meta)
    return DONE, 0, pairs


@njit(cache=True)
def given_lists(head, slot_task, slot_next, slot_active, count):
    """What each client was given, in order: (offsets per client, tasks, whether active)."""
    ptr = np.zeros(len(head) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(count)
    tasks = np.empty(ptr[-1], dtype=np.int64)
    active = np.empty(ptr[-1], dtype=np.bool_)
    for c in range(len(head)):
        k = ptr[c]
        s = head[c]
        while s >= 0:
            tasks[k] = slot_task[s]
            active[k] = slot_active[s]
            k += 1
            s = slot_next[s]
    return ptr, tasks, active
