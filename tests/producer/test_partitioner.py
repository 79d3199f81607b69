"""key -> partition: murmur2 and the producer partitioners, against Kafka's own vectors."""

from __future__ import annotations

import base64
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign.core.cluster import Cluster
from kassign.core.errors import InvalidPartitionError, KassignError
from kassign.producer.partitioner import (
    DefaultPartitioner,
    RoundRobinPartitioner,
    choose_partition,
    murmur2_many,
    partition_records,
    to_positive,
)
from tests.conftest import load_vectors, vector_params


def _key(line: dict) -> bytes:
    return base64.b64decode(line["key_b64"])


@pytest.mark.parametrize("line", vector_params("murmur2.jsonl"))
def test_murmur2_vector(line: dict) -> None:
    key = _key(line)
    assert kassign.murmur2(key) == line["murmur2"]
    assert kassign.partition_for_key(key, line["partitions"]) == line["partition"]


def test_batch_matches_every_vector_line_in_one_call() -> None:
    lines = load_vectors("murmur2.jsonl")
    keys = [_key(line) for line in lines]
    expected_hash = np.array([line["murmur2"] for line in lines], dtype=np.int32)
    np.testing.assert_array_equal(murmur2_many(keys), expected_hash)
    for partitions in sorted({line["partitions"] for line in lines}):
        rows = [i for i, line in enumerate(lines) if line["partitions"] == partitions]
        got = kassign.partitions_for_keys([keys[i] for i in rows], partitions)
        assert got.dtype == np.int32
        assert got.tolist() == [lines[i]["partition"] for i in rows]


def test_vectors_cover_every_tail_length() -> None:
    lengths = {len(_key(line)) % 4 for line in load_vectors("murmur2.jsonl")}
    assert lengths == {0, 1, 2, 3}


def test_arrow_arrays_hash_like_python_bytes() -> None:
    lines = load_vectors("murmur2.jsonl")
    keys = [_key(line) for line in lines]
    expected = [to_positive(line["murmur2"]) % 1000 for line in lines]
    for array in (pa.array(keys, pa.binary()), pa.array(keys, pa.large_binary())):
        assert kassign.partitions_for_keys(array, 1000).tolist() == expected
    sliced = pa.array(keys, pa.binary()).slice(7, 50)
    assert kassign.partitions_for_keys(sliced, 1000).tolist() == expected[7:57]
    chunked = pa.chunked_array([pa.array(keys[:10], pa.binary()), pa.array(keys[10:], pa.binary())])
    assert kassign.partitions_for_keys(chunked, 1000).tolist() == expected


def test_text_keys_hash_their_utf8_bytes() -> None:
    words = ["", "a", "ab", "abc", "abcd", "héllo", "分区分配", "🙂 key"]
    expected = [kassign.partition_for_key(w.encode("utf-8"), 17) for w in words]
    assert kassign.partitions_for_keys(words, 17).tolist() == expected
    assert kassign.partitions_for_keys(pa.array(words, pa.string()), 17).tolist() == expected
    assert kassign.partitions_for_keys(pa.array(words, pa.large_string()), 17).tolist() == expected


def test_null_keys_get_minus_one_in_batches() -> None:
    keys = [b"a", None, b"abc", None]
    assert kassign.partitions_for_keys(keys, 5).tolist()[1::2] == [-1, -1]
    arrow = kassign.partitions_for_keys(pa.array(keys, pa.binary()), 5)
    assert arrow.tolist() == kassign.partitions_for_keys(keys, 5).tolist()
    assert arrow[0] == kassign.partition_for_key(b"a", 5)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=30), st.integers(min_value=1, max_value=2**31 - 1))
def test_batch_equals_scalar(keys: list[bytes], partitions: int) -> None:
    batch = kassign.partitions_for_keys(keys, partitions).tolist()
    assert batch == [kassign.partition_for_key(k, partitions) for k in keys]
    assert all(0 <= p < partitions for p in batch)


def test_sign_bit_is_cleared_not_negated() -> None:
    # Kafka's toPositive masks the sign bit; abs() would give a different partition for negative hashes.
    negative = next(line for line in load_vectors("murmur2.jsonl") if line["murmur2"] < 0)
    assert to_positive(negative["murmur2"]) != abs(negative["murmur2"])
    assert kassign.partition_for_key(_key(negative), negative["partitions"]) == negative["partition"]


