"""describe_group against live brokers: librdkafka's in-process mock cluster and tansu (127.0.0.1 only).

What each answers, as found (facts these tests pin down, so a change in either shows up here):

- librdkafka's mock cluster (confluent-kafka 2.16) runs KIP-848 groups (ConsumerGroupHeartbeat v1) but
  speaks none of ListGroups, DescribeGroups, ConsumerGroupDescribe, ShareGroupDescribe,
  StreamsGroupDescribe or DescribeShareGroupOffsets, and closes the connection on any of them;
  ApiVersions only up to v2 (no features). kassign says it cannot tell, never "no such group".
- tansu answers ListGroups (v0-v5) with no group at all, and DescribeGroups with the members' ids only
  (no client ids, hosts, subscriptions or assignments, no protocol name), and "Empty" for any group it
  does not hold. kassign describes its classic groups from DescribeGroups and says so in ``notes``.
"""

from __future__ import annotations

import threading
import time

import pytest

from kassign.core.releases import DEFAULT_KAFKA_VERSION
from kassign.kafka import groups
from kassign.kafka import groups_protocol as G
from kassign.kafka.config import ClientSettings
from kassign.kafka.connection import BrokerConnection, ConnectionLost
from tests.groups.classic.clients.groups import wait_until

FAST = ClientSettings(request_timeout=5)
GROUP_APIS = {15, 16, 69, 77, 89, 90}


