"""Checks for assignor options, which arrive from Python callers and from ``-o key=value``.

An option of the wrong type or out of range is a :class:`KassignError` naming the
assignor, the option and what it takes, at construction, before any work.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kassign.core.errors import KassignError
from kassign.core.limits import is_whole_number
from kassign.core.releases import KafkaRelease, release_for


def _bad(assignor: str, option: str, takes: str, value: Any) -> KassignError:
    return KassignError(f"{assignor} option {option} takes {takes}, got {value!r}")


def flag(assignor: str, option: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise _bad(assignor, option, "true or false", value)


def number(assignor: str, option: str, value: Any, *, positive: bool = False) -> float:
    """A finite number >= 0 (> 0 with ``positive``)."""
    if (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
            and math.isfinite(value) and (value > 0 if positive else value >= 0)):
        return float(value)
    raise _bad(assignor, option, "a finite number > 0" if positive else "a finite number >= 0", value)


def seed(assignor: str, option: str, value: Any) -> int | None:
    """A random seed: a whole number from 0 to 2^64-1, or None for a fresh one each time."""
    if value is None:
        return None
    if is_whole_number(value) and 0 <= value < 2**64:
        return int(value)
    raise _bad(assignor, option, "a whole number from 0 to 2^64-1 (or none)", value)


def release(assignor: str, value: Any) -> KafkaRelease:
    """The Kafka release an assignor answers as (``kafka_version``: ``"3.4.0"``, ``"3.9"``, or a
    :class:`~kassign.core.releases.KafkaRelease`), checked to be one kassign models for the classic protocol."""
    return release_for(value, "classic")
