"""Reading live topics: where to start and stop in each partition, reading a range, committed offsets.

**Planning** (``plan_read``): the metadata names every partition and its leader (all topics are
asked for, so no broker creates a topic for us; an unknown topic is an error that names it).
Each leader is asked, with ListOffsets, for each partition's earliest offset (and for
``since``, the first offset at or after that time), and, with one Fetch of at most one byte
per partition, for its high watermark, last stable offset and log start. The end offset is
the high watermark (``read_committed``: the last stable offset) as Fetch reports it: some
Kafka-compatible brokers answer ListOffsets "latest" wrongly (tansu gives the last batch's
base offset + 1), so its answer is only compared, and a disagreement is reported.

**Reading** (``RangeReader``): one partition from ``start`` to ``end`` (exclusive), fetch by
fetch from its leader, with exact accounting: every offset in the range is either a record
read or a gap with a reason:

- ``control``: a transaction marker (never a record);
- ``aborted``: a record of an aborted transaction (``read_committed`` only);
- ``retention``: deleted before it was read (the log start moved past it meanwhile);
- ``topic deleted``: the topic disappeared while it was read;
- ``truncated``: the log was cut back below the planned end (a leader change lost it);
- ``compacted``: any other offset not in the log (compaction removed it).

Example: offsets 0..9 of a partition hold records at 0-3 and 6-8, a commit marker at 9, and
4-5 were compacted away: read 7, control 1, compacted 2; 7 + 1 + 2 = 10 offsets spanned.

Faults: a leader change or a coordinator move is followed (fresh metadata, bounded retries);
a connection the broker drops is reopened up to ``RECONNECTS`` times in a row; every call has
a deadline (``ClientSettings.request_timeout``). What cannot be read is one
:class:`~kassign.core.errors.LiveClusterError` line.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from kassign.core.errors import LiveClusterError
from kassign.kafka import protocol as P
from kassign.kafka.config import ClientSettings
from kassign.kafka.connection import AuthenticationError, BrokerConnection, BrokerError, ConnectionLost, NotKafka
from kassign.kafka.wire import MalformedResponse

if TYPE_CHECKING:
    from kassign.kafka.records import Decoded

RECONNECTS = 3  # a dropped connection is reopened this many times in a row before giving up
RETRIES = 8  # leader changes and other retriable errors, per fetch
GAP_REASONS = ("control", "aborted", "retention", "topic deleted", "truncated", "compacted")


# -- addresses and time ---------------------------------------------------------------------------------------------

def parse_bootstrap(text: str) -> list[tuple[str, int]]:
    """``"host:port,host:port"`` (``[v6]:port`` too) -> addresses, with a one-line error for a bad one."""
    if not isinstance(text, str) or not text.strip():
        raise LiveClusterError("--bootstrap-server needs HOST:PORT[,HOST:PORT...]")
    addresses = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        part = re.sub(r"^[A-Za-z_]+://", "", part)  # PLAINTEXT://host:9092 as Kafka's listeners write it
        match = re.fullmatch(r"\[([^\]]+)\]:(\d+)|([^:\s/]+):(\d+)", part)
        if match is None:
            raise LiveClusterError(f"bootstrap server {part!r} is not HOST:PORT")
        host = match.group(1) or match.group(3)
        port = int(match.group(2) or match.group(4))
        if not 0 < port < 65536:
            raise LiveClusterError(f"bootstrap server {part!r}: port must be 1-65535")
        addresses.append((host, port))
    if not addresses:
        raise LiveClusterError("--bootstrap-server needs HOST:PORT[,HOST:PORT...]")
    return addresses


def parse_since(value: str | int | float | datetime) -> int:
    """A time as epoch milliseconds: ISO-8601 (a zone-less one is UTC) or epoch milliseconds."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return int(moment.timestamp() * 1000)
    if isinstance(value, bool):
        raise LiveClusterError(f"--since must be ISO-8601 or epoch milliseconds, got {value!r}")
    if isinstance(value, (int, float)):
        millis = int(value)
    else:
        text = str(value).strip()
        if re.fullmatch(r"-?\d+", text):
            millis = int(text)
        else:
            try:
                moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
            except ValueError:
                raise LiveClusterError(f"--since {text!r} is neither ISO-8601 (2026-11-25T08:00:00Z) nor epoch "
                                       "milliseconds") from None
            return parse_since(moment)
    if not 0 <= millis < 2**63:
        raise LiveClusterError(f"--since must be a time after 1970, got {value!r}")
    return millis


