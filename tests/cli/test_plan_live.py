"""``kassign plan --bootstrap-server`` on the replayed 3-broker Kafka 4.3.1 cluster of the captures: the plan made
from the inputs it reads (``tests/kafka/test_plan_inputs.py`` checks the reading itself), and its one-line refusals."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import kassign
from tests.kafka.replay_balance import ReplayedCluster, skip_without_captures


@pytest.fixture
def cluster():
    skip_without_captures()
    replay = ReplayedCluster()
    yield replay
    replay.stop()


def run_plan(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", "plan", *args], capture_output=True, text=True,
                          timeout=300)


def test_kassign_plan_balances_the_clusters_sizes_and_disks(cluster, tmp_path):
    out = tmp_path / "plan.json"
    result = run_plan("--bootstrap-server", cluster.bootstrap, "--timeout", "5", "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["summary"]
    live = kassign.read_plan_inputs(cluster.bootstrap, timeout=5)
    assert json.loads((tmp_path / "plan-rollback.json").read_text()) == live.current
    assert summary["inputs"]["cluster"]["sources"]["placement"]["api"] == "Metadata"
    assert summary["inputs"]["cluster"]["sizes"] == {t: {str(p): b for p, b in parts.items()}
                                                     for t, parts in live.sizes.items()}
    names = [g["name"] for g in summary["goals"]]
    assert names[:2] == ["rack", "disk-capacity"] and "disk" in names  # the disks read make these goals in force
    assert all(g["met"] for g in summary["goals"] if g["kind"] == "hard")
    for row in json.loads(out.read_text())["partitions"]:
        assert set(row["replicas"]) <= {1, 2, 3}
    shown = run_plan("--bootstrap-server", cluster.bootstrap, "--timeout", "5")
    assert shown.returncode == 0, shown.stderr
    assert "read: placement, leaders, in-sync replicas, racks: Metadata v" in shown.stdout


def test_live_only_options_need_a_cluster_and_a_bad_capacity_is_one_line(cluster, tmp_path):
    for args in (["--sample", "30s"], ["--move-under-replicated"]):
        result = run_plan("--current", "x.json", "--brokers", "1,2", *args)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "needs --bootstrap-server" in result.stderr
    capacity = tmp_path / "capacity.json"
    capacity.write_text(json.dumps({"brokers": {"7": {"disk_bytes": 10**12}}}))
    result = run_plan("--bootstrap-server", cluster.bootstrap, "--timeout", "5", "--capacity", str(capacity))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "unknown broker id 7 (the cluster's brokers: 1, 2, 3)" in result.stderr
