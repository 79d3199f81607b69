"""Kafka record batches (message format v2) decoded into columns: offset, timestamp, key, size.

The rule, as Kafka's consumers apply it to the ``records`` of one partition in a Fetch answer:

- The answer is a run of batches; the last may be cut short by the fetch size and is left for
  the next fetch. The next fetch starts after the last whole batch (its base offset plus its
  last offset delta plus one), not after its last record: compaction may have emptied the end.
- A batch holds records at ``base offset + offset delta``. Records before the offset asked
  for (a batch starts earlier than the fetch) and at or after the range's end are not read.
- Control batches (transaction markers) are never records: they are counted as *control*.
- Under ``read_committed``, a transactional batch whose producer has an aborted transaction
  open at that point (the answer's aborted-transaction list, ordered by first offset) is
  skipped and its records counted as *aborted*, until that producer's ABORT marker.
- A record's timestamp is the batch's base timestamp plus its delta, or the batch's max
  timestamp when the topic stamps log-append time; its size is key bytes + value bytes + each
  header's name and value bytes (a null counts 0).

Worked example: a fetch from offset 5 to end 9 gets one batch, base offset 3, four records
with offset deltas 0, 1, 3, 4 (offsets 3, 4, 6, 7: offset 5 was compacted away), last offset
delta 4. Records 3 and 4 are before the range and not read; 6 and 7 are read; the next fetch
starts at 3 + 4 + 1 = 8.

Data layout: the answer's bytes are walked by numba kernels (``_index``, ``_headers``,
``_decode``) that write flat numpy columns and one buffer of key bytes; Python only
decompresses compressed batches (gzip, snappy in raw or xerial framing, lz4 frames, zstd)
into one side buffer the kernel reads from. Keys become an Arrow binary column over that
buffer without another copy. Message formats v0 and v1 (before Kafka 0.11) are decoded by
``kassign.kafka.legacy``; ``kassign.kafka.fetched`` chooses between the two.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numba
import numpy as np
import pyarrow as pa

_JIT = {"cache": True, "nogil": True}
BATCH_HEADER = 61  # bytes from a v2 batch's base offset to its first record
# Columns of the per-batch header table.
H_START, H_END, H_BASE, H_LAST_DELTA, H_ATTRS, H_BASE_TS, H_MAX_TS, H_PID, H_COUNT, H_MAGIC = range(10)
H_FIELDS = 10
COMPRESSION = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
# _decode's result codes
OK, CORRUPT = 0, 1


class CorruptBatch(Exception):
    """A batch that does not decode (the message says where); the reader reports it in one line."""


# -- kernels ------------------------------------------------------------------------------------------------------

@numba.njit(**_JIT)
def _int32(buf, pos):
    return np.int32((np.uint32(buf[pos]) << 24) | (np.uint32(buf[pos + 1]) << 16)
                    | (np.uint32(buf[pos + 2]) << 8) | np.uint32(buf[pos + 3]))


@numba.njit(**_JIT)
def _int16(buf, pos):
    return np.int16((np.uint16(buf[pos]) << 8) | np.uint16(buf[pos + 1]))


@numba.njit(**_JIT)
def _int64(buf, pos):
    value = np.uint64(0)
    for i in range(8):
        value = (value << np.uint64(8)) | np.uint64(buf[pos + i])
    return np.int64(value)


@numba.njit(**_JIT)
def _varint(buf, pos, end):
    """Zigzag varint (up to 64 bits) at ``pos``: (value, next position); next position -1 if cut short."""
    shift = 0
    raw = np.uint64(0)
    while pos < end and shift < 64:
        byte = np.uint64(buf[pos])
        pos += 1
        raw |= (byte & np.uint64(0x7F)) << np.uint64(shift)
        if byte < 0x80:
            return np.int64(raw >> np.uint64(1)) ^ -np.int64(raw & np.uint64(1)), pos
        shift += 7
    return np.int64(0), -1


@numba.njit(**_JIT)
def _index(buf, start, end):
    """(number of whole batches or legacy messages from ``start``, where the whole ones end)."""
    pos = start
    count = 0
    while pos + 12 <= end:
        size = _int32(buf, pos + 8)
        if size < 0 or pos + 12 + size > end:
            break
        pos += 12 + size
        count += 1
    return count, pos


@numba.njit(**_JIT)
def _headers(buf, start, count, out):
    """Each whole entry's header into ``out[i]`` (v2 batch fields; legacy entries only magic and extent)."""
    pos = start
    for i in range(count):
        size = _int32(buf, pos + 8)
        out[i, H_START] = pos
        out[i, H_END] = pos + 12 + size
        out[i, H_BASE] = _int64(buf, pos)
        magic = buf[pos + 16] if pos + 16 < pos + 12 + size else 255
        out[i, H_MAGIC] = magic
        if magic == 2 and size >= BATCH_HEADER - 12:
            out[i, H_ATTRS] = _int16(buf, pos + 21)
            out[i, H_LAST_DELTA] = _int32(buf, pos + 23)
            out[i, H_BASE_TS] = _int64(buf, pos + 27)
            out[i, H_MAX_TS] = _int64(buf, pos + 35)
            out[i, H_PID] = _int64(buf, pos + 43)
            out[i, H_COUNT] = _int32(buf, pos + 57)
        pos += 12 + size


