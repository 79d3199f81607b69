"""The consumer protocol's bytes: Subscription and Assignment, versions 0 to 3.

These are the opaque ``metadata`` a consumer puts in its JoinGroup request for
each strategy it lists, and the ``assignment`` the leader sends back through
SyncGroup. Layout (big-endian, no tagged fields: these messages are never
"flexible")::

    Subscription  = version:int16  topics:[string]  user_data:nullable bytes
                    owned_partitions:[topic:string partitions:[int32]]   (v1+)
                    generation_id:int32                                  (v2+)
                    rack_id:nullable string                              (v3+)
    Assignment    = version:int16  assigned_partitions:[topic:string partitions:[int32]]
                    user_data:nullable bytes                             (same for v0-v3)

``string`` is an int16 byte length then UTF-8; ``nullable string`` uses length -1
for null; ``[X]`` is an int32 count then the items; ``nullable bytes`` is an int32
length, -1 for null.

Choices Kafka makes that we repeat, so our bytes equal a Java client's:

- topics are written sorted; owned partitions sorted by topic then partition and
  grouped per topic; assigned partitions grouped per topic in order of first
  appearance, partitions in the order given;
- a reader meets a version newer than it knows by reading the newest layout it
  knows and ignoring what follows (fields are only ever appended);
- a missing generation reads as -1, an empty or missing rack as no rack.

Our ``Subscription``/``Assignment`` hold ``b""`` for "no user data": it is written
as null (length -1), which is what Kafka's built-in assignors send when they have
nothing to say; a null read back becomes ``b""``.

Data layout: partition lists are packed and unpacked as whole int32 arrays with
one ``struct`` call per topic, never one call per partition.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable, Sequence
from itertools import repeat

from kassign.groups.classic.subscription import Assignment, Subscription, TopicPartition
from kassign.core.errors import KassignError
from kassign.core.javastrings import java_string_key
from kassign.core.text import utf8_problem

LATEST_VERSION = 3
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_MAX_STRING_BYTES = 0x7FFF
# A TopicPartition from a (topic, partition) pair without NamedTuple's argument parsing: decoding is a hot path.
_new_topic_partition = functools.partial(tuple.__new__, TopicPartition)


class WireFormatError(KassignError):
    """Bytes that are not a valid consumer-protocol Subscription or Assignment."""


# ---------------------------------------------------------------- writing


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int16(self, value: int) -> None:
        self.parts.append(_INT16.pack(value))

    def int32(self, value: int) -> None:
        self.parts.append(_INT32.pack(value))

    def string(self, value: str | None, field: str) -> None:
        if value is None:
            self.int16(-1)
            return
        problem = utf8_problem(value, field)
        if problem:  # Java would write '?' for it, so two names could become one: refused instead
            raise WireFormatError(problem)
        data = value.encode("utf-8")
        if len(data) > _MAX_STRING_BYTES:
            raise WireFormatError(f"{field} {value[:40]!r}... is {len(data)} bytes of UTF-8; the protocol allows 32767")
        self.int16(len(data))
        self.parts.append(data)

    def nullable_bytes(self, value: bytes | None) -> None:
        if not value:
            self.int32(-1)
            return
        self.int32(len(value))
        self.parts.append(bytes(value))

    def int32_array(self, values: Sequence[int]) -> None:
        self.int32(len(values))
        self.parts.append(struct.pack(f">{len(values)}i", *values))

    def topic_partitions(self, grouped: Iterable[tuple[str, list[int]]], field: str) -> None:
        groups = list(grouped)
        self.int32(len(groups))
        for topic, partitions in groups:
            self.string(topic, f"{field} topic")
            self.int32_array(partitions)

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


def _check_version(version: int, what: str) -> int:
    if not isinstance(version, int) or not 0 <= version <= 0x7FFF:
        raise WireFormatError(f"{what} version must be 0..{LATEST_VERSION} (or higher, read as {LATEST_VERSION}), got {version!r}")
    return version


def _group_in_first_seen_order(partitions: Iterable[TopicPartition]) -> list[tuple[str, list[int]]]:
    groups: dict[str, list[int]] = {}
    for topic, partition in partitions:
        groups.setdefault(topic, []).append(partition)
    return list(groups.items())


def encode_subscription(subscription: Subscription, version: int = LATEST_VERSION) -> bytes:
    """The bytes a Java consumer would send for ``subscription`` at ``version``."""
    version = _check_version(version, "subscription")
    out = _Writer()
    out.int16(version)
    topics = sorted(subscription.topics, key=java_string_key)
    out.int32(len(topics))
    for topic in topics:
        out.string(topic, "subscribed topic")
    out.nullable_bytes(subscription.user_data)
    if version >= 1:
        # Sorted by topic (Java order) then partition: group first, so the Java key is computed per topic only.
        groups = _group_in_first_seen_order(subscription.owned_partitions)
        owned = sorted(((topic, sorted(parts)) for topic, parts in groups), key=lambda group: java_string_key(group[0]))
        out.topic_partitions(owned, "owned partition")
    if version >= 2:
        out.int32(subscription.generation)
    if version >= 3:
        out.string(subscription.rack, "rack id")
    return out.getvalue()


def encode_assignment(assignment: Assignment, version: int = LATEST_VERSION) -> bytes:
    """The bytes a Java leader would send for ``assignment`` at ``version``."""
    version = _check_version(version, "assignment")
    out = _Writer()
    out.int16(version)
    out.topic_partitions(_group_in_first_seen_order(assignment.partitions), "assigned partition")
    out.nullable_bytes(assignment.user_data)
    return out.getvalue()


# ---------------------------------------------------------------- reading


class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise WireFormatError(f"{what}: expected bytes, got {type(data).__name__}")
        self.data = bytes(data)
        self.pos = 0
        self.what = what

    def _take(self, size: int, field: str) -> int:
        start = self.pos
        if size > len(self.data) - start:
            raise WireFormatError(
                f"{self.what} is truncated: {field} needs {size} bytes at offset {start}, "
                f"only {len(self.data) - start} left"
            )
        self.pos += size
        return start

    def int16(self, field: str) -> int:
        return _INT16.unpack_from(self.data, self._take(2, field))[0]

    def int32(self, field: str) -> int:
        return _INT32.unpack_from(self.data, self._take(4, field))[0]

    def string(self, field: str, nullable: bool = False) -> str | None:
        length = self.int16(f"{field} length")
        if length < 0:
            if nullable and length == -1:
                return None
            raise WireFormatError(f"{self.what}: {field} has length {length} at offset {self.pos - 2}; it cannot be null")
        start = self._take(length, field)
        try:
            return self.data[start : start + length].decode("utf-8")
        except UnicodeDecodeError:
            raise WireFormatError(f"{self.what}: {field} at offset {start} is not valid UTF-8") from None

    def count(self, field: str) -> int:
        n = self.int32(f"{field} count")
        if n < 0:
            raise WireFormatError(f"{self.what}: {field} count is {n} at offset {self.pos - 4}; the array cannot be null")
        return n

    def nullable_bytes(self, field: str) -> bytes:
        length = self.int32(f"{field} length")
        if length == -1:
            return b""
        if length < 0:
            raise WireFormatError(f"{self.what}: {field} has length {length} at offset {self.pos - 4}")
        start = self._take(length, field)
        return self.data[start : start + length]

    def int32_array(self, field: str) -> tuple[int, ...]:
        n = self.count(field)
        start = self._take(4 * n, field)
        return struct.unpack_from(f">{n}i", self.data, start)

    def topic_partitions(self, field: str) -> list[TopicPartition]:
        result: list[TopicPartition] = []
        for _ in range(self.count(field)):
            topic = self.string(f"{field} topic")
            partitions = self.int32_array(f"{field} partitions of {topic!r}")
            result.extend(map(_new_topic_partition, zip(repeat(topic, len(partitions)), partitions)))
        return result

    def version(self) -> int:
        version = self.int16("version")
        if version < 0:
            raise WireFormatError(f"{self.what} has unsupported version {version}; versions start at 0")
        return min(version, LATEST_VERSION)


def read_version(data: bytes) -> int:
    """The version number at the head of a Subscription or Assignment, as written."""
    return _Reader(data, "consumer protocol header").int16("version")


def decode_subscription(data: bytes, group_instance_id: str | None = None) -> Subscription:
    """Read a Subscription; ``group_instance_id`` comes from the JoinGroup request, not these bytes."""
    reader = _Reader(data, "subscription")
    version = reader.version()
    topics = tuple(reader.string("subscribed topic") for _ in range(reader.count("topics")))
    user_data = reader.nullable_bytes("user data")
    owned: list[TopicPartition] = reader.topic_partitions("owned partitions") if version >= 1 else []
    generation = reader.int32("generation id") if version >= 2 else -1
    rack = reader.string("rack id", nullable=True) if version >= 3 else None
    return Subscription(
        topics=topics,  # type: ignore[arg-type]
        user_data=user_data,
        owned_partitions=tuple(owned),
        generation=generation,
        rack=rack or None,
        group_instance_id=group_instance_id,
    )


def decode_assignment(data: bytes) -> Assignment:
    reader = _Reader(data, "assignment")
    reader.version()
    partitions = reader.topic_partitions("assigned partitions")
    user_data = reader.nullable_bytes("user data")
    return Assignment(partitions=tuple(partitions), user_data=user_data)
