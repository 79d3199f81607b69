"""A live group of any kind a Kafka 4 broker keeps, described as plain data.

The rule (the manual: group-types.md, "Every group type, live"; the JSON in outputs.md):

1. The group's coordinator is found with FindCoordinator (key type 0, a group: every kind of group
   has one), asked on the bootstrap servers, and followed when it moves (NOT_COORDINATOR and the
   other coordinator errors: ask again, at most ``RETRIES`` times, within the deadline).
2. The coordinator lists the groups it holds (ListGroups; v5 says each group's type: classic,
   consumer, share or streams). A group it does not list does not exist. Without v5 the type is
   inferred: a protocol type of "share" or "streams" names it; otherwise ConsumerGroupDescribe
   (where spoken) tells a KIP-848 group from a classic one. A broker that speaks neither
   ListGroups nor any describing API cannot tell: that is :class:`GroupApiUnsupported`, never
   "the group does not exist".
3. The type's own API describes it: DescribeGroups (classic; the members' Subscription and
   Assignment bytes decoded where the protocol type is "consumer"), ConsumerGroupDescribe,
   ShareGroupDescribe or StreamsGroupDescribe. A broker that lists the type but does not speak its
   API is :class:`GroupApiUnsupported` too.

Example: a KIP-848 group "orders-app" of two members on topic "orders" (4 partitions) describes as
``GroupDescription(id="orders-app", type="consumer", state="Stable", assignor="uniform", epoch=3,
members={"Mbr1...": GroupMember(client_id="c1", host="/10.0.0.5", topics=["orders"],
assignment=[("orders", 0), ("orders", 1)], target=[("orders", 0), ("orders", 1)], member_epoch=3, ...),
...}, topic_ids={"orders": "zlHH1P2WR-GsRZQpv0_Hxw"}, ...)``; ``to_json()`` gives the ``group`` object of
``describe-group --json`` and summary.json.

Where kassign differs from Kafka's AdminClient: it asks ListGroups of the coordinator only (the
AdminClient asks every broker), since the coordinator is the broker that holds the group; and a
classic group answered as "Dead" by DescribeGroups before v6 is a group that does not exist, as the
AdminClient reads it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kassign.core.errors import KassignError, LiveClusterError
from kassign.kafka import groups_protocol as G
from kassign.kafka import protocol as P
from kassign.kafka import topics_protocol as TP
from kassign.kafka.client import RETRIES, Cluster
from kassign.kafka.config import ClientSettings
from kassign.kafka.connection import (API_API_VERSIONS, API_CONSUMER_GROUP_DESCRIBE, API_DESCRIBE_GROUPS,
                                      API_DESCRIBE_SHARE_GROUP_OFFSETS, API_FIND_COORDINATOR, API_LIST_GROUPS,
                                      API_METADATA, API_OFFSET_FETCH, API_SHARE_GROUP_DESCRIBE,
                                      API_STREAMS_GROUP_DESCRIBE,
                                      BrokerConnection)

T = TypeVar("T")

GROUP_TYPES = ("classic", "consumer", "share", "streams")
DESCRIBE_API = {"classic": API_DESCRIBE_GROUPS, "consumer": API_CONSUMER_GROUP_DESCRIBE,
                "share": API_SHARE_GROUP_DESCRIBE, "streams": API_STREAMS_GROUP_DESCRIBE}
GROUP_ID_NOT_FOUND, COORDINATOR_ERRORS = 69, {14, 15, 16}
_MORE_ERRORS = {42: "INVALID_REQUEST", 58: "SASL_AUTHENTICATION_FAILED", 87: "UNSUPPORTED_VERSION"}


class GroupNotFound(LiveClusterError):
    """The group does not exist (its coordinator does not hold it)."""


class GroupApiUnsupported(LiveClusterError):
    """The broker does not speak an API that describing this group needs (it says nothing about the group)."""


def _error_name(code: int) -> str:
    return _MORE_ERRORS.get(code) or P.error_name(code)


# -- the answer ---------------------------------------------------------------------------------------------------

Partitions = list[tuple[str, int]]
TaskMap = dict[str, dict[str, list[int]]]  # {"active": {subtopology: [partitions]}, "standby": ..., "warmup": ...}


@dataclass
class GroupMember:
    """One member. ``assignment``/``target`` are sorted (topic, partition) pairs, or for a streams
    group task maps ``{"active"|"standby"|"warmup": {subtopology: [partitions]}}``. Fields that a
    group type does not have are None."""

    member_id: str
    client_id: str
    host: str
    instance_id: str | None
    rack: str | None
    topics: list[str]  # subscribed topic names (streams: the topology's source topics)
    assignment: Partitions | TaskMap  # what it holds now
    target: Partitions | TaskMap  # what the coordinator's assignor gave it (classic, share: the assignment)
    member_epoch: int | None = None  # consumer, share, streams
    subscribed_regex: str | None = None  # consumer
    member_type: str | None = None  # consumer v1+: "classic" (a classic-protocol member) or "consumer"
    owned: Partitions | None = None  # classic, consumer protocol: the partitions its Subscription says it owns
    generation: int | None = None  # classic, consumer protocol: its Subscription's generation (v2+), else None
    process_id: str | None = None  # streams
    client_tags: dict[str, str] | None = None  # streams
    topology_epoch: int | None = None  # streams
    endpoint: tuple[str, int] | None = None  # streams: the application's user endpoint
    is_classic: bool | None = None  # streams
    task_offsets: dict[str, int] | None = None  # streams: task "SUBTOPOLOGY_PARTITION" -> the offset sum it reported

    _EXTRAS = ("member_epoch", "subscribed_regex", "member_type", "owned", "generation", "process_id",
               "client_tags", "topology_epoch", "endpoint", "is_classic", "task_offsets")

    def to_json(self) -> dict[str, Any]:
        """The ``group`` object's member (client_id, host, instance_id, rack, topics, assignment, target) plus the
        type's own fields that are set."""
        def plain(value: Any) -> Any:
            if isinstance(value, list) and value and isinstance(value[0], tuple):
                return [list(x) for x in value]
            return list(value) if isinstance(value, tuple) else value

        doc: dict[str, Any] = {"client_id": self.client_id, "host": self.host, "instance_id": self.instance_id,
                               "rack": self.rack, "topics": list(self.topics),
                               "assignment": plain(self.assignment), "target": plain(self.target)}
        for name in self._EXTRAS:
            value = getattr(self, name)
            if value is not None:
                doc[name] = plain(value)
        return doc


