"""report.html: the pipeline summary as one self-contained, interactive page (``kassign.core.page``).

Top to bottom: a verdict (partition count to use, the strategy that balances this data best and what it
moves on a rebalance, the biggest skew), warnings, then tables and charts. Tables are the terminal's
(``kassign.spark.tables``: human units, thousands separators, percentages) and sort by a click on a header;
every chart has one sentence on how to read it, a tooltip with the exact figures of what the pointer is
on, zoom (drag) and pan, its legend beside the plot and an axis in the unit that fits its data.

Charts scale with the data: up to ``BARS`` partitions get a bar each; more get the ``TOP`` hottest as
bars, one bar for the mean of the rest, and a heat map of every partition. Up to ``MEMBER_BARS`` members
get a bar each per strategy; a bigger group is a strategy x member heat map. Long tables show their
first ``TABLE_ROWS`` rows and sum up the rest in a footer row; summary.json keeps every raw figure.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kassign.core.releases import DEFAULT_KAFKA_VERSION
from kassign.core.page import COLORS, HEAT, NOT_THERE, byte_unit, chart, exact_bytes, hover, many, natural
from kassign.core.page import page, table, text
from kassign.spark import tables
from kassign.spark.forensics import preferred_name
from kassign.core.units import count, human_bytes, percent

BARS = 100  # at most this many partitions get a bar each
TOP = 40  # past that, the hottest this many do, and one bar stands for the rest
HEAT_WIDTH = 50  # partitions per row of the heat map
MEMBER_BARS = 16  # at most this many members get a bar each per strategy; past that, a heat map
TABLE_ROWS = 50  # rows a long per-partition table shows before summing up the rest

HINT = ("Hover a bar, a point or a cell for its exact figures; drag to zoom, double-click to zoom back out; "
        "click a column's header to sort the table by it.")


# -- partitions ----------------------------------------------------------------------------------------------------

def _partitions(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every partition of every topic, in order; one no record reached has zeros (the summary leaves it out)."""
    rows = {(r["topic"], r["partition"]): r for r in summary["partition_load"]}
    counts = dict(summary.get("partitions") or {})
    for topic, p in rows:
        counts[topic] = max(counts.get(topic, 0), p + 1)
    every = []
    for topic, n in counts.items():
        for p in range(n):
            every.append(rows.get((topic, p)) or {"topic": topic, "partition": p, "bytes": 0, "records": 0,
                                                  "distinct_keys": 0, "hot_keys": []})
    return every


