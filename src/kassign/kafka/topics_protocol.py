"""Metadata and Fetch in every version up to Kafka 4.3's newest (Metadata v13, Fetch v18), as plain data.

kassign's reader (``kassign.kafka.protocol``) speaks the non-flexible versions every broker since
Kafka 0.11 answers; these codecs add the flexible ones (Metadata v9+, Fetch v12+), where topics
carry their ids and Fetch names a topic by id (v13+). They decode the answers of brokers and
clients that speak only the newest versions, and the captures of a Kafka 4.3.1 broker.

Example: ``decode_fetch(reader, 18)`` on a KafkaConsumer's Fetch answer gives
``FetchAnswer(error=0, session_id=..., topics=[FetchedTopic(name=None, topic_id="XkUf...",
partitions=[FetchedPartition(partition=0, high_watermark=5, ..., records=<the record batches>)])])``;
the batches decode with ``kassign.kafka.fetched.decode``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kassign.kafka.connection import API_FETCH, API_METADATA
from kassign.kafka.flexible import ZERO_UUID, FlexReader, FlexWriter, is_flexible

# -- Metadata -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetadataBroker:
    node_id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True)
class MetadataPartition:
    error: int
    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    offline: list[int]


@dataclass(frozen=True)
class MetadataTopic:
    error: int
    name: str | None  # v12+ may be null (a topic asked by id that is unknown)
    topic_id: str | None  # v10+
    internal: bool
    partitions: list[MetadataPartition]
    authorized_operations: int = -(1 << 31)


@dataclass(frozen=True)
class MetadataAnswer:
    brokers: list[MetadataBroker]
    cluster_id: str | None
    controller: int
    topics: list[MetadataTopic]
    error: int = 0  # v13+
    throttle_ms: int = 0


def encode_metadata(version: int, topics: Sequence[tuple[str | None, str | None]] | None,
                    allow_auto_topic_creation: bool = False, authorized_operations: bool = False) -> bytes:
    """``topics``: (topic id or None, name or None) pairs (ids from v10), or None for every topic."""
    w = FlexWriter(is_flexible(API_METADATA, version))

    def topic(w: FlexWriter, item: tuple[str | None, str | None]) -> None:
        if version >= 10:
            w.uuid(item[0] or ZERO_UUID)
        w.string(item[1]).tags()

    w.array(topics, topic)
    if version >= 4:
        w.boolean(allow_auto_topic_creation)
    if 8 <= version <= 10:
        w.boolean(authorized_operations)
    if version >= 8:
        w.boolean(authorized_operations)
    return w.tags().bytes()


def decode_metadata(r: FlexReader, version: int) -> MetadataAnswer:
    throttle = r.int32() if version >= 3 else 0

    def broker(r: FlexReader) -> MetadataBroker:
        node, host, port = r.int32(), r.text(), r.int32()
        rack = r.string() if version >= 1 else None
        r.tags()
        return MetadataBroker(node, host, port, rack)

    def partition(r: FlexReader) -> MetadataPartition:
        error, index, leader = r.int16(), r.int32(), r.int32()
        epoch = r.int32() if version >= 7 else -1
        replicas, isr = r.int32s(), r.int32s()
        offline = r.int32s() if version >= 5 else []
        r.tags()
        return MetadataPartition(error, index, leader, epoch, replicas, isr, offline)

    def topic(r: FlexReader) -> MetadataTopic:
        error = r.int16()
        name = r.string() if version >= 12 else r.text()
        topic_id = r.uuid() if version >= 10 else None
        internal = r.boolean() if version >= 1 else False
        partitions = r.array(partition, 12)
        operations = r.int32() if version >= 8 else -(1 << 31)
        r.tags()
        return MetadataTopic(error, name, topic_id, internal, partitions, operations)

    brokers = r.array(broker, 10)
    cluster_id = r.string() if version >= 2 else None
    controller = r.int32() if version >= 1 else -1
    topics = r.array(topic, 4)
    if 8 <= version <= 10:
        r.int32()  # cluster authorized operations
    error = r.int16() if version >= 13 else 0
    r.tags()
    return MetadataAnswer(brokers, cluster_id, controller, topics, error, throttle)


# -- Fetch --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FetchWanted:
    """One partition of a Fetch request (fields of the versions that carry them)."""

    partition: int
    offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1  # v9+
    last_fetched_epoch: int = -1  # v12+
    log_start_offset: int = -1  # v5+


@dataclass(frozen=True)
class FetchRequest:
    """A consumer's Fetch: ``topics`` are (name, or topic id from v13, partitions)."""

    topics: Sequence[tuple[str, Sequence[FetchWanted]]]
    max_wait_ms: int = 500
    min_bytes: int = 1
    max_bytes: int = 0x7FFFFFFF
    isolation: int = 0
    session_id: int = 0
    session_epoch: int = -1
    forgotten: Sequence[tuple[str, Sequence[int]]] = ()
    rack: str = ""


