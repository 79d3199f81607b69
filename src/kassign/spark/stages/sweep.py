"""Stage ``sweep``: the hottest partition and the skew for every partition count 1..max, from one pass.

Reads: ``digest`` (keyed bytes per partition for every count, computed from each key's hash once, and how
many keys and bytes would move), ``counts`` (live topics: today's count) and ``distinct_keys``.

Writes: ``partition_sweep``: keyed bytes per (topic, count, partition).

Decides: ``sweep`` in summary.json: per topic the curve (hottest share and skew per count, keys and bytes that
would move to another partition), and the recommended count: the smallest whose hottest partition carries at
most ``--target-share`` of the bytes (keyless bytes spread evenly, as either null-key model does on average);
a live topic can only grow, so there today's count if it meets the target, else the smallest larger one. When
no count meets it, ``why_none`` says why (the hottest key alone).

For example, with one key carrying 30% of a topic's bytes and ``--target-share 0.1`` no count qualifies, and
``why_none`` names the 30%.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from kassign.spark import loads as stage_loads
from kassign.spark.digest import Digest
from kassign.spark.options import PipelineOptions
from kassign.spark.stages.base import PipelineContext, Stage, StageResult

SWEEP_SCHEMA = pa.schema([("topic", pa.string()), ("partitions", pa.int32()), ("partition", pa.int32()),
                          ("keyed_bytes", pa.int64())])


def run(ctx: PipelineContext) -> StageResult:
    ctx.write_rows("partition_sweep", partition_sweep(ctx.digest), SWEEP_SCHEMA)
    ctx.sweep = _sweep_summary(ctx.digest.topics(), ctx.digest, ctx.opts, ctx.counts if ctx.opts.live else None,
                               ctx.distinct_keys)
    return StageResult(("partition_sweep",), {"sweep": ctx.sweep})


STAGE = Stage("sweep", run, reads=("digest", "counts"), makes=("sweep",), writes=("partition_sweep",))


def partition_sweep(digest: Digest) -> list[dict[str, Any]]:
    """Keyed bytes per partition for every count 1..max (``kassign.spark.digest``): one row per
    (topic, count, partition)."""
    return [{"topic": topic, "partitions": len(per_partition), "partition": p, "keyed_bytes": int(b)}
            for topic, counts in sorted(digest.sweep.items()) for per_partition in counts
            for p, b in enumerate(per_partition.tolist())]


def _sweep_summary(per_topic: Mapping[str, Any], digest: Digest, opts: PipelineOptions,
                   live_counts: Mapping[str, int] | None = None,
                   distinct_keys: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Per topic: add keyless bytes (spread evenly, as either null-key model does on average) and judge.

    Each count of the curve also says what moving to it would do to per-key order: the share of keys
    and of keyed bytes that would land on another partition than today's. A live topic can only grow,
    so its recommendation is today's count if that meets the target, else the smallest larger one."""
    hottest = {(topic, n): int(per_partition.max())
               for topic, counts in digest.sweep.items() for n, per_partition in enumerate(counts, start=1)}
    hottest_key = {topic: digest.hottest_key_bytes(topic) for topic in per_topic}
    result = {}
    for topic, row in per_topic.items():
        total, null_bytes = row["bytes"], row["null_bytes"]
        rows = [(n, int(round(hottest.get((topic, n), 0) + null_bytes / n)), n) for n in range(1, opts.max_partitions + 1)]
        verdict = stage_loads.sweep_verdict(rows, total, opts.target_share)
        _add_moves(verdict["curve"], digest, topic, total - null_bytes,
                   (distinct_keys or {}).get(topic, digest.keyed_rows.get(topic, 0)))
        verdict["records"] = row["records"]
        verdict["hottest_key_share"] = round((hottest_key.get(topic) or 0) / total, 6) if total else 0.0
        if live_counts is not None:
            _grow_only(verdict, live_counts[topic])
        if verdict["recommended_partitions"] is None:
            verdict["why_none"] = (f"no count up to {opts.max_partitions} gets the hottest partition under "
                                   f"{opts.target_share:.1%}; the hottest key alone carries "
                                   f"{verdict['hottest_key_share']:.1%} of the bytes")
        verdict["keyless_bytes_spread_evenly"] = null_bytes
        result[topic] = verdict
    return result


def _add_moves(curve: list[dict[str, Any]], digest: Digest, topic: str, keyed_bytes: int, keys: int) -> None:
    moved = digest.moved_bytes.get(topic)
    staying = digest.staying_keys.get(topic)
    for point in curve:
        n = point["partitions"]
        if moved is None or n > len(moved):
            point["moved_keys_share"] = point["moved_bytes_share"] = 0.0
            continue
        point["moved_keys_share"] = round((keys - int(staying[n - 1])) / keys, 6) if keys else 0.0
        point["moved_bytes_share"] = round(int(moved[n - 1]) / keyed_bytes, 6) if keyed_bytes else 0.0


def _grow_only(verdict: dict[str, Any], current: int) -> None:
    """A live topic's recommendation: today's count if it meets the target, else the smallest larger count."""
    share = verdict["target_share"]
    fits = [c for c in verdict["curve"] if c["partitions"] >= current and c["hottest_share"] <= share]
    chosen = fits[0] if fits else None
    verdict["current_partitions"] = current
    verdict["recommended_partitions"] = chosen["partitions"] if chosen else None
    if chosen is not None:
        verdict["recommended_moves"] = {"keys_share": chosen["moved_keys_share"],
                                        "bytes_share": chosen["moved_bytes_share"]}
