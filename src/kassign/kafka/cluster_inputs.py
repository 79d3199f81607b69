"""What balancing a live cluster starts from, read from the cluster itself: placement, disks, write rates, limits.

The rule for each input (every one is recorded in ``ClusterInputs.sources`` with the API, its version and the
broker that answered):

- **placement, leaders, in-sync replicas, racks**: one Metadata request (the newest version both sides speak, up
  to v13; all topics are asked for, so no broker creates one). A partition whose in-sync replicas are fewer than
  its replicas is *under-replicated*: listed in ``under_replicated`` and said in ``notes``, so that a planner
  leaves it where it is unless told otherwise. Replica lists keep Kafka's order (the preferred leader first).
- **reassignments running** (on any topic): ListPartitionReassignments, in ``reassignments`` and ``notes`` (their
  partitions' replica lists hold the target and the replicas being removed); a cluster that cannot tell is said.
- **replica sizes and disks**: DescribeLogDirs (every replica) sent to every broker, each answering for its own
  log dirs. A partition's size is its leader's replica's size. A broker's disk is the total and usable bytes of
  its log dirs' volumes (DescribeLogDirs v4 and later, KIP-827; dirs of one broker reporting the same total and
  usable bytes are taken as one volume and counted once). A broker that speaks only v0-v3 cannot say: its disk
  is ``None`` and ``notes`` says so. A log dir that is offline is refused (one line naming the broker and dir)
  unless ``allow_offline_dirs``; then it is said and left out. A broker that does not answer is refused.
- **write rates** (``sample`` seconds, at least 1): the sizes (DescribeLogDirs) and the end offsets (ListOffsets,
  latest and earliest, from each leader) are read twice, ``sample`` seconds apart, and a partition's rate is the
  growth of its leader replica's bytes on disk divided by the time measured between that broker's two answers. Bytes
  on disk are what replication copies and what fills the disks, batch headers included, so they are taken over a
  record count. Where the log shrank or its start offset moved during the window (retention deleted a segment, the
  cleaner compacted it), the size difference undercounts: the rate is then the offsets written during the window
  times the log's bytes per offset at the second read, and the partition is listed in ``rates_estimated``. A
  partition's rate reaches every broker holding a replica (the leader from producers, each follower by replication):
  ``bytes_in`` per broker; ``leader_bytes_in`` is the leaders' share, ``replication_out`` what each leader sends its
  followers.
- **capacity**: the ``--capacity`` document (:mod:`kassign.replicas.capacity`); a broker's ``disk_bytes`` comes
  from DescribeLogDirs where the document gives none, and ``capacity_sources`` says which.

Worked example: on a 3-broker cluster (racks a, b, c), topic ``orders`` partition 0 with replicas [1, 2, 3], ISR
[1, 2, 3], leader 1, whose replica on broker 1 holds 4,236,465 bytes: ``current`` lists ``{"topic": "orders",
"partition": 0, "replicas": [1, 2, 3]}``, ``sizes == {"orders": {0: 4236465}}``. Sampled for 30 s, during which
the leader's replica grew by 3,000,000 bytes: ``rates == {"orders": {0: 100000.0}}`` (100 kB/s), and brokers 1, 2
and 3 each get 100 kB/s of ``bytes_in`` from it; broker 1, the leader, ``leader_bytes_in`` 100 kB/s and
``replication_out`` 200 kB/s.

Every request has a deadline (``timeout`` seconds); what cannot be read is one :class:`LiveClusterError` line
(a :class:`~kassign.core.errors.KassignError`). Nothing is written to the cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kassign.core.errors import KassignError, LiveClusterError
from kassign.core.units import parse_duration
from kassign.kafka import cluster_protocol as C
from kassign.kafka import groups_protocol as G
from kassign.kafka import protocol as P
from kassign.kafka import topics_protocol as TP
from kassign.kafka.client import Cluster
from kassign.kafka.config import ClientSettings
from kassign.kafka.connection import (API_DESCRIBE_CLUSTER, API_DESCRIBE_CONFIGS, API_DESCRIBE_LOG_DIRS,
                                      API_LIST_PARTITION_REASSIGNMENTS, API_METADATA, BrokerConnection)
from kassign.replicas.capacity import FIELDS, BrokerCapacity, Capacity, parse_capacity

__all__ = ["BrokerDisk", "ClusterInputs", "LogDirState", "LogDirsNotSpokenError", "SampleError", "describe_cluster",
           "describe_configs", "list_reassignments", "online_volumes", "parse_window", "read_cluster", "replica_sizes",
           "rich_progress"]

DEFAULT_TIMEOUT = 10.0
MIN_WINDOW, MAX_WINDOW = 1.0, 3600.0
TopicPartition = tuple[str, int]


class SampleError(LiveClusterError):
    """A write-rate sample that cannot be taken as asked."""


class LogDirsNotSpokenError(LiveClusterError):
    """A broker that does not speak DescribeLogDirs at all (not one that fails to answer): its replicas' sizes and
    its disk cannot be read. A caller may read the cluster again with ``log_dirs=False`` and say so."""


# -- what is read -------------------------------------------------------------------------------------------------

@dataclass
class LogDirState:
    """One log dir of one broker, as DescribeLogDirs told it."""

    path: str
    online: bool
    error: str | None  # the error name of a dir that answered one (KAFKA_STORAGE_ERROR: offline)
    total_bytes: int | None  # the volume's size; None: not told (before v4, or offline)
    usable_bytes: int | None  # the volume's free bytes; None: not told
    replica_bytes: int  # bytes of the replica logs in this dir (future logs included)
    replicas: int
    cordoned: bool = False  # v5+: takes no new replicas


@dataclass
class BrokerDisk:
    """One broker's disk: its log dirs and what its replicas take."""

    broker: int
    version: int  # the DescribeLogDirs version it answered
    log_dirs: list[LogDirState]
    total_bytes: int | None  # its volumes' total (each volume once); None where it does not say
    usable_bytes: int | None
    replica_bytes: int  # every replica log on it, future logs included
    fixed_bytes: int  # of those, the bytes a plan of the topics read does not move: other topics, future logs

    @property
    def used_bytes(self) -> int | None:
        """Everything on its volumes (Kafka's and anything else), where told."""
        return None if self.total_bytes is None or self.usable_bytes is None else self.total_bytes - self.usable_bytes

    @property
    def other_bytes(self) -> int | None:
        """What its volumes hold besides Kafka's replicas (never below 0), where told."""
        used = self.used_bytes
        return None if used is None else max(0, used - self.replica_bytes)

    def to_json(self) -> dict[str, Any]:
        return {"broker": self.broker, "describe_log_dirs_version": self.version, "total_bytes": self.total_bytes,
                "usable_bytes": self.usable_bytes, "used_bytes": self.used_bytes,
                "replica_bytes": self.replica_bytes, "fixed_bytes": self.fixed_bytes,
                "other_bytes": self.other_bytes, "log_dirs": [vars(d) for d in self.log_dirs]}


