"""``kafka_partition(col, n)``: Kafka's default partitioner as a Spark column expression.

Keys are hashed as bytes: string keys by their UTF-8 bytes (a cast to binary), binary
keys as they are. Only the 32-bit murmur2 is computed in a UDF; the partition,
``(murmur2 & 0x7fffffff) % n``, is plain Spark SQL, so a null key gives a null partition.

Two engines compute the hash:

- ``jvm``: our own Java UDF (see ``jvm.py``), registered in the session; rows never leave
  the executor JVM.
- ``arrow``: an Arrow UDF handing whole binary columns to the numba kernel of
  ``kassign.partitioner`` without copying key bytes (a pandas UDF on PySpark < 4.1).

``auto`` (the default) takes ``jvm`` when the session can load our jar, else ``arrow``.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType

from kassign.errors import KassignError
from kassign.partitioner import murmur2_many
from kassign.spark import jvm

log = logging.getLogger(__name__)

ENGINES = ("auto", "jvm", "arrow")
_jvm_sessions: dict[int, bool] = {}


def _murmur2_arrow_array(keys: pa.Array) -> pa.Array:
    """murmur2 of a binary Arrow array; nulls stay null."""
    hashes = murmur2_many(keys)
    mask = keys.is_null().to_numpy(zero_copy_only=False) if keys.null_count else None
    return pa.array(hashes, type=pa.int32(), mask=mask)


def _build_arrow_udf() -> Any:
    if hasattr(F, "arrow_udf"):  # PySpark >= 4.1: the function sees pyarrow arrays directly
        def murmur2_batch(keys: pa.Array) -> pa.Array:
            return _murmur2_arrow_array(keys)

        return F.arrow_udf(murmur2_batch, IntegerType())

    import pandas as pd

    def murmur2_series(keys: pd.Series) -> pd.Series:  # pragma: no cover - PySpark < 4.1
        array = pa.array(keys, type=pa.binary(), from_pandas=True)
        hashes = _murmur2_arrow_array(array)
        return hashes.to_pandas().astype("Int32")

    return F.pandas_udf(murmur2_series, IntegerType())


_ARROW_UDF: Any = None


def _arrow_udf() -> Any:
    global _ARROW_UDF
    if _ARROW_UDF is None:
        _ARROW_UDF = _build_arrow_udf()
    return _ARROW_UDF


def _session_key(spark: SparkSession) -> int:
    return id(spark._jsparkSession)


def register_jvm_udf(spark: SparkSession) -> bool:
    """Register ``kassign_murmur2`` in ``spark``; False when the JVM cannot load our class.

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
                spark.udf.registerJavaFunction(jvm.SQL_FUNCTION, jvm.JAVA_CLASS, IntegerType())
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


def _as_column(col: str | Column) -> Column:
    if isinstance(col, Column):
        return col
    if isinstance(col, str):
        return F.col(col)
    raise KassignError(f"kafka_partition takes a column name or a Column, got {type(col).__name__}")


def kafka_murmur2(col: str | Column, engine: str = "auto") -> Column:
    """Kafka's murmur2 of each key (signed int32), null for a null key."""
    if engine not in ENGINES:
        raise KassignError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")
    key_bytes = _as_column(col).cast("binary")
    if engine != "arrow":
        spark = _active_session()
        if register_jvm_udf(spark):
            return F.call_function(jvm.SQL_FUNCTION, key_bytes)
        if engine == "jvm":
            raise KassignError("the JVM murmur2 UDF is unavailable (no javac, or the jar cannot be loaded); use engine='arrow'")
    return _arrow_udf()(key_bytes)


def kafka_partition(col: str | Column, n: int, engine: str = "auto") -> Column:
    """The partition Kafka's default partitioner picks for each key; null for a null key."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise KassignError(f"number of partitions must be a whole number >= 1, got {n!r}")
    return (kafka_murmur2(col, engine).bitwiseAND(F.lit(0x7FFFFFFF)) % F.lit(int(n))).cast("int")


def engine_in_use(spark: SparkSession) -> str:
    """``jvm`` or ``arrow``: what ``engine='auto'`` resolves to in this session."""
    return "jvm" if register_jvm_udf(spark) else "arrow"
