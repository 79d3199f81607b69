"""numba builds of ``kassign.hashing`` for the batch path (imported on first batch call only,
so the CLI and the scalar API never pay numba's import).

The rules are not restated here: ``hashing``'s functions are compiled as they are. Big
batches are split into contiguous slices hashed on every core (``prange``); each slice runs
the same serial loop. The batch
loop ``hashing.hash_loop`` names the span functions as globals; it is compiled from its own
code object with those names bound to the compiled spans. Compiled code is cached on disk
against ``hashing.py``'s timestamp (numba's cache is per source file), so editing the rules
recompiles everything that inlines them.
"""

from __future__ import annotations

import types

import numba

from kassign import hashing

_JIT = {"cache": True, "nogil": True}
_SPAN_NAMES = ("murmur2_span", "crc32_span", "fnv1a_span", "kafkajs_legacy_span", "fold_hash")


def _bound(function: types.FunctionType, names: dict) -> types.FunctionType:
    """``function`` with some globals rebound (same code, so numba still caches it by hashing.py)."""
    scope = dict(function.__globals__)
    scope.update(names)
    rebound = types.FunctionType(function.__code__, scope, function.__name__, function.__defaults__,
                                 function.__closure__)
    rebound.__module__ = function.__module__
    rebound.__qualname__ = function.__qualname__
    return rebound


SPANS = {name: numba.njit(**_JIT)(getattr(hashing, name)) for name in _SPAN_NAMES}
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
def _hash_loop_chunks(data, offsets, kind, fold, modulus, out, chunks):
    """The serial loop over ``chunks`` contiguous slices of the keys, one per thread."""
    n = offsets.shape[0] - 1
    size = (n + chunks - 1) // chunks
    for c in numba.prange(chunks):
        lo = c * size
        hi = min(n, lo + size)
        if lo < hi:
            hash_loop_serial(data, offsets[lo:hi + 1], kind, fold, modulus, out[lo:hi])


def hash_loop(data, offsets, kind, fold, out, modulus: int = 0) -> None:
    """``hashing.hash_loop`` over every key, on all cores when the batch is big enough to pay for it."""
    n = len(offsets) - 1
    threads = numba.get_num_threads()
    if n < PARALLEL_MIN_KEYS or threads < 2:
        hash_loop_serial(data, offsets, kind, fold, modulus, out)
    else:
        _hash_loop_chunks(data, offsets, kind, fold, modulus, out, threads * 4)
