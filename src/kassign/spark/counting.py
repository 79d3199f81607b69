"""Counting records and bytes per key in Spark, for the pipeline's one pass (file and live topics alike).

Each input split is counted per group (``[topic,] key, partition, reason``) in kassign's JVM tables
(``KassignKeyFigures.java``: rows bucketed by hash, so each table stays in the CPU cache); the splits' partial
counts are then merged on the driver (``kassign.spark.key_merge``) or, past Spark's result limit, by Spark
(``merge_in_spark``, with Spark's own partial aggregation bypassed: it would only repeat the split tables).
Keyed rows then get the key as shown and its 31-bit murmur2 for the sweep (``with_key_columns``).

For example, four records ``(t, a, 1, 10 B)``, ``(t, a, 1, 5 B)``, ``(t, b, 2, 7 B)`` in two splits count to
``(t, a, 1): 2 records, 15 B`` and ``(t, b, 2): 1 record, 7 B``, whichever split each came from.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kassign.spark.options import PipelineOptions
from kassign.spark.partition import kafka_murmur2
from kassign.spark.placement import on_the_jvm
from kassign.spark.stages.base import write_only

# Spark's own partial aggregation would only repeat the per-split counting KassignKeyFigures has done;
# without those tables (the Arrow engine) it is what keeps the shuffle small, so it stays on there.
BYPASS_PARTIAL = "spark.sql.execution.bypassPartialAggregation"

INTEGRAL_TYPES = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)


def _split_counts(placed: DataFrame, group: list[str], max_groups: int = 0, max_bytes: int = 0) -> DataFrame:
    """Each input split of ``placed`` counted per ``group`` in kassign's JVM tables (``KassignKeyFigures``),
    not yet merged: ``group``, ``records`` and ``bytes``, a row per group a split saw (or more, where its
    tables were flushed). ``max_groups``/``max_bytes`` bound a split's tables (0: sized from the heap)."""
    spark = placed.sparkSession
    return DataFrame(spark._jvm.kassign.spark.KassignKeyFigures.partial(placed.select(*group, "bytes")._jdf,
                                                                        max_groups, max_bytes), spark)


def count_per_group(placed: DataFrame, group: list[str], max_groups: int = 0, max_bytes: int = 0,
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


@contextlib.contextmanager
def spark_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
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


def merge_in_spark(figures: DataFrame, path: Path, opts: PipelineOptions) -> None:
    """The key figures merged by Spark and written to ``path`` (where the driver cannot merge them)."""
    with spark_conf(figures.sparkSession, {BYPASS_PARTIAL: "true"} if on_the_jvm(opts) else {}):
        write_only(figures, path)


def _display_key(df: DataFrame) -> F.Column:
    key_type = df.schema["key"].dataType
    if isinstance(key_type, INTEGRAL_TYPES):
        return F.col("key").cast("string")
    return F.col("key") if isinstance(key_type, T.StringType) else F.concat(F.lit("0x"), F.lower(F.hex("key")))


def readable_key() -> F.Column:
    """A key read from Kafka as shown: its text where it is valid UTF-8, else 0x and hex."""
    return F.when(F.expr("is_valid_utf8(key)"), F.col("key").cast("string")).otherwise(
        F.concat(F.lit("0x"), F.lower(F.hex("key"))))


def with_key_columns(figures: DataFrame, opts: PipelineOptions, key_type: str | None) -> DataFrame:
    """The key figures plus, on keyed rows, the key as shown and its 31-bit murmur2 (for the sweep)."""
    keyed = F.col("key").isNotNull()
    shown = readable_key() if opts.live else _display_key(figures)
    return figures.select(
        "*", F.when(keyed, shown).alias("key_display"),
        F.when(keyed, kafka_murmur2("key", engine=opts.engine, key_type=key_type).bitwiseAND(F.lit(0x7FFFFFFF))
               .cast("long")).alias("hash"))
