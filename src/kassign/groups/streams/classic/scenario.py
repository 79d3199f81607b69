"""The classic Kafka Streams scenario, read and checked (the manual: docs/formats.md).

One document describes one rebalance of a Kafka Streams application on the classic group
protocol: the topology's tasks, the changelog end offsets of the stateful ones, and every
client (a ``KafkaStreams`` instance, named by its process UUID) with its consumers (one per
stream thread), each reporting the tasks it owns and the offset sums of the task state it
holds::

    {"subtopologies": {"0": {"partitions": 2, "stateful": true}},
     "end_offset_sums": {"0_0": 500, "0_1": 800},
     "clients": {"3f1c...-...": {"consumers": {"app-...-StreamThread-1-consumer-...":
                                               {"owned": ["0_0"], "offset_sums": {"0_0": -2}}}}},
     "num_standby_replicas": 1}

Here task ``0_0`` runs on the one consumer (offset sum ``-2``: an active task that is running),
so its lag is ``-2``; ``0_1`` has no local state there, so its lag is its whole end offset sum,
800.

Absent settings take Kafka Streams' defaults (``num.standby.replicas`` 0, ``max.warmup.replicas``
2, ``acceptable.recovery.lag`` 10000, ``probing.rebalance.interval.ms`` 600000, no
``rack.aware.assignment.tags``, ``rack.aware.assignment.strategy`` ``none``), and are checked as
``StreamsConfig`` checks them. Rack-aware assignment (KIP-925) reads ``rack_aware_assignment_strategy``,
the two rack-aware costs (any Java int, null for the assignor's default), each subtopology's
``source_topics`` and ``changelog_topics``, ``partition_racks`` (per topic, per partition, its
replicas' racks, null for a broker without one) and a ``rack`` per client or consumer; with a
strategy set, every subtopology must name its source topics and every stateful one its changelogs.

What kassign refuses, though Kafka would carry on:

* a task that does not exist (an owned task, an offset sum or an end offset sum naming a
  subtopology or partition the topology lacks): Kafka drops such a task with a log line (the
  topology may have changed under a rolling upgrade), but in a scenario it is a typing mistake;
* an offset sum below zero other than -2 (``Task.LATEST_OFFSET``), or an end offset sum below
  zero: no client reports them (-3, "unknown", only appears inside Kafka);
* a consumer listed under two clients, a client without consumers, a group without clients
  (the leader always counts), a process UUID given twice.

What kassign accepts as Kafka does, with Kafka's outcome:

* a task owned by two consumers (Kafka logs it and carries on): it counts as a previous active
  task of each one's client (only the sticky assignor reads ownership; the high-availability
  assignor goes by offset sums alone);
* two consumers of one client reporting different offset sums for a task: the one Kafka meets
  last, in its ``HashMap`` of member ids, counts;
* an offset sum above the task's end offset sum (Kafka logs that the state is probably
  corrupt): the lag is the end offset sum, as if there were no state;
* offset sums of stateless tasks: kept as previously held tasks, with no effect on lags.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kassign.core.errors import ScenarioError, shown
from kassign.core.javaorder import java_string_hash_order, java_uuid_hash
from kassign.core.limits import JAVA_INT_MAX, is_whole_number, partition_budget
from kassign.core.text import utf8_problem

JAVA_LONG_MAX = 2**63 - 1
LATEST_OFFSET = -2  # Task.LATEST_OFFSET: the offset sum a client reports for an active task it runs

DEFAULTS: dict[str, Any] = {
    "num_standby_replicas": 0,
    "max_warmup_replicas": 2,
    "acceptable_recovery_lag": 10_000,
    "probing_rebalance_interval_ms": 600_000,
    "rack_aware_assignment_tags": [],
    "rack_aware_assignment_strategy": "none",
    "rack_aware_assignment_traffic_cost": None,
    "rack_aware_assignment_non_overlap_cost": None,
}
_SCENARIO_KEYS = ("subtopologies", "end_offset_sums", "clients", "partition_racks", *DEFAULTS)
_CLIENT_KEYS = ("consumers", "client_tags", "rack")
_CONSUMER_KEYS = ("owned", "offset_sums", "rack")
RACK_AWARE_STRATEGIES = ("none", "min_traffic", "balance_subtopology")
JAVA_INT_MIN = -(2**31)

# StreamsConfig's limits on client tags and rack.aware.assignment.tags.
MAX_TAGS = 5
MAX_TAG_KEY_LENGTH = 20
MAX_TAG_VALUE_LENGTH = 30

_TASK = re.compile(r"(0|[1-9][0-9]*)_(0|[1-9][0-9]*)\Z")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >> 63 else value


@dataclass
class Consumer:
    """One stream thread's consumer as its subscription reports it (tasks as indexes)."""

    member_id: str
    owned: list[int]
    offset_sums: dict[int, int]  # task -> offset sum, in the order given
    rack: str | None = None  # its client.rack


