"""``kassign simulate``: replay a group's timeline under several strategies and compare the cost."""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kassign.assignors import get_assignor
from kassign.cli.common import emit_json, json_option, print_table
from kassign.errors import KassignError
from kassign.simulate.engine import simulate
from kassign.simulate.metrics import StrategyRun
from kassign.simulate.scenario import SimScenario, load_sim_scenario

DEFAULT_STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")


def _strategy_list(option: str | None, scenario: SimScenario) -> list[str]:
    if option:
        names = [s.strip() for s in option.split(",") if s.strip()]
        if not names:
            raise KassignError("--strategies needs at least one name, e.g. --strategies range,sticky")
    else:
        names = list(scenario.strategies or DEFAULT_STRATEGIES)
    for name in names:
        get_assignor(name)  # fail early, with the registry's message, on an unknown name
    return list(dict.fromkeys(names))


def _run_all(scenario: SimScenario, strategies: list[str], show_progress: bool) -> list[StrategyRun]:
    if not show_progress:
        return [simulate(scenario, s) for s in strategies]
    runs = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        for strategy in strategies:
            task = progress.add_task(f"simulating {strategy}", total=len(scenario.events))
            runs.append(simulate(scenario, strategy, on_event=lambda t=task: progress.advance(t)))
    return runs


def _print_events(run: StrategyRun) -> None:
    rows = [
        [f"{r.at:g}", escape(r.description), r.rounds, r.moved, r.revoked, round(r.unowned_partition_seconds, 2), r.spread,
         escape(r.note)]
        for r in run.records
    ]
    print_table(f"{run.strategy}: per event", ["at (s)", "event", "rounds", "moved", "revoked",
                                              "unowned p·s", "spread", "note"], rows)


@click.command("simulate")
@click.argument("scenario_path", metavar="SCENARIO.yaml")
@click.option("--strategies", "-s", "strategies_option", metavar="A,B,...",
              help="Strategies to compare (default: the scenario's list, else range,roundrobin,sticky,cooperative-sticky).")
@click.option("--plot", "plot_dir", metavar="DIR", help="Write PNG charts and a self-contained report.html into DIR.")
@click.option("--events", "show_events", is_flag=True, help="Also print every event's row per strategy.")
@json_option
def command(scenario_path: str, strategies_option: str | None, plot_dir: str | None, show_events: bool,
            as_json: bool) -> None:
    """Play the timeline of SCENARIO.yaml with each strategy and compare rounds, moves, revocations,
    unowned partition-seconds and spread."""
    scenario = load_sim_scenario(scenario_path)
    strategies = _strategy_list(strategies_option, scenario)
    runs = _run_all(scenario, strategies, show_progress=not as_json and sys.stderr.isatty())
    written = []
    if plot_dir:
        from kassign.simulate.report import write_plots

        written = write_plots(runs, plot_dir, title=scenario.name)
    if as_json:
        document = {"scenario": scenario.name, "settings": scenario.settings, "strategies": [r.to_json() for r in runs]}
        if written:
            document["plots"] = [str(p) for p in written]
        emit_json(document)
        return
    if show_events:
        for run in runs:
            _print_events(run)
    columns = ["strategy", "rebalances", "rounds", "moved", "revoked", "unowned p·s", "max spread", "final spread"]
    rows = []
    for run in runs:
        t = run.totals()
        rows.append([run.strategy, t["rebalances"], t["rounds"], t["moved"], t["revoked"],
                     t["unowned_partition_seconds"], t["max_spread"], t["final_spread"]])
    caption = (f"{len(scenario.events)} events; {scenario.settings['round_seconds']:g}s per round, "
               f"session timeout {scenario.settings['session_timeout']:g}s")
    print_table(f"{scenario.name}", columns, rows, caption)
    if written:
        click.echo(f"plots: {', '.join(str(p) for p in written)}")
