"""Why each move: the goal a replica move serves, by undoing that one move.

A plan's moves are its replicas placed on a broker that did not hold the partition. Within a
partition, the replicas that leave (in the current list's order) are paired with the ones that
arrive (in the plan's order), a leaving replica with an arriving one in the same rack first; each
pair is one move ``(partition, from, to)``.

The rule: a move serves the first goal, in the plan's order, that would be worse with that move
alone undone (the replica back on ``from``, everything else as planned; where ``to`` leads in
the plan, ``from`` leads instead). The order is:

1. ``valid``: ``from`` is not one of the target brokers (removed, or drained with ``exclude``),
   so the undone plan is not a plan at all;
2. the goals in force, in the plan's order (``summary["goals"]``): a hard goal (``rack``,
   ``disk-capacity``, ``replica-capacity``, ``network-capacity``) is worse when its measure
   goes above both 1 (its limit) and the plan's measure: undone, the move would break the
   rule or the limit; a soft goal (``disk``, ``replicas``, ``topic-spread``, ``network-in``,
   ``leader-bytes-in``, ``leaders``) is worse when its measure (``_goals.measure``) goes up
   at all;
3. none (``None``): with this move alone undone every goal stays as good. Such a move works
   only together with others (two brokers trading replicas, a chain of moves that a count
   stage or byte stage chose as a whole), or the stages stopped before finding a plan without
   it; the plan's tie-breaks (the fewest moves, then bytes moved) never want a move for its
   own sake, so "none" is the honest answer there.

Every measure is computed exactly as ``_goals.measure`` computes it, on integer arrays: the
undone plan differs from the plan on two brokers only (``from`` gains the replica, ``to``
loses it), so a ratio goal (largest over the mean) is worse exactly when ``from``'s new load
exceeds the plan's largest, a capacity goal when ``from``'s new use over its limit exceeds both
1 and the plan's largest, and the spread goals (max - min) are recomputed per move on the
counts with those two brokers changed. ``rack`` looks at the move's own partition.

Worked example (no racks): six partitions of rf 2, ``t-0 [0, 1]``, ``t-1 [1, 0]``, ... on brokers 0
and 1 (6 replicas each); brokers 2 and 3 are added. The plan puts 3 replicas on each broker, 6
moves, ``t-0: 1 -> 3`` among them. Undone, broker 1 holds 4 replicas and broker 3 holds 2: the
replicas goal's max - min goes from 0 to 2, so the move serves ``replicas`` (``valid`` does not
apply: broker 1 stays a target). With broker 0 drained (``exclude=[0]``), every move off broker 0
serves ``valid``. With sizes and a disk capacity, a move off a broker that would be above its
limit with the replica back serves ``disk-capacity`` even where it also evens the replica counts:
the earlier goal wins (``tests/replicas/test_plan_why.py`` has these cases).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kassign.replicas.plan._goals import NONE, Context, loads, means, measure

VALID = "valid"
CHUNK = 4096  # moves evaluated at once by the spread goals (a CHUNK x brokers matrix)


@dataclass
class Moves:
    """Every replica move of a plan, as arrays (one entry per move), and the goal each serves."""

    partition: np.ndarray  # int64: partition index (into the problem's partitions)
    source: np.ndarray  # int64: broker id the replica leaves
    dest: np.ndarray  # int64: broker id it goes to
    goal: list[str | None]  # VALID, a goal name, or None

    def __len__(self) -> int:
        return len(self.partition)

    def counts(self) -> dict[str, int]:
        """Moves per goal served (``none``: no goal alone), in the order the goals come."""
        out: dict[str, int] = {}
        for g in self.goal:
            key = g if g is not None else "none"
            out[key] = out.get(key, 0) + 1
        return out


def pair_moves(problem: Any, proposed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(partition, from, to) of every move: per partition, the replicas leaving (current order) paired with the
    ones arriving (plan order), same rack first."""
    old = problem.current
    new = proposed
    gone = (old >= 0) & ~(old[:, :, None] == new[:, None, :]).any(axis=2)
    came = (new >= 0) & ~(new[:, :, None] == old[:, None, :]).any(axis=2)
    g_rows, g_cols = np.nonzero(gone)
    c_rows, c_cols = np.nonzero(came)
    if not np.array_equal(g_rows, c_rows):  # pragma: no cover - a plan keeps every replication factor
        raise AssertionError("a partition's replication factor changed")
    source = old[g_rows, g_cols].astype(np.int64)
    dest = new[c_rows, c_cols].astype(np.int64)
    racks = problem.racks
    if any(r is not None for r in racks.values()) and len(g_rows):
        per = np.bincount(g_rows, minlength=problem.num_partitions)
        starts = np.concatenate([[0], np.cumsum(per)])
        for p in np.flatnonzero(per >= 2).tolist():
            lo, hi = int(starts[p]), int(starts[p + 1])
            left = dest[lo:hi].tolist()
            paired: list[int | None] = []
            for s in source[lo:hi].tolist():
                same = next((d for d in left if racks.get(d) is not None and racks.get(d) == racks.get(s)), None)
                if same is not None:
                    left.remove(same)
                paired.append(same)
            dest[lo:hi] = [d if d is not None else left.pop(0) for d in paired]
    return g_rows.astype(np.int64), source, dest


