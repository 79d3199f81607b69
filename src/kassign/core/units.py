"""Numbers written for people: counts with separators, bytes in binary units, shares as percentages.

Terminal tables, the HTML reports and the plan summary all use these, so one figure reads the same
everywhere; raw integers stay in JSON. ``Figure`` marks a formatted number (tables right-align it).

Example: ``count(12345)`` -> ``12,345``; ``human_bytes(1536)`` -> ``1.5 KiB``; ``percent(0.1234)`` -> ``12.3%``;
``human_seconds(250)`` -> ``4 min 10 s``; and back, ``parse_duration("2m", "--patience")`` -> ``120.0``.
"""

from __future__ import annotations

import math
import re


class Figure(str):
    """A number already written for people (``12,345``, ``3.4 MiB``, ``12.5%``): right-aligned in tables."""


def count(value: float) -> Figure:
    """A count or weight with thousands separators; two decimals only when it has a fraction."""
    return Figure(f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}")


def human_bytes(value: float) -> Figure:
    """Bytes in binary units: ``512 B``, ``1.5 KiB``, ``3.2 MiB``, ``1.1 GiB``."""
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return Figure(f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}")
        size /= 1024
    raise AssertionError("unreachable")


def percent(share: float) -> Figure:
    """A share of a whole (0..1) as a percentage."""
    return Figure(f"{share:.1%}")


def human_seconds(value: float) -> Figure:
    """A duration as people say it: ``0 s``, ``< 0.1 s``, ``0.5 s``, ``42 s``, ``4 min 10 s``, ``2 h 5 min``, ``3 d 4 h``.

    Below a minute it keeps one decimal where there is one; above, whole seconds, and the two largest
    units only (an hour-long outage is not read to the second)."""
    seconds = float(value)
    if seconds < 0:
        return Figure("-" + human_seconds(-seconds))
    if 0 < seconds < 0.05:
        return Figure("< 0.1 s")  # not "0 s": a blip is not nothing
    if seconds < 60:
        tenths = round(seconds, 1)
        if tenths < 60:
            return Figure(f"{tenths:.0f} s" if tenths.is_integer() else f"{tenths:.1f} s")
    whole = int(round(seconds))
    parts = []
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1)):
        if whole >= size or (parts and len(parts) < 2):
            amount, whole = divmod(whole, size)
            parts.append((amount, unit))
        if len(parts) == 2:
            break
    return Figure(" ".join(f"{amount} {unit}" for amount, unit in parts if amount or unit == parts[0][1]))


def parse_duration(value: object, name: str, error: type[Exception] | None = None) -> float:
    """A duration in seconds as people write one: a number of seconds, or text such as ``30s``, ``1500ms``, ``2m``,
    ``1h``; 0 or more, finite. Anything else raises ``error`` (default :class:`~kassign.core.errors.KassignError`)
    with one line naming ``name`` (the option or argument)."""
    from kassign.core.errors import KassignError

    fail = error or KassignError
    if isinstance(value, bool):
        raise fail(f"{name} must be a duration such as 30s, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", str(value))
        if match is None:
            raise fail(f"{name} must be a duration such as 30s, 1500ms or 2m, got {str(value)!r}")
        seconds = float(match.group(1)) * {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600}[match.group(2)]
    if not math.isfinite(seconds) or seconds < 0:
        raise fail(f"{name} must be a duration of 0 or more, such as 30s, got {value!r}")
    return seconds
