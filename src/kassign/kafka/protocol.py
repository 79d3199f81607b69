"""The requests kassign's reader sends, and their answers, as plain data.

Each ``*_request`` returns ``(api_key, version range, build(version) -> body)`` and each
``read_*`` decodes a response body of the version that was sent. Only the fields the reader
uses are kept. Errors stay as Kafka's numeric codes (``ERRORS`` names the ones a person may
see); the caller decides what each means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kassign.kafka import groups_protocol as G
from kassign.kafka.connection import (API_DESCRIBE_GROUPS, API_FETCH, API_FIND_COORDINATOR, API_LIST_OFFSETS,
                                      API_METADATA, API_OFFSET_FETCH, BrokerConnection)
from kassign.kafka.wire import Reader, Writer

ERRORS = {
    -1: "UNKNOWN_SERVER_ERROR", 1: "OFFSET_OUT_OF_RANGE", 2: "CORRUPT_MESSAGE", 3: "UNKNOWN_TOPIC_OR_PARTITION",
    5: "LEADER_NOT_AVAILABLE", 6: "NOT_LEADER_OR_FOLLOWER", 7: "REQUEST_TIMED_OUT", 8: "BROKER_NOT_AVAILABLE",
    9: "REPLICA_NOT_AVAILABLE", 13: "NETWORK_EXCEPTION", 14: "COORDINATOR_LOAD_IN_PROGRESS",
    15: "COORDINATOR_NOT_AVAILABLE", 16: "NOT_COORDINATOR", 17: "INVALID_TOPIC_EXCEPTION",
    24: "INVALID_GROUP_ID", 29: "TOPIC_AUTHORIZATION_FAILED", 30: "GROUP_AUTHORIZATION_FAILED",
    31: "CLUSTER_AUTHORIZATION_FAILED", 35: "UNSUPPORTED_VERSION", 56: "KAFKA_STORAGE_ERROR",
    69: "GROUP_ID_NOT_FOUND", 74: "FENCED_LEADER_EPOCH", 75: "UNKNOWN_LEADER_EPOCH",
    76: "UNSUPPORTED_COMPRESSION_TYPE", 78: "OFFSET_NOT_AVAILABLE", 100: "UNKNOWN_TOPIC_ID",
}
OFFSET_OUT_OF_RANGE, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID = 1, 3, 100
# Errors that a fresh look at the metadata (a new leader) or a short wait cures.
RETRIABLE = {5, 6, 7, 8, 9, 13, 14, 15, 16, 56, 74, 75, 78}
AUTHORIZATION = {29, 30, 31}
LATEST, EARLIEST = -1, -2  # ListOffsets' special timestamps


def error_name(code: int) -> str:
    return ERRORS.get(code, f"error {code}")


# -- Metadata -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Broker:
    node_id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True)
class PartitionMetadata:
    error: int
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass
class TopicMetadata:
    error: int
    name: str
    internal: bool
    partitions: dict[int, PartitionMetadata] = field(default_factory=dict)


@dataclass
class Metadata:
    brokers: dict[int, Broker]
    controller: int
    topics: dict[str, TopicMetadata]


def metadata(connection: BrokerConnection, deadline: float) -> Metadata:
    """Every topic's metadata. All topics are asked for (a null list), never named ones: some
    brokers create a topic that a metadata request names, whatever the request says."""
    version = connection.version(API_METADATA, 1, 8)
    body = Writer().array(None, Writer.string)
    if version >= 4:
        body.boolean(False)  # allow_auto_topic_creation
    if version >= 8:
        body.boolean(False).boolean(False)  # authorized operations: not needed
    r = connection.request(API_METADATA, version, body.bytes(), deadline)
    if version >= 3:
        r.int32()  # throttle

    def broker(r: Reader) -> Broker:
        return Broker(r.int32(), r.string() or "", r.int32(), r.string())

    brokers = {b.node_id: b for b in r.array(broker)}
    if version >= 2:
        r.string()  # cluster id
    controller = r.int32()

    def partition(r: Reader) -> PartitionMetadata:
        error, index, leader = r.int16(), r.int32(), r.int32()
        if version >= 7:
            r.int32()  # leader epoch
        replicas = tuple(r.array(Reader.int32))
        isr = tuple(r.array(Reader.int32))
        if version >= 5:
            r.array(Reader.int32)  # offline replicas
        return PartitionMetadata(error, index, leader, replicas, isr)

    def topic(r: Reader) -> TopicMetadata:
        error, name, internal = r.int16(), r.string() or "", r.boolean()
        parts = {p.partition: p for p in r.array(partition)}
        if version >= 8:
            r.int32()  # authorized operations
        return TopicMetadata(error, name, internal, parts)

    topics = {t.name: t for t in r.array(topic)}
    return Metadata(brokers, controller, topics)


# -- ListOffsets ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OffsetAnswer:
    error: int
    offset: int
    timestamp: int


def list_offsets(connection: BrokerConnection, wanted: Mapping[str, Mapping[int, int]], isolation: int,
                 deadline: float) -> dict[tuple[str, int], OffsetAnswer]:
    """``{topic: {partition: timestamp}}`` (``LATEST``, ``EARLIEST`` or epoch ms) -> the offset per partition."""
    version = connection.version(API_LIST_OFFSETS, 1, 5)
    body = Writer().int32(-1)
    if version >= 2:
        body.int8(isolation)

    def partition(w: Writer, item: tuple[int, int]) -> None:
        w.int32(item[0])
        if version >= 4:
            w.int32(-1)  # current leader epoch: unknown
        w.int64(item[1])

    body.array(wanted.items(), lambda w, t: (w.string(t[0]), w.array(sorted(t[1].items()), partition)))
    r = connection.request(API_LIST_OFFSETS, version, body.bytes(), deadline)
    if version >= 2:
        r.int32()
    answers: dict[tuple[str, int], OffsetAnswer] = {}
    for _ in range(r.int32()):
        name = r.string() or ""
        for _ in range(r.int32()):
            index, error, timestamp, offset = r.int32(), r.int16(), r.int64(), r.int64()
            if version >= 4:
                r.int32()
            answers[(name, index)] = OffsetAnswer(error, offset, timestamp)
    return answers


# -- Fetch ----------------------------------------------------------------------------------------------------------

@dataclass
class FetchedPartition:
    error: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    aborted: list[tuple[int, int]]  # (producer id, first offset), read_committed only
    records: memoryview | None


def fetch(connection: BrokerConnection, topic: str, wanted: Sequence[tuple[int, int]], isolation: int,
          max_bytes: int, partition_max_bytes: int, deadline: float,
          max_wait_ms: int = 500) -> dict[int, FetchedPartition]:
    """One Fetch of ``wanted`` ``(partition, offset)`` pairs of one topic, without a fetch session."""
    version = connection.version(API_FETCH, 4, 10)
    body = Writer().int32(-1).int32(max_wait_ms).int32(1).int32(max_bytes).int8(isolation)
    if version >= 7:
        body.int32(0).int32(-1)  # no fetch session: a full fetch every time

    def partition(w: Writer, item: tuple[int, int]) -> None:
        w.int32(item[0])
        if version >= 9:
            w.int32(-1)
        w.int64(item[1])
        if version >= 5:
            w.int64(-1)
        w.int32(partition_max_bytes)

    body.array([topic], lambda w, name: (w.string(name), w.array(wanted, partition)))
    if version >= 7:
        body.int32(0)  # forgotten topics
    r = connection.request(API_FETCH, version, body.bytes(), deadline)
    r.int32()  # throttle
    top_error = 0
    if version >= 7:
        top_error = r.int16()
        r.int32()  # session id
    result: dict[int, FetchedPartition] = {}
    for _ in range(r.int32()):
        r.string()
        for _ in range(r.int32()):
            index, error, high = r.int32(), r.int16(), r.int64()
            stable = r.int64()
            start = r.int64() if version >= 5 else -1
            count = r.int32()
            aborted = [(r.int64(), r.int64()) for _ in range(max(count, 0))]
            records = r.blob()
            result[index] = FetchedPartition(error or top_error, high, stable, start, aborted, records)
    if not result and top_error:
        result = {p: FetchedPartition(top_error, -1, -1, -1, [], None) for p, _ in wanted}
    return result


# -- groups ---------------------------------------------------------------------------------------------------------

def find_coordinator(connection: BrokerConnection, group: str, deadline: float) -> tuple[int, int, str, int]:
    """(error, node id, host, port) of ``group``'s coordinator."""
    version = connection.version(API_FIND_COORDINATOR, 0, 2)
    body = Writer().string(group)
    if version >= 1:
        body.int8(0)  # key type: a group
    r = connection.request(API_FIND_COORDINATOR, version, body.bytes(), deadline)
    if version >= 1:
        r.int32()
    error = r.int16()
    if version >= 1:
        r.string()
    return error, r.int32(), r.string() or "", r.int32()


