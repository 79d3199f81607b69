"""``java.util.Random`` in pure Python, bit for bit.

Kafka draws from ``java.util.Random`` wherever it needs chance (the KRaft controller's
striped replica placer, for one), so reproducing Kafka's output for a given seed needs the
same generator. The JDK documents the algorithm as part of the class contract, and it has
not changed since Java 1.0:

- State: 48 bits. ``JavaRandom(seed)`` keeps ``(seed XOR 0x5DEECE66D) mod 2**48``.
- ``next_bits(b)``: state becomes ``(state * 0x5DEECE66D + 0xB) mod 2**48``; the result is
  the top ``b`` bits of the new state, read as a signed 32-bit int.
- ``next_int()``: ``next_bits(32)``.
- ``next_int(bound)``: ``r = next_bits(31)``. A power-of-two bound takes the top bits,
  ``(bound * r) >> 31``. Any other bound takes ``r % bound``, but draws again while
  ``r - r % bound + (bound - 1)`` overflows a signed 32-bit int (the last, incomplete
  stretch of ``bound`` values below 2**31), so every result is equally likely.
- ``next_long()``: ``(next_bits(32) << 32) + next_bits(32)`` in signed 64-bit arithmetic.
- ``next_boolean()``: ``next_bits(1) != 0``; ``next_float()``: ``next_bits(24) / 2**24``;
  ``next_double()``: ``((next_bits(26) << 27) + next_bits(27)) / 2**53``.

``java_shuffle(items, rng)`` is ``java.util.Collections.shuffle(list, rnd)``: from the last
position down to the second, swap position ``i`` with ``rng.next_int(i + 1)``.

Example: ``JavaRandom(42)`` gives ``next_int(10)`` = 0, 3, 8, 4, 0, 5, 5, 8, 9, 3 and
``JavaRandom(0).next_int()`` = -1155484576.

A subclass may override ``next_bits`` (as Kafka's tests do with their ``MockRandom``);
every other draw goes through it, exactly as in Java.
"""

from __future__ import annotations

import secrets
from collections.abc import MutableSequence
from typing import Any

from kassign.core.errors import KassignError

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK48 = (1 << 48) - 1
_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1


def _int32(value: int) -> int:
    """The low 32 bits of ``value`` as a signed Java ``int``."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def java_long(value: int) -> int:
    """The low 64 bits of ``value`` as a signed Java ``long``."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= 1 << 63 else value


def random_seed() -> int:
    """A fresh seed in Java's ``long`` range, for callers that want chance but must report it."""
    return java_long(secrets.randbits(64))


def check_seed(seed: Any) -> int:
    """``seed`` as a Java ``long``, or ``KassignError`` if it is not a whole number in that range."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise KassignError(f"seed must be a whole number, got {seed!r}")
    if not _LONG_MIN <= seed <= _LONG_MAX:
        raise KassignError(f"seed must fit a Java long ({_LONG_MIN} .. {_LONG_MAX}), got {seed}")
    return seed


class JavaRandom:
    """``java.util.Random``: same seed, same numbers, on every platform."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self.set_seed(seed)

    def set_seed(self, seed: int) -> None:
        self._state = (check_seed(seed) ^ _MULTIPLIER) & _MASK48

    def next_bits(self, bits: int) -> int:
        """Java's protected ``next(bits)``: ``bits`` (1..32) pseudo-random bits, as a signed int."""
        self._state = (self._state * _MULTIPLIER + _ADDEND) & _MASK48
        return _int32(self._state >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` (any int) or ``nextInt(bound)`` (0 <= result < bound)."""
        if bound is None:
            return self.next_bits(32)
        if bound <= 0:
            raise ValueError(f"bound must be positive, got {bound}")
        r = self.next_bits(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        r = u % bound
        # Java: while (u - r + m) overflows int, draw u again.
        while u - r + m > 0x7FFFFFFF:
            u = self.next_bits(31)
            r = u % bound
        return r

    def next_long(self) -> int:
        return java_long((self.next_bits(32) << 32) + self.next_bits(32))

    def next_boolean(self) -> bool:
        return self.next_bits(1) != 0

    def next_float(self) -> float:
        return self.next_bits(24) / float(1 << 24)

    def next_double(self) -> float:
        high = self.next_bits(26)
        return ((high << 27) + self.next_bits(27)) * (1.0 / (1 << 53))


def java_shuffle(items: MutableSequence[Any], rng: JavaRandom) -> None:
    """``Collections.shuffle(items, rng)`` in place, drawing exactly as Java does."""
    for i in range(len(items) - 1, 0, -1):
        j = rng.next_int(i + 1)
        items[i], items[j] = items[j], items[i]
