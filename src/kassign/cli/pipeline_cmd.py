"""``kassign pipeline``: the Spark data pipeline (issue #5)."""

from __future__ import annotations


import click

from kassign.cli.common import emit_json, json_option, print_table, printable
from kassign.core.errors import KassignError


def _brokers(text: str) -> list[tuple[int, str | None]]:
    from kassign.replicas.brokers import parse_broker_list

    return parse_broker_list(text)


def _scenario_file(path: str | None) -> dict | None:
    if path is None:
        return None
    import sys

    from kassign.core.documents import load_json
    from kassign.groups.scenario import parse_scenario, read_scenario_text

    if path == "-":
        doc = load_json(sys.stdin.read(), "scenario on stdin")
    else:
        doc = load_json(read_scenario_text(path), f"scenario file {path!r}")
    parse_scenario(doc)  # one-line error for a bad file
    return doc


@click.command("pipeline")
@click.argument("input_path", required=False, metavar="[INPUT]")
@click.option("--out", "-o", default="kassign-pipeline", show_default=True, help="Output directory (local).")
@click.option("--format", "input_format", type=click.Choice(["parquet", "csv", "json"]), default=None,
              help="Input format; guessed from the extension otherwise.")
@click.option("--key-column", default="key", show_default=True,
              help="Key column (string, binary, int or bigint; nulls allowed).")
@click.option("--key-type", type=click.Choice(["string", "bytes", "int", "long"]), default=None,
              help="Key serialiser; default from the column type (int -> int, bigint -> long). "
                   "int/long also parse a text column.")
@click.option("--value-column", default=None, help="Value column; record bytes = key bytes + value bytes.")
@click.option("--size-column", default=None, help="Column holding bytes per record.")
@click.option("--topic-column", default=None, help="Column naming each record's topic.")
@click.option("--null-value", default=None, metavar="TEXT",
              help="CSV: the field text that means null (e.g. NULL, or '' for empty fields). "
                   "By default an empty field is an empty string (an empty key is hashed).")
@click.option("--rows", type=int, default=3_000_000, show_default=True, help="Sample: number of records.")
@click.option("--keys", type=int, default=200_000, show_default=True, help="Sample: number of distinct keys.")
@click.option("--skew", type=float, default=0.9, show_default=True, help="Sample: Zipf exponent (0 = uniform).")
@click.option("--null-share", type=float, default=0.05, show_default=True, help="Sample: share of null keys.")
@click.option("--partitions", "-p", type=int, default=12, show_default=True, help="Partitions per topic.")
@click.option("--null-keys", "null_key_model", type=click.Choice(["sticky", "round-robin"]), default="sticky",
              show_default=True, help="Producer model for records without a key.")
@click.option("--batch-size", type=int, default=16384, show_default=True, help="Sticky model: batch.size in bytes.")
@click.option("--client-rack", "client_racks", default=None, metavar="RACK[,RACK...]",
              help="Sticky model: the producers' client.rack (the producer of input split i in the i-th rack, "
                   "cycling).")
@click.option("--partitioner-rack-aware", is_flag=True,
              help="Sticky model: partitioner.rack.aware=true (Kafka 4.4, KIP-1123): keyless records go to partitions "
                   "led in the producer's rack.")
@click.option("--leader-racks", "leader_racks", multiple=True, metavar="[TOPIC=]RACK,...",
              help="The racks of a topic's partition leaders, one per partition ('' for a leader without a rack); "
                   "repeatable, one per topic (no TOPIC=: every topic). Default: the scenario's partition_racks, "
                   "else the leaders of the replica placement on --brokers.")
@click.option("--members", type=int, default=4, show_default=True,
              help="Consumers in the group (all topics). With --group on live topics, the group's own members "
                   "are used unless --members is given.")
@click.option("--scenario", "scenario_path", type=click.Path(), default=None,
              help="Scenario JSON for the group instead ('-': standard input).")
@click.option("--brokers", default="0:rack-a,1:rack-b,2:rack-c,3:rack-a,4:rack-b,5:rack-c", show_default=True,
              metavar="ID[:RACK],...", help="Brokers for replica placement.")
@click.option("--replication-factor", "-r", type=int, default=3, show_default=True)
@click.option("--max-partitions", type=int, default=64, show_default=True, help="Sweep partition counts 1..N.")
@click.option("--target-share", type=float, default=0.1, show_default=True,
              help="Sweep: the hottest partition may carry at most this share of the bytes.")
