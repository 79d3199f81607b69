"""numba builds of ``kassign.hashing`` for the batch path (imported on first batch call only,
so the CLI and the scalar API never pay numba's import).

The rules are not restated here: ``hashing``'s functions are compiled as they are. The batch
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
hash_loop = numba.njit(**_JIT)(_bound(hashing.hash_loop, SPANS))
