"""Real bytes of an Apache Kafka 4.3.1 broker (``shared/captures/kafka-4.3.1/``), decoded by kassign.

For every capture file: the answer decodes byte for byte (nothing left over) and gives every fact of
the file's ``decoded`` section (what Kafka's own Java client made of the same bytes); the request,
encoded by kassign with the same arguments, is the captured request byte for byte; and the answer
cut short at every byte, or with any byte changed, is a ``MalformedAnswer`` that names the API and
version, or a value, never another exception.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.kafka import groups
from kassign.kafka import groups_protocol as G
from kassign.kafka import topics_protocol as TP
from kassign.kafka.flexible import FlexReader, encode_request
from kassign.kafka.fetched import decode as decode_records
from kassign.kafka.records import decompress
from tests.conftest import REPO

CAPTURES = REPO.parent / "shared" / "captures" / "kafka-4.3.1"
FILES = sorted(p.name for p in CAPTURES.glob("*.json")) if CAPTURES.is_dir() else []
DECODERS = {**G.DECODERS, 1: TP.decode_fetch, 3: TP.decode_metadata}

if not FILES:
    pytest.skip(f"Kafka 4.3.1 captures not found at {CAPTURES}", allow_module_level=True)


def load(name: str) -> dict:
    return json.loads((CAPTURES / name).read_text())


def frames(doc: dict) -> tuple[bytes, bytes]:
    return base64.b64decode(doc["request_b64"]), base64.b64decode(doc["response_b64"])


def decoded_answer(doc: dict):
    request, response = frames(doc)
    correlation, answer = G.decode_response(doc["api_key"], doc["api_version"], response, DECODERS)
    assert correlation == int.from_bytes(request[4:8], "big"), "the answer's correlation id is the request's"
    return answer


def pairs(items) -> list[tuple[str, int]]:
    return sorted((t, p) for t, p in items)


# -- the facts of each file -----------------------------------------------------------------------------------------

def facts_api_versions(doc, answer: G.ApiVersionsAnswer):
    want = doc["decoded"]
    assert answer.error == 0
    assert answer.finalized_features == {k: tuple(v) for k, v in want["finalized_features"].items()}
    assert answer.supported_features == {k: tuple(v) for k, v in want["supported_features"].items()}
    assert answer.finalized_features_epoch == want["finalized_features_epoch"]
    # what a newer broker adds beside them: the versions of every API it speaks
    assert answer.versions[18] == (0, 4) and answer.versions[69] == (0, 1) and answer.versions[89] == (0, 0)
    hints = groups.hints_from(answer, "127.0.0.1:9092", doc["api_version"])
    assert hints["finalized_features"] == want["finalized_features"]
    assert hints["supported_features"] == want["supported_features"]
    assert hints["finalized_features_epoch"] == want["finalized_features_epoch"]
    assert hints["api_versions"][77] == [1, 1]


def facts_list_groups(doc, answer: G.ListGroupsAnswer):
    assert answer.error == 0
    got = sorted((g.group_id, g.type, g.protocol_type, g.state) for g in answer.groups)
    want = sorted((g["group"], g["type"].lower(), g["protocol"], g["state"]) for g in doc["decoded"]["groups"])
    assert got == want


def check_consumer_group(want: dict, described: groups.GroupDescription):
    assert (described.id, described.type, described.state) == (want["group"], want["type"].lower(), want["state"])
    assert (described.assignor, described.epoch) == (want["assignor"], want["group_epoch"])
    assert described.assignment_epoch == want["target_assignment_epoch"]
    assert list(described.members) == [m["member_id"] for m in want["members"]]
    for m in want["members"]:
        got = described.members[m["member_id"]]
        assert (got.instance_id, got.client_id, got.host, got.rack) == \
            (m["instance_id"], m["client_id"], m["host"], m["rack"])
        assert got.assignment == pairs(m["assignment"])
        assert got.target == pairs(m["target_assignment"])
        assert got.member_epoch == m["member_epoch"]
        # the AdminClient's "upgraded": a member of the consumer protocol (v1's member type 1)
        assert (got.member_type == "consumer") == m["upgraded"]
    for topic, topic_id in want.get("topic_ids", {}).items():
        assert described.topic_ids[topic] == topic_id


def facts_consumer_group_describe(doc, answer: list[G.ConsumerGroup]):
    assert len(answer) == 1 and answer[0].error == 0
    described = groups.from_consumer_group(answer[0], coordinator=1)
    check_consumer_group(doc["decoded"], described)
    # the coordinator is the broker that answered (not in these bytes): the capture's one broker
    assert doc["decoded"]["coordinator"] == 1 == decoded_answer(load("metadata.json")).brokers[0].node_id
    # every member subscribes to the topics it is given, and SPEC's group object carries them
    spec = described.to_json()
    assert set(spec) >= {"id", "type", "state", "assignor", "epoch", "members", "topic_ids"}
    for member in spec["members"].values():
        assert set(member) >= {"client_id", "host", "instance_id", "rack", "topics", "assignment", "target"}
        assert {t for t, _ in member["assignment"] + member["target"]} <= set(member["topics"])


def facts_describe_groups(doc, answer: list[G.ClassicGroup]):
    """The AdminClient's GroupIdNotFoundException: v6 says so (GROUP_ID_NOT_FOUND and why); before v6 the
    coordinator answers "Dead" without error, which the AdminClient (and kassign) read as not found.
    ``the_group_as_ConsumerGroupDescribe_gives_it`` comes from another API's answer, not these bytes."""
    want = doc["decoded"]
    assert "GroupIdNotFoundException" in want.get("admin_result", want.get("admin_result_v6", ""))
    (group,) = answer
    assert group.group_id == want["the_group_as_ConsumerGroupDescribe_gives_it"]["group"]
    assert not groups._exists("classic", group)
    assert group.members == [] and group.state == "Dead"
    if doc["api_version"] >= 6:
        assert group.error == groups.GROUP_ID_NOT_FOUND and group.message == \
            f"Group {group.group_id} is not a classic group."
    else:
        assert group.error == 0 and group.message is None


