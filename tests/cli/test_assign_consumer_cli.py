"""``kassign assign --protocol consumer`` as a user runs it: a real subprocess."""

from __future__ import annotations

import json

import pytest

import kassign
from tests.cli.test_cli import run, run_json
from tests.conftest import load_vectors

# Kafka's uniform heuristic leaves spread 2 here; 0 is possible (C0 takes one partition of each topic).
HETEROGENEOUS = {
    "topics": {"t0": 3, "t1": 5},
    "members": {"C0": {"topics": ["t0", "t1"], "rack": "r1"}, "C1": {"topics": ["t0"]},
                "C2": {"topics": ["t1"]}, "C3": {"topics": ["t1"]}},
}


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "group.json"
    path.write_text(json.dumps(HETEROGENEOUS))
    return str(path)


@pytest.mark.parametrize("strategy", ["uniform", "range"])
def test_json_matches_the_api(scenario_file: str, strategy: str) -> None:
    document = run_json("assign", "--protocol", "consumer", "--strategy", strategy, scenario_file)
    expected = kassign.assign(strategy, HETEROGENEOUS, protocol="consumer")
    assert document["assignment"] == {m: [list(tp) for tp in parts] for m, parts in expected.items()}


def test_report_states_the_most_even_spread_and_that_racks_are_ignored(scenario_file: str) -> None:
    report = run_json("assign", "--protocol", "consumer", "-s", "uniform", "--report", scenario_file)["report"]
    assert report["spread"] == 2 and report["most_even_spread"] == 0 and report["racks_ignored"] is True
    table = run("assign", "--protocol", "consumer", "-s", "uniform", scenario_file)
    assert table.returncode == 0
    assert "the most even assignment possible has spread 0" in table.stdout
    assert "ignore racks" in table.stdout


def test_a_vector_line_through_stdin() -> None:
    line = next(v for v in load_vectors("assign-uniform.jsonl") if not v["homogeneous"])
    document = run_json("assign", "--protocol", "consumer", "-s", "uniform", "-", stdin=json.dumps(line["scenario"]))
    assert document["assignment"] == line["expected"]


def test_plot(scenario_file: str, tmp_path) -> None:
    png = tmp_path / "range.png"
    result = run("assign", "--protocol", "consumer", "-s", "range", "--plot", str(png), scenario_file)
    assert result.returncode == 0, result.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("args, message", [
    (["-s", "sticky"], "no server-side assignor 'sticky'"),
    (["-s", "uniform", "-o", "seed=3"], "take no options"),
    (["-s", "uniform", "--protocol", "eager"], "Invalid value for '--protocol'"),
])
def test_bad_input_exits_2_with_one_line(scenario_file: str, args: list[str], message: str) -> None:
    result = run("assign", "--protocol", "consumer", *args, scenario_file)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
