"""``optimal``: kassign's own Kafka Streams task assignor, the best assignment for a stated goal.

It reads what the high-availability assignor reads (the same scenario) and
answers in the same shape, but instead of Kafka's heuristic it computes, exactly, the
assignment that is best for the objectives below, each mattering only among the assignments
best for those before it. It hands out the final assignment at once: **no warm-up replicas and
never a probing rebalance**; a task given to a client that lacks part of its state restores
there before it runs, and the objectives make that restoration as small as balance allows.

Terms. ``w(c)``: client c's stream threads. ``lack(t, c)``: the changelog offsets client c lacks
for stateful task t, ``end(t) - offset_sum(c, t)``; 0 when c reports -2 (it runs t); ``end(t)``
when c reports nothing or more than ``end(t)`` (as :mod:`~kassign.groups.streams.classic.lags`
computes lags). c is *caught up* on t when ``lack`` is within ``acceptable_recovery_lag`` or c
reports -2 (every client is, when the setting is ``2^63 - 1``). c *runs* t when one of its
consumers owns t or c reports -2 for it. ``R = min(num_standby_replicas, clients - 1)``.

Every answer: each task has exactly one active client; each stateful task has ``R`` standbys
on distinct clients, none of them its active's. Among those, in this order:

A. Stateful active tasks (``s(c)`` of them on client c):
   1. balance: the least ``sum s(c)^2 / w(c)``, the per-thread loads ``s(c) / w(c)`` as close to
      the application's average as whole tasks allow (Sainte-Lague apportionment: with equal
      thread counts, client counts differ by at most one);
   2. availability: the most stateful tasks active on a client caught up on them (running
      within moments: a caught-up standby is promoted, say, rather than a task restored);
   3. stickiness: the most stateful tasks staying active on a client that runs them and is
      caught up on them;
   4. restoration: the least ``sum lack(t, active client)``.
B. Standbys, around the actives A chose:
   1. client tags (where ``rack_aware_assignment_tags`` are given): the most distinct tag
      values, summed over tasks and tag keys, among each task's copies (active and standbys);
   2. balance: the least ``sum m(c)^2 / w(c)``, ``m(c)`` the standbys on client c;
   3. restoration: the least ``sum lack(t, c)`` over the standbys;
   4. stickiness: the most standbys staying on a client that holds state for their task (reports an
      offset sum for it), so a settled placement stays put where restoring elsewhere would cost nothing
      either (a task whose changelog is empty).
C. Stateless active tasks, around A's actives (``l(c)`` of them on client c):
   1. balance of all actives: the least ``sum (s(c) + l(c))^2 / w(c)``;
   2. stickiness: the most stateless tasks staying with a client that runs them.

So a task running on a caught-up client stays there unless balance moves it (its client has more
such tasks than its balanced share) or moving it, to another caught-up client, lets a task that
would otherwise restore run on a caught-up client instead (A2 before A3: a handover of a moment
against a restoration). Ties left after that are broken deterministically (the same input
gives the same answer).
The tasks of each client are then split over its consumers as Kafka Streams splits them
(:mod:`~kassign.groups.streams.classic.threads`); ``probing_rebalance`` is always false.

Worked example: clients A and B, one thread each; stateful tasks ``0_0`` .. ``0_3``, end offset
sums 1000 each; A runs all four (offset sums -2); B was away and reports ``0_2``: 950 and
``0_3``: 400 (it lacks 50 and 600); ``acceptable_recovery_lag`` 100; no standbys.
A1 asks for two tasks each. A2: three tasks at most can be on a caught-up client (A's two and
``0_2`` on B). A3: A keeps two of its four. A4: B takes ``0_2`` and, of the rest, the one it lacks
least of, ``0_3``: 650 offsets restored (``0_0`` or ``0_1`` would cost 1000). Answer:
A active ``0_0``, ``0_1``; B active ``0_2``, ``0_3``; no probing rebalance. B restores 50 and 600
offsets, then runs.
Kafka's high-availability assignor, on the same input, deals ``0_1`` and ``0_3`` to B, then
moves both back to A, which runs them, since B is not caught up on them, leaving B warm-ups of
both and scheduling a probing rebalance; it keeps ``0_2`` on A though B is caught up on it.
A runs all four tasks until a probing rebalance finds B caught up and balances.

Where this differs from Kafka, and why:

* Kafka never moves an active task to a client that is not caught up while a caught-up client
  exists: it keeps the task where it runs, warms the new client up, and balances at later
  probing rebalances. ``optimal`` balances at once and restores instead: fewer rebalances and
  no warm-up reading, but a task it hands to a lagging client is unavailable while that client
  restores (``lack / restoration speed``). The simulator (``kassign simulate``) shows both.
* Kafka balances by tasks per thread counting actives and standbys together, dealing stateful
  tasks round robin regardless of where state is; ``optimal`` balances actives and standbys
  each exactly and chooses, among balanced answers, the one that keeps and restores least.
* Kafka places standbys by client tags greedily, task by task; ``optimal`` maximises the
  distinct tag values over all tasks at once.
* Actives are chosen before standbys (A before B): an assignment with equally good actives and
  better standbys is not looked for. Kafka, too, places actives first.

Method: each part is a min-cost flow over tasks, clients and (for tags) per-task tag-value
nodes, solved for its objectives in order (:mod:`~kassign.groups.streams.classic.lexflow`).
Active balance is exact arithmetic first: the balanced counts are exactly those between two
bounds per client (the apportionment's threshold), which become the flow's arc bounds. Standby
balance is a convex cost per client (its k-th standby costs ``(2k - 1) / w(c)``, scaled to whole
numbers). Tag keys that nest (each value of one lies within one value of another, like zone and
rack) are a tree of value nodes per task; keys that cross are solved as an integer program
(scipy's HiGHS) instead, in floating point: kassign refuses it (one line) when costs reach 2^52
or the program more than ``MILP_LIMIT`` variables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kassign.core.errors import KassignError
from kassign.groups.streams.classic.high_availability import Clients
from kassign.groups.streams.classic.lags import lag_matrix
from kassign.groups.streams.classic.lexflow import lexicographic_flow
from kassign.groups.streams.classic.scenario import JAVA_LONG_MAX, LATEST_OFFSET, StreamsClassicScenario

MILP_LIMIT = 200_000  # variables of the crossing-tag-keys program kassign is willing to hand to HiGHS
_FLOAT_EXACT = 1 << 52


# -- balance ------------------------------------------------------------------------------------

def balanced_bounds(total: int, weights: list[int], base: list[int] | None = None) -> tuple[list[int], list[int]]:
    """The counts ``n(c)`` (added on top of ``base(c)``) minimising ``sum (base(c) + n(c))^2 / w(c)``
    with ``sum n(c) = total``: exactly those with ``low(c) <= n(c) <= high(c)``.

    The k-th unit at c costs ``(2 (base(c) + k) - 1) / w(c)`` more; the optimum takes the ``total``
    cheapest units, so every unit below the threshold (the ``total``-th cheapest cost) is taken,
    none above, and any of those at the threshold."""
    base = base or [0] * len(weights)
    if total == 0:
        return [0] * len(weights), [0] * len(weights)
    scale = math.lcm(*weights)
    per = [scale // w for w in weights]  # the k-th unit at c costs (2 (base + k) - 1) * per[c] / scale

    def taken(threshold: int, c: int) -> int:  # units at c costing at most threshold / scale
        return max(0, (threshold // per[c] + 1) // 2 - base[c])

    low, high = 0, (2 * (max(base) + total) + 1) * max(per)
    while low < high:  # the least threshold reaching `total` units
        mid = (low + high) // 2
        if sum(taken(mid, c) for c in range(len(weights))) >= total:
            high = mid
        else:
            low = mid + 1
    return ([taken(low - 1, c) for c in range(len(weights))], [taken(low, c) for c in range(len(weights))])


# -- the inputs as arrays -----------------------------------------------------------------------

@dataclass
class Inputs:
    """What the objectives read, per client and task (tasks by scenario index)."""

    weights: list[int]
    lack: np.ndarray  # [client, task] int64; stateful tasks only mean anything
    caught_up: np.ndarray  # [client, task] bool
    runs: np.ndarray  # [client, task] bool
    holds: np.ndarray  # [client, task] bool: the client reports an offset sum for the task, or runs it
    ends: list[int]
    stateful: list[int]
    stateless: list[int]
    standbys: int
    bound: int  # acceptable_recovery_lag
    tag_keys: list[str]
    tags: list[dict[str, str]]


def inputs_of(scenario: StreamsClassicScenario, merged: list[dict[int, int]]) -> Inputs:
    n_clients, n_tasks = len(scenario.clients), len(scenario.tasks)
    lags = lag_matrix(scenario, merged) if n_tasks else np.zeros((n_clients, 0), np.int64)
    lack = np.where(lags == LATEST_OFFSET, 0, lags)
    bound = scenario.acceptable_recovery_lag
    if bound == JAVA_LONG_MAX:
        caught_up = np.ones(lags.shape, dtype=bool)
    else:
        caught_up = (lags == LATEST_OFFSET) | ((lags >= 0) & (lags <= bound))
    runs = np.zeros((n_clients, n_tasks), dtype=bool)
    holds = np.zeros((n_clients, n_tasks), dtype=bool)
    for c, client in enumerate(scenario.clients):
        for consumer in client.consumers:
            runs[c, consumer.owned] = True
        for task, value in merged[c].items():
            holds[c, task] = True
            if value == LATEST_OFFSET:
                runs[c, task] = True
    holds |= runs
    stateful = [t for t, s in enumerate(scenario.stateful) if s]
    stateless = [t for t, s in enumerate(scenario.stateful) if not s]
    return Inputs([c.capacity for c in scenario.clients], lack, caught_up, runs, holds, list(scenario.end_offset_sums),
                  stateful, stateless, min(scenario.num_standby_replicas, n_clients - 1), bound,
                  list(scenario.rack_aware_assignment_tags), [c.client_tags for c in scenario.clients])


def _unit_costs(first: np.ndarray, per: list[int]) -> np.ndarray:
    """``first * per[c]`` for arcs whose client is c (given as ``per`` already picked per arc): int64 where
    it fits, else Python integers."""
    top = int(first.max(initial=0)) * max(per, default=0)
    if top <= JAVA_LONG_MAX:
        return first.astype(np.int64) * np.asarray(per, np.int64)
    return np.array([int(f) * int(q) for f, q in zip(first.tolist(), per)], dtype=object)


def place_actives(n: int, low: list[int], high: list[int], direct_task: np.ndarray, direct_client: np.ndarray,
                  direct_costs: list[np.ndarray], hub_costs: list[np.ndarray]) -> np.ndarray:
    """Each of ``n`` tasks on one client, client c taking from ``low[c]`` to ``high[c]`` of them, best for
    the stage costs in order. Task ``direct_task[j]`` costs ``direct_costs[k][j]`` at ``direct_client[j]``
    in stage k, and ``hub_costs[k][i]`` at any other client (through one hub node). Gives each task's client."""
    m = len(low)
    if not n:
        return np.zeros(0, np.int64)
    d = len(direct_task)
    hub, first_client, sink = n, n + 1, n + m + 1
    clients = np.arange(m)
    tails = np.concatenate([direct_task, np.arange(n), np.full(m, hub), first_client + clients])
    heads = np.concatenate([first_client + direct_client, np.full(n, hub), first_client + clients, np.full(m, sink)])
    lower = np.concatenate([np.zeros(d + n + m, np.int64), np.asarray(low, np.int64)])
    upper = np.concatenate([np.ones(d + n, np.int64), np.full(m, n), np.asarray(high, np.int64)])
    zeros = np.zeros(2 * m, np.int64)
    stages = [np.concatenate([dc, hc, zeros]) for dc, hc in zip(direct_costs, hub_costs)]
    supply = np.zeros(n + m + 2, np.int64)
    supply[:n] = 1
    supply[sink] = -n
    flow = lexicographic_flow(n + m + 2, tails, heads, lower, upper, supply, stages)
    placed = np.full(n, -1, np.int64)
    used = flow[:d] > 0
    placed[direct_task[used]] = direct_client[used]
    # every task the hub carries costs its hub costs wherever it lands (the solver would have used a
    # cheaper direct arc otherwise), so the hub's tasks and slots pair up in order
    hub_tasks = np.flatnonzero(flow[d:d + n] > 0)
    placed[hub_tasks] = np.repeat(clients, flow[d + n:d + n + m])
    return placed


