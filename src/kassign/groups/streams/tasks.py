"""A streams group's scenario (the manual: docs/formats.md), read into integers.

The document::

    {"subtopologies": {"0": {"partitions": 4, "stateful": true}, "1": {"partitions": 2}},
     "num_standby_replicas": 1,
     "members": {"m1": {"process_id": "p1", "active": {"0": [0, 1]}, "standby": {"1": [0]},
                        "warmup": {}, "instance_id": "i1", "rack": "r1", "client_tags": {"zone": "a"},
                        "offset_sums": {"0_2": 1200}}}}

A task is a subtopology's partition. Tasks are numbered subtopology by subtopology, the
subtopologies in Java's ``String`` order (the order Kafka's ``TaskId`` sorts them), partitions
ascending within each: subtopology ``s`` holds tasks ``task_start[s] .. task_start[s + 1] - 1``.
Members keep the position they are listed at; processes are numbered in the order their first
member is listed. A member's ``active``/``standby``/``warmup`` maps are its current tasks as the
coordinator hands them to the assignor (Kafka 4.2 and 4.3: its target of the previous round; 4.4: the tasks
it is assigned now, the same in a reconciled group); all three are optional, as are ``stateful``
(default false), ``num_standby_replicas`` (default 0, Kafka's ``group.streams.num.standby.replicas``)
and the fields the sticky assignor does not read (``instance_id``, ``rack``, ``client_tags``).

``offset_sums``: the task offset sums the member last reported in its heartbeat (Kafka 4.4, KAFKA-20719):
task ``"SUBTOPOLOGY_PARTITION"`` -> the sum of its changelog offsets in the member's local state (a
Java ``long``, 0 or more, as Kafka Streams computes it; tasks it runs as active are not reported). Named
as the classic Kafka Streams scenario names a consumer's offset sums; the task name is
split at its last ``_``, so a subtopology id may hold ``_`` itself. Kafka 4.4's assignor reads them;
4.2's and 4.3's take none (the field changes nothing there).

What is refused, with a ``ScenarioError`` naming the place: a member without a string
``process_id``; a negative ``num_standby_replicas``; a negative partition number; one task active on
two members (the coordinator's target assignment never holds that); numbers that are not whole (or
do not fit Kafka's Java ``int``); unknown fields; an offset sum that is not a whole number from 0 to
2^63 - 1, or under a name that is no task (``"0_3"``: a partition number without sign or leading zeros
after the last ``_``). Odd input that Kafka's coordinator hands its
assignor is taken as the assignor takes it: a current task that no longer exists (of a subtopology
the topology no longer has, or a partition at or beyond the subtopology's count, as after a
topology change; Kafka 4.3.1's own vectors hold such leftovers) is left out; a partition listed twice
in one list counts once (Kafka keeps the lists as sets); a task both active and standby on one
member, a standby on several members of one process and a standby of a stateless subtopology are
each simply remembered as previous owners; an offset sum of a task that no longer exists (a member's
state directory can hold tasks of an older topology) is left out.

The members are read column by column; ``_native.c`` reads the plainest documents (exact dicts,
strs and ints) in C and declines anything else, which the Python reader then reads or refuses, so
every message comes from here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain, repeat
from types import ModuleType
from typing import Any

import numpy as np

from kassign.core.errors import ScenarioError, shown
from kassign.core.javaorder import java_sorted_positions
from kassign.core.limits import JAVA_INT_MAX, MAX_PARTITIONS

JAVA_LONG_MAX = 2**63 - 1


def _load_native() -> ModuleType | None:
    """The C edges (``_native.c``), unless not built or ``KASSIGN_NO_NATIVE=1`` (as for :mod:`kassign._accel`).
    Each declines (returns None) what it does not read exactly as the Python path, which then decides."""
    if os.environ.get("KASSIGN_NO_NATIVE", "") not in ("", "0"):
        return None
    try:
        from kassign.groups.streams import _native
    except ImportError:
        return None
    return _native


native = _load_native()

_SCENARIO_KEYS = frozenset({"subtopologies", "num_standby_replicas", "members"})
_SUBTOPOLOGY_KEYS = frozenset({"partitions", "stateful"})
_MEMBER_KEYS = frozenset({"process_id", "active", "standby", "warmup", "instance_id", "rack", "client_tags",
                          "offset_sums"})
TASK_KINDS = ("active", "standby", "warmup")


_NONE = np.zeros(0, dtype=np.int64)
_NONE.flags.writeable = False


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
    previous_standby: tuple[np.ndarray, np.ndarray]  # (task, member) pairs as listed (a pair may repeat)
    previous_warmup: tuple[np.ndarray, np.ndarray]  # the same for warm-ups; the sticky assignor ignores them
    # (task, member, offset sum) per reported offset sum of a task that exists, member by member
    task_offsets: tuple[np.ndarray, np.ndarray, np.ndarray] = (_NONE, _NONE, _NONE)

    @property
    def num_tasks(self) -> int:
        return int(self.task_start[-1])


def _fail(path: str, problem: str) -> ScenarioError:
    return ScenarioError(f"scenario {path}: {problem}")


def _whole(value: Any, path: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _fail(path, f"must be a whole number, got {shown(value)}")
    if not low <= value <= JAVA_INT_MAX:
        raise _fail(path, f"must be from {low} to {JAVA_INT_MAX} (Kafka keeps it in a Java int), "
                          f"got {shown(int(value))}")
    return int(value)


def _mapping(value: Any, path: str, example: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise _fail(path, f"expected an object such as {example}, got {shown(value)}")
    return value


def parse_streams_group(doc: Any) -> StreamsGroup:
    """Check a streams group's scenario and number its tasks, members and processes."""
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
    if native is not None and type(members) is dict:
        read = native.read_members(members, {sid: s for s, sid in enumerate(ids)}, task_start.tolist())
        if read is not None:
            member_process, tasks, owners, kinds = (np.frombuffer(read[i], dtype=np.int64) for i in (0, 2, 3, 4))
            offsets = None if read[5] is None else tuple(np.frombuffer(item, dtype=np.int64) for item in read[5])
            return _group(ids, task_start, stateful, standbys, tuple(members), tuple(read[1]), member_process,
                          tasks, owners, kinds, offsets)
    # Column by column: one Python step per member per field is what costs at group scale, and
    # C-level loops (map, comprehensions, set(map(type, ...))) keep each step short.
    member_ids = tuple(members)
    specs = list(members.values())
    if not (set(map(type, member_ids)) <= {str} and set(map(type, specs)) <= {dict}
            and all(map(_MEMBER_KEYS.issuperset, specs))):
        specs = [_member_spec(member_id, spec) for member_id, spec in members.items()]
    processes = [spec.get("process_id") for spec in specs]
    bad = [] if set(map(type, processes)) <= {str} else [m for m, p in enumerate(processes) if not isinstance(p, str)]
    if bad:
        raise _fail(f"members.{member_ids[bad[0]]}.process_id", "every member needs its process id (a string: the "
                                                                "application instance it runs in), got "
                                                                f"{shown(processes[bad[0]])}")
    number = {process: p for p, process in enumerate(dict.fromkeys(processes))}
    for m in [m for m, spec in enumerate(specs) if not _TEXT_KEYS.isdisjoint(spec)]:
        _check_optional_text(specs[m], f"members.{member_ids[m]}")
    held = _HeldLists()
    for k, kind in enumerate(TASK_KINDS):
        held.add_column(k, [spec.get(kind) for spec in specs], member_ids)
    tasks, owners, kinds = held.tasks(ids, task_start, member_ids)
    member_process = np.fromiter(map(number.__getitem__, processes), dtype=np.int64, count=len(processes))
    reporting = [m for m, spec in enumerate(specs) if spec.get("offset_sums") is not None]
    offsets = _offset_sums(reporting, specs, member_ids, ids, task_start) if reporting else None
    return _group(ids, task_start, stateful, standbys, member_ids, tuple(number), member_process, tasks, owners,
                  kinds, offsets)


