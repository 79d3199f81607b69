"""Pictures of a streams group's timeline (KIP-1071): PNG charts and one self-contained ``report.html``.

Per event: bars of the active tasks that moved to another instance, with those promoted from a standby and
those that lost their local state; bars of the task-seconds no member ran a task; a heat map of instances
x events, the active tasks each runs once the event has settled. Then the Kafka Streams report's timeline
of every stateful task (:func:`kassign.groups.simulate.streams_report.timeline_chart`): its pauses (red),
its active task (green running, orange restoring) and its standbys (blue). The summary in words, the
totals and every event's figures are tables beside the charts.
"""

from __future__ import annotations

import html
from pathlib import Path

from kassign.core.page import page, table
from kassign.core.units import Figure, count, human_bytes, human_seconds
from kassign.groups.simulate.event_charts import (
    bars_chart,
    bars_png,
    event_hover,
    event_label,
    heatmap_chart,
    heatmap_png,
    output_dir,
    safe_name,
    series_chart,
    write_page,
)
from kassign.groups.simulate.streams_group_metrics import METRIC_MEANINGS, StreamsGroupRecord, StreamsGroupRun
from kassign.groups.simulate.streams_report import timeline_chart, timeline_png

_MOVES = {"moved": "moved to another instance", "promoted": "promoted from a standby",
          "state_lost": "without local state"}


def _labels(run: StreamsGroupRun) -> list[str]:
    return [event_label(r.at, r.description) for r in run.records]


def _grid(run: StreamsGroupRun) -> tuple[list[str], list[list[int | None]]]:
    rows = list(dict.fromkeys(name for r in run.records for name in r.active_per_instance))
    return rows, [[r.active_per_instance.get(name) for r in run.records] for name in rows]


def _lost(r: StreamsGroupRecord) -> str:
    if not r.state_lost:
        return "-"
    names = ", ".join(r.lost_tasks[:4]) + (", ..." if len(r.lost_tasks) > 4 else "")
    return f"{names} ({human_bytes(r.lost_state_bytes)})" if r.lost_state_bytes else names


def event_rows(run: StreamsGroupRun, terse: bool = False) -> tuple[list[str], list[list]]:
    """Every event as the page shows it; ``terse``: the terminal's narrower table."""
    rows = []
    for r in run.records:
        settle = Figure("-") if r.settle_seconds is None else Figure(human_seconds(r.settle_seconds))
        row = [Figure(human_seconds(r.at)), r.description]
        if not terse:
            row += [count(r.targets), count(r.heartbeats)]
        row += [settle, count(r.moved), count(r.promoted), count(r.state_lost), _lost(r), count(r.revoked),
                Figure(human_seconds(r.paused_task_seconds)), Figure(human_seconds(r.longest_pause))]
        if not terse:
            row += [count(r.moved_within), count(r.from_disk), human_bytes(r.restore_bytes), count(r.missing_standbys)]
        rows.append(row)
    columns = ["at", "event"] + ([] if terse else ["targets", "heartbeats"])
    columns += ["settled\nafter", "moved", "pro-\nmoted", "state\nlost", "tasks without local state", "re-\nvoked",
                "paused\ntask·s", "longest\npause"]
    if not terse:
        columns += ["moved within an instance", "from disk", "restored", "standbys missing"]
    return columns, rows


def _charts(run: StreamsGroupRun) -> list[str]:
    labels = _labels(run)
    tag = safe_name(run.strategy)
    moves = {label: [getattr(r, key) for r in run.records] for key, label in _MOVES.items()}
    paused = [r.paused_task_seconds for r in run.records]
    rows, grid = _grid(run)
    hovers = {label: [event_hover(label, i, name, f"{count(v)} tasks") for i, (name, v) in
                      enumerate(zip(labels, values), 1)] for label, values in moves.items()}
    return [
        bars_chart(f"moves-{tag}", labels, moves, hovers, "Active tasks moved per event", "tasks",
                   "For each event: active tasks that started on another instance, of them those promoted from a "
                   "standby (their state kept up to date there) and those whose new instance had no state for them "
                   "(they restore their whole changelog)."),
        series_chart(f"paused-{tag}", labels, "paused", paused, human_seconds,
                     "Task-seconds without a running active task", "task-seconds",
                     "For each event: for each task, the seconds no member ran it, summed (revoked and not yet "
                     "received, restoring, or on a crashed member until its session timed out)."),
        heatmap_chart(f"active-per-instance-{tag}", rows, labels, grid, "Active tasks per instance", "active tasks",
                      "One row per instance, one column per event: the active tasks its stream threads run once "
                      "the event has settled. Grey: the instance is not running."),
        timeline_chart(run),  # type: ignore[arg-type]
    ]


