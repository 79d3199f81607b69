"""kassign on Spark: Kafka's partitioner as a column expression, live topics as a data source, and the pipeline.

>>> from kassign.spark import kafka_partition
>>> df.withColumn("partition", kafka_partition("key", 12))   # doctest: +SKIP
>>> kassign.spark.read_kafka(spark, "broker:9092", ["orders"], last=100_000)   # doctest: +SKIP

The names below are loaded on first use (PEP 562): ``kassign.spark.options`` (what ``kassign pipeline``
judges before Spark starts) is importable without PySpark's and Arrow's start-up cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kassign.core.lazy import lazy_names

if TYPE_CHECKING:  # what static tools (type checkers, the API docs) see; loaded lazily at run time
    from kassign.spark.kafka_source import read_kafka, register_sources
    from kassign.spark.partition import engine_in_use, kafka_murmur2, kafka_partition, register_jvm_udf
    from kassign.spark.session import spark_session

_HOMES = {
    "read_kafka": "kassign.spark.kafka_source",
    "register_sources": "kassign.spark.kafka_source",
    "engine_in_use": "kassign.spark.partition",
    "kafka_murmur2": "kassign.spark.partition",
    "kafka_partition": "kassign.spark.partition",
    "register_jvm_udf": "kassign.spark.partition",
    "spark_session": "kassign.spark.session",
}

__all__ = ["engine_in_use", "kafka_murmur2", "kafka_partition", "read_kafka", "register_jvm_udf", "register_sources",
           "spark_session"]


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
