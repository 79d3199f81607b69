"""Carrying a reassignment plan out on a live cluster, over the Admin API alone: batches, the throttle, progress,
leaders, and the plan file as the only state.

The rule, step by step (``execute``):

1. **Read and check, change nothing.** The plan file (kafka-reassign-partitions.sh's JSON), then the cluster:
   Metadata of the plan's topics, every reassignment running (ListPartitionReassignments), every broker's log dirs
   (DescribeLogDirs: replica sizes, disks). The plan must match the cluster: every partition exists, its target
   has as many replicas as it has now (the replication factor did not change), every target broker is in the
   cluster. A reassignment running that this plan did not start (one whose partition or target is not the plan's)
   stops everything here (one line naming it) unless ``force``, which leaves it and its throttles alone and skips
   the plan's moves of its partitions. Any of these: :class:`~kassign.core.errors.KassignError`, nothing changed.
2. **Order.** The moves (partitions whose replica list changes) go into batches
   (:func:`kassign.replicas.execute.plan_batches`): at most ``concurrency`` moves touching each broker, every
   broker's disk under ``disk_limit`` x its volumes' total bytes (or x the ``disk_bytes`` a capacity document
   gives it, kept in the plan file for a resumed run) at every moment. The order, the replica lists
   before, the sizes and every move's state are written into the plan file under ``"kassign_execution"`` (beside
   ``version`` and ``partitions``, which kafka-reassign-partitions.sh reads and which stay as they were).
3. **Run.** Polling at most once a second (``poll_s``): ListPartitionReassignments says which moves finished
   (a move no longer listed whose replicas are its target is done; one whose replicas the metadata still does not
   show as its target after ``METADATA_GRACE_POLLS`` polls was cancelled elsewhere, and no further move starts:
   the metadata comes from a broker, a moment behind the controller's list); DescribeLogDirs of the destination
   brokers says the bytes copied. A move of batch k+1
   starts as soon as every move of batches up to k-1 is done, every move of batch k has started, its brokers have
   room under the concurrency and its copies fit their disks counting every running move on both sides: room is
   used within one poll of freeing up. Before a start, the throttle (when asked) is SET as Kafka's tool sets it
   (:mod:`kassign.replicas.execute.throttle`: lists covering everything running then on the topics this plan moves,
   rates on the brokers involved; a reassignment this plan did not start, on a topic it does not move, is left
   alone), then AlterPartitionReassignments starts the moves. The plan file is rewritten (atomically) whenever a
   move changes state.
4. **Finish.** When no move waits or runs: the throttle is removed (DELETE, on the topics and brokers where this
   plan set it, except those of a reassignment still running that this plan did not start), a preferred leader
   election (ElectLeaders) for the moved partitions whose planned leader is not their leader, and a check that
   every moved partition has its planned replica list, all in sync (Metadata). The record says each.

Stopping (``stop`` set, e.g. on Ctrl-C): no move starts any more, running ones are left running (with their
throttle), the plan file holds where things stand; ``verify`` and ``cancel`` read it. Running the same ``execute``
again resumes: moves done are skipped, moves still running are followed, the rest start.

Worked example (the 3-broker cluster of the tests): plan kc-move 0 [1, 2] -> [3, 2], 1 [2, 3] -> [1, 3], 2 [3, 1]
-> [2, 1], 3 [1, 3] -> [3, 1], concurrency 5, throttle 100000: one batch (kc-move 3 only changes its order, which
touches no broker); kc-move gets leader list ``0:1,0:2,1:2,1:3,2:1,2:3,3:1,3:3`` and follower list ``0:3,1:1,2:2``,
brokers 1-3 both rates = 100000 (for the first three alone, the requests kafka-reassign-partitions.sh sends, byte
for byte); AlterPartitionReassignments starts the four; polls follow the copies until ListPartitionReassignments
lists none; the throttle is deleted; kc-move 3 gets a preferred leader election (its leader is still 1, the plan
wants 3; the others' leaders left their replica lists, so the controller already chose the planned ones), and all
four are in sync.

Every request has a deadline (``timeout`` seconds each). A cluster that does not answer, while polling or finishing,
is asked again at every poll for ``patience_s`` seconds (300 by default); no request starts past them, so the run
gives up within its patience and the one request then in flight, with :class:`ClusterLost` (one line; the run is
recorded "unreachable" in the plan file, the same ``execute`` resumes). ``stop`` set while the cluster does not answer
ends the run at once ("stopped").
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kassign.core.documents import load_json
from kassign.core.errors import KassignError, LiveClusterError
from kassign.core.limits import is_whole_number
from kassign.kafka import cluster_protocol as C
from kassign.kafka import groups_protocol as G
from kassign.kafka import protocol as P
from kassign.kafka import reassign_protocol as R
from kassign.kafka import topics_protocol as TP
from kassign.kafka.client import Cluster
from kassign.kafka.cluster_inputs import online_volumes, replica_sizes
from kassign.kafka.config import ClientSettings
from kassign.kafka.connection import (API_ALTER_PARTITION_REASSIGNMENTS, API_DESCRIBE_CONFIGS, API_DESCRIBE_LOG_DIRS,
                                      API_ELECT_LEADERS, API_INCREMENTAL_ALTER_CONFIGS,
                                      API_LIST_PARTITION_REASSIGNMENTS, API_METADATA, BrokerConnection)
from kassign.replicas.execute import Disk, Move, plan_batches
from kassign.replicas.execute.throttle import (BROKER_CONFIGS, TOPIC_CONFIGS, Running, Throttle, check_rate,
                                               removal, throttle_for)

__all__ = ["STATE_KEY", "Admin", "ClusterLost", "cancel", "execute", "read_plan", "verify"]

STATE_KEY = "kassign_execution"
FORMAT = 1
DEFAULT_DISK_LIMIT = 0.8
TopicPartition = tuple[str, int]
WAITING, RUNNING, DONE, FAILED, SKIPPED, CANCELLED = "waiting", "running", "done", "failed", "skipped", "cancelled"
# Polls for which a move no longer listed as running may show other replicas than its target in the metadata before
# it counts as cancelled by someone else (a broker's metadata a moment behind the controller's list).
METADATA_GRACE_POLLS = 5
# How long a run goes on asking a cluster that does not answer before it gives up (ClusterLost).
DEFAULT_PATIENCE_S = 300.0
FINISHED = {DONE, FAILED, SKIPPED, CANCELLED}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _name(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


# -- the plan file ------------------------------------------------------------------------------------------------

@dataclass
class PlanFile:
    path: Path
    document: dict[str, Any]
    targets: dict[TopicPartition, list[int]]  # in the file's order

    @property
    def state(self) -> dict[str, Any] | None:
        return self.document.get(STATE_KEY)

    def save(self) -> None:
        """Written whole to a file beside it, then renamed over it: a reader sees the old state or the new one."""
        text = json.dumps(self.document, indent=None, separators=(",", ":")) + "\n"
        partial = self.path.with_name(f".{self.path.name}.writing")
        try:
            partial.write_text(text)
            os.replace(partial, self.path)
        except OSError as err:
            raise KassignError(f"cannot write {str(self.path)!r}: {err.strerror or err}") from None


def read_plan(path: str | Path) -> PlanFile:
    """A plan file: kafka-reassign-partitions.sh's JSON, with kassign's execution state where a run wrote one."""
    source = Path(path)
    try:
        text = source.read_text()
    except OSError as err:
        raise KassignError(f"cannot read plan {str(source)!r}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise KassignError(f"plan {str(source)!r} is not UTF-8 text") from None
    document = load_json(text, f"plan {str(source)!r}")
    entries = document.get("partitions") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise KassignError(f"plan {str(source)!r} has no \"partitions\" list (kafka-reassign-partitions.sh's JSON)")
    targets: dict[TopicPartition, list[int]] = {}
    for entry in entries:
        ok = isinstance(entry, dict) and isinstance(entry.get("topic"), str) and \
            isinstance(entry.get("partition"), int) and not isinstance(entry.get("partition"), bool) and \
            isinstance(entry.get("replicas"), list) and entry["replicas"] and \
            all(isinstance(b, int) and not isinstance(b, bool) for b in entry["replicas"])
        if not ok:
            raise KassignError(f"plan {str(source)!r}: each partition needs a topic, a partition number and a "
                               f"non-empty list of broker ids, got {json.dumps(entry)[:60]}")
        key = (entry["topic"], entry["partition"])
        if key in targets:
            raise KassignError(f"plan {str(source)!r} lists {_name(key)} twice; each partition may appear once")
        if len(set(entry["replicas"])) != len(entry["replicas"]):
            raise KassignError(f"plan {str(source)!r}: {_name(key)} lists a broker twice: {entry['replicas']}")
        targets[key] = list(entry["replicas"])
    state = document.get(STATE_KEY)
    if state is not None and (not isinstance(state, dict) or state.get("format") != FORMAT):
        raise KassignError(f"plan {str(source)!r}: its \"{STATE_KEY}\" is not one this kassign wrote (format {FORMAT})")
    return PlanFile(source, document, targets)


# -- the calls ----------------------------------------------------------------------------------------------------

def _spoken(connection: BrokerConnection, api_key: int, versions: Mapping[int, tuple[int, int]]) -> int:
    lowest, highest = versions[api_key]
    low, high = connection.versions.get(api_key, (-1, -1))
    chosen = min(high, highest)
    if chosen < max(low, lowest):
        raise LiveClusterError(f"{connection.address} does not speak {G.api_name(api_key)} v{lowest}-v{highest} "
                               "(Kafka 2.4 and later do)")
    return chosen


def _refused(code: int, what: str) -> None:
    if code in P.AUTHORIZATION:
        raise NotAuthorized(f"not authorized to {what} ({R.error_name(code)}): the principal needs the ACLs that "
                           "kafka-reassign-partitions.sh needs (ALTER and DESCRIBE on the cluster, DESCRIBE_CONFIGS "
                           "and ALTER_CONFIGS on the topics)")


class NotAuthorized(KassignError):
    """The broker refused a call for lack of an ACL."""


class _NotAsked(LiveClusterError):
    """A place not asked: the cluster has not answered for the run's patience, or Ctrl-C came meanwhile."""