@dataclass
class ClusterInputs:
    """Everything read, ready for a planner; ``to_json()`` is the summary's ``inputs``."""

    bootstrap: str
    cluster_id: str | None
    controller: int
    brokers: dict[int, str | None]  # id -> rack (None: no rack)
    current: dict[str, Any]  # {"version": 1, "partitions": [{"topic", "partition", "replicas"}]}, Kafka's order
    leaders: dict[str, dict[int, int | None]]  # None: no leader now
    isr: dict[str, dict[int, list[int]]]
    under_replicated: list[TopicPartition]
    sizes: dict[str, dict[int, int]]  # the leader replica's bytes
    replica_sizes: dict[str, dict[int, dict[int, int]]]  # topic -> partition -> broker -> bytes
    disks: dict[int, BrokerDisk]
    capacity: dict[int, BrokerCapacity]  # per broker: the document's values, disk filled in from the log dirs
    capacity_sources: dict[int, dict[str, str]]  # per broker, per field given: "file" or "DescribeLogDirs vN"
    capacity_document: Capacity | None
    rates: dict[str, dict[int, float]] | None = None  # bytes written per second; None: not sampled
    rates_estimated: list[TopicPartition] = field(default_factory=list)
    bytes_in: dict[int, float] | None = None  # per broker: leader writes and replication
    leader_bytes_in: dict[int, float] | None = None
    replication_out: dict[int, float] | None = None
    window_s: float | None = None  # the time measured between the two reads of a sample
    # reassignments running now, on any topic: {"topic", "partition", "replicas" (target, then those being
    # removed), "adding", "removing"}; None: the cluster could not tell
    reassignments: list[dict[str, Any]] | None = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: dict[str, Any] = field(default_factory=dict)

    @property
    def broker_list(self) -> list[tuple[int, str | None]]:
        """``[(id, rack), ...]``, the shape ``plan_reassignment`` takes."""
        return sorted(self.brokers.items())

    def capacity_json(self) -> dict[str, Any] | None:
        """The capacity document with each broker's values resolved (the file's, disk from the log dirs where the
        file gives none), as ``plan_reassignment(capacity=...)`` takes it; None when nothing is known."""
        brokers = {str(b): c.to_json() for b, c in sorted(self.capacity.items()) if c.to_json()}
        return {"default": {}, "brokers": brokers} if brokers else None

    def to_json(self) -> dict[str, Any]:
        def by_partition(table: Mapping[str, Mapping[int, Any]] | None) -> dict[str, dict[str, Any]] | None:
            return None if table is None else {t: {str(p): v for p, v in parts.items()} for t, parts in table.items()}

        def by_broker(table: Mapping[int, Any] | None) -> dict[str, Any] | None:
            return None if table is None else {str(b): v for b, v in sorted(table.items())}

        return {
            "sources": self.sources, "notes": self.notes, "cluster_id": self.cluster_id,
            "controller": self.controller, "brokers": by_broker(self.brokers),
            "partitions": sum(len(p) for p in self.sizes.values()),
            "under_replicated": [list(tp) for tp in self.under_replicated], "reassignments": self.reassignments,
            "sizes": by_partition(self.sizes), "rates": by_partition(self.rates),
            "rates_estimated": [list(tp) for tp in self.rates_estimated], "window_s": self.window_s,
            "bytes_in": by_broker(self.bytes_in), "leader_bytes_in": by_broker(self.leader_bytes_in),
            "replication_out": by_broker(self.replication_out),
            "disks": by_broker({b: d.to_json() for b, d in self.disks.items()}),
            "capacity": by_broker({b: c.to_json() for b, c in self.capacity.items()}),
            "capacity_sources": by_broker(self.capacity_sources),
        }

    def lines(self) -> list[str]:
        """What was read and from where, a line each, for the terminal."""
        src = self.sources
        meta = src["placement"]
        out = [f"placement, leaders, in-sync replicas, racks: Metadata v{meta['version']} from {meta['broker']} "
               f"({len(self.brokers)} brokers, {sum(len(p) for p in self.sizes.values())} partitions of "
               f"{len(self.sizes)} topics)"]
        logs = src["sizes"]
        versions = sorted(set(logs["versions"].values()))
        out.append(f"replica sizes and disks: DescribeLogDirs v{'/v'.join(map(str, versions))} from brokers "
                   f"{', '.join(map(str, logs['brokers']))} (a partition's size: its leader's replica)")
        rates = src.get("rates")
        if rates:
            out.append(f"write rates: sampled over {rates['window_s']:.1f} s (asked {rates['asked_s']:g} s), "
                       f"DescribeLogDirs and ListOffsets read twice; {len(self.rates_estimated)} partition(s) "
                       "estimated from offsets")
        else:
            out.append("write rates: not sampled (--sample DURATION reads them)")
        cap = src.get("capacity")
        out.append(f"capacity: {cap['file']}" if cap else "capacity: no document; disk from DescribeLogDirs")
        return out + [f"note: {n}" for n in self.notes]


