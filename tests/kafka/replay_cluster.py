"""A whole cluster replayed for ``kassign describe-group``: a group of each type as a Kafka 4.3.1 broker described it
(the captures of ``shared/captures/kafka-4.3.1/``; a classic group's DescribeGroups answer is built here, with its
members' Subscription and Assignment bytes, and needs no capture), and around it the answers a describe needs
that were not captured for that group, built here: Metadata (v1-v13) naming the group's topics, ListOffsets (v1-v5), Fetch
(v4-v10, the high watermark only) and OffsetFetch (v1-v5, the group's committed offsets).

Example::

    broker = replay_group("consumer")   # None where the captures are absent
    ...  # kassign describe-group --bootstrap-server broker.bootstrap --group broker.group
    broker.stop()
"""

from __future__ import annotations

import base64
import json

from kassign.kafka import groups_protocol as G
from kassign.kafka.flexible import FlexReader, FlexWriter
from tests.conftest import REPO
from tests.kafka.replay_broker import ReplayBroker, capture_body, list_offsets_asked

CAPTURES = REPO.parent / "shared" / "captures" / "kafka-4.3.1"
END = 1000  # every partition's high watermark
START = 0  # and log start


def _capture(name: str) -> tuple[dict, bytes]:
    doc = json.loads((CAPTURES / name).read_text())
    return doc, capture_body(doc["api_key"], doc["api_version"], base64.b64decode(doc["response_b64"]))


def _versions() -> dict[int, tuple[int, int]]:
    doc, _ = _capture("api-versions.json")
    _, answer = G.decode_response(18, 4, base64.b64decode(doc["response_b64"]))
    return answer.versions


def _list_groups(group: str, protocol_type: str, state: str, kind: str) -> bytes:
    w = FlexWriter(True).int32(0).int16(0)
    w.array([group], lambda w, g: w.string(g).string(protocol_type).string(state).string(kind).tags())
    return w.tags().bytes()


def _metadata(port: int, topics: dict[str, int]):
    def answer(version: int, body: bytes) -> bytes:
        assert 1 <= version <= 13, version
        if version >= 9:  # the flexible versions (the captured ApiVersions offers up to v13), same facts
            from kassign.kafka import topics_protocol as TP
            from tests.kafka.replay_balance import encode_metadata_answer

            parts = {name: [TP.MetadataPartition(0, p, 1, 0, [1], [1], []) for p in range(count)]
                     for name, count in topics.items()}
            listed = [TP.MetadataTopic(0, name, "AAAAAAAAAAAAAAAAAAAAAA", False, parts[name])
                      for name in sorted(topics)]
            return encode_metadata_answer(version, TP.MetadataAnswer([TP.MetadataBroker(1, "127.0.0.1", port, None)],
                                                                     "replayed", 1, listed))
        w = FlexWriter(False)
        if version >= 3:
            w.int32(0)
        w.array([1], lambda w, node: w.int32(node).string("127.0.0.1").int32(port).string(None))
        if version >= 2:
            w.string("replayed")
        w.int32(1)

        def partition(w: FlexWriter, p: int) -> None:
            w.int16(0).int32(p).int32(1)
            if version >= 7:
                w.int32(0)
            w.array([1], FlexWriter.int32).array([1], FlexWriter.int32)
            if version >= 5:
                w.array([], FlexWriter.int32)

        def topic(w: FlexWriter, item: tuple[str, int]) -> None:
            w.int16(0).string(item[0]).boolean(False).array(list(range(item[1])), partition)
            if version >= 8:
                w.int32(-(1 << 31))

        w.array(sorted(topics.items()), topic)
        if version >= 8:
            w.int32(-(1 << 31))
        return w.bytes()

    return answer


def _list_offsets(version: int, body: bytes) -> bytes:
    assert 1 <= version <= 5, version
    asked = list_offsets_asked(version, body)
    w = FlexWriter(False)
    if version >= 2:
        w.int32(0)

    def partition(w: FlexWriter, item: tuple[int, int]) -> None:
        w.int32(item[0]).int16(0).int64(-1).int64(START if item[1] == -2 else END)
        if version >= 4:
            w.int32(0)

    w.array(asked, lambda w, t: (w.string(t[0]), w.array(t[1], partition)))
    return w.bytes()


def _fetch(version: int, body: bytes) -> bytes:
    assert 4 <= version <= 10, version
    r = FlexReader(body, False)
    r.int32(), r.int32(), r.int32(), r.int32(), r.int8()
    if version >= 7:
        r.int32(), r.int32()
    asked = []
    for _ in range(r.int32()):
        name = r.text()
        parts = []
        for _ in range(r.int32()):
            parts.append(r.int32())
            if version >= 9:
                r.int32()
            r.int64()
            if version >= 5:
                r.int64()
            r.int32()
        asked.append((name, parts))
    w = FlexWriter(False).int32(0)
    if version >= 7:
        w.int16(0).int32(0)

    def partition(w: FlexWriter, p: int) -> None:
        w.int32(p).int16(0).int64(END).int64(END)
        if version >= 5:
            w.int64(START)
        w.int32(0).blob(None)

    w.array(asked, lambda w, t: (w.string(t[0]), w.array(t[1], partition)))
    return w.bytes()


