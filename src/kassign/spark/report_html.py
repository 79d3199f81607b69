"""report.html: the pipeline summary as one self-contained page (charts are embedded base64 PNGs).

Top to bottom: a verdict (partition count to use, the strategy that balances this data best, the
biggest skew), warnings, then tables and charts. Tables are the terminal's (``kassign.spark.tables``:
human units, thousands separators, percentages); every chart has one sentence on how to read it,
its legend beside the plot (never over the bars) and an axis in the unit that fits its data.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from kassign.cli.common import html_table  # noqa: E402
from kassign.spark import tables  # noqa: E402

MIB = 1024 * 1024
_UNITS = (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024), ("B", 1))


def byte_unit(values: Sequence[float]) -> tuple[str, float]:
    """The binary unit that fits the largest value (at least 1 of it), and its size in bytes."""
    top = max((abs(v) for v in values), default=0)
    for name, size in _UNITS:
        if top >= size:
            return name, size
    return "B", 1


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _legend_beside(ax: Any, **extra: Any) -> None:
    """The legend right of the plot area, so it never hides a bar or a line."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8, frameon=False, **extra)


def chart_partition_load(summary: Mapping[str, Any]) -> str:
    rows = summary["partition_load"]
    unit, size = byte_unit([r["bytes"] for r in rows])
    fig, ax = plt.subplots(figsize=(9, 3.2))
    labels = [f"{r['topic']}-{r['partition']}" for r in rows]
    ax.bar(range(len(rows)), [r["bytes"] / size for r in rows], color="#4c72b0", label="bytes")
    if rows:
        mean = sum(r["bytes"] for r in rows) / len(rows) / size
        ax.axhline(mean, color="#c44e52", linewidth=1, linestyle="--", label="mean")
    step = max(1, len(rows) // 60)  # at most ~60 tick labels, so they stay readable
    ax.set_xticks(list(range(0, len(rows), step)), labels[::step], rotation=90, fontsize=7)
    ax.set_ylabel(unit)
    ax.set_title("Bytes per partition")
    _legend_beside(ax)
    return _png(fig)


def chart_sweep(summary: Mapping[str, Any]) -> str:
    fig, ax = plt.subplots(figsize=(9, 3.2))
    for topic, sweep in summary["sweep"].items():
        curve = sweep["curve"]
        line, = ax.plot([c["partitions"] for c in curve], [c["skew"] for c in curve], marker=".", label=topic)
        if sweep["recommended_partitions"]:
            ax.axvline(sweep["recommended_partitions"], color=line.get_color(), linestyle="--", linewidth=0.8,
                       label=f"{topic}: recommended ({sweep['recommended_partitions']})")
    ax.axhline(1.0, color="grey", linewidth=0.8, label="even (1.0)")
    ax.set_xlabel("partition count")
    ax.set_ylabel("skew (hottest / mean)")
    ax.set_title("Skew vs partition count")
    _legend_beside(ax)
    return _png(fig)


def chart_members(summary: Mapping[str, Any]) -> str:
    consumers = summary["consumers"]
    strategies = list(consumers)
    members = sorted({m for c in consumers.values() for m in c["members"]})
    unit, size = byte_unit([v["bytes"] for c in consumers.values() for v in c["members"].values()])
    fig, ax = plt.subplots(figsize=(9, 3.8))
    width = 0.8 / max(1, len(members))
    for i, member in enumerate(members):
        values = [consumers[s]["members"].get(member, {"bytes": 0})["bytes"] / size for s in strategies]
        ax.bar([x + i * width for x in range(len(strategies))], values, width, label=member)
    # consumer-protocol names ("consumer:uniform") are long: slant the labels so they never overlap
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(strategies))], strategies, rotation=20, ha="right")
    ax.set_ylabel(unit)
    ax.set_title("Bytes per consumer, by strategy")
    if len(members) <= 24:
        _legend_beside(ax, ncol=1 if len(members) <= 12 else 2)
    return _png(fig)


def chart_brokers(summary: Mapping[str, Any]) -> str:
    brokers = summary["brokers"]["brokers"]
    ids = list(brokers)
    unit, size = byte_unit([brokers[b]["replica_bytes"] for b in ids])
    fig, ax = plt.subplots(figsize=(9, 3.2))
    ax.bar([i - 0.2 for i in range(len(ids))], [brokers[b]["leader_bytes"] / size for b in ids], 0.4, label="as leader")
    ax.bar([i + 0.2 for i in range(len(ids))], [brokers[b]["replica_bytes"] / size for b in ids], 0.4,
           label="all replicas")
    ax.set_xticks(range(len(ids)), [f"{b} ({brokers[b]['rack'] or '-'})" for b in ids])
    ax.set_ylabel(unit)
    ax.set_title("Bytes per broker (rack)")
    _legend_beside(ax)
    return _png(fig)


def chart_producers(summary: Mapping[str, Any]) -> str:
    """Bytes per partition under each producer client, side by side."""
    producers = summary["producers"]
    names = [row["producer"] for row in producers["agreement"]]
    slots = sorted({(r["topic"], r["partition"]) for r in producers["load"]})
    index = {slot: i for i, slot in enumerate(slots)}
    unit, size = byte_unit([r["bytes"] for r in producers["load"]])
    fig, ax = plt.subplots(figsize=(9, 3.6))
    width = 0.8 / max(1, len(names))
    for k, name in enumerate(names):
        values = [0.0] * len(slots)
        for r in producers["load"]:
            if r["producer"] == name:
                values[index[(r["topic"], r["partition"])]] = r["bytes"] / size
        ax.bar([i + k * width for i in range(len(slots))], values, width, label=name)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(slots))], [f"{t}-{p}" for t, p in slots], rotation=90,
                  fontsize=7)
    ax.set_ylabel(unit)
    ax.set_title("Bytes per partition, by producer client")
    _legend_beside(ax)
    return _png(fig)