def _offset_sums(reporting: list[int], specs: list, member_ids: tuple[str, ...], ids: tuple[str, ...],
                 task_start: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(task, member, offset sum) of each reported offset sum of a task that exists, member by member."""
    position = {sid: s for s, sid in enumerate(ids)}
    tasks: list[int] = []
    members: list[int] = []
    sums: list[int] = []
    for m in reporting:
        path = f"members.{member_ids[m]}.offset_sums"
        reported = _mapping(specs[m]["offset_sums"], path, '{"0_1": 1200}')
        for name, value in reported.items():
            task = _task_number(name, path, position, task_start)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= JAVA_LONG_MAX:
                raise _fail(f"{path}.{name}", f"an offset sum is a whole number from 0 to {JAVA_LONG_MAX} (the "
                                              f"summed changelog offsets of the member's local state), got "
                                              f"{shown(value)}")
            if task >= 0:
                tasks.append(task)
                members.append(m)
                sums.append(int(value))
    return (np.array(tasks, dtype=np.int64), np.array(members, dtype=np.int64),
            np.array(sums, dtype=np.int64))


def _task_number(name: Any, path: str, position: Mapping[str, int], task_start: np.ndarray) -> int:
    """The task number of ``"SUBTOPOLOGY_PARTITION"`` (split at the last ``_``), -1 for a task that no
    longer exists; a name that is no task is refused."""
    sid, underscore, digits = name.rpartition("_") if isinstance(name, str) else ("", "", "")
    if not (underscore and sid and digits.isascii() and digits.isdigit() and (digits == "0" or digits[0] != "0")
            and int(digits) <= JAVA_INT_MAX):
        raise _fail(path, f'a task is written "SUBTOPOLOGY_PARTITION" (like "0_3"), the partition a whole number '
                          f"from 0 to {JAVA_INT_MAX} without sign or leading zeros; got {shown(name)}")
    s = position.get(sid)
    if s is None or int(digits) >= task_start[s + 1] - task_start[s]:
        return -1
    return int(task_start[s]) + int(digits)


def _group(ids: tuple[str, ...], task_start: np.ndarray, stateful: np.ndarray, standbys: int,
           member_ids: tuple[str, ...], process_ids: tuple[str, ...], member_process: np.ndarray, tasks: np.ndarray,
           owners: np.ndarray, kinds: np.ndarray,
           offsets: tuple[np.ndarray, np.ndarray, np.ndarray] | None) -> StreamsGroup:
    """The group from its read columns: (task, owner, kind) rows, kind 0 active, 1 standby, 2 warmup; the
    (task, member, sum) offset sum rows, None where no member reports any."""
    return StreamsGroup(
        subtopology_ids=ids,
        task_start=task_start,
        stateful=stateful,
        num_standby_replicas=standbys,
        member_ids=member_ids,
        process_ids=process_ids,
        member_process=member_process,
        previous_active=_sole_owners(tasks[kinds == 0], owners[kinds == 0], member_ids, ids, task_start),
        previous_standby=(tasks[kinds == 1], owners[kinds == 1]),
        previous_warmup=(tasks[kinds == 2], owners[kinds == 2]),
        task_offsets=(_NONE, _NONE, _NONE) if offsets is None else offsets,
    )


def _member_spec(member_id: Any, spec: Any) -> dict:
    """One member's fields, checked one by one (the slow path, for the message or an unusual type)."""
    if not isinstance(member_id, str):
        raise _fail("members", f"member ids must be strings, got {shown(member_id)}")
    spec = _mapping(spec, f"members.{member_id}", '{"process_id": "p1"}')
    if not _MEMBER_KEYS.issuperset(spec):
        unknown = sorted(map(str, set(spec) - _MEMBER_KEYS))
        raise _fail(f"members.{member_id}", f"unknown field(s) {unknown}; allowed: {sorted(_MEMBER_KEYS)}")
    return dict(spec)


_TEXT_KEYS = frozenset({"instance_id", "rack", "client_tags"})


def _check_optional_text(spec: Mapping, path: str) -> None:
    for key in ("instance_id", "rack"):
        if spec.get(key) is not None and not isinstance(spec[key], str):
            raise _fail(f"{path}.{key}", f"must be a string, got {shown(spec[key])}")
    tags = spec.get("client_tags")
    if tags is not None and not (isinstance(tags, Mapping)
                                 and all(isinstance(k, str) and isinstance(v, str) for k, v in tags.items())):
        raise _fail(f"{path}.client_tags", f"must map tag names to string values, got {shown(tags)}")


class _HeldLists:
    """The members' ``{subtopology: [partitions]}`` lists, gathered as they are, then checked and
    turned into task numbers all at once (one list per task is common: a Python step per list is
    what costs). ``sids``/``lists``: each entry of each map; ``counts``/``records``: each map's entry
    count and ``3 * member + kind``."""

    def __init__(self) -> None:
        self.sids: list[Any] = []
        self.lists: list[Any] = []
        self.counts: list[int] = []
        self.records: list[int] = []

    def add_column(self, k: int, column: list[Any], member_ids: tuple[str, ...]) -> None:
        """Every member's map of kind ``TASK_KINDS[k]`` (None where absent)."""
        owners = [m for m, held in enumerate(column) if held is not None]
        if not owners:
            return
        maps = [column[m] for m in owners]
        if not set(map(type, maps)) <= {dict}:
            maps = [dict(_mapping(held, f"members.{member_ids[m]}.{TASK_KINDS[k]}", '{"0": [0, 1]}'))
                    for m, held in zip(owners, maps)]
        self.sids.extend(chain.from_iterable(maps))
        self.lists.extend(chain.from_iterable(map(dict.values, maps)))
        self.counts.extend(map(len, maps))
        self.records.extend(3 * m + k for m in owners)

    def _path(self, i: int, member_ids: tuple[str, ...]) -> str:
        """Where entry ``i`` is: ``members.ID.KIND.SUBTOPOLOGY``."""
        record = self.records[int(np.searchsorted(np.cumsum(self.counts), i, side="right"))]
        return f"members.{member_ids[record // 3]}.{TASK_KINDS[record % 3]}.{self.sids[i]}"

    def tasks(self, ids: tuple[str, ...], task_start: np.ndarray,
              member_ids: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(task, member, kind) per listed partition of a task that exists, each list taken as a set.

        Tasks that no longer exist (of a subtopology the topology lost, or a partition at or beyond its
        count now) are left out: the coordinator hands Kafka's assignor such leftovers of the previous
        target assignment after a topology change, and the assignor never looks them up."""
        partition = self._checked_partitions(member_ids)
        lengths = np.fromiter(map(len, self.lists), dtype=np.int64, count=len(self.lists))
        position = {sid: s for s, sid in enumerate(ids)}
        sub = np.repeat(np.fromiter(map(position.get, self.sids, repeat(-1)), dtype=np.int64,
                                    count=len(self.sids)), lengths)
        sizes = np.append(np.diff(task_start), 0)  # sub -1 (gone) finds size 0 at the end
        keep = partition < sizes[sub]
        records = np.repeat(np.repeat(np.array(self.records, dtype=np.int64), self.counts), lengths)[keep]
        return task_start[sub[keep]] + partition[keep], records // 3, records % 3

    def _checked_partitions(self, member_ids: tuple[str, ...]) -> np.ndarray:
        if not set(map(type, self.sids)) <= {str}:
            for i, sid in enumerate(self.sids):
                if not isinstance(sid, str):
                    raise _fail(self._path(i, member_ids).rpartition(".")[0],
                                f"subtopology ids must be strings, got {shown(sid)}")
        if not set(map(type, self.lists)) <= {list, tuple}:
            for i, partitions in enumerate(self.lists):
                if not isinstance(partitions, (list, tuple)):
                    raise _fail(self._path(i, member_ids), f"expected a list of partition numbers, got "
                                                           f"{shown(partitions)}")
        flat = list(chain.from_iterable(self.lists))
        if not set(map(type, flat)) <= {int}:
            for i, partitions in enumerate(self.lists):
                for p in partitions:
                    _whole(p, self._path(i, member_ids))
            flat = [int(p) for p in flat]
        try:
            partition = np.array(flat, dtype=np.int64)
        except OverflowError:  # beyond 64 bits: out of range below
            partition = None
        if partition is None or (len(partition) and (partition.min() < 0 or partition.max() > JAVA_INT_MAX)):
            i = next(i for i, ps in enumerate(self.lists) if any(not 0 <= p <= JAVA_INT_MAX for p in ps))
            bad = next(p for p in self.lists[i] if not 0 <= p <= JAVA_INT_MAX)
            raise _fail(self._path(i, member_ids), f"partition {shown(bad)} is out of range: partition numbers "
                                                   f"run from 0 to {JAVA_INT_MAX}")
        return partition


def _sole_owners(tasks: np.ndarray, owners: np.ndarray, member_ids: tuple[str, ...], ids: tuple[str, ...],
                 task_start: np.ndarray) -> np.ndarray:
    """Each task's previous active member (-1: none); a task active on two members is refused."""
    owner = np.full(int(task_start[-1]), -1, dtype=np.int64)
    owner[tasks] = owners
    if len(tasks) and (owner[tasks] != owners).any():
        i = int(np.flatnonzero(owner[tasks] != owners)[0])
        task = int(tasks[i])
        first = int(owners[np.flatnonzero(tasks == task)[0]])
        other = int(owners[i]) if int(owners[i]) != first else int(owner[task])
        s = int(np.searchsorted(task_start, task, side="right")) - 1
        raise _fail("members", f"task {ids[s]}_{task - int(task_start[s])} is active on two members, "
                               f"{member_ids[first]!r} and {member_ids[other]!r}; a task has one active owner")
    return owner
