"""Stage ``live_plan``: what to read from the live topics, asked of the cluster before Spark reads a record.

Reads: the cluster at ``--bootstrap`` (with ``--command-config``): the topics' partitions and offsets, the
brokers' release, and with ``--group`` the group as its own APIs describe it and where it stands.

Writes: no table.

Decides: the offsets to read per partition (``--since``/``--last`` or everything), each topic's partition count,
each partition's leader's rack (for the forensics of keyless records),
the Kafka release the consumer stages answer as (``--kafka-version``, else the broker's, else the default), the
group; ``input`` in summary.json; the sweep's reach (up to twice today's count, as a topic only grows); and the
end of the run for a topic of more partitions than the pipeline takes.

For example, ``--topics orders --last 100`` on a 6-partition topic plans offsets ``[end - 100, end)`` of each
partition (from its log start where it holds fewer), and ``counts == {"orders": 6}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kassign.core.errors import KassignError, LiveClusterError
from kassign.spark.options import MAX_PARTITIONS_PER_TOPIC, PipelineOptions
from kassign.spark.stages.base import PipelineContext, Stage, StageResult


@dataclass
class LiveGroup:
    """``--group`` on live topics: the group as described (None: it could not be, ``why``), where it stands in
    each partition read (committed offsets; a share group: its start offsets), and kassign's check of it."""

    positions: dict[str, list[int | None]]
    described: Any = None
    why: str | None = None
    check: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


def run(ctx: PipelineContext) -> StageResult:
    from kassign.kafka.client import Cluster, plan_read
    from kassign.kafka.config import ClientSettings

    opts = ctx.opts
    settings = ClientSettings.from_properties(opts.client_config)
    ctx.job("kassign: plan the read of the live topics")
    with Cluster(opts.bootstrap, settings) as cluster:
        ctx.plan = plan = plan_read(cluster, opts.topics, since=opts.since, last=opts.last)
        ctx.counts = counts = {t: p.count for t, p in plan.topics.items()}
        ctx.release = _release(cluster, opts)
        brokers = {node: b.rack or None for node, b in cluster.metadata().brokers.items()}
        ctx.leader_racks = {t: [brokers.get(p.leader) for p in topic.partitions] for t, topic in plan.topics.items()}
        ctx.live_group = _read_live_group(cluster, opts, counts, ctx.release[0]) if opts.group else None
    too_big = {t: n for t, n in counts.items() if n > MAX_PARTITIONS_PER_TOPIC}
    if too_big:
        topic, n = next(iter(too_big.items()))
        raise KassignError(f"topic {topic!r} has {n:,} partitions; the pipeline takes at most "
                           f"{MAX_PARTITIONS_PER_TOPIC:,} per topic")
    # the sweep reaches past today's count (a topic can only grow), up to twice it
    opts.max_partitions = max(opts.max_partitions, min(4096, 2 * max(counts.values())))
    return StageResult(summary={"input": _describe(opts, plan)}, warnings=list(plan.notes[1:]))


STAGE = Stage("live_plan", run, makes=("plan", "counts", "release", "leader_racks", "live_group"))


def _describe(opts: PipelineOptions, plan: Any) -> dict[str, Any]:
    desc = {"kind": "kafka", "bootstrap": opts.bootstrap, "topics": list(plan.topics)}
    if opts.since is not None:
        desc["since"] = str(opts.since)
    if opts.last is not None:
        desc["last"] = opts.last
    if opts.group:
        desc["group"] = opts.group
    return desc


def _release(cluster: Any, opts: PipelineOptions) -> tuple[str, str, str]:
    """The Kafka release the consumer stages answer as: --kafka-version, else the broker's, else the default."""
    from kassign.kafka.live_group import choose_release

    return choose_release(cluster, opts.kafka_version)


def _read_live_group(cluster: Any, opts: PipelineOptions, counts: Mapping[str, int], release: str) -> LiveGroup:
    """The group of ``--group`` whatever its type, read with its own APIs; a group kassign cannot describe is
    said, never taken as a group without members."""
    from kassign.kafka.client import committed_offsets
    from kassign.kafka.group_check import check_group
    from kassign.kafka.groups import describe_group
    from kassign.kafka.live_group import group_partitions, group_positions, initialized_partitions

    try:
        described = describe_group(cluster, opts.group)
    except LiveClusterError as err:
        return LiveGroup(committed_offsets(cluster, opts.group, counts), why=str(err))
    positions = group_positions(cluster, described, counts)
    group_counts, notes = group_partitions(cluster, described)
    group_counts = {**group_counts, **counts}
    own = group_positions(cluster, described, {t: n for t, n in group_counts.items() if t not in counts})
    check = check_group(described, group_counts, release, initialized_partitions(described, {**own, **positions}))
    return LiveGroup(positions, described, check=check, notes=notes + list(described.notes))
