"""`kassign plan` as an operator runs it: a real subprocess, files in, files out."""

from __future__ import annotations

import json
from collections import Counter
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kassign.replicas.plan import kafka_generate_document, plan_reassignment
from tests.replicas.plan_helpers import check_valid, counts, leader_changes, moves

BROKERS = "0:a,1:b,2:c,3:a,4:b,5:c"
API_BROKERS = [(0, "a"), (1, "b"), (2, "c"), (3, "a"), (4, "b"), (5, "c")]
CURRENT = {"version": 1, "partitions": [
    {"topic": "orders", "partition": p, "replicas": [p % 3, (p + 1) % 3, (p + 2) % 3]} for p in range(12)
] + [{"topic": "audit", "partition": p, "replicas": [(p + 1) % 3, p % 3]} for p in range(4)]}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", "plan", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


@pytest.fixture()
def current_file(tmp_path: Path) -> Path:
    path = tmp_path / "current.json"
    path.write_text(json.dumps(CURRENT))
    return path


def test_plan_round_trips_through_files(tmp_path, current_file):
    out = tmp_path / "out" / "plan.json"
    result = run("--current", str(current_file), "--brokers", BROKERS, "--out", str(out))
    assert result.returncode == 0, result.stderr
    written = json.loads(out.read_text())
    assert written == dict(plan_reassignment(CURRENT, API_BROKERS))
    check_valid(written, CURRENT, API_BROKERS)
    assert json.loads((tmp_path / "out" / "plan-rollback.json").read_text()) == CURRENT
    # what Kafka's tool would read back: same partitions, every one, in the current order
    assert [(e["topic"], e["partition"]) for e in written["partitions"]] == \
        [(e["topic"], e["partition"]) for e in CURRENT["partitions"]]
    for text in ("per broker", "per rack", "replicas moved", "Kafka --generate", str(moves(written, CURRENT))):
        assert text in result.stdout
    # running the rollback as the new current plans the same move again
    again = run("--current", str(tmp_path / "out" / "plan-rollback.json"), "--brokers", BROKERS, "--json")
    assert json.loads(again.stdout)["proposed"] == written


def test_json_summary_matches_the_api_and_kafka_generate(current_file):
    result = run("--current", str(current_file), "--brokers", BROKERS, "--json", "--kafka-seed", "3")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    plan = plan_reassignment(CURRENT, API_BROKERS)
    assert report["proposed"] == dict(plan)
    assert report["summary"]["replicas_moved"] == moves(plan, CURRENT)
    assert report["summary"]["leaders_changed"] == leader_changes(plan, CURRENT)
    generated = kafka_generate_document(CURRENT, API_BROKERS, seed=3)
    assert report["kafka_generate"]["replicas_moved"] == moves(generated, CURRENT)
    by_id = {row["broker"]: row for row in report["kafka_generate"]["brokers"]}
    replicas, leaders = counts(generated, range(6))
    assert [by_id[b]["replicas_after"] for b in range(6)] == replicas
    assert [by_id[b]["leaders_after"] for b in range(6)] == leaders
    assert report["summary"]["replica_spread_after"] <= report["kafka_generate"]["replica_spread_after"]
    # the comparison names the release whose --generate it is: the newest by default (the striped placer)
    assert report["kafka_version"] == report["kafka_generate"]["kafka_version"] == "4.4"
    assert report["kafka_generate"]["placer"] == "striped" and report["kafka_generate"]["kafka_version_from"] == "default"


@pytest.mark.parametrize("version, placer", [("3.9", "legacy"), ("4.0.2", "legacy"), ("4.1", "striped")])
def test_kafka_version_picks_the_generate_being_compared(current_file, version, placer):
    result = run("--current", str(current_file), "--brokers", BROKERS, "--json", "--kafka-seed", "3",
                 "--kafka-version", version)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    generated = kafka_generate_document(CURRENT, API_BROKERS, seed=3, kafka_version=version)
    assert report["kafka_generate"]["replicas_moved"] == moves(generated, CURRENT)
    assert (report["kafka_version"], report["kafka_generate"]["placer"]) == (version, placer)
    table = run("--current", str(current_file), "--brokers", BROKERS, "--kafka-version", version)
    assert f"Kafka --generate as Kafka {version} runs it: " in " ".join(table.stdout.split())


