"""Charts per event for the heartbeat-driven simulators' reports (share groups, streams groups).

Two kinds, each as a PNG (matplotlib) and as a Plotly figure for ``report.html`` (:mod:`kassign.core.page`):

- a heat map of rows (partitions, members, instances) x events: the value a row has once each event has
  settled, blank where the row does not exist then; small grids carry the numbers in their cells;
- grouped bars: one value (or several series) per event.

Rows and events are names from users' files: every label goes through :func:`kassign.core.page.text`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from kassign.core.errors import KassignError  # noqa: E402
from kassign.core.page import HEAT, NOT_THERE, chart, hover, text  # noqa: E402
from kassign.core.units import count, human_seconds  # noqa: E402

CELL_TEXT = 30  # up to this many rows and events, the cells show their values
LABELLED_EVENTS = 24  # up to this many events, the axis names them; past that, numbers
_MAX_WIDTH_INCHES = 14.0


def event_label(at: float, description: str) -> str:
    return f"{human_seconds(at)} {description}"


def safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def output_dir(out_dir: str | Path) -> Path:
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise KassignError(f"cannot create plot directory {str(out)!r}: {err.strerror or err}") from None
    return out


def write_page(path: Path, content: str) -> Path:
    try:
        path.write_text(content, encoding="utf-8")
    except OSError as err:
        raise KassignError(f"cannot write {str(path)!r}: {err.strerror or err}") from None
    return path


def _short(label: str, width: int) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


# -- PNG --------------------------------------------------------------------------------------------

def heatmap_png(rows: Sequence[str], events: Sequence[str], z: Sequence[Sequence[float | None]], title: str,
                value_label: str, path: Path, row_label: str = "") -> Path:
    """Rows x events, blank where a value is None; numbers in the cells of a small grid."""
    values = np.array([[np.nan if v is None else float(v) for v in row] for row in z], dtype=float).reshape(
        len(rows), len(events))
    small = len(rows) <= CELL_TEXT and len(events) <= CELL_TEXT
    fig, ax = plt.subplots(figsize=(min(_MAX_WIDTH_INCHES, max(6.0, 0.55 * len(events) + 3)) if small else 9,
                                    max(3.0, 0.32 * len(rows) + 1.8) if small else 5))
    image = ax.imshow(values, aspect="auto", interpolation="nearest", cmap="Blues",
                      vmin=min(0.0, float(np.nanmin(values))) if np.isfinite(values).any() else 0.0)
    fig.colorbar(image, ax=ax, label=value_label)
    if small:
        mean = np.nanmean(values) if np.isfinite(values).any() else 0.0
        for (i, j), value in np.ndenumerate(values):
            if not np.isnan(value):
                ax.text(j, i, f"{value:,.3g}", ha="center", va="center", fontsize=7,
                        color="white" if value > mean else "black")
        ax.set_yticks(range(len(rows)), rows, fontsize=8)
        ax.set_xticks(range(len(events)), events, rotation=35, ha="right", fontsize=7)
    else:
        ax.set_xlabel("event number")
        ax.set_ylabel(row_label)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def bars_png(events: Sequence[str], series: dict[str, Sequence[float]], title: str, axis: str, path: Path) -> Path:
    """Grouped bars, one group per event, one bar per series."""
    n = max(len(events), 1)
    width = 0.8 / max(len(series), 1)
    fig, ax = plt.subplots(figsize=(min(_MAX_WIDTH_INCHES, max(6.0, 0.45 * n * len(series) + 2)), 4.2))
    x = np.arange(len(events))
    for i, (label, values) in enumerate(series.items()):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, list(values), width, label=label)
    ax.set_title(title)
    ax.set_ylabel(axis)
    if len(events) <= LABELLED_EVENTS:
        ax.set_xticks(x, list(events), rotation=35, ha="right", fontsize=8)
    else:
        ax.set_xlabel("event number")
    if len(series) > 1:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


# -- report.html ------------------------------------------------------------------------------------

def heatmap_chart(name: str, rows: Sequence[str], events: Sequence[str], z: Sequence[Sequence[float | None]],
                  title: str, value_label: str, caption: str, integers: bool = True,
                  colorbar_title: str | None = None) -> str:
    """The heat map for the page: a tooltip per cell (row, ``value_label``, event), grey where a row is absent.

    The tooltip is a template over the cell's row, column and value, so hundreds of rows over a long
    timeline stay a small page."""
    numbered = [text(f"{j}: {label}") for j, label in enumerate(events, 1)]
    small = len(rows) <= CELL_TEXT and len(events) <= CELL_TEXT
    values = [v for row in z for v in row if v is not None]
    spread = (max(values) - min(values)) if values else 0
    colorbar: dict = {"title": {"text": text(colorbar_title or value_label)}}
    if integers:
        colorbar.update({"tickformat": ",d", "dtick": max(1, math.ceil(spread / 6))})
    number = "%{z:,}" if integers else "%{z:,.2f}"
    trace = {"type": "heatmap", "z": [list(row) for row in z], "x": numbered, "y": [text(r) for r in rows],
             "colorscale": HEAT, "xgap": 1, "ygap": 1 if len(rows) <= 60 else 0, "hoverongaps": False,
             "colorbar": colorbar,
             "hovertemplate": f"<b>%{{y}}</b><br>{text(value_label)}: {number}<br>after event %{{x}}<extra></extra>"}
    if small:
        trace["texttemplate"] = "%{z}" if integers else "%{z:.2f}"
    xaxis: dict = {"title": {"text": "after event"}, "type": "category"}
    if len(events) <= LABELLED_EVENTS:
        xaxis.update({"tickvals": numbered, "tickangle": -35, "automargin": True,
                      "ticktext": [_short(label, 30) for label in numbered]})
    else:
        step = max(1, len(events) // 30)
        xaxis.update({"tickvals": numbered[::step], "ticktext": [str(j) for j in range(1, len(events) + 1, step)],
                      "title": {"text": "after event number (hover a cell for the event)"}})
    layout = {"title": {"text": text(title)}, "xaxis": xaxis,
              "yaxis": {"type": "category", "autorange": "reversed", "automargin": True,
                        **({"nticks": 40} if len(rows) > 40 else {})},
              "plot_bgcolor": NOT_THERE}
    return chart(name, {"data": [trace], "layout": layout}, caption, height=min(900, max(320, 170 + 24 * len(rows))))


def bars_chart(name: str, events: Sequence[str], series: dict[str, Sequence[float]],
               hovers: dict[str, Sequence[str]], title: str, axis: str, caption: str) -> str:
    """Grouped bars for the page; ``hovers``: per series, one tooltip (already escaped) per event."""
    data = []
    for label, values in series.items():
        data.append({"type": "bar", "x": list(range(1, len(values) + 1)), "y": list(values), "name": text(label),
                     "hoverinfo": "text", "hovertext": list(hovers[label])})
    xaxis: dict = {"title": {"text": "event"}, "range": [0.5, len(events) + 0.5]}
    if len(events) <= LABELLED_EVENTS:
        xaxis.update({"tickvals": list(range(1, len(events) + 1)), "tickangle": -35, "automargin": True,
                      "ticktext": [text(_short(label, 28)) for label in events]})
    layout = {"title": {"text": text(title)}, "barmode": "group", "xaxis": xaxis, "yaxis": {"title": {"text": axis}},
              "showlegend": len(series) > 1}
    return chart(name, {"data": data, "layout": layout}, caption)


def series_chart(name: str, events: Sequence[str], series: str, values: Sequence[float], describe,
                 title: str, axis: str, caption: str) -> str:
    """One bar per event; ``describe(value)`` is the tooltip's figure line."""
    hovers = [event_hover(series, i, label, describe(v)) for i, (label, v) in enumerate(zip(events, values), 1)]
    return bars_chart(name, events, {series: values}, {series: hovers}, title, axis, caption)


def event_hover(series: str, index: int, label: str, *lines: str) -> str:
    return hover(text(series), text(f"event {index}: {label}"), *lines)


def figure_lines(values: dict[str, float]) -> list[str]:
    """``name: 1,234`` tooltip lines."""
    return [f"{text(k)}: {count(v)}" for k, v in values.items()]
