"""``kassign pipeline``: where a keyed data set's load lands, from partitions to brokers.

Stages (each written as Parquet under ``out``):

0. input: read, check columns, set aside rows that cannot be placed (with a reason).
1. partitioned: every record with its partition (``kafka_partition``; null keys by a producer model).
2. partition_load: records, bytes, distinct keys (HyperLogLog), hottest keys per partition.
3. partition_sweep: hottest partition and skew for counts 1..max from one pass over key hashes.
4. consumer_load: per strategy, records and bytes per member (driver, from stage 2's rows).
5. broker_load: leader and replica bytes per broker and rack, replicas placed as a KRaft
   controller does (``placer="striped"``, the default) or as ZooKeeper-era AdminUtils did
   (``"legacy"``); the summary records the placer and seed.
6. rebalance_cost: what moves when a member leaves and when one joins.
7. producer agreement (with ``producers``): every record placed by each producer client, the
   share of records, keys and bytes landing elsewhere than under the first, and the
   per-partition load each would create (``kassign.spark.producers``).

Stages 1-6 model Kafka's Java producer. Keys are hashed as serialised: string columns as
UTF-8, binary as is, int and bigint columns (or text with ``key_type`` int/long) as Kafka's
IntegerSerializer and LongSerializer write them (4 or 8 bytes, big-endian).

The driver only ever collects per-partition (or per partition count) aggregates.
Data layout: per-record work stays in Spark columns (key bytes, int32 partitions, int64
sizes); the Python pieces that touch rows (null-key producers, the sweep) get Arrow
batches and work on numpy integer arrays.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kassign.client_partitioners import ClientPartitioner, resolve_list
from kassign.errors import KassignError
from kassign.keys import INT_WIDTHS, check_key_type
from kassign.spark import loads as stage_loads
from kassign.spark import producers as stage_producers
from kassign.spark.nullkeys import DEFAULT_BATCH_SIZE, MODELS, assign_null_keys
from kassign.spark.partition import engine_in_use, kafka_murmur2, kafka_partition
from kassign.spark.sample import SAMPLE_TOPIC, sample_frame

log = logging.getLogger(__name__)

HOT_KEYS = 3
DEFAULT_BROKERS = ((0, "rack-a"), (1, "rack-b"), (2, "rack-c"), (3, "rack-a"), (4, "rack-b"), (5, "rack-c"))
FORMATS = ("parquet", "csv", "json")
_EXTENSIONS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json"}


@dataclass
class PipelineOptions:
    out: str
    input: str | None = None
    input_format: str | None = None
    key_column: str = "key"
    value_column: str | None = None
    size_column: str | None = None
    topic_column: str | None = None
    rows: int = 3_000_000
    keys: int = 200_000
    skew: float = 0.9
    null_share: float = 0.05
    partitions: int = 12
    null_key_model: str = "sticky"
    batch_size: int = DEFAULT_BATCH_SIZE
    members: int = 4
    scenario: dict | None = None
    strategies: Sequence[str] = stage_loads.STRATEGIES
    brokers: Sequence[tuple[int, str | None]] = DEFAULT_BROKERS
    replication_factor: int = 3
    max_partitions: int = 64
    target_share: float = 0.1
    seed: int = 42
    placer: str = "striped"
    engine: str = "auto"
    producers: Sequence[str] = ()
    key_type: str | None = None
    extra: dict = field(default_factory=dict)


# -- stage 0: input -------------------------------------------------------------------------------------------

def _detect_format(path: str, explicit: str | None) -> str:
    if explicit:
        if explicit not in FORMATS:
            raise KassignError(f"--format must be one of {', '.join(FORMATS)}, got {explicit!r}")
        return explicit
    suffix = Path(path.rstrip("/")).suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    local = Path(path)
    if local.is_dir():
        for child in sorted(local.rglob("*")):
            if child.suffix.lower() in _EXTENSIONS:
                return _EXTENSIONS[child.suffix.lower()]
    return "parquet"


def read_input(spark: SparkSession, path: str, fmt: str | None) -> DataFrame:
    fmt = _detect_format(path, fmt)
    reader = spark.read
    if fmt == "csv":
        reader = reader.option("header", "true").option("mode", "PERMISSIVE")
    if fmt == "json":
        reader = reader.option("mode", "PERMISSIVE")
    try:
        df = reader.format(fmt).load(path)
        df.schema  # resolves the path now, so a bad one fails here with a clear message
    except Exception as err:  # AnalysisException (path not found, unreadable files) arrives wrapped by py4j
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise KassignError(f"cannot read {fmt} input {path!r}: {first}") from None
    return df


def _require_column(df: DataFrame, name: str, option: str) -> T.DataType:
    fields = {f.name: f.dataType for f in df.schema.fields}
    if name not in fields:
        visible = ", ".join(n for n in fields if n != "_corrupt_record")
        raise KassignError(f"{option} {name!r} is not a column of the input; columns are: {visible}")
    return fields[name]


_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)


def key_serialiser(df: DataFrame, opts: PipelineOptions) -> str | None:
    """``int`` or ``long`` when keys are serialised as integers, None for text/binary keys.

    Without --key-type the column type decides: int -> int, bigint -> long, string/binary as
    they are. --key-type int|long also parses a text column (rows that do not parse are set aside).
    """
    column_type = _require_column(df, opts.key_column, "--key-column")
    wanted = check_key_type(opts.key_type)
    name = f"--key-column {opts.key_column!r} has type {column_type.simpleString()}"
    if wanted in INT_WIDTHS:
        if not isinstance(column_type, (*_INTEGRAL, T.StringType)):
            raise KassignError(f"{name}; --key-type {wanted} needs an integer or text column")
        return wanted
    if isinstance(column_type, (T.StringType, T.BinaryType)):
        return None
    if wanted is None and isinstance(column_type, T.IntegerType):
        return "int"
    if wanted is None and isinstance(column_type, T.LongType):
        return "long"
    need = f"--key-type {wanted} needs" if wanted else "keys must be"
    raise KassignError(f"{name}; {need} string or binary, or int/bigint (Kafka hashes the serialised bytes; "
                       "--key-type int|long serialises integers and numeric text)")


def _key_and_size(opts: PipelineOptions, serialiser: str | None) -> tuple[F.Column, F.Column, list]:
    """The key column to hash, its serialised length, and reasons to set a row aside."""
    raw = F.col(opts.key_column)
    if serialiser is None:
        return raw, F.coalesce(F.octet_length(raw), F.lit(0)), []
    # try_cast (not cast): under ANSI a bad value would fail the whole job instead of one row.
    sql_type = "INT" if serialiser == "int" else "BIGINT"
    key = F.expr(f"try_cast(`{opts.key_column.replace('`', '``')}` AS {sql_type})")
    unfit = raw.isNotNull() & key.isNull()
    size = F.when(key.isNull(), F.lit(0)).otherwise(F.lit(INT_WIDTHS[serialiser]))
    return key, size, [(unfit, f"key column {opts.key_column!r} is not a valid {serialiser}")]


def normalise(df: DataFrame, opts: PipelineOptions) -> tuple[DataFrame, DataFrame]:
    """(records with topic/key/bytes, rows set aside with a reason). Columns are checked first."""
    serialiser = key_serialiser(df, opts)
    if opts.value_column and opts.size_column:
        raise KassignError("give --value-column or --size-column, not both")
    key, key_size, reasons = _key_and_size(opts, serialiser)
    if opts.size_column:
        _require_column(df, opts.size_column, "--size-column")
        size = F.col(opts.size_column).cast("long")
        reasons.append((size.isNull() | (size < 0), f"size column {opts.size_column!r} missing, not a number or negative"))
    elif opts.value_column:
        _require_column(df, opts.value_column, "--value-column")
        # Kafka's record size counts key and value bytes; a null value (tombstone) has 0 value bytes.
        size = key_size + F.coalesce(F.octet_length(F.col(opts.value_column)), F.lit(0))
    else:
        size = key_size
    if opts.topic_column:
        _require_column(df, opts.topic_column, "--topic-column")
        topic = F.col(opts.topic_column).cast("string")
        reasons.append((topic.isNull(), f"topic column {opts.topic_column!r} is null"))
    else:
        topic = F.lit(SAMPLE_TOPIC if opts.input is None else "topic")
    if "_corrupt_record" in df.columns:
        reasons.insert(0, (F.col("_corrupt_record").isNotNull(), "unparseable input line"))
    reason = F.lit(None).cast("string")
    for condition, text in reversed(reasons):
        reason = F.when(condition, F.lit(text)).otherwise(reason)
    tagged = df.select(topic.alias("topic"), key.alias("key"), size.cast("long").alias("bytes"), reason.alias("reason"))
    good = tagged.filter(F.col("reason").isNull()).drop("reason")
    bad = tagged.filter(F.col("reason").isNotNull())
    return good, bad


# -- stage 1: partitioning ------------------------------------------------------------------------------------

def partition_records(records: DataFrame, counts: Mapping[str, int], opts: PipelineOptions,
                      key_type: str | None = None) -> DataFrame:
    if opts.null_key_model not in MODELS:
        raise KassignError(f"--null-keys must be one of {', '.join(MODELS)}, got {opts.null_key_model!r}")
    partition = None
    for topic, n in counts.items():
        expr = kafka_partition("key", n, engine=opts.engine, key_type=key_type)
        partition = expr if partition is None else F.when(F.col("topic") == topic, expr).otherwise(partition)
    keyed = records.filter(F.col("key").isNotNull()).withColumn("partition", partition)
    keyless = records.filter(F.col("key").isNull())
    schema = T.StructType(keyless.schema.fields + [T.StructField("partition", T.IntegerType())])
    placed = keyless.mapInArrow(
        assign_null_keys(opts.null_key_model, dict(counts), opts.partitions, opts.batch_size, opts.seed), schema)
    return keyed.unionByName(placed)


# -- stage 2: partition load ----------------------------------------------------------------------------------

def _display_key(df: DataFrame) -> F.Column:
    key_type = df.schema["key"].dataType
    if isinstance(key_type, _INTEGRAL):
        return F.col("key").cast("string")
    return F.col("key") if isinstance(key_type, T.StringType) else F.concat(F.lit("0x"), F.lower(F.hex("key")))


def partition_load(partitioned: DataFrame, key_stats: DataFrame) -> DataFrame:
    totals = partitioned.groupBy("topic", "partition").agg(
        F.count(F.lit(1)).alias("records"),
        F.sum("bytes").alias("bytes"),
        F.count("key").alias("keyed_records"),
        F.approx_count_distinct("key").alias("distinct_keys_approx"),
    )
    rank = Window.partitionBy("topic", "partition").orderBy(F.desc("key_bytes"), F.asc("key_display"))
    hot = (key_stats.withColumn("rank", F.row_number().over(rank)).filter(F.col("rank") <= HOT_KEYS)
           .groupBy("topic", "partition")
           .agg(F.sort_array(F.collect_list(F.struct("rank", "key_display", "key_records", "key_bytes"))).alias("hot")))
    return totals.join(hot, ["topic", "partition"], "left").withColumn(
        "hot_keys", F.transform("hot", lambda h: F.struct(
            h["key_display"].alias("key"), h["key_records"].alias("records"), h["key_bytes"].alias("bytes"),
            F.round(h["key_bytes"] / F.greatest(F.col("bytes"), F.lit(1)), 6).alias("share")))
    ).drop("hot").orderBy("topic", "partition")


# -- stage 3: partition-count sweep ---------------------------------------------------------------------------

def _sweep_batches(max_partitions: int):
    def run(batches):
        for batch in batches:
            topics = batch.column("topic").to_numpy(zero_copy_only=False)
            hashes = batch.column("hash").to_numpy(zero_copy_only=False).astype(np.int64)
            sizes = batch.column("key_bytes").to_numpy(zero_copy_only=False).astype(np.float64)
            out_topic, out_n, out_p, out_bytes = [], [], [], []
            for topic in np.unique(topics) if len(topics) else []:
                rows = topics == topic
                h, w = hashes[rows], sizes[rows]
                for n in range(1, max_partitions + 1):
                    per_partition = np.bincount(h % n, weights=w, minlength=n)
                    out_topic.extend([str(topic)] * n)
                    out_n.append(np.full(n, n, dtype=np.int32))
                    out_p.append(np.arange(n, dtype=np.int32))
                    out_bytes.append(per_partition.astype(np.int64))
            if out_topic:
                yield pa.RecordBatch.from_arrays(
                    [pa.array(out_topic, pa.string()), pa.array(np.concatenate(out_n)),
                     pa.array(np.concatenate(out_p)), pa.array(np.concatenate(out_bytes))],
                    names=["topic", "partitions", "partition", "bytes"])
    return run


def partition_sweep(key_stats: DataFrame, max_partitions: int) -> DataFrame:
    """Keyed bytes per partition for every count 1..max, from each distinct key's hash (one pass)."""
    schema = "topic string, partitions int, partition int, bytes long"
    return (key_stats.select("topic", "hash", "key_bytes")
            .mapInArrow(_sweep_batches(max_partitions), schema)
            .groupBy("topic", "partitions", "partition").agg(F.sum("bytes").alias("keyed_bytes")))


