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


def test_classic_roundrobin_deals_alike_in_every_release_and_says_which(scenario_file: str) -> None:
    plain = run_json("assign", "-s", "roundrobin", scenario_file)
    assert plain == {"assignment": _as_json(kassign.assign("roundrobin", FRESH)), "kafka_version": "4.4"}
    for version in ("3.0.0", "3.4.0", "4.0.0", "4.1", "4.4"):
        said = run_json("assign", "-s", "roundrobin", "--kafka-version", version, scenario_file)
        assert said == {**plain, "kafka_version": version}


# C0 listed what it owned as t0-3, t0-0, t0-1, t0-2: Kafka before 3.7.1 keeps the first two it listed
# (t0-3 and t0-0), 3.7.1 and later the two lowest (KAFKA-16277)
HISTORY = {"topics": {"t0": 4}, "members": {
    "C0": {"topics": ["t0"], "owned": [["t0", 3], ["t0", 0], ["t0", 1], ["t0", 2]], "generation": 4},
    "C1": {"topics": ["t0"]}}}


@pytest.mark.parametrize("version, kept", [("3.0.0", [0, 3]), ("3.4.0", [0, 3]), ("3.6", [0, 3]), ("3.7.0", [0, 3]),
                                           ("3.7.1", [0, 1]), ("4.4", [0, 1])])
def test_classic_sticky_answers_as_the_release_and_says_it(tmp_path, version: str, kept: list[int]) -> None:
    path = tmp_path / "history.json"
    path.write_text(json.dumps(HISTORY))
    doc = run_json("assign", "-s", "sticky", "--kafka-version", version, str(path))
    assert doc == {"assignment": _as_json(kassign.assign("sticky", HISTORY, kafka_version=version)),
                   "kafka_version": version}
    assert [p for _, p in doc["assignment"]["C0"]] == kept
    table = run("assign", "-s", "sticky", "--kafka-version", version, str(path))
    assert table.returncode == 0 and f"sticky assignment (Kafka {version})" in table.stdout


def test_an_assignor_of_kassigns_own_names_no_release(scenario_file: str) -> None:
    doc = run_json("assign", "-s", "random", "-o", "seed=7", scenario_file)
    assert set(doc) == {"assignment"}
    table = run("assign", "-s", "random", "-o", "seed=7", "--kafka-version", "3.4.0", scenario_file)
    assert table.returncode == 0 and table.stdout.splitlines()[0].strip() == "random assignment"


def test_the_release_is_not_an_assignor_option(scenario_file: str) -> None:
    result = run("assign", "-s", "sticky", "-o", "kafka_version=3.4.0", scenario_file)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and "--kafka-version" in result.stderr


def test_simulate_plays_the_release_and_says_it() -> None:
    path = str(EXAMPLES / "consumer-protocol.yaml")
    docs = {v: run_json("simulate", path, "-s", "consumer:uniform,range", "--kafka-version", v)
            for v in ("4.0.0", "4.3")}
    for version, doc in docs.items():
        assert doc["kafka_version"] == version
        runs = {r["strategy"]: r for r in doc["strategies"]}
        assert runs["consumer:uniform"]["kafka_version"] == version and runs["range"]["kafka_version"] == version
    totals = {v: {r["strategy"]: r["totals"] for r in doc["strategies"]} for v, doc in docs.items()}
    assert totals["4.0.0"]["consumer:uniform"] != totals["4.3"]["consumer:uniform"]  # the rules differ here
    assert totals["4.0.0"]["range"] == totals["4.3"]["range"]
    table = run("simulate", path, "-s", "consumer:uniform", "--kafka-version", "4.0.0")
    assert table.returncode == 0 and "consumer protocol as Kafka 4.0.0" in " ".join(table.stdout.split())
    classic = run_json("simulate", path, "-s", "range")
    assert classic["kafka_version"] == "4.4" and classic["strategies"][0]["kafka_version"] == "4.4"
    classic = run("simulate", path, "-s", "range", "--kafka-version", "3.4.0")
    assert classic.returncode == 0 and "classic assignors as Kafka 3.4.0" in " ".join(classic.stdout.split())


def test_simulate_plays_the_classic_release() -> None:
    # scaling out over two topics: before 3.7.1 a member over its quota keeps the partitions it listed first,
    # from 3.7.1 on the lowest partition numbers (KAFKA-16277), so C5 ends with other partitions
    path = str(EXAMPLES / "cooperative-scale-out.yaml")
    for version in ("3.4.0", "4.4"):
        doc = run_json("simulate", path, "-s", "sticky", "--kafka-version", version)
        assert doc["kafka_version"] == version and doc["strategies"][0]["kafka_version"] == version
    from kassign.groups.simulate.engine import TimelineRun
    from kassign.groups.simulate.scenario import load_sim_scenario

    scenario = load_sim_scenario(path)
    owned = {}
    for version in ("3.4.0", "3.7.0", "3.7.1", "4.4"):
        run_ = TimelineRun(scenario, "sticky", version)
        run_.run()
        owned[version] = {m: sorted((tp.topic, tp.partition) for tp in member.owned) for m, member in run_.members.items()}
    assert owned["3.4.0"] == owned["3.7.0"] != owned["3.7.1"] == owned["4.4"]
    assert ("orders", 3) in owned["3.7.0"]["C5"] and ("orders", 3) in owned["3.7.1"]["C0"]


@pytest.mark.parametrize("strategies, version", [("consumer:uniform", "4.5"), ("consumer:uniform", "3.9"),
                                                 ("range", "2.8"), ("range", "x")])
def test_simulate_refuses_a_bad_release(strategies: str, version: str) -> None:
    result = run("simulate", str(EXAMPLES / "consumer-protocol.yaml"), "-s", strategies, "--kafka-version", version)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and "kafka_version" in result.stderr


def test_a_group_the_release_fails_on_exits_2_with_kafkas_exception(tmp_path) -> None:
    from tests.conftest import load_vectors

    line = next(ln for ln in load_vectors("kafka-3.x/3.6.2/assign-cooperative-sticky.jsonl") if "expected_error" in ln)
    path = tmp_path / "fails.json"
    path.write_text(json.dumps(line["scenario"]))
    result = run("assign", "-s", "cooperative-sticky", "--kafka-version", "3.6.2", str(path))
    assert result.returncode == 2 and result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert "IllegalStateException: We haven't reached the expected number of members" in result.stderr
    assert run("assign", "-s", "cooperative-sticky", "--kafka-version", "3.7.1", str(path)).returncode == 0