class ClusterLost(LiveClusterError):
    """A run gave up on a cluster that did not answer for its patience (``seconds``): the moves started go on on
    the brokers, the plan file (``record``, its execution state) says where things stood, the same execute resumes."""

    def __init__(self, message: str, record: dict[str, Any], seconds: float, cause: str) -> None:
        super().__init__(message)
        self.record, self.seconds, self.cause = record, seconds, cause


def _authorization(err: Exception) -> bool:
    return isinstance(err, NotAuthorized)


class Admin:
    """The admin calls of a reassignment over one :class:`~kassign.kafka.client.Cluster`, each with a deadline."""

    def __init__(self, bootstrap: str, config: Mapping[str, str] | None = None, timeout: float = 10.0) -> None:
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= 3600:
            raise KassignError(f"--timeout must be between 0 and 3600 seconds, got {timeout!r}")
        settings = ClientSettings.from_properties({**(config or {}),
                                                   "request.timeout.ms": str(max(100, int(timeout * 1000)))})
        self.timeout = timeout
        self.cluster = Cluster(bootstrap, settings)
        self.addresses: dict[int, tuple[str, int]] = {}
        # While no place answers: since when (the start of the first call that failed), and, set by a run, how long
        # to go on asking (``patience``) and a ``stop`` that ends the asking at once (Ctrl-C). Past either, no further
        # place is asked: a run gives up within its patience and the one request then in flight.
        self.unanswered_since: float | None = None
        self.patience: float | None = None
        self.stop: threading.Event | None = None

    def close(self) -> None:
        self.cluster.close()

    def __enter__(self) -> Admin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, key: Any, host: str, port: int, work: Callable[[BrokerConnection, float], Any]) -> Any:
        """One place asked (with the request's deadline), unless the cluster has not answered for ``patience``
        seconds or ``stop`` is set while it does not."""
        if self.unanswered_since is not None:
            if self.stop is not None and self.stop.is_set():
                raise _NotAsked("stopped (Ctrl-C) while the cluster did not answer")
            if self.patience is not None and time.monotonic() - self.unanswered_since > self.patience:
                raise _NotAsked(f"nothing answered for {self.patience:.0f} s")
        began = time.monotonic()
        try:
            answer = self.cluster.call(key, host, port, work)
        except G.MalformedAnswer:
            raise
        except LiveClusterError:
            if self.unanswered_since is None:
                self.unanswered_since = began
            raise
        self.unanswered_since = None
        return answer

    def _any(self, work: Callable[[BrokerConnection, float], Any]) -> Any:
        """``work`` on the first bootstrap server (then known broker) that answers."""
        last: Exception | None = None
        places = [(("bootstrap", h, p), h, p) for h, p in self.cluster.addresses]
        places += [(("node", b), h, p) for b, (h, p) in sorted(self.addresses.items())]
        for key, host, port in places:
            try:
                return self._call(key, host, port, work)
            except G.MalformedAnswer:
                raise
            except LiveClusterError as err:
                if last is None or not isinstance(err, _NotAsked):
                    last = err  # what a place said, rather than that the next ones were not asked
        named = f" nor the {len(self.addresses)} broker(s) it named" if self.addresses else ""
        raise LiveClusterError(f"cannot reach {self.cluster.bootstrap}{named}; last: {last}")

    def _node(self, broker: int, work: Callable[[BrokerConnection, float], Any]) -> Any:
        if broker not in self.addresses:
            raise LiveClusterError(f"broker {broker} is not in {self.cluster.bootstrap}'s metadata (down or removed)")
        host, port = self.addresses[broker]
        return self._call(("node", broker), host, port, work)

    def metadata(self, topics: Iterable[str]) -> TP.MetadataAnswer:
        names = sorted(set(topics))

        def call(connection: BrokerConnection, deadline: float) -> TP.MetadataAnswer:
            version = _spoken(connection, API_METADATA, {API_METADATA: (1, 13)})
            body = TP.encode_metadata(version, [(None, n) for n in names])
            return G.exchange(connection, API_METADATA, version, body, TP.decode_metadata, deadline)

        answer = self._any(call)
        self.addresses = {b.node_id: (b.host, b.port) for b in answer.brokers}
        return answer

    def reassignments(self) -> list[C.OngoingReassignment]:
        def call(connection: BrokerConnection, deadline: float) -> C.ReassignmentsAnswer:
            version = _spoken(connection, API_LIST_PARTITION_REASSIGNMENTS, C.VERSIONS)
            body = C.encode_list_partition_reassignments_request(version, None, int(self.timeout * 1000))
            return G.exchange(connection, API_LIST_PARTITION_REASSIGNMENTS, version, body,
                              C.decode_list_partition_reassignments, deadline)

        answer = self._any(call)
        _refused(answer.error, "list the reassignments running")
        if answer.error:
            raise LiveClusterError(f"ListPartitionReassignments answered {R.error_name(answer.error)}"
                                   + (f": {answer.message}" if answer.message else ""))
        return answer.reassignments

    def alter(self, moves: list[R.Reassignment]) -> R.AlterReassignmentsAnswer:
        def call(connection: BrokerConnection, deadline: float) -> R.AlterReassignmentsAnswer:
            version = _spoken(connection, API_ALTER_PARTITION_REASSIGNMENTS, R.VERSIONS)
            body = R.encode_alter_partition_reassignments_request(version, moves, int(self.timeout * 1000))
            return G.exchange(connection, API_ALTER_PARTITION_REASSIGNMENTS, version, body,
                              R.decode_alter_partition_reassignments, deadline)

        answer = self._any(call)
        _refused(answer.error, "reassign partitions")
        if answer.error:
            raise LiveClusterError(f"AlterPartitionReassignments answered {R.error_name(answer.error)}"
                                   + (f": {answer.message}" if answer.message else ""))
        return answer

    def alter_configs(self, changes: list[R.ConfigAlteration]) -> None:
        """Topic resources in one request to any broker, each broker's to that broker (as the AdminClient sends
        them); an error on any resource: one line."""
        def call(resources: list[R.ConfigAlteration]) -> Callable[[BrokerConnection, float], list[R.ResourceResult]]:
            def send(connection: BrokerConnection, deadline: float) -> list[R.ResourceResult]:
                version = _spoken(connection, API_INCREMENTAL_ALTER_CONFIGS, R.VERSIONS)
                body = R.encode_incremental_alter_configs_request(version, resources)
                return G.exchange(connection, API_INCREMENTAL_ALTER_CONFIGS, version, body,
                                  R.decode_incremental_alter_configs, deadline)
            return send

        topics = [c for c in changes if c.resource_type == R.TOPIC]
        results = self._any(call(topics)) if topics else []
        for c in changes:
            if c.resource_type == R.BROKER:
                results += self._node(int(c.name), call([c]))
        for res in results:
            kind = "topic" if res.resource_type == R.TOPIC else "broker"
            _refused(res.error, f"change the configs of {kind} {res.name}")
            if res.error:
                raise LiveClusterError(f"IncrementalAlterConfigs of {kind} {res.name} answered "
                                       f"{R.error_name(res.error)}" + (f": {res.message}" if res.message else ""))

    def configs(self, wanted: list[C.ConfigsWanted], broker: int | None = None) -> list[C.ConfigResource]:
        def call(connection: BrokerConnection, deadline: float) -> list[C.ConfigResource]:
            version = _spoken(connection, API_DESCRIBE_CONFIGS, C.VERSIONS)
            body = C.encode_describe_configs_request(version, wanted)
            return G.exchange(connection, API_DESCRIBE_CONFIGS, version, body, C.decode_describe_configs, deadline)

        answer = self._any(call) if broker is None else self._node(broker, call)
        for res in answer:
            _refused(res.error, f"describe the configs of {res.name}")
        return answer

    def log_dirs(self, broker: int, topics: Mapping[str, Iterable[int]] | None) -> C.LogDirsAnswer:
        asked = None if topics is None else [(t, sorted(set(p))) for t, p in sorted(topics.items())]

        def call(connection: BrokerConnection, deadline: float) -> C.LogDirsAnswer:
            version = _spoken(connection, API_DESCRIBE_LOG_DIRS, C.VERSIONS)
            body = C.encode_describe_log_dirs_request(version, asked)
            return G.exchange(connection, API_DESCRIBE_LOG_DIRS, version, body, C.decode_describe_log_dirs, deadline)

        answer = self._node(broker, call)
        _refused(answer.error, f"describe broker {broker}'s log dirs")
        return answer

    def elect(self, partitions: list[TopicPartition]) -> R.ElectionAnswer:
        by_topic: dict[str, list[int]] = {}
        for topic, p in partitions:
            by_topic.setdefault(topic, []).append(p)

        def call(connection: BrokerConnection, deadline: float) -> R.ElectionAnswer:
            version = _spoken(connection, API_ELECT_LEADERS, R.VERSIONS)
            body = R.encode_elect_leaders_request(version, list(by_topic.items()), R.PREFERRED,
                                                  int(self.timeout * 1000))
            return G.exchange(connection, API_ELECT_LEADERS, version, body, R.decode_elect_leaders, deadline)

        answer = self._any(call)
        _refused(answer.error, "elect leaders")
        return answer