# -- the whole job ---------------------------------------------------------------------------------------------

def _write(df: DataFrame, out: Path, name: str) -> DataFrame:
    path = (out / name).as_posix()
    df.write.mode("overwrite").parquet(path)
    return df.sparkSession.read.parquet(path)


def _scenario(opts: PipelineOptions, topics: Sequence[str]) -> tuple[dict, dict[str, int]]:
    if opts.scenario is not None:
        from kassign.scenario import parse_scenario

        parse_scenario(opts.scenario)  # one-line errors for a malformed file, before Spark runs
        counts = {t: opts.scenario["topics"].get(t, opts.partitions) for t in topics}
        scenario = {"topics": {**counts, **opts.scenario["topics"]}, "members": opts.scenario["members"]}
        return scenario, counts
    if opts.members < 1:
        raise KassignError(f"--members must be >= 1, got {opts.members}")
    counts = {t: opts.partitions for t in topics}
    members = {f"consumer-{i}": {"topics": list(topics)} for i in range(opts.members)}
    return {"topics": counts, "members": members}, counts


def _is_local_path(path: str) -> bool:
    return "://" not in path and not path.startswith("file:") and not any(c in path for c in "*?[{")


def _local_columns(path: str, fmt: str) -> list[str] | None:
    """Column names of a local Parquet or CSV input, read by pyarrow; None when only Spark can tell.

    JSON lines are left to Spark: its schema is the union over all lines, which a sample cannot promise.
    """
    if fmt not in ("parquet", "csv"):
        return None
    try:
        import pyarrow.dataset as ds

        return list(ds.dataset(path, format=fmt).schema.names)
    except Exception:  # unreadable for pyarrow: Spark gets the final word (and gives its own error)
        return None


