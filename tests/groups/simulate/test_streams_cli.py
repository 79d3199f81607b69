"""`kassign simulate` on a Kafka Streams timeline, as a user runs it: a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path
from tests.conftest import REPO
from tests.groups.simulate.run_cli import kassign

EXAMPLE = REPO / "examples" / "streams-restart.yaml"


def test_the_summary_in_words_and_the_totals():
    result = kassign("simulate", str(EXAMPLE), "--events")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "a Streams application restarts an instance (Kafka 4.4)" in out
    assert "- an instance restart costs 1 min 27 s of unavailability on 2 stateful tasks under high-availability" in out
    assert "under high-availability with one standby" in out and "- a crash costs" in out
    assert "totals per strategy" in out and "high-availability:standbys=1" in out
    assert "restart app-2 (down 5 min)" in out  # --events: a row per event and strategy
    assert "Kafka 4.4, classic protocol" in out


def test_json_has_the_raw_numbers_and_the_release(tmp_path):
    result = kassign("simulate", str(EXAMPLE), "--json", "--strategies", "high-availability,sticky",
                     "--kafka-version", "4.1", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["kind"] == "kafka-streams" and doc["kafka_version"] == "4.1"
    runs = {r["strategy"]: r for r in doc["strategies"]}
    assert list(runs) == ["high-availability", "sticky"]
    restart = runs["high-availability"]["events"][1]
    assert restart["description"] == "restart app-2 (down 5 min)" and restart["unavailable_tasks"] == 2
    assert 84 < restart["unavailable_seconds"] < 90 and isinstance(restart["restored_bytes"], int)
    assert restart["probing_rebalances"] >= 1 and restart["warmups"] >= 2
    assert runs["sticky"]["totals"]["probing_rebalances"] == 0 and runs["sticky"]["kafka_version"] == "4.1"
    assert doc["summary"][0].startswith("an instance restart costs")
    # the report: per-event bars, a timeline per task and strategy, one self-contained page
    written = {Path(p).name for p in doc["plots"]}
    assert {"unavailability.png", "restored.png", "tasks-high-availability.png", "tasks-sticky.png",
            "report.html"} <= written
    page = (tmp_path / "report.html").read_text()
    for name in ("unavailability", "restored", "tasks-high-availability", "tasks-sticky"):
        block = page.split(f'<script type="application/json" data-chart="chart-{name}">')[1].split("</script>")[0]
        figure = json.loads(block)
        assert figure["data"], name
    timeline = json.loads(page.split('data-chart="chart-tasks-high-availability">')[1].split("</script>")[0])
    states = {trace["name"] for trace in timeline["data"] if trace["y"]}
    assert {"active", "restoring", "warm-up", "outage"} <= states
    assert "Kafka 4.1" in page and "http://" not in page and "https://" not in page


def test_a_bad_document_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("instance: app-3}", "instance: app-9}", 1))
    result = kassign("simulate", str(bad))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("kassign: error: streams timeline events[1] (crash at 3600 s): no instance 'app-9'")
    assert result.stderr.count("\n") == 1


def test_a_release_kassign_does_not_model_is_refused_and_a_modelled_one_is_said():
    result = kassign("simulate", str(EXAMPLE), "--kafka-version", "2.8")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "3.0 to 4.4" in result.stderr
    result = kassign("simulate", str(EXAMPLE), "--kafka-version", "4.2")
    assert result.returncode == 0 and "Kafka 4.2" in result.stdout


def test_a_release_without_the_sticky_task_assignor_plays_without_it_and_refuses_it_when_asked():
    # 3.7 has no task.assignor.class: the default strategies leave sticky out, and asking for it is one line
    result = kassign("simulate", str(EXAMPLE), "--kafka-version", "3.7", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["kafka_version"] == "3.7"
    assert [r["strategy"] for r in doc["strategies"]] == ["high-availability", "optimal",
                                                          "high-availability:standbys=1"]
    result = kassign("simulate", str(EXAMPLE), "--kafka-version", "3.7", "--strategies", "high-availability,sticky")
    assert result.returncode == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert "strategy sticky: Kafka 3.7 has no sticky task assignor" in result.stderr
    result = kassign("simulate", str(EXAMPLE), "--kafka-version", "3.0", "--strategies", "high-availability")
    assert result.returncode == 0 and "Kafka 3.0, classic protocol" in result.stdout


def test_stdin_and_the_strategy_variants():
    result = kassign("simulate", "-", "--json", "--strategies", "sticky:standbys=1", stdin=EXAMPLE.read_text())
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)["strategies"][0]
    assert run["strategy"] == "sticky:standbys=1" and run["num_standby_replicas"] == 1
    result = kassign("simulate", str(EXAMPLE), "--strategies", "range")
    assert result.returncode == 2 and "unknown Kafka Streams task assignor" in result.stderr
