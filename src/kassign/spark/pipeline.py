"""``kassign pipeline``: where a keyed data set's load lands, from partitions to brokers.

Stages (each written as Parquet under ``out``):

0. input: read, check columns, set aside rows that cannot be placed (with a reason).
1. partitioned: every record with its partition (``kafka_partition``; null keys by a producer model).
   Written only when asked (``--write-partitioned``); the other stages do not need it.
2. key_stats and partition_load: records and bytes per (topic, key, partition), then per
   partition: records, bytes, distinct keys (exact), hottest keys.
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

One pass: the input is read once, into records and bytes per (topic, key, partition) plus a
count per set-aside reason (``key_figures``): keyless records are placed by the producer model
in the scan (it follows the input order), each split counts per key in kassign's JVM tables, the
driver merges the splits' counts (``kassign.spark.key_merge``; Spark merges them where they exceed
``spark.driver.maxResultSize``), and a keyed row's partition is computed once per key. Every later
stage starts from those rows (as many as distinct keys), taken by the driver in Arrow batches
(``kassign.spark.digest``), so the work beyond the least job that counts per partition is one
wider count. The input is read again only for tables
asked for (``partitioned``, producer agreement) and for the set-aside table when rows were set
aside.

Data layout: per-record work stays in Spark columns (key bytes, int32 partitions, int64
sizes); the driver never holds per-record data, and holds per-key data one Arrow batch at a
time (numpy integer arrays), keeping only per-partition and per-partition-count figures; merging
the splits' partial counts holds them at once, within Spark's result limit.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kassign.core.errors import KassignError, LiveClusterError
from kassign.core.releases import DEFAULT_KAFKA_VERSION
from kassign.producer.keys import INT_WIDTHS, check_key_type
from kassign.spark import inputs, key_merge, startup
from kassign.spark.digest import GAP_PREFIX, Digest, LiveFigures, PartitionFigures, digest_figures
from kassign.spark import loads as stage_loads
from kassign.spark import producers as stage_producers
from kassign.spark.nullkeys import assign_null_keys, null_key_column
# PipelineOptions, check_options and preflight_live stay importable from here (the API's home for them)
from kassign.spark.options import (MAX_PARTITIONS_PER_TOPIC, MODELS, PipelineOptions, _detect_format,  # noqa: F401
                                   check_options, preflight_live, producer_clients)
from kassign.spark.partition import engine_in_use, kafka_murmur2, kafka_partition_by_topic
from kassign.spark.sample import SAMPLE_TOPIC, sample_frame

log = logging.getLogger(__name__)

HOT_KEYS = 3
# -- stage 0: input -------------------------------------------------------------------------------------------

def read_input(spark: SparkSession, path: str, fmt: str | None, null_value: str | None = None) -> DataFrame:
    """The input's own columns plus kassign's bookkeeping (see ``kassign.spark.inputs``)."""
    return inputs.read(spark, path, _detect_format(path, fmt), null_value).df


def _require_column(df: DataFrame, name: str, option: str) -> T.DataType:
    fields = {f.name: f.dataType for f in df.schema.fields}
    if name not in fields:
        visible = ", ".join(n for n in fields if n not in inputs.INTERNAL)
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


def _constant_topic(opts: PipelineOptions) -> str | None:
    """The one topic of every record when the input has no topic column, else None."""
    if opts.topic_column:
        return None
    return SAMPLE_TOPIC if opts.input is None else "topic"


def normalise(df: DataFrame, opts: PipelineOptions, fmt: str | None = None) -> DataFrame:
    """Every input row as topic, key, bytes and ``reason`` (null for a record; else why it is set aside),
    plus the bookkeeping columns that locate it.

    Columns are checked first. The first reason that applies is the row's reason: a line that
    does not parse, then the key, the size, the topic."""
    serialiser = key_serialiser(df, opts)
    if opts.value_column and opts.size_column:
        raise KassignError("give --value-column or --size-column, not both")
    key, key_size, reasons = _key_and_size(opts, serialiser)
    if opts.size_column:
        size_type = _require_column(df, opts.size_column, "--size-column")
        inputs.check_size_type(size_type, opts.size_column)
        size, why = inputs.parse_size(opts.size_column, size_type, strip_quotes=fmt == "json")
        reasons.append((why.isNotNull(), why))
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
        reasons.append((topic == "", f"topic column {opts.topic_column!r} is empty"))
    else:
        topic = F.lit(_constant_topic(opts))
    if inputs.PROBLEM in df.columns:
        reasons.insert(0, (F.col(inputs.PROBLEM).isNotNull(), F.col(inputs.PROBLEM)))
    reason = F.lit(None).cast("string")
    for condition, text in reversed(reasons):
        reason = F.when(condition, text if isinstance(text, Column) else F.lit(text)).otherwise(reason)
    keep = [c for c in (inputs.RAW, inputs.FILE, inputs.BLOCK, inputs.ROW_ID, inputs.ROW_NUMBER) if c in df.columns]
    return df.select(topic.alias("topic"), key.alias("key"), size.cast("long").alias("bytes"), reason.alias("reason"),
                     *keep)


def _good() -> Column:
    """True for a row that becomes a record (no reason to set it aside)."""
    return F.col("reason").isNull()


def good_records(tagged: DataFrame) -> DataFrame:
    """The rows that become records: topic, key, bytes."""
    return tagged.filter(_good()).select("topic", "key", "bytes")


def set_aside_rows(tagged: DataFrame) -> DataFrame:
    """The rows set aside: their reason and the bookkeeping columns that locate them."""
    return tagged.filter(~_good()).drop("topic", "key", "bytes")


# -- stages 1-2: partitioning and per-key figures, in one pass ---------------------------------------------------

def _check_null_key_model(opts: PipelineOptions) -> None:
    if opts.null_key_model not in MODELS:
        raise KassignError(f"--null-keys must be one of {', '.join(MODELS)}, got {opts.null_key_model!r}")


def _keyed_partition(counts: Mapping[str, int], default_count: int, opts: PipelineOptions,
                     key_type: str | None) -> Column:
    """Kafka's partition of each keyed record: the topic's count where ``counts`` names it, else the default."""
    return kafka_partition_by_topic(counts, default_count, engine=opts.engine, key_type=key_type)


def _on_the_jvm(opts: PipelineOptions) -> bool:
    """True when kassign's JVM code serves the one pass (keyless placement and per-split counting);
    False where the Arrow engine serves instead."""
    return opts.engine != "arrow" and engine_in_use(SparkSession.getActiveSession()) == "jvm"


def _keyless_placement(counts: Mapping[str, int], opts: PipelineOptions) -> Column | None:
    """The producer model as a column evaluated in the executor JVM (one producer per split), for
    keyless records only; None where the Arrow engine serves instead."""
    if not _on_the_jvm(opts):
        return None
    return null_key_column(F.col("topic"), F.col("bytes"), opts.null_key_model, counts, opts.partitions,
                           opts.batch_size, opts.seed)


def _placement(counts: Mapping[str, int], opts: PipelineOptions, key_type: str | None) -> Column | None:
    """Every record's partition as one JVM column (keyed: murmur2; keyless: the producer model); None
    where the Arrow engine serves instead."""
    keyless = _keyless_placement(counts, opts)
    if keyless is None:
        return None
    return F.when(F.col("key").isNull(), keyless).otherwise(_keyed_partition(counts, opts.partitions, opts, key_type))


def _place_keyless_in_python(keyless: DataFrame, counts: Mapping[str, int], opts: PipelineOptions) -> DataFrame:
    schema = T.StructType(keyless.schema.fields + [T.StructField("partition", T.IntegerType())])
    return keyless.mapInArrow(
        assign_null_keys(opts.null_key_model, dict(counts), opts.partitions, opts.batch_size, opts.seed), schema)


def partition_records(records: DataFrame, counts: Mapping[str, int], opts: PipelineOptions,
                      key_type: str | None = None) -> DataFrame:
    """Every record (topic, key, bytes) with its partition. ``counts`` gives topics whose partition
    count is not ``opts.partitions``."""
    _check_null_key_model(opts)
    placement = _placement(counts, opts, key_type)
    if placement is not None:
        return records.withColumn("partition", placement)
    keyed = records.filter(F.col("key").isNotNull()).withColumn(
        "partition", _keyed_partition(counts, opts.partitions, opts, key_type))
    # Keyless rows first: a union numbers its first child's tasks 0..splits-1, so each modelled producer
    # gets its input split's number, as in the JVM column.
    return _place_keyless_in_python(records.filter(F.col("key").isNull()), counts, opts).unionByName(keyed)


def _split_counts(placed: DataFrame, group: list[str], max_groups: int = 0, max_bytes: int = 0) -> DataFrame:
    """Each input split of ``placed`` counted per ``group`` in kassign's JVM tables (``KassignKeyFigures``),
    not yet merged: ``group``, ``records`` and ``bytes``, a row per group a split saw (or more, where its
    tables were flushed). ``max_groups``/``max_bytes`` bound a split's tables (0: sized from the heap)."""
    spark = placed.sparkSession
    return DataFrame(spark._jvm.kassign.spark.KassignKeyFigures.partial(placed.select(*group, "bytes")._jdf,
                                                                        max_groups, max_bytes), spark)