def test_a_release_kassign_does_not_model_is_one_line(current_file):
    result = run("--current", str(current_file), "--brokers", BROKERS, "--kafka-version", "2.8")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "not a release kassign models" in result.stderr


def test_describe_file_gives_the_same_plan(tmp_path, current_file):
    lines = []
    for e in CURRENT["partitions"]:
        lines.append(f"\tTopic: {e['topic']}\tPartition: {e['partition']}\tLeader: {e['replicas'][0]}\t"
                     f"Replicas: {','.join(map(str, e['replicas']))}\tIsr: {','.join(map(str, e['replicas']))}")
    describe = tmp_path / "describe.txt"
    describe.write_text("Topic: orders\tPartitionCount: 12\tReplicationFactor: 3\tConfigs:\n" + "\n".join(lines) + "\n")
    a = run("--describe-file", str(describe), "--brokers", BROKERS, "--json")
    b = run("--current", str(current_file), "--brokers", BROKERS, "--json")
    assert a.returncode == 0, a.stderr
    assert json.loads(a.stdout)["proposed"] == json.loads(b.stdout)["proposed"]
    # both read standard input too, as `kafka-topics.sh --describe | kassign plan --describe-file -`
    for option, text in (("--describe-file", describe.read_text()), ("--current", current_file.read_text())):
        piped = subprocess.run([sys.executable, "-m", "kassign.cli.main", "plan", option, "-", "--brokers", BROKERS,
                                "--json"], input=text, capture_output=True, text=True, timeout=300)
        assert piped.returncode == 0, piped.stderr
        assert json.loads(piped.stdout)["proposed"] == json.loads(b.stdout)["proposed"]


