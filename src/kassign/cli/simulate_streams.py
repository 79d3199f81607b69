"""``kassign simulate`` for a Kafka Streams timeline (a document with a top-level ``application``).

Strategies are Kafka Streams' task assignors, ``high-availability`` (the default) and ``sticky``,
and kassign's own ``optimal``, each optionally ``NAME:standbys=N`` (played with N standby replicas
instead of the timeline's) and ``NAME:rack=STRATEGY`` (with that ``rack_aware_assignment_strategy``).
Without ``--strategies`` (or the timeline's own list) all three are played, and high-availability
with one standby too when the timeline has none, so the summary says what a standby would save, and
without rack-aware assignment when the timeline sets a strategy, so it says what that trades.
"""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

from kassign.cli.common import console, emit_json, literal, print_sentences, print_table
from kassign.core.errors import KassignError
from kassign.core.releases import DEFAULT_KAFKA_VERSION, KIP_924, KSTREAMS_TASK_ASSIGNORS, KafkaRelease, rule
from kassign.core.units import human_seconds
from kassign.groups.simulate.streams_engine import simulate_streams, strategy_settings
from kassign.groups.simulate.streams_metrics import StreamsRun, summary_sentences
from kassign.groups.simulate.streams_scenario import StreamsTimeline, parse_streams_strategy, parse_streams_timeline


def strategies_for(option: str | None, timeline: StreamsTimeline, release: KafkaRelease | None = None) -> list[str]:
    """``--strategies``, else the timeline's list, else the protocol's assignors (and one of them with a standby
    when the timeline has none): Kafka Streams' for the classic protocol (``sticky`` only where ``release`` has
    it, 3.8 and later), the broker's sticky for streams groups."""
    streams_group = timeline.protocol == "streams"
    if option is not None:
        names = [s.strip() for s in option.split(",") if s.strip()]
        if not names:
            example = "sticky,sticky:standbys=1" if streams_group else "high-availability,sticky"
            raise KassignError(f"--strategies needs at least one name, e.g. --strategies {example}")
    elif timeline.strategies:
        names = list(timeline.strategies)
    else:
        names = ["sticky"] if streams_group else ["high-availability", "sticky", "optimal"]
        if not streams_group and release is not None and rule(release, KSTREAMS_TASK_ASSIGNORS) != KIP_924:
            names.remove("sticky")
        if timeline.settings["num_standby_replicas"] == 0:
            names.append(f"{names[0]}:standbys=1")
        if not streams_group and timeline.settings["rack_aware_assignment_strategy"] != "none":
            names.append(f"{names[0]}:rack=none")  # what rack-awareness trades
    for name in names:
        parse_streams_strategy(name, timeline.protocol)
    return list(dict.fromkeys(names))


def caption(timeline: StreamsTimeline, kafka_version: str) -> str:
    s = timeline.settings
    return (f"Kafka {kafka_version}, classic protocol; {len(timeline.events):,} events, "
            f"{len(timeline.application.tasks):,} tasks ({int(timeline.application.stateful.sum()):,} stateful); "
            f"{_standbys(s['num_standby_replicas'])}, at most {s['max_warmup_replicas']} warm-ups, probing every "
            f"{human_seconds(s['probing_rebalance_interval_ms'] / 1000)}, acceptable recovery lag "
            f"{s['acceptable_recovery_lag']:,}; rounds of {human_seconds(s['round_seconds'])}, session timeout "
            f"{human_seconds(s['session_timeout'])}{_racks(s)}")


def _racks(settings: dict) -> str:
    strategy = settings["rack_aware_assignment_strategy"]
    if strategy == "none":
        return ""
    costs = [settings[f"rack_aware_assignment_{k}_cost"] for k in ("traffic", "non_overlap")]
    said = "" if costs == [None, None] else (", costs " + " and ".join("default" if c is None else f"{c:,}"
                                                                      for c in costs))
    return f"; rack-aware {strategy}{said}"


def _standbys(n: int) -> str:
    return "no standby" if n == 0 else f"{n} standby" + ("" if n == 1 else "s")


def _play(timeline: StreamsTimeline, strategies: list[str], kafka_version: str, segments: bool,
          show_progress: bool) -> list[StreamsRun]:
    if not show_progress:
        return [simulate_streams(timeline, s, kafka_version, segments=segments) for s in strategies]
    from rich.progress import Progress

    runs = []
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed} rebalances"),
               TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        for strategy in strategies:
            task = progress.add_task(f"simulating {strategy}", total=None)
            runs.append(simulate_streams(timeline, strategy, kafka_version,
                                         on_rebalance=lambda t=task: progress.advance(t), segments=segments))
    return runs


def run_streams(document: Any, strategies_option: str | None, target: str | None, show_events: bool,
                as_json: bool, kafka_version: str | None) -> None:
    """Play a Streams timeline document and print (or write) what each strategy cost."""
    from kassign.groups.streams.classic.assign import streams_release

    release = streams_release(kafka_version or DEFAULT_KAFKA_VERSION)
    version = release.label
    timeline = parse_streams_timeline(document)
    strategies = strategies_for(strategies_option, timeline, release)
    for name in strategies:  # what the release lacks is said before anything is played
        strategy_settings(timeline, name, release)
    runs = _play(timeline, strategies, version, segments=bool(target),
                 show_progress=not as_json and sys.stderr.isatty())
    sentences = summary_sentences(runs)
    written = []
    if target:
        from kassign.groups.simulate.streams_report import write_streams_report

        written = write_streams_report(runs, target, timeline.name, caption(timeline, version), sentences)
    if as_json:
        doc = {"kind": "kafka-streams", "timeline": timeline.name, "kafka_version": version,
               "settings": timeline.settings, "summary": sentences, "strategies": [r.to_json() for r in runs]}
        if written:
            doc["plots"] = [str(p) for p in written]
        emit_json(doc)
        return
    if show_events:
        from kassign.groups.simulate.streams_report import event_rows

        for run in runs:
            print_table(f"{run.strategy}: per event", *event_rows(run, terse=True))
    from kassign.groups.simulate.streams_report import totals_rows

    columns, rows = totals_rows(runs, terse=True)
    print_sentences(f"{timeline.name} (Kafka {version})", sentences)
    print_table("totals per strategy", columns, rows, caption(timeline, version))
    if any(r.cycling for run in runs for r in run.records):
        console().print(literal("note: (cycles) in --events marks events whose follow-up rebalances came back to an "
                          "assignment they had left: the assignor handed tasks back and forth, a round at a time"))
    if written:
        click.echo(f"plots: {', '.join(str(p) for p in written)}")