@dataclass
class GroupDescription:
    id: str
    type: str  # "classic", "consumer", "share" or "streams"
    state: str  # as the coordinator names it ("Stable", "Empty", "Reconciling", "PreparingRebalance"...)
    assignor: str | None  # classic: the chosen protocol; consumer, share: the assignor; streams: None (not sent)
    epoch: int | None  # the group epoch; classic: None (DescribeGroups has no generation)
    members: dict[str, GroupMember]  # in the coordinator's order
    topic_ids: dict[str, str] = field(default_factory=dict)  # consumer, share: name -> Uuid (22 characters)
    assignment_epoch: int | None = None  # the target assignment's epoch (consumer, share, streams)
    protocol_type: str | None = None  # classic: "consumer", "connect"...
    topology: dict[str, Any] | None = None  # streams: {"epoch": N, "subtopologies": {id: {...}}}
    coordinator: int = -1  # the coordinator's node id
    notes: list[str] = field(default_factory=list)  # what the broker did that Kafka would not (one line each)

    def to_json(self) -> dict[str, Any]:
        """The ``group`` object of ``describe-group --json`` and summary.json: ``id``, ``type``, ``state``,
        ``assignor``, ``epoch``, ``members``, and ``topic_ids``, ``assignment_epoch``, ``protocol_type``, ``topology``,
        ``coordinator`` and ``notes`` where the type has them."""
        doc: dict[str, Any] = {"id": self.id, "type": self.type, "state": self.state, "assignor": self.assignor,
                               "epoch": self.epoch,
                               "members": {m: member.to_json() for m, member in self.members.items()}}
        if self.type in ("consumer", "share"):
            doc["topic_ids"] = dict(self.topic_ids)
        for name in ("assignment_epoch", "protocol_type", "topology"):
            if getattr(self, name) is not None:
                doc[name] = getattr(self, name)
        doc["coordinator"] = self.coordinator
        if self.notes:
            doc["notes"] = list(self.notes)
        return doc


# -- conversions from the answers ---------------------------------------------------------------------------------

