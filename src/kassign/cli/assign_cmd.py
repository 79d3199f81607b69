"""``kassign assign``: run one group type's assignor over a scenario file: partitions (classic, consumer, share)
or a Kafka Streams application's tasks (streams, classic-streams)."""

from __future__ import annotations

import json

import click

from kassign.api import assign
from kassign.groups.classic.assignors import answers_per_release, get_assignor
from kassign.cli.common import compact_partitions, count, emit_json, json_option, print_table
from kassign.core.errors import KassignError
from kassign.core.charts import assignment_chart, check_plot_path
from kassign.core.releases import DEFAULT_KAFKA_VERSION, release_for
from kassign.groups.consumer.group import build_server_group
from kassign.groups.report import (
    MOVED,
    NO_SUBSCRIBER,
    REVOKED,
    assignment_report,
    most_even_spread,
    partition_states,
    unknown_topics,
)
from kassign.groups.scenario import assignment_to_json, load_scenario


def _read_scenario(path: str):
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


def _consumer_protocol_notes(strategy: str, scenario, stats) -> tuple[dict[str, object], list[str]]:
    """What a user of Kafka 4's server-side assignors should know beside the result."""
    facts: dict[str, object] = {}
    notes: list[str] = []
    if any(spec.rack for spec in scenario.members.values()):
        facts["racks_ignored"] = True
        notes.append("members have racks, but Kafka 4's server-side assignors ignore racks")
    if strategy == "uniform" and not build_server_group(scenario).homogeneous:
        best = most_even_spread(scenario)
        facts["most_even_spread"] = best
        if best < stats.spread:
            notes.append(f"subscriptions differ and Kafka's uniform heuristic leaves spread {stats.spread}; "
                         f"the most even assignment possible has spread {best}")
        else:
            notes.append(f"subscriptions differ; spread {stats.spread} is the most even possible")
    return facts, notes


@click.command("assign")
@click.option("--strategy", "-s", required=True,
              help="Classic protocol: range, roundrobin, sticky, cooperative-sticky, random, broadcast, load-aware "
                   "or package.module:Class. Consumer protocol (Kafka 4, KIP-848): uniform or range. Share groups: "
                   "simple. Streams groups: sticky. Classic Kafka Streams: high-availability, sticky or kassign's "
                   "optimal.")
@click.option("--protocol", type=click.Choice(["classic", "consumer", "share", "streams", "classic-streams"]),
              default="classic", show_default=True,
              help="classic: the members' own assignor (owned = what each held); consumer: the Kafka 4 group "
                   "coordinator's assignor (owned = each member's current target); share: a share group (KIP-932); "
                   "streams: a streams group's tasks (KIP-1071); classic-streams: a Kafka Streams application's "
                   "tasks as its group leader assigns them. The scenario of each: the manual's formats page.")
@click.option("--kafka-version", default=DEFAULT_KAFKA_VERSION, show_default=True, metavar="MAJOR.MINOR[.PATCH]",
              help="The Kafka release to answer as, any from 3.0 to 4.4 (\"3.4\" means the 3.4 line's latest "
                   "patch, \"3.4.0\" its first). What changed where: the classic sticky assignors and rack "
                   "awareness in 3.x, the consumer protocol's uniform in 4.0.1 (KAFKA-18688), share groups' simple "
                   "in 4.2, streams groups' sticky and Kafka Streams' sticky in 4.4 (the manual's Kafka releases "
                   "page). The consumer protocol needs 4.0, share groups 4.1, streams groups 4.2.")
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE",
              help="Constructor option for the assignor, e.g. -o seed=7 for random. Repeatable.")
@click.option("--plot", "plot_path", default=None, metavar="FILE.png",
              help="Also draw partitions per member (PNG, SVG or PDF by the extension).")
@click.option("--report", is_flag=True, help="Add counts, spread, moves and every partition's state: under "
              "\"report\" with --json, as notes under the table otherwise.")
@click.option("--by-partition", is_flag=True, help="One row per partition, as kafka-consumer-groups.sh --describe "
              "shows a group: TOPIC PARTITION MEMBER, the previous owner and what happened.")
