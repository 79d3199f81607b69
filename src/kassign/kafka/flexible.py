"""Kafka's *flexible* message versions (KIP-482): compact types, tagged fields, headers v2/v1.

Newer APIs exist only in flexible versions (every group-describing API of Kafka 4), and older
ones became flexible at some version (``FLEXIBLE_FROM``). A flexible version changes the
encoding of the same fields, not their meaning:

- an *unsigned varint* is 7 bits a byte, least significant group first, the top bit saying
  "more follows" (at most 5 bytes for a 32-bit value);
- a compact string or compact bytes is ``uvarint(length + 1)`` then the bytes; 0 means null;
- a compact array is ``uvarint(count + 1)`` then the elements; 0 means null;
- every struct (the body, each array element, each nested struct) ends with a *tagged-field
  section*: ``uvarint(count)``, then per field ``uvarint(tag) uvarint(size)`` and ``size`` bytes.
  Tags a reader does not know are skipped by their size, which is how fields are added without
  a new version;
- the request header (v2) ends with a tagged-field section after the client id (which stays an
  int16-length string), and the response header (v1) has one after the correlation id, except
  ApiVersions, whose response header is always v0 so that a client can read a broker's refusal
  of a version it does not speak.

Example: the compact string "abc" is ``04 61 62 63``; a struct with no tagged fields ends in
``00``; the request header of ListGroups v5, correlation id 5, client "c" is
``00 10 00 05 00 00 00 05 00 01 63 00``.

:class:`FlexReader` and :class:`FlexWriter` read and write one message of one version: the same
calls (``string``, ``array``, ``tags``...) follow the version's encoding, so a codec is written
once for all versions of an API. Lengths and counts are checked against the bytes left before
anything is allocated: a malformed answer raises :class:`~kassign.kafka.wire.MalformedResponse`,
never allocates what it claims.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from kassign.kafka.wire import MalformedResponse, Reader, Writer

T = TypeVar("T")

# API key -> the first flexible version (APIs kassign speaks; every version of the newer ones is flexible).
FLEXIBLE_FROM = {
    1: 12,   # Fetch
    2: 6,    # ListOffsets
    3: 9,    # Metadata
    9: 6,    # OffsetFetch
    10: 3,   # FindCoordinator
    15: 5,   # DescribeGroups
    16: 3,   # ListGroups
    17: 1 << 15,  # SaslHandshake: never
    18: 3,   # ApiVersions
    32: 4,   # DescribeConfigs
    35: 2,   # DescribeLogDirs
    36: 2,   # SaslAuthenticate
    43: 2,   # ElectLeaders
    44: 1,   # IncrementalAlterConfigs
    45: 0,   # AlterPartitionReassignments
    46: 0,   # ListPartitionReassignments
    60: 0,   # DescribeCluster
    69: 0,   # ConsumerGroupDescribe
    77: 0,   # ShareGroupDescribe
    89: 0,   # StreamsGroupDescribe
    90: 0,   # DescribeShareGroupOffsets
}
API_VERSIONS_KEY = 18
MAX_STRING = 0x7FFF  # Kafka refuses longer strings (their classic form has an int16 length)
_U16 = struct.Struct(">H")
_F64 = struct.Struct(">d")


def is_flexible(api_key: int, version: int) -> bool:
    return version >= FLEXIBLE_FROM.get(api_key, 1 << 15)


def uuid_text(raw: bytes) -> str:
    """16 bytes as Kafka prints a Uuid: URL-safe base64 without padding (22 characters)."""
    return base64.urlsafe_b64encode(bytes(raw)).decode("ascii").rstrip("=")


def uuid_bytes(text: str) -> bytes:
    """The inverse of :func:`uuid_text`."""
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except (ValueError, TypeError):
        raw = b""
    if len(raw) != 16 or len(text) != 22:
        raise ValueError(f"{text!r} is not a Kafka Uuid (22 characters of URL-safe base64)")
    return raw


ZERO_UUID = uuid_text(bytes(16))


# -- reading ----------------------------------------------------------------------------------------------------

class FlexReader(Reader):
    """Reads one message of one version: compact types and tagged fields where ``flexible``."""

    def __init__(self, data: bytes | bytearray | memoryview, flexible: bool = True, pos: int = 0) -> None:
        super().__init__(data, pos)
        self.flexible = flexible

    def uvarint(self) -> int:
        """An unsigned varint of at most 5 bytes (a 32-bit value), as Kafka reads one."""
        value = shift = 0
        for _ in range(5):
            byte = self._take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                if value >= 1 << 32:
                    raise MalformedResponse(f"varint at byte {self.pos - 5} is over 32 bits")
                return value
            shift += 7
        raise MalformedResponse(f"varint ending at byte {self.pos} is longer than 5 bytes")

    def varint(self) -> int:
        """A zig-zag signed varint (32 bits)."""
        raw = self.uvarint()
        return (raw >> 1) ^ -(raw & 1)

    def uint16(self) -> int:
        return _U16.unpack(self._take(2))[0]

    def float64(self) -> float:
        return _F64.unpack(self._take(8))[0]

    def uuid(self) -> str:
        return uuid_text(self._take(16))

    def _length(self) -> int:
        """A string's or bytes' length (-1: null) in this version's encoding."""
        return self.uvarint() - 1 if self.flexible else self.int16()

    def string(self) -> str | None:
        size = self.uvarint() - 1 if self.flexible else self.int16()
        if size < 0:
            return None
        if size > MAX_STRING:
            raise MalformedResponse(f"a string of {size} bytes at byte {self.pos} (Kafka's limit is {MAX_STRING})")
        try:
            return str(self._take(size), "utf-8")
        except UnicodeDecodeError as err:
            raise MalformedResponse(f"a string in the response is not UTF-8: {err}") from None

    def text(self) -> str:
        """A string that may not be null."""
        at = self.pos
        value = self.string()
        if value is None:
            raise MalformedResponse(f"a non-nullable string at byte {at} is null")
        return value

    def blob(self) -> memoryview | None:
        size = self.uvarint() - 1 if self.flexible else self.int32()
        return None if size < 0 else self._take(size)

    def nullable_array(self, read: Callable[[FlexReader], T], least: int = 1) -> list[T] | None:
        """An array (None for a null one); ``least``: the fewest bytes an element takes, so that a count
        the remaining bytes cannot hold is refused before anything is built."""
        at = self.pos
        count = self.uvarint() - 1 if self.flexible else self.int32()
        if count < 0:
            return None
        if count * least > self.remaining():
            raise MalformedResponse(f"array at byte {at} claims {count} elements in {self.remaining()} bytes")
        return [read(self) for _ in range(count)]

    def array(self, read: Callable[[FlexReader], T], least: int = 1) -> list[T]:  # type: ignore[override]
        """An array; a null one reads as empty."""
        return self.nullable_array(read, least) or []

    def int32s(self) -> list[int]:
        at = self.pos
        count = self.uvarint() - 1 if self.flexible else self.int32()
        if count <= 0:
            return []
        if count * 4 > self.remaining():
            raise MalformedResponse(f"array at byte {at} claims {count} int32s in {self.remaining()} bytes")
        return list(struct.unpack(f">{count}i", self._take(4 * count)))

    def strings(self) -> list[str]:
        return self.array(FlexReader.text)

    def tags(self, known: Mapping[int, Callable[[FlexReader], Any]] | None = None) -> dict[int, Any]:
        """A struct's tagged-field section (nothing where not flexible): ``{tag: value}`` for the ``known``
        tags (each read from exactly its bytes), unknown tags skipped by their size as Kafka skips them."""
        if not self.flexible:
            return {}
        found: dict[int, Any] = {}
        count = self.uvarint()
        if count > self.remaining():
            raise MalformedResponse(f"{count} tagged fields in {self.remaining()} bytes")
        for _ in range(count):
            tag, size = self.uvarint(), self.uvarint()
            raw = self._take(size)
            read = (known or {}).get(tag)
            if read is None:
                continue
            sub = FlexReader(raw, True)
            found[tag] = read(sub)
            if sub.remaining():
                raise MalformedResponse(f"tagged field {tag} has {sub.remaining()} bytes left over")
        return found

    def struct(self, read: Callable[[FlexReader], T]) -> T:
        """A nested struct: its fields, then its tagged fields (which are skipped)."""
        value = read(self)
        self.tags()
        return value

    def nullable_struct(self, read: Callable[[FlexReader], T]) -> T | None:
        """A nullable nested struct: an int8 marker (-1 for null) before it."""
        return None if self.int8() < 0 else self.struct(read)

    def end(self) -> None:
        """The message must end here: left-over bytes mean it was not the version it claims."""
        if self.remaining():
            raise MalformedResponse(f"{self.remaining()} bytes left over after byte {self.pos}")


