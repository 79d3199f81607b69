"""Kafka's wire primitives for the request and response versions kassign speaks.

Every request kassign sends uses a *non-flexible* version (fixed-width integers, int16-length
strings, int32-count arrays; no tagged fields), which every broker since Kafka 0.11 answers
and Kafka 4 still accepts: Metadata v1-v8, ListOffsets v1-v5, Fetch v4-v10, FindCoordinator
v0-v2, OffsetFetch v1-v5, ApiVersions v0, SaslHandshake v1, SaslAuthenticate v0-v1.

Example: the request header (v1) for ApiVersions v0, correlation id 7, client id "kassign"::

    Writer().int16(18).int16(0).int32(7).string("kassign").bytes()
    # b'\\x00\\x12\\x00\\x00\\x00\\x00\\x00\\x07\\x00\\x07kassign'

A response is read with :class:`Reader`; a malformed one raises :class:`MalformedResponse`
(never an IndexError or struct.error), which the caller turns into a one-line message.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

_I8, _I16, _I32, _I64 = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


class MalformedResponse(Exception):
    """A response that does not parse as the version that was asked for."""


class Writer:
    """Builds a request body, field by field, in Kafka's big-endian encoding."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def int8(self, value: int) -> Writer:
        self._parts.append(_I8.pack(value))
        return self

    def int16(self, value: int) -> Writer:
        self._parts.append(_I16.pack(value))
        return self

    def int32(self, value: int) -> Writer:
        self._parts.append(_I32.pack(value))
        return self

    def int64(self, value: int) -> Writer:
        self._parts.append(_I64.pack(value))
        return self

    def boolean(self, value: bool) -> Writer:
        return self.int8(1 if value else 0)

    def string(self, value: str | None) -> Writer:
        """An int16-length UTF-8 string; None is written as length -1 (a nullable string)."""
        if value is None:
            return self.int16(-1)
        data = value.encode("utf-8")
        if len(data) > 0x7FFF:
            raise ValueError(f"string of {len(data)} bytes is too long for the Kafka protocol")
        self._parts.append(_I16.pack(len(data)) + data)
        return self

    def blob(self, value: bytes | None) -> Writer:
        """int32-length bytes; None as -1."""
        if value is None:
            return self.int32(-1)
        self._parts.append(_I32.pack(len(value)) + bytes(value))
        return self

    def array(self, items: Iterable[T] | None, write: Callable[[Writer, T], object]) -> Writer:
        """An int32-count array; None as -1 (a null array: "all topics" in Metadata)."""
        if items is None:
            return self.int32(-1)
        items = list(items)
        self.int32(len(items))
        for item in items:
            write(self, item)
        return self

    def bytes(self) -> bytes:
        return b"".join(self._parts)


class Reader:
    """Reads a response body from a buffer (no copy: strings and blobs are decoded or sliced)."""

    def __init__(self, data: bytes | bytearray | memoryview, pos: int = 0) -> None:
        self.data = memoryview(data)
        self.pos = pos

    def _take(self, size: int) -> memoryview:
        end = self.pos + size
        if size < 0 or end > len(self.data):
            raise MalformedResponse(f"response ends at byte {len(self.data)}, wanted {size} more from {self.pos}")
        view = self.data[self.pos:end]
        self.pos = end
        return view

    def int8(self) -> int:
        return _I8.unpack(self._take(1))[0]

    def int16(self) -> int:
        return _I16.unpack(self._take(2))[0]

    def int32(self) -> int:
        return _I32.unpack(self._take(4))[0]

    def int64(self) -> int:
        return _I64.unpack(self._take(8))[0]

    def boolean(self) -> bool:
        return self.int8() != 0

    def string(self) -> str | None:
        size = self.int16()
        if size < 0:
            return None
        try:
            return str(self._take(size), "utf-8")
        except UnicodeDecodeError as err:
            raise MalformedResponse(f"a string in the response is not UTF-8: {err}") from None

    def blob(self) -> memoryview | None:
        """int32-length bytes as a view into the response (None for length -1)."""
        size = self.int32()
        return None if size < 0 else self._take(size)

    def array(self, read: Callable[[Reader], T]) -> list[T]:
        count = self.int32()
        if count < 0:
            return []
        if count > len(self.data) - self.pos:  # each element takes at least one byte
            raise MalformedResponse(f"array of {count} elements in {len(self.data) - self.pos} bytes")
        return [read(self) for _ in range(count)]

    def remaining(self) -> int:
        return len(self.data) - self.pos