def _count_per_group(placed: DataFrame, group: list[str], max_groups: int = 0, max_bytes: int = 0,
                     cluster_by: Sequence[str] = ()) -> DataFrame:
    """Records and bytes per ``group`` of ``placed``: each input split counted in kassign's JVM tables
    (``KassignKeyFigures.java``: bucketed by hash so that each table stays in the CPU cache, where
    Spark's one hash map per task waits for memory on nearly every row), the splits' partial counts
    then merged by Spark (run it under ``BYPASS_PARTIAL``). ``max_groups``/``max_bytes`` bound a
    split's tables before they are flushed (0: sized from the heap); ``cluster_by`` shuffles by those
    columns only, so that all groups sharing them land in one output partition."""
    partial_df = _split_counts(placed, group, max_groups, max_bytes)
    # coalesce: a group's records are never null, and the column stays non-null as count() made it
    records = F.coalesce(F.sum("records"), F.lit(0).cast("long")).alias("records")
    if cluster_by:  # every row of one cluster key in one output file (the final aggregation needs no other shuffle)
        partial_df = partial_df.repartition(*cluster_by)
    return partial_df.groupBy(*group).agg(records, F.sum("bytes").alias("bytes"))


def _placed_for_counting(tagged: DataFrame, counts: Mapping[str, int], opts: PipelineOptions) -> tuple[DataFrame, list[str]]:
    """The JVM engine's rows to count and their grouping columns: ([topic,] key, partition, reason) and bytes,
    keyless records already placed by the producer model (it follows the input order); a keyed record's
    partition depends on its topic and key alone, so it is left for once per key afterwards. With one topic
    for the whole input, the topic stays out of the grouping (every row would hash it)."""
    keyless = _keyless_placement(counts, opts)
    group = ["key", "partition", "reason"] if _constant_topic(opts) is not None else ["topic", "key", "partition", "reason"]
    placed = tagged.select(*(F.when(_good(), F.col(c)).alias(c) for c in ("topic", "key", "bytes")),
                           F.when(_good() & F.col("key").isNull(), keyless).alias("partition"), "reason")
    return placed.select(*group, "bytes"), group


def key_figures(tagged: DataFrame, counts: Mapping[str, int], opts: PipelineOptions,
                key_type: str | None = None) -> DataFrame:
    """Stages 1-2's one pass over the input, merged in Spark: records and bytes per (topic, key, partition),
    plus one row per reason rows were set aside for (topic, key and partition null there).

    Everything later (partition load, hot keys, the sweep, consumers, brokers) is computed from
    these rows, as many as there are distinct keys. On the JVM engine the input is read once:
    keyless records are placed by the JVM copy of the producer model inside the same scan. The file
    pass merges on the driver instead where the splits' counts fit (``driver_key_figures``)."""
    _check_null_key_model(opts)
    figures = [F.count(F.lit(1)).alias("records"), F.sum("bytes").alias("bytes")]
    if _on_the_jvm(opts):
        placed, group = _placed_for_counting(tagged, counts, opts)
        grouped = _count_per_group(placed, group)
        constant = _constant_topic(opts)
        if constant is not None:
            grouped = grouped.select(F.when(_good(), F.lit(constant)).alias("topic"), *group, "records", "bytes")
        keyed = _good() & F.col("key").isNotNull()
        return grouped.withColumn("partition", F.when(keyed, _keyed_partition(counts, opts.partitions, opts, key_type))
                                  .otherwise(F.col("partition")))
    # Arrow engine: keyless records go through a Python worker (a second read of the input).
    not_keyless = tagged.filter(~(_good() & F.col("key").isNull())).select(
        *(F.when(_good(), F.col(c)).alias(c) for c in ("topic", "key", "bytes")),
        F.when(_good(), _keyed_partition(counts, opts.partitions, opts, key_type)).alias("partition"), "reason")
    keyless = _place_keyless_in_python(good_records(tagged).filter(F.col("key").isNull()), counts, opts)
    keyless = keyless.select("topic", "key", "bytes", "partition", F.lit(None).cast("string").alias("reason"))
    return keyless.unionByName(not_keyless).groupBy("topic", "key", "partition", "reason").agg(*figures)


