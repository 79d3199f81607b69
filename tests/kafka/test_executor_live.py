"""``kassign plan --execute`` end to end on a real multi-broker Kafka cluster, when one is given:
``KASSIGN_REASSIGN_BOOTSTRAP=host:port`` and ``KASSIGN_REASSIGN_TOPIC=name`` (a topic whose data may be moved; rf
below the number of brokers). Every partition's replicas are moved one broker on (as ids sorted), carried out with a
throttle, verified done, and no throttle is left; then moved back; and the same again while a producer writes and a
consumer reads, every record read back. Skipped, saying so, without the variables."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

import pytest

from kassign.core.errors import KassignError
from kassign.kafka import executor as E
from kassign.kafka import metadata as live

BOOTSTRAP = os.environ.get("KASSIGN_REASSIGN_BOOTSTRAP")
TOPIC = os.environ.get("KASSIGN_REASSIGN_TOPIC")

pytestmark = pytest.mark.skipif(not (BOOTSTRAP and TOPIC), reason="no real multi-broker Kafka given: set "
                                "KASSIGN_REASSIGN_BOOTSTRAP=host:port and KASSIGN_REASSIGN_TOPIC=name to run")


def _shifted(current: dict) -> tuple[dict, list[int]]:
    with E.Admin(BOOTSTRAP, timeout=30) as admin:
        ids = sorted(b.node_id for b in admin.metadata([TOPIC]).brokers)
    moved = []
    for entry in current["partitions"]:
        moved.append({**entry, "replicas": [ids[(ids.index(b) + 1) % len(ids)] for b in entry["replicas"]]})
    return {"version": 1, "partitions": moved}, ids


def test_move_verify_and_back(tmp_path):
    current = live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)
    plan, _ = _shifted(current)
    for name, document in (("there.json", plan), ("back.json", current)):
        path = tmp_path / name
        path.write_text(json.dumps(document))
        record = E.execute(path, BOOTSTRAP, throttle=50_000_000, timeout=30)
        assert {rec["state"] for rec in record["moves"].values()} <= {"done"}
        assert record["in_sync"]["not_in_sync"] == []
        status = E.verify(path, BOOTSTRAP, timeout=30)
        assert set(status["counts"]) <= {"done", "unchanged"} and status["throttles"] == {}


def test_records_written_and_read_during_the_move_are_all_there(tmp_path):
    """An idempotent producer (acks=all) writes and a consumer reads during the whole move there and back: every record
    produced is read back once, each partition's offsets without a gap, the replicas as planned and in sync."""
    import threading

    from confluent_kafka import Consumer, Producer, TopicPartition

    current = live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)
    parts = [e["partition"] for e in current["partitions"]]
    # idempotent, as Java producers are by default since Kafka 3.0: a retry after a leader change writes no copy
    producer = Producer({"bootstrap.servers": BOOTSTRAP, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": f"kassign-e2e-{os.getpid()}",
                         "enable.auto.commit": False})
    ends = {p: hi for p in parts
            for _, hi in [consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=30)]}
    consumer.assign([TopicPartition(TOPIC, p, ends[p]) for p in parts])
    acked: dict[int, list[int]] = {p: [] for p in parts}
    read: dict[int, list[int]] = {p: [] for p in parts}
    failures: list[str] = []
    stop, written = threading.Event(), threading.Event()

    def delivered(err, msg):
        if err is not None:
            failures.append(str(err))
        else:
            acked[msg.partition()].append(msg.offset())

    def write():
        n = 0
        while not stop.is_set():
            producer.produce(TOPIC, key=str(n).encode(), value=b"x" * 500, on_delivery=delivered)
            producer.poll(0)
            n += 1
            if n % 200 == 0:
                stop.wait(0.01)
        producer.flush(60)
        written.set()

    def consume():  # until the writer is done and every acknowledged record is read (or a minute after that)
        while not written.is_set() or sum(map(len, read.values())) < sum(map(len, acked.values())):
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                read[msg.partition()].append(msg.offset())
            if written.is_set() and time.monotonic() > deadline:
                break

    deadline = float("inf")
    writer, reader = threading.Thread(target=write), threading.Thread(target=consume)
    writer.start()
    reader.start()
    try:
        plan, _ = _shifted(current)
        for name, document in (("there.json", plan), ("back.json", current)):
            path = tmp_path / name
            path.write_text(json.dumps(document))
            record = E.execute(path, BOOTSTRAP, throttle=50_000_000, timeout=30)
            assert {rec["state"] for rec in record["moves"].values()} <= {"done"}
            assert record["in_sync"]["not_in_sync"] == []
            after = {(e["topic"], e["partition"]): e["replicas"]
                     for e in live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)["partitions"]}
            assert {k: set(v) for k, v in after.items()} == {(e["topic"], e["partition"]): set(e["replicas"])
                                                            for e in document["partitions"]}
    finally:
        stop.set()
        writer.join(120)
        deadline = time.monotonic() + 60
        reader.join(120)
        consumer.close()
    assert failures == []
    assert sum(map(len, acked.values())) > 0
    for p in parts:
        assert sorted(read[p]) == sorted(acked[p])  # every acknowledged record read back, once
        assert sorted(read[p]) == list(range(ends[p], ends[p] + len(read[p])))  # no gap in the offsets


