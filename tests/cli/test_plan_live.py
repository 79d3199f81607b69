"""``kassign plan --bootstrap-server``'s inputs (``kassign.cli.plan_live``) read from the replayed 3-broker Kafka 4.3.1
cluster of the captures: the placement, sizes and disks handed to the planner, and an under-replicated partition
left where it is unless asked."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kassign.cli.plan_live import read_live_inputs
from tests.kafka.replay_balance import ReplayedCluster, decoded, metadata_with_isr, skip_without_captures


@pytest.fixture
def cluster():
    skip_without_captures()
    replay = ReplayedCluster()
    yield replay
    replay.stop()


def test_the_planner_gets_the_clusters_placement_sizes_and_disks(cluster):
    live = read_live_inputs(cluster.bootstrap, None, 5, None, None, None, False)
    meta = decoded("metadata-racks.json")
    expected = {(t.name, p.partition): list(p.replicas) for t in meta.topics for p in t.partitions
                if not t.name.startswith("__")}
    assert {(r["topic"], r["partition"]): r["replicas"] for r in live.current["partitions"]} == expected
    assert live.brokers == [(1, "rack-a"), (2, "rack-b"), (3, "rack-c")]
    assert live.sizes == live.cluster.sizes and live.rates is None and live.capacity is None and live.held == []
    for broker, disk in live.disk.items():
        told = live.cluster.disks[broker]
        assert disk == {"total_bytes": told.total_bytes, "usable_bytes": told.usable_bytes}
    assert set(live.disk) == {1, 2, 3}
    assert live.inputs_json()["held_under_replicated"] == []


def test_an_under_replicated_partition_stays_unless_asked():
    skip_without_captures()
    meta = metadata_with_isr("kc-big", 1, [2, 3])
    part = next(p for t in meta.topics if t.name == "kc-big" for p in t.partitions if p.partition == 1)
    with ReplayedCluster(metadata=meta) as replay:
        held = read_live_inputs(replay.bootstrap, None, 5, None, None, None, False)
        moved = read_live_inputs(replay.bootstrap, None, 5, None, None, None, True)
    keys = {(r["topic"], r["partition"]) for r in held.current["partitions"]}
    assert ("kc-big", 1) not in keys and held.held == [("kc-big", 1)]
    assert {(r["topic"], r["partition"]) for r in moved.current["partitions"]} == keys | {("kc-big", 1)}
    assert held.notes == [f"kc-big-1 is under-replicated (in sync: 2, 3 of replicas "
                          f"{', '.join(map(str, part.replicas))}): left where it is (--move-under-replicated moves it)"]
    assert held.inputs_json()["held_under_replicated"] == [{"topic": "kc-big", "partition": 1}]


def run_plan(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", "plan", *args], capture_output=True, text=True,
                          timeout=300)


def test_kassign_plan_balances_the_clusters_sizes_and_disks(cluster, tmp_path):
    out = tmp_path / "plan.json"
    result = run_plan("--bootstrap-server", cluster.bootstrap, "--timeout", "5", "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["summary"]
    live = read_live_inputs(cluster.bootstrap, None, 5, None, None, None, False)
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
