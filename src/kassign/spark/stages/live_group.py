"""Stage ``live_group``: the live group of ``--group``: how far behind it is, and who its members are.

Reads: ``live_group`` (described by the live_plan stage: positions, members, kassign's check), ``plan`` and
``counts``.

Writes: no table.

Decides: ``lag`` in summary.json (per partition: committed offset, end offset, lag; without a committed offset
the lag counts from the log start), ``group`` (as described, or why it could not be), ``group_check``, and the
members the consumer stages use (the group's own, unless --scenario or --members says otherwise), with a
warning where they are assumed. Without --group it does nothing.

For example, a partition with end offset 120 and committed offset 100 has lag 20; one never committed, log
start 0, has lag 120.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kassign.spark.options import PipelineOptions
from kassign.spark.stages.base import PipelineContext, Stage, StageResult
from kassign.spark.stages.live_plan import LiveGroup


def run(ctx: PipelineContext) -> StageResult:
    live_group = ctx.live_group
    if live_group is None:
        return StageResult()
    lag = _lag_summary(ctx.plan, live_group.positions)
    if live_group.described is not None and live_group.described.type == "share":
        for entry in lag.values():
            entry["position"] = "share-partition start offset"
    ctx.lag = {t: v["lag"] for t, v in lag.items()}
    group, ctx.group_scenario, warnings = _group_members(ctx.opts, live_group, ctx.counts)
    part = {"lag": lag, "group": group}
    if live_group.check is not None:
        part["group_check"] = live_group.check
    return StageResult(summary=part, warnings=warnings)


STAGE = Stage("live_group", run, reads=("live_group", "plan", "counts"), makes=("lag", "group_scenario"))


def _lag_summary(plan: Any, committed: Mapping[str, list[int | None]]) -> dict[str, Any]:
    """summary.json's ``lag``: per partition, committed offset (None: none), end offset and lag. Without a
    committed offset the lag counts from the partition's first offset (its log start)."""
    result = {}
    for name, topic in plan.topics.items():
        marks = committed.get(name, [None] * topic.count)
        ends = [p.end for p in topic.partitions]
        lags = [max(0, p.end - (c if c is not None else p.log_start)) for p, c in zip(topic.partitions, marks)]
        result[name] = {"committed": list(marks), "end_offsets": ends, "lag": lags}
    return result


def _group_members(opts: PipelineOptions, live: LiveGroup,
                   counts: Mapping[str, int]) -> tuple[dict, dict | None, list[str]]:
    """The ``group`` object for summary.json, and (when the consumer stages should use it: members present, no
    --scenario, no --members) its members as a scenario of the topics read: each member's subscription where
    the broker tells it, else every topic read (said). The warnings say when the stages run on assumed members."""
    if live.described is None:
        return ({"id": opts.group, "described": False, "why": live.why},
                None, [f"group {opts.group}: kassign cannot describe it ({live.why}); the consumer stages run on "
                       f"assumed members"])
    described = live.described
    entry: dict[str, Any] = {**described.to_json(), "described": True}
    warnings = [f"group {opts.group}: {note}" for note in live.notes]
    use = bool(described.members) and opts.scenario is None and opts.members_from_group
    entry["members_used_for_consumer_load"] = use
    if not described.members:
        warnings.append(f"group {opts.group} has no members now ({described.state}); the consumer stages run on "
                        "assumed members")
    if not use:
        return entry, None, warnings
    spec: dict[str, Any] = {}
    unknown = []
    for member_id, member in described.members.items():
        topics = [t for t in member.topics if t in counts]
        if not member.topics:
            unknown.append(member_id)
            topics = sorted(counts)
        one: dict[str, Any] = {"topics": topics}
        if member.rack:
            one["rack"] = member.rack
        if member.instance_id:
            one["instance_id"] = member.instance_id
        spec[member_id] = one
    if unknown:
        entry["members_with_assumed_topics"] = unknown
        warnings.append(f"group {opts.group}: the broker keeps no subscription for {len(unknown)} of "
                        f"{len(described.members)} members; they are taken to read every topic read")
    return entry, {"topics": dict(counts), "members": spec}, warnings