def _pairs(topics: Iterable[G.TopicPartitions], ids: dict[str, str]) -> Partitions:
    out = []
    for t in topics:
        if t.topic:
            ids.setdefault(t.topic, t.topic_id)
        out.extend((t.topic, p) for p in t.partitions)
    return sorted(out)


def _member_type(code: int) -> str | None:
    return {0: "classic", 1: "consumer"}.get(code)


def from_consumer_group(group: G.ConsumerGroup, coordinator: int = -1) -> GroupDescription:
    ids: dict[str, str] = {}
    members = {}
    for m in group.members:
        assignment, target = _pairs(m.assignment, ids), _pairs(m.target, ids)
        members[m.member_id] = GroupMember(m.member_id, m.client_id, m.host, m.instance_id, m.rack, list(m.topics),
                                           assignment, target, member_epoch=m.member_epoch,
                                           subscribed_regex=m.regex or None, member_type=_member_type(m.member_type))
    return GroupDescription(group.group_id, "consumer", group.state, group.assignor, group.epoch, members, ids,
                            group.assignment_epoch, coordinator=coordinator)


def from_share_group(group: G.ShareGroup, coordinator: int = -1) -> GroupDescription:
    ids: dict[str, str] = {}
    members = {}
    for m in group.members:
        assignment = _pairs(m.assignment, ids)
        members[m.member_id] = GroupMember(m.member_id, m.client_id, m.host, None, m.rack, list(m.topics),
                                           assignment, list(assignment), member_epoch=m.member_epoch)
    return GroupDescription(group.group_id, "share", group.state, group.assignor, group.epoch, members, ids,
                            group.assignment_epoch, coordinator=coordinator)


def _task_map(tasks: G.Tasks) -> TaskMap:
    def one(kind: Mapping[str, list[int]]) -> dict[str, list[int]]:
        return {sid: sorted(parts) for sid, parts in sorted(kind.items()) if parts}

    return {"active": one(tasks.active), "standby": one(tasks.standby), "warmup": one(tasks.warmup)}


def _topology(topology: G.Topology | None) -> dict[str, Any] | None:
    if topology is None:
        return None

    def infos(items: list[G.TopicInfo]) -> dict[str, Any]:
        return {t.name: {"partitions": t.partitions, "replication_factor": t.replication_factor,
                         "configs": dict(t.configs)} for t in items}

    subs = {s.id: {"source_topics": list(s.source_topics), "repartition_sink_topics": list(s.repartition_sink_topics),
                   "state_changelog_topics": infos(s.state_changelog_topics),
                   "repartition_source_topics": infos(s.repartition_source_topics)}
            for s in topology.subtopologies or []}
    return {"epoch": topology.epoch, "subtopologies": subs}


def from_streams_group(group: G.StreamsGroup, coordinator: int = -1) -> GroupDescription:
    shape = _topology(group.topology)
    sources = sorted({t for s in (shape or {}).get("subtopologies", {}).values() for t in s["source_topics"]})
    members = {}
    for m in group.members:
        members[m.member_id] = GroupMember(
            m.member_id, m.client_id, m.host, m.instance_id, m.rack, list(sources), _task_map(m.assignment),
            _task_map(m.target), member_epoch=m.member_epoch, process_id=m.process_id,
            client_tags=dict(m.client_tags), topology_epoch=m.topology_epoch, endpoint=m.endpoint,
            is_classic=m.is_classic,
            task_offsets={f"{sid}_{p}": offset for sid, p, offset in m.task_offsets} or None)
    return GroupDescription(group.group_id, "streams", group.state, None, group.epoch, members, {},
                            group.assignment_epoch, topology=shape, coordinator=coordinator)