def config_changes(changes: list[tuple[str, str, list]], delete: bool = False) -> list[R.ConfigAlteration]:
    """The throttle module's plain changes as IncrementalAlterConfigs resources (SET, or DELETE)."""
    out = []
    for kind, name, items in changes:
        kind_code = R.TOPIC if kind == "topic" else R.BROKER
        if delete:
            out.append(R.ConfigAlteration(kind_code, name, [R.ConfigChange(c, R.DELETE, None) for c in items]))
        else:
            out.append(R.ConfigAlteration(kind_code, name, [R.ConfigChange(c, R.SET, v) for c, v in items]))
    return out


# -- reading the cluster ------------------------------------------------------------------------------------------

@dataclass
class ClusterView:
    brokers: set[int]
    replicas: dict[TopicPartition, list[int]]
    leaders: dict[TopicPartition, int]
    isr: dict[TopicPartition, list[int]]
    running: dict[TopicPartition, C.OngoingReassignment]


def _view(admin: Admin, plan: PlanFile) -> ClusterView:
    meta = admin.metadata({t for t, _ in plan.targets})
    if meta.error:
        _refused(meta.error, "describe the cluster")
    replicas, leaders, isr = {}, {}, {}
    for topic in meta.topics:
        if topic.error in P.AUTHORIZATION:
            _refused(topic.error, f"describe topic {topic.name}")
        for part in topic.partitions:
            key = (topic.name or "", part.partition)
            replicas[key], leaders[key], isr[key] = list(part.replicas), part.leader, list(part.isr)
    running = {(r.topic, r.partition): r for r in admin.reassignments()}
    return ClusterView({b.node_id for b in meta.brokers}, replicas, leaders, isr, running)


def _target_of(running: C.OngoingReassignment) -> list[int]:
    """A running reassignment's target: its replica list without those being removed."""
    return [b for b in running.replicas if b not in set(running.removing)]


def _sources_of(running: C.OngoingReassignment) -> list[int]:
    """Its replicas before it started (as a set; the order is not told): those listed but not being added."""
    return [b for b in running.replicas if b not in set(running.adding)]


def _check_matches(plan: PlanFile, view: ClusterView) -> None:
    """Bad input, one line: a partition gone, its replication factor changed, a target broker gone."""
    for key, target in plan.targets.items():
        now = view.replicas.get(key)
        if now is None:
            raise KassignError(f"plan {str(plan.path)!r} moves {_name(key)}, which the cluster does not have (deleted "
                               "or never created): make the plan again from the cluster as it is")
        ours = view.running.get(key)
        before = _sources_of(ours) if ours is not None else now
        if len(before) != len(target):
            raise KassignError(f"{_name(key)} has {len(before)} replicas on the cluster but {len(target)} in plan "
                               f"{str(plan.path)!r}: its replication factor changed since the plan was made; make "
                               "the plan again")
        gone = [b for b in target if b not in view.brokers]
        if gone:
            raise KassignError(f"plan {str(plan.path)!r} puts {_name(key)} on broker {gone[0]}, which is not in the "
                               f"cluster (brokers: {', '.join(map(str, sorted(view.brokers)))})")


