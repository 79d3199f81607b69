"""Numbers written for people: counts with separators, bytes in binary units, shares as percentages.

Terminal tables, the HTML reports and the plan summary all use these, so one figure reads the same
everywhere; raw integers stay in JSON. ``Figure`` marks a formatted number (tables right-align it).

Example: ``count(12345)`` -> ``12,345``; ``human_bytes(1536)`` -> ``1.5 KiB``; ``percent(0.1234)`` -> ``12.3%``.
"""

from __future__ import annotations


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
