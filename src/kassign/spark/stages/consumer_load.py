"""Stage ``consumer_load``: records and bytes per consumer under every strategy, as a Kafka release runs it.

Reads: ``scenario`` (the members stage's group), ``loads`` (records and bytes per partition), ``release``
(live topics: the broker's) and ``lag`` (live topics with --group).

Writes: ``consumer_load``: one row per (strategy, member): partitions, records and bytes.

Decides: ``consumers`` in summary.json (per strategy: each member's load and assignment, the spread of bytes,
and on live topics each member's lag and who would be furthest behind), ``skipped_strategies`` (those the
release does not have, with why), and ``kafka_version``/``kafka_version_from``/``kafka_version_why``: the
release every strategy answers as, Kafka's classic assignors as that release's clients run them
(``--kafka-version``, else the broker's, else the default).

For example, 12 equal partitions over 4 members give every member 3 partitions under range and a bytes
spread ``max_over_mean`` of 1.0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kassign.core.releases import DEFAULT_KAFKA_VERSION
from kassign.spark import loads as stage_loads
from kassign.spark.options import PipelineOptions
from kassign.spark.stages.base import PipelineContext, Stage, StageResult
from kassign.spark.warm_up import prepare_driver_meanwhile


def run(ctx: PipelineContext) -> StageResult:
    opts = ctx.opts
    prepare_driver_meanwhile(opts.strategies).join()
    release, release_from, release_why = ctx.release or _release_given(opts)
    ctx.kafka_version = release
    strategies, skipped = stage_loads.available_strategies(opts.strategies, release)
    ctx.consumers = stage_loads.consumer_load(ctx.scenario, strategies, ctx.loads, release)
    if ctx.lag is not None:
        _add_member_lag(ctx.consumers, ctx.lag)
    rows = [{"strategy": s, "member": m, **v} for s, c in ctx.consumers.items() for m, v in c["members"].items()]
    ctx.write_rows("consumer_load", rows)
    return StageResult(("consumer_load",), {
        "consumers": {s: {k: v for k, v in c.items()} for s, c in ctx.consumers.items()},
        "skipped_strategies": skipped,
        "kafka_version": release, "kafka_version_from": release_from, "kafka_version_why": release_why})


STAGE = Stage("consumer_load", run, reads=("scenario", "loads"), makes=("kafka_version", "consumers"),
              writes=("consumer_load",))


def _release_given(opts: PipelineOptions) -> tuple[str, str, str]:
    """Without a broker to ask: --kafka-version, else the default release."""
    if opts.kafka_version:
        return opts.kafka_version, "given", "as given (--kafka-version)"
    return DEFAULT_KAFKA_VERSION, "default", f"no broker to ask; Kafka {DEFAULT_KAFKA_VERSION}, the default"


def _add_member_lag(consumers: dict[str, Any], lag: Mapping[str, Sequence[int]]) -> None:
    """Per strategy: each member's lag (the sum over its partitions) and who would be furthest behind."""
    for load in consumers.values():
        per_member = {m: sum(lag.get(t, [])[p] if p < len(lag.get(t, [])) else 0 for t, p in tps)
                      for m, tps in load["assignment"].items()}
        furthest = max(sorted(per_member), key=lambda m: per_member[m]) if per_member else None
        load["lag"] = {"members": per_member, "furthest_behind": furthest,
                       "max_lag": per_member[furthest] if furthest is not None else 0,
                       "total": sum(per_member.values())}