# -- the cluster ------------------------------------------------------------------------------------------------

class Cluster:
    """Connections to one cluster's brokers, found through the bootstrap servers; closed with ``close()``."""

    def __init__(self, bootstrap: str, settings: ClientSettings | None = None) -> None:
        self.bootstrap = bootstrap
        self.addresses = parse_bootstrap(bootstrap)
        self.settings = settings or ClientSettings()
        self._connections: dict[Any, BrokerConnection] = {}
        self._metadata: P.Metadata | None = None

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    def deadline(self) -> float:
        return time.monotonic() + self.settings.request_timeout

    def _open(self, key: Any, host: str, port: int, deadline: float) -> BrokerConnection:
        connection = self._connections.get(key)
        if connection is not None and connection._sock is not None:
            return connection
        connection = BrokerConnection(host, port, self.settings, deadline)
        self._connections[key] = connection
        return connection

    def forget(self, key: Any) -> None:
        connection = self._connections.pop(key, None)
        if connection is not None:
            connection.close()

    def call(self, key: Any, host: str, port: int, request: Any, *args: Any) -> Any:
        """``request(connection, *args, deadline)`` on the connection ``key``, opened if needed, reopened
        (up to ``RECONNECTS`` times) when the broker drops it."""
        lost = 0
        while True:
            deadline = self.deadline()
            try:
                connection = self._open(key, host, port, deadline)
                return request(connection, *args, deadline)
            except ConnectionLost as err:
                self.forget(key)
                lost += 1
                if lost > RECONNECTS:
                    raise BrokerError(f"{err} ({lost} times in a row; giving up)") from None
                time.sleep(min(0.1 * 2 ** lost, 1.0))
            except MalformedResponse as err:
                self.forget(key)
                raise NotKafka(f"{host}:{port} sent a malformed response: {err}") from None
            except BrokerError:
                self.forget(key)
                raise

    def metadata(self, refresh: bool = False) -> P.Metadata:
        """The cluster's metadata from the first bootstrap server that answers (retried to the deadline)."""
        if self._metadata is not None and not refresh:
            return self._metadata
        deadline = self.deadline()
        errors: list[str] = []
        closed_early = 0
        gave_up = 0  # rounds in which RECONNECTS + 1 fresh connections in a row were closed
        attempt = 0
        while True:
            for host, port in self.addresses:
                try:
                    self._metadata = self.call(("bootstrap", host, port), host, port, P.metadata)
                    return self._metadata
                except AuthenticationError:
                    raise
                except NotKafka as err:  # an answer no retry will change
                    raise LiveClusterError(f"cannot read metadata from {self.bootstrap}: {err}") from None
                except BrokerError as err:
                    errors.append(str(err))
                    if "closed the connection" in str(err) or "dropped the connection" in str(err):
                        closed_early += 1
                        gave_up += "giving up" in str(err)
            attempt += 1
            plain = not self.settings.uses_sasl and not self.settings.uses_tls
            last_try = time.monotonic() + 0.1 * 2 ** attempt > deadline or attempt >= 4
            # every connection closed at once (each failure here is already RECONNECTS + 1 connections):
            # the hint, however short request.timeout.ms leaves the retries
            # RECONNECTS + 1 fresh connections in a row closed at their first request: no need for more rounds
            all_closed = closed_early >= 2 or gave_up >= 1 or (last_try and closed_early == len(errors))
            if plain and all_closed:
                raise LiveClusterError(f"{self.bootstrap} closed every connection right after accepting it: the "
                                       "cluster may require authentication or TLS (put security settings in "
                                       "--command-config)")
            if all_closed and self.settings.uses_tls and not self.settings.uses_sasl \
                    and not self.settings.ssl_certificate:
                raise LiveClusterError(f"{self.bootstrap} closed every TLS connection right after the handshake: the "
                                       "cluster may require a client certificate (ssl.keystore.location) or SASL "
                                       "(security.protocol=SASL_SSL)")
            if last_try:
                raise LiveClusterError(f"cannot read metadata from {self.bootstrap}: {errors[-1]}")
            time.sleep(0.1 * 2 ** attempt)

    def leader_call(self, node: int, request: Any, *args: Any) -> Any:
        broker = self.metadata().brokers.get(node)
        if broker is None:
            broker = self.metadata(refresh=True).brokers.get(node)
        if broker is None:
            raise BrokerError(f"broker {node} is not in {self.bootstrap}'s metadata")
        return self.call(("node", node), broker.host, broker.port, request, *args)

    def topics(self, names: Iterable[str]) -> dict[str, P.TopicMetadata]:
        """The named topics' metadata; unknown ones are one error that names them all."""
        wanted = list(dict.fromkeys(names))
        if not wanted:
            raise LiveClusterError("name at least one topic to read")
        meta = self.metadata()
        missing = [t for t in wanted if t not in meta.topics or meta.topics[t].error == P.UNKNOWN_TOPIC_OR_PARTITION]
        if missing:
            raise LiveClusterError(f"unknown topic{'s' if len(missing) > 1 else ''} on {self.bootstrap}: "
                                   f"{', '.join(missing)}")
        refused = [t for t in wanted if meta.topics[t].error in P.AUTHORIZATION]
        if refused:
            raise LiveClusterError(f"not authorized to describe topic {', '.join(refused)} on {self.bootstrap}")
        broken = [(t, meta.topics[t].error) for t in wanted if meta.topics[t].error not in (0, *P.RETRIABLE)]
        if broken:
            topic, code = broken[0]
            raise LiveClusterError(f"topic {topic} on {self.bootstrap}: {P.error_name(code)}")
        return {t: meta.topics[t] for t in wanted}

    def leaders(self, topic: P.TopicMetadata) -> dict[int, int]:
        """Partition -> leader node, waiting (to the deadline) for partitions without a leader."""
        deadline = self.deadline()
        while True:
            leaders = {p: m.leader for p, m in topic.partitions.items()}
            if all(node >= 0 for node in leaders.values()):
                return leaders
            if time.monotonic() > deadline:
                lost = sorted(p for p, node in leaders.items() if node < 0)
                raise LiveClusterError(f"topic {topic.name}: partition {lost[0]} has no leader")
            time.sleep(0.2)
            topic = self.metadata(refresh=True).topics.get(topic.name, topic)


