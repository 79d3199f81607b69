"""Consumer-protocol bytes: hand-computed examples, round trips, and malformed input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.groups.classic.assignors.base import Assignment, Subscription, TopicPartition
from kassign.core.errors import KassignError
from kassign.groups.classic.protocol.wire import (
    WireFormatError,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    read_version,
)

NULL = b"\xff\xff\xff\xff"


def i16(n: int) -> bytes:
    return n.to_bytes(2, "big", signed=True)


def i32(n: int) -> bytes:
    return n.to_bytes(4, "big", signed=True)


def s(text: str) -> bytes:
    return i16(len(text.encode())) + text.encode()


# Written out field by field from the protocol description (not from our encoder).
SUB = Subscription(
    topics=("t1", "t0"),
    user_data=b"\x01",
    owned_partitions=(TopicPartition("t1", 0), TopicPartition("t0", 2), TopicPartition("t0", 1)),
    generation=7,
    rack="r",
)
SUB_V0 = i16(0) + i32(2) + s("t0") + s("t1") + i32(1) + b"\x01"
OWNED = i32(2) + s("t0") + i32(2) + i32(1) + i32(2) + s("t1") + i32(1) + i32(0)
SUB_V1 = i16(1) + SUB_V0[2:] + OWNED
SUB_V2 = i16(2) + SUB_V1[2:] + i32(7)
SUB_V3 = i16(3) + SUB_V2[2:] + s("r")


@pytest.mark.parametrize("version,expected", [(0, SUB_V0), (1, SUB_V1), (2, SUB_V2), (3, SUB_V3)])
def test_subscription_bytes_by_version(version, expected):
    assert encode_subscription(SUB, version) == expected


def test_subscription_without_user_data_or_rack_writes_nulls():
    sub = Subscription(topics=("t0",))
    assert encode_subscription(sub, 3) == i16(3) + i32(1) + s("t0") + NULL + i32(0) + i32(-1) + i16(-1)


def test_assignment_groups_partitions_by_first_appearance_keeping_order():
    assignment = Assignment((TopicPartition("t1", 3), TopicPartition("t0", 0), TopicPartition("t1", 1)))
    body = i32(2) + s("t1") + i32(2) + i32(3) + i32(1) + s("t0") + i32(1) + i32(0) + NULL
    for version in range(4):
        assert encode_assignment(assignment, version) == i16(version) + body
    assert decode_assignment(i16(0) + body).partitions == (
        TopicPartition("t1", 3), TopicPartition("t1", 1), TopicPartition("t0", 0))


def test_decoding_older_versions_fills_defaults():
    old = decode_subscription(SUB_V0)
    assert old.topics == ("t0", "t1") and old.user_data == b"\x01"
    assert old.owned_partitions == () and old.generation == -1 and old.rack is None
    v2 = decode_subscription(SUB_V2)
    assert v2.generation == 7 and v2.rack is None
    assert v2.owned_partitions == (TopicPartition("t0", 1), TopicPartition("t0", 2), TopicPartition("t1", 0))


def test_newer_version_is_read_as_latest_and_trailing_fields_ignored():
    future = i16(9) + SUB_V3[2:] + b"\x00\x00\x00\x2a extra field"
    decoded = decode_subscription(future)
    assert read_version(future) == 9
    assert decoded.rack == "r" and decoded.generation == 7


def test_empty_rack_reads_as_no_rack():
    data = i16(3) + i32(0) + NULL + i32(0) + i32(-1) + s("")
    assert decode_subscription(data).rack is None


@pytest.mark.parametrize(
    "data,fragment",
    [
        (b"", "truncated"),
        (b"\x00", "truncated"),
        (i16(-1) + i32(0) + NULL, "unsupported version -1"),
        (i16(0) + i32(1) + i16(5) + b"t0", "truncated"),
        (i16(0) + i32(-1) + NULL, "cannot be null"),
        (i16(0) + i32(1) + i16(-1) + NULL, "cannot be null"),
        (i16(0) + i32(1) + s("t0") + i32(-7), "length -7"),
        (i16(0) + i32(1) + i16(2) + b"\xff\xfe" + NULL, "not valid UTF-8"),
        (i16(1) + i32(0) + NULL + i32(1) + s("t0") + i32(3) + i32(1), "truncated"),
        (i16(2) + i32(0) + NULL + i32(0) + b"\x00\x01", "truncated"),
    ],
)
def test_malformed_subscription_is_a_clear_error(data, fragment):
    with pytest.raises(WireFormatError) as err:
        decode_subscription(data)
    assert isinstance(err.value, KassignError)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_malformed_assignment_and_non_bytes():
    with pytest.raises(WireFormatError, match="truncated"):
        decode_assignment(i16(0) + i32(1) + s("t0") + i32(2) + i32(0))
    with pytest.raises(WireFormatError, match="expected bytes"):
        decode_assignment("not bytes")  # type: ignore[arg-type]


def test_overlong_topic_name_is_refused():
    with pytest.raises(WireFormatError, match="32767"):
        encode_subscription(Subscription(topics=("x" * 40000,)))


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
partitions = st.lists(st.tuples(names, st.integers(0, 2**31 - 1)).map(lambda t: TopicPartition(*t)), max_size=20,
                      unique=True)


@settings(max_examples=150, deadline=None)
@given(
    topics=st.lists(names, max_size=6, unique=True),
    user_data=st.binary(max_size=30),
    owned=partitions,
    generation=st.integers(-1, 2**31 - 1),
    rack=st.none() | names,
    version=st.integers(0, 3),
)
def test_subscription_round_trip(topics, user_data, owned, generation, rack, version):
    sub = Subscription(tuple(topics), user_data, tuple(owned), generation, rack)
    back = decode_subscription(encode_subscription(sub, version))
    assert sorted(back.topics) == sorted(topics)
    assert back.user_data == user_data
    assert sorted(back.owned_partitions) == (sorted(owned) if version >= 1 else [])
    assert back.generation == (generation if version >= 2 else -1)
    assert back.rack == (rack if version >= 3 else None)
    assert encode_subscription(back, version) == encode_subscription(sub, version)


@settings(max_examples=150, deadline=None)
@given(assigned=partitions, user_data=st.binary(max_size=30), version=st.integers(0, 3))
def test_assignment_round_trip(assigned, user_data, version):
    back = decode_assignment(encode_assignment(Assignment(tuple(assigned), user_data), version))
    assert sorted(back.partitions) == sorted(assigned)
    assert back.user_data == user_data


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_random_bytes_never_crash_with_anything_but_wire_errors(data):
    for decode in (decode_subscription, decode_assignment):
        try:
            decode(data)
        except WireFormatError:
            pass
