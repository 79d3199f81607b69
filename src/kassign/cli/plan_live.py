"""``kassign plan --bootstrap-server``: the planner's inputs read from the cluster itself.

The rule lives in :mod:`kassign.kafka.plan_inputs` (one read of the cluster gives every argument
``kassign.plan_reassignment`` takes; under-replicated partitions are left where they are unless
``--move-under-replicated``; a cluster that does not speak DescribeLogDirs is planned on counts). This module is
the command's positional form of it.
"""

from __future__ import annotations

from collections.abc import Callable

from kassign.kafka.plan_inputs import PlanInputs, read_plan_inputs

__all__ = ["LivePlanInputs", "read_live_inputs"]

LivePlanInputs = PlanInputs


def read_live_inputs(bootstrap: str, config: dict[str, str] | None, timeout: float, topics: list[str] | None,
                     sample: str | None, capacity_path: str | None, move_under_replicated: bool,
                     progress: Callable[[float, float], None] | None = None) -> PlanInputs:
    """:func:`kassign.kafka.plan_inputs.read_plan_inputs` with the command's arguments."""
    return read_plan_inputs(bootstrap, config=config, timeout=timeout, topics=topics or None, sample=sample,
                            capacity=capacity_path, move_under_replicated=move_under_replicated, progress=progress)
