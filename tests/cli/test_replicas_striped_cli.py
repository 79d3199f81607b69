"""`kassign replicas --placer striped` as a user runs it: a real subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import kassign

BROKERS = "0:az-a,1:az-a,2:az-b,3:az-b:fenced,4:az-c,5:fenced"
API_BROKERS = [(0, "az-a", False), (1, "az-a", False), (2, "az-b", False), (3, "az-b", True),
               (4, "az-c", False), (5, None, True)]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", "replicas", *args],
                          capture_output=True, text=True, timeout=120)


def test_json_matches_the_api_and_names_the_seed() -> None:
    result = run("--placer", "striped", "-b", BROKERS, "-p", "8", "-r", "3", "--seed", "-42",
                 "--start-partition", "4", "--json")
    assert result.returncode == 0, result.stderr
    expected = kassign.assign_replicas(API_BROKERS, 8, 3, start_partition=4, placer="striped", seed=-42)
    assert json.loads(result.stdout) == {
        "assignment": {str(p): r for p, r in expected.items()}, "placer": "striped", "seed": -42, "kafka_version": "4.4"
    }


def test_random_seed_is_reported_and_repeats_the_run() -> None:
    first = run("--placer", "striped", "-b", BROKERS, "-p", "6", "-r", "2", "--json")
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    again = run("--placer", "striped", "-b", BROKERS, "-p", "6", "-r", "2", "--json", "--seed", str(doc["seed"]))
    assert json.loads(again.stdout) == doc


def test_table_shows_racks_fencing_and_the_seed() -> None:
    result = run("--placer", "striped", "-b", BROKERS, "-p", "4", "-r", "3")
    assert result.returncode == 0, result.stderr
    assert "striped" in result.stdout and "(fenced)" in result.stdout
    seed = re.search(r"random seed (-?\d+); pass --seed", result.stdout)
    assert seed, result.stdout
    repeat = run("--placer", "striped", "-b", BROKERS, "-p", "4", "-r", "3", "--seed", seed.group(1))
    rows = [line for line in result.stdout.splitlines() if "│" in line]
    assert len(rows) == 4 and rows == [line for line in repeat.stdout.splitlines() if "│" in line]
    assert f"seed {seed.group(1)}" in repeat.stdout and "random" not in repeat.stdout


def test_reassignment_json_stays_pure_and_the_seed_goes_to_stderr() -> None:
    result = run("--placer", "striped", "-b", "0:r1,1:r2,2:r3", "-p", "3", "-r", "2", "--topic", "orders",
                 "--reassignment-json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["version"] == 1 and [p["partition"] for p in doc["partitions"]] == [0, 1, 2]
    assert all(p["topic"] == "orders" and len(p["replicas"]) == 2 for p in doc["partitions"])
    assert "random seed" in result.stderr


def test_zero_partitions() -> None:
    result = run("--placer", "striped", "-b", "0,1", "-p", "0", "-r", "1", "--seed", "1", "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["assignment"] == {}


@pytest.mark.parametrize("placer", ["striped", "legacy"])
def test_plot_writes_a_png(tmp_path, placer: str) -> None:
    target = tmp_path / "charts" / f"{placer}.png"
    brokers = BROKERS if placer == "striped" else "0:az-a,1:az-a,2:az-b,3:az-b,4:az-c,5:az-c"
    result = run("--placer", placer, "-b", brokers, "-p", "12", "-r", "3", "--seed", "3", "--plot", str(target))
    assert result.returncode == 0, result.stderr
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_help_documents_the_striped_broker_syntax() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert "--placer" in result.stdout and "ID:RACK:fenced" in result.stdout and "KRaft" in result.stdout


BAD = [
    (["--placer", "striped", "-b", "0,1", "-p", "2", "-r", "1", "--start-index", "0"], "--start-index applies only"),
    (["--placer", "striped", "-b", "0:fenced,1:fenced", "-p", "2", "-r", "1"], "InvalidReplicationFactorException"),
    (["--placer", "striped", "-b", "0,1", "-p", "2", "-r", "3"], "InvalidReplicationFactorException"),
    (["--placer", "striped", "-b", "0,1", "-p", "2", "-r", "0"], "InvalidReplicationFactorException"),
    (["--placer", "striped", "-b", "0,1", "-p", "2", "-r", "40000"], "16-bit"),
    (["--placer", "striped", "-b", "0,1", "-p", "-1", "-r", "1"], "0 or more"),
    (["--placer", "striped", "-b", "0,x:fenced", "-p", "2", "-r", "1"], "not a broker id"),
    (["--placer", "striped", "-b", "0,0:r", "-p", "2", "-r", "1"], "listed twice"),
    (["--placer", "striped", "-b", "0", "-p", "1", "-r", "1", "--seed", str(1 << 63)], "Java long"),
    (["--placer", "legacy", "-b", "0,1:r:fenced", "-p", "2", "-r", "1"], "only mean something to --placer striped"),
    (["--placer", "diagonal", "-b", "0", "-p", "1", "-r", "1"], "--placer"),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kassign: error: ") and message in lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


# --- the release (--kafka-version) --------------------------------------------------------------


def test_a_4x_release_means_the_striped_placer_and_the_json_names_it() -> None:
    result = run("-b", BROKERS, "-p", "5", "-r", "2", "--seed", "11", "--kafka-version", "4.2", "--json")
    assert result.returncode == 0, result.stderr
    expected = kassign.assign_replicas(API_BROKERS, 5, 2, placer="striped", seed=11)
    assert json.loads(result.stdout) == {"assignment": {str(p): r for p, r in expected.items()}, "placer": "striped",
                                         "seed": 11, "kafka_version": "4.2"}


def test_a_3x_release_means_adminutils() -> None:
    result = run("-b", "0:a,1:b,2:c", "-p", "3", "-r", "2", "--start-index", "0", "--kafka-version", "3.6", "--json")
    assert result.returncode == 0, result.stderr
    expected = kassign.assign_replicas([(0, "a"), (1, "b"), (2, "c")], 3, 2, 0)
    assert json.loads(result.stdout) == {"assignment": {str(p): r for p, r in expected.items()}, "placer": "legacy",
                                         "kafka_version": "3.6"}


def test_the_table_says_which_release_and_placer_answered() -> None:
    result = run("-b", "0,1,2", "-p", "2", "-r", "2", "--seed", "1", "--kafka-version", "3.1", "--placer", "striped")
    assert result.returncode == 0, result.stderr
    assert "Kafka 3.1: the KRaft controller's striped placer (KRaft was early access before 3.3" in result.stdout
    legacy = run("-b", "0,1,2", "-p", "2", "-r", "2", "--start-index", "0")
    assert "Kafka 3.9: AdminUtils" in legacy.stdout


@pytest.mark.parametrize("args", [["--placer", "legacy", "--kafka-version", "4.1"],
                                  ["--placer", "legacy", "--kafka-version", "4.4.0"]])
def test_adminutils_of_a_release_without_it_is_exit_2_with_one_line(args: list[str]) -> None:
    result = run("-b", "0,1", "-p", "2", "-r", "2", *args)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "has no AdminUtils placement" in result.stderr


@pytest.mark.parametrize("version, words", [("4.2", "All brokers are currently fenced."),
                                            ("4.3", "All brokers are currently fenced, or have all their log "
                                                    "directories cordoned.")])
def test_refusals_read_as_the_release_words_them(version: str, words: str) -> None:
    result = run("--placer", "striped", "-b", "0:fenced", "-p", "1", "-r", "1", "--seed", "1", "--kafka-version",
                 version)
    assert result.returncode == 2
    assert result.stderr == f"kassign: error: InvalidReplicationFactorException (Kafka {version}): {words}\n"
