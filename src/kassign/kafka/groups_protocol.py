"""Kafka's group APIs, every version a Kafka 4 broker speaks, as requests (bytes) and answers (plain data).

One ``encode_*(version, ...)`` per request and one ``decode_*(reader, version)`` per answer, written
once for all versions of an API with :class:`~kassign.kafka.flexible.FlexReader`: where a version is
flexible the same calls read compact types and tagged fields. Fields are the ones of Kafka 4.3.1's
message schemas (``clients/src/main/resources/common/message/*.json``), in their order:

==============================  ===  ========  =====================================================
API                             key  versions  what kassign keeps
==============================  ===  ========  =====================================================
ApiVersions                      18  0-4       API version ranges; supported and finalized features
FindCoordinator                  10  0-6       the coordinator of a group (key type 0)
ListGroups                       16  0-5       every group a broker coordinates: protocol type,
                                               state (v4+), type (v5+: classic, consumer, share,
                                               streams)
DescribeGroups                   15  0-6       a classic group: state, protocol, members' bytes
OffsetFetch                       9  1-10      committed offsets (v8+: several groups; v10: topics
                                               by id, asked as a member)
ConsumerGroupDescribe            69  0-1       a KIP-848 group: epochs, assignor, members with their
                                               current and target assignment (by topic id and name)
ShareGroupDescribe               77  0-1       a KIP-932 share group (4.0's early access spoke v0)
DescribeShareGroupOffsets        90  0-1       share-partition start offsets (v1: and lag)
StreamsGroupDescribe             89  0         a KIP-1071 streams group: topology, members, tasks
==============================  ===  ========  =====================================================

Example: ``decode_response(69, 1, frame)`` on a ConsumerGroupDescribe v1 answer (as received after
its 4-byte size) gives ``(correlation id, [ConsumerGroup(...)])``; ``encode_request(69, 1, 21,
"admin", encode_consumer_group_describe(1, ["g"]))`` the request bytes a Java AdminClient sends.

An answer that does not parse as the version asked is :class:`MalformedAnswer`, one line naming the
API and version. Kafka's generated parsers ignore bytes after a message; kassign refuses them,
since a longer answer than the schema means kassign read another version than the broker wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kassign.kafka.connection import (API_API_VERSIONS, API_CONSUMER_GROUP_DESCRIBE, API_DESCRIBE_GROUPS,
                                      API_DESCRIBE_SHARE_GROUP_OFFSETS, API_FIND_COORDINATOR, API_LIST_GROUPS,
                                      API_NAMES, API_OFFSET_FETCH, API_SHARE_GROUP_DESCRIBE,
                                      API_STREAMS_GROUP_DESCRIBE, BrokerConnection, BrokerError)
from kassign.kafka.flexible import FlexReader, FlexWriter, is_flexible, response_reader
from kassign.kafka.wire import MalformedResponse

T = TypeVar("T")

# The versions kassign speaks, per API (it picks the highest the broker also speaks).
VERSIONS = {
    API_API_VERSIONS: (0, 4), API_FIND_COORDINATOR: (0, 6), API_LIST_GROUPS: (0, 5), API_DESCRIBE_GROUPS: (0, 6),
    API_OFFSET_FETCH: (1, 10), API_CONSUMER_GROUP_DESCRIBE: (0, 1), API_SHARE_GROUP_DESCRIBE: (0, 1),
    API_DESCRIBE_SHARE_GROUP_OFFSETS: (0, 1), API_STREAMS_GROUP_DESCRIBE: (0, 0),
}
NO_OPERATIONS = -(1 << 31)  # authorized operations not asked for


class MalformedAnswer(BrokerError):
    """A broker's answer that does not parse as the API version that was asked."""


def api_name(api_key: int) -> str:
    return API_NAMES.get(api_key, f"API {api_key}")


def _writer(api_key: int, version: int) -> FlexWriter:
    return FlexWriter(is_flexible(api_key, version))


