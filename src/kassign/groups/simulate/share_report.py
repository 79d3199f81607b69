"""Pictures of a share group's timeline: PNG charts and one self-contained interactive ``report.html``.

Per event (once it has settled): a heat map of partitions x events, the members fetching each partition
(a share group may have several on one); a heat map of members x events, what each member fetches
(bytes per second when the timeline gives ``loads``, a shared partition's rate split evenly among its
members; partitions otherwise); bars of the partition-seconds nobody fetched, and of how long each event
took to settle (every member holding its new target). The summary in words, the totals and every event's
figures are tables beside the charts.
"""

from __future__ import annotations

import html
from pathlib import Path

from kassign.core.page import page, table
from kassign.core.units import Figure, count, human_bytes, human_seconds
from kassign.groups.simulate import event_charts as charts
from kassign.groups.simulate.share_metrics import METRIC_MEANINGS, ShareEventRecord, ShareRun


def _grid(records: list[ShareEventRecord], values) -> tuple[list[str], list[list[float | None]]]:
    """Rows in order of first appearance, and row x event values (None: the row is not there)."""
    rows = list(dict.fromkeys(key for r in records for key in values(r)))
    return rows, [[values(r).get(key) for r in records] for key in rows]


def _load_values(run: ShareRun):
    """What the fetch-load chart shows per member: MiB per second with loads, partitions without."""
    if run.has_loads:
        return lambda r: {m: v / 2**20 for m, v in r.bytes_per_member.items()}, "MiB per second fetched"
    return lambda r: r.partitions_per_member, "partitions fetched"


def _labels(run: ShareRun) -> list[str]:
    return [charts.event_label(r.at, r.description) for r in run.records]


def _settle(r: ShareEventRecord) -> float:
    return r.settle_seconds if r.settle_seconds is not None else 0.0


def rate_range(values: list[float]) -> Figure:
    """``1.0-2.0 MiB/s``: the lowest and highest of some rates, in the highest one's unit."""
    if not values:
        return Figure("-")
    low, high = min(values), max(values)
    top = human_bytes(high)
    if low == high:
        return Figure(f"{top}/s")
    number, unit = top.split(" ")
    scale = high / float(number.replace(",", "")) if float(number.replace(",", "")) else 1.0
    return Figure(f"{low / scale:,.1f}-{top}/s" if unit != "B" else f"{low:,.0f}-{top}/s")


def event_rows(run: ShareRun, terse: bool = False) -> tuple[list[str], list[list]]:
    """Every event as the page shows it; ``terse``: the terminal's narrower table."""
    rows = []
    for r in run.records:
        parts = list(r.partitions_per_member.values())
        row = [Figure(human_seconds(r.at)), r.description]
        if not terse:
            row += [count(r.targets), count(r.heartbeats)]
        row += [Figure("-") if r.settle_seconds is None else Figure(human_seconds(r.settle_seconds)), count(r.members),
                count(r.max_sharing), Figure(f"{min(parts)}-{max(parts)}" if parts else "-")]
        if run.has_loads:
            row.append(rate_range(list(r.bytes_per_member.values())))
        row += [count(len(r.idle_members)), count(r.stopped)]
        if not terse:
            row += [count(r.started), count(r.lost)]
        row.append(count(round(r.unfetched_partition_seconds, 2)))
        rows.append(row)
    columns = ["at", "event"] + ([] if terse else ["targets", "heartbeats"])
    columns += ["settled\nafter", "mem-\nbers", "most\nsharing", "parti-\ntions\neach"]
    if run.has_loads:
        columns.append("load each")
    columns += ["idle", "stop-\nped"] + ([] if terse else ["started", "lost"]) + ["unfetched\np·s"]
    return columns, rows


