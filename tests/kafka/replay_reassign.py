"""The 3-broker Kafka 4.3.1 cluster of ``shared/captures/kafka-4.3.1-cluster/`` as a small state machine on 127.0.0.1,
for driving kassign's executor without a cluster: its answers change with what was asked.

State: every partition's replicas, leader and ISR (from the captured Metadata), every replica's bytes (from the
captured DescribeLogDirs), the reassignments running, the topic and broker configs set. Requests:

- AlterPartitionReassignments starts a move (it finishes after ``polls`` ListPartitionReassignments calls, its new
  replicas growing in DescribeLogDirs meanwhile: kc-move 0's copy on broker 3 shows the captured 1046348 bytes
  first) or cancels one (a null target: the replica *set* comes back, sorted, as the captured cluster did);
  unknown topics and brokers get the captured per-partition errors (3, 39) with their messages.
- ListPartitionReassignments lists the running ones (replicas: the target, then those being removed).
- IncrementalAlterConfigs SETs and DELETEs configs; DescribeConfigs answers them (only those set, as Kafka lists
  the throttle configs). ``deny`` = {api keys} makes those answer an authorization error instead (``"44:broker"``:
  IncrementalAlterConfigs of broker resources only).
- ElectLeaders moves leadership to the first replica (84 ELECTION_NOT_NEEDED where it already leads).
- Metadata, DescribeLogDirs and DescribeCluster are built from the state.
- ``advertised = {node: port}``: the metadata names those ports (fault proxies forwarding to the brokers, set up by
  the caller; ``bootstrap`` is broker 1's).
- ``down = True``: every connection is closed at its first request (the cluster unreachable) until set back;
  ``down_brokers``: the same for those brokers alone (killed); ``stalled = True``: every request is held unanswered
  (a frozen or starting broker: the connection open, nothing read back) until set back, then its connection closed;
  ``unregistered``: brokers Metadata leaves out (restarted, not registered again yet).

Where the answer built is the captured one (the same request in the same state: starting the three captured moves,
listing them while they run, setting and clearing the captured throttle, ...), the captured bytes are served and the
file is added to ``served``: the tests assert that the real bytes went through the executor.
"""

from __future__ import annotations

import base64
import dataclasses
import threading
from collections.abc import Mapping

from kassign.kafka import cluster_protocol as C
from kassign.kafka import reassign_protocol as R
from kassign.kafka import topics_protocol as TP
from kassign.kafka.flexible import FlexReader
from tests.kafka.replay_balance import decoded, encode_metadata_answer, load, skip_without_captures
from tests.kafka.replay_broker import ReplayBroker, capture_body

VERSIONS = {3: (0, 13), 35: (0, 5), 60: (0, 2), 32: (0, 4), 46: (0, 0), 45: (0, 1), 44: (0, 1), 43: (0, 2)}
CAPTURED = ["alter-partition-reassignments-start.json", "alter-partition-reassignments-cancel.json",
            "alter-partition-reassignments-errors.json", "list-partition-reassignments-ongoing.json",
            "list-partition-reassignments-done.json", "list-partition-reassignments-named.json",
            "incremental-alter-configs-throttle-topic.json", "incremental-alter-configs-throttle-broker-1.json",
            "incremental-alter-configs-throttle-broker-2.json", "incremental-alter-configs-throttle-broker-3.json",
            "incremental-alter-configs-clear-topic.json", "elect-leaders-preferred.json"]
DURING_MOVE = 1046348  # kc-move 0's replica on broker 3 two seconds into the captured move
AUTH = {"topic": 29, "cluster": 31}


