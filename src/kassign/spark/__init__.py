"""kassign on Spark: Kafka's partitioner as a column expression, live topics as a data source, and the pipeline.

>>> from kassign.spark import kafka_partition
>>> df.withColumn("partition", kafka_partition("key", 12))   # doctest: +SKIP
>>> kassign.spark.read_kafka(spark, "broker:9092", ["orders"], last=100_000)   # doctest: +SKIP
"""

from kassign.spark.kafka_source import read_kafka, register_sources
from kassign.spark.partition import engine_in_use, kafka_murmur2, kafka_partition, register_jvm_udf
from kassign.spark.session import spark_session

__all__ = ["engine_in_use", "kafka_murmur2", "kafka_partition", "read_kafka", "register_jvm_udf", "register_sources",
           "spark_session"]