# (section title, chart, the one sentence that says how to read it)
CHARTS = (
    ("Partition load", chart_partition_load,
     "One bar per partition, its bytes; the dashed line is the mean. A bar far above the line is a hot "
     "partition: its leader broker and the consumer that owns it carry more than their share."),
    ("Partition-count sweep", chart_sweep,
     "For each partition count (x), how many times the mean the hottest partition would carry (y); 1.0 is "
     "perfectly even. The dashed vertical line is the recommended count. A curve that stays high whatever the "
     "count means one key dominates: more partitions do not help."),
    ("Consumer load", chart_members,
     "For each assignment strategy, one bar per consumer: the bytes it would read. Bars of equal height mean a "
     "balanced group; the strategy with the most even bars suits this data best."),
    ("Broker load", chart_brokers,
     "Per broker, the bytes of the partitions it leads (what producers write to and consumers read from it) and "
     "of all replicas it stores (its disk and replication traffic)."),
)


def _section(title: str, body: str) -> str:
    return f"<section><h2>{html.escape(title)}</h2>{body}</section>"


def _table(table: tables.Table | None) -> str:
    if table is None:
        return ""
    title, columns, rows, caption = table
    return f"<h3>{html.escape(title)}</h3>" + html_table(columns, rows, caption)


def _chart(title: str, chart: Any, sentence: str, summary: Mapping[str, Any]) -> str:
    return (f'<figure><img alt="{html.escape(title)}" src="data:image/png;base64,{chart(summary)}">'
            f"<figcaption>{html.escape(sentence)}</figcaption></figure>")


def _verdict(summary: Mapping[str, Any]) -> str:
    lines = tables.verdict_lines(summary)
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return f'<section class="verdict"><h2>Verdict</h2><ul>{items}</ul></section>'


def _warnings(summary: Mapping[str, Any]) -> str:
    warnings = summary.get("warnings") or []
    if not warnings:
        return ""
    items = "".join(f"<li>{html.escape(w)}</li>" for w in warnings)
    return f'<section class="warnings"><h2>Warnings</h2><ul>{items}</ul></section>'


def render(summary: Mapping[str, Any]) -> str:
    charts = {title: (chart, sentence) for title, chart, sentence in CHARTS}
    sections = [
        f"<h1>kassign pipeline</h1><p class=meta>input: {_describe(summary['input'])}; partitioning engine: "
        f"{html.escape(str(summary['engine']))}; null keys: {_describe(summary['null_key_model'])}</p>",
        _verdict(summary),
        _warnings(summary),
        _section("Rows", _table(tables.rows_table(summary)) + _table(tables.set_aside_table(summary))),
        _section("Partition load", _chart("Partition load", *charts["Partition load"], summary)
                 + _table(tables.hot_partitions_table(summary, limit=None))),
        _section("Partition-count sweep", _table(tables.sweep_table(summary))
                 + _chart("Partition-count sweep", *charts["Partition-count sweep"], summary)),
        _section("Consumer load", _table(tables.consumer_table(summary))
                 + _chart("Consumer load", *charts["Consumer load"], summary)
                 + _table(tables.rebalance_table(summary))),
        _section("Broker load", _table(tables.broker_table(summary)) + _table(tables.rack_table(summary))
                 + _chart("Broker load", *charts["Broker load"], summary)),
    ]
    if "producers" in summary:
        sections.append(_section("Producer agreement", _table(tables.producers_table(summary)) + _chart(
            "Bytes per partition by producer", chart_producers,
            "Per partition, the bytes each producer client would send there; where the bars of one partition "
            "differ, clients disagree on where a key goes (per-key order and co-partitioned joins break).",
            summary)))
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
             "table{border-collapse:collapse;margin:.5em 0 1em}caption{caption-side:bottom;text-align:left;"
             "font-size:.85em;color:#555;padding-top:.3em}td,th{border:1px solid #ccc;padding:2px 8px;"
             "text-align:left;vertical-align:top}td.num{text-align:right;font-variant-numeric:tabular-nums;"
             "white-space:nowrap}th{background:#f3f3f3}img{max-width:100%}figure{margin:1em 0}"
             "figcaption{font-size:.9em;color:#444;max-width:60em}.verdict{background:#eef5ee;border-left:4px solid "
             "#4a8a4a;padding:.2em 1em}.warnings{background:#fff4e0;border-left:4px solid #d08a00;padding:.2em 1em}"
             ".meta{color:#555}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>kassign pipeline</title><style>{style}</style>"
            f"</head><body>{''.join(sections)}</body></html>")


def write_report(summary: Mapping[str, Any], path: Path) -> None:
    Path(path).write_text(render(summary), encoding="utf-8")


def _describe(value: object) -> str:
    """``{'kind': 'sample', 'rows': 3}`` as ``kind sample, rows 3``, escaped for HTML."""
    if isinstance(value, dict):
        return html.escape(", ".join(f"{k.replace('_', ' ')} {v}" for k, v in value.items()))
    return html.escape(str(value))