def rows_to_count(tagged: DataFrame, counts: Mapping[str, int], opts: PipelineOptions) -> tuple[DataFrame, list[str]] | None:
    """The JVM engine's rows to count per key (``_placed_for_counting``) and their grouping columns; None on
    the Arrow engine. ``driver_key_figures`` counts and merges them."""
    _check_null_key_model(opts)
    if not _on_the_jvm(opts):
        return None
    return _placed_for_counting(tagged, counts, opts)


def driver_key_figures(placed: DataFrame, group: list[str], counts: Mapping[str, int], opts: PipelineOptions,
                       key_type: str | None = None) -> pa.Table | None:
    """``with_key_columns(key_figures(...))`` (live topics: ``live_key_figures``) with the splits' counts
    merged by the driver (``kassign.spark.key_merge.merge_on_driver``; ``placed``: rows with the grouping
    columns and ``bytes``): one Spark stage instead of two. None when the splits' counts exceed
    ``spark.driver.maxResultSize`` or the driver's bound (then merge in Spark)."""
    merged = key_merge.merge_on_driver(placed, group)
    if merged is None:
        return None
    if opts.live:  # partitions are where the records are; every row names its topic
        return key_merge.key_columns(merged, counts, opts.partitions, None, None, live=True)
    return key_merge.key_columns(merged, counts, opts.partitions, key_type, _constant_topic(opts))


def live_key_figures(tagged: DataFrame, opts: PipelineOptions) -> DataFrame:
    """The one pass over records read from Kafka: records and bytes per (topic, key, actual partition), plus
    the offsets not read per (topic, partition, reason). Clustered by (topic, key): each output file holds
    every row of its keys, which the forensics need."""
    group = ["topic", "key", "partition", "reason"]
    placed = tagged.select(*group, "bytes")
    if _on_the_jvm(opts):
        return _count_per_group(placed, group, cluster_by=["topic", "key"])
    return (placed.repartition("topic", "key").groupBy(*group)
            .agg(F.count(F.lit(1)).alias("records"), F.sum("bytes").alias("bytes")))


def _live_figures_on_driver(records: DataFrame, counts: Mapping[str, int], opts: PipelineOptions) -> pa.Table | None:
    """The live pass's key figures with the splits' counts merged on the driver (``kassign.spark.key_merge``):
    the partition where each record is kept, keys shown as text where valid UTF-8. None where Spark merges
    instead (the Arrow engine, or counts beyond ``spark.driver.maxResultSize``)."""
    if not _on_the_jvm(opts):
        return None
    group = ["topic", "key", "partition", "reason"]
    return driver_key_figures(records, group, counts, opts)


def live_records(df: DataFrame) -> DataFrame:
    """The kassign-kafka source's rows (with its accounting column) as the pipeline's tagged rows: records with
    their actual partition; gap rows as a reason with their offsets in ``bytes``."""
    reason = F.when(F.col("gap").isNotNull(), F.concat(F.lit(GAP_PREFIX), F.col("gap")))
    return df.select("topic", F.col("key"), F.col("size").alias("bytes"), "partition", reason.alias("reason"))


# -- stage 2: partition load ----------------------------------------------------------------------------------

def _display_key(df: DataFrame) -> F.Column:
    key_type = df.schema["key"].dataType
    if isinstance(key_type, _INTEGRAL):
        return F.col("key").cast("string")
    return F.col("key") if isinstance(key_type, T.StringType) else F.concat(F.lit("0x"), F.lower(F.hex("key")))


def _readable_key() -> F.Column:
    """A key read from Kafka as shown: its text where it is valid UTF-8, else 0x and hex."""
    return F.when(F.expr("is_valid_utf8(key)"), F.col("key").cast("string")).otherwise(
        F.concat(F.lit("0x"), F.lower(F.hex("key"))))


def with_key_columns(figures: DataFrame, opts: PipelineOptions, key_type: str | None) -> DataFrame:
    """The key figures plus, on keyed rows, the key as shown and its 31-bit murmur2 (for the sweep)."""
    keyed = F.col("key").isNotNull()
    shown = _readable_key() if opts.live else _display_key(figures)
    return figures.select(
        "*", F.when(keyed, shown).alias("key_display"),
        F.when(keyed, kafka_murmur2("key", engine=opts.engine, key_type=key_type).bitwiseAND(F.lit(0x7FFFFFFF))
               .cast("long")).alias("hash"))


_HOT_KEY = pa.struct([("key", pa.string()), ("records", pa.int64()), ("bytes", pa.int64()), ("share", pa.float64())])
PARTITION_LOAD_SCHEMA = pa.schema([("topic", pa.string()), ("partition", pa.int32()), ("records", pa.int64()),
                                   ("bytes", pa.int64()), ("keyed_records", pa.int64()), ("distinct_keys", pa.int64()),
                                   ("hot_keys", pa.list_(_HOT_KEY))])


LIVE_PARTITION_LOAD_SCHEMA = PARTITION_LOAD_SCHEMA.append(pa.field("java_records", pa.int64())).append(
    pa.field("java_bytes", pa.int64()))