# -- arguments ----------------------------------------------------------------------------------------------------

def parse_window(value: float | int | str) -> float:
    """A sample window in seconds: a number of seconds, or text such as ``30s``, ``1500ms``, ``2m``; at least 1 s
    (a shorter window measures the broker's flushes, not the traffic) and at most an hour."""
    seconds = parse_duration(value, "--sample", SampleError)
    if seconds < MIN_WINDOW:
        raise SampleError(f"--sample must be at least 1 second (a rate over a shorter window is noise), got "
                          f"{value!r}")
    if seconds > MAX_WINDOW:
        raise SampleError(f"--sample must be at most an hour, got {value!r}")
    return seconds


def _settings(config: Mapping[str, str] | None, timeout: float) -> ClientSettings:
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= 3600:
        raise LiveClusterError(f"timeout must be between 0 and 3600 seconds, got {timeout!r}")
    return ClientSettings.from_properties({**(config or {}), "request.timeout.ms": str(max(100, int(timeout * 1000)))})


# -- calls --------------------------------------------------------------------------------------------------------

def _spoken(connection: BrokerConnection, api_key: int) -> int | None:
    lowest, highest = C.VERSIONS[api_key]
    low, high = connection.versions.get(api_key, (-1, -1))
    chosen = min(high, highest)
    return chosen if chosen >= max(low, lowest) else None


def _bootstrap(cluster: Cluster, work: Callable[[BrokerConnection, float], Any]) -> tuple[Any, str]:
    """``work`` on the first bootstrap server that answers: (its result, its address)."""
    last: Exception | None = None
    for host, port in cluster.addresses:
        try:
            return cluster.call(("bootstrap", host, port), host, port, work), f"{host}:{port}"
        except G.MalformedAnswer:
            raise
        except LiveClusterError as err:
            last = err
    raise LiveClusterError(f"cannot read {cluster.bootstrap}: {last}")


def _metadata(connection: BrokerConnection, deadline: float) -> tuple[int, TP.MetadataAnswer]:
    version = _spoken(connection, API_METADATA)
    if version is None:
        raise LiveClusterError(f"{connection.address} speaks no Metadata version kassign reads (v1-v13)")
    body = TP.encode_metadata(version, None)
    return version, G.exchange(connection, API_METADATA, version, body, TP.decode_metadata, deadline)


