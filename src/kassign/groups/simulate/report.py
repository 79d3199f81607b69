"""Pictures of a simulation: PNG charts, and one self-contained interactive HTML page.

PNG charts (matplotlib): partitions moved per event and unowned partition-seconds per event
(grouped bars, one colour per strategy, one group per scenario event: what a crash
or restart causes later, its session expiry or return, counts with it, so classic
and consumer-protocol runs line up), and per strategy the load of each member
over the timeline (a member x event heat map, with counts in the cells for small groups).

``report.html`` draws the same charts interactively (``kassign.core.page``: Plotly embedded in the
page, so it opens anywhere without network access): a tooltip gives the exact figures of what the
pointer is on (strategy, event, partitions; member, partitions, event), a drag zooms, a long timeline
gets a range slider to pan along; the tables sort by a click on a header and read like the terminal's
(thousands separators, ``-`` for heartbeats of classic-protocol runs).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from kassign.core.errors import KassignError  # noqa: E402
from kassign.core.page import chart, hover, many, page, table, text  # noqa: E402
from kassign.groups.simulate.event_charts import heatmap_chart  # noqa: E402
from kassign.groups.simulate.metrics import METRIC_MEANINGS, StrategyRun, protocol_in_force  # noqa: E402
from kassign.core.units import Figure, count  # noqa: E402

_LABEL_LIMIT = 30  # up to this many members and events the heat map shows counts and names
_MAX_WIDTH_INCHES = 14.0  # 1,540 px at 110 dpi: the report page's width, so the HTML never shrinks text
_MAX_LABELLED_EVENTS = 24  # more event names than this overlap at that width: number the events instead


def _event_labels(run: StrategyRun) -> list[str]:
    return [f"{r.at:g}s {r.description}" for r in run.records]


def _grouped_bars(runs: Sequence[StrategyRun], metric: str, title: str, ylabel: str, path: Path) -> Path:
    # one group of bars per scenario event, so runs line up even where one protocol has rows another
    # has not (a session expiry or a return is counted with the crash or restart that caused it)
    series = [run.per_scenario_event(metric) for run in runs]
    labels = [label for label, _ in series[0]]
    n_events = max(len(s) for s in series)
    width = 0.8 / len(runs)
    # as wide as the bars need, but no wider than a page shows at full size
    fig, ax = plt.subplots(figsize=(min(_MAX_WIDTH_INCHES, max(6.0, 0.45 * n_events * len(runs) + 2)), 4.2))
    x = np.arange(n_events)
    for i, (run, values_) in enumerate(zip(runs, series)):
        values = [v for _, v in values_] + [0] * (n_events - len(values_))
        ax.bar(x + (i - (len(runs) - 1) / 2) * width, values, width, label=run.strategy)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xticks(x)
    if len(labels) == n_events and n_events <= _MAX_LABELLED_EVENTS:
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    else:
        ax.set_xlabel("event number")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)  # beside the bars, never over them
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _load_chart(run: StrategyRun, path: Path) -> Path:
    """Member x event heat map of partitions owned; blank where the member is not in the group.

    Lines for each member overlap as soon as members hold equal shares, hiding most of
    them; a grid shows every member. Small grids carry the counts and names in the cells.
    """
    members = list(dict.fromkeys(m for rec in run.records for m in rec.loads))
    loads = np.full((len(members), len(run.records)), np.nan)
    for j, rec in enumerate(run.records):
        for i, m in enumerate(members):
            if m in rec.loads:
                loads[i, j] = rec.loads[m]
    small = len(members) <= _LABEL_LIMIT and len(run.records) <= _LABEL_LIMIT
    fig, ax = plt.subplots(figsize=(min(_MAX_WIDTH_INCHES, max(6.0, 0.55 * len(run.records) + 3)) if small else 9,
                                    max(3.0, 0.32 * len(members) + 1.8) if small else 5))
    image = ax.imshow(loads, aspect="auto", interpolation="nearest", cmap="viridis")
    fig.colorbar(image, ax=ax, label="partitions owned")
    if small:
        for (i, j), value in np.ndenumerate(loads):
            if not np.isnan(value):
                bright = value > np.nanmean(loads)
                ax.text(j, i, f"{value:g}", ha="center", va="center", fontsize=7, color="black" if bright else "white")
        ax.set_yticks(range(len(members)), members, fontsize=8)
        ax.set_xticks(range(len(run.records)), _event_labels(run), rotation=35, ha="right", fontsize=7)
    else:
        ax.set_xlabel("event number")
        ax.set_ylabel("member (order of first appearance)")
    ax.set_title(f"{run.strategy}: partitions per member after each event\n(blank: not in the group)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def write_plots(runs: Sequence[StrategyRun], out_dir: str | Path, title: str = "simulation",
                caption: str | None = None) -> list[Path]:
    """Write the PNGs and ``report.html`` into ``out_dir``; return the paths written. ``caption``: a line
    on the scenario (events, round and session timings) under the page's title."""
    if not runs:
        raise KassignError("nothing to plot: no strategy was simulated")
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise KassignError(f"cannot create plot directory {str(out)!r}: {err.strerror or err}") from None
    pngs = [
        _grouped_bars(runs, "moved", "Partitions moved per event", "partitions", out / "moves.png"),
        _grouped_bars(runs, "unowned_partition_seconds", "Unowned partition-seconds per event",
                      "partition-seconds", out / "unowned.png"),
    ]
    pngs += [_load_chart(run, out / f"load-{_safe(run.strategy)}.png") for run in runs]
    page = out / "report.html"
    try:
        page.write_text(render(runs, title, caption), encoding="utf-8")
    except OSError as err:
        raise KassignError(f"cannot write {str(page)!r}: {err.strerror or err}") from None
    return pngs + [page]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


