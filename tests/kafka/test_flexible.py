"""The flexible-version primitives: varints, compact strings/bytes/arrays, tagged fields, headers, Uuids.

Known bytes are facts of Kafka's encoding (its ByteUtils and generated message classes); the
round trips are hypothesis properties; malformed input must be a MalformedResponse, never another
exception, and never an allocation the bytes cannot back."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kassign.kafka.flexible import (FlexReader, FlexWriter, encode_request, is_flexible, request_header,
                                    response_reader, uuid_bytes, uuid_text, uvarint_bytes)
from kassign.kafka.wire import MalformedResponse

INT32 = st.integers(-(1 << 31), (1 << 31) - 1)
TEXT = st.text(max_size=40)


# -- known bytes ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, raw", [
    (0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (16383, "ff7f"), (16384, "808001"),
    (0x7FFFFFFF, "ffffffff07"), (0x80000000, "8080808008"), (0xFFFFFFFF, "ffffffff0f"),
])
def test_unsigned_varint_bytes(value, raw):
    assert uvarint_bytes(value).hex() == raw
    assert FlexReader(bytes.fromhex(raw)).uvarint() == value


@pytest.mark.parametrize("value, raw", [
    (0, "00"), (-1, "01"), (1, "02"), (63, "7e"), (-64, "7f"), (64, "8001"), (-65, "8101"), (8191, "fe7f"),
    (-8192, "ff7f"), (8192, "808001"), (-8193, "818001"), (1048575, "feff7f"), (-1048576, "ffff7f"),
    (1048576, "80808001"), (-1048577, "81808001"), (0x7FFFFFFF, "feffffff0f"), (-(1 << 31), "ffffffff0f"),
])
def test_zigzag_varint_bytes(value, raw):
    assert FlexWriter().varint(value).bytes().hex() == raw
    assert FlexReader(bytes.fromhex(raw)).varint() == value


def test_compact_encodings():
    assert FlexWriter().string("abc").bytes() == b"\x04abc"
    assert FlexWriter().string("").bytes() == b"\x01"
    assert FlexWriter().string(None).bytes() == b"\x00"
    assert FlexWriter().blob(b"\x00\x01").bytes() == b"\x03\x00\x01"
    assert FlexWriter().array([1, 2], FlexWriter.int32).bytes() == b"\x03\x00\x00\x00\x01\x00\x00\x00\x02"
    assert FlexWriter().array(None, FlexWriter.int32).bytes() == b"\x00"
    assert FlexWriter().tags().bytes() == b"\x00"
    # the same calls, non-flexible: int16-length strings, int32-count arrays, no tagged fields
    assert FlexWriter(False).string("abc").array([7], FlexWriter.int32).tags().bytes() == \
        b"\x00\x03abc\x00\x00\x00\x01\x00\x00\x00\x07"


def test_headers():
    # ListGroups v5 is flexible: header v2 ends with an empty tagged-field section
    assert request_header(16, 5, 5, "c").hex() == "00100005000000050001" + "63" + "00"
    # ListGroups v2 is not: header v1
    assert request_header(16, 2, 5, "c").hex() == "00100002000000050001" + "63"
    assert encode_request(18, 3, 1, None, b"\x01\x02") == bytes.fromhex("0012000300000001ffff00") + b"\x01\x02"
    # a flexible answer's header v1 has tagged fields after the correlation id (skipped) ...
    correlation, reader = response_reader(69, 0, bytes.fromhex("0000002a" + "01" + "05" + "02" + "abcd" + "ff"))
    assert correlation == 42 and reader.flexible and reader.remaining() == 1 and reader.int8() == -1
    # ... but ApiVersions always answers with header v0, whatever its version
    correlation, reader = response_reader(18, 4, bytes.fromhex("00000007" + "0000"))
    assert correlation == 7 and reader.flexible and reader.int16() == 0


def test_flexible_versions():
    assert [v for v in range(19) if is_flexible(1, v)] == list(range(12, 19))
    assert is_flexible(69, 0) and is_flexible(90, 0) and is_flexible(18, 3) and not is_flexible(18, 2)
    assert not is_flexible(17, 1) and not is_flexible(9, 5) and is_flexible(9, 6)


def test_uuid_text():
    assert uuid_text(bytes(16)) == "AAAAAAAAAAAAAAAAAAAAAA"
    raw = bytes.fromhex("5e451f16b7de40748b27f81aa82cca90")
    assert uuid_text(raw) == "XkUfFrfeQHSLJ_gaqCzKkA"
    assert uuid_bytes("XkUfFrfeQHSLJ_gaqCzKkA") == raw
    for bad in ("", "XkUfFrfeQHSLJ_gaqCzKk", "XkUfFrfeQHSLJ_gaqCzKkA=", "!kUfFrfeQHSLJ_gaqCzKkA"):
        with pytest.raises(ValueError):
            uuid_bytes(bad)


# -- round trips ----------------------------------------------------------------------------------------------------

@given(st.integers(0, (1 << 32) - 1))
def test_uvarint_round_trip(value):
    raw = uvarint_bytes(value)
    assert len(raw) <= 5
    reader = FlexReader(raw)
    assert reader.uvarint() == value and reader.remaining() == 0


@given(INT32)
def test_varint_round_trip(value):
    reader = FlexReader(FlexWriter().varint(value).bytes())
    assert reader.varint() == value and reader.remaining() == 0


@given(st.booleans(), st.lists(st.one_of(st.none(), TEXT), max_size=8))
def test_strings_round_trip(flexible, values):
    w = FlexWriter(flexible)
    for v in values:
        w.string(v)
    r = FlexReader(w.bytes(), flexible)
    assert [r.string() for _ in values] == values
    r.end()


@given(st.booleans(), st.one_of(st.none(), st.binary(max_size=300)))
def test_bytes_round_trip(flexible, value):
    r = FlexReader(FlexWriter(flexible).blob(value).bytes(), flexible)
    got = r.blob()
    assert (None if got is None else bytes(got)) == value
    r.end()


@given(st.booleans(), st.one_of(st.none(), st.lists(st.tuples(TEXT, st.lists(INT32, max_size=5)), max_size=6)))
def test_arrays_round_trip(flexible, items):
    w = FlexWriter(flexible)
    w.array(items, lambda w, item: (w.string(item[0]), w.array(item[1], FlexWriter.int32), w.tags()))
    r = FlexReader(w.bytes(), flexible)

    def item(r):
        value = (r.text(), r.int32s())
        r.tags()
        return value

    got = r.nullable_array(item)
    if flexible or items is not None:
        assert got == (None if items is None else [tuple(x) for x in items])
    r.end()


@given(st.dictionaries(st.integers(0, 5000), st.binary(max_size=40), max_size=8), INT32)
def test_tagged_fields_unknown_skipped(fields, after):
    """A reader that knows no tag skips every one by its size and reads the next field right; a reader
    that knows some gets exactly their bytes."""
    raw = FlexWriter().tags(fields).int32(after).bytes()
    r = FlexReader(raw)
    assert r.tags() == {}
    assert r.int32() == after
    r.end()
    known = {tag: (lambda t: bytes(t._take(t.remaining()))) for tag in list(fields)[::2]}
    r = FlexReader(raw)
    assert r.tags(known) == {tag: fields[tag] for tag in known}
    assert r.int32() == after


def test_tagged_fields_written_in_tag_order():
    raw = FlexWriter().tags({3: b"\x01", 0: b"", 300: b"\x02\x03"}).bytes()
    assert raw.hex() == "03" + "0000" + "030101" + "ac02" + "02" + "0203"


def test_known_tag_must_fill_its_bytes():
    raw = FlexWriter().tags({1: struct.pack(">qb", 5, 0)}).bytes()  # int64 plus a stray byte
    with pytest.raises(MalformedResponse, match="left over"):
        FlexReader(raw).tags({1: FlexReader.int64})


def test_non_flexible_has_no_tags():
    r = FlexReader(b"\x05", False)
    assert r.tags() == {} and r.remaining() == 1


# -- malformed input ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, what", [
    ("ffffffffff01", "longer than 5 bytes"),
    ("ffffffff1f", "over 32 bits"),
    ("80", "ends at byte"),
    ("", "ends at byte"),
])
def test_bad_varints(raw, what):
    with pytest.raises(MalformedResponse, match=what):
        FlexReader(bytes.fromhex(raw)).uvarint()


def test_huge_counts_refused_before_allocating():
    # a compact array claiming 2**32 - 2 elements in 3 bytes: refused on its count, nothing built
    with pytest.raises(MalformedResponse, match="claims"):
        FlexReader(bytes.fromhex("ffffffff0f000000")).array(FlexReader.int8)
    with pytest.raises(MalformedResponse, match="claims"):
        FlexReader(bytes.fromhex("ffffffff0f") + bytes(40)).int32s()
    with pytest.raises(MalformedResponse, match="claims"):  # elements of at least 19 bytes: 3 cannot fit 40 bytes
        FlexReader(b"\x04" + bytes(40)).array(lambda r: r._take(19), 19)
    with pytest.raises(MalformedResponse, match="claims"):
        FlexReader(struct.pack(">i", 0x7FFFFFFF) + bytes(8), False).array(FlexReader.int8)
    with pytest.raises(MalformedResponse, match="tagged fields"):
        FlexReader(bytes.fromhex("ffffffff0f")).tags()
    with pytest.raises(MalformedResponse, match="ends at byte"):  # a tagged field larger than what is left
        FlexReader(bytes.fromhex("01" "00" "ffffff7f" "00")).tags()
    with pytest.raises(MalformedResponse, match="ends at byte"):  # compact bytes of 2 GB in 6 bytes
        FlexReader(bytes.fromhex("8080808008") + b"x").blob()
    with pytest.raises(MalformedResponse, match="Kafka's limit"):  # a string beyond Kafka's 32767 bytes
        FlexReader(uvarint_bytes(40000) + bytes(40000)).string()


def test_null_where_not_nullable():
    with pytest.raises(MalformedResponse, match="non-nullable"):
        FlexReader(b"\x00").text()
    with pytest.raises(MalformedResponse, match="UTF-8"):
        FlexReader(b"\x02\xff").string()


def test_left_over_bytes():
    r = FlexReader(b"\x00\x01")
    r.int8()
    with pytest.raises(MalformedResponse, match="1 bytes left over"):
        r.end()


@given(st.binary(max_size=64), st.booleans())
def test_garbage_is_malformed_or_read(raw, flexible):
    """Whatever the bytes, reading a struct of every kind of field either reads it or raises MalformedResponse."""
    r = FlexReader(raw, flexible)
    try:
        r.string(), r.blob(), r.int32s(), r.strings(), r.tags({0: FlexReader.int64}), r.nullable_struct(FlexReader.uuid)
        r.uvarint(), r.varint()
    except MalformedResponse:
        pass