@pytest.mark.parametrize("bad", [0, -3, 1.5, True])
def test_partition_count_must_be_positive_whole(bad: object) -> None:
    with pytest.raises(KassignError, match="number of partitions"):
        kassign.partition_for_key(b"k", bad)  # type: ignore[arg-type]
    with pytest.raises(KassignError, match="number of partitions"):
        kassign.partitions_for_keys([b"k"], bad)  # type: ignore[arg-type]


def test_bad_key_types_are_reported() -> None:
    with pytest.raises(KassignError, match="encode text first"):
        kassign.murmur2("text")  # type: ignore[arg-type]
    with pytest.raises(KassignError, match="key #1 is int"):
        kassign.partitions_for_keys([b"a", 7], 3)
    with pytest.raises(KassignError, match="binary, string or integer"):
        kassign.partitions_for_keys(pa.array([1.5, 2.0]), 3)  # integer arrays are keys since issue #11
    with pytest.raises(KassignError, match="list of keys"):
        kassign.partitions_for_keys(b"abc", 3)


# --- the Partitioner interface -------------------------------------------------------------------

def _cluster_with_leaderless_partitions() -> Cluster:
    # t0 has 6 partitions; partitions 1 and 4 have no leader (unavailable).
    return Cluster({"t0": 6, "dead": 2}, leaders={"t0": [0, None, 2, 0, None, 1], "dead": [None, None]})


def test_explicit_partition_wins_and_is_validated() -> None:
    cluster = _cluster_with_leaderless_partitions()
    partitioner = DefaultPartitioner(seed=1)
    assert partitioner.partition("t0", b"key", None, cluster, record_partition=4) == 4
    assert choose_partition(partitioner, "t0", b"key", None, cluster, record_partition=0) == 0
    with pytest.raises(InvalidPartitionError, match=r"6 is not in the range \[0\.\.\.6\)"):
        partitioner.partition("t0", b"key", None, cluster, record_partition=6)
    with pytest.raises(InvalidPartitionError, match=r"-1 is not in the range \[0\.\.\.6\)"):
        choose_partition(partitioner, "t0", None, None, cluster, record_partition=-1)


def test_keyed_records_hash_over_all_partitions_even_unavailable_ones() -> None:
    cluster = _cluster_with_leaderless_partitions()
    partitioner = DefaultPartitioner(seed=1)
    keys = [f"key-{i}".encode() for i in range(300)]
    got = partition_records(partitioner, "t0", keys, cluster)
    assert got == [kassign.partition_for_key(k, 6) for k in keys]
    assert {1, 4} & set(got), "keyed records must still land on partitions without a leader"


def test_keyless_records_go_round_robin_over_available_partitions() -> None:
    cluster = _cluster_with_leaderless_partitions()
    got = partition_records(DefaultPartitioner(seed=3), "t0", [None] * 40, cluster)
    assert set(got) == {0, 2, 3, 5}
    assert Counter(got) == {p: 10 for p in (0, 2, 3, 5)}
    cycle = got[:4]
    assert got == cycle * 10, "each available partition in turn"


def test_keyless_records_fall_back_to_all_partitions_without_leaders() -> None:
    cluster = _cluster_with_leaderless_partitions()
    got = partition_records(DefaultPartitioner(seed=3), "dead", [None] * 10, cluster)
    assert Counter(got) == {0: 5, 1: 5}


def test_default_partitioner_seed_makes_start_reproducible() -> None:
    cluster = Cluster({"t": 1000})
    first = [DefaultPartitioner(seed=s).partition("t", None, None, cluster) for s in range(5)]
    again = [DefaultPartitioner(seed=s).partition("t", None, None, cluster) for s in range(5)]
    assert first == again
    assert len(set(first)) > 1, "the start is random per seed, as Kafka's per-topic counter is"


def test_round_robin_partitioner_ignores_keys_and_starts_at_zero() -> None:
    cluster = _cluster_with_leaderless_partitions()
    partitioner = RoundRobinPartitioner()
    got = [partitioner.partition("t0", b"same-key", None, cluster) for _ in range(8)]
    assert got == [0, 2, 3, 5, 0, 2, 3, 5]
    other = [partitioner.partition("dead", None, None, cluster) for _ in range(3)]
    assert other == [0, 1, 0], "per-topic counters; all partitions when none is available"