def partition_load(digest: Digest, live_counts: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """Per partition (one row each, ordered): records, bytes, keyed records, distinct keys (exact: one
    figure row per key) and the hottest keys with their share of the partition's bytes.

    Live topics (``live_counts``): every partition has a row (measured: where the records are), and
    ``java_records``/``java_bytes`` say where Kafka's Java producer would have put the same records."""
    partitions = dict(digest.partitions)
    if live_counts is not None:
        for topic, n in live_counts.items():
            for p in range(n):
                partitions.setdefault((topic, p), PartitionFigures())
    rows = []
    for (topic, partition), f in sorted(partitions.items()):
        row = {"topic": topic, "partition": partition, "records": f.records, "bytes": f.bytes,
               "keyed_records": f.keyed_records, "distinct_keys": f.distinct_keys,
               "hot_keys": digest.hot_keys.get((topic, partition), [])}
        if live_counts is not None:
            row["java_records"], row["java_bytes"] = digest.java.get((topic, partition), (0, 0))
        rows.append(row)
    return rows


# -- stage 3: partition-count sweep ---------------------------------------------------------------------------

SWEEP_SCHEMA = pa.schema([("topic", pa.string()), ("partitions", pa.int32()), ("partition", pa.int32()),
                          ("keyed_bytes", pa.int64())])


def partition_sweep(digest: Digest) -> list[dict[str, Any]]:
    """Keyed bytes per partition for every count 1..max (``kassign.spark.digest``): one row per
    (topic, count, partition)."""
    return [{"topic": topic, "partitions": len(per_partition), "partition": p, "keyed_bytes": int(b)}
            for topic, counts in sorted(digest.sweep.items()) for per_partition in counts
            for p, b in enumerate(per_partition.tolist())]


# -- the whole job ---------------------------------------------------------------------------------------------

# Spark's own partial aggregation would only repeat the per-split counting KassignKeyFigures has done;
# without those tables (the Arrow engine) it is what keeps the shuffle small, so it stays on there.
BYPASS_PARTIAL = "spark.sql.execution.bypassPartialAggregation"


@contextlib.contextmanager
def _spark_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """``settings`` in force for the queries run inside (Spark reads them when it plans), then restored."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _write_only(df: DataFrame, path: Path) -> None:
    # a file: URI, so a cluster whose default file system is HDFS still writes where the driver reads
    df.write.mode("overwrite").parquet(path.absolute().as_uri())


def _write(df: DataFrame, out: Path, name: str) -> DataFrame:
    _write_only(df, out / name)
    return df.sparkSession.read.parquet((out / name).absolute().as_uri())


def _scenario(opts: PipelineOptions, topics: Sequence[str],
              real_counts: Mapping[str, int] | None = None) -> tuple[dict, dict[str, int]]:
    """The consumer group and every topic's partition count: ``real_counts`` (a live cluster's) where
    given, else the scenario's, else ``--partitions``."""
    if opts.scenario is not None:
        from kassign.groups.scenario import parse_scenario

        parse_scenario(opts.scenario)  # one-line errors for a malformed file, before Spark runs
        counts = {t: (real_counts or {}).get(t, opts.scenario["topics"].get(t, opts.partitions)) for t in topics}
        scenario = {"topics": {**opts.scenario["topics"], **counts}, "members": opts.scenario["members"]}
        return scenario, counts
    if opts.members < 1:
        raise KassignError(f"--members must be >= 1, got {opts.members}")
    counts = {t: (real_counts or {}).get(t, opts.partitions) for t in topics}
    members = {f"consumer-{i}": {"topics": list(topics)} for i in range(opts.members)}
    return {"topics": counts, "members": members}, counts


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
    """Run every stage, write the tables, summary.json and report.html under ``opts.out``; return the summary.

    Everything is written to a hidden directory beside ``out`` first and renamed to ``out`` at the
    end, so a run that fails or is killed never leaves an ``out`` that looks complete (an earlier
    run's ``out`` stays as it was until the new one is whole)."""
    check_options(opts)
    final = Path(opts.out)
    staging = final.parent / f".{final.name}.kassign-partial-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        staging.mkdir(parents=True)
    except OSError as err:
        raise KassignError(f"cannot write --out {opts.out!r}: {err.strerror or err}") from None
    try:
        summary = _run(spark, opts, staging)
        _publish(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        spark.sparkContext.setJobDescription(None)
    return summary


def _publish(staging: Path, final: Path) -> None:
    """Replace ``final`` by ``staging`` (two renames; the old output is removed once the new one is in place)."""
    old = final.parent / f".{final.name}.kassign-old-{os.getpid()}"
    if final.exists():
        final.rename(old)
    staging.rename(final)
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)


def _open_input(spark: SparkSession, opts: PipelineOptions, out: Path) -> tuple[DataFrame, inputs.Input | None, dict, str]:
    """(the input's rows, the file input or None for the sample, its description, its format)."""
    if opts.input is None:
        source = sample_frame(spark, opts.rows, opts.keys, opts.skew, opts.null_share, opts.seed)
        raw = _write(source, out, "sample_input") if opts.write_sample else source  # seeded: same rows when re-read
        opts.size_column = opts.size_column or "value_size"
        opts.key_column, opts.topic_column = "key", "topic"
        return raw, None, {"kind": "sample", "rows": opts.rows, "keys": opts.keys, "skew": opts.skew,
                           "null_share": opts.null_share, "seed": opts.seed}, "parquet"
    fmt = _detect_format(opts.input, opts.input_format)
    found = inputs.read(spark, opts.input, fmt, opts.null_value)
    desc = {"kind": "file", "path": opts.extra.get("input_label", opts.input), "format": fmt}
    if opts.null_value is not None:
        desc["null_value"] = opts.null_value
    return found.df, found, desc, fmt


SET_ASIDE_SCHEMA = pa.schema([("reason", pa.string()), ("raw", pa.string()), ("file", pa.string()),
                              ("line", pa.int64())])


def _set_aside_table(spark: SparkSession, out: Path, tagged: DataFrame, found: inputs.Input | None,
                     any_rows: bool) -> list[Any]:
    """Write the set_aside table (read again only when there is something to set aside); return, per
    reason, its row count and first row."""
    if not any_rows:  # an empty table with the schema, without starting Spark tasks
        _write_rows(out, "set_aside", [], SET_ASIDE_SCHEMA)
        return []
    aside = set_aside_rows(tagged)
    if found is not None:
        aside = inputs.number_lines(spark, found, aside)
    else:
        aside = aside.select("reason", F.lit(None).cast("string").alias("raw"),
                             F.lit(None).cast("string").alias("file"), F.lit(None).cast("long").alias("line"))
    written = _write(aside, out, "set_aside")
    return (written.groupBy("reason").agg(
        F.count(F.lit(1)).alias("rows"),
        F.min_by(F.struct("file", "line", F.substring("raw", 1, 200).alias("raw")),
                 F.coalesce(F.col("line"), F.lit(0))).alias("first"))
        .orderBy(F.desc("rows"), "reason").collect())


_warm_ups: dict[tuple[str, ...], threading.Thread] = {}


def prepare_driver_meanwhile(strategies: Sequence[str]) -> threading.Thread:
    """Load the report's charting script and the assignors' compiled kernels (together about a
    second) in a background thread, by importing them and assigning a two-partition group once
    with every strategy. Started while the driver only waits (for the JVM to start, or for
    Spark's pass); once per process and strategy list."""
    key = tuple(strategies)
    if key in _warm_ups:
        return _warm_ups[key]

    def prepare() -> None:
        startup.yield_to_spark()  # 3% shorter pipeline over 6 alternating pairs
        import kassign.spark.report_html  # noqa: F401
        from kassign.core.page import _plotly_js_packed

        _plotly_js_packed()  # the page's packed charting script, made once per process

        tiny = {"topics": {"t": 2}, "members": {"a": {"topics": ["t"]}, "b": {"topics": ["t"]}}}
        try:
            built_in = [s for s in strategies if s in stage_loads.STRATEGIES]  # no warnings twice for the others
            stage_loads.consumer_load(tiny, built_in, {("t", 0): (1, 1), ("t", 1): (1, 1)})
        except Exception:  # a warm-up only: the real stage reports any problem itself
            log.debug("driver warm-up failed", exc_info=True)

    thread = threading.Thread(target=prepare, name="kassign-driver-warm-up", daemon=True)
    thread.start()
    _warm_ups[key] = thread
    return thread