def facts_describe_share_group_offsets(doc, answer: list[G.ShareGroupOffsets]):
    want = doc["decoded"]
    (group,) = answer
    assert group.group_id == want["group"] and group.error == 0
    got = {t.name: {str(p.partition): {"start_offset": p.start_offset, "leader_epoch": p.leader_epoch, "lag": p.lag}
                    for p in t.partitions} for t in group.topics}
    assert got == want["offsets"]
    assert all(p.error == 0 for t in group.topics for p in t.partitions)


def facts_fetch(doc, answer: TP.FetchAnswer):
    want = doc["decoded"]
    assert answer.error == 0
    (topic,) = answer.topics
    assert topic.topic_id == want["topic_id"] and topic.name is None  # v13+ names topics by id only
    # the topic's name is the one the Metadata capture gives this id
    meta = decoded_answer(load("metadata.json"))
    assert {t.topic_id: t.name for t in meta.topics}[topic.topic_id] == want["topic"]
    (part,) = topic.partitions
    assert part.partition == want["partition"] and part.error == 0
    records = want["records"]
    decoded = decode_records(part.records, 0, part.high_watermark)
    assert decoded.codecs == {"zstd"} and decoded.batches == 1
    assert decoded.offsets.tolist() == [r["offset"] for r in records]
    assert decoded.keys.to_pylist() == [r["key"].encode() for r in records]
    # kassign's reader keeps each record's size (key + value + header bytes); values and headers themselves
    # are read here from the decompressed batch
    values = plain_records(part.records)
    assert [(v, h) for _, v, h in values] == [(r["value"], [tuple(x) for x in r["headers"]]) for r in records]
    sizes = [len(r["key"]) + len(r["value"]) + sum(len(a) + len(b) for a, b in r["headers"]) for r in records]
    assert decoded.sizes.tolist() == sizes