# -- planning ---------------------------------------------------------------------------------------------------

@dataclass
class PartitionPlan:
    partition: int
    leader: int
    log_start: int
    high_watermark: int
    stable: int
    listed_latest: int | None  # ListOffsets "latest" (None if it was not answered)
    start: int
    end: int


@dataclass
class TopicPlan:
    name: str
    partitions: list[PartitionPlan]

    @property
    def count(self) -> int:
        return len(self.partitions)


@dataclass
class ReadPlan:
    bootstrap: str
    isolation: int
    topics: dict[str, TopicPlan]
    notes: list[str] = field(default_factory=list)

    def ranges(self) -> Iterator[tuple[str, PartitionPlan]]:
        for name, topic in self.topics.items():
            for part in topic.partitions:
                yield name, part

    def to_json(self) -> dict[str, Any]:
        return {"bootstrap": self.bootstrap, "isolation": self.isolation, "notes": self.notes,
                "topics": {name: [vars(p) for p in t.partitions] for name, t in self.topics.items()}}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ReadPlan:
        return cls(doc["bootstrap"], int(doc["isolation"]),
                   {name: TopicPlan(name, [PartitionPlan(**p) for p in parts]) for name, parts in doc["topics"].items()},
                   list(doc.get("notes", [])))


def _by_leader(leaders: Mapping[int, int]) -> dict[int, list[int]]:
    grouped: dict[int, list[int]] = {}
    for partition, node in sorted(leaders.items()):
        grouped.setdefault(node, []).append(partition)
    return grouped


def _offsets(cluster: Cluster, node: int, topic: str, partitions: Sequence[int], timestamp: int,
             isolation: int) -> dict[int, P.OffsetAnswer]:
    answers = cluster.leader_call(node, P.list_offsets, {topic: {p: timestamp for p in partitions}}, isolation)
    result = {}
    for p in partitions:
        answer = answers.get((topic, p))
        if answer is None:
            raise BrokerError(f"broker {node} left {topic}-{p} out of its ListOffsets answer")
        result[p] = answer
    return result


def _check(answer_error: int, topic: str, partition: int, what: str) -> None:
    if answer_error in P.AUTHORIZATION:
        raise LiveClusterError(f"not authorized to read topic {topic}")
    if answer_error:
        raise _Retry(f"{what} for {topic}-{partition}: {P.error_name(answer_error)}")


class _Retry(Exception):
    """A retriable answer during planning."""


