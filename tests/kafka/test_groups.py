"""describe_group, share_start_offsets and release_hints against a pretend broker that answers with the
Kafka 4.3.1 captures (``shared/captures/kafka-4.3.1/``) or with answers built here.

Each test sets up what a broker speaks and answers, then checks what kassign concludes: the group's
type and description, a group that does not exist, a broker that cannot say, a coordinator that
moved, a malformed or missing answer (one line, within the deadline)."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest

from kassign.groups.classic.assignors.base import Assignment, Subscription, TopicPartition
from kassign.core.errors import LiveClusterError
from kassign.kafka import groups
from kassign.kafka import groups_protocol as G
from kassign.kafka.client import Cluster
from kassign.kafka.config import ClientSettings
from kassign.kafka.flexible import FlexWriter, is_flexible
from kassign.groups.classic.protocol.wire import encode_assignment, encode_subscription
from tests.kafka.replay_broker import ReplayBroker, capture_body
from tests.conftest import REPO

CAPTURES = REPO.parent / "shared" / "captures" / "kafka-4.3.1"
if not CAPTURES.is_dir():
    pytest.skip(f"Kafka 4.3.1 captures not found at {CAPTURES}", allow_module_level=True)


def capture(name: str) -> tuple[dict, bytes]:
    doc = json.loads((CAPTURES / name).read_text())
    return doc, capture_body(doc["api_key"], doc["api_version"], base64.b64decode(doc["response_b64"]))


def kafka_431_versions() -> dict[int, tuple[int, int]]:
    doc, _ = capture("api-versions.json")
    _, answer = G.decode_response(18, 4, base64.b64decode(doc["response_b64"]))
    return answer.versions


def list_groups_answer(version: int, listed: list[tuple[str, str, str, str]], error: int = 0) -> bytes:
    """(group, protocol type, state, type) per group."""
    w = FlexWriter(is_flexible(16, version))
    if version >= 1:
        w.int32(0)
    w.int16(error)

    def group(w: FlexWriter, g: tuple[str, str, str, str]) -> None:
        w.string(g[0]).string(g[1])
        if version >= 4:
            w.string(g[2])
        if version >= 5:
            w.string(g[3])
        w.tags()

    return w.array(listed, group).tags().bytes()


def described_error(api_key: int, group: str, error: int, message: str | None = None) -> bytes:
    """A ConsumerGroupDescribe / ShareGroupDescribe answer of one group with ``error`` (no members)."""
    w = FlexWriter().int32(0)
    w.array([group], lambda w, g: w.int16(error).string(message).string(g).string("").int32(0).int32(0)
            .string("").array([], None).int32(-(1 << 31)).tags())
    return w.tags().bytes()


def describe_groups(group: str, state: str, protocol_type: str, protocol: str,
                    members: list[tuple[str, str | None, str, str, bytes, bytes]], error: int = 0):
    """A DescribeGroups answer (v4+, the version asked) of one group."""
    def answer(version: int, body: bytes) -> bytes:
        w = FlexWriter(version >= 5).int32(0)

        def member(w: FlexWriter, m) -> None:
            w.string(m[0]).string(m[1]).string(m[2]).string(m[3]).blob(m[4]).blob(m[5]).tags()

        def one(w: FlexWriter, g: str) -> None:
            w.int16(error)
            if version >= 6:
                w.string(None)
            w.string(g).string(state).string(protocol_type).string(protocol).array(members, member)
            w.int32(-(1 << 31)).tags()

        return w.array([group], one).tags().bytes()

    return answer


@pytest.fixture
def replay():
    brokers: list[ReplayBroker] = []

    def start(versions, answers) -> ReplayBroker:
        broker = ReplayBroker(versions, answers)
        brokers.append(broker)
        return broker

    yield start
    for broker in brokers:
        broker.stop()


FAST = ClientSettings(request_timeout=5)


# -- each group type, from real answers -----------------------------------------------------------------------------

def test_share_group(replay):
    want, share = capture("share-group-describe.json")
    _, listed = capture("list-groups.json")
    broker = replay(kafka_431_versions(), {16: listed, 77: share})
    described = groups.describe_group(broker.bootstrap, "rk43-s-share", settings=FAST)
    assert (described.type, described.state, described.assignor, described.epoch) == ("share", "Stable", "simple", 4)
    assert described.coordinator == 1 and described.assignment_epoch == 4
    assert described.topic_ids == {"rk43-t3": "alnm0CY_QReZOc76-8hi_Q"}
    doc = described.to_json()
    assert doc["members"] == {
        m["member_id"]: {"client_id": m["client_id"], "host": m["host"], "instance_id": None, "rack": None,
                         "topics": ["rk43-t3"], "assignment": sorted(m["assignment"]),
                         "target": sorted(m["assignment"]), "member_epoch": m["member_epoch"]}
        for m in want["decoded"]["members"]}
    # the requests: FindCoordinator on the bootstrap, then ListGroups v5 and ShareGroupDescribe v1 on the coordinator
    assert [(k, v) for k, v, _ in broker.requests if k != 18] == [(10, 6), (16, 5), (77, 1)]


def test_consumer_group(replay):
    want, described_bytes = capture("consumer-group-describe-stable.json")
    listed = list_groups_answer(5, [("rk43-cap-uniform", "consumer", "Stable", "consumer")])
    broker = replay(kafka_431_versions(), {16: listed, 69: described_bytes})
    described = groups.describe_group(broker.bootstrap, "rk43-cap-uniform", settings=FAST)
    doc = described.to_json()
    assert (doc["id"], doc["type"], doc["state"], doc["assignor"], doc["epoch"]) == \
        ("rk43-cap-uniform", "consumer", "Stable", "uniform", 4)
    assert doc["topic_ids"] == want["decoded"]["topic_ids"]
    for m in want["decoded"]["members"]:
        got = doc["members"][m["member_id"]]
        assert got["assignment"] == got["target"] == sorted(m["assignment"])
        assert (got["client_id"], got["topics"], got["member_epoch"], got["member_type"]) == \
            (m["client_id"], ["rk43-b11-p7"], 4, "consumer")
        assert "subscribed_regex" not in got  # an empty regex is none
    assert json.loads(json.dumps(doc)) == doc  # plain data


def test_consumer_group_topic_ids_of_unassigned_topics_from_metadata(replay):
    """A member subscribed to a topic that no assignment names yet: its id comes from Metadata v12 (all topics)."""
    _, described_bytes = capture("consumer-group-describe-reconciling.json")
    _, meta = capture("metadata.json")
    doc, _ = capture("consumer-group-describe-reconciling.json")
    listed = list_groups_answer(5, [(doc["decoded"]["group"], "consumer", "Reconciling", "consumer")])
    broker = replay(kafka_431_versions(), {16: listed, 69: described_bytes, 3: lambda v, body: meta})
    described = groups.describe_group(broker.bootstrap, doc["decoded"]["group"], settings=FAST)
    assert described.topic_ids == {"rk43-b11-q5": "ANmh_JPiRqWr01zDua4Nrw", "rk43-b11-q6": "THIj8FVDRvGgUu52inEtxg"}
    assert not any(k == 3 for k, _, _ in broker.requests)  # every subscribed topic has an assignment: no Metadata
    member = described.members["8O0K9OtzTT-tatvBU0EboA"]
    assert member.assignment == [] and member.target == [("rk43-b11-q5", 3), ("rk43-b11-q6", 4)]
    assert described.state == "Reconciling" and described.epoch == 5


def test_streams_group(replay):
    want, streams = capture("streams-group-describe.json")
    listed = list_groups_answer(5, [("rk43-b13-app", "streams", "Stable", "streams")])
    broker = replay(kafka_431_versions(), {16: listed, 89: streams})
    described = groups.describe_group(broker.bootstrap, "rk43-b13-app", settings=FAST)
    doc = described.to_json()
    assert (doc["type"], doc["state"], doc["assignor"], doc["epoch"]) == ("streams", "Stable", None, 5)
    assert doc["topology"] == {"epoch": 0, "subtopologies": {"0": {
        "source_topics": ["rk43-b13-in"], "repartition_sink_topics": [], "state_changelog_topics": {},
        "repartition_source_topics": {}}}}
    for m in want["decoded"]["members"]:
        got = doc["members"][m["member_id"]]
        assert got["assignment"] == {"active": m["assignment"]["active"], "standby": {}, "warmup": {}}
        assert got["process_id"] == m["process_id"] and got["is_classic"] is False and got["client_tags"] == {}


def test_classic_group(replay):
    """A classic consumer group: the members' Subscription and Assignment bytes are decoded."""
    sub = Subscription(("t1", "t2"), owned_partitions=(TopicPartition("t1", 0),), generation=7, rack="r1")
    members = [
        ("m-1", "inst-1", "c1", "/10.0.0.1", encode_subscription(sub),
         encode_assignment(Assignment((TopicPartition("t2", 1), TopicPartition("t1", 0))))),
        ("m-2", None, "c2", "/10.0.0.2", encode_subscription(Subscription(("t1",)), version=0), b""),
    ]
    listed = list_groups_answer(5, [("old", "consumer", "Stable", "classic")])
    broker = replay({**kafka_431_versions(), 15: (0, 5)}, {16: listed, 15: describe_groups(
        "old", "Stable", "consumer", "cooperative-sticky", members)})
    described = groups.describe_group(broker.bootstrap, "old", settings=FAST)
    assert (described.type, described.assignor, described.epoch, described.protocol_type) == \
        ("classic", "cooperative-sticky", None, "consumer")
    one, two = described.members["m-1"], described.members["m-2"]
    assert (one.instance_id, one.rack, one.topics, one.owned, one.generation) == \
        ("inst-1", "r1", ["t1", "t2"], [("t1", 0)], 7)
    assert one.assignment == one.target == [("t1", 0), ("t2", 1)]
    assert (two.topics, two.assignment, two.owned, two.generation, two.rack) == (["t1"], [], [], None, None)
    assert [(k, v) for k, v, _ in broker.requests if k == 15] == [(15, 5)]