@numba.njit(**_JIT)
def _find(values, used, wanted):
    for i in range(used):
        if values[i] == wanted:
            return i
    return -1


@numba.njit(**_JIT)
def _decode(buf, side, side_lo, side_hi, headers, lo, hi, read_committed, aborted_pid, aborted_first,
            offsets, timestamps, key_lengths, key_bytes, sizes, counts):
    """Decode every v2 batch of ``headers`` into the output columns.

    A compressed batch's records are read from ``side[side_lo[i]:side_hi[i]]`` (its
    decompressed bytes), the others' from ``buf`` (``side_lo`` is -1 there). ``counts`` gets: records written, key bytes written, control records and
    aborted records in ``[lo, hi)``, and on failure the failing batch's index (else -1).
    Returns OK or CORRUPT."""
    written = 0
    key_used = 0
    control = 0
    aborted = 0
    open_pids = np.empty(aborted_pid.shape[0] + 1, np.int64)
    open_count = 0
    next_aborted = 0
    counts[4] = -1
    for b in range(headers.shape[0]):
        base = headers[b, H_BASE]
        attrs = headers[b, H_ATTRS]
        record_count = headers[b, H_COUNT]
        last_offset = base + headers[b, H_LAST_DELTA]
        if side_lo[b] >= 0:
            data = side
            pos = side_lo[b]
            end = side_hi[b]
        else:
            data = buf
            pos = headers[b, H_START] + BATCH_HEADER
            end = headers[b, H_END]
        is_control = (attrs & 0x20) != 0
        transactional = (attrs & 0x10) != 0
        log_append = (attrs & 0x08) != 0
        pid = headers[b, H_PID]
        skip = False
        if read_committed:
            while next_aborted < aborted_first.shape[0] and aborted_first[next_aborted] <= last_offset:
                if _find(open_pids, open_count, aborted_pid[next_aborted]) < 0:
                    open_pids[open_count] = aborted_pid[next_aborted]
                    open_count += 1
                next_aborted += 1
            if transactional and not is_control and _find(open_pids, open_count, pid) >= 0:
                skip = True
        for _ in range(record_count):
            length, pos = _varint(data, pos, end)
            if pos < 0 or length < 0 or pos + length > end:
                counts[4] = b
                return CORRUPT
            record_end = pos + length
            pos += 1  # record attributes: unused
            ts_delta, pos = _varint(data, pos, record_end)
            if pos < 0:
                counts[4] = b
                return CORRUPT
            offset_delta, pos = _varint(data, pos, record_end)
            if pos < 0:
                counts[4] = b
                return CORRUPT
            key_length, pos = _varint(data, pos, record_end)
            if pos < 0 or pos + max(key_length, 0) > record_end:
                counts[4] = b
                return CORRUPT
            key_at = pos
            pos += max(key_length, 0)
            value_length, pos = _varint(data, pos, record_end)
            if pos < 0 or pos + max(value_length, 0) > record_end:
                counts[4] = b
                return CORRUPT
            pos += max(value_length, 0)
            offset = base + offset_delta
            in_range = lo <= offset < hi
            if is_control:
                if in_range:
                    control += 1
                # an ABORT marker (type 0 in the control key) closes that producer's aborted transaction
                if read_committed and transactional and key_length >= 4 and _int16(data, key_at + 2) == 0:
                    found = _find(open_pids, open_count, pid)
                    if found >= 0:
                        open_count -= 1
                        open_pids[found] = open_pids[open_count]
                pos = record_end
                continue
            if skip:
                if in_range:
                    aborted += 1
                pos = record_end
                continue
            header_count, pos = _varint(data, pos, record_end)
            if pos < 0 or header_count < 0:
                counts[4] = b
                return CORRUPT
            header_bytes = 0
            for _h in range(header_count):
                name_length, pos = _varint(data, pos, record_end)
                if pos < 0 or name_length < 0 or pos + name_length > record_end:
                    counts[4] = b
                    return CORRUPT
                pos += name_length
                header_value, pos = _varint(data, pos, record_end)
                if pos < 0 or pos + max(header_value, 0) > record_end:
                    counts[4] = b
                    return CORRUPT
                pos += max(header_value, 0)
                header_bytes += name_length + max(header_value, 0)
            if pos != record_end:
                counts[4] = b
                return CORRUPT
            if not in_range:
                continue
            if written >= offsets.shape[0]:
                counts[4] = b
                return CORRUPT
            offsets[written] = offset
            timestamps[written] = headers[b, H_MAX_TS] if log_append else headers[b, H_BASE_TS] + ts_delta
            key_lengths[written] = key_length
            for i in range(max(key_length, 0)):
                key_bytes[key_used + i] = data[key_at + i]
            key_used += max(key_length, 0)
            sizes[written] = max(key_length, 0) + max(value_length, 0) + header_bytes
            written += 1
        if pos != end and side_lo[b] >= 0:
            counts[4] = b
            return CORRUPT
    counts[0] = written
    counts[1] = key_used
    counts[2] = control
    counts[3] = aborted
    return OK


