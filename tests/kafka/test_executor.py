"""The executor's state machine (``kassign.kafka.executor``) driven through the replayed 4.3.1 cluster
(``tests/kafka/replay_reassign.py``): the captured moves carried out with the captured throttle (the real bytes
served, kassign's requests the AdminClient's byte for byte), batches under the concurrency, a foreign reassignment
refused before anything changes, bad input and authorization errors as one line with nothing changed, Ctrl-C then
resume, cancel, verify, and polling at most once a second."""

from __future__ import annotations

import base64
import json
import threading
import time

import pytest

from kassign.core.errors import KassignError
from kassign.kafka import executor as E
from kassign.kafka import reassign_protocol as R
from kassign.kafka.flexible import FlexReader
from tests.kafka.replay_balance import load
from tests.kafka.replay_reassign import ReassigningCluster

MOVES = {("kc-move", 0): [3, 2], ("kc-move", 1): [1, 3], ("kc-move", 2): [2, 1]}
WRITES = {44, 45, 43}  # the APIs that change a cluster


def write_plan(tmp_path, targets=None, extra=None, name="plan.json"):
    targets = dict(MOVES if targets is None else targets)
    partitions = [{"topic": t, "partition": p, "replicas": r} for (t, p), r in targets.items()]
    partitions += [{"topic": t, "partition": p, "replicas": r} for (t, p), r in (extra or {}).items()]
    path = tmp_path / name
    path.write_text(json.dumps({"version": 1, "partitions": partitions}))
    return path


def requests(cluster, api_key=None):
    return [(k, v, body) for broker in cluster.brokers.values() for k, v, body in broker.requests
            if api_key is None or k == api_key]


def captured_body(name):
    doc = load(name)
    reader = FlexReader(base64.b64decode(doc["request_b64"]), False)
    reader.int16(), reader.int16(), reader.int32(), reader.string()
    reader.flexible = True
    reader.tags()
    return bytes(reader.data[reader.pos:])


def test_captured_moves_carried_out_with_the_captured_throttle(tmp_path):
    path = write_plan(tmp_path, extra={("kc-move", 3): [1, 3]})
    with ReassigningCluster() as cluster:
        record = E.execute(path, cluster.bootstrap, throttle=100000, poll_s=0.01, timeout=20)
        served = set(cluster.served)
        sent = {body for k, _, body in requests(cluster) if k in (44, 45)}
        configs = cluster.configs
        replicas = dict(cluster.replicas)
    assert {name: rec["state"] for name, rec in record["moves"].items()} == dict.fromkeys(
        ["kc-move-0", "kc-move-1", "kc-move-2"], "done")
    assert record["batches"] == [["kc-move-0", "kc-move-1", "kc-move-2"]]
    assert record["finished_at"] and record["runs"][-1]["ended"] == "finished"
    assert record["in_sync"] == {"checked": 3, "not_in_sync": []}
    # the real answers went through the state machine
    assert {"alter-partition-reassignments-start.json", "list-partition-reassignments-ongoing.json",
            "list-partition-reassignments-done.json", "incremental-alter-configs-throttle-topic.json",
            "incremental-alter-configs-throttle-broker-1.json", "incremental-alter-configs-throttle-broker-2.json",
            "incremental-alter-configs-throttle-broker-3.json", "incremental-alter-configs-clear-topic.json"} <= served
    # kassign's requests are kafka-reassign-partitions.sh's, byte for byte
    for name in ("alter-partition-reassignments-start.json", "incremental-alter-configs-throttle-topic.json",
                 "incremental-alter-configs-throttle-broker-1.json", "incremental-alter-configs-throttle-broker-3.json",
                 "incremental-alter-configs-clear-topic.json"):
        assert captured_body(name) in sent, name
    # the throttle is gone, the replicas are the plan's
    assert all(values == {} for values in configs.values())
    assert record["throttle_set"]["removed_at"] and record["throttle_set"]["topics"] == []
    assert [replicas[k] for k in MOVES] == list(MOVES.values())
    # the plan file is the state, and kafka-reassign-partitions.sh's fields are as they were
    saved = json.loads(path.read_text())
    assert saved[E.STATE_KEY]["moves"]["kc-move-0"]["state"] == "done"
    assert [p["replicas"] for p in saved["partitions"]][:3] == list(MOVES.values())


def test_a_brokers_metadata_behind_the_controller_does_not_turn_a_done_move_into_a_cancelled_one(tmp_path):
    # Seen on a real 3-node Kafka 4.3.1: ListPartitionReassignments (the controller) no longer lists a finished move
    # while the metadata of the broker asked still shows it moving (replicas: target and those being removed)
    path = write_plan(tmp_path)
    with ReassigningCluster(metadata_lag=2) as cluster:
        record = E.execute(path, cluster.bootstrap, throttle=100000, poll_s=0.01, timeout=20)
    assert {rec["state"] for rec in record["moves"].values()} == {"done"}
    assert record["runs"][-1]["ended"] == "finished" and record["in_sync"]["not_in_sync"] == []