@click.option("--seed", type=int, default=42, show_default=True, help="Seed for the sample, null keys, replica placement.")
@click.option("--placer", type=click.Choice(["striped", "legacy"]), default="striped", show_default=True,
              help="Replica placement: striped (KRaft controller, Kafka 4) or legacy (ZooKeeper-era AdminUtils).")
@click.option("--engine", type=click.Choice(["auto", "jvm", "arrow"]), default="auto", show_default=True,
              help="murmur2 engine: our JVM UDF, or the Arrow+numba UDF.")
@click.option("--write-partitioned", is_flag=True,
              help="Also write the partitioned table (every record with its partition) under --out.")
@click.option("--write-sample", is_flag=True, help="Also write the generated sample input under --out.")
@click.option("--producers", default=None, metavar="A,B,...",
              help="Producer agreement stage: place every record as each of these clients does "
                   "(e.g. java,librdkafka:consistent_random,sarama:hash) and compare with the first.")
@click.option("--bootstrap-server", "bootstrap", default=None, metavar="HOST:PORT[,...]",
              help="Read live topics from this Kafka cluster instead of INPUT (with --topic).")
@click.option("--topic", "topics", multiple=True, metavar="NAME", help="A topic to read (repeatable).")
@click.option("--command-config", type=click.Path(), default=None, metavar="FILE",
              help="Client properties for the cluster (security settings, isolation.level), as the Kafka tools take.")
@click.option("--group", default=None, metavar="GROUP",
              help="A group of any type (classic, consumer, share, streams): its members carry the consumer stages, "
                   "its offsets give the lag, and kassign checks its assignment (summary.json: group, group_check).")
@click.option("--kafka-version", default=None, metavar="MAJOR.MINOR[.PATCH]",
              help="The Kafka release the consumer-protocol and share strategies answer as, and whose Java producer "
                   "places keyless records (3.0-3.2: KIP-480; 3.3+: KIP-794). Default: the broker's, inferred from "
                   "ApiVersions (live topics), else 4.4.")
@click.option("--since", default=None, metavar="TIME",
              help="Read from each partition's first offset at or after TIME (ISO-8601 or epoch ms).")
@click.option("--last", type=int, default=None, metavar="N", help="Read the last N offsets of each partition.")
@click.option("--no-forensics", "no_forensics", is_flag=True,
              help="Live topics: skip telling which producer partitioner put each record where it is.")
@click.option("--master", default=None, help="Spark master URL (default local[*]).")
@click.option("--conf", "confs", multiple=True, metavar="KEY=VALUE", help="Spark configuration, repeatable.")
@json_option
def command(input_path: str | None, out: str, input_format: str | None, key_column: str, value_column: str | None,
            size_column: str | None, topic_column: str | None, rows: int, keys: int, skew: float, null_share: float,
            partitions: int, null_key_model: str, batch_size: int, members: int, scenario_path: str | None,
            brokers: str, replication_factor: int, max_partitions: int, target_share: float, seed: int, placer: str,
            engine: str, master: str | None, confs: tuple[str, ...], as_json: bool, key_type: str | None = None,
            producers: str | None = None, null_value: str | None = None, write_partitioned: bool = False,
            write_sample: bool = False, bootstrap: str | None = None, topics: tuple[str, ...] = (),
            command_config: str | None = None, group: str | None = None, since: str | None = None,
            last: int | None = None, no_forensics: bool = False, kafka_version: str | None = None,
            client_racks: str | None = None, partitioner_rack_aware: bool = False,
            leader_racks: tuple[str, ...] = ()) -> None:
    """Where a keyed data set's load lands: partitions, skew, consumers, brokers, rebalance cost.

    Without INPUT a Zipf-skewed sample is generated inside Spark. INPUT '-' reads standard input
    (local Spark only; give --format). With --bootstrap-server and --topic it reads live topics
    instead, and also tells which producer partitioner put each record where it is (forensics)
    and, with --group, the consumer lag. Writes Parquet tables, summary.json and report.html under
    --out; rows that cannot be placed are set aside there with their reason, never dropped.
    """
    # Only what judges the options here: the rest of the pipeline loads while Spark's JVM starts.
    from kassign.spark.options import PipelineOptions, check_options, preflight_live
    from kassign.spark.session import parse_conf, spark_session

    if bootstrap is not None:
        _check_live_flags()
    if input_path == "-" and scenario_path == "-":
        raise KassignError("INPUT and --scenario cannot both be '-' (standard input)")
    if input_path == "-" and input_format is None:
        raise KassignError("INPUT '-' (standard input) needs --format parquet|csv|json")
    if input_path == "-" and master is not None and not master.startswith("local"):
        raise KassignError("INPUT '-' (standard input) works with a local Spark only: executors cannot read the "
                           "driver's standard input; write it to a path the cluster can read")
    if input_path is None and bootstrap is None and (value_column or size_column or topic_column or key_column != "key"
                                                     or key_type or null_value is not None):
        raise KassignError("--key-column/--key-type/--value-column/--size-column/--topic-column/--null-value "
                           "need an INPUT path")
    stdin_copy = None
    extra = {}
    if input_path == "-":
        stdin_copy = _spool_stdin(input_format)
        input_path, extra = str(stdin_copy), {"input_label": "-"}
    try:
        options = PipelineOptions(
            out=out, input=input_path, input_format=input_format, key_column=key_column, value_column=value_column,
            size_column=size_column, topic_column=topic_column, rows=rows, keys=keys, skew=skew,
            null_share=null_share, partitions=partitions, null_key_model=null_key_model, batch_size=batch_size,
            members=members, scenario=_scenario_file(scenario_path), brokers=_brokers(brokers),
            replication_factor=replication_factor, max_partitions=max_partitions, target_share=target_share,
            seed=seed, placer=placer, engine=engine, key_type=key_type, producers=producers or (),
            null_value=null_value, extra=extra, write_partitioned=write_partitioned, write_sample=write_sample,
            bootstrap=bootstrap, topics=list(topics), group=group, since=since, last=last,
            client_config=_client_config(command_config), forensics=not no_forensics,
            members_from_group=not _given("members"), kafka_version=kafka_version,
            client_racks=_racks(client_racks), partitioner_rack_aware=partitioner_rack_aware,
            leader_racks=_leader_racks(leader_racks, scenario_path))
        check_options(options)
        conf = parse_conf(confs)
        preflight_live(options)

        def meanwhile() -> None:  # while the JVM starts: the pipeline's code, then its plotting and assignors
            from kassign.spark.pipeline import prepare_driver_meanwhile

            prepare_driver_meanwhile(options.strategies)

        def work(spark):
            from kassign.spark.pipeline import run_pipeline

            return run_pipeline(spark, options)

        summary = _run_quietly(lambda log: spark_session(master, conf, app_name="kassign pipeline", jvm_log=log),
                               work, meanwhile)
    finally:
        if stdin_copy is not None:
            import shutil

            shutil.rmtree(stdin_copy.parent, ignore_errors=True)
    if as_json:
        emit_json(summary)
        return
    _print_summary(summary, out)


