"""`kassign simulate` on a share-group timeline, as a user runs it: a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import REPO
from tests.groups.simulate.run_cli import kassign

EXAMPLE = REPO / "examples" / "share-group-timeline.yaml"
CONSUMER_EXAMPLE = REPO / "examples" / "seeds-sticky-vs-roundrobin.yaml"


def test_the_summary_in_words_and_a_row_per_event():
    result = kassign("simulate", str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("order workers in a share group (share group, Kafka 4.4)\n")
    assert ("- 1 min, join worker-5 (orders): no member stopped fetching during the change: a share group hands "
            "records out one by one, so worker-5 joining only spread the fetches") in out.replace("\n  ", " ")
    assert "nothing was revoked" in out and "share:simple: per event" in out
    words = " ".join(out.split())  # the caption wraps with the terminal
    assert "Kafka 4.4, share group (KIP-932), assignor simple" in words and "targets at most every 1 s" in words


def test_json_holds_the_figures_the_release_and_the_report(tmp_path):
    result = kassign("simulate", str(EXAMPLE), "--json", "--kafka-version", "4.2", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["kind"] == "share-group" and doc["kafka_version"] == "4.2"
    assert doc["settings"]["assignment_interval"] == 0.0
    run = doc["strategies"][0]
    assert run["strategy"] == "share:simple" and run["group_type"] == "share" and run["kafka_version"] == "4.2"
    assert run["totals"]["revoked"] == 0
    join = run["events"][1]
    assert join["description"] == "join worker-5 (orders)" and join["stopped"] == 0
    assert join["sharing"] == {"2": 4} and set(join["bytes_per_member"]) == {f"worker-{i}" for i in range(1, 6)}
    assert doc["summary"][0].startswith("1 min, join worker-5 (orders): no member stopped fetching")
    written = {Path(p).name for p in doc["plots"]}
    assert written == {"members-per-partition.png", "fetch-load.png", "unfetched.png", "report.html"}
    page = (tmp_path / "report.html").read_text()
    for name in ("members-per-partition", "fetch-load", "unfetched", "settle"):
        block = page.split(f'<script type="application/json" data-chart="chart-{name}">')[1].split("</script>")[0]
        assert json.loads(block)["data"], name
    heat = json.loads(page.split('data-chart="chart-members-per-partition">')[1].split("</script>")[0])
    assert heat["data"][0]["y"][:4] == ["orders-0", "orders-1", "orders-2", "orders-3"]
    assert "Kafka 4.2" in page and "no member stopped fetching" in page and "https://" not in page


def test_share_simple_plays_any_consumer_group_timeline_and_mixing_is_refused():
    result = kassign("simulate", str(CONSUMER_EXAMPLE), "--strategies", "share:simple", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["kind"] == "share-group"
    result = kassign("simulate", str(CONSUMER_EXAMPLE), "--strategies", "share:simple,range")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "'range' is a consumer-group strategy, not a share-group strategy" in result.stderr.replace('"', "'")


def test_a_bad_document_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("member: worker-3}", "member: worker-9}", 1))
    result = kassign("simulate", str(bad))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("kassign: error: simulation scenario events[3] (crash at 240s): no member "
                                    "'worker-9'")
    assert result.stderr.count("\n") == 1
    bad.write_text("group_type: share\ntopics: {t: 1}\nmembers: {a: {topics: [t], instance_id: x}}\n")
    result = kassign("simulate", str(bad))
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "static members" in result.stderr


def test_releases_before_4_2_are_one_line_errors_and_stdin_works():
    result = kassign("simulate", str(EXAMPLE), "--kafka-version", "4.1")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "4.2, 4.3 and 4.4" in result.stderr
    result = kassign("simulate", "-", "--json", stdin=EXAMPLE.read_text())
    assert result.returncode == 0 and json.loads(result.stdout)["kafka_version"] == "4.4"