def totals_rows(runs: list[StreamsGroupRun]) -> tuple[list[str], list[list]]:
    columns = ["strategy", "targets", "moved", "pro-\nmoted", "state\nlost", "re-\nvoked", "restored",
               "paused\ntask·s", "longest\npause", "longest\nsettle"]
    rows = []
    for run in runs:
        t = run.totals()
        longest = Figure("-") if t["max_settle_seconds"] is None else Figure(human_seconds(t["max_settle_seconds"]))
        rows.append([run.strategy, count(t["targets"]), count(t["moved"]), count(t["promoted"]),
                     count(t["state_lost"]), count(t["revoked"]), human_bytes(t["restore_bytes"]),
                     Figure(human_seconds(t["paused_task_seconds"])), Figure(human_seconds(t["longest_pause"])),
                     longest])
    return columns, rows


def render(runs: list[StreamsGroupRun], title: str, caption: str, sentences: list[str]) -> str:
    legend = "".join(f"<dt>{html.escape(k.replace('_', ' '))}</dt><dd>{html.escape(v)}</dd>"
                     for k, v in METRIC_MEANINGS.items())
    verdict = "".join(f"<p>{html.escape(line)}</p>" for line in sentences)
    body = (f"<h1>{html.escape(title)}</h1><p class=meta>{html.escape(caption)}</p>"
            f"<div class=verdict>{verdict}</div>" + table(*totals_rows(runs), title="totals per strategy")
            + f"<dl>{legend}</dl>")
    for run in runs:
        body += (f"<h2>{html.escape(run.strategy)}</h2>" + "".join(_charts(run))
                 + table(*event_rows(run), title=f"{run.strategy}: every event"))
    return page(title, body)


def write_streams_group_report(runs: list[StreamsGroupRun], out_dir: str | Path, title: str, caption: str,
                               sentences: list[str]) -> list[Path]:
    """Write the PNGs (per strategy) and ``report.html`` into ``out_dir``; return the paths written."""
    out = output_dir(out_dir)
    written = []
    for run in runs:
        labels = _labels(run)
        rows, grid = _grid(run)
        tag = safe_name(run.strategy)
        written += [
            bars_png(labels, {label: [getattr(r, key) for r in run.records] for key, label in _MOVES.items()},
                     f"{run.strategy}: active tasks moved per event", "tasks", out / f"moves-{tag}.png"),
            bars_png(labels, {"paused": [r.paused_task_seconds for r in run.records]},
                     f"{run.strategy}: task-seconds without a running active task", "task-seconds",
                     out / f"paused-{tag}.png"),
            heatmap_png(rows, labels, grid, f"{run.strategy}: active tasks per instance after each event (blank: "
                        "not running)", "active tasks", out / f"active-per-instance-{tag}.png", "instance"),
            timeline_png(run, out / f"tasks-{tag}.png"),  # type: ignore[arg-type]
        ]
    written.append(write_page(out / "report.html", render(runs, title, caption, sentences)))
    return written


def caption_text(run: StreamsGroupRun, events: int, tasks: int, stateful: int, standbys: int,
                 unused: list[str]) -> str:
    """The settings in a line; ``standbys``: the timeline's (a strategy NAME:standbys=N plays another)."""
    s = run.settings
    pause = s["assignment_interval"]
    text = (f"Kafka {run.kafka_version}, streams group (KIP-1071), the broker's sticky assignor; {events:,} events, "
            f"{tasks:,} tasks ({stateful:,} stateful), {standbys} standby replica" + ("" if standbys == 1 else "s")
            + f" per stateful task; heartbeat every {human_seconds(s['heartbeat_interval'])}, session timeout "
            f"{human_seconds(s['session_timeout'])}, "
            + (f"targets at most every {human_seconds(pause)}" if pause else "a target on every change")
            + f", initial rebalance delay {human_seconds(s['initial_rebalance_delay'])}")
    if unused:
        text += f"; not read under the streams protocol: {', '.join(unused)}"
    return text