def encode_fetch(version: int, request: FetchRequest) -> bytes:
    w = FlexWriter(is_flexible(API_FETCH, version))
    if version <= 14:
        w.int32(-1)  # replica id: a consumer (v15+ moved it to a tagged field a consumer leaves out)
    w.int32(request.max_wait_ms).int32(request.min_bytes)
    if version >= 3:
        w.int32(request.max_bytes)
    if version >= 4:
        w.int8(request.isolation)
    if version >= 7:
        w.int32(request.session_id).int32(request.session_epoch)

    def partition(w: FlexWriter, p: FetchWanted) -> None:
        w.int32(p.partition)
        if version >= 9:
            w.int32(p.current_leader_epoch)
        w.int64(p.offset)
        if version >= 12:
            w.int32(p.last_fetched_epoch)
        if version >= 5:
            w.int64(p.log_start_offset)
        w.int32(p.partition_max_bytes).tags()

    def name_or_id(w: FlexWriter, topic: str) -> None:
        (w.uuid if version >= 13 else w.string)(topic)

    w.array(request.topics, lambda w, t: (name_or_id(w, t[0]), w.array(t[1], partition), w.tags()))
    if version >= 7:
        w.array(request.forgotten, lambda w, t: (name_or_id(w, t[0]), w.array(t[1], FlexWriter.int32), w.tags()))
    if version >= 11:
        w.string(request.rack)
    return w.tags().bytes()


@dataclass(frozen=True)
class FetchedPartition:
    partition: int
    error: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    aborted: list[tuple[int, int]] | None  # (producer id, first offset)
    preferred_read_replica: int
    records: bytes | None
    current_leader: tuple[int, int] | None = None  # v12+ tagged: (leader id, leader epoch)
    diverging_epoch: tuple[int, int] | None = None  # v12+ tagged: (epoch, end offset)


@dataclass(frozen=True)
class FetchedTopic:
    name: str | None  # up to v12
    topic_id: str | None  # v13+
    partitions: list[FetchedPartition]


@dataclass(frozen=True)
class FetchAnswer:
    error: int
    session_id: int
    topics: list[FetchedTopic]
    throttle_ms: int = 0
    node_endpoints: list[MetadataBroker] = field(default_factory=list)  # v16+ tagged: new leaders' addresses


def _epoch_end(r: FlexReader) -> tuple[int, int]:
    epoch, end = r.int32(), r.int64()
    r.tags()
    return epoch, end


def _leader(r: FlexReader) -> tuple[int, int]:
    leader, epoch = r.int32(), r.int32()
    r.tags()
    return leader, epoch


def _snapshot(r: FlexReader) -> tuple[int, int]:
    end, epoch = r.int64(), r.int32()
    r.tags()
    return end, epoch


def _node(r: FlexReader) -> MetadataBroker:
    node, host, port, rack = r.int32(), r.text(), r.int32(), r.string()
    r.tags()
    return MetadataBroker(node, host, port, rack)


def decode_fetch(r: FlexReader, version: int) -> FetchAnswer:
    throttle = r.int32() if version >= 1 else 0
    error, session = (r.int16(), r.int32()) if version >= 7 else (0, 0)

    def aborted(r: FlexReader) -> tuple[int, int]:
        pid, first = r.int64(), r.int64()
        r.tags()
        return pid, first

    def partition(r: FlexReader) -> FetchedPartition:
        index, error, high = r.int32(), r.int16(), r.int64()
        stable = r.int64() if version >= 4 else -1
        start = r.int64() if version >= 5 else -1
        txns = r.nullable_array(aborted, 16) if version >= 4 else None
        replica = r.int32() if version >= 11 else -1
        records = r.blob()
        tags = r.tags({0: _epoch_end, 1: _leader, 2: _snapshot})
        return FetchedPartition(index, error, high, stable, start, txns, replica,
                                None if records is None else bytes(records), tags.get(1), tags.get(0))

    def topic(r: FlexReader) -> FetchedTopic:
        name, topic_id = (None, r.uuid()) if version >= 13 else (r.text(), None)
        partitions = r.array(partition, 30)
        r.tags()
        return FetchedTopic(name, topic_id, partitions)

    topics = r.array(topic, 2)
    tags = r.tags({0: lambda t: t.array(_node, 11)})
    return FetchAnswer(error, session, topics, throttle, tags.get(0, []))
