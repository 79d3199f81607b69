"""Every producer client's partitioner: the real libraries' choices, line by line, on scalar and batch paths."""

from __future__ import annotations

import base64
import math
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign.producer import clients
from kassign.producer.clients import NAMES, UnknownPartitionerError, resolve
from kassign.core.errors import KassignError
from tests.conftest import load_vectors, vector_params

VECTORS = "partition-clients.jsonl"


def _name(line: dict) -> str:
    return f"{line['client']}:{line['partitioner']}"


def _key(line: dict) -> bytes | None:
    return None if line["key_b64"] is None else base64.b64decode(line["key_b64"])


@pytest.mark.parametrize("line", vector_params(VECTORS))
def test_scalar_matches_the_client_library(line: dict) -> None:
    assert kassign.partition_for_key(_key(line), line["partitions"], partitioner=_name(line)) == line["partition"]


def _groups() -> dict[tuple[str, int], list[dict]]:
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for line in load_vectors(VECTORS):
        groups[_name(line), line["partitions"]].append(line)
    return groups


def test_batch_matches_every_vector_line_as_lists_and_arrow_arrays() -> None:
    checked = 0
    for (name, n), lines in _groups().items():
        keys = [_key(line) for line in lines]
        expected = [line["partition"] for line in lines]
        got_list = kassign.partitions_for_keys(keys, n, partitioner=name)
        assert got_list.dtype == np.int32 and got_list.tolist() == expected, (name, n)
        for arrow_type in (pa.binary(), pa.large_binary()):
            assert kassign.partitions_for_keys(pa.array(keys, arrow_type), n, partitioner=name).tolist() == expected
        checked += len(lines)
    assert checked == len(load_vectors(VECTORS)) == 1508


def test_vectors_cover_every_partitioner_null_and_empty_keys() -> None:
    lines = load_vectors(VECTORS)
    assert {_name(line) for line in lines} == {n for n in NAMES if not n.startswith(("sarama", "java"))}
    assert any(line["key_b64"] is None for line in lines) and any(line["key_b64"] == "" for line in lines)


# --- Sarama: no vectors, so hand-computed values from its documented formulas ---------------------------------
#
# b"foobar": FNV-1a 0xbf9cf968 = 3214735720 (the FNV authors' test value), as int32 -1080231576;
# CRC-32 2666930069 (zlib); murmur2 -790332482 (Kafka's), & 0x7fffffff = 1357151166. With 7 partitions:
#   hash           abs(-1080231576 % 7) = abs(-4) = 4       (Go's % truncates toward zero)
#   reference-abs  (-1080231576 & 0x7fffffff) % 7 = 1067252072 % 7 = 5
#   hash-unsigned  3214735720 % 7 = 0
#   crc            2666930069 % 7 = 6
#   murmur2        1357151166 % 7 = 0
# b"a": FNV-1a 0xe40c292c = 3826002220, int32 -468965076. With 12 partitions:
#   hash 468965076 % 12 = 0;  reference-abs 1678518572 % 12 = 8;  hash-unsigned 3826002220 % 12 = 4.
SARAMA_CASES = [
    ("sarama:hash", b"foobar", 7, 4), ("sarama:reference-abs", b"foobar", 7, 5),
    ("sarama:hash-unsigned", b"foobar", 7, 0), ("sarama:crc", b"foobar", 7, 6), ("sarama:murmur2", b"foobar", 7, 0),
    ("sarama:hash", b"a", 12, 0), ("sarama:reference-abs", b"a", 12, 8), ("sarama:hash-unsigned", b"a", 12, 4),
    # the empty key is hashed (Sarama only treats a nil key as missing): FNV-1a(b"") = 0x811c9dc5,
    # int32 -2128831035 -> hash 2128831035 % 12 = 3; CRC-32(b"") = 0 -> 0.
    ("sarama:hash", b"", 12, 3), ("sarama:crc", b"", 12, 0),
]


@pytest.mark.parametrize(("name", "key", "n", "expected"), SARAMA_CASES)
def test_sarama_hand_computed(name: str, key: bytes, n: int, expected: int) -> None:
    assert kassign.partition_for_key(key, n, partitioner=name) == expected
    assert kassign.partitions_for_keys([key], n, partitioner=name).tolist() == [expected]


def _go_remainder(a: int, n: int) -> int:
    """Go's int32 % : the sign of the dividend (truncated division)."""
    return int(math.copysign(abs(a) % n, a))


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=40), st.integers(min_value=1, max_value=2**31 - 1))
def test_sarama_hash_is_its_go_expression(key: bytes, n: int) -> None:
    h = clients.PARTITIONERS["sarama:hash"].hash32(key)
    signed = h - 2**32 if h >= 2**31 else h
    assert kassign.partition_for_key(key, n, partitioner="sarama:hash") == abs(_go_remainder(signed, n))
    assert kassign.partition_for_key(key, n, partitioner="sarama:reference-abs") == (signed & 0x7FFFFFFF) % n
    assert kassign.partition_for_key(key, n, partitioner="sarama:hash-unsigned") == h % n