def _check_local_columns(opts: PipelineOptions) -> None:
    if opts.input is None or not _is_local_path(opts.input):
        return
    columns = _local_columns(opts.input, _detect_format(opts.input, opts.input_format))
    if columns is None:
        return
    for option, name in (("--key-column", opts.key_column), ("--value-column", opts.value_column),
                         ("--size-column", opts.size_column), ("--topic-column", opts.topic_column)):
        if name is not None and name not in columns:
            raise KassignError(f"{option} {name!r} is not a column of the input; columns are: {', '.join(columns)}")


def check_options(opts: PipelineOptions) -> None:
    """Everything that can be judged before Spark starts (a cluster session is costly to open for nothing)."""
    if opts.input is not None and _is_local_path(opts.input) and not Path(opts.input).exists():
        raise KassignError(f"cannot read input {opts.input!r}: no such file or directory")
    _check_local_columns(opts)
    if opts.partitions < 1:
        raise KassignError(f"--partitions must be >= 1, got {opts.partitions}")
    if opts.max_partitions < 1 or opts.max_partitions > 4096:
        raise KassignError(f"--max-partitions must be between 1 and 4096, got {opts.max_partitions}")
    if opts.batch_size < 1:
        raise KassignError(f"--batch-size must be >= 1, got {opts.batch_size}")
    check_key_type(opts.key_type)
    producer_clients(opts)
    if not 0 < opts.target_share <= 1:
        raise KassignError(f"--target-share must be in (0, 1], got {opts.target_share}")
    if not 1 <= opts.replication_factor <= len(opts.brokers):
        raise KassignError(f"--replication-factor must be between 1 and the number of brokers ({len(opts.brokers)}), "
                           f"got {opts.replication_factor}")