def _log_dirs(connection: BrokerConnection, deadline: float) -> tuple[int, C.LogDirsAnswer]:
    version = _spoken(connection, API_DESCRIBE_LOG_DIRS)
    if version is None:
        raise LogDirsNotSpokenError(f"{connection.address} does not speak DescribeLogDirs")
    body = C.encode_describe_log_dirs_request(version, None)
    return version, G.exchange(connection, API_DESCRIBE_LOG_DIRS, version, body, C.decode_describe_log_dirs,
                               deadline)


def list_reassignments(connection: BrokerConnection, timeout_ms: int, deadline: float) -> C.ReassignmentsAnswer | None:
    """Every reassignment running (ListPartitionReassignments, Kafka 2.4 and later); None where the broker does
    not speak it."""
    version = _spoken(connection, API_LIST_PARTITION_REASSIGNMENTS)
    if version is None:
        return None
    body = C.encode_list_partition_reassignments_request(version, None, timeout_ms)
    return G.exchange(connection, API_LIST_PARTITION_REASSIGNMENTS, version, body,
                      C.decode_list_partition_reassignments, deadline)


def describe_cluster(connection: BrokerConnection, include_fenced: bool, deadline: float) -> C.ClusterAnswer:
    """DescribeCluster at the newest version both speak: brokers (fenced ones too where asked, v2+), racks,
    the controller. A broker that does not speak it: :class:`LiveClusterError`. (Arguments in the order
    ``Cluster.call`` passes them: the deadline last.)"""
    version = _spoken(connection, API_DESCRIBE_CLUSTER)
    if version is None:
        raise LiveClusterError(f"{connection.address} does not speak DescribeCluster (Kafka 2.8 and later do)")
    body = C.encode_describe_cluster_request(version, include_fenced=include_fenced and version >= 2)
    return G.exchange(connection, API_DESCRIBE_CLUSTER, version, body, C.decode_describe_cluster, deadline)


def describe_configs(connection: BrokerConnection, resources: Iterable[C.ConfigsWanted],
                     deadline: float) -> list[C.ConfigResource]:
    """DescribeConfigs of topics or brokers (a broker's own configs must be asked of that broker)."""
    version = _spoken(connection, API_DESCRIBE_CONFIGS)
    if version is None:
        raise LiveClusterError(f"{connection.address} does not speak DescribeConfigs")
    body = C.encode_describe_configs_request(version, list(resources))
    return G.exchange(connection, API_DESCRIBE_CONFIGS, version, body, C.decode_describe_configs, deadline)


# -- the reader ---------------------------------------------------------------------------------------------------

@dataclass
class _Snapshot:
    at: float  # time.monotonic() when the read began
    versions: dict[int, int]
    answers: dict[int, C.LogDirsAnswer]
    when: dict[int, float] = field(default_factory=dict)  # per broker: when its DescribeLogDirs answer came
    ends: dict[TopicPartition, int] = field(default_factory=dict)
    starts: dict[TopicPartition, int] = field(default_factory=dict)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def read_cluster(bootstrap: str, config: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT,
                 topics: Iterable[str] | None = None, sample: float | str | None = None,
                 capacity: Mapping[str, Any] | str | Path | None = None, *, allow_offline_dirs: bool = False,
                 progress: Callable[[float, float], None] | None = None, log_dirs: bool = True) -> ClusterInputs:
    """Read what balancing ``bootstrap``'s cluster needs (see the module's rule): ``topics`` (default: every topic
    but the internal ones), write rates when ``sample`` (seconds, or text such as ``"30s"``) is given, the
    ``capacity`` document (a dict or a JSON file's path). ``config``: client properties (security settings);
    ``timeout``: every request's deadline in seconds. ``progress(elapsed, window)`` is called while a sample
    waits. ``log_dirs=False`` reads no sizes or disks (for a cluster whose brokers do not speak DescribeLogDirs:
    ``sizes`` and ``disks`` stay empty, and ``sources`` and ``notes`` say so; a sample needs them).
    Raises :class:`LiveClusterError` (a ``KassignError``) with one line (:class:`LogDirsNotSpokenError` where a
    broker does not speak DescribeLogDirs); nothing is written."""
    window = parse_window(sample) if sample is not None else None
    if window is not None and not log_dirs:
        raise SampleError("a write-rate sample reads the replicas' sizes twice (DescribeLogDirs): it cannot be taken "
                          "without them")
    if capacity is not None and not isinstance(capacity, (Mapping, str, Path)):
        raise KassignError(f"capacity must be a document (dict) or a file path, got {type(capacity).__name__}")
    document = None if capacity is None else parse_capacity(capacity)  # a bad file costs no connection
    wanted = None if topics is None else list(dict.fromkeys(topics))
    if wanted is not None and not all(isinstance(t, str) and t for t in wanted):
        raise LiveClusterError("topics must be topic names (non-empty text)")
    with Cluster(bootstrap, _settings(config, timeout)) as cluster:
        (version, meta), answered_by = _bootstrap(cluster, _metadata)
        read_at = _now()
        if meta.error:
            raise LiveClusterError(f"{answered_by} refused Metadata: {P.error_name(meta.error)}")
        inputs = _placement(bootstrap, meta, wanted)
        if document is not None:  # before any further call
            document.check_brokers(inputs.brokers)
        inputs.capacity_document = document
        inputs.sources["placement"] = {"api": "Metadata", "version": version, "broker": answered_by,
                                       "read_at": read_at, "topics": sorted(inputs.sizes)}
        _reassignments(cluster, inputs, timeout)
        addresses = {b.node_id: (b.host, b.port) for b in meta.brokers}
        if not log_dirs:
            inputs.sources["sizes"] = inputs.sources["disk"] = {"api": None, "told": False}
            inputs.notes.append("replica sizes and disks not read (DescribeLogDirs not asked)")
            _capacity(inputs, document)
            return inputs
        first = _snapshot(cluster, addresses, inputs, with_offsets=window is not None)
        _sizes_and_disks(inputs, first, allow_offline_dirs)
        if window is not None:
            _wait(window, progress)
            second = _snapshot(cluster, addresses, inputs, with_offsets=True)
            _rates(inputs, first, second, window)
    _capacity(inputs, document)
    return inputs