# -- report.html -----------------------------------------------------------------------------------------------

_BAR_LABELS = 24  # up to this many events the bar charts name them under the axis; past that, numbers
_SLIDER = 40  # past this many events the bar charts get a range slider to pan along the timeline
_CELL_TEXT = 30  # up to this many members and events the heat map writes the count in each cell

HINT = ("Hover a bar or a cell for its exact figures; drag to zoom, double-click to zoom back out; click a "
        "column's header to sort the table by it.")


def heartbeats(run: StrategyRun, value: int) -> Figure:
    """Heartbeats as the terminal shows them: a count for the consumer protocol, ``-`` for classic runs
    (whose cost is rounds: they send no ConsumerGroupHeartbeat)."""
    return count(value) if run.group_protocol == "consumer" else Figure("-")


def _seconds(value: float) -> Figure:
    return count(round(value, 2))


def _metric(metric: str, value: float) -> str:
    if metric == "moved":
        return f"{many(value, 'partition')} moved"
    return f"{count(round(value, 2))} unowned partition-seconds"


def _event_bars(runs: Sequence[StrategyRun], metric: str, name: str, title: str, axis: str, sentence: str) -> str:
    """Grouped bars per scenario event (x: event number), one trace per strategy."""
    series = [run.per_scenario_event(metric) for run in runs]
    n_events = max(len(s) for s in series)
    labels = max(series, key=len)
    data = []
    for run, values in zip(runs, series):
        data.append({"type": "bar", "x": list(range(1, len(values) + 1)), "y": [v for _, v in values],
                     "name": text(run.strategy), "hoverinfo": "text",
                     "hovertext": [hover(text(run.strategy), text(f"event {i}: {label}"), _metric(metric, v))
                                   for i, (label, v) in enumerate(values, 1)]})
    xaxis: dict = {"title": {"text": "event"}, "range": [0.5, n_events + 0.5]}
    if n_events <= _BAR_LABELS:
        xaxis.update({"tickvals": list(range(1, n_events + 1)), "automargin": True, "tickangle": -35,
                      "ticktext": [text(_short(label, 28)) for label, _ in labels]})
    else:
        xaxis["title"] = {"text": "event number (hover a bar for the event)"}
    if n_events > _SLIDER:
        xaxis["rangeslider"] = {"visible": True, "thickness": 0.08}
        xaxis["range"] = [0.5, _SLIDER + 0.5]
    layout = {"title": {"text": title}, "barmode": "group", "xaxis": xaxis, "yaxis": {"title": {"text": axis}}}
    return chart(name, {"data": data, "layout": layout}, sentence, height=440 if n_events > _SLIDER else 400)


