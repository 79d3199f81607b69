"""Reading a live cluster's balancing inputs end to end, against the captured 3-broker Kafka 4.3.1 cluster replayed
on 127.0.0.1 (``tests/kafka/replay_balance.py``): placement, racks, ISR, sizes and disks as the captures record
them; sampled write rates; older DescribeLogDirs versions, offline log dirs, a broker that hangs up or stalls,
under-replicated partitions and bad capacity documents, each said or refused in one line. A real multi-broker
Kafka is not needed (nor used) here."""

from __future__ import annotations

import json
import os
import time

import pytest

from kassign.core.errors import KassignError, LiveClusterError
from kassign.kafka import cluster_protocol as C
from kassign.kafka.cluster_inputs import SampleError, parse_window, read_cluster
from tests.kafka.replay_balance import ReplayedCluster, decoded, metadata_with_isr, skip_without_captures

TOPICS = ["kc-big", "kc-empty", "kc-move", "kc-small"]
READ_ONLY_APIS = {18, 3, 35, 2, 46}  # ApiVersions, Metadata, DescribeLogDirs, ListOffsets, ListPartitionReassignments


@pytest.fixture
def cluster():
    skip_without_captures()
    replay = ReplayedCluster()
    yield replay
    replay.stop()


def expected_sizes() -> dict[str, dict[int, int]]:
    """Each partition's leader's replica size, from the captured facts."""
    meta = decoded("metadata-racks.json")
    on: dict[tuple[int, str, int], int] = {}
    for broker in (1, 2, 3):
        for d in decoded(f"describe-log-dirs-broker-{broker}.json").log_dirs:
            for r in d.replicas:
                on[(broker, r.topic, r.partition)] = r.size
    return {t.name: {p.partition: on[(p.leader, t.name, p.partition)] for p in t.partitions}
            for t in sorted(meta.topics, key=lambda t: t.name)}


def only_reads(replay: ReplayedCluster) -> None:
    asked = {key for broker in replay.brokers.values() for key, _, _ in broker.requests}
    assert asked <= READ_ONLY_APIS, f"nothing but reads is sent: {asked}"


def test_reads_the_captured_cluster(cluster):
    inputs = read_cluster(cluster.bootstrap, timeout=5)
    assert inputs.brokers == {1: "rack-a", 2: "rack-b", 3: "rack-c"}
    assert inputs.broker_list == [(1, "rack-a"), (2, "rack-b"), (3, "rack-c")]
    assert inputs.cluster_id == "svbrdHP31njzWBii47PCHg"
    meta = decoded("metadata-racks.json")
    want = [{"topic": t.name, "partition": p.partition, "replicas": p.replicas}
            for t in meta.topics for p in t.partitions]
    assert sorted(inputs.current["partitions"], key=lambda e: (e["topic"], e["partition"])) == sorted(
        want, key=lambda e: (e["topic"], e["partition"]))
    assert inputs.current["version"] == 1
    assert inputs.leaders["kc-big"] == {0: 1, 1: 2, 2: 3}
    assert inputs.isr["kc-big"][1] == [2, 3, 1]
    assert inputs.under_replicated == []
    assert inputs.reassignments == [] and inputs.sources["reassignments"]["version"] == 0
    assert inputs.sizes == expected_sizes()
    assert inputs.sizes["kc-move"][1] == 2118143
    assert inputs.replica_sizes["kc-big"][0] == {1: inputs.sizes["kc-big"][0], 2: pytest.approx(4236465, rel=0.01),
                                                  3: 4236465}
    # broker 3: two log dirs on one volume, counted once
    three = inputs.disks[3]
    assert [d.path for d in three.log_dirs] == ["/var/lib/kafka/node-3/data-0", "/var/lib/kafka/node-3/data-1"]
    assert (three.total_bytes, three.usable_bytes) == (270553174016, 77403480064)
    facts = decoded("describe-log-dirs-broker-3.json")
    assert three.replica_bytes == sum(r.size for d in facts.log_dirs for r in d.replicas)
    assert three.fixed_bytes == 0  # every replica on it is of a topic read
    assert three.other_bytes == 270553174016 - 77403480064 - three.replica_bytes
    assert any("broker 3: 2 log dirs on 1 volume" in n for n in inputs.notes)
    for broker in (1, 2):
        (only,) = decoded(f"describe-log-dirs-broker-{broker}.json").log_dirs
        assert (inputs.disks[broker].total_bytes, inputs.disks[broker].usable_bytes) == (only.total_bytes,
                                                                                         only.usable_bytes)
    # capacity: none given, disk from DescribeLogDirs
    assert inputs.capacity[3].disk_bytes == 270553174016
    assert inputs.capacity_sources[3] == {"disk_bytes": "DescribeLogDirs v5 total_bytes"}
    assert inputs.rates is None and inputs.bytes_in is None
    assert inputs.sources["placement"]["api"] == "Metadata" and inputs.sources["placement"]["version"] == 13
    assert inputs.sources["sizes"]["versions"] == {"1": 5, "2": 5, "3": 5}
    assert inputs.sources["capacity"] is None
    json.dumps(inputs.to_json())  # JSON-ready
    assert inputs.to_json()["sizes"]["kc-move"]["1"] == 2118143
    lines = inputs.lines()
    assert lines[0].startswith("placement, leaders, in-sync replicas, racks: Metadata v13 from 127.0.0.1:")
    assert "DescribeLogDirs v5" in lines[1]
    only_reads(cluster)


