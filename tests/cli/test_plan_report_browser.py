"""``kassign plan --report plan.html`` opened in a real headless Chromium (Playwright; skipped without Chromium).

The page is made by the CLI beside its ``--json``; the bars, tooltips and tables are read back from the browser
and compared with the JSON: per broker now / plan / Kafka's --generate, the goals table, every move and its goal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kassign.core.units import human_bytes
from tests.browser import chromium, open_report, parse_figure

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
BROKERS = "0:rack-a,1:rack-b,2:rack-c,3:rack-a,4:rack-b,5:rack-c,6:rack-a,7:rack-b,8:rack-c"


def plan(tmp_path: Path, *args: str) -> tuple[dict, Path]:
    report = tmp_path / "plan.html"
    result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "plan", "--current",
                             str(EXAMPLES / "current.json"), "--brokers", BROKERS, *args, "--report", str(report),
                             "--json"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), report


@pytest.fixture(scope="module")
def goals(tmp_path_factory):
    chromium()
    return plan(tmp_path_factory.mktemp("goals"), "--sizes", str(EXAMPLES / "sizes.json"), "--rates",
                str(EXAMPLES / "rates.json"), "--capacity", str(EXAMPLES / "capacity.json"))


def test_goal_report_bars_and_tables(goals):
    data, path = goals
    summary, kafka = data["summary"], data["kafka_generate"]
    assert data["files"]["report"] == str(path)
    with open_report(path) as report:
        assert report.chart_names() == ["disk", "bytes-in", "replicas", "leaders"]
        assert report.invalid() == []
        labels = [f"{b['broker']} ({b['rack']})" for b in summary["brokers"]]
        kafka_by_id = {b["broker"]: b for b in kafka["brokers"]}
        for name, key in (("replicas", "replicas"), ("leaders", "leaders")):
            figure = report.figure(name)
            bars = [t for t in figure["data"] if t["type"] == "bar"]
            assert [t["name"] for t in bars] == ["now", "kassign plan", "Kafka --generate"]
            assert all(t["x"] == labels for t in bars)
            assert bars[0]["y"] == [b[f"{key}_before"] for b in summary["brokers"]]
            assert bars[1]["y"] == [b[f"{key}_after"] for b in summary["brokers"]]
            assert bars[2]["y"] == [kafka_by_id[b["broker"]][f"{key}_after"] for b in summary["brokers"]]
        # the replicas chart marks each broker's max_replicas (5 in capacity.json)
        limits = [t for t in report.figure("replicas")["data"] if t["name"] == "limit"]
        assert limits and set(limits[0]["y"]) == {5}
        # a tooltip reads the exact figure of the bar under the pointer
        tip = report.hover_bar("replicas", 1, 0)
        assert tip[0].startswith("broker 0 (rack-a): kassign plan") and tip[1].endswith(
            str(summary["brokers"][0]["replicas_after"]))
        disk = report.figure("disk")["data"]
        unit = 1024**3  # the example's bytes are tens of GiB
        plan_bytes = [b["bytes_after"] for b in summary["brokers"]]
        assert [round(v * unit) for v in disk[1]["y"]] == pytest.approx(plan_bytes, rel=1e-5)

        page = report.page
        tables = page.locator("table.sortable")
        goals_table = tables.nth(0)
        assert report.column(goals_table, "goal") == [g["name"] for g in summary["goals"]]
        assert report.column(goals_table, "met") == ["yes" if g["met"] else "NO" for g in summary["goals"]]
        served = data["moves_by_goal"]
        assert [int(parse_figure(c)) for c in report.column(goals_table, "moves serving it")] == \
            [served.get(g["name"], 0) for g in summary["goals"]]
        moves_table = page.locator("table.sortable", has=page.locator("th", has_text="from")).last
        assert len(report.column(moves_table, "goal")) == len(data["moves"]) == summary["replicas_moved"]
        assert report.column(moves_table, "goal") == [m["goal"] or "none" for m in data["moves"]]
        assert report.column(moves_table, "bytes") == [human_bytes(m["bytes"]) for m in data["moves"]]
        # sorting by bytes puts the biggest move first
        assert report.sort(moves_table, "bytes") == "descending"
        shown = [parse_figure(c) for c in report.column(moves_table, "bytes")]
        assert shown == sorted(shown, reverse=True)
        brokers_table = page.locator("table.sortable", has=page.locator("th", has_text="replicas Kafka")).first
        assert [int(parse_figure(c)) for c in report.column(brokers_table, "replicas Kafka")] == \
            [kafka_by_id[b["broker"]]["replicas_after"] for b in summary["brokers"]]
        assert "Verdict" in page.locator("section.verdict").inner_text()
        report.assert_clean()


def test_count_only_report_has_replica_and_leader_bars(tmp_path):
    chromium()
    data, path = plan(tmp_path, "--exclude", "0")
    with open_report(path) as report:
        assert report.chart_names() == ["replicas", "leaders"]
        figure = report.figure("replicas")
        assert figure["data"][0]["x"][0] == "0 (rack-a) drained"
        assert figure["data"][0]["y"][0] > 0 and figure["data"][1]["y"][0] == 0
        moves_table = report.page.locator("table.sortable", has=report.page.locator("th", has_text="from")).last
        goals = report.column(moves_table, "goal")
        assert goals == [m["goal"] or "none" for m in data["moves"]]
        froms = report.column(moves_table, "from")
        assert [g == "valid" for g in goals] == [f == "0" for f in froms] and "valid" in goals
        report.assert_clean()


def test_a_long_move_list_is_summed_up(tmp_path, monkeypatch):
    """More moves than the page lists: the first MOVE_ROWS, and a footer for the rest (no browser needed)."""
    import kassign
    from kassign.replicas.plan import _html
    from kassign.replicas.plan._document import kafka_generate
    from kassign.replicas.plan._report import figures
    from kassign.replicas.plan._why import explain

    current = {"version": 1, "partitions": [{"topic": "t", "partition": p, "replicas": [p % 2]} for p in range(40)]}
    result = kassign.plan_reassignment(current, [0, 1, 2, 3], sizes={"t": list(range(1, 41))})
    moves = explain(result.context, result.replicas)
    monkeypatch.setattr(_html, "MOVE_ROWS", 5)
    placement = kafka_generate(result.problem, 0, "4.4")
    page = _html.render(result, placement, {**figures(result.problem, placement), "kafka_version": "4.4"}, moves)
    assert f"and {len(moves) - 5} more moves" in page and "in --json" in page