def from_classic_group(group: G.ClassicGroup, coordinator: int = -1) -> GroupDescription:
    """A classic group; the consumer protocol's member bytes decoded with ``kassign.groups.classic.protocol.wire``."""
    from kassign.groups.classic.protocol.wire import decode_assignment, decode_subscription

    members = {}
    for m in group.members:
        member = GroupMember(m.member_id, m.client_id, m.host, m.instance_id, None, [], [], [])
        if group.protocol_type == "consumer":
            try:
                if m.metadata:
                    sub = decode_subscription(m.metadata, m.instance_id)
                    member.topics, member.rack = list(sub.topics), sub.rack
                    member.owned = sorted((tp.topic, tp.partition) for tp in sub.owned_partitions)
                    member.generation = sub.generation if sub.generation >= 0 else None
                if m.assignment:
                    held = sorted((tp.topic, tp.partition) for tp in decode_assignment(m.assignment).partitions)
                    member.assignment, member.target = held, list(held)
            except KassignError as err:
                raise LiveClusterError(f"classic group {group.group_id}: member {m.member_id}'s consumer-protocol "
                                       f"bytes do not decode: {err}") from None
        members[m.member_id] = member
    described = GroupDescription(group.group_id, "classic", group.state, group.protocol or None, None, members,
                                 protocol_type=group.protocol_type, coordinator=coordinator)
    if group.protocol_type == "consumer" and group.state == "Stable" and group.members \
            and not any(m.metadata or m.assignment for m in group.members):
        described.notes.append("the coordinator sent no member subscriptions or assignments (Kafka sends both for "
                               "a Stable group): members' topics and assignments are unknown")
    return described


# -- talking to the cluster ---------------------------------------------------------------------------------------

def _cluster(cluster_or_bootstrap: Cluster | str, settings: ClientSettings | None) -> tuple[Cluster, bool]:
    if isinstance(cluster_or_bootstrap, Cluster):
        return cluster_or_bootstrap, False
    return Cluster(cluster_or_bootstrap, settings), True


class _Session:
    """One describe: a cluster, a group, an overall deadline, and the coordinator as last found."""

    def __init__(self, cluster: Cluster, group: str, deadline: float | None) -> None:
        if not isinstance(group, str) or not group:
            raise LiveClusterError("a group id is needed (a non-empty string)")
        self.cluster, self.group = cluster, group
        self.deadline = deadline if deadline is not None else cluster.deadline()
        self.node: int | None = None
        self.address = ("", 0)
        self.notes: list[str] = []

    def _call(self, key: Any, host: str, port: int, work: Callable[[BrokerConnection, float], T]) -> T:
        if time.monotonic() >= self.deadline:
            raise LiveClusterError(f"describing group {self.group} on {self.cluster.bootstrap} did not finish "
                                   "within the deadline")
        return self.cluster.call(key, host, port, lambda c, d: work(c, min(d, self.deadline)))

    def bootstrap(self, work: Callable[[BrokerConnection, float], T]) -> T:
        """``work`` on the first bootstrap server that can be reached."""
        last: Exception | None = None
        for host, port in self.cluster.addresses:
            try:
                return self._call(("bootstrap", host, port), host, port, work)
            except (G.MalformedAnswer, GroupApiUnsupported):
                raise
            except LiveClusterError as err:
                last = err
        raise LiveClusterError(f"cannot reach {self.cluster.bootstrap}: {last}")

    def find(self) -> None:
        """Find the coordinator (again), waiting out the coordinator errors."""
        for attempt in range(RETRIES):
            def ask(c: BrokerConnection, d: float) -> G.Coordinator:
                version = G.spoken(c, API_FIND_COORDINATOR)
                if version is None:
                    raise GroupApiUnsupported(f"{c.address} does not speak FindCoordinator: cannot find group "
                                              f"{self.group}'s coordinator")
                body = G.encode_find_coordinator(version, [self.group])
                found = G.exchange(c, API_FIND_COORDINATOR, version, body,
                                   lambda r, v: G.decode_find_coordinator(r, v, [self.group]), d)
                if len(found) != 1:
                    raise G.MalformedAnswer(f"{c.address} answered FindCoordinator for {len(found)} keys, not 1")
                return found[0]

            found = self.bootstrap(ask)
            if found.error in P.AUTHORIZATION:
                raise LiveClusterError(f"not authorized to describe group {self.group}")
            if found.error in COORDINATOR_ERRORS or found.error in P.RETRIABLE:
                self._pause(attempt)
                continue
            if found.error:
                raise LiveClusterError(f"cannot find group {self.group}'s coordinator: {_error_name(found.error)}"
                                       + (f" ({found.message})" if found.message else ""))
            self.node, self.address = found.node_id, (found.host, found.port)
            return
        raise LiveClusterError(f"group {self.group}'s coordinator could not be found ({RETRIES} tries)")

    def _pause(self, attempt: int) -> None:
        wait = min(0.1 * 2 ** attempt, 2.0)
        if time.monotonic() + wait >= self.deadline:
            raise LiveClusterError(f"group {self.group}'s coordinator did not answer within the deadline")
        time.sleep(wait)

    def on_coordinator(self, work: Callable[[BrokerConnection, float], T | None]) -> T:
        """``work`` on the coordinator; it returns None to say "the coordinator moved: find it again"."""
        for attempt in range(RETRIES):
            if self.node is None:
                self.find()
            host, port = self.address
            answer = self._call(("coordinator", self.node), host, port, work)
            if answer is not None:
                return answer
            self.cluster.forget(("coordinator", self.node))
            self.node = None
            self._pause(attempt)
        raise LiveClusterError(f"group {self.group}'s coordinator kept moving ({RETRIES} tries)")

    def where(self) -> str:
        return f"its coordinator, broker {self.node} at {self.address[0]}:{self.address[1]}"