def test_topics_subset_and_fixed_bytes(cluster):
    inputs = read_cluster(cluster.bootstrap, timeout=5, topics=["kc-move"])
    assert list(inputs.sizes) == ["kc-move"]
    assert {e["topic"] for e in inputs.current["partitions"]} == {"kc-move"}
    facts = decoded("describe-log-dirs-broker-3.json")
    others = sum(r.size for d in facts.log_dirs for r in d.replicas if r.topic != "kc-move")
    assert inputs.disks[3].fixed_bytes == others  # replicas of the topics not read stay where they are


def test_unknown_topic_is_one_line(cluster):
    with pytest.raises(LiveClusterError, match=r"^unknown topic on 127\.0\.0\.1:\d+: nope$"):
        read_cluster(cluster.bootstrap, timeout=5, topics=["kc-big", "nope"])


def test_sample_measures_growth_and_estimates_what_retention_cut(cluster):
    grown = []

    def progress(elapsed: float, window: float) -> None:
        assert window == 1.0
        if not grown:  # between the two reads: kc-big-0 written to, kc-move-3 lost its oldest segment
            for broker in (1, 2, 3):
                cluster.grow(broker, "kc-big", 0, 500_000, offsets=490)
            cluster.grow(3, "kc-move", 3, -200_000, offsets=10, start=200)
            cluster.grow(1, "kc-move", 3, -200_000, offsets=0, start=0)
        grown.append(elapsed)

    inputs = read_cluster(cluster.bootstrap, timeout=5, sample="1s", progress=progress)
    assert grown[-1] == 1.0
    window = inputs.window_s
    assert 1.0 <= window < 3
    # each rate is over its broker's own two answers, a few milliseconds from the window of the whole read
    assert inputs.rates["kc-big"][0] == pytest.approx(500_000 / window, rel=0.02)
    # kc-move-3 (leader 1): its log start moved, so the rate is 10 offsets at the log's bytes per offset
    size, end, start = inputs.sizes["kc-move"][3], 308 + 10, 200
    leader = inputs.leaders["kc-move"][3]
    after = decoded(f"describe-log-dirs-broker-{leader}.json")
    size_after = next(r.size for d in after.log_dirs for r in d.replicas if (r.topic, r.partition) == ("kc-move", 3))
    assert size == size_after  # the first read's size
    assert inputs.rates["kc-move"][3] == pytest.approx(10 * (size - 200_000) / (end - start) / window, rel=0.02)
    assert ("kc-move", 3) in inputs.rates_estimated
    assert inputs.rates["kc-small"] == {0: 0.0, 1: 0.0}  # nothing written
    rate = inputs.rates["kc-big"][0]
    assert inputs.bytes_in[1] == pytest.approx(rate + inputs.rates["kc-move"][3])  # kc-move-3 on [1, 3]
    assert inputs.bytes_in[2] == pytest.approx(rate)
    assert inputs.leader_bytes_in[1] == pytest.approx(rate + inputs.rates["kc-move"][3])
    assert inputs.replication_out[1] == pytest.approx(2 * rate + inputs.rates["kc-move"][3])
    assert inputs.sources["rates"]["asked_s"] == 1.0 and inputs.sources["rates"]["estimated"] == 1
    assert any("retention or compaction" in n for n in inputs.notes)
    assert "sampled over" in inputs.lines()[2]
    only_reads(cluster)