def _plan_topic(cluster: Cluster, meta: P.TopicMetadata, since_ms: int | None, last: int | None,
                isolation: int, notes: list[str]) -> TopicPlan:
    parts: list[PartitionPlan] = []
    for node, partitions in _by_leader(cluster.leaders(meta)).items():
        earliest = _offsets(cluster, node, meta.name, partitions, P.EARLIEST, isolation)
        latest = _offsets(cluster, node, meta.name, partitions, P.LATEST, isolation)
        at_time = _offsets(cluster, node, meta.name, partitions, since_ms, isolation) if since_ms is not None else {}
        for p in partitions:
            _check(earliest[p].error, meta.name, p, "ListOffsets earliest")
        probe = cluster.leader_call(node, P.fetch, meta.name, [(p, earliest[p].offset) for p in partitions],
                                    isolation, 1, 1)
        for p in partitions:
            fetched = probe.get(p)
            if fetched is None:
                raise BrokerError(f"broker {node} left {meta.name}-{p} out of its Fetch answer")
            _check(fetched.error if fetched.error != P.OFFSET_OUT_OF_RANGE else 0, meta.name, p, "Fetch")
            listed = latest[p].offset if latest[p].error == 0 else None
            log_start = earliest[p].offset
            if fetched.error == P.OFFSET_OUT_OF_RANGE or fetched.high_watermark < 0:
                raise _Retry(f"{meta.name}-{p} changed while it was being planned")
            end = fetched.last_stable_offset if isolation and fetched.last_stable_offset >= 0 else fetched.high_watermark
            if fetched.log_start_offset >= 0:
                log_start = max(log_start, fetched.log_start_offset)
            start = log_start
            if since_ms is not None:
                found = at_time[p]
                _check(found.error, meta.name, p, "ListOffsets by time")
                # nothing at or after that time: Kafka answers offset -1; tansu answers offset 0 with
                # timestamp -1 (a record found has the timestamp it was found by, never -1)
                start = end if found.offset < 0 or found.timestamp < 0 else max(log_start, found.offset)
            if last is not None:
                start = max(start, end - last)
            start = min(start, end)
            parts.append(PartitionPlan(p, node, log_start, fetched.high_watermark, fetched.last_stable_offset,
                                       listed, start, end))
    parts.sort(key=lambda x: x.partition)
    disagree = [x for x in parts if x.listed_latest is not None and x.listed_latest != x.end]
    if disagree:
        x = disagree[0]
        what = "last stable offset" if isolation else "high watermark"
        notes.append(f"{meta.name}: ListOffsets 'latest' disagrees with Fetch's {what} on {len(disagree)} of "
                     f"{len(parts)} partitions (partition {x.partition}: {x.listed_latest} against {x.end}); "
                     f"end offsets are Fetch's {what}")
    return TopicPlan(meta.name, parts)


def plan_read(cluster: Cluster, topics: Sequence[str], since: Any = None, last: int | None = None) -> ReadPlan:
    """Where to start and stop reading each partition of ``topics`` (see the module docstring)."""
    if since is not None and last is not None:
        raise LiveClusterError("give --since or --last, not both")
    if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 1):
        raise LiveClusterError(f"--last must be a whole number >= 1, got {last!r}")
    since_ms = parse_since(since) if since is not None else None
    isolation = cluster.settings.isolation_level
    for attempt in range(RETRIES):
        notes: list[str] = []
        try:
            metas = cluster.topics(topics)
            plans = {name: _plan_topic(cluster, meta, since_ms, last, isolation, notes) for name, meta in metas.items()}
            what = "last stable offset" if isolation else "high watermark"
            notes.insert(0, f"end offsets: each partition's {what} from Fetch when reading started")
            return ReadPlan(cluster.bootstrap, isolation, plans, notes)
        except _Retry as err:
            if attempt == RETRIES - 1:
                raise LiveClusterError(f"cannot plan the read: {err}") from None
            time.sleep(min(0.1 * 2 ** attempt, 2.0))
            cluster.metadata(refresh=True)
    raise AssertionError("unreachable")


# -- reading one range ------------------------------------------------------------------------------------------

@dataclass
class Accounting:
    """What became of every offset of a range."""

    spanned: int = 0
    read: int = 0
    gaps: dict[str, int] = field(default_factory=dict)

    def add_gap(self, reason: str, count: int) -> None:
        if count > 0:
            self.gaps[reason] = self.gaps.get(reason, 0) + count