@dataclass
class _Pass:
    """What the one pass over the input left for the later stages."""

    digest: Digest
    input_desc: dict[str, Any]
    counts: dict[str, int]  # topic -> partition count (records' topics; live: the topics read)
    key_type: str | None = None
    aside_rows: list[Any] = field(default_factory=list)
    partitioned: DataFrame | None = None
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # live: source, forensics, lag
    lag: dict[str, list[int]] | None = None  # live with a group: topic -> lag per partition
    group_scenario: dict | None = None  # live: the group's own members, as a scenario
    distinct_keys: dict[str, int] | None = None  # live: keys per topic (a split key is one key)


def _file_pass(spark: SparkSession, opts: PipelineOptions, out: Path) -> _Pass:
    """Stages 0-2 on a file or the sample: read, set aside, partition and count per key in one pass."""
    raw, found, input_desc, fmt = _open_input(spark, opts, out)
    key_type = key_serialiser(raw, opts)
    tagged = normalise(raw, opts, fmt)
    known_counts = dict(opts.scenario["topics"]) if opts.scenario is not None else {}

    spark.sparkContext.setJobDescription("kassign stages 1-2: partition every record, count per key (one pass)")
    to_count = rows_to_count(tagged, known_counts, opts)
    # Started now (unless the caller did so while the JVM started), while the driver only waits for
    # Spark: earlier, it would hold the GIL that the query's many py4j calls need.
    prepare_driver_meanwhile(opts.strategies)
    figures = driver_key_figures(*to_count, known_counts, opts, key_type) if to_count is not None else None
    if figures is not None:
        digest = digest_figures(figures, out / "key_stats", opts.max_partitions, HOT_KEYS)
    else:
        figures_path = out / ".key_figures"
        merged = with_key_columns(key_figures(tagged, known_counts, opts, key_type), opts, key_type)
        with _spark_conf(spark, {BYPASS_PARTIAL: "true"} if _on_the_jvm(opts) else {}):
            _write_only(merged, figures_path)
        digest = digest_figures(figures_path, out / "key_stats", opts.max_partitions, HOT_KEYS)
        shutil.rmtree(figures_path)
    aside_rows = _set_aside_table(spark, out, tagged, found, bool(digest.reasons))
    topics = sorted(digest.topics())
    warnings = _aside_warning(digest, aside_rows)
    if not topics:
        aside_counts = {r["reason"]: r["rows"] for r in aside_rows}
        raise KassignError("no records to place: the input is empty or every row was set aside "
                           f"({', '.join(f'{k}: {v}' for k, v in aside_counts.items()) or 'no rows'})")
    partitioned = None
    if opts.write_partitioned or producer_clients(opts):
        spark.sparkContext.setJobDescription("kassign stage 1: the partitioned table")
        partitioned = partition_records(good_records(tagged), known_counts, opts, key_type)
        if opts.write_partitioned:
            partitioned = _write(partitioned, out, "partitioned")
    _, counts = _scenario(opts, topics)
    return _Pass(digest, input_desc, counts, key_type=key_type, aside_rows=aside_rows, partitioned=partitioned,
                 warnings=warnings)


def _aside_warning(digest: Digest, aside_rows: Sequence[Any]) -> list[str]:
    aside_counts = {r["reason"]: r["rows"] for r in aside_rows}
    if not aside_counts:
        return []
    input_rows = sum(digest.reasons.values()) + sum(t["records"] for t in digest.topics().values())
    return [f"{sum(aside_counts.values()):,} of {input_rows:,} input rows set aside "
            f"({'; '.join(f'{k}: {v:,}' for k, v in aside_counts.items())}); "
            f"they are in the set_aside table with their raw text"]