def test_a_move_cancelled_by_someone_else_still_halts_the_run(tmp_path):
    path = write_plan(tmp_path)
    with ReassigningCluster(polls=50) as cluster:
        def cancel_elsewhere(_progress):  # as kafka-reassign-partitions.sh --cancel from another machine
            key = ("kc-move", 0)
            if key in cluster.ongoing:
                cluster.replicas[key] = sorted(cluster.ongoing.pop(key)["original"])

        record = E.execute(path, cluster.bootstrap, throttle=100000, poll_s=0.01, timeout=20,
                           progress=cancel_elsewhere)
    assert record["moves"]["kc-move-0"]["state"] == "cancelled"
    assert record["moves"]["kc-move-0"]["error"] == "cancelled or replaced by someone else while it ran"
    assert record["runs"][-1]["ended"] == "halted"


def test_leader_election_where_the_plan_changes_a_leader(tmp_path):
    path = write_plan(tmp_path, {("kc-move", 3): [3, 1], ("kc-small", 1): [2, 1]})
    with ReassigningCluster() as cluster:
        record = E.execute(path, cluster.bootstrap, poll_s=0.01)
        leaders = dict(cluster.leaders)
        elect = requests(cluster, 43)
    assert record["elected"] == {"asked": ["kc-move-3", "kc-small-1"], "errors": {}}
    assert leaders[("kc-move", 3)] == 3 and leaders[("kc-small", 1)] == 2
    (_, version, body), = elect
    partitions, election, _ = R.decode_elect_leaders_request(FlexReader(body, version >= 2), version)
    assert election == R.PREFERRED and partitions == [("kc-move", [3]), ("kc-small", [1])]


def test_concurrency_one_runs_one_move_per_broker_at_a_time(tmp_path):
    path = write_plan(tmp_path)
    seen = []
    with ReassigningCluster(polls=1) as cluster:
        def watch(progress):
            touched = {}
            for key, move in cluster.ongoing.items():
                for b in set(move["target"]) ^ set(move["original"]):
                    touched[b] = touched.get(b, 0) + 1
            seen.append(max(touched.values(), default=0))

        record = E.execute(path, cluster.bootstrap, concurrency=1, poll_s=0.01, progress=watch)
        starts = requests(cluster, 45)
    assert len(record["batches"]) == 3 and max(seen) == 1
    assert len(starts) == 3  # one AlterPartitionReassignments per batch
    assert all(rec["state"] == "done" for rec in record["moves"].values())


def test_foreign_reassignment_stops_before_anything_changes(tmp_path):
    path = write_plan(tmp_path)
    with ReassigningCluster(running={("kc-big", 0): [1, 2, 3][::-1]}) as cluster:
        cluster.ongoing.clear()
        cluster._start(("kc-small", 0), [3, 2])
        with pytest.raises(KassignError, match=r"^a reassignment this plan did not start is running: kc-small-0 "
                                               r"\(-> \[3, 2\]\); nothing was changed.*--force"):
            E.execute(path, cluster.bootstrap, throttle=1000, poll_s=0.01)
        assert not [r for r in requests(cluster) if r[0] in WRITES]
    assert E.STATE_KEY not in json.loads(path.read_text())


def test_force_leaves_the_foreign_reassignment_and_its_partition_alone(tmp_path):
    path = write_plan(tmp_path, extra={("kc-small", 0): [1, 2]})
    with ReassigningCluster(polls={("kc-small", 0): 1000}) as cluster:
        cluster._start(("kc-small", 0), [3, 2])
        cluster.configs[(2, "kc-small")] = {"leader.replication.throttled.replicas": "0:3,0:1"}
        record = E.execute(path, cluster.bootstrap, throttle=1000, force=True, poll_s=0.01)
        foreign_config = cluster.configs[(2, "kc-small")]
        still = ("kc-small", 0) in cluster.ongoing
    assert record["moves"]["kc-small-0"]["state"] == "skipped"
    assert all(record["moves"][f"kc-move-{p}"]["state"] == "done" for p in range(3))
    assert still and foreign_config == {"leader.replication.throttled.replicas": "0:3,0:1"}