# -- writing ----------------------------------------------------------------------------------------------------

def uvarint_bytes(value: int) -> bytes:
    if not 0 <= value < 1 << 32:
        raise ValueError(f"{value} does not fit an unsigned 32-bit varint")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class FlexWriter(Writer):
    """Writes one message of one version: compact types and tagged fields where ``flexible``."""

    def __init__(self, flexible: bool = True) -> None:
        super().__init__()
        self.flexible = flexible

    def uvarint(self, value: int) -> FlexWriter:
        self._parts.append(uvarint_bytes(value))
        return self

    def varint(self, value: int) -> FlexWriter:
        if not -(1 << 31) <= value < 1 << 31:
            raise ValueError(f"{value} does not fit a signed 32-bit varint")
        return self.uvarint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)

    def uint16(self, value: int) -> FlexWriter:
        self._parts.append(_U16.pack(value))
        return self

    def uuid(self, value: str) -> FlexWriter:
        self._parts.append(uuid_bytes(value))
        return self

    def string(self, value: str | None) -> FlexWriter:
        if not self.flexible:
            super().string(value)
            return self
        if value is None:
            return self.uvarint(0)
        data = value.encode("utf-8")
        if len(data) > MAX_STRING:
            raise ValueError(f"string of {len(data)} bytes is too long for the Kafka protocol")
        self._parts.append(uvarint_bytes(len(data) + 1) + data)
        return self

    def blob(self, value: bytes | None) -> FlexWriter:
        if not self.flexible:
            super().blob(value)
            return self
        if value is None:
            return self.uvarint(0)
        self._parts.append(uvarint_bytes(len(value) + 1) + bytes(value))
        return self

    def array(self, items: Iterable[T] | None,  # type: ignore[override]
              write: Callable[[FlexWriter, T], object]) -> FlexWriter:
        if not self.flexible:
            super().array(items, write)  # type: ignore[arg-type]
            return self
        if items is None:
            return self.uvarint(0)
        items = list(items)
        self.uvarint(len(items) + 1)
        for item in items:
            write(self, item)
        return self

    def tags(self, fields: Mapping[int, bytes] | None = None) -> FlexWriter:
        """A tagged-field section (nothing where not flexible): ``{tag: encoded value}``, written in tag order."""
        if not self.flexible:
            return self
        fields = fields or {}
        self.uvarint(len(fields))
        for tag in sorted(fields):
            self.uvarint(tag).uvarint(len(fields[tag]))
            self._parts.append(bytes(fields[tag]))
        return self


# -- headers ----------------------------------------------------------------------------------------------------

def request_header(api_key: int, version: int, correlation: int, client_id: str | None) -> bytes:
    """Request header v1, or v2 (with an empty tagged-field section) where the version is flexible."""
    header = Writer().int16(api_key).int16(version).int32(correlation).string(client_id).bytes()
    return header + b"\x00" if is_flexible(api_key, version) else header


def encode_request(api_key: int, version: int, correlation: int, client_id: str | None, body: bytes) -> bytes:
    """A whole request as sent after its 4-byte size: header then body."""
    return request_header(api_key, version, correlation, client_id) + body


def response_reader(api_key: int, version: int, data: bytes | bytearray | memoryview) -> tuple[int, FlexReader]:
    """(correlation id, a reader of the body) of a response as received after its 4-byte size."""
    reader = FlexReader(data, False)
    correlation = reader.int32()
    flexible = is_flexible(api_key, version)
    if flexible and api_key != API_VERSIONS_KEY:
        reader.flexible = True
        reader.tags()
    reader.flexible = flexible
    return correlation, reader

