"""Stage ``summary``: every stage's part put together, the verdict, summary.json and report.html.

Reads: every earlier stage's part of summary.json and the warnings (gathered by the driver), and the tables
under ``--out`` (their names).

Writes: no table; the files ``summary.json`` (the parts in ``SUMMARY_ORDER``, plus ``tables``, ``warnings`` and
``verdict``) and ``report.html`` (``kassign.spark.report_html``: the verdict, the warnings, a chart or table per
stage).

Decides: ``verdict``: the partition count to use per topic, the strategy that balances this data best over the
consumers, the biggest skew; on live topics also which producer put each topic's records there and who would
lag most.

For example, consumers where ``load-aware`` has the lowest busiest-member/mean bytes (1.06) give
``best_strategy: "load-aware"``, ties broken by the smaller max-minus-min.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kassign.spark.stages.base import PipelineContext, Stage, StageResult

# summary.json's fields in the order the API returns them (and --json prints them); a stage's part that is
# not here would be a field nobody documented.
SUMMARY_ORDER = ("input", "engine", "partitions", "null_key_model", "rows", "key_type", "partition_load",
                 "keyless_racks", "sweep",
                 "consumers", "skipped_strategies", "brokers", "rebalance", "source", "forensics", "kafka_version",
                 "kafka_version_from", "kafka_version_why", "lag", "group", "group_check", "tables", "producers",
                 "set_aside", "warnings", "verdict")


def run(ctx: PipelineContext) -> StageResult:
    parts = {**ctx.parts, "tables": sorted(p.name for p in ctx.out.iterdir() if p.is_dir()),
             "warnings": ctx.warnings}
    unknown = set(parts) - set(SUMMARY_ORDER)
    if unknown:
        raise AssertionError(f"summary fields without a place in SUMMARY_ORDER: {sorted(unknown)}")
    summary = {name: parts[name] for name in SUMMARY_ORDER if name in parts}
    summary["verdict"] = verdict(summary)
    (ctx.out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    from kassign.spark.report_html import write_report

    write_report(summary, ctx.out / "report.html")
    ctx.summary = summary
    return StageResult()


STAGE = Stage("summary", run, makes=("summary",))


def verdict(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The few facts a reader wants first: partitions to use, the strategy that balances best, the worst skew;
    for live topics also which producer put the records there, and who would lag most."""
    recommended = {t: s["recommended_partitions"] for t, s in summary["sweep"].items()}
    consumers = {s: c for s, c in summary["consumers"].items() if c["members"]}
    best = None
    if consumers:
        best = min(consumers, key=lambda s: (consumers[s]["bytes_spread"]["max_over_mean"],
                                             consumers[s]["bytes_spread"]["max_minus_min"]))
    per_partition: dict[str, list[int]] = {}
    for row in summary["partition_load"]:
        per_partition.setdefault(row["topic"], []).append(row["bytes"])
    worst = None
    for topic, n in summary["partitions"].items():
        values = per_partition.get(topic, []) + [0] * max(0, n - len(per_partition.get(topic, [])))
        total = sum(values)
        if not total:
            continue
        hottest = max(values)
        skew = hottest / (total / n)
        if worst is None or skew > worst["skew"]:
            worst = {"topic": topic, "partitions": n, "skew": round(skew, 4), "hottest_share": round(hottest / total, 6),
                     "hottest_key_share": summary["sweep"].get(topic, {}).get("hottest_key_share", 0.0)}
    result = {"recommended_partitions": recommended,
              "best_strategy": best,
              "best_strategy_max_over_mean": consumers[best]["bytes_spread"]["max_over_mean"] if best else None,
              "biggest_skew": worst}
    if "forensics" in summary:
        result["producers"] = {t: f["verdict"] for t, f in summary["forensics"].items()}
        keyless = {t: f["keyless"]["verdict"] for t, f in summary["forensics"].items() if f.get("keyless")}
        if keyless:
            result["keyless_placement"] = keyless
    if summary.get("keyless_racks"):
        from kassign.spark.stages.keyless_racks import sentence

        racks = summary["null_key_model"].get("client_racks", [])
        result["keyless_racks"] = {t: sentence(t, e, racks) for t, e in summary["keyless_racks"].items()}
    if "lag" in summary and consumers:
        least = min(consumers, key=lambda s: (consumers[s]["lag"]["max_lag"], s))
        result["lag"] = {"total": sum(sum(v["lag"]) for v in summary["lag"].values()),
                         "least_behind_strategy": least,
                         "furthest_behind": {s: {"member": c["lag"]["furthest_behind"], "lag": c["lag"]["max_lag"]}
                                             for s, c in consumers.items()}}
    return result
