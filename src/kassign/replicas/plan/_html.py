"""``kassign plan --report plan.html``: the plan as one self-contained, interactive page (``kassign.core.page``).

Top to bottom: what was planned (partitions, brokers, the solver, the Kafka release compared with);
the goals table (each goal now, after the plan, the best any plan could reach, met, and how many moves
serve it); per broker, one bar chart each for disk (with sizes), bytes in (with rates), replicas and
leaders, three bars per broker: now, kassign's plan and Kafka's own ``--generate`` on the same input,
with the broker's limit as a mark where a capacity gives one; the same figures as a table; and every
move (topic, partition, from, to, bytes, the goal it serves: ``_why``). The page looks and behaves
like the pipeline's report: tooltips with exact figures, zoom, tables sorted by a click on a header,
no network.

A plan of more than ``MOVE_ROWS`` moves lists the first ``MOVE_ROWS`` (partition order) and sums up
the rest in the table's footer; ``--json`` carries every move.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kassign.core.page import byte_unit, chart, exact_bytes, hover, many, page, table, text
from kassign.core.units import Figure, count, human_bytes, percent
from kassign.replicas.plan._goals import NONE, RATIO
from kassign.replicas.plan._why import VALID, Moves

MOVE_ROWS = 20_000  # moves listed one by one; more are summed up in the footer
SERIES = (("now", "#8c8c8c"), ("kassign plan", "#4c72b0"), ("Kafka --generate", "#dd8452"))
HINT = ("Hover a bar for its exact figures; drag to zoom, double-click to zoom back out; click a column's header to "
        "sort the table by it.")
GOAL_WORDS = {
    VALID: "valid: the replica leaves a broker that is removed or drained",
    "rack": "rack: undone, the partition would break the rack rule",
    "disk-capacity": "disk-capacity: undone, the broker it leaves would be above its disk limit",
    "replica-capacity": "replica-capacity: undone, the broker it leaves would hold more than max_replicas",
    "network-capacity": "network-capacity: undone, the broker it leaves would take more bytes in than its capacity",
    "disk": "disk: undone, the largest broker's bytes would grow",
    "replicas": "replicas: undone, replica counts would be further apart",
    "topic-spread": "topic-spread: undone, the topic's replicas would be spread less evenly",
    "network-in": "network-in: undone, the largest broker's bytes in would grow",
    "leader-bytes-in": "leader-bytes-in: undone, the largest broker's leader writes would grow",
    "leaders": "leaders: undone, leader counts would be further apart",
}
NONE_WORDS = ("none alone: undone by itself, every goal stays as good; it works with other moves (brokers trading "
              "replicas, a chain a stage chose as a whole) or the stages stopped before a plan without it")


def goal_figure(name: str, kind: str, value: Any) -> Figure:
    """A goal's measure in its unit (as the terminal's goals table writes it)."""
    if value is None:
        return Figure("-")
    if kind == "hard":
        return Figure("rule kept") if name == "rack" and value == 1 else Figure(f"{value:.1%} of limit")
    if name in RATIO:
        return Figure(f"{value:.3f}x mean")
    return count(value)


def per_broker(problem: Any, placement: np.ndarray, ids: Sequence[int], weights: np.ndarray | None,
               leaders: bool = False) -> list[int]:
    """Per broker id in ``ids``: the replicas (or leaders) ``placement`` (int64[P, W] broker ids, -1 padding) puts
    there, summed with ``weights`` per partition (counted, without)."""
    cols = placement[:, :1] if leaders else placement
    rows, slots = np.nonzero(cols >= 0)
    brokers = cols[rows, slots]
    lookup = np.asarray(sorted(ids), np.int64)
    at = np.searchsorted(lookup, brokers)
    ok = (at < len(lookup)) & (lookup[np.minimum(at, len(lookup) - 1)] == brokers)
    w = np.ones(len(rows), np.float64) if weights is None else weights[rows].astype(np.float64)
    sums = np.bincount(at[ok], weights=w[ok], minlength=len(lookup))
    by_id = dict(zip(lookup.tolist(), sums.tolist()))
    return [int(round(by_id[b])) for b in ids]


def _limits(ctx: Any, ids: Sequence[int], which: str) -> list[float | None] | None:
    """Each broker's limit for a chart (``bytes``: the planned replicas' bytes it may hold, ``in``, ``replicas``),
    None where it has none; None when no broker has one."""
    arr = {"bytes": ctx.disk_room, "in": ctx.net_in, "replicas": ctx.max_replicas}[which]
    if not (arr != NONE).any():
        return None
    index = {b: i for i, b in enumerate(ctx.problem.targets.tolist())}
    out: list[float | None] = []
    for b in ids:
        i = index.get(b)
        if i is None or arr[i] == NONE:
            out.append(None)
        else:
            out.append(float(arr[i] - (ctx.disk_other[i] if which == "bytes" else 0)))
    return out if any(v is not None for v in out) else None


def _bars(name: str, title: str, labels: list[str], series: Sequence[list[int]], unit_kind: str,
          limits: list[float | None] | None, caption: str) -> str:
    if unit_kind == "count":
        unit, size = "", 1.0
        shown = count
    else:
        unit, size = byte_unit([v for s in series for v in s] + [v for v in (limits or []) if v is not None])
        suffix = "/s" if unit_kind == "rate" else ""
        unit += suffix

        def shown(v: float) -> str:
            return (exact_bytes(v) if unit_kind == "bytes" else f"{human_bytes(v)}/s ({count(v)} B/s)")
    data = []
    for (label, colour), values in zip(SERIES, series):
        tips = [hover(text(f"broker {b}: {label}"), f"{title.split(' per ')[0].lower()} {shown(v)}")
                for b, v in zip(labels, values)]
        data.append({"type": "bar", "x": labels, "y": [v / size for v in values], "name": label,
                     "marker": {"color": colour}, "hovertext": tips, "hoverinfo": "text"})
    if limits is not None:
        xs = [b for b, v in zip(labels, limits) if v is not None]
        ys = [v for v in limits if v is not None]
        data.append({"type": "scatter", "mode": "markers", "x": xs, "y": [v / size for v in ys], "name": "limit",
                     "marker": {"symbol": "line-ew-open", "size": 14, "color": "#c44e52", "line": {"width": 2}},
                     "hovertext": [hover(text(f"broker {b}: limit"), shown(v)) for b, v in zip(xs, ys)],
                     "hoverinfo": "text"})
    layout = {"title": {"text": title}, "barmode": "group", "yaxis": {"title": {"text": unit or "count"}},
              "xaxis": {"type": "category", "tickangle": -60 if len(labels) > 12 else 0, "automargin": True},
              "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": 1.02, "yanchor": "bottom"},
              "margin": {"l": 70, "r": 20, "t": 80, "b": 60}}
    return chart(name, {"data": data, "layout": layout}, caption)


def render(plan: Any, kafka_placement: np.ndarray, kafka: Mapping[str, Any], moves: Moves) -> str:
    """The page for ``plan`` (a ``ReassignmentPlan``), Kafka's ``--generate`` placement on the same input (broker
    ids) and its figures (``_report.figures`` plus the release), and the plan's moves with their goals."""
    problem, ctx, summary = plan.problem, plan.context, plan.summary
    now, ours = problem.current, plan.replicas
    rows = summary["brokers"]
    ids = [r["broker"] for r in rows]
    labels = [f"{r['broker']} ({r['rack']})" if r["rack"] else str(r["broker"]) for r in rows]
    labels = [lab if r["target"] else f"{lab} {'drained' if r['excluded'] else 'removed'}"
              for lab, r in zip(labels, rows)]
    placements = (now, ours, kafka_placement)
    replicas = [per_broker(problem, a, ids, None) for a in placements]
    leaders = [per_broker(problem, a, ids, None, leaders=True) for a in placements]
    sizes = [per_broker(problem, a, ids, ctx.sizes) for a in placements] if ctx.sizes is not None else None
    rates = [per_broker(problem, a, ids, ctx.rates) for a in placements] if ctx.rates is not None else None
    served = moves.counts()

    charts = []
    if sizes is not None:
        charts.append(_bars("disk", "Disk per broker (bytes of the planned replicas)", labels, sizes, "bytes",
                            _limits(ctx, ids, "bytes"),
                            "Per broker, the bytes of the replicas it holds now, after kassign's plan, and after "
                            "Kafka's --generate; the red mark is the most it may hold (the disk limit less what "
                            "else is on its disk)."))
    if rates is not None:
        charts.append(_bars("bytes-in", "Bytes in per broker (writes and replication)", labels, rates, "rate",
                            _limits(ctx, ids, "in"),
                            "Per broker, the bytes per second it takes in: the write rate of every partition it "
                            "holds a replica of (leaders take the producers' writes, followers replicate them)."))
    charts.append(_bars("replicas", "Replicas per broker", labels, replicas, "count", _limits(ctx, ids, "replicas"),
                        "Per broker, the replicas it holds now, after kassign's plan and after Kafka's --generate; "
                        "the red mark is its max_replicas."))
    charts.append(_bars("leaders", "Leaders per broker", labels, leaders, "count", None,
                        "Per broker, the partitions it leads (the first replica of each list)."))

    goal_rows = []
    optimal = summary.get("goals_optimal") or {}
    for r in summary["goals"]:
        goal_rows.append([r["name"], r["kind"], goal_figure(r["name"], r["kind"], r["before"]),
                          goal_figure(r["name"], r["kind"], r["after"]), goal_figure(r["name"], r["kind"], r["bound"]),
                          "yes" if r["met"] else "NO",
                          "limit kept" if r["kind"] == "hard" else "yes" if optimal.get(r["name"]) else "-",
                          count(served.get(r["name"], 0))])
    goals_table = table(["goal", "kind", "now", "plan", "best possible", "met", "proven optimal", "moves serving it"],
                        goal_rows, "In the order they were optimised; best possible: no plan meeting the hard goals "
                        "does better (proven; - where unknown). A move serves the first goal that would be worse with "
                        "that move alone undone.", title="Each goal: now, plan, best possible")
    why_rows = [[k, count(v), percent(v / len(moves)) if len(moves) else percent(0),
                 GOAL_WORDS.get(k, NONE_WORDS) if k != "none" else NONE_WORDS] for k, v in served.items()]
    why_table = table(["goal served", "moves", "share", "meaning"], why_rows, title="Moves by the goal they serve")

    broker_columns = ["broker", "rack", "replicas now", "replicas plan", "replicas Kafka", "leaders now",
                      "leaders plan", "leaders Kafka"]
    broker_rows = []
    for i, r in enumerate(rows):
        line: list[Any] = [labels[i].split(" (")[0] if r["rack"] else labels[i], r["rack"] or "-",
                           count(replicas[0][i]), count(replicas[1][i]), count(replicas[2][i]),
                           count(leaders[0][i]), count(leaders[1][i]), count(leaders[2][i])]
        if sizes is not None:
            line += [human_bytes(sizes[0][i]), human_bytes(sizes[1][i]), human_bytes(sizes[2][i])]
        if rates is not None:
            line += [Figure(f"{human_bytes(v[i])}/s") for v in rates]
        broker_rows.append(line)
    if sizes is not None:
        broker_columns += ["disk now", "disk plan", "disk Kafka"]
    if rates is not None:
        broker_columns += ["bytes in now", "bytes in plan", "bytes in Kafka"]
    brokers_table = table(broker_columns, broker_rows, "Now, after kassign's plan, after Kafka's --generate "
                          f"(Kafka {kafka.get('kafka_version', '')}).", title="Per broker")

    move_rows = []
    shown = min(len(moves), MOVE_ROWS)
    for k in range(shown):
        p = int(moves.partition[k])
        topic, number = problem.names(p)
        move_rows.append([topic, count(number), count(int(moves.source[k])), count(int(moves.dest[k])),
                          human_bytes(int(ctx.sizes[p])) if ctx.sizes is not None else "-",
                          moves.goal[k] or "none"])
    rest = None
    if len(moves) > shown:
        left = len(moves) - shown
        moved = int(ctx.sizes[moves.partition[shown:]].sum()) if ctx.sizes is not None else None
        rest = [f"and {many(left, 'more move')}", "", "", "", human_bytes(moved) if moved is not None else "-",
                "in --json"]
    moves_table = table(["topic", "partition", "from", "to", "bytes", "goal"], move_rows,
                        f"{many(len(moves), 'replica move')}, each with the goal it serves.", title="Every move",
                        rest=rest)

    leader_changes = summary["leaders_changed"]
    head = (f"<h1>kassign plan</h1><p class=meta>{many(summary['partitions'], 'partition')}, "
            f"{many(summary['replicas'], 'replica')}; {many(len(problem.targets), 'target broker')}; "
            f"solver: {html.escape(str(summary.get('goals_solver')))}; compared with Kafka "
            f"{html.escape(str(kafka.get('kafka_version')))}'s --generate ({html.escape(str(kafka.get('placer')))} "
            f"placer)</p><p class=hint>{html.escape(HINT)}</p>")
    figures = [["replicas moved", count(summary["replicas_moved"]), count(kafka["replicas_moved"])],
               ["partitions changed", count(summary["partitions_changed"]), count(kafka["partitions_changed"])],
               ["leaders changed", count(leader_changes), count(kafka["leaders_changed"])]]
    if "bytes_moved" in summary:
        figures.insert(1, ["bytes moved", human_bytes(summary["bytes_moved"]), human_bytes(kafka["bytes_moved"])])
    verdict = "".join(f"<li>{html.escape(line)}</li>" for line in _verdict(summary, served, len(moves)))
    notes = summary.get("notes") or []
    warn = (f'<section class="warnings"><h2>Notes</h2><ul>{"".join(f"<li>{html.escape(n)}</li>" for n in notes)}'
            "</ul></section>") if notes else ""
    body = (head + f'<section class="verdict"><h2>Verdict</h2><ul>{verdict}</ul></section>' + warn
            + _section("Goals", goals_table + why_table)
            + _section("Per broker: now, plan, Kafka --generate", "".join(charts) + brokers_table)
            + _section("What moves", table(["", "kassign plan", "Kafka --generate"], figures) + moves_table))
    return page("kassign plan", body)