def _offset_fetch(committed: dict[tuple[str, int], int]):
    def answer(version: int, body: bytes) -> bytes:
        assert 1 <= version <= 5, version
        r = FlexReader(body, False)
        r.text()
        asked = [(r.text(), [r.int32() for _ in range(r.int32())]) for _ in range(r.int32())]
        w = FlexWriter(False)
        if version >= 3:
            w.int32(0)

        def partition(w: FlexWriter, item: tuple[str, int]) -> None:
            w.int32(item[1]).int64(committed.get(item, -1))
            if version >= 5:
                w.int32(-1)
            w.string("").int16(0)

        w.array(asked, lambda w, t: (w.string(t[0]), w.array([(t[0], p) for p in t[1]], partition)))
        if version >= 2:
            w.int16(0)
        return w.bytes()

    return answer


def _committed(topics: dict[str, int]) -> dict[tuple[str, int], int]:
    return {(t, p): 10 * (p + 1) for t, n in topics.items() for p in range(0, n, 2)}


# the group type -> (capture, describe API, group id, protocol type, state, its topics and partition counts)
GROUPS = {
    "consumer": ("consumer-group-describe-stable.json", 69, "rk43-cap-uniform", "consumer", "Stable",
                 {"rk43-b11-p7": 7}),
    "share": ("share-group-describe.json", 77, "rk43-s-share", "share", "Stable", {"rk43-t3": 4}),
    "streams": ("streams-group-describe.json", 89, "rk43-b13-app", "streams", "Stable", {"rk43-b13-in": 4}),
}


def _classic_group(version: int, body: bytes) -> bytes:
    """DescribeGroups (v4, v5) of group ``billing``: two members of a cooperative-sticky consumer group, one static
    with a rack, owned partitions and a generation in their subscriptions; the leader handed the second nothing,
    where cooperative-sticky keeps its partition with it (so kassign's check names it)."""
    from kassign.groups.classic.assignors.base import Assignment, Subscription, TopicPartition
    from kassign.groups.classic.protocol.wire import encode_assignment, encode_subscription

    one = Subscription(("orders",), owned_partitions=(TopicPartition("orders", 0), TopicPartition("orders", 1)),
                       generation=7, rack="rack-a")
    two = Subscription(("orders",), owned_partitions=(TopicPartition("orders", 2),), generation=7)
    members = [("billing-1-0f3c", "billing-1", "c1", "/10.0.0.1", encode_subscription(one),
                encode_assignment(Assignment((TopicPartition("orders", 0), TopicPartition("orders", 1))))),
               ("c2-77ab", None, "c2", "/10.0.0.2", encode_subscription(two), encode_assignment(Assignment(())))]
    w = FlexWriter(version >= 5).int32(0)

    def member(w: FlexWriter, m: tuple) -> None:
        w.string(m[0]).string(m[1]).string(m[2]).string(m[3]).blob(m[4]).blob(m[5]).tags()

    def group(w: FlexWriter, g: str) -> None:
        w.int16(0).string(g).string("Stable").string("consumer").string("cooperative-sticky")
        w.array(members, member).int32(-(1 << 31)).tags()

    return w.array(["billing"], group).tags().bytes()


CLASSIC_VERSIONS = {16: (0, 5), 15: (0, 5), 3: (0, 12), 2: (0, 7), 1: (0, 13), 9: (0, 8)}


def replay_group(kind: str) -> ReplayBroker | None:
    """A pretend broker holding a group of ``kind``: ``consumer``, ``share``, ``streams`` (a Kafka 4.3.1 broker's,
    captured; None where the captures are absent) or ``classic`` (built; the broker names no release). Its topics
    hold ``END`` records in each partition, and (but for the share group) the group committed offsets on the even
    partitions; ``broker.group`` is the group's id."""
    topics = {"orders": 3}
    if kind == "classic":
        answers: dict = {16: _list_groups("billing", "consumer", "Stable", "classic"), 15: _classic_group,
                         2: _list_offsets, 1: _fetch, 9: _offset_fetch(_committed(topics))}
        broker = ReplayBroker(CLASSIC_VERSIONS, answers)
        broker.answers[3] = _metadata(broker.port, topics)
        broker.group = "billing"  # type: ignore[attr-defined]
        return broker
    if not CAPTURES.is_dir():
        return None
    name, api, group, protocol_type, state, topics = GROUPS[kind]
    _, described = _capture(name)
    _, api_versions = _capture("api-versions.json")
    answers = {18: api_versions, 16: _list_groups(group, protocol_type, state, kind), api: described,
               2: _list_offsets, 1: _fetch, 9: _offset_fetch(_committed(topics))}
    if kind == "share":
        _, answers[90] = _capture("describe-share-group-offsets.json")
    broker = ReplayBroker(_versions(), answers)
    broker.answers[3] = _metadata(broker.port, topics)
    broker.group = group  # type: ignore[attr-defined]
    return broker
