"""Independent checks for reassignment plans: validity read straight off the documents, and the
optimum computed by an integer program (scipy's milp) that shares nothing with kassign's flow."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp


def targets_of(brokers, exclude=()):
    return {b: r for b, r in brokers if b not in set(exclude)}


def check_valid(proposed: dict, current: dict, brokers, exclude=()) -> None:
    """Every partition of ``current``, same order and rf, on distinct target brokers, over
    min(rf, racks) racks with at most ceil(rf / racks) replicas in any rack."""
    targets = targets_of(brokers, exclude)
    racks = {r for r in targets.values()} if all(r is not None for r in targets.values()) else None
    assert proposed["version"] == 1
    assert [(e["topic"], e["partition"]) for e in proposed["partitions"]] == \
        [(e["topic"], e["partition"]) for e in current["partitions"]]
    for new, old in zip(proposed["partitions"], current["partitions"]):
        replicas = new["replicas"]
        assert len(replicas) == len(old["replicas"]), new
        assert len(set(replicas)) == len(replicas), new
        assert set(replicas) <= set(targets), new
        if racks:
            per_rack = Counter(targets[b] for b in replicas)
            assert len(per_rack) == min(len(replicas), len(racks)), new
            assert max(per_rack.values()) <= math.ceil(len(replicas) / len(racks)), new


def counts(doc: dict, ids) -> tuple[list[int], list[int]]:
    replicas = Counter(b for e in doc["partitions"] for b in e["replicas"])
    leaders = Counter(e["replicas"][0] for e in doc["partitions"])
    return [replicas[b] for b in ids], [leaders[b] for b in ids]


def moves(proposed: dict, current: dict) -> int:
    return sum(len(set(n["replicas"]) - set(o["replicas"]))
               for n, o in zip(proposed["partitions"], current["partitions"]))


def leader_changes(proposed: dict, current: dict) -> int:
    return sum(n["replicas"][0] != o["replicas"][0] for n, o in zip(proposed["partitions"], current["partitions"]))


def spread(values) -> int:
    return max(values) - min(values)


def _solve(c, constraints, integrality, upper):
    result = milp(c, constraints=constraints, integrality=integrality,
                  bounds=Bounds(np.zeros(len(c)), upper))
    assert result.success, result.message
    return result


def ilp_replicas(current: dict, brokers, exclude=(), budget: int | None = None,
                 balance: bool = True) -> tuple[int, int]:
    """(smallest max - min of replica counts, fewest moves at that spread) by integer programming;
    with ``budget``: the smallest spread reachable within ``budget`` moves, and its fewest moves;
    with ``balance=False``: (0, the fewest moves any valid placement needs)."""
    targets = targets_of(brokers, exclude)
    ids = sorted(targets)
    parts = current["partitions"]
    P, n = len(parts), len(ids)
    nx = P * n
    M, m = nx, nx + 1  # max and min load
    size = nx + 2
    rows, lows, highs = [], [], []

    def row(entries, lo, hi):
        r = np.zeros(size)
        for i, v in entries:
            r[i] += v
        rows.append(r)
        lows.append(lo)
        highs.append(hi)

    rack_aware = all(r is not None for r in targets.values())
    rack_names = sorted(set(targets.values())) if rack_aware else []
    G = len(rack_names)
    move_cost = np.zeros(size)
    for p, entry in enumerate(parts):
        rf = len(entry["replicas"])
        row([(p * n + j, 1) for j in range(n)], rf, rf)
        for j, b in enumerate(ids):
            if b not in entry["replicas"]:
                move_cost[p * n + j] = 1
        if rack_aware and G > 1:
            for g in rack_names:
                members = [p * n + j for j, b in enumerate(ids) if targets[b] == g]
                row([(i, 1) for i in members], 1 if rf >= G else 0, math.ceil(rf / G))
    for j in range(n):
        row([(p * n + j, 1) for p in range(P)] + [(M, -1)], -np.inf, 0)
        row([(p * n + j, 1) for p in range(P)] + [(m, -1)], 0, np.inf)
    upper = np.concatenate([np.ones(nx), [P, P]])
    integrality = np.ones(size)
    spread_cost = np.zeros(size)
    spread_cost[M], spread_cost[m] = 1, -1
    base = [LinearConstraint(np.array(rows), lows, highs)]
    extra = []
    if budget is not None:
        extra = [LinearConstraint(move_cost.reshape(1, -1), -np.inf, budget)]
    if not balance:
        return 0, int(round(_solve(move_cost, base, integrality, upper).fun))
    first = _solve(spread_cost, base + extra, integrality, upper)
    best_spread = int(round(first.fun))
    keep = LinearConstraint(spread_cost.reshape(1, -1), -np.inf, best_spread)
    second = _solve(move_cost, base + extra + [keep], integrality, upper)
    return best_spread, int(round(second.fun))


def ilp_leaders(proposed: dict, current: dict, brokers, exclude=()) -> tuple[int, int]:
    """(smallest max - min of leader counts over the target brokers given the proposed replica
    sets, fewest leader changes at that spread)."""
    ids = sorted(targets_of(brokers, exclude))
    pairs = [(p, b) for p, e in enumerate(proposed["partitions"]) for b in e["replicas"]]
    nx = len(pairs)
    M, m = nx, nx + 1
    size = nx + 2
    A, lows, highs = [], [], []
    for p in range(len(proposed["partitions"])):
        r = np.zeros(size)
        r[[i for i, (q, _) in enumerate(pairs) if q == p]] = 1
        A.append(r)
        lows.append(1)
        highs.append(1)
    for b in ids:
        mine = [i for i, (_, c) in enumerate(pairs) if c == b]
        for bound, sign in ((M, -1), (m, -1)):
            r = np.zeros(size)
            r[mine] = 1
            r[bound] = sign
            A.append(r)
            lows.append(-np.inf if bound == M else 0)
            highs.append(0 if bound == M else np.inf)
    change = np.zeros(size)
    old_leader = [e["replicas"][0] for e in current["partitions"]]
    for i, (p, b) in enumerate(pairs):
        change[i] = 0 if b == old_leader[p] else 1
    spread_cost = np.zeros(size)
    spread_cost[M], spread_cost[m] = 1, -1
    P = len(proposed["partitions"])
    upper = np.concatenate([np.ones(nx), [P, P]])
    base = [LinearConstraint(np.array(A), lows, highs)]
    first = _solve(spread_cost, base, np.ones(size), upper)
    best = int(round(first.fun))
    second = _solve(change, base + [LinearConstraint(spread_cost.reshape(1, -1), -np.inf, best)], np.ones(size), upper)
    return best, int(round(second.fun))


def random_case(seed: int, *, racks: bool | None = None, max_partitions: int = 10, max_brokers: int = 7,
                mixed_rf: bool = False):
    """A random current assignment (not necessarily valid or balanced) and a changed broker set."""
    rnd = random.Random(seed)
    old = list(range(rnd.randint(2, max_brokers)))
    use_racks = rnd.random() < 0.5 if racks is None else racks
    rack_names = ["a", "b", "c"][: rnd.randint(2, 3)]
    rack_of = {b: rack_names[b % len(rack_names)] if b < len(rack_names) else rnd.choice(rack_names)
               for b in range(20)}
    added = list(range(len(old), len(old) + rnd.randint(0, 2)))
    removed = rnd.sample(old, rnd.randint(0, 1 if len(old) > 2 else 0))
    targets = [b for b in old if b not in removed] + added
    partitions = []
    for t in range(rnd.randint(1, 3)):
        rf = rnd.randint(1, min(3, len(old), len(targets)))
        for p in range(rnd.randint(1, max_partitions // 2 + 1)):
            r = rf if not mixed_rf else rnd.randint(1, min(3, len(old), len(targets)))
            partitions.append({"topic": f"t{t}", "partition": p, "replicas": rnd.sample(old, r)})
    brokers = [(b, rack_of[b] if use_racks else None) for b in targets]
    return {"version": 1, "partitions": partitions}, brokers


# -- bytes ------------------------------------------------------------------------------------------------------------

def broker_bytes(doc: dict, sizes: dict, ids) -> list[int]:
    load = Counter()
    for e in doc["partitions"]:
        for b in e["replicas"]:
            load[b] += sizes.get((e["topic"], e["partition"]), 0)
    return [load[b] for b in ids]


def bytes_moved(proposed: dict, current: dict, sizes: dict) -> int:
    return sum(sizes.get((n["topic"], n["partition"]), 0) * len(set(n["replicas"]) - set(o["replicas"]))
               for n, o in zip(proposed["partitions"], current["partitions"]))


def byte_limit(current: dict, brokers, sizes: dict, tolerance: float, exclude=()) -> int:
    """floor((1 + tolerance) * mean bytes per target broker), the same float expression the summary reports."""
    total = sum(sizes.get((e["topic"], e["partition"]), 0) * len(e["replicas"]) for e in current["partitions"])
    return int((1 + tolerance) * total / len(targets_of(brokers, exclude)))


def rule_key(loads, limit: int, moved_bytes: int) -> tuple[int, int, int]:
    """The byte rule as a sort key: largest broker (the limit when within it), bytes above the
    limit summed over the brokers, bytes moved."""
    return max(max(loads), limit), sum(max(0, x - limit) for x in loads), moved_bytes


def brute_force_bytes(current: dict, brokers, sizes: dict, limit: int, exclude=(),
                      budget: int | None = None) -> tuple[bool, tuple[int, int, int], int]:
    """Every valid placement enumerated (tiny inputs only): (a placement within the limit
    exists, the least rule key over all placements, the fewest replica moves at that key)."""
    targets = targets_of(brokers, exclude)
    ids = sorted(targets)
    racks = sorted(set(targets.values())) if all(r is not None for r in targets.values()) else None
    loads = np.zeros((1, len(ids)), np.int64)
    moved = np.zeros(1, np.int64)
    replicas_moved = np.zeros(1, np.int64)
    for e in current["partitions"]:
        rf, size, old = len(e["replicas"]), sizes.get((e["topic"], e["partition"]), 0), set(e["replicas"])
        options = []
        for chosen in itertools.combinations(range(len(ids)), rf):
            if racks and len(racks) > 1:
                per_rack = Counter(targets[ids[j]] for j in chosen)
                if len(per_rack) != min(rf, len(racks)) or max(per_rack.values()) > math.ceil(rf / len(racks)):
                    continue
            vector = np.zeros(len(ids), np.int64)
            vector[list(chosen)] = size
            new = sum(ids[j] not in old for j in chosen)
            options.append((vector, size * new, new))
        vectors = np.array([o[0] for o in options])
        loads = (loads[:, None, :] + vectors[None, :, :]).reshape(-1, len(ids))
        moved = (moved[:, None] + np.array([o[1] for o in options])[None, :]).ravel()
        replicas_moved = (replicas_moved[:, None] + np.array([o[2] for o in options])[None, :]).ravel()
    if budget is not None:
        keep = replicas_moved <= budget
        loads, moved, replicas_moved = loads[keep], moved[keep], replicas_moved[keep]
    top = loads.max(axis=1)
    excess = np.maximum(loads - limit, 0).sum(axis=1)
    keys = np.stack([np.maximum(top, limit), excess, moved], axis=1)
    order = np.lexsort((replicas_moved, keys[:, 2], keys[:, 1], keys[:, 0]))
    best = order[0]
    return bool((top <= limit).any()), tuple(int(v) for v in keys[best]), int(replicas_moved[best])


def tiny_byte_case(seed: int):
    """rf 1-2, 3-4 target brokers (sometimes in 2 racks, sometimes one excluded, added or
    removed), 4-6 partitions with sizes up to 60 (zeros included; sometimes all times 10), a
    tolerance and sometimes a move budget: small enough to enumerate every valid placement."""
    rnd = random.Random(seed)
    old = list(range(rnd.randint(3, 4)))
    rf = rnd.randint(1, 2)
    parts = [{"topic": "t", "partition": p, "replicas": rnd.sample(old, rf)} for p in range(rnd.randint(4, 6))]
    unit = rnd.choice([1, 1, 10])  # sizes with a common divisor: limits that are not multiples of it
    sizes = {("t", p): unit * rnd.choice([0, 1, 2, 3, 5, 8, 13, 21, 34, 55, rnd.randint(1, 60)])
             for p in range(len(parts))}
    targets = list(old)
    kind = rnd.choice(["same", "added", "removed", "excluded"])
    exclude = []
    if kind == "added" and len(targets) < 4:
        targets.append(len(old))
    elif kind == "removed" and len(targets) > 3:
        targets.remove(rnd.choice(targets))
    elif kind == "excluded" and len(targets) > 3:
        exclude = [rnd.choice(targets)]
    racked = rnd.random() < 0.4
    brokers = [(b, "ab"[b % 2] if racked else None) for b in targets]
    options = {"tolerance": rnd.choice([0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0])}
    if exclude:
        options["exclude"] = exclude
    if rnd.random() < 0.25:
        options["max_moves"] = rnd.randint(1, 4)
    return {"version": 1, "partitions": parts}, brokers, sizes, options


def ilp_bytes(current: dict, brokers, sizes: dict, limit: int, exclude=(), budget: int | None = None) -> int | None:
    """The fewest bytes any valid placement with every target broker at most ``limit`` bytes
    moves (within ``budget`` replica moves), by an integer program written out row by row; None
    when no such placement exists."""
    targets = targets_of(brokers, exclude)
    ids = sorted(targets)
    parts = current["partitions"]
    P, n = len(parts), len(ids)
    rows, lows, highs = [], [], []
    rack_names = sorted(set(targets.values())) if all(r is not None for r in targets.values()) else []
    cost = np.zeros(P * n)
    new = np.zeros(P * n)
    for p, entry in enumerate(parts):
        rf = len(entry["replicas"])
        size = sizes.get((entry["topic"], entry["partition"]), 0)
        r = np.zeros(P * n)
        r[p * n:(p + 1) * n] = 1
        rows.append(r)
        lows.append(rf)
        highs.append(rf)
        for j, b in enumerate(ids):
            if b not in entry["replicas"]:
                cost[p * n + j] = size
                new[p * n + j] = 1
        if len(rack_names) > 1:
            for g in rack_names:
                r = np.zeros(P * n)
                for j, b in enumerate(ids):
                    if targets[b] == g:
                        r[p * n + j] = 1
                rows.append(r)
                lows.append(1 if rf >= len(rack_names) else 0)
                highs.append(math.ceil(rf / len(rack_names)))
    for j in range(n):
        r = np.zeros(P * n)
        for p, entry in enumerate(parts):
            r[p * n + j] = sizes.get((entry["topic"], entry["partition"]), 0)
        rows.append(r)
        lows.append(0)
        highs.append(limit)
    if budget is not None:
        rows.append(new)
        lows.append(0)
        highs.append(budget)
    result = milp(cost, constraints=LinearConstraint(np.array(rows), lows, highs), integrality=np.ones(P * n),
                  bounds=Bounds(0, 1), options={"mip_rel_gap": 0})
    if result.status == 2:
        return None
    assert result.status == 0, result.message
    return int(round(result.fun))
