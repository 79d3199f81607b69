"""Java's order and hash of strings, where Kafka's output depends on them (no numba, no numpy: a light import
for the wire readers).

Java compares strings by UTF-16 code units, Python by code points; the two differ only for characters
outside the Basic Multilingual Plane. Big-endian UTF-16 bytes compare exactly like Java's code units, so
they serve as a sort key (:func:`java_string_key`): ``sorted(["\U0001F600", "\uFFFF"], key=java_string_key)``
puts the emoji (surrogates 0xD83D...) first, where Python's own order puts it last.
``String.hashCode`` is the 31-based polynomial over the same code units (:func:`java_string_hash`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_MASK32 = 0xFFFFFFFF


def java_string_key(text: str) -> bytes:
    """Sort key that orders strings as Java's ``String.compareTo`` does."""
    return text.encode("utf-16-be", "surrogatepass")


_BEYOND_BMP = re.compile("[\U00010000-\U0010ffff]")


def java_sorted_positions(texts: Sequence[str]) -> list[int]:
    """Positions of ``texts`` in the order Java's ``String.compareTo`` sorts them (stable). Without
    characters beyond the Basic Multilingual Plane, code points and UTF-16 code units order alike,
    so Python's own string order serves; otherwise :func:`java_string_key` does."""
    if _BEYOND_BMP.search("".join(texts)):
        return sorted(range(len(texts)), key=list(map(java_string_key, texts)).__getitem__)
    return sorted(range(len(texts)), key=texts.__getitem__)


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` (31-based polynomial over UTF-16 code units) as an unsigned 32-bit value."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & _MASK32
    return h
