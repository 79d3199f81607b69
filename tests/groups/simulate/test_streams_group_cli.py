"""`kassign simulate` on a Kafka Streams timeline with ``protocol: streams`` (a streams group), as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import REPO
from tests.groups.simulate.run_cli import kassign

EXAMPLE = REPO / "examples" / "streams-group-timeline.yaml"


def test_the_summary_in_words_and_the_totals():
    result = kassign("simulate", str(EXAMPLE), "--events")  # the default release: 4.4
    assert result.returncode == 0, result.stderr
    out = result.stdout
    words = " ".join(out.split())
    assert out.startswith("a Streams application on the streams protocol (streams group, Kafka 4.4)\n")
    assert "- Under the streams protocol nobody waits for a rebalance, but a task never has two owners" in words
    assert "sticky: 10 min, restart app-2 (down 5 min): 8 tasks moved to another instance: 4 stateless;" in words
    assert "sticky:standbys=1: 1 h, crash app-3: 4 tasks moved to another instance: 2 stateless; 2 promoted from a " \
           "standby" in words
    assert "sticky: per event" in out and "totals per strategy" in out  # --events: a table per strategy
    assert "Kafka 4.4, streams group (KIP-1071), the broker's sticky assignor" in words
    assert "a standby is promoted in place, in the step that grants its active task" in words
    # 4.4's coordinator promotes a standby in place: app-3's start moves a task to its former standby at once
    assert "sticky:standbys=1: 1 h 5 min, start app-3: 4 tasks moved to another instance: 1 stateless; 1 promoted " \
           "from a standby; 1 on state left on disk; 1 lost their local state (0_4" in words


def test_kafka_4_3_is_played_when_asked():
    result = kassign("simulate", str(EXAMPLE), "--events", "--kafka-version", "4.3")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    words = " ".join(out.split())
    assert out.startswith("a Streams application on the streams protocol (streams group, Kafka 4.3)\n")
    assert "Kafka 4.3, streams group (KIP-1071), the broker's sticky assignor" in words
    assert "a standby is given up before it is promoted" in words
    assert "sticky: 10 min, restart app-2 (down 5 min): 8 tasks moved to another instance: 4 stateless;" in words
    assert "sticky:standbys=1: 1 h 5 min, start app-3: 4 tasks moved to another instance: 2 stateless; 1 on state " \
           "left on disk; 1 lost their local state (0_4" in words


def test_json_has_the_figures_and_the_release_and_the_report(tmp_path):
    result = kassign("simulate", str(EXAMPLE), "--json", "--strategies", "sticky", "--kafka-version", "4.2",
                     "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["kind"] == "streams-group" and doc["kafka_version"] == "4.2"
    assert doc["settings"]["assignment_interval"] == 0.0
    (run,) = doc["strategies"]
    assert run["strategy"] == "sticky" and run["group_type"] == "streams" and run["kafka_version"] == "4.2"
    restart = run["events"][1]
    assert restart["description"] == "restart app-2 (down 5 min)" and restart["moved"] == 8
    assert restart["state_lost"] == len(restart["lost_tasks"]) and isinstance(restart["lost_state_bytes"], int)
    assert run["totals"]["moved"] == sum(e["moved"] for e in run["events"])
    written = {Path(p).name for p in doc["plots"]}
    assert written == {"moves-sticky.png", "paused-sticky.png", "active-per-instance-sticky.png", "tasks-sticky.png",
                       "report.html"}
    page = (tmp_path / "report.html").read_text()
    for name in ("moves-sticky", "paused-sticky", "active-per-instance-sticky", "tasks-sticky"):
        block = page.split(f'<script type="application/json" data-chart="chart-{name}">')[1].split("</script>")[0]
        assert json.loads(block)["data"], name
    timeline = json.loads(page.split('data-chart="chart-tasks-sticky">')[1].split("</script>")[0])
    assert {"active", "restoring", "outage"} <= {trace["name"] for trace in timeline["data"] if trace["y"]}
    assert "Kafka 4.2" in page and "https://" not in page


def test_a_bad_document_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("heartbeat_interval: 5 ", "heartbeat_interval: 50", 1))
    result = kassign("simulate", str(bad))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("kassign: error: streams timeline settings.heartbeat_interval: 50 s must be less than "
                             "session_timeout (45 s), as Kafka requires\n")
    result = kassign("simulate", str(EXAMPLE), "--strategies", "high-availability")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "the broker's task assignor under the streams protocol is sticky" in result.stderr


def test_releases_without_streams_groups_are_one_line_errors_and_stdin_works():
    result = kassign("simulate", str(EXAMPLE), "--kafka-version", "4.1")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "early access" in result.stderr
    result = kassign("simulate", "-", "--json", "--strategies", "sticky:standbys=2", stdin=EXAMPLE.read_text())
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)["strategies"][0]
    assert run["strategy"] == "sticky:standbys=2" and run["num_standby_replicas"] == 2
