"""``kassign plan``: a reassignment plan kafka-reassign-partitions.sh can execute, beside Kafka's --generate."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from kassign.cli.common import console, emit_json, print_table
from kassign.core.documents import load_json
from kassign.core.errors import KassignError
from kassign.core.releases import DEFAULT_KAFKA_VERSION, release_for
from kassign.replicas.plan import human_bytes, parse_describe, plan_reassignment
from kassign.replicas.plan._document import generate_placer, generate_words, kafka_generate
from kassign.replicas.plan._report import figures
from kassign.replicas.plan._why import explain, moves_json
from kassign.replicas.brokers import parse_broker_list

HELP = """Plan moving replicas onto BROKERS, as evenly as possible with the fewest moves.

\b
Reads the current assignment (--current: kafka-reassign-partitions.sh's JSON, e.g. what
--generate prints as "Current partition replica assignment"; or --describe-file: the text
kafka-topics.sh --describe prints). Writes the proposed JSON (--out) for
  kafka-reassign-partitions.sh --execute --reassignment-json-file OUT
and the rollback JSON (the current assignment) beside it. Prints replicas and leaders per
broker and rack before -> after, what moves, and the same figures for what Kafka's own
--generate would propose on the same input, as --kafka-version runs it (AdminUtils up to
4.0, the striped placer from 4.1; default: the cluster's release with --bootstrap-server,
else 4.4).

\b
Order of goals: valid (distinct brokers, min(rf, racks) racks per partition); replica counts
as even as possible; the fewest replica moves; leaders as even as possible, then the fewest
leader changes. With --sizes: bytes per broker within --tolerance of the mean instead of
counts, moving few bytes.

\b
With --capacity, --rates or --goals: goals in order, hard ones (rack, disk-capacity,
replica-capacity, network-capacity) never traded for soft ones (disk, replicas,
topic-spread, network-in, leader-bytes-in, leaders), then the fewest moves, bytes moved and
leader changes; a table shows each goal before -> after and the best any plan could reach.

\b
--report FILE.html: the plan as an interactive page (per broker disk, bytes in, replicas and
leaders now / plan / Kafka's --generate; the goals; every move with the goal it serves: the
first goal that would be worse with that move alone undone). --json lists the moves too.
"""


def _read_json(path: str, what: str) -> Any:
    """A JSON file (``-``: standard input), strictly: a key given twice is an error, as everywhere."""
    if path == "-":
        return load_json(sys.stdin.read(), f"{what} on stdin")
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise KassignError(f"cannot read {what} {path!r}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise KassignError(f"{what} {path!r} is not UTF-8 text") from None
    return load_json(text, f"{what} {path!r}")


def read_sizes(path: str, what: str = "sizes") -> Any:
    """Bytes per partition from the pipeline's partition_load (a Parquet directory or file), a
    CSV with topic,partition,bytes, or JSON ({topic: [bytes...]}, {topic: {partition: bytes}} or
    a list of {"topic", "partition", "bytes"})."""
    source = Path(path)
    if not source.exists():
        raise KassignError(f"--{what} {path!r} does not exist")
    suffix = source.suffix.lower()
    try:
        if source.is_dir() or suffix == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_table(source)
        if suffix == ".csv":
            import pyarrow.csv as pcsv

            return pcsv.read_csv(source)
    except Exception as err:  # pyarrow raises several types for unreadable input
        raise KassignError(f"cannot read {what} from {path!r}: {' '.join(str(err).split())}") from None
    data = _read_json(path, f"{what} file")
    if isinstance(data, list):
        result = {}
        for row in data:
            if not isinstance(row, dict) or not {"topic", "partition", "bytes"} <= set(row):
                raise KassignError(f"{what} file {path!r}: each list entry needs topic, partition and bytes")
            result[(row["topic"], row["partition"])] = row["bytes"]
        return result
    return data


def _parse_ids(text: str | None) -> list[int]:
    if not text:
        return []
    ids = []
    for item in text.split(","):
        try:
            ids.append(int(item.strip()))
        except ValueError:
            raise KassignError(f"--exclude: {item.strip()!r} is not a broker id; write ids separated by commas") from None
    return ids


def _write(path: Path, document: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=None, separators=(",", ":")) + "\n")
    except OSError as err:
        raise KassignError(f"cannot write {str(path)!r}: {err.strerror or err}") from None


def _arrow(before: Any, after: Any) -> str:
    return f"{before} -> {after}" if before != after else f"{after}"


def _read_live(bootstrap: str, topics: tuple[str, ...], command_config: str | None, timeout: float,
               release: tuple[str, str, str] | None, sample: str | None, capacity_path: str | None,
               move_under_replicated: bool, quiet: bool) -> tuple[Any, tuple[str, str, str]]:
    """The planner's inputs read from the cluster (``kassign.cli.plan_live``), what was read said on the terminal,
    and the release to compare with: ``release`` as given, else the one its broker's ApiVersions names."""
    if timeout <= 0:
        raise KassignError(f"--timeout must be positive, got {timeout:g}")
    from kassign.cli.plan_live import read_live_inputs
    from kassign.kafka import metadata as meta
    from kassign.kafka.cluster_inputs import rich_progress

    config = meta.read_command_config(command_config) if command_config else None
    if sample is not None and not quiet:
        with rich_progress() as update:
            live = read_live_inputs(bootstrap, config, timeout, list(topics), sample, capacity_path,
                                    move_under_replicated, progress=update)
    else:
        live = read_live_inputs(bootstrap, config, timeout, list(topics), sample, capacity_path,
                                move_under_replicated)
    if not quiet:
        for line in live.cluster.lines():
            console().print(f"read: {line}", highlight=False, markup=False)
    if release is None:
        from kassign.kafka.live_group import choose_release, open_cluster

        with open_cluster(bootstrap, config, min(timeout, 3600)) as cluster:
            release = choose_release(cluster, None)
    return live, release