def test_stopped_mid_move_verified_cancelled_then_carried_out_again(tmp_path):
    """Ctrl-C's path (``stop``) mid-move on a slow throttle: running moves left running, ``verify`` says where
    they stand, ``cancel`` stops them and removes the throttle; the same plan carried out again finishes."""
    import threading

    current = live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)
    plan, _ = _shifted(current)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    stop = threading.Event()
    threading.Timer(1.5, stop.set).start()
    record = E.execute(path, BOOTSTRAP, throttle=20_000, timeout=30, stop=stop)
    assert record["runs"][-1]["ended"] == "stopped"
    running = [name for name, rec in record["moves"].items() if rec["state"] == "running"]
    assert running, "a 20 kB/s throttle keeps some move running after 1.5 s"
    status = E.verify(path, BOOTSTRAP, timeout=30)
    assert status["counts"].get("moving", 0) >= 1 and status["throttles"]
    cancelled = E.cancel(path, BOOTSTRAP, timeout=30)
    assert sorted(cancelled["cancelled"]) == sorted(running) and cancelled["errors"] == {}
    assert E.verify(path, BOOTSTRAP, timeout=30)["throttles"] == {}
    back = tmp_path / "back.json"
    back.write_text(json.dumps(current))
    for document in (path, back):
        record = E.execute(document, BOOTSTRAP, throttle=50_000_000, timeout=30)
        assert record["in_sync"]["not_in_sync"] == []
        now = {(e["topic"], e["partition"]): set(e["replicas"])
               for e in live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)["partitions"]}
        wanted = {(e["topic"], e["partition"]): set(e["replicas"]) for e in json.loads(document.read_text())["partitions"]}
        for name, rec in record["moves"].items():
            topic, _, p = name.rpartition("-")
            assert rec["state"] in ("done", "cancelled"), (name, rec["state"])
            if rec["state"] == "done":
                assert now[(topic, int(p))] == wanted[(topic, int(p))]
    after = {(e["topic"], e["partition"]): set(e["replicas"])
             for e in live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)["partitions"]}
    assert after == {(e["topic"], e["partition"]): set(e["replicas"]) for e in current["partitions"]}