def _check(group: str, api: str, error: int, message: str | None) -> bool:
    """False for "ask again" (the coordinator moved or is loading); raises for a real refusal; True for ok."""
    if error in COORDINATOR_ERRORS:
        return False
    if error in P.AUTHORIZATION:
        raise LiveClusterError(f"not authorized to describe group {group} ({api}: {_error_name(error)})")
    if error and error != GROUP_ID_NOT_FOUND:
        raise LiveClusterError(f"{api} of group {group} failed: {_error_name(error)}"
                               + (f" ({message})" if message else ""))
    return True


def _list_groups(c: BrokerConnection, d: float) -> G.ListGroupsAnswer | None:
    version = G.spoken(c, API_LIST_GROUPS)
    if version is None:
        return None
    return G.exchange(c, API_LIST_GROUPS, version, G.encode_list_groups(version), G.decode_list_groups, d)


def _describe(c: BrokerConnection, d: float, kind: str, group: str) -> Any:
    """The group's answer to its type's describe API, or None if the broker does not speak it."""
    api = DESCRIBE_API[kind]
    version = G.spoken(c, api)
    if version is None:
        return None
    if kind == "classic":
        body = G.encode_describe_groups(version, [group])
        decoded = G.exchange(c, api, version, body, G.decode_describe_groups, d)
    else:
        body = G.encode_group_ids(api, version, [group])
        decoded = G.exchange(c, api, version, body, G.DECODERS[api], d)
    found = [g for g in decoded if g.group_id == group]
    if len(found) != 1:
        raise G.MalformedAnswer(f"{c.address} answered {G.api_name(api)} v{version} without group {group}")
    return found[0]


def _exists(kind: str, answer: Any) -> bool:
    if answer.error == GROUP_ID_NOT_FOUND:
        return False
    return not (kind == "classic" and answer.state == "Dead")


def _speaks(c: BrokerConnection, api: int) -> str:
    low, high = c.versions.get(api, (-1, -1))
    lowest, highest = G.VERSIONS[api]
    if high < 0:
        return f"does not speak {G.api_name(api)}"
    return f"speaks {G.api_name(api)} v{low}-v{high} (kassign speaks v{lowest}-v{highest})"


def describe_group(cluster_or_bootstrap: Cluster | str, group_id: str, *, settings: ClientSettings | None = None,
                   deadline: float | None = None) -> GroupDescription:
    """``group_id`` as its coordinator describes it, whatever its type (see the module docstring).

    ``cluster_or_bootstrap``: a :class:`~kassign.kafka.client.Cluster` (kept open) or ``"HOST:PORT,..."``
    (connected with ``settings`` and closed). ``deadline``: ``time.monotonic()`` seconds for the whole
    describe (default: one request timeout from now). Raises :class:`GroupNotFound`,
    :class:`GroupApiUnsupported` or another :class:`~kassign.core.errors.LiveClusterError`, each one line."""
    cluster, owned = _cluster(cluster_or_bootstrap, settings)
    try:
        session = _Session(cluster, group_id, deadline)
        kind_and_answer = session.on_coordinator(lambda c, d: _identify(session, c, d))
        kind, answer = kind_and_answer
        if answer is None:
            answer = session.on_coordinator(lambda c, d: _describe_known(session, kind, c, d))
        node = session.node if session.node is not None else -1
        converted = {"classic": from_classic_group, "consumer": from_consumer_group, "share": from_share_group,
                     "streams": from_streams_group}[kind](answer, node)
        converted.notes.extend(session.notes)
        if kind in ("consumer", "share"):
            _complete_topic_ids(session, converted)
        return converted
    finally:
        if owned:
            cluster.close()