def test_classic_group_of_another_protocol(replay):
    listed = list_groups_answer(5, [("connect-x", "connect", "Stable", "classic")])
    members = [("w-1", None, "worker", "/10.0.0.1", b"\x00\x01opaque", b"\x00\x02")]
    broker = replay(kafka_431_versions(), {16: listed, 15: describe_groups("connect-x", "Stable", "connect",
                                                                              "sessioned", members)})
    described = groups.describe_group(broker.bootstrap, "connect-x", settings=FAST)
    assert described.protocol_type == "connect" and described.members["w-1"].topics == []


def test_without_group_types_consumer_group_describe_tells(replay):
    """ListGroups v4 (no types): ConsumerGroupDescribe tells a KIP-848 group from a classic one (which it
    answers GROUP_ID_NOT_FOUND)."""
    _, described_bytes = capture("consumer-group-describe-stable.json")
    versions = {**kafka_431_versions(), 16: (0, 4)}
    listed = list_groups_answer(4, [("rk43-cap-uniform", "consumer", "Stable", ""), ("old", "consumer", "Empty", "")])
    broker = replay(versions, {16: listed, 69: described_bytes})
    assert groups.describe_group(broker.bootstrap, "rk43-cap-uniform", settings=FAST).type == "consumer"

    broker.answers[69] = described_error(69, "old", 69, "Group old is not a consumer group.")
    broker.answers[15] = describe_groups("old", "Empty", "consumer", "", [])
    described = groups.describe_group(broker.bootstrap, "old", settings=FAST)
    assert (described.type, described.state, described.members) == ("classic", "Empty", {})