def producer_clients(opts: PipelineOptions) -> list[ClientPartitioner]:
    """The partitioners of ``opts.producers`` (a list or one comma-separated string), checked."""
    if not opts.producers:
        return []
    text = opts.producers if isinstance(opts.producers, str) else ",".join(opts.producers)
    return resolve_list(text)


def _producer_stage(spark: SparkSession, out: Path, partitioned: DataFrame, counts: Mapping[str, int],
                    opts: PipelineOptions, key_type: str | None) -> dict[str, Any] | None:
    """Stage 7: producer agreement (None without --producers)."""
    clients = producer_clients(opts)
    if not clients:
        return None
    spark.sparkContext.setJobDescription("kassign stage 7: producer agreement")
    placed = _write(stage_producers.producer_partitions(
        partitioned, counts, clients, opts.null_key_model, opts.batch_size, opts.seed, opts.partitions, opts.engine,
        key_type), out, "producer_partitions")
    agreement = stage_producers.agreement(placed, clients)
    load = stage_producers.complete_load(stage_producers.producer_load(placed, clients), clients, counts)
    for row in agreement:
        row["null_keys"] = stage_producers.describe_null_keys(
            next(c for c in clients if c.name == row["producer"]), opts.null_key_model, opts.batch_size, counts)
        row["max_over_mean_bytes"] = stage_producers.skew(load, row["producer"])
    _write_rows(out, "producer_agreement", agreement)
    _write_rows(out, "producer_load", load)
    return {"reference": clients[0].name,
            "columns": {stage_producers.column_name(i): c.name for i, c in enumerate(clients)},
            "agreement": agreement, "load": load}