def _placement(bootstrap: str, meta: TP.MetadataAnswer, wanted: list[str] | None) -> ClusterInputs:
    by_name = {t.name: t for t in meta.topics if t.name}
    if wanted is None:
        names = sorted(n for n, t in by_name.items() if not t.internal and not n.startswith("__")
                       and t.error not in (P.UNKNOWN_TOPIC_OR_PARTITION, *P.AUTHORIZATION))
    else:
        missing = [t for t in wanted if t not in by_name or by_name[t].error == P.UNKNOWN_TOPIC_OR_PARTITION]
        if missing:
            raise LiveClusterError(f"unknown topic{'s' if len(missing) > 1 else ''} on {bootstrap}: "
                                   f"{', '.join(missing)}")
        refused = [t for t in wanted if by_name[t].error in P.AUTHORIZATION]
        if refused:
            raise LiveClusterError(f"not authorized to describe topic {', '.join(refused)} on {bootstrap}")
        names = wanted
    brokers = {b.node_id: b.rack or None for b in sorted(meta.brokers, key=lambda b: b.node_id)}
    partitions: list[dict[str, Any]] = []
    leaders: dict[str, dict[int, int | None]] = {}
    isr: dict[str, dict[int, list[int]]] = {}
    under: list[TopicPartition] = []
    leaderless: list[str] = []
    for name in names:
        topic = by_name[name]
        if topic.error and not topic.partitions:
            raise LiveClusterError(f"topic {name} on {bootstrap}: {P.error_name(topic.error)}")
        leaders[name], isr[name] = {}, {}
        for part in sorted(topic.partitions, key=lambda p: p.partition):
            p = part.partition
            partitions.append({"topic": name, "partition": p, "replicas": list(part.replicas)})
            leaders[name][p] = part.leader if part.leader >= 0 else None
            isr[name][p] = list(part.isr)
            if not set(part.replicas) <= set(part.isr):
                under.append((name, p))
            if part.leader < 0:
                leaderless.append(f"{name}-{p}")
    notes = []
    if under:
        shown = ", ".join(f"{t}-{p}" for t, p in under[:5]) + (f" and {len(under) - 5} more" if len(under) > 5 else "")
        notes.append(f"{len(under)} partition(s) under-replicated (in-sync replicas fewer than replicas): {shown}; "
                     "a plan should leave them where they are")
    if leaderless:
        notes.append(f"{len(leaderless)} partition(s) without a leader: {', '.join(leaderless[:5])}")
    unknown_brokers = sorted({b for entry in partitions for b in entry["replicas"]} - set(brokers))
    if unknown_brokers:
        notes.append(f"replicas on broker(s) {', '.join(map(str, unknown_brokers))}, which the metadata does not "
                     "list (down or removed): their sizes cannot be read")
    return ClusterInputs(
        bootstrap=bootstrap, cluster_id=meta.cluster_id, controller=meta.controller, brokers=brokers,
        current={"version": 1, "partitions": partitions}, leaders=leaders, isr=isr, under_replicated=under,
        sizes={n: {} for n in names}, replica_sizes={n: {} for n in names}, disks={}, capacity={},
        capacity_sources={}, capacity_document=None, notes=notes, sources={"bootstrap": bootstrap})


