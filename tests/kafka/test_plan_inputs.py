"""``kassign.read_plan_inputs`` (:mod:`kassign.kafka.plan_inputs`) on the replayed 3-broker Kafka 4.3.1 cluster of
the captures: the placement, sizes and disks handed to the planner, an under-replicated partition left where it is
unless asked, and ``plan_reassignment(**inputs.arguments())`` giving the plan ``kassign plan --bootstrap-server``
writes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import kassign
from tests.kafka.replay_balance import ReplayedCluster, decoded, metadata_with_isr, skip_without_captures


@pytest.fixture
def cluster():
    skip_without_captures()
    replay = ReplayedCluster()
    yield replay
    replay.stop()


def test_the_planner_gets_the_clusters_placement_sizes_and_disks(cluster):
    live = kassign.read_plan_inputs(cluster.bootstrap, timeout=5)
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
        held = kassign.read_plan_inputs(replay.bootstrap, timeout=5)
        moved = kassign.read_plan_inputs(replay.bootstrap, timeout=5, move_under_replicated=True)
    keys = {(r["topic"], r["partition"]) for r in held.current["partitions"]}
    assert ("kc-big", 1) not in keys and held.held == [("kc-big", 1)]
    assert {(r["topic"], r["partition"]) for r in moved.current["partitions"]} == keys | {("kc-big", 1)}
    assert held.notes == [f"kc-big-1 is under-replicated (in sync: 2, 3 of replicas "
                          f"{', '.join(map(str, part.replicas))}): left where it is (--move-under-replicated moves it)"]
    assert held.inputs_json()["held_under_replicated"] == [{"topic": "kc-big", "partition": 1}]


def test_the_plan_from_python_is_the_plan_the_command_writes(cluster, tmp_path):
    inputs = kassign.read_plan_inputs(cluster.bootstrap, timeout=5)
    plan = kassign.plan_reassignment(**inputs.arguments())
    out = tmp_path / "plan.json"
    result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "plan", "--bootstrap-server", cluster.bootstrap,
                             "--timeout", "5", "--out", str(out), "--json"], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text()) == json.loads(json.dumps(plan))
    summary = json.loads(result.stdout)["summary"]
    assert summary["goals"] == json.loads(json.dumps(plan.summary["goals"]))
    assert "disk-capacity" in [g["name"] for g in plan.summary["goals"]]  # the disks read put it in force