@pytest.mark.parametrize("targets, message", [
    ({("kc-gone", 0): [1, 2]}, r"moves kc-gone-0, which the cluster does not have"),
    ({("kc-move", 0): [3, 2, 1]}, r"kc-move-0 has 2 replicas on the cluster but 3 in plan .*replication factor"),
    ({("kc-move", 0): [9, 2]}, r"puts kc-move-0 on broker 9, which is not in the cluster \(brokers: 1, 2, 3\)"),
])
def test_plan_not_matching_the_cluster_is_one_line_and_changes_nothing(tmp_path, targets, message):
    path = write_plan(tmp_path, targets)
    with ReassigningCluster() as cluster:
        with pytest.raises(KassignError, match=message) as err:
            E.execute(path, cluster.bootstrap, throttle=1000, poll_s=0.01)
        assert "\n" not in str(err.value)
        assert not [r for r in requests(cluster) if r[0] in WRITES]


@pytest.mark.parametrize("kwargs, message", [
    ({"throttle": 0}, r"^--throttle must be a whole number of bytes per second above 0, got 0"),
    ({"throttle": -5}, r"^--throttle must be"),
    ({"concurrency": 0}, r"^--concurrency must be a whole number of moves, at least 1, got 0"),
])
def test_bad_options_are_refused_before_connecting(tmp_path, kwargs, message):
    path = write_plan(tmp_path)
    with pytest.raises(KassignError, match=message):
        E.execute(path, "127.0.0.1:1", **kwargs)


@pytest.mark.parametrize("denied", [44, 45])
def test_authorization_error_is_one_line_and_leaves_nothing_behind(tmp_path, denied):
    path = write_plan(tmp_path)
    with ReassigningCluster(deny={denied}) as cluster:
        with pytest.raises(KassignError, match=r"^not authorized to .*AUTHORIZATION_FAILED"):
            E.execute(path, cluster.bootstrap, throttle=1000, poll_s=0.01)
        assert not cluster.ongoing
        assert all(values == {} for values in cluster.configs.values())
        if denied == 44:
            assert not requests(cluster, 45)


def test_ctrl_c_leaves_running_moves_then_the_same_command_resumes(tmp_path):
    path = write_plan(tmp_path)
    stop = threading.Event()
    with ReassigningCluster(polls=3) as cluster:
        def press_ctrl_c(progress):
            if progress.running:
                stop.set()

        first = E.execute(path, cluster.bootstrap, concurrency=1, throttle=1000, poll_s=0.01, progress=press_ctrl_c,
                          stop=stop)
        assert first["runs"][-1]["ended"] == "stopped"
        assert [rec["state"] for rec in first["moves"].values()].count("running") == 1
        assert cluster.ongoing and cluster.configs[(2, "kc-move")]  # the running move keeps its throttle
        status = E.verify(path, cluster.bootstrap)
        assert status["counts"] == {"moving": 1, "not started": 2}
        assert status["throttles"]["topic kc-move"]["leader.replication.throttled.replicas"]
        second = E.execute(path, cluster.bootstrap, concurrency=1, poll_s=0.01)
        configs = cluster.configs
    assert second["runs"][-1]["ended"] == "finished" and len(second["runs"]) == 2
    assert all(rec["state"] == "done" for rec in second["moves"].values())
    assert second["throttle"] == 1000 and all(values == {} for values in configs.values())


def test_a_resumed_run_with_another_throttle_changes_the_rate_of_the_running_moves(tmp_path):
    path = write_plan(tmp_path)
    stop = threading.Event()
    with ReassigningCluster(polls=3) as cluster:
        def press_ctrl_c(progress):
            if progress.running:
                stop.set()

        E.execute(path, cluster.bootstrap, concurrency=1, throttle=1000, poll_s=0.01, progress=press_ctrl_c, stop=stop)
        brokers = json.loads(path.read_text())[E.STATE_KEY]["throttle_set"]["brokers"]
        assert brokers and all(cluster.configs[(R.BROKER, str(b))]["leader.replication.throttled.rate"] == "1000"
                               for b in brokers)
        seen, said = [], []

        def watch(progress):
            said.extend(progress.lines)
            if not seen:
                seen.append({b: dict(cluster.configs[(R.BROKER, str(b))]) for b in brokers})

        second = E.execute(path, cluster.bootstrap, concurrency=1, throttle=5000, poll_s=0.01, progress=watch)
    assert all(c == {"leader.replication.throttled.rate": "5000", "follower.replication.throttled.rate": "5000"}
               for c in seen[0].values())
    assert f"throttle changed from 1000 to 5000 bytes/s on broker(s) {', '.join(map(str, brokers))} (moves running)" \
        in said
    assert second["throttle"] == 5000 and second["runs"][-1]["ended"] == "finished"