@json_option
@click.argument("scenario_path", metavar="SCENARIO.json")
def command(strategy: str, protocol: str, kafka_version: str, options: tuple[str, ...], plot_path: str | None,
            report: bool, by_partition: bool, as_json: bool, scenario_path: str) -> None:
    """Assign the partitions of SCENARIO.json (or - for stdin) to its members with STRATEGY."""
    if protocol in ("streams", "classic-streams"):
        release = release_for(kafka_version, "streams" if protocol == "streams" else "classic")
        _refuse_partition_options(protocol, options, plot_path, report, by_partition)
        _assign_tasks(strategy, protocol, release.label, scenario_path, as_json)
        return
    if protocol == "share":
        release = release_for(kafka_version, protocol)
        _refuse_partition_options(protocol, options, plot_path, report, by_partition)
        _assign_share(strategy, release.label, scenario_path, as_json)
        return
    release = release_for(kafka_version, protocol)  # before reading anything: a bad release is a usage error
    if plot_path:
        check_plot_path(plot_path)
    scenario = _read_scenario(scenario_path)
    parsed_options = _parse_options(options)
    if "kafka_version" in parsed_options:
        raise KassignError("the Kafka release is --kafka-version, not an assignor option (-o kafka_version=...)")
    result = assign(strategy, scenario, protocol=protocol, kafka_version=release, **parsed_options)
    stats = assignment_report(result, scenario.members, scenario.topics)
    states = partition_states(result, scenario.members, scenario.topics)
    unknown = unknown_topics(scenario.members, scenario.topics)
    facts, notes = _consumer_protocol_notes(strategy, scenario, stats) if protocol == "consumer" else ({}, [])
    # an answer that depends on the release names it: the consumer protocol's, and the classic protocol's
    # Kafka assignors' (kassign's own, and a user's class that takes no kafka_version, answer alike in all)
    named_release = protocol == "consumer" or answers_per_release(strategy)
    title = f"{strategy} assignment"
    if protocol == "consumer":
        title += f" (consumer protocol, Kafka {release.label})"
    elif named_release:
        title += f" (Kafka {release.label})"
    if plot_path:
        written = assignment_chart(result, plot_path, title)
        click.echo(f"kassign: plot written to {written}", err=True)
    if as_json:
        document: dict[str, object] = {"assignment": assignment_to_json(result)}
        if named_release:
            document["kafka_version"] = release.label
        if report:
            document["report"] = {**stats.to_json(), **facts, "partitions": [st.to_json() for st in states],
                                  "unknown_topics": unknown}
        emit_json(document)
        return
    notes = notes + [f"topic {topic!r} does not exist; subscribed by {', '.join(who)}" for topic, who in unknown.items()]
    if by_partition:
        print_table(title, ["topic", "partition", "member", "previous owner", "state"],
                    [[st.topic, st.partition, st.member or "-", st.previous or "-", st.state] for st in states],
                    _caption(stats, protocol), notes)
        return
    columns = ["member", "count", "partitions"]
    rows = [[member, count(len(parts)), compact_partitions(parts)] for member, parts in result.items()]
    for state in (REVOKED, NO_SUBSCRIBER):
        waiting = [(st.topic, st.partition) for st in states if st.state == state]
        if waiting:
            rows.append([f"({state})", count(len(waiting)), compact_partitions(waiting)])
    weigh = _partition_weigher(strategy, protocol, options)
    if weigh is not None:  # load-aware: what each member carries is the point
        columns.insert(2, "load")
        for row in rows:
            parts = result.get(row[0], []) if not row[0].startswith("(") else \
                [(st.topic, st.partition) for st in states if f"({st.state})" == row[0]]
            row.insert(2, count(sum(weigh(tp) for tp in parts)))
    if report:
        notes = notes + [f"{st.topic}-{st.partition}: {st.state}" + (f" (from {st.previous})" if st.state == MOVED else "")
                         for st in states if st.state in (MOVED, REVOKED)]
    print_table(title, columns, rows, _caption(stats, protocol), notes)


def _partition_weigher(strategy: str, protocol: str, options: tuple[str, ...]):
    """The load of a partition as load-aware weighs it, or None for other strategies."""
    if protocol != "classic" or strategy != "load-aware":
        return None
    assignor = get_assignor(strategy, **_parse_options(options))
    return lambda tp: assignor.loads.get(tuple(tp), assignor.default_load)


