"""Reading a live cluster (kassign.kafka.metadata, ``kassign replicas --bootstrap-server``) against tansu."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

import kassign

pytest.importorskip("confluent_kafka", reason="confluent-kafka is an optional extra: pip install 'kassign[confluent]'")

from kassign.kafka import metadata as live  # noqa: E402
from kassign.kafka.config import ClientSettings  # noqa: E402
from tests.brokers import SCRAM_WRONG, free_port  # noqa: E402


def test_layout_counts_and_reassignment_json(tansu, topic_name):
    tansu.create_topic(topic_name, 5)
    layout = live.read_layout(tansu.bootstrap, [topic_name], timeout=10)
    assert [p.partition for p in layout.topics[topic_name]] == list(range(5))
    assert all(p.leader in layout.brokers and p.replicas == (p.leader,) for p in layout.topics[topic_name])
    assert live.partition_counts(tansu.bootstrap, [topic_name]) == {topic_name: 5}
    doc = live.current_assignment(tansu.bootstrap, [topic_name])
    assert doc["version"] == 1 and [e["partition"] for e in doc["partitions"]] == list(range(5))
    assert live.brokers(tansu.bootstrap) == sorted(layout.brokers.items())


def test_replicas_cli_reads_the_cluster(tansu, topic_name):
    tansu.create_topic(topic_name, 3)
    def kassign(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kassign.cli.main", *args], capture_output=True, text=True,
                              timeout=60)

    result = kassign("replicas", "--topic", topic_name, "--bootstrap-server", tansu.bootstrap, "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [p["partition"] for p in doc["partitions"]] == [0, 1, 2] and doc["rack_problems"] == []
    missing = kassign("replicas", "--topic", "no-such-topic", "--bootstrap-server", tansu.bootstrap)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "unknown topic" in missing.stderr


def test_unknown_topic_is_one_line(tansu):
    with pytest.raises(live.LiveClusterError, match="unknown topic .*: no-such-topic$"):
        live.read_layout(tansu.bootstrap, ["no-such-topic"], timeout=10)


def test_unreachable_broker_fails_within_the_timeout():
    start = time.monotonic()
    port = free_port()
    with pytest.raises(live.LiveClusterError,
                       match=f"cannot read metadata from 127.0.0.1:{port}: cannot connect to 127.0.0.1:{port}"):
        live.read_layout(f"127.0.0.1:{port}", ["t"], timeout=2)
    assert time.monotonic() - start < 5


def test_command_config_translates_java_names(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text('# comment\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism = PLAIN\n'
                    'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required '
                    'username="u" password="p";\n')
    props = live.read_command_config(path)
    settings = ClientSettings.from_properties(props)
    assert (settings.security_protocol, settings.sasl_mechanism, settings.username, settings.password) == \
        ("SASL_PLAINTEXT", "PLAIN", "u", "p")
    with pytest.raises(live.LiveClusterError, match="cannot read --command-config"):
        live.read_command_config(tmp_path / "missing.properties")


# ---------------------------------------------------------------- a broker that requires a login


@pytest.mark.parametrize("config, message", [
    pytest.param(None, "closed every connection right after accepting it: the cluster may require authentication",
                 id="no-credentials"),
    pytest.param(SCRAM_WRONG, "authentication failed at 127.0.0.1:\\d+: ", id="wrong-password"),
    pytest.param({**SCRAM_WRONG, "sasl.mechanism": "PLAIN"},
                 "authentication failed at .*SASL PLAIN handshake \\(it may not offer PLAIN", id="mechanism-not-offered"),
])
def test_refused_login_is_one_line_within_the_timeout(tansu_auth, config, message):
    settings = config
    for call in (lambda: live.read_layout(tansu_auth.bootstrap, ["t"], config=settings, timeout=5),
                 lambda: live.brokers(tansu_auth.bootstrap, config=settings, timeout=5),
                 lambda: live.current_assignment(tansu_auth.bootstrap, ["t"], config=settings, timeout=5)):
        start = time.monotonic()
        with pytest.raises(live.LiveClusterError, match=message) as caught:
            call()
        assert time.monotonic() - start < 5 and "\n" not in str(caught.value)


def test_replicas_cli_refused_login(tansu_auth, tmp_path):
    props = tmp_path / "client.properties"
    props.write_text("".join(f"{k}={v}\n" for k, v in SCRAM_WRONG.items()))
    # the same command refused at once (a bad option) times the interpreter's start and imports on this
    # machine right now, so a loaded machine does not read as a missed deadline
    start = time.monotonic()
    refused = subprocess.run([sys.executable, "-m", "kassign.cli.main", "replicas", "--topic", "t",
                              "--bootstrap-server", tansu_auth.bootstrap, "--timeout", "0"],
                             capture_output=True, text=True, timeout=60)
    startup = time.monotonic() - start
    assert refused.returncode == 2
    for extra in (["--command-config", str(props)], []):
        start = time.monotonic()
        result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "replicas", "--topic", "t",
                                 "--bootstrap-server", tansu_auth.bootstrap, "--timeout", "5", *extra],
                                capture_output=True, text=True, timeout=60)
        took = time.monotonic() - start
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.count("\n") == 1, result.stderr
        assert ("authentication failed" if extra else "may require authentication") in result.stderr
        assert took < 5 + startup + 1.5, f"took {took:.2f} s; the interpreter's start {startup:.2f} s"


# ---------------------------------------------------------------- librdkafka's mock cluster

MOCK_RACKS = {1: "rack-a", 2: "rack-b", 3: "rack-a"}


@pytest.fixture(scope="module")
def mock_cluster():
    """librdkafka's in-process mock cluster: 3 brokers on 127.0.0.1, racks set, two topics."""
    from tests.mock_cluster import MockCluster

    mock = MockCluster(3, MOCK_RACKS, {"orders": (6, 2), "audit": (3, 3)})
    try:
        yield mock
    finally:
        mock.stop()


