"""The adapters' bytes and state, against kassign's wire module and the clients' own decoders."""

from __future__ import annotations

import json

import pytest

import kassign
from kassign.groups.classic.assignors import AbstractPartitionAssignor as KassignBase
from kassign.groups.classic.assignors.base import Assignment, Subscription, TopicPartition
from kassign.groups.classic.assignors.sticky.userdata import (
    decode_cooperative_user_data,
    decode_sticky_user_data,
    encode_sticky_user_data,
)
from kassign.groups.classic.clients._core import ClientMissingError, JoinedMember, MemberAssignor, read_stamp, require
from kassign.core.errors import KassignError
from kassign.groups.classic.protocol import wire

kp = pytest.importorskip("kassign.groups.classic.clients.kafka_python", exc_type=ImportError)
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription  # noqa: E402


def kafka_python_assignment(partitions: dict[str, list[int]], user_data: bytes | None = None):
    """What kafka-python hands on_assignment: its own decoded Assignment."""
    raw = wire.encode_assignment(Assignment(tuple(TopicPartition(t, p) for t, ps in partitions.items() for p in ps),
                                            user_data or b""))
    return ConsumerProtocolAssignment.decode(raw)


def test_new_sticky_member_sends_kafkas_bytes_with_no_history():
    raw = kp.StickyAssignor().metadata({"b", "a"})
    assert raw == wire.encode_subscription(Subscription(("a", "b")))
    decoded = ConsumerProtocolSubscription.decode(raw)  # kafka-python reads it with its own schema
    assert list(decoded.topics) == ["a", "b"] and decoded.user_data is None


def test_sticky_history_is_kafkas_user_data_and_updates_every_generation():
    assignor = kp.StickyAssignor()
    assignor.on_assignment(kafka_python_assignment({"t": [2, 0]}), 3)
    assignor.on_assignment(kafka_python_assignment({"t": [1], "u": [0]}), 7)
    sub = wire.decode_subscription(assignor.metadata({"t", "u"}))
    assert sub.owned_partitions == ()  # eager: revoked before joining, history is in the user data
    assert sub.generation == 7
    history = decode_sticky_user_data(sub.user_data)
    assert sorted(history.partitions()) == [("t", 1), ("u", 0)] and history.generation == 7
    assert sub.user_data == encode_sticky_user_data([("t", 1), ("u", 0)], 7)


def test_two_instances_keep_separate_histories():
    a, b = kp.StickyAssignor(), kp.StickyAssignor()
    a.on_assignment(kafka_python_assignment({"t": [0, 1]}), 5)
    b.on_assignment(kafka_python_assignment({"t": [2]}), 5)
    assert decode_sticky_user_data(wire.decode_subscription(a.metadata({"t"})).user_data).partitions() == [("t", 0), ("t", 1)]
    assert decode_sticky_user_data(wire.decode_subscription(b.metadata({"t"})).user_data).partitions() == [("t", 2)]
    assert wire.decode_subscription(kp.StickyAssignor().metadata({"t"})).user_data == b""
    # nothing on the class
    assert not {"owned", "generation", "_member"} & (set(vars(kp.StickyAssignor)) | set(vars(kp.KassignAssignor)))


def test_cooperative_sticky_reports_owned_partitions_and_generation():
    assignor = kp.CooperativeStickyAssignor()
    assert [p.name for p in assignor.supported_protocols()] == ["COOPERATIVE", "EAGER"]
    assignor.on_assignment(kafka_python_assignment({"t": [3, 1]}), 9)
    sub = wire.decode_subscription(assignor.metadata({"t"}))
    assert sub.owned_partitions == (("t", 1), ("t", 3)) and sub.generation == 9
    assert decode_cooperative_user_data(sub.user_data) == 9


def test_load_aware_announces_capacity():
    assignor = kp.LoadAwareAssignor(partition_loads={"t": [8, 4, 2, 2]}, capacity=2.0)
    assert assignor.name == "load-aware"
    doc = json.loads(wire.decode_subscription(assignor.metadata({"t"})).user_data)
    assert doc["capacity"] == 2.0


