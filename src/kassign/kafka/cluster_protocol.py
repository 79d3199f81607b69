"""The admin APIs that describe a cluster's brokers, their disks and their configs, every version, as plain data.

One ``encode_*_request(version, ...)`` and ``decode_*(reader, version)`` per API, and, for tests and pretend
brokers, the other direction too (``encode_*(version, answer)``, ``decode_*_request``). Fields and their order are
those of Kafka 4.3's message schemas; where a version lacks a field, the decoded answer holds the value that says
"not told" (-1 for a size, None for a rack), never a guess:

==========================  ===  ========  ====================================================================
API                         key  versions  what it tells
==========================  ===  ========  ====================================================================
DescribeLogDirs              35  0-5       one broker's log dirs: per dir its error (an offline dir answers
                                           KAFKA_STORAGE_ERROR), the size of every replica in it, offset lag,
                                           future (AlterReplicaLogDirs) logs; v3+ a top-level error; v4+ the
                                           volume's total and usable bytes (KIP-827); v5+ whether the dir is
                                           cordoned. Flexible from v2
DescribeCluster              60  0-2       brokers with host, port and rack, the controller id, the cluster id;
                                           v2+ fenced brokers on request. Flexible at every version
DescribeConfigs              32  0-4       configs of topics (resource type 2) and brokers (4): value, source,
                                           read-only, sensitive, synonyms (v1+), type and documentation (v3+).
                                           Flexible from v4
ListPartitionReassignments   46  0         the reassignments running: per partition its replicas (the target,
                                           then the replicas being removed), those being added and removed.
                                           Flexible
==========================  ===  ========  ====================================================================

Example: broker 3's answer to DescribeLogDirs v5 (all topics) decodes as ``LogDirsAnswer(error=0,
log_dirs=[LogDir(error=0, path=".../data-0", replicas=[ReplicaLog("kc-big", 2, 264828, 0, False), ...],
total_bytes=270553174016, usable_bytes=77403480064, cordoned=False), ...])``; the same answer at v3 carries
``total_bytes=-1, usable_bytes=-1``: the broker did not say.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from kassign.kafka.connection import (API_DESCRIBE_CLUSTER, API_DESCRIBE_CONFIGS, API_DESCRIBE_LOG_DIRS,
                                      API_LIST_PARTITION_REASSIGNMENTS, API_METADATA)
from kassign.kafka.flexible import FlexReader, FlexWriter, is_flexible
from kassign.kafka.wire import MalformedResponse

VERSIONS = {API_DESCRIBE_LOG_DIRS: (0, 5), API_DESCRIBE_CLUSTER: (0, 2), API_DESCRIBE_CONFIGS: (0, 4),
            API_LIST_PARTITION_REASSIGNMENTS: (0, 0), API_METADATA: (1, 13)}
NO_OPERATIONS = -(1 << 31)
KAFKA_STORAGE_ERROR = 56
_PARTITION = struct.Struct(">iqq?")  # a DescribeLogDirs partition: index, size, offset lag, is future
TOPIC, BROKER = 2, 4  # DescribeConfigs resource types
# DescribeConfigs' config sources, as the Java AdminClient names them.
CONFIG_SOURCES = {0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG",
                  3: "DYNAMIC_DEFAULT_BROKER_CONFIG", 4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG",
                  6: "DYNAMIC_BROKER_LOGGER_CONFIG", 7: "DYNAMIC_CLIENT_METRICS_CONFIG", 8: "DYNAMIC_GROUP_CONFIG"}
CONFIG_TYPES = {0: "UNKNOWN", 1: "BOOLEAN", 2: "STRING", 3: "INT", 4: "SHORT", 5: "LONG", 6: "DOUBLE", 7: "LIST",
                8: "CLASS", 9: "PASSWORD"}


def _writer(api_key: int, version: int) -> FlexWriter:
    return FlexWriter(is_flexible(api_key, version))


# -- DescribeLogDirs ----------------------------------------------------------------------------------------------

class ReplicaLog(NamedTuple):
    """One replica's log in one log dir of one broker."""

    topic: str
    partition: int
    size: int  # bytes of its segments
    offset_lag: int
    is_future: bool  # a log being moved here from another dir of the same broker (AlterReplicaLogDirs)


@dataclass
class LogDir:
    error: int  # KAFKA_STORAGE_ERROR: the dir is offline
    path: str
    replicas: list[ReplicaLog] = field(default_factory=list)
    total_bytes: int = -1  # v4+; -1: not told
    usable_bytes: int = -1  # v4+; -1: not told
    cordoned: bool = False  # v5+


@dataclass
class LogDirsAnswer:
    error: int
    log_dirs: list[LogDir]
    throttle_ms: int = 0