def parse(api_key: int, version: int, reader: FlexReader, decode: Callable[[FlexReader, int], T],
          where: str = "") -> T:
    """``decode(reader, version)`` of a whole answer body, a malformed one as :class:`MalformedAnswer`."""
    try:
        answer = decode(reader, version)
        reader.end()
        return answer
    except MalformedResponse as err:
        raise MalformedAnswer(f"broker answer to {api_name(api_key)} v{version}{where} does not parse: {err}") \
            from None


# -- ApiVersions --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ApiVersionsAnswer:
    error: int
    versions: dict[int, tuple[int, int]]  # API key -> (min, max)
    throttle_ms: int = 0
    supported_features: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (min, max) version
    finalized_features: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (min, max) level
    finalized_features_epoch: int = -1
    zk_migration_ready: bool = False


def encode_api_versions(version: int, software_name: str = "kassign", software_version: str = "0") -> bytes:
    w = _writer(API_API_VERSIONS, version)
    if version >= 3:
        w.string(software_name).string(software_version).tags()
    return w.bytes()


def _feature_range(r: FlexReader) -> tuple[str, tuple[int, int]]:
    name, low, high = r.text(), r.int16(), r.int16()
    r.tags()
    return name, (low, high)


def _finalized(r: FlexReader) -> tuple[str, tuple[int, int]]:
    name, high, low = r.text(), r.int16(), r.int16()  # max level before min level on the wire
    r.tags()
    return name, (low, high)


def decode_api_versions(r: FlexReader, version: int) -> ApiVersionsAnswer:
    error = r.int16()

    def api(r: FlexReader) -> tuple[int, int, int]:
        key, low, high = r.int16(), r.int16(), r.int16()
        r.tags()
        return key, low, high

    apis = r.array(api, 6)
    throttle = r.int32() if version >= 1 else 0
    tags = r.tags({0: lambda t: dict(t.array(_feature_range)), 1: FlexReader.int64,
                   2: lambda t: dict(t.array(_finalized)), 3: FlexReader.boolean})
    return ApiVersionsAnswer(error, {k: (lo, hi) for k, lo, hi in apis}, throttle, tags.get(0, {}), tags.get(2, {}),
                             tags.get(1, -1), tags.get(3, False))


# -- FindCoordinator ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Coordinator:
    key: str
    node_id: int
    host: str
    port: int
    error: int
    message: str | None


def encode_find_coordinator(version: int, keys: Sequence[str], key_type: int = 0) -> bytes:
    w = _writer(API_FIND_COORDINATOR, version)
    if version <= 3:
        if len(keys) != 1:
            raise ValueError(f"FindCoordinator v{version} asks for one key, not {len(keys)}")
        w.string(keys[0])
    if version >= 1:
        w.int8(key_type)
    if version >= 4:
        w.array(keys, FlexWriter.string)
    return w.tags().bytes()


def decode_find_coordinator(r: FlexReader, version: int, keys: Sequence[str] = ("",)) -> list[Coordinator]:
    """The coordinators asked for (v0-v3 answer one: it is given the key asked)."""
    if version >= 1:
        r.int32()  # throttle
    if version <= 3:
        error = r.int16()
        message = r.string() if version >= 1 else None
        found = [Coordinator(keys[0] if keys else "", r.int32(), r.text(), r.int32(), error, message)]
    else:
        def one(r: FlexReader) -> Coordinator:
            key, node, host, port, error, message = r.text(), r.int32(), r.text(), r.int32(), r.int16(), r.string()
            r.tags()
            return Coordinator(key, node, host, port, error, message)

        found = r.array(one, 14)
    r.tags()
    return found


# -- ListGroups ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str | None  # v4+
    type: str | None  # v5+: "classic", "consumer", "share", "streams" (as the broker spells it)


@dataclass(frozen=True)
class ListGroupsAnswer:
    error: int
    groups: list[ListedGroup]
    throttle_ms: int = 0


