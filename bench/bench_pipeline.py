"""The whole pipeline against the least Spark job that does its core work, on the same Parquet.

The least job reads the Parquet, places every record with ``kafka_partition`` and counts
records and bytes per partition: what any Spark job that answers "how much lands where" must
do. ``kassign pipeline`` does that and every other stage (key statistics, the partition-count
sweep, consumer, broker and rebalance loads, the report). Both run as fresh ``local[2]``
processes, wall time end to end, ``--repeat`` runs of each, alternating so that the machine's
drift reaches both alike; best and median. Target (issue #22): the pipeline at most 1.25x the
least job (median).

    python bench/bench_pipeline.py [--rows 10000000] [--repeat 3] [--dir /tmp/kassign-bench-pipeline]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

LEAST_JOB = textwrap.dedent("""
    import sys
    from pyspark.sql import functions as F
    from kassign.spark import kafka_partition, spark_session
    spark = spark_session("local[2]", {}, app_name="least job")
    df = spark.read.parquet(sys.argv[1])
    rows = (df.withColumn("partition", kafka_partition("key", 12))
              .groupBy("partition").agg(F.count(F.lit(1)).alias("records"),
                                         F.sum(F.col("value_size") + F.length("key")).alias("bytes"))
              .collect())
    assert sum(r["records"] for r in rows) > 0
    spark.stop()
""")


def make_input(path: Path, rows: int) -> None:
    if path.exists():
        return
    code = textwrap.dedent(f"""
        from kassign.spark import spark_session
        from kassign.spark.sample import sample_frame
        spark = spark_session("local[2]", {{}}, app_name="bench input")
        sample_frame(spark, {rows}, 200000, 0.9, 0.05, 42).write.parquet({str(path)!r})
        spark.stop()
    """)
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{command[:3]} failed: {done.stderr[-800:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default="/tmp/kassign-bench-pipeline")
    args = parser.parse_args()
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    data = work / f"input-{args.rows}.parquet"
    make_input(data, args.rows)
    least_job = [sys.executable, "-c", LEAST_JOB, str(data)]
    pipeline_job = [sys.executable, "-m", "kassign.cli.main", "pipeline", str(data), "--size-column", "value_size",
                    "--out", str(work / "out")]
    least, pipeline = [], []
    for _ in range(args.repeat):  # alternating, so that the machine's drift reaches both alike
        least.append(timed(least_job))
        pipeline.append(timed(pipeline_job))
    print(f"{args.rows:,} rows, fresh local[2] processes, {args.repeat} runs each, alternating (best / median)")
    print(f"least Spark job (read, kafka_partition, count records and bytes per partition): "
          f"{min(least):6.1f} s / {statistics.median(least):6.1f} s")
    print(f"kassign pipeline (every stage, tables, summary, report):                      "
          f"{min(pipeline):6.1f} s / {statistics.median(pipeline):6.1f} s")
    best, median = min(pipeline) / min(least), statistics.median(pipeline) / statistics.median(least)
    print(f"ratio: {best:.2f}x best, {median:.2f}x median "
          f"(target <= 1.25x median: {'met' if median <= 1.25 else 'NOT met'})")

if __name__ == "__main__":
    main()
