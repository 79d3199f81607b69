"""kafka_partition on a real Spark session: identical to partition_for_key on every row, on both engines."""

from __future__ import annotations

import base64
import random

import pytest
from pyspark.sql import types as T

from kassign import partition_for_key
from kassign.core.errors import KassignError
from kassign.spark import engine_in_use, kafka_murmur2, kafka_partition
from tests.conftest import load_vectors

ENGINES = ["jvm", "arrow"]


def _text_keys() -> list[str | None]:
    rng = random.Random(7)
    alphabet = "abcXYZ019-_ éüß漢字🙂\u0000"
    keys: list[str | None] = ["", "a", "ab", "abc", "abcd", "abcde", "héllo", "漢字", "🙂🙂", None, "\u0000"]
    keys += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(400)]
    return keys + [None] * 5


def _binary_keys() -> list[bytes | None]:
    rng = random.Random(11)
    keys: list[bytes | None] = [b"", b"\x00", b"\xff\xfe\xfd", bytes(range(256)), None]
    return keys + [rng.randbytes(rng.randint(0, 64)) for _ in range(400)]


def test_the_session_uses_our_jvm_udf(spark):
    assert engine_in_use(spark) == "jvm"  # javac is on this machine; if not, the Arrow fallback still passes the rest


@pytest.mark.parametrize("engine", ENGINES)
def test_string_keys_hash_their_utf8_bytes(spark, engine):
    keys = _text_keys()
    counts = [1, 7, 12, 1000]
    df = spark.createDataFrame([(i, k) for i, k in enumerate(keys)], "i int, key string")
    rows = df.select("i", *(kafka_partition("key", n, engine=engine).alias(f"p{n}") for n in counts)).collect()
    got = {r.i: r for r in rows}
    for i, key in enumerate(keys):
        for n in counts:
            expected = None if key is None else partition_for_key(key.encode("utf-8"), n)
            assert got[i][f"p{n}"] == expected, (repr(key), n)


@pytest.mark.parametrize("engine", ENGINES)
def test_binary_keys_hash_raw_and_match_kafkas_vectors(spark, engine):
    vectors = load_vectors("murmur2.jsonl")
    rows = [(i, base64.b64decode(v["key_b64"]), v["partitions"]) for i, v in enumerate(vectors)]
    schema = T.StructType([T.StructField("i", T.IntegerType()), T.StructField("key", T.BinaryType()),
                           T.StructField("n", T.IntegerType())])
    df = spark.createDataFrame(rows, schema)
    got = {r.i: (r.h, r.p) for r in df.select(
        "i", kafka_murmur2("key", engine=engine).alias("h"), kafka_partition("key", 12, engine=engine).alias("p")).collect()}
    for i, vector in enumerate(vectors):
        assert got[i][0] == vector["murmur2"]
        assert got[i][1] == (vector["murmur2"] & 0x7FFFFFFF) % 12


@pytest.mark.parametrize("engine", ENGINES)
def test_random_binary_and_null_keys(spark, engine):
    keys = _binary_keys()
    schema = T.StructType([T.StructField("i", T.IntegerType()), T.StructField("key", T.BinaryType())])
    df = spark.createDataFrame([(i, k) for i, k in enumerate(keys)], schema)
    got = {r.i: r.p for r in df.select("i", kafka_partition("key", 31, engine=engine).alias("p")).collect()}
    assert got == {i: None if k is None else partition_for_key(k, 31) for i, k in enumerate(keys)}


def test_bad_arguments_are_one_line_errors(spark):
    with pytest.raises(KassignError, match="whole number >= 1"):
        kafka_partition("key", 0)
    with pytest.raises(KassignError, match="unknown engine"):
        kafka_partition("key", 3, engine="gpu")
    with pytest.raises(KassignError, match="column name or a Column"):
        kafka_partition(42, 3)


def test_auto_falls_back_to_arrow_when_no_jar_can_be_built(spark, monkeypatch):
    from kassign.spark import partition

    monkeypatch.setenv("KASSIGN_NO_JVM_UDF", "1")  # what a machine without javac looks like to udf_jar()
    monkeypatch.setattr(partition, "_jvm_sessions", {})
    assert engine_in_use(spark) == "arrow"
    column = kafka_partition("key", 5)
    assert "kassign_" not in str(column)
    df = spark.createDataFrame([("k1",), (None,), ("ключ",)], "key string")
    assert [r.p for r in df.select(column.alias("p")).collect()] == [
        partition_for_key(b"k1", 5), None, partition_for_key("ключ".encode(), 5)]
