"""The hash rules themselves: published values, independent oracles, and Python == numba on every kind."""

from __future__ import annotations

import base64
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.producer import hashing as H
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
    from kassign.producer.kernels import hash_loop

    data = np.frombuffer(b"".join(keys), dtype=np.uint8)
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([len(k) for k in keys], out=offsets[1:])
    out = np.empty(len(keys), dtype=np.int64)
    hash_loop(data, offsets, kind, fold, out)
    assert out.tolist() == [H.fold_hash(fold, H.hash_bytes(kind, k)) for k in keys]


def test_the_parallel_batch_path_equals_the_serial_one_with_and_without_the_modulus() -> None:
    from kassign.producer import kernels as _kernels

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


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 2**31 - 1))
def test_the_lockstep_modulo_is_exact(position: int, modulus: int) -> None:
    from kassign.producer.kernels import reduce_position

    assert reduce_position(position, modulus, 1.0 / modulus) == position % modulus


@pytest.mark.parametrize("modulus", [1, 2, 3, 7, 100, 65537, 2**31 - 2, 2**31 - 1])
def test_the_lockstep_modulo_at_multiples_of_the_modulus(modulus: int) -> None:
    # where position / modulus is a whole number the float quotient may land just below it
    from kassign.producer.kernels import reduce_position

    top = (2**32 - 1) // modulus
    for k in (0, 1, 2, top // 2, top - 1, top):
        for position in (k * modulus - 1, k * modulus, k * modulus + 1):
            if 0 <= position < 2**32:
                assert reduce_position(position, modulus, 1.0 / modulus) == position % modulus


def _tile_shaped_keys(draw_lengths: list[int], seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    offsets = np.zeros(len(draw_lengths) + 1, dtype=np.int64)
    np.cumsum(draw_lengths, out=offsets[1:])
    return rng.integers(0, 256, size=int(offsets[-1]), dtype=np.uint8), offsets


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 41), st.integers(1, 3 * 512 + 7), st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 60)),
       max_size=6), st.integers(0, 2**31 - 1), st.integers(0, 1000))
def test_murmur2_lockstep_equals_the_key_by_key_loop(width: int, count: int, outliers: list[tuple[int, int]],
                                                     modulus: int, seed: int) -> None:
    """Tiles of one key length (a multiple of 4 or not), tiles broken by a few keys of other lengths,
    partial last tiles, with and without the modulo."""
    from kassign.producer import kernels as _kernels

    lengths = [width] * count
    for at, length in outliers:
        lengths.insert(min(at, len(lengths)), length)
    data, offsets = _tile_shaped_keys(lengths, seed)
    for fold in (H.FOLD_SIGN_BIT, H.FOLD_UNSIGNED, H.FOLD_ABS):
        expected = np.empty(len(lengths), dtype=np.int64)
        _kernels.hash_loop_serial(data, offsets, H.MURMUR2, fold, modulus, expected)
        got = np.empty(len(lengths), dtype=np.int64)
        _kernels.murmur2_lockstep(data, offsets, 0, len(lengths), fold, modulus, got)
        assert (got == expected).all()


def test_murmur2_lockstep_on_arrow_slices_with_int32_offsets() -> None:
    """An Arrow slice's offsets start past 0 and are int32; the first keys of a buffer are shorter
    than the 4-byte window the tail is read through."""
    import pyarrow as pa

    from kassign.producer.partitioner import hashes_for_keys

    rng = np.random.default_rng(11)
    keys = [b"", b"a", b"ab", b"abc"] + [rng.bytes(int(n)) for n in rng.integers(0, 23, 3000)]
    for start in (0, 1, 2, 5, 513):
        sliced = pa.array(keys, pa.binary()).slice(start)
        expected = [H.hash_bytes(H.MURMUR2, k) for k in keys[start:]]
        assert hashes_for_keys(sliced).view(np.uint32).tolist() == expected


def test_the_compiled_cache_goes_stale_when_a_rule_changes(tmp_path) -> None:
    """numba caches a compiled function against its own file; the batch kernels compile hashing's
    rules into themselves, so a changed rule must not keep running from the cache."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import kassign

    package = tmp_path / "kassign"
    shutil.copytree(Path(kassign.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    script = ("import numpy as np\nfrom kassign.producer.kernels import hash_loop\nout = np.empty(1, np.int64)\n"
              "hash_loop(np.frombuffer(b'user-1', np.uint8), np.array([0, 6]), 0, 1, out)\nprint(out[0])\n")

    def run() -> int:
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)})
        assert done.returncode == 0, done.stderr
        return int(done.stdout)

    assert run() == run() == 1404122828  # the second run reads the cache
    rules = package / "producer" / "hashing.py"
    rules.write_text(rules.read_text().replace("MURMUR2_SEED = 0x9747B28C", "MURMUR2_SEED = 0x9747B28D"))
    assert run() != 1404122828