def test_int32_min_hash_under_abs_folds() -> None:
    # No short key has FNV-1a exactly 0x80000000, so check the rule on the hash: Go's abs(int32 % n) and
    # librdkafka's (uint32)(-h) both give 2**31 % n.
    for n in (1, 3, 7, 12, 1000):
        assert abs(_go_remainder(-(2**31), n)) == 2**31 % n
    from kassign.producer import hashing

    assert hashing.fold_hash(hashing.FOLD_ABS, 0x80000000) % 7 == 2**31 % 7


# --- null and empty keys -------------------------------------------------------------------------------------

NULL_KEY = {  # 12 partitions: the fixed partition, or -1 where the client picks one itself
    "java": -1, "librdkafka:consistent": 0, "librdkafka:consistent_random": -1, "librdkafka:murmur2": 9,
    "librdkafka:murmur2_random": -1, "librdkafka:fnv1a": 3, "librdkafka:fnv1a_random": -1, "kafkajs:default": -1,
    "kafkajs:legacy": -1, "kafkajs:java-compatible": -1, "sarama:hash": -1, "sarama:reference-abs": -1,
    "sarama:hash-unsigned": -1, "sarama:crc": -1, "sarama:murmur2": -1,
}


def test_null_keys_follow_each_clients_rule() -> None:
    assert set(NULL_KEY) == set(NAMES)
    for name, expected in NULL_KEY.items():
        assert kassign.partition_for_key(None, 12, partitioner=name) == expected, name
        batch = kassign.partitions_for_keys([b"x", None], 12, partitioner=name).tolist()
        assert batch[1] == expected, name
        assert kassign.partitions_for_keys(pa.array([b"x", None], pa.binary()), 12, partitioner=name).tolist() == batch


def test_only_consistent_random_leaves_empty_keys_to_chance() -> None:
    for name in NAMES:
        got = kassign.partition_for_key(b"", 12, partitioner=name)
        assert (got == -1) == (name == "librdkafka:consistent_random"), name
        assert kassign.partitions_for_keys([b""], 12, partitioner=name).tolist() == [got]


def test_worked_examples_of_the_module_docstring() -> None:
    expected = {"java": 9, "librdkafka:consistent": 0, "librdkafka:fnv1a": 5, "kafkajs:legacy": 6,
                "sarama:hash": 5, "sarama:reference-abs": 3, "sarama:hash-unsigned": 11, "sarama:crc": 0}
    for name, partition in expected.items():
        assert kassign.partition_for_key(b"user-8", 12, partitioner=name) == partition
        assert f"-> {partition}" in clients.__doc__


# --- names and errors ----------------------------------------------------------------------------------------

def test_names_resolve_and_bad_names_list_the_valid_ones() -> None:
    assert resolve(None).name == resolve("java").name == resolve(" Java ").name == resolve("java:default").name
    assert [c.name for c in clients.resolve_list("java, sarama:hash")] == ["java", "sarama:hash"]
    with pytest.raises(UnknownPartitionerError, match="unknown partitioner 'sarama:fnv'.*librdkafka:consistent_random"):
        kassign.partition_for_key(b"k", 3, partitioner="sarama:fnv")
    with pytest.raises(KassignError, match="named twice"):
        clients.resolve_list("java,java")
    with pytest.raises(KassignError, match="no partitioner named"):
        clients.resolve_list(" , ")
    assert issubclass(UnknownPartitionerError, KassignError)


# --- properties ----------------------------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=30)), max_size=25), st.integers(min_value=1, max_value=5000),
       st.sampled_from(NAMES))
def test_every_result_is_in_range_and_batch_equals_scalar(keys: list, n: int, name: str) -> None:
    batch = kassign.partitions_for_keys(keys, n, partitioner=name).tolist()
    assert batch == [kassign.partition_for_key(k, n, partitioner=name) for k in keys]
    for key, partition in zip(keys, batch):
        assert 0 <= partition < n or (partition == -1 and not resolve(name).hashes(key))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.integers(min_value=1, max_value=2**31 - 1))
def test_java_and_librdkafka_murmur2_agree_on_every_non_null_key(key: bytes, n: int) -> None:
    java = kassign.partition_for_key(key, n)
    assert java == kassign.partition_for_key(key, n, partitioner="librdkafka:murmur2")
    assert java == kassign.partition_for_key(key, n, partitioner="kafkajs:default")
    assert java == kassign.partition_for_key(key, n, partitioner="sarama:murmur2")
