"""Charts: real PNGs drawn by matplotlib from real assignments and placements."""

from __future__ import annotations

import subprocess
import sys

import pytest
from matplotlib.image import imread

import kassign
from kassign.core.errors import KassignError
from kassign.core.charts import assignment_chart, replica_chart

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _assert_png(path) -> None:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    height, width = imread(path).shape[:2]
    assert height > 100 and width > 100


def test_assignment_chart(tmp_path) -> None:
    scenario = {"topics": {"t0": 5, "t1": 3}, "members": {f"C{i}": {"topics": ["t0", "t1"]} for i in range(3)}}
    _assert_png(assignment_chart(kassign.assign("range", scenario), tmp_path / "a.png", "range"))


def test_replica_chart(tmp_path) -> None:
    brokers = [(0, "a"), (1, "a"), (2, "b"), (3, "c")]
    placement = kassign.assign_replicas(brokers, 12, 3, start_index=0)
    _assert_png(replica_chart(placement, dict(brokers), tmp_path / "nested" / "r.png"))


def test_unwritable_plot_path_is_a_clear_error(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(KassignError, match="cannot write plot"):
        replica_chart({0: [0]}, {0: None}, blocker / "r.png")


def test_cli_plot_options(tmp_path) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text('{"topics": {"t": 4}, "members": {"a": {"topics": ["t"]}, "b": {"topics": ["t"]}}}')
    cli = [sys.executable, "-m", "kassign.cli.main"]
    subprocess.run([*cli, "assign", "-s", "roundrobin", str(scenario), "--plot", str(tmp_path / "a.png")], check=True,
                   capture_output=True)
    subprocess.run([*cli, "replicas", "-b", "0:x,1:y", "-p", "4", "-r", "2", "--plot", str(tmp_path / "r.png")],
                   check=True, capture_output=True)
    _assert_png(tmp_path / "a.png")
    _assert_png(tmp_path / "r.png")
