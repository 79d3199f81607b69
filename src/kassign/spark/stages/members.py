"""Stage ``members``: the consumer group the later stages answer for, and every topic's partition count.

Reads: ``digest`` (the topics records were found in), ``counts`` (live topics: the cluster's),
``group_scenario`` (live: the group's own members), and ``--scenario`` or ``--members``.

Writes: no table.

Decides: the ``scenario`` (members and subscriptions: the live group's members, else --scenario, else
``--members N`` consumers reading every topic) and ``partitions`` in summary.json (a live topic's count, else
the scenario's, else ``--partitions``); warns where no member subscribes to a topic in the data (those records
are not consumed). Its warnings, with every earlier stage's, are said once after it, before the load tables.

For example, ``--members 2`` on topics ``orders`` and ``payments`` gives ``consumer-0`` and ``consumer-1``,
each subscribed to both, and ``partitions == {"orders": 12, "payments": 12}`` with the default --partitions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kassign.core.errors import KassignError
from kassign.spark.options import PipelineOptions
from kassign.spark.stages.base import PipelineContext, Stage, StageResult


def run(ctx: PipelineContext) -> StageResult:
    opts = ctx.opts
    topics = sorted(ctx.counts) if opts.live else sorted(ctx.digest.topics())
    ctx.scenario, ctx.counts = _scenario(opts, topics, ctx.counts if opts.live else None)
    if ctx.group_scenario is not None:
        ctx.scenario = ctx.group_scenario
    return StageResult(summary={"partitions": ctx.counts}, warnings=_subscription_warnings(ctx.scenario, topics))


STAGE = Stage("members", run, reads=("digest",), makes=("scenario", "counts"))


def _scenario(opts: PipelineOptions, topics: Sequence[str],
              real_counts: Mapping[str, int] | None = None) -> tuple[dict, dict[str, int]]:
    """The consumer group and every topic's partition count: ``real_counts`` (a live cluster's) where
    given, else the scenario's, else ``--partitions``."""
    if opts.scenario is not None:
        from kassign.groups.scenario import parse_scenario

        parse_scenario(opts.scenario)  # one-line errors for a malformed file, before Spark runs
        counts = {t: (real_counts or {}).get(t, opts.scenario["topics"].get(t, opts.partitions)) for t in topics}
        scenario = {"topics": {**opts.scenario["topics"], **counts}, "members": opts.scenario["members"]}
        return scenario, counts
    if opts.members < 1:
        raise KassignError(f"--members must be >= 1, got {opts.members}")
    counts = {t: (real_counts or {}).get(t, opts.partitions) for t in topics}
    members = {f"consumer-{i}": {"topics": list(topics)} for i in range(opts.members)}
    return {"topics": counts, "members": members}, counts


def _subscription_warnings(scenario: Mapping[str, Any], topics: Sequence[str]) -> list[str]:
    """What a scenario group leaves unconsumed: said out loud instead of showing zero rows."""
    subscribed = {t for spec in scenario["members"].values() for t in spec.get("topics", [])}
    present = [t for t in topics if t in subscribed]
    if not present:
        return [f"no member of the scenario subscribes to a topic in the data (topics in the data: "
                f"{', '.join(topics)}; subscribed: {', '.join(sorted(subscribed)) or 'none'}): "
                "consumer load and rebalance cost are empty"]
    missing = [t for t in topics if t not in subscribed]
    if missing:
        return [f"no member of the scenario subscribes to {', '.join(missing)}: "
                "those records are not consumed (see unconsumed_records in summary.json)"]
    return []