def encode_describe_log_dirs_request(version: int, topics: Sequence[tuple[str, Sequence[int]]] | None = None) -> bytes:
    """``topics``: (topic, partitions) pairs, or None for every replica the broker holds."""
    w = _writer(API_DESCRIBE_LOG_DIRS, version)
    w.array(topics, lambda w, t: (w.string(t[0]), w.array(t[1], FlexWriter.int32), w.tags()))
    return w.tags().bytes()


def decode_describe_log_dirs_request(r: FlexReader, version: int) -> list[tuple[str, list[int]]] | None:
    def topic(r: FlexReader) -> tuple[str, list[int]]:
        name, parts = r.text(), r.int32s()
        r.tags()
        return name, parts

    topics = r.nullable_array(topic, 2)
    r.tags()
    return topics


def _partitions(r: FlexReader, topic: str) -> list[ReplicaLog]:
    """One topic's partitions of a DescribeLogDirs answer: the hot loop (a broker may hold 100,000 replicas), read
    with one struct unpack per partition; a partition carrying tagged fields is read field by field."""
    at = r.pos
    count = r.uvarint() - 1 if r.flexible else r.int32()
    if count <= 0:
        return []
    if count * _PARTITION.size > r.remaining():
        raise MalformedResponse(f"array at byte {at} claims {count} partitions in {r.remaining()} bytes")
    data, pos, end = r.data, r.pos, len(r.data)
    flexible = r.flexible
    out = []
    for _ in range(count):
        if pos + _PARTITION.size > end:
            raise MalformedResponse(f"response ends at byte {end}, inside a partition at byte {pos}")
        index, size, lag, future = _PARTITION.unpack_from(data, pos)
        pos += _PARTITION.size
        if flexible:
            if pos < end and data[pos] == 0:
                pos += 1
            else:
                r.pos = pos
                r.tags()
                pos = r.pos
        out.append(ReplicaLog(topic, index, size, lag, future))
    r.pos = pos
    return out


def decode_describe_log_dirs(r: FlexReader, version: int) -> LogDirsAnswer:
    throttle = r.int32()
    error = r.int16() if version >= 3 else 0

    def topic(r: FlexReader) -> list[ReplicaLog]:
        name = r.text()
        replicas = _partitions(r, name)
        r.tags()
        return replicas

    def result(r: FlexReader) -> LogDir:
        dir_error, path = r.int16(), r.text()
        replicas = [replica for topic_replicas in r.array(topic, 2) for replica in topic_replicas]
        total = r.int64() if version >= 4 else -1
        usable = r.int64() if version >= 4 else -1
        cordoned = r.boolean() if version >= 5 else False
        r.tags()
        return LogDir(dir_error, path, replicas, total, usable, cordoned)

    dirs = r.array(result, 4)
    r.tags()
    return LogDirsAnswer(error, dirs, throttle)


def encode_describe_log_dirs(version: int, answer: LogDirsAnswer) -> bytes:
    """An answer's body as a broker writes it (fields the version lacks are left out)."""
    w = _writer(API_DESCRIBE_LOG_DIRS, version).int32(answer.throttle_ms)
    if version >= 3:
        w.int16(answer.error)

    def result(w: FlexWriter, d: LogDir) -> None:
        w.int16(d.error).string(d.path)
        by_topic: dict[str, list[ReplicaLog]] = {}
        for replica in d.replicas:
            by_topic.setdefault(replica.topic, []).append(replica)
        w.array(by_topic.items(), lambda w, t: (
            w.string(t[0]),
            w.array(t[1], lambda w, p: w.int32(p.partition).int64(p.size).int64(p.offset_lag)
                    .boolean(p.is_future).tags()),
            w.tags()))
        if version >= 4:
            w.int64(d.total_bytes).int64(d.usable_bytes)
        if version >= 5:
            w.boolean(d.cordoned)
        w.tags()

    w.array(answer.log_dirs, result)
    return w.tags().bytes()


# -- DescribeCluster ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClusterBroker:
    node_id: int
    host: str
    port: int
    rack: str | None
    fenced: bool = False  # v2+, and only when asked for


@dataclass
class ClusterAnswer:
    error: int
    message: str | None
    cluster_id: str
    controller: int
    brokers: list[ClusterBroker]
    endpoint_type: int = 1  # 1: brokers, 2: controllers (v1+)
    authorized_operations: int = NO_OPERATIONS
    throttle_ms: int = 0


def encode_describe_cluster_request(version: int, authorized_operations: bool = False, endpoint_type: int = 1,
                                    include_fenced: bool = False) -> bytes:
    w = _writer(API_DESCRIBE_CLUSTER, version).boolean(authorized_operations)
    if version >= 1:
        w.int8(endpoint_type)
    if version >= 2:
        w.boolean(include_fenced)
    return w.tags().bytes()


