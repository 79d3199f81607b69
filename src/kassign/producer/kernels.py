"""numba builds of ``kassign.producer.hashing`` for the batch path (imported on first batch call only,
so the CLI and the scalar API never pay numba's import). Everything here works on Arrow's
flat layout: one uint8 buffer of key bytes and an int32 or int64 offsets array.

The rules are not restated here: ``hashing``'s functions are compiled as they are. Big
batches are split into contiguous slices hashed on every core (``prange``); each slice runs
the same serial loop. The batch
loop ``hashing.hash_loop`` names the span functions as globals; it is compiled from its own
code object with those names bound to the compiled spans. Compiled code is cached on disk
against ``hashing.py``'s contents (numba's cache is per source file), so editing the rules
recompiles everything that inlines them; the functions written here inline those rules too, so
their cache is checked against both files (``_cache_follows_the_rules``).

murmur2, the hash nearly every batch asks for, runs in lockstep instead: a tile of
``TILE`` keys advances one 4-byte block at a time, every key of the tile together, so the
compiler turns the block step (``hashing.murmur2_mix``) into vector instructions, one gather
and three 32-bit multiplies for 16 keys at once under AVX-512 (8 under AVX2). Java's
producer hashes one key at a time, each block waiting on the previous multiply. Blocks
that every key of the tile has go in lockstep; longer keys' extra blocks go in a masked
lockstep (each key mixes block k in only if it has one), so keys of equal length
(fixed-width ids, UUIDs) gain the most and mixed lengths still share their blocks. The tail bytes, the final avalanche
(``hashing.murmur2_tail``, ``murmur2_avalanche``), the fold and the modulo run in lockstep too; the modulo by
the partition count goes through a float64 reciprocal with an exact one-step correction,
because vector units have no integer division.

Tiles: at 512 keys the running hashes (2 KiB) stay in L1 while a tile's blocks stream by.
"""

from __future__ import annotations

import functools
import hashlib
import sys
import types
from pathlib import Path

import numba
import numpy as np
from llvmlite import ir
from numba.core import types as nbtypes
from numba.core.compiler import Compiler
from numba.extending import intrinsic

from kassign.producer import hashing


def _cache_follows_the_rules() -> None:
    """Make numba's on-disk cache of this module and of ``hashing`` go stale when either file changes.

    numba checks a cached function against the source file it was written in, and a function here
    compiles ``hashing``'s rules into itself: with only that check, a changed rule would keep
    running from the cache. Each of numba's cache locators is wrapped, for these two files, so its
    freshness stamp covers both."""
    try:
        from numba.core.caching import CacheImpl
    except ImportError:  # pragma: no cover - a numba without the locator list keeps its own check
        return
    files = (Path(__file__).resolve(), Path(hashing.__file__).resolve())

    def wrapped(base: type) -> type:
        class BothFiles(base):
            covers_the_rules = True

            @classmethod
            def from_function(cls, py_func, py_file):
                if Path(py_file).resolve() not in files:
                    return None
                return super().from_function(py_func, py_file)

            def get_source_stamp(self):
                return super().get_source_stamp(), tuple(_content_digest(path) for path in files)

        return BothFiles

    if not any(getattr(locator, "covers_the_rules", False) for locator in CacheImpl._locator_classes):
        CacheImpl._locator_classes[:0] = [wrapped(locator) for locator in CacheImpl._locator_classes]


