"""``kassign plan --execute / --verify / --cancel`` as an operator runs them: a real subprocess against the replayed
4.3.1 cluster (``tests/kafka/replay_reassign.py``): exit 0 and the execution record, exit 2 and one line for bad
input with nothing changed on the cluster, resume from the --out file, verify, cancel."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.kafka.replay_reassign import ReassigningCluster

BROKERS = "1:rack-a,2:rack-b"  # broker 3 drained: kc-move's replicas on it move


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", "plan", *args], capture_output=True, text=True,
                          timeout=300)


def writes(cluster) -> list[int]:
    return [k for broker in cluster.brokers.values() for k, _, _ in broker.requests if k in (43, 44, 45)]


def test_execute_then_verify(tmp_path):
    out = tmp_path / "plan.json"
    with ReassigningCluster(polls=1) as cluster:
        result = run("--bootstrap-server", cluster.bootstrap, "--topic", "kc-move", "--brokers", BROKERS, "--out",
                     str(out), "--execute", "--throttle", "100000", "--json")
        assert result.returncode == 0, result.stderr
        document = json.loads(result.stdout)
        execution = document["execution"]
        assert document["plan"]["summary"]["replicas_moved"] == 3
        assert {rec["state"] for rec in execution["moves"].values()} == {"done"}
        assert execution["throttle_set"]["removed_at"] and all(v == {} for v in cluster.configs.values())
        verified = run("--bootstrap-server", cluster.bootstrap, "--verify", str(out), "--json")
        assert verified.returncode == 0, verified.stderr
        assert json.loads(verified.stdout)["throttles"] == {}
        table = run("--bootstrap-server", cluster.bootstrap, "--verify", str(out))
        assert "done" in table.stdout and "no throttle set" in table.stdout
        again = run("--bootstrap-server", cluster.bootstrap, "--topic", "kc-move", "--brokers", BROKERS, "--out",
                    str(out), "--execute")
        assert again.returncode == 0, again.stderr
        assert f"resuming {out}" in again.stdout.replace("\n", "")


@pytest.mark.parametrize("extra, message", [
    (["--throttle", "0"], "--throttle must be a whole number of bytes per second above 0, got 0"),
    (["--throttle", "-1"], "--throttle must be a whole number of bytes per second above 0, got -1"),
    (["--concurrency", "0"], "--concurrency must be a whole number of moves, at least 1, got 0"),
    (["--patience", "soon"], "--patience must be a duration such as 30s, 1500ms or 2m, got 'soon'"),
    (["--patience", "-5"], "--patience must be a duration such as 30s, 1500ms or 2m, got '-5'"),
])
def test_bad_options_are_one_line_and_change_nothing(tmp_path, extra, message):
    with ReassigningCluster() as cluster:
        result = run("--bootstrap-server", cluster.bootstrap, "--topic", "kc-move", "--brokers", BROKERS, "--out",
                     str(tmp_path / "plan.json"), "--execute", *extra)
        assert writes(cluster) == []
    assert result.returncode == 2
    assert result.stderr.strip() == f"kassign: error: {message}"


def test_option_misuse(tmp_path):
    result = run("--current", "x.json", "--brokers", BROKERS, "--throttle", "5")
    assert result.returncode == 2 and "--throttle applies to --execute" in result.stderr
    result = run("--current", "x.json", "--brokers", BROKERS, "--patience", "5m")
    assert result.returncode == 2 and "--patience applies to --execute" in result.stderr
    result = run("--bootstrap-server", "127.0.0.1:1", "--brokers", BROKERS, "--execute")
    assert result.returncode == 2 and "--execute needs --out PLAN.json" in result.stderr
    result = run("--verify", "p.json")
    assert result.returncode == 2 and "--verify needs --bootstrap-server" in result.stderr


def test_foreign_reassignment_is_refused_naming_it(tmp_path):
    with ReassigningCluster(polls=1000) as cluster:
        cluster._start(("kc-small", 0), [3, 2])
        result = run("--bootstrap-server", cluster.bootstrap, "--topic", "kc-move", "--brokers", BROKERS, "--out",
                     str(tmp_path / "plan.json"), "--execute", "--throttle", "1000")
        assert writes(cluster) == []
    assert result.returncode == 2
    assert "a reassignment this plan did not start is running: kc-small-0 (-> [3, 2])" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_cancel_from_the_plan_file(tmp_path):
    out = tmp_path / "plan.json"
    out.write_text(json.dumps({"version": 1, "partitions": [{"topic": "kc-move", "partition": 0, "replicas": [3, 2]}]}))
    with ReassigningCluster(polls=1000) as cluster:
        cluster._start(("kc-move", 0), [3, 2])
        cluster.configs[(2, "kc-move")] = {"leader.replication.throttled.replicas": "0:1,0:2"}
        result = run("--bootstrap-server", cluster.bootstrap, "--cancel", str(out))
        assert not cluster.ongoing and cluster.configs[(2, "kc-move")] == {}
    assert result.returncode == 0, result.stderr
    assert "cancelled 1 running move(s): kc-move-0" in result.stdout


def test_json_and_plan_file_fields_are_in_the_reference(tmp_path):
    from tests.docs.reference import fields, undocumented

    section = fields("outputs.md", "kassign plan --execute, --verify, --cancel")
    out = tmp_path / "plan.json"
    with ReassigningCluster(polls=1) as cluster:
        executed = run("--bootstrap-server", cluster.bootstrap, "--topic", "kc-move", "--brokers", BROKERS, "--out",
                       str(out), "--execute", "--throttle", "1000", "--json")
        verified = run("--bootstrap-server", cluster.bootstrap, "--verify", str(out), "--json")
        cluster._start(("kc-move", 0), [3, 2])
        cluster.polls = 1000
        cancelled = run("--bootstrap-server", cluster.bootstrap, "--cancel", str(out), "--json")
    for result in (executed, verified, cancelled):
        assert result.returncode in (0, 1), result.stderr
    executed_doc = json.loads(executed.stdout)
    assert undocumented({k: v for k, v in executed_doc.items() if k != "plan"}, section) == []
    assert undocumented(executed_doc["plan"], fields("outputs.md", "kassign plan")) == []
    assert undocumented(json.loads(verified.stdout), section) == []
    assert undocumented(json.loads(cancelled.stdout), section) == []
    state = json.loads(out.read_text())
    assert undocumented({"kassign_execution": state["kassign_execution"]},
                        fields("formats.md", "Execution state in a plan file")) == []


def test_ctrl_c_leaves_the_running_moves_and_says_what_to_run(tmp_path):
    import signal
    import time

    out = tmp_path / "plan.json"
    out.write_text(json.dumps({"version": 1, "partitions": [{"topic": "kc-move", "partition": 0, "replicas": [3, 2]},
                                                            {"topic": "kc-move", "partition": 1, "replicas": [1, 3]}]}))
    with ReassigningCluster(polls=1000) as cluster:
        child = subprocess.Popen([sys.executable, "-m", "kassign.cli.main", "plan", "--bootstrap-server",
                                  cluster.bootstrap, "--out", str(out), "--execute", "--concurrency", "1",
                                  "--throttle", "1000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not cluster.ongoing and time.monotonic() < deadline:
            time.sleep(0.1)
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=60)
        running = set(cluster.ongoing)
        throttled = cluster.configs.get((2, "kc-move"))
    assert child.returncode == 130, stderr
    assert running and throttled  # the running move goes on, with its throttle
    assert f"--verify {out}" in stderr and f"--cancel {out}" in stderr
    state = json.loads(out.read_text())["kassign_execution"]
    assert sorted(rec["state"] for rec in state["moves"].values()) == ["running", "waiting"]
    assert state["runs"][-1]["ended"] == "stopped"


def test_cluster_lost_for_longer_than_the_patience_is_one_line_saying_what_to_run(tmp_path, capsys):
    # in-process (the cluster is taken away from a thread), with --patience 1s (five minutes by default)
    import threading
    import time

    from kassign.cli.main import _invoke

    out = tmp_path / "plan.json"
    out.write_text(json.dumps({"version": 1, "partitions": [{"topic": "kc-move", "partition": 0, "replicas": [3, 2]},
                                                            {"topic": "kc-move", "partition": 1, "replicas": [1, 3]}]}))
    with ReassigningCluster(polls=1000) as cluster:
        def lose_it():
            deadline = time.monotonic() + 60
            while not cluster.ongoing and time.monotonic() < deadline:
                time.sleep(0.02)
            cluster.down = True

        watcher = threading.Thread(target=lose_it)
        watcher.start()
        code = _invoke(["plan", "--bootstrap-server", cluster.bootstrap, "--out", str(out), "--execute",
                        "--concurrency", "1", "--throttle", "1000", "--timeout", "1", "--patience", "1s"])
        watcher.join(60)
        said = capsys.readouterr()
        stderr = said.err.strip().splitlines()
        assert f"carrying out {out} as it is: the file exists, nothing is planned" in said.out.replace("\n", "")
        cluster.down = False
        cluster.finish_all()
        cluster.polls = 1
        again = run("--bootstrap-server", cluster.bootstrap, "--out", str(out), "--execute")
    assert code == 1, stderr
    assert len(stderr) == 1 and stderr[0].startswith("kassign: stopped (the cluster did not answer for 1 s"), stderr
    assert "1 move(s) still running on the cluster, 1 not started" in stderr[0]
    assert f"--verify {out}" in stderr[0] and f"--cancel {out}" in stderr[0] and "same --execute again" in stderr[0]
    assert again.returncode == 0, again.stderr
    state = json.loads(out.read_text())["kassign_execution"]
    assert [run["ended"] for run in state["runs"]] == ["unreachable", "finished"]
    assert {rec["state"] for rec in state["moves"].values()} == {"done"}


def test_the_capacity_documents_disks_go_to_the_executor(tmp_path):
    out, capacity = tmp_path / "plan.json", tmp_path / "capacity.json"
    capacity.write_text(json.dumps({"default": {"disk_bytes": 10**15}, "brokers": {"2": {"disk_bytes": 2 * 10**15}}}))
    with ReassigningCluster(polls=1) as cluster:
        result = run("--bootstrap-server", cluster.bootstrap, "--topic", "kc-move", "--brokers", BROKERS, "--out",
                     str(out), "--capacity", str(capacity), "--execute", "--json")
    assert result.returncode == 0, result.stderr
    execution = json.loads(result.stdout)["execution"]
    assert execution["disk_bytes"] == {"1": 10**15, "2": 2 * 10**15}  # the brokers the plan places replicas on
    assert json.loads(out.read_text())["kassign_execution"]["disk_bytes"] == execution["disk_bytes"]