def _caption(stats, protocol: str) -> str:
    caption = f"spread (max-min) {stats.spread}"
    if stats.previously_owned:
        held = "in the current target" if protocol == "consumer" else "previously owned"
        caption += f"; of {stats.previously_owned} {held}: {stats.kept} kept, {stats.moved} moved"
    return caption


def _refuse_partition_options(protocol: str, options: tuple[str, ...], plot_path: str | None, report: bool,
                              by_partition: bool) -> None:
    given = [name for name, on in (("--option", options), ("--plot", plot_path), ("--report", report),
                                   ("--by-partition", by_partition)) if on]
    if given:
        raise KassignError(f"{', '.join(given)} apply to the classic and consumer protocols, not to {protocol}")


def _read_document(path: str, what: str):
    from kassign.core.documents import load_json
    from kassign.groups.scenario import read_scenario_text

    if path == "-":
        import sys

        return load_json(sys.stdin.read(), f"{what} on stdin")
    return load_json(read_scenario_text(path), f"{what} file {path!r}")


def _assign_share(strategy: str, version: str, path: str, as_json: bool) -> None:
    """A share group: members may share a partition, so the table says by how many members each is shared."""
    from kassign.api import assign

    result = assign(strategy, _read_document(path, "scenario"), protocol="share", kafka_version=version)
    if as_json:
        emit_json({"assignment": assignment_to_json(result), "kafka_version": version})
        return
    holders: dict[tuple[str, int], int] = {}
    for parts in result.values():
        for tp in parts:
            holders[tp] = holders.get(tp, 0) + 1
    shared = sorted(tp for tp, n in holders.items() if n > 1)
    rows = [[member, count(len(parts)), compact_partitions(parts)] for member, parts in result.items()]
    caption = (f"{count(len(shared))} of {count(len(holders))} assigned partitions shared by 2 or more members"
               if shared else f"{count(len(holders))} partitions assigned, none shared")
    notes = [f"shared by {n} members: {compact_partitions([tp for tp in shared if holders[tp] == n])}"
             for n in sorted({holders[tp] for tp in shared})]
    print_table(f"{strategy} assignment (share group, Kafka {version})", ["member", "count", "partitions"], rows,
                caption, notes)


def _task_names(tasks) -> str:
    """``{"0": [0, 1], "2": [3]}`` or ``["0_0", "0_1"]`` as ``0_0 0_1 2_3``."""
    if isinstance(tasks, dict):
        return " ".join(f"{s}_{p}" for s, parts in tasks.items() for p in parts) or "-"
    return " ".join(tasks) or "-"


def _assign_tasks(strategy: str, protocol: str, version: str, path: str, as_json: bool) -> None:
    from kassign.api import assign_tasks

    document = _read_document(path, "scenario")
    result = assign_tasks(strategy, document, protocol="streams" if protocol == "streams" else "classic",
                          kafka_version=version)
    if as_json:
        emit_json({"assignment": result, "kafka_version": version})
        return
    if protocol == "streams":
        members = document.get("members", {}) if isinstance(document, dict) else {}
        rows = [[member, str(members.get(member, {}).get("process_id", "")), _task_names(tasks["active"]),
                 _task_names(tasks["standby"]), _task_names(tasks["warmup"])] for member, tasks in result.items()]
        print_table(f"{strategy} task assignment (streams group, Kafka {version})",
                    ["member", "process", "active", "standby", "warm-up"], rows,
                    f"{count(len(rows))} members")
        return
    rows = [[client, _task_names(tasks["active"]), _task_names(tasks["standby"])]
            for client, tasks in result["clients"].items()]
    threads = [[member, _task_names(tasks["active"]), _task_names(tasks["standby"])]
               for member, tasks in result["consumers"].items()]
    probing = ("a probing rebalance follows: tasks wait where they are until their warm-ups catch up"
               if result["probing_rebalance"]
               else "no probing rebalance follows")
    print_table(f"{strategy} task assignment (Kafka Streams, classic protocol, Kafka {version})",
                ["client", "active", "standby (incl. warm-ups)"], rows, probing)
    print_table("split over stream threads (consumers)", ["consumer", "active", "standby"], threads)