def encode_list_groups(version: int, states: Iterable[str] = (), types: Iterable[str] = ()) -> bytes:
    """Empty filters list every group. A filter the version cannot carry is refused, not dropped."""
    states, types = list(states), list(types)
    if states and version < 4 or types and version < 5:
        raise ValueError(f"ListGroups v{version} cannot filter by {'type' if types else 'state'}")
    w = _writer(API_LIST_GROUPS, version)
    if version >= 4:
        w.array(states, FlexWriter.string)
    if version >= 5:
        w.array(types, FlexWriter.string)
    return w.tags().bytes()


def decode_list_groups(r: FlexReader, version: int) -> ListGroupsAnswer:
    throttle = r.int32() if version >= 1 else 0
    error = r.int16()

    def group(r: FlexReader) -> ListedGroup:
        group_id, protocol_type = r.text(), r.text()
        state = r.text() if version >= 4 else None
        kind = r.text() if version >= 5 else None
        r.tags()
        return ListedGroup(group_id, protocol_type, state, kind)

    groups = r.array(group, 2)
    r.tags()
    return ListGroupsAnswer(error, groups, throttle)


# -- DescribeGroups (classic groups) ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClassicMember:
    member_id: str
    instance_id: str | None  # v4+
    client_id: str
    host: str
    metadata: bytes  # the protocol's member metadata (the consumer protocol's Subscription)
    assignment: bytes  # (the consumer protocol's Assignment)


@dataclass(frozen=True)
class ClassicGroup:
    error: int
    message: str | None  # v6+
    group_id: str
    state: str
    protocol_type: str
    protocol: str  # the protocol (assignor) the group chose
    members: list[ClassicMember]
    authorized_operations: int = NO_OPERATIONS


def encode_describe_groups(version: int, groups: Sequence[str], authorized_operations: bool = False) -> bytes:
    w = _writer(API_DESCRIBE_GROUPS, version).array(groups, FlexWriter.string)
    if version >= 3:
        w.boolean(authorized_operations)
    return w.tags().bytes()


def decode_describe_groups(r: FlexReader, version: int) -> list[ClassicGroup]:
    if version >= 1:
        r.int32()  # throttle

    def member(r: FlexReader) -> ClassicMember:
        member_id = r.text()
        instance = r.string() if version >= 4 else None
        client, host = r.text(), r.text()
        metadata, assignment = bytes(r.blob() or b""), bytes(r.blob() or b"")
        r.tags()
        return ClassicMember(member_id, instance, client, host, metadata, assignment)

    def group(r: FlexReader) -> ClassicGroup:
        error = r.int16()
        message = r.string() if version >= 6 else None
        group_id, state, protocol_type, protocol = r.text(), r.text(), r.text(), r.text()
        members = r.array(member, 5)
        operations = r.int32() if version >= 3 else NO_OPERATIONS
        r.tags()
        return ClassicGroup(error, message, group_id, state, protocol_type, protocol, members, operations)

    groups = r.array(group, 7)
    r.tags()
    return groups


# -- OffsetFetch ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CommittedOffset:
    partition: int
    offset: int  # -1: none committed
    leader_epoch: int
    metadata: str | None
    error: int


@dataclass(frozen=True)
class TopicOffsets:
    name: str | None  # v10 answers by topic id only
    topic_id: str | None
    partitions: list[CommittedOffset]


@dataclass(frozen=True)
class GroupOffsets:
    group_id: str
    error: int
    topics: list[TopicOffsets]


@dataclass(frozen=True)
class OffsetFetchGroup:
    """One group of an OffsetFetch request. ``topics``: (name, or topic id for v10, partitions); None
    asks for every partition the group committed (v2+). ``member_id``/``member_epoch``: a KIP-848 member
    asking for itself (v9+; None and -1 for an admin)."""

    group_id: str
    topics: Sequence[tuple[str, Sequence[int]]] | None
    member_id: str | None = None
    member_epoch: int = -1