def run_pipeline(spark: SparkSession, opts: PipelineOptions) -> dict[str, Any]:
    """Run every stage, write the tables and summary.json under ``opts.out``; return the summary."""
    check_options(opts)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    if opts.input is None:
        source = sample_frame(spark, opts.rows, opts.keys, opts.skew, opts.null_share, opts.seed)
        raw = _write(source, out, "sample_input")
        input_desc = {"kind": "sample", "rows": opts.rows, "keys": opts.keys, "skew": opts.skew,
                      "null_share": opts.null_share, "seed": opts.seed}
        opts.size_column = opts.size_column or "value_size"
        opts.key_column, opts.topic_column = "key", "topic"
    else:
        raw = read_input(spark, opts.input, opts.input_format)
        input_desc = {"kind": "file", "path": opts.input, "format": _detect_format(opts.input, opts.input_format)}
    key_type = key_serialiser(raw, opts)
    records, set_aside = normalise(raw, opts)

    spark.sparkContext.setJobDescription("kassign: count input and set-aside rows")
    input_rows = raw.count()
    aside = _write(set_aside, out, "set_aside")
    aside_counts = {r["reason"]: r["rows"] for r in aside.groupBy("reason").agg(F.count(F.lit(1)).alias("rows")).collect()}
    topics = sorted(r["topic"] for r in records.select("topic").distinct().collect())
    if not topics:
        raise KassignError("no records to place: the input is empty or every row was set aside "
                           f"({', '.join(f'{k}: {v}' for k, v in aside_counts.items()) or 'no rows'})")
    scenario, counts = _scenario(opts, topics)

    spark.sparkContext.setJobDescription("kassign stage 1: partitioning")
    partitioned = _write(partition_records(records, counts, opts, key_type), out, "partitioned")

    spark.sparkContext.setJobDescription("kassign stage 2: partition load")
    key_stats = (partitioned.filter(F.col("key").isNotNull())
                 .groupBy("topic", "key", "partition")
                 .agg(F.count(F.lit(1)).alias("key_records"), F.sum("bytes").alias("key_bytes"))
                 .withColumn("key_display", _display_key(partitioned))
                 .withColumn("hash", kafka_murmur2("key", engine=opts.engine, key_type=key_type)
                             .bitwiseAND(F.lit(0x7FFFFFFF)).cast("long")))
    key_stats = _write(key_stats, out, "key_stats")
    load_table = _write(partition_load(partitioned, key_stats), out, "partition_load")
    load_rows = load_table.collect()  # one row per partition
    loads = {(r["topic"], r["partition"]): (r["records"], r["bytes"]) for r in load_rows}
    for topic, n in counts.items():  # partitions that got no record still exist
        for p in range(n):
            loads.setdefault((topic, p), (0, 0))

    spark.sparkContext.setJobDescription("kassign stage 3: partition-count sweep")
    sweep_table = _write(partition_sweep(key_stats, opts.max_partitions), out, "partition_sweep")
    sweep = _sweep_summary(sweep_table, partitioned, key_stats, opts)

    consumers_strategies, skipped = stage_loads.available_strategies(opts.strategies)
    consumers = stage_loads.consumer_load(scenario, consumers_strategies, loads)
    brokers = stage_loads.broker_load(opts.brokers, counts, opts.replication_factor, loads, opts.seed, opts.placer)
    rebalance = stage_loads.rebalance_cost(scenario, consumers, loads)
    _write_driver_tables(spark, out, consumers, brokers, rebalance)
    producers = _producer_stage(spark, out, partitioned, counts, opts, key_type)

    placed_rows = sum(r for r, _ in loads.values())
    summary = {
        "input": input_desc,
        "engine": engine_in_use(spark) if opts.engine == "auto" else opts.engine,
        "partitions": counts,
        "null_key_model": {"model": opts.null_key_model, "batch_size": opts.batch_size, "seed": opts.seed,
                           "producer": "one per Spark input split"},
        "rows": _conservation(input_rows, aside_counts, placed_rows, load_rows, sweep, consumers, brokers, producers),
        "key_type": key_type or "as is (string: UTF-8, binary: raw)",
        "partition_load": [_load_row(r) for r in load_rows],
        "sweep": sweep,
        "consumers": {s: {k: v for k, v in c.items()} for s, c in consumers.items()},
        "skipped_strategies": skipped,
        "brokers": brokers,
        "rebalance": rebalance,
        "tables": sorted(p.name for p in out.iterdir() if p.is_dir()),
    }
    if producers is not None:
        summary["producers"] = producers
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    from kassign.spark.report_html import write_report

    write_report(summary, out / "report.html")
    spark.sparkContext.setJobDescription(None)
    return summary