@click.command("plan", help=HELP)
@click.option("--current", "current_path", metavar="FILE.json", help="Current assignment (reassignment JSON).")
@click.option("--describe-file", "describe_path", metavar="FILE",
              help="Current assignment as kafka-topics.sh --describe prints it (instead of --current).")
@click.option("--brokers", "-b", required=True, metavar="ID[:RACK],...",
              help="Brokers that should hold replicas afterwards (added ones included, removed ones left out); with "
                   "--bootstrap-server, default: the cluster's brokers.")
@click.option("--sizes", "sizes_path", metavar="DIR|FILE",
              help="Bytes per partition: the pipeline's partition_load directory, Parquet, CSV or JSON.")
@click.option("--tolerance", type=float, default=0.05, show_default=True,
              help="With --sizes: largest broker at most this fraction above the mean.")
@click.option("--rates", "rates_path", metavar="FILE",
              help="Bytes in per second per partition (JSON {topic: {partition: bytes_per_s}}; as --sizes reads).")
@click.option("--capacity", "capacity_path", metavar="FILE",
              help='Broker capacity (JSON {"default": {"disk_bytes", "network_in_bytes_per_s", '
                   '"network_out_bytes_per_s", "max_replicas"}, "brokers": {"ID": {...}}}).')
@click.option("--goals", "goals", default=None, metavar="GOAL,...",
              help="Goals in order (default every goal in force): rack, disk-capacity, replica-capacity, "
                   "network-capacity, disk, replicas, topic-spread, network-in, leader-bytes-in, leaders.")
@click.option("--disk-limit", type=float, default=0.8, show_default=True,
              help="disk-capacity: the fraction of its disk a broker may fill after the plan.")
@click.option("--max-moves", type=int, default=None, help="At most this many replica moves.")
@click.option("--batches", type=int, default=1, show_default=True, help="Split the plan into N steps.")
@click.option("--exclude", default=None, metavar="IDS", help="Brokers to drain (comma-separated ids).")
@click.option("--out", "out_path", metavar="PLAN.json",
              help="Write the proposed JSON here (and PLAN-rollback.json, PLAN-step-K.json with --batches).")
@click.option("--rollback", "rollback_path", metavar="FILE.json", help="Where to write the rollback JSON.")
@click.option("--kafka-seed", type=int, default=0, show_default=True,
              help="Seed for the random start of Kafka's --generate in the comparison.")
@click.option("--kafka-version", default=None, metavar="MAJOR.MINOR[.PATCH]",
              help="The Kafka release whose --generate the plan is compared with: AdminUtils up to 4.0, the striped "
                   "placer from 4.1. Default: the cluster's, inferred (--bootstrap-server), else 4.4.")
