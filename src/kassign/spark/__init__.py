"""kassign on Spark: Kafka's partitioner as a column expression, and the load pipeline.

>>> from kassign.spark import kafka_partition
>>> df.withColumn("partition", kafka_partition("key", 12))   # doctest: +SKIP
"""

from kassign.spark.partition import engine_in_use, kafka_murmur2, kafka_partition, register_jvm_udf
from kassign.spark.session import spark_session

__all__ = ["engine_in_use", "kafka_murmur2", "kafka_partition", "register_jvm_udf", "spark_session"]
