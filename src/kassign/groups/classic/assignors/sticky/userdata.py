"""Byte formats the sticky assignors put in a member's subscription user data.

Both are Kafka's own, so a Python member and a Java member can read each other.
All integers are big-endian.

StickyAssignor (eager) user data, version 1::

    int32   number of topic entries
    repeated:
        int16   topic name length in bytes, then the name in UTF-8
        int32   number of partitions, then that many int32 partition numbers
    int32   generation the partitions were owned in

A member writes its topics in the order Kafka's own StickyAssignor member does: it groups its owned
partitions by topic in a ``java.util.HashMap`` filled by ``computeIfAbsent``, so the topic entries follow
that map's iteration order (the topics put in the order first listed;
:func:`kassign.core.javaorder.compute_if_absent_order`), and each topic's partitions as listed. Kafka
before 3.7.1 keeps a member's owned partitions in the order it reads them here (KAFKA-16277 sorts them), so
the order is part of what a member says.

Version 0 is the same without the trailing generation. A reader tries version 1
first and falls back to version 0 when the generation is missing; bytes after the
last field are ignored (Kafka's schema reader never looks past what it needs).

CooperativeStickyAssignor user data is a single int32: the member's generation.

Decoding keeps each topic's partition numbers as one int32 array (a view of the
buffer, converted once) so that a million owned partitions cost one array per
topic entry, not a million objects.

**Batch decoding** (:func:`decode_many`). A leader of 2,000 members that each owned a partition of 500 topics reads a
million (topic, partitions) entries: one Python step per entry costs seconds.
Here a numba kernel walks all the byte strings twice (count, then fill), hashes
each topic name (64-bit FNV-1a), and a second kernel confirms, byte for byte,
that a hash match really is the same name. The result is, per member, the layout
index of each topic entry (-1 for a topic the cluster does not have), the entry
sizes, the flat partition numbers and the generation.

The byte format and its fallbacks (version 1, else version 0; trailing bytes
ignored) are those above; a blob that fails is re-read by the
single-blob decoder to report why. What members send is never an error here:
a blob that is not the format, and a member that sent none (None or empty),
come out ``BROKEN``, that is no previous assignment, as Kafka's
``StickyAssignor.memberData`` reads them. A wrong argument from the caller (not
a list of blobs, known topics that are not names) is a ``UserDataError``.

Hot path on integers and bytes only; names exist as Python strings only for the
few hundred topics of the layout.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kassign.groups.classic.assignors.base import TopicPartition
from kassign.core.errors import KassignError
from kassign.core.text import utf8_problem

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
    calls: list[str] = []  # the topic of every partition, as Kafka's grouping visits them
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(int(partition))
        calls.append(topic)
    pieces = [_INT32.pack(len(by_topic))]
    if len(by_topic) > 1:
        topics: Iterable[str] = _grouped_topic_order(list(by_topic), calls[-1] != list(by_topic)[-1]
                                                     or len(by_topic[list(by_topic)[-1]]) > 1)
    else:
        topics = by_topic
    for topic in topics:
        numbers = by_topic[topic]
        pieces.append(_topic_header(topic))
        # count then the numbers, one pack: a member of a big group holds one or two per topic
        pieces.append(struct.pack(f">{len(numbers) + 1}i", len(numbers), *numbers))
    if version == 1:
        pieces.append(_INT32.pack(DEFAULT_GENERATION if generation is None else generation))
    return b"".join(pieces)


def _grouped_topic_order(names: list[str], looked_up_after: bool) -> list[str]:
    """``names`` (distinct, in the order first listed) as Kafka's groupPartitionsByTopic map iterates them;
    ``looked_up_after``: a partition of a topic already grouped came after the last new topic (the map's
    computeIfAbsent may then grow it once more)."""
    from kassign.core.javaorder import (  # numba: only for members with two topics or more
        JavaOrderUndefined,
        compute_if_absent_order,
        hashmap_positions,
        java_string_hashes,
        java_string_key,
    )

    hashes = java_string_hashes(names)
    try:
        order = compute_if_absent_order(hashes, looked_up_after=looked_up_after).tolist()
    except JavaOrderUndefined:  # names of equal hash codes in a tree bin: Java orders them by compareTo
        order = hashmap_positions(hashes.tolist(), None, lambda i: java_string_key(names[i]), compute_if_absent=True,
                                  looked_up_after=looked_up_after)
    return [names[i] for i in order]


@functools.lru_cache(maxsize=1 << 16)
def _topic_header(topic: str) -> bytes:
    """A topic entry's int16 length and UTF-8 name (cached: every member names the same topics)."""
    problem = utf8_problem(topic, "topic name")
    if problem:  # Java's encoder would write '?' for it; no topic can have such a name
        raise KassignError(problem)
    name = topic.encode("utf-8")
    if len(name) > 0x7FFF:
        raise KassignError(f"topic name of {len(name)} bytes does not fit Kafka's int16 string length")
    return _INT16.pack(len(name)) + name


