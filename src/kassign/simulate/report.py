"""Pictures of a simulation: PNG charts and one self-contained HTML page.

Charts: partitions moved per event and unowned partition-seconds per event
(grouped bars, one colour per strategy, one group per scenario event: what a crash
or restart causes later, its session expiry or return, counts with it, so classic
and consumer-protocol runs line up), and per strategy the load of each member
over the timeline (a member x event heat map, with counts in the cells for small groups). The HTML
page embeds the PNGs as base64, so it opens anywhere without network access.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from kassign.errors import KassignError  # noqa: E402
from kassign.simulate.metrics import METRIC_MEANINGS, StrategyRun, protocol_in_force  # noqa: E402

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


def write_plots(runs: Sequence[StrategyRun], out_dir: str | Path, title: str = "simulation") -> list[Path]:
    """Write the PNGs and ``report.html`` into ``out_dir``; return the paths written."""
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
    page.write_text(_html(runs, pngs, title), encoding="utf-8")
    return pngs + [page]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _html(runs: Sequence[StrategyRun], pngs: Sequence[Path], title: str) -> str:
    keys = list(runs[0].totals())
    head = "".join(f"<th>{html.escape(k.replace('_', ' '))}</th>" for k in keys)
    rows = "".join(
        f"<tr><td>{html.escape(run.strategy)}</td>"
        + "".join(f"<td>{run.totals()[k]:g}</td>" for k in keys)
        + "</tr>"
        for run in runs
    )
    legend = "".join(f"<dt>{html.escape(k.replace('_', ' '))}</dt><dd>{html.escape(METRIC_MEANINGS[k])}</dd>"
                     for k in keys if k in METRIC_MEANINGS)
    images = "".join(
        f'<figure><img alt="{html.escape(p.stem)}" src="data:image/png;base64,'
        f'{base64.b64encode(p.read_bytes()).decode("ascii")}"/></figure>'
        for p in pngs
    )
    events = "".join(_event_table(run) for run in runs)
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child{text-align:left}"
        "td.text{text-align:left}tr.refused td{background:#fde8e8}dt{font-weight:bold;margin-top:.4em}"
        "img{max-width:100%}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><table><tr><th>strategy</th>{head}</tr>{rows}</table>"
        f"<dl>{legend}</dl>{images}{events}"
        "</body></html>"
    )


def _event_table(run: StrategyRun) -> str:
    """Every event of one run: the assignor in force, the costs, and notes such as refusals."""
    head = "".join(f"<th>{h}</th>" for h in ("at (s)", "event", "assignor in force", "rounds", "moved", "revoked",
                                              "unowned p·s", "spread", "note"))
    body = "".join(
        f"<tr{' class=refused' if 'refused' in r.note else ''}><td>{r.at:g}</td>"
        f"<td class=text>{html.escape(r.description)}</td><td class=text>{html.escape(protocol_in_force(run, r))}</td>"
        f"<td>{r.rounds}</td><td>{r.moved}</td><td>{r.revoked}</td><td>{r.unowned_partition_seconds:g}</td>"
        f"<td>{r.spread}</td><td class=text>{html.escape(r.note)}</td></tr>"
        for r in run.records
    )
    return f"<h2>{html.escape(run.strategy)}: every event</h2><table><tr>{head}</tr>{body}</table>"
