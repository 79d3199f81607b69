"""Kafka Streams timelines: an application, its instances and what happens to them, read and checked.

A Streams timeline is YAML (or JSON) in the consumer-group simulator's style; its top-level
``application`` key is what tells it apart (see :func:`is_streams_timeline`)::

    name: one instance restarts
    application:
      subtopologies:
        "0": {partitions: 6, stateful: true}       # tasks 0_0 .. 0_5, each with a changelog
        "1": {partitions: 6}                       # stateless tasks 1_0 .. 1_5
      state_bytes: 2 GiB                           # each stateful task's changelog at the start
      growth_bytes_per_second: 100 KiB             # what a running active task adds to it
      record_bytes: 1 KiB                          # one changelog record (offsets count records)
      restore_bytes_per_second: 20 MiB             # or restore_records_per_second: per task
      tasks:                                       # optional overrides, task by task
        "0_3": {state_bytes: 8 GiB}
    settings:                                      # optional; Kafka Streams' defaults
      num_standby_replicas: 0
      max_warmup_replicas: 2
      acceptable_recovery_lag: 10000               # records
      probing_rebalance_interval_ms: 600000
      session_timeout: 45                          # seconds (session.timeout.ms)
      rebalance_timeout: 300                       # seconds (max.poll.interval.ms)
      round_seconds: 2                             # one JoinGroup + SyncGroup round
      state_cleanup_delay_ms: 600000               # state.cleanup.delay.ms
      initial_state: settled                       # or empty: a first deployment, nothing on disk
    instances:                                     # running at time 0, in this order
      app-1: {threads: 2}
      app-2: {threads: 2, process_id: 9a2c6f1e-3d4b-4c5a-8e7f-0a1b2c3d4e5f, tags: {zone: a}}
    strategies: [high-availability, optimal]       # optional: what `kassign simulate` compares
    until: 2h                                      # optional: where the clock stops
    events:
      - {at: 15m, type: restart, instance: app-1, down: 60}
      - {at: 30m, type: crash, instance: app-2}
      - {at: 40m, type: start, instance: app-2}            # back, with what it had on disk
      - {at: 50m, type: stop, instance: app-1}             # graceful: leaves the group
      - {at: 1h, type: start, instance: app-9, threads: 2} # a newcomer, nothing on disk
      - {at: 70m, type: scale_out, add: 2}
      - {at: 80m, type: scale_in, remove: 1}

Sizes take a number of bytes or text with a unit (``512 B``, ``20 KB``, ``1.5 GiB``, ``/s`` allowed
on rates); times take seconds or text (``90s``, ``15m``, ``1h30m``, ``500ms``, ``2d``).

Every stateful task needs a changelog size and a restoration speed, from the application, its
subtopology or the task itself (the most specific wins).

Rack-aware task assignment (KIP-925, :mod:`kassign.groups.streams.classic.rack_aware`): the settings
``rack_aware_assignment_strategy`` (none, min_traffic, balance_subtopology) and the two costs
``rack_aware_assignment_traffic_cost`` and ``rack_aware_assignment_non_overlap_cost`` (null: the
assignor's default), each subtopology's ``source_topics`` and ``changelog_topics`` (task ``S_P`` reads
partition P of each), ``application.partition_racks`` (per topic, per partition, its replicas' racks)
and each instance's ``rack`` (its consumers' ``client.rack``; a start or scale_out may give one)::

    application:
      subtopologies:
        "0": {partitions: 2, stateful: true, source_topics: [orders], changelog_topics: [app-store-changelog]}
      partition_racks: {orders: [[az-a, az-b], [az-b, az-c]], app-store-changelog: [[az-a], [az-c]]}
    settings: {rack_aware_assignment_strategy: min_traffic}
    instances: {app-1: {rack: az-a}, app-2: {rack: az-c}}

With a strategy set, every subtopology names its source topics, every stateful one its changelogs,
and ``partition_racks`` lists every partition they read; with partition racks alone (strategy none)
the source topics suffice: the simulator then counts the tasks that read across racks.

``protocol: streams`` plays the timeline as a streams group (KIP-1071, Kafka Streams'
``group.protocol=streams``; :mod:`.streams_group_engine`): the broker assigns the tasks, each stream
thread is a member heartbeating to the group coordinator. Its settings add ``heartbeat_interval`` (5 s),
``assignment_interval`` (the release's: 1 s from Kafka 4.3, none in 4.2) and ``initial_rebalance_delay``
(3 s), the broker's ``group.streams.*`` settings; ``session_timeout`` is ``group.streams.session.timeout.ms``
and ``num_standby_replicas`` ``group.streams.num.standby.replicas``. The classic settings the broker does not
read (warm-ups, probing, rack-aware tags, rounds) may stay in the document and are not used. State sizes
and restoration speeds are optional there: where given, the report says how much state a move costs.
Events:

* ``start``: the instance joins; one that ran before comes back with its process id and the state
  it left on disk, unless ``state_lost: true`` (a new volume: a new process id, nothing on disk);
  a new name is a newcomer (``threads``, ``process_id``, ``tags`` optional);
* ``stop``: a graceful shutdown, closing its tasks cleanly; ``leave_group: true`` (the default here)
  is ``KafkaStreams.close`` with ``CloseOptions`` asking to leave the group, so the group rebalances
  at once; ``false`` is a plain ``close()``, which on the classic protocol does not leave: the group
  notices when the session times out;
* ``crash``: the instance stops without a word; the group notices after ``session_timeout``;
  ``state_lost: true`` wipes what it had on disk (under exactly-once a crash can force that);
* ``restart``: a stop, then a start ``down`` seconds later (``leave_group``, ``state_lost`` as above);
* ``scale_out``: ``add`` newcomers (``threads``; named after the first instance, ``app-3``, ... unless
  ``prefix`` is given); ``scale_in``: ``remove`` instances, the running ones named last first (as a
  StatefulSet scales in), or exactly the ``instances`` listed; they stop gracefully.

Everything is checked up front, in order, and a mistake is one line with the path of what is wrong.
"""

from __future__ import annotations