def _reassignments(cluster: Cluster, inputs: ClusterInputs, timeout: float) -> None:
    """The reassignments running (on any topic), said in the notes; where the cluster cannot tell, that is said."""
    (answer, broker) = _bootstrap(cluster, lambda c, d: list_reassignments(c, int(timeout * 1000), d))
    source: dict[str, Any] = {"api": "ListPartitionReassignments", "broker": broker}
    inputs.sources["reassignments"] = source
    if answer is None or answer.error:
        why = (f"{broker} does not speak ListPartitionReassignments (Kafka 2.4 and later do)" if answer is None
               else f"{broker} answered ListPartitionReassignments with {P.error_name(answer.error)}"
               + (f" ({answer.message})" if answer.message else ""))
        inputs.reassignments = None
        source["told"] = False
        inputs.notes.append(f"whether reassignments are running cannot be told: {why}")
        return
    source["version"] = 0
    inputs.reassignments = [{"topic": r.topic, "partition": r.partition, "replicas": r.replicas, "adding": r.adding,
                             "removing": r.removing} for r in answer.reassignments]
    if answer.reassignments:
        shown = ", ".join(f"{r.topic}-{r.partition}" for r in answer.reassignments[:5])
        more = f" and {len(answer.reassignments) - 5} more" if len(answer.reassignments) > 5 else ""
        inputs.notes.append(f"{len(answer.reassignments)} partition(s) being reassigned now: {shown}{more}; their "
                            "replica lists hold the target and the replicas being removed")


def _snapshot(cluster: Cluster, addresses: Mapping[int, tuple[str, int]], inputs: ClusterInputs,
              with_offsets: bool) -> _Snapshot:
    """Every broker's DescribeLogDirs and, ``with_offsets``, every read partition's end and start offsets."""
    snap = _Snapshot(time.monotonic(), {}, {})
    for broker, (host, port) in sorted(addresses.items()):
        try:
            version, answer = cluster.call(("node", broker), host, port, _log_dirs)
        except LogDirsNotSpokenError:
            raise LogDirsNotSpokenError(f"broker {broker} ({host}:{port}) does not speak DescribeLogDirs") from None
        except LiveClusterError as err:
            raise LiveClusterError(f"broker {broker} ({host}:{port}) did not answer DescribeLogDirs: {err}") from None
        if answer.error:
            raise LiveClusterError(f"broker {broker} ({host}:{port}) refused DescribeLogDirs: "
                                   f"{P.error_name(answer.error)}")
        snap.versions[broker], snap.answers[broker] = version, answer
        snap.when[broker] = time.monotonic()
    if with_offsets:
        by_leader: dict[int, dict[str, list[int]]] = {}
        for topic, parts in inputs.leaders.items():
            for p, leader in parts.items():
                if leader is not None and leader in addresses:
                    by_leader.setdefault(leader, {}).setdefault(topic, []).append(p)
        for leader, wanted in sorted(by_leader.items()):
            host, port = addresses[leader]
            for stamp, into in ((P.LATEST, snap.ends), (P.EARLIEST, snap.starts)):
                asked = {t: {p: stamp for p in parts} for t, parts in wanted.items()}
                try:
                    found = cluster.call(("node", leader), host, port, P.list_offsets, asked, 0)
                except LiveClusterError as err:
                    raise LiveClusterError(f"broker {leader} ({host}:{port}) did not answer ListOffsets: "
                                           f"{err}") from None
                for key, answer in found.items():
                    if answer.error == 0 and answer.offset >= 0:
                        into[key] = answer.offset
    return snap