# Options that describe a file or the generated sample: meaningless for live topics, so an error if given.
_FILE_ONLY = ("input_format", "key_column", "key_type", "value_column", "size_column", "topic_column", "null_value",
              "rows", "keys", "skew", "null_share", "partitions", "null_key_model", "batch_size",
              "write_partitioned", "write_sample", "producers", "client_racks", "partitioner_rack_aware",
              "leader_racks")


def _given(name: str) -> bool:
    """Whether option ``name`` was given on the command line (not left at its default)."""
    context = click.get_current_context()
    return context.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE


def _check_live_flags() -> None:
    context = click.get_current_context()
    given = [p for p in context.command.params if p.name in _FILE_ONLY and _given(p.name)]
    if given:
        flags = ", ".join(p.opts[0] for p in given)
        raise KassignError(f"{flags} describe{'s' if len(given) == 1 else ''} a file or the sample, not live topics "
                           "(their partition counts, keys and sizes come from the cluster)")


def _racks(text: str | None) -> list[str]:
    if text is None:
        return []
    racks = [r.strip() for r in text.split(",")]
    if not all(racks):
        raise KassignError(f"--client-rack takes RACK[,RACK...], got {text!r}")
    return racks


def _leader_racks(specs: tuple[str, ...], scenario_path: str | None) -> dict | None:
    """``--leader-racks [TOPIC=]RACK,...`` as topic -> racks; a spec without TOPIC= is kept under ``"*"`` and given
    to every topic of the data by the pipeline."""
    if not specs:
        return None
    found: dict[str, list[str | None]] = {}
    for spec in specs:
        topic, _, racks = spec.rpartition("=")
        topic = topic or "*"
        if topic in found:
            raise KassignError(f"--leader-racks names {'every topic' if topic == '*' else repr(topic)} twice")
        found[topic] = [r.strip() or None for r in racks.split(",")]
    return found


def _client_config(path: str | None) -> dict[str, str] | None:
    if path is None:
        return None
    from kassign.kafka.config import read_command_config

    return read_command_config(path)


class SparkFailure(Exception):
    """Spark failed in a way kassign did not foresee; its log is kept for the report."""