import heapq
import math
import re
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from kassign.core.documents import load_yaml
from kassign.core.errors import ScenarioError, shown
from kassign.core.limits import JAVA_INT_MAX, is_whole_number, partition_budget
from kassign.core.text import escaped, utf8_problem
from kassign.groups.scenario import read_scenario_text
from kassign.groups.streams.classic.assign import STRATEGIES as ASSIGNORS
from kassign.groups.streams.classic.scenario import (MAX_TAG_KEY_LENGTH, MAX_TAG_VALUE_LENGTH, MAX_TAGS,
                                                     RACK_AWARE_STRATEGIES, JAVA_INT_MIN)
from kassign.groups.streams.classic.scenario import _partition_racks as classic_partition_racks

MAX_SECONDS = 10_000_000  # about 116 days, as the consumer-group simulator allows
MAX_INSTANCES = 10_000
MAX_THREADS = 1_000
MAX_TASKS = 1_000_000  # the simulator keeps instance x task arrays
MAX_BYTES = 2**62

EVENT_FIELDS: dict[str, tuple[set[str], set[str]]] = {
    # type: (required fields, optional fields) besides `at` and `type`
    "start": ({"instance"}, {"threads", "process_id", "tags", "rack", "state_lost"}),
    "stop": ({"instance"}, {"leave_group"}),
    "crash": ({"instance"}, {"state_lost"}),
    "restart": ({"instance", "down"}, {"leave_group", "state_lost"}),
    "scale_out": ({"add"}, {"threads", "rack", "prefix"}),
    "scale_in": (set(), {"remove", "instances", "leave_group"}),
}
SETTINGS: dict[str, Any] = {
    "num_standby_replicas": 0,
    "max_warmup_replicas": 2,
    "acceptable_recovery_lag": 10_000,
    "probing_rebalance_interval_ms": 600_000,
    "rack_aware_assignment_tags": [],
    "rack_aware_assignment_strategy": "none",  # rack.aware.assignment.strategy (KIP-925)
    "rack_aware_assignment_traffic_cost": None,  # None: the assignor's default
    "rack_aware_assignment_non_overlap_cost": None,
    "session_timeout": 45.0,
    "rebalance_timeout": 300.0,
    "round_seconds": 2.0,
    "state_cleanup_delay_ms": 600_000,
    "initial_state": "settled",
}
INITIAL_STATES = ("settled", "empty")
_TOP_LEVEL = {"name", "description", "application", "settings", "instances", "events", "strategies", "until",
              "protocol"}
PROTOCOLS = ("classic", "streams")  # Kafka Streams' group.protocol
# the streams protocol's settings (KIP-1071), the group coordinator's: group.streams.heartbeat.interval.ms,
# group.streams.assignment.interval.ms (None: the release's default), group.streams.initial.rebalance.delay.ms
STREAMS_PROTOCOL_SETTINGS: dict[str, Any] = {"heartbeat_interval": 5.0, "assignment_interval": None,
                                             "initial_rebalance_delay": 3.0}
# what only the classic protocol reads (the group leader's assignor, JoinGroup rounds)
CLASSIC_ONLY_SETTINGS = ("max_warmup_replicas", "acceptable_recovery_lag", "probing_rebalance_interval_ms",
                         "rack_aware_assignment_tags", "rebalance_timeout", "round_seconds",
                         "rack_aware_assignment_strategy", "rack_aware_assignment_traffic_cost",
                         "rack_aware_assignment_non_overlap_cost")
_APPLICATION = {"subtopologies", "tasks", "state_bytes", "growth_bytes_per_second", "record_bytes",
                "restore_bytes_per_second", "restore_records_per_second", "partition_racks"}
_TASK_FIELDS = _APPLICATION - {"subtopologies", "tasks", "partition_racks"}
_TOPIC_FIELDS = ("source_topics", "changelog_topics")  # per subtopology: what its tasks read (rack-aware)
_INSTANCE_FIELDS = {"threads", "process_id", "tags", "rack"}
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
_TASK = re.compile(r"(0|[1-9][0-9]*)_(0|[1-9][0-9]*)\Z")
_PROCESS_NAMESPACE = uuid.UUID("6f1d3c2e-8a57-4f0b-9c44-2b7e5d1a0c93")  # kassign's, for derived process ids


def is_streams_timeline(document: Any) -> bool:
    """A Streams timeline has a top-level ``application``; a consumer-group timeline never does."""
    return isinstance(document, Mapping) and "application" in document


def is_streams_group_timeline(document: Any) -> bool:
    """A Streams timeline played as a streams group (KIP-1071): ``protocol: streams``."""
    return is_streams_timeline(document) and document.get("protocol") == "streams"


# -- small readers -----------------------------------------------------------------------------------

def _fail(path: str, problem: str) -> ScenarioError:
    return ScenarioError(f"streams timeline {path}: {problem}")


_BYTE_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
               "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
_QUANTITY = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*(/\s*s)?\s*\Z")
_TIME_UNITS = {"ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_TIME_PART = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|sec|min|s|m|h|d)")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    if isinstance(value, int) and value.bit_length() > 100:
        return math.inf
    number = float(value)
    return number if math.isfinite(number) else None


def size_in_bytes(value: Any, path: str, rate: bool = False, minimum: float = 0.0,
                  document: str = "streams timeline") -> float:
    """A byte count (or bytes per second when ``rate``): a number, or text like ``1.5 GiB`` (``/s`` allowed).
    ``document`` names the document in messages."""
    number = _number(value)
    if number is None and isinstance(value, str):
        match = _QUANTITY.match(value)
        if match and match[2].lower() in _BYTE_UNITS and (rate or not match[3]):
            number = float(match[1]) * _BYTE_UNITS[match[2].lower()]
        elif match and not match[2] and (rate or not match[3]):
            number = float(match[1])
    what = "bytes per second" if rate else "bytes"
    if number is None:
        raise ScenarioError(f"{document} {path}: expected {what}: a number or text like "
                            f"\"20 MiB{'/s' if rate else ''}\" (units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), "
                            f"got {shown(value)}")
    if not minimum <= number <= MAX_BYTES:
        low = "more than 0" if minimum > 0 else "at least 0"
        raise ScenarioError(f"{document} {path}: expected {what} {low} and at most 2^62, got {shown(value)}")
    return number


