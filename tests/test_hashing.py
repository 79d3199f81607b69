"""The hash rules themselves: published values, independent oracles, and Python == numba on every kind."""

from __future__ import annotations

import base64
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign import hashing as H
from tests.conftest import load_vectors

KINDS = [H.MURMUR2, H.CRC32, H.FNV1A, H.KAFKAJS_LEGACY]


@pytest.mark.parametrize(("data", "expected"), [
    (b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968),  # the FNV authors' published test values
])
def test_fnv1a_published_values(data: bytes, expected: int) -> None:
    assert H.hash_bytes(H.FNV1A, data) == expected


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80))
def test_crc32_is_zlibs(data: bytes) -> None:
    assert H.hash_bytes(H.CRC32, data) == zlib.crc32(data)


def test_murmur2_matches_kafkas_vectors() -> None:
    for line in load_vectors("murmur2.jsonl"):
        assert H.hash_bytes(H.MURMUR2, base64.b64decode(line["key_b64"])) == line["murmur2"] & H.MASK32


def test_kafkajs_legacy_differs_from_murmur2_because_of_float64_products() -> None:
    # The empty key already differs: seed * M exceeds 2**53, so the float product loses low bits.
    assert H.hash_bytes(H.KAFKAJS_LEGACY, b"") != H.hash_bytes(H.MURMUR2, b"")
    # Spelled out for b"": h = int32(seed) = -1756908916; the two mixing steps as JavaScript runs them.
    h = 0x9747B28C - (1 << 32)
    h = ((h & H.MASK32) ^ H.SIGN32) - H.SIGN32 ^ ((h & H.MASK32) >> 13)
    h = int(float(h) * float(H.MURMUR2_M))
    h = ((h & H.MASK32) ^ H.SIGN32) - H.SIGN32 ^ ((h & H.MASK32) >> 15)
    assert H.hash_bytes(H.KAFKAJS_LEGACY, b"") == h & H.MASK32


def test_fold_rules_at_the_edges() -> None:
    assert H.fold_hash(H.FOLD_SIGN_BIT, 0x80000000) == 0
    assert H.fold_hash(H.FOLD_ABS, 0x80000000) == 2**31  # |int32 min| as a uint32, as librdkafka and Sarama get it
    assert H.fold_hash(H.FOLD_ABS, 0xFFFFFFFF) == 1
    assert H.fold_hash(H.FOLD_UNSIGNED, 0xFFFFFFFF) == 0xFFFFFFFF
    assert H.fold_hash(H.FOLD_ABS, 5) == H.fold_hash(H.FOLD_SIGN_BIT, 5) == H.fold_hash(H.FOLD_UNSIGNED, 5) == 5


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=70), min_size=1, max_size=40), st.sampled_from(KINDS),
       st.sampled_from([H.FOLD_SIGN_BIT, H.FOLD_UNSIGNED, H.FOLD_ABS]))
def test_numba_kernel_equals_the_python_rules(keys: list[bytes], kind: int, fold: int) -> None:
    from kassign._kernels import hash_loop

    data = np.frombuffer(b"".join(keys), dtype=np.uint8)
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([len(k) for k in keys], out=offsets[1:])
    out = np.empty(len(keys), dtype=np.int64)
    hash_loop(data, offsets, kind, fold, out)
    assert out.tolist() == [H.fold_hash(fold, H.hash_bytes(kind, k)) for k in keys]


def test_the_parallel_batch_path_equals_the_serial_one_with_and_without_the_modulus() -> None:
    from kassign import _kernels

    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 40, size=_kernels.PARALLEL_MIN_KEYS * 3 + 17)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = rng.integers(0, 256, size=int(offsets[-1]), dtype=np.uint8)
    for kind in KINDS:
        serial = np.empty(len(lengths), dtype=np.int64)
        _kernels.hash_loop_serial(data, offsets, kind, H.FOLD_ABS, 0, serial)
        parallel = np.empty(len(lengths), dtype=np.int64)
        _kernels.hash_loop(data, offsets, kind, H.FOLD_ABS, parallel)
        assert (parallel == serial).all()
        reduced = np.empty(len(lengths), dtype=np.int32)
        _kernels.hash_loop(data, offsets, kind, H.FOLD_ABS, reduced, modulus=37)
        assert (reduced == serial % 37).all()