class RangeReader:
    """Reads ``topic``-``partition`` from ``start`` to ``end`` (exclusive) as decoded answers.

    Iterate it for :class:`~kassign.kafka.records.Decoded` parts (records only, in offset order);
    afterwards ``accounting`` says what became of every offset."""

    def __init__(self, cluster: Cluster, topic: str, partition: int, start: int, end: int,
                 leader: int | None = None) -> None:
        self.cluster, self.topic, self.partition = cluster, topic, partition
        self.start, self.end = start, end
        self.leader = leader
        self.accounting = Accounting(spanned=max(0, end - start))
        self.where = f" in {topic}-{partition}"

    def _leader(self, refresh: bool) -> int:
        if self.leader is not None and not refresh:
            return self.leader
        meta = self.cluster.metadata(refresh=refresh).topics.get(self.topic)
        if meta is None or meta.error == P.UNKNOWN_TOPIC_OR_PARTITION or self.partition not in meta.partitions:
            raise _TopicGone()
        self.leader = meta.partitions[self.partition].leader
        return self.leader

    def __iter__(self) -> Iterator[Decoded]:
        # the record decoders (numba kernels) load with the first read, not with every use of the client
        from kassign.kafka.fetched import decode
        from kassign.kafka.records import CorruptBatch

        offset = self.start
        settings = self.cluster.settings
        partition_bytes = settings.partition_fetch_bytes
        retries = 0
        refresh = False
        while offset < self.end:
            try:
                node = self._leader(refresh)
            except _TopicGone:
                self.accounting.add_gap("topic deleted", self.end - offset)
                return
            refresh = False
            if node < 0:
                retries = self._backoff(retries, "has no leader")
                refresh = True
                continue
            answer = self.cluster.leader_call(node, P.fetch, self.topic, [(self.partition, offset)],
                                              settings.isolation_level, settings.fetch_max_bytes, partition_bytes)
            fetched = answer.get(self.partition)
            if fetched is None:
                retries = self._backoff(retries, f"was left out of broker {node}'s answer")
                continue
            if fetched.error == P.OFFSET_OUT_OF_RANGE:
                offset = self._out_of_range(node, offset)
                continue
            if fetched.error in (P.UNKNOWN_TOPIC_OR_PARTITION, P.UNKNOWN_TOPIC_ID):
                refresh = True
                retries = self._backoff(retries, "is unknown to its leader")
                continue
            if fetched.error in P.AUTHORIZATION:
                raise LiveClusterError(f"not authorized to read topic {self.topic}")
            if fetched.error in P.RETRIABLE:
                refresh = True
                retries = self._backoff(retries, P.error_name(fetched.error))
                continue
            if fetched.error:
                raise LiveClusterError(f"cannot read {self.topic}-{self.partition} at offset {offset}: "
                                       f"{P.error_name(fetched.error)}")
            try:
                decoded = decode(fetched.records, offset, self.end, bool(settings.isolation_level),
                                 fetched.aborted, self.where)
            except CorruptBatch as err:
                raise LiveClusterError(str(err)) from None
            if decoded.next_offset is None:
                if fetched.records:  # one batch bigger than the fetch size: ask for more
                    if partition_bytes >= 1 << 30:
                        raise LiveClusterError(f"a record batch at offset {offset}{self.where} is over 1 GiB")
                    partition_bytes *= 4
                    continue
                limit = fetched.last_stable_offset if settings.isolation_level else fetched.high_watermark
                if 0 <= limit <= offset:
                    self.accounting.add_gap(self._cut_reason(), self.end - offset)
                    return
                retries = self._backoff(retries, f"returned nothing at offset {offset} below its end {limit}")
                continue
            if decoded.next_offset <= offset:
                retries = self._backoff(retries, f"answered offset {offset} with records before it only")
                continue
            retries = 0
            self.accounting.read += len(decoded)
            self.accounting.add_gap("control", decoded.control)
            self.accounting.add_gap("aborted", decoded.aborted)
            if len(decoded):
                yield decoded
            offset = decoded.next_offset
        gaps = sum(self.accounting.gaps.values())
        self.accounting.add_gap("compacted", self.accounting.spanned - self.accounting.read - gaps)

    def _backoff(self, retries: int, why: str) -> int:
        if retries >= RETRIES:
            raise LiveClusterError(f"cannot read {self.topic}-{self.partition}: it {why} ({retries} retries)")
        time.sleep(min(0.05 * 2 ** retries, 2.0))
        return retries + 1

    def _out_of_range(self, node: int, offset: int) -> int:
        """The log no longer holds ``offset``: skip to its new start (counting the gap) or stop."""
        answers = self.cluster.leader_call(node, P.list_offsets, {self.topic: {self.partition: P.EARLIEST}},
                                           self.cluster.settings.isolation_level)
        answer = answers.get((self.topic, self.partition))
        if answer is None or answer.error:
            raise LiveClusterError(f"{self.topic}-{self.partition}: offset {offset} is out of range and the log "
                                   "start cannot be read")
        if answer.offset > offset:
            skipped = min(answer.offset, self.end) - offset
            self.accounting.add_gap("retention", skipped)
            return offset + skipped
        self.accounting.add_gap(self._cut_reason(), self.end - offset)
        return self.end

    def _cut_reason(self) -> str:
        """Why the log ends below the planned end: "topic deleted" if the topic has left the metadata
        (tansu answers a Fetch for a deleted topic as an empty partition, with no error), else "truncated"."""
        try:
            self._leader(refresh=True)
        except _TopicGone:
            return "topic deleted"
        return "truncated"