@dataclass
class Client:
    """One Kafka Streams instance (process)."""

    process_id: str  # as the document spells it
    order_key: tuple[int, int]  # java.util.UUID.compareTo: both halves as signed longs
    hash_code: int  # UUID.hashCode as unsigned 32 bits
    client_tags: dict[str, str]
    consumers: list[Consumer]  # in the document's order

    @property
    def capacity(self) -> int:
        return len(self.consumers)


@dataclass
class StreamsClassicScenario:
    """A checked scenario: tasks by index in ``TaskId`` order, clients in process UUID order."""

    tasks: list[tuple[int, int]]  # (subtopology, partition), sorted
    stateful: list[bool]
    end_offset_sums: list[int]  # per task; 0 for stateless ones
    clients: list[Client]  # sorted as Kafka's TreeMap of ProcessId sorts them
    num_standby_replicas: int = 0
    max_warmup_replicas: int = 2
    acceptable_recovery_lag: int = 10_000
    probing_rebalance_interval_ms: int = 600_000
    rack_aware_assignment_tags: list[str] = field(default_factory=list)
    # Every consumer, as the group leader's HashMap of subscriptions meets them.
    subscription_order: list[tuple[int, int]] = field(default_factory=list)  # (client, consumer) indexes
    # Rack-aware task assignment (KIP-925); see kassign.groups.streams.classic.rack_aware.
    rack_aware_assignment_strategy: str = "none"
    rack_aware_assignment_traffic_cost: int | None = None
    rack_aware_assignment_non_overlap_cost: int | None = None
    source_topics: dict[int, list[str]] = field(default_factory=dict)  # subtopology -> topics it reads
    changelog_topics: dict[int, list[str]] = field(default_factory=dict)  # subtopology -> its changelogs
    partition_racks: dict[str, list[list[str | None]]] = field(default_factory=dict)  # None: a broker without rack

    def task_name(self, task: int) -> str:
        sub, part = self.tasks[task]
        return f"{sub}_{part}"


def _fail(message: str) -> ScenarioError:
    return ScenarioError(f"scenario: {message}")