class Kip848Member:
    """A confluent-kafka consumer with group.protocol=consumer, polling in a thread."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        from confluent_kafka import Consumer

        self.member_id = ""
        self.error: BaseException | None = None
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        self.consumer.subscribe([topic])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.consumer.poll(0.1)
                self.member_id = self.consumer.memberid() or ""
        except BaseException as err:  # surfaced by the test
            self.error = err
        finally:
            self.consumer.close()

    def leave(self) -> None:
        self._stop.set()
        self._thread.join(30)


def test_mock_cluster_cannot_describe_its_kip848_group():
    pytest.importorskip("confluent_kafka", reason="the mock cluster is librdkafka's, shipped by confluent-kafka")
    from tests.mock_cluster import MockCluster

    mock = MockCluster(1, topics={"orders": (4, 1)})
    members: list[Kip848Member] = []
    try:
        members = [Kip848Member(mock.bootstrap, "g848", "orders") for _ in range(2)]
        # a real KIP-848 group: the coordinator gave each member its id through ConsumerGroupHeartbeat
        wait_until(lambda: all(m.member_id for m in members), 20, "both members to join", members)

        hints = groups.release_hints(mock.bootstrap, settings=FAST)
        assert hints["api_versions_version"] == 2 and hints["finalized_features"] == {}
        assert hints["api_versions"][68] == [1, 1]  # ConsumerGroupHeartbeat
        assert not GROUP_APIS & set(hints["api_versions"])

        with pytest.raises(groups.GroupApiUnsupported, match="speaks neither ListGroups nor any API that describes "
                                                             "a group .*cannot tell whether group g848 exists"):
            groups.describe_group(mock.bootstrap, "g848", settings=FAST)
        with pytest.raises(groups.GroupApiUnsupported, match="does not speak DescribeShareGroupOffsets"):
            groups.share_start_offsets(mock.bootstrap, "g848", settings=FAST)

        # asked anyway, the mock closes the connection
        host, port = mock.bootstrap.split(",")[0].rsplit(":", 1)
        asked = [(16, 5, G.encode_list_groups(5)), (69, 1, G.encode_consumer_group_describe(1, ["g848"]))]
        for api, version, body in asked:
            connection = BrokerConnection(host, int(port), FAST, time.monotonic() + 5)
            try:
                with pytest.raises(ConnectionLost, match="closed the connection"):
                    connection.request(api, version, body, time.monotonic() + 5)
            finally:
                connection.close()
    finally:
        for m in members:
            m.leave()
        mock.stop()


def test_tansu_classic_group(tansu, topic_name):
    kafka = pytest.importorskip("kafka", reason="kafka-python starts the classic group")
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    topic = group = topic_name
    tansu.create_topic(topic, 4)
    consumers = [kafka.KafkaConsumer(bootstrap_servers=tansu.bootstrap, group_id=group, client_id=f"c{i}",
                                     partition_assignment_strategy=[RangePartitionAssignor], session_timeout_ms=6000,
                                     heartbeat_interval_ms=300) for i in range(2)]
    stop = threading.Event()

    def poll(consumer) -> None:
        while not stop.is_set():
            consumer.poll(timeout_ms=100)

    threads = [threading.Thread(target=poll, args=(c,), daemon=True) for c in consumers]
    for c in consumers:
        c.subscribe([topic])
    for t in threads:
        t.start()
    try:
        wait_until(lambda: sum(len(c.assignment()) for c in consumers) == 4 and all(c.assignment() for c in consumers),
                   30, "the classic group to settle")
        described = groups.describe_group(tansu.bootstrap, group, settings=FAST)
        assert (described.type, described.state, described.protocol_type) == ("classic", "Stable", "consumer")
        assert set(described.members) == {c._coordinator._generation.member_id for c in consumers}
        assert described.coordinator == 111
        assert any("ListGroups does not list group" in note for note in described.notes)
        assert any("no member subscriptions or assignments" in note for note in described.notes)

        with pytest.raises(groups.GroupNotFound, match="does not exist"):
            groups.describe_group(tansu.bootstrap, f"{group}-nobody", settings=FAST)

        hints = groups.release_hints(tansu.bootstrap, settings=FAST)
        assert hints["api_versions_version"] == 4 and hints["finalized_features"] == {}
        assert hints["api_versions"][16] == [0, 5]
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        for c in consumers:
            c.close()


def _describe_cli(*args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "kassign.cli.main", "describe-group", *args], capture_output=True,
                          text=True, timeout=120)


def test_describe_group_command_on_a_real_classic_group(tansu, topic_name):
    """`kassign describe-group` on tansu: the group, lag per partition from its committed offsets (tansu keeps no
    subscriptions: the commits name the topic), the release it could not infer (tansu names no features) and a
    check it could not make, each said."""
    import json

    kafka = pytest.importorskip("kafka", reason="kafka-python starts the classic group and writes the records")
    topic = group = topic_name
    tansu.create_topic(topic, 2)
    producer = kafka.KafkaProducer(bootstrap_servers=tansu.bootstrap)
    for i in range(6):
        producer.send(topic, key=b"k", value=b"v", partition=i % 2)
    producer.flush()
    producer.close()
    consumer = kafka.KafkaConsumer(bootstrap_servers=tansu.bootstrap, group_id=group, client_id="c0",
                                   session_timeout_ms=6000, heartbeat_interval_ms=300, enable_auto_commit=False)
    stop = threading.Event()
    consumer.subscribe([topic])

    def poll() -> None:
        while not stop.is_set():
            consumer.poll(timeout_ms=100)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        wait_until(lambda: len(consumer.assignment()) == 2, 30, "the member to hold both partitions")
        member = consumer._coordinator._generation.member_id
        stop.set()
        thread.join(30)
        structs = pytest.importorskip("kafka.structs")
        consumer.commit({structs.TopicPartition(topic, 0): structs.OffsetAndMetadata(1, "", -1),
                         structs.TopicPartition(topic, 1): structs.OffsetAndMetadata(3, "", -1)})
        out = _describe_cli("--bootstrap-server", tansu.bootstrap, "--group", group, "--json")
        assert out.returncode == 0, out.stderr
        found = json.loads(out.stdout)
        assert found["group"]["type"] == "classic" and list(found["group"]["members"]) == [member]
        assert found["kafka_version"] == DEFAULT_KAFKA_VERSION and found["kafka_version_from"] == "default"
        assert "names no metadata.version" in found["kafka_version_why"]
        assert found["group_check"]["equal"] is None and "subscription" in found["group_check"]["why"]
        assert any("no member subscriptions" in w for w in found["warnings"])
        assert any("committed offsets" in w for w in found["warnings"])
        assert found["lag"] == {topic: {"committed": [1, 3], "end_offsets": [3, 3], "lag": [2, 0]}}
        table = _describe_cli("--bootstrap-server", tansu.bootstrap, "--group", group)
        assert table.returncode == 0, table.stderr
        assert f"Group {group}: a classic consumer group" in table.stdout
        assert f"check (Kafka {DEFAULT_KAFKA_VERSION}, default" in table.stdout and "not checked" in table.stdout
        missing = _describe_cli("--bootstrap-server", tansu.bootstrap, "--group", f"{group}-nobody")
        assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "does not exist" in missing.stderr
    finally:
        stop.set()
        thread.join(30)
        consumer.close()


def test_describe_group_command_on_the_mock_cluster_says_it_cannot_tell():
    pytest.importorskip("confluent_kafka", reason="the mock cluster is librdkafka's, shipped by confluent-kafka")
    from tests.mock_cluster import MockCluster

    mock = MockCluster(1, topics={"orders": (2, 1)})
    try:
        out = _describe_cli("--bootstrap-server", mock.bootstrap, "--group", "g", "--timeout", "5")
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
        assert "cannot tell whether group g exists" in out.stderr
    finally:
        mock.stop()