def _joined(members: dict[str, MemberAssignor], topics: set[str]) -> list[JoinedMember]:
    return [JoinedMember(mid, None, m.subscription_bytes(topics)) for mid, m in members.items()]


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "load-aware"])
def test_leader_bytes_are_kassigns_assignment(strategy):
    """The leader's Assignment bytes are the wire encoding of kassign.assign for the same group."""
    members = {f"m{i}": kp.kassign_assignor(strategy).kassign for i in range(3)}
    members["m1"].remember([("t", 0), ("t", 4)], 4)
    members["m2"].remember([("t", 1)], 4)
    out = members["m0"].assign({"t": 7, "u": 2}, _joined(members, {"t", "u"}))
    scenario = {"topics": {"t": 7, "u": 2}, "members": {
        "m0": {"topics": ["t", "u"]},
        "m1": {"topics": ["t", "u"], "owned": [["t", 0], ["t", 4]], "generation": 4},
        "m2": {"topics": ["t", "u"], "owned": [["t", 1]], "generation": 4}}}
    expected = kassign.assign(strategy, scenario)
    for mid, raw in out.items():
        assert raw == wire.encode_assignment(Assignment(tuple(TopicPartition(*tp) for tp in expected[mid])))
        decoded = ConsumerProtocolAssignment.decode(raw)  # and kafka-python reads it
        assert sorted((tp.topic, tp.partition) for tp in decoded.partitions()) == sorted(expected[mid])


class EverythingToFirst(KassignBase):
    """A user's own assignor: the first member (by id) gets every partition."""

    name = "everything-to-first"

    def assign_partitions(self, partitions_per_topic, subscriptions, cluster):
        first = min(subscriptions)
        return {m: [TopicPartition(t, p) for t, n in partitions_per_topic.items() for p in range(n)] if m == first else []
                for m in subscriptions}


def test_users_own_assignor_by_class_and_instance():
    by_class, by_instance = kp.kassign_assignor(EverythingToFirst), kp.kassign_assignor(EverythingToFirst())
    assert by_class.name == by_instance.name == "everything-to-first"
    members = {"a": by_class.kassign, "b": by_instance.kassign}
    out = by_class.kassign.assign({"t": 2}, _joined(members, {"t"}))
    assert wire.decode_assignment(out["a"]).partitions == (("t", 0), ("t", 1))
    assert wire.decode_assignment(out["b"]).partitions == ()
    with pytest.raises(KassignError):
        kp.kassign_assignor(EverythingToFirst(), unknown=1)


def test_missing_client_says_what_to_install():
    with pytest.raises(ClientMissingError, match=r"pip install 'kassign\[some-extra\]'"):
        require("no_such_client_module_xyz", "some-extra")


# ---------------------------------------------------------------- aiokafka

def test_aiokafka_generation_travels_in_the_leaders_assignment():
    ak = pytest.importorskip("kassign.groups.classic.clients.aiokafka", exc_type=ImportError)
    from aiokafka.coordinator.protocol import ConsumerProtocol

    leader, follower = ak.StickyAssignor(), ak.StickyAssignor()
    follower.kassign.remember([("t", 1)], 6)
    # what aiokafka's leader hands assign(): its own decoding of each member's JoinGroup bytes
    members = {"L": ConsumerProtocol.METADATA.decode(leader.metadata({"t"})),
               "F": ConsumerProtocol.METADATA.decode(follower.metadata({"t"}))}

    # aiokafka's own ClusterMetadata, fed a metadata response for one broker and a 3-partition topic
    from aiokafka.cluster import ClusterMetadata
    from aiokafka.protocol.metadata import MetadataResponse_v0

    cluster = ClusterMetadata()
    cluster.update_metadata(MetadataResponse_v0([(0, "127.0.0.1", 9092)],
                                                [(0, "t", [(0, p, 0, [0], [0]) for p in range(3)])]))
    out = leader.assign(cluster, members)
    for member_id, assignor in (("L", leader), ("F", follower)):
        decoded = ConsumerProtocol.ASSIGNMENT.decode(out[member_id])
        assert read_stamp(decoded.user_data) == 7  # one past the highest generation any member reported
        assignor.on_assignment(decoded)
        assert assignor.kassign.generation == 7
    assert ("t", 1) in follower.kassign.owned  # sticky kept the follower's partition