def encode_many(start: np.ndarray, code: np.ndarray, names: Sequence[str], partitions: np.ndarray,
                generations: Sequence[int], *, version: int = 1) -> list[bytes]:
    """:func:`encode_sticky_user_data` of many members at once, from integer columns: member ``m`` owned
    the pairs ``start[m] .. start[m+1]-1``, pair ``j`` of topic ``names[code[j]]`` and partition
    ``partitions[j]`` (as :class:`kassign.groups.scenario.Members` keeps them), in generation
    ``generations[m]``. The same bytes, member by member: topic entries in Java's ``HashMap`` order of the
    member's topics (put by ``computeIfAbsent`` in the order first listed), each topic's partitions as listed. A leader replaying two thousand members' histories of five hundred
    partitions each would otherwise pack a million numbers one topic entry at a time. Numbers must be
    Java ints (a scenario's are)."""
    if version not in (0, 1):
        raise KassignError(f"sticky user data version must be 0 or 1, got {version}")
    members = len(start) - 1
    if members <= 0:
        return []
    headers = [_topic_header(name) for name in names]
    header_start = np.zeros(len(headers) + 1, dtype=np.int64)
    np.cumsum([len(h) for h in headers], out=header_start[1:])
    header_bytes = np.frombuffer(b"".join(headers), dtype=np.uint8)
    start = np.asarray(start, dtype=np.int64)
    code = np.asarray(code, dtype=np.int64)
    generation = np.asarray(generations, dtype=np.int64)
    sizes_kernel, fill_kernel = _encoders()
    sizes = np.empty(members, dtype=np.int64)
    slot = np.full(max(len(headers), 1), -1, dtype=np.int64)  # scratch: a topic's entry in the member at hand
    sizes_kernel(start, code, np.diff(header_start), version, slot, sizes)
    offsets = np.zeros(members + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    buf = np.empty(int(offsets[-1]), dtype=np.uint8)
    scratch = np.empty((3, max(len(headers), 1)), dtype=np.int64)
    from kassign.core.javaorder import java_string_hashes

    hashes = java_string_hashes(list(names)).astype(np.int64) if len(names) else np.zeros(0, dtype=np.int64)
    unmodelled = np.zeros(members, dtype=np.bool_)
    last = np.empty((2, max(len(headers), 1)), dtype=np.int64)  # scratch: the previous member's topics, their order
    fill_kernel(start, code, np.asarray(partitions, dtype=np.int64), header_bytes, header_start, generation, version,
                offsets, buf, slot, scratch[0], scratch[1], scratch[2], hashes, unmodelled, last[0], last[1])
    data = buf.tobytes()
    cut = offsets.tolist()
    out = [data[a:b] for a, b in zip(cut[:-1], cut[1:])]
    for m in np.flatnonzero(unmodelled).tolist():  # a bucket that is a tree in Java: the one-member encoder
        pairs = [(names[code[j]], int(partitions[j])) for j in range(start[m], start[m + 1])]
        out[m] = encode_sticky_user_data(pairs, int(generation[m]), version=version)
    return out


def _encoded_sizes(start, code, header_length, version, slot, sizes):  # pragma: no cover - compiled by numba
    for m in range(len(start) - 1):
        total = 4 + (4 if version == 1 else 0)
        for j in range(start[m], start[m + 1]):
            c = code[j]
            if slot[c] < 0:
                slot[c] = 0
                total += header_length[c] + 4
            total += 4
        for j in range(start[m], start[m + 1]):
            slot[code[j]] = -1
        sizes[m] = total


def _write_i32(buf, pos, value):  # pragma: no cover - compiled by numba
    value &= 0xFFFFFFFF
    buf[pos] = (value >> 24) & 0xFF
    buf[pos + 1] = (value >> 16) & 0xFF
    buf[pos + 2] = (value >> 8) & 0xFF
    buf[pos + 3] = value & 0xFF


# compiled kernels of kassign.core.javaorder, bound by _encoders() before the fill kernel is compiled
hash_table_shape: Callable[..., tuple[int, bool]]
hash_table_order: Callable[..., np.ndarray]


def _encode_fill(start, code, partitions, header_bytes, header_start, generation, version, offsets, buf, slot,
                 entry_topic, entry_count, cursor, hashes, unmodelled, last_topics,
                 last_order):  # pragma: no cover - compiled by numba
    last_entries = -1  # the map order of the last member whose topics were ordered: members of a big group
    last_called_after = False  # mostly list the same topics alike, and reuse it
    last_tree = False
    for m in range(len(start) - 1):
        pos = offsets[m]
        entries = 0
        same = True  # so far the member lists the topics the last ordered one did, in its order
        for j in range(start[m], start[m + 1]):  # the member's topics in order of first listing, and their counts
            c = code[j]
            if slot[c] < 0:
                slot[c] = entries
                entry_topic[entries] = c
                entry_count[entries] = 0
                same = same and entries < last_entries and last_topics[entries] == c
                entries += 1
            entry_count[slot[c]] += 1
        _write_i32(buf, pos, entries)
        pos += 4
        if entries > 1:  # Java's HashMap order of the member's topics (computeIfAbsent, in the order first listed)
            last = start[m + 1] - 1  # a call after the last new topic went in: the last pair's topic came before
            called_after = entry_topic[entries - 1] != code[last] or entry_count[slot[code[last]]] > 1
            if not (same and entries == last_entries and called_after == last_called_after):
                entry_hashes = hashes[entry_topic[:entries]]
                capacity, last_tree = hash_table_shape(entry_hashes, 0, entries, 16, True, called_after)
                if last_tree:
                    last_order[:entries] = np.arange(entries)  # any order: the caller re-encodes the member
                else:
                    last_order[:entries] = hash_table_order(np.arange(entries), entry_hashes, 0, entries, capacity,
                                                            True)
                last_topics[:entries] = entry_topic[:entries]
                last_entries, last_called_after = entries, called_after
            unmodelled[m] = last_tree
        elif entries == 1:
            last_order[0] = 0
            last_entries = -1  # the next member orders its topics afresh
        for k in range(entries):
            e = last_order[k]
            c = entry_topic[e]
            for i in range(header_start[c], header_start[c + 1]):
                buf[pos] = header_bytes[i]
                pos += 1
            _write_i32(buf, pos, entry_count[e])
            pos += 4
            cursor[e] = pos
            pos += 4 * entry_count[e]
        for j in range(start[m], start[m + 1]):  # each partition into its topic's entry, as listed
            e = slot[code[j]]
            _write_i32(buf, cursor[e], partitions[j])
            cursor[e] += 4
        if version == 1:
            _write_i32(buf, pos, generation[m])
        for e in range(entries):
            slot[entry_topic[e]] = -1


@functools.cache
def _encoders() -> tuple[Callable[..., None], Callable[..., None]]:
    """Compiled on first use, as :func:`_kernels`."""
    import numba

    global _write_i32, hash_table_shape, hash_table_order  # the fill kernel calls them: compiled first
    from kassign.core.javaorder import hash_table_order, hash_table_shape

    jit = numba.njit(cache=True, nogil=True)
    _write_i32 = jit(_write_i32)
    return jit(_encoded_sizes), jit(_encode_fill)


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


def _as_bytes(data: object, what: str) -> bytes:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise UserDataError(f"{what} user data must be bytes, got {type(data).__name__}")


def decode_sticky_user_data(data: bytes) -> OwnedChunks:
    """Read StickyAssignor user data (version 1, else version 0). Raises UserDataError when neither fits."""
    data = _as_bytes(data, "sticky")
    chunks, end = _read_topic_entries(data)
    if end + 4 <= len(data):
        (generation,) = _INT32.unpack_from(data, end)
        return OwnedChunks(chunks, generation)
    return OwnedChunks(chunks, None)  # version 0: no generation recorded


def encode_cooperative_user_data(generation: int) -> bytes:
    return _INT32.pack(generation)


def decode_cooperative_user_data(data: bytes) -> int:
    """The generation a CooperativeStickyAssignor member encoded. Raises UserDataError when too short."""
    data = _as_bytes(data, "cooperative-sticky")
    if len(data) < 4:
        raise UserDataError(f"cooperative-sticky user data has {len(data)} bytes, needs 4 for the generation")
    return _INT32.unpack_from(data, 0)[0]


# --- every member's user data at once, into integer arrays ------------------------------------



OK_V1, OK_V0, BROKEN = 0, 1, 2
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3


def _read_i32(buf, pos):  # pragma: no cover - compiled by numba
    value = (np.int64(buf[pos]) << 24) | (np.int64(buf[pos + 1]) << 16) | (np.int64(buf[pos + 2]) << 8) | np.int64(buf[pos + 3])
    if value >= 2147483648:
        value -= 4294967296
    return value


def _scan(buf, starts, ends, n_entries, n_parts, status, generation):  # pragma: no cover - compiled by numba
    for b in range(len(starts)):
        pos, end = starts[b], ends[b]
        status[b] = BROKEN
        if end - pos < 4:
            continue
        count = _read_i32(buf, pos)
        pos += 4
        if count < 0:
            continue
        parts = 0
        ok = True
        for _ in range(count):
            if end - pos < 2:
                ok = False
                break
            name_len = (np.int64(buf[pos]) << 8) | np.int64(buf[pos + 1])
            pos += 2
            if name_len >= 32768 or end - pos < name_len + 4:
                ok = False
                break
            pos += name_len
            n = _read_i32(buf, pos)
            pos += 4
            if n < 0 or end - pos < 4 * n:
                ok = False
                break
            pos += 4 * n
            parts += n
        if not ok:
            continue
        n_entries[b] = count
        n_parts[b] = parts
        if end - pos >= 4:
            generation[b] = _read_i32(buf, pos)
            status[b] = OK_V1
        else:
            status[b] = OK_V0


def _fill(buf, starts, status, entry_offsets, part_offsets, name_start, name_len, name_hash, entry_size, partitions):  # pragma: no cover
    for b in range(len(starts)):
        if status[b] == BROKEN:
            continue
        pos = starts[b] + 4
        e = entry_offsets[b]
        p = part_offsets[b]
        for _ in range(entry_offsets[b + 1] - entry_offsets[b]):
            length = (np.int64(buf[pos]) << 8) | np.int64(buf[pos + 1])
            pos += 2
            h = np.uint64(_FNV_OFFSET)
            for i in range(length):
                h = (h ^ np.uint64(buf[pos + i])) * np.uint64(_FNV_PRIME)
            name_start[e] = pos
            name_len[e] = length
            name_hash[e] = h
            pos += length
            n = _read_i32(buf, pos)
            pos += 4
            entry_size[e] = n
            for i in range(n):
                partitions[p + i] = _read_i32(buf, pos + 4 * i)
            pos += 4 * n
            p += n
            e += 1


def _confirm(buf, name_start, name_len, candidate, known, known_offsets, out):  # pragma: no cover
    for e in range(len(candidate)):
        k = candidate[e]
        out[e] = -1
        if k < 0:
            continue
        start, stop = known_offsets[k], known_offsets[k + 1]
        if stop - start != name_len[e]:
            continue
        same = True
        for i in range(stop - start):
            if buf[name_start[e] + i] != known[start + i]:
                same = False
                break
        if same:
            out[e] = k


@functools.cache
def _kernels() -> tuple[Callable[..., None], Callable[..., None], Callable[..., None]]:
    """Compiled on first use so importing kassign does not pay for numba."""
    import numba

    global _read_i32  # the kernels call it, so it must be compiled before them
    jit = numba.njit(cache=True, nogil=True)
    _read_i32 = jit(_read_i32)
    return jit(_scan), jit(_fill), jit(_confirm)


def fnv1a64(data: bytes) -> int:
    h = _FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


@dataclass
class DecodedBatch:
    """Per member (by position): its slice of the flat entry and partition arrays."""

    status: np.ndarray  # OK_V1, OK_V0 or BROKEN per blob
    generation: np.ndarray  # int64 per blob (meaningful for OK_V1)
    entry_offsets: np.ndarray  # int64 [B+1]
    part_offsets: np.ndarray  # int64 [B+1]
    entry_topic: np.ndarray  # int64 per entry: index into the known topics, -1 unknown
    entry_size: np.ndarray  # int64 per entry
    partitions: np.ndarray  # int64, all partition numbers


def decode_many(blobs: Iterable[bytes | None], known_topics: Sequence[str]) -> DecodedBatch:
    """Decode StickyAssignor user data of many members; topic names become indexes into ``known_topics``.

    ``blobs``: each member's user data (bytes, bytearray or memoryview) in member order. What a member
    sent is never an error here, as in Kafka's ``StickyAssignor.memberData``: bytes that are not the
    format or not bytes at all, and None (a member that sent no user data) or empty bytes, give status
    ``BROKEN`` with no entries, that is no previous assignment (the caller logs the unreadable ones).
    What the caller passes is checked: ``blobs`` must be a sequence of them (one blob alone, a str or
    None is a :class:`UserDataError`), and ``known_topics`` a sequence of topic names.
    """
    blobs = _blob_list(blobs)
    known_topics = _topic_names(known_topics)
    scan, fill, confirm = _kernels()
    sizes = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=len(blobs))
    ends = np.cumsum(sizes)
    starts = ends - sizes
    buf = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    n_entries = np.zeros(len(blobs), dtype=np.int64)
    n_parts = np.zeros(len(blobs), dtype=np.int64)
    status = np.zeros(len(blobs), dtype=np.int8)
    generation = np.full(len(blobs), -1, dtype=np.int64)
    if len(buf):
        scan(buf, starts, ends, n_entries, n_parts, status, generation)
    else:
        status[:] = BROKEN
    entry_offsets = np.concatenate([[0], np.cumsum(n_entries)]).astype(np.int64)
    part_offsets = np.concatenate([[0], np.cumsum(n_parts)]).astype(np.int64)
    total_entries = int(entry_offsets[-1])
    name_start = np.zeros(total_entries, dtype=np.int64)
    name_len = np.zeros(total_entries, dtype=np.int64)
    name_hash = np.zeros(total_entries, dtype=np.uint64)
    entry_size = np.zeros(total_entries, dtype=np.int64)
    partitions = np.zeros(int(part_offsets[-1]), dtype=np.int64)
    if total_entries:
        fill(buf, starts, status, entry_offsets, part_offsets, name_start, name_len, name_hash, entry_size, partitions)
    entry_topic = _match_topics(buf, name_start, name_len, name_hash, known_topics, confirm)
    return DecodedBatch(status, generation, entry_offsets, part_offsets, entry_topic, entry_size, partitions)


