"""Pictures of a Kafka Streams timeline: PNG charts and one self-contained interactive HTML page.

Per event, one bar per strategy: the task-seconds without a running active task, and the state
bytes restored (what an event set off is charged to it, whenever it happened). Per strategy, a
timeline per stateful task: its outages (red, no running active task: from the moment the active
stops until a new one has restored and caught up), its active replica (green when running, orange
while it restores) and its standbys (blue) and warm-ups (purple). Hover a bar for the instance and
the times. Past 40 stateful tasks the timeline shows the 40 with the longest outages.

``report.html`` is built with :mod:`kassign.core.page` (Plotly embedded, no network needed); the
summary in words, the totals and every event's figures are tables beside the charts.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
import numpy as np  # noqa: E402

from kassign.core.errors import KassignError  # noqa: E402
from kassign.core.page import chart, hover, page, table, text  # noqa: E402
from kassign.core.units import Figure, count, human_bytes, human_seconds  # noqa: E402
from kassign.groups.simulate.streams_metrics import METRIC_MEANINGS, StreamsRun, strategy_label  # noqa: E402

MAX_TASK_ROWS = 40
COLOURS = {"outage": "#c44e52", "active": "#55a868", "restoring": "#dd8452", "standby": "#4c72b0",
           "warm-up": "#8172b3"}
# lanes within a task's row (y offsets in row units): outages thin on top, the active, the replicas
_LANES = {"outage": (-0.45, 0.1), "active": (-0.33, 0.38), "restoring": (-0.33, 0.38), "standby": (0.08, 0.32),
          "warm-up": (0.08, 0.32)}
_MAX_WIDTH_INCHES = 14.0


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _time_unit(end: float) -> tuple[str, float]:
    if end > 3 * 3600:
        return "h", 3600.0
    if end > 600:
        return "min", 60.0
    return "s", 1.0


def shown_tasks(run: StreamsRun) -> list[int]:
    """The stateful tasks the timeline shows: all of them up to 40, else the 40 longest without an active."""
    stateful = [t for t, flag in enumerate(run.stateful) if flag]
    if len(stateful) <= MAX_TASK_ROWS:
        return stateful
    dark: dict[int, float] = {}
    for outage in run.outages:
        dark[outage.task] = dark.get(outage.task, 0.0) + outage.end - outage.start
    return sorted(sorted(stateful, key=lambda t: -dark.get(t, 0.0))[:MAX_TASK_ROWS])


def _bars(run: StreamsRun, rows: dict[int, int]) -> dict[str, list[tuple[int, float, float, str]]]:
    """Per state: (row, start, end, instance) for the bars of the shown tasks."""
    bars: dict[str, list[tuple[int, float, float, str]]] = {state: [] for state in COLOURS}
    for outage in run.outages:
        if outage.task in rows:
            bars["outage"].append((rows[outage.task], outage.start, outage.end, ""))
    for segment in run.segments:
        if segment.task in rows:
            bars[segment.state].append((rows[segment.task], segment.start, segment.end, segment.instance))
    return bars


# -- PNG ------------------------------------------------------------------------------------------

def _event_png(runs: Sequence[StreamsRun], metric: str, title: str, axis: str, path: Path, scale: float = 1.0) -> Path:
    events = [r for r in runs[0].records if r.index > 0]
    n = max(len(events), 1)
    width = 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(min(_MAX_WIDTH_INCHES, max(6.0, 0.45 * n * len(runs) + 2)), 4.2))
    x = np.arange(len(events))
    for i, run in enumerate(runs):
        values = [getattr(r, metric) / scale for r in run.records if r.index > 0]
        ax.bar(x + (i - (len(runs) - 1) / 2) * width, values, width, label=strategy_label(run.strategy))
    ax.set_title(title)
    ax.set_ylabel(axis)
    if len(events) <= 24:
        ax.set_xticks(x, [f"{human_seconds(r.at)} {r.description}" for r in events], rotation=35, ha="right",
                      fontsize=8)
    else:
        ax.set_xlabel("event number")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def timeline_png(run: StreamsRun, path: Path) -> Path:
    tasks = shown_tasks(run)
    rows = {t: i for i, t in enumerate(tasks)}
    unit, size = _time_unit(run.end)
    fig, ax = plt.subplots(figsize=(_MAX_WIDTH_INCHES * 0.8, max(2.5, 0.32 * len(tasks) + 1.6)))
    for state, bars in _bars(run, rows).items():
        offset, width = _LANES[state]
        for row, start, end, _ in bars:
            ax.broken_barh([(start / size, (end - start) / size)], (row + offset, width), facecolors=COLOURS[state])
    ax.set_yticks(range(len(tasks)), [run.task_names[t] for t in tasks], fontsize=8)
    ax.set_ylim(len(tasks) - 0.5, -0.6)
    ax.set_xlim(0, max(run.end, 1.0) / size)
    ax.set_xlabel(f"time ({unit})")
    ax.set_title(f"{strategy_label(run.strategy)}: every stateful task over time", fontsize=10)
    handles = [Patch(color=colour, label="no running active" if state == "outage" else state)
               for state, colour in COLOURS.items()]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


# -- HTML -----------------------------------------------------------------------------------------

def _event_chart(runs: Sequence[StreamsRun], metric: str, name: str, title: str, axis: str, sentence: str,
                 bytes_: bool = False) -> str:
    events = [r for r in runs[0].records if r.index > 0]
    data = []
    for run in runs:
        records = [r for r in run.records if r.index > 0]
        values = [getattr(r, metric) for r in records]
        label = strategy_label(run.strategy)
        data.append({"type": "bar", "x": list(range(1, len(records) + 1)), "y": values, "name": text(label),
                     "hoverinfo": "text",
                     "hovertext": [hover(text(label), text(f"event {i}: {human_seconds(r.at)} {r.description}"),
                                         f"{human_bytes(r.restored_bytes)} restored",
                                         f"{count(r.unavailable_tasks)} stateful tasks without an active, "
                                         f"the longest {human_seconds(r.unavailable_seconds)}",
                                         f"{human_seconds(r.unavailable_task_seconds)} of task unavailability in all",
                                         f"{count(r.rebalances)} rebalances, {count(r.moved)} tasks moved")
                                   for i, r in enumerate(records, 1)]})
    xaxis: dict = {"title": {"text": "event"}}
    if len(events) <= 24:
        xaxis.update({"tickvals": list(range(1, len(events) + 1)), "tickangle": -35, "automargin": True,
                      "ticktext": [text(f"{human_seconds(r.at)} {r.description}"[:32]) for r in events]})
    yaxis = {"title": {"text": axis}}
    if bytes_:
        yaxis["tickformat"] = ".3s"
        yaxis["ticksuffix"] = "B"
    layout = {"title": {"text": title}, "barmode": "group", "xaxis": xaxis, "yaxis": yaxis}
    return chart(name, {"data": data, "layout": layout}, sentence)


def timeline_chart(run: StreamsRun) -> str:
    tasks = shown_tasks(run)
    rows = {t: i for i, t in enumerate(tasks)}
    unit, size = _time_unit(run.end)
    data = []
    for state, bars in _bars(run, rows).items():
        offset, width = _LANES[state]
        data.append({
            "type": "bar", "orientation": "h", "name": state, "marker": {"color": COLOURS[state]},
            "y": [row for row, *_ in bars], "base": [start / size for _, start, _, _ in bars],
            "x": [(end - start) / size for _, start, end, _ in bars], "offset": offset, "width": width,
            "hoverinfo": "text",
            "hovertext": [hover(text(run.task_names[tasks[row]]),
                                (f"{state} on {text(instance)}" if instance else "no running active task"),
                                f"from {human_seconds(start)} to {human_seconds(end)} ({human_seconds(end - start)})")
                          for row, start, end, instance in bars],
        })
    layout = {"title": {"text": text(f"{strategy_label(run.strategy)}: every stateful task over time")
                        + (f" (the {len(tasks)} longest without an active)" if len(tasks) < sum(run.stateful)
                           else "")},
              "barmode": "overlay",
              "xaxis": {"title": {"text": f"time ({unit})"}, "range": [0, max(run.end, 1.0) / size]},
              "yaxis": {"tickvals": list(range(len(tasks))), "ticktext": [run.task_names[t] for t in tasks],
                        "autorange": "reversed", "automargin": True}}
    return chart(f"tasks-{_safe(run.strategy)}", {"data": data, "layout": layout},
                 "One row per stateful task. Top, red: the task had no running active task (its active stopped "
                 "and the new one had not restored and caught up yet). Middle: its active task, green while it "
                 "runs, orange while it restores. Bottom: its standbys (blue) and warm-up replicas (purple). "
                 "Hover a bar for the instance and the times; drag to zoom.",
                 height=min(1100, max(300, 150 + 26 * len(tasks))))


def totals_rows(runs: Sequence[StreamsRun], terse: bool = False) -> tuple[list[str], list[list]]:
    """Each strategy's totals; ``terse``: the terminal's narrower table (the page and JSON have all). Where
    the timeline gives partition racks, a last column: cross-rack active tasks, the mean over time."""
    racks = any(run.racks_modelled for run in runs)
    rows = []
    for run in runs:
        t = run.totals()
        extra = [Figure(f"{t['cross_rack_tasks_mean']:,.1f}")] if racks else []
        dark = [count(t["unavailable_tasks"]), human_seconds(t["unavailable_seconds"]),
                human_seconds(t["unavailable_task_seconds"])]
        if terse:
            rows.append([run.strategy, count(t["rebalances"]), count(t["moved"]), count(t["warmups"]),
                         human_bytes(t["restored_bytes"]), *dark, human_seconds(t["unsettled_seconds"]), *extra])
        else:
            rows.append([strategy_label(run.strategy), count(t["rebalances"]), count(t["probing_rebalances"]),
                         count(t["followup_rebalances"]), count(t["moved"]), count(t["warmups"]),
                         human_bytes(t["restored_bytes"]), *dark, human_seconds(t["unsettled_seconds"]), *extra])
    if terse:
        return ["strategy", "rebal-\nances", "moved", "warm-\nups", "restored", "tasks\nunavail.",
                "longest\nunavail.", "unavail.\nin all", "unsettled", *(["cross-\nrack"] if racks else [])], rows
    return ["strategy", "rebalances", "probing", "follow-ups", "moved", "warm-ups", "restored", "tasks unavailable",
            "longest", "task unavailability", "unsettled",
            *(["cross-rack tasks (mean)"] if racks else [])], rows


def event_rows(run: StreamsRun, terse: bool = False) -> tuple[list[str], list[list]]:
    """Every event of one run as the terminal's ``--events`` (``terse``) and the page show it (with the
    cross-rack active tasks after each event's last assignment where the timeline gives partition racks)."""
    rows = []
    for r in run.records:
        extra = ([count(r.cross_rack_tasks) if r.cross_rack_tasks is not None else Figure("-")]
                 if run.racks_modelled else [])
        settle = "-" if r.settle_seconds is None else Figure(human_seconds(r.settle_seconds))
        event = r.description + (" (cycles)" if r.cycling else "")
        dark = [count(r.unavailable_tasks), human_seconds(r.unavailable_seconds),
                human_seconds(r.unavailable_task_seconds)]
        if terse:
            rebalances = Figure(f"{r.rebalances:,}" + (f" ({r.probing:,}, {r.followups:,})" if r.rebalances else ""))
            rows.append([Figure(human_seconds(r.at)), event, rebalances, count(r.moved),
                         human_bytes(r.restored_bytes), *dark[:2], settle, *extra])
        else:
            rows.append([Figure(human_seconds(r.at)), event, count(r.rebalances), count(r.probing),
                         count(r.followups), count(r.moved), count(r.warmups), human_bytes(r.restored_bytes), *dark,
                         settle, *extra])
    racks = ["cross-\nrack"] if run.racks_modelled else []
    if terse:
        return ["at", "event", "rebalances\n(probing,\nfollow-up)", "moved", "restored", "tasks\nunavail.",
                "longest\nunavail.", "settled\nafter", *racks], rows
    return ["at", "event", "rebalances", "probing", "follow-ups", "moved", "warm-ups", "restored",
            "tasks unavailable", "longest", "task unavailability", "settled after",
            *(["cross-rack tasks"] if racks else [])], rows


