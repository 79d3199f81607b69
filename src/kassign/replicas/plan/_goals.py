"""Goals of a plan: their names, kinds and measures, and the inputs they read (capacity, disk, rates).

A plan with goals optimises them in order; hard goals are constraints that no soft goal may
trade away, soft goals are optimised one after the other, each kept at the value it reached
while the next is optimised (the stages are in ``_lexi``). This module says what each goal
measures, in one number per goal (the summary's ``before``, ``after`` and ``bound``):

==================  ====  ==================================================================
goal                kind  measure (over the target brokers)
==================  ====  ==================================================================
rack                hard  the worst partition's max(most replicas in one rack / ceil(rf /
                          racks), min(rf, racks) / racks it uses): 1 exactly when the rack
                          rule holds (by pigeonhole never below 1); in force with racks
disk-capacity       hard  largest (bytes + other bytes on the disk) / the broker's limit;
                          the limit is ``disk_limit`` x its disk capacity, or its use before
                          the plan where that is larger (a broker already above may stay,
                          never go higher); needs sizes and a disk capacity
replica-capacity    hard  largest replica count / ``max_replicas``
network-capacity    hard  largest bytes in / ``network_in_bytes_per_s``; needs rates
disk                soft  largest broker's bytes / the mean; needs sizes
replicas            soft  max - min of the replica counts
topic-spread        soft  sum over topics of max - min of that topic's replicas per broker
network-in          soft  largest broker's bytes in / the mean; needs rates
leader-bytes-in     soft  largest broker's leader writes / the mean; needs rates
leaders             soft  max - min of the leader counts
==================  ====  ==================================================================

A hard goal is met when its measure is at most 1. Network model: a partition written at ``r``
bytes per second brings ``r`` into its leader (the producers' writes) and ``r`` into each
follower (replication fetches from the leader), so a broker's bytes in are the sum of the rates
of every replica it holds, whether it leads it or not; its leader writes (``leader-bytes-in``)
are the rates of the partitions it leads. Consumers' and replication's bytes out are not
modelled (``network_out_bytes_per_s`` is read and reported, not a goal).

Disk model: a broker's use is the bytes of the replicas the plan places (``sizes``, one figure
per partition) plus whatever else its disk holds. With ``disk={id: {"total_bytes": T,
"usable_bytes": U}}`` (as a log dir describes itself) the disk capacity is ``T`` and the other
bytes are ``T - U`` minus the planned replicas it holds now (never below 0: other topics,
segments not counted, anything else); a capacity document's ``disk_bytes`` overrides ``T``.

A soft goal is met when it is as good as it asks (``disk``, ``network-in``,
``leader-bytes-in``: largest at most ``1 + tolerance`` of the mean; ``replicas``, ``leaders``,
``topic-spread``: the integer ideal, max - min at most 1 where the total does not divide, 0
where it does) or as good as any valid plan can be (at its ``bound``).

Worked example: brokers 0, 1, 2 with ``{"default": {"max_replicas": 4}}``, six partitions of
rf 2 all on brokers 0 and 1 (six replicas each): ``replica-capacity`` before is 6 / 4 = 1.5
(not met), and any plan puts 12 replicas on 3 brokers of at most 4 each, so exactly 4 each:
after 1.0, bound 1.0; ``replicas`` before 6 (6, 6, 0), after 0, bound 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kassign.core.limits import JAVA_INT_MAX, is_whole_number
from kassign.replicas.capacity import CapacityError
from kassign.replicas.capacity import parse_capacity as read_capacity
from kassign.replicas.plan._model import PlanError, Problem, align_sizes

HARD, SOFT = "hard", "soft"
GOALS: dict[str, str] = {
    "rack": HARD, "disk-capacity": HARD, "replica-capacity": HARD, "network-capacity": HARD,
    "disk": SOFT, "replicas": SOFT, "topic-spread": SOFT, "network-in": SOFT, "leader-bytes-in": SOFT, "leaders": SOFT,
}
RATIO = ("disk", "network-in", "leader-bytes-in")  # largest / mean
SPREAD = ("replicas", "topic-spread", "leaders")  # max - min (summed over topics)
NONE = -1  # no limit on this broker


def parse_goals(goals: Any) -> list[str] | None:
    """Goal names as given (a list, or one comma-separated string); None: the default order."""
    if goals is None:
        return None
    if isinstance(goals, str):
        goals = [g.strip() for g in goals.split(",") if g.strip()]
    if not isinstance(goals, (list, tuple)) or not all(isinstance(g, str) for g in goals):
        raise PlanError(f"goals must be a list of goal names, got {goals!r}")
    unknown = [g for g in goals if g not in GOALS]
    if unknown:
        raise PlanError(f"unknown goal {unknown[0]!r}; choose from {', '.join(GOALS)}")
    twice = [g for g in goals if goals.count(g) > 1]
    if twice:
        raise PlanError(f"goal {twice[0]!r} is named twice")
    if not goals:
        raise PlanError("goals: name at least one goal")
    return list(goals)


def check_fraction(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise PlanError(f"{name} must be a fraction in (0, 1] such as 0.8, got {value!r}")
    return float(value)


def _amount(value: Any, where: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)) or value < 0:
        raise PlanError(f"{where}: {name} must be a number >= 0, got {value!r}")
    if name == "max_replicas" and not is_whole_number(value):
        raise PlanError(f"{where}: max_replicas must be a whole number, got {value!r}")
    return int(math.floor(float(value)))


def _broker_id(key: Any, where: str, known: set[int]) -> int:
    try:
        b = int(key) if not isinstance(key, bool) else None
    except (TypeError, ValueError):
        b = None
    if b is None or not 0 <= b <= JAVA_INT_MAX or str(key).strip() != str(b):
        raise PlanError(f"{where}: {key!r} is not a broker id")
    if b not in known:
        raise PlanError(f"{where}: broker {b} is unknown: it is neither in the broker list nor holds a replica now")
    return b


def parse_capacity(capacity: Any, known: set[int]) -> dict[int | None, dict[str, int]]:
    """The capacity document (checked by :func:`kassign.replicas.capacity.parse_capacity`, the one reader of it):
    ``{None: defaults, id: fields}``; an entry for a broker that is neither a target nor holds a replica now is
    refused (a typing mistake would leave the real broker without its limits)."""
    if capacity is None:
        return {None: {}}
    try:
        document = read_capacity(capacity)
    except CapacityError as err:
        raise PlanError(str(err)) from None
    strangers = sorted(set(document.brokers) - known)
    if strangers:
        raise PlanError(f"capacity brokers: broker {strangers[0]} is unknown: it is neither in the broker list nor "
                        "holds a replica now")
    result: dict[int | None, dict[str, int]] = {None: document.default.to_json()}
    for broker, entry in document.brokers.items():
        result[broker] = entry.to_json()
    return result


def parse_disk(disk: Any, known: set[int]) -> dict[int, tuple[int, int | None]]:
    """Per-broker disk figures: ``{id: (total_bytes, usable_bytes or None)}``."""
    if disk is None:
        return {}
    if not isinstance(disk, Mapping):
        raise PlanError('disk must map broker ids to {"total_bytes": N, "usable_bytes": N} (or to total bytes)')
    result = {}
    for key, value in disk.items():
        b = _broker_id(key, "disk", known)
        if isinstance(value, Mapping):
            bad = sorted(set(value) - {"total_bytes", "usable_bytes"})
            if bad or "total_bytes" not in value:
                raise PlanError(f"disk: broker {b} needs \"total_bytes\" (and optionally \"usable_bytes\"), "
                                f"got {sorted(value)}")
            total = _amount(value["total_bytes"], f"disk broker {b}", "total_bytes")
            usable = value.get("usable_bytes")
            usable = None if usable is None else _amount(usable, f"disk broker {b}", "usable_bytes")
            if usable is not None and usable > total:
                raise PlanError(f"disk: broker {b} has usable_bytes {usable} above total_bytes {total}")
        else:
            total, usable = _amount(value, f"disk broker {b}", "total_bytes"), None
        result[b] = (total, usable)
    return result


@dataclass
class Context:
    """Everything the goals read, as arrays over the target brokers (index i: ``targets[i]``)."""

    problem: Problem
    n: int
    rack_aware: bool
    group_of_broker: np.ndarray
    num_groups: int
    cap: np.ndarray  # per partition: most replicas one rack may hold
    low: np.ndarray  # per partition: fewest it must hold
    sizes: np.ndarray | None
    rates: np.ndarray | None
    disk_limit: float
    tolerance: float
    disk_cap: np.ndarray  # bytes, NONE where unknown
    disk_other: np.ndarray  # bytes on the disk that the plan does not place
    disk_room: np.ndarray  # effective limit for planned + other bytes, NONE where none
    max_replicas: np.ndarray
    net_in: np.ndarray
    net_out: np.ndarray
    goals: list[str] = field(default_factory=list)  # in force, in order
    now: np.ndarray | None = None  # int64[P, W]: current replicas as target indexes (-1: none or not a target)
    leader_now: np.ndarray | None = None  # int64[P]: target index of the current leader, -1
    notes: list[str] = field(default_factory=list)
    _held: np.ndarray | None = None

    @property
    def held(self) -> np.ndarray:
        """bool[P, n]: which target brokers hold each partition now (built on first use: the programs')."""
        if self._held is None:
            self._held = holding(self, self.now)
        return self._held

    @property
    def hard(self) -> list[str]:
        return [g for g in self.goals if GOALS[g] == HARD]

    @property
    def soft(self) -> list[str]:
        return [g for g in self.goals if GOALS[g] == SOFT]


def build_context(problem: Problem, layout: Any, cap: np.ndarray, low: np.ndarray, *, rates: Any, capacity: Any,
                  disk: Any, goals: Any, disk_limit: float, tolerance: float) -> Context:
    n = len(problem.targets)
    known = set(problem.racks) | set(int(b) for b in np.unique(problem.current[problem.current >= 0]))
    caps = parse_capacity(capacity, known)
    disks = parse_disk(disk, known)
    named = parse_goals(goals)
    rate_arr = None
    if rates is not None:
        rate_arr, missing = align_sizes(problem, rates, "rates")
        if missing:
            problem.notes.append(f"{missing} partition(s) have no rate and count as 0 bytes/s")
    P = problem.num_partitions
    pref = problem.target_index()
    ctx = Context(problem, n, bool(layout.rack_aware and layout.num_groups > 1), layout.group_of_broker,
                  layout.num_groups, cap, low, problem.sizes, rate_arr, disk_limit, tolerance,
                  np.full(n, NONE, np.int64), np.zeros(n, np.int64), np.full(n, NONE, np.int64),
                  np.full(n, NONE, np.int64), np.full(n, NONE, np.int64), np.full(n, NONE, np.int64),
                  now=pref, leader_now=pref[:, 0].copy())
    load_now = loads(ctx, pref, ctx.leader_now)["bytes"] if problem.sizes is not None else np.zeros(n, np.int64)
    for i, b in enumerate(problem.targets.tolist()):
        figures = {**caps[None], **caps.get(b, {})}
        if b in disks:
            total, usable = disks[b]
            ctx.disk_cap[i] = total
            if usable is not None:
                ctx.disk_other[i] = max(0, total - usable - int(load_now[i]))
        if "disk_bytes" in figures:
            ctx.disk_cap[i] = figures["disk_bytes"]
        for name, arr in (("max_replicas", ctx.max_replicas), ("network_in_bytes_per_s", ctx.net_in),
                          ("network_out_bytes_per_s", ctx.net_out)):
            if name in figures:
                arr[i] = figures[name]
        if ctx.disk_cap[i] != NONE:
            ctx.disk_room[i] = max(int(math.floor(disk_limit * ctx.disk_cap[i])), int(load_now[i] + ctx.disk_other[i]))
    in_force = {
        "rack": ctx.rack_aware,
        "disk-capacity": problem.sizes is not None and bool((ctx.disk_room != NONE).any()),
        "replica-capacity": bool((ctx.max_replicas != NONE).any()),
        "network-capacity": rate_arr is not None and bool((ctx.net_in != NONE).any()),
        "disk": problem.sizes is not None, "replicas": True, "topic-spread": True,
        "network-in": rate_arr is not None, "leader-bytes-in": rate_arr is not None, "leaders": True,
    }
    why = {"rack": "the brokers have no racks (or one)", "disk-capacity": "it needs sizes and a disk capacity",
           "replica-capacity": "no broker has a max_replicas", "network-capacity":
           "it needs rates and a network_in_bytes_per_s", "disk": "it needs sizes", "network-in": "it needs rates",
           "leader-bytes-in": "it needs rates"}
    if named is None:
        ctx.goals = [g for g in GOALS if in_force[g]]
    else:
        off = [g for g in named if not in_force[g]]
        if off and off[0] != "rack":
            raise PlanError(f"goal {off[0]} is not in force here: {why[off[0]]}")
        ctx.goals = [g for g in named if in_force[g]]
        if ctx.rack_aware and "rack" not in ctx.goals:
            ctx.goals.insert(0, "rack")  # never broken: every plan keeps the rack rule
    if problem.sizes is None and (ctx.disk_cap != NONE).any():
        ctx.notes.append("disk capacity given without sizes: disk-capacity is not checked")
    if (ctx.net_out != NONE).any():
        ctx.notes.append("network_out_bytes_per_s is read but not a goal (bytes out are not modelled)")
    return ctx


# -- measures -------------------------------------------------------------------------------------------------

def holding(ctx: Context, assign: np.ndarray) -> np.ndarray:
    """bool[P, n] from an assignment of target indexes (-1: empty slot)."""
    p, b = entries(assign)
    h = np.zeros((assign.shape[0], ctx.n), bool)
    h[p, b] = True
    return h


def entries(placement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(partition, target broker) of every replica: from a holding matrix (bool[P, n]) or an assignment
    (int64[P, W] of target indexes, -1 for none)."""
    if placement.dtype == bool:
        return np.nonzero(placement)
    rows, cols = np.nonzero(placement >= 0)
    return rows, placement[rows, cols]


def loads(ctx: Context, placement: np.ndarray, leaders: np.ndarray) -> dict[str, np.ndarray]:
    """Per target broker: replicas, leaders, bytes, bytes in, leader writes (int64)."""
    p, b = entries(placement)
    n = ctx.n
    led = leaders >= 0
    out = {"replicas": np.bincount(b, minlength=n).astype(np.int64),
           "leaders": np.bincount(leaders[led], minlength=n).astype(np.int64)}
    if ctx.sizes is not None:  # float64 sums are exact below 2**53; larger totals are summed in integers
        out["bytes"] = _sum_by(b, ctx.sizes[p], n)
    if ctx.rates is not None:
        out["in"] = _sum_by(b, ctx.rates[p], n)
        out["leader_in"] = _sum_by(leaders[led], ctx.rates[led], n)
    return out


def _sum_by(index: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Sums of whole numbers per broker: by float64 bincount where every sum is exact (below 2**53)."""
    if float(values.sum(dtype=np.float64)) < 2.0**53:
        return np.bincount(index, weights=values, minlength=n).astype(np.int64)
    out = np.zeros(n, np.int64)
    np.add.at(out, index, values)
    return out


def topic_spread(ctx: Context, placement: np.ndarray) -> int:
    p, b = entries(placement)
    T = len(ctx.problem.topics)
    per = np.bincount(ctx.problem.topic_of[p] * ctx.n + b, minlength=T * ctx.n).reshape(T, ctx.n)
    return int((per.max(axis=1) - per.min(axis=1)).sum())


def rack_measure(ctx: Context, placement: np.ndarray) -> float:
    if not ctx.rack_aware:
        return 1.0
    G = ctx.num_groups
    p, b = entries(placement)
    P = ctx.problem.num_partitions
    per = np.bincount(p * G + ctx.group_of_broker[b], minlength=P * G).reshape(P, G)
    rf = ctx.problem.rf
    most = per.max(axis=1) / (-(-rf // G))
    used = (per > 0).sum(axis=1)
    cover = np.minimum(rf, G) / np.maximum(used, 1)
    return float(np.maximum(most, cover).max())


def _ratio(values: np.ndarray, limits: np.ndarray) -> float:
    """Largest value / its limit over the brokers that have a limit (a limit of 0 with anything on it: inf)."""
    on = limits != NONE
    if not on.any():
        return 0.0
    v, lim = values[on].astype(np.float64), limits[on].astype(np.float64)
    ratio = np.where(lim > 0, v / np.where(lim > 0, lim, 1.0), np.where(v > 0, np.inf, 0.0))
    return float(ratio.max())


def means(ctx: Context) -> dict[str, float]:
    rf = ctx.problem.rf
    out = {}
    if ctx.sizes is not None:
        out["disk"] = float((ctx.sizes * rf).sum()) / ctx.n
    if ctx.rates is not None:
        out["network-in"] = float((ctx.rates * rf).sum()) / ctx.n
        out["leader-bytes-in"] = float(ctx.rates.sum()) / ctx.n
    return out


def measure(ctx: Context, goal: str, h: np.ndarray, leaders: np.ndarray, load: dict | None = None) -> float:
    """The goal's one number for a placement (``h``: bool[P, n] or int64[P, W] target indexes; ``leaders``:
    target index, -1)."""
    load = loads(ctx, h, leaders) if load is None else load
    if goal == "rack":
        return rack_measure(ctx, h)
    if goal == "disk-capacity":
        return _ratio(load["bytes"] + ctx.disk_other, ctx.disk_room)
    if goal == "replica-capacity":
        return _ratio(load["replicas"], ctx.max_replicas)
    if goal == "network-capacity":
        return _ratio(load["in"], ctx.net_in)
    if goal == "topic-spread":
        return float(topic_spread(ctx, h))
    if goal in ("replicas", "leaders"):
        v = load[goal]
        return float(v.max() - v.min())
    key = {"disk": "bytes", "network-in": "in", "leader-bytes-in": "leader_in"}[goal]
    mean = means(ctx)[goal]
    return float(load[key].max()) / mean if mean else 1.0


def ideal(ctx: Context, goal: str) -> float:
    """What a soft goal asks for (met at or below this, or at its bound)."""
    if goal in RATIO:
        return 1.0 + ctx.tolerance
    if goal == "replicas":
        return float(int(ctx.problem.rf.sum()) % ctx.n != 0)
    if goal == "leaders":
        return float(ctx.problem.num_partitions % ctx.n != 0)
    counts = np.bincount(ctx.problem.topic_of, weights=ctx.problem.rf, minlength=len(ctx.problem.topics))
    return float(((counts.astype(np.int64) % ctx.n) != 0).sum())


def ratio_limit(ctx: Context, goal: str) -> int:
    """The largest integer load within the tolerance of the mean (``disk``, ``network-in``, ``leader-bytes-in``)."""
    rf = ctx.problem.rf
    w = ctx.sizes if goal == "disk" else ctx.rates
    total = int((w * rf).sum()) if goal != "leader-bytes-in" else int(w.sum())
    return int(math.floor((1 + ctx.tolerance) * total / ctx.n))


def is_met(ctx: Context, goal: str, after: float, bound: float | None) -> bool:
    eps = 1e-9
    if GOALS[goal] == HARD:
        return after <= 1 + eps
    return after <= ideal(ctx, goal) + eps or (bound is not None and after <= bound + eps)


def row(ctx: Context, goal: str, before: float, after: float, bound: float | None) -> dict[str, Any]:
    def r(x: float | None, down: bool = False) -> float | int | None:
        if x is None or not math.isfinite(x):
            return None
        if goal in SPREAD:
            return int(round(x))
        # six decimals; a bound rounded down, so that it stays a bound
        return math.floor(x * 1e6 + 1e-9) / 1e6 if down else round(x, 6)
    return {"name": goal, "kind": GOALS[goal], "met": bool(is_met(ctx, goal, after, bound)), "before": r(before),
            "after": r(after), "bound": r(bound, down=True)}


def cheap_bound(ctx: Context, goal: str) -> float | None:
    """A proven lower bound on the goal over every valid plan, from counting alone (no program)."""
    if goal == "rack":
        return 1.0
    if goal in ("replicas", "leaders", "topic-spread"):
        return ideal(ctx, goal)
    if goal == "disk":
        mean = means(ctx)["disk"]
        return max(mean, float(ctx.sizes.max(initial=0))) / mean if mean else 1.0
    if goal in ("network-in", "leader-bytes-in"):
        mean = means(ctx)[goal]
        return max(mean, float(ctx.rates.max(initial=0))) / mean if mean else 1.0
    return None


def inputs(ctx: Context, disk: Any) -> dict[str, Any]:
    """What the plan was given, for the summary (``inputs``)."""
    p = ctx.problem

    def per_partition(values: np.ndarray | None) -> dict | None:
        if values is None:
            return None
        out: dict[str, dict[str, int]] = {}
        for i in range(p.num_partitions):
            out.setdefault(p.topics[int(p.topic_of[i])], {})[str(int(p.partition_of[i]))] = int(values[i])
        return out

    capacity = {}
    for i, b in enumerate(p.targets.tolist()):
        entry = {k: int(a[i]) for k, a in (("disk_bytes", ctx.disk_cap), ("network_in_bytes_per_s", ctx.net_in),
                                            ("network_out_bytes_per_s", ctx.net_out),
                                            ("max_replicas", ctx.max_replicas)) if a[i] != NONE}
        if ctx.disk_other[i]:
            entry["other_disk_bytes"] = int(ctx.disk_other[i])
        if entry:
            capacity[str(b)] = entry
    return {"goals": list(ctx.goals), "disk_limit": ctx.disk_limit, "tolerance": ctx.tolerance,
            "sizes": per_partition(ctx.sizes), "rates": per_partition(ctx.rates), "capacity": capacity,
            "disk": None if disk is None else {str(b): {"total_bytes": t, "usable_bytes": u}
                                                for b, (t, u) in sorted(parse_disk(disk, set(ctx.problem.racks) |
                                                                               _holders(p)).items())}}


def _holders(p: Problem) -> set[int]:
    return set(int(b) for b in np.unique(p.current[p.current >= 0]))