@pytest.mark.parametrize("window", [0.5, "999ms", "0s", 0, -3, "soon", float("nan"), True])
def test_sample_under_one_second_is_refused_before_any_call(window):
    with pytest.raises(SampleError) as err:
        read_cluster("127.0.0.1:1", timeout=1, sample=window)
    assert "\n" not in str(err.value) and "--sample" in str(err.value)


def test_parse_window():
    assert parse_window("30s") == 30.0 and parse_window("2m") == 120.0 and parse_window("1500ms") == 1.5
    assert parse_window(1) == 1.0 and parse_window("45") == 45.0
    with pytest.raises(SampleError, match="at most an hour"):
        parse_window("2h")


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_older_log_dirs_versions_say_the_disk_is_not_told(version):
    skip_without_captures()
    with ReplayedCluster(log_dirs_version=version) as replay:
        inputs = read_cluster(replay.bootstrap, timeout=5)
        assert inputs.sizes == expected_sizes()  # sizes are in every version
        assert all(d.total_bytes is None and d.usable_bytes is None for d in inputs.disks.values())
        assert inputs.sources["sizes"]["versions"] == {"1": version, "2": version, "3": version}
        assert any(f"DescribeLogDirs v{version} carries no total/usable bytes" in n for n in inputs.notes)
        assert any("no disk capacity for broker(s) 1, 2, 3" in n for n in inputs.notes)
        assert inputs.capacity[1].disk_bytes is None
        given = read_cluster(replay.bootstrap, timeout=5, capacity={"default": {"disk_bytes": 10**12}})
        assert given.capacity[2].disk_bytes == 10**12 and given.capacity_sources[2] == {"disk_bytes": "file"}
        assert not any("no disk capacity" in n for n in given.notes)


def offline(broker: int) -> C.LogDirsAnswer:
    answer = decoded(f"describe-log-dirs-broker-{broker}.json")
    answer.log_dirs[1] = C.LogDir(C.KAFKA_STORAGE_ERROR, answer.log_dirs[1].path)
    return answer


def test_offline_log_dir_is_refused_or_said():
    skip_without_captures()
    with ReplayedCluster(log_dirs={3: offline(3)}) as replay:
        with pytest.raises(LiveClusterError) as err:
            read_cluster(replay.bootstrap, timeout=5)
        assert str(err.value).startswith("broker 3's log dir /var/lib/kafka/node-3/data-1 is offline")
        assert "\n" not in str(err.value)
        inputs = read_cluster(replay.bootstrap, timeout=5, allow_offline_dirs=True)
        assert any("data-1 is offline: left out" in n for n in inputs.notes)
        (down,) = [d for d in inputs.disks[3].log_dirs if not d.online]
        assert down.error == "KAFKA_STORAGE_ERROR" and down.total_bytes is None
        assert inputs.disks[3].total_bytes == 270553174016  # the online dir's volume


def test_broker_that_hangs_up_on_describe_log_dirs_is_one_line():
    skip_without_captures()
    with ReplayedCluster(log_dirs={2: lambda version, body: None}) as replay:
        with pytest.raises(LiveClusterError) as err:
            read_cluster(replay.bootstrap, timeout=5)
        message = str(err.value)
        assert message.startswith("broker 2 (127.0.0.1:") and "did not answer DescribeLogDirs" in message
        assert "closed the connection" in message and "\n" not in message


def test_broker_that_stalls_meets_the_deadline():
    skip_without_captures()

    def stall(version: int, body: bytes) -> bytes | None:
        time.sleep(3)
        return None

    with ReplayedCluster(log_dirs={3: stall}) as replay:
        began = time.monotonic()
        with pytest.raises(LiveClusterError, match="broker 3 .* did not answer DescribeLogDirs: .*within the deadline"):
            read_cluster(replay.bootstrap, timeout=0.5)
        assert time.monotonic() - began < 2.5


