"""Stage ``live_source``: what was read from each live topic, offset by offset, and what was not.

Reads: ``plan`` (the offsets planned per partition) and ``digest`` (records read, and offsets not read by
reason: transaction markers, aborted transactions, retention, compaction, a deleted topic, a truncated log).

Writes: no table.

Decides: ``source`` in summary.json (per topic: start and end offsets, log start, high watermark, records read,
offsets not read per partition and reason), warnings for topics with no record read and for offsets lost while
reading, and the end of the run when nothing at all was read ("nothing to read: ...").

For example, a partition planned over offsets ``[0, 10)`` holding 8 records and a transaction's 2 markers
gives ``records: 8`` and ``offsets_not_read: {"control": 2}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kassign.core.errors import KassignError
from kassign.spark.stages.base import PipelineContext, Stage, StageResult

_GAP_WORDS = {"control": "transaction markers", "aborted": "records of aborted transactions",
              "retention": "deleted by retention while the topic was read",
              "topic deleted": "lost: the topic was deleted while it was read",
              "truncated": "lost: the log was truncated below the planned end",
              "compacted": "compacted away (or otherwise not in the log)"}


def run(ctx: PipelineContext) -> StageResult:
    opts = ctx.opts
    ctx.source = source = _source_summary(ctx.plan, ctx.digest)
    read = sum(t["records"] for t in source["topics"].values())
    if not read:
        raise KassignError(_nothing_read(source, opts.since is not None or opts.last is not None))
    warnings = []
    empty = [t for t, v in source["topics"].items() if not v["records"]]
    if empty:
        warnings.append(f"no records read from {', '.join(empty)}")
    return StageResult(summary={"source": source}, warnings=warnings + _gap_warnings(source))


STAGE = Stage("live_source", run, reads=("plan", "digest"), makes=("source",))


def _source_summary(plan: Any, digest: Any) -> dict[str, Any]:
    """summary.json's ``source``: per topic, offsets per partition and records read; plus what was not read."""
    per_topic = digest.topics()
    topics = {}
    for name, topic in plan.topics.items():
        not_read: dict[str, int] = {}
        per_partition: list[dict[str, int]] = [{} for _ in topic.partitions]
        for (t, p, reason), n in sorted(digest.gaps.items()):
            if t == name:
                not_read[reason] = not_read.get(reason, 0) + n
                per_partition[p][reason] = n
        topics[name] = {
            "partitions": topic.count,
            "start_offsets": [p.start for p in topic.partitions],
            "end_offsets": [p.end for p in topic.partitions],
            "records": per_topic.get(name, {}).get("records", 0),
            "log_start_offsets": [p.log_start for p in topic.partitions],
            "high_watermarks": [p.high_watermark for p in topic.partitions],
            "list_offsets_latest": [p.listed_latest for p in topic.partitions],
            "offsets_not_read": not_read,
            "offsets_not_read_per_partition": per_partition,
        }
    return {"kind": "kafka", "bootstrap": plan.bootstrap,
            "isolation_level": "read_committed" if plan.isolation else "read_uncommitted",
            "end_offsets_from": "fetch last stable offset" if plan.isolation else "fetch high watermark",
            "notes": plan.notes, "topics": topics}


def _nothing_read(source: Mapping[str, Any], bounded: bool) -> str:
    parts = []
    for name, topic in source["topics"].items():
        spanned = sum(e - s for s, e in zip(topic["start_offsets"], topic["end_offsets"]))
        parts.append(f"{name} has no records" + (f" ({spanned:,} offsets, none of them a record)" if spanned else ""))
    return "nothing to read: " + "; ".join(parts) + (" in the range asked for" if bounded else "")


def _gap_warnings(source: Mapping[str, Any]) -> list[str]:
    out = []
    for name, topic in source["topics"].items():
        for reason in ("retention", "topic deleted", "truncated"):
            n = topic["offsets_not_read"].get(reason, 0)
            if n:
                out.append(f"{name}: {n:,} offsets {_GAP_WORDS[reason]}")
    return out