def plain_records(batch: bytes) -> list[tuple[bytes, str, list[tuple[str, str]]]]:
    """The records of one compressed v2 batch as (key, value, headers): the record layout (varint lengths)
    read plainly, for the facts kassign's columnar reader does not keep."""
    codec = batch[22] & 0x07  # attributes: int16 after base offset, length, epoch, magic, crc
    plain = FlexReader(decompress(codec, batch[61:]))
    count = int.from_bytes(batch[57:61], "big")
    out = []
    for _ in range(count):
        end = plain.varint() + plain.pos
        plain.int8(), plain.varint(), plain.varint()  # attributes, timestamp delta, offset delta

        def chunk() -> bytes:
            size = plain.varint()
            return b"" if size < 0 else bytes(plain._take(size))

        key, value = chunk(), chunk().decode()
        headers = [(chunk().decode(), chunk().decode()) for _ in range(plain.varint())]
        assert plain.pos == end
        out.append((key, value, headers))
    return out


def facts_metadata(doc, answer: TP.MetadataAnswer):
    want = doc["decoded"]
    got = {t.name: {"id": t.topic_id, "partitions": len(t.partitions)} for t in answer.topics}
    assert got == want["topics"]
    assert [{"id": b.node_id, "host": b.host, "port": b.port} for b in answer.brokers] == want["brokers"]
    assert answer.error == 0 and all(t.error == 0 for t in answer.topics)


def facts_offset_fetch(doc, answer: list[G.GroupOffsets]):
    want = doc["decoded"]
    (group,) = answer
    assert group.group_id == want["group"] and group.error == 0
    if doc["api_version"] >= 10:  # by topic id; the decoded section pairs it with its name
        (topic,) = group.topics
        assert topic.topic_id == want["topic_id"] and topic.name is None
        committed = want["committed_offsets_of_the_group"][want["topic"]]
        assert topic.partitions and all(p.offset == committed[str(p.partition)] for p in topic.partitions)
        return
    got = {t.name: {str(p.partition): p.offset for p in t.partitions} for t in group.topics}
    assert got == want["offsets"]


def facts_share_group_describe(doc, answer: list[G.ShareGroup]):
    want = doc["decoded"]
    (group,) = answer
    described = groups.from_share_group(group, coordinator=1)
    assert (described.id, described.type, described.state) == (want["group"], "share", want["state"])
    assert (described.epoch, described.assignment_epoch) == (want["group_epoch"], want["target_assignment_epoch"])
    assert described.assignor == "simple"
    assert list(described.members) == [m["member_id"] for m in want["members"]]
    for m in want["members"]:
        got = described.members[m["member_id"]]
        assert (got.client_id, got.host, got.rack, got.member_epoch) == \
            (m["client_id"], m["host"], m["rack"], m["member_epoch"])
        assert got.assignment == got.target == pairs(m["assignment"])
        assert got.topics == ["rk43-t3"]
    assert described.topic_ids == {"rk43-t3": "alnm0CY_QReZOc76-8hi_Q"}


def facts_streams_group_describe(doc, answer: list[G.StreamsGroup]):
    want = doc["decoded"]
    (group,) = answer
    assert group.topology is not None and group.topology.epoch == want["topology_epoch"]
    assert [{"id": s.id, "source_topics": s.source_topics, "repartition_sink_topics": s.repartition_sink_topics}
            for s in group.topology.subtopologies] == want["subtopologies"]
    described = groups.from_streams_group(group, coordinator=1)
    assert (described.id, described.type, described.state) == (want["group"], "streams", want["state"])
    assert (described.epoch, described.assignment_epoch) == (want["group_epoch"], want["target_assignment_epoch"])
    assert list(described.members) == [m["member_id"] for m in want["members"]]
    for m in want["members"]:
        got = described.members[m["member_id"]]
        assert (got.member_epoch, got.process_id, got.client_id, got.topology_epoch, got.is_classic) == \
            (m["member_epoch"], m["process_id"], m["client_id"], m["topology_epoch"], m["classic"])
        assert got.assignment == m["assignment"] and got.target == m["target_assignment"]
        assert got.topics == ["rk43-b13-in"]
    assert described.to_json()["topology"]["subtopologies"]["0"]["source_topics"] == ["rk43-b13-in"]


