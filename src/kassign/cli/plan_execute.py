"""``kassign plan --execute / --verify PLAN / --cancel PLAN``: carrying a plan out on the cluster (the options are
added to ``kassign plan`` by :func:`execution_options`, so the planning command stays as it is).

- ``--execute`` (with ``--bootstrap-server`` and ``--out``): plans as usual, writes ``--out``, then carries it out
  (:mod:`kassign.kafka.executor`) with a progress bar; when ``--out`` already exists, that file is the plan carried
  out (resumed), nothing is planned. ``--throttle BYTES_PER_S``, ``--concurrency N`` (default 5), ``--force``.
- ``--verify PLAN.json``: where the plan stands; ``--cancel PLAN.json``: cancel its running moves, remove its
  throttle. Both with ``--bootstrap-server``.

Ctrl-C during ``--execute`` stops starting moves and leaves the running ones (a second Ctrl-C stops at once); the
command then says how to verify or cancel and exits 130. A cluster that does not answer for the executor's patience
(``--patience``, 5 minutes by default) ends the run the same way, with one line saying so and what to run, and
exit 1. Exit status: 0 when every move is done and in sync, 1 when some move failed or a moved partition is not in
sync or the run stopped short of the end (other than by Ctrl-C), 2 for bad input (nothing changed on the cluster).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import signal
import threading
from pathlib import Path
from typing import Any

import click

from kassign.cli.common import console, emit_json, print_table
from kassign.core.errors import Interrupted, KassignError
from kassign.core.units import parse_duration

DEFAULT_CONCURRENCY = 5


def _config(command_config: str | None) -> dict[str, str] | None:
    if not command_config:
        return None
    from kassign.kafka import metadata as live

    return live.read_command_config(command_config)


def _bytes(value: int | float) -> str:
    from kassign.replicas.plan import human_bytes

    return human_bytes(value)


def execution_options(command: click.Command) -> click.Command:
    """Adds the execution options to ``kassign plan`` and routes them (``--brokers`` stays required for
    planning, checked here since ``--verify`` and ``--cancel`` do not plan)."""
    for param in command.params:
        if param.name == "brokers":
            param.required = False
    command.params += [
        click.Option(["--execute"], is_flag=True,
                     help="Carry the plan out on --bootstrap-server's cluster (in batches, throttled, with progress); "
                          "an existing --out file is resumed."),
        click.Option(["--verify", "verify_path"], metavar="PLAN.json",
                     help="Where PLAN.json stands on --bootstrap-server's cluster: done, moving, not started; "
                          "throttles still set."),
        click.Option(["--cancel", "cancel_path"], metavar="PLAN.json",
                     help="Cancel PLAN.json's running moves and remove its throttle."),
        click.Option(["--throttle"], type=int, default=None, metavar="BYTES_PER_S",
                     help="With --execute: replication throttle, as kafka-reassign-partitions.sh --throttle sets it."),
        click.Option(["--concurrency"], type=int, default=None, metavar="N",
                     help=f"With --execute: at most N moves touching each broker at a time (default "
                          f"{DEFAULT_CONCURRENCY})."),
        click.Option(["--patience"], default=None, metavar="DURATION",
                     help="With --execute: how long a cluster that does not answer is asked again before the run "
                          "stops, the moves left running (default 5m; e.g. 30s, 20m)."),
        click.Option(["--force"], is_flag=True,
                     help="With --execute: go on although a reassignment this plan did not start is running "
                          "(it and its throttle are left alone)."),
    ]
    inner = command.callback
    assert inner is not None

    @functools.wraps(inner)
    def callback(**kwargs: Any) -> Any:
        execute = kwargs.pop("execute")
        verify_path, cancel_path = kwargs.pop("verify_path"), kwargs.pop("cancel_path")
        throttle, concurrency, force = kwargs.pop("throttle"), kwargs.pop("concurrency"), kwargs.pop("force")
        patience = kwargs.pop("patience")
        chosen = [name for name, on in (("--execute", execute), ("--verify", verify_path), ("--cancel", cancel_path))
                  if on]
        if len(chosen) > 1:
            raise KassignError(f"{' and '.join(chosen)} do different things: give one of them")
        if not execute:
            for name, value in (("--throttle", throttle), ("--concurrency", concurrency), ("--force", force or None),
                                ("--patience", patience)):
                if value is not None:
                    raise KassignError(f"{name} applies to --execute; without it kassign only plans")
        if verify_path or cancel_path:
            if not kwargs.get("bootstrap_server"):
                raise KassignError(f"{chosen[0]} needs --bootstrap-server HOST:PORT (the cluster the plan runs on)")
            if verify_path:
                return _verify(verify_path, kwargs)
            return _cancel(cancel_path, kwargs)
        if not execute:
            return inner(**kwargs)  # it asks for --brokers where no cluster names them
        patience_s = None if patience is None else parse_duration(patience, "--patience")
        return _execute(inner, kwargs, throttle, DEFAULT_CONCURRENCY if concurrency is None else concurrency, force,
                        patience_s)

    command.callback = callback
    return command


def _execute(inner: Any, kwargs: dict[str, Any], throttle: int | None, concurrency: int, force: bool,
             patience_s: float | None = None) -> int:
    from kassign.kafka import executor as E
    from kassign.replicas.execute.throttle import check_rate

    if isinstance(concurrency, bool) or concurrency < 1:
        raise KassignError(f"--concurrency must be a whole number of moves, at least 1, got {concurrency}")
    if throttle is not None:
        check_rate(throttle)
    if not kwargs.get("bootstrap_server"):
        raise KassignError("--execute needs --bootstrap-server HOST:PORT (the cluster to carry the plan out on)")
    if not kwargs.get("out_path"):
        raise KassignError("--execute needs --out PLAN.json: the plan file is where the execution's state is kept "
                           "(to verify, cancel or resume it)")
    out = Path(kwargs["out_path"])
    as_json = kwargs.get("as_json", False)
    planned: Any = None
    show = console()
    if out.exists():
        existing = E.read_plan(out)  # a bad file is one line before anything else
        if not as_json and existing.state is not None:
            show.print(f"resuming {out}: an earlier run wrote it (to plan afresh, name another --out file)")
        elif not as_json:
            show.print(f"carrying out {out} as it is: the file exists, nothing is planned (to plan afresh, name "
                       "another --out file)")
    else:
        if as_json:
            captured = io.StringIO()
            with contextlib.redirect_stdout(captured):
                inner(**kwargs)
            planned = json.loads(captured.getvalue())
        else:
            inner(**kwargs)
    stop = threading.Event()
    lost = None
    try:
        record = _run_with_progress(E, out, kwargs, throttle, concurrency, force, stop, quiet=as_json,
                                    patience_s=patience_s)
    except E.ClusterLost as err:  # the plan file holds where things stood; said below like any other stop
        lost, record = err, err.record
    ended = record["runs"][-1]["ended"]
    failed = [n for n, rec in record["moves"].items() if rec["state"] in ("failed", "cancelled")]
    behind = (record.get("in_sync") or {}).get("not_in_sync") or []
    if as_json:
        emit_json({"plan": planned, "file": str(out), "execution": record})
    else:
        _print_record(record, out)
    if ended != "finished":
        why = {"stopped": "Ctrl-C", "halted": "a move was cancelled or replaced by someone else",
               "blocked": "no waiting move fits its brokers' disks",
               "unreachable": f"the cluster did not answer for {lost.seconds:.0f} s: {lost.cause}" if lost
               else "the cluster did not answer"}.get(ended, ended)
        running = sum(rec["state"] == "running" for rec in record["moves"].values())
        waiting = sum(rec["state"] == "waiting" for rec in record["moves"].values())
        how = (f"kassign plan --bootstrap-server {kwargs['bootstrap_server']} --verify {out} (where it stands), "
               f"--cancel {out} (stop the running moves), or the same --execute again (resume)")
        click.echo(f"kassign: stopped ({why}): {running} move(s) still running on the cluster, {waiting} not "
                   f"started; {how}", err=True)
        return 130 if ended == "stopped" else 1
    return 1 if failed or behind else 0


def _run_with_progress(E: Any, out: Path, kwargs: dict[str, Any], throttle: int | None, concurrency: int,
                       force: bool, stop: threading.Event, quiet: bool,
                       patience_s: float | None = None) -> dict[str, Any]:
    """The executor with a rich progress bar (none with --json), Ctrl-C setting ``stop`` (twice: interrupted)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    presses = []

    def on_sigint(signum: int, frame: object) -> None:
        presses.append(signum)
        if len(presses) > 1:
            raise Interrupted("SIGINT", 130)
        stop.set()

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if in_main else None
    try:
        options = {"config": _config(kwargs.get("command_config")), "timeout": kwargs.get("timeout", 10.0),
                   "concurrency": concurrency, "throttle": throttle, "force": force, "stop": stop,
                   "disk_limit": _disk_limit(kwargs), "disk_bytes": _disk_bytes(E, kwargs, out),
                   "patience_s": patience_s}
        if quiet:
            return E.execute(out, kwargs["bootstrap_server"], **options)
        with Progress(TextColumn("moving"), BarColumn(), DownloadColumn(),
                      TextColumn("{task.fields[moves]}"), TextColumn("{task.fields[left]}"),
                      console=console(), transient=False) as bar:
            task = bar.add_task("moving", total=None, moves="", left="")

            def progress(p: Any) -> None:
                for line in p.lines:
                    bar.console.print(line, markup=False, highlight=False)
                left = "" if p.seconds_left is None else f"{_duration(p.seconds_left)} left"
                bar.update(task, total=max(p.bytes_total, 1), completed=p.bytes_copied,
                           moves=f"{p.done} done, {p.running} running, {p.waiting} waiting"
                                 + (f", {p.failed} failed" if p.failed else ""), left=left)
                if stop.is_set():
                    bar.console.print("Ctrl-C: no further move starts; the running ones go on (Ctrl-C again to "
                                      "quit at once)", markup=False)

            return E.execute(out, kwargs["bootstrap_server"], progress=progress, **options)
    finally:
        if in_main and previous is not None:
            signal.signal(signal.SIGINT, previous)


