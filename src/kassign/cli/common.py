"""What every command shares: JSON output, tables, and turning bad input into exit 2."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

json_option = click.option("--json", "as_json", is_flag=True, help="Write JSON to stdout instead of a table.")


def emit_json(document: Any) -> None:
    click.echo(json.dumps(document, indent=None, separators=(", ", ": ")))


def console() -> Console:
    return Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 120)


def print_table(title: str, columns: list[str], rows: list[list[Any]], caption: str | None = None,
                notes: list[str] = ()) -> None:
    """A rich table; numeric columns are right-aligned; ``notes`` follow it, a line each."""
    table = Table(title=title, caption=caption)
    for i, column in enumerate(columns):
        numeric = bool(rows) and all(isinstance(row[i], (int, float)) for row in rows)
        table.add_column(column, justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        table.add_row(*(str(cell) for cell in row))
    out = console()
    out.print(table)
    for note in notes:
        out.print(f"note: {note}")


def compact_partitions(partitions: list[tuple[str, int]]) -> str:
    """``t0: 0-2,5  t1: 1`` instead of a long list of pairs."""
    by_topic: dict[str, list[int]] = {}
    for topic, p in partitions:
        by_topic.setdefault(topic, []).append(p)
    parts = []
    for topic, numbers in by_topic.items():
        runs: list[str] = []
        start = prev = numbers[0]
        for n in numbers[1:] + [None]:  # type: ignore[list-item]
            if n is not None and n == prev + 1:
                prev = n
                continue
            runs.append(str(start) if start == prev else f"{start}-{prev}")
            if n is not None:
                start = prev = n
        parts.append(f"{topic}: {','.join(runs)}")
    return "  ".join(parts) if parts else "-"