def _foreign(plan: PlanFile, view: ClusterView) -> list[C.OngoingReassignment]:
    return [r for key, r in sorted(view.running.items()) if plan.targets.get(key) != _target_of(r)]


def _foreign_line(foreign: list[C.OngoingReassignment]) -> str:
    shown = ", ".join(f"{r.topic}-{r.partition} (-> {_target_of(r)})" for r in foreign[:3])
    more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
    return (f"a reassignment this plan did not start is running: {shown}{more}; nothing was changed. Wait for it "
            "(kafka-reassign-partitions.sh --list), cancel it, or pass --force to leave it alone and go on")


def _sizes_and_disks(admin: Admin, brokers: Iterable[int], topics: set[str], disk_limit: float,
                     disk_bytes: Mapping[int, int] | None = None) -> tuple[dict[TopicPartition, dict[int, int]],
                                                                           dict[int, Disk]]:
    """Per partition of ``topics``: its replicas' bytes per broker; per broker: its disk (used, limit) where told.
    Every broker's DescribeLogDirs read as :func:`~kassign.kafka.cluster_inputs.read_cluster` reads it (its
    ``replica_sizes`` and ``online_volumes``). ``disk_bytes`` (a capacity document's, per broker) overrides the
    volumes' total, as it does for the plan; a broker whose log dirs do not tell their volumes then counts the
    replicas it holds as its use."""
    answers = {broker: admin.log_dirs(broker, None) for broker in sorted(brokers)}
    every = replica_sizes(answers)
    sizes = {key: held for key, held in every.items() if key[0] in topics}
    disks: dict[int, Disk] = {}
    for broker, answer in answers.items():
        volumes = online_volumes(answer)
        total = sum(t for t, _ in volumes) if volumes else None
        used = total - sum(u for _, u in volumes) if volumes else None
        if disk_bytes and broker in disk_bytes:
            total = disk_bytes[broker]
            if used is None:
                used = sum(held.get(broker, 0) for held in every.values())
        if total is not None and used is not None:
            disks[broker] = Disk(used, int(total * disk_limit))
    return sizes, disks


def _size(key: TopicPartition, sizes: Mapping[TopicPartition, Mapping[int, int]], leader: int | None) -> int:
    held = sizes.get(key, {})
    if leader is not None and leader in held:
        return held[leader]
    return max(held.values(), default=0)


# -- the state ----------------------------------------------------------------------------------------------------

def _fresh_state(plan: PlanFile, view: ClusterView, moves: list[Move], concurrency: int, throttle: int | None,
                 disk_limit: float, skipped: dict[str, str]) -> dict[str, Any]:
    return {
        "format": FORMAT, "started_at": _now(), "updated_at": _now(), "finished_at": None,
        "concurrency": concurrency, "throttle": throttle, "disk_limit": disk_limit,
        "original": {_name(k): view.replicas[k] for k in plan.targets},
        "batches": [],
        "moves": {m.name: {"state": SKIPPED if m.name in skipped else WAITING, "batch": None,
                           "from": list(m.current), "to": list(m.target), "bytes": m.bytes_to_copy,
                           "size": m.size, "started_at": None, "done_at": None,
                           "error": skipped.get(m.name)} for m in moves},
        "throttle_set": {"topics": [], "brokers": [], "rate": throttle, "removed_at": None},
        "elected": None, "in_sync": None, "runs": [],
    }


@dataclass
class Progress:
    """What a progress display shows, handed to ``progress`` after every poll."""

    bytes_total: int
    bytes_copied: int
    done: int
    running: int
    waiting: int
    failed: int
    rate: float | None  # bytes per second over the run so far; None before any was copied
    seconds_left: float | None
    lines: list[str] = field(default_factory=list)  # what happened since the last call


