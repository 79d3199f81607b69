"""``--kafka-version`` on ``kassign assign`` and ``kassign simulate``, as a user runs them: a real subprocess."""

from __future__ import annotations

import json

import pytest

import kassign
from tests.cli.test_cli import EXAMPLES, run, run_json

# 5 partitions, 3 members iterating A, B, C: 4.0.0 gives the extras to A and B, later releases to B and C
FRESH = {"topics": {"t": 5}, "members": {m: {"topics": ["t"]} for m in "ABC"}}


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "group.json"
    path.write_text(json.dumps(FRESH))
    return str(path)


def _as_json(result: dict) -> dict:
    return {m: [list(tp) for tp in parts] for m, parts in result.items()}


def test_the_release_changes_the_answer_and_is_said(scenario_file: str) -> None:
    args = ("assign", "--protocol", "consumer", "-s", "uniform", scenario_file)
    old = run_json(*args, "--kafka-version", "4.0.0")
    new = run_json(*args, "--kafka-version", "4.3")
    assert old["assignment"] != new["assignment"]
    assert old == {"assignment": _as_json(kassign.assign("uniform", FRESH, protocol="consumer", kafka_version="4.0.0")),
                   "kafka_version": "4.0.0"}
    assert new == {"assignment": _as_json(kassign.assign("uniform", FRESH, protocol="consumer")),
                   "kafka_version": "4.3"}
    assert run_json(*args) == {**new, "kafka_version": "4.4"}  # 4.4 is the default, and answers as 4.3 here
    assert old["assignment"]["C"] == [["t", 4]] and new["assignment"]["A"] == [["t", 0]]


def test_the_table_title_names_the_release(scenario_file: str) -> None:
    for version in ("4.0.0", "4.1"):
        result = run("assign", "--protocol", "consumer", "-s", "uniform", "--kafka-version", version, scenario_file)
        assert result.returncode == 0, result.stderr
        assert f"Kafka {version})" in " ".join(result.stdout.split())
    by_partition = run("assign", "--protocol", "consumer", "-s", "range", "--by-partition", scenario_file)
    assert "consumer protocol, Kafka 4.4)" in " ".join(by_partition.stdout.split())


@pytest.mark.parametrize("protocol, version, says", [
    ("consumer", "4.5", "Kafka 4.5 is not a release kassign models"),
    ("consumer", "3.9", "Kafka 3.9's consumer protocol (KIP-848) was early access"),
    ("consumer", "3.6", "Kafka 3.6 has no consumer protocol"),
    ("consumer", "four", "MAJOR.MINOR"),
    ("classic", "2.8", "every release from 3.0 to 4.4"),
    ("classic", "4.5", "every release from 3.0 to 4.4"),
])
def test_a_bad_release_exits_2_with_one_line(scenario_file: str, protocol: str, version: str, says: str) -> None:
    result = run("assign", "--protocol", protocol, "-s", "range", "--kafka-version", version, scenario_file)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kassign: error: ") and says in lines[0]
    if protocol == "consumer" and version in ("3.9", "3.6"):
        assert all(modelled in lines[0] for modelled in ("4.0.0", "4.1", "4.2", "4.3", "4.4"))
        assert f"Kafka {version} has the classic protocol's assignors" in lines[0]


def test_a_bad_release_is_refused_before_the_scenario_is_read(tmp_path) -> None:
    result = run("assign", "--protocol", "consumer", "-s", "uniform", "--kafka-version", "4.5",
                 str(tmp_path / "missing.json"))
    assert result.returncode == 2 and "Kafka 4.5" in result.stderr


def test_classic_answers_alike_in_every_4x_and_stays_as_it_was(scenario_file: str) -> None:
    plain = run_json("assign", "-s", "roundrobin", scenario_file)
    assert plain == {"assignment": _as_json(kassign.assign("roundrobin", FRESH))}
    for version in ("4.0.0", "4.1", "4.4"):
        assert run_json("assign", "-s", "roundrobin", "--kafka-version", version, scenario_file) == plain


def test_simulate_plays_the_release_and_says_it() -> None:
    path = str(EXAMPLES / "consumer-protocol.yaml")
    docs = {v: run_json("simulate", path, "-s", "consumer:uniform,range", "--kafka-version", v)
            for v in ("4.0.0", "4.3")}
    for version, doc in docs.items():
        assert doc["kafka_version"] == version
        runs = {r["strategy"]: r for r in doc["strategies"]}
        assert runs["consumer:uniform"]["kafka_version"] == version and "kafka_version" not in runs["range"]
    totals = {v: {r["strategy"]: r["totals"] for r in doc["strategies"]} for v, doc in docs.items()}
    assert totals["4.0.0"]["consumer:uniform"] != totals["4.3"]["consumer:uniform"]  # the rules differ here
    assert totals["4.0.0"]["range"] == totals["4.3"]["range"]
    table = run("simulate", path, "-s", "consumer:uniform", "--kafka-version", "4.0.0")
    assert table.returncode == 0 and "consumer protocol as Kafka 4.0.0" in " ".join(table.stdout.split())
    classic = run_json("simulate", path, "-s", "range")
    assert "kafka_version" not in classic


@pytest.mark.parametrize("strategies, version", [("consumer:uniform", "4.5"), ("consumer:uniform", "3.9"),
                                                 ("range", "2.8"), ("range", "x")])
def test_simulate_refuses_a_bad_release(strategies: str, version: str) -> None:
    result = run("simulate", str(EXAMPLES / "consumer-protocol.yaml"), "-s", strategies, "--kafka-version", version)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and "kafka_version" in result.stderr