@click.option("--plot", "plot_path", metavar="FILE.png", help="Draw replicas and leaders per broker before/after.")
@click.option("--report", "report_path", metavar="FILE.html",
              help="Write an interactive page: per broker disk, bytes in, replicas and leaders now / plan / Kafka's "
                   "--generate, the goals table, and every move with the goal it serves.")
@click.option("--json", "as_json", is_flag=True, help="Write the summary (and, without --out, the plan) as JSON.")
@click.option("--bootstrap-server", default=None, metavar="HOST:PORT",
              help="Read the current assignment from this cluster instead of a file.")
@click.option("--topic", "topics", multiple=True, metavar="NAME",
              help="With --bootstrap-server: the topics to plan (repeatable; default all).")
@click.option("--command-config", default=None, metavar="FILE", help="Client properties (security settings) for --bootstrap-server.")
@click.option("--timeout", type=float, default=10.0, show_default=True, help="Seconds to wait for the cluster.")
@click.option("--sample", default=None, metavar="DURATION",
              help="With --bootstrap-server: measure each partition's write rate over this window (e.g. 30s; at "
                   "least 1s) by reading sizes and end offsets twice; turns on the network goals.")
@click.option("--move-under-replicated", is_flag=True,
              help="With --bootstrap-server: plan under-replicated partitions too (by default they stay where they "
                   "are, and are said).")
def command(current_path: str | None, describe_path: str | None, brokers: str, sizes_path: str | None,
            tolerance: float, max_moves: int | None, batches: int, exclude: str | None, out_path: str | None,
            rollback_path: str | None, kafka_seed: int, plot_path: str | None, as_json: bool,
            bootstrap_server: str | None = None, topics: tuple[str, ...] = (), command_config: str | None = None,
            timeout: float = 10.0, kafka_version: str | None = None, rates_path: str | None = None,
            capacity_path: str | None = None, goals: str | None = None, disk_limit: float = 0.8,
            sample: str | None = None, move_under_replicated: bool = False,
            report_path: str | None = None) -> None:
    sources = [s for s in (current_path, describe_path, bootstrap_server) if s]
    if len(sources) != 1:
        raise KassignError("give the current assignment with exactly one of --current FILE.json, --describe-file FILE "
                           "or --bootstrap-server HOST:PORT")
    if topics and not bootstrap_server:
        raise KassignError("--topic selects topics of a live cluster: it needs --bootstrap-server")
    for name, given in (("--sample", sample is not None), ("--move-under-replicated", move_under_replicated)):
        if given and not bootstrap_server:
            raise KassignError(f"{name} reads a live cluster: it needs --bootstrap-server")
    if not brokers and not bootstrap_server:
        raise KassignError("missing option --brokers: the brokers that should hold replicas afterwards")
    live = None
    release = (release_for(kafka_version, "classic").label, "given", "as given (--kafka-version)") \
        if kafka_version is not None else None
    if current_path:
        current = _read_json(current_path, "--current")
    elif bootstrap_server:
        live, release = _read_live(bootstrap_server, topics, command_config, timeout, release, sample,
                                   capacity_path, move_under_replicated, as_json)
        current = live.current
    else:
        try:  # `kafka-topics.sh --describe ... | kassign plan --describe-file -` works too
            text = sys.stdin.read() if describe_path == "-" else Path(describe_path).read_text()  # type: ignore[arg-type]
        except OSError as err:
            raise KassignError(f"cannot read --describe-file {describe_path!r}: {err.strerror or err}") from None
        except UnicodeDecodeError:
            raise KassignError(f"--describe-file {describe_path!r} is not UTF-8 text") from None
        current = parse_describe(text)
    broker_list = parse_broker_list(brokers) if brokers else live.brokers  # type: ignore[union-attr]
    sizes = read_sizes(sizes_path) if sizes_path else (live.sizes if live is not None else None)
    options: dict[str, Any] = {"batches": batches, "exclude": _parse_ids(exclude)}
    if max_moves is not None:
        options["max_moves"] = max_moves
    live_rates = live.rates if live is not None and not rates_path else None
    if sizes is not None or rates_path or live_rates is not None:
        options["tolerance"] = tolerance
    goal_options: dict[str, Any] = {}
    if rates_path:
        goal_options["rates"] = read_sizes(rates_path, "rates")
    elif live_rates is not None:
        goal_options["rates"] = live_rates
    if live is not None and live.disk is not None:
        goal_options["disk"] = live.disk
    if capacity_path:
        goal_options["capacity"] = _read_json(capacity_path, "--capacity")
    if goals is not None:
        goal_options["goals"] = goals
    plan = plan_reassignment(current, broker_list, sizes=sizes, disk_limit=disk_limit, **goal_options, **options)
    problem = plan.problem
    if live is not None:
        plan.summary.setdefault("inputs", {})["cluster"] = live.inputs_json()
        plan.summary["notes"] = list(live.notes) + list(plan.summary.get("notes", []))
    if release is None:
        release = (DEFAULT_KAFKA_VERSION, "default", f"no cluster to ask; Kafka {DEFAULT_KAFKA_VERSION}, the default")
    kafka_placement = kafka_generate(problem, kafka_seed, release[0])
    kafka = figures(problem, kafka_placement)
    kafka.update({"kafka_version": release[0], "kafka_version_from": release[1], "kafka_version_why": release[2],
                  "placer": generate_placer(release[0])[0]})
    files: dict[str, Any] = {}
    if out_path:
        out = Path(out_path)
        rollback = Path(rollback_path) if rollback_path else out.with_name(f"{out.stem}-rollback{out.suffix or '.json'}")
        _write(out, dict(plan))
        _write(rollback, plan.rollback)
        files = {"plan": str(out), "rollback": str(rollback)}
        if len(plan.batches) > 1:
            files["steps"] = []
            for k, step in enumerate(plan.batches, 1):
                step_path = out.with_name(f"{out.stem}-step-{k}{out.suffix or '.json'}")
                _write(step_path, step)
                files["steps"].append(str(step_path))
    elif rollback_path:
        raise KassignError("--rollback needs --out")
    if plot_path:
        from kassign.replicas.plan._plot import plan_chart

        plan_chart(plan.summary["brokers"], kafka["brokers"], plot_path,
                   f"{problem.num_partitions} partitions: now, kassign plan, Kafka --generate")
        files["plot"] = plot_path
    moves = explain(plan.context, plan.replicas) if (as_json or report_path) else None
    if report_path:
        from kassign.replicas.plan._html import write_report

        write_report(report_path, plan, kafka_placement, kafka, moves)
        files["report"] = report_path
    if as_json:
        document: dict[str, Any] = {"summary": plan.summary, "kafka_generate": kafka, "kafka_seed": kafka_seed,
                                    "kafka_version": kafka["kafka_version"],
                                    "files": files, "moves": moves_json(plan.context, moves),
                                    "moves_by_goal": moves.counts()}
        if not out_path:
            document["proposed"] = dict(plan)
            if len(plan.batches) > 1:
                document["steps"] = plan.batches
        emit_json(document)
        return
    _print_summary(plan.summary, kafka, files, kafka_seed)
    if goal_options:
        _print_goals(plan.summary)