def stateful_actives(inp: Inputs) -> np.ndarray:
    """Part A: every stateful task's active client (in ``inp.stateful`` order)."""
    low, high = balanced_bounds(len(inp.stateful), inp.weights)
    tasks = np.asarray(inp.stateful, np.int64)
    lack = inp.lack[:, tasks].T  # [task, client]
    caught_up = inp.caught_up[:, tasks].T
    keep = inp.runs[:, tasks].T & caught_up
    ends = np.asarray(inp.ends, np.int64)[tasks]
    # a client that has no state for a task costs what the hub costs
    direct_task, direct_client = np.nonzero(keep | (lack < ends[:, None]))
    unbounded = inp.bound == JAVA_LONG_MAX
    direct = [(~caught_up[direct_task, direct_client]).astype(np.int64),
              (~keep[direct_task, direct_client]).astype(np.int64),
              lack[direct_task, direct_client]]
    # a client without state is caught up only on a changelog within the acceptable lag
    hub = [np.zeros(len(tasks), np.int64) if unbounded else (ends > inp.bound).astype(np.int64),
           np.ones(len(tasks), np.int64), ends]
    return place_actives(len(tasks), low, high, direct_task, direct_client, direct, hub)


def stateless_actives(inp: Inputs, stateful_counts: list[int]) -> np.ndarray:
    """Part C: every stateless task's client (in ``inp.stateless`` order)."""
    low, high = balanced_bounds(len(inp.stateless), inp.weights, stateful_counts)
    tasks = np.asarray(inp.stateless, np.int64)
    direct_task, direct_client = np.nonzero(inp.runs[:, tasks].T)
    return place_actives(len(tasks), low, high, direct_task, direct_client,
                         [np.zeros(len(direct_task), np.int64)], [np.ones(len(tasks), np.int64)])


