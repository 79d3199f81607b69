"""Figures of an assignment against the current one: per broker, per rack, moves, balance."""

from __future__ import annotations

from typing import Any

import numpy as np

from kassign.replicas.plan._document import changed_rows, moved_per_partition
from kassign.replicas.plan._model import Problem


def _spread(values: list[int]) -> int:
    return max(values) - min(values) if values else 0


def figures(problem: Problem, proposed: np.ndarray) -> dict[str, Any]:
    """Replicas, leaders (and bytes) per broker and rack before -> after, and what moves.

    Brokers: the targets, plus any broker that holds replicas now (removed or excluded ones
    end with 0). Balance figures (spread = max - min, max/mean) are over the target brokers.
    """
    current = problem.current
    sizes = problem.sizes
    ids = sorted(set(problem.targets.tolist()) | set(np.unique(current[current >= 0]).tolist())
                 | set(np.unique(proposed[proposed >= 0]).tolist()))
    code = {b: i for i, b in enumerate(ids)}
    lookup = np.array(ids, np.int64)

    def per_broker(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        valid = a >= 0
        idx = np.searchsorted(lookup, a[valid])
        replicas = np.bincount(idx, minlength=len(ids))
        leaders = np.bincount(np.searchsorted(lookup, a[:, 0]), minlength=len(ids))
        size = None
        if sizes is not None:
            size = np.bincount(idx, weights=np.broadcast_to(sizes[:, None], a.shape)[valid],
                               minlength=len(ids)).astype(np.int64)
        return replicas, leaders, size

    rb, lb, sb = per_broker(current)
    ra, la, sa = per_broker(proposed)
    target = set(problem.targets.tolist())
    brokers = []
    for b in ids:
        i = code[b]
        row = {"broker": b, "rack": problem.racks.get(b), "target": b in target, "excluded": b in problem.excluded,
               "replicas_before": int(rb[i]), "replicas_after": int(ra[i]),
               "leaders_before": int(lb[i]), "leaders_after": int(la[i])}
        if sizes is not None:
            row.update(bytes_before=int(sb[i]), bytes_after=int(sa[i]))
        brokers.append(row)
    racks: dict[str, dict[str, int]] = {}
    for row in brokers:
        rack = racks.setdefault(row["rack"] or "-", {"brokers": 0})
        rack["brokers"] += 1
        for key, value in row.items():
            if key.endswith(("_before", "_after")):
                rack[key] = rack.get(key, 0) + value
    moved = moved_per_partition(current, proposed)
    leaders_changed = int((proposed[:, 0] != current[:, 0]).sum())
    on_targets = [row for row in brokers if row["target"]]
    result: dict[str, Any] = {
        "partitions": problem.num_partitions,
        "replicas": int(problem.rf.sum()),
        "replicas_moved": int(moved.sum()),
        "partitions_changed": int(len(changed_rows(current, proposed))),
        "leaders_changed": leaders_changed,
        "replica_spread_before": _spread([r["replicas_before"] for r in on_targets]),
        "replica_spread_after": _spread([r["replicas_after"] for r in on_targets]),
        "leader_spread_before": _spread([r["leaders_before"] for r in on_targets]),
        "leader_spread_after": _spread([r["leaders_after"] for r in on_targets]),
        "brokers": brokers,
        "racks": racks,
    }
    if sizes is not None:
        total = sum(r["bytes_after"] for r in on_targets)
        mean = total / len(on_targets) if on_targets else 0
        result["bytes_moved"] = int((moved * sizes).sum())
        result["bytes_max_over_mean_before"] = round(max(r["bytes_before"] for r in on_targets) / mean, 4) if mean else 0
        result["bytes_max_over_mean_after"] = round(max(r["bytes_after"] for r in on_targets) / mean, 4) if mean else 0
    return result
