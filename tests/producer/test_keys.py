"""Key serialisation: integer and long keys hash as Kafka's IntegerSerializer/LongSerializer bytes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign.core.errors import KassignError
from kassign.producer.keys import flatten_keys, serialize_key


def test_serialisers_write_big_endian_twos_complement() -> None:
    assert serialize_key(42, "int") == b"\x00\x00\x00\x2a"
    assert serialize_key(-1, "int") == b"\xff\xff\xff\xff"
    assert serialize_key(42, "long") == b"\x00\x00\x00\x00\x00\x00\x00\x2a"
    assert serialize_key(-(2**63), "long") == b"\x80" + b"\x00" * 7
    assert serialize_key("héllo") == "héllo".encode("utf-8")
    assert serialize_key(None, "int") is None


def test_integer_keys_partition_like_their_bytes() -> None:
    for partitioner in ("java", "librdkafka:consistent", "sarama:hash", "kafkajs:legacy"):
        for value in (0, 1, 42, -1, 2**31 - 1, -(2**31)):
            as_int = kassign.partition_for_key(value, 12, partitioner=partitioner, key_type="int")
            assert as_int == kassign.partition_for_key(value.to_bytes(4, "big", signed=True), 12, partitioner=partitioner)
            as_long = kassign.partition_for_key(value, 12, partitioner=partitioner, key_type="long")
            assert as_long == kassign.partition_for_key(value.to_bytes(8, "big", signed=True), 12, partitioner=partitioner)


def test_integer_arrays_infer_int_and_long_and_keep_nulls() -> None:
    values = [7, None, -3, 2**31 - 1]
    expected_int = [kassign.partition_for_key(v, 10, key_type="int") for v in values]
    expected_long = [kassign.partition_for_key(v, 10, key_type="long") for v in values]
    assert expected_int != expected_long
    assert kassign.partitions_for_keys(pa.array(values, pa.int32()), 10).tolist() == expected_int
    assert kassign.partitions_for_keys(pa.array(values, pa.int64()), 10).tolist() == expected_long
    assert kassign.partitions_for_keys(values, 10, key_type="int").tolist() == expected_int
    assert kassign.partitions_for_keys(values, 10, key_type="long").tolist() == expected_long
    plain = [v for v in values if v is not None]
    assert kassign.partitions_for_keys(np.array(plain, np.int32), 10).tolist() == [e for e in expected_int if e != -1]
    assert kassign.partitions_for_keys(np.array(plain, np.int64), 10).tolist() == [e for e in expected_long if e != -1]
    # an int16 column serialised as int on request
    assert kassign.partitions_for_keys(pa.array([7, -3], pa.int16()), 10, key_type="int").tolist() == [
        expected_int[0], expected_int[2]]


def test_a_null_integer_key_hashes_as_empty_where_the_client_hashes_null_keys() -> None:
    got = kassign.partitions_for_keys(pa.array([None, 5], pa.int64()), 12, partitioner="librdkafka:murmur2")
    assert got.tolist() == [kassign.partition_for_key(b"", 12), kassign.partition_for_key(5, 12, key_type="long")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=30))
def test_long_batch_equals_scalar(values: list) -> None:
    batch = kassign.partitions_for_keys(values, 97, partitioner="sarama:crc", key_type="long").tolist()
    assert batch == [kassign.partition_for_key(v, 97, partitioner="sarama:crc", key_type="long") for v in values]


def test_bad_integer_keys_are_one_line_errors() -> None:
    with pytest.raises(KassignError, match="does not fit a Java int"):
        kassign.partition_for_key(2**31, 3, key_type="int")
    with pytest.raises(KassignError, match="does not fit a Java int"):
        kassign.partitions_for_keys(np.array([1, 2**40]), 3, key_type="int")
    with pytest.raises(KassignError, match="does not fit a Java long"):
        kassign.partitions_for_keys([2**70], 3, key_type="long")
    with pytest.raises(KassignError, match="key_type='int'"):
        kassign.partition_for_key(5, 3)
    with pytest.raises(KassignError, match="key #0 is int: pass key_type"):
        kassign.partitions_for_keys([5, 6], 3)
    with pytest.raises(KassignError, match="int16 integers: pass key_type"):
        kassign.partitions_for_keys(pa.array([1], pa.int16()), 3)
    with pytest.raises(KassignError, match="needs integer keys"):
        kassign.partitions_for_keys(pa.array(["a"]), 3, key_type="long")
    with pytest.raises(KassignError, match="key #1 is str, but the key type is int"):
        kassign.partitions_for_keys([1, "2"], 3, key_type="int")
    with pytest.raises(KassignError, match="unknown key type 'short'"):
        flatten_keys([b"a"], "short")


def test_dictionary_encoded_and_chunked_arrow_keys_hash_like_plain_ones() -> None:
    import pyarrow as pa

    import kassign

    plain = pa.array(["user-1", "order-7", None, "user-1"])
    expected = kassign.partitions_for_keys(plain, 12).tolist()
    assert kassign.partitions_for_keys(plain.dictionary_encode(), 12).tolist() == expected
    chunked = pa.chunked_array([plain[:2].dictionary_encode(), plain[2:].dictionary_encode()])
    assert kassign.partitions_for_keys(chunked, 12).tolist() == expected
    ints = pa.array([5, 7], pa.int64())
    assert kassign.partitions_for_keys(ints.dictionary_encode(), 12).tolist() == kassign.partitions_for_keys(ints, 12).tolist()


# --- key batches of the wrong shape (issue #20) -----------------------------------------------------

@pytest.mark.parametrize(("keys", "message"), [
    (5, "keys must be a list"),
    (None, "keys must be a list"),
    (1.5, "keys must be a list"),
    (bytearray(b"abc"), "for one key use partition_for_key"),
    (memoryview(b"abc"), "for one key use partition_for_key"),
    ({b"a": 1}, "not a dict"),
    ({b"a", b"b"}, "a set has no order"),
    (frozenset({b"a"}), "a set has no order"),
    (np.array([[1, 2]], dtype=np.int32), "one-dimensional"),
    (np.array(5, dtype=np.int32), "one-dimensional"),
    (np.array([1.5]), "numpy float64 array"),
    (np.array([True]), "numpy bool array"),
    (np.array([1j]), "numpy complex128 array"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "numpy datetime64"),
    ([b"a", 1.5], "key #1 is float"),
    ([1.5], "key #0 is float"),
    ([b"a", [1, 2]], "key #1 is list"),
    ([np.array([1, 2], dtype=np.uint8)], "key #0 is ndarray"),
    ([b"a", np.float64(2.0)], "key #1 is float64"),
    ([True], "key #0 is bool"),
    ([5], "key #0 is int: pass key_type"),
    ([np.int64(5)], "key #0 is int: pass key_type"),
])
def test_key_batches_of_the_wrong_shape_are_one_line_errors(keys: object, message: str) -> None:
    with pytest.raises(KassignError, match=message):
        kassign.partitions_for_keys(keys, 12)


@pytest.mark.parametrize(("keys", "key_type", "message"), [
    (np.array([[1, 2]], dtype=np.int32), "long", "one-dimensional"),
    (np.array([1.5]), "long", "numpy float64 array"),
    (np.array([True]), "int", "numpy bool array"),
    ([1.5], "int", "key #0 is float, but the key type is int"),
])
def test_integer_key_batches_of_the_wrong_dtype_are_refused(keys: object, key_type: str, message: str) -> None:
    with pytest.raises(KassignError, match=message):
        kassign.partitions_for_keys(keys, 12, key_type=key_type)


def test_byte_like_keys_in_a_batch_hash_as_their_bytes() -> None:
    wide = np.array([1, 2, 3], dtype=np.int32)  # a view of 12 bytes whose len() is 3
    keys = [b"ab", bytearray(b"cd"), memoryview(b"ef"), memoryview(wide), np.bytes_(b"gh"), None]
    expected = [kassign.partition_for_key(k, 97) for k in keys]
    assert kassign.partitions_for_keys(keys, 97).tolist() == expected
    assert expected[3] == kassign.partition_for_key(wide.tobytes(), 97)
    # alone in a list, with no other kind of key beside it, the view is still its 12 bytes
    assert kassign.partitions_for_keys([memoryview(wide)], 97).tolist() == [expected[3]]
    assert kassign.partitions_for_keys([np.str_("ab")], 97).tolist() == [kassign.partition_for_key("ab", 97)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=12), st.sampled_from(["bytes", "bytearray", "memoryview", "str"])),
                max_size=12))
def test_mixed_byte_like_batches_equal_the_scalar_path(pairs: list) -> None:
    make = {"bytes": bytes, "bytearray": bytearray, "memoryview": memoryview,
            "str": lambda b: b.decode("latin-1")}
    keys = [make[kind](data) for data, kind in pairs]
    assert kassign.partitions_for_keys(keys, 31).tolist() == [kassign.partition_for_key(k, 31) for k in keys]


def test_text_and_byte_numpy_arrays_hash_their_elements() -> None:
    assert kassign.partitions_for_keys(np.array(["ab", "c"]), 12).tolist() == \
        [kassign.partition_for_key(k, 12) for k in ("ab", "c")]
    assert kassign.partitions_for_keys(np.array([b"ab", b"c"]), 12).tolist() == \
        [kassign.partition_for_key(k, 12) for k in (b"ab", b"c")]
    assert kassign.partitions_for_keys(np.array([b"ab", None], dtype=object), 12).tolist() == \
        [kassign.partition_for_key(b"ab", 12), -1]