def test_aiokafka_has_no_cooperative_sticky():
    ak = pytest.importorskip("kassign.groups.classic.clients.aiokafka", exc_type=ImportError)
    with pytest.raises(KassignError, match="cooperative"):
        ak.kassign_assignor("cooperative-sticky")
    assert not hasattr(ak, "CooperativeStickyAssignor")


# ---------------------------------------------------------------- racks from the client's metadata

RACKS = {1: "rack-a", 2: "rack-b", 3: "rack-c"}


@pytest.fixture(scope="module")
def racked_metadata():
    """kafka-python's own ClusterMetadata, updated with a real Metadata v1 response (brokers with
    racks, partitions with replicas) from librdkafka's mock cluster: 3 brokers on 3 racks, topic
    ``t`` with 6 partitions of replication factor 1 (so each partition lives on one rack)."""
    pytest.importorskip("confluent_kafka", reason="the mock cluster is librdkafka's, shipped with confluent-kafka")
    import socket
    import struct

    from kafka.cluster import ClusterMetadata
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse

    from tests.mock_cluster import MockCluster

    mock = MockCluster(3, RACKS, {"t": (6, 1), "u": (2, 2)})
    try:
        request = MetadataRequest(version=1, topics=None)
        request.with_header(correlation_id=1, client_id="kassign-test")
        host, port = mock.bootstrap.split(",")[0].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(request.encode(header=True, framed=True))
            size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
            body = sock.recv(size, socket.MSG_WAITALL)
        cluster = ClusterMetadata()
        cluster.update_metadata(MetadataResponse.decode(body, version=1, header=True))
        yield cluster
    finally:
        mock.stop()


def _kafka_python_members(assignors: dict[str, object], topics: set[str]):
    """The leader's view of a JoinGroup response as kafka-python hands it to assign()."""
    from types import SimpleNamespace

    return [SimpleNamespace(member_id=mid, group_instance_id=None,
                            metadata=ConsumerProtocolSubscription.decode(a.metadata(topics)))
            for mid, a in assignors.items()]


@pytest.mark.parametrize("strategy", ["range", "sticky", "cooperative-sticky"])
def test_rack_aware_assignment_from_kafka_python_metadata(racked_metadata, strategy):
    """The leader builds replica racks from kafka-python's ClusterMetadata, so KIP-881 rack-aware
    assignment happens in the consumer: the result is kassign.assign with the same racks, and
    every member's partitions have a replica on its rack."""
    cluster = racked_metadata
    assert {b.node_id: b.rack for b in cluster.brokers()} == RACKS
    replicas = {t: [tuple(cluster._partitions[t][p].replica_nodes) for p in range(n)] for t, n in (("t", 6), ("u", 2))}
    member_racks = {"m0": "rack-a", "m1": "rack-b", "m2": "rack-c"}
    assignors = {m: kp.kassign_assignor(strategy, rack=r) for m, r in member_racks.items()}
    out = assignors["m0"].assign(cluster, _kafka_python_members(assignors, {"t", "u"}))
    got = {m: sorted(wire.decode_assignment(raw).partitions) for m, raw in out.items()}

    scenario = {"topics": {"t": 6, "u": 2},
                "members": {m: {"topics": ["t", "u"], "rack": r} for m, r in member_racks.items()},
                "partition_racks": {t: [[RACKS[b] for b in r] for r in rs] for t, rs in replicas.items()}}
    assert got == {m: sorted(v) for m, v in kassign.assign(strategy, scenario).items()}
    for member, partitions in got.items():  # t's partitions each live on one rack: all matched
        assert all(RACKS[replicas["t"][p][0]] == member_racks[member] for t, p in partitions if t == "t")
    without_racks = kassign.assign(strategy, {**scenario, "partition_racks": {}})
    assert without_racks != got, "the racks changed the assignment (they were used)"


def test_no_racks_no_member_racks_is_plain_assignment(racked_metadata):
    """Members without a rack get the rack-unaware assignment even though the brokers have racks."""
    assignors = {f"m{i}": kp.RangeAssignor() for i in range(3)}
    out = assignors["m0"].assign(racked_metadata, _kafka_python_members(assignors, {"t"}))
    expected = kassign.assign("range", {"topics": {"t": 6}, "members": {m: {"topics": ["t"]} for m in assignors}})
    assert {m: sorted(wire.decode_assignment(raw).partitions) for m, raw in out.items()} == expected