def _topic_bytes(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for r in rows:
        totals[r["topic"]] = totals.get(r["topic"], 0) + (r["bytes"] or 0)
    return totals


def _partition_hover(r: Mapping[str, Any], totals: Mapping[str, int]) -> str:
    total = totals.get(r["topic"]) or 0
    lines = [text(f"{r['topic']}-{r['partition']}"), f"bytes {exact_bytes(r['bytes'] or 0)}",
             f"records {count(r['records'] or 0)}",
             f"share of topic {percent((r['bytes'] or 0) / total) if total else percent(0)}",
             f"keys {count(r.get('distinct_keys') or 0)}"]
    if "java_bytes" in r:
        lines.append(f"under Java's partitioner: {exact_bytes(r['java_bytes'] or 0)}, "
                     f"{count(r.get('java_records') or 0)} records")
    keys = r.get("hot_keys") or []
    if keys:
        lines.append("hottest keys: " + ", ".join(f"{text(tables._short(h['key'], 32))} ({percent(h['share'])})"
                                                  for h in keys))
    return hover(*lines)


def chart_partition_load(summary: Mapping[str, Any]) -> tuple[str, str]:
    """Bytes per partition: a bar each, or the ``TOP`` hottest and one bar for the mean of the rest."""
    every = _partitions(summary)
    totals = _topic_bytes(every)
    live = any("java_bytes" in r for r in every)
    big = len(every) > BARS
    shown = sorted(every, key=lambda r: (-(r["bytes"] or 0), r["topic"], r["partition"]))[:TOP] if big else every
    others = sorted(every, key=lambda r: (-(r["bytes"] or 0), r["topic"], r["partition"]))[TOP:] if big else []
    unit, size = byte_unit([r["bytes"] or 0 for r in every] + [r.get("java_bytes") or 0 for r in every])
    labels = [f"{r['topic']}-{r['partition']}" for r in shown]
    texts = [_partition_hover(r, totals) for r in shown]
    values = [(r["bytes"] or 0) / size for r in shown]
    if others:
        rest = [r["bytes"] or 0 for r in others]
        label = f"the other {len(others):,}"
        labels.append(label)
        values.append(sum(rest) / len(rest) / size)
        texts.append(hover(f"the other {len(others):,} partitions",
                           f"bytes {exact_bytes(sum(rest))} in all, {human_bytes(sum(rest) / len(rest))} each on "
                           "average (the bar)", f"from {human_bytes(min(rest))} to {human_bytes(max(rest))}",
                           f"records {count(sum(r['records'] or 0 for r in others))} in all",
                           "every partition is in the heat map below"))
    data: list[dict[str, Any]] = [{
        "type": "bar", "x": labels, "y": values, "name": "bytes (where they are)" if live else "bytes",
        "hovertext": texts, "hoverinfo": "text", "marker": {"color": ["#4c72b0"] * len(shown)
                                                             + (["#9aa9c4"] if others else [])}}]
    if live:
        data.append({"type": "bar", "x": labels[:len(shown)], "y": [(r.get("java_bytes") or 0) / size for r in shown],
                     "name": "bytes under Java's partitioner", "marker": {"color": "#a6bddb"},
                     "hovertext": texts[:len(shown)], "hoverinfo": "text"})
    mean = sum(r["bytes"] or 0 for r in every) / len(every) if every else 0
    if every:
        data.append({"type": "scatter", "mode": "lines", "x": labels, "y": [mean / size] * len(labels),
                     "name": f"mean: {human_bytes(mean)}", "hoverinfo": "skip",
                     "line": {"color": "#c44e52", "dash": "dash", "width": 1.5}})
    title = (f"Bytes per partition: the {TOP} hottest of {len(every):,}, and the mean of the other {len(others):,}"
             if others else "Bytes per partition")
    layout = {"title": {"text": title}, "barmode": "group", "yaxis": {"title": {"text": unit}},
              "xaxis": {"type": "category", "title": {"text": "partition (hottest first)" if others else "partition"},
                        "tickangle": -60 if len(labels) > 12 else 0, "automargin": True}}
    sentence = ("One bar per partition, its bytes; the dashed line is the mean. A bar far above the line is a hot "
                "partition: its leader broker and the consumer that owns it carry more than their share.")
    if others:
        sentence = (f"The {TOP} partitions with the most bytes, hottest first, and the mean of the other "
                    f"{len(others):,} (the pale bar); the dashed line is the mean of all {len(every):,}. A bar far "
                    "above the line is a hot partition: its leader broker and the consumer that owns it carry more "
                    "than their share.")
    if live:
        sentence += (" Beside each bar, paler: the bytes the same partition would hold if every keyed record were "
                     "where Kafka's Java producer puts it.")
    return chart("partition-load", {"data": data, "layout": layout}, sentence, height=420), title


def chart_partition_heatmap(summary: Mapping[str, Any]) -> str:
    """Every partition as a cell, ``HEAT_WIDTH`` to a row, darker for more bytes."""
    every = _partitions(summary)
    totals = _topic_bytes(every)
    unit, size = byte_unit([r["bytes"] or 0 for r in every])
    by_topic: dict[str, list[Mapping[str, Any]]] = {}
    for r in every:
        by_topic.setdefault(r["topic"], []).append(r)
    width = min(HEAT_WIDTH, max(len(v) for v in by_topic.values()))
    z: list[list[float | None]] = []
    hovers: list[list[str]] = []
    rows: list[str] = []
    for topic, parts in by_topic.items():
        for start in range(0, len(parts), width):
            chunk = parts[start:start + width]
            rows.append(f"{topic} {chunk[0]['partition']}-{chunk[-1]['partition']}")
            z.append([(r["bytes"] or 0) / size for r in chunk] + [None] * (width - len(chunk)))
            hovers.append([_partition_hover(r, totals) for r in chunk] + [""] * (width - len(chunk)))
    figure = {"data": [{"type": "heatmap", "z": z, "x": list(range(width)), "y": rows, "hovertext": hovers,
                        "hoverinfo": "text", "colorscale": HEAT, "xgap": 1, "ygap": 1,
                        "colorbar": {"title": {"text": unit}}}],
              "layout": {"title": {"text": f"Every partition ({len(every):,}), {width} to a row"},
                         "xaxis": {"title": {"text": "partition: the row's first + this"}, "dtick": 5},
                         "yaxis": {"autorange": "reversed", "type": "category"}, "margin": {"l": 140},
                         "plot_bgcolor": NOT_THERE}}
    return chart("partition-heatmap", figure,
                 f"Each cell is one partition; a row holds {width} of them, numbered from the row's label. The "
                 "darker the cell, the more bytes: a dark cell among pale ones is a hot partition. Hover a cell for "
                 "its bytes, records and hottest keys.", height=min(900, 140 + 22 * len(rows)))


def _hot_table(summary: Mapping[str, Any]) -> str:
    rows = summary["partition_load"]
    big = len(_partitions(summary)) > BARS
    built = tables.hot_partitions_table(summary, limit=TABLE_ROWS if big else None)
    title, columns, body, caption = built
    rest = None
    if big and len(rows) > TABLE_ROWS:
        others = sorted(rows, key=lambda r: (-(r["bytes"] or 0), r["topic"], r["partition"]))[TABLE_ROWS:]
        total = sum(r["bytes"] or 0 for r in rows)
        rest_bytes = sum(r["bytes"] or 0 for r in others)
        one_topic = len({r["topic"] for r in rows}) == 1
        rest = [f"the other {len(others):,} partitions", "", count(sum(r["records"] or 0 for r in others)),
                human_bytes(rest_bytes), percent(rest_bytes / total) if one_topic and total else "-",
                count(sum(r.get("distinct_keys") or 0 for r in others)), "-"]
        empty = len(_partitions(summary)) - len(rows)
        caption = (f"the {TABLE_ROWS} partitions with the most bytes, and the rest summed up"
                   + (f"; {empty:,} partitions got no record" if empty else "")
                   + "; every partition is in summary.json, the partition_load table and the heat map's tooltips")
    return table(columns, body, caption, title=title, rest=rest)


def _lag_table(summary: Mapping[str, Any]) -> str:
    built = tables.lag_table(summary, limit=None)
    if built is None:
        return ""
    title, columns, body, caption = built
    rest = None
    if len(body) > BARS:
        lags = sorted((v["lag"][p] for v in summary["lag"].values() for p in range(len(v["lag"]))), reverse=True)
        others = lags[TABLE_ROWS:]
        body = body[:TABLE_ROWS]
        title = f"{title} (top {TABLE_ROWS} of {len(lags):,})"
        rest = [f"the other {len(others):,} partitions", "", "", "", count(sum(others))]
    return table(columns, body, caption, title=title, rest=rest)


# -- the sweep -----------------------------------------------------------------------------------------------------

def chart_sweep(summary: Mapping[str, Any]) -> str:
    data: list[dict[str, Any]] = []
    top = max((c["skew"] for s in summary["sweep"].values() for c in s["curve"]), default=1.0)
    for i, (topic, sweep) in enumerate(summary["sweep"].items()):
        curve = sweep["curve"]
        texts = [hover(text(f"{topic}: {c['partitions']:,} partitions"),
                       f"skew {tables.ratio(c['skew'])} (hottest / mean)",
                       f"hottest partition {percent(c['hottest_share'])} of the bytes"
                       + (f" ({exact_bytes(c['hottest_bytes'])})" if "hottest_bytes" in c else ""),
                       f"keys that would move {percent(c.get('moved_keys_share', 0.0))}",
                       f"keyed bytes that would move {percent(c.get('moved_bytes_share', 0.0))}")
                 for c in curve]
        color = _color(i)
        data.append({"type": "scatter", "mode": "lines+markers", "x": [c["partitions"] for c in curve],
                     "y": [c["skew"] for c in curve], "name": f"{topic}: skew", "hovertext": texts,
                     "hoverinfo": "text", "line": {"color": color}, "marker": {"size": 5}})
        if any(c.get("moved_keys_share") for c in curve):
            data.append({"type": "scatter", "mode": "lines", "x": [c["partitions"] for c in curve],
                         "y": [100 * c.get("moved_keys_share", 0.0) for c in curve], "yaxis": "y2",
                         "name": f"{topic}: keys that would move (%)", "hoverinfo": "skip",
                         "line": {"color": color, "dash": "dot", "width": 1}, "opacity": 0.6})
        n = sweep["recommended_partitions"]
        if n:
            data.append({"type": "scatter", "mode": "lines", "x": [n, n], "y": [0, max(top, 1.0) * 1.05],
                         "name": f"{topic}: recommended ({n:,})", "hoverinfo": "skip",
                         "line": {"color": color, "dash": "dash", "width": 1}})
    counts = [c["partitions"] for s in summary["sweep"].values() for c in s["curve"]]
    if counts:
        data.append({"type": "scatter", "mode": "lines", "x": [min(counts), max(counts)], "y": [1.0, 1.0],
                     "name": "even (1.0)", "hoverinfo": "skip", "line": {"color": "grey", "width": 1}})
    layout = {"title": {"text": "Skew vs partition count"},
              "xaxis": {"title": {"text": "partition count"}},
              "yaxis": {"title": {"text": "skew (hottest / mean)"}, "rangemode": "tozero"},
              "yaxis2": {"title": {"text": "keys moved off today's partition (%)"}, "overlaying": "y",
                         "side": "right", "range": [0, 100], "dtick": 25, "ticksuffix": "%", "showgrid": False},
              "margin": {"r": 70}, "legend": {"x": 1.08, "xanchor": "left"}}
    return chart("sweep", {"data": data, "layout": layout},
                 "For each partition count (x), how many times the mean the hottest partition would carry (y); 1.0 "
                 "is perfectly even. The dashed vertical line is the recommended count. A curve that stays high "
                 "whatever the count means one key dominates: more partitions do not help. The dotted line (right "
                 "axis): the share of keys whose records would land on another partition than today if the topic "
                 "had that count: their order across the change is lost.")


def _color(i: int) -> str:
    return COLORS[i % len(COLORS)]


# -- consumers -----------------------------------------------------------------------------------------------------

def _per_member(name: str, title: str, strategies: Sequence[str], members: Sequence[str],
                value: Callable[[str, str], float | None], tip: Callable[[str, str], str], axis: str,
                sentence_bars: str, sentence_heat: str) -> str:
    """Per strategy and member: grouped bars for a small group, a strategy x member heat map for a big one."""
    if not members or not strategies:
        return ""
    # names are the users' (members, assignor modules): Plotly reads a few tags in labels, so they are escaped
    if len(members) <= MEMBER_BARS:
        data = [{"type": "bar", "x": [text(s) for s in strategies], "y": [value(s, m) for s in strategies],
                 "name": text(m),
                 "hovertext": [tip(s, m) for s in strategies], "hoverinfo": "text"} for m in members]
        layout = {"title": {"text": title}, "barmode": "group", "yaxis": {"title": {"text": axis}},
                  "xaxis": {"type": "category"}, "showlegend": len(members) > 1}
        return chart(name, {"data": data, "layout": layout}, sentence_bars, height=400)
    z = [[value(s, m) for m in members] for s in strategies]
    data = [{"type": "heatmap", "z": z, "x": [text(m) for m in members], "y": [text(s) for s in strategies],
             "colorscale": HEAT,
             "hovertext": [[tip(s, m) for m in members] for s in strategies], "hoverinfo": "text", "ygap": 2,
             "colorbar": {"title": {"text": axis}}}]
    layout = {"title": {"text": f"{title}: {len(members):,} members"}, "plot_bgcolor": NOT_THERE,
              "xaxis": {"type": "category", "title": {"text": "member"}, "nticks": 25, "tickangle": -45},
              "yaxis": {"type": "category", "autorange": "reversed"}, "margin": {"l": 150, "b": 110}}
    return chart(name, {"data": data, "layout": layout}, sentence_heat, height=220 + 34 * len(strategies))


def chart_members(summary: Mapping[str, Any]) -> str:
    consumers = summary["consumers"]
    strategies = list(consumers)
    members = sorted({m for c in consumers.values() for m in c["members"]}, key=natural)
    unit, size = byte_unit([v["bytes"] for c in consumers.values() for v in c["members"].values()])
    means = {s: (sum(v["bytes"] for v in c["members"].values()) / len(c["members"]) if c["members"] else 0)
             for s, c in consumers.items()}

    def value(s: str, m: str) -> float | None:
        v = consumers[s]["members"].get(m)
        return None if v is None else v["bytes"] / size

    def tip(s: str, m: str) -> str:
        v = consumers[s]["members"].get(m)
        if v is None:
            return hover(text(f"{s} · {m}"), "not in this strategy's group")
        return hover(text(f"{s} · {m}"), f"bytes {exact_bytes(v['bytes'])}",
                     f"{many(v.get('partitions', 0), 'partition')}, {many(v.get('records', 0), 'record')}",
                     f"{tables.ratio(v['bytes'] / means[s]) if means[s] else '-'} the strategy's mean")

    return _per_member(
        "consumer-load", "Bytes per consumer, by strategy", strategies, members, value, tip, unit,
        "For each assignment strategy, one bar per consumer: the bytes it would read. Bars of equal height mean a "
        "balanced group; the strategy with the most even bars suits this data best.",
        "One row per assignment strategy, one column per consumer: the darker the cell, the more bytes that "
        "consumer would read (grey: not in that strategy's group). An even row is a balanced group; a row with dark "
        "and pale cells is not. Hover a cell for its exact figures; drag to zoom into a range of members.")


def chart_lag(summary: Mapping[str, Any]) -> str:
    consumers = {s: c for s, c in summary["consumers"].items() if "lag" in c}
    strategies = list(consumers)
    members = sorted({m for c in consumers.values() for m in c["lag"]["members"]}, key=natural)

    def value(s: str, m: str) -> float | None:
        return consumers[s]["lag"]["members"].get(m)

    def tip(s: str, m: str) -> str:
        lag = consumers[s]["lag"]["members"].get(m)
        if lag is None:
            return hover(text(f"{s} · {m}"), "not in this strategy's group")
        return hover(text(f"{s} · {m}"), f"{count(lag)} records behind",
                     many(len(consumers[s].get('assignment', {}).get(m, [])), "partition"))

    return _per_member(
        "lag", "Lag per consumer, by strategy", strategies, members, value, tip, "records behind",
        "For each assignment strategy, one bar per consumer: the records it would be behind, summing the lag of "
        "the partitions that strategy gives it. The strategy whose tallest bar is lowest catches up first.",
        "One row per assignment strategy, one column per consumer: the darker the cell, the more records that "
        "consumer would be behind (the lag of the partitions that strategy gives it, summed).")


# -- brokers, producers, forensics ---------------------------------------------------------------------------------

def chart_brokers(summary: Mapping[str, Any]) -> str:
    brokers = summary["brokers"]["brokers"]
    ids = list(brokers)
    unit, size = byte_unit([brokers[b]["replica_bytes"] for b in ids])
    labels = [f"{b} ({brokers[b]['rack'] or '-'})" for b in ids]
    lead = [hover(text(f"broker {label}: as leader"), f"bytes {exact_bytes(brokers[b]['leader_bytes'])}",
                  f"{many(brokers[b]['leader_partitions'], 'partition')} led"
                  + (f", {count(brokers[b]['leader_records'])} records" if "leader_records" in brokers[b] else ""))
            for b, label in zip(ids, labels)]
    replicas = [hover(text(f"broker {label}: all replicas"), f"bytes {exact_bytes(brokers[b]['replica_bytes'])}",
                      many(brokers[b]['replicas'], "replica")) for b, label in zip(ids, labels)]
    data = [{"type": "bar", "x": labels, "y": [brokers[b]["leader_bytes"] / size for b in ids], "name": "as leader",
             "hovertext": lead, "hoverinfo": "text"},
            {"type": "bar", "x": labels, "y": [brokers[b]["replica_bytes"] / size for b in ids],
             "name": "all replicas", "hovertext": replicas, "hoverinfo": "text"}]
    layout = {"title": {"text": "Bytes per broker (rack)"}, "barmode": "group", "yaxis": {"title": {"text": unit}},
              "xaxis": {"type": "category"}}
    return chart("broker-load", {"data": data, "layout": layout},
                 "Per broker, the bytes of the partitions it leads (what producers write to and consumers read from "
                 "it) and of all replicas it stores (its disk and replication traffic).")


def chart_producers(summary: Mapping[str, Any]) -> str:
    """Bytes per partition under each producer client, side by side; for many partitions, those where clients
    differ most and the mean of the rest."""
    producers = summary["producers"]
    names = [row["producer"] for row in producers["agreement"]]
    load: dict[tuple[str, int], dict[str, Mapping[str, Any]]] = {}
    for r in producers["load"]:
        load.setdefault((r["topic"], r["partition"]), {})[r["producer"]] = r
    slots = sorted(load)
    unit, size = byte_unit([r["bytes"] for r in producers["load"]])

    def bytes_of(slot: tuple[str, int], name: str) -> int:
        return (load[slot].get(name) or {}).get("bytes", 0)

    others: list[tuple[str, int]] = []
    if len(slots) * len(names) > BARS:
        spread = sorted(slots, key=lambda s: (-(max(bytes_of(s, n) for n in names) - min(bytes_of(s, n)
                                                                                         for n in names)), s))
        slots, others = sorted(spread[:TOP]), spread[TOP:]
    labels = [f"{t}-{p}" for t, p in slots] + ([f"the other {len(others):,}"] if others else [])
    data = []
    for name in names:
        values = [bytes_of(s, name) / size for s in slots]
        tips = [hover(text(f"{t}-{p} under {name}"), f"bytes {exact_bytes(bytes_of((t, p), name))}",
                      f"records {count((load[(t, p)].get(name) or {}).get('records', 0))}") for t, p in slots]
        if others:
            rest = [bytes_of(s, name) for s in others]
            values.append(sum(rest) / len(rest) / size)
            tips.append(hover(text(f"the other {len(others):,} partitions under {name}"),
                              f"bytes {exact_bytes(sum(rest))} in all, {human_bytes(sum(rest) / len(rest))} each on "
                              "average (the bar)"))
        data.append({"type": "bar", "x": labels, "y": values, "name": name, "hovertext": tips, "hoverinfo": "text"})
    title = ("Bytes per partition, by producer client" if not others else
             f"Bytes per partition, by producer client: the {TOP} partitions where they differ most, "
             f"and the mean of the other {len(others):,}")
    layout = {"title": {"text": title}, "barmode": "group", "yaxis": {"title": {"text": unit}},
              "xaxis": {"type": "category", "tickangle": -60 if len(labels) > 12 else 0, "automargin": True}}
    return chart("producers", {"data": data, "layout": layout},
                 "Per partition, the bytes each producer client would send there; where the bars of one partition "
                 "differ, clients disagree on where a key goes (per-key order and co-partitioned joins break).")


def chart_forensics(summary: Mapping[str, Any]) -> str:
    """Per topic, one bar split by who explains its keyed records: the best partitioner, each further one, none."""
    forensics = summary["forensics"]
    data: list[dict[str, Any]] = []
    colors: dict[str, str] = {}
    for topic, f in forensics.items():
        keyed = f["keyed_records"] or 1
        for i, family in enumerate(f.get("explanation", [])):
            names = family["partitioners"]
            name = preferred_name(names) + (f" (+{len(names) - 1} alike)" if len(names) > 1 else "")
            records = family["records"] if i == 0 else family["gain"]
            lines = [text(f"{topic} · {name}")]
            if i == 0:
                lines.append(f"{count(records)} keyed records ({percent(records / keyed)}) are where it puts them")
            else:
                lines.append(f"{count(records)} more keyed records ({percent(records / keyed)}) than the ones before "
                             "explain")
                lines.append(f"{count(family['records'])} ({percent(family['records'] / keyed)}) where it puts them "
                             "in all")
            lines.append(many(family["keys"], "key"))
            lines.append("partitioners: " + text(", ".join(names)))
            data.append({"type": "bar", "orientation": "h", "y": [topic], "x": [100 * records / keyed],
                         "name": name, "legendgroup": name, "showlegend": name not in colors,
                         "marker": {"color": colors.setdefault(name, _color(len(colors)))},
                         "hovertext": [hover(*lines)], "hoverinfo": "text"})
        if f["unexplained_records"]:
            data.append({"type": "bar", "orientation": "h", "y": [topic],
                         "x": [100 * f["unexplained_records"] / keyed], "name": "unexplained",
                         "legendgroup": "unexplained", "showlegend": "unexplained" not in colors,
                         "marker": {"color": colors.setdefault("unexplained", "#c44e52")},
                         "hovertext": [hover(text(f"{topic} · unexplained"),
                                             f"{count(f['unexplained_records'])} keyed records "
                                             f"({percent(f['unexplained_records'] / keyed)}) where no known "
                                             "partitioner puts them", many(f["unexplained_keys"], "key"))],
                         "hoverinfo": "text"})
    layout = {"title": {"text": "Which producer partitioner put the keyed records where they are"},
              "barmode": "stack", "xaxis": {"range": [0, 100], "title": {"text": "% of keyed records"},
                                            "ticksuffix": "%"},
              "yaxis": {"type": "category", "autorange": "reversed", "automargin": True},
              "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom", "traceorder": "normal"},
              "margin": {"t": 90}}
    return chart("forensics", {"data": data, "layout": layout},
                 "Per topic, the share of keyed records each producer partitioner explains (the best first, then "
                 "each further one for the records the ones before do not explain); red: where no known partitioner "
                 "puts them. More than one colour means producers disagree, and keys they share are split.",
                 height=230 + 50 * len(forensics))


