"""The manual's Kafka releases page keeps up with the release table: every ticket or KIP that changed a rule in
kassign.core.releases is named on the page, and every group type's first modelled release is the one it says."""

from __future__ import annotations

import re
from pathlib import Path

from kassign.core.releases import FEATURES, NEWEST_LINE, OLDEST_LINE, RULE_CHANGES

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "releases.md").read_text(encoding="utf-8")


def test_every_ticket_that_changed_a_rule_is_on_the_page() -> None:
    tickets = {match.group(0).upper() for changes in RULE_CHANGES.values() for _, value in changes
               for match in [re.fullmatch(r"(kafka-\d+|kip-\d+)", value)] if match}
    assert len(tickets) >= 15
    missing = sorted(t for t in tickets if t not in PAGE)
    assert missing == []


def test_the_page_names_the_range_and_the_default() -> None:
    oldest, newest = (f"{a}.{b}" for a, b in (OLDEST_LINE, NEWEST_LINE))
    assert f"every release from {oldest} to {newest}**, {newest} by default" in PAGE


def test_the_group_types_start_where_the_page_says() -> None:
    first = {name: f"{spec.first[0]}.{spec.first[1]}" for name, spec in FEATURES.items()}
    assert first == {"consumer": "4.0", "share": "4.1", "streams": "4.2", "classic": "3.0"}
    rows = {line.split("|")[1].strip(): line for line in PAGE.splitlines() if line.startswith("| 4.")}
    assert "`uniform`, `range`" in rows["4.0"] and "`simple`" in rows["4.1"] and "`sticky`" in rows["4.2, 4.3"]
    assert "early access" in rows["4.0"] and "early access" in rows["4.1"]