def _describe_known(session: _Session, kind: str, c: BrokerConnection, d: float) -> Any:
    api = DESCRIBE_API[kind]
    answer = _describe(c, d, kind, session.group)
    if answer is None:
        raise GroupApiUnsupported(f"{c.address} lists {session.group} as a {kind} group but {_speaks(c, api)}: "
                                  "kassign cannot describe it there")
    if not _check(session.group, G.api_name(api), answer.error, getattr(answer, "message", None)):
        return None
    if not _exists(kind, answer):
        raise GroupNotFound(f"group {session.group} does not exist on {session.cluster.bootstrap} (it went away "
                            f"while it was being described)")
    return answer


def _identify(session: _Session, c: BrokerConnection, d: float) -> tuple[str, Any] | None:
    """(type, the describe answer if it was needed to tell the type, else None); None: ask again."""
    group = session.group
    listed = _list_groups(c, d)
    if listed is not None:
        if not _check(group, "ListGroups", listed.error, None):
            return None
        entry = next((g for g in listed.groups if g.group_id == group), None)
        if entry is None:
            return _unlisted(session, c, d)
        if entry.type:
            kind = entry.type.lower()
            if kind not in GROUP_TYPES:
                raise LiveClusterError(f"group {group} is of a type kassign does not know: {entry.type!r}")
            return kind, None
        if entry.protocol_type in ("share", "streams"):
            return entry.protocol_type, None
        candidates = ["consumer", "classic"]
    else:
        candidates = ["consumer", "share", "streams", "classic"]
    # no type in the listing: the describe APIs tell (a group of another type answers GROUP_ID_NOT_FOUND)
    asked = []
    for kind in candidates:
        answer = _describe(c, d, kind, group)
        if answer is None:
            continue
        asked.append(G.api_name(DESCRIBE_API[kind]))
        if not _check(group, G.api_name(DESCRIBE_API[kind]), answer.error, getattr(answer, "message", None)):
            return None
        if _exists(kind, answer):
            return kind, answer
    if listed is not None and not asked:
        raise GroupApiUnsupported(f"{c.address} lists group {group} but {_speaks(c, API_DESCRIBE_GROUPS)}: "
                                  "kassign cannot describe it there")
    if listed is not None:  # listed, then no describing API knew it: it went away meanwhile
        raise GroupNotFound(f"group {group} does not exist on {session.cluster.bootstrap} (it went away while it "
                            "was being described)")
    if not asked:
        raise GroupApiUnsupported(f"{c.address} ({session.where()}) speaks neither ListGroups nor any API that "
                                  f"describes a group (DescribeGroups, ConsumerGroupDescribe, ShareGroupDescribe, "
                                  f"StreamsGroupDescribe): kassign cannot tell whether group {group} exists")
    raise GroupNotFound(f"group {group} does not exist on {session.cluster.bootstrap} ({session.where()} answers "
                        f"{', '.join(asked)} without it; it does not speak ListGroups)")


def _unlisted(session: _Session, c: BrokerConnection, d: float) -> tuple[str, Any] | None:
    """The coordinator does not list the group. Kafka lists every group its coordinator holds, so the group
    does not exist; but some Kafka-compatible brokers list none (tansu answers ListGroups with no group), so
    DescribeGroups has the last word: a classic group with members or a live state there is described, with a
    note. (Such brokers answer DescribeGroups "Empty" for any unknown group, so an Empty group without members
    counts as absent.)"""
    group = session.group
    answer = _describe(c, d, "classic", group)
    if answer is not None:
        if not _check(group, "DescribeGroups", answer.error, answer.message):
            return None
        if _exists("classic", answer) and (answer.members or answer.state not in ("Empty", "")):
            session.notes.append(f"{c.address}'s ListGroups does not list group {group}; DescribeGroups describes "
                                 "it as a classic group")
            return "classic", answer
    raise GroupNotFound(f"group {group} does not exist on {session.cluster.bootstrap} ({session.where()}, does not "
                        "list it)")


