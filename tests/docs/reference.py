"""The manual's reference of kassign's documents, read back for tests: which fields a page names.

A reference page (``docs/formats.md``, ``docs/outputs.md``, ``docs/vectors.md``) states each document in a
section of its own, field by field, in tables whose first column is headed ``field``. Each field is written as its
path from the document's top, in backticks: ``consumers.STRATEGY.bytes_spread.max_over_mean``, where

- ``.`` steps into an object, and ``[]`` into each item of a list (``partition_load[].topic``);
- a segment in capitals (``TOPIC``, ``MEMBER``, ``STRATEGY``, ``P``...) stands for a key that is a name from the
  data (a topic, a member id, a strategy), not a field name; any key matches it;
- a list of plain values (numbers, names, ``[topic, partition]`` pairs) is one field: nothing follows its name.

:func:`undocumented` walks a real document and returns every path in it that no field of the given sections
names (a path is named when some field's path starts with it, segment by segment), so a test fails the day an
output carries a field the manual does not state.

Example: with the field ``lag.TOPIC.committed`` in a section, ``{"lag": {"orders": {"committed": [1, 2]}}}``
has nothing undocumented, and ``{"lag": {"orders": {"position": "..."}}}`` gives ``["lag.orders.position"]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[2] / "docs"

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_CELL = re.compile(r"^`([^`]+)`")
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*$")
Path_ = tuple[str, ...]


def _segments(path: str) -> Path_:
    out: list[str] = []
    for part in path.split("."):
        name, brackets = part, 0
        while name.endswith("[]"):
            name, brackets = name[:-2], brackets + 1
        if name:
            out.append(name)
        out.extend(["[]"] * brackets)
    return tuple(out)


@lru_cache(maxsize=None)
def _sections(page: str) -> dict[str, list[Path_]]:
    """Every heading of ``page`` -> the field paths of the tables under it, its subsections' included."""
    lines = (DOCS / page).read_text(encoding="utf-8").split("\n")
    open_headings: list[tuple[int, str]] = []
    fields: dict[str, list[Path_]] = {}
    in_fence, in_field_table = False, False
    for line in lines:
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            open_headings = [(lv, t) for lv, t in open_headings if lv < level] + [(level, heading.group(2))]
            fields.setdefault(heading.group(2), [])
            in_field_table = False
            continue
        if not line.startswith("|"):
            in_field_table = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].lower() == "field":
            in_field_table = True
            continue
        if not in_field_table or set(cells[0]) <= set("-: "):
            continue
        found = _CELL.match(cells[0])
        if found is None:
            raise ValueError(f"{page}: a field table row whose first cell is not a `path`: {line!r}")
        for _, title in open_headings:
            fields[title].append(_segments(found.group(1)))
    return fields


def fields(page: str, *headings: str) -> list[Path_]:
    """The field paths under these headings of ``page`` (each heading must exist and name some field)."""
    sections = _sections(page)
    out: list[Path_] = []
    for heading in headings:
        if heading not in sections:
            raise KeyError(f"{page} has no heading {heading!r}")
        if not sections[heading]:
            raise KeyError(f"{page}: no field table under {heading!r}")
        out += sections[heading]
    return out


def paths(document: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every path in ``document``: objects' keys, ``[]`` for the items of a list that hold objects or lists.
    A list of plain values, or of lists of plain values, ends the path."""
    if isinstance(document, dict):
        if prefix:
            yield prefix
        for key, value in document.items():
            yield from paths(value, prefix + (str(key),))
    elif isinstance(document, list):
        if prefix:
            yield prefix
        nested = [item for item in document if isinstance(item, (dict, list))]
        if any(isinstance(item, dict) or _holds_objects(item) for item in nested):
            for item in nested:
                yield from paths(item, prefix + ("[]",))
    elif prefix:
        yield prefix


def _holds_objects(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(v, dict) or _holds_objects(v) for v in value)


def _matches(path: Path_, field: Path_) -> bool:
    if len(field) < len(path):
        return False
    return all(f == p or (_PLACEHOLDER.match(f) is not None and p != "[]") for p, f in zip(path, field))


def undocumented(document: Any, named: Iterable[Path_]) -> list[str]:
    """The paths of ``document`` that no field of ``named`` names, written as the manual writes fields."""
    named = list(named)
    missing = sorted({p for p in paths(document) if not any(_matches(p, f) for f in named)})
    # report the shortest: a missing object's own fields need not be listed one by one
    shortest = [p for p in missing if not any(p[:len(q)] == q and p != q for q in missing)]
    return [".".join(shortest_path).replace(".[]", "[]") for shortest_path in shortest]