def offset_fetch(connection: BrokerConnection, group: str, partitions: Mapping[str, Sequence[int]],
                 deadline: float) -> tuple[int, dict[tuple[str, int], tuple[int, int]]]:
    """(group error, {(topic, partition): (committed offset or -1, error)}), at v1-v5: the OffsetFetch
    codec of :mod:`kassign.kafka.groups_protocol` (one for every reader), a malformed answer raising
    :class:`~kassign.kafka.wire.MalformedResponse` as this module's other readers do."""
    version = connection.version(API_OFFSET_FETCH, 1, 5)
    body = G.encode_offset_fetch(version, [G.OffsetFetchGroup(group, list(partitions.items()))])
    answer, = G.decode_offset_fetch(connection.request(API_OFFSET_FETCH, version, body, deadline), version, group)
    committed = {(topic.name or "", p.partition): (p.offset, p.error) for topic in answer.topics
                 for p in topic.partitions}
    return answer.error, committed


@dataclass(frozen=True)
class GroupMember:
    member_id: str
    instance_id: str | None
    client_id: str
    host: str
    metadata: bytes  # the consumer protocol's Subscription (empty where the broker does not keep it)
    assignment: bytes


@dataclass(frozen=True)
class GroupDescription:
    error: int
    state: str
    protocol_type: str
    protocol: str  # the assignor the group chose
    members: tuple[GroupMember, ...]


def describe_groups(connection: BrokerConnection, groups: Sequence[str], deadline: float) -> dict[str, GroupDescription]:
    """Classic groups as their coordinator sees them: state, chosen assignor, members with their metadata."""
    version = connection.version(API_DESCRIBE_GROUPS, 0, 4)
    body = Writer().array(groups, Writer.string)
    if version >= 3:
        body.boolean(False)  # authorized operations: not needed
    r = connection.request(API_DESCRIBE_GROUPS, version, body.bytes(), deadline)
    if version >= 1:
        r.int32()

    def member(r: Reader) -> GroupMember:
        member_id = r.string() or ""
        instance = r.string() if version >= 4 else None
        client, host = r.string() or "", r.string() or ""
        return GroupMember(member_id, instance, client, host, bytes(r.blob() or b""), bytes(r.blob() or b""))

    found = {}
    for _ in range(r.int32()):
        error, group, state, protocol_type, protocol = r.int16(), r.string() or "", r.string() or "", \
            r.string() or "", r.string() or ""
        members = tuple(r.array(member))
        if version >= 3:
            r.int32()
        found[group] = GroupDescription(error, state, protocol_type, protocol, members)
    return found