# -- decompression --------------------------------------------------------------------------------------------

_XERIAL = b"\x82SNAPPY\x00"


def _snappy(data: bytes) -> bytes:
    import cramjam

    if data[:8] != _XERIAL:  # librdkafka and others: one raw snappy block
        return bytes(cramjam.snappy.decompress_raw(data))
    # Java's xerial framing: 16-byte header, then blocks of [int32 length][raw snappy]
    out = []
    pos = 16
    while pos + 4 <= len(data):
        size = int.from_bytes(data[pos:pos + 4], "big")
        out.append(bytes(cramjam.snappy.decompress_raw(data[pos + 4:pos + 4 + size])))
        pos += 4 + size
    return b"".join(out)


def _inflate(codec: int, data: bytes) -> bytes:
    if codec == 1:
        return zlib.decompress(data, 47)  # gzip (or zlib) framing
    import cramjam

    if codec == 2:
        return _snappy(data)
    if codec == 3:
        return bytes(cramjam.lz4.decompress(data))
    if codec == 4:
        return bytes(cramjam.zstd.decompress(data))
    raise CorruptBatch(f"unknown compression codec {codec}")


def decompress(codec: int, data: bytes, what: str = "a batch") -> bytes:
    """Compressed record bytes, decompressed; anything that does not decompress is a :class:`CorruptBatch`
    naming ``what`` (each codec library raises its own kind of error)."""
    try:
        return _inflate(codec, data)
    except CorruptBatch:
        raise
    except Exception as err:
        raise CorruptBatch(f"{what} does not decompress ({COMPRESSION.get(codec, codec)}): {err}") from None


# -- Python side ------------------------------------------------------------------------------------------------

@dataclass
class Decoded:
    """One fetch answer's records in range, as columns, plus what it skipped and where to go next."""

    offsets: np.ndarray
    timestamps: np.ndarray
    keys: pa.Array  # binary, null for a null key
    sizes: np.ndarray
    control: int = 0
    aborted: int = 0
    next_offset: int | None = None  # None: no whole batch in the answer
    batches: int = 0
    codecs: set[str] = field(default_factory=set)

    def __len__(self) -> int:
        return len(self.offsets)


def empty(next_offset: int | None = None) -> Decoded:
    return Decoded(np.empty(0, np.int64), np.empty(0, np.int64), pa.array([], pa.binary()), np.empty(0, np.int64),
                   next_offset=next_offset)