def _short(label: str, width: int) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def _load_heatmap(run: StrategyRun) -> str:
    """Member x event heat map of the partitions each member owns after each event; grey: not in the group."""
    members = list(dict.fromkeys(m for rec in run.records for m in rec.loads))
    z = [[rec.loads.get(m) for rec in run.records] for m in members]
    small = len(members) <= _CELL_TEXT and len(run.records) <= _CELL_TEXT
    title = f"{run.strategy}: partitions per member after each event" + (
        f" ({len(members):,} members)" if not small else "")
    return heatmap_chart(f"load-{_safe(run.strategy)}", members, _event_labels(run), z, title, "partitions owned",
                         "One row per member (in order of joining), one column per event: the darker the cell, the "
                         "more partitions the member owns after that event; grey: not in the group. An even column "
                         "is a balanced group. Hover a cell for its figures; drag to zoom into members or events.",
                         colorbar_title="partitions")


def render(runs: Sequence[StrategyRun], title: str, caption: str | None = None) -> str:
    keys = list(runs[0].totals())
    columns = ["strategy", "protocol", *(k.replace("_", " ") for k in keys)]
    rows = []
    for run in runs:
        totals = run.totals()
        row: list = [run.strategy, run.group_protocol]
        for k in keys:
            if k == "heartbeats":
                row.append(heartbeats(run, totals[k]))
            elif k.endswith("seconds"):
                row.append(_seconds(totals[k]))
            else:
                row.append(count(totals[k]))
        rows.append(row)
    legend = "".join(f"<dt>{html.escape(k.replace('_', ' '))}</dt><dd>{html.escape(METRIC_MEANINGS[k])}</dd>"
                     for k in keys if k in METRIC_MEANINGS)
    charts = [
        _event_bars(runs, "moved", "moves", "Partitions moved per event", "partitions",
                    "For each event of the scenario, one bar per strategy: the partitions that ended the event with "
                    "a different member (a crash's or restart's later session expiry or return counts with it)."),
        _event_bars(runs, "unowned_partition_seconds", "unowned", "Unowned partition-seconds per event",
                    "partition-seconds",
                    "For each event, one bar per strategy: for each partition, the seconds nobody consumed it, "
                    "summed: the pause users feel."),
        *(_load_heatmap(run) for run in runs),
    ]
    body = (f"<h1>{html.escape(title)}</h1>"
            + (f"<p class=meta>{html.escape(caption)}</p>" if caption else "")
            + f"<p class=hint>{html.escape(HINT)}</p>"
            + table(columns, rows, "heartbeats: '-' for the classic protocol, whose cost is its rounds",
                    title="totals per strategy")
            + f"<dl>{legend}</dl>" + "".join(charts) + "".join(_event_table(run) for run in runs))
    return page(title, body)


def _event_table(run: StrategyRun) -> str:
    """Every event of one run, as the terminal's ``--events`` shows it: the assignor in force, the costs, notes."""
    columns = ["at (s)", "event", "assignor in force", "rounds", "heartbeats", "moved", "revoked", "unowned p·s",
               "unsettled s", "spread", "note"]
    rows = [[Figure(f"{r.at:g}"), r.description, protocol_in_force(run, r), count(r.rounds),
             heartbeats(run, r.heartbeats), count(r.moved), count(r.revoked), _seconds(r.unowned_partition_seconds),
             _seconds(r.unsettled_seconds), count(r.spread), r.note] for r in run.records]
    classes = ["refused" if "refused" in r.note else None for r in run.records]
    return (f"<h2>{html.escape(run.strategy)}: every event</h2>"
            + table(columns, rows, row_classes=classes))
