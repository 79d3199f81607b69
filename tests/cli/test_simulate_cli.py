"""`kassign simulate` as a user runs it: a real subprocess."""

from __future__ import annotations

import base64
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path
from tests.conftest import REPO

EXAMPLES = REPO / "examples"


def kassign(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", *args], capture_output=True, text=True,
                          timeout=120)


def test_json_compares_strategies_on_the_seed_story():
    result = kassign("simulate", str(EXAMPLES / "seeds-sticky-vs-roundrobin.yaml"), "--strategies",
                     "roundrobin,cooperative-sticky", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    runs = {r["strategy"]: r for r in doc["strategies"]}
    assert list(runs) == ["roundrobin", "cooperative-sticky"]
    leave_rr = runs["roundrobin"]["events"][1]
    leave_coop = runs["cooperative-sticky"]["events"][1]
    assert leave_rr["description"] == "leave C1" and leave_rr["revoked"] == 8 and leave_rr["moved"] == 5
    assert leave_coop["revoked"] == 3 and leave_coop["unowned_partition_seconds"] == 6.0
    assert runs["roundrobin"]["totals"]["rebalances"] == 2


def test_table_and_plots(tmp_path):
    result = kassign("simulate", str(EXAMPLES / "seeds-different-subscriptions.yaml"), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "roundrobin" in result.stdout and "sticky" in result.stdout and "unowned" in result.stdout
    for name in ("moves.png", "unowned.png", "load-roundrobin.png", "load-sticky.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "report.html").read_text()
    # the same charts, interactive, drawn by the plotly.js packed into the page: nothing loaded from elsewhere
    for name in ("moves", "unowned", "load-roundrobin", "load-sticky"):
        block = page.split(f'<script type="application/json" data-chart="chart-{name}">')[1].split("</script>")[0]
        assert json.loads(block)["data"], name
    bundle = page.split('<script type="application/octet-stream" id="plotly-js">')[1].split("</script>")[0]
    assert b"plotly" in gzip.decompress(base64.b64decode(bundle))[:2000].lower()
    assert not re.search(r"<(script|img|link|iframe)\b[^>]*\b(src|href)=", page)
    assert "http://" not in page and "https://" not in page
    # --plot is --out's other name; both naming one directory is fine, two are not
    again = kassign("simulate", str(EXAMPLES / "seeds-different-subscriptions.yaml"), "--plot", str(tmp_path / "p"),
                    "--out", str(tmp_path / "p"))
    assert again.returncode == 0 and (tmp_path / "p" / "report.html").exists(), again.stderr
    both = kassign("simulate", str(EXAMPLES / "seeds-different-subscriptions.yaml"), "--plot", str(tmp_path / "a"),
                   "--out", str(tmp_path / "b"))
    assert both.returncode == 2 and both.stderr.startswith("kassign: error:") and both.stderr.count("\n") == 1
    assert "--out" in both.stderr and not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_bad_input_exits_2_with_one_line():
    for args in (["simulate", "missing.yaml"],
                 ["simulate", str(EXAMPLES / "seeds-sticky-vs-roundrobin.yaml"), "--strategies", "nosuch"]):
        result = kassign(*args)
        assert result.returncode == 2
        assert result.stderr.startswith("kassign: error:") and result.stderr.count("\n") == 1


def test_every_example_scenario_runs():
    for path in sorted(EXAMPLES.glob("*.yaml")):
        result = kassign("simulate", str(path), "--json")
        assert result.returncode == 0, f"{path.name}: {result.stderr}"
        assert json.loads(result.stdout)["strategies"]


def test_consumer_protocol_compared_with_eager_and_cooperative_on_one_timeline(tmp_path):
    result = kassign("simulate", str(EXAMPLES / "consumer-protocol.yaml"), "--strategies",
                     "range,cooperative-sticky,consumer:uniform", "--json", "--plot", str(tmp_path))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    runs = {r["strategy"]: r for r in doc["strategies"]}
    assert [r["group_protocol"] for r in runs.values()] == ["classic", "classic", "consumer"]
    assert doc["settings"]["heartbeat_interval"] == 5
    consumer = runs["consumer:uniform"]
    assert consumer["totals"]["heartbeats"] > 0 and runs["range"]["totals"]["heartbeats"] == 0
    unowned = {s: r["totals"]["unowned_partition_seconds"] for s, r in runs.items()}
    assert unowned["consumer:uniform"] < unowned["cooperative-sticky"] < unowned["range"]
    assert [e["description"] for e in consumer["events"]][:4] == [
        "4 members join", "join C4 (orders, payments)", "crash C1", "join C5 (orders, payments)"]
    for name in ("moves.png", "unowned.png", "load-range.png", "load-consumer_uniform.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "consumer:uniform" in (tmp_path / "report.html").read_text()

    table = kassign("simulate", str(EXAMPLES / "consumer-protocol.yaml"), "--events")
    assert table.returncode == 0, table.stderr
    assert "consumer:uniform: per event" in table.stdout and "heartbeats" in table.stdout
    # the note is in the table (wrapped to its column) and whole in the JSON
    assert "session" in table.stdout
    assert any("session timed out" in event["note"] for event in consumer["events"])

    bad = kassign("simulate", str(EXAMPLES / "consumer-protocol.yaml"), "--strategies", "consumer:sticky")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "uniform, range" in bad.stderr


def test_rolling_upgrade_shows_the_assignor_in_force_and_refusals(tmp_path):
    result = kassign("simulate", str(EXAMPLES / "mixed-strategies.yaml"), "-s", "range", "--events",
                     "--plot", str(tmp_path))
    assert result.returncode == 0, result.stderr
    doc = json.loads(kassign("simulate", str(EXAMPLES / "mixed-strategies.yaml"), "-s", "range", "--json").stdout)
    in_force = [event["protocol"] for event in doc["strategies"][0]["events"]]
    assert in_force[0] == "range" and in_force[-1] == "cooperative-sticky"  # the upgrade completes
    switch = in_force.index("cooperative-sticky")
    rows = [line for line in result.stdout.splitlines() if line.startswith("│ ") and "│" in line[2:]]
    at_switch = next(line for line in rows if line.startswith(f"│ {doc['strategies'][0]['events'][switch]['at']:g} "))
    assert "cooperative-" in at_switch
    page = (tmp_path / "report.html").read_text()
    assert "<tr class=refused>" in page and "INCONSISTENT_GROUP_PROTOCOL" in page
    assert "partitions that ended the event with a different member" in page  # every metric explained
    assert page.count("assignor in force") == 1


def test_charts_fit_the_page_on_a_long_timeline(tmp_path):
    events = "\n".join(f"  - {{at: {10 * (i + 1)}, type: join, member: N{i}, topics: [t0]}}" for i in range(40))
    path = tmp_path / "long.yaml"
    path.write_text(f"topics: {{t0: 12}}\nmembers:\n  A: {{topics: [t0]}}\nevents:\n{events}\n")
    result = kassign("simulate", str(path), "-s", "range,sticky,cooperative-sticky,consumer:uniform",
                     "--plot", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    import struct
    for name in ("moves.png", "unowned.png", "load-range.png"):
        width = struct.unpack(">I", (tmp_path / "out" / name).read_bytes()[16:20])[0]
        assert width <= 1600, (name, width)  # 14 inches at 110 dpi, plus the tight box's margins


def test_report_renders_in_a_real_browser(tmp_path):
    from tests.browser import check_page

    result = kassign("simulate", str(EXAMPLES / "mixed-strategies.yaml"), "-s", "range,cooperative-sticky",
                     "--plot", str(tmp_path))
    assert result.returncode == 0, result.stderr
    verdict = check_page(tmp_path / "report.html", tmp_path / "report.png")
    assert verdict == "KASSIGN-OK 4"  # moves, unowned, and one heat map per strategy, all decoded


def test_a_users_invalid_assignor_is_named_in_simulate_too(tmp_path):
    (tmp_path / "my_assignors.py").write_text(
        "from kassign.groups.classic.assignors import ConsumerPartitionAssignor\n\n"
        "class Twice(ConsumerPartitionAssignor):\n    name = 'twice'\n\n"
        "    def assign(self, cluster, subscriptions):\n        return {m: [('t0', 0)] for m in subscriptions}\n\n"
        "class Boom(ConsumerPartitionAssignor):\n    name = 'boom'\n\n"
        "    def assign(self, cluster, subscriptions):\n        raise RuntimeError('no config')\n")
    (tmp_path / "sim.yaml").write_text("topics: {t0: 2}\nmembers:\n  A: {topics: [t0]}\n  B: {topics: [t0]}\n")
    for strategy, message in (("my_assignors:Twice", "assignor 'twice' assigned t0-0 to both 'A' and 'B'"),
                              ("my_assignors:Boom", "assignor 'boom' failed: RuntimeError: no config")):
        result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "simulate", "sim.yaml", "-s", strategy],
                                capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert result.returncode == 2 and result.stderr.strip() == f"kassign: error: {message}", result.stderr
