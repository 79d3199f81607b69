"""Stage ``conservation``: every input row accounted for at every stage (live topics: every offset too).

Reads: ``digest`` (rows per set-aside reason, records per topic), ``aside_rows``, ``load_rows``, ``sweep``,
``consumers``, ``brokers``, ``producers`` and, on live topics, ``source``.

Writes: no table.

Decides: ``rows`` in summary.json: the input rows, those set aside per reason, the records each stage counted
(partitioned, partition_load, partition_sweep, each strategy's consumer_load, leaders' broker_load, each
producer's load) against the records expected, ``accounted`` (every stage adds up; a consumer stage may count
fewer, for topics no member subscribes to: ``unconsumed_records``), and on live topics ``offsets``: offsets
spanned = records read + offsets not read, by reason.

For example, 1,000 input rows of which 3 are set aside expect 997 records at every stage; a scenario whose
members read only ``orders`` shows ``unconsumed_records`` for the ``payments`` records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kassign.spark.stages.base import PipelineContext, Stage, StageResult


def run(ctx: PipelineContext) -> StageResult:
    per_topic = ctx.digest.topics()
    input_rows = sum(ctx.digest.reasons.values()) + sum(t["records"] for t in per_topic.values())
    aside_counts = {r["reason"]: r["rows"] for r in ctx.aside_rows}
    placed_rows = sum(r["records"] for r in per_topic.values())
    rows = _conservation(input_rows, aside_counts, placed_rows, ctx.load_rows, ctx.sweep, ctx.consumers, ctx.brokers,
                         ctx.producers)
    if ctx.opts.live:
        rows["offsets"] = _offset_accounting(ctx.source)
        rows["accounted"] = rows["accounted"] and rows["offsets"]["accounted"]
    return StageResult(summary={"rows": rows})


STAGE = Stage("conservation", run, reads=("digest", "load_rows", "sweep", "consumers", "brokers"))


def _conservation(input_rows: int, aside: Mapping[str, int], placed: int, load_rows: Sequence[Any],
                  sweep: Mapping[str, Any], consumers: Mapping[str, Any], brokers: Mapping[str, Any],
                  producers: Mapping[str, Any] | None = None) -> dict[str, Any]:
    expected = input_rows - sum(aside.values())
    per_stage = {
        "partitioned": placed,
        "partition_load": sum(r["records"] for r in load_rows),
        "partition_sweep": sum(v["records"] for v in sweep.values()),
        **{f"consumer_load:{s}": c["records"] for s, c in consumers.items()},
        "broker_load_leaders": brokers["leader_records"],
    }
    for row in (producers or {}).get("agreement", []):
        per_stage[f"producer_load:{row['producer']}"] = sum(
            r["records"] for r in producers["load"] if r["producer"] == row["producer"])
    unsubscribed = {k: expected - v for k, v in per_stage.items() if k.startswith("consumer_load") and v != expected}
    return {"input": input_rows, "set_aside": dict(aside), "expected_per_stage": expected, "per_stage": per_stage,
            "accounted": all(v == expected for k, v in per_stage.items() if not k.startswith("consumer_load"))
            and all(v >= 0 for v in unsubscribed.values()),
            "unconsumed_records": unsubscribed}


def _offset_accounting(source: Mapping[str, Any]) -> dict[str, Any]:
    spanned = sum(e - s for t in source["topics"].values() for s, e in zip(t["start_offsets"], t["end_offsets"]))
    read = sum(t["records"] for t in source["topics"].values())
    not_read: dict[str, int] = {}
    for t in source["topics"].values():
        for reason, n in t["offsets_not_read"].items():
            not_read[reason] = not_read.get(reason, 0) + n
    return {"spanned": spanned, "read": read, "not_read": not_read,
            "accounted": spanned == read + sum(not_read.values())}
