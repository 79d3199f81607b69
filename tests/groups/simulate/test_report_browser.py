"""``kassign simulate``'s report.html driven in a real browser (headless Chromium through Playwright).

The pages come from real simulations: the consumer-protocol example (eager, cooperative and KIP-848
on one timeline) and a group of 200 members on a 1,000-partition topic. Tooltips are read against the
runs' own figures, a table is sorted by clicking its header, a chart is zoomed by a drag; any console
error, uncaught exception or request leaving the machine fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kassign.groups.simulate.engine import simulate
from kassign.groups.simulate.report import write_plots
from kassign.groups.simulate.scenario import parse_sim_scenario
from kassign.core.units import count
from tests.browser import chromium, open_report, parse_figure
from tests.conftest import REPO

EXAMPLES = REPO / "examples"
LIMIT = 5 * 1024 * 1024


def _runs(scenario, strategies):
    return [simulate(scenario, s) for s in strategies]


@pytest.fixture(scope="module")
def protocols(tmp_path_factory):
    chromium()
    import yaml

    scenario = parse_sim_scenario(yaml.safe_load((EXAMPLES / "consumer-protocol.yaml").read_text()))
    runs = _runs(scenario, ["range", "cooperative-sticky", "consumer:uniform"])
    out = tmp_path_factory.mktemp("sim")
    written = write_plots(runs, out, title=scenario.name, caption="5 events")
    return runs, out, written


def test_report_hover_sort_zoom(protocols):
    runs, out, written = protocols
    assert [p.name for p in written] == ["moves.png", "unowned.png", "load-range.png", "load-cooperative-sticky.png",
                                         "load-consumer_uniform.png", "report.html"]
    page_path = out / "report.html"
    assert page_path.stat().st_size < LIMIT
    with open_report(page_path) as report:
        page = report.page
        names = report.chart_names()
        assert names == ["moves", "unowned", "load-range", "load-cooperative-sticky", "load-consumer_uniform"]
        assert report.invalid() == []
        # a bar per strategy and scenario event: strategy, event and figure in the tooltip
        moved = runs[2].per_scenario_event("moved")
        for event in (1, 3):
            label, value = moved[event]
            tip = report.hover_bar("moves", 2, event)
            moves = f"{count(value)} partition{'' if value == 1 else 's'} moved"
            assert tip == ["consumer:uniform", f"event {event + 1}: {label}", moves]
        label, value = runs[0].per_scenario_event("unowned_partition_seconds")[3]
        assert report.hover_bar("unowned", 0, 3) == [
            "range", f"event 4: {label}", f"{count(round(value, 2))} unowned partition-seconds"]
        # the heat map: member, partitions, event
        run = runs[1]
        members = list(dict.fromkeys(m for rec in run.records for m in rec.loads))
        record = run.records[2]
        tip = report.hover_cell("load-cooperative-sticky", members.index("C2"), 2)
        assert tip == ["C2", f"partitions owned: {record.loads['C2']}",
                       f"after event 3: {record.at:g}s {record.description}"]
        # totals: heartbeats as the terminal shows them, sortable
        totals = page.locator("h3:text-is('totals per strategy') + .tablewrap table")
        assert report.column(totals, "heartbeats") == ["-", "-", count(runs[2].totals()["heartbeats"])]
        assert report.sort(totals, "unowned partition seconds") == "descending"
        order = [r.strategy for r in sorted(runs, key=lambda r: -r.totals()["unowned_partition_seconds"])]
        assert report.column(totals, "strategy") == order
        assert report.sort(totals, "heartbeats") == "descending"  # '-' sorts last
        assert report.column(totals, "strategy")[0] == "consumer:uniform"
        assert report.sort(totals, "strategy") == "ascending"
        assert report.column(totals, "strategy") == sorted(r.strategy for r in runs)
        # every event table: heartbeats '-' for classic runs, a count for the consumer protocol
        events = page.locator("h2:text-is('range: every event') + .tablewrap table")
        assert set(report.column(events, "heartbeats")) == {"-"}
        events = page.locator("h2:text-is('consumer:uniform: every event') + .tablewrap table")
        assert [parse_figure(c) for c in report.column(events, "heartbeats")] == [r.heartbeats for r in runs[2].records]
        # zoom into the first events of the moves chart
        before = report.figure("moves")["xaxis"]["range"]
        report.drag("moves", (0.0, 0.5), (0.5, 0.5))
        after = report.figure("moves")["xaxis"]["range"]
        assert after[0] == pytest.approx(before[0], abs=0.1) and after[1] < before[0] + 0.55 * (before[1] - before[0])
        assert page.locator(".meta").text_content() == "5 events"
        report.assert_clean()


def test_two_hundred_members(tmp_path):
    chromium()
    members = {f"M{i}": {"topics": ["t0"]} for i in range(200)}
    events = [{"at": 30 * (i + 1), "type": "join", "member": f"N{i}", "topics": ["t0"]} for i in range(6)]
    events += [{"at": 400 + 30 * i, "type": "leave", "member": f"M{7 * i}"} for i in range(4)]
    scenario = parse_sim_scenario({"name": "two hundred", "topics": {"t0": 1000}, "members": members,
                                   "events": events})
    runs = _runs(scenario, ["range", "cooperative-sticky"])
    write_plots(runs, tmp_path, title=scenario.name)
    page_path = tmp_path / "report.html"
    assert page_path.stat().st_size < LIMIT
    with open_report(page_path) as report:
        heat = report.figure("load-cooperative-sticky")["data"][0]
        assert len(heat["y"]) == 206 and len(heat["x"]) == len(runs[1].records)
        record = runs[1].records[5]
        tip = report.hover_cell("load-cooperative-sticky", 150, 5)
        assert tip == ["M150", f"partitions owned: {record.loads['M150']}",
                       f"after event 6: {record.at:g}s {record.description}"]
        # a member that left is blank from then on (M0 leaves at event 8)
        assert heat["z"][0][6] is not None and heat["z"][0][7:] == [None] * (len(runs[1].records) - 7)
        assert runs[1].records[7].description == "leave M0"
        # zoom into members 41-60 of the other heat map: its axis shows their names
        report.page.evaluate("""() => Plotly.relayout(document.querySelector('.kchart[data-name="load-range"]'),
                                                       {'yaxis.range': [60.5, 40.5]})""")
        assert report.figure("load-range")["yaxis"]["range"] == [60.5, 40.5]
        ticks = report.chart("load-range").locator(".ytick text").all_text_contents()
        assert ticks and all(41 <= int(t[1:]) <= 60 for t in ticks if t.startswith("M"))
        report.assert_clean()


def test_a_browser_that_cannot_unpack_the_charts_says_so(protocols):
    """Without DecompressionStream (browsers before 2023) each chart's place says why it is empty; the
    tables still sort."""
    _, out, _ = protocols
    with open_report(out / "report.html", charts="unsupported", init_script="delete window.DecompressionStream") \
            as report:
        messages = report.page.locator(".kchart .fallback").all_text_contents()
        assert len(messages) == 5 and all("cannot draw the charts" in m for m in messages)
        totals = report.page.locator("h3:text-is('totals per strategy') + .tablewrap table")
        assert report.sort(totals, "moved") == "descending"
        report.assert_clean()