# -- what kassign tells apart -------------------------------------------------------------------------------------

def test_group_that_does_not_exist(replay):
    """Not listed, and DescribeGroups (v6, as Kafka 4.3 answers a group it does not hold) does not know it."""
    _, listed = capture("list-groups.json")
    broker = replay(kafka_431_versions(), {16: listed, 15: describe_groups("nobody", "Dead", "", "", [], error=69)})
    with pytest.raises(groups.GroupNotFound, match=r"^group nobody does not exist on 127\.0\.0\.1:\d+ \(its "
                                                   r"coordinator, broker 1 at 127\.0\.0\.1:\d+, does not list it\)$"):
        groups.describe_group(broker.bootstrap, "nobody", settings=FAST)


@pytest.mark.parametrize("state, members, found", [
    ("Stable", [("m-1", None, "", "", b"", b"")], True),
    ("Empty", [], False),  # such a broker answers "Empty" for a group it does not know
    ("Dead", [], False),
])
def test_group_a_broker_does_not_list(replay, state, members, found):
    """tansu answers ListGroups with no group at all: DescribeGroups has the last word, and the description
    says what happened."""
    broker = replay({**kafka_431_versions(), 15: (0, 5)},
                    {16: list_groups_answer(5, []), 15: describe_groups("g", state, "consumer", "", members)})
    if not found:
        with pytest.raises(groups.GroupNotFound, match="does not list it"):
            groups.describe_group(broker.bootstrap, "g", settings=FAST)
        return
    described = groups.describe_group(broker.bootstrap, "g", settings=FAST)
    assert (described.type, described.state, list(described.members)) == ("classic", "Stable", ["m-1"])
    assert described.notes == [
        "the coordinator sent no member subscriptions or assignments (Kafka sends both for a Stable group): "
        "members' topics and assignments are unknown",
        f"{broker.bootstrap}'s ListGroups does not list group g; DescribeGroups describes it as a classic group"]
    assert described.to_json()["notes"] == described.notes


