"""kassign's ``optimal`` Streams assignor in the simulator: what it saves against Kafka's high-availability on
the examples the Kafka Streams page quotes, and what it costs (docs/kafka-streams.md, "What it saves")."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kassign.groups.simulate.streams_engine import simulate_streams
from kassign.groups.simulate.streams_scenario import load_streams_timeline
from tests.conftest import REPO

RESTART = REPO / "examples" / "streams-restart.yaml"
SCALE_OUT = REPO / "examples" / "streams-scale-out.yaml"


def totals(path, strategy: str) -> dict:
    return simulate_streams(load_streams_timeline(str(path)), strategy, segments=False).totals()


@pytest.mark.parametrize(("standbys", "moved"), [("", (16, 32)), (":standbys=1", (16, 53))])
def test_optimal_saves_moves_state_and_rebalances_on_the_restart_example(standbys: str, moved) -> None:
    kafka, ours = totals(RESTART, "high-availability" + standbys), totals(RESTART, "optimal" + standbys)
    assert ours["probing_rebalances"] == 0 and ours["warmups"] == 0
    assert kafka["probing_rebalances"] >= 1 and kafka["warmups"] >= 6
    assert (ours["moved"], kafka["moved"]) == moved  # the figures the Kafka Streams page quotes
    assert ours["restored_bytes"] < 0.55 * kafka["restored_bytes"]
    assert ours["rebalances"] < kafka["rebalances"]
    assert ours["unsettled_seconds"] < kafka["unsettled_seconds"] / 20
    # and no more unavailability: the same without standbys, 8 s less with one
    assert ours["unavailable_task_seconds"] <= kafka["unavailable_task_seconds"] + 1e-6


def test_optimal_costs_unavailability_on_a_scale_out() -> None:
    """The newcomer gets its share at once and restores it; Kafka warms it up first."""
    kafka, ours = totals(SCALE_OUT, "high-availability"), totals(SCALE_OUT, "optimal")
    assert kafka["unavailable_task_seconds"] < 10 < 80 < ours["unavailable_task_seconds"]
    assert ours["restored_bytes"] < kafka["restored_bytes"] and ours["rebalances"] < kafka["rebalances"]


def test_simulate_and_assign_take_optimal_on_the_command_line(tmp_path) -> None:
    result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "simulate", str(RESTART), "--json",
                             "--strategies", "optimal,optimal:standbys=1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    runs = {r["strategy"]: r for r in json.loads(result.stdout)["strategies"]}
    assert set(runs) == {"optimal", "optimal:standbys=1"} and runs["optimal:standbys=1"]["num_standby_replicas"] == 1
    scenario = {"subtopologies": {"0": {"partitions": 2, "stateful": True}}, "end_offset_sums": {"0_0": 9, "0_1": 9},
                "clients": {"00000000-0000-0000-0000-000000000001": {"consumers": {"a": {
                    "owned": ["0_0", "0_1"], "offset_sums": {"0_0": -2, "0_1": -2}}}},
                    "00000000-0000-0000-0000-000000000002": {"consumers": {"b": {}}}}}
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "assign", "--protocol", "classic-streams",
                             "-s", "optimal", str(path), "--json"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)["assignment"]
    assert [len(c["active"]) for c in answer["clients"].values()] == [1, 1]
    assert answer["probing_rebalance"] is False
