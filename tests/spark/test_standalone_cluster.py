"""The cluster path: a real Spark standalone master + worker on 127.0.0.1, the CLI run against it.

Both JVMs come from pyspark's own bin/spark-class and are always stopped in teardown.
The summary must equal the one the embedded local session produces for the same input.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kassign.spark.pipeline import PipelineOptions, run_pipeline
from tests.groups.classic.clients.conftest import tansu  # noqa: F401  (fixture)
from tests.spark.test_pipeline import write_input

SPARK_HOME = Path(__import__("pyspark").__file__).parent
KASSIGN = Path(sys.executable).with_name("kassign")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env() -> dict[str, str]:
    env = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1",
               PYSPARK_PYTHON=sys.executable)
    env.pop("PYSPARK_GATEWAY_PORT", None)
    return env


def _start(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], env=_env(),
                            stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as response:
            return int(json.load(response).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


def _cluster(logs: Path, workers: int, cores: int):
    """A master and ``workers`` workers on 127.0.0.1 (each its own process group, with its executors);
    yields (master URL, [(worker process, its work dir)])."""
    port, ui = free_port(), free_port()
    started = []
    try:
        started.append(_start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                               "--webui-port", str(ui)], logs / "master.log"))
        nodes = []
        for i in range(workers):
            work = logs / f"work-{i}"
            worker = _start(["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                             "--port", str(free_port()), "--webui-port", str(free_port()), "--cores", str(cores),
                             "--memory", "2g", "--work-dir", str(work), f"spark://127.0.0.1:{port}"],
                            logs / f"worker-{i}.log")
            started.append(worker)
            nodes.append((worker, work))
        deadline = time.monotonic() + 60
        while _alive_workers(ui) < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in started):
                pytest.fail("standalone cluster did not come up: " + (logs / "master.log").read_text()[-500:])
            time.sleep(0.5)
        yield f"spark://127.0.0.1:{port}", nodes
    finally:
        for process in reversed(started):
            _stop(process)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    for master, nodes in _cluster(tmp_path_factory.mktemp("standalone"), 1, 2):
        yield master, nodes[0][1]


def test_pipeline_on_a_standalone_cluster_matches_the_local_run(spark, standalone, tmp_path):
    master, worker_dir = standalone
    input_path = write_input(tmp_path / "records.jsonl")
    common = ["--key-column", "key", "--size-column", "size", "--topic-column", "topic", "--partitions", "6",
              "--members", "3", "--max-partitions", "10", "--brokers", "0:r1,1:r2,2:r1", "-r", "2"]
    done = subprocess.run(
        [str(KASSIGN), "pipeline", str(input_path), "--out", str(tmp_path / "cluster"), "--master", master,
         "--conf", "spark.executor.memory=1g", "--conf", "spark.ui.showConsoleProgress=false", "--json", *common],
        env=_env(), capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    on_cluster = json.loads(done.stdout.strip().splitlines()[-1])

    local = run_pipeline(spark, PipelineOptions(
        out=str(tmp_path / "local"), input=str(input_path), key_column="key", size_column="size",
        topic_column="topic", partitions=6, members=3, max_partitions=10, brokers=[(0, "r1"), (1, "r2"), (2, "r1")],
        replication_factor=2, write_partitioned=False))  # as the CLI by default
    assert on_cluster == json.loads(json.dumps(local))
    assert any(worker_dir.glob("app-*/*/stderr"))  # executors really ran on the worker
    assert on_cluster["rows"]["accounted"] and (tmp_path / "cluster" / "report.html").exists()


@pytest.mark.slow  # about 30 s with the cluster's start; live reading runs on the embedded Spark in every default run
def test_live_topics_are_read_by_the_cluster_executors(spark, standalone, tansu, tmp_path):  # noqa: F811
    """Executors on the standalone worker read the Kafka partitions (split into offset ranges); the summary
    equals the embedded local run's on the same topic."""
    from kafka import KafkaProducer

    master, worker_dir = standalone
    topic = "standalone-live"
    tansu.create_topic(topic, 3)
    producer = KafkaProducer(bootstrap_servers=tansu.bootstrap)
    for i in range(3000):
        producer.send(topic, key=f"k{i % 97}".encode(), value=b"x" * (i % 31))
    producer.flush()
    producer.close()
    common = ["--bootstrap-server", tansu.bootstrap, "--topic", topic, "--members", "3", "--max-partitions", "8"]
    done = subprocess.run(
        [str(KASSIGN), "pipeline", "--out", str(tmp_path / "cluster"), "--master", master,
         "--conf", "spark.executor.memory=1g", "--conf", "spark.ui.showConsoleProgress=false", "--json", *common],
        env=_env(), capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    on_cluster = json.loads(done.stdout.strip().splitlines()[-1])
    local = run_pipeline(spark, PipelineOptions(out=str(tmp_path / "local"), bootstrap=tansu.bootstrap, topics=[topic],
                                                members=3, max_partitions=8, write_partitioned=False))
    assert on_cluster == json.loads(json.dumps(local))
    assert on_cluster["source"]["topics"][topic]["records"] == 3000
    assert any(worker_dir.glob("app-*/*/stderr"))


def _running_tasks(work: Path) -> bool:
    """Whether the newest application's executor in ``work`` has started a task."""
    apps = sorted(work.glob("app-*"))
    return bool(apps) and any("Running task" in log.read_text(errors="replace") for log in apps[-1].glob("*/stderr"))


@pytest.mark.slow  # about a minute on the shared 2-core machine; the test above keeps a standalone cluster in every default run
def test_a_worker_killed_mid_run_changes_nothing(spark, tmp_path_factory, tmp_path):
    """Two workers of one core each; one worker and its executor are killed (SIGKILL to its process group)
    while that executor runs the pipeline's tasks. Spark reruns the lost tasks on the other worker, and the
    summary equals an undisturbed run's (the embedded session's, which the first test shows the
    cluster's equals)."""
    logs = tmp_path_factory.mktemp("two-workers")
    rows, keys = 1_500_000, 50_000
    for master, nodes in _cluster(logs, 2, 1):
        out = tmp_path / "killed"
        process = subprocess.Popen([str(KASSIGN), "pipeline", "--rows", str(rows), "--keys", str(keys), "--master",
                                    master, "--conf", "spark.executor.memory=1g", "--json", "--out", str(out)],
                                   env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        victim, work = nodes[1]
        deadline = time.monotonic() + 120
        while not _running_tasks(work):  # the victim's executor is working on the pipeline's tasks
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.1)
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait(10)
        assert process.poll() is None, "the run ended before the worker was killed"
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr[-2000:]
        survived = json.loads(stdout.strip().splitlines()[-1])
    undisturbed = run_pipeline(spark, PipelineOptions(out=str(tmp_path / "undisturbed"), rows=rows, keys=keys,
                                                      write_partitioned=False, write_sample=False))
    assert survived == json.loads(json.dumps(undisturbed))
    assert survived["rows"]["accounted"]
