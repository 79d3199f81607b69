"""``kassign simulate`` for a share-group timeline (``group_type: share``, or the strategy ``share:simple``).

A share group has one assignor, the broker's ``simple``, so one run is played and reported: a sentence per
event (what the missing rebalance barrier meant for it), a row per event, and with ``--out`` the charts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from kassign.cli.common import emit_json, print_sentences, print_table
from kassign.groups.simulate.share_engine import simulate_share
from kassign.groups.simulate.share_metrics import summary_sentences
from kassign.groups.simulate.share_scenario import check_share_strategies, parse_share_timeline
from kassign.groups.simulate.share_report import caption_text, event_rows


def run_share(document: Any, strategies_option: str | None, target: str | None, as_json: bool,
              kafka_version: str) -> None:
    """Play a share-group timeline and print (or write) what it did."""
    if isinstance(document, Mapping):
        document = dict(document)
        document.setdefault("group_type", "share")  # its strategies, or --strategies, named share:simple
        if strategies_option is not None:
            check_share_strategies([s.strip() for s in strategies_option.split(",") if s.strip()], "--strategies")
            document.pop("strategies", None)  # the option decides
    timeline = parse_share_timeline(document)
    run = simulate_share(timeline, kafka_version)
    sentences = summary_sentences(run)
    caption = caption_text(run, len(timeline.scenario.events))
    written = []
    if target:
        from kassign.groups.simulate.share_report import write_share_report

        written = write_share_report(run, target, timeline.name, caption, sentences)
    if as_json:
        doc = {"kind": "share-group", "scenario": timeline.name, "kafka_version": run.kafka_version,
               "settings": run.settings, "summary": sentences, "strategies": [run.to_json()]}
        if written:
            doc["plots"] = [str(p) for p in written]
        emit_json(doc)
        return
    print_sentences(f"{timeline.name} (share group, Kafka {run.kafka_version})", sentences)
    print_table("share:simple: per event", *event_rows(run, terse=True), caption)
    if written:
        click.echo(f"plots: {', '.join(str(p) for p in written)}")