def decode_describe_cluster_request(r: FlexReader, version: int) -> tuple[bool, int, bool]:
    operations = r.boolean()
    endpoint = r.int8() if version >= 1 else 1
    fenced = r.boolean() if version >= 2 else False
    r.tags()
    return operations, endpoint, fenced


def decode_describe_cluster(r: FlexReader, version: int) -> ClusterAnswer:
    throttle, error, message = r.int32(), r.int16(), r.string()
    endpoint = r.int8() if version >= 1 else 1
    cluster_id, controller = r.text(), r.int32()

    def broker(r: FlexReader) -> ClusterBroker:
        node, host, port, rack = r.int32(), r.text(), r.int32(), r.string()
        fenced = r.boolean() if version >= 2 else False
        r.tags()
        return ClusterBroker(node, host, port, rack, fenced)

    brokers = r.array(broker, 11)
    operations = r.int32()
    r.tags()
    return ClusterAnswer(error, message, cluster_id, controller, brokers, endpoint, operations, throttle)


def encode_describe_cluster(version: int, answer: ClusterAnswer) -> bytes:
    w = _writer(API_DESCRIBE_CLUSTER, version).int32(answer.throttle_ms).int16(answer.error).string(answer.message)
    if version >= 1:
        w.int8(answer.endpoint_type)
    w.string(answer.cluster_id).int32(answer.controller)

    def broker(w: FlexWriter, b: ClusterBroker) -> None:
        w.int32(b.node_id).string(b.host).int32(b.port).string(b.rack)
        if version >= 2:
            w.boolean(b.fenced)
        w.tags()

    w.array(answer.brokers, broker).int32(answer.authorized_operations)
    return w.tags().bytes()


# -- DescribeConfigs ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: int


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str | None
    read_only: bool
    is_default: bool  # v0 as sent; v1+: the source is DEFAULT_CONFIG
    source: int  # v1+ (-1 at v0)
    sensitive: bool
    synonyms: tuple[ConfigSynonym, ...] = ()
    config_type: int = 0  # v3+
    documentation: str | None = None  # v3+

    @property
    def source_name(self) -> str:
        if self.source < 0:
            return "DEFAULT_CONFIG" if self.is_default else "UNKNOWN"
        return CONFIG_SOURCES.get(self.source, f"source {self.source}")


@dataclass
class ConfigResource:
    error: int
    message: str | None
    resource_type: int
    name: str
    configs: list[ConfigEntry]


@dataclass(frozen=True)
class ConfigsWanted:
    resource_type: int  # TOPIC or BROKER
    name: str  # a topic's name or a broker's id as text
    keys: tuple[str, ...] | None = None  # None: every config


def encode_describe_configs_request(version: int, resources: Sequence[ConfigsWanted], synonyms: bool = False,
                                    documentation: bool = False) -> bytes:
    w = _writer(API_DESCRIBE_CONFIGS, version)
    w.array(resources, lambda w, c: (w.int8(c.resource_type), w.string(c.name),
                                     w.array(c.keys, FlexWriter.string), w.tags()))
    if version >= 1:
        w.boolean(synonyms)
    if version >= 3:
        w.boolean(documentation)
    return w.tags().bytes()


def decode_describe_configs_request(r: FlexReader, version: int) -> tuple[list[ConfigsWanted], bool, bool]:
    def resource(r: FlexReader) -> ConfigsWanted:
        kind, name = r.int8(), r.text()
        keys = r.nullable_array(FlexReader.text)
        r.tags()
        return ConfigsWanted(kind, name, None if keys is None else tuple(keys))

    resources = r.array(resource, 3)
    synonyms = r.boolean() if version >= 1 else False
    documentation = r.boolean() if version >= 3 else False
    r.tags()
    return resources, synonyms, documentation


def decode_describe_configs(r: FlexReader, version: int) -> list[ConfigResource]:
    r.int32()  # throttle

    def synonym(r: FlexReader) -> ConfigSynonym:
        name, value, source = r.text(), r.string(), r.int8()
        r.tags()
        return ConfigSynonym(name, value, source)

    def entry(r: FlexReader) -> ConfigEntry:
        name, value, read_only = r.text(), r.string(), r.boolean()
        is_default = r.boolean() if version == 0 else False
        source = r.int8() if version >= 1 else -1
        sensitive = r.boolean()
        synonyms = tuple(r.array(synonym, 4)) if version >= 1 else ()
        config_type = r.int8() if version >= 3 else 0
        documentation = r.string() if version >= 3 else None
        r.tags()
        return ConfigEntry(name, value, read_only, is_default if version == 0 else source == 5, source, sensitive,
                           synonyms, config_type, documentation)

    def resource(r: FlexReader) -> ConfigResource:
        error, message, kind, name = r.int16(), r.string(), r.int8(), r.text()
        configs = r.array(entry, 5)
        r.tags()
        return ConfigResource(error, message, kind, name, configs)

    resources = r.array(resource, 6)
    r.tags()
    return resources