def _complete_topic_ids(session: _Session, described: GroupDescription) -> None:
    """Topic ids of subscribed topics that no assignment names yet, from Metadata v10+ where spoken (all
    topics are asked, so no broker creates one)."""
    wanted = {t for m in described.members.values() for t in m.topics} - described.topic_ids.keys()
    if not wanted:
        return

    def ask(c: BrokerConnection, d: float) -> dict[str, str]:
        low, high = c.versions.get(API_METADATA, (-1, -1))
        version = min(high, 12)
        if version < max(low, 10):
            return {}
        answer = G.exchange(c, API_METADATA, version, TP.encode_metadata(version, None), TP.decode_metadata, d)
        return {t.name: t.topic_id for t in answer.topics if t.name and t.topic_id and t.error == 0}

    try:
        ids = session.bootstrap(ask)
    except LiveClusterError:
        return  # the ids the assignments carry are still right; the rest stay unknown
    for name in sorted(wanted):
        if name in ids:
            described.topic_ids[name] = ids[name]


# -- share groups: start offsets ----------------------------------------------------------------------------------

def share_start_offsets(cluster_or_bootstrap: Cluster | str, group_id: str,
                        partitions: Mapping[str, int] | None = None, *, settings: ClientSettings | None = None,
                        deadline: float | None = None) -> dict[str, dict[int, int]]:
    """A share group's start offset per share-partition (its position: records before it are done),
    ``{topic: {partition: offset}}``, -1 where the group has no state for the partition.
    ``partitions``: topic -> partition count to ask for (every partition listed, -1 where none); None
    asks for every partition the group has state for."""
    cluster, owned = _cluster(cluster_or_bootstrap, settings)
    try:
        session = _Session(cluster, group_id, deadline)
        wanted = None if partitions is None else [(t, list(range(n))) for t, n in partitions.items()]

        def ask(c: BrokerConnection, d: float) -> G.ShareGroupOffsets | None:
            version = G.spoken(c, API_DESCRIBE_SHARE_GROUP_OFFSETS)
            if version is None:
                raise GroupApiUnsupported(f"{c.address} {_speaks(c, API_DESCRIBE_SHARE_GROUP_OFFSETS)}: kassign "
                                          f"cannot read share group {group_id}'s start offsets there")
            body = G.encode_describe_share_group_offsets(version, {group_id: wanted})
            answer = G.exchange(c, API_DESCRIBE_SHARE_GROUP_OFFSETS, version, body,
                                G.decode_describe_share_group_offsets, d)
            found = [g for g in answer if g.group_id == group_id]
            if len(found) != 1:
                raise G.MalformedAnswer(f"{c.address} answered DescribeShareGroupOffsets without group {group_id}")
            if not _check(group_id, "DescribeShareGroupOffsets", found[0].error, found[0].message):
                return None
            if found[0].error == GROUP_ID_NOT_FOUND:
                raise GroupNotFound(f"share group {group_id} does not exist on {cluster.bootstrap}")
            return found[0]

        found = session.on_coordinator(ask)
        offsets: dict[str, dict[int, int]] = {t: {p: -1 for p in range(n)} for t, n in (partitions or {}).items()}
        for topic in found.topics:
            for p in topic.partitions:
                if p.error in P.AUTHORIZATION:
                    raise LiveClusterError(f"not authorized to read share group {group_id}'s offsets of {topic.name}")
                if p.error and p.error != P.UNKNOWN_TOPIC_OR_PARTITION:
                    raise LiveClusterError(f"share group {group_id}: {topic.name}-{p.partition}: "
                                           f"{_error_name(p.error)}" + (f" ({p.message})" if p.message else ""))
                offsets.setdefault(topic.name, {})[p.partition] = p.start_offset if not p.error else -1
        return {t: dict(sorted(parts.items())) for t, parts in offsets.items()}
    finally:
        if owned:
            cluster.close()


