"""Java's ordering of strings, for the places where Kafka's output depends on it.

Java compares strings by UTF-16 code units, Python by code points; the two differ
only for characters outside the Basic Multilingual Plane. Big-endian UTF-16 bytes
compare exactly like Java's code units, so they serve as a sort key.
"""

from __future__ import annotations


def java_string_key(text: str) -> bytes:
    return text.encode("utf-16-be", "surrogatepass")