def test_mock_cluster_layout_assignment_and_brokers(mock_cluster):
    start = time.monotonic()
    layout = live.read_layout(mock_cluster.bootstrap, ["orders", "audit"], timeout=10)
    took = time.monotonic() - start
    assert layout.brokers == MOCK_RACKS  # racks come with the metadata (v1 and later), no DescribeCluster
    assert took < 3
    orders, audit = layout.topics["orders"], layout.topics["audit"]
    assert [p.partition for p in orders] == list(range(6)) and [p.partition for p in audit] == [0, 1, 2]
    assert all(len(p.replicas) == 2 and len(set(p.replicas)) == 2 and p.leader in p.replicas for p in orders)
    assert all(sorted(p.replicas) == [1, 2, 3] and set(p.isr) == {1, 2, 3} for p in audit)
    assert {b for p in orders for b in p.replicas} == {1, 2, 3}

    doc = live.current_assignment(mock_cluster.bootstrap, ["orders"], timeout=10)
    assert doc == {"version": 1, "partitions": [{"topic": "orders", "partition": p.partition,
                                                 "replicas": list(p.replicas)} for p in orders]}
    assert live.brokers(mock_cluster.bootstrap, timeout=10) == sorted(MOCK_RACKS.items())
    assert live.partition_counts(mock_cluster.bootstrap, ["orders", "audit"]) == {"orders": 6, "audit": 3}
    with pytest.raises(live.LiveClusterError, match="unknown topic .*: nope$"):
        live.read_layout(mock_cluster.bootstrap, ["nope"], timeout=10)


def test_rack_problems_on_the_mocks_replicas(mock_cluster):
    """rack_problems over the mock's real replica lists with the racks the mock was given: with racks
    a, b, a, an ``orders`` partition on brokers 1 and 3 sits on one rack where two were possible."""
    layout = live.read_layout(mock_cluster.bootstrap, ["orders"], timeout=10)
    assert layout.brokers == MOCK_RACKS
    unknown = live.ClusterLayout({b: None for b in MOCK_RACKS}, layout.topics)
    assert live.rack_problems(unknown) == []  # racks unknown: nothing is claimed
    expected = [f"orders-{p.partition}: replicas {list(p.replicas)} on 1 rack(s), 2 possible"
                for p in layout.topics["orders"] if set(p.replicas) == {1, 3}]
    assert expected, "the mock placed some partition on brokers 1 and 3"
    assert live.rack_problems(layout) == expected


def test_replicas_cli_on_the_mock_cluster(mock_cluster):
    result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "replicas", "--topic", "orders",
                             "--bootstrap-server", mock_cluster.bootstrap, "--json"],
                            capture_output=True, text=True, timeout=60)
    # the mock lives in this process: a child process can still reach it over 127.0.0.1
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["brokers"] == {str(b): r for b, r in MOCK_RACKS.items()} and len(doc["partitions"]) == 6


def test_mock_cluster_from_test_mock_num_brokers():
    """The mock cluster confluent-kafka starts for a client with ``test.mock.num.brokers``: its
    address is in that client's own metadata, and topics are created by asking for them
    (auto-creation: 4 partitions, replication factor min(3, brokers)); no racks can be set this way."""
    from confluent_kafka import Producer

    host = Producer({"test.mock.num.brokers": 3, "logger": __import__("logging").getLogger("mock-host")})
    metadata = host.list_topics(timeout=10)
    bootstrap = ",".join(f"{b.host}:{b.port}" for b in metadata.brokers.values())
    assert all(b.host == "127.0.0.1" for b in metadata.brokers.values())
    host.list_topics(topic="created-by-asking", timeout=10)
    layout = live.read_layout(bootstrap, ["created-by-asking"], timeout=10)
    assert sorted(layout.brokers) == [1, 2, 3]
    assert [sorted(p.replicas) for p in layout.topics["created-by-asking"]] == [[1, 2, 3]] * 4
    del host  # the mock cluster goes with its client


def test_partition_cli_takes_the_partition_count_from_the_cluster(tansu, topic_name):
    tansu.create_topic(topic_name, 7)
    result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "partition", "--topic", topic_name,
                             "--bootstrap-server", tansu.bootstrap, "--json", "user-1", "order-7"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["partitions"] == 7
    assert [k["partition"] for k in doc["keys"]] == [kassign.partition_for_key(k, 7) for k in (b"user-1", b"order-7")]
    both = subprocess.run([sys.executable, "-m", "kassign.cli.main", "partition", "-p", "7", "--topic", topic_name,
                           "--bootstrap-server", tansu.bootstrap, "x"], capture_output=True, text=True, timeout=60)
    assert both.returncode == 2 and "not both" in both.stderr


def test_plan_reads_the_current_assignment_from_the_cluster(tansu, topic_name, tmp_path):
    tansu.create_topic(topic_name, 4)
    out = tmp_path / "plan.json"
    result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "plan", "--bootstrap-server", tansu.bootstrap,
                             "--topic", topic_name, "--brokers", "0,1", "--out", str(out), "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    current = live.current_assignment(tansu.bootstrap, [topic_name])
    assert json.loads((tmp_path / "plan-rollback.json").read_text()) == current
    plan = json.loads(out.read_text())
    assert sorted((p["topic"], p["partition"]) for p in plan["partitions"]) == [(topic_name, p) for p in range(4)]
    assert all(set(p["replicas"]) <= {0, 1} for p in plan["partitions"])