def test_broker_that_refuses_describe_log_dirs():
    skip_without_captures()
    refused = C.LogDirsAnswer(31, [])  # CLUSTER_AUTHORIZATION_FAILED
    with ReplayedCluster(log_dirs={1: refused}) as replay:
        with pytest.raises(LiveClusterError, match=r"^broker 1 \(.*\) refused DescribeLogDirs: "
                                                   "CLUSTER_AUTHORIZATION_FAILED$"):
            read_cluster(replay.bootstrap, timeout=5)


def test_under_replicated_partition_is_flagged():
    skip_without_captures()
    meta = metadata_with_isr("kc-big", 1, [2, 3])
    with ReplayedCluster(metadata=meta) as replay:
        inputs = read_cluster(replay.bootstrap, timeout=5)
    assert inputs.under_replicated == [("kc-big", 1)]
    assert inputs.isr["kc-big"][1] == [2, 3]
    assert any(n.startswith("1 partition(s) under-replicated") and "kc-big-1" in n for n in inputs.notes)
    assert inputs.to_json()["under_replicated"] == [["kc-big", 1]]


def test_capacity_document_merged_with_the_disks(cluster, tmp_path):
    path = tmp_path / "capacity.json"
    path.write_text(json.dumps({"default": {"network_in_bytes_per_s": 125_000_000, "max_replicas": 100},
                                "brokers": {"2": {"disk_bytes": 5 * 10**11, "max_replicas": 50}}}))
    inputs = read_cluster(cluster.bootstrap, timeout=5, capacity=str(path))
    assert inputs.capacity[2].disk_bytes == 5 * 10**11 and inputs.capacity[2].max_replicas == 50
    assert inputs.capacity[1].disk_bytes == inputs.disks[1].total_bytes and inputs.capacity[1].max_replicas == 100
    assert inputs.capacity_sources[1] == {"network_in_bytes_per_s": "file", "max_replicas": "file",
                                          "disk_bytes": "DescribeLogDirs v5 total_bytes"}
    assert inputs.sources["capacity"] == {"file": str(path), "brokers": [2]}
    assert inputs.capacity_json()["brokers"]["2"] == {"disk_bytes": 5 * 10**11, "network_in_bytes_per_s": 125_000_000,
                                                      "max_replicas": 50}
    assert "capacity: " + str(path) in inputs.lines()


def test_capacity_naming_an_unknown_broker_stops_before_the_disks_are_read(cluster):
    with pytest.raises(KassignError, match=r"^capacity: unknown broker id 7 \(the cluster's brokers: 1, 2, 3\)$"):
        read_cluster(cluster.bootstrap, timeout=5, capacity={"brokers": {"7": {"disk_bytes": 1}}})
    asked = {key for broker in cluster.brokers.values() for key, _, _ in broker.requests}
    assert 35 not in asked


def test_malformed_capacity_file(cluster, tmp_path):
    path = tmp_path / "capacity.json"
    path.write_text('{"default": {"disk_bytes": 1, "disk_bytes": 2}}')
    with pytest.raises(KassignError, match="appears twice"):
        read_cluster(cluster.bootstrap, timeout=5, capacity=str(path))


def test_unreachable_cluster_is_one_line():
    with pytest.raises(LiveClusterError) as err:
        read_cluster("127.0.0.1:1", timeout=0.5)
    assert "\n" not in str(err.value)


REAL = os.environ.get("KASSIGN_REASSIGN_BOOTSTRAP")


@pytest.mark.skipif(not REAL, reason="no real multi-broker Kafka given (KASSIGN_REASSIGN_BOOTSTRAP=host:port, as for "
                                     "tests/kafka/test_executor_live.py); the replayed captures of one stand in above")