def _disk_bytes(E: Any, kwargs: dict[str, Any], out: Path) -> dict[int, int] | None:
    """The ``--capacity`` document's ``disk_bytes`` of each broker the plan places replicas on (the executor keeps
    every broker's disk under the plan's limit of that, as the plan did); None without a document."""
    path = kwargs.get("capacity_path")
    if not path:
        return None
    from kassign.replicas.capacity import parse_capacity

    document = parse_capacity(path)
    brokers = {b for target in E.read_plan(out).targets.values() for b in target}
    found = {b: document.for_broker(b).disk_bytes for b in sorted(brokers)}
    return {b: v for b, v in found.items() if v is not None} or None


def _disk_limit(kwargs: dict[str, Any]) -> float:
    """The plan's disk limit (a fraction of each broker's disk): the planning command's own where it has one."""
    from kassign.kafka.executor import DEFAULT_DISK_LIMIT

    value = kwargs.get("disk_limit")
    return DEFAULT_DISK_LIMIT if value is None else value


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def _throttle_words(record: dict[str, Any]) -> str:
    told = record["throttle_set"]
    still = told["topics"] + [f"broker {b}" for b in told["brokers"]]
    if not record.get("throttle"):
        return "none asked" + (f"; still set on {', '.join(still)}" if still else "")
    if still:
        return f"{record['throttle']:,} B/s, still set on {', '.join(still)}"
    return f"{record['throttle']:,} B/s, " + ("removed" if told["removed_at"] else "not needed (nothing moved)")