def _load_row(r: Any) -> dict[str, Any]:
    return {"topic": r["topic"], "partition": r["partition"], "records": r["records"], "bytes": r["bytes"],
            "keyed_records": r["keyed_records"], "distinct_keys_approx": r["distinct_keys_approx"],
            "hot_keys": [h.asDict() for h in (r["hot_keys"] or [])]}


def _sweep_summary(sweep_table: DataFrame, partitioned: DataFrame, key_stats: DataFrame, opts: PipelineOptions) -> dict[str, Any]:
    """Per topic: add keyless bytes (spread evenly, as either null-key model does on average) and judge."""
    hottest = {(r["topic"], r["partitions"]): r["hot"] for r in
               sweep_table.groupBy("topic", "partitions").agg(F.max("keyed_bytes").alias("hot")).collect()}
    per_topic = partitioned.groupBy("topic").agg(
        F.sum("bytes").alias("bytes"), F.sum(F.when(F.col("key").isNull(), F.col("bytes")).otherwise(0)).alias("null_bytes"),
        F.count(F.lit(1)).alias("records")).collect()
    hottest_key = {r["topic"]: r["hot"] for r in
                   key_stats.groupBy("topic").agg(F.max("key_bytes").alias("hot")).collect()}
    result = {}
    for row in per_topic:
        topic, total, null_bytes = row["topic"], row["bytes"] or 0, row["null_bytes"] or 0
        rows = [(n, int(round(hottest.get((topic, n), 0) + null_bytes / n)), n) for n in range(1, opts.max_partitions + 1)]
        verdict = stage_loads.sweep_verdict(rows, total, opts.target_share)
        verdict["records"] = row["records"]
        verdict["hottest_key_share"] = round((hottest_key.get(topic) or 0) / total, 6) if total else 0.0
        if verdict["recommended_partitions"] is None:
            verdict["why_none"] = (f"no count up to {opts.max_partitions} gets the hottest partition under "
                                   f"{opts.target_share:.1%}; the hottest key alone carries "
                                   f"{verdict['hottest_key_share']:.1%} of the bytes")
        verdict["keyless_bytes_spread_evenly"] = null_bytes
        result[topic] = verdict
    return result


