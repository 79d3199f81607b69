"""``kassign simulate`` for a Kafka Streams timeline with ``protocol: streams``: a streams group (KIP-1071).

The broker's ``sticky`` task assignor and its coordinator play it, as the release ``--kafka-version`` names
(4.2, 4.3 or 4.4, the default: :mod:`kassign.groups.simulate.streams_group_engine` says what differs);
``sticky:standbys=N`` plays it with N standby replicas instead of the timeline's. Without ``--strategies``
(or the timeline's list) ``sticky`` is played, and ``sticky:standbys=1`` beside it when the timeline has no
standbys, so the summary says what a standby would change.
"""

from __future__ import annotations

from typing import Any

import click

from kassign.cli.common import emit_json, print_sentences, print_table
from kassign.cli.simulate_streams import strategies_for
from kassign.core.releases import KAFKA_20665, STREAMS_COORDINATOR, release_for, rule
from kassign.groups.simulate.streams_group_engine import simulate_streams_group
from kassign.groups.simulate.streams_group_metrics import protocol_sentence, summary_sentences
from kassign.groups.simulate.streams_group_report import caption_text, event_rows, totals_rows
from kassign.groups.simulate.streams_scenario import CLASSIC_ONLY_SETTINGS, parse_streams_timeline


def run_streams_group(document: Any, strategies_option: str | None, target: str | None, show_events: bool,
                      as_json: bool, kafka_version: str) -> None:
    """Play a streams-group timeline and print (or write) what each strategy did."""
    release = release_for(kafka_version, "streams")
    timeline = parse_streams_timeline(document)
    strategies = strategies_for(strategies_option, timeline)
    runs = [simulate_streams_group(timeline, name, release) for name in strategies]
    sentences = [protocol_sentence(rule(release, STREAMS_COORDINATOR) == KAFKA_20665)]
    for run in runs:
        lines = summary_sentences(run)
        sentences += lines if len(runs) == 1 else [f"{run.strategy}: {line}" for line in lines[:-1]] + lines[-1:]
    app = timeline.application
    unused = [k for k in timeline.given_settings if k in CLASSIC_ONLY_SETTINGS]
    caption = caption_text(runs[0], len(timeline.events), len(app.tasks), int(app.stateful.sum()),
                           int(timeline.settings["num_standby_replicas"]), unused)
    written = []
    if target:
        from kassign.groups.simulate.streams_group_report import write_streams_group_report

        written = write_streams_group_report(runs, target, timeline.name, caption, sentences)
    if as_json:
        doc = {"kind": "streams-group", "timeline": timeline.name, "kafka_version": release.label,
               "settings": runs[0].settings, "summary": sentences, "strategies": [r.to_json() for r in runs]}
        if written:
            doc["plots"] = [str(p) for p in written]
        emit_json(doc)
        return
    print_sentences(f"{timeline.name} (streams group, Kafka {release.label})", sentences)
    if show_events:
        for run in runs:
            print_table(f"{run.strategy}: per event", *event_rows(run, terse=True))
    print_table("totals per strategy", *totals_rows(runs), caption)
    if written:
        click.echo(f"plots: {', '.join(str(p) for p in written)}")
