"""Message formats v0 and v1 (Kafka before 0.11), for old segments still on a broker's disk.

The rule: a message is ``offset, size, crc, magic, attributes, [timestamp (v1)], key, value``
(int32-length key and value, -1 for null). A compressed message (attributes' low three bits)
is a wrapper whose value is a compressed run of inner messages; the wrapper's offset is the
last inner message's absolute offset. Inner offsets are absolute in v0 and relative (0, 1, ...)
in v1, where ``absolute = wrapper offset - last relative offset + relative offset``. A v1
wrapper stamped with log-append time (attribute bit 3) gives every inner message its
timestamp; v0 has no timestamps (null). No headers, no transactions, no control records.

Example: a v1 gzip wrapper at offset 12 holding inner messages at relative offsets 0, 1, 2
gives records at offsets 10, 11 and 12.

Rare, so plain Python; a fetch answer that mixes v2 batches with older messages (a topic whose
format was upgraded) is decoded run by run, each run by the decoder of its format.
"""

from __future__ import annotations

import struct

import numpy as np

from kassign.kafka import records as R

_HEAD = struct.Struct(">qi")
_V0 = struct.Struct(">iBB")  # crc, magic, attributes
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


def _messages(data: bytes, where: str) -> list[tuple[int, int, int, int, bytes | None, bytes | None]]:
    """(offset, magic, attributes, timestamp, key, value) of each whole message in ``data``."""
    out = []
    pos = 0
    try:
        while pos + 12 <= len(data):
            offset, size = _HEAD.unpack_from(data, pos)
            end = pos + 12 + size
            if size < 0 or end > len(data):
                break
            _, magic, attributes = _V0.unpack_from(data, pos + 12)
            at = pos + 18
            timestamp = -1
            if magic == 1:
                timestamp = _I64.unpack_from(data, at)[0]
                at += 8
            fields: list[bytes | None] = []
            for _ in range(2):
                length = _I32.unpack_from(data, at)[0]
                at += 4
                if length < 0:
                    fields.append(None)
                    continue
                if at + length > end:
                    raise R.CorruptBatch(f"corrupt message at offset {offset}{where}")
                fields.append(bytes(data[at:at + length]))
                at += length
            out.append((offset, magic, attributes, timestamp, fields[0], fields[1]))
            pos = end
    except struct.error:
        raise R.CorruptBatch(f"corrupt message set{where}") from None
    return out


def _flatten(data: bytes, where: str) -> list[tuple[int, int, bytes | None, int]]:
    """(offset, timestamp, key, size) of every record, wrappers opened."""
    result = []
    for offset, magic, attributes, timestamp, key, value in _messages(data, where):
        codec = attributes & 0x07
        if codec == 0:
            result.append((offset, timestamp, key, len(key or b"") + len(value or b"")))
            continue
        inner = _messages(R.decompress(codec, value or b"", f"message at offset {offset}{where}"), where)
        if not inner:
            continue
        last_relative = inner[-1][0]
        for inner_offset, _, _, inner_ts, inner_key, inner_value in inner:
            absolute = offset - last_relative + inner_offset if magic == 1 else inner_offset
            stamp = timestamp if magic == 1 and attributes & 0x08 else inner_ts
            result.append((absolute, stamp, inner_key, len(inner_key or b"") + len(inner_value or b"")))
    return result


def decode_legacy(buf: np.ndarray, start: int, end: int, lo: int, hi: int, where: str) -> R.Decoded:
    rows = [r for r in _flatten(buf[start:end].tobytes(), where) if lo <= r[0] < hi]
    last_offset = _HEAD.unpack_from(buf[start:end].tobytes(), _last_entry(buf, start, end))[0]
    lengths = np.array([-1 if r[2] is None else len(r[2]) for r in rows], np.int32)
    keys = np.frombuffer(b"".join(r[2] or b"" for r in rows), np.uint8)
    return R.Decoded(np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64),
                     R._key_array(lengths, keys), np.array([r[3] for r in rows], np.int64),
                     next_offset=last_offset + 1, codecs=set())


def _last_entry(buf: np.ndarray, start: int, end: int) -> int:
    pos, last = start, start
    while pos + 12 <= end:
        last = pos
        pos += 12 + int(R._int32(buf, pos + 8))
    return last - start


def decode_mixed(buf: np.ndarray, headers: np.ndarray, lo: int, hi: int, read_committed: bool,
                 aborted: list[tuple[int, int]], where: str) -> R.Decoded:
    """A fetch answer holding legacy messages, alone or beside v2 batches: decoded run by run."""
    parts: list[R.Decoded] = []
    magic2 = headers[:, R.H_MAGIC] == 2
    run_starts = np.flatnonzero(np.r_[True, magic2[1:] != magic2[:-1]])
    for i, first in enumerate(run_starts):
        last = run_starts[i + 1] if i + 1 < len(run_starts) else len(headers)
        run = headers[first:last]
        if magic2[first]:
            parts.append(R.decode_v2(buf, run, lo, hi, read_committed, aborted, where))
        elif (run[:, R.H_MAGIC] > 2).any():
            raise R.CorruptBatch(f"record batch with unknown magic {int(run[:, R.H_MAGIC].max())}{where}")
        else:
            parts.append(decode_legacy(buf, int(run[0, R.H_START]), int(run[-1, R.H_END]), lo, hi, where))
    return R.concat(parts)
