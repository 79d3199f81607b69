"""The whole pipeline against the least Spark job that does its core work, on the same Parquet.

The least job reads the Parquet, places every record with ``kafka_partition`` and counts
records and bytes per partition: what any Spark job that answers "how much lands where" must
do. ``kassign pipeline`` does that and every other stage (key statistics, the partition-count
sweep, consumer, broker and rebalance loads, the report). Both run as fresh ``local[2]``
processes, wall time end to end, best of ``--repeat``. Target (issue #10): the pipeline at most
1.5x the least job.

    python bench/bench_pipeline.py [--rows 10000000] [--repeat 2] [--dir /tmp/kassign-bench-pipeline]
"""

from __future__ import annotations

import argparse
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
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--dir", default="/tmp/kassign-bench-pipeline")
    args = parser.parse_args()
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    data = work / f"input-{args.rows}.parquet"
    make_input(data, args.rows)
    least = min(timed([sys.executable, "-c", LEAST_JOB, str(data)]) for _ in range(args.repeat))
    pipeline = min(timed([sys.executable, "-m", "kassign.cli.main", "pipeline", str(data), "--size-column",
                          "value_size", "--out", str(work / "out")]) for _ in range(args.repeat))
    print(f"{args.rows:,} rows, fresh local[2] processes, best of {args.repeat}")
    print(f"least Spark job (read, kafka_partition, count records and bytes per partition): {least:6.1f} s")
    print(f"kassign pipeline (every stage, tables, summary, report):                      {pipeline:6.1f} s")
    ratio = pipeline / least
    print(f"ratio: {ratio:.2f}x (target <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'})")


if __name__ == "__main__":
    main()