def seconds(value: Any, path: str, minimum: float = 0.0) -> float:
    """A duration in seconds: a number, or text like ``90s``, ``15m``, ``1h30m``, ``500ms``, ``2d``."""
    number = _number(value)
    if number is None and isinstance(value, str) and value.strip():
        text = value.strip().lower()
        total, position = 0.0, 0
        while position < len(text):
            match = _TIME_PART.match(text, position)
            if not match:
                total = None
                break
            total += float(match[1]) * _TIME_UNITS[match[2]]
            position = match.end()
            while position < len(text) and text[position] == " ":
                position += 1
        number = total
    if number is None:
        raise _fail(path, f"expected a time: seconds, or text like \"90s\", \"15m\", \"1h30m\", got {shown(value)}")
    if not minimum <= number <= MAX_SECONDS:
        low = f"at least {minimum:g}" if minimum else "at least 0"
        raise _fail(path, f"expected a time {low} and at most {MAX_SECONDS:,} s (about 116 days), got {shown(value)}")
    return number


def _whole(value: Any, path: str, low: int, high: int, why: str = "") -> int:
    if not is_whole_number(value) or not low <= value <= high:
        raise _fail(path, f"expected a whole number from {low:,} to {high:,}{why}, got {shown(value)}")
    return int(value)


def _flag(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, f"expected true or false, got {shown(value)}")
    return value