class ReassigningCluster:
    def __init__(self, polls: int | Mapping[tuple[str, int], int] = 2, deny: set[int] = frozenset(),
                 running: Mapping[tuple[str, int], list[int]] | None = None, metadata_lag: int = 0,
                 advertised: Mapping[int, int] | None = None) -> None:
        skip_without_captures()
        # Metadata answers after a move completes that still show it moving (a broker's metadata cache behind the
        # controller, as a real KRaft cluster's can be for a moment): ListPartitionReassignments no longer lists it
        self.metadata_lag = metadata_lag
        self.lagging: dict[tuple[str, int], list] = {}  # key -> [replicas, isr, leader, answers left]
        self.meta = decoded("metadata-racks.json")
        self.polls = polls
        self.deny = set(deny)
        self.replicas: dict[tuple[str, int], list[int]] = {}
        self.leaders: dict[tuple[str, int], int] = {}
        self.isr: dict[tuple[str, int], list[int]] = {}
        for topic in self.meta.topics:
            for p in topic.partitions:
                key = (topic.name, p.partition)
                self.replicas[key], self.leaders[key], self.isr[key] = list(p.replicas), p.leader, list(p.isr)
        self.sizes: dict[tuple[str, int], int] = {}
        self.dirs: dict[int, list[C.LogDir]] = {}
        self.on_dir: dict[tuple[str, int, int], str] = {}
        for b in (1, 2, 3):
            answer = decoded(f"describe-log-dirs-broker-{b}.json")
            self.dirs[b] = answer.log_dirs
            for d in answer.log_dirs:
                for r in d.replicas:
                    self.sizes[(r.topic, r.partition)] = max(self.sizes.get((r.topic, r.partition), 0), r.size)
                    self.on_dir[(r.topic, r.partition, b)] = d.path
        self.ongoing: dict[tuple[str, int], dict] = {}
        self.configs: dict[tuple[int, str], dict[str, str]] = {}
        self.served: set[str] = set()
        self.requests: list[tuple[int, int, bytes]] = []
        self.captures = {name: load(name) for name in CAPTURED}
        self.brokers = {b.node_id: ReplayBroker(VERSIONS, {}, b.node_id) for b in self.meta.brokers}
        # ``advertised``: node -> the port its metadata names (a proxy's, that forwards to ``brokers[node].port``)
        ports = {n: (advertised or {}).get(n, broker.port) for n, broker in self.brokers.items()}
        self.bootstrap = f"127.0.0.1:{ports[1]}"
        self.meta = dataclasses.replace(self.meta, brokers=[dataclasses.replace(b, port=ports[b.node_id])
                                                            for b in self.meta.brokers])
        self.down = False  # True: every request's connection is closed, as a cluster that is unreachable
        self.down_brokers: set[int] = set()  # those brokers' connections closed, as brokers killed
        self.stalled = False  # True: every request held unanswered, as brokers frozen or starting up
        self.unregistered: set[int] = set()  # left out of Metadata's brokers, as brokers restarting, not yet back
        self._stopped = threading.Event()
        for node, broker in self.brokers.items():
            answers = {3: self._metadata, 46: self._list, 45: self._alter, 44: self._configs_set,
                       32: self._configs_get, 43: self._elect, 35: self._log_dirs(node), 60: self._cluster}
            broker.answers.update({key: self._unless_down(handler, node) for key, handler in answers.items()})
        for key, target in (running or {}).items():
            self._start(key, target)

    def stop(self) -> None:
        self._stopped.set()
        for broker in self.brokers.values():
            broker.stop()

    def __enter__(self) -> ReassigningCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers
    def _unless_down(self, handler, node: int):
        def answer(version: int, body: bytes) -> bytes | None:
            if self.stalled:
                while self.stalled and not self._stopped.wait(0.02):
                    pass
                return None  # the client gave up on it long ago
            return None if self.down or node in self.down_brokers else handler(version, body)
        return answer

    def _served(self, name: str, built: bytes, version: int, request: bytes | None = None) -> bytes:
        """The captured answer where it is what was built (and, given, the request was the captured one)."""
        doc = self.captures[name]
        captured = capture_body(doc["api_key"], doc["api_version"], base64.b64decode(doc["response_b64"]))
        if version == doc["api_version"] and built == captured:
            if request is None or request == _request_body(doc):
                self.served.add(name)
        return built

    def _polls(self, key: tuple[str, int]) -> int:
        return self.polls if isinstance(self.polls, int) else self.polls.get(key, 2)

    def _start(self, key: tuple[str, int], target: list[int]) -> None:
        current = self.replicas[key]
        if set(target) == set(current):
            self.replicas[key] = list(target)
            return
        self.ongoing[key] = {"target": list(target), "original": list(current), "left": self._polls(key),
                             "ticks": 0}
        adding = [b for b in target if b not in current]
        self.replicas[key] = list(target) + [b for b in current if b not in target]
        for b in adding:
            self.on_dir.setdefault((key[0], key[1], b), self.dirs[b][0].path)

    def _complete(self, key: tuple[str, int]) -> None:
        if self.metadata_lag:
            self.lagging[key] = [list(self.replicas[key]), list(self.isr[key]), self.leaders[key], self.metadata_lag]
        move = self.ongoing.pop(key)
        target = move["target"]
        for b in move["original"]:
            if b not in target:
                self.on_dir.pop((key[0], key[1], b), None)
        self.replicas[key] = list(target)
        self.isr[key] = list(target)
        if self.leaders[key] not in target:
            self.leaders[key] = target[0]

    def finish_all(self) -> None:
        for key in list(self.ongoing):
            self._complete(key)

    # -- answers
    def _metadata(self, version: int, body: bytes) -> bytes:
        topics = []
        seen = {}
        for key, (replicas, isr, leader, left) in list(self.lagging.items()):
            seen[key] = (replicas, isr, leader)
            if left <= 1:
                del self.lagging[key]
            else:
                self.lagging[key][3] = left - 1
        for topic in self.meta.topics:
            parts = []
            for p in topic.partitions:
                key = (topic.name, p.partition)
                replicas, isr, leader = seen.get(key, (self.replicas[key], self.isr[key], self.leaders[key]))
                parts.append(dataclasses.replace(p, leader=leader, replicas=list(replicas), isr=list(isr)))
            topics.append(dataclasses.replace(topic, partitions=parts))
        brokers = [b for b in self.meta.brokers if b.node_id not in self.unregistered]
        return encode_metadata_answer(version, dataclasses.replace(self.meta, topics=topics, brokers=brokers))

    def _list(self, version: int, body: bytes) -> bytes:
        asked, _ = C.decode_list_partition_reassignments_request(FlexReader(body, True), version)
        for key in list(self.ongoing):
            move = self.ongoing[key]
            move["ticks"] += 1
            move["left"] -= 1
            if move["left"] < 0:
                self._complete(key)
        wanted = None if asked is None else {(t, p) for t, parts in asked for p in parts}
        found = []
        for key in sorted(self.ongoing):
            if wanted is not None and key not in wanted:
                continue
            move = self.ongoing[key]
            removing = [b for b in move["original"] if b not in move["target"]]
            adding = [b for b in move["target"] if b not in move["original"]]
            found.append(C.OngoingReassignment(key[0], key[1], move["target"] + removing, adding, removing))
        if 46 in self.deny:
            built = C.encode_list_partition_reassignments(version, C.ReassignmentsAnswer(31, "denied", []))
            return built
        built = C.encode_list_partition_reassignments(version, C.ReassignmentsAnswer(0, None, found))
        for name in ("list-partition-reassignments-ongoing.json", "list-partition-reassignments-done.json",
                     "list-partition-reassignments-named.json"):
            self._served(name, built, version, body if name.endswith("named.json") else None)
        return built

    def _alter(self, version: int, body: bytes) -> bytes:
        moves, _, _ = R.decode_alter_partition_reassignments_request(FlexReader(body, True), version)
        if 45 in self.deny:
            return R.encode_alter_partition_reassignments(
                version, R.AlterReassignmentsAnswer(AUTH["cluster"], "Cluster authorization failed.", []))
        results = []
        for m in moves:
            key = (m.topic, m.partition)
            if key not in self.replicas:
                results.append(R.ItemResult(m.topic, m.partition, 3, f"Unable to find a topic named {m.topic}."))
            elif m.replicas is None:
                if key in self.ongoing:
                    original = self.ongoing.pop(key)["original"]
                    for b in self.replicas[key]:
                        if b not in original:
                            self.on_dir.pop((m.topic, m.partition, b), None)
                    self.replicas[key] = sorted(original)
                    self.isr[key] = sorted(original)
                    results.append(R.ItemResult(m.topic, m.partition, 0, None))
                else:
                    results.append(R.ItemResult(m.topic, m.partition, 85,
                                                "No ongoing reassignment for this partition."))
            elif any(b not in self.brokers for b in m.replicas):
                bad = next(b for b in m.replicas if b not in self.brokers)
                results.append(R.ItemResult(m.topic, m.partition, 39, f"The manual partition assignment includes "
                                            f"broker {bad}, but no such broker is registered."))
            else:
                self._start(key, list(m.replicas))
                results.append(R.ItemResult(m.topic, m.partition, 0, None))
        built = R.encode_alter_partition_reassignments(version, R.AlterReassignmentsAnswer(0, None, results))
        for name in ("alter-partition-reassignments-start.json", "alter-partition-reassignments-cancel.json",
                     "alter-partition-reassignments-errors.json"):
            self._served(name, built, version)
        return built

    def _configs_set(self, version: int, body: bytes) -> bytes:
        resources, validate = R.decode_incremental_alter_configs_request(FlexReader(body, version >= 1), version)
        results = []
        for res in resources:
            if 44 in self.deny or ("44:broker" in self.deny and res.resource_type == R.BROKER):
                code = AUTH["topic"] if res.resource_type == R.TOPIC else AUTH["cluster"]
                results.append(R.ResourceResult(code, "Authorization failed.", res.resource_type, res.name))
                continue
            values = self.configs.setdefault((res.resource_type, res.name), {})
            for c in res.changes:
                if c.operation == R.SET:
                    values[c.name] = c.value or ""
                elif c.operation == R.DELETE:
                    values.pop(c.name, None)
            results.append(R.ResourceResult(0, None, res.resource_type, res.name))
        built = R.encode_incremental_alter_configs(version, results)
        for name in self.captures:
            if name.startswith("incremental-alter-configs"):
                self._served(name, built, version, body)
        return built

    def _configs_get(self, version: int, body: bytes) -> bytes:
        wanted, _, _ = C.decode_describe_configs_request(FlexReader(body, version >= 4), version)
        out = []
        for w in wanted:
            values = self.configs.get((w.resource_type, w.name), {})
            source = 1 if w.resource_type == C.TOPIC else 2
            entries = [C.ConfigEntry(k, v, False, False, source, False) for k, v in sorted(values.items())
                       if w.keys is None or k in w.keys]
            out.append(C.ConfigResource(0, None, w.resource_type, w.name, entries))
        return C.encode_describe_configs(version, out)

    def _elect(self, version: int, body: bytes) -> bytes:
        asked, _, _ = R.decode_elect_leaders_request(FlexReader(body, version >= 2), version)
        results = []
        for topic, parts in asked or []:
            for p in parts:
                key = (topic, p)
                preferred = self.replicas[key][0]
                if self.leaders[key] == preferred:
                    results.append(R.ItemResult(topic, p, 84, "Leader election not needed for topic partition."))
                else:
                    self.leaders[key] = preferred
                    results.append(R.ItemResult(topic, p, 0, None))
        built = R.encode_elect_leaders(version, R.ElectionAnswer(0, results))
        return self._served("elect-leaders-preferred.json", built, version)

    def _log_dirs(self, node: int):
        def reply(version: int, body: bytes) -> bytes:
            asked = C.decode_describe_log_dirs_request(FlexReader(body, version >= 2), version)
            wanted = None if asked is None else {(t, p) for t, parts in asked for p in parts}
            dirs = []
            for d in self.dirs[node]:
                replicas = []
                for (topic, p, b), path in sorted(self.on_dir.items()):
                    if b != node or path != d.path or (wanted is not None and (topic, p) not in wanted):
                        continue
                    size = self.sizes[(topic, p)]
                    move = self.ongoing.get((topic, p))
                    if move is not None and node not in move["original"]:
                        if (topic, p, node) == ("kc-move", 0, 3) and move["ticks"] <= 1:
                            size = min(size, DURING_MOVE)
                        else:
                            size = size * min(move["ticks"], 3) // 4
                    replicas.append(C.ReplicaLog(topic, p, size, 0, False))
                dirs.append(dataclasses.replace(d, replicas=replicas))
            return C.encode_describe_log_dirs(version, C.LogDirsAnswer(0, dirs))
        return reply

    def _cluster(self, version: int, body: bytes) -> bytes:
        answer = decoded("describe-cluster.json")
        ports = {b.node_id: b.port for b in self.meta.brokers}
        answer.brokers = [dataclasses.replace(b, port=ports[b.node_id]) for b in answer.brokers]
        return C.encode_describe_cluster(version, answer)


def _request_body(doc: dict) -> bytes:
    reader = FlexReader(base64.b64decode(doc["request_b64"]), False)
    reader.int16(), reader.int16(), reader.int32(), reader.string()
    reader.flexible = True
    reader.tags()
    return bytes(reader.data[reader.pos:])


__all__ = ["ReassigningCluster", "TP"]