def committed_topics(cluster_or_bootstrap: Cluster | str, group_id: str, *, settings: ClientSettings | None = None,
                     deadline: float | None = None) -> list[str]:
    """The topics where ``group_id`` has a committed offset, in name order: OffsetFetch of every partition (a
    null topic list), as ``kafka-consumer-groups.sh --describe`` asks for a group whose members name none.

    Asked at v8-v9 where the broker speaks them (answers by name; v10 names topic ids only), else v2-v7
    (tansu answers a null topic list correctly only from v8)."""
    cluster, owned = _cluster(cluster_or_bootstrap, settings)
    try:
        session = _Session(cluster, group_id, deadline)

        def ask(c: BrokerConnection, d: float) -> list[str] | None:
            low, high = c.versions.get(API_OFFSET_FETCH, (-1, -1))
            version = min(high, 9)
            if version < max(low, 2):
                raise GroupApiUnsupported(f"{c.address} {_speaks(c, API_OFFSET_FETCH)}: kassign cannot list group "
                                          f"{group_id}'s committed topics there (it needs v2 or later)")
            body = G.encode_offset_fetch(version, [G.OffsetFetchGroup(group_id, None)])
            answer = G.exchange(c, API_OFFSET_FETCH, version, body,
                                lambda r, v: G.decode_offset_fetch(r, v, group_id), d)
            found = [g for g in answer if g.group_id == group_id]
            if len(found) != 1:
                raise G.MalformedAnswer(f"{c.address} answered OffsetFetch v{version} without group {group_id}")
            if not _check(group_id, "OffsetFetch", found[0].error, None):
                return None
            return sorted({t.name for t in found[0].topics if t.name
                           and any(p.offset >= 0 and not p.error for p in t.partitions)})

        return session.on_coordinator(ask)
    finally:
        if owned:
            cluster.close()


# -- the broker's release hints -----------------------------------------------------------------------------------

def api_versions(connection: BrokerConnection, deadline: float) -> G.ApiVersionsAnswer:
    """ApiVersions at the newest version both sides speak (v3+ carry the broker's features)."""
    version = G.spoken(connection, API_API_VERSIONS)
    if version is None:
        version = 0
    body = G.encode_api_versions(version, "kassign", _kassign_version())
    return G.exchange(connection, API_API_VERSIONS, version, body, G.decode_api_versions, deadline)


def _kassign_version() -> str:
    """The installed kassign's version (ApiVersions v3+ names the client software), read from its metadata
    rather than from the package above this layer."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kassign")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0"


def hints_from(answer: G.ApiVersionsAnswer, broker: str, version: int) -> dict[str, Any]:
    """:func:`release_hints`' answer from an ApiVersions answer of ``version``."""
    return {"broker": broker, "api_versions_version": version,
            "api_versions": {k: list(v) for k, v in sorted(answer.versions.items())},
            "supported_features": {k: list(v) for k, v in sorted(answer.supported_features.items())},
            "finalized_features": {k: list(v) for k, v in sorted(answer.finalized_features.items())},
            "finalized_features_epoch": answer.finalized_features_epoch}


def release_hints(cluster_or_bootstrap: Cluster | str, *, settings: ClientSettings | None = None) -> dict[str, Any]:
    """What a bootstrap broker says about its release, as plain data::

        {"broker": "HOST:PORT", "api_versions_version": 4,
         "api_versions": {API_KEY: [min, max], ...},                     # every API it speaks
         "supported_features": {"metadata.version": [7, 30], ...},       # what its software can run
         "finalized_features": {"metadata.version": [30, 30], ...},      # what the cluster runs (levels)
         "finalized_features_epoch": 346}                               # -1: unknown

    Features come with ApiVersions v3+ (Kafka 2.7+ brokers); older brokers give empty maps."""
    cluster, owned = _cluster(cluster_or_bootstrap, settings)
    try:
        def ask(c: BrokerConnection, d: float) -> tuple[str, int, G.ApiVersionsAnswer]:
            version = G.spoken(c, API_API_VERSIONS) or 0
            return c.address, version, api_versions(c, d)

        last: Exception | None = None
        for host, port in cluster.addresses:
            try:
                address, version, answer = cluster.call(("bootstrap", host, port), host, port, ask)
                break
            except G.MalformedAnswer:
                raise
            except LiveClusterError as err:
                last = err
        else:
            raise LiveClusterError(f"cannot reach {cluster.bootstrap}: {last}")
        if answer.error:
            raise LiveClusterError(f"{address} refused ApiVersions v{version}: {_error_name(answer.error)}")
        return hints_from(answer, address, version)
    finally:
        if owned:
            cluster.close()