def _conservation(input_rows: int, aside: Mapping[str, int], placed: int, load_rows: Sequence[Any],
                  sweep: Mapping[str, Any], consumers: Mapping[str, Any], brokers: Mapping[str, Any],
                  producers: Mapping[str, Any] | None = None) -> dict[str, Any]:
    expected = input_rows - sum(aside.values())
    per_stage = {
        "partitioned": placed,
        "partition_load": sum(r["records"] for r in load_rows),
        "partition_sweep": sum(v["records"] for v in sweep.values()),
        **{f"consumer_load:{s}": c["records"] for s, c in consumers.items()},
        "broker_load_leaders": brokers["leader_records"],
    }
    for row in (producers or {}).get("agreement", []):
        per_stage[f"producer_load:{row['producer']}"] = sum(
            r["records"] for r in producers["load"] if r["producer"] == row["producer"])
    unsubscribed = {k: expected - v for k, v in per_stage.items() if k.startswith("consumer_load") and v != expected}
    return {"input": input_rows, "set_aside": dict(aside), "expected_per_stage": expected, "per_stage": per_stage,
            "accounted": all(v == expected for k, v in per_stage.items() if not k.startswith("consumer_load"))
            and all(v >= 0 for v in unsubscribed.values()),
            "unconsumed_records": unsubscribed}


def _write_driver_tables(spark: SparkSession, out: Path, consumers: Mapping[str, Any], brokers: Mapping[str, Any],
                         rebalance: Mapping[str, Any]) -> None:
    """The driver-side stages' small results, as Parquet like the others."""
    member_rows = [{"strategy": s, "member": m, **v} for s, c in consumers.items() for m, v in c["members"].items()]
    broker_rows = [{"broker": int(b), **v} for b, v in brokers["brokers"].items()]
    move_rows = [{"strategy": s, "event": e, **v} for s, events in rebalance.items() for e, v in events.items()]
    for name, rows in (("consumer_load", member_rows), ("broker_load", broker_rows), ("rebalance_cost", move_rows)):
        _write_rows(out, name, rows)


def _write_rows(out: Path, name: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """A small driver-side table as Parquet under ``out/name`` (replacing an earlier run's)."""
    import pyarrow.parquet as pq

    target = out / name
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("*.parquet"):
        old.unlink()
    if rows:
        pq.write_table(pa.Table.from_pylist(list(rows)), (target / "part-0.parquet").as_posix())
