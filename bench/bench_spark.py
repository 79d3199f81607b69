"""Throughput of kafka_partition against Spark's own hash() and a kafka-python pandas UDF.

Runs everything on the same cached key column in one local Spark session and prints
rows per second and the share of hash()'s throughput. Usage:

    python bench/bench_spark.py [--rows 4000000] [--slow-rows 200000]

The kafka-python UDF is slow, so it runs on the first --slow-rows rows only and is
reported per row. Each figure is the best of --repeat runs (first run warms the JIT).
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
from pyspark.sql import functions as F
from rich.progress import Progress

from kassign.spark import kafka_partition, spark_session

PARTITIONS = 12


def _force(df) -> None:
    df.write.format("noop").mode("overwrite").save()


def _best_seconds(build, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        _force(build())
        times.append(time.perf_counter() - start)
    return min(times)


def _kafka_python_udf():
    from kafka.partitioner.default import murmur2 as kp_murmur2

    def partitions(keys: pd.Series) -> pd.Series:
        return keys.map(lambda k: None if k is None else (kp_murmur2(k) & 0x7FFFFFFF) % PARTITIONS).astype("Int32")

    return F.pandas_udf(partitions, "int")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--slow-rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    spark = spark_session(conf={"spark.ui.showConsoleProgress": "false"})
    keys = (
        spark.range(args.rows, numPartitions=4)
        .select(F.concat(F.lit("user-"), (F.col("id") * 7919 % 1_000_003).cast("string")).alias("key"))
        .cache()
    )
    keys.count()
    slow_keys = keys.limit(args.slow_rows).cache()
    slow_keys.count()

    cases = [
        ("spark hash()", keys, lambda: keys.select(F.hash("key").alias("h")), args.rows),
        ("kafka_partition jvm", keys, lambda: keys.select(kafka_partition("key", PARTITIONS, engine="jvm").alias("p")), args.rows),
        ("kafka_partition arrow+numba", keys,
         lambda: keys.select(kafka_partition("key", PARTITIONS, engine="arrow").alias("p")), args.rows),
    ]
    udf = _kafka_python_udf()
    cases.append(("pandas UDF kafka-python murmur2", slow_keys,
                  lambda: slow_keys.select(udf(F.col("key").cast("binary")).alias("p")), args.slow_rows))

    print(f"rows={args.rows:,} (kafka-python: {args.slow_rows:,}), partitions={PARTITIONS}, "
          f"cores={spark.sparkContext.defaultParallelism}, best of {args.repeat}")
    results = {}
    with Progress(transient=True) as progress:
        task = progress.add_task("benchmarking", total=len(cases))
        for name, _, build, rows in cases:
            progress.update(task, description=name)
            seconds = _best_seconds(build, args.repeat)
            results[name] = rows / seconds
            progress.advance(task)
    baseline = results["spark hash()"]
    for name, rate in results.items():
        print(f"{name:34s} {rate / 1e6:9.2f} M rows/s   {100 * rate / baseline:6.1f}% of hash()")
    spark.stop()


if __name__ == "__main__":
    main()
