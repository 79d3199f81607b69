"""``kassign simulate``: replay a group's timeline under several strategies and compare the cost.

Strategies are classic client-side assignors (eager or cooperative rebalancing) or
``consumer:uniform`` / ``consumer:range`` / ``consumer``: Kafka 4's consumer group
protocol (KIP-848) with that server-side assignor (or the broker's default), so one
table compares eager, cooperative and consumer-protocol groups on the same timeline.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kassign.groups.classic.assignors import get_assignor
from kassign.cli.common import Figure, count, emit_json, json_option, print_table
from kassign.core.documents import load_yaml
from kassign.core.errors import KassignError
from kassign.core.releases import DEFAULT_KAFKA_VERSION, KafkaRelease, release_for
from kassign.groups.scenario import read_scenario_text
from kassign.groups.simulate.engine import simulate
from kassign.groups.simulate.metrics import StrategyRun, protocol_in_force
from kassign.groups.simulate.scenario import (
    CLASSIC,
    CONSUMER,
    SimScenario,
    member_plans,
    parse_sim_scenario,
    parse_strategy,
    run_protocol,
)
from kassign.groups.simulate.share_scenario import is_share_timeline
from kassign.groups.simulate.streams_scenario import is_streams_group_timeline, is_streams_timeline

CLASSIC_DEFAULTS = ("range", "roundrobin", "sticky", "cooperative-sticky")
CONSUMER_DEFAULT = "consumer:uniform"
DEFAULT_STRATEGIES = CLASSIC_DEFAULTS + (CONSUMER_DEFAULT,)


def _default_strategies(scenario: SimScenario) -> list[str]:
    """The scenario's list, else the defaults that fit its members: classic strategies unless some member
    is set to the consumer protocol, the consumer protocol unless some member lists its own classic strategies."""
    if scenario.strategies:
        return list(scenario.strategies)
    plans = [plan for _, _, plan in member_plans(scenario)]
    own_consumer = any(p.group_protocol == CONSUMER for p in plans)
    own_classic = any(p.group_protocol == CLASSIC or (p.strategies and p.group_protocol is None) for p in plans)
    names = [] if own_consumer else list(CLASSIC_DEFAULTS)
    if not own_classic:
        names.append(CONSUMER_DEFAULT)
    return names or list(CLASSIC_DEFAULTS)


def _strategy_list(option: str | None, scenario: SimScenario) -> list[str]:
    if option is not None:
        names = [s.strip() for s in option.split(",") if s.strip()]
        if not names:
            raise KassignError("--strategies needs at least one name, e.g. --strategies range,sticky")
    else:
        names = _default_strategies(scenario)
    for name in names:
        if parse_strategy(name)[0] == CLASSIC:  # consumer[:assignor] is checked by parse_strategy itself
            get_assignor(name)  # fail early, with the registry's message, on an unknown name
    return list(dict.fromkeys(names))


def _run_all(scenario: SimScenario, strategies: list[str], show_progress: bool,
             release: KafkaRelease) -> list[StrategyRun]:
    if not show_progress:
        return [simulate(scenario, s, kafka_version=release) for s in strategies]
    runs = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        for strategy in strategies:
            task = progress.add_task(f"simulating {strategy}", total=len(scenario.events))
            runs.append(simulate(scenario, strategy, on_event=lambda t=task: progress.advance(t),
                                 kafka_version=release))
    return runs


def _read_document(path: str):
    """The timeline document, read once (stdin too): its top level says which simulator plays it."""
    if path == "-":
        return load_yaml(sys.stdin.read(), "scenario on stdin")
    return load_yaml(read_scenario_text(path), f"scenario file {str(path)!r}")


def _heartbeats(run: StrategyRun, value: int) -> Figure:
    return count(value) if run.group_protocol == CONSUMER else Figure("-")


def _print_events(run: StrategyRun) -> None:
    rows = [
        [f"{r.at:g}", r.description, protocol_in_force(run, r), count(r.rounds), _heartbeats(run, r.heartbeats),
         count(r.moved), count(r.revoked), count(round(r.unowned_partition_seconds, 2)),
         count(round(r.unsettled_seconds, 2)), count(r.spread), r.note]
        for r in run.records
    ]
    print_table(f"{run.strategy}: per event", ["at (s)", "event", "assignor\nin force", "rounds", "heart-\nbeats",
                                              "moved", "revoked", "unowned\np·s", "unsettled\ns", "spread", "note"],
                rows)


def _caption(scenario: SimScenario, runs: list[StrategyRun]) -> str:
    caption = (f"{len(scenario.events):,} events; {scenario.settings['round_seconds']:g}s per round, "
               f"session timeout {scenario.settings['session_timeout']:g}s")
    consumer = [run for run in runs if run.group_protocol == CONSUMER]
    classic = [run for run in runs if run.group_protocol != CONSUMER and run.kafka_version is not None]
    if consumer:
        caption += f", heartbeat every {scenario.settings['heartbeat_interval']:g}s"
    played = [name for name, runs_of in (("consumer protocol", consumer), ("classic assignors", classic)) if runs_of]
    if played:
        caption += f"; {' and '.join(played)} as Kafka {(consumer or classic)[0].kafka_version}"
    return caption


@click.command("simulate")
@click.argument("scenario_path", metavar="SCENARIO.yaml")
@click.option("--strategies", "-s", "strategies_option", metavar="A,B,...",
              help="Strategies to compare: classic assignors (range, roundrobin, sticky, cooperative-sticky, ...) "
                   "and Kafka 4's consumer group protocol (KIP-848) as consumer:uniform, consumer:range or consumer "
                   "(the broker's default assignor), e.g. range,cooperative-sticky,consumer:uniform. Default: the "
                   "scenario's list, else range,roundrobin,sticky,cooperative-sticky,consumer:uniform (those that "
                   "fit its members). A Kafka Streams timeline takes Kafka Streams' task assignors: "
                   "high-availability, sticky, kassign's optimal, NAME:standbys=N (default: all three, and "
                   "high-availability:standbys=1 when the timeline has no standbys); with protocol: streams (a "
                   "streams group) the broker's sticky or sticky:standbys=N. share:simple plays the timeline as a "
                   "share group (KIP-932).")
@click.option("--out", "-o", "out_dir", metavar="DIR",
              help="Write report.html (one self-contained, interactive page: tooltips, zoom, sortable tables; it "
                   "opens without network) and the PNG charts into DIR, as `kassign pipeline --out` does.")
@click.option("--plot", "plot_dir", metavar="DIR", help="The same as --out DIR (its first name, kept).")
@click.option("--events", "show_events", is_flag=True, help="Also print every event's row per strategy.")
@click.option("--kafka-version", default=DEFAULT_KAFKA_VERSION, show_default=True, metavar="MAJOR.MINOR[.PATCH]",
              help="The Kafka release whose assignors play the timeline, any from 3.0 to 4.4: the classic "
                   "strategies as that release's clients run them (3.x releases differ in sticky and in racks), the "
                   "consumer:... strategies' group coordinator (4.0 and later; its uniform assignor changed in 4.0.1, "
                   "KAFKA-18688), a Kafka Streams timeline's assignors; share groups 4.2 to 4.4, streams groups 4.2 "
                   "to 4.4 (from 4.3 the coordinator computes a target at most once a second).")
@json_option
def command(scenario_path: str, strategies_option: str | None, out_dir: str | None, plot_dir: str | None,
            show_events: bool, kafka_version: str, as_json: bool) -> None:
    """Play the timeline of SCENARIO.yaml with each strategy and compare rounds, moves, revocations,
    unowned partition-seconds and spread.

    Classic strategies rebalance in JoinGroup/SyncGroup rounds (round_seconds each). consumer:...
    strategies play Kafka 4's consumer group protocol: members heartbeat (settings heartbeat_interval,
    default 5s, and session_timeout, default 45s), the coordinator computes the target assignment and
    each member catches up with it on its own heartbeats, revoking before anyone receives what it gives
    up, with no group-wide pause. Scenario members with group_protocol: consumer (and remote_assignor:
    uniform|range) use it whatever the strategy; groups mixing both protocols are refused. For the
    consumer protocol, rounds counts target assignments computed and heartbeats the requests sent until
    the group settled; unsettled s is how long each protocol took to settle.

    --out DIR (or its other name, --plot DIR) also writes DIR/report.html, one self-contained
    interactive page (tooltips with exact figures, zoom, sortable tables; no network needed),
    and the same charts as PNG files.

    A Kafka Streams timeline (a document with a top-level application:) plays every rebalance of a
    classic Streams application with Kafka Streams' own task assignors instead (strategies
    high-availability and sticky, and kassign's own optimal; NAME:standbys=N for another standby count): warm-ups, probing
    rebalances, restoration; it reports tasks moved, state restored and how long each stateful task
    had no running active task, in words and per event (docs/kafka-streams.md). With protocol: streams
    it plays a streams group (KIP-1071): the broker's sticky assignor, members reconciling on their
    heartbeats; it reports tasks moved, standbys promoted and tasks without local state.

    A share-group timeline (group_type: share, or --strategies share:simple on a consumer-group
    timeline) plays a share group (KIP-932): the broker's simple assignor, no barrier and no revocation;
    it reports per event how many members fetch each partition, the fetch load per member, and how long
    until every member had its new target (docs/simulator.md)."""
    if out_dir and plot_dir and Path(out_dir) != Path(plot_dir):
        raise KassignError(f"--out {out_dir!r} and --plot {plot_dir!r} name two directories: give one "
                           "(--plot is --out's other name)")
    target = out_dir or plot_dir
    release_for(kafka_version, "classic")  # any of 3.0-4.4, before the timeline is played; each group type checks its own
    document = _read_document(scenario_path)
    if is_share_timeline(document, strategies_option):
        from kassign.cli.simulate_share import run_share

        run_share(document, strategies_option, target, as_json, kafka_version)
        return
    if is_streams_group_timeline(document):
        from kassign.cli.simulate_streams_group import run_streams_group

        run_streams_group(document, strategies_option, target, show_events, as_json, kafka_version)
        return
    if is_streams_timeline(document):
        from kassign.cli.simulate_streams import run_streams

        run_streams(document, strategies_option, target, show_events, as_json, kafka_version)
        return
    scenario = parse_sim_scenario(document)
    strategies = _strategy_list(strategies_option, scenario)
    consumer = any(run_protocol(scenario, name) == CONSUMER for name in strategies)
    release = release_for(kafka_version, CONSUMER if consumer else CLASSIC)
    runs = _run_all(scenario, strategies, show_progress=not as_json and sys.stderr.isatty(), release=release)
    written = []
    if target:
        from kassign.groups.simulate.report import write_plots

        written = write_plots(runs, target, title=scenario.name, caption=_caption(scenario, runs))
    if as_json:
        document = {"scenario": scenario.name, "settings": scenario.settings, "strategies": [r.to_json() for r in runs]}
        if consumer or any(run.kafka_version is not None for run in runs):
            document["kafka_version"] = release.label
        if written:
            document["plots"] = [str(p) for p in written]
        emit_json(document)
        return
    if show_events:
        for run in runs:
            _print_events(run)
    columns = ["strategy", "rebalances", "rounds", "heartbeats", "moved", "revoked", "unowned\np·s", "unsettled\ns",
               "max\nspread", "final\nspread"]
    rows = []
    for run in runs:
        t = run.totals()
        rows.append([run.strategy, count(t["rebalances"]), count(t["rounds"]), _heartbeats(run, t["heartbeats"]),
                     count(t["moved"]), count(t["revoked"]), count(round(t["unowned_partition_seconds"], 2)),
                     count(round(t["unsettled_seconds"], 2)), count(t["max_spread"]), count(t["final_spread"])])
    print_table(f"{scenario.name}", columns, rows, _caption(scenario, runs))
    if written:
        click.echo(f"plots: {', '.join(str(p) for p in written)}")
