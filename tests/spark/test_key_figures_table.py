"""The pipeline's per-split counting table (KassignKeyFigures.java) against a brute-force count.

Tiny table limits force every path: many flushes per split, chunks of a row or two, and groups
that come back from several flushes and splits, which Spark's merge must add up exactly."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kassign.spark.partition import engine_in_use
from kassign.spark.counting import count_per_group

KEY_TYPES = {"string": T.StringType(), "binary": T.BinaryType(), "int": T.IntegerType(), "long": T.LongType()}


@pytest.fixture(autouse=True)
def _needs_the_jvm_engine(spark):
    if engine_in_use(spark) != "jvm":
        pytest.skip("the counting table is part of kassign's JVM code (no javac here)")


def _key(kind: str, rng: random.Random):
    n = rng.randrange(40)
    if kind == "string":
        return rng.choice(["", "é", "key-"]) + str(n)  # "" and multi-byte text are keys like any other
    if kind == "binary":
        return bytes([0, n % 7, 255])[: 1 + n % 3] + bytes([n])  # zero bytes inside keys
    if kind == "int":
        return rng.choice([-1, 0, 2**31 - 1, -(2**31)]) if n < 4 else n
    return rng.choice([-1, 0, 2**63 - 1, -(2**63)]) if n < 4 else n * 2**40


def _rows(kind: str, with_topic: bool, seed: int, count: int = 600) -> list[tuple]:
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        key = None if rng.random() < 0.15 else _key(kind, rng)
        partition = rng.randrange(3) if key is None and rng.random() < 0.8 else None
        reason = rng.choice(["bad size", "key is not a valid int"]) if rng.random() < 0.05 else None
        size = None if reason is not None or rng.random() < 0.03 else rng.randrange(-5, 1000)
        topic = rng.choice(["orders", "payments", None, ""]) if with_topic else None
        rows.append(((topic,) if with_topic else ()) + (key, partition, reason, size))
    return rows


def _frame(spark, kind: str, with_topic: bool, rows: list[tuple], splits: int) -> tuple[DataFrame, list[str]]:
    group = (["topic"] if with_topic else []) + ["key", "partition", "reason"]
    fields = ([T.StructField("topic", T.StringType())] if with_topic else []) + [
        T.StructField("key", KEY_TYPES[kind]), T.StructField("partition", T.IntegerType()),
        T.StructField("reason", T.StringType()), T.StructField("bytes", T.LongType())]
    # Splits by a column's hash, not round-robin: the same rows land in the same split whichever
    # columns a query reads.
    numbered = [row + (i % splits,) for i, row in enumerate(rows)]
    df = spark.createDataFrame(numbered, T.StructType(fields + [T.StructField("split", T.IntegerType())]))
    return df.repartition(splits, "split").drop("split"), group


def _brute_force(rows: list[tuple], columns: int) -> dict[tuple, tuple[int, int | None]]:
    records: dict[tuple, int] = defaultdict(int)
    sizes: dict[tuple, int | None] = {}
    for row in rows:
        group, size = tuple(row[:columns]), row[columns]
        records[group] += 1
        before = sizes.get(group)
        sizes[group] = before if size is None else (before or 0) + size  # SQL sum: null only when all are null
    return {g: (records[g], sizes[g]) for g in records}


def _collected(df: DataFrame, group: list[str]) -> dict[tuple, tuple[int, int | None]]:
    result = {}
    for row in df.collect():
        values = tuple(bytes(v) if isinstance(v, bytearray) else v for v in (row[c] for c in group))
        assert values not in result, f"group {values} twice after the merge"
        result[values] = (row["records"], row["bytes"])
    return result


LIMITS = {"heap-sized": (0, 0), "tiny": (3, 64), "one-row": (1, 1)}
# Every key type with and without a topic column, each once with the heap-sized and once with tiny
# tables; a flush after every row for two of them (each case is a Spark job: about a second).
CASES = [(kind, with_topic, limits) for i, kind in enumerate(sorted(KEY_TYPES))
         for with_topic, limits in (((i % 2 == 0), "heap-sized"), ((i % 2 == 1), "tiny"))]
CASES += [("string", True, "one-row"), ("long", False, "one-row")]


@pytest.mark.parametrize(("kind", "with_topic", "limits"), CASES)
def test_counts_equal_a_brute_force_count(spark, kind, with_topic, limits):
    limits = LIMITS[limits]
    rows = _rows(kind, with_topic, seed=hash((kind, with_topic, limits)) % 1000)
    df, group = _frame(spark, kind, with_topic, rows, splits=3)
    result = count_per_group(df, group, *limits)
    assert _collected(result, group) == _brute_force(rows, len(group))
    assert not result.schema["records"].nullable  # as count() made it: key_stats keeps its schema


def test_each_split_emits_a_group_once_when_the_table_has_room(spark):
    """The table really counts within a split (else it would only add a step): with room for
    every group, a split's partial rows hold each of its groups once."""
    rows = _rows("string", False, seed=7, count=3000)
    df, group = _frame(spark, "string", False, rows, splits=4)
    partial = DataFrame(spark._jvm.kassign.spark.KassignKeyFigures.partial(df.select(*group, "bytes")._jdf, 0, 0),
                        spark)
    per_split = (partial.groupBy(F.spark_partition_id().alias("split"), *group).count()
                 .agg(F.max("count").alias("most"), F.count(F.lit(1)).alias("rows")).first())
    assert per_split["most"] == 1
    distinct_per_split = df.select(F.spark_partition_id().alias("split"), *group).distinct().count()
    assert per_split["rows"] == distinct_per_split < len(rows) / 4
    assert partial.agg(F.sum("records")).first()[0] == len(rows)


def test_an_empty_input_gives_no_groups(spark):
    df, group = _frame(spark, "long", True, [], splits=2)
    assert count_per_group(df, group, 2, 16).count() == 0
