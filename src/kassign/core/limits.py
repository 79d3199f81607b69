"""Bounds kassign checks before it allocates anything.

Kafka keeps partition counts, partition numbers, broker ids and generations in Java
``int``s, so values of 2^31 and beyond are input errors. Within that range a request
can still ask for more than fits in memory (one topic of two billion partitions), so
kassign also caps how many partitions one request materialises: far above any real
cluster (Kafka's KRaft clusters are tested to a few million partitions), far below
what would exhaust this machine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kassign.core.errors import KassignError, shown

JAVA_INT_MIN = -(2**31)
JAVA_INT_MAX = 2**31 - 1
MAX_PARTITIONS = 50_000_000


def is_whole_number(value: Any) -> bool:
    """An int or a numpy integer scalar, and not a bool: what kassign takes as a whole number everywhere."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def whole_number(value: Any, what: str, *, low: int = JAVA_INT_MIN, high: int = JAVA_INT_MAX) -> int:
    """``value`` as an int within ``low .. high`` (numpy integer scalars accepted), else a KassignError."""
    if not is_whole_number(value):
        raise KassignError(f"{what} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise KassignError(f"{what} must be from {low} to {high}, got {shown(int(value))}")
    return int(value)


def partition_budget(count: int, what: str) -> None:
    """Refuse to materialise more than :data:`MAX_PARTITIONS` partitions in one request."""
    if count > MAX_PARTITIONS:
        raise KassignError(f"{what}: {count:,} partitions is more than kassign materialises in one request "
                           f"({MAX_PARTITIONS:,}; real clusters hold a few million at most)")