def _run_quietly(start, work, meanwhile=lambda: None):
    """``work(spark)`` with the JVM's chatter in a log file and kassign's progress line on the terminal. The
    log is removed afterwards unless something unforeseen failed (then the one-line error names it).
    ``meanwhile()`` runs while ``start`` starts Spark."""
    import os
    import tempfile
    from pathlib import Path

    from kassign.spark.console import progress

    log = Path(tempfile.gettempdir()) / f"kassign-spark-{os.getpid()}.log"
    keep = False
    try:
        spark = _started_while(start, log, meanwhile)
        try:
            _cancel_jobs_on_signals(spark)
            with progress(spark):
                return work(spark)
        finally:
            stop_before_exit(spark)
    except (KassignError, KeyboardInterrupt):
        raise
    except Exception as err:
        from kassign.cli import main

        if main.received is not None:  # a library turned the interruption into an error of its own
            raise main.received from None
        keep = log.exists()
        where = f"; Spark's log: {log}" if keep else ""
        raise SparkFailure(f"{type(err).__name__}: {err}{where}") from err
    finally:
        if not keep:
            log.unlink(missing_ok=True)


def stop_before_exit(spark) -> None:
    """``spark.stop()`` for a command that exits next: the JVM stops as always, but PySpark's accumulator
    server is not waited for. Its thread looks for the request to shut down every half second (0.25 s on
    average at every exit, 0.3-0.45 s measured); it is a daemon thread and ends with the process. The
    Unix-socket variant, which also removes its socket file, is stopped as usual."""
    import functools

    server = getattr(spark.sparkContext, "_accumulatorServer", None)
    if server is not None and isinstance(getattr(server, "server_address", None), tuple):
        server.shutdown = functools.partial(setattr, server, "server_shutdown", True)
    spark.stop()


def _started_while(start, log, meanwhile):
    """``start(log)`` on a thread of its own while ``meanwhile()`` runs on this one: the JVM's start is mostly
    waiting (for its process, then for its answers), which the rest of kassign's loading can fill. The session
    is then made this thread's active one (the JVM keeps that per thread). Should this thread fail or be
    interrupted first, it waits for the start to end and stops that Spark, so that no JVM outlives the command."""
    import threading

    outcome: dict = {}

    def launch() -> None:
        try:
            outcome["spark"] = start(log)
        except BaseException as err:  # handed to the waiting thread, which raises it
            outcome["error"] = err

    starting = threading.Thread(target=launch, name="kassign-spark-start", daemon=True)
    starting.start()
    try:
        meanwhile()
        starting.join()
    except BaseException:
        while starting.is_alive():
            try:
                starting.join()
            except BaseException:  # a second signal: the JVM must still be stopped once it is there
                pass
        if "spark" in outcome:
            outcome["spark"].stop()
        raise
    if "error" in outcome:
        raise outcome["error"]
    spark = outcome["spark"]
    spark._jvm.SparkSession.setActiveSession(spark._jsparkSession)
    return spark


def _cancel_jobs_on_signals(spark) -> None:
    """SIGINT/SIGTERM while Spark works: cancel its jobs, then end the command as the CLI does for any signal
    (PySpark's own SIGINT handler, installed with the context, would end in a KeyboardInterrupt instead). The
    cancelling runs on a thread of its own: the main thread may be inside a py4j call, whose connection a
    second call from the handler would re-enter."""
    import signal
    import threading

    from kassign.cli.main import interrupt_on_signals

    if threading.current_thread() is not threading.main_thread():
        return
    interrupt_on_signals()
    stop = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def cancel() -> None:
        try:
            spark.sparkContext.cancelAllJobs()
        except Exception:  # the JVM may already be going: stopping is what matters
            pass

    def cancel_then_stop(signum: int, frame: object) -> None:
        threading.Thread(target=cancel, name="kassign-cancel", daemon=True).start()
        stop[signum](signum, frame)

    for signum in stop:
        signal.signal(signum, cancel_then_stop)


def _spool_stdin(fmt: str):
    """Standard input copied to a private temporary file Spark can read (removed after the run)."""
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="kassign-stdin-"))
    target = folder / f"stdin.{'jsonl' if fmt == 'json' else fmt}"
    with target.open("wb") as sink:
        shutil.copyfileobj(sys.stdin.buffer, sink)
    return target


def _print_summary(summary: dict, out: str) -> None:
    from kassign.spark.tables import terminal_tables, verdict_lines

    for title, columns, rows, caption in terminal_tables(summary):
        print_table(title, columns, rows, caption=caption)
    for line in verdict_lines(summary):
        click.echo(printable(f"verdict: {line}"))
    click.echo(printable(f"tables, summary.json and report.html written to {out}"))