def _print_record(record: dict[str, Any], out: Path) -> None:
    counts: dict[str, int] = {}
    for rec in record["moves"].values():
        counts[rec["state"]] = counts.get(rec["state"], 0) + 1
    moved = sum(rec["bytes"] for rec in record["moves"].values() if rec["state"] == "done")
    rows = [["moves", ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "none"],
            ["bytes copied", _bytes(moved)], ["batches", len(record["batches"])],
            ["throttle", _throttle_words(record)]]
    elected = record.get("elected")
    if elected is not None:
        rows.append(["leader elections", f"{len(elected['asked'])} asked, {len(elected['errors'])} failed"])
    in_sync = record.get("in_sync")
    if in_sync is not None:
        rows.append(["in sync", f"{in_sync['checked'] - len(in_sync['not_in_sync'])} of {in_sync['checked']}"])
    notes = [f"{name}: {rec['error']}" for name, rec in record["moves"].items() if rec.get("error")]
    notes.append(f"state kept in {out}")
    print_table("execution", ["", ""], rows, notes=notes)


def _verify(path: str, kwargs: dict[str, Any]) -> int:
    from kassign.kafka import executor as E

    status = E.verify(path, kwargs["bootstrap_server"], config=_config(kwargs.get("command_config")),
                      timeout=kwargs.get("timeout", 10.0))
    if kwargs.get("as_json"):
        emit_json(status)
        return 0
    rows = [[name, entry["state"], str(entry["replicas"]), str(entry["target"]),
             _bytes(entry["bytes_left"]) if "bytes_left" in entry else "-"]
            for name, entry in status["partitions"].items()]
    print_table("partitions", ["partition", "state", "replicas", "target", "bytes left"], rows,
                notes=[", ".join(f"{v} {k}" for k, v in sorted(status["counts"].items()))])
    if status["brokers"]:
        print_table("per broker", ["broker", "moves in", "bytes left to copy onto it"],
                    [[b, v["moves_in"], _bytes(v["bytes_left_in"])] for b, v in status["brokers"].items()])
    show = console()
    if status["throttles"]:
        for where, values in status["throttles"].items():
            show.print(f"throttle still set on {where}: "
                       + ", ".join(f"{k}={v}" for k, v in sorted(values.items())), markup=False, highlight=False)
    else:
        show.print("no throttle set on the plan's topics and brokers")
    if status["foreign"]:
        show.print(f"reassignments running that this plan did not start: {', '.join(status['foreign'][:10])}",
                   markup=False, highlight=False)
    return 0


def _cancel(path: str, kwargs: dict[str, Any]) -> int:
    from kassign.kafka import executor as E

    result = E.cancel(path, kwargs["bootstrap_server"], config=_config(kwargs.get("command_config")),
                      timeout=kwargs.get("timeout", 10.0))
    if kwargs.get("as_json"):
        emit_json(result)
    else:
        show = console()
        show.print(f"cancelled {len(result['cancelled'])} running move(s)"
                   + (f": {', '.join(result['cancelled'][:10])}" if result["cancelled"] else ""), markup=False)
        removed = result["throttle_removed"]
        show.print("throttle removed from " + (", ".join(removed["topics"] + [f"broker {b}" for b in
                                                                             removed["brokers"]]) or "nothing"),
                   markup=False)
        for name, why in result["errors"].items():
            show.print(f"{name}: not cancelled: {why}", markup=False)
        for note in result["notes"]:
            show.print(f"note: {note}", markup=False)
    return 1 if result["errors"] else 0