class _TopicGone(Exception):
    pass


# -- committed offsets -------------------------------------------------------------------------------------------

def _ask_coordinator(cluster: Cluster, group: str, request: Any, *args: Any) -> Any:
    """``request(connection, *args, deadline)`` on ``group``'s coordinator (found with FindCoordinator, followed
    when it moves: ``request`` returns None to say "ask again")."""
    if not isinstance(group, str) or not group:
        raise LiveClusterError("--group needs a consumer group id")
    for attempt in range(RETRIES):
        host, port = cluster.addresses[0]
        error, node, chost, cport = cluster.call(("bootstrap", host, port), host, port, P.find_coordinator, group)
        if error in P.AUTHORIZATION:
            raise LiveClusterError(f"not authorized to read consumer group {group}")
        if error in P.RETRIABLE:
            time.sleep(min(0.1 * 2 ** attempt, 2.0))
            continue
        if error:
            raise LiveClusterError(f"cannot find consumer group {group}'s coordinator: {P.error_name(error)}")
        answer = cluster.call(("coordinator", node), chost, cport, request, *args)
        if answer is not None:
            return answer
        cluster.forget(("coordinator", node))
        time.sleep(min(0.1 * 2 ** attempt, 2.0))
    raise LiveClusterError(f"consumer group {group}'s coordinator kept moving ({RETRIES} tries)")


def committed_offsets(cluster: Cluster, group: str, partitions: Mapping[str, int]) -> dict[str, list[int | None]]:
    """``group``'s committed offset of every partition of ``partitions`` (topic -> count); None where
    it has none. The group's coordinator is found with FindCoordinator and followed when it moves."""
    wanted = {t: list(range(n)) for t, n in partitions.items()}

    def fetch(connection: BrokerConnection, deadline: float) -> dict[str, list[int | None]] | None:
        group_error, found = P.offset_fetch(connection, group, wanted, deadline)
        if group_error in P.RETRIABLE or any(e in P.RETRIABLE for _, e in found.values()):
            return None
        if group_error in P.AUTHORIZATION or any(e in P.AUTHORIZATION for _, e in found.values()):
            raise LiveClusterError(f"not authorized to read consumer group {group}'s offsets")
        if group_error and group_error != 69:
            raise LiveClusterError(f"cannot read consumer group {group}'s offsets: {P.error_name(group_error)}")
        offsets = {key: offset for key, (offset, _) in found.items()}
        return {t: [offsets[(t, p)] if offsets.get((t, p), -1) >= 0 else None for p in range(n)]
                for t, n in partitions.items()}

    return _ask_coordinator(cluster, group, fetch)


def describe_group(cluster: Cluster, group: str) -> P.GroupDescription | None:
    """``group`` as its coordinator describes it (classic groups), or None where the broker cannot say
    (no DescribeGroups, or a group of Kafka 4's consumer protocol)."""

    def describe(connection: BrokerConnection, deadline: float) -> P.GroupDescription | None | bool:
        try:
            found = P.describe_groups(connection, [group], deadline).get(group)
        except BrokerError as err:
            if "speaks DescribeGroups" in str(err):
                return False
            raise
        if found is None:
            return False
        if found.error in P.RETRIABLE:
            return None
        if found.error in P.AUTHORIZATION:
            raise LiveClusterError(f"not authorized to describe consumer group {group}")
        return found if found.error == 0 else False

    answer = _ask_coordinator(cluster, group, describe)
    return answer or None