def test_broker_without_the_type_api(replay):
    """Kafka 4.0 lists share groups but (in early access) may lack ShareGroupDescribe: not 'no such group'."""
    _, listed = capture("list-groups.json")
    versions = {k: v for k, v in kafka_431_versions().items() if k != 77}
    broker = replay(versions, {16: listed})
    with pytest.raises(groups.GroupApiUnsupported, match="lists rk43-s-share as a share group but does not speak "
                                                         "ShareGroupDescribe"):
        groups.describe_group(broker.bootstrap, "rk43-s-share", settings=FAST)


def test_broker_without_any_group_api(replay):
    """librdkafka's mock cluster: no ListGroups, no describing API. kassign cannot tell whether the group exists."""
    broker = replay({0: (0, 9), 3: (0, 12), 10: (0, 3)}, {})
    with pytest.raises(groups.GroupApiUnsupported, match="speaks neither ListGroups nor any API that describes a "
                                                         "group .*cannot tell whether group g exists"):
        groups.describe_group(broker.bootstrap, "g", settings=FAST)


def test_broker_without_list_groups_describes_by_trying(replay):
    _, share = capture("share-group-describe.json")
    versions = {k: v for k, v in kafka_431_versions().items() if k != 16}
    broker = replay(versions, {69: described_error(69, "rk43-s-share", 69), 77: share})
    described = groups.describe_group(broker.bootstrap, "rk43-s-share", settings=FAST)
    assert described.type == "share" and len(described.members) == 2
    broker.answers[69] = described_error(69, "other", 69)
    broker.answers[77] = described_error(77, "other", 69)
    broker.answers[89] = lambda v, body: None  # not asked: the broker does not list it as spoken
    broker.versions.pop(89, None)
    broker.answers[15] = describe_groups("other", "Dead", "", "", [])
    with pytest.raises(groups.GroupNotFound, match="answers ConsumerGroupDescribe, ShareGroupDescribe, "
                                                   "DescribeGroups without it; it does not speak ListGroups"):
        groups.describe_group(broker.bootstrap, "other", settings=FAST)


def test_coordinator_moved_is_followed(replay):
    _, described_bytes = capture("consumer-group-describe-stable.json")
    listed = list_groups_answer(5, [("rk43-cap-uniform", "consumer", "Stable", "consumer")])
    answers = [described_error(69, "rk43-cap-uniform", 16), described_bytes]  # NOT_COORDINATOR, then the answer
    broker = replay(kafka_431_versions(), {16: listed, 69: lambda v, body: answers.pop(0)})
    assert groups.describe_group(broker.bootstrap, "rk43-cap-uniform", settings=FAST).epoch == 4
    assert [k for k, _, _ in broker.requests].count(10) == 2  # the coordinator was found again


def test_not_authorized(replay):
    listed = list_groups_answer(5, [("g", "consumer", "Stable", "consumer")])
    broker = replay(kafka_431_versions(), {16: listed, 69: described_error(69, "g", 30)})
    with pytest.raises(LiveClusterError, match="not authorized to describe group g"):
        groups.describe_group(broker.bootstrap, "g", settings=FAST)


def test_malformed_answer_is_one_line(replay):
    _, described_bytes = capture("consumer-group-describe-stable.json")
    listed = list_groups_answer(5, [("rk43-cap-uniform", "consumer", "Stable", "consumer")])
    broker = replay(kafka_431_versions(), {16: listed, 69: described_bytes[:-3]})
    with pytest.raises(G.MalformedAnswer) as caught:
        groups.describe_group(broker.bootstrap, "rk43-cap-uniform", settings=FAST)
    assert str(caught.value).startswith(f"broker answer to ConsumerGroupDescribe v1 from {broker.bootstrap} does "
                                        "not parse: ")
    assert "\n" not in str(caught.value)