def test_a_resumed_run_waits_within_its_patience_for_a_broker_not_registered_again_yet(tmp_path):
    # right after a whole-cluster restart, broker 3 (a target) is not in Metadata for a moment: the resumed run
    # waits for it and finishes; a fresh plan naming a broker that is not there is still refused at once
    path = write_plan(tmp_path)
    stop = threading.Event()
    with ReassigningCluster(polls=3) as cluster:
        def press_ctrl_c(progress):
            if progress.running:
                stop.set()

        E.execute(path, cluster.bootstrap, concurrency=1, throttle=1000, poll_s=0.01, progress=press_ctrl_c, stop=stop)
        cluster.unregistered = {3}
        back = threading.Timer(0.5, lambda: setattr(cluster, "unregistered", set()))
        back.start()
        said = []
        record = E.execute(path, cluster.bootstrap, concurrency=1, poll_s=0.05, patience_s=30,
                           progress=lambda p: said.extend(p.lines))
        back.join()
        assert record["runs"][-1]["ended"] == "finished"
        assert "waiting up to 30 s for broker(s) 3 to rejoin the cluster (the plan resumed places replicas on them)" \
            in said
        cluster.unregistered = {3}
        with pytest.raises(KassignError, match=r"puts kc-move-0 on broker 3, which is not in the cluster"):
            E.execute(write_plan(tmp_path, name="fresh.json"), cluster.bootstrap, poll_s=0.01, patience_s=30)
        path2 = write_plan(tmp_path, name="again.json")
        cluster.unregistered = set()
        E.execute(path2, cluster.bootstrap, poll_s=0.01, stop=stop)  # stop already set: recorded, nothing started
        cluster.unregistered = {3}
        started = time.monotonic()
        with pytest.raises(KassignError, match=r"which is not in the cluster"):
            E.execute(path2, cluster.bootstrap, poll_s=0.05, patience_s=0.3)  # never back: the same line, in time
        assert time.monotonic() - started < 10


def test_cancel_stops_this_plans_moves_and_removes_the_throttle(tmp_path):
    path = write_plan(tmp_path)
    stop = threading.Event()
    with ReassigningCluster(polls=1000) as cluster:
        E.execute(path, cluster.bootstrap, throttle=1000, poll_s=0.01, stop=stop,
                  progress=lambda p: stop.set() if p.running else None)
        assert len(cluster.ongoing) == 3
        result = E.cancel(path, cluster.bootstrap, timeout=20)
        cancels = requests(cluster, 45)[-1]
        replicas = dict(cluster.replicas)
        configs = cluster.configs
    assert result["cancelled"] == ["kc-move-0", "kc-move-1", "kc-move-2"] and result["errors"] == {}
    moves, _, _ = R.decode_alter_partition_reassignments_request(FlexReader(cancels[2], True), cancels[1])
    assert all(m.replicas is None for m in moves)
    assert replicas[("kc-move", 2)] == [1, 3]  # the set comes back, not its order (as the captured cluster did)
    assert all(values == {} for values in configs.values())
    state = json.loads(path.read_text())[E.STATE_KEY]
    assert {rec["state"] for rec in state["moves"].values()} == {"cancelled"}


def test_verify_of_a_finished_plan(tmp_path):
    path = write_plan(tmp_path)
    with ReassigningCluster() as cluster:
        E.execute(path, cluster.bootstrap, poll_s=0.01)
        status = E.verify(path, cluster.bootstrap)
    assert status["counts"] == {"done": 3} and status["bytes_left"] == 0 and status["throttles"] == {}


def test_verify_in_bytes_per_broker_while_moving(tmp_path):
    path = write_plan(tmp_path, {("kc-move", 0): [3, 2]})
    with ReassigningCluster(polls=1000) as cluster:
        cluster._start(("kc-move", 0), [3, 2])
        cluster.ongoing[("kc-move", 0)]["ticks"] = 0  # verify's ListPartitionReassignments makes it the first
        status = E.verify(path, cluster.bootstrap)
    assert status["partitions"]["kc-move-0"]["state"] == "moving"
    assert status["brokers"] == {"3": {"moves_in": 1, "bytes_left_in": 2118143 - 1046348}}


def test_polls_at_most_once_a_second(tmp_path):
    path = write_plan(tmp_path, {("kc-move", 0): [3, 2]})
    with ReassigningCluster(polls=2) as cluster:
        stamps = []
        original = cluster.brokers[1].answers[46]

        def stamped(version, body):
            stamps.append(time.monotonic())
            return original(version, body)

        for broker in cluster.brokers.values():
            broker.answers[46] = stamped
        started = time.monotonic()
        E.execute(path, cluster.bootstrap)
        took = time.monotonic() - started
    polls = [b - a for a, b in zip(stamps, stamps[1:])]
    # between polls of the loop at least a second; the finish adds its own reads right after the last poll
    assert sum(1 for gap in polls if gap >= 0.95) >= 2
    assert took < 6


