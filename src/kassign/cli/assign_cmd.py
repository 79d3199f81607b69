"""``kassign assign``: run a consumer-group assignor over a scenario file."""

from __future__ import annotations

import json
import sys

import click

from kassign.api import assign
from kassign.cli.common import compact_partitions, emit_json, json_option, print_table
from kassign.errors import KassignError, ScenarioError
from kassign.plots import assignment_chart
from kassign.report import assignment_report
from kassign.scenario import assignment_to_json, load_scenario, parse_scenario


def _read_scenario(path: str):
    if path == "-":
        try:
            return parse_scenario(json.load(sys.stdin))
        except json.JSONDecodeError as err:
            raise ScenarioError(f"scenario on stdin is not valid JSON: {err.msg} at line {err.lineno}") from None
    return load_scenario(path)


def _parse_options(pairs: tuple[str, ...]) -> dict[str, object]:
    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise KassignError(f"--option takes key=value, got {pair!r}")
        try:
            options[key.replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            options[key.replace("-", "_")] = value
    return options


@click.command("assign")
@click.option("--strategy", "-s", required=True,
              help="range, roundrobin, sticky, cooperative-sticky, random, broadcast, or package.module:Class.")
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE",
              help="Constructor option for the assignor, e.g. -o seed=7 for random. Repeatable.")
@click.option("--plot", "plot_path", default=None, metavar="FILE.png", help="Also draw partitions per member to a PNG.")
@click.option("--report", is_flag=True, help="With --json, add counts, spread and moves under \"report\".")
@json_option
@click.argument("scenario_path", metavar="SCENARIO.json")
def command(strategy: str, options: tuple[str, ...], plot_path: str | None, report: bool, as_json: bool,
            scenario_path: str) -> None:
    """Assign the partitions of SCENARIO.json (or - for stdin) to its members with STRATEGY."""
    scenario = _read_scenario(scenario_path)
    result = assign(strategy, scenario, **_parse_options(options))
    stats = assignment_report(result, scenario.members, scenario.topics)
    if plot_path:
        assignment_chart(result, plot_path, f"{strategy} assignment")
    if as_json:
        document: dict[str, object] = {"assignment": assignment_to_json(result)}
        if report:
            document["report"] = stats.to_json()
        emit_json(document)
        return
    rows = [[member, len(parts), compact_partitions(parts)] for member, parts in result.items()]
    caption = f"spread (max-min) {stats.spread}"
    if stats.previously_owned:
        caption += f"; of {stats.previously_owned} previously owned: {stats.kept} kept, {stats.moved} moved"
    print_table(f"{strategy} assignment", ["member", "count", "partitions"], rows, caption)