def _goal_figure(row: dict, value: Any) -> str:
    """A goal's number in its own unit: hard goals as a share of the limit, ratio goals as x the mean."""
    if value is None:
        return "-"
    if row["kind"] == "hard":
        return "rule kept" if row["name"] == "rack" and value == 1 else f"{value:.1%} of limit"
    if row["name"] in ("disk", "network-in", "leader-bytes-in"):
        return f"{value:.3f}x mean"
    return str(value)


def _print_goals(summary: dict) -> None:
    optimal = summary.get("goals_optimal", {})
    rows = [[row["name"], row["kind"], _goal_figure(row, row["before"]), _goal_figure(row, row["after"]),
             _goal_figure(row, row["bound"]), "yes" if row["met"] else "NO",
             "limit kept" if row["kind"] == "hard" else "yes" if optimal.get(row["name"]) else "-"]
            for row in summary["goals"]]
    notes = []
    tail = [k for k in ("fewest moves", "fewest bytes moved", "fewest leader changes") if k in optimal]
    if tail:
        notes.append("then " + ", ".join(f"{k} ({'proven' if optimal[k] else 'not proven'})" for k in tail))
    notes.append(f"solver: {summary.get('goals_solver')}; best possible: no plan meeting the hard goals does better")
    print_table("goals, in order", ["goal", "kind", "now", "plan", "best possible", "met", "proven optimal"], rows,
                notes=notes)