def test_plan_file_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]}')
    with pytest.raises(KassignError, match=r"t-0 lists a broker twice"):
        E.read_plan(bad)
    bad.write_text('{"version": 1}')
    with pytest.raises(KassignError, match=r"has no \"partitions\" list"):
        E.read_plan(bad)
    with pytest.raises(KassignError, match=r"cannot read plan"):
        E.read_plan(tmp_path / "missing.json")


def test_cluster_unreachable_for_a_while_then_back(tmp_path):
    path = write_plan(tmp_path)
    with ReassigningCluster(polls=3) as cluster:
        seen = []

        def outage(progress):
            seen.extend(progress.lines)
            if progress.running and not seen.count("outage"):
                seen.append("outage")
                cluster.down = True
                threading.Timer(9.0, lambda: setattr(cluster, "down", False)).start()

        record = E.execute(path, cluster.bootstrap, poll_s=0.05, progress=outage, timeout=1)
    assert record["runs"][-1]["ended"] == "finished"
    assert {rec["state"] for rec in record["moves"].values()} == {"done"}
    assert any(line.startswith("the cluster does not answer") for line in seen)


def test_cluster_unreachable_too_long_is_one_line_then_resumes(tmp_path):
    path = write_plan(tmp_path)
    with ReassigningCluster(polls=1000) as cluster:
        def outage(progress):
            if progress.running:
                cluster.down = True

        with pytest.raises(KassignError, match=r"^the cluster did not answer for 1 s .*the moves started go on without "
                                               r"kassign.*run the same --execute again to resume"):
            E.execute(path, cluster.bootstrap, poll_s=0.05, progress=outage, timeout=1, patience_s=1)
        state = json.loads(path.read_text())[E.STATE_KEY]
        assert state["runs"][-1]["ended"] == "unreachable"
        assert {rec["state"] for rec in state["moves"].values()} == {"running"}
        cluster.down = False
        cluster.finish_all()
        record = E.execute(path, cluster.bootstrap, poll_s=0.05)
    assert {rec["state"] for rec in record["moves"].values()} == {"done"} and len(record["runs"]) == 2


def test_docstring_example_reorder_joins_the_throttle_and_gets_its_leader(tmp_path):
    path = write_plan(tmp_path, extra={("kc-move", 3): [3, 1]})
    with ReassigningCluster() as cluster:
        sets = []
        original = cluster._configs_set

        def spy(version, body):
            resources, _ = R.decode_incremental_alter_configs_request(FlexReader(body, version >= 1), version)
            sets.extend(resources)
            return original(version, body)

        for broker in cluster.brokers.values():
            broker.answers[44] = spy
        record = E.execute(path, cluster.bootstrap, throttle=100000, poll_s=0.01)
    topic = next(r for r in sets if r.resource_type == R.TOPIC and r.changes[0].operation == R.SET)
    assert [(c.name, c.value) for c in topic.changes] == [
        ("leader.replication.throttled.replicas", "0:1,0:2,1:2,1:3,2:1,2:3,3:1,3:3"),
        ("follower.replication.throttled.replicas", "0:3,1:1,2:2")]
    assert record["batches"] == [["kc-move-3", "kc-move-0", "kc-move-1", "kc-move-2"]]
    assert record["elected"]["asked"] == ["kc-move-3"] and record["in_sync"]["checked"] == 4


def test_cancel_request_is_the_captured_one(tmp_path):
    path = write_plan(tmp_path, {("kc-move", 2): [2, 1]})
    with ReassigningCluster(polls=1000, running={("kc-move", 2): [2, 1]}) as cluster:
        E.cancel(path, cluster.bootstrap, timeout=20)
        served = set(cluster.served)
        sent = [body for k, _, body in requests(cluster, 45)]
        replicas = cluster.replicas[("kc-move", 2)]
    assert captured_body("alter-partition-reassignments-cancel.json") in sent
    assert "alter-partition-reassignments-cancel.json" in served and replicas == [1, 3]


