"""What every command shares: JSON output, tables, and turning bad input into exit 2."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kassign.core.text import printable  # noqa: F401 - the commands' way to show a name
from kassign.core.units import Figure, count, human_bytes, percent  # noqa: F401 - the CLI's table cells

json_option = click.option("--json", "as_json", is_flag=True, help="Write JSON to stdout instead of a table.")


def emit_json(document: Any) -> None:
    click.echo(json.dumps(document, indent=None, separators=(", ", ": ")))


def console() -> Console:
    return Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 120)


def literal(value: Any) -> Text:
    """A table cell or line shown exactly as written: no rich markup, no terminal controls."""
    return Text(printable(value))


def print_table(title: str, columns: list[str], rows: list[list[Any]], caption: str | None = None,
                notes: list[str] = ()) -> None:
    """A rich table; numeric columns are right-aligned; ``notes`` follow it, a line each.
    Every cell, caption and note is printed literally (names come from users' files)."""
    table = Table(title=literal(title), caption=None if caption is None else literal(caption))
    for i, column in enumerate(columns):
        numeric = bool(rows) and all(isinstance(row[i], (int, float, Figure)) for row in rows)
        table.add_column(literal(column), justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        table.add_row(*(literal(cell) for cell in row))
    out = console()
    out.print(table)
    for note in notes:
        out.print(literal(f"note: {note}"))


def print_sentences(title: str, sentences: list[str]) -> None:
    """A title line, then each sentence as one item of a list: wrapped here between words, with a hanging indent."""
    import textwrap

    out = console()
    out.print(literal(title))
    for line in sentences:
        for piece in textwrap.wrap(line, width=max(40, out.width - 1), initial_indent="- ", subsequent_indent="  "):
            out.print(literal(piece))


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


def html_table(columns: list[str], rows: list[list[Any]], caption: str | None = None) -> str:
    """``print_table``'s HTML twin for reports: every cell escaped; ``Figure`` and number cells right-aligned
    (class ``num``), so a report shows the same readable figures as the terminal."""
    import html

    def cell(tag: str, value: Any) -> str:
        numeric = isinstance(value, (int, float, Figure)) and not isinstance(value, bool)
        return f"<{tag}{' class=num' if numeric else ''}>{html.escape(printable(value))}</{tag}>"

    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(cell("td", c) for c in row) + "</tr>" for row in rows)
    title = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{title}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