def _mapping(value: Any, path: str, example: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise _fail(path, f"expected a mapping such as {example}, got {shown(value)}")
    return value


def _known(doc: Mapping, allowed: set[str], path: str) -> None:
    unknown = [k for k in doc if k not in allowed]
    if unknown:
        raise _fail(path, f"unknown field(s) {sorted(map(str, unknown))}; allowed: {', '.join(sorted(allowed))}")


def _name(value: Any, path: str, what: str = "instance name") -> str:
    if is_whole_number(value):
        return str(int(value))  # YAML reads app names like 1 as numbers; they name the same instance
    if not isinstance(value, str) or not value:
        raise _fail(path, f"expected a non-empty {what}, got {shown(value)}")
    problem = utf8_problem(value, what)
    if problem:
        raise _fail(path, problem)
    return value


def _process_id(value: Any, path: str) -> str:
    if not isinstance(value, str) or not _UUID.match(value):
        raise _fail(path, "a process id is a UUID, 8-4-4-4-12 hexadecimal digits (like "
                    f"\"2d0e7635-ca09-42bd-84b3-fee645b255e7\"), got {shown(value)}")
    return str(uuid.UUID(value))


def derived_process_id(name: str, incarnation: int = 0) -> str:
    """The process id kassign gives an instance that names none: fixed by its name (and a new one each
    time it loses its state directory, where Kafka Streams keeps the id)."""
    return str(uuid.uuid5(_PROCESS_NAMESPACE, f"{name}\x00{incarnation}"))


def _tags(value: Any, path: str) -> dict[str, str]:
    tags = _mapping(value, path, "{zone: eu-1a}")
    if len(tags) > MAX_TAGS:
        raise _fail(path, f"at most {MAX_TAGS} client tags (Kafka Streams' limit), got {len(tags)}")
    out = {}
    for key, tag in tags.items():
        key = _name(key, path, "tag key")
        if not isinstance(tag, str) or len(key) > MAX_TAG_KEY_LENGTH or len(tag) > MAX_TAG_VALUE_LENGTH:
            raise _fail(f"{path}.{escaped(key)}", f"a tag is a key of at most {MAX_TAG_KEY_LENGTH} characters with "
                        f"a text value of at most {MAX_TAG_VALUE_LENGTH} (Kafka Streams' limits), got {shown(tag)}")
        out[key] = tag
    return out


# -- the application ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Application:
    """The tasks in ``TaskId`` order, with per-task arrays the engine computes on."""

    partitions: dict[int, tuple[int, bool]]  # subtopology -> (partitions, stateful)
    tasks: list[tuple[int, int]]  # (subtopology, partition), sorted
    stateful: np.ndarray  # bool per task
    state_bytes: np.ndarray  # float64 per task: changelog size at time 0 (0 for stateless tasks)
    growth_bytes: np.ndarray  # bytes per second a running active task adds to its changelog
    record_bytes: np.ndarray
    restore_bytes: np.ndarray  # bytes per second one replica of the task reads from its changelog
    sized: np.ndarray | None = None  # bool per task: its state_bytes is known (None: every stateful task's is)
    # rack-aware assignment (KIP-925): what each subtopology reads, where the partitions' replicas sit
    source_topics: dict[int, list[str]] = field(default_factory=dict)
    changelog_topics: dict[int, list[str]] = field(default_factory=dict)
    partition_racks: dict[str, list[list[str | None]]] = field(default_factory=dict)  # None: no broker.rack

    def task_name(self, task: int) -> str:
        sub, part = self.tasks[task]
        return f"{sub}_{part}"


def _task_values(doc: Mapping, path: str, inherited: dict[str, Any]) -> dict[str, Any]:
    """The size and speed fields given at one level, over what the level above gave."""
    values = dict(inherited)
    if "restore_bytes_per_second" in doc and "restore_records_per_second" in doc:
        raise _fail(path, "give restore_bytes_per_second or restore_records_per_second, not both")
    for key in ("state_bytes", "growth_bytes_per_second", "record_bytes", "restore_bytes_per_second",
                "restore_records_per_second"):
        if key not in doc:
            continue
        where = f"{path}.{key}"
        if key == "restore_records_per_second":
            number = _number(doc[key])
            if number is None or not 0 < number <= MAX_BYTES:
                raise _fail(where, f"expected records per second, more than 0, got {shown(doc[key])}")
            values.pop("restore_bytes_per_second", None)
            values[key] = (number, where)
        else:
            minimum = 1.0 if key in ("record_bytes", "restore_bytes_per_second") else 0.0
            number = size_in_bytes(doc[key], where, rate=key.endswith("per_second"), minimum=minimum)
            if key == "restore_bytes_per_second":
                values.pop("restore_records_per_second", None)
            values[key] = (number, where)
    return values


def _application(doc: Any, sizes_required: bool = True) -> Application:
    """The application; ``sizes_required``: every stateful task needs a changelog size and a restoration
    speed (the classic engine plays restoration; the streams-group engine uses them where given)."""
    doc = _mapping(doc, "application", "{subtopologies: {\"0\": {partitions: 4, stateful: true}}, ...}")
    _known(doc, _APPLICATION, "application")
    subs_doc = _mapping(doc.get("subtopologies"), "application.subtopologies",
                        "{\"0\": {partitions: 4, stateful: true}}")
    if not subs_doc:
        raise _fail("application.subtopologies", "the application needs at least one subtopology")
    top = _task_values(doc, "application", {})
    topics: dict[str, dict[int, list[str]]] = {key: {} for key in _TOPIC_FIELDS}
    partitions: dict[int, tuple[int, bool]] = {}
    values_of: dict[int, dict[str, Any]] = {}
    for raw, spec in subs_doc.items():
        key = str(raw) if is_whole_number(raw) else raw
        path = f"application.subtopologies.{escaped(str(key))}"
        if not isinstance(key, str) or not re.fullmatch(r"0|[1-9][0-9]*", key) or int(key) > JAVA_INT_MAX:
            raise _fail(path, "a subtopology id is a whole number from 0 (\"0\", \"1\", ...), written without sign "
                        "or leading zeros")
        spec = _mapping(spec, path, "{partitions: 4, stateful: true}")
        _known(spec, _TASK_FIELDS | {"partitions", "stateful", *_TOPIC_FIELDS}, path)
        if "partitions" not in spec:
            raise _fail(path, "missing partitions (how many tasks the subtopology has)")
        count = _whole(spec["partitions"], f"{path}.partitions", 1, JAVA_INT_MAX)
        stateful = _flag(spec.get("stateful", False), f"{path}.stateful")
        sub = int(key)
        if sub in partitions:
            raise _fail(path, f"subtopology {sub} is given twice")
        partitions[sub] = (count, stateful)
        values_of[sub] = _task_values(spec, path, top)
        _topics(spec, path, sub, stateful, topics)
    total = sum(count for count, _ in partitions.values())
    partition_budget(total, "streams timeline application.subtopologies")
    if total > MAX_TASKS:
        raise _fail("application.subtopologies", f"{total:,} tasks; the simulator plays at most {MAX_TASKS:,}")
    tasks = [(sub, p) for sub in sorted(partitions) for p in range(partitions[sub][0])]
    first = {}
    index = 0
    for sub in sorted(partitions):
        first[sub] = index
        index += partitions[sub][0]
    overrides: dict[int, dict[str, Any]] = {}
    tasks_doc = _mapping(doc.get("tasks", {}) or {}, "application.tasks", "{\"0_3\": {state_bytes: 8 GiB}}")
    for name, spec in tasks_doc.items():
        path = f"application.tasks.{escaped(str(name))}"
        match = _TASK.match(name) if isinstance(name, str) else None
        if not match:
            raise _fail(path, "a task is written \"SUBTOPOLOGY_PARTITION\", like \"0_3\"")
        sub, part = int(match[1]), int(match[2])
        if sub not in partitions or part >= partitions[sub][0]:
            raise _fail(path, f"no task {name}: " + (f"subtopology {sub} has {partitions[sub][0]} partition(s)"
                                                     if sub in partitions else f"there is no subtopology {sub}"))
        if not partitions[sub][1]:
            raise _fail(path, f"task {name} is stateless (subtopology {sub} is not stateful): it has no changelog")
        spec = _mapping(spec, path, "{state_bytes: 8 GiB}")
        _known(spec, _TASK_FIELDS, path)
        overrides[first[sub] + part] = _task_values(spec, path, values_of[sub])

    n = len(tasks)
    stateful = np.array([partitions[sub][1] for sub, _ in tasks], dtype=bool)
    arrays = {key: np.zeros(n) for key in ("state", "growth", "record", "restore")}
    sized = np.zeros(n, dtype=bool)
    for sub in sorted(partitions):
        count, is_stateful = partitions[sub]
        if not is_stateful:
            continue
        for t in range(first[sub], first[sub] + count):
            values = overrides.get(t, values_of[sub])
            where = (f"application.tasks.{tasks[t][0]}_{tasks[t][1]}" if t in overrides
                     else f"application.subtopologies.{sub}")
            if sizes_required and "state_bytes" not in values:
                raise _fail(where, "a stateful task needs state_bytes (its changelog's size), given for the "
                            "application, its subtopology or the task")
            speed_given = "restore_bytes_per_second" in values or "restore_records_per_second" in values
            if sizes_required and not speed_given:
                raise _fail(where, "a stateful task needs a restoration speed: restore_bytes_per_second or "
                            "restore_records_per_second, given for the application, its subtopology or the task")
            record = values.get("record_bytes", (1024.0, ""))[0]
            sized[t] = "state_bytes" in values
            arrays["state"][t] = values.get("state_bytes", (0.0, ""))[0]
            arrays["growth"][t] = values.get("growth_bytes_per_second", (0.0, ""))[0]
            arrays["record"][t] = record
            if "restore_bytes_per_second" in values:
                arrays["restore"][t] = values["restore_bytes_per_second"][0]
            elif "restore_records_per_second" in values:
                arrays["restore"][t] = values["restore_records_per_second"][0] * record
    return Application(partitions=partitions, tasks=tasks, stateful=stateful, state_bytes=arrays["state"],
                       growth_bytes=arrays["growth"], record_bytes=arrays["record"], restore_bytes=arrays["restore"],
                       sized=None if sizes_required else sized, source_topics=topics["source_topics"],
                       changelog_topics=topics["changelog_topics"],
                       partition_racks=_partition_racks(doc.get("partition_racks", {}) or {}))


def _topics(spec: Mapping, path: str, sub: int, stateful: bool, into: dict[str, dict[int, list[str]]]) -> None:
    """A subtopology's source and changelog topics: task ``S_P`` reads partition P of each."""
    for key in _TOPIC_FIELDS:
        if key not in spec:
            continue
        raw = spec[key]
        if not isinstance(raw, list) or not raw:
            raise _fail(f"{path}.{key}", f"expected a list of topic names, got {shown(raw)}")
        into[key][sub] = list(dict.fromkeys(_name(t, f"{path}.{key}[{i}]", "topic name") for i, t in enumerate(raw)))
    if sub in into["changelog_topics"] and not stateful:
        raise _fail(f"{path}.changelog_topics", "a stateless subtopology has no changelog (give stateful: true)")


def _partition_racks(value: Any) -> dict[str, list[list[str | None]]]:
    """``application.partition_racks`` read as the classic scenario reads it (the classic group scenario's shape)."""
    try:
        return classic_partition_racks(value)
    except ScenarioError as err:
        raise _fail("application.partition_racks", str(err).removeprefix("scenario: partition_racks").lstrip(": "))


def rack_problem(application: Application, settings: dict[str, Any]) -> tuple[str, str] | None:
    """``(path, problem)`` when the timeline cannot play or measure rack-aware assignment: with a strategy
    set (or partition racks given) every subtopology names its source topics, every stateful one its
    changelogs (with a strategy), and every partition a task reads is in ``partition_racks``."""
    strategy = settings["rack_aware_assignment_strategy"]
    if strategy == "none" and not application.partition_racks:
        return None
    why = f"rack_aware_assignment_strategy {strategy}" if strategy != "none" else "application.partition_racks"
    if not application.partition_racks:
        return "application.partition_racks", (f"{why} needs the racks of the partitions the tasks read: per "
                                               "topic, per partition, its replicas' racks")
    for sub, (count, stateful) in sorted(application.partitions.items()):
        path = f"application.subtopologies.{sub}"
        if not application.source_topics.get(sub):
            return f"{path}.source_topics", f"{why} needs the topics subtopology {sub}'s tasks read"
        needed = list(application.source_topics[sub])
        if stateful and strategy != "none":
            if not application.changelog_topics.get(sub):
                return f"{path}.changelog_topics", f"{why} needs the changelog topics of stateful subtopology {sub}"
        needed += application.changelog_topics.get(sub, [])
        for topic in needed:
            listed = len(application.partition_racks.get(topic, []))
            if listed < count:
                return "application.partition_racks", (f"topic {topic} (read by subtopology {sub}'s {count} tasks) "
                                                       f"lists {listed} partition(s); give the racks of "
                                                       f"partitions 0 to {count - 1}")
    return None


# -- instances and events ---------------------------------------------------------------------------

@dataclass(frozen=True)
class InstancePlan:
    threads: int = 1
    process_id: str | None = None  # None: derived from the name
    tags: dict[str, str] = field(default_factory=dict)
    rack: str | None = None  # its consumers' client.rack


@dataclass(frozen=True)
class StreamsEvent:
    """One event as the file gives it (``index``: its place in the file's list)."""

    index: int
    at: float
    type: str
    instance: str | None = None
    down: float = 0.0
    leave_group: bool = True
    state_lost: bool = False
    plan: InstancePlan | None = None  # start of a newcomer, scale_out
    instances: tuple[str, ...] = ()  # scale_out / scale_in: the names, once resolved
    count: int = 0  # scale_out: add; scale_in: remove (0: the instances listed)
    prefix: str | None = None  # scale_out: how newcomers are named
    given: frozenset[str] = frozenset()  # start: which of threads, process_id, tags, rack the event gives

    def describe(self) -> str:
        from kassign.core.units import human_seconds

        if self.type == "restart":
            lost = ", state lost" if self.state_lost else ""
            return f"restart {self.instance} (down {human_seconds(self.down)}{lost})"
        if self.type == "scale_out":
            return f"scale out +{len(self.instances)} ({', '.join(self.instances)})"
        if self.type == "scale_in":
            return f"scale in -{len(self.instances)} ({', '.join(self.instances)})"
        if self.type == "stop" and not self.leave_group:
            return f"stop {self.instance} (no leave)"
        if self.type == "crash" and self.state_lost:
            return f"crash {self.instance} (state lost)"
        if self.type == "start" and self.state_lost:
            return f"start {self.instance} (state lost)"
        return f"{self.type} {self.instance}"


@dataclass(frozen=True)
class Action:
    """What the engine plays: one instance starting or stopping, for the event ``record`` (the index
    of the scenario event in time order, 0 being the start of the timeline)."""

    at: float
    order: int
    kind: str  # start, stop, crash
    instance: str
    record: int
    leave_group: bool = True
    state_lost: bool = False
    plan: InstancePlan | None = None


@dataclass(frozen=True)
class StreamsTimeline:
    application: Application
    settings: dict[str, Any]
    instances: dict[str, InstancePlan]  # at time 0
    events: list[StreamsEvent]  # in time order
    actions: list[Action]  # in the order the engine plays them
    names: list[str]  # every instance the timeline ever has, in order of first appearance
    plans: dict[str, InstancePlan]  # every instance's first plan
    name: str = "streams timeline"
    description: str = ""
    strategies: tuple[str, ...] = ()
    until: float | None = None
    protocol: str = "classic"  # or streams: a streams group (KIP-1071)
    given_settings: tuple[str, ...] = ()  # the settings the document gives (the rest are defaults)


def _instance_plan(doc: Any, path: str) -> InstancePlan:
    doc = _mapping(doc if doc is not None else {}, path, "{threads: 2}")
    _known(doc, _INSTANCE_FIELDS, path)
    return InstancePlan(
        threads=_whole(doc.get("threads", 1), f"{path}.threads", 1, MAX_THREADS, " (num.stream.threads)"),
        process_id=_process_id(doc["process_id"], f"{path}.process_id") if doc.get("process_id") is not None else None,
        tags=_tags(doc.get("tags", {}) or {}, f"{path}.tags"),
        rack=_name(doc["rack"], f"{path}.rack", "rack (client.rack)") if doc.get("rack") is not None else None,
    )


def _event(doc: Any, index: int) -> StreamsEvent:
    path = f"events[{index}]"
    doc = _mapping(doc, path, "{at: 15m, type: restart, instance: app-1, down: 60}")
    kind = doc.get("type")
    if not isinstance(kind, str) or kind not in EVENT_FIELDS:
        raise _fail(f"{path}.type", f"expected one of {', '.join(EVENT_FIELDS)}, got {shown(kind)}")
    required, optional = EVENT_FIELDS[kind]
    missing = sorted((required | {"at"}) - set(doc))
    if missing:
        raise _fail(path, f"a {kind} event needs {', '.join(missing)}")
    unknown = set(doc) - required - optional - {"at", "type"}
    if unknown:
        raise _fail(path, f"unknown field(s) {sorted(map(str, unknown))} for a {kind} event; allowed: "
                    f"{', '.join(sorted(required | optional | {'at', 'type'}))}")
    at = seconds(doc["at"], f"{path}.at")
    instance = _name(doc["instance"], f"{path}.instance") if "instance" in doc else None
    leave = _flag(doc.get("leave_group", True), f"{path}.leave_group")
    lost = _flag(doc.get("state_lost", False), f"{path}.state_lost")
    if kind == "start":
        given = {k: doc[k] for k in ("threads", "process_id", "tags", "rack") if k in doc}
        return StreamsEvent(index, at, kind, instance, state_lost=lost, plan=_instance_plan(given, path),
                            given=frozenset(given))
    if kind == "restart":
        return StreamsEvent(index, at, kind, instance, down=seconds(doc["down"], f"{path}.down"), leave_group=leave,
                            state_lost=lost)
    if kind == "scale_out":
        add = _whole(doc["add"], f"{path}.add", 1, MAX_INSTANCES)
        plan = _instance_plan({k: doc[k] for k in ("threads", "rack") if k in doc}, path)
        prefix = _name(doc["prefix"], f"{path}.prefix", "prefix") if "prefix" in doc else None
        return StreamsEvent(index, at, kind, plan=plan, count=add, prefix=prefix)
    if kind == "scale_in":
        if ("remove" in doc) == ("instances" in doc):
            raise _fail(path, "a scale_in event needs remove (how many) or instances (which ones), one of them")
        if "remove" in doc:
            return StreamsEvent(index, at, kind, leave_group=leave,
                                count=_whole(doc["remove"], f"{path}.remove", 1, MAX_INSTANCES))
        else:
            listed = doc["instances"]
            if not isinstance(listed, list) or not listed:
                raise _fail(f"{path}.instances", f"expected a list of instance names, got {shown(listed)}")
            names = tuple(_name(n, f"{path}.instances[{i}]") for i, n in enumerate(listed))
            if len(set(names)) < len(names):
                raise _fail(f"{path}.instances", "an instance is listed twice")
        return StreamsEvent(index, at, kind, leave_group=leave, instances=names)
    return StreamsEvent(index, at, kind, instance, leave_group=leave, state_lost=lost)


def _stem(names: list[str]) -> str:
    """``app-`` for instances named ``app-1``, ``app-2``: how scale_out names newcomers."""
    for name in names:
        match = re.fullmatch(r"(.*?)([0-9]+)", name)
        if match:
            return match[1]
    return "instance-"


def _resolve(instances: dict[str, InstancePlan], events: list[StreamsEvent]) -> tuple[list[StreamsEvent],
                                                                                         list[Action], list[str],
                                                                                         dict[str, InstancePlan]]:
    """Play the timeline's starts and stops in order: names must make sense when they act. Gives the
    events with scale_out and scale_in names filled in, and the engine's actions."""
    names = list(instances)
    plans = dict(instances)
    running = set(instances)
    ever: set[str] = set(instances)
    down_until: dict[str, tuple[float, str]] = {}  # restarting instance -> (back at, which event)
    stem = _stem(names)
    resolved: list[StreamsEvent] = []
    actions: list[Action] = []
    queue: list[tuple[float, int, int, Action]] = []  # returns from restarts, in time order
    order = 0

    def take_due(until: float, inclusive: bool) -> None:
        while queue and (queue[0][0] < until or (inclusive and queue[0][0] == until)):
            _, _, _, action = heapq.heappop(queue)
            running.add(action.instance)
            down_until.pop(action.instance, None)
            actions.append(action)

    for record, event in enumerate(events, start=1):
        take_due(event.at, inclusive=False)
        # a return due at this very time comes first when its restart was listed before this event
        while queue and queue[0][0] == event.at and queue[0][1] < event.index:
            _, _, _, action = heapq.heappop(queue)
            running.add(action.instance)
            down_until.pop(action.instance, None)
            actions.append(action)
        where = f"events[{event.index}] ({event.type} at {event.at:g} s)"

        def must_run(name: str) -> None:
            if name in running:
                return
            if name in down_until:
                back, who = down_until[name]
                raise _fail(where, f"instance {name!r} is down then (restarted by {who}, back at {back:g} s)")
            if name in ever:
                raise _fail(where, f"instance {name!r} is not running at this point (it stopped or crashed "
                            "earlier; a start event brings it back)")
            raise _fail(where, f"no instance {name!r}; running: {', '.join(sorted(running)) or 'none'}")

        if event.type in ("stop", "crash", "restart"):
            must_run(event.instance)
            running.discard(event.instance)
            kind = "crash" if event.type == "crash" else "stop"
            actions.append(Action(event.at, order, kind, event.instance, record, event.leave_group,
                                  event.state_lost if event.type == "crash" else False))
            order += 1
            if event.type == "restart":
                back = event.at + event.down
                down_until[event.instance] = (back, where)
                heapq.heappush(queue, (back, event.index, order, Action(back, order, "start", event.instance, record,
                                                                          state_lost=event.state_lost,
                                                                          plan=plans[event.instance])))
                order += 1
            resolved.append(event)
        elif event.type == "start":
            name = event.instance
            if name in running:
                raise _fail(where, f"instance {name!r} is already running")
            if name in down_until:
                back, who = down_until[name]
                raise _fail(where, f"instance {name!r} is restarting (by {who}) and comes back by itself at "
                            f"{back:g} s; drop this start or the restart's down time")
            if name not in ever:
                ever.add(name)
                names.append(name)
                plans[name] = plan = event.plan
            else:
                if "process_id" in event.given and event.plan.process_id != plans[name].process_id:
                    raise _fail(where, f"instance {name!r} comes back with another process_id; Kafka Streams keeps "
                                "it in the state directory (give state_lost: true for a new one, which it draws "
                                "itself)")
                plan = plans[name]
                if "threads" in event.given:
                    plan = replace(plan, threads=event.plan.threads)
                if "tags" in event.given:
                    plan = replace(plan, tags=event.plan.tags)
                if "rack" in event.given:
                    plan = replace(plan, rack=event.plan.rack)
            running.add(name)
            actions.append(Action(event.at, order, "start", name, record, state_lost=event.state_lost, plan=plan))
            order += 1
            resolved.append(event)
        elif event.type == "scale_out":
            prefix = event.prefix or stem
            new = []
            number = 1
            for _ in range(event.count):
                while f"{prefix}{number}" in ever:
                    number += 1
                name = f"{prefix}{number}"
                ever.add(name)
                names.append(name)
                plans[name] = event.plan
                running.add(name)
                new.append(name)
                actions.append(Action(event.at, order, "start", name, record, plan=event.plan))
                order += 1
            resolved.append(StreamsEvent(event.index, event.at, event.type, plan=event.plan, instances=tuple(new),
                                         count=event.count, prefix=event.prefix))
        else:  # scale_in
            if not event.count:
                chosen = list(event.instances)
                for name in chosen:
                    must_run(name)
            else:
                candidates = [n for n in names if n in running]
                if len(candidates) < event.count:
                    raise _fail(where, f"remove {event.count} instance(s), but {len(candidates)} run then")
                chosen = candidates[len(candidates) - event.count:][::-1]
            for name in chosen:
                running.discard(name)
                actions.append(Action(event.at, order, "stop", name, record, event.leave_group))
                order += 1
            resolved.append(StreamsEvent(event.index, event.at, event.type, leave_group=event.leave_group,
                                         instances=tuple(chosen), count=event.count))
    take_due(math.inf, inclusive=True)
    if len(names) > MAX_INSTANCES:
        raise _fail("events", f"{len(names):,} instances in all; the simulator plays at most {MAX_INSTANCES:,}")
    return resolved, actions, names, plans


def rack_strategy(value: Any, path: str) -> str:
    """A ``rack.aware.assignment.strategy``: none, min_traffic or balance_subtopology."""
    if value not in RACK_AWARE_STRATEGIES:
        raise _fail(path, f"expected one of {', '.join(RACK_AWARE_STRATEGIES)} (rack.aware.assignment.strategy), "
                    f"got {shown(value)}")
    return value


def parse_streams_strategy(strategy: str, protocol: str = "classic") -> tuple[str, int | None]:
    """``(assignor, standbys)`` a simulated strategy stands for: ``high-availability``, ``sticky`` or kassign's
    ``optimal`` (under the streams protocol only ``sticky``, the broker's), optionally ``:standbys=N`` to play it
    with ``num_standby_replicas`` N instead of the timeline's (see :func:`streams_strategy_options`)."""
    head, standbys, _ = streams_strategy_options(strategy, protocol)
    return head, standbys


def streams_strategy_options(strategy: str, protocol: str = "classic") -> tuple[str, int | None, str | None]:
    """``(assignor, standbys, rack strategy)``: ``NAME``, then optionally ``:standbys=N`` and (classic protocol)
    ``:rack=none|min_traffic|balance_subtopology`` (played with that rack-aware strategy instead of the
    timeline's), in either order."""
    head, *options = strategy.split(":")
    if protocol == "streams" and head != "sticky":
        raise ScenarioError(f"unknown streams group assignor {shown(head)}: the broker's task assignor under "
                            "the streams protocol is sticky (optionally sticky:standbys=N)")
    if head not in ASSIGNORS:
        raise ScenarioError(f"unknown Kafka Streams task assignor {shown(head)}; choose one of: "
                            f"{', '.join(ASSIGNORS)} (optionally NAME:standbys=N, NAME:rack=STRATEGY)")
    standbys: int | None = None
    rack: str | None = None
    racks = "|".join(RACK_AWARE_STRATEGIES) if protocol == "classic" else "(?!)"
    for option in options:
        count = re.fullmatch(r"standbys=(0|[1-9][0-9]{0,5})", option)
        chosen = re.fullmatch(rf"rack=({racks})", option)
        if count and standbys is None:
            standbys = int(count[1])
        elif chosen and rack is None:
            rack = chosen[1]
        else:
            also = "" if protocol == "streams" else f" or :rack={'|'.join(RACK_AWARE_STRATEGIES)}"
            raise ScenarioError(f"strategy {shown(strategy)}: after the assignor's name only :standbys=N{also} may "
                                "follow, each once (N standby replicas instead of the timeline's num_standby_replicas"
                                + ("" if protocol == "streams" else "; a rack-aware strategy instead of its own") + ")")
    return head, standbys, rack


def _settings(doc: Any, protocol: str = "classic") -> dict[str, Any]:
    doc = _mapping(doc if doc is not None else {}, "settings", "{num_standby_replicas: 1}")
    if protocol == "classic":
        misplaced = [k for k in doc if k in STREAMS_PROTOCOL_SETTINGS]
        if misplaced:
            raise _fail(f"settings.{misplaced[0]}", "a setting of the streams protocol's group coordinator; add "
                        "protocol: streams to play the timeline as a streams group (KIP-1071)")
        _known(doc, set(SETTINGS), "settings")
        settings = dict(SETTINGS)
    else:
        _known(doc, set(SETTINGS) | set(STREAMS_PROTOCOL_SETTINGS), "settings")
        settings = {**SETTINGS, **STREAMS_PROTOCOL_SETTINGS}
    for key, value in doc.items():
        path = f"settings.{key}"
        if key in STREAMS_PROTOCOL_SETTINGS:
            settings[key] = seconds(value, path, 0.001 if key == "heartbeat_interval" else 0.0)
        elif key == "num_standby_replicas":
            settings[key] = _whole(value, path, 0, JAVA_INT_MAX)
        elif key == "max_warmup_replicas":
            settings[key] = _whole(value, path, 1, JAVA_INT_MAX, " (Kafka Streams requires at least 1)")
        elif key == "acceptable_recovery_lag":
            settings[key] = _whole(value, path, 0, 2**63 - 1, " records")
        elif key == "probing_rebalance_interval_ms":
            settings[key] = _whole(value, path, 60_000, MAX_SECONDS * 1000, " (Kafka Streams requires at least 60000)")
        elif key == "state_cleanup_delay_ms":
            settings[key] = _whole(value, path, 0, MAX_SECONDS * 1000)
        elif key == "rack_aware_assignment_tags":
            if not isinstance(value, list) or len(value) > MAX_TAGS:
                raise _fail(path, f"expected a list of at most {MAX_TAGS} tag keys, got {shown(value)}")
            settings[key] = [_name(v, f"{path}[{i}]", "tag key") for i, v in enumerate(value)]
        elif key == "initial_state":
            if value not in INITIAL_STATES:
                raise _fail(path, f"expected settled (every task running where the assignment settled, caught up) "
                            f"or empty (a first deployment: nothing on disk anywhere), got {shown(value)}")
            settings[key] = value
        elif key == "round_seconds":
            settings[key] = seconds(value, path)
        elif key == "rack_aware_assignment_strategy":
            settings[key] = rack_strategy(value, path)
        elif key in ("rack_aware_assignment_traffic_cost", "rack_aware_assignment_non_overlap_cost"):
            # StreamsConfig takes any int (no validator); null keeps the assignor's default
            settings[key] = None if value is None else _whole(value, path, JAVA_INT_MIN, JAVA_INT_MAX,
                                                              " (null for the assignor's default)")
        else:
            settings[key] = seconds(value, path, 0.001)
    return settings


def parse_streams_timeline(doc: Any) -> StreamsTimeline:
    """Check a Streams timeline document and give it as a :class:`StreamsTimeline`."""
    doc = _mapping(doc, "(top level)", "{application: ..., instances: ..., events: [...]}")
    unknown = [k for k in doc if k not in _TOP_LEVEL]
    if unknown:
        raise ScenarioError(f"streams timeline: unknown field(s) {sorted(map(str, unknown))}; allowed: "
                            f"{', '.join(sorted(_TOP_LEVEL))}")
    protocol = doc.get("protocol", "classic")
    if protocol not in PROTOCOLS:
        raise _fail("protocol", f"expected classic (the group leader assigns, as Kafka Streams does by default) or "
                    f"streams (a streams group, KIP-1071: the broker assigns), got {shown(protocol)}")
    application = _application(doc.get("application"), sizes_required=protocol == "classic")
    settings = _settings(doc.get("settings"), protocol)
    if protocol == "streams" and settings["heartbeat_interval"] >= settings["session_timeout"]:
        raise _fail("settings.heartbeat_interval", f"{settings['heartbeat_interval']:g} s must be less than "
                    f"session_timeout ({settings['session_timeout']:g} s), as Kafka requires")
    instances_doc = _mapping(doc.get("instances", {}) or {}, "instances", "{app-1: {threads: 2}}")
    instances: dict[str, InstancePlan] = {}
    for raw, spec in instances_doc.items():
        name = _name(raw, "instances")
        path = f"instances.{escaped(name)}"
        if name in instances:
            raise _fail(path, f"instance {name!r} is given twice (once as a number, once as text)")
        instances[name] = _instance_plan(spec, path)
    events_doc = doc.get("events", []) or []
    if not isinstance(events_doc, list):
        raise _fail("events", f"expected a list of events, got {shown(events_doc)}")
    events = sorted((_event(e, i) for i, e in enumerate(events_doc)), key=lambda e: e.at)  # stable
    events, actions, names, plans = _resolve(instances, events)
    _check_plans(plans, settings)
    problem = rack_problem(application, settings) if protocol == "classic" else None
    if problem:
        raise _fail(*problem)
    strategies = doc.get("strategies", []) or []
    if not isinstance(strategies, list) or not all(isinstance(s, str) for s in strategies):
        raise _fail("strategies", f"expected a list of strategy names, got {shown(strategies)}")
    for i, strategy in enumerate(strategies):
        try:
            parse_streams_strategy(strategy, protocol)
        except ScenarioError as err:
            raise _fail(f"strategies[{i}]", str(err)) from None
    until = seconds(doc["until"], "until") if doc.get("until") is not None else None
    if until is not None and events and until < events[-1].at:
        raise _fail("until", f"{until:g} s is before the last event ({events[-1].at:g} s)")
    given = doc.get("settings") or {}
    return StreamsTimeline(application=application, settings=settings, instances=instances, events=events,
                           actions=actions, names=names, plans=plans, name=str(doc.get("name", "streams timeline")),
                           description=str(doc.get("description", "")), strategies=tuple(strategies), until=until,
                           protocol=protocol, given_settings=tuple(k for k in given if isinstance(k, str)))


def _check_plans(plans: dict[str, InstancePlan], settings: dict[str, Any]) -> None:
    """Process ids distinct; the tags that rack_aware_assignment_tags names present on every instance."""
    seen: dict[str, str] = {}
    for name, plan in plans.items():
        pid = plan.process_id or derived_process_id(name)
        if pid in seen:
            raise _fail(f"instances.{escaped(name)}", f"process id {pid} is also {seen[pid]!r}'s; every Kafka "
                        "Streams instance has its own")
        seen[pid] = name
        missing = [t for t in settings["rack_aware_assignment_tags"] if t not in plan.tags]
        if missing:
            raise _fail(f"instances.{escaped(name)}.tags", f"settings.rack_aware_assignment_tags names {missing}, "
                        "which this instance lacks (Kafka Streams refuses to start it)")


def load_streams_timeline(path: str | Path) -> StreamsTimeline:
    """Read and check a Streams timeline file (YAML or JSON; ``-`` reads stdin)."""
    if str(path) == "-":
        return parse_streams_timeline(load_yaml(sys.stdin.read(), "timeline on stdin"))
    return parse_streams_timeline(load_yaml(read_scenario_text(path), f"timeline file {str(path)!r}"))