def _spread_worse(base: np.ndarray, plus: np.ndarray, minus: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """For each move: whether max - min of ``base`` (or of its row ``rows[k]``) grows with one more at ``plus[k]``
    and one fewer at ``minus[k]``."""
    k = len(plus)
    out = np.zeros(k, bool)
    for lo in range(0, k, CHUNK):
        hi = min(k, lo + CHUNK)
        m = (base[rows[lo:hi]] if rows is not None else np.broadcast_to(base, (hi - lo, len(base)))).copy()
        before = m.max(axis=1) - m.min(axis=1)
        idx = np.arange(hi - lo)
        m[idx, plus[lo:hi]] += 1
        m[idx, minus[lo:hi]] -= 1
        out[lo:hi] = (m.max(axis=1) - m.min(axis=1)) > before
    return out


def explain(ctx: Context, proposed: np.ndarray) -> Moves:
    """The plan's moves (``proposed``: int64[P, W] broker ids, leader first, -1 padding) and the goal each serves
    (the module docstring's rule)."""
    problem = ctx.problem
    part, source, dest = pair_moves(problem, proposed)
    targets = problem.targets
    n = ctx.n
    k = len(part)
    code = np.full(k, -1, np.int64)  # index into `labels`, -1: none yet
    labels = [VALID, *ctx.goals]
    at = np.minimum(np.searchsorted(targets, source), n - 1)
    a = np.where(targets[at] == source, at, -1)  # target index of `from`, -1: not a target
    b = np.searchsorted(targets, dest)  # every broker of a plan is a target
    plan_t = np.where(proposed >= 0, np.searchsorted(targets, np.maximum(proposed, 0)), -1)
    leaders = plan_t[:, 0].copy()
    load = loads(ctx, plan_t, leaders)
    open_ = a >= 0
    code[~open_] = 0
    leads = proposed[part, 0] == dest  # `to` leads in the plan: undone, `from` leads
    sizes = ctx.sizes[part] if ctx.sizes is not None else None
    rates = ctx.rates[part] if ctx.rates is not None else None
    aa = np.maximum(a, 0)
    for number, name in enumerate(ctx.goals, 1):
        todo = code < 0
        if not todo.any():
            break
        worse = np.zeros(k, bool)
        now = measure(ctx, name, plan_t, leaders, load)
        if name == "rack":
            worse = _rack_worse(ctx, plan_t, part, aa, b)
        elif name in ("disk-capacity", "replica-capacity", "network-capacity"):
            if name == "disk-capacity":
                use, limit = load["bytes"][aa] + ctx.disk_other[aa] + sizes, ctx.disk_room[aa]
            elif name == "replica-capacity":
                use, limit = load["replicas"][aa] + 1, ctx.max_replicas[aa]
            else:
                use, limit = load["in"][aa] + rates, ctx.net_in[aa]
            has = limit != NONE
            v, lim = use.astype(np.float64), limit.astype(np.float64)
            ratio = np.where(lim > 0, v / np.where(lim > 0, lim, 1.0), np.where(v > 0, np.inf, 0.0))
            worse = has & (ratio > max(1.0, now))
        elif name in ("disk", "network-in", "leader-bytes-in"):
            key, add = {"disk": ("bytes", sizes), "network-in": ("in", rates),
                        "leader-bytes-in": ("leader_in", rates)}[name]
            mean = means(ctx)[name]
            if mean:
                new = (load[key][aa] + add).astype(np.float64) / mean
                worse = new > float(load[key].max()) / mean
                if name == "leader-bytes-in":
                    worse &= leads
        elif name == "replicas":
            sel = np.flatnonzero(todo)
            worse[sel] = _spread_worse(load["replicas"], aa[sel], b[sel])
        elif name == "leaders":
            sel = np.flatnonzero(todo & leads)
            worse[sel] = _spread_worse(load["leaders"], aa[sel], b[sel])
        elif name == "topic-spread":
            sel = np.flatnonzero(todo)
            T = len(problem.topics)
            rows, cols = np.nonzero(plan_t >= 0)
            per = np.bincount(problem.topic_of[rows] * n + plan_t[rows, cols], minlength=T * n).reshape(T, n)
            worse[sel] = _spread_worse(per, aa[sel], b[sel], problem.topic_of[part[sel]])
        code[todo & worse] = number
    goal = [labels[c] if c >= 0 else None for c in code.tolist()]
    return Moves(part, source, dest, goal)


def _rack_worse(ctx: Context, plan_t: np.ndarray, part: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether the move's partition breaks the rack rule with the move undone (its measure above 1 and above the
    plan's, as ``_goals.rack_measure`` counts it)."""
    G = ctx.num_groups
    rows = plan_t[part].copy()
    rows[rows == b[:, None]] = -1
    groups = np.where(rows >= 0, ctx.group_of_broker[np.maximum(rows, 0)], -1)
    groups = np.concatenate([groups, ctx.group_of_broker[a][:, None]], axis=1)
    per = np.zeros((len(part), G), np.int64)
    for col in range(groups.shape[1]):
        g = groups[:, col]
        ok = g >= 0
        np.add.at(per, (np.flatnonzero(ok), g[ok]), 1)
    rf = ctx.problem.rf[part]
    most = per.max(axis=1) / (-(-rf // G))
    used = (per > 0).sum(axis=1)
    cover = np.minimum(rf, G) / np.maximum(used, 1)
    worse = np.maximum(most, cover)
    now = 1.0 if not len(part) else float(measure(ctx, "rack", plan_t, plan_t[:, 0]))
    return worse > max(1.0, now)


def moves_json(ctx: Context, moves: Moves) -> list[dict[str, Any]]:
    """``[{"topic", "partition", "from", "to", "bytes", "goal"}]`` in partition order (``bytes``: null without
    sizes)."""
    problem = ctx.problem
    sizes = ctx.sizes
    out = []
    for k in range(len(moves)):
        p = int(moves.partition[k])
        topic, number = problem.names(p)
        out.append({"topic": topic, "partition": number, "from": int(moves.source[k]), "to": int(moves.dest[k]),
                    "bytes": int(sizes[p]) if sizes is not None else None, "goal": moves.goal[k]})
    return out