def test_silent_broker_ends_at_the_deadline(replay):
    listed = list_groups_answer(5, [("g", "consumer", "Stable", "consumer")])

    def stall(version: int, body: bytes) -> bytes:
        time.sleep(3)
        return b""

    broker = replay(kafka_431_versions(), {16: listed, 69: stall})
    start = time.monotonic()
    with pytest.raises(LiveClusterError, match="did not answer ConsumerGroupDescribe v1 within the deadline"):
        groups.describe_group(broker.bootstrap, "g", settings=FAST, deadline=time.monotonic() + 1)
    assert time.monotonic() - start < 2.5


def test_describe_on_an_open_cluster_keeps_it_open(replay):
    _, share = capture("share-group-describe.json")
    _, listed = capture("list-groups.json")
    broker = replay(kafka_431_versions(), {16: listed, 77: share})
    with Cluster(broker.bootstrap, FAST) as cluster:
        assert groups.describe_group(cluster, "rk43-s-share").type == "share"
        assert groups.describe_group(cluster, "rk43-s-share").type == "share"
        assert cluster._connections  # still open for the caller
    assert [k for k, _, _ in broker.requests].count(18) == 2  # one connection each to bootstrap and coordinator


def test_bad_group_id():
    with pytest.raises(LiveClusterError, match="a group id is needed"):
        groups.describe_group("127.0.0.1:1", "", settings=FAST)


# -- share start offsets, release hints -----------------------------------------------------------------------------

def test_share_start_offsets(replay):
    _, offsets = capture("describe-share-group-offsets.json")
    broker = replay(kafka_431_versions(), {90: offsets})
    assert groups.share_start_offsets(broker.bootstrap, "rk43-s-share", settings=FAST) == \
        {"rk43-t3": {0: 126, 1: 123, 2: 0, 3: 0}}
    got = groups.share_start_offsets(broker.bootstrap, "rk43-s-share", {"rk43-t3": 5, "other": 2}, settings=FAST)
    assert got == {"rk43-t3": {0: 126, 1: 123, 2: 0, 3: 0, 4: -1}, "other": {0: -1, 1: -1}}
    # the request asked for those partitions, by name
    _, version, body = [r for r in broker.requests if r[0] == 90][-1]
    assert body == G.encode_describe_share_group_offsets(version, {"rk43-s-share": [("rk43-t3", [0, 1, 2, 3, 4]),
                                                                                     ("other", [0, 1])]})


def test_share_start_offsets_without_the_api(replay):
    broker = replay({k: v for k, v in kafka_431_versions().items() if k != 90}, {})
    with pytest.raises(groups.GroupApiUnsupported, match="does not speak DescribeShareGroupOffsets"):
        groups.share_start_offsets(broker.bootstrap, "s", settings=FAST)


def test_release_hints(replay):
    doc, api_versions = capture("api-versions.json")
    broker = replay(kafka_431_versions(), {18: api_versions})
    hints = groups.release_hints(broker.bootstrap, settings=FAST)
    assert hints["api_versions_version"] == 4 and hints["broker"] == broker.bootstrap
    assert hints["finalized_features"] == doc["decoded"]["finalized_features"]
    assert hints["supported_features"] == doc["decoded"]["supported_features"]
    assert hints["finalized_features_epoch"] == 346
    assert hints["api_versions"][69] == [0, 1] and hints["api_versions"][89] == [0, 0]
    # kassign's own ApiVersions v4: client software name and version, header v2
    body = [b for k, v, b in broker.requests if (k, v) == (18, 4)][0]
    assert body == G.encode_api_versions(4, "kassign", __import__("kassign").__version__)


def test_release_hints_of_an_old_broker(replay):
    """ApiVersions v2 at most (librdkafka's mock cluster): no features, the versions only."""
    broker = replay({18: (0, 2), 3: (0, 9)}, {18: lambda v, body: G_api_versions_v2()})
    hints = groups.release_hints(broker.bootstrap, settings=FAST)
    assert hints["api_versions_version"] == 2 and hints["finalized_features"] == {}
    assert hints["api_versions"] == {3: [0, 9]} and hints["finalized_features_epoch"] == -1


def G_api_versions_v2() -> bytes:
    w = FlexWriter(False).int16(0)
    w.array([(3, 0, 9)], lambda w, e: w.int16(e[0]).int16(e[1]).int16(e[2]))
    return w.int32(0).bytes()