FACTS = {
    "api-versions.json": facts_api_versions,
    "consumer-group-describe-reconciling.json": facts_consumer_group_describe,
    "consumer-group-describe-stable.json": facts_consumer_group_describe,
    "describe-groups-on-consumer-group.json": facts_describe_groups,
    "describe-groups-v4-on-consumer-group.json": facts_describe_groups,
    "describe-share-group-offsets.json": facts_describe_share_group_offsets,
    "fetch-zstd-batch.json": facts_fetch,
    "list-groups.json": facts_list_groups,
    "metadata.json": facts_metadata,
    "offset-fetch-consumer-group.json": facts_offset_fetch,
    "offset-fetch-consumer-member.json": facts_offset_fetch,
    "share-group-describe.json": facts_share_group_describe,
    "streams-group-describe.json": facts_streams_group_describe,
}


def test_every_capture_has_its_facts_checked():
    assert set(FILES) == set(FACTS), "a capture file without a facts check (or a check without its file)"


@pytest.mark.parametrize("name", FILES)
def test_answer_decodes_with_every_fact(name):
    doc = load(name)
    request, _ = frames(doc)
    assert int.from_bytes(request[:2], "big") == doc["api_key"]
    assert int.from_bytes(request[2:4], "big") == doc["api_version"]
    FACTS[name](doc, decoded_answer(doc))


# -- the requests, encoded by kassign -------------------------------------------------------------------------------

def _offset_fetch_member_request(doc: dict) -> bytes:
    """The member's own OffsetFetch v10: its member id (g2-1's, as the describe captures name it), the member
    epoch it was at (2: only in these bytes), and the two partitions it was just assigned (g2-1's rk43-t2 1 and
    0, in the order it asked), requiring stable offsets as a KafkaConsumer does."""
    group = load("describe-groups-on-consumer-group.json")["decoded"]["the_group_as_ConsumerGroupDescribe_gives_it"]
    member = next(m for m in group["members"] if m["client_id"] == doc["client_id"])
    partitions = sorted((p for _, p in member["assignment"]), reverse=True)
    ask = G.OffsetFetchGroup(doc["decoded"]["group"], [(doc["decoded"]["topic_id"], partitions)],
                             member["member_id"], 2)
    return G.encode_offset_fetch(10, [ask], require_stable=True)


REQUESTS = {
    "api-versions.json": lambda d: G.encode_api_versions(4, "apache-kafka-java", "4.3.1"),
    "consumer-group-describe-reconciling.json": lambda d: G.encode_consumer_group_describe(1, [d["decoded"]["group"]]),
    "consumer-group-describe-stable.json": lambda d: G.encode_consumer_group_describe(1, [d["decoded"]["group"]]),
    "describe-groups-on-consumer-group.json":
        lambda d: G.encode_describe_groups(6, [d["decoded"]["the_group_as_ConsumerGroupDescribe_gives_it"]["group"]]),
    "describe-groups-v4-on-consumer-group.json":
        lambda d: G.encode_describe_groups(4, [d["decoded"]["the_group_as_ConsumerGroupDescribe_gives_it"]["group"]]),
    "describe-share-group-offsets.json":
        lambda d: G.encode_describe_share_group_offsets(1, {d["decoded"]["group"]: None}),
    # a KafkaConsumer's first Fetch: a new session (epoch 0), 500 ms / 1 byte / 50 MiB, 1 MiB per partition
    "fetch-zstd-batch.json": lambda d: TP.encode_fetch(18, TP.FetchRequest(
        [(d["decoded"]["topic_id"], [TP.FetchWanted(0, 0, 1 << 20, current_leader_epoch=0)])],
        max_wait_ms=500, min_bytes=1, max_bytes=50 << 20, session_epoch=0)),
    "list-groups.json": lambda d: G.encode_list_groups(5),
    # a KafkaConsumer names its topic and allows auto-creation (its default)
    "metadata.json": lambda d: TP.encode_metadata(13, [(None, "rk43-cap-fetch")], allow_auto_topic_creation=True),
    "offset-fetch-consumer-group.json":
        lambda d: G.encode_offset_fetch(9, [G.OffsetFetchGroup(d["decoded"]["group"], None)]),
    "offset-fetch-consumer-member.json": _offset_fetch_member_request,
    "share-group-describe.json": lambda d: G.encode_share_group_describe(1, [d["decoded"]["group"]]),
    "streams-group-describe.json": lambda d: G.encode_streams_group_describe(0, [d["decoded"]["group"]]),
}