def _disk(broker: int, version: int, answer: C.LogDirsAnswer, movable: Callable[[str, int], bool],
          allow_offline: bool, notes: list[str]) -> BrokerDisk:
    dirs: list[LogDirState] = []
    replica_bytes = fixed = 0
    for d in answer.log_dirs:
        online = d.error == 0
        if not online:
            name = "offline" if d.error == C.KAFKA_STORAGE_ERROR else P.error_name(d.error)
            if not allow_offline:
                raise LiveClusterError(f"broker {broker}'s log dir {d.path} is {name} "
                                       f"({P.error_name(d.error)}): its replicas' sizes and its disk cannot be read; "
                                       "bring it back or move its replicas first")
            notes.append(f"broker {broker}'s log dir {d.path} is {name}: left out of its disk and sizes")
        here = sum(r.size for r in d.replicas)
        replica_bytes += here
        fixed += sum(r.size for r in d.replicas if r.is_future or not movable(r.topic, r.partition))
        total = d.total_bytes if online and d.total_bytes >= 0 else None
        usable = d.usable_bytes if online and d.usable_bytes >= 0 else None
        dirs.append(LogDirState(d.path, online, None if online else P.error_name(d.error), total, usable, here,
                                len(d.replicas), d.cordoned))
    volumes = online_volumes(answer)
    if not volumes:
        why = f"DescribeLogDirs v{version}" if version < 4 else "DescribeLogDirs"
        notes.append(f"broker {broker} does not say its disk size ({why} carries no total/usable bytes; Kafka 3.3 "
                     "and later do): give its disk_bytes in --capacity")
        total_all = usable_all = None
    else:
        total_all = sum(t for t, _ in volumes)
        usable_all = sum(u for _, u in volumes)
        online = [d for d in dirs if d.online]
        if len(volumes) < len(online):
            notes.append(f"broker {broker}: {len(online)} log dirs on {len(volumes)} volume(s) (dirs reporting the "
                         "same total and usable bytes are counted once)")
    return BrokerDisk(broker, version, dirs, total_all, usable_all, replica_bytes, fixed)


def online_volumes(answer: C.LogDirsAnswer) -> set[tuple[int, int]] | None:
    """One broker's DescribeLogDirs answer: the (total, usable) bytes of the volumes of its online log dirs, each
    volume once (dirs reporting the same pair are taken as one volume); None where an online dir does not say
    (DescribeLogDirs before v4). The one reading of a broker's disk, for ``read_cluster`` and the executor."""
    volumes: set[tuple[int, int]] = set()
    for d in answer.log_dirs:
        if d.error:
            continue
        if d.total_bytes < 0 or d.usable_bytes < 0:
            return None
        volumes.add((d.total_bytes, d.usable_bytes))
    return volumes


def replica_sizes(answers: Mapping[int, C.LogDirsAnswer]) -> dict[TopicPartition, dict[int, int]]:
    """Brokers' DescribeLogDirs answers: (topic, partition) -> broker -> bytes of its current (not future) log, from
    the online log dirs. The one reading of replica sizes, for ``read_cluster`` and the executor."""
    found: dict[TopicPartition, dict[int, int]] = {}
    for broker, answer in answers.items():
        for d in answer.log_dirs:
            if d.error:
                continue
            for r in d.replicas:
                if not r.is_future:
                    found.setdefault((r.topic, r.partition), {})[broker] = r.size
    return found


def _sizes_and_disks(inputs: ClusterInputs, snap: _Snapshot, allow_offline: bool) -> None:
    read = inputs.leaders

    def movable(topic: str, partition: int) -> bool:
        return partition in read.get(topic, ())

    for broker, answer in sorted(snap.answers.items()):
        inputs.disks[broker] = _disk(broker, snap.versions[broker], answer, movable, allow_offline, inputs.notes)
    logs = replica_sizes(snap.answers)
    missing: list[str] = []
    for entry in inputs.current["partitions"]:
        topic, p = entry["topic"], entry["partition"]
        on = logs.get((topic, p), {})
        inputs.replica_sizes[topic][p] = {b: on[b] for b in entry["replicas"] if b in on}
        leader = inputs.leaders[topic][p]
        if leader is not None and leader in on:
            inputs.sizes[topic][p] = on[leader]
        elif on:
            inputs.sizes[topic][p] = max(on.values())
            missing.append(f"{topic}-{p}")
        else:
            inputs.sizes[topic][p] = 0
            missing.append(f"{topic}-{p}")
    if missing:
        inputs.notes.append(f"{len(missing)} partition(s) whose leader's replica no broker described "
                            f"({', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}): size taken from its "
                            "largest replica that was described, 0 where none was")
    versions = {str(b): v for b, v in sorted(snap.versions.items())}
    inputs.sources["sizes"] = {"api": "DescribeLogDirs", "versions": versions,
                               "brokers": sorted(snap.answers), "rule": "a partition's size is its leader's replica's"}
    inputs.sources["disk"] = {"api": "DescribeLogDirs", "told": sorted(b for b, d in inputs.disks.items()
                                                                        if d.total_bytes is not None),
                              "not_told": sorted(b for b, d in inputs.disks.items() if d.total_bytes is None)}


def _wait(window: float, progress: Callable[[float, float], None] | None) -> None:
    start = time.monotonic()
    while True:
        elapsed = time.monotonic() - start
        if progress is not None:
            progress(min(elapsed, window), window)
        if elapsed >= window:
            return
        time.sleep(min(0.25, window - elapsed))