# -- the page ------------------------------------------------------------------------------------------------------

def _section(title: str, body: str) -> str:
    return f"<section><h2>{html.escape(title)}</h2>{body}</section>"


def _table(built: tables.Table | None) -> str:
    if built is None:
        return ""
    title, columns, rows, caption = built
    return table(columns, rows, caption, title=title)


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
    live = []
    if "source" in summary:
        live.append(_section("Source", _table(tables.source_table(summary))))
    if "forensics" in summary:
        live.append(_section("Which producer put the records there", chart_forensics(summary)
                             + _table(tables.forensics_table(summary))))
    load_chart, _ = chart_partition_load(summary)
    heat = chart_partition_heatmap(summary) if len(_partitions(summary)) > BARS else ""
    sections = [
        f"<h1>kassign pipeline</h1><p class=meta>input: {_describe(summary['input'])}; partitioning engine: "
        f"{html.escape(str(summary['engine']))}; null keys: {_describe(summary['null_key_model'])}; Kafka release "
        f"the strategies answer as: {html.escape(str(summary.get('kafka_version', DEFAULT_KAFKA_VERSION)))}</p>"
        f"<p class=hint>{html.escape(HINT)}</p>",
        _verdict(summary),
        _warnings(summary),
        *live,
        _section("Rows", _table(tables.rows_table(summary)) + _table(tables.set_aside_table(summary))),
        _section("Partition load", load_chart + heat + _hot_table(summary)),
        _section("Partition-count sweep", _table(tables.sweep_table(summary)) + chart_sweep(summary)),
        _section("Consumer load", _table(tables.consumer_table(summary)) + chart_members(summary)
                 + _table(tables.rebalance_table(summary))),
        _section("Broker load", _table(tables.broker_table(summary)) + _table(tables.rack_table(summary))
                 + chart_brokers(summary)),
    ]
    if summary.get("keyless_racks"):
        sections.append(_section("Keyless records and racks", _table(tables.keyless_racks_table(summary))))
    group = summary.get("group") or {}
    if "group_check" in summary or group.get("described") is False:
        sentence = (tables.group_check_sentence(group, summary["group_check"]) if "group_check" in summary else
                    f"group {group.get('id')}: kassign cannot describe it ({group.get('why')}); the consumer stages "
                    "ran on assumed members.")
        release = (f"Kafka release: {summary.get('kafka_version')} ({summary.get('kafka_version_from')}: "
                   f"{summary.get('kafka_version_why')})")
        sections.append(_section("Group check", f"<p>{html.escape(sentence)}</p><p class=meta>{html.escape(release)}"
                                 "</p>" + _table(tables.group_check_table(summary))))
    if "lag" in summary:
        sections.append(_section("Consumer lag", _table(tables.group_table(summary))
                                 + _table(tables.lag_by_strategy_table(summary)) + chart_lag(summary)
                                 + _lag_table(summary)))
    if "producers" in summary:
        sections.append(_section("Producer agreement", _table(tables.producers_table(summary))
                                 + chart_producers(summary)))
    return page("kassign pipeline", "".join(sections))


def write_report(summary: Mapping[str, Any], path: Path) -> None:
    Path(path).write_text(render(summary), encoding="utf-8")


def _human(key: str, value: Any) -> str:
    """One figure of the header in the units a reader expects (``rows 3,000,000``, ``null share 5.0%``)."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        if "share" in key:
            return percent(value)
        if key.endswith(("bytes", "size")):
            return human_bytes(value)
        if key in ("seed", "port", "partition"):
            return str(value)
        return count(value)
    return str(value)


def _describe(value: object) -> str:
    """``{'kind': 'sample', 'rows': 3000000}`` as ``kind sample, rows 3,000,000``, escaped for HTML."""
    if isinstance(value, dict):
        return html.escape(", ".join(f"{k.replace('_', ' ')} {_human(k, v)}" for k, v in value.items()))
    return html.escape(str(value))