@pytest.mark.parametrize("name", FILES)
def test_request_encodes_byte_for_byte(name):
    doc = load(name)
    request, _ = frames(doc)
    correlation = int.from_bytes(request[4:8], "big")
    mine = encode_request(doc["api_key"], doc["api_version"], correlation, doc["client_id"], REQUESTS[name](doc))
    assert mine.hex() == request.hex()


# -- malformed answers ----------------------------------------------------------------------------------------------

def _malformed_or_value(doc: dict, frame: bytes) -> None:
    name = G.api_name(doc["api_key"])
    try:
        G.decode_response(doc["api_key"], doc["api_version"], frame, DECODERS)
    except G.MalformedAnswer as err:
        message = str(err)
        assert message.startswith(f"broker answer to {name} v{doc['api_version']} does not parse: ")
        assert "\n" not in message


@pytest.mark.parametrize("name", FILES)
def test_answer_cut_short_at_every_byte(name):
    doc = load(name)
    _, response = frames(doc)
    for cut in range(len(response)):
        with pytest.raises(G.MalformedAnswer, match=f"^broker answer to {G.api_name(doc['api_key'])} "
                                                    f"v{doc['api_version']} does not parse: "):
            G.decode_response(doc["api_key"], doc["api_version"], response[:cut], DECODERS)


@pytest.mark.parametrize("name", FILES)
def test_answer_with_any_byte_changed(name):
    doc = load(name)
    _, response = frames(doc)
    for at in range(len(response)):
        for value in (0x00, 0x01, 0x7F, 0x80, 0xFF):
            _malformed_or_value(doc, response[:at] + bytes([value]) + response[at + 1:])


@pytest.mark.parametrize("name", FILES)
def test_answer_with_bytes_left_over(name):
    doc = load(name)
    _, response = frames(doc)
    with pytest.raises(G.MalformedAnswer, match="1 bytes left over"):
        G.decode_response(doc["api_key"], doc["api_version"], response + b"\x00", DECODERS)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FILES), st.data())
def test_answer_with_random_damage(name, data):
    doc = load(name)
    response = bytearray(frames(doc)[1])
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(response) - 1))
        response[at] = data.draw(st.integers(0, 255))
    _malformed_or_value(doc, bytes(response))


def test_huge_member_count_refused():
    """A ConsumerGroupDescribe answer whose member count claims 2**32 - 2 members is refused on the count."""
    doc = load("consumer-group-describe-stable.json")
    _, response = frames(doc)
    group = doc["decoded"]["group"].encode()
    # the members' count follows the assignor's name ("uniform")
    at = response.index(b"\x08uniform", response.index(group)) + 8
    damaged = response[:at] + bytes.fromhex("ffffffff0f") + response[at + 1:]
    with pytest.raises(G.MalformedAnswer, match=r"ConsumerGroupDescribe v1 does not parse: array at byte \d+ claims "
                                                r"4294967294 elements"):
        G.decode_response(69, 1, damaged)