def encode_offset_fetch(version: int, groups: Sequence[OffsetFetchGroup], require_stable: bool = False) -> bytes:
    w = _writer(API_OFFSET_FETCH, version)

    def topic(w: FlexWriter, item: tuple[str, Sequence[int]]) -> None:
        (w.uuid if version >= 10 else w.string)(item[0])
        w.array(item[1], FlexWriter.int32).tags()

    if version <= 7:
        if len(groups) != 1:
            raise ValueError(f"OffsetFetch v{version} asks for one group, not {len(groups)}")
        w.string(groups[0].group_id).array(groups[0].topics, topic)
    else:
        def group(w: FlexWriter, g: OffsetFetchGroup) -> None:
            w.string(g.group_id)
            if version >= 9:
                w.string(g.member_id).int32(g.member_epoch)
            w.array(g.topics, topic).tags()

        w.array(groups, group)
    if version >= 7:
        w.boolean(require_stable)
    return w.tags().bytes()


def decode_offset_fetch(r: FlexReader, version: int, group_id: str = "") -> list[GroupOffsets]:
    """Per group (v1-v7 answer one: it is given ``group_id``, the group asked)."""
    if version >= 3:
        r.int32()  # throttle

    def partition(r: FlexReader) -> CommittedOffset:
        index, offset = r.int32(), r.int64()
        epoch = r.int32() if version >= 5 else -1
        metadata, error = r.string(), r.int16()
        r.tags()
        return CommittedOffset(index, offset, epoch, metadata, error)

    def topic(r: FlexReader) -> TopicOffsets:
        if version >= 10:
            name, topic_id = None, r.uuid()
        else:
            name, topic_id = r.text(), None
        partitions = r.array(partition, 15)
        r.tags()
        return TopicOffsets(name, topic_id, partitions)

    if version <= 7:
        topics = r.array(topic, 2)
        error = r.int16() if version >= 2 else 0
        groups = [GroupOffsets(group_id, error, topics)]
    else:
        def group(r: FlexReader) -> GroupOffsets:
            group, topics = r.text(), r.array(topic, 2)
            error = r.int16()
            r.tags()
            return GroupOffsets(group, error, topics)

        groups = r.array(group, 4)
    r.tags()
    return groups


# -- ConsumerGroupDescribe (KIP-848) ------------------------------------------------------------------------------

@dataclass(frozen=True)
class TopicPartitions:
    topic_id: str
    topic: str
    partitions: list[int]


def _topic_partitions(r: FlexReader) -> TopicPartitions:
    topic_id, name, partitions = r.uuid(), r.text(), r.int32s()
    r.tags()
    return TopicPartitions(topic_id, name, partitions)


def _assignment(r: FlexReader) -> list[TopicPartitions]:
    """The Assignment struct: its topic partitions, then its tagged fields."""
    return r.struct(lambda r: r.array(_topic_partitions, 19))


@dataclass(frozen=True)
class ConsumerMember:
    member_id: str
    instance_id: str | None
    rack: str | None
    member_epoch: int
    client_id: str
    host: str
    topics: list[str]  # subscribed topic names
    regex: str | None  # subscribed topic regex
    assignment: list[TopicPartitions]  # what the member holds now
    target: list[TopicPartitions]  # what the coordinator's assignor gave it
    member_type: int = -1  # v1: 0 a classic-protocol member of the group, 1 a consumer-protocol one, -1 unknown


@dataclass(frozen=True)
class ConsumerGroup:
    error: int
    message: str | None
    group_id: str
    state: str
    epoch: int  # the group epoch
    assignment_epoch: int  # the target assignment's epoch
    assignor: str
    members: list[ConsumerMember]
    authorized_operations: int = NO_OPERATIONS


def encode_group_ids(api_key: int, version: int, groups: Sequence[str], authorized_operations: bool = False) -> bytes:
    """The request of ConsumerGroupDescribe, ShareGroupDescribe and StreamsGroupDescribe (the same fields)."""
    return _writer(api_key, version).array(groups, FlexWriter.string).boolean(authorized_operations).tags().bytes()


