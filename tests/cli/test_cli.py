"""The CLI as a user runs it: a real subprocess, JSON out, exit 2 and one line for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import kassign
from tests.conftest import REPO

EXAMPLES = REPO / "examples"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kassign.cli.main", *args], input=stdin, capture_output=True, text=True, timeout=120
    )


def run_json(*args: str, stdin: str | None = None):
    result = run(*args, "--json", stdin=stdin)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_partition_text_hex_and_base64_agree() -> None:
    text = run_json("partition", "--partitions", "12", "user-1", "order-7")
    assert [row["partition"] for row in text["keys"]] == [
        kassign.partition_for_key(b"user-1", 12), kassign.partition_for_key(b"order-7", 12)
    ]
    hexed = run_json("partition", "--partitions", "12", "--hex", b"user-1".hex())
    b64 = run_json("partition", "--partitions", "12", "--base64", "dXNlci0x")
    assert hexed["keys"][0]["murmur2"] == b64["keys"][0]["murmur2"] == kassign.murmur2(b"user-1")


def test_partition_table_output() -> None:
    result = run("partition", "--partitions", "3", "abc")
    assert result.returncode == 0
    assert "abc" in result.stdout and str(kassign.partition_for_key(b"abc", 3)) in result.stdout


def test_assign_json_matches_the_api() -> None:
    doc = run_json("assign", "--strategy", "range", str(EXAMPLES / "seeds-range.json"))
    scenario = json.loads((EXAMPLES / "seeds-range.json").read_text())
    expected = {m: [list(tp) for tp in parts] for m, parts in kassign.assign("range", scenario).items()}
    assert doc == {"assignment": expected, "kafka_version": "4.4"}  # range answers per release: it says which


def test_assign_reads_stdin_and_reports() -> None:
    scenario = {"topics": {"t": 4}, "members": {"a": {"topics": ["t"], "owned": [["t", 3]]}, "b": {"topics": ["t"]}}}
    doc = run_json("assign", "-s", "roundrobin", "--report", "-", stdin=json.dumps(scenario))
    assert doc["assignment"] == {"a": [["t", 0], ["t", 2]], "b": [["t", 1], ["t", 3]]}
    partitions = doc["report"].pop("partitions")
    assert doc["report"] == {"counts": {"a": 2, "b": 2}, "spread": 0, "moved": 1, "kept": 0, "previously_owned": 1,
                             "unknown_topics": {}}
    assert [row["state"] for row in partitions] == ["assigned", "assigned", "assigned", "moved"]
    assert partitions[3] == {"topic": "t", "partition": 3, "member": "b", "previous": "a", "state": "moved"}


def test_assign_with_options() -> None:
    path = str(EXAMPLES / "seeds-range.json")
    first = run_json("assign", "-s", "random", "-o", "seed=5", path)
    assert first == run_json("assign", "-s", "random", "-o", "seed=5", path)


def test_replicas_json_and_reassignment() -> None:
    doc = run_json("replicas", "--brokers", "0:rack1,1:rack3,2:rack2", "--partitions", "3",
                   "--replication-factor", "2", "--start-index", "0")
    expected = kassign.assign_replicas([(0, "rack1"), (1, "rack3"), (2, "rack2")], 3, 2, 0)
    assert doc == {"assignment": {str(p): r for p, r in expected.items()}, "placer": "legacy", "kafka_version": "3.9"}
    result = run("replicas", "-b", "0,1", "-p", "2", "-r", "2", "--start-index", "0", "--topic", "orders",
                 "--reassignment-json")
    assert json.loads(result.stdout) == {
        "version": 1,
        "partitions": [{"topic": "orders", "partition": 0, "replicas": [0, 1]},
                       {"topic": "orders", "partition": 1, "replicas": [1, 0]}],
    }


@pytest.mark.parametrize("command", [[], ["partition"], ["assign"], ["replicas"]])
def test_help_everywhere(command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.returncode == 0 and "Usage:" in result.stdout


@pytest.fixture
def bad_files(tmp_path):
    (tmp_path / "broken.json").write_text('{"topics": {"t": 3}, "members": ')
    (tmp_path / "wrong-type.json").write_text('{"topics": {"t": "three"}, "members": {}}')
    (tmp_path / "negative.json").write_text('{"topics": {"t": -2}, "members": {}}')
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "ok.json").write_text('{"topics": {"t": 3}, "members": {"a": {"topics": ["t"]}}}')
    return tmp_path


BAD_INPUTS = [
    (["assign", "-s", "range", "{d}/broken.json"], "not valid JSON"),
    (["assign", "-s", "range", "{d}/wrong-type.json"], "partition count must be a whole number"),
    (["assign", "-s", "range", "{d}/negative.json"], "got -2"),
    (["assign", "-s", "range", "{d}/binary.json"], "not UTF-8"),
    (["assign", "-s", "range", "{d}/absent.json"], "cannot read scenario file"),
    (["assign", "-s", "nonsense", "{d}/ok.json"], "unknown assignor 'nonsense'"),
    (["assign", "-s", "no.such:Thing", "{d}/ok.json"], "no module named"),
    (["assign", "-s", "range", "-o", "novalue", "{d}/ok.json"], "--option takes key=value"),
    (["assign", "{d}/ok.json"], "Missing option '--strategy'"),
    (["partition", "--partitions", "0", "k"], "--partitions must be at least 1"),
    (["partition", "--partitions", "-4", "k"], "--partitions must be at least 1"),
    (["partition", "--partitions", "x", "k"], "is not a valid integer"),
    (["partition", "--partitions", "3", "--hex", "zz"], "not valid hex"),
    (["partition", "--partitions", "3"], "Missing argument"),
    (["replicas", "-b", "0,x", "-p", "3", "-r", "1"], "not a broker id"),
    (["replicas", "-b", "0,1", "-p", "-3", "-r", "1"], "InvalidPartitionsException"),
    (["replicas", "-b", "0,1", "-p", "3", "-r", "3"], "InvalidReplicationFactorException"),
    (["replicas", "-b", "0:a,1", "-p", "3", "-r", "1"], "AdminOperationException"),
    (["replicas", "-b", "0,1", "-p", "3", "-r", "1", "--reassignment-json"], "needs --topic"),
    (["frobnicate"], "No such command"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUTS, ids=[" ".join(a) for a, _ in BAD_INPUTS])
def test_bad_input_exits_2_with_one_line(bad_files, args: list[str], message: str) -> None:
    result = run(*(a.format(d=bad_files) for a in args))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kassign: error: ") and message in lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""