def _run(spark: SparkSession, opts: PipelineOptions, out: Path) -> dict[str, Any]:
    one_pass = _live_pass(spark, opts, out) if opts.live else _file_pass(spark, opts, out)
    digest = one_pass.digest
    per_topic = digest.topics()
    warnings = list(one_pass.warnings)
    input_rows = sum(digest.reasons.values()) + sum(t["records"] for t in per_topic.values())
    aside_rows = one_pass.aside_rows
    aside_counts = {r["reason"]: r["rows"] for r in aside_rows}
    topics = sorted(one_pass.counts) if opts.live else sorted(per_topic)
    scenario, counts = _scenario(opts, topics, one_pass.counts if opts.live else None)
    if one_pass.group_scenario is not None:
        scenario = one_pass.group_scenario
    warnings += _subscription_warnings(scenario, topics)
    for text in warnings:
        log.warning("%s", text)

    load_rows = partition_load(digest, counts if opts.live else None)
    _write_rows(out, "partition_load", load_rows, LIVE_PARTITION_LOAD_SCHEMA if opts.live else PARTITION_LOAD_SCHEMA)
    loads = {(r["topic"], r["partition"]): (r["records"], r["bytes"]) for r in load_rows}
    for topic, n in counts.items():  # partitions that got no record still exist
        for p in range(n):
            loads.setdefault((topic, p), (0, 0))
    sweep_rows = partition_sweep(digest)
    _write_rows(out, "partition_sweep", sweep_rows, SWEEP_SCHEMA)
    sweep = _sweep_summary(per_topic, digest, opts, counts if opts.live else None, one_pass.distinct_keys)

    prepare_driver_meanwhile(opts.strategies).join()
    release = one_pass.extra.get("kafka_version") or opts.kafka_version or DEFAULT_KAFKA_VERSION
    release_facts = {"kafka_version": release,
                     "kafka_version_from": one_pass.extra.get("kafka_version_from",
                                                              "given" if opts.kafka_version else "default"),
                     "kafka_version_why": one_pass.extra.get("kafka_version_why",
                                                             "as given (--kafka-version)" if opts.kafka_version else
                                                             f"no broker to ask; Kafka {DEFAULT_KAFKA_VERSION}, the "
                                                             "default")}
    consumers_strategies, skipped = stage_loads.available_strategies(opts.strategies, release)
    consumers = stage_loads.consumer_load(scenario, consumers_strategies, loads, release)
    if one_pass.lag is not None:
        _add_member_lag(consumers, one_pass.lag)
    brokers = stage_loads.broker_load(opts.brokers, counts, opts.replication_factor, loads, opts.seed, opts.placer)
    rebalance = stage_loads.rebalance_cost(scenario, consumers, loads, release)
    _write_driver_tables(spark, out, consumers, brokers, rebalance)
    producers = None
    if one_pass.partitioned is not None:
        producers = _producer_stage(spark, out, one_pass.partitioned, counts, opts, one_pass.key_type)

    placed_rows = sum(r["records"] for r in per_topic.values())
    rows = _conservation(input_rows, aside_counts, placed_rows, load_rows, sweep, consumers, brokers, producers)
    if opts.live:
        rows["offsets"] = _offset_accounting(one_pass.extra["source"])
        rows["accounted"] = rows["accounted"] and rows["offsets"]["accounted"]
    summary = {
        "input": one_pass.input_desc,
        "engine": engine_in_use(spark) if opts.engine == "auto" else opts.engine,
        "partitions": counts,
        "null_key_model": ({"model": "none: a live topic's records are where their producers put them"} if opts.live
                           else {"model": opts.null_key_model, "batch_size": opts.batch_size, "seed": opts.seed,
                                 "producer": "one per Spark input split"}),
        "rows": rows,
        "key_type": one_pass.key_type or "as is (string: UTF-8, binary: raw)",
        "partition_load": load_rows,
        "sweep": sweep,
        "consumers": {s: {k: v for k, v in c.items()} for s, c in consumers.items()},
        "skipped_strategies": skipped,
        "brokers": brokers,
        "rebalance": rebalance,
        **one_pass.extra,
        **release_facts,
        "tables": sorted(p.name for p in out.iterdir() if p.is_dir()),
    }
    if producers is not None:
        summary["producers"] = producers
    summary["set_aside"] = [{"reason": r["reason"], "rows": r["rows"], "first": r["first"].asDict()} for r in aside_rows]
    summary["warnings"] = warnings
    summary["verdict"] = verdict(summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    from kassign.spark.report_html import write_report

    write_report(summary, out / "report.html")
    return summary


# -- live topics ------------------------------------------------------------------------------------------------

def _live_pass(spark: SparkSession, opts: PipelineOptions, out: Path) -> _Pass:
    """Stages 0-2 on live topics: plan the read on the driver, read every partition on the executors,
    count per (topic, key, actual partition) in one pass, then the digest with forensics."""
    from kassign.kafka.client import Cluster, plan_read
    from kassign.kafka.config import ClientSettings
    from kassign.spark.forensics import Forensics
    from kassign.spark.kafka_source import read_kafka

    settings = ClientSettings.from_properties(opts.client_config)
    spark.sparkContext.setJobDescription("kassign: plan the read of the live topics")
    with Cluster(opts.bootstrap, settings) as cluster:
        plan = plan_read(cluster, opts.topics, since=opts.since, last=opts.last)
        counts = {t: p.count for t, p in plan.topics.items()}
        release = _release(cluster, opts)
        live_group = _read_live_group(cluster, opts, counts, release[0]) if opts.group else None
    too_big = {t: n for t, n in counts.items() if n > MAX_PARTITIONS_PER_TOPIC}
    if too_big:
        topic, n = next(iter(too_big.items()))
        raise KassignError(f"topic {topic!r} has {n:,} partitions; the pipeline takes at most "
                           f"{MAX_PARTITIONS_PER_TOPIC:,} per topic")
    # the sweep reaches past today's count (a topic can only grow), up to twice it
    opts.max_partitions = max(opts.max_partitions, min(4096, 2 * max(counts.values())))
    prepare_driver_meanwhile(opts.strategies)
    spark.sparkContext.setJobDescription("kassign stages 1-2: read the topics, count per key and partition (one pass)")
    df = read_kafka(spark, opts.bootstrap, list(plan.topics), config=opts.client_config, read_plan=plan,
                    accounting=True)
    records = live_records(df)
    figures_path = out / ".key_figures"
    try:
        figures = _live_figures_on_driver(records, counts, opts)
        if figures is None:
            with _spark_conf(spark, {BYPASS_PARTIAL: "true"} if _on_the_jvm(opts) else {}):
                _write_only(with_key_columns(live_key_figures(records, opts), opts, None), figures_path)
    except Exception as err:  # an executor's one-line error arrives inside Spark's wrapping
        raise _executor_error(err) from None
    forensics = Forensics(counts, out / "forensics_keys") if opts.forensics else None
    digest = digest_figures(figures if figures is not None else figures_path, out / "key_stats", opts.max_partitions,
                            HOT_KEYS, live=LiveFigures(counts, forensics))
    shutil.rmtree(figures_path, ignore_errors=True)
    _write_rows(out, "set_aside", [], SET_ASIDE_SCHEMA)
    source = _source_summary(plan, digest)
    extra: dict[str, Any] = {"source": source}
    if forensics is not None:
        extra["forensics"] = forensics.summary()
    warnings = list(plan.notes[1:])
    read = sum(t["records"] for t in source["topics"].values())
    if not read:
        raise KassignError(_nothing_read(source, opts.since is not None or opts.last is not None))
    empty = [t for t, v in source["topics"].items() if not v["records"]]
    if empty:
        warnings.append(f"no records read from {', '.join(empty)}")
    warnings += _gap_warnings(source)
    lag = None
    extra["kafka_version"], extra["kafka_version_from"], extra["kafka_version_why"] = release
    group_scenario = None
    if live_group is not None:
        extra["lag"] = _lag_summary(plan, live_group.positions)
        if live_group.described is not None and live_group.described.type == "share":
            for entry in extra["lag"].values():
                entry["position"] = "share-partition start offset"
        lag = {t: v["lag"] for t, v in extra["lag"].items()}
        extra["group"], group_scenario, group_warnings = _group_members(opts, live_group, counts)
        warnings += group_warnings
        if live_group.check is not None:
            extra["group_check"] = live_group.check
    desc = {"kind": "kafka", "bootstrap": opts.bootstrap, "topics": list(plan.topics)}
    if opts.since is not None:
        desc["since"] = str(opts.since)
    if opts.last is not None:
        desc["last"] = opts.last
    if opts.group:
        desc["group"] = opts.group
    distinct = {t: f["distinct_keys"] for t, f in extra["forensics"].items()} if forensics is not None else None
    return _Pass(digest, desc, counts, warnings=warnings, extra=extra, lag=lag, distinct_keys=distinct,
                 group_scenario=group_scenario)


@dataclass
class _LiveGroup:
    """``--group`` on live topics: the group as described (None: it could not be, ``why``), where it stands in
    each partition read (committed offsets; a share group: its start offsets), and kassign's check of it."""

    positions: dict[str, list[int | None]]
    described: Any = None
    why: str | None = None
    check: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


def _release(cluster: Any, opts: PipelineOptions) -> tuple[str, str, str]:
    """The Kafka release the consumer stages answer as: --kafka-version, else the broker's, else the default."""
    from kassign.kafka.live_group import choose_release

    return choose_release(cluster, opts.kafka_version)


def _read_live_group(cluster: Any, opts: PipelineOptions, counts: Mapping[str, int], release: str) -> _LiveGroup:
    """The group of ``--group`` whatever its type, read with its own APIs; a group kassign cannot describe is
    said, never taken as a group without members."""
    from kassign.kafka.client import committed_offsets
    from kassign.kafka.group_check import check_group
    from kassign.kafka.groups import describe_group
    from kassign.kafka.live_group import group_partitions, group_positions, initialized_partitions

    try:
        described = describe_group(cluster, opts.group)
    except LiveClusterError as err:
        return _LiveGroup(committed_offsets(cluster, opts.group, counts), why=str(err))
    positions = group_positions(cluster, described, counts)
    group_counts, notes = group_partitions(cluster, described)
    group_counts = {**group_counts, **counts}
    own = group_positions(cluster, described, {t: n for t, n in group_counts.items() if t not in counts})
    check = check_group(described, group_counts, release, initialized_partitions(described, {**own, **positions}))
    return _LiveGroup(positions, described, check=check, notes=notes + list(described.notes))


def _group_members(opts: PipelineOptions, live: _LiveGroup,
                   counts: Mapping[str, int]) -> tuple[dict, dict | None, list[str]]:
    """SPEC 5's ``group`` for summary.json, and (when the consumer stages should use it: members present, no
    --scenario, no --members) its members as a scenario of the topics read: each member's subscription where
    the broker tells it, else every topic read (said). The warnings say when the stages run on assumed members."""
    if live.described is None:
        return ({"id": opts.group, "described": False, "why": live.why},
                None, [f"group {opts.group}: kassign cannot describe it ({live.why}); the consumer stages run on "
                       f"assumed members"])
    described = live.described
    entry: dict[str, Any] = {**described.to_json(), "described": True}
    warnings = [f"group {opts.group}: {note}" for note in live.notes]
    use = bool(described.members) and opts.scenario is None and opts.members_from_group
    entry["members_used_for_consumer_load"] = use
    if not described.members:
        warnings.append(f"group {opts.group} has no members now ({described.state}); the consumer stages run on "
                        "assumed members")
    if not use:
        return entry, None, warnings
    spec: dict[str, Any] = {}
    unknown = []
    for member_id, member in described.members.items():
        topics = [t for t in member.topics if t in counts]
        if not member.topics:
            unknown.append(member_id)
            topics = sorted(counts)
        one: dict[str, Any] = {"topics": topics}
        if member.rack:
            one["rack"] = member.rack
        if member.instance_id:
            one["instance_id"] = member.instance_id
        spec[member_id] = one
    if unknown:
        entry["members_with_assumed_topics"] = unknown
        warnings.append(f"group {opts.group}: the broker keeps no subscription for {len(unknown)} of "
                        f"{len(described.members)} members; they are taken to read every topic read")
    return entry, {"topics": dict(counts), "members": spec}, warnings


def _nothing_read(source: Mapping[str, Any], bounded: bool) -> str:
    parts = []
    for name, topic in source["topics"].items():
        spanned = sum(e - s for s, e in zip(topic["start_offsets"], topic["end_offsets"]))
        parts.append(f"{name} has no records" + (f" ({spanned:,} offsets, none of them a record)" if spanned else ""))
    return "nothing to read: " + "; ".join(parts) + (" in the range asked for" if bounded else "")


def _executor_error(err: Exception) -> KassignError:
    """The one line an executor raised (a kassign error inside Spark's wrapping of the Python worker's
    traceback, e.g. ``kassign.kafka.connection.BrokerError: ...``), or Spark's first line."""
    import re

    raised = re.findall(r"(?m)^(kassign(?:\.\w+)+): (.+)$", str(err))
    if raised:
        return KassignError(raised[-1][1].strip())
    return KassignError(f"reading the topics failed: {inputs._spark_error(err)}")


def _source_summary(plan: Any, digest: Digest) -> dict[str, Any]:
    """SPEC 5's ``source``: per topic, offsets per partition and records read; plus what was not read."""
    per_topic = digest.topics()
    topics = {}
    for name, topic in plan.topics.items():
        not_read: dict[str, int] = {}
        per_partition: list[dict[str, int]] = [{} for _ in topic.partitions]
        for (t, p, reason), n in sorted(digest.gaps.items()):
            if t == name:
                not_read[reason] = not_read.get(reason, 0) + n
                per_partition[p][reason] = n
        topics[name] = {
            "partitions": topic.count,
            "start_offsets": [p.start for p in topic.partitions],
            "end_offsets": [p.end for p in topic.partitions],
            "records": per_topic.get(name, {}).get("records", 0),
            "log_start_offsets": [p.log_start for p in topic.partitions],
            "high_watermarks": [p.high_watermark for p in topic.partitions],
            "list_offsets_latest": [p.listed_latest for p in topic.partitions],
            "offsets_not_read": not_read,
            "offsets_not_read_per_partition": per_partition,
        }
    return {"kind": "kafka", "bootstrap": plan.bootstrap,
            "isolation_level": "read_committed" if plan.isolation else "read_uncommitted",
            "end_offsets_from": "fetch last stable offset" if plan.isolation else "fetch high watermark",
            "notes": plan.notes, "topics": topics}


_GAP_WORDS = {"control": "transaction markers", "aborted": "records of aborted transactions",
              "retention": "deleted by retention while the topic was read",
              "topic deleted": "lost: the topic was deleted while it was read",
              "truncated": "lost: the log was truncated below the planned end",
              "compacted": "compacted away (or otherwise not in the log)"}


def _gap_warnings(source: Mapping[str, Any]) -> list[str]:
    out = []
    for name, topic in source["topics"].items():
        for reason in ("retention", "topic deleted", "truncated"):
            n = topic["offsets_not_read"].get(reason, 0)
            if n:
                out.append(f"{name}: {n:,} offsets {_GAP_WORDS[reason]}")
    return out


def _offset_accounting(source: Mapping[str, Any]) -> dict[str, Any]:
    spanned = sum(e - s for t in source["topics"].values() for s, e in zip(t["start_offsets"], t["end_offsets"]))
    read = sum(t["records"] for t in source["topics"].values())
    not_read: dict[str, int] = {}
    for t in source["topics"].values():
        for reason, n in t["offsets_not_read"].items():
            not_read[reason] = not_read.get(reason, 0) + n
    return {"spanned": spanned, "read": read, "not_read": not_read,
            "accounted": spanned == read + sum(not_read.values())}


def _lag_summary(plan: Any, committed: Mapping[str, list[int | None]]) -> dict[str, Any]:
    """SPEC 5's ``lag``: per partition, committed offset (None: none), end offset and lag. Without a
    committed offset the lag counts from the partition's first offset (its log start)."""
    result = {}
    for name, topic in plan.topics.items():
        marks = committed.get(name, [None] * topic.count)
        ends = [p.end for p in topic.partitions]
        lags = [max(0, p.end - (c if c is not None else p.log_start)) for p, c in zip(topic.partitions, marks)]
        result[name] = {"committed": list(marks), "end_offsets": ends, "lag": lags}
    return result


def _add_member_lag(consumers: dict[str, Any], lag: Mapping[str, Sequence[int]]) -> None:
    """Per strategy: each member's lag (the sum over its partitions) and who would be furthest behind."""
    for load in consumers.values():
        per_member = {m: sum(lag.get(t, [])[p] if p < len(lag.get(t, [])) else 0 for t, p in tps)
                      for m, tps in load["assignment"].items()}
        furthest = max(sorted(per_member), key=lambda m: per_member[m]) if per_member else None
        load["lag"] = {"members": per_member, "furthest_behind": furthest,
                       "max_lag": per_member[furthest] if furthest is not None else 0,
                       "total": sum(per_member.values())}


def _subscription_warnings(scenario: Mapping[str, Any], topics: Sequence[str]) -> list[str]:
    """What a scenario group leaves unconsumed: said out loud instead of showing zero rows."""
    subscribed = {t for spec in scenario["members"].values() for t in spec.get("topics", [])}
    present = [t for t in topics if t in subscribed]
    if not present:
        return [f"no member of the scenario subscribes to a topic in the data (topics in the data: "
                f"{', '.join(topics)}; subscribed: {', '.join(sorted(subscribed)) or 'none'}): "
                "consumer load and rebalance cost are empty"]
    missing = [t for t in topics if t not in subscribed]
    if missing:
        return [f"no member of the scenario subscribes to {', '.join(missing)}: "
                "those records are not consumed (see unconsumed_records in summary.json)"]
    return []


def verdict(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The few facts a reader wants first: partitions to use, the strategy that balances best, the worst skew;
    for live topics also which producer put the records there, and who would lag most."""
    recommended = {t: s["recommended_partitions"] for t, s in summary["sweep"].items()}
    consumers = {s: c for s, c in summary["consumers"].items() if c["members"]}
    best = None
    if consumers:
        best = min(consumers, key=lambda s: (consumers[s]["bytes_spread"]["max_over_mean"],
                                             consumers[s]["bytes_spread"]["max_minus_min"]))
    per_partition: dict[str, list[int]] = {}
    for row in summary["partition_load"]:
        per_partition.setdefault(row["topic"], []).append(row["bytes"])
    worst = None
    for topic, n in summary["partitions"].items():
        values = per_partition.get(topic, []) + [0] * max(0, n - len(per_partition.get(topic, [])))
        total = sum(values)
        if not total:
            continue
        hottest = max(values)
        skew = hottest / (total / n)
        if worst is None or skew > worst["skew"]:
            worst = {"topic": topic, "partitions": n, "skew": round(skew, 4), "hottest_share": round(hottest / total, 6),
                     "hottest_key_share": summary["sweep"].get(topic, {}).get("hottest_key_share", 0.0)}
    result = {"recommended_partitions": recommended,
              "best_strategy": best,
              "best_strategy_max_over_mean": consumers[best]["bytes_spread"]["max_over_mean"] if best else None,
              "biggest_skew": worst}
    if "forensics" in summary:
        result["producers"] = {t: f["verdict"] for t, f in summary["forensics"].items()}
    if "lag" in summary and consumers:
        least = min(consumers, key=lambda s: (consumers[s]["lag"]["max_lag"], s))
        result["lag"] = {"total": sum(sum(v["lag"]) for v in summary["lag"].values()),
                         "least_behind_strategy": least,
                         "furthest_behind": {s: {"member": c["lag"]["furthest_behind"], "lag": c["lag"]["max_lag"]}
                                             for s, c in consumers.items()}}
    return result


def _sweep_summary(per_topic: Mapping[str, Any], digest: Digest, opts: PipelineOptions,
                   live_counts: Mapping[str, int] | None = None,
                   distinct_keys: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Per topic: add keyless bytes (spread evenly, as either null-key model does on average) and judge.

    Each count of the curve also says what moving to it would do to per-key order: the share of keys
    and of keyed bytes that would land on another partition than today's. A live topic can only grow,
    so its recommendation is today's count if that meets the target, else the smallest larger one."""
    hottest = {(topic, n): int(per_partition.max())
               for topic, counts in digest.sweep.items() for n, per_partition in enumerate(counts, start=1)}
    hottest_key = {topic: digest.hottest_key_bytes(topic) for topic in per_topic}
    result = {}
    for topic, row in per_topic.items():
        total, null_bytes = row["bytes"], row["null_bytes"]
        rows = [(n, int(round(hottest.get((topic, n), 0) + null_bytes / n)), n) for n in range(1, opts.max_partitions + 1)]
        verdict = stage_loads.sweep_verdict(rows, total, opts.target_share)
        _add_moves(verdict["curve"], digest, topic, total - null_bytes,
                   (distinct_keys or {}).get(topic, digest.keyed_rows.get(topic, 0)))
        verdict["records"] = row["records"]
        verdict["hottest_key_share"] = round((hottest_key.get(topic) or 0) / total, 6) if total else 0.0
        if live_counts is not None:
            _grow_only(verdict, live_counts[topic])
        if verdict["recommended_partitions"] is None:
            verdict["why_none"] = (f"no count up to {opts.max_partitions} gets the hottest partition under "
                                   f"{opts.target_share:.1%}; the hottest key alone carries "
                                   f"{verdict['hottest_key_share']:.1%} of the bytes")
        verdict["keyless_bytes_spread_evenly"] = null_bytes
        result[topic] = verdict
    return result


def _add_moves(curve: list[dict[str, Any]], digest: Digest, topic: str, keyed_bytes: int, keys: int) -> None:
    moved = digest.moved_bytes.get(topic)
    staying = digest.staying_keys.get(topic)
    for point in curve:
        n = point["partitions"]
        if moved is None or n > len(moved):
            point["moved_keys_share"] = point["moved_bytes_share"] = 0.0
            continue
        point["moved_keys_share"] = round((keys - int(staying[n - 1])) / keys, 6) if keys else 0.0
        point["moved_bytes_share"] = round(int(moved[n - 1]) / keyed_bytes, 6) if keyed_bytes else 0.0


def _grow_only(verdict: dict[str, Any], current: int) -> None:
    """A live topic's recommendation: today's count if it meets the target, else the smallest larger count."""
    share = verdict["target_share"]
    fits = [c for c in verdict["curve"] if c["partitions"] >= current and c["hottest_share"] <= share]
    chosen = fits[0] if fits else None
    verdict["current_partitions"] = current
    verdict["recommended_partitions"] = chosen["partitions"] if chosen else None
    if chosen is not None:
        verdict["recommended_moves"] = {"keys_share": chosen["moved_keys_share"],
                                        "bytes_share": chosen["moved_bytes_share"]}


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


def _write_rows(out: Path, name: str, rows: Sequence[Mapping[str, Any]], schema: pa.Schema | None = None) -> None:
    """A small driver-side table as Parquet under ``out/name`` (replacing an earlier run's); with a
    ``schema``, written even when empty."""
    import pyarrow.parquet as pq

    target = out / name
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("*.parquet"):
        old.unlink()
    if rows or schema is not None:
        pq.write_table(pa.Table.from_pylist(list(rows), schema=schema), (target / "part-0.parquet").as_posix())