def test_unknown_topic_is_an_error() -> None:
    with pytest.raises(KassignError, match="no partitions"):
        DefaultPartitioner().partition("nope", b"k", None, Cluster({"t": 1}))


# --- bad input (issue #20) -------------------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=40))
def test_murmur2_takes_every_kind_of_bytes_alike(data: bytes) -> None:
    expected = kassign.murmur2(data)
    assert kassign.murmur2(bytearray(data)) == expected
    assert kassign.murmur2(memoryview(data)) == expected
    # a memoryview over wider items still means its bytes, as bytes(view) gives them
    wide = np.frombuffer(data[: len(data) // 4 * 4], dtype=np.int32)
    assert kassign.murmur2(memoryview(wide)) == kassign.murmur2(wide.tobytes())


not_bytes = st.one_of(
    st.integers(-(2**70), 2**70), st.none(), st.booleans(), st.floats(allow_nan=True),
    st.lists(st.integers(0, 255), max_size=4), st.tuples(st.integers(0, 255)),
    st.dictionaries(st.integers(0, 255), st.integers(), max_size=2), st.just(np.int64(3)),
    st.just(np.array([1, 2], dtype=np.uint8)), st.just(object()),
)


@settings(max_examples=100, deadline=None)
@given(not_bytes)
def test_murmur2_refuses_what_is_not_bytes_never_reinterpreting_it(value: object) -> None:
    # bytes(5) is five zero bytes and bytes([1, 2]) is b"\x01\x02": neither is what the caller gave
    with pytest.raises(KassignError, match="murmur2 hashes bytes"):
        kassign.murmur2(value)  # type: ignore[arg-type]


def test_murmur2_still_says_how_to_hash_text() -> None:
    with pytest.raises(KassignError, match=r"encode text first, e.g. key.encode\('utf-8'\)"):
        kassign.murmur2("user-1")  # type: ignore[arg-type]


JAVA_INT_MAX = 2**31 - 1
TOO_MANY = [2**31, np.int64(2**31), np.uint64(2**40), np.uint32(2**31), 2**63, 10**30]


@pytest.mark.parametrize("count", TOO_MANY, ids=repr)
def test_partition_counts_beyond_a_java_int_are_refused(count: object) -> None:
    from kassign.producer.partitioner import partitions_for_clients

    for call in (lambda: kassign.partition_for_key(b"k", count),
                 lambda: kassign.partitions_for_keys([b"k"], count),
                 lambda: partitions_for_clients([b"k"], count, ["java", "sarama:hash"])):
        with pytest.raises(KassignError, match=f"number of partitions must be from 1 to {JAVA_INT_MAX}"):
            call()  # type: ignore[arg-type]


@pytest.mark.parametrize("count", [JAVA_INT_MAX, np.int32(JAVA_INT_MAX), np.uint32(JAVA_INT_MAX), np.int64(12)],
                         ids=repr)
def test_partition_counts_up_to_a_java_int_are_taken(count: object) -> None:
    expected = (kassign.murmur2(b"k") & 0x7FFFFFFF) % int(count)  # type: ignore[call-overload]
    assert kassign.partition_for_key(b"k", count) == expected  # type: ignore[arg-type]
    assert kassign.partitions_for_keys([b"k"], count).tolist() == [expected]  # type: ignore[arg-type]


def test_a_cluster_refuses_partition_counts_kafka_cannot_have() -> None:
    with pytest.raises(KassignError, match=f"from 0 to {JAVA_INT_MAX}"):
        Cluster({"t": 2**31})
    with pytest.raises(KassignError, match=f"from 0 to {JAVA_INT_MAX}"):
        Cluster({"t": -1})
    assert Cluster({"t": np.int64(3)}).partition_count("t") == 3


def test_keyless_records_on_the_largest_topic_do_not_list_every_partition() -> None:
    # no leader data: every partition is available, and the round-robin needs no list of two billion ids
    cluster = Cluster({"huge": JAVA_INT_MAX})
    picked = partition_records(RoundRobinPartitioner(), "huge", [None, None, b"k"], cluster)
    assert picked == [0, 1, 2]