# -- B: standbys -----------------------------------------------------------------------------------

def tag_levels(inp: Inputs) -> list[list[int]] | None:
    """The tag keys as nested levels, coarsest first: per level, each client's value id. None when
    two keys cross (neither refines the other)."""
    levels = []
    for key in inp.tag_keys:
        ids: dict[str, int] = {}
        levels.append([ids.setdefault(tags[key], len(ids)) for tags in inp.tags])
    levels.sort(key=lambda level: len(set(level)))
    for coarse, fine in zip(levels, levels[1:]):
        parent: dict[int, int] = {}
        if any(parent.setdefault(f, c) != c for c, f in zip(coarse, fine)):
            return None
    return levels


def standby_clients(inp: Inputs, actives: np.ndarray) -> list[list[int]]:
    """Part B: every stateful task's standby clients (in ``inp.stateful`` order)."""
    r, m, n = inp.standbys, len(inp.weights), len(inp.stateful)
    if r <= 0 or not n:
        return [[] for _ in inp.stateful]
    levels = tag_levels(inp) if inp.tag_keys else []
    if levels is None:
        return _standbys_by_program(inp, actives)
    tails, heads, caps, tag_cost = [], [], [], []
    # the tag tree of each task: per level, a node per (task, value), numbered level by level
    tasks = np.arange(n)
    node_base = n
    parent_of_client = np.repeat(tasks[:, None], m, axis=1)  # [task, client]: the node a unit for c leaves
    for depth, level in enumerate(levels):
        level = np.asarray(level, np.int64)
        count = int(level.max()) + 1
        # a value's parent node is the coarser level's node holding any of its clients
        first_client_of = np.full(count, -1, np.int64)
        for c in range(m - 1, -1, -1):
            first_client_of[level[c]] = c
        node = node_base + tasks[:, None] * count + np.arange(count)[None, :]  # [task, value]
        parent = parent_of_client[:, first_client_of]  # [task, value]
        free = level[np.asarray(actives)][:, None] != np.arange(count)[None, :]  # the active's value is used
        # the first copy of a value the active does not use is free; every further copy costs 1
        tails += [parent[free], parent.ravel()]
        heads += [node[free], node.ravel()]
        caps += [np.ones(int(free.sum()), np.int64), np.full(n * count, r, np.int64)]
        tag_cost += [np.zeros(int(free.sum()), np.int64), np.ones(n * count, np.int64)]
        parent_of_client = node[:, level]
        node_base += n * count
    first_client, sink = node_base, node_base + m
    pair_task, pair_client = np.nonzero(np.arange(m)[None, :] != np.asarray(actives)[:, None])
    pairs_at = sum(len(t) for t in tails)
    tails.append(parent_of_client[pair_task, pair_client])
    heads.append(first_client + pair_client)
    caps.append(np.ones(len(pair_task), np.int64))
    tag_cost.append(np.zeros(len(pair_task), np.int64))
    # client c's k-th standby costs (2k - 1) / w(c), scaled to whole numbers
    per_client = n - np.bincount(np.asarray(actives, np.int64), minlength=m)  # at most one per task it lacks
    unit_client = np.repeat(np.arange(m), per_client)
    unit_k = np.arange(len(unit_client)) - np.repeat(np.cumsum(per_client) - per_client, per_client) + 1
    scale = math.lcm(*inp.weights)
    balance = _unit_costs(2 * unit_k - 1, [scale // inp.weights[c] for c in unit_client.tolist()])
    tails.append(first_client + unit_client)
    heads.append(np.full(len(unit_client), sink))
    caps.append(np.ones(len(unit_client), np.int64))
    tag_cost.append(np.zeros(len(unit_client), np.int64))
    tails, heads, caps, tag_cost = (np.concatenate(x) for x in (tails, heads, caps, tag_cost))
    arcs = len(tails)
    balance_cost = np.concatenate([np.zeros(arcs - len(unit_client), balance.dtype), balance])
    restore_cost = np.zeros(arcs, np.int64)
    restore_cost[pairs_at:pairs_at + len(pair_task)] = inp.lack[pair_client, np.asarray(inp.stateful)[pair_task]]
    keep_cost = np.zeros(arcs, np.int64)  # a standby on a client without state for its task
    keep_cost[pairs_at:pairs_at + len(pair_task)] = ~inp.holds[pair_client, np.asarray(inp.stateful)[pair_task]]
    supply = np.zeros(sink + 1, np.int64)
    supply[:n] = r
    supply[sink] = -n * r
    stages = ([tag_cost] if levels else []) + [balance_cost, restore_cost, keep_cost]
    flow = lexicographic_flow(sink + 1, tails, heads, np.zeros(arcs, np.int64), caps, supply, stages)
    chosen: list[list[int]] = [[] for _ in inp.stateful]
    used = flow[pairs_at:pairs_at + len(pair_task)] > 0
    for i, c in zip(pair_task[used].tolist(), pair_client[used].tolist()):
        chosen[i].append(c)
    return chosen


def _standbys_by_program(inp: Inputs, actives: list[int]) -> list[list[int]]:
    """Part B when tag keys cross: the same four objectives as an integer program, solved in turn."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import lil_matrix

    r, m, n = inp.standbys, len(inp.weights), len(inp.stateful)
    pairs = [(i, c) for i in range(n) for c in range(m) if c != actives[i]]
    values = [(i, key, value) for i in range(n) for key in inp.tag_keys
              for value in sorted({tags[key] for tags in inp.tags}) if value != inp.tags[actives[i]][key]]
    units = [(c, k) for c in range(m) for k in range(1, n + 1)]
    size = len(pairs) + len(values) + len(units)
    if size > MILP_LIMIT:
        raise KassignError(f"optimal: {n:,} stateful tasks on {m:,} clients with crossing tag keys "
                           f"({', '.join(inp.tag_keys)}) make an integer program of {size:,} variables, more than "
                           f"kassign solves ({MILP_LIMIT:,}); nest the keys (each value of one within one value "
                           "of the other) or give fewer")
    scale = math.lcm(*inp.weights)
    tag_obj = np.zeros(size)
    balance_obj = np.zeros(size)
    restore_obj = np.zeros(size)
    keep_obj = np.zeros(size)
    for j, (i, c) in enumerate(pairs):
        restore_obj[j] = int(inp.lack[c, inp.stateful[i]])
        keep_obj[j] = 0 if inp.holds[c, inp.stateful[i]] else 1
    tag_obj[len(pairs):len(pairs) + len(values)] = -1
    for j, (c, k) in enumerate(units, start=len(pairs) + len(values)):
        balance_obj[j] = (2 * k - 1) * (scale // inp.weights[c])
    if max(abs(balance_obj).sum(), abs(restore_obj).sum()) >= _FLOAT_EXACT:
        raise KassignError("optimal: with crossing tag keys, kassign solves standbys as an integer program in "
                           "floating point, exact only while the costs stay below 2^52; these end offset sums "
                           "or thread counts are too large")
    rows = n + len(values) + m
    a = lil_matrix((rows, size))
    lo_b, hi_b = np.zeros(rows), np.zeros(rows)
    pair_index = {p: j for j, p in enumerate(pairs)}
    for i in range(n):
        for c in range(m):
            if (i, c) in pair_index:
                a[i, pair_index[(i, c)]] = 1
        lo_b[i] = hi_b[i] = r
    for row, (i, key, value) in enumerate(values, start=n):
        a[row, len(pairs) + row - n] = 1  # a value counts only where some standby of the task has it
        for c in range(m):
            if inp.tags[c][key] == value and (i, c) in pair_index:
                a[row, pair_index[(i, c)]] = -1
        lo_b[row], hi_b[row] = -np.inf, 0
    for c in range(m):
        row = n + len(values) + c
        for i in range(n):
            if (i, c) in pair_index:
                a[row, pair_index[(i, c)]] = 1
        for j, (cc, _) in enumerate(units, start=len(pairs) + len(values)):
            if cc == c:
                a[row, j] = -1
    constraints = [LinearConstraint(a.tocsr(), lo_b, hi_b)]
    integrality = np.ones(size)
    bounds = Bounds(np.zeros(size), np.ones(size))
    for objective in (tag_obj, balance_obj, restore_obj, keep_obj):
        result = milp(objective, constraints=constraints, integrality=integrality, bounds=bounds,
                      options={"mip_rel_gap": 0.0})
        if not result.success:
            raise KassignError(f"optimal: the standby program failed ({result.message})")
        best = round(float(objective @ np.round(result.x)))
        constraints.append(LinearConstraint(objective.reshape(1, -1), -np.inf, best + 0.5))
    x = np.round(result.x)
    chosen: list[list[int]] = [[] for _ in range(n)]
    for j, (i, c) in enumerate(pairs):
        if x[j]:
            chosen[i].append(c)
    return chosen


# -- the whole assignment -------------------------------------------------------------------------

def assign_optimal(scenario: StreamsClassicScenario, merged: list[dict[int, int]]) -> Clients:
    """Every client's active and standby tasks under the objectives of this module."""
    inp = inputs_of(scenario, merged)
    clients = Clients(inp.weights, len(scenario.tasks))
    actives = stateful_actives(inp)
    for t, c in zip(inp.stateful, actives.tolist()):
        clients.add_active(c, t)
    for t, chosen in zip(inp.stateful, standby_clients(inp, actives)):
        for c in chosen:
            clients.add_standby(c, t)
    counts = np.bincount(actives, minlength=len(inp.weights)).tolist()
    for t, c in zip(inp.stateless, stateless_actives(inp, counts).tolist()):
        clients.add_active(c, t)
    return clients