class Executor:
    """One run of a plan (see the module's rule). ``stop``: set it to stop starting moves (Ctrl-C)."""

    def __init__(self, admin: Admin, plan: PlanFile, *, concurrency: int = 5, throttle: int | None = None,
                 force: bool = False, disk_limit: float = DEFAULT_DISK_LIMIT, poll_s: float = 1.0,
                 progress: Callable[[Progress], None] | None = None, stop: threading.Event | None = None,
                 sleep: Callable[[float], None] = time.sleep, patience_s: float = DEFAULT_PATIENCE_S,
                 disk_bytes: Mapping[int, int] | None = None) -> None:
        self.admin, self.plan = admin, plan
        self.disk_bytes = dict(disk_bytes) if disk_bytes else None
        self.patience_s = patience_s
        self.halted = False
        self.dirty = False
        self.concurrency, self.throttle, self.force = concurrency, throttle, force
        self.disk_limit, self.poll_s = disk_limit, poll_s
        self.progress = progress
        self.stop = stop or threading.Event()
        self.sleep = sleep
        self.lines: list[str] = []
        self.moves: dict[str, Move] = {}
        self.limits: dict[int, int | None] = {}
        self.accounted: dict[int, int] = {}
        self.copied: dict[str, int] = {}
        self.unconfirmed: dict[str, int] = {}  # moves no longer listed whose replicas the metadata does not show yet
        self.started_clock = time.monotonic()
        self.copied_at_start = 0

    # -- set up
    def prepare(self) -> None:
        plan = self.plan
        view = _view(self.admin, plan)
        state = plan.state
        if state is not None:
            view = self._await_brokers(view)
        _check_matches(plan, view)
        foreign = _foreign(plan, view)
        if foreign and not self.force:
            raise KassignError(_foreign_line(foreign))
        skipped = {_name((r.topic, r.partition)): f"another reassignment runs on it (-> {_target_of(r)}); left alone "
                   "(--force)" for r in foreign if (r.topic, r.partition) in plan.targets}
        if foreign:
            self._say(f"--force: leaving {len(foreign)} reassignment(s) this plan did not start alone: "
                      + ", ".join(f"{r.topic}-{r.partition}" for r in foreign[:5]))
        topics = {t for t, _ in plan.targets}
        if self.disk_bytes is None and state is not None and state.get("disk_bytes"):
            self.disk_bytes = {int(b): int(v) for b, v in state["disk_bytes"].items()}  # as the first run had them
        sizes, disks = _sizes_and_disks(self.admin, view.brokers, topics, self.disk_limit, self.disk_bytes)
        if state is None:
            moves = []
            for key, target in plan.targets.items():
                ours = view.running.get(key)
                now = _sources_of(ours) if ours is not None and _target_of(ours) == target else view.replicas[key]
                if now != target:
                    moves.append(Move(key[0], key[1], tuple(now), tuple(target),
                                      _size(key, sizes, view.leaders.get(key))))
            state = _fresh_state(plan, view, moves, self.concurrency, self.throttle, self.disk_limit, skipped)
            plan.document[STATE_KEY] = state
            self._resume(state, view, skipped)  # moves of this plan already running (started by another tool)
        else:
            self._say(f"resuming the execution recorded in {str(plan.path)!r} (started {state['started_at']})")
            self._resume(state, view, skipped)
            if self.throttle is None:
                self.throttle = state.get("throttle")
            else:
                self._rethrottle(state)
            state["concurrency"], state["throttle"] = self.concurrency, self.throttle
        if self.disk_bytes:  # kept for a resumed run (which reads them back above when given none)
            state["disk_bytes"] = {str(b): v for b, v in sorted(self.disk_bytes.items())}
        for name, rec in state["moves"].items():
            topic, _, p = name.rpartition("-")
            self.moves[name] = Move(topic, int(p), tuple(rec["from"]), tuple(rec["to"]), rec["size"])
        # the disk as this run counts it: now (DescribeLogDirs), running moves' copies counted in full
        self.limits = {b: (max(d.limit, d.used) if d.limit is not None else None) for b, d in disks.items()}
        self.accounted = {b: d.used for b, d in disks.items()}
        for name, rec in state["moves"].items():
            if rec["state"] == RUNNING:
                m = self.moves[name]
                for b in m.adding:
                    if b in self.accounted:
                        self.accounted[b] += max(0, m.size - sizes.get((m.topic, m.partition), {}).get(b, 0))
        waiting = [self.moves[n] for n, rec in state["moves"].items() if rec["state"] == WAITING]
        schedule = plan_batches(waiting, self.concurrency,
                                {b: Disk(self.accounted[b], d.limit) for b, d in disks.items()})
        state["batches"] = [[m.name for m in batch] for batch in schedule.batches]
        for k, batch in enumerate(schedule.batches):
            for m in batch:
                state["moves"][m.name]["batch"] = k
        running = sum(rec["state"] == RUNNING for rec in state["moves"].values())
        self._say(f"{len(waiting)} move(s) to start in {len(schedule.batches)} batch(es), at most "
                  f"{self.concurrency} touching a broker at a time" + (f"; {running} running" if running else ""))
        state["runs"].append({"started_at": _now(), "ended_at": None, "ended": None})
        self.copied = {name: (rec["bytes"] if rec["state"] == DONE else 0) for name, rec in state["moves"].items()}
        self.copied_at_start = sum(self.copied.values())
        plan.save()

    def _await_brokers(self, view: ClusterView) -> ClusterView:
        """A resumed plan's target brokers missing from Metadata (restarted, not registered again yet: the plan's
        first run saw them) are waited for, asking again every poll, for at most ``patience_s`` seconds (Ctrl-C
        stops the wait); the view then, complete or not (``_check_matches`` says what is still missing)."""
        wanted = {b for target in self.plan.targets.values() for b in target}
        deadline = time.monotonic() + self.patience_s
        said = False
        while True:
            gone = sorted(wanted - set(view.brokers))
            if not gone or time.monotonic() >= deadline or self.stop.is_set():
                return view
            if not said:
                self._say(f"waiting up to {self.patience_s:.0f} s for broker(s) {', '.join(map(str, gone))} to rejoin "
                          "the cluster (the plan resumed places replicas on them)")
                self._report()  # said now, not after the wait
                said = True
            self.sleep(min(self.poll_s, max(0.0, deadline - time.monotonic())))
            view = _view(self.admin, self.plan)

    def _rethrottle(self, state: dict[str, Any]) -> None:
        """A resumed run given another ``--throttle`` while moves of this plan run: the new rate on the brokers this
        plan throttles, at once (as Kafka's tool changes the rate of a reassignment in progress); the replica lists
        stay as they are."""
        record = state["throttle_set"]
        running = any(rec["state"] == RUNNING for rec in state["moves"].values())
        if not running or not record["brokers"] or record.get("removed_at") or record.get("rate") == self.throttle:
            return
        before = record.get("rate")
        record["rate"] = self.throttle  # recorded before it is sent: a change half made is removed like a whole one
        rates = Throttle(brokers=list(record["brokers"]), rate=self.throttle)  # the brokers' rates alone, no lists
        self.admin.alter_configs(config_changes(rates.changes()))
        self._say(f"throttle changed from {before} to {self.throttle} bytes/s on broker(s) "
                  f"{', '.join(map(str, record['brokers']))} (moves running)")

    def _resume(self, state: dict[str, Any], view: ClusterView, skipped: dict[str, str]) -> None:
        """The recorded moves against the cluster now: running ones still running or done, waiting ones still
        where they were."""
        for name, rec in state["moves"].items():
            topic, _, p = name.rpartition("-")
            key = (topic, int(p))
            now = view.replicas.get(key)
            ours = view.running.get(key)
            again = rec["state"] == SKIPPED and name not in skipped  # the reassignment it waited for is over
            if rec["state"] in (RUNNING, WAITING, CANCELLED, FAILED) or again:
                if ours is not None and _target_of(ours) == rec["to"]:
                    rec["state"] = RUNNING
                elif now == rec["to"]:
                    rec["state"], rec["done_at"] = DONE, rec["done_at"] or _now()
                elif name in skipped:
                    rec["state"], rec["error"] = SKIPPED, skipped[name]
                else:
                    if now != rec["from"]:
                        rec["from"] = now  # cancelled (restoring the set, not always the order) or changed: from here
                    rec["state"], rec["error"], rec["started_at"] = WAITING, None, None

    # -- running
    def _say(self, line: str) -> None:
        self.lines.append(line)

    def _state(self) -> dict[str, Any]:
        state = self.plan.state
        assert state is not None
        return state

    def _eligible(self, state: dict[str, Any]) -> list[str]:
        """The waiting moves that may start now, in batch order (the module's rule 3)."""
        recs = state["moves"]
        batches = state["batches"]
        unfinished = [k for k, batch in enumerate(batches) if any(recs[n]["state"] not in FINISHED for n in batch)]
        if not unfinished:
            return []
        low = unfinished[0]
        # batch low+1 opens once every move of batch low has started
        opened = low + (1 if all(recs[n]["state"] != WAITING for n in batches[low]) else 0)
        count: dict[int, int] = {}
        for name, rec in recs.items():
            if rec["state"] == RUNNING:
                for b in self.moves[name].brokers:
                    count[b] = count.get(b, 0) + 1
        adds: dict[int, int] = {}
        chosen = []
        for k in range(low, min(opened + 1, len(batches))):
            for name in batches[k]:
                if recs[name]["state"] != WAITING:
                    continue
                m = self.moves[name]
                if any(count.get(b, 0) >= self.concurrency for b in m.brokers):
                    continue
                if any(self.limits.get(b) is not None and self.accounted.get(b, 0) + adds.get(b, 0) + m.size
                       > self.limits[b] for b in m.adding):  # type: ignore[operator]
                    continue
                chosen.append(name)
                for b in m.brokers:
                    count[b] = count.get(b, 0) + 1
                for b in m.adding:
                    adds[b] = adds.get(b, 0) + m.size
        return chosen

    def _start(self, names: list[str], view_running: list[C.OngoingReassignment]) -> None:
        """The throttle (when asked), then AlterPartitionReassignments for ``names``. A refusal while nothing of this
        plan runs removes the throttle this run set before it goes up (nothing is left behind)."""
        state = self._state()
        record = state["throttle_set"]
        try:
            if self.throttle is not None:
                # everything running on the topics this plan moves (as Kafka's tool counts it); a reassignment this
                # plan did not start on a topic it does not move is left alone, throttle and all (--force)
                ours = {self.moves[n].topic for n, rec in state["moves"].items() if rec["state"] == RUNNING} | \
                    {self.moves[n].topic for n in names}
                running = [Running(r.topic, r.partition, tuple(r.replicas), tuple(r.adding), tuple(r.removing))
                           for r in view_running if r.topic in ours]
                starting = {(self.moves[n].topic, self.moves[n].partition): list(self.moves[n].target) for n in names}
                current = {(self.moves[n].topic, self.moves[n].partition): list(self.moves[n].current) for n in names}
                throttle = throttle_for(running, starting, current, self.throttle)
                # recorded before it is sent: a change half made is removed like a whole one
                record["topics"] = sorted(set(record["topics"]) | set(throttle.topics))
                record["brokers"] = sorted(set(record["brokers"]) | set(throttle.brokers))
                record["rate"], record["removed_at"] = self.throttle, None
                self.admin.alter_configs(config_changes(throttle.changes()))
            answer = self.admin.alter([R.Reassignment(self.moves[n].topic, self.moves[n].partition,
                                                      list(self.moves[n].target)) for n in names])
        except KassignError as err:
            if isinstance(err, LiveClusterError) and not _authorization(err):
                raise  # not answering: the next poll tries again
            if not any(rec["state"] == RUNNING for rec in state["moves"].values()):
                if record["topics"] or record["brokers"]:  # nothing of this plan runs: leave nothing behind
                    try:
                        remove_throttle(self.admin, self.plan, record)
                    except KassignError:
                        pass  # what could not be set cannot be deleted either; the rest was
                    record["topics"], record["brokers"] = [], []
                    record["removed_at"] = _now()
                self.plan.save()
            raise
        errors = {f"{r.topic}-{r.partition}": r for r in answer.results if r.error}
        for name in names:
            rec = state["moves"][name]
            if name in errors:
                r = errors[name]
                rec["state"] = FAILED
                rec["error"] = R.error_name(r.error) + (f": {r.message}" if r.message else "")
                self._say(f"{name}: not started: {rec['error']}")
                continue
            rec["state"], rec["started_at"] = RUNNING, _now()
            for b in self.moves[name].adding:
                if b in self.accounted:
                    self.accounted[b] += self.moves[name].size
        self.dirty = True
        started = [n for n in names if n not in errors]
        if started:
            self._say(f"started {len(started)} move(s): {', '.join(started[:6])}{' ...' if len(started) > 6 else ''}")

    def _finish_running(self, running: dict[TopicPartition, C.OngoingReassignment]) -> bool:
        """Moves no longer listed: done (their replicas are the target) or cancelled elsewhere. True when one was
        cancelled elsewhere (then nothing more starts)."""
        state = self._state()
        gone = [n for n, rec in state["moves"].items() if rec["state"] == RUNNING
                and (self.moves[n].topic, self.moves[n].partition) not in running]
        replaced = [n for n, rec in state["moves"].items() if rec["state"] == RUNNING
                    and (self.moves[n].topic, self.moves[n].partition) in running
                    and _target_of(running[(self.moves[n].topic, self.moves[n].partition)]) != rec["to"]]
        if not gone and not replaced:
            return False
        view = _view(self.admin, self.plan) if gone else None
        halted = False
        self.dirty = True
        for name in gone + replaced:
            m, rec = self.moves[name], state["moves"][name]
            now = view.replicas.get((m.topic, m.partition)) if view else None
            if name in gone and (now is None or set(now) != set(m.target)):
                # The controller lists the reassignments; the metadata comes from a broker, whose copy can be a
                # moment behind (seen on a real 3-node cluster: a finished move still shown moving, or a move
                # started and finished within that moment shown not started). Look again at the next polls.
                self.unconfirmed[name] = self.unconfirmed.get(name, 0) + 1
                if self.unconfirmed[name] < METADATA_GRACE_POLLS:
                    continue
            self.unconfirmed.pop(name, None)
            if name in gone and now is not None and set(now) == set(m.target):
                rec["state"], rec["done_at"] = DONE, _now()
                self.copied[name] = rec["bytes"]
                for b in m.removing:
                    if b in self.accounted:
                        self.accounted[b] -= m.size
                self._say(f"{name}: done")
            else:
                rec["state"], rec["done_at"] = CANCELLED, _now()
                rec["error"] = "cancelled or replaced by someone else while it ran"
                for b in m.adding:
                    if b in self.accounted:
                        self.accounted[b] -= m.size
                self._say(f"{name}: cancelled or replaced by someone else while it ran; no further move starts")
                halted = True
        return halted

    def _measure(self) -> None:
        """Bytes copied of the running moves: their new replicas' sizes on the destination brokers."""
        state = self._state()
        by_broker: dict[int, dict[str, set[int]]] = {}
        for name, rec in state["moves"].items():
            if rec["state"] == RUNNING:
                m = self.moves[name]
                for b in m.adding:
                    by_broker.setdefault(b, {}).setdefault(m.topic, set()).add(m.partition)
        seen: dict[tuple[str, int, int], int] = {}
        for broker, topics in sorted(by_broker.items()):
            if broker not in self.admin.addresses:
                continue
            try:
                answer = self.admin.log_dirs(broker, topics)
            except LiveClusterError:
                continue  # a broker that does not answer now: its bytes are counted at the next poll
            for d in answer.log_dirs:
                for r in d.replicas:
                    if not d.error:
                        seen[(r.topic, r.partition, broker)] = max(seen.get((r.topic, r.partition, broker), 0), r.size)
        for name, rec in state["moves"].items():
            if rec["state"] == RUNNING:
                m = self.moves[name]
                # never lower within a run: a destination broker restarting (or not answering this poll) reports
                # less or nothing for a moment, and the progress shown would go backwards
                self.copied[name] = max(self.copied.get(name, 0),
                                        sum(min(m.size, seen.get((m.topic, m.partition, b), 0)) for b in m.adding))

    def _report(self) -> None:
        if self.progress is None:
            self.lines = []
            return
        recs = self._state()["moves"]
        total = sum(rec["bytes"] for rec in recs.values() if rec["state"] not in (SKIPPED, FAILED, CANCELLED))
        copied = sum(self.copied.get(n, 0) for n, rec in recs.items() if rec["state"] in (DONE, RUNNING))
        elapsed = time.monotonic() - self.started_clock
        gained = copied - self.copied_at_start
        rate = gained / elapsed if elapsed > 0 and gained > 0 else None
        left = (total - copied) / rate if rate else None
        counts = {s: sum(rec["state"] == s for rec in recs.values()) for s in (DONE, RUNNING, WAITING, FAILED)}
        self.progress(Progress(total, copied, counts[DONE], counts[RUNNING], counts[WAITING], counts[FAILED], rate,
                               left, self.lines))
        self.lines = []

    def _poll(self, state: dict[str, Any]) -> str | None:
        """One poll: finished moves, new starts, bytes copied, the state saved. Returns how the run ends, or None
        to poll again."""
        listed = self.admin.reassignments()
        running = {(r.topic, r.partition): r for r in listed}
        if self._finish_running(running):
            self.halted = True
        if self.stop.is_set():
            return "stopped"
        if self.halted:
            return "halted"
        chosen = self._eligible(state)
        if chosen:
            self._start(chosen, listed)
        self._measure()
        if self.dirty:  # a move changed state (a 10,000-move state is a few MB: not rewritten at every poll)
            state["updated_at"] = _now()
            self.plan.save()
            self.dirty = False
        self._report()
        recs = state["moves"].values()
        if not any(rec["state"] in (RUNNING, WAITING) for rec in recs):
            return "finished"
        if not any(rec["state"] == RUNNING for rec in recs) and not chosen:
            # nothing runs and nothing may start: only a disk that filled up from outside can do this
            self._say("no waiting move fits its brokers' disks now (something else filled them); stopped")
            return "blocked"
        return None

    def run(self) -> dict[str, Any]:
        """Polls until every move is finished or ``stop`` is set; then finishes (throttle, leaders, check) when
        nothing runs. A cluster that stops answering (while polling or finishing) is retried at every poll for
        ``patience_s`` seconds: no further request starts past them, so the run gives up within the patience and one
        request's deadline, with :class:`ClusterLost` (one line; the moves started go on without kassign). ``stop``
        set while the cluster does not answer ends the run at once ("stopped"). Returns the execution record (the
        plan file's state)."""
        state = self._state()
        self.halted = False
        lost_since: float | None = None
        first = ""  # what the first call that failed said
        self.admin.patience, self.admin.stop = self.patience_s, self.stop
        while True:
            began = time.monotonic()
            try:
                ended = self._poll(state)
                if ended == "finished":
                    self._finish()
                if lost_since is not None:
                    self._say(f"the cluster answers again after {began - lost_since:.0f} s")
                    lost_since = None
            except G.MalformedAnswer:
                raise
            except LiveClusterError as err:  # not answering (authorization and bad input are other errors)
                if lost_since is None:
                    lost_since, first = began, str(err)
                    self._say(f"the cluster does not answer ({err}); retrying every poll for up to "
                              f"{self.patience_s:.0f} s")
                    self._report()
                if self.stop.is_set():
                    ended = "stopped"
                elif time.monotonic() - lost_since > self.patience_s:
                    state["runs"][-1].update({"ended_at": _now(), "ended": "unreachable"})
                    state["updated_at"] = _now()
                    self.plan.save()
                    raise ClusterLost(f"the cluster did not answer for {self.patience_s:.0f} s ({first}); the "
                                      f"moves started go on without kassign, and {str(self.plan.path)!r} holds where "
                                      "things stood: run the same --execute again to resume, or --verify / --cancel "
                                      "it", state, self.patience_s, first) from None
                else:
                    ended = None
            if ended is not None:
                break
            pause = self.poll_s - (time.monotonic() - began)
            while pause > 0 and not self.stop.is_set():
                self.sleep(min(pause, 0.2))
                pause = self.poll_s - (time.monotonic() - began)
        state["runs"][-1].update({"ended_at": _now(), "ended": ended})
        state["updated_at"] = _now()
        self.plan.save()
        self._report()
        return state

    def _finish(self) -> None:
        state = self._state()
        record = state["throttle_set"]
        if record["topics"] or record["brokers"]:
            topics, brokers = list(record["topics"]), list(record["brokers"])
            for note in remove_throttle(self.admin, self.plan, record):
                self._say(note)
            topics = [t for t in topics if t not in record["topics"]]
            brokers = [b for b in brokers if b not in record["brokers"]]
            self._say(f"throttle removed from topic(s) {', '.join(topics) or '-'} and broker(s) "
                      f"{', '.join(map(str, brokers)) or '-'}")
        view = _view(self.admin, self.plan)
        moved = [(self.moves[n].topic, self.moves[n].partition) for n, rec in state["moves"].items()
                 if rec["state"] == DONE]
        to_elect = [k for k in moved if view.leaders.get(k) != self.plan.targets[k][0]]
        elected: dict[str, Any] = {"asked": [_name(k) for k in to_elect], "errors": {}}
        if to_elect:
            answer = self.admin.elect(to_elect)
            for r in answer.results:
                if r.error and r.error != R.ELECTION_NOT_NEEDED:
                    elected["errors"][f"{r.topic}-{r.partition}"] = R.error_name(r.error) + (
                        f": {r.message}" if r.message else "")
            self._say(f"preferred leader election for {len(to_elect)} partition(s)"
                      + (f"; {len(elected['errors'])} failed" if elected["errors"] else ""))
            view = _view(self.admin, self.plan)
        state["elected"] = elected
        behind = [k for k in moved if view.replicas.get(k) != self.plan.targets[k]
                  or not set(self.plan.targets[k]) <= set(view.isr.get(k, []))]
        state["in_sync"] = {"checked": len(moved), "not_in_sync": [_name(k) for k in behind]}
        self._say(f"{len(moved) - len(behind)} of {len(moved)} moved partition(s) have their planned replicas, all in "
                  "sync" + (f"; not: {', '.join(_name(k) for k in behind[:5])}" if behind else ""))
        if all(rec["state"] == DONE for rec in state["moves"].values()):
            state["finished_at"] = _now()