def _charts(run: ShareRun) -> list[str]:
    labels = _labels(run)
    partitions, holders = _grid(run.records, lambda r: r.holders)
    values, what = _load_values(run)
    members, loads = _grid(run.records, values)
    unfetched = [r.unfetched_partition_seconds for r in run.records]
    settle = [_settle(r) for r in run.records]
    return [
        charts.heatmap_chart(
            "members-per-partition", partitions, labels, holders, "Members fetching each partition", "members",
            "One row per subscribed partition, one column per event: how many members fetch the partition once the "
            "event has settled (a share group may hand one partition's records to several members; 0: nobody "
            "fetches it). Grey: the partition does not exist then."),
        charts.heatmap_chart(
            "fetch-load", members, labels, loads, f"Fetch load per member ({what})", what,
            "One row per member, one column per event: what the member fetches once the event has settled"
            + (" (a partition's MiB per second, split evenly among the members fetching it)" if run.has_loads
               else "") + ". Grey: not in the group.", integers=not run.has_loads),
        charts.series_chart(
            "unfetched", labels, "unfetched", unfetched, lambda v: f"{count(round(v, 2))} partition-seconds",
            "Unfetched partition-seconds per event", "partition-seconds",
            "For each event: for each subscribed partition, the seconds no running member fetched it, summed (a "
            "crashed member's partitions until its session times out; new partitions until their share state is "
            "initialised and a member's heartbeat brings them)."),
        charts.series_chart(
            "settle", labels, "settled after", settle, human_seconds, "Time until every member had its new target",
            "seconds", "For each event: the seconds until every member had received its new target on its own "
            "heartbeat (0: not settled before the next event, or nothing to do)."),
    ]


def render(run: ShareRun, title: str, caption: str, sentences: list[str]) -> str:
    t = run.totals()
    columns = ["strategy", "targets", "heartbeats", "fetches stopped", "fetches started", "lost", "revoked",
               "unfetched p·s", "longest settle", "max members per partition"]
    longest = "-" if t["max_settle_seconds"] is None else Figure(human_seconds(t["max_settle_seconds"]))
    totals = [[run.strategy, count(t["targets"]), count(t["heartbeats"]), count(t["stopped"]), count(t["started"]),
               count(t["lost"]), count(0), count(round(t["unfetched_partition_seconds"], 2)), longest,
               count(t["max_members_per_partition"])]]
    legend = "".join(f"<dt>{html.escape(k.replace('_', ' '))}</dt><dd>{html.escape(v)}</dd>"
                     for k, v in METRIC_MEANINGS.items())
    verdict = "".join(f"<p>{html.escape(line)}</p>" for line in sentences)
    body = (f"<h1>{html.escape(title)}</h1><p class=meta>{html.escape(caption)}</p>"
            f"<div class=verdict>{verdict}</div>" + table(columns, totals, title="totals")
            + f"<dl>{legend}</dl>" + "".join(_charts(run))
            + "<h2>every event</h2>" + table(*event_rows(run)))
    return page(title, body)


def write_share_report(run: ShareRun, out_dir: str | Path, title: str, caption: str,
                       sentences: list[str]) -> list[Path]:
    """Write the PNGs and ``report.html`` into ``out_dir``; return the paths written."""
    out = charts.output_dir(out_dir)
    labels = _labels(run)
    partitions, holders = _grid(run.records, lambda r: r.holders)
    values, what = _load_values(run)
    members, loads = _grid(run.records, values)
    written = [
        charts.heatmap_png(partitions, labels, holders, "members fetching each partition after each event", "members",
                           out / "members-per-partition.png", "partition"),
        charts.heatmap_png(members, labels, loads, f"{what} per member after each event (blank: not in the group)",
                           what, out / "fetch-load.png", "member"),
        charts.bars_png(labels, {"share:simple": [r.unfetched_partition_seconds for r in run.records]},
                        "Unfetched partition-seconds per event", "partition-seconds", out / "unfetched.png"),
    ]
    written.append(charts.write_page(out / "report.html", render(run, title, caption, sentences)))
    return written


def caption_text(run: ShareRun, events: int) -> str:
    s = run.settings
    pause = s["assignment_interval"]
    return (f"Kafka {run.kafka_version}, share group (KIP-932), assignor simple; {events:,} events; heartbeat every "
            f"{human_seconds(s['heartbeat_interval'])}, session timeout {human_seconds(s['session_timeout'])}, "
            + (f"targets at most every {human_seconds(pause)}" if pause else "a target on every change")
            + (f", share state initialised in {human_seconds(s['initialize_seconds'])}"
               if s["initialize_seconds"] else ""))

