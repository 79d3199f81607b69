"""kafka_partition(..., partitioner=...) on a real Spark session: every client vector line, both engines."""

from __future__ import annotations

import base64
import random
from collections import defaultdict

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kassign import partition_for_key
from kassign.producer.clients import NAMES
from kassign.core.errors import KassignError
from kassign.spark import kafka_partition
from tests.conftest import load_vectors

ENGINES = ["jvm", "arrow"]
SCHEMA = T.StructType([T.StructField("i", T.IntegerType()), T.StructField("key", T.BinaryType())])


def _null_if_unhashed(partition: int) -> int | None:
    return None if partition == -1 else partition


@pytest.mark.parametrize("engine", ENGINES)
def test_every_vector_line_through_the_spark_column(spark, engine):
    lines = load_vectors("partition-clients.jsonl")
    by_partitioner = defaultdict(list)
    for i, line in enumerate(lines):
        by_partitioner[f"{line['client']}:{line['partitioner']}"].append(i)
    checked = 0
    for name, rows in by_partitioner.items():
        keys = [(i, None if lines[i]["key_b64"] is None else base64.b64decode(lines[i]["key_b64"])) for i in rows]
        counts = sorted({lines[i]["partitions"] for i in rows})
        df = spark.createDataFrame(keys, SCHEMA)
        got = {r["i"]: r for r in df.select("i", *(kafka_partition("key", n, engine=engine, partitioner=name)
                                                   .alias(f"p{n}") for n in counts)).collect()}
        for i in rows:
            expected = _null_if_unhashed(lines[i]["partition"])
            assert got[i][f"p{lines[i]['partitions']}"] == expected, (name, lines[i])
            checked += 1
    assert checked == len(lines)


def _keys() -> list[bytes | None]:
    rng = random.Random(5)
    return [None, b"", b"\x00", b"user-8", *(rng.randbytes(rng.randint(0, 48)) for _ in range(300))]


@pytest.mark.parametrize("engine", ENGINES)
def test_every_partitioner_equals_partition_for_key_including_sarama(spark, engine):
    keys = _keys()
    df = spark.createDataFrame(list(enumerate(keys)), SCHEMA)
    columns = [kafka_partition("key", 37, engine=engine, partitioner=name).alias(f"c{j}") for j, name in enumerate(NAMES)]
    got = {r["i"]: r for r in df.select("i", *columns).collect()}
    for i, key in enumerate(keys):
        for j, name in enumerate(NAMES):
            assert got[i][f"c{j}"] == _null_if_unhashed(partition_for_key(key, 37, partitioner=name)), (name, key)


@pytest.mark.parametrize("engine", ENGINES)
def test_int_and_long_columns_serialise_like_kafka(spark, engine):
    values = [0, 1, -1, 42, 2**31 - 1, -(2**31), None, 123456789]
    df = spark.createDataFrame([(i, v, v) for i, v in enumerate(values)], "i int, small int, big long")
    names = ["java", "librdkafka:consistent", "sarama:hash", "kafkajs:legacy"]
    got = {r["i"]: r for r in df.select("i", *(
        c for j, name in enumerate(names) for c in (
            kafka_partition("small", 12, engine=engine, partitioner=name, key_type="int").alias(f"int{j}"),
            kafka_partition(F.col("big"), 12, engine=engine, partitioner=name, key_type="long").alias(f"long{j}"))
    )).collect()}
    for i, value in enumerate(values):
        for j, name in enumerate(names):
            for kind in ("int", "long"):
                expected = _null_if_unhashed(partition_for_key(value, 12, partitioner=name, key_type=kind))
                assert got[i][f"{kind}{j}"] == expected, (name, kind, value)


def test_bad_partitioner_and_key_type(spark):
    with pytest.raises(KassignError, match="unknown partitioner 'go:hash'"):
        kafka_partition("key", 3, partitioner="go:hash")
    with pytest.raises(KassignError, match="unknown key type 'short'"):
        kafka_partition("key", 3, key_type="short")


def test_generated_code_path_on_text_binary_and_integer_columns(spark, tmp_path):
    """The JVM engine runs each rule as a Catalyst expression (generated code calling our Java
    method on Spark's own values: byte[], int, long), in a job that ships its plan to executors
    (a Parquet scan and an aggregation, as the pipeline runs it); every
    partitioner agrees with partition_for_key on each column type."""
    rng = random.Random(5)
    texts = ["", "user-1", "ключ-7", "日本語キー", "\U0001F600emoji"] + [
        "".join(rng.choice("abcxyzé0123") for _ in range(rng.randint(0, 21))) for _ in range(60)]
    rows = [(t, t.encode("utf-8"), rng.randint(-2**31, 2**31 - 1), rng.randint(-2**63, 2**63 - 1)) for t in texts]
    rows.append((None, None, None, None))
    schema = "text string, raw binary, i int, l bigint"
    df = spark.createDataFrame(rows, schema)
    # a Parquet scan plus an aggregation serialises the expression to the executors
    parquet = tmp_path / "keys.parquet"
    df.write.parquet(str(parquet))
    df = spark.read.parquet(str(parquet)).orderBy("i", "l")
    rows = [(r["text"], r["raw"], r["i"], r["l"]) for r in df.collect()]
    counted = df.groupBy(kafka_partition("text", 7, engine="jvm").alias("p")).count().collect()
    assert sum(r["count"] for r in counted) == len(rows)
    plan = df.select(kafka_partition("text", 7, engine="jvm"))._jdf.queryExecution().executedPlan().toString()
    assert "static_invoke(kassign.spark.KassignMurmur2.partitionOf" in plan, plan  # an expression, not a UDF call
    for name in NAMES:
        got = df.select(kafka_partition("text", 13, engine="jvm", partitioner=name).alias("t"),
                        kafka_partition("raw", 13, engine="jvm", partitioner=name).alias("r"),
                        kafka_partition("i", 13, engine="jvm", partitioner=name, key_type="int").alias("i"),
                        kafka_partition("l", 13, engine="jvm", partitioner=name, key_type="long").alias("l")).collect()
        for (text, raw, i, l), row in zip(rows, got):
            expected = [partition_for_key(raw, 13, partitioner=name),
                        partition_for_key(raw, 13, partitioner=name),
                        partition_for_key(i, 13, partitioner=name, key_type="int") if i is not None
                        else partition_for_key(None, 13, partitioner=name),
                        partition_for_key(l, 13, partitioner=name, key_type="long") if l is not None
                        else partition_for_key(None, 13, partitioner=name)]
            assert [row["t"], row["r"], row["i"], row["l"]] == [_null_if_unhashed(e) for e in expected], (name, text)