def remove_throttle(admin: Admin, plan: PlanFile, record: dict[str, Any]) -> list[str]:
    """DELETE the throttle where this plan set it, except on topics and brokers of a reassignment still running that
    this plan did not start (those are left, and said)."""
    running = admin.reassignments()
    ours = {(t, p): target for (t, p), target in plan.targets.items()}
    foreign = [r for r in running if ours.get((r.topic, r.partition)) != _target_of(r)]
    busy_topics = {r.topic for r in foreign}
    busy_brokers = {b for r in foreign for b in r.replicas}
    topics = [t for t in record["topics"] if t not in busy_topics]
    brokers = [b for b in record["brokers"] if b not in busy_brokers]
    notes = []
    if busy_topics & set(record["topics"]) or busy_brokers & set(record["brokers"]):
        notes.append("throttle left on topic(s)/broker(s) of a reassignment this plan did not start: "
                     + ", ".join(sorted(busy_topics & set(record["topics"]))
                                 + [f"broker {b}" for b in sorted(busy_brokers & set(record["brokers"]))]))
    if topics or brokers:
        admin.alter_configs(config_changes(removal(topics, brokers), delete=True))
    record["topics"] = sorted(set(record["topics"]) - set(topics))
    record["brokers"] = sorted(set(record["brokers"]) - set(brokers))
    if not record["topics"] and not record["brokers"]:
        record["removed_at"] = _now()
    return notes