def test_against_a_real_cluster():  # pragma: no cover - needs a cluster the suite does not start
    inputs = read_cluster(REAL, timeout=30, sample=2)
    assert inputs.brokers and only_racks_or_none(inputs.brokers)
    for entry in inputs.current["partitions"]:
        topic, p = entry["topic"], entry["partition"]
        on = inputs.replica_sizes[topic][p]
        assert set(on) <= set(entry["replicas"])
        leader = inputs.leaders[topic][p]
        if leader is not None and leader in on:
            assert inputs.sizes[topic][p] == on[leader]
        assert inputs.rates is not None and inputs.rates[topic][p] >= 0
    for broker, disk in inputs.disks.items():
        assert disk.version >= 4 and disk.total_bytes and 0 <= disk.usable_bytes <= disk.total_bytes
        assert disk.replica_bytes == sum(d.replica_bytes for d in disk.log_dirs)
    assert inputs.window_s is not None and inputs.window_s >= 2
    assert sum(inputs.bytes_in.values()) == pytest.approx(
        sum(inputs.rates[e["topic"]][e["partition"]] * len(e["replicas"]) for e in inputs.current["partitions"]))


def only_racks_or_none(brokers: dict) -> bool:
    return all(rack is None or isinstance(rack, str) for rack in brokers.values())



def test_describe_cluster_and_configs_on_a_live_connection(cluster):
    import base64

    from kassign.kafka.client import Cluster
    from kassign.kafka.cluster_inputs import describe_cluster, describe_configs
    from tests.kafka.replay_balance import load
    from tests.kafka.replay_broker import capture_body

    doc = load("describe-configs-broker.json")
    for broker in cluster.brokers.values():
        broker.answers[32] = capture_body(32, 4, base64.b64decode(doc["response_b64"]))
    with Cluster(cluster.bootstrap) as live:
        host, port = live.addresses[0]
        answer = live.call(("bootstrap", host, port), host, port, describe_cluster, True)
        assert [(b.node_id, b.rack, b.port) for b in answer.brokers] == [
            (n, r, cluster.brokers[n].port) for n, r in ((1, "rack-a"), (2, "rack-b"), (3, "rack-c"))]
        assert answer.controller == 3
        (resource,) = live.call(("bootstrap", host, port), host, port, describe_configs,
                                [C.ConfigsWanted(C.BROKER, "1")])
    assert resource.name == "1" and len(resource.configs) == 342
    sent = {key: (version, body) for key, version, body in cluster.brokers[1].requests}
    assert sent[60][0] == 2 and sent[32][0] == 4
    assert C.decode_describe_configs_request(C.FlexReader(sent[32][1], True), 4) == (
        [C.ConfigsWanted(C.BROKER, "1")], False, False)
    assert C.decode_describe_cluster_request(C.FlexReader(sent[60][1], True), 2) == (False, 1, True)


def test_rich_progress_shows_the_wait():
    from kassign.kafka.cluster_inputs import rich_progress

    with rich_progress() as update:
        update(0.0, 2.0)
        update(2.0, 2.0)


def test_running_reassignments_are_said():
    skip_without_captures()
    with ReplayedCluster(reassignments="ongoing") as replay:
        inputs = read_cluster(replay.bootstrap, timeout=5)
    assert inputs.reassignments[0] == {"topic": "kc-move", "partition": 0, "replicas": [3, 2, 1], "adding": [3],
                                       "removing": [1]}
    assert len(inputs.reassignments) == 3
    said = "3 partition(s) being reassigned now: kc-move-0, kc-move-1, kc-move-2"
    assert any(n.startswith(said) for n in inputs.notes)
    assert inputs.to_json()["reassignments"] == inputs.reassignments


def test_a_cluster_that_cannot_list_reassignments_is_said():
    skip_without_captures()
    with ReplayedCluster(reassignments=None) as replay:
        inputs = read_cluster(replay.bootstrap, timeout=5)
    assert inputs.reassignments is None and inputs.sources["reassignments"]["told"] is False
    assert any("does not speak ListPartitionReassignments" in n for n in inputs.notes)


def test_a_bad_capacity_document_is_refused_before_connecting():
    from kassign.replicas.capacity import CapacityError

    with pytest.raises(CapacityError, match=r"^capacity: default\.max_replicas must be a positive whole number"):
        read_cluster("127.0.0.1:1", timeout=1, capacity={"default": {"max_replicas": 0}})
