"""`kassign assign` shows every partition: withheld ones, ones nobody can take, and the per-partition view."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import kassign

SCENARIO = {
    "topics": {"t0": 6, "orphan": 2},
    "members": {
        "C0": {"topics": ["t0", "ghost"], "owned": [["t0", p] for p in range(6)], "generation": 3},
        "C1": {"topics": ["t0"]},
        "C2": {"topics": ["t0"]},
    },
}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", *args], capture_output=True, text=True,
                          timeout=60)


def test_the_table_lists_revoked_and_unsubscribed_partitions(tmp_path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENARIO))
    result = run("assign", "-s", "cooperative-sticky", str(path))
    assert result.returncode == 0, result.stderr
    expected = kassign.assign("cooperative-sticky", SCENARIO)
    held = {tp for parts in expected.values() for tp in parts}
    revoked = [("t0", p) for p in range(6) if ("t0", p) not in held]
    assert len(revoked) == 4  # C0 keeps its share of 2; the other 4 wait for the next round
    lines = result.stdout.splitlines()
    assert any("(revoked until the next round)" in line and "│     4 │" in line for line in lines), result.stdout
    assert any("(unassigned: no subscriber)" in line and "orphan: 0-1" in line for line in lines), result.stdout
    assert "topic 'ghost' does not exist; subscribed by C0" in result.stdout


def test_by_partition_is_the_describe_view(tmp_path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENARIO))
    table = run("assign", "-s", "sticky", "--by-partition", str(path))
    assert table.returncode == 0, table.stderr
    report = json.loads(run("assign", "-s", "sticky", "--report", "--json", str(path)).stdout)["report"]
    states = {(row["topic"], row["partition"]): row for row in report["partitions"]}
    assert len(states) == 8
    assignment = kassign.assign("sticky", SCENARIO)
    for member, parts in assignment.items():
        for topic, partition in parts:
            row = states[(topic, partition)]
            assert row["member"] == member
            assert row["state"] == ("kept" if member == "C0" else "moved")
            assert row["previous"] == "C0"
    assert states[("orphan", 1)] == {"topic": "orphan", "partition": 1, "member": None, "previous": None,
                                     "state": "unassigned: no subscriber"}
    assert report["unknown_topics"] == {"ghost": ["C0"]}
    moved_rows = [line for line in table.stdout.splitlines() if "│ moved" in line]
    assert len(moved_rows) == sum(len(parts) for m, parts in assignment.items() if m != "C0")


def test_plot_extension_is_checked_before_any_work_and_the_path_is_told(tmp_path) -> None:
    bad = run("assign", "-s", "range", "--plot", str(tmp_path / "chart.gif"), str(tmp_path / "absent.json"))
    assert bad.returncode == 2 and "name a .png" in bad.stderr, bad.stderr
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENARIO))
    good = run("assign", "-s", "range", "--plot", str(tmp_path / "chart.svg"), "--json", str(path))
    assert good.returncode == 0, good.stderr
    assert f"plot written to {tmp_path / 'chart.svg'}" in good.stderr
    assert (tmp_path / "chart.svg").read_text().lstrip().startswith("<?xml")
    json.loads(good.stdout)  # stdout stays pure JSON


def test_load_aware_shows_each_members_load(tmp_path) -> None:
    scenario = {"topics": {"t0": 4}, "members": {"a": {"topics": ["t0"]}, "b": {"topics": ["t0"]}}}
    loads = {"t0": [9000, 1.5, 1, 1]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario))
    result = run("assign", "-s", "load-aware", "-o", f"partition_loads={json.dumps(loads)}", str(path))
    assert result.returncode == 0, result.stderr
    assignment = kassign.assign("load-aware", scenario, partition_loads=loads)
    for member, parts in assignment.items():
        load = sum(loads["t0"][p] for _, p in parts)
        shown = f"{load:,.0f}" if float(load).is_integer() else f"{load:,.2f}"
        assert any(line.startswith(f"│ {member} ") and re.search(rf"│\s+{re.escape(shown)} │", line)
                   for line in result.stdout.splitlines()), result.stdout


def test_human_units() -> None:
    from kassign.cli.common import count, human_bytes, percent

    assert [human_bytes(b) for b in (0, 1023, 1024, 1536, 5 * 2**20, 3 * 2**30, 2**50)] == \
        ["0 B", "1,023 B", "1.0 KiB", "1.5 KiB", "5.0 MiB", "3.0 GiB", "1,024.0 TiB"]
    assert [count(x) for x in (0, 12345, 2.5, 1e6)] == ["0", "12,345", "2.50", "1,000,000"]
    assert percent(0.1234) == "12.3%"