# -- the three commands -------------------------------------------------------------------------------------------

def execute(plan_path: str | Path, bootstrap: str, *, config: Mapping[str, str] | None = None, timeout: float = 10.0,
            concurrency: int = 5, throttle: int | None = None, force: bool = False,
            disk_limit: float = DEFAULT_DISK_LIMIT, poll_s: float = 1.0,
            progress: Callable[[Progress], None] | None = None, stop: threading.Event | None = None,
            on_prepared: Callable[[dict[str, Any]], None] | None = None,
            patience_s: float | None = None, disk_bytes: Mapping[int, int] | None = None) -> dict[str, Any]:
    """Carry out the plan in ``plan_path`` (see the module's rule); returns the execution record. ``patience_s``
    (default :data:`DEFAULT_PATIENCE_S`): how long a cluster that does not answer is asked again before the run
    gives up (:class:`ClusterLost`). ``disk_bytes``: per broker, the disk capacity a capacity document gives
    (``disk_limit`` x it is the broker's limit instead of x its volumes' total); recorded in the plan file, so that a
    resumed run keeps the same limits."""
    if patience_s is None:
        patience_s = DEFAULT_PATIENCE_S
    if isinstance(patience_s, bool) or not isinstance(patience_s, (int, float)) or patience_s < 0:
        raise KassignError(f"the patience is a number of seconds, 0 or more, got {patience_s!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise KassignError(f"--concurrency must be a whole number of moves, at least 1, got {concurrency!r}")
    if throttle is not None:
        check_rate(throttle)
    if not isinstance(poll_s, (int, float)) or poll_s <= 0:
        raise KassignError(f"the poll interval must be above 0 seconds, got {poll_s!r}")
    if not 0 < disk_limit <= 1:
        raise KassignError(f"the disk limit is a fraction of each disk, above 0 and at most 1, got {disk_limit!r}")
    if disk_bytes is not None and not all(is_whole_number(v) and v > 0 for v in disk_bytes.values()):
        raise KassignError("disk_bytes maps broker ids to a positive whole number of bytes")
    plan = read_plan(plan_path)
    with Admin(bootstrap, config, timeout) as admin:
        runner = Executor(admin, plan, concurrency=concurrency, throttle=throttle, force=force,
                          disk_limit=disk_limit, poll_s=poll_s, progress=progress, stop=stop, patience_s=patience_s,
                          disk_bytes=disk_bytes)
        runner.prepare()
        if on_prepared is not None:
            on_prepared(plan.document[STATE_KEY])
        return runner.run()


def verify(plan_path: str | Path, bootstrap: str, *, config: Mapping[str, str] | None = None,
           timeout: float = 10.0) -> dict[str, Any]:
    """Where the plan stands: per partition done / moving (bytes left) / not started, per broker the bytes left
    to copy onto it, and the throttle configs still set on the plan's topics and brokers."""
    plan = read_plan(plan_path)
    with Admin(bootstrap, config, timeout) as admin:
        view = _view(admin, plan)
        state = plan.state or {}
        original = state.get("original", {})
        moving: dict[TopicPartition, C.OngoingReassignment] = {}
        partitions: dict[str, dict[str, Any]] = {}
        for key, target in plan.targets.items():
            now = view.replicas.get(key)
            ours = view.running.get(key)
            name = _name(key)
            if now is None:
                partitions[name] = {"state": "missing", "replicas": None, "target": target}
            elif ours is not None and _target_of(ours) == target:
                moving[key] = ours
                partitions[name] = {"state": "moving", "replicas": now, "target": target, "adding": ours.adding,
                                    "removing": ours.removing}
            elif now == target:
                if not state:  # a plan kassign did not run: whether it moved is not known
                    word = "as planned"
                elif name in state.get("moves", {}) or original.get(name, now) != target:
                    word = "done"
                else:
                    word = "unchanged"  # the plan did not move it
                partitions[name] = {"state": word, "replicas": now, "target": target}
            elif ours is not None:
                partitions[name] = {"state": "other reassignment", "replicas": now, "target": target,
                                    "running_to": _target_of(ours)}
            else:
                partitions[name] = {"state": "not started", "replicas": now, "target": target}
        topics = {t for t, _ in plan.targets}
        sizes, _ = _sizes_and_disks(admin, view.brokers, topics, DEFAULT_DISK_LIMIT)
        per_broker: dict[int, dict[str, int]] = {}
        for key, target in plan.targets.items():
            entry = partitions[_name(key)]
            if entry["state"] not in ("moving", "not started"):
                continue
            size = _size(key, sizes, view.leaders.get(key))
            adding = entry.get("adding") or [b for b in target if b not in (entry["replicas"] or [])]
            left = 0
            for b in adding:
                have = min(size, sizes.get(key, {}).get(b, 0)) if entry["state"] == "moving" else 0
                left += size - have
                row = per_broker.setdefault(b, {"moves_in": 0, "bytes_left_in": 0})
                row["moves_in"] += 1
                row["bytes_left_in"] += size - have
            entry["bytes_left"] = left
        throttles = _throttles(admin, plan, view, state)
    counts: dict[str, int] = {}
    for entry in partitions.values():
        counts[entry["state"]] = counts.get(entry["state"], 0) + 1
    return {"partitions": partitions, "counts": counts, "brokers": {str(b): v for b, v in sorted(per_broker.items())},
            "bytes_left": sum(e.get("bytes_left", 0) for e in partitions.values()), "throttles": throttles,
            "foreign": [f"{r.topic}-{r.partition}" for r in _foreign(plan, view)]}


def _throttles(admin: Admin, plan: PlanFile, view: ClusterView, state: Mapping[str, Any]) -> dict[str, Any]:
    """The throttle configs set now on the plan's topics and on the brokers (those the plan set them on, else every
    broker its moves touch)."""
    topics = sorted({t for t, _ in plan.targets})
    found: dict[str, dict[str, str]] = {}
    for res in admin.configs([C.ConfigsWanted(C.TOPIC, t, TOPIC_CONFIGS) for t in topics]):
        values = {c.name: c.value for c in res.configs if c.name in TOPIC_CONFIGS and c.value}
        if values:
            found[f"topic {res.name}"] = values  # type: ignore[assignment]
    recorded = (state.get("throttle_set") or {}).get("brokers") or []
    brokers = set(recorded) | {b for key, target in plan.targets.items()
                               for b in set(target) ^ set(view.replicas.get(key, target))}
    for b in sorted(brokers & view.brokers):
        for res in admin.configs([C.ConfigsWanted(C.BROKER, str(b), BROKER_CONFIGS)], broker=b):
            values = {c.name: c.value for c in res.configs if c.name in BROKER_CONFIGS and c.value}
            if values:
                found[f"broker {b}"] = values  # type: ignore[assignment]
    return found


def cancel(plan_path: str | Path, bootstrap: str, *, config: Mapping[str, str] | None = None,
           timeout: float = 10.0) -> dict[str, Any]:
    """Cancel this plan's running moves (AlterPartitionReassignments with no target) and remove its throttle."""
    plan = read_plan(plan_path)
    with Admin(bootstrap, config, timeout) as admin:
        view = _view(admin, plan)
        ours = [key for key, r in sorted(view.running.items()) if plan.targets.get(key) == _target_of(r)]
        errors: dict[str, str] = {}
        if ours:
            answer = admin.alter([R.Reassignment(t, p, None) for t, p in ours])
            for r in answer.results:
                if r.error and r.error != R.NO_REASSIGNMENT_IN_PROGRESS:
                    errors[f"{r.topic}-{r.partition}"] = R.error_name(r.error) + (f": {r.message}" if r.message else "")
        state = plan.state
        record = (state or {}).get("throttle_set") or {
            "topics": sorted({t for t, _ in plan.targets}),
            "brokers": sorted({b for key, target in plan.targets.items()
                               for b in set(target) | set(view.replicas.get(key, []))}), "rate": None,
            "removed_at": None}
        before = {"topics": list(record["topics"]), "brokers": list(record["brokers"])}
        notes = remove_throttle(admin, plan, record) if record["topics"] or record["brokers"] else []
        if state is not None:
            for key in ours:
                rec = state["moves"].get(_name(key))
                if rec is not None and _name(key) not in errors:
                    rec["state"], rec["done_at"], rec["error"] = CANCELLED, _now(), "cancelled (--cancel)"
            state["updated_at"] = _now()
            plan.save()
    return {"cancelled": [_name(k) for k in ours if _name(k) not in errors], "errors": errors,
            "throttle_removed": {"topics": sorted(set(before["topics"]) - set(record["topics"])),
                                 "brokers": sorted(set(before["brokers"]) - set(record["brokers"]))},
            "notes": notes}
