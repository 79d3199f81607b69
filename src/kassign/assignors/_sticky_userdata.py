"""Byte formats the sticky assignors put in a member's subscription user data.

Both are Kafka's own, so a Python member and a Java member can read each other.
All integers are big-endian.

StickyAssignor (eager) user data, version 1::

    int32   number of topic entries
    repeated:
        int16   topic name length in bytes, then the name in UTF-8
        int32   number of partitions, then that many int32 partition numbers
    int32   generation the partitions were owned in

Version 0 is the same without the trailing generation. A reader tries version 1
first and falls back to version 0 when the generation is missing; bytes after the
last field are ignored (Kafka's schema reader never looks past what it needs).

CooperativeStickyAssignor user data is a single int32: the member's generation.

Decoding keeps each topic's partition numbers as one int32 array (a view of the
buffer, converted once) so that a million owned partitions cost one array per
topic entry, not a million objects.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from kassign.assignors.base import TopicPartition
from kassign.errors import KassignError

DEFAULT_GENERATION = -1

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


class UserDataError(KassignError):
    """Subscription user data that does not follow the sticky assignor's byte format."""


@dataclass
class OwnedChunks:
    """A member's previous assignment as decoded: (topic, int32 partition numbers) per topic entry."""

    chunks: list[tuple[str, np.ndarray]] = field(default_factory=list)
    generation: int | None = None

    def partitions(self) -> list[TopicPartition]:
        return [TopicPartition(topic, int(p)) for topic, parts in self.chunks for p in parts]

    def __len__(self) -> int:
        return sum(len(parts) for _, parts in self.chunks)


def encode_sticky_user_data(
    partitions: Iterable[tuple[str, int]], generation: int | None = DEFAULT_GENERATION, *, version: int = 1
) -> bytes:
    """Kafka StickyAssignor user data; ``version=0`` omits the generation (pre-KIP-341 members)."""
    if version not in (0, 1):
        raise KassignError(f"sticky user data version must be 0 or 1, got {version}")
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(int(partition))
    pieces = [_INT32.pack(len(by_topic))]
    for topic, numbers in by_topic.items():
        name = topic.encode("utf-8")
        if len(name) > 0x7FFF:
            raise KassignError(f"topic name of {len(name)} bytes does not fit Kafka's int16 string length")
        pieces.append(_INT16.pack(len(name)))
        pieces.append(name)
        pieces.append(_INT32.pack(len(numbers)))
        pieces.append(np.asarray(numbers, dtype=">i4").tobytes())
    if version == 1:
        pieces.append(_INT32.pack(DEFAULT_GENERATION if generation is None else generation))
    return b"".join(pieces)


def _need(data: bytes, pos: int, size: int, what: str) -> None:
    if pos + size > len(data):
        raise UserDataError(f"user data ends at byte {len(data)} while reading {what} at byte {pos}")


def _read_topic_entries(data: bytes) -> tuple[list[tuple[str, np.ndarray]], int]:
    _need(data, 0, 4, "the topic count")
    (count,) = _INT32.unpack_from(data, 0)
    if count < 0:
        raise UserDataError(f"negative topic count {count}")
    pos = 4
    chunks: list[tuple[str, np.ndarray]] = []
    for _ in range(count):
        _need(data, pos, 2, "a topic name length")
        (name_len,) = _INT16.unpack_from(data, pos)
        if name_len < 0:
            raise UserDataError(f"negative topic name length {name_len} at byte {pos}")
        pos += 2
        _need(data, pos, name_len, "a topic name")
        topic = data[pos : pos + name_len].decode("utf-8", errors="replace")
        pos += name_len
        _need(data, pos, 4, "a partition count")
        (num_parts,) = _INT32.unpack_from(data, pos)
        if num_parts < 0:
            raise UserDataError(f"negative partition count {num_parts} for topic {topic!r}")
        pos += 4
        _need(data, pos, 4 * num_parts, f"{num_parts} partition numbers")
        parts = np.frombuffer(data, dtype=">i4", count=num_parts, offset=pos).astype(np.int32)
        pos += 4 * num_parts
        chunks.append((topic, parts))
    return chunks, pos


def decode_sticky_user_data(data: bytes) -> OwnedChunks:
    """Read StickyAssignor user data (version 1, else version 0). Raises UserDataError when neither fits."""
    chunks, end = _read_topic_entries(bytes(data))
    if end + 4 <= len(data):
        (generation,) = _INT32.unpack_from(data, end)
        return OwnedChunks(chunks, generation)
    return OwnedChunks(chunks, None)  # version 0: no generation recorded


def encode_cooperative_user_data(generation: int) -> bytes:
    return _INT32.pack(generation)


def decode_cooperative_user_data(data: bytes) -> int:
    """The generation a CooperativeStickyAssignor member encoded. Raises UserDataError when too short."""
    if len(data) < 4:
        raise UserDataError(f"cooperative-sticky user data has {len(data)} bytes, needs 4 for the generation")
    return _INT32.unpack_from(data, 0)[0]