def encode_consumer_group_describe(version: int, groups: Sequence[str], authorized_operations: bool = False) -> bytes:
    return encode_group_ids(API_CONSUMER_GROUP_DESCRIBE, version, groups, authorized_operations)


def decode_consumer_group_describe(r: FlexReader, version: int) -> list[ConsumerGroup]:
    r.int32()  # throttle

    def member(r: FlexReader) -> ConsumerMember:
        member_id, instance, rack, epoch = r.text(), r.string(), r.string(), r.int32()
        client, host, topics, regex = r.text(), r.text(), r.strings(), r.string()
        assignment, target = _assignment(r), _assignment(r)
        member_type = r.int8() if version >= 1 else -1
        r.tags()
        return ConsumerMember(member_id, instance, rack, epoch, client, host, topics, regex, assignment, target,
                              member_type)

    return _described_groups(r, member, 14, ConsumerGroup)


def _described_groups(r: FlexReader, member: Callable[[FlexReader], Any], member_bytes: int,
                      make: Callable[..., T]) -> list[T]:
    """The groups of a ConsumerGroupDescribe or ShareGroupDescribe answer: both describe a group with the same
    fields around their own member type (``member_bytes``: the fewest bytes a member takes, for the array check)."""
    def group(r: FlexReader) -> T:
        error, message, group_id, state = r.int16(), r.string(), r.text(), r.text()
        epoch, assignment_epoch, assignor = r.int32(), r.int32(), r.text()
        members = r.array(member, member_bytes)
        operations = r.int32()
        r.tags()
        return make(error, message, group_id, state, epoch, assignment_epoch, assignor, members, operations)

    groups = r.array(group, 16)
    r.tags()
    return groups


# -- ShareGroupDescribe (KIP-932) ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ShareMember:
    member_id: str
    rack: str | None
    member_epoch: int
    client_id: str
    host: str
    topics: list[str]
    assignment: list[TopicPartitions]


@dataclass(frozen=True)
class ShareGroup:
    error: int
    message: str | None
    group_id: str
    state: str
    epoch: int
    assignment_epoch: int
    assignor: str
    members: list[ShareMember]
    authorized_operations: int = NO_OPERATIONS


def encode_share_group_describe(version: int, groups: Sequence[str], authorized_operations: bool = False) -> bytes:
    return encode_group_ids(API_SHARE_GROUP_DESCRIBE, version, groups, authorized_operations)


def decode_share_group_describe(r: FlexReader, version: int) -> list[ShareGroup]:
    r.int32()  # throttle

    def member(r: FlexReader) -> ShareMember:
        member_id, rack, epoch, client, host = r.text(), r.string(), r.int32(), r.text(), r.text()
        topics, assignment = r.strings(), _assignment(r)
        r.tags()
        return ShareMember(member_id, rack, epoch, client, host, topics, assignment)

    return _described_groups(r, member, 10, ShareGroup)


# -- DescribeShareGroupOffsets ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SharePartitionOffset:
    partition: int
    start_offset: int  # -1: no share-partition state
    leader_epoch: int
    lag: int  # v1+; -1 unknown
    error: int
    message: str | None


@dataclass(frozen=True)
class ShareTopicOffsets:
    name: str
    topic_id: str
    partitions: list[SharePartitionOffset]


@dataclass(frozen=True)
class ShareGroupOffsets:
    group_id: str
    topics: list[ShareTopicOffsets]
    error: int
    message: str | None


def encode_describe_share_group_offsets(version: int,
                                        groups: Mapping[str, Sequence[tuple[str, Sequence[int]]] | None]) -> bytes:
    """``{group: [(topic, partitions)...]}``; None for a group asks for every topic it has state for."""
    def topic(w: FlexWriter, item: tuple[str, Sequence[int]]) -> None:
        w.string(item[0]).array(item[1], FlexWriter.int32).tags()

    def group(w: FlexWriter, item: tuple[str, Sequence[tuple[str, Sequence[int]]] | None]) -> None:
        w.string(item[0]).array(item[1], topic).tags()

    return _writer(API_DESCRIBE_SHARE_GROUP_OFFSETS, version).array(groups.items(), group).tags().bytes()