def _key_array(lengths: np.ndarray, data: np.ndarray) -> pa.Array:
    """Binary Arrow array from per-record key lengths (-1: null) over one buffer of key bytes."""
    valid = lengths >= 0
    ends = np.cumsum(np.where(valid, lengths, 0), dtype=np.int64)
    if ends.size and ends[-1] >= 2**31:
        offsets = pa.py_buffer(np.concatenate([[0], ends]).astype(np.int64))
        kind = pa.large_binary()
    else:
        offsets = pa.py_buffer(np.concatenate([[0], ends]).astype(np.int32))
        kind = pa.binary()
    validity = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    array = pa.Array.from_buffers(kind, len(lengths), [validity, offsets, pa.py_buffer(data)],
                                  null_count=int((~valid).sum()))
    return array.cast(pa.binary()) if kind != pa.binary() else array


def decode_v2(buf: np.ndarray, headers: np.ndarray, lo: int, hi: int, read_committed: bool,
               aborted: list[tuple[int, int]], where: str) -> Decoded:
    count = len(headers)
    codecs_used: set[str] = set()
    side_parts: list[bytes] = []
    side_lo = np.full(count, -1, np.int64)
    side_hi = np.full(count, -1, np.int64)
    used = 0
    for b in np.flatnonzero(headers[:, H_ATTRS] & 0x07):
        codec = int(headers[b, H_ATTRS] & 0x07)
        raw = buf[headers[b, H_START] + BATCH_HEADER:headers[b, H_END]].tobytes()
        plain = decompress(codec, raw, f"batch at offset {headers[b, H_BASE]}{where}")
        codecs_used.add(COMPRESSION.get(codec, str(codec)))
        side_parts.append(plain)
        side_lo[b], side_hi[b] = used, used + len(plain)
        used += len(plain)
    side = np.frombuffer(b"".join(side_parts), np.uint8) if side_parts else np.empty(1, np.uint8)
    capacity = int((headers[:, H_END] - headers[:, H_START]).sum()) + used
    # a record takes at least 7 bytes: a corrupt count cannot make us allocate more than the bytes allow
    total = min(int(np.clip(headers[:, H_COUNT], 0, None).sum()), capacity // 7 + 1)
    offsets = np.empty(total, np.int64)
    timestamps = np.empty(total, np.int64)
    key_lengths = np.empty(total, np.int32)
    sizes = np.empty(total, np.int64)
    key_bytes = np.empty(max(capacity, 1), np.uint8)
    counts = np.zeros(5, np.int64)
    ordered = sorted(aborted, key=lambda a: a[1])
    pids = np.array([p for p, _ in ordered], np.int64)
    firsts = np.array([f for _, f in ordered], np.int64)
    status = _decode(buf, side, side_lo, side_hi, headers, lo, hi, read_committed, pids, firsts, offsets,
                     timestamps, key_lengths, key_bytes, sizes, counts)
    if status != OK:
        bad = int(counts[4])
        raise CorruptBatch(f"corrupt record batch at offset {headers[bad, H_BASE]}{where}")
    n, used_keys = int(counts[0]), int(counts[1])
    last = headers[-1]
    return Decoded(offsets[:n], timestamps[:n], _key_array(key_lengths[:n], key_bytes[:used_keys]), sizes[:n],
                   control=int(counts[2]), aborted=int(counts[3]),
                   next_offset=int(last[H_BASE] + last[H_LAST_DELTA] + 1), batches=count, codecs=codecs_used)


def concat(parts: list[Decoded]) -> Decoded:
    """Several decoded runs of one answer, in order."""
    if len(parts) == 1:
        return parts[0]
    keys = pa.concat_arrays([p.keys for p in parts]) if parts else pa.array([], pa.binary())
    return Decoded(np.concatenate([p.offsets for p in parts]), np.concatenate([p.timestamps for p in parts]), keys,
                   np.concatenate([p.sizes for p in parts]), control=sum(p.control for p in parts),
                   aborted=sum(p.aborted for p in parts),
                   next_offset=next((p.next_offset for p in reversed(parts) if p.next_offset is not None), None),
                   batches=sum(p.batches for p in parts), codecs=set().union(*(p.codecs for p in parts)))
