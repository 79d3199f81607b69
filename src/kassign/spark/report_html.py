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
from kassign.spark.forensics import preferred_name  # noqa: E402

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
    live = bool(rows) and "java_bytes" in rows[0]
    if live:  # measured beside where Kafka's Java producer would have put the same records
        ax.bar([i - 0.2 for i in range(len(rows))], [r["bytes"] / size for r in rows], 0.4, color="#4c72b0",
               label="bytes (where they are)")
        ax.bar([i + 0.2 for i in range(len(rows))], [r["java_bytes"] / size for r in rows], 0.4, color="#a6bddb",
               label="bytes under Java's partitioner")
    else:
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
    moves = ax.twinx()  # what changing to each count does to per-key order
    for topic, sweep in summary["sweep"].items():
        curve = sweep["curve"]
        if any(c.get("moved_keys_share") for c in curve):
            moves.plot([c["partitions"] for c in curve], [100 * c.get("moved_keys_share", 0.0) for c in curve],
                       color="grey", linewidth=0.8, linestyle=":", label=f"{topic}: keys that would move (%)")
    moves.set_ylim(0, 100)
    moves.set_ylabel("keys moved off today's partition (%)")
    lines, labels = ax.get_legend_handles_labels()
    more, more_labels = moves.get_legend_handles_labels()
    ax.legend(lines + more, labels + more_labels, loc="upper left", bbox_to_anchor=(1.08, 1.0), borderaxespad=0.0,
              fontsize=8, frameon=False)
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


def chart_forensics(summary: Mapping[str, Any]) -> str:
    """Per topic, one bar split by who explains its keyed records: the best partitioner, each further one, none."""
    forensics = summary["forensics"]
    topics = list(forensics)
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.55 * len(topics)))
    colors = ["#4c72b0", "#dd8452", "#55a868", "#8172b3", "#937860"]
    labelled: set[str] = set()
    for y, topic in enumerate(topics):
        f = forensics[topic]
        keyed = f["keyed_records"] or 1
        left = 0.0
        for i, family in enumerate(f.get("explanation", [])):
            share = (family["records"] if i == 0 else family["gain"]) / keyed * 100
            name = preferred_name(family["partitioners"]) + (f" (+{len(family['partitioners']) - 1} alike)"
                                                             if len(family["partitioners"]) > 1 else "")
            label = name if name not in labelled else None
            labelled.add(name)
            ax.barh(y, share, left=left, color=colors[i % len(colors)], label=label)
            left += share
        if f["unexplained_records"]:
            ax.barh(y, f["unexplained_records"] / keyed * 100, left=left, color="#c44e52",
                    label=None if "unexplained" in labelled else "unexplained")
            labelled.add("unexplained")
    ax.set_yticks(range(len(topics)), topics)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of keyed records")
    ax.set_title("Which producer partitioner put the keyed records where they are")
    _legend_beside(ax)
    return _png(fig)


def chart_lag(summary: Mapping[str, Any]) -> str:
    """Per strategy, each member's lag (records behind), side by side."""
    consumers = {s: c for s, c in summary["consumers"].items() if "lag" in c}
    strategies = list(consumers)
    members = sorted({m for c in consumers.values() for m in c["lag"]["members"]})
    fig, ax = plt.subplots(figsize=(9, 3.8))
    width = 0.8 / max(1, len(members))
    for i, member in enumerate(members):
        values = [consumers[s]["lag"]["members"].get(member, 0) for s in strategies]
        ax.bar([x + i * width for x in range(len(strategies))], values, width, label=member)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(strategies))], strategies, rotation=20, ha="right")
    ax.set_ylabel("records behind")
    ax.set_title("Lag per consumer, by strategy")
    if len(members) <= 24:
        _legend_beside(ax, ncol=1 if len(members) <= 12 else 2)
    return _png(fig)


# (section title, chart, the one sentence that says how to read it)
CHARTS = (
    ("Partition load", chart_partition_load,
     "One bar per partition, its bytes; the dashed line is the mean. A bar far above the line is a hot "
     "partition: its leader broker and the consumer that owns it carry more than their share."),
    ("Partition-count sweep", chart_sweep,
     "For each partition count (x), how many times the mean the hottest partition would carry (y); 1.0 is "
     "perfectly even. The dashed vertical line is the recommended count. A curve that stays high whatever the "
     "count means one key dominates: more partitions do not help. The dotted line (right axis): the share of keys "
     "whose records would land on another partition than today if the topic had that count: their order across "
     "the change is lost."),
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
    live = []
    if "source" in summary:
        live.append(_section("Source", _table(tables.source_table(summary))))
    if "forensics" in summary:
        live.append(_section("Which producer put the records there", _chart(
            "Forensics", chart_forensics,
            "Per topic, the share of keyed records each producer partitioner explains (the best first, then each "
            "further one for the records the ones before do not explain); red: where no known partitioner puts "
            "them. More than one colour means producers disagree, and keys they share are split.", summary)
            + _table(tables.forensics_table(summary))))
    sections = [
        f"<h1>kassign pipeline</h1><p class=meta>input: {_describe(summary['input'])}; partitioning engine: "
        f"{html.escape(str(summary['engine']))}; null keys: {_describe(summary['null_key_model'])}</p>",
        _verdict(summary),
        _warnings(summary),
        *live,
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
    if "lag" in summary:
        sections.append(_section("Consumer lag", _table(tables.group_table(summary))
                                 + _table(tables.lag_by_strategy_table(summary)) + _chart(
            "Lag", chart_lag, "For each assignment strategy, one bar per consumer: the records it would be behind, "
            "summing the lag of the partitions that strategy gives it. The lowest tallest bar catches up first.",
            summary) + _table(tables.lag_table(summary, limit=None))))
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
