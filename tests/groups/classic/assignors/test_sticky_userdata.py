"""Kafka's sticky user-data byte formats, checked against bytes worked out by hand from the schema."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core.javaorder import java_string_hash, java_string_hash_order
from kassign.groups.classic.assignors.sticky.userdata import (
    UserDataError,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    encode_cooperative_user_data,
    encode_many,
    encode_sticky_user_data,
)
from kassign.groups.classic.assignors.base import TopicPartition
from kassign.core.errors import KassignError

# One topic "t0" with partitions 1 and 3, generation 7, laid out field by field:
# int32 topic count | int16 name length | "t0" | int32 partition count | int32 1 | int32 3 | int32 generation
V1_T0_1_3_GEN7 = bytes.fromhex("00000001" "0002" "7430" "00000002" "00000001" "00000003" "00000007")
V0_T0_1_3 = V1_T0_1_3_GEN7[:-4]


def test_version1_bytes_match_the_schema_by_hand():
    assert encode_sticky_user_data([("t0", 1), ("t0", 3)], 7) == V1_T0_1_3_GEN7


def test_version0_has_no_generation():
    assert encode_sticky_user_data([("t0", 1), ("t0", 3)], 7, version=0) == V0_T0_1_3


def test_decode_version1():
    decoded = decode_sticky_user_data(V1_T0_1_3_GEN7)
    assert decoded.generation == 7
    assert decoded.partitions() == [TopicPartition("t0", 1), TopicPartition("t0", 3)]


def test_decode_version0_falls_back_without_generation():
    decoded = decode_sticky_user_data(V0_T0_1_3)
    assert decoded.generation is None
    assert decoded.partitions() == [TopicPartition("t0", 1), TopicPartition("t0", 3)]


def test_two_topics_and_negative_generation():
    data = encode_sticky_user_data([("a", 0), ("bb", 5), ("a", 2)], -1)
    # Kafka's StickyAssignor member groups by topic in a HashMap: "bb" (bucket 0 of 16) before "a" (bucket 1),
    # the bytes Kafka 3.4.0's serializeTopicPartitionAssignment writes for the same partitions
    expected = (
        struct.pack(">i", 2)
        + struct.pack(">h", 2) + b"bb" + struct.pack(">ii", 1, 5)
        + struct.pack(">h", 1) + b"a" + struct.pack(">iii", 2, 0, 2)
        + struct.pack(">i", -1)
    )
    assert data == expected
    assert data.hex() == "00000002000262620000000100000005000161000000020000000000000002ffffffff"


def test_empty_assignment():
    assert encode_sticky_user_data([], 3) == bytes.fromhex("00000000" "00000003")
    decoded = decode_sticky_user_data(bytes.fromhex("00000000" "00000003"))
    assert decoded.partitions() == [] and decoded.generation == 3


def test_non_ascii_topic_is_utf8():
    data = encode_sticky_user_data([("tö", 4)], 1)
    assert data[4:6] == struct.pack(">h", 3) and data[6:9] == "tö".encode()
    assert decode_sticky_user_data(data).partitions() == [TopicPartition("tö", 4)]


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"", "topic count"),
        (b"\x00\x00", "topic count"),
        (bytes.fromhex("ffffffff"), "negative topic count"),
        (bytes.fromhex("00000001" "0005" "7430"), "topic name"),
        (bytes.fromhex("00000001" "ffff"), "negative topic name length"),
        (bytes.fromhex("00000001" "0002" "7430" "00000009" "00000001"), "partition numbers"),
        (bytes.fromhex("00000001" "0002" "7430" "fffffffe"), "negative partition count"),
    ],
)
def test_malformed_bytes_raise_user_data_error(data, problem):
    with pytest.raises(UserDataError, match=problem):
        decode_sticky_user_data(data)


def test_cooperative_user_data_is_one_int32():
    assert encode_cooperative_user_data(5) == b"\x00\x00\x00\x05"
    assert encode_cooperative_user_data(-1) == b"\xff\xff\xff\xff"
    assert decode_cooperative_user_data(b"\x00\x00\x01\x00") == 256
    with pytest.raises(UserDataError):
        decode_cooperative_user_data(b"\x00\x01")


topic_names = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    owned=st.lists(st.tuples(topic_names, st.integers(0, 2**31 - 1)), max_size=20, unique=True),
    generation=st.integers(-1, 2**31 - 1),
)
def test_round_trip_keeps_every_partition_and_the_generation(owned, generation):
    decoded = decode_sticky_user_data(encode_sticky_user_data(owned, generation))
    assert decoded.generation == generation
    assert sorted(decoded.partitions()) == sorted(TopicPartition(t, p) for t, p in owned)
    assert all(chunk.dtype == np.int32 for _, chunk in decoded.chunks)


def test_java_string_hash_known_values():
    # Worked by hand from s[0]*31^(n-1) + ... : "a" = 97, "ab" = 97*31 + 98 = 3105, "Aa" = "BB" = 2112.
    assert java_string_hash("a") == 97
    assert java_string_hash("ab") == 3105
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("") == 0


def test_java_hashmap_order_buckets_then_insertion():
    # "a"=97 and "q"=113 share bucket 1 of 16, "b"=98 sits in bucket 2; ties keep insertion order.
    assert java_string_hash_order(["b", "q", "a"]) == ["q", "a", "b"]
    assert java_string_hash_order(["BB", "Aa"]) == ["BB", "Aa"]


blobs = st.one_of(
    st.builds(
        lambda owned, gen, version: encode_sticky_user_data(owned, gen, version=version),
        st.lists(st.tuples(st.sampled_from(["t0", "t1", "tö", "other"]), st.integers(-5, 2**31 - 1)), max_size=12),
        st.integers(-(2**31), 2**31 - 1),
        st.sampled_from([0, 1]),
    ),
    st.binary(max_size=40),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(blobs, min_size=1, max_size=6))
def test_batch_decoder_agrees_with_the_reference_decoder(many):
    from kassign.groups.classic.assignors.sticky.userdata import BROKEN, OK_V1, decode_many

    known = ["t0", "t1", "tö"]
    batch = decode_many(many, known)
    for i, data in enumerate(many):
        try:
            ref = decode_sticky_user_data(data)
        except UserDataError:
            assert batch.status[i] == BROKEN
            continue
        assert batch.status[i] != BROKEN
        assert (batch.generation[i] if batch.status[i] == OK_V1 else None) == ref.generation
        e0, e1 = batch.entry_offsets[i], batch.entry_offsets[i + 1]
        p0, p1 = batch.part_offsets[i], batch.part_offsets[i + 1]
        topics = [known[t] if t >= 0 else None for t in batch.entry_topic[e0:e1]]
        assert topics == [t if t in known else None for t, _ in ref.chunks]
        assert batch.entry_size[e0:e1].tolist() == [len(c) for _, c in ref.chunks]
        assert batch.partitions[p0:p1].tolist() == [int(p) for _, c in ref.chunks for p in c]


@pytest.mark.parametrize("bad", [None, "abc", 5, [1, 2], 3.5])
def test_decoders_refuse_what_is_not_bytes(bad) -> None:
    from kassign.groups.classic.assignors.sticky.userdata import UserDataError, decode_cooperative_user_data, decode_sticky_user_data

    with pytest.raises(UserDataError, match="must be bytes"):
        decode_sticky_user_data(bad)
    with pytest.raises(UserDataError, match="must be bytes"):
        decode_cooperative_user_data(bad)


# --- decode_many: other members' bytes vs the caller's arguments (issue #20) ----------------------------

@pytest.mark.parametrize(("blobs", "message"), [
    (None, "a list of each member's user data"),
    ("abc", "a list of each member's user data"),
    (b"\x00\x00\x00\x00", "a list of each member's user data"),
    (bytearray(b"\x00"), "a list of each member's user data"),
    (5, "a list of each member's user data"),
    ({b"x"}, "a list of each member's user data"),
])
def test_decode_many_refuses_arguments_of_the_wrong_type(blobs, message: str) -> None:
    from kassign.groups.classic.assignors.sticky.userdata import decode_many

    with pytest.raises(UserDataError, match=message):
        decode_many(blobs, ["t0"])


@pytest.mark.parametrize(("known", "message"), [
    ("t0", "known_topics must be a list of topic names"),
    (None, "known_topics must be a list of topic names"),
    (["t0", 5], "known topic #1 is int"),
    (["t0", "x\ud800"], "topic name 'x\\\\ud800' has a lone surrogate"),
])
def test_decode_many_refuses_known_topics_of_the_wrong_type(known, message: str) -> None:
    from kassign.groups.classic.assignors.sticky.userdata import decode_many

    with pytest.raises(UserDataError, match=message):
        decode_many([V1_T0_1_3_GEN7], known)


def test_a_member_without_user_data_has_no_previous_assignment_as_in_kafka() -> None:
    # Kafka's StickyAssignor.memberData: null (or empty) user data -> no owned partitions; unreadable -> the same
    from kassign.groups.classic.assignors.sticky.userdata import BROKEN, OK_V1, decode_many

    batch = decode_many([None, V1_T0_1_3_GEN7, b"", b"\xff\xff", bytearray(V1_T0_1_3_GEN7), memoryview(V0_T0_1_3)],
                        ["t0"])
    assert batch.status.tolist()[:4] == [BROKEN, OK_V1, BROKEN, BROKEN]
    assert batch.entry_offsets.tolist() == [0, 0, 1, 1, 1, 2, 3]
    assert batch.partitions.tolist() == [1, 3, 1, 3, 1, 3]
    assert batch.generation.tolist()[1] == 7 and batch.status[4] == OK_V1 and batch.status[5] != BROKEN
    assert decode_many((b for b in [None]), ()).status.tolist() == [BROKEN]  # any iterable of blobs
    # an entry that is not bytes at all is unreadable member data too (as the cooperative and load-aware
    # assignors read it), not an error for the whole group
    odd = decode_many([V1_T0_1_3_GEN7, "text", 5, [0, 0, 0, 1]], ["t0"])
    assert odd.status.tolist() == [OK_V1, BROKEN, BROKEN, BROKEN] and odd.entry_offsets.tolist() == [0, 1, 1, 1, 1]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=30),
                          st.builds(lambda g: encode_sticky_user_data([("t0", 1)], g), st.integers(-1, 9))),
                max_size=6))
def test_decode_many_never_raises_on_what_members_send(blobs: list) -> None:
    from kassign.groups.classic.assignors.sticky.userdata import BROKEN, decode_many

    batch = decode_many(blobs, ["t0", "t1"])
    for i, data in enumerate(blobs):
        if data is None:
            assert batch.status[i] == BROKEN and batch.entry_offsets[i] == batch.entry_offsets[i + 1]


@pytest.mark.parametrize("user_data", [None, b"", b"\x00\x01", b"garbage!", "text", 5])
def test_the_sticky_assignor_treats_missing_or_unreadable_user_data_as_no_history(user_data) -> None:
    from kassign.groups.classic.assignors.base import Subscription
    from kassign.groups.classic.assignors.eager_sticky import StickyAssignor
    from kassign.core.cluster import Cluster

    cluster = Cluster({"t0": 4})
    keeper = Subscription(("t0",), user_data=encode_sticky_user_data([("t0", 0), ("t0", 1), ("t0", 2)], 3))
    result = StickyAssignor().assign(cluster, {"a": keeper, "b": Subscription(("t0",), user_data=user_data)})
    assert sorted(result["a"].partitions) == [("t0", 0), ("t0", 1)]  # a keeps what it can, b gets the rest
    assert sorted(result["b"].partitions) == [("t0", 2), ("t0", 3)]


def test_encoding_a_topic_name_utf8_cannot_carry_is_a_kassign_error() -> None:
    with pytest.raises(KassignError, match="topic name '\\\\ud800' has a lone surrogate"):
        encode_sticky_user_data([("\ud800", 0)], 1)


OWNED_TOPICS = st.sampled_from(["t0", "t1", "t\u00e9", "t\U0001F642", "topic-0001"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(OWNED_TOPICS, st.integers(-(2**31), 2**31 - 1)), max_size=8),
                          st.integers(-(2**31), 2**31 - 1)), max_size=6), st.sampled_from([0, 1]))
def test_many_members_encoded_at_once_send_the_bytes_each_would(members, version):
    """encode_many on the owned columns: each member's bytes equal encode_sticky_user_data of its own
    pairs (topics in Java's HashMap order, a topic's partitions as listed, repeats kept)."""
    names = list(dict.fromkeys(topic for owned, _ in members for topic, _ in owned))
    code = np.array([names.index(topic) for owned, _ in members for topic, _ in owned], dtype=np.int64)
    partitions = np.array([p for owned, _ in members for _, p in owned], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum([len(owned) for owned, _ in members])]).astype(np.int64)
    generations = [generation for _, generation in members]
    assert encode_many(start, code, names, partitions, generations, version=version) == [
        encode_sticky_user_data(owned, generation, version=version) for owned, generation in members]


def test_many_members_listing_the_same_topics_alike_send_what_each_would() -> None:
    """encode_many reuses one member's topic order for the next listing the same topics alike; a member whose
    topics would make a tree bin in Java's map ("Aa" and "BB" share a hash code), and members of one or no
    topic between them, still send the one-member encoder's bytes (checked against a JDK's HashMap)."""
    colliding = ["".join(p) for p in __import__("itertools").product(["Aa", "BB"], repeat=5)][:40]
    lists = [[(t, 0) for t in colliding], [(t, 1) for t in colliding], [("solo", 3)], [],
             [(f"topic-{i}", i) for i in range(30)], [(f"topic-{i}", i + 1) for i in range(30)],
             [(f"topic-{i}", 0) for i in range(30)] + [("topic-0", 9)]]
    names = list(dict.fromkeys(t for pairs in lists for t, _ in pairs))
    code = np.array([names.index(t) for pairs in lists for t, _ in pairs], dtype=np.int64)
    partitions = np.array([p for pairs in lists for _, p in pairs], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum([len(pairs) for pairs in lists])]).astype(np.int64)
    assert encode_many(start, code, names, partitions, [1] * len(lists)) == [
        encode_sticky_user_data(pairs, 1) for pairs in lists]
