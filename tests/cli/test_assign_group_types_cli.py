"""``kassign assign --protocol share | streams | classic-streams``, as a user runs it: a real subprocess, the answer
equal to the API's, the release said, bad input one line with exit 2."""

from __future__ import annotations

import json

import pytest

import kassign
from tests.cli.test_cli import EXAMPLES, run, run_json


def _load(name: str) -> dict:
    return json.loads((EXAMPLES / name).read_text())


def test_share_group_json_is_the_api_answer_with_its_release() -> None:
    out = run_json("assign", "--protocol", "share", "-s", "simple", str(EXAMPLES / "share-group.json"))
    expected = kassign.assign("simple", _load("share-group.json"), protocol="share")
    assert out == {"assignment": {m: [list(tp) for tp in ps] for m, ps in expected.items()}, "kafka_version": "4.4"}


def test_share_group_table_says_what_is_shared() -> None:
    result = run("assign", "--protocol", "share", "-s", "simple", "--kafka-version", "4.2.1",
                 str(EXAMPLES / "share-group.json"))
    assert result.returncode == 0, result.stderr
    assert "share group, Kafka 4.2" in result.stdout
    holders: dict = {}
    for parts in kassign.assign("simple", _load("share-group.json"), protocol="share").values():
        for tp in parts:
            holders[tuple(tp)] = holders.get(tuple(tp), 0) + 1
    shared = sum(1 for n in holders.values() if n > 1)
    assert f"{shared} of {len(holders)} assigned partitions shared by 2 or more members" in " ".join(result.stdout.split())


def test_share_group_as_kafka_4_1_runs_it() -> None:
    path = str(EXAMPLES / "share-group.json")
    expected = kassign.assign("simple", _load("share-group.json"), protocol="share", kafka_version="4.1")
    assert expected != kassign.assign("simple", _load("share-group.json"), protocol="share")  # the rules differ here
    out = run_json("assign", "--protocol", "share", "-s", "simple", "--kafka-version", "4.1.1", path)
    assert out == {"assignment": {m: [list(tp) for tp in ps] for m, ps in expected.items()}, "kafka_version": "4.1.1"}
    result = run("assign", "--protocol", "share", "-s", "simple", "--kafka-version", "4.1", path)
    assert result.returncode == 0, result.stderr
    assert "share group, Kafka 4.1)" in " ".join(result.stdout.split())


def test_streams_group_json_and_table() -> None:
    path = str(EXAMPLES / "streams-group.json")
    out = run_json("assign", "--protocol", "streams", "-s", "sticky", path)
    assert out == {"assignment": kassign.assign_tasks("sticky", _load("streams-group.json"), protocol="streams"),
                   "kafka_version": "4.4"}
    table = run("assign", "--protocol", "streams", "-s", "sticky", path)
    assert table.returncode == 0 and "streams group, Kafka 4.4" in table.stdout
    older = run_json("assign", "--protocol", "streams", "-s", "sticky", "--kafka-version", "4.3", path)
    assert older == {"assignment": kassign.assign_tasks("sticky", _load("streams-group.json"), protocol="streams",
                                                        kafka_version="4.3"), "kafka_version": "4.3"}
    assert "streams group, Kafka 4.3" in run("assign", "--protocol", "streams", "-s", "sticky", "--kafka-version",
                                             "4.3", path).stdout
    for member, tasks in out["assignment"].items():
        line = next(row for row in table.stdout.splitlines() if f" {member} " in row)
        for sub, parts in tasks["active"].items():
            for p in parts:
                assert f"{sub}_{p}" in line


def test_kafka_streams_json_table_and_probing() -> None:
    path = str(EXAMPLES / "kafka-streams-restart.json")
    out = run_json("assign", "--protocol", "classic-streams", "-s", "high-availability", path)
    expected = kassign.assign_tasks("high-availability", _load("kafka-streams-restart.json"))
    assert out == {"assignment": expected, "kafka_version": "4.4"}
    table = run("assign", "--protocol", "classic-streams", "-s", "high-availability", path)
    assert table.returncode == 0 and "classic protocol, Kafka 4.4)" in " ".join(table.stdout.split())
    assert ("a probing rebalance follows" in table.stdout) == expected["probing_rebalance"]
    assert "split over stream threads" in table.stdout


@pytest.mark.parametrize(("args", "message"), [
    (("--protocol", "share", "-s", "simple", "--kafka-version", "4.0"), "early access"),
    (("--protocol", "share", "-s", "uniform"), "simple"),
    (("--protocol", "streams", "-s", "sticky", "--kafka-version", "4.1"), "early access"),
    (("--protocol", "streams", "-s", "sticky", "--report"), "--report apply to the classic and consumer"),
    (("--protocol", "classic-streams", "-s", "round-robin"), "high-availability"),
    (("--protocol", "classic-streams", "-s", "high-availability", "--kafka-version", "2.8"), "3.0 to 4.4"),
    (("--protocol", "classic-streams", "-s", "sticky", "--kafka-version", "3.7"), "no sticky task assignor"),
])
def test_bad_input_is_one_line_and_exit_2(args, message: str) -> None:
    name = {"share": "share-group.json", "streams": "streams-group.json"}.get(args[1], "kafka-streams-restart.json")
    result = run("assign", *args, str(EXAMPLES / name))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert message in result.stderr


def test_a_malformed_streams_scenario_is_refused() -> None:
    bad = json.dumps({"subtopologies": {"0": {"partitions": 2, "stateful": True}}, "num_standby_replicas": -1,
                      "members": {"m": {"process_id": "p"}}})
    result = run("assign", "--protocol", "streams", "-s", "sticky", "-", stdin=bad)
    assert result.returncode == 2 and "num_standby_replicas" in result.stderr and "Traceback" not in result.stderr