def test_kassign_plan_reads_and_balances_the_live_cluster():
    """``kassign plan --bootstrap-server --sample 2s --json``: sizes, disks and rates read from the cluster, every
    hard goal met, every input said with its source."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "plan", "--bootstrap-server", BOOTSTRAP,
                             "--topic", TOPIC, "--sample", "2s", "--timeout", "30", "--json"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["summary"]
    cluster = summary["inputs"]["cluster"]
    assert cluster["sources"]["sizes"]["api"] == "DescribeLogDirs" and cluster["window_s"] >= 2
    assert set(cluster["sizes"]) == {TOPIC} and set(cluster["rates"]) == {TOPIC}
    assert all(disk["total_bytes"] for disk in cluster["disks"].values())
    names = [g["name"] for g in summary["goals"]]
    assert {"disk-capacity", "disk", "network-in"} <= set(names)
    assert all(g["met"] for g in summary["goals"] if g["kind"] == "hard")


KILL = os.environ.get("KASSIGN_REASSIGN_KILL")  # a shell command killing broker {id} (SIGKILL), e.g. by its PID
START = os.environ.get("KASSIGN_REASSIGN_START")  # a shell command starting every broker that is down again
needs_kill = pytest.mark.skipif(not (KILL and START), reason="set KASSIGN_REASSIGN_KILL (a command with {id}: kill "
                                "that broker) and KASSIGN_REASSIGN_START (start the brokers that are down) to run")
COPY_S = 30  # the throttle is chosen so that the busiest broker's copies take about this long


def _throttle_for(current: dict, plan: dict, seconds: float = COPY_S) -> int:
    """A throttle under which the plan's copies onto its busiest broker take about ``seconds``: the topic's size
    (its leaders' logs, DescribeLogDirs) grows with every run of the producer test, a fixed rate would not keep the
    moves short (200 kB/s against 55 MB partitions took 10 minutes)."""
    from kassign.kafka.cluster_inputs import replica_sizes

    with E.Admin(BOOTSTRAP, timeout=30) as admin:
        meta = admin.metadata([TOPIC])
        leaders = {p.partition: p.leader for t in meta.topics for p in t.partitions}
        sizes = replica_sizes({b.node_id: admin.log_dirs(b.node_id, None) for b in meta.brokers})
    arriving: dict[int, int] = {}
    for entry, before in zip(plan["partitions"], current["partitions"]):
        held = sizes.get((TOPIC, entry["partition"]), {})
        size = held.get(leaders.get(entry["partition"]), max(held.values(), default=0))
        for b in set(entry["replicas"]) - set(before["replicas"]):
            arriving[b] = arriving.get(b, 0) + size
    return max(100_000, int(max(arriving.values(), default=0) / seconds))


def _end_offsets() -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": f"kassign-offsets-{os.getpid()}"})
    try:
        parts = consumer.list_topics(TOPIC, timeout=30).topics[TOPIC].partitions
        return {p: consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=30)[1] for p in parts}
    finally:
        consumer.close()


def _as_planned(document: dict) -> None:
    now = {(e["topic"], e["partition"]): set(e["replicas"])
           for e in live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)["partitions"]}
    assert now == {(e["topic"], e["partition"]): set(e["replicas"]) for e in document["partitions"]}


def _all_brokers_back(count: int) -> bool:
    try:
        with E.Admin(BOOTSTRAP, timeout=5) as admin:
            admin.reassignments()
            return len(admin.metadata([TOPIC]).brokers) == count
    except KassignError:
        return False


def _havoc(victims: list[int], down_s: float, record: list) -> Callable[[E.Progress], None]:
    """A progress callback that kills ``victims`` once a move runs and starts them again ``down_s`` seconds later
    (in a thread; the times are appended to ``record``)."""
    import subprocess
    import threading

    def strike(progress: E.Progress) -> None:
        if progress.running and not record:
            record.append(("killed", time.monotonic()))
            for broker in victims:
                subprocess.run(KILL.format(id=broker), shell=True, check=False, timeout=60)

            def revive() -> None:
                time.sleep(down_s)
                subprocess.run(START, shell=True, check=False, timeout=120)
                record.append(("started", time.monotonic()))

            thread = threading.Thread(target=revive)
            thread.start()
            record.append(("thread", thread))

    return strike


@needs_kill
@pytest.mark.parametrize("who", ["destination", "every"])
def test_brokers_killed_mid_move_then_back(tmp_path, who):
    """A destination broker, then the whole cluster, killed once the moves run and started again four seconds
    later: the run rides it out (the cluster unreachable meanwhile is retried), every move ends done and in sync,
    no throttle is left, no record is lost (the end offsets as before), all within a few minutes."""
    current = live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)
    plan, ids = _shifted(current)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    arriving = sorted({b for e, c in zip(plan["partitions"], current["partitions"])
                       for b in e["replicas"] if b not in c["replicas"]})
    victims = arriving[:1] if who == "destination" else ids
    ends = _end_offsets()
    events: list = []
    started = time.monotonic()
    try:
        record = E.execute(path, BOOTSTRAP, throttle=_throttle_for(current, plan), timeout=30, patience_s=240,
                           progress=_havoc(victims, 4.0, events))
    finally:
        for thread in [e[1] for e in events if e[0] == "thread"]:
            thread.join(180)
    took = time.monotonic() - started
    assert events and events[0][0] == "killed", "no move ran long enough to kill a broker under it"
    assert {rec["state"] for rec in record["moves"].values()} <= {"done"}
    assert record["in_sync"]["not_in_sync"] == []
    assert E.verify(path, BOOTSTRAP, timeout=30)["throttles"] == {}
    _as_planned(plan)
    assert _end_offsets() == ends
    assert took < 300, f"the run took {took:.0f} s"
    print(f"\n{who}: killed {victims}, run of {took:.0f} s, {len(record['runs'])} run(s)")
    back = tmp_path / "back.json"
    back.write_text(json.dumps(current))
    assert {rec["state"] for rec in E.execute(back, BOOTSTRAP, throttle=50_000_000, timeout=30)["moves"].values()} \
        <= {"done"}


@needs_kill
@pytest.mark.parametrize("patience", [120, 5], ids=["ridden-out", "given-up"])
def test_cluster_unreachable_for_twenty_seconds(tmp_path, patience):
    """Every broker killed once the moves run and started again 20 s later. Within the patience (120 s) the run
    rides it out and finishes; with 5 s it gives up after about 5 s with one line saying what to run, the plan
    file recording where things stood, and the same execute run again (once the cluster is back) finishes. Either
    way every move ends done and in sync and no record is lost."""
    current = live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)
    plan, ids = _shifted(current)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    ends = _end_offsets()
    events: list = []
    throttle = _throttle_for(current, plan)
    started = time.monotonic()
    try:
        try:
            record = E.execute(path, BOOTSTRAP, throttle=throttle, timeout=10, patience_s=patience,
                               progress=_havoc(ids, 20.0, events))
            gave_up = None
        except E.ClusterLost as err:
            gave_up, record = (str(err), time.monotonic()), err.record
    finally:
        for thread in [e[1] for e in events if e[0] == "thread"]:
            thread.join(180)
    assert events and events[0][0] == "killed"
    killed_at = events[0][1]
    if patience == 5:
        assert gave_up is not None, "the run rode out 20 s with a patience of 5 s"
        message, at = gave_up
        assert "\n" not in message and message.startswith("the cluster did not answer for 5 s")
        assert "run the same --execute again to resume" in message
        assert at - killed_at < patience + 10 + 3, f"gave up {at - killed_at:.0f} s after the kill"
        saved = json.loads(path.read_text())[E.STATE_KEY]
        assert saved["runs"][-1]["ended"] == "unreachable"
        assert {rec["state"] for rec in saved["moves"].values()} <= {"running", "done"}
        print(f"\ngave up {at - killed_at:.1f} s after the kill: {message}")
        deadline = time.monotonic() + 120
        while not _all_brokers_back(len(ids)):  # before running again
            assert time.monotonic() < deadline, "the cluster did not come back within 2 minutes"
            time.sleep(1)
        record = E.execute(path, BOOTSTRAP, timeout=30)
        assert [run["ended"] for run in record["runs"]] == ["unreachable", "finished"]
    else:
        assert gave_up is None and record["runs"][-1]["ended"] == "finished"
    took = time.monotonic() - started
    assert {rec["state"] for rec in record["moves"].values()} <= {"done"}
    assert record["in_sync"]["not_in_sync"] == [] and record["throttle_set"]["removed_at"]
    _as_planned(plan)
    assert _end_offsets() == ends
    print(f"\npatience {patience} s: finished {took:.0f} s after the start, {len(record['runs'])} run(s)")
    back = tmp_path / "back.json"
    back.write_text(json.dumps(current))
    assert E.execute(back, BOOTSTRAP, throttle=50_000_000, timeout=30)["in_sync"]["not_in_sync"] == []


def test_ctrl_c_to_the_command_then_the_same_command_resumes(tmp_path):
    """``kassign plan --execute`` as a subprocess, SIGINT once a move runs: exit 130, one line saying how to verify,
    cancel or resume, the moves left running; the same command again resumes and finishes (exit 0)."""
    import signal
    import subprocess
    import sys

    current = live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)
    plan, _ = _shifted(current)
    out = tmp_path / "plan.json"
    out.write_text(json.dumps(plan))
    command = [sys.executable, "-m", "kassign.cli.main", "plan", "--bootstrap-server", BOOTSTRAP, "--out", str(out),
               "--execute", "--throttle", str(_throttle_for(current, plan)), "--timeout", "30"]
    ends = _end_offsets()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = json.loads(out.read_text()).get(E.STATE_KEY) or {"moves": {}}
            if any(rec["state"] == "running" for rec in state["moves"].values()):
                break
            time.sleep(0.2)
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, stderr
    line = stderr.strip().splitlines()[-1]
    assert line.startswith("kassign: stopped (Ctrl-C)") and f"--verify {out}" in line and "--execute again" in line
    state = json.loads(out.read_text())[E.STATE_KEY]
    assert state["runs"][-1]["ended"] == "stopped"
    assert any(rec["state"] == "running" for rec in state["moves"].values())
    assert E.verify(out, BOOTSTRAP, timeout=30)["counts"].get("moving", 0) >= 1
    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"resuming {out}" in again.stdout.replace("\n", "")
    state = json.loads(out.read_text())[E.STATE_KEY]
    assert [run["ended"] for run in state["runs"]] == ["stopped", "finished"]
    assert {rec["state"] for rec in state["moves"].values()} == {"done"}
    _as_planned(plan)
    assert _end_offsets() == ends
    print(f"\nCtrl-C: {line}")
    back = tmp_path / "back.json"
    back.write_text(json.dumps(current))
    assert E.execute(back, BOOTSTRAP, throttle=50_000_000, timeout=30)["in_sync"]["not_in_sync"] == []
