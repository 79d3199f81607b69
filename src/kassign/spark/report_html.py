"""report.html: the pipeline summary as one self-contained page (charts are embedded base64 PNGs)."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

MIB = 1024 * 1024


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def chart_partition_load(summary: Mapping[str, Any]) -> str:
    rows = summary["partition_load"]
    fig, ax = plt.subplots(figsize=(9, 3.2))
    labels = [f"{r['topic']}-{r['partition']}" for r in rows]
    ax.bar(range(len(rows)), [r["bytes"] / MIB for r in rows], color="#4c72b0")
    ax.set_xticks(range(len(rows)), labels, rotation=90, fontsize=7)
    ax.set_ylabel("MiB")
    ax.set_title("Bytes per partition")
    return _png(fig)


def chart_sweep(summary: Mapping[str, Any]) -> str:
    fig, ax = plt.subplots(figsize=(9, 3.2))
    for topic, sweep in summary["sweep"].items():
        curve = sweep["curve"]
        line, = ax.plot([c["partitions"] for c in curve], [c["skew"] for c in curve], marker=".", label=topic)
        if sweep["recommended_partitions"]:
            ax.axvline(sweep["recommended_partitions"], color=line.get_color(), linestyle="--", linewidth=0.8,
                       label=f"{topic}: smallest count with hottest <= {sweep['target_share']:.0%}")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xlabel("partition count")
    ax.set_ylabel("skew (hottest / mean)")
    ax.set_title("Skew vs partition count")
    ax.legend(fontsize=8)
    return _png(fig)


def chart_members(summary: Mapping[str, Any]) -> str:
    consumers = summary["consumers"]
    fig, ax = plt.subplots(figsize=(9, 3.8))
    strategies = list(consumers)
    members = sorted({m for c in consumers.values() for m in c["members"]})
    width = 0.8 / max(1, len(members))
    for i, member in enumerate(members):
        values = [consumers[s]["members"].get(member, {"bytes": 0})["bytes"] / MIB for s in strategies]
        ax.bar([x + i * width for x in range(len(strategies))], values, width, label=member)
    # consumer-protocol names ("consumer:uniform") are long: slant the labels so they never overlap
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(strategies))], strategies, rotation=20, ha="right")
    ax.set_ylabel("MiB")
    ax.set_title("Bytes per consumer, by strategy")
    ax.legend(fontsize=7, ncol=min(6, max(1, len(members))), loc="upper center", bbox_to_anchor=(0.5, -0.3))
    return _png(fig)


def chart_brokers(summary: Mapping[str, Any]) -> str:
    brokers = summary["brokers"]["brokers"]
    fig, ax = plt.subplots(figsize=(9, 3.2))
    ids = list(brokers)
    ax.bar([i - 0.2 for i in range(len(ids))], [brokers[b]["leader_bytes"] / MIB for b in ids], 0.4, label="leader")
    ax.bar([i + 0.2 for i in range(len(ids))], [brokers[b]["replica_bytes"] / MIB for b in ids], 0.4, label="all replicas")
    ax.set_xticks(range(len(ids)), [f"{b} ({brokers[b]['rack'] or '-'})" for b in ids])
    ax.set_ylabel("MiB")
    ax.set_title("Bytes per broker")
    ax.legend(fontsize=8)
    return _png(fig)


def chart_producers(summary: Mapping[str, Any]) -> str:
    """Bytes per partition under each producer client, side by side."""
    producers = summary["producers"]
    names = [row["producer"] for row in producers["agreement"]]
    slots = sorted({(r["topic"], r["partition"]) for r in producers["load"]})
    index = {slot: i for i, slot in enumerate(slots)}
    fig, ax = plt.subplots(figsize=(9, 3.6))
    width = 0.8 / max(1, len(names))
    for k, name in enumerate(names):
        values = [0.0] * len(slots)
        for r in producers["load"]:
            if r["producer"] == name:
                values[index[(r["topic"], r["partition"])]] = r["bytes"] / MIB
        ax.bar([i + k * width for i in range(len(slots))], values, width, label=name)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(slots))], [f"{t}-{p}" for t, p in slots], rotation=90,
                  fontsize=7)
    ax.set_ylabel("MiB")
    ax.set_title("Bytes per partition, by producer client")
    ax.legend(fontsize=7, ncol=min(4, max(1, len(names))), loc="upper center", bbox_to_anchor=(0.5, -0.35))
    return _png(fig)


def _producer_section(summary: Mapping[str, Any]) -> str:
    producers = summary["producers"]
    rows = [[r["producer"], f"{r['records_moved_share']:.1%}", f"{r['keys_moved_share']:.1%}",
             f"{r['bytes_moved_share']:.1%}", r["max_over_mean_bytes"], r["null_keys"]]
            for r in producers["agreement"]]
    return (f"<h2>Producer agreement</h2><p>Share of records, keys and bytes on another partition than under "
            f"{html.escape(producers['reference'])}:</p>"
            + _table(["producer", "records moved", "keys moved", "bytes moved", "max/mean bytes", "null keys"], rows)
            + f'<img alt="Bytes per partition by producer" src="data:image/png;base64,{chart_producers(summary)}">')


CHARTS = (("Partition load", chart_partition_load), ("Partition-count sweep", chart_sweep),
          ("Consumer load", chart_members), ("Broker load", chart_brokers))


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def render(summary: Mapping[str, Any]) -> str:
    rows = summary["rows"]
    sections = [f"<h1>kassign pipeline</h1><p>input: {_describe(summary['input'])}; partitioning engine: "
                f"{html.escape(str(summary['engine']))}; null keys: {_describe(summary['null_key_model'])}</p>",
                "<h2>Rows</h2>" + _table(["stage", "rows"], [["input", rows["input"]]]
                                         + [[f"set aside: {k}", v] for k, v in rows["set_aside"].items()]
                                         + [[k, v] for k, v in rows["per_stage"].items()])
                + f"<p>every record accounted for: <b>{rows['accounted']}</b></p>"]
    sweep_rows = [[t, s["recommended_partitions"] or "none", s["target_share"]] for t, s in summary["sweep"].items()]
    sections.append("<h2>Recommendation</h2>" + _table(["topic", "smallest count under target", "target share"], sweep_rows))
    spread_rows = [[s, c["bytes_spread"]["max_over_mean"], c["bytes_spread"]["max_minus_min"]]
                   for s, c in summary["consumers"].items()]
    sections.append("<h2>Consumer spread</h2>" + _table(["strategy", "max/mean bytes", "max-min bytes"], spread_rows))
    move_rows = [[s, e, v["partitions"], v["bytes"]] for s, ev in summary["rebalance"].items() for e, v in ev.items()]
    sections.append("<h2>Rebalance cost</h2>" + _table(["strategy", "event", "partitions moved", "bytes moved"], move_rows))
    for title, chart in CHARTS:
        sections.append(f'<h2>{title}</h2><img alt="{title}" src="data:image/png;base64,{chart(summary)}">')
    if "producers" in summary:
        sections.append(_producer_section(summary))
    style = ("body{font-family:sans-serif;max-width:1000px;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>kassign pipeline</title><style>{style}</style>"
            f"</head><body>{''.join(sections)}</body></html>")


def write_report(summary: Mapping[str, Any], path: Path) -> None:
    Path(path).write_text(render(summary), encoding="utf-8")


def _describe(value: object) -> str:
    """``{'kind': 'sample', 'rows': 3}`` as ``kind sample, rows 3``, escaped for HTML."""
    if isinstance(value, dict):
        return html.escape(", ".join(f"{k.replace('_', ' ')} {v}" for k, v in value.items()))
    return html.escape(str(value))