def encode_describe_configs(version: int, resources: Sequence[ConfigResource], throttle_ms: int = 0) -> bytes:
    w = _writer(API_DESCRIBE_CONFIGS, version).int32(throttle_ms)

    def entry(w: FlexWriter, c: ConfigEntry) -> None:
        w.string(c.name).string(c.value).boolean(c.read_only)
        if version == 0:
            w.boolean(c.is_default)
        else:
            w.int8(c.source)
        w.boolean(c.sensitive)
        if version >= 1:
            w.array(c.synonyms, lambda w, s: w.string(s.name).string(s.value).int8(s.source).tags())
        if version >= 3:
            w.int8(c.config_type).string(c.documentation)
        w.tags()

    w.array(resources, lambda w, res: (w.int16(res.error), w.string(res.message), w.int8(res.resource_type),
                                       w.string(res.name), w.array(res.configs, entry), w.tags()))
    return w.tags().bytes()


# -- ListPartitionReassignments -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class OngoingReassignment:
    topic: str
    partition: int
    replicas: list[int]  # the target, then the replicas being removed
    adding: list[int]
    removing: list[int]


@dataclass
class ReassignmentsAnswer:
    error: int
    message: str | None
    reassignments: list[OngoingReassignment]
    throttle_ms: int = 0


def encode_list_partition_reassignments_request(version: int, topics: Sequence[tuple[str, Sequence[int]]] | None = None,
                                                timeout_ms: int = 60000) -> bytes:
    """``topics``: (topic, partitions) pairs to ask about, or None for every reassignment running."""
    w = _writer(API_LIST_PARTITION_REASSIGNMENTS, version).int32(timeout_ms)
    w.array(topics, lambda w, t: (w.string(t[0]), w.array(t[1], FlexWriter.int32), w.tags()))
    return w.tags().bytes()


def decode_list_partition_reassignments_request(r: FlexReader,
                                                version: int) -> tuple[list[tuple[str, list[int]]] | None, int]:
    timeout = r.int32()

    def topic(r: FlexReader) -> tuple[str, list[int]]:
        name, parts = r.text(), r.int32s()
        r.tags()
        return name, parts

    topics = r.nullable_array(topic, 2)
    r.tags()
    return topics, timeout


def decode_list_partition_reassignments(r: FlexReader, version: int) -> ReassignmentsAnswer:
    throttle, error, message = r.int32(), r.int16(), r.string()

    def topic(r: FlexReader) -> list[OngoingReassignment]:
        name = r.text()

        def partition(r: FlexReader) -> OngoingReassignment:
            index, replicas, adding, removing = r.int32(), r.int32s(), r.int32s(), r.int32s()
            r.tags()
            return OngoingReassignment(name, index, replicas, adding, removing)

        parts = r.array(partition, 8)
        r.tags()
        return parts

    found = [p for parts in r.array(topic, 3) for p in parts]
    r.tags()
    return ReassignmentsAnswer(error, message, found, throttle)


def encode_list_partition_reassignments(version: int, answer: ReassignmentsAnswer) -> bytes:
    w = _writer(API_LIST_PARTITION_REASSIGNMENTS, version).int32(answer.throttle_ms).int16(answer.error)
    w.string(answer.message)
    by_topic: dict[str, list[OngoingReassignment]] = {}
    for item in answer.reassignments:
        by_topic.setdefault(item.topic, []).append(item)
    w.array(by_topic.items(), lambda w, t: (
        w.string(t[0]),
        w.array(t[1], lambda w, p: (w.int32(p.partition), w.array(p.replicas, FlexWriter.int32),
                                    w.array(p.adding, FlexWriter.int32), w.array(p.removing, FlexWriter.int32),
                                    w.tags())),
        w.tags()))
    return w.tags().bytes()


DECODERS = {API_DESCRIBE_LOG_DIRS: decode_describe_log_dirs, API_DESCRIBE_CLUSTER: decode_describe_cluster,
            API_DESCRIBE_CONFIGS: decode_describe_configs,
            API_LIST_PARTITION_REASSIGNMENTS: decode_list_partition_reassignments}
REQUEST_DECODERS = {API_DESCRIBE_LOG_DIRS: decode_describe_log_dirs_request,
                    API_DESCRIBE_CLUSTER: decode_describe_cluster_request,
                    API_DESCRIBE_CONFIGS: decode_describe_configs_request,
                    API_LIST_PARTITION_REASSIGNMENTS: decode_list_partition_reassignments_request}