def _content_digest(path: Path) -> bytes:
    stat = path.stat()
    return _digest_of(path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _digest_of(path: Path, mtime_ns: int, size: int) -> bytes:
    return hashlib.sha256(path.read_bytes()).digest()


_cache_follows_the_rules()
_JIT = {"cache": True, "nogil": True}
_SPAN_NAMES = ("murmur2_span", "crc32_span", "fnv1a_span", "kafkajs_legacy_span", "fold_hash")
_MURMUR2_STEPS = ("murmur2_mix", "murmur2_tail_word", "murmur2_tail", "murmur2_avalanche")


def _bound(function: types.FunctionType, names: dict) -> types.FunctionType:
    """``function`` with some globals rebound (same code, so numba still caches it by hashing.py)."""
    scope = dict(function.__globals__)
    scope.update(names)
    rebound = types.FunctionType(function.__code__, scope, function.__name__, function.__defaults__,
                                 function.__closure__)
    rebound.__module__ = function.__module__
    rebound.__qualname__ = function.__qualname__
    return rebound


STEPS = {name: numba.njit(inline="always", **_JIT)(getattr(hashing, name)) for name in _MURMUR2_STEPS}
SPANS = {name: numba.njit(**_JIT)(_bound(getattr(hashing, name), STEPS)) for name in _SPAN_NAMES}
hash_loop_serial = numba.njit(**_JIT)(_bound(hashing.hash_loop, SPANS))

_fold_hash = SPANS["fold_hash"]


@numba.njit(**_JIT)
def fold_loop(hashes, fold, modulus, out):
    """``out[i] = fold_hash(fold, hashes[i]) % modulus``: one client's partitions from hashes computed once."""
    for i in range(hashes.shape[0]):
        out[i] = _fold_hash(fold, hashes[i]) % modulus


# Below this many keys one thread is quicker than starting the others.
PARALLEL_MIN_KEYS = 1 << 16


@numba.njit(parallel=True, **_JIT)
def _in_slices(data, offsets, kind, fold, modulus, out, chunks, lockstep):
    """The serial loop (murmur2 in lockstep where ``lockstep``) over ``chunks`` contiguous slices of the
    keys, one per thread."""
    n = offsets.shape[0] - 1
    size = (n + chunks - 1) // chunks
    for c in numba.prange(chunks):
        lo = c * size
        hi = min(n, lo + size)
        if lo < hi:
            if lockstep:
                murmur2_lockstep(data, offsets, lo, hi, fold, modulus, out)
            else:
                hash_loop_serial(data, offsets[lo:hi + 1], kind, fold, modulus, out[lo:hi])


def hash_loop(data, offsets, kind, fold, out, modulus: int = 0) -> None:
    """``hashing.hash_loop`` over every key, on all cores when the batch is big enough to pay for it
    (murmur2 in lockstep tiles, see the module doc)."""
    n = len(offsets) - 1
    threads = numba.get_num_threads()
    lockstep = kind == hashing.MURMUR2 and LITTLE_ENDIAN
    if n < PARALLEL_MIN_KEYS or threads < 2:
        if lockstep:
            murmur2_lockstep(data, offsets, 0, n, fold, modulus, out)
        else:
            hash_loop_serial(data, offsets, kind, fold, modulus, out)
    else:
        _in_slices(data, offsets, kind, fold, modulus, out, threads * 4, lockstep)


# --- murmur2 in lockstep (see the module doc) -------------------------------------------------

TILE = 512
# the block loads read 4 bytes as one little-endian word; elsewhere the per-key loop serves
LITTLE_ENDIAN = sys.byteorder == "little"
_mix = STEPS["murmur2_mix"]
_tail_word = STEPS["murmur2_tail_word"]
_tail = STEPS["murmur2_tail"]
_avalanche = STEPS["murmur2_avalanche"]


@intrinsic
def _load_u32(typingctx, data, position):
    """The 4 bytes at ``data[position]`` as one native (little-endian) uint32, at any alignment."""
    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        address = builder.gep(array.data, [args[1]])
        return builder.load(builder.bitcast(address, ir.IntType(32).as_pointer()), align=1)

    return nbtypes.uint32(data, position), codegen


class _NoAliasCompiler(Compiler):
    """numba's pipeline, with the arrays a function takes promised not to overlap.

    Without the promise the compiler must assume that writing a running hash could change key
    bytes that a gather reads at addresses it cannot bound, and keeps the block loop scalar.
    Only for functions whose arrays are distinct by construction."""

    def __init__(self, typingctx, targetctx, library, args, return_type, flags, locals):
        flags.noalias = True
        super().__init__(typingctx, targetctx, library, args, return_type, flags, locals)


@numba.njit(pipeline_class=_NoAliasCompiler, **_JIT)
def _shared_blocks(data, offsets, first, count, blocks, hashes):
    """Blocks ``0..blocks-1`` of keys ``first..first+count-1``, every key at once per block."""
    for block in range(blocks):
        for i in range(count):
            key = first + i
            hashes[i] = np.uint32(_mix(np.int64(hashes[i]), np.int64(_load_u32(data, offsets[key] + 4 * block))))


@numba.njit(pipeline_class=_NoAliasCompiler, **_JIT)
def _finish_tile(first, count, fold, modulus, inverse, hashes, out):
    """Avalanche, fold and modulo for a tile's keys (each loop free of branches that differ by key)."""
    for i in range(count):
        hashes[i] = np.uint32(_avalanche(np.int64(hashes[i])))
    if modulus > 0:
        for i in range(count):
            out[first + i] = reduce_position(np.int64(_fold_hash(fold, np.int64(hashes[i]))), modulus, inverse)
    else:
        for i in range(count):
            out[first + i] = _fold_hash(fold, np.int64(hashes[i]))


@numba.njit(inline="always", **_JIT)
def reduce_position(position, modulus, inverse):
    """``position % modulus`` for 0 <= position < 2**32 and modulus < 2**31, ``inverse`` = 1 / modulus.

    The float64 quotient is never above the true one (that would take (q + 1) * modulus > 2**52)
    and at most one below it (at exact multiples, where 1 / modulus rounded down), so one
    correction makes it exact."""
    rest = position - np.int64(np.float64(position) * inverse) * modulus
    if rest >= modulus:
        rest -= modulus
    return rest


@numba.njit(**_JIT)
def murmur2_lockstep(data, offsets, lo, hi, fold, modulus, out):
    """``out[i]`` for keys ``lo..hi-1`` as ``hash_loop`` gives them for murmur2, a tile at a time."""
    hashes = np.empty(TILE, dtype=np.uint32)
    inverse = 1.0 / modulus if modulus > 0 else 0.0
    seed = np.uint32(hashing.MURMUR2_SEED)
    for first in range(lo, hi, TILE):
        count = min(TILE, hi - first)
        width = offsets[first + 1] - offsets[first]
        common = 1 << 30
        longest = 0
        ragged = 0
        for i in range(count):
            length = offsets[first + i + 1] - offsets[first + i]
            hashes[i] = seed ^ np.uint32(length)
            common = min(common, length >> 2)
            longest = max(longest, length >> 2)
            ragged |= length ^ width
        _shared_blocks(data, offsets, first, count, common, hashes)
        if ragged != 0 or width & 3 != 0:  # keys of one length, a multiple of 4, are done
            _own_blocks_and_tails(data, offsets, first, count, common, longest, hashes)
        _finish_tile(first, count, fold, modulus, inverse, hashes, out)


@numba.njit(pipeline_class=_NoAliasCompiler, **_JIT)
def _own_blocks_and_tails(data, offsets, first, count, common, longest, hashes):
    """What is left of each key after the tile's shared blocks: blocks ``common..longest-1``, each
    mixed in only where the key has it (a masked lockstep), then every key's tail bytes."""
    for block in range(common, longest):
        for i in range(count):
            key = first + i
            start = offsets[key]
            if block < (offsets[key + 1] - start) >> 2:
                hashes[i] = np.uint32(_mix(np.int64(hashes[i]), np.int64(_load_u32(data, start + 4 * block))))
    for i in range(count):
        key = first + i
        end = offsets[key + 1]
        tail = (end - offsets[key]) & 3
        if end >= 4:  # the 4 bytes ending the key, shifted down to its tail (earlier bytes may be another key's)
            tail_word = np.int64(_load_u32(data, end - 4)) >> (32 - 8 * tail)
        else:  # the buffer's first bytes
            tail_word = np.int64(_tail_word(data, end - tail, tail))
        hashes[i] = np.uint32(_tail(np.int64(hashes[i]), tail_word, tail))