def _rates(inputs: ClusterInputs, first: _Snapshot, second: _Snapshot, asked: float) -> None:
    overall = second.at - first.at
    before, after = replica_sizes(first.answers), replica_sizes(second.answers)
    rates: dict[str, dict[int, float]] = {t: {} for t in inputs.sizes}
    estimated: list[TopicPartition] = []
    for entry in inputs.current["partitions"]:
        key = topic, p = entry["topic"], entry["partition"]
        leader = inputs.leaders[topic][p]
        b0, b1 = before.get(key, {}), after.get(key, {})
        # the same replica at both reads: the first read's leader's, else any replica both reads saw
        holder = leader if leader in b0 and leader in b1 else next((b for b in entry["replicas"]
                                                                    if b in b0 and b in b1), None)
        end0, end1 = first.ends.get(key), second.ends.get(key)
        start0, start1 = first.starts.get(key), second.starts.get(key)
        grown = None if holder is None else b1[holder] - b0[holder]
        # the time between the two answers of the broker whose replica is measured (brokers answer one by one)
        window = second.when[holder] - first.when[holder] if holder is not None else overall
        if end0 is not None and end1 is not None and end1 == end0:
            rates[topic][p] = 0.0  # nothing written: a size change is the cleaner's or retention's
            continue
        shrunk = grown is None or grown < 0 or (start0 is not None and start1 is not None and start1 > start0)
        if not shrunk:
            rates[topic][p] = grown / window
            continue
        size = b1.get(holder, 0) if holder is not None else max(b1.values(), default=0)
        if end0 is not None and end1 is not None and start1 is not None and end1 > start1:
            rates[topic][p] = (end1 - end0) * (size / (end1 - start1)) / window
        else:
            rates[topic][p] = max(0, grown or 0) / window
        estimated.append(key)
    bytes_in = dict.fromkeys(inputs.brokers, 0.0)
    leader_in = dict.fromkeys(inputs.brokers, 0.0)
    out = dict.fromkeys(inputs.brokers, 0.0)
    for entry in inputs.current["partitions"]:
        topic, p, replicas = entry["topic"], entry["partition"], entry["replicas"]
        rate = rates[topic][p]
        for b in replicas:
            bytes_in[b] = bytes_in.get(b, 0.0) + rate
        leader = inputs.leaders[topic][p]
        if leader is not None:
            leader_in[leader] = leader_in.get(leader, 0.0) + rate
            out[leader] = out.get(leader, 0.0) + rate * (len(replicas) - 1)
    inputs.rates, inputs.rates_estimated, inputs.window_s = rates, estimated, overall
    inputs.bytes_in, inputs.leader_bytes_in, inputs.replication_out = bytes_in, leader_in, out
    if estimated:
        inputs.notes.append(f"{len(estimated)} partition(s) lost bytes during the sample (retention or compaction): "
                            "their rate is the offsets written times the log's bytes per offset")
    inputs.sources["rates"] = {"api": ["DescribeLogDirs", "ListOffsets"], "asked_s": asked, "window_s": overall,
                               "rule": "growth of the leader replica's bytes on disk over the measured window",
                               "estimated": len(estimated),
                               "list_offsets": "latest and earliest, from each partition's leader"}


def _capacity(inputs: ClusterInputs, document: Capacity | None) -> None:
    for broker in inputs.brokers:
        given = document.for_broker(broker) if document is not None else BrokerCapacity()
        sources = {f: "file" for f in FIELDS if getattr(given, f) is not None}
        disk = inputs.disks.get(broker)
        if given.disk_bytes is None and disk is not None and disk.total_bytes is not None:
            given = BrokerCapacity(disk.total_bytes, given.network_in_bytes_per_s, given.network_out_bytes_per_s,
                                   given.max_replicas)
            sources["disk_bytes"] = f"DescribeLogDirs v{disk.version} total_bytes"
        inputs.capacity[broker] = given
        inputs.capacity_sources[broker] = sources
    lacking = sorted(b for b, c in inputs.capacity.items() if c.disk_bytes is None)
    if lacking:
        inputs.notes.append(f"no disk capacity for broker(s) {', '.join(map(str, lacking))}: neither the capacity "
                            "document nor DescribeLogDirs gives one")
    inputs.sources["capacity"] = None if document is None else {"file": document.source,
                                                                "brokers": sorted(document.brokers)}


@contextmanager
def rich_progress(description: str = "sampling write rates") -> Iterator[Callable[[float, float], None]]:
    """A ``progress`` callback for :func:`read_cluster` that shows a rich progress bar on the terminal."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed:.0f}/{task.total:.0f} s"),
                  TimeRemainingColumn(), transient=True) as bar:
        task = bar.add_task(description, total=1.0)

        def update(elapsed: float, window: float) -> None:
            bar.update(task, completed=elapsed, total=window)

        yield update