def test_elect_and_refused_moves_are_the_captured_requests_and_answers():
    with ReassigningCluster() as cluster:
        before = load("elect-leaders-preferred.json")["decoded"]["before"]
        for name, facts in before.items():
            topic, _, p = name.rpartition("-")
            cluster.replicas[(topic, int(p))] = facts["replicas"]
            cluster.leaders[(topic, int(p))] = facts["leader"]
        with E.Admin(cluster.bootstrap, timeout=20) as admin:
            admin.metadata(["kc-move"])
            answer = admin.elect([("kc-move", 1), ("kc-move", 2), ("kc-move", 3), ("kc-big", 0), ("kc-big", 1),
                                  ("kc-small", 1)])
            refused = admin.alter([R.Reassignment("kc-no-such-topic", 0, [1, 2]),
                                   R.Reassignment("kc-small", 0, [1, 99])])
        sent = {body for k, _, body in requests(cluster) if k in (43, 45)}
        served = set(cluster.served)
    assert captured_body("elect-leaders-preferred.json") in sent
    assert captured_body("alter-partition-reassignments-errors.json") in sent
    assert {"elect-leaders-preferred.json", "alter-partition-reassignments-errors.json"} <= served
    assert [r.error for r in answer.results] == [0, 0, 0, 0, 84, 0]
    assert [(r.error, R.error_name(r.error)) for r in refused.results] == [
        (3, "UNKNOWN_TOPIC_OR_PARTITION"), (39, "INVALID_REPLICA_ASSIGNMENT")]


def test_disk_limit_makes_a_full_broker_give_before_it_takes(tmp_path):
    # broker 3 made 100 MB fuller than the others, its limit 1 MB above that: kc-move 0's copy onto it (2118143
    # bytes) fits only once kc-move 1 [2, 3] -> [2, 1] has taken as much off it; concurrency would allow both at once
    import dataclasses

    total, used = 270553174016, 270553174016 - 77403480064 + 100_000_000
    path = write_plan(tmp_path, {("kc-move", 0): [3, 2], ("kc-move", 1): [2, 1]})
    together = []
    with ReassigningCluster(polls=2) as cluster:
        cluster.dirs[3] = [dataclasses.replace(d, usable_bytes=d.usable_bytes - 100_000_000) for d in cluster.dirs[3]]

        def watch(progress):
            together.append(len(cluster.ongoing))

        record = E.execute(path, cluster.bootstrap, disk_limit=(used + 1_000_000) / total, poll_s=0.01,
                           progress=watch)
    assert record["batches"] == [["kc-move-1"], ["kc-move-0"]] and max(together) == 1
    assert {rec["state"] for rec in record["moves"].values()} == {"done"}


