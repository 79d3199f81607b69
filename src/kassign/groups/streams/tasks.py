"""A streams group's scenario (SPEC section 7), read into integers.

The document::

    {"subtopologies": {"0": {"partitions": 4, "stateful": true}, "1": {"partitions": 2}},
     "num_standby_replicas": 1,
     "members": {"m1": {"process_id": "p1", "active": {"0": [0, 1]}, "standby": {"1": [0]},
                        "warmup": {}, "instance_id": "i1", "rack": "r1", "client_tags": {"zone": "a"}}}}

A task is a subtopology's partition. Tasks are numbered subtopology by subtopology, the
subtopologies in Java's ``String`` order (the order Kafka's ``TaskId`` sorts them), partitions
ascending within each: subtopology ``s`` holds tasks ``task_start[s] .. task_start[s + 1] - 1``.
Members keep the position they are listed at; processes are numbered in the order their first
member is listed. A member's ``active``/``standby``/``warmup`` maps are its current target
assignment (what the previous round gave it); all three are optional, as are ``stateful``
(default false), ``num_standby_replicas`` (default 0, Kafka's ``group.streams.num.standby.replicas``)
and the fields the sticky assignor does not read (``instance_id``, ``rack``, ``client_tags``).

What is refused, with a ``ScenarioError`` naming the place: a member without a string
``process_id``; a negative ``num_standby_replicas``; a negative partition number; one task active on
two members (the coordinator's target assignment never holds that); numbers that are not whole (or
do not fit Kafka's Java ``int``); unknown fields. Odd input that Kafka's coordinator hands its
assignor is taken as the assignor takes it: a current task that no longer exists (of a subtopology
the topology no longer has, or a partition at or beyond the subtopology's count, as after a
topology change; Kafka 4.3.1's own vectors hold such leftovers) is left out; a partition listed twice
in one list counts once (Kafka keeps the lists as sets); a task both active and standby on one
member, a standby on several members of one process and a standby of a stateless subtopology are
each simply remembered as previous owners.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kassign.errors import ScenarioError, shown
from kassign.javaorder import java_sorted_positions
from kassign.limits import JAVA_INT_MAX, MAX_PARTITIONS

_SCENARIO_KEYS = frozenset({"subtopologies", "num_standby_replicas", "members"})
_SUBTOPOLOGY_KEYS = frozenset({"partitions", "stateful"})
_MEMBER_KEYS = frozenset({"process_id", "active", "standby", "warmup", "instance_id", "rack", "client_tags"})
TASK_KINDS = ("active", "standby", "warmup")


@dataclass(frozen=True, slots=True)
class StreamsGroup:
    """A streams group as integers: tasks, members, processes and the current target assignment."""

    subtopology_ids: tuple[str, ...]  # in Java's String order
    task_start: np.ndarray  # int64, len(subtopology_ids) + 1: first task number of each subtopology
    stateful: np.ndarray  # bool per subtopology
    num_standby_replicas: int
    member_ids: tuple[str, ...]  # as listed
    process_ids: tuple[str, ...]  # distinct, in the order their first member is listed
    member_process: np.ndarray  # int64 per member: its process number
    previous_active: np.ndarray  # int64 per task: the member holding it active, or -1
    previous_standby: tuple[np.ndarray, np.ndarray]  # (task, member) pairs, members in listed order
    previous_warmup: tuple[np.ndarray, np.ndarray]  # (task, member) pairs; the sticky assignor ignores them

    @property
    def num_tasks(self) -> int:
        return int(self.task_start[-1])


def _fail(path: str, problem: str) -> ScenarioError:
    return ScenarioError(f"scenario {path}: {problem}")


def _whole(value: Any, path: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _fail(path, f"must be a whole number, got {shown(value)}")
    if not low <= value <= JAVA_INT_MAX:
        raise _fail(path, f"must be from {low} to {JAVA_INT_MAX} (Kafka keeps it in a Java int), got {shown(int(value))}")
    return int(value)


def _mapping(value: Any, path: str, example: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise _fail(path, f"expected an object such as {example}, got {shown(value)}")
    return value


def parse_streams_group(doc: Any) -> StreamsGroup:
    """Check a SPEC section 7 scenario and number its tasks, members and processes."""
    doc = _mapping(doc, "", '{"subtopologies": {...}, "members": {...}}')
    unknown = set(doc) - _SCENARIO_KEYS
    if unknown:
        raise _fail("", f"unknown field(s) {sorted(map(str, unknown))}; allowed: {sorted(_SCENARIO_KEYS)}")
    if "subtopologies" not in doc:
        raise _fail("", 'missing "subtopologies" (subtopology id -> {"partitions": N, "stateful": bool})')
    if "members" not in doc:
        raise _fail("", 'missing "members" (member id -> {"process_id": ..., ...})')
    ids, partitions, stateful = _subtopologies(doc["subtopologies"])
    standbys = _whole(doc.get("num_standby_replicas", 0), "num_standby_replicas")
    task_start = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(partitions, out=task_start[1:])
    _check_sizes(int(task_start[-1]), int(np.dot(partitions, stateful)), standbys)
    members = _mapping(doc["members"], "members", '{"member-1": {"process_id": "p1"}}')
    return _read_members(members, ids, task_start, stateful, standbys)


def _subtopologies(doc: Any) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    doc = _mapping(doc, "subtopologies", '{"0": {"partitions": 4, "stateful": true}}')
    listed: list[str] = []
    for sid, spec in doc.items():
        if not isinstance(sid, str):
            raise _fail("subtopologies", f"subtopology ids must be strings, got {shown(sid)}")
        spec = _mapping(spec, f"subtopologies.{sid}", '{"partitions": 4, "stateful": true}')
        if not _SUBTOPOLOGY_KEYS.issuperset(spec):
            unknown = sorted(map(str, set(spec) - _SUBTOPOLOGY_KEYS))
            raise _fail(f"subtopologies.{sid}", f"unknown field(s) {unknown}; allowed: {sorted(_SUBTOPOLOGY_KEYS)}")
        if "partitions" not in spec:
            raise _fail(f"subtopologies.{sid}", 'missing "partitions" (the number of tasks: its input partitions)')
        if not isinstance(spec.get("stateful", False), bool):
            raise _fail(f"subtopologies.{sid}.stateful", f"must be true or false, got {shown(spec['stateful'])}")
        listed.append(sid)
    order = java_sorted_positions(listed)
    ids = tuple(listed[i] for i in order)
    partitions = np.array([_whole(doc[s]["partitions"], f"subtopologies.{s}.partitions") for s in ids], dtype=np.int64)
    stateful = np.array([doc[s].get("stateful", False) for s in ids], dtype=bool)
    return ids, partitions, stateful


def _check_sizes(tasks: int, stateful_tasks: int, standbys: int) -> None:
    if tasks > MAX_PARTITIONS:
        raise _fail("subtopologies", f"{tasks:,} tasks is more than kassign materialises in one request "
                                     f"({MAX_PARTITIONS:,})")
    # Kafka counts every replica (active and standby) in Java ints; beyond that its quotas overflow.
    if tasks + stateful_tasks * standbys > JAVA_INT_MAX:
        raise _fail("num_standby_replicas", f"{standbys} standby replicas of {stateful_tasks:,} stateful tasks "
                                            f"exceed the {JAVA_INT_MAX:,} task replicas Kafka can count")


def _read_members(members: Mapping, ids: tuple[str, ...], task_start: np.ndarray, stateful: np.ndarray,
                  standbys: int) -> StreamsGroup:
    position = {sid: s for s, sid in enumerate(ids)}
    sizes = np.diff(task_start).tolist()
    starts = task_start.tolist()
    process_number: dict[str, int] = {}
    member_process: list[int] = []
    pairs: dict[str, tuple[list[int], list[int]]] = {kind: ([], []) for kind in TASK_KINDS}
    for m, (member_id, spec) in enumerate(members.items()):
        if not isinstance(member_id, str):
            raise _fail("members", f"member ids must be strings, got {shown(member_id)}")
        path = f"members.{member_id}"
        spec = _mapping(spec, path, '{"process_id": "p1"}')
        if not _MEMBER_KEYS.issuperset(spec):
            unknown = sorted(map(str, set(spec) - _MEMBER_KEYS))
            raise _fail(path, f"unknown field(s) {unknown}; allowed: {sorted(_MEMBER_KEYS)}")
        process = spec.get("process_id")
        if not isinstance(process, str):
            raise _fail(f"{path}.process_id", "every member needs its process id (a string: the application "
                                              f"instance it runs in), got {shown(process)}")
        member_process.append(process_number.setdefault(process, len(process_number)))
        _check_optional_text(spec, path)
        for kind in TASK_KINDS:
            held = spec.get(kind)
            if held:
                tasks, owners = pairs[kind]
                for task in _held_tasks(held, f"{path}.{kind}", position, starts, sizes):
                    tasks.append(task)
                    owners.append(m)
    num_tasks = int(task_start[-1])
    previous_active = _sole_owners(pairs["active"], num_tasks, list(members), ids, task_start)
    return StreamsGroup(
        subtopology_ids=ids,
        task_start=task_start,
        stateful=stateful,
        num_standby_replicas=standbys,
        member_ids=tuple(members),
        process_ids=tuple(process_number),
        member_process=np.array(member_process, dtype=np.int64),
        previous_active=previous_active,
        previous_standby=_pair_arrays(pairs["standby"]),
        previous_warmup=_pair_arrays(pairs["warmup"]),
    )


def _check_optional_text(spec: Mapping, path: str) -> None:
    for key in ("instance_id", "rack"):
        if spec.get(key) is not None and not isinstance(spec[key], str):
            raise _fail(f"{path}.{key}", f"must be a string, got {shown(spec[key])}")
    tags = spec.get("client_tags")
    if tags is not None and not (isinstance(tags, Mapping)
                                 and all(isinstance(k, str) and isinstance(v, str) for k, v in tags.items())):
        raise _fail(f"{path}.client_tags", f"must map tag names to string values, got {shown(tags)}")


def _held_tasks(held: Any, path: str, position: Mapping[str, int], starts: list[int], sizes: list[int]) -> list[int]:
    """Task numbers of one member's ``{subtopology: [partitions]}`` map, each list taken as a set.

    Tasks that no longer exist (a subtopology the topology lost, a partition at or beyond its count
    now) are left out: the coordinator hands Kafka's assignor such leftovers of the previous target
    assignment after a topology change, and the assignor never looks them up."""
    held = _mapping(held, path, '{"0": [0, 1]}')
    out: list[int] = []
    for sid, partitions in held.items():
        where = f"{path}.{sid}"
        if not isinstance(sid, str):
            raise _fail(path, f"subtopology ids must be strings, got {shown(sid)}")
        if not isinstance(partitions, (list, tuple)):
            raise _fail(where, f"expected a list of partition numbers, got {shown(partitions)}")
        if not all(type(p) is int for p in partitions):
            for p in partitions:
                _whole(p, where)
        if partitions and (min(partitions) < 0 or max(partitions) > JAVA_INT_MAX):
            bad = next(p for p in partitions if not 0 <= p <= JAVA_INT_MAX)
            raise _fail(where, f"partition {shown(bad)} is out of range: partition numbers run from 0 to "
                               f"{JAVA_INT_MAX}")
        s = position.get(sid)
        if s is None:
            continue
        start, size = starts[s], sizes[s]
        out.extend(dict.fromkeys(start + int(p) for p in partitions if p < size))
    return out


def _sole_owners(pairs: tuple[list[int], list[int]], num_tasks: int, member_ids: list[str],
                 ids: tuple[str, ...], task_start: np.ndarray) -> np.ndarray:
    tasks, owners = (np.array(column, dtype=np.int64) for column in pairs)
    owner = np.full(num_tasks, -1, dtype=np.int64)
    owner[tasks] = owners
    if len(tasks) and len(np.unique(tasks)) < len(tasks):
        seen: dict[int, int] = {}
        for task, member in zip(tasks.tolist(), owners.tolist()):
            if task in seen and seen[task] != member:
                s = int(np.searchsorted(task_start, task, side="right")) - 1
                raise _fail("members", f"task {ids[s]}_{task - int(task_start[s])} is active on two members, "
                                       f"{member_ids[seen[task]]!r} and {member_ids[member]!r}; a task has one "
                                       "active owner")
            seen[task] = member
    return owner


def _pair_arrays(pairs: tuple[list[int], list[int]]) -> tuple[np.ndarray, np.ndarray]:
    return np.array(pairs[0], dtype=np.int64), np.array(pairs[1], dtype=np.int64)