def _blob_list(blobs: object) -> list[bytes]:
    """The caller's blobs as a list of bytes. None (no user data) reads as empty, and so does an entry that is
    not bytes at all: both decode as BROKEN, no previous assignment."""
    if isinstance(blobs, (str, bytes, bytearray, memoryview, set, frozenset)) or not isinstance(blobs, Iterable):
        raise UserDataError(f"decode_many takes a list of each member's user data (bytes or None per member), "
                            f"got {type(blobs).__name__}")
    result = []
    for blob in blobs:
        if blob is None:
            result.append(b"")
        elif isinstance(blob, bytes):
            result.append(blob)
        elif isinstance(blob, (bytearray, memoryview)):
            result.append(bytes(blob))
        else:  # not bytes at all: unreadable, like bytes that are not the format (the caller says why)
            result.append(b"")
    return result


def _topic_names(known_topics: object) -> list[str]:
    if isinstance(known_topics, (str, bytes)) or not isinstance(known_topics, Iterable):
        raise UserDataError(f"known_topics must be a list of topic names, got {type(known_topics).__name__}")
    names = list(known_topics)
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise UserDataError(f"known topic #{i} is {type(name).__name__}; known_topics must be a list of topic names")
        problem = utf8_problem(name, "topic name")
        if problem:
            raise UserDataError(problem)
    return names


def _match_topics(buf, name_start, name_len, name_hash, known_topics, confirm) -> np.ndarray:
    encoded = [t.encode("utf-8") for t in known_topics]
    out = np.full(len(name_hash), -1, dtype=np.int64)
    if not encoded or not len(name_hash):
        return out
    known_hash = np.array([fnv1a64(e) for e in encoded], dtype=np.uint64)
    order = np.argsort(known_hash, kind="stable")
    sorted_hash = known_hash[order]
    pos = np.minimum(np.searchsorted(sorted_hash, name_hash), len(sorted_hash) - 1)
    candidate = np.where(sorted_hash[pos] == name_hash, order[pos], -1).astype(np.int64)
    known = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    known_offsets = np.concatenate([[0], np.cumsum([len(e) for e in encoded])]).astype(np.int64)
    confirm(buf, name_start, name_len, candidate, known, known_offsets, out)
    return out