def _print_summary(summary: dict, kafka: dict, files: dict, seed: int) -> None:
    sized = "bytes_moved" in summary
    kafka_by_id = {row["broker"]: row for row in kafka["brokers"]}
    columns = ["broker", "rack", "replicas", "leaders"] + (["bytes"] if sized else []) + \
        ["Kafka --generate replicas", "Kafka leaders"]
    rows = []
    for row in summary["brokers"]:
        k = kafka_by_id.get(row["broker"], {})
        label = row["broker"] if row["target"] else f"{row['broker']} ({'drained' if row['excluded'] else 'removed'})"
        line = [label, row["rack"] or "-",
                _arrow(row["replicas_before"], row["replicas_after"]), _arrow(row["leaders_before"], row["leaders_after"])]
        if sized:
            line.append(_arrow(human_bytes(row["bytes_before"]), human_bytes(row["bytes_after"])))
        line += [k.get("replicas_after", 0), k.get("leaders_after", 0)]
        rows.append(line)
    print_table("per broker: now -> plan", columns, rows)
    if len(summary["racks"]) > 1:
        rack_rows = []
        for rack, values in summary["racks"].items():
            k = kafka["racks"].get(rack, {})
            line = [rack, values["brokers"], _arrow(values["replicas_before"], values["replicas_after"]),
                    _arrow(values["leaders_before"], values["leaders_after"])]
            if sized:
                line.append(_arrow(human_bytes(values["bytes_before"]), human_bytes(values["bytes_after"])))
            line += [k.get("replicas_after", 0), k.get("leaders_after", 0)]
            rack_rows.append(line)
        print_table("per rack: now -> plan", ["rack", "brokers", "replicas", "leaders"] + (["bytes"] if sized else [])
                    + ["Kafka --generate replicas", "Kafka leaders"], rack_rows)
    metrics = [
        ("replicas moved", summary["replicas_moved"], kafka["replicas_moved"]),
        ("partitions changed", summary["partitions_changed"], kafka["partitions_changed"]),
        ("leaders changed", summary["leaders_changed"], kafka["leaders_changed"]),
        ("replica spread (max-min) after", summary["replica_spread_after"], kafka["replica_spread_after"]),
        ("leader spread (max-min) after", summary["leader_spread_after"], kafka["leader_spread_after"]),
    ]
    if sized:
        metrics.insert(1, ("bytes moved", human_bytes(summary["bytes_moved"]), human_bytes(kafka["bytes_moved"])))
        metrics.append(("largest broker / mean bytes", summary["bytes_max_over_mean_after"],
                        kafka["bytes_max_over_mean_after"]))
    notes = [f"replica spread now {summary['replica_spread_before']}, leader spread now "
             f"{summary['leader_spread_before']} (over the target brokers)"]
    if sized and "bytes_limit" in summary:
        limit = summary.get("bytes_limit")
        reached = summary.get("bytes_within_tolerance")
        bound = summary.get("bytes_moved_bound")
        proof = ("bytes moved proven the fewest" if summary.get("bytes_optimal") else
                 f"bytes moved not proven the fewest (no plan moves less than {human_bytes(bound)})"
                 if bound is not None else "bytes moved not proven the fewest")
        notes.append(f"bytes: largest broker {'within' if reached else 'NOT within'} {summary['tolerance']:.0%} of the "
                     f"mean (limit {human_bytes(limit)}); {proof} (solver: {summary.get('bytes_solver', 'heuristic')})")
    if "max_moves" in summary:
        notes.append(f"--max-moves {summary['max_moves']}: the most even plan would take "
                     f"{summary.get('moves_for_optimal_window', '?')} moves")
    notes += summary.get("notes", [])
    notes.append(generate_words(kafka["kafka_version"], seed)
                 + ("" if kafka["kafka_version_from"] == "default" else f"; release {kafka['kafka_version_from']}: "
                    f"{kafka['kafka_version_why']}"))
    for name, path in files.items():
        if name == "steps":
            notes.append(f"{len(path)} steps: {', '.join(path)} (run one after another)")
        else:
            notes.append(f"{name}: {path}")
    print_table("what moves", ["", "kassign plan", "Kafka --generate"], [list(m) for m in metrics], notes=notes)
    if not files:
        console().print("note: no --out given, nothing written (dry run)")


# Carrying a plan out: --execute, --verify PLAN, --cancel PLAN, --throttle, --concurrency, --force (kept apart, in
# kassign.cli.plan_execute, so that planning options and execution options change independently).
from kassign.cli.plan_execute import execution_options  # noqa: E402

command = execution_options(command)