def _mapping(value: Any, what: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise _fail(f"{what} must be a JSON object, got {shown(value)}")
    return value


def _known_keys(value: Mapping, allowed: tuple[str, ...], what: str) -> None:
    unknown = [k for k in value if k not in allowed]
    if unknown:
        raise _fail(f"{what}: unknown field(s) {sorted(map(str, unknown))}; allowed: {', '.join(allowed)}")


def _whole(value: Any, what: str, low: int, high: int) -> int:
    if not is_whole_number(value):
        raise _fail(f"{what} must be a whole number, got {shown(value)}")
    if not low <= value <= high:
        raise _fail(f"{what} must be from {low} to {high}, got {shown(int(value))}")
    return int(value)


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(f"{what} must be a non-empty string, got {shown(value)}")
    problem = utf8_problem(value, what)
    if problem:
        raise _fail(problem)
    return value


class _Tasks:
    """The topology's tasks, and the names that refer to them."""

    def __init__(self, subtopologies: Mapping) -> None:
        partitions: dict[int, tuple[int, bool]] = {}
        self.source_topics: dict[int, list[str]] = {}
        self.changelog_topics: dict[int, list[str]] = {}
        for raw_id, spec in subtopologies.items():
            if not isinstance(raw_id, str) or not re.fullmatch(r"0|[1-9][0-9]*", raw_id) or int(raw_id) > JAVA_INT_MAX:
                raise _fail(f"subtopology id {shown(raw_id)} must be a whole number from 0 to {JAVA_INT_MAX}, "
                            'written without sign or leading zeros ("0", "1", ...)')
            spec = _mapping(spec, f"subtopology {raw_id}")
            _known_keys(spec, ("partitions", "stateful", "source_topics", "changelog_topics"),
                        f"subtopology {raw_id}")
            if "partitions" not in spec:
                raise _fail(f'subtopology {raw_id}: missing "partitions"')
            count = _whole(spec["partitions"], f"subtopology {raw_id}: partitions", 1, JAVA_INT_MAX)
            stateful = spec.get("stateful", False)
            if not isinstance(stateful, bool):
                raise _fail(f"subtopology {raw_id}: stateful must be true or false, got {shown(stateful)}")
            partitions[int(raw_id)] = (count, stateful)
            self._topics(int(raw_id), spec, stateful)
        partition_budget(sum(count for count, _ in partitions.values()), "scenario: subtopologies")
        self.partitions = partitions
        self.tasks = [(sub, p) for sub in sorted(partitions) for p in range(partitions[sub][0])]
        self.stateful = [partitions[sub][1] for sub, _ in self.tasks]
        self._first = {}
        index = 0
        for sub in sorted(partitions):
            self._first[sub] = index
            index += partitions[sub][0]

    def _topics(self, sub: int, spec: Mapping, stateful: bool) -> None:
        for key, into in (("source_topics", self.source_topics), ("changelog_topics", self.changelog_topics)):
            if key not in spec:
                continue
            raw = spec[key]
            what = f"subtopology {sub}: {key}"
            if not isinstance(raw, (list, tuple)):
                raise _fail(f"{what} must be a list of topic names, got {shown(raw)}")
            into[sub] = list(dict.fromkeys(_name(topic, f"{what}: a topic") for topic in raw))
        if self.changelog_topics.get(sub) and not stateful:
            raise _fail(f"subtopology {sub} has changelog_topics but is not stateful; a subtopology with "
                        "changelog topics is stateful (give \"stateful\": true)")

    def index(self, name: Any, what: str) -> int:
        """The index of the task ``name`` ("SUBTOPOLOGY_PARTITION")."""
        if not isinstance(name, str):
            raise _fail(f"{what}: a task is written \"SUBTOPOLOGY_PARTITION\" (like \"0_3\"), got {shown(name)}")
        match = _TASK.match(name)
        if not match:
            raise _fail(f"{what}: {shown(name)} is not a task; write \"SUBTOPOLOGY_PARTITION\" (like \"0_3\"), "
                        "whole numbers without sign or leading zeros")
        sub, part = int(match[1]), int(match[2])
        if sub not in self.partitions:
            raise _fail(f"{what}: task {name} belongs to subtopology {sub}, which is not in \"subtopologies\" "
                        f"({', '.join(map(str, sorted(self.partitions))) or 'none'})")
        count = self.partitions[sub][0]
        if part >= count:
            raise _fail(f"{what}: task {name} does not exist: subtopology {sub} has {count} partition(s), "
                        f"0 to {count - 1}")
        return self._first[sub] + part


def _client_tags(value: Any, what: str) -> dict[str, str]:
    tags = _mapping(value, what)
    if len(tags) > MAX_TAGS:
        raise _fail(f"{what}: at most {MAX_TAGS} client tags (Kafka Streams' limit), got {len(tags)}")
    out = {}
    for key, tag_value in tags.items():
        key = _name(key, f"{what}: tag key")
        if not key.strip():
            raise _fail(f"{what}: a tag key must not be blank")
        if not isinstance(tag_value, str):
            raise _fail(f"{what}: tag {key!r} must have a string value, got {shown(tag_value)}")
        if len(key) > MAX_TAG_KEY_LENGTH:
            raise _fail(f"{what}: tag key {key!r} is longer than {MAX_TAG_KEY_LENGTH} characters (Kafka Streams' limit)")
        if len(tag_value) > MAX_TAG_VALUE_LENGTH:
            raise _fail(f"{what}: the value of tag {key!r} is longer than {MAX_TAG_VALUE_LENGTH} characters "
                        "(Kafka Streams' limit)")
        out[key] = tag_value
    return out


def _consumer(member_id: str, spec: Any, tasks: _Tasks, default_rack: str | None = None) -> Consumer:
    what = f"consumer {member_id!r}"
    spec = _mapping(spec, what)
    _known_keys(spec, _CONSUMER_KEYS, what)
    owned_raw = spec.get("owned", [])
    if not isinstance(owned_raw, (list, tuple)):
        raise _fail(f"{what}: owned must be a list of tasks, got {shown(owned_raw)}")
    # A task listed twice is owned once (Kafka collects owned partitions into a map).
    owned = list(dict.fromkeys(tasks.index(name, f"{what}: owned") for name in owned_raw))
    sums_raw = _mapping(spec.get("offset_sums", {}), f"{what}: offset_sums")
    offset_sums = {}
    for name, value in sums_raw.items():
        task = tasks.index(name, f"{what}: offset_sums")
        if is_whole_number(value) and value == LATEST_OFFSET:
            offset_sums[task] = LATEST_OFFSET
            continue
        offset_sums[task] = _whole(value, f"{what}: offset sum of {name} (-2 for a running active task, "
                                          "else the summed changelog offsets)", 0, JAVA_LONG_MAX)
    rack = spec.get("rack", default_rack)
    if rack is not None:
        rack = _name(rack, f"{what}: rack")
    return Consumer(member_id, owned, offset_sums, rack)


def _process_key(process_id: Any) -> tuple[tuple[int, int], int]:
    if not isinstance(process_id, str) or not _UUID.match(process_id):
        raise _fail(f"client {shown(process_id)}: a client is named by its process UUID, written "
                    "8-4-4-4-12 hexadecimal digits (like \"2d0e7635-ca09-42bd-84b3-fee645b255e7\")")
    value = uuid.UUID(process_id).int
    most, least = value >> 64, value & ((1 << 64) - 1)
    return (_signed64(most), _signed64(least)), java_uuid_hash(most, least)


def parse_streams_classic(document: Any) -> StreamsClassicScenario:
    """Check a Kafka Streams application's scenario and give it as a :class:`StreamsClassicScenario`."""
    doc = _mapping(document, "the scenario")
    _known_keys(doc, _SCENARIO_KEYS, "scenario")
    for key in ("subtopologies", "clients"):
        if key not in doc:
            raise _fail(f'missing "{key}"')
    tasks = _Tasks(_mapping(doc["subtopologies"], "subtopologies"))

    end_offset_sums = [0] * len(tasks.tasks)
    for name, value in _mapping(doc.get("end_offset_sums", {}), "end_offset_sums").items():
        task = tasks.index(name, "end_offset_sums")
        if not tasks.stateful[task]:
            raise _fail(f"end_offset_sums: task {name} is stateless (its subtopology is not stateful), so it has "
                        "no changelog; give end offset sums for stateful tasks only")
        end_offset_sums[task] = _whole(value, f"end_offset_sums: {name}", 0, JAVA_LONG_MAX)

    settings = {key: doc.get(key, default) for key, default in DEFAULTS.items()}
    num_standby = _whole(settings["num_standby_replicas"], "num_standby_replicas", 0, JAVA_INT_MAX)
    max_warmup = _whole(settings["max_warmup_replicas"], "max_warmup_replicas (at least 1, as Kafka Streams requires)",
                        1, JAVA_INT_MAX)
    recovery_lag = _whole(settings["acceptable_recovery_lag"], "acceptable_recovery_lag", 0, JAVA_LONG_MAX)
    probing_ms = _whole(settings["probing_rebalance_interval_ms"],
                        "probing_rebalance_interval_ms (at least 60000, as Kafka Streams requires)",
                        60_000, JAVA_LONG_MAX)
    tags_raw = settings["rack_aware_assignment_tags"]
    if not isinstance(tags_raw, (list, tuple)):
        raise _fail(f"rack_aware_assignment_tags must be a list of tag keys, got {shown(tags_raw)}")
    if len(tags_raw) > MAX_TAGS:
        raise _fail(f"rack_aware_assignment_tags: at most {MAX_TAGS} tag keys (Kafka Streams' limit), got {len(tags_raw)}")
    rack_tags = [_name(tag, "rack_aware_assignment_tags: a tag key") for tag in tags_raw]

    clients_raw = _mapping(doc["clients"], "clients")
    if not clients_raw:
        raise _fail("clients is empty; a rebalance has at least one client (the group leader's)")
    clients: list[Client] = []
    seen_processes: dict[tuple[int, int], str] = {}
    member_client: dict[str, str] = {}
    for process_id, spec in clients_raw.items():
        order_key, hash_code = _process_key(process_id)
        if order_key in seen_processes:
            raise _fail(f"clients {seen_processes[order_key]!r} and {process_id!r} are the same process UUID")
        seen_processes[order_key] = process_id
        what = f"client {process_id}"
        spec = _mapping(spec, what)
        _known_keys(spec, _CLIENT_KEYS, what)
        consumers_raw = _mapping(spec.get("consumers", {}), f"{what}: consumers")
        if not consumers_raw:
            raise _fail(f"{what} has no consumers; a client takes part through its stream threads' consumers, "
                        "give at least one")
        consumers = []
        client_rack = spec.get("rack")
        if client_rack is not None:
            client_rack = _name(client_rack, f"{what}: rack")
        for member_id, consumer_spec in consumers_raw.items():
            member_id = _name(member_id, f"{what}: consumer member id")
            if member_id in member_client:
                raise _fail(f"consumer {member_id!r} is listed under clients {member_client[member_id]} and "
                            f"{process_id}; a consumer belongs to one client")
            member_client[member_id] = process_id
            consumers.append(_consumer(member_id, consumer_spec, tasks, client_rack))
        tags = _client_tags(spec.get("client_tags", {}), f"{what}: client_tags")
        missing = [tag for tag in rack_tags if tag not in tags]
        if missing:
            raise _fail(f"{what}: rack_aware_assignment_tags names {missing} but the client has no such client "
                        "tag (Kafka Streams refuses to start such a client); give it client_tags for them")
        clients.append(Client(process_id, order_key, hash_code, tags, consumers))
    clients.sort(key=lambda c: c.order_key)

    # The leader meets subscriptions in a HashMap keyed by member id, filled in join order.
    where = {c.member_id: (ci, mi) for ci, client in enumerate(clients) for mi, c in enumerate(client.consumers)}
    subscription_order = [where[m] for m in java_string_hash_order(list(member_client))]

    rack_settings = _rack_aware_settings(settings, tasks)
    return StreamsClassicScenario(
        tasks=tasks.tasks,
        stateful=tasks.stateful,
        end_offset_sums=end_offset_sums,
        clients=clients,
        num_standby_replicas=num_standby,
        max_warmup_replicas=max_warmup,
        acceptable_recovery_lag=recovery_lag,
        probing_rebalance_interval_ms=probing_ms,
        rack_aware_assignment_tags=rack_tags,
        subscription_order=subscription_order,
        source_topics=tasks.source_topics,
        changelog_topics=tasks.changelog_topics,
        partition_racks=_partition_racks(doc.get("partition_racks", {})),
        **rack_settings,
    )


def _rack_aware_settings(settings: dict, tasks: _Tasks) -> dict:
    strategy = settings["rack_aware_assignment_strategy"]
    if strategy not in RACK_AWARE_STRATEGIES:
        raise _fail(f"rack_aware_assignment_strategy must be one of {', '.join(RACK_AWARE_STRATEGIES)}, "
                    f"got {shown(strategy)}")
    costs = {}
    for key in ("rack_aware_assignment_traffic_cost", "rack_aware_assignment_non_overlap_cost"):
        value = settings[key]
        # StreamsConfig takes any int here (no validator); null keeps the assignor's default
        costs[key] = None if value is None else _whole(value, f"{key} (null for Kafka's default)",
                                                       JAVA_INT_MIN, JAVA_INT_MAX)
    if strategy != "none":
        for sub in sorted(tasks.partitions):
            if not tasks.source_topics.get(sub):
                raise _fail(f"rack_aware_assignment_strategy {strategy} needs the topics each task reads: give "
                            f"subtopology {sub} its source_topics")
            if tasks.partitions[sub][1] and not tasks.changelog_topics.get(sub):
                raise _fail(f"rack_aware_assignment_strategy {strategy} needs the changelog topics of stateful "
                            f"subtopology {sub}: give it changelog_topics")
    return {"rack_aware_assignment_strategy": strategy, **costs}


def _partition_racks(value: Any) -> dict[str, list[list[str | None]]]:
    """Per topic, per partition, the racks of its replicas (null: a broker without ``broker.rack``)."""
    out = {}
    for topic, partitions in _mapping(value, "partition_racks").items():
        topic = _name(topic, "partition_racks: a topic")
        if not isinstance(partitions, (list, tuple)):
            raise _fail(f"partition_racks: {topic} must be a list (one entry per partition) of lists of racks, "
                        f"got {shown(partitions)}")
        rows = []
        for p, racks in enumerate(partitions):
            what = f"partition_racks: {topic} partition {p}"
            if not isinstance(racks, (list, tuple)):
                raise _fail(f"{what} must be a list of its replicas' racks, got {shown(racks)}")
            rows.append([None if r is None else _name(r, f"{what}: a rack") for r in racks])
        out[topic] = rows
    return out


def task_hash(subtopology: int, partition: int) -> int:
    """``TaskId.hashCode()`` (``Objects.hash(subtopology, partition, null)``) as unsigned 32 bits."""
    return (((31 + subtopology) * 31 + partition) * 31) & 0xFFFFFFFF