def test_batches_write_steps_that_add_up_to_the_plan(tmp_path, current_file):
    out = tmp_path / "plan.json"
    result = run("--current", str(current_file), "--brokers", BROKERS, "--batches", "3", "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    files = json.loads(result.stdout)["files"]
    assert files["steps"] == [str(tmp_path / f"plan-step-{k}.json") for k in (1, 2, 3)]
    final = {(e["topic"], e["partition"]): e["replicas"] for e in json.loads(out.read_text())["partitions"]}
    state = {(e["topic"], e["partition"]): e["replicas"] for e in CURRENT["partitions"]}
    for step in files["steps"]:
        for e in json.loads(Path(step).read_text())["partitions"]:
            state[(e["topic"], e["partition"])] = e["replicas"]
    assert state == final


def test_sizes_from_a_partition_load_directory(tmp_path, current_file):
    load = tmp_path / "partition_load"
    load.mkdir()
    sizes = {("orders", p): (p + 1) * 300 * 1024**2 for p in range(12)}
    sizes.update({("audit", p): 1024**2 for p in range(4)})
    table = pa.table({"topic": [t for t, _ in sizes], "partition": pa.array([p for _, p in sizes], pa.int32()),
                      "records": [1] * len(sizes), "bytes": list(sizes.values())})
    pq.write_table(table, load / "part-00000.snappy.parquet")
    (load / "_SUCCESS").write_text("")
    result = run("--current", str(current_file), "--brokers", BROKERS, "--sizes", str(load))
    assert result.returncode == 0, result.stderr
    assert "bytes moved" in result.stdout and "GiB" in result.stdout
    report = json.loads(run("--current", str(current_file), "--brokers", BROKERS, "--sizes", str(load),
                            "--json").stdout)
    assert report["proposed"] == dict(plan_reassignment(CURRENT, API_BROKERS, sizes=sizes))
    csv = tmp_path / "sizes.csv"
    csv.write_text("topic,partition,bytes\n" + "".join(f"{t},{p},{b}\n" for (t, p), b in sizes.items()))
    assert json.loads(run("--current", str(current_file), "--brokers", BROKERS, "--sizes", str(csv),
                          "--json").stdout)["proposed"] == report["proposed"]


def test_exclude_max_moves_and_plot(tmp_path, current_file):
    plot = tmp_path / "plan.png"
    result = run("--current", str(current_file), "--brokers", BROKERS, "--exclude", "2", "--max-moves", "20",
                 "--plot", str(plot), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert all(2 not in e["replicas"] for e in report["proposed"]["partitions"])
    assert report["summary"]["replicas_moved"] <= 20
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("args, message", [
    (["--brokers", BROKERS], "exactly one of --current"),
    (["--current", "CURRENT", "--brokers", "0,1"], "has replication factor 3 but only 2 broker"),
    (["--current", "CURRENT", "--brokers", BROKERS, "--exclude", "9"], "exclude: broker 9 is unknown"),
    (["--current", "CURRENT", "--brokers", BROKERS, "--exclude", "x"], "is not a broker id"),
    (["--current", "BROKEN", "--brokers", BROKERS], "is not valid JSON"),
    (["--current", "DUPLICATE", "--brokers", BROKERS], "lists t-0 twice"),
    (["--current", "missing.json", "--brokers", BROKERS], "cannot read --current"),
    (["--current", "CURRENT", "--brokers", "0:a,1"], "have no rack while others do"),
    (["--current", "CURRENT", "--brokers", BROKERS, "--sizes", "nowhere"], "does not exist"),
    (["--current", "CURRENT", "--brokers", BROKERS, "--rollback", "r.json"], "--rollback needs --out"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, current_file, args, message):
    (tmp_path / "broken.json").write_text('{"version": 1, "partitions": [')
    (tmp_path / "dup.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [0]}, {"topic": "t", "partition": 0, "replicas": [1]}]}))
    swap = {"CURRENT": str(current_file), "BROKEN": str(tmp_path / "broken.json"), "DUPLICATE": str(tmp_path / "dup.json")}
    result = run(*[swap.get(a, a) for a in args], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("kassign: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_goals_from_capacity_and_rates_files(tmp_path, current_file):
    capacity = tmp_path / "capacity.json"
    capacity.write_text(json.dumps({"default": {"max_replicas": 8, "network_in_bytes_per_s": 400},
                                    "brokers": {"3": {"max_replicas": 7}}}))
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({"orders": {str(p): 10 * (p + 1) for p in range(12)},
                                 "audit": {str(p): 5 for p in range(4)}}))
    result = run("--current", str(current_file), "--brokers", BROKERS, "--capacity", str(capacity), "--rates",
                 str(rates), "--goals", "replica-capacity,network-capacity,network-in,replicas,leaders", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    summary = document["summary"]
    assert [g["name"] for g in summary["goals"]] == ["rack", "replica-capacity", "network-capacity", "network-in",
                                                     "replicas", "leaders"]
    assert all(g["met"] for g in summary["goals"] if g["kind"] == "hard")
    assert summary["inputs"]["capacity"]["3"] == {"max_replicas": 7, "network_in_bytes_per_s": 400}
    assert summary["inputs"]["rates"]["orders"]["11"] == 120
    check_valid(document["proposed"], CURRENT, API_BROKERS)
    replicas = Counter(b for e in document["proposed"]["partitions"] for b in e["replicas"])
    assert replicas[3] <= 7 and max(replicas.values()) <= 8  # 44 replicas on 6 brokers
    table = run("--current", str(current_file), "--brokers", BROKERS, "--capacity", str(capacity))
    assert table.returncode == 0 and "goals, in order" in table.stdout and "replica-capacity" in table.stdout


@pytest.mark.parametrize("args, message", [
    (["--disk-limit", "0"], "disk_limit must be a fraction in (0, 1]"),
    (["--goals", "replicas,fastest"], "unknown goal 'fastest'"),
    (["--capacity", "{bad"], "--capacity"),
    (["--capacity", '{"brokers": {"42": {"max_replicas": 3}}}'], "broker 42 is unknown"),
    (["--capacity", '{"default": {"max_replicas": 1}}'], "replica-capacity cannot be met"),
])
def test_goal_input_errors_are_one_line_and_exit_2(tmp_path, current_file, args, message):
    if args[0] == "--capacity":
        path = tmp_path / "capacity.json"
        path.write_text(args[1])
        args = ["--capacity", str(path)]
    result = run("--current", str(current_file), "--brokers", BROKERS, *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