def decode_describe_share_group_offsets(r: FlexReader, version: int) -> list[ShareGroupOffsets]:
    r.int32()  # throttle

    def partition(r: FlexReader) -> SharePartitionOffset:
        index, start, epoch = r.int32(), r.int64(), r.int32()
        lag = r.int64() if version >= 1 else -1
        error, message = r.int16(), r.string()
        r.tags()
        return SharePartitionOffset(index, start, epoch, lag, error, message)

    def topic(r: FlexReader) -> ShareTopicOffsets:
        name, topic_id, partitions = r.text(), r.uuid(), r.array(partition, 20)
        r.tags()
        return ShareTopicOffsets(name, topic_id, partitions)

    def group(r: FlexReader) -> ShareGroupOffsets:
        group_id, topics, error, message = r.text(), r.array(topic, 19), r.int16(), r.string()
        r.tags()
        return ShareGroupOffsets(group_id, topics, error, message)

    groups = r.array(group, 5)
    r.tags()
    return groups


# -- StreamsGroupDescribe (KIP-1071) ------------------------------------------------------------------------------

@dataclass(frozen=True)
class TopicInfo:
    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, str]


@dataclass(frozen=True)
class Subtopology:
    id: str
    source_topics: list[str]
    repartition_sink_topics: list[str]
    state_changelog_topics: list[TopicInfo]
    repartition_source_topics: list[TopicInfo]


@dataclass(frozen=True)
class Topology:
    epoch: int
    subtopologies: list[Subtopology] | None


@dataclass(frozen=True)
class Tasks:
    """Tasks by kind: subtopology id -> partitions."""

    active: dict[str, list[int]]
    standby: dict[str, list[int]]
    warmup: dict[str, list[int]]


@dataclass(frozen=True)
class StreamsMember:
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack: str | None
    client_id: str
    host: str
    topology_epoch: int
    process_id: str
    endpoint: tuple[str, int] | None  # the application's user endpoint (host, port), if it set one
    client_tags: dict[str, str]
    task_offsets: list[tuple[str, int, int]]  # (subtopology, partition, offset)
    task_end_offsets: list[tuple[str, int, int]]
    assignment: Tasks
    target: Tasks
    is_classic: bool


@dataclass(frozen=True)
class StreamsGroup:
    error: int
    message: str | None
    group_id: str
    state: str
    epoch: int
    assignment_epoch: int
    topology: Topology | None
    members: list[StreamsMember]
    authorized_operations: int = NO_OPERATIONS


def encode_streams_group_describe(version: int, groups: Sequence[str], authorized_operations: bool = False) -> bytes:
    return encode_group_ids(API_STREAMS_GROUP_DESCRIBE, version, groups, authorized_operations)


def _key_values(r: FlexReader) -> dict[str, str]:
    def pair(r: FlexReader) -> tuple[str, str]:
        key, value = r.text(), r.text()
        r.tags()
        return key, value

    return dict(r.array(pair, 3))


def _topic_info(r: FlexReader) -> TopicInfo:
    name, partitions, replication, configs = r.text(), r.int32(), r.int16(), _key_values(r)
    r.tags()
    return TopicInfo(name, partitions, replication, configs)


def _subtopology(r: FlexReader) -> Subtopology:
    sid, sources, sinks = r.text(), r.strings(), r.strings()
    changelogs, repartitions = r.array(_topic_info, 9), r.array(_topic_info, 9)
    r.tags()
    return Subtopology(sid, sources, sinks, changelogs, repartitions)


def _task_ids(r: FlexReader) -> tuple[str, list[int]]:
    sid, partitions = r.text(), r.int32s()
    r.tags()
    return sid, partitions


