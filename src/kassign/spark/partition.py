"""``kafka_partition(col, n, partitioner=...)``: a producer client's partitioner as a Spark column.

Keys are hashed as Kafka's serialisers write them: string keys by their UTF-8 bytes (a
cast to binary), binary keys as they are, and with ``key_type="int"`` or ``"long"`` an
integer column as 4 or 8 big-endian bytes (IntegerSerializer, LongSerializer). The
column equals ``kassign.partition_for_key`` on every row, with null where that gives -1
(the client does not hash the key: a null key under ``java``, say). Under ``java``
``"user-1"`` gives 8 of 12; the other clients' rules are in ``kassign.producer.clients``.

Two engines compute it:

- ``jvm``: our own Java code (see ``jvm.py``); rows never leave the executor JVM. The client
  rule is a Catalyst expression: once the analyzer knows the key's type it becomes a
  ``StaticInvoke`` whose generated code calls ``KassignMurmur2.partitionOf`` on Spark's own
  values (a text column's UTF-8 buffer read in place, binary as ``byte[]``, int/bigint as
  primitives), so no row is converted, boxed or copied (as fast as Spark's own ``hash()``). Where the driver cannot reach our class (a jar
  added to a user's session with ``ADD JAR`` only), the registered UDF ``kassign_partition``
  serves instead; ``kassign_murmur2`` is Kafka's hash alone (``kafka_murmur2``).
- ``arrow``: an Arrow UDF handing whole key columns to the numba kernels of
  ``kassign.producer.partitioner`` without copying key bytes (a pandas UDF on PySpark < 4.1).

``auto`` (the default) takes ``jvm`` when the session can load our jar, else ``arrow``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType

from kassign.producer import hashing
from kassign.producer.clients import ClientPartitioner, resolve
from kassign.core.errors import KassignError
from kassign.producer.keys import INT_WIDTHS, check_key_type
from kassign.producer.partitioner import hashes_for_keys, partitions_for_keys
from kassign.spark import jvm

log = logging.getLogger(__name__)

ENGINES = ("auto", "jvm", "arrow")
_jvm_sessions: dict[int, bool] = {}


def _as_arrow(keys: Any, key_type: str | None) -> pa.Array:
    """A pandas Series (PySpark < 4.1) as the Arrow array the kernels take."""
    arrow_type = {"int": pa.int32(), "long": pa.int64()}.get(key_type or "", pa.binary())
    return pa.array(keys, type=arrow_type, from_pandas=True)


def _with_nulls(values: np.ndarray, missing: np.ndarray | None) -> pa.Array:
    return pa.array(values, type=pa.int32(), mask=missing if missing is not None and missing.any() else None)


def _arrow_udf(compute: Any, key_type: str | None) -> Any:
    """Wrap ``compute(pa.Array) -> pa.Array`` (int32) as an Arrow UDF, or a pandas UDF on old PySpark."""
    if hasattr(F, "arrow_udf"):  # PySpark >= 4.1: the function sees pyarrow arrays directly
        return F.arrow_udf(compute, IntegerType())

    def on_series(keys):  # pragma: no cover - PySpark < 4.1
        return compute(_as_arrow(keys, key_type)).to_pandas().astype("Int32")

    return F.pandas_udf(on_series, IntegerType())


@functools.cache
def _murmur2_arrow_udf(key_type: str | None) -> Any:
    def murmur2_batch(keys: pa.Array) -> pa.Array:
        missing = keys.is_null().to_numpy(zero_copy_only=False) if keys.null_count else None
        return _with_nulls(hashes_for_keys(keys, hashing.MURMUR2, key_type), missing)

    return _arrow_udf(murmur2_batch, key_type)


@functools.cache
def _partition_arrow_udf(name: str, n: int, key_type: str | None) -> Any:
    def partition_batch(keys: pa.Array) -> pa.Array:
        partitions = partitions_for_keys(keys, n, name, key_type)
        return _with_nulls(partitions, partitions < 0)

    return _arrow_udf(partition_batch, key_type)


def _session_key(spark: SparkSession) -> int:
    return id(spark._jsparkSession)


def _register_all(spark: SparkSession) -> None:
    for name, java_class in jvm.FUNCTIONS:
        spark.udf.registerJavaFunction(name, java_class, IntegerType())


def register_jvm_udf(spark: SparkSession) -> bool:
    """Register our JVM UDFs in ``spark``; False when the JVM cannot load our classes.

    A session built by ``kassign.spark.session`` has the jar on its classpath already; for a
    user's own session we add it with ``ADD JAR`` first.
    """
    key = _session_key(spark)
    if key in _jvm_sessions:
        return _jvm_sessions[key]
    jar = jvm.udf_jar()
    ok = False
    if jar is not None:
        for attempt in ("registered", "added"):
            try:
                _register_all(spark)
                ok = True
                break
            except Exception as err:  # py4j wraps ClassNotFoundException; try adding the jar once
                if attempt == "added":
                    log.warning("cannot load kassign's JVM UDF (%s); using the Arrow UDF", str(err).splitlines()[0])
                    break
                try:
                    spark.sql(f"ADD JAR '{jar.as_posix()}'")
                except Exception as add_err:
                    log.warning("cannot add %s to the session (%s); using the Arrow UDF", jar, add_err)
                    break
    _jvm_sessions[key] = ok
    return ok


def _active_session() -> SparkSession:
    spark = SparkSession.getActiveSession()
    if spark is None:
        raise KassignError("kafka_partition needs an active SparkSession; create one before building the column")
    return spark


def serialised_key(col: str | Column, key_type: str | None = None) -> Column:
    """The key column as the JVM UDFs take it: binary (text as UTF-8), or int/bigint for ``key_type`` int/long.

    Integer keys stay integers here (Spark's ANSI mode refuses to cast them to binary); the
    UDFs write them big-endian, as Kafka's serialisers do.
    """
    check_key_type(key_type)
    if isinstance(col, str):
        column = F.col(col)
    elif isinstance(col, Column):
        column = col
    else:
        raise KassignError(f"kafka_partition takes a column name or a Column, got {type(col).__name__}")
    if key_type in INT_WIDTHS:
        return column.cast("int" if key_type == "int" else "long")
    return column.cast("binary")


def _use_jvm(engine: str) -> bool:
    if engine not in ENGINES:
        raise KassignError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")
    if engine == "arrow":
        return False
    if register_jvm_udf(_active_session()):
        return True
    if engine == "jvm":
        raise KassignError("the JVM UDF is unavailable (no javac, or the jar cannot be loaded); use engine='arrow'")
    return False


def kafka_murmur2(col: str | Column, engine: str = "auto", key_type: str | None = None) -> Column:
    """Kafka's murmur2 of each key (signed int32), null for a null key."""
    key = serialised_key(col, key_type)
    if _use_jvm(engine):
        return F.call_function(jvm.SQL_FUNCTION, key)
    return _murmur2_arrow_udf(key_type)(key)


def _check_count(n: int) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise KassignError(f"number of partitions must be a whole number >= 1, got {n!r}")
    if n > 2**31 - 1:
        raise KassignError(f"number of partitions must fit a Java int, got {n}")
    return int(n)


def _jvm_partition(key: Column, client: ClientPartitioner, n: int, raw: Column | None = None,
                   key_width: int = 0) -> Column:
    expression = _generated_partition(key if raw is None else raw, key_width, client, n)
    if expression is not None:
        return expression
    return F.call_function(jvm.PARTITION_FUNCTION, key, F.lit(client.hash_kind), F.lit(client.fold),
                           F.lit(client.null_key_hashed), F.lit(client.empty_key_random), F.lit(n))


def _generated_partition(key: Column, key_width: int, client: ClientPartitioner, n: int) -> Column | None:
    """The client rule as a Catalyst expression whose generated code calls our Java method per row
    (no per-row UDF conversion); None where the driver cannot reach our class (then the UDF serves)."""
    spark = _active_session()
    try:
        factory = getattr(spark._jvm.kassign.spark.KassignMurmur2, "partitionColumn")
        column = Column(factory(key._jc, key_width, client.hash_kind, client.fold, client.empty_key_random, n))
    except Exception as err:  # py4j: the class is only in the SQL class loader (ADD JAR), or an older Spark
        log.debug("kafka_partition falls back to the JVM UDF: %s", str(err).splitlines()[0] if str(err) else err)
        return None
    if client.empty_key_random:
        column = F.nullif(column, F.lit(-1))
    if client.null_key_hashed:  # a null key is hashed as the empty key
        column = F.coalesce(column, F.lit(client.partition(b"", n)))
    return column


def kafka_partition(col: str | Column, n: int, engine: str = "auto", partitioner: str = "java",
                    key_type: str | None = None) -> Column:
    """The partition ``partitioner`` picks for each key (``partition_for_key`` on every row).

    Null where the client does not hash the key (``partition_for_key`` gives -1 there): a
    null key under ``java``, say, or any empty key under ``librdkafka:consistent_random``.
    """
    n = _check_count(n)
    client = resolve(partitioner)
    key = serialised_key(col, key_type)
    if _use_jvm(engine):
        # the generated-code path takes a text or binary column as it is (the UTF-8 buffer is read in
        # place, no cast copies it); integers arrive as int/bigint for Kafka's Integer/LongSerializer
        raw = key if key_type in INT_WIDTHS else (F.col(col) if isinstance(col, str) else col)
        return _jvm_partition(key, client, n, raw, INT_WIDTHS.get(key_type, 0))
    return _partition_arrow_udf(client.name, n, key_type)(key)


def engine_in_use(spark: SparkSession) -> str:
    """``jvm`` or ``arrow``: what ``engine='auto'`` resolves to in this session."""
    return "jvm" if register_jvm_udf(spark) else "arrow"


def kafka_partition_by_topic(counts: Mapping[str, int], default_count: int, engine: str = "auto",
                             partitioner: str = "java", key_type: str | None = None) -> Column:
    """``kafka_partition`` of the ``key`` column where each row's ``topic`` column picks the partition
    count: ``counts[topic]`` where given, else ``default_count``."""
    partition = kafka_partition("key", default_count, engine=engine, partitioner=partitioner, key_type=key_type)
    for topic, n in counts.items():
        if n != default_count:
            expr = kafka_partition("key", n, engine=engine, partitioner=partitioner, key_type=key_type)
            partition = F.when(F.col("topic") == topic, expr).otherwise(partition)
    return partition