def test_a_capacity_documents_disk_bytes_sets_the_limit_and_a_resumed_run_keeps_it(tmp_path):
    # broker 3 made 100 MB fuller; its disk said to be D bytes (a capacity document's disk_bytes) with 0.8 x D just
    # 1 MB above its use: the copy onto it waits for kc-move 1 to take as much off it. Without disk_bytes the
    # volumes' 270 GB leave room for both at once.
    import dataclasses
    import threading

    total, used = 270553174016, 270553174016 - 77403480064 + 100_000_000
    disk = -(-(used + 1_000_000) * 10 // 8)
    targets = {("kc-move", 0): [3, 2], ("kc-move", 1): [2, 1]}
    for disk_bytes, batches in (({3: disk}, [["kc-move-1"], ["kc-move-0"]]), (None, [["kc-move-0", "kc-move-1"]])):
        path = write_plan(tmp_path, targets)
        with ReassigningCluster(polls=2) as cluster:
            cluster.dirs[3] = [dataclasses.replace(d, usable_bytes=d.usable_bytes - 100_000_000)
                               for d in cluster.dirs[3]]
            stop = threading.Event()
            stop.set()  # prepared and recorded, nothing started
            first = E.execute(path, cluster.bootstrap, disk_bytes=disk_bytes, poll_s=0.01, stop=stop)
            assert first["batches"] == batches and not [r for r in requests(cluster) if r[0] in WRITES]
            assert first.get("disk_bytes") == (None if disk_bytes is None else {"3": disk})
            resumed = E.execute(path, cluster.bootstrap, poll_s=0.01)  # no disk_bytes given: the plan file's
        assert resumed["batches"] == batches and resumed.get("disk_bytes") == first.get("disk_bytes")
        assert {rec["state"] for rec in resumed["moves"].values()} == {"done"}


def test_disk_bytes_must_be_positive_whole_numbers(tmp_path):
    path = write_plan(tmp_path, {("kc-move", 0): [3, 2]})
    for bad in ({3: 0}, {3: 1.5}, {3: -1}):
        with pytest.raises(KassignError, match=r"^disk_bytes maps broker ids to a positive whole number of bytes$"):
            E.execute(path, "127.0.0.1:1", disk_bytes=bad)


def test_disk_limit_no_order_can_keep_is_one_line_before_anything_changes(tmp_path):
    total, used = 270553174016, 270553174016 - 77403480064
    path = write_plan(tmp_path, {("kc-move", 0): [3, 2]})
    with ReassigningCluster() as cluster:
        with pytest.raises(KassignError, match=r"^no order of the moves keeps broker 3 within its disk limit"):
            E.execute(path, cluster.bootstrap, disk_limit=(used + 1000) / total, throttle=1000, poll_s=0.01)
        assert not [r for r in requests(cluster) if r[0] in WRITES]


def test_throttle_half_set_is_removed_when_the_brokers_refuse(tmp_path):
    path = write_plan(tmp_path)
    with ReassigningCluster(deny={"44:broker"}) as cluster:
        with pytest.raises(KassignError, match=r"^not authorized to change the configs of broker 1"):
            E.execute(path, cluster.bootstrap, throttle=1000, poll_s=0.01)
        topic_sets = [body for k, _, body in requests(cluster, 44)]
        assert len(topic_sets) >= 2 and not requests(cluster, 45)
        assert cluster.configs[(R.TOPIC, "kc-move")] == {}  # set, then removed
    state = json.loads(path.read_text())[E.STATE_KEY]
    assert state["throttle_set"]["topics"] == [] and state["throttle_set"]["removed_at"]


def test_destination_broker_killed_and_restarted_mid_move(tmp_path):
    path = write_plan(tmp_path, {("kc-move", 0): [3, 2]})
    copied = []
    with ReassigningCluster(polls=6) as cluster:
        def kill(progress):
            copied.append(progress.bytes_copied)
            if progress.running and not kill.done:
                kill.done = True
                cluster.down_brokers.add(3)
                threading.Timer(2.0, cluster.down_brokers.clear).start()

        kill.done = False
        record = E.execute(path, cluster.bootstrap, poll_s=0.05, timeout=1, progress=kill)
    assert record["runs"][-1]["ended"] == "finished" and record["moves"]["kc-move-0"]["state"] == "done"
    assert record["in_sync"] == {"checked": 1, "not_in_sync": []}
    assert max(copied) > 0 and copied == sorted(copied)  # the progress shown never goes back while 3 is away


def test_cluster_lost_while_finishing_is_ridden_out(tmp_path):
    # every move done, then the brokers answer nothing right when the throttle is to be removed, until the executor
    # has said it lost them (each place it can ask waits out its one-second deadline)
    path = write_plan(tmp_path, extra={("kc-move", 3): [3, 1]})
    with ReassigningCluster(polls=2) as cluster:
        seen = []

        def outage(progress):
            seen.extend(progress.lines)
            if any(line.startswith("the cluster does not answer") for line in progress.lines):
                cluster.stalled = False
            if progress.running == 0 and progress.waiting == 0 and not outage.done:
                outage.done = True
                cluster.stalled = True
                threading.Timer(15.0, lambda: setattr(cluster, "stalled", False)).start()

        outage.done = False
        record = E.execute(path, cluster.bootstrap, throttle=100000, poll_s=0.05, progress=outage, timeout=1)
        configs = cluster.configs
        leaders = dict(cluster.leaders)
    assert outage.done and any(line.startswith("the cluster does not answer") for line in seen)
    assert record["runs"][-1]["ended"] == "finished" and record["finished_at"]
    assert record["throttle_set"]["removed_at"] and all(values == {} for values in configs.values())
    assert record["elected"]["asked"] == ["kc-move-3"] and leaders[("kc-move", 3)] == 3
    assert record["in_sync"] == {"checked": 4, "not_in_sync": []}


def test_ctrl_c_while_the_cluster_does_not_answer_stops_at_once(tmp_path):
    path = write_plan(tmp_path)
    stop = threading.Event()
    with ReassigningCluster(polls=1000) as cluster:
        def outage_then_ctrl_c(progress):
            if progress.running and not cluster.down:
                cluster.down = True
                threading.Timer(0.5, stop.set).start()

        started = time.monotonic()
        record = E.execute(path, cluster.bootstrap, throttle=1000, poll_s=0.05, progress=outage_then_ctrl_c,
                           stop=stop, timeout=1, patience_s=60)
        took = time.monotonic() - started
        assert record["runs"][-1]["ended"] == "stopped" and took < 5, took
        saved = json.loads(path.read_text())[E.STATE_KEY]
        assert saved["runs"][-1]["ended"] == "stopped"
        assert {rec["state"] for rec in saved["moves"].values()} == {"running"}
        cluster.down = False
        cluster.finish_all()
        again = E.execute(path, cluster.bootstrap, poll_s=0.05)
        configs = cluster.configs
    assert again["runs"][-1]["ended"] == "finished" and {rec["state"] for rec in again["moves"].values()} == {"done"}
    assert all(values == {} for values in configs.values())


def test_a_stalled_cluster_is_given_up_within_the_patience_and_one_request(tmp_path):
    # brokers that keep their connections open and answer nothing (frozen, or starting up as a restarted Kafka
    # broker does for a while): every place the executor can ask waits out its deadline, one after the other
    path = write_plan(tmp_path)
    timeout, patience = 1.0, 2.0
    with ReassigningCluster(polls=1000) as cluster:
        def stall(progress):
            if progress.running and not cluster.stalled:
                stall.at = time.monotonic()
                cluster.stalled = True

        with pytest.raises(KassignError) as caught:
            E.execute(path, cluster.bootstrap, throttle=1000, poll_s=0.05, progress=stall, timeout=timeout,
                      patience_s=patience)
        took = time.monotonic() - stall.at
        message = str(caught.value)
        assert took < patience + timeout + 1.0, f"gave up {took:.1f} s after the stall (patience {patience} s)"
        assert "\n" not in message and message.startswith(f"the cluster did not answer for {patience:.0f} s")
        assert "run the same --execute again to resume" in message
        saved = json.loads(path.read_text())[E.STATE_KEY]
        assert saved["runs"][-1]["ended"] == "unreachable"
        assert {rec["state"] for rec in saved["moves"].values()} == {"running"}
        cluster.stalled = False
        cluster.finish_all()
        record = E.execute(path, cluster.bootstrap, poll_s=0.05, timeout=timeout)
        configs = cluster.configs
    assert record["runs"][-1]["ended"] == "finished" and {rec["state"] for rec in record["moves"].values()} == {"done"}
    assert all(values == {} for values in configs.values())


def test_verify_of_a_plan_kassign_did_not_run(tmp_path):
    # kc-move 0 is on [1, 2] already, kc-move 1 is not where this plan puts it: kassign cannot tell whether the first
    # was moved (by kafka-reassign-partitions.sh, say) or was there all along
    path = write_plan(tmp_path, {("kc-move", 0): [1, 2], ("kc-move", 1): [1, 3]})
    with ReassigningCluster() as cluster:
        status = E.verify(path, cluster.bootstrap)
    assert {name: entry["state"] for name, entry in status["partitions"].items()} == {
        "kc-move-0": "as planned", "kc-move-1": "not started"}
    assert status["counts"] == {"as planned": 1, "not started": 1}


@pytest.fixture
def proxied_cluster():
    """The replayed cluster with every broker behind a FaultProxy (its metadata names the proxies): the executor's
    every connection, bootstrap and by node id, goes through real TCP that a test can cut."""
    from tests.kafka.fault_proxy import FaultProxy

    proxies = {node: FaultProxy() for node in (1, 2, 3)}
    try:
        cluster = ReassigningCluster(polls=6, advertised={node: proxy.port for node, proxy in proxies.items()})
        for node, proxy in proxies.items():
            proxy.upstream = ("127.0.0.1", cluster.brokers[node].port)
        with cluster:
            yield cluster, proxies
    finally:
        for proxy in proxies.values():
            proxy.stop()


@pytest.mark.parametrize("fault", ["reset", "refuse", "cut-mid-answer"])
def test_connections_cut_by_a_proxy_mid_move_are_ridden_out(tmp_path, proxied_cluster, fault):
    """Every open connection reset at once (brokers killed), then for two seconds every new one reset at its first
    answer, or closed as soon as accepted (brokers restarting), or every ListPartitionReassignments answer cut 20 bytes
    in: the run carries on and finishes, nothing left behind."""
    from tests.kafka.fault_proxy import Fault

    cluster, proxies = proxied_cluster
    path = write_plan(tmp_path)
    chosen = {"reset": Fault("reset"), "refuse": Fault("refuse"),
              "cut-mid-answer": Fault("drop", api_key=46, after=20, times=3)}[fault]
    seen = []

    def havoc(progress):
        seen.extend(progress.lines)
        if progress.running and not havoc.cut:
            havoc.cut = sum(proxy.cut() for proxy in proxies.values())
            for proxy in proxies.values():
                proxy.set_fault(chosen)
            havoc.timer = threading.Timer(2.0, heal)
            havoc.timer.start()

    def heal():
        havoc.hits = sum(proxy.hits for proxy in proxies.values())  # set_fault counts afresh
        for proxy in proxies.values():
            proxy.set_fault(None)

    havoc.cut, havoc.timer, havoc.hits = 0, None, 0
    record = E.execute(path, cluster.bootstrap, throttle=100000, poll_s=0.05, timeout=1, progress=havoc)
    havoc.timer.join()
    assert havoc.cut >= 1 and havoc.hits >= 1, (havoc.cut, havoc.hits)
    assert record["runs"][-1]["ended"] == "finished" and {rec["state"] for rec in record["moves"].values()} == {"done"}
    assert record["in_sync"] == {"checked": 3, "not_in_sync": []}
    assert record["throttle_set"]["removed_at"] and all(values == {} for values in cluster.configs.values())
    assert [cluster.replicas[k] for k in MOVES] == list(MOVES.values())