def _tasks(r: FlexReader) -> Tasks:
    def read(r: FlexReader) -> Tasks:
        return Tasks(dict(r.array(_task_ids, 3)), dict(r.array(_task_ids, 3)), dict(r.array(_task_ids, 3)))

    return r.struct(read)


def _task_offset(r: FlexReader) -> tuple[str, int, int]:
    sid, partition, offset = r.text(), r.int32(), r.int64()
    r.tags()
    return sid, partition, offset


def decode_streams_group_describe(r: FlexReader, version: int) -> list[StreamsGroup]:
    r.int32()  # throttle

    def topology(r: FlexReader) -> Topology:
        return Topology(r.int32(), r.nullable_array(_subtopology, 6))

    def member(r: FlexReader) -> StreamsMember:
        member_id, epoch, instance, rack = r.text(), r.int32(), r.string(), r.string()
        client, host, topology_epoch, process = r.text(), r.text(), r.int32(), r.text()
        endpoint = r.nullable_struct(lambda r: (r.text(), r.uint16()))
        tags, offsets, end_offsets = _key_values(r), r.array(_task_offset, 14), r.array(_task_offset, 14)
        assignment, target, classic = _tasks(r), _tasks(r), r.boolean()
        r.tags()
        return StreamsMember(member_id, epoch, instance, rack, client, host, topology_epoch, process, endpoint, tags,
                             offsets, end_offsets, assignment, target, classic)

    def group(r: FlexReader) -> StreamsGroup:
        error, message, group_id, state = r.int16(), r.string(), r.text(), r.text()
        epoch, assignment_epoch = r.int32(), r.int32()
        shape = r.nullable_struct(topology)
        members = r.array(member, 24)
        operations = r.int32()
        r.tags()
        return StreamsGroup(error, message, group_id, state, epoch, assignment_epoch, shape, members, operations)

    groups = r.array(group, 17)
    r.tags()
    return groups


# -- whole frames and live calls ----------------------------------------------------------------------------------

DECODERS: dict[int, Callable[..., Any]] = {
    API_API_VERSIONS: decode_api_versions, API_FIND_COORDINATOR: decode_find_coordinator,
    API_LIST_GROUPS: decode_list_groups, API_DESCRIBE_GROUPS: decode_describe_groups,
    API_OFFSET_FETCH: decode_offset_fetch, API_CONSUMER_GROUP_DESCRIBE: decode_consumer_group_describe,
    API_SHARE_GROUP_DESCRIBE: decode_share_group_describe,
    API_DESCRIBE_SHARE_GROUP_OFFSETS: decode_describe_share_group_offsets,
    API_STREAMS_GROUP_DESCRIBE: decode_streams_group_describe,
}


def decode_response(api_key: int, version: int, frame: bytes | bytearray | memoryview,
                    decoders: Mapping[int, Callable[..., Any]] = DECODERS) -> tuple[int, Any]:
    """(correlation id, decoded body) of a whole answer as received after its 4-byte size."""
    try:
        correlation, reader = response_reader(api_key, version, frame)
    except MalformedResponse as err:
        raise MalformedAnswer(f"broker answer to {api_name(api_key)} v{version} does not parse: "
                              f"its header: {err}") from None
    return correlation, parse(api_key, version, reader, decoders[api_key])


def exchange(connection: BrokerConnection, api_key: int, version: int, body: bytes,
             decode: Callable[[FlexReader, int], T], deadline: float) -> T:
    """Send ``body`` as ``api_key`` ``version`` and decode the answer (a malformed one: :class:`MalformedAnswer`)."""
    reader = connection.request(api_key, version, body, deadline)
    return parse(api_key, version, reader, decode, f" from {connection.address}")


def spoken(connection: BrokerConnection, api_key: int) -> int | None:
    """The highest version of ``api_key`` both kassign and the broker speak; None if there is none."""
    lowest, highest = VERSIONS[api_key]
    low, high = connection.versions.get(api_key, (-1, -1))
    chosen = min(high, highest)
    return chosen if chosen >= max(low, lowest) else None