def render(runs: Sequence[StreamsRun], title: str, caption: str, sentences: Sequence[str]) -> str:
    columns, rows = totals_rows(runs)
    legend = "".join(f"<dt>{html.escape(k.replace('_', ' '))}</dt><dd>{html.escape(v)}</dd>"
                     for k, v in METRIC_MEANINGS.items())
    verdict = "".join(f"<p>{html.escape(line)}</p>" for line in sentences)
    charts = [
        _event_chart(runs, "unavailable_task_seconds", "unavailability", "Task unavailability per event",
                     "task-seconds without a running active",
                     "For each event, one bar per strategy: the seconds each stateful task had no running active "
                     "task, added up over the tasks (outages the event started, however long they lasted)."),
        _event_chart(runs, "restored_bytes", "restored", "State restored per event", "bytes",
                     "For each event, one bar per strategy: the changelog bytes read into state stores because of "
                     "it, by restoring active tasks and by new standbys and warm-ups until they caught up.",
                     bytes_=True),
        *(timeline_chart(run) for run in runs),
    ]
    events = "".join(f"<h2>{html.escape(strategy_label(run.strategy))}: every event</h2>" + table(*event_rows(run))
                     for run in runs)
    body = (f"<h1>{html.escape(title)}</h1><p class=meta>{html.escape(caption)}</p>"
            f"<div class=verdict>{verdict}</div>"
            + table(columns, rows, title="totals per strategy") + f"<dl>{legend}</dl>" + "".join(charts) + events)
    return page(title, body)


def write_streams_report(runs: Sequence[StreamsRun], out_dir: str | Path, title: str, caption: str,
                         sentences: Sequence[str]) -> list[Path]:
    """Write the PNGs and ``report.html`` into ``out_dir``; return the paths written."""
    if not runs:
        raise KassignError("nothing to plot: no strategy was simulated")
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise KassignError(f"cannot create plot directory {str(out)!r}: {err.strerror or err}") from None
    written = [
        _event_png(runs, "unavailable_task_seconds", "Task unavailability per event", "task-seconds",
                   out / "unavailability.png"),
        _event_png(runs, "restored_bytes", "State restored per event", "MiB", out / "restored.png", scale=2**20),
    ]
    written += [timeline_png(run, out / f"tasks-{_safe(run.strategy)}.png") for run in runs]
    report = out / "report.html"
    try:
        report.write_text(render(runs, title, caption, sentences), encoding="utf-8")
    except OSError as err:
        raise KassignError(f"cannot write {str(report)!r}: {err.strerror or err}") from None
    return written + [report]