def _verdict(summary: Mapping[str, Any], served: Mapping[str, int], moves: int) -> list[str]:
    goals = summary["goals"]
    hard = [g for g in goals if g["kind"] == "hard"]
    soft = [g for g in goals if g["kind"] == "soft"]
    lines = []
    if hard:
        lines.append("hard goals: " + ", ".join(f"{g['name']} {'kept' if g['met'] else 'BROKEN'}" for g in hard))
    lines.append(f"soft goals met: {sum(g['met'] for g in soft)} of {len(soft)}"
                 + ("" if all(g["met"] for g in soft) else
                    f" (not met: {', '.join(g['name'] for g in soft if not g['met'])})"))
    lines.append(f"{many(moves, 'replica move')}: " + ", ".join(f"{count(v)} serve {k}" if k != "none" else
                                                               f"{count(v)} no goal alone" for k, v in served.items())
                 if moves else "no replica moves")
    return lines


def _section(title: str, body: str) -> str:
    return f"<section><h2>{html.escape(title)}</h2>{body}</section>"


def write_report(path: str | Path, plan: Any, kafka_placement: np.ndarray, kafka: Mapping[str, Any],
                 moves: Moves) -> Path:
    from kassign.core.errors import KassignError

    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(plan, kafka_placement, kafka, moves), encoding="utf-8")
    except OSError as err:
        raise KassignError(f"cannot write {str(target)!r}: {err.strerror or err}") from None
    return target
