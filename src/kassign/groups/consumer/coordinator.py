"""The group coordinator's side of Kafka 4's consumer group protocol (KIP-848), in process.

In the classic protocol every member stops at a barrier (JoinGroup / SyncGroup) and a
leader computes the assignment. In the consumer protocol there is no barrier and no
leader: each member only sends ``ConsumerGroupHeartbeat`` requests, and the coordinator
computes the assignment itself with a server-side assignor (``uniform`` or ``range``)
and hands every member its share one heartbeat at a time.

Hot paths run on integers and arrays (see *Data layout* below): a new target is
computed from the coordinator's own arrays, never from a scenario document; a heartbeat
that changes nothing but the session is answered before any other work; and
:meth:`ConsumerGroupCoordinator.routine` tells a caller which heartbeats are routine, so
that it can play those in bulk (the simulator does).

Three epochs drive it:

- the **group epoch** goes up whenever the group changes: a member joins, leaves, is
  fenced, or changes its subscription, or the metadata of a subscribed topic changes
  (partitions added, topic created or deleted);
- the **assignment epoch** is the group epoch the current *target assignment* was
  computed for. When a heartbeat finds the group epoch ahead of it, the coordinator
  runs the assignor for all members, giving each its previous target as its current
  assignment (so the assignor can stay sticky);
- each **member epoch** says which target the member has caught up with. A member
  moves to a newer epoch only after it has given up everything it must give up.

Reconciling one member towards its target (done on each of its heartbeats):

- kept = what it has and keeps; to revoke = what it has and loses; to receive = the
  rest of its target, minus partitions some other member still holds (*unreleased*:
  the coordinator knows, per partition, the epoch of its current holder).
- something to revoke that the member still reports owning: state
  ``UNREVOKED_PARTITIONS``; its epoch stays; the response carries ``kept`` only, and
  the member revokes the rest and heartbeats at once with what it now owns. Only then
  are those partitions free for their next owner.
- else: the member moves to the target epoch and receives what is free now; state
  ``UNRELEASED_PARTITIONS`` while part of its target is still held by others (it gets
  them on a later heartbeat), else ``STABLE``.

So a partition has at most one holder at any instant, and members whose share does
not change keep consuming throughout. Example, uniform assignor, topic t with 4
partitions, A owns all four at epoch 1, B joins:

    B heartbeats (epoch 0)  -> group epoch 2; new target A: t-0,t-1  B: t-2,t-3
                               B: epoch 2, UNRELEASED_PARTITIONS, receives nothing
    A heartbeats (epoch 1)  -> A: UNREVOKED_PARTITIONS (must give up t-2,t-3), still epoch 1
    A revokes, heartbeats   -> A: epoch 2, STABLE, keeps t-0,t-1 (never stopped)
    B heartbeats (epoch 2)  -> B: STABLE, receives t-2,t-3

Leaving is a heartbeat with epoch -1 (the member is removed and its partitions are
free at once); a static member (``group.instance.id``) that shuts down sends -2: it
stays in the group with its assignment, and the same instance coming back within the
session timeout takes it up again without a new group epoch. A member that stops
heartbeating is fenced when its session times out (``group.consumer.session.timeout.ms``,
45 s by default; members heartbeat every ``group.consumer.heartbeat.interval.ms``,
5 s). Group assignor: the one most members ask for (``group.remote.assignor``), else
the broker's first (``uniform``).

This follows Apache Kafka's group coordinator (``GroupMetadataManager``'s consumer group
heartbeat, ``CurrentAssignmentBuilder``, ``TargetAssignmentBuilder``) as of the 4.0
development line. Not modelled: regular-expression subscriptions, classic members in a
consumer group (the upgrade path), the rebalance timeout (members here revoke at once,
so it never expires), periodic metadata refresh (metadata changes are acted on at the
next heartbeat, as Kafka does when it is told about them).

Data layout: partitions are dense integers (``TopicCatalog``); member records are
tuples and assignments ``frozenset[int]``; who holds each partition is one
``dict[int, str]`` (a holder's epoch is its member's). The target
(:class:`TargetAssignment`) is one numpy array of member numbers indexed by partition,
which is what the server-side assignor is fed (assembled into its arrays directly) and
what a new target is compared with; each member's set is built from it when first
asked for after its share changed.
"""

from __future__ import annotations

import base64
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from itertools import compress, filterfalse
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np

from kassign.groups.consumer.assignors import assemble_server_group, server_assignor
from kassign.groups.consumer.group import derived_topic_uuid, parse_topic_id
from kassign.core.errors import KassignError
from kassign.core.javaorder import java_string_hash_order
from kassign.core.releases import DEFAULT_KAFKA_VERSION, LATEST, KafkaRelease, ReleaseLike

SERVER_ASSIGNORS = ("uniform", "range")  # Kafka's group.consumer.assignors default; the first is the default
LEAVE_GROUP_EPOCH = -1
LEAVE_GROUP_STATIC_EPOCH = -2

AssignFunction = Callable[[str, dict[str, Any]], Mapping[str, Iterable[tuple[str, int]]]]


class MemberState(IntEnum):
    """Where a member is in reconciling towards its target (Kafka's numbering)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2


class Routine(IntEnum):
    """What a heartbeat that sends nothing new would do (:meth:`ConsumerGroupCoordinator.routine`)."""

    OTHER = 0  # more than the two below: reconcile, join, leave, or be refused
    RENEWS_SESSION = 1  # the member has reached the target: its session is renewed, nothing else
    REACHES_TARGET_EPOCH = 2  # it holds exactly its target, nothing to revoke: it moves to the target's epoch


class ConsumerGroupInvariantViolation(KassignError):
    """The coordinator's own bookkeeping broke a rule (e.g. two holders of one partition)."""


def _derived_topic_id(name: str, incarnation: int) -> str:
    """A topic id for a simulated topic: the same as ``kassign.assign`` derives for the
    first topic of a name; a recreated topic gets a different one, as in Kafka."""
    key = "kafka-topic:" + name if incarnation == 0 else f"kafka-topic:{name}#{incarnation}"
    raw = uuid.uuid5(uuid.NAMESPACE_URL, key).bytes
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


class TopicCatalog:
    """The cluster's topics with every partition numbered densely.

    A topic is a *slot*: name, id, partition count. Deleting a topic retires its slot;
    creating one under the same name opens a new slot with a new id, so partitions of
    the old topic are never confused with the new one (Kafka tells them apart by id).
    Partition numbers (``pid``) are handed out as partitions appear and never reused.
    """

    def __init__(self, topics: Mapping[str, int] = ()) -> None:
        self.slot_of: dict[str, int] = {}  # live topics only
        self.slot_name: list[str] = []
        self.slot_incarnation: list[int] = []
        self.slot_pids: list[list[int]] = []
        self.slot_alive: list[bool] = []
        self.pid_slot: list[int] = []
        self.pid_partition: list[int] = []
        self.pid_pair: list[list] = []  # [topic, partition] per pid, as scenario documents write it
        self._incarnations: dict[str, int] = {}
        self._pid_arrays: tuple[np.ndarray, np.ndarray] | None = None
        self._slot_pid_arrays: dict[int, np.ndarray] = {}
        for name, count in dict(topics).items():
            self.create(name, count)

    # -- changes

    def create(self, name: str, count: int) -> int:
        if name in self.slot_of:
            raise KassignError(f"topic {name!r} already exists")
        slot = len(self.slot_name)
        incarnation = self._incarnations.get(name, -1) + 1
        self._incarnations[name] = incarnation
        self.slot_of[name] = slot
        self.slot_name.append(name)
        self.slot_incarnation.append(incarnation)
        self.slot_pids.append([])
        self.slot_alive.append(True)
        self.add_partitions(name, count)
        return slot

    def add_partitions(self, name: str, count: int) -> None:
        slot = self.slot_of[name]
        pids = self.slot_pids[slot]
        self._slot_pid_arrays.pop(slot, None)
        for _ in range(count):
            pids.append(len(self.pid_slot))
            self.pid_slot.append(slot)
            self.pid_partition.append(len(pids) - 1)
            self.pid_pair.append([name, len(pids) - 1])

    def delete(self, name: str) -> list[int]:
        """Retire the topic; return its partition numbers."""
        slot = self.slot_of.pop(name)
        self.slot_alive[slot] = False
        return list(self.slot_pids[slot])

    # -- questions

    @property
    def size(self) -> int:
        return len(self.pid_slot)

    def exists(self, name: str) -> bool:
        return name in self.slot_of

    def count(self, name: str) -> int:
        slot = self.slot_of.get(name)
        return 0 if slot is None else len(self.slot_pids[slot])

    def topics(self) -> dict[str, int]:
        return {name: len(self.slot_pids[slot]) for name, slot in self.slot_of.items()}

    def pids_of(self, name: str) -> list[int]:
        slot = self.slot_of.get(name)
        return [] if slot is None else self.slot_pids[slot]

    def pid(self, name: str, partition: int) -> int:
        return self.slot_pids[self.slot_of[name]][partition]

    def is_live(self, pid: int) -> bool:
        return self.slot_alive[self.pid_slot[pid]]

    def all_live(self) -> bool:
        """Whether no topic was ever deleted (then every pid is live)."""
        return len(self.slot_of) == len(self.slot_name)

    def topic_partition(self, pid: int) -> tuple[str, int]:
        return self.slot_name[self.pid_slot[pid]], self.pid_partition[pid]

    def topic_id(self, slot: int) -> str:
        return _derived_topic_id(self.slot_name[slot], self.slot_incarnation[slot])

    def recreated(self) -> bool:
        """Whether some live topic is not the first of its name (then ids must be passed)."""
        return any(self.slot_incarnation[s] for s in self.slot_of.values())

    def shadowed_slots(self) -> set[int]:
        """Deleted topics whose name a newer topic now has."""
        return {s for s, alive in enumerate(self.slot_alive)
                if not alive and self.slot_of.get(self.slot_name[s], s) != s}

    def names_shared_by_deleted_topics(self) -> bool:
        """Whether two deleted topics, with no newer topic of their name, share a name: a scenario
        document can tell their partitions apart only by name, so it merges them."""
        orphans = [self.slot_name[s] for s, alive in enumerate(self.slot_alive)
                   if not alive and self.slot_name[s] not in self.slot_of]
        return len(orphans) != len(set(orphans))

    def pid_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(slot, partition)`` of every pid as int64 arrays (built again only after partitions appear)."""
        if self._pid_arrays is None or len(self._pid_arrays[0]) != self.size:
            self._pid_arrays = (np.array(self.pid_slot, dtype=np.int64), np.array(self.pid_partition, dtype=np.int64))
        return self._pid_arrays

    def pid_array(self, slot: int) -> np.ndarray:
        """The slot's pids, partition by partition, as an int64 array."""
        pids = self._slot_pid_arrays.get(slot)
        if pids is None:
            pids = self._slot_pid_arrays[slot] = np.array(self.slot_pids[slot], dtype=np.int64)
        return pids

    def assignor_uuid(self, slot: int, ids_stated: bool) -> tuple[int, int]:
        """The topic id an assignor sees for a slot: the slot's own when ids are stated (some live
        topic was recreated), else the one ``kassign.assign`` derives from the name."""
        if ids_stated:
            return parse_topic_id(self.topic_id(slot), self.slot_name[slot])
        return derived_topic_uuid(self.slot_name[slot])


class GroupMember(NamedTuple):
    """What the coordinator keeps about one member (immutable: each change is a new record, a
    tuple, since a converging group makes a new record on nearly every heartbeat)."""

    member_id: str
    instance_id: str | None = None
    rack: str | None = None
    topics: tuple[str, ...] = ()
    assignor: str | None = None
    state: MemberState = MemberState.STABLE
    epoch: int = 0
    previous_epoch: int = 0
    assigned: frozenset[int] = frozenset()
    pending_revocation: frozenset[int] = frozenset()

    def reconciled_to(self, assignment_epoch: int) -> bool:
        return self.state == MemberState.STABLE and self.epoch == assignment_epoch

    def moved_to(self, state: MemberState, epoch: int, assigned: frozenset[int],
                 pending_revocation: frozenset[int]) -> GroupMember:
        """The record after a reconciliation step: the epoch it had becomes the previous epoch. (Built
        field by field: this is the coordinator's most frequent new record.)"""
        return GroupMember(self.member_id, self.instance_id, self.rack, self.topics, self.assignor, state, epoch,
                           self.epoch, assigned, pending_revocation)


class HeartbeatRequest(NamedTuple):
    member_id: str
    epoch: int
    instance_id: str | None = None
    rack: str | None = None
    topics: tuple[str, ...] | None = None  # None: unchanged since the last heartbeat
    assignor: str | None = None
    owned: frozenset[int] | None = None  # None: not reported (then assumed still owned)


class HeartbeatResponse(NamedTuple):
    member_id: str
    epoch: int
    assignment: frozenset[int] | None = None  # present when it changed (or on joining)
    error: str | None = None  # Kafka's error name: FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, UNRELEASED_INSTANCE_ID


def server_assign(assignor: str, scenario: dict[str, Any],
                  kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION) -> Mapping[str, Iterable[tuple[str, int]]]:
    """The server-side assignor, as ``kassign.assign(..., protocol="consumer", kafka_version=...)`` answers it."""
    from kassign.groups.consumer.assignors import assign_server_side
    from kassign.groups.scenario import parse_scenario

    parsed = parse_scenario(scenario)
    return assign_server_side(assignor, parsed, kafka_version).to_dict(parsed.members.ids)


_NO_PARTITIONS: frozenset[int] = frozenset()
_SCANS_BEFORE_GROUPING = 16  # members' sets built by scanning the owner array before it is grouped at once


class TargetAssignment(Mapping[str, frozenset[int]]):
    """The group's target assignment: one member number per pid (a numpy array, -1 for nobody) and,
    as a mapping, each member's set of pids, built the first time it is asked for after its share
    changed. A new target typically changes few members' shares (uniform) or is replaced before most
    members ask (a group of joining members), so most sets are never rebuilt; when many are asked
    for, the array is grouped by member once."""

    def __init__(self, catalog: TopicCatalog) -> None:
        self._catalog = catalog
        self._owner = np.zeros(0, dtype=np.int64)
        self._number: dict[str, int] = {}  # member id -> its number, for good
        self._names: list[str] = []  # number -> member id
        self._sets: dict[str, frozenset[int] | None] = {}  # the members it has; None: not built since it changed
        self._scans = 0  # sets built by a scan since the owner array last changed
        self._grouping: tuple[np.ndarray, np.ndarray] | None = None  # pids by member, where each member starts

    def number_of(self, member_id: str) -> int:
        """The member's number in :meth:`owner` (one per member id, never reused)."""
        number = self._number.get(member_id)
        if number is None:
            number = self._number[member_id] = len(self._names)
            self._names.append(member_id)
        return number

    def numbers_of(self, member_ids: Sequence[str]) -> np.ndarray:
        """The numbers of members that have one (see :meth:`number_of`)."""
        return np.fromiter(map(self._number.__getitem__, member_ids), dtype=np.int64, count=len(member_ids))

    def numbers(self) -> int:
        """How many member numbers have been handed out."""
        return len(self._names)

    def owner(self) -> np.ndarray:
        """The member number per pid (-1: nobody), grown as partitions appear; not to be written to."""
        extra = self._catalog.size - len(self._owner)
        if extra > 0:
            self._owner = np.concatenate([self._owner, np.full(extra, -1, dtype=np.int64)])
        return self._owner

    def __getitem__(self, member_id: str) -> frozenset[int]:
        pids = self._sets[member_id]
        if pids is None:
            pids = self._sets[member_id] = self._build(self._number[member_id])
        return pids

    def get(self, member_id: str, default: Any = None) -> Any:
        # Mapping.get would go through __getitem__ and an exception: this is asked on every reconciliation
        return self[member_id] if member_id in self._sets else default

    def __iter__(self) -> Iterator[str]:
        return iter(self._sets)

    def __len__(self) -> int:
        return len(self._sets)

    def __contains__(self, member_id: object) -> bool:
        return member_id in self._sets

    def give(self, member_id: str, pids: frozenset[int] | None) -> None:
        """Make ``pids`` the member's target, or (None) drop the member from the target."""
        owner = self.owner()
        number = self.number_of(member_id)
        owner[owner == number] = -1
        self._sets.pop(member_id, None)
        if pids is not None:
            self._sets[member_id] = pids
            owner[np.fromiter(pids, dtype=np.int64, count=len(pids))] = number
        self._grouping = None

    def install(self, owner: np.ndarray, member_ids: Iterable[str]) -> None:
        """Make ``owner`` (a member number per pid) the target of the members ``member_ids``: the sets of
        members whose share changed are built again when asked for."""
        old = self.owner()
        changed = np.flatnonzero(old != owner)
        involved = np.bincount(np.concatenate([old[changed], owner[changed]]) + 1, minlength=len(self._names) + 1)
        sets = self._sets
        sets.update(dict.fromkeys(map(self._names.__getitem__, np.flatnonzero(involved[1:]).tolist())))
        members = dict.fromkeys(member_ids)
        if sets.keys() != members.keys():  # members came or went since: the same keys, new ones unbuilt
            self._sets = {name: sets.get(name) for name in members}
        self._owner, self._scans, self._grouping = owner, 0, None

    def _build(self, number: int) -> frozenset[int]:
        if self._grouping is None and self._scans < _SCANS_BEFORE_GROUPING:
            self._scans += 1
            return frozenset(np.flatnonzero(self._owner == number).tolist())
        if self._grouping is None:
            by_member = np.argsort(self._owner, kind="stable")
            starts = np.searchsorted(self._owner[by_member], np.arange(len(self._names) + 1))
            self._grouping = by_member, starts
        by_member, starts = self._grouping
        return frozenset(by_member[starts[number]:starts[number + 1]].tolist())


@dataclass
class ConsumerGroupCoordinator:
    """One consumer group on its coordinator: members, epochs, target and holders.

    ``assign``: None runs the server-side assignors on the coordinator's own integers (the
    target as an owner per pid, no document); a function is handed a scenario document
    (as ``kassign.assign`` takes it) and returns ``{member: [(topic, partition)]}``.
    ``release``: the Kafka release whose assignors compute the targets (:mod:`kassign.core.releases`;
    not handed to an ``assign`` function, which is the caller's own).
    """

    catalog: TopicCatalog
    default_assignor: str = SERVER_ASSIGNORS[0]
    session_timeout: float = 45.0
    assign: AssignFunction | None = None
    release: KafkaRelease = LATEST
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, GroupMember] = field(default_factory=dict)  # in the order members joined
    target: TargetAssignment = field(init=False)
    holder: dict[int, str] = field(default_factory=dict)  # pid -> member holding it
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    session_deadline: dict[str, float] = field(default_factory=dict)
    subscription_metadata: tuple = ()
    metadata_refresh: bool = False
    targets_computed: int = 0
    last_assignor: str | None = None
    subscription_changes: int = 0  # goes up whenever some member's topics change (or it comes or goes)
    _unreconciled: set[str] = field(default_factory=set)
    _subscribers: Counter[str] = field(default_factory=Counter)  # topic name -> members subscribing to it
    _topic_lists: dict[tuple[str, ...], int] = field(default_factory=dict)  # each topic list seen -> its number
    _member_topic_list: dict[str, int] = field(default_factory=dict)  # member id -> number of its topic list

    def __post_init__(self) -> None:
        self.target = TargetAssignment(self.catalog)

    # -- the heartbeat

    def heartbeat(self, request: HeartbeatRequest, now: float) -> HeartbeatResponse:
        member = self.members.get(request.member_id)
        if (member is not None and request.topics is None and member.reconciled_to(self.assignment_epoch)
                and self.routine(member, request.epoch, request.instance_id, request.rack, request.assignor)
                == Routine.RENEWS_SESSION):
            self.session_deadline[request.member_id] = now + self.session_timeout
            return HeartbeatResponse(request.member_id, member.epoch)
        if request.epoch == LEAVE_GROUP_EPOCH:
            self.leave(request.member_id)
            return HeartbeatResponse(request.member_id, LEAVE_GROUP_EPOCH)
        if request.epoch == LEAVE_GROUP_STATIC_EPOCH:
            self.leave_temporarily(request.member_id)
            return HeartbeatResponse(request.member_id, LEAVE_GROUP_STATIC_EPOCH)
        joining = request.epoch == 0
        if joining:
            if request.instance_id is not None:
                holder = self.static_members.get(request.instance_id)
                if holder is not None:
                    previous = self.members[holder]
                    if previous.epoch != LEAVE_GROUP_STATIC_EPOCH:
                        return HeartbeatResponse(request.member_id, 0, error="UNRELEASED_INSTANCE_ID")
                    # the instance comes back: it takes over the departed record (assignment included)
                    member = previous._replace(member_id=request.member_id, epoch=0, previous_epoch=0)
                    if holder != request.member_id:
                        kept_target = self.target.get(holder, _NO_PARTITIONS)
                        self._remove(holder)
                        self.target.give(request.member_id, kept_target)
                    self._put(member, previous if holder == request.member_id else None)
            elif member is not None:
                # a dynamic member joining again under an id the group still has (it was told it is
                # fenced): it gave up everything and starts over as a new member
                self.leave(request.member_id)
                member = None
            if member is None:
                member = GroupMember(request.member_id, instance_id=request.instance_id)
        else:
            if member is None:
                return HeartbeatResponse(request.member_id, request.epoch, error="UNKNOWN_MEMBER_ID")
            if request.epoch > member.epoch or (
                request.epoch < member.epoch
                and (request.epoch != member.previous_epoch or not (request.owned or frozenset()) <= member.assigned)
            ):
                return HeartbeatResponse(request.member_id, request.epoch, error="FENCED_MEMBER_EPOCH")

        # 1. the member's subscription; a change bumps the group epoch
        changes: dict[str, Any] = {}
        for name, value, current in (("instance_id", request.instance_id, member.instance_id),
                                     ("rack", request.rack, member.rack), ("topics", request.topics, member.topics),
                                     ("assignor", request.assignor, member.assignor)):
            if value is not None and value != current:
                changes[name] = value
        updated = member._replace(**changes) if changes else member
        bump = "topics" in changes and set(updated.topics) != set(member.topics)
        if bump or self.metadata_refresh or request.member_id not in self.members:
            self._put(updated, self.members.get(request.member_id))
            metadata = self._subscription_metadata()
            if metadata != self.subscription_metadata:
                self.subscription_metadata = metadata
                bump = True
            self.metadata_refresh = False
        elif changes:
            self._put(updated, member)
        if bump:
            self.group_epoch += 1
        self.session_deadline[request.member_id] = now + self.session_timeout

        # 2. a newer group epoch needs a new target
        if self.group_epoch > self.assignment_epoch:
            self._compute_target()

        # 3. bring this member closer to its target
        before = self.members[request.member_id]
        after = before
        if not before.reconciled_to(self.assignment_epoch):
            after = self._reconcile(before, request.owned)
            if after != before:
                self._put(after, before)
        changed = joining or after.assigned != before.assigned
        return HeartbeatResponse(after.member_id, after.epoch, after.assigned if changed else None)

    def routine(self, member: GroupMember, epoch: int, instance_id: str | None, rack: str | None,
                assignor: str | None) -> Routine:
        """What a heartbeat of ``member`` at ``epoch``, sending no topics and these fields, would do when
        nothing it sends differs from its record and the target is current: renew its session only
        (it has reached the target), or move it to the target's epoch without changing what it holds.
        Anything else is ``Routine.OTHER``."""
        if not (not member.pending_revocation and epoch == member.epoch and epoch > 0 and not self.metadata_refresh
                and self.group_epoch == self.assignment_epoch
                and (instance_id is None or instance_id == member.instance_id)
                and (rack is None or rack == member.rack)
                and (assignor is None or assignor == member.assignor)):
            return Routine.OTHER
        if member.reconciled_to(self.assignment_epoch):
            return Routine.RENEWS_SESSION
        if (member.state != MemberState.UNREVOKED_PARTITIONS
                and self.target.get(member.member_id, _NO_PARTITIONS) == member.assigned):
            return Routine.REACHES_TARGET_EPOCH
        return Routine.OTHER

    def reach_target_epoch(self, member_id: str) -> GroupMember:
        """Apply a heartbeat :meth:`routine` found ``REACHES_TARGET_EPOCH`` for, played earlier by a
        caller that kept its session deadline itself: the member's record after it."""
        before = self.members[member_id]
        after = self._reconcile(before, None)  # nothing to revoke, so what it reports does not matter
        self._put(after, before)
        return after

    # -- leaving and fencing

    def leave(self, member_id: str) -> None:
        """Epoch -1: the member is gone; its partitions are free; the group epoch goes up."""
        if member_id not in self.members:
            return
        self._remove(member_id)
        self.subscription_metadata = self._subscription_metadata()
        self.group_epoch += 1

    def fence(self, member_id: str) -> None:
        """Session timed out (or the member was fenced otherwise): removed like a leave."""
        self.leave(member_id)

    def leave_temporarily(self, member_id: str) -> None:
        """Epoch -2: a static member shuts down meaning to come back. It keeps its
        assignment (still held, so nobody else gets it) but no longer waits on revocations."""
        member = self.members.get(member_id)
        if member is None:
            return
        self._put(member._replace(epoch=LEAVE_GROUP_STATIC_EPOCH, pending_revocation=frozenset()), member)

    def expire_session(self, member_id: str, now: float) -> bool:
        """The session timer fired: fence the member unless it heartbeated since."""
        deadline = self.session_deadline.get(member_id)
        if member_id not in self.members or deadline is None or deadline > now:
            return False
        self.fence(member_id)
        return True

    def request_metadata_refresh(self) -> None:
        """A subscribed topic changed: the next heartbeat recomputes the subscription metadata."""
        self.metadata_refresh = True

    # -- questions

    def subscribed_topics(self) -> set[str]:
        return set(self._subscribers)

    @property
    def holder_epoch(self) -> dict[int, int]:
        """pid -> the epoch of the member holding it (Kafka's partition epochs): always its holder's epoch."""
        return {pid: self.members[member_id].epoch for pid, member_id in self.holder.items()}

    def waiting_for(self) -> int:
        """How many members the group waits for to reach the target (see :meth:`settled`)."""
        return len(self._unreconciled)

    def settled(self) -> bool:
        """Target up to date and every member (but static ones away) reconciled to it; an empty group
        (Kafka's EMPTY state) has nothing to settle."""
        if not self.members:
            return True
        return self.group_epoch == self.assignment_epoch and not self._unreconciled

    def group_assignor(self) -> str:
        """Kafka's choice: the assignor most members name, ties going to the first in the
        coordinator's HashMap of names; none named: the broker's default."""
        counts: dict[str, int] = {}
        for member in self.members.values():
            if member.assignor:
                counts[member.assignor] = counts.get(member.assignor, 0) + 1
        if not counts:
            return self.default_assignor
        best = max(counts.values())
        return next(name for name in java_string_hash_order(counts) if counts[name] == best)

    # -- internals

    def _subscription_metadata(self) -> tuple:
        subscribed = self._subscribers
        return tuple(sorted((name, slot, len(self.catalog.slot_pids[slot]))
                            for name, slot in self.catalog.slot_of.items() if name in subscribed))

    def _put(self, new: GroupMember, old: GroupMember | None) -> None:
        """Store a member record; the holders follow what it holds now."""
        held_before = _held(old) if old is not None and old.member_id == new.member_id else _NO_PARTITIONS
        if old is not None and old.member_id != new.member_id:
            self._release(old.member_id, _held(old))
        held = _held(new)
        if held is not held_before and held != held_before:  # (revoking moves partitions to pending: same held)
            self._release(new.member_id, held_before - held)
            self._hold(new.member_id, held - held_before)
        replaced = self.members.get(new.member_id)
        if replaced is None or replaced.topics != new.topics:
            if replaced is not None:
                self._subscribers.subtract(set(replaced.topics))
            self._subscribers.update(set(new.topics))
            self._subscribers += Counter()  # drop the topics nobody subscribes to any more
            self.subscription_changes += 1
            self._member_topic_list[new.member_id] = self._topic_lists.setdefault(new.topics, len(self._topic_lists))
            self.target.number_of(new.member_id)
        self.members[new.member_id] = new
        if new.instance_id is not None:
            self.static_members[new.instance_id] = new.member_id
        if self._waits_for(new):
            self._unreconciled.add(new.member_id)
        else:
            self._unreconciled.discard(new.member_id)

    def _hold(self, member_id: str, pids: frozenset[int]) -> None:
        holder = self.holder
        if not {member_id, None}.issuperset(map(holder.get, pids)):
            pid, other = next((pid, holder[pid]) for pid in pids if holder.get(pid, member_id) != member_id)
            name, p = self.catalog.topic_partition(pid)
            raise ConsumerGroupInvariantViolation(f"{name}-{p} would be held by both {other!r} and {member_id!r}")
        holder.update(dict.fromkeys(pids, member_id))

    def _release(self, member_id: str, pids: Iterable[int]) -> None:
        holder = self.holder
        for pid in compress(pids, map(member_id.__eq__, map(holder.get, pids))):
            del holder[pid]

    def _waits_for(self, member: GroupMember) -> bool:
        """Whether the group has yet to see this member reach the target (a static member away does not count)."""
        return member.epoch != LEAVE_GROUP_STATIC_EPOCH and not member.reconciled_to(self.assignment_epoch)

    def _remove(self, member_id: str) -> None:
        member = self.members.pop(member_id)
        self._release(member_id, _held(member))
        self._subscribers.subtract(set(member.topics))
        self._subscribers += Counter()
        self.subscription_changes += 1
        self.target.give(member_id, None)
        self.session_deadline.pop(member_id, None)
        self._unreconciled.discard(member_id)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]

    # -- the target

    def _compute_target(self) -> None:
        assignor = self.group_assignor()
        if self.assign is None and not self.catalog.names_shared_by_deleted_topics():
            owner = self._assign_on_integers(assignor)
        else:
            owner = self._assign_a_document(assignor)
        self.target.install(owner, self.members)
        self.assignment_epoch = self.group_epoch
        self.targets_computed += 1
        self.last_assignor = assignor
        # a brand-new target epoch, which no member has reached: the group waits for all but static members away
        self._unreconciled = {member_id for member_id, member in self.members.items()
                              if member.epoch != LEAVE_GROUP_STATIC_EPOCH}

    def target_document(self) -> dict[str, Any]:
        """The group as a scenario document (a consumer-protocol group's, with ``topic_ids`` when a topic was
        recreated): the subscribed topics, and per member, in the order they joined, its topics and
        its current target as ``owned``."""
        catalog = self.catalog
        subscribed = self.subscribed_topics()
        topics = {name: catalog.count(name) for name in catalog.slot_of if name in subscribed}
        live = {catalog.slot_of[name] for name in topics}
        members: dict[str, dict[str, Any]] = {}
        pairs, pid_slot = catalog.pid_pair, catalog.pid_slot
        # a partition of a deleted topic whose name now belongs to a newer topic cannot be named
        # without confusing the two; it is left out here, as the assignor would drop it anyway
        shadowed = catalog.shadowed_slots()
        for member_id, member in self.members.items():
            pids = sorted(self.target.get(member_id, ()))
            if shadowed:
                pids = [pid for pid in pids if pid_slot[pid] not in shadowed]
            spec: dict[str, Any] = {"topics": list(member.topics), "owned": [pairs[pid] for pid in pids]}
            if member.instance_id is not None:
                spec["instance_id"] = member.instance_id
            if member.rack is not None:
                spec["rack"] = member.rack
            members[member_id] = spec
        scenario: dict[str, Any] = {"topics": topics, "members": members}
        if catalog.recreated():
            owned_slots = {pid_slot[pid] for t in self.target.values() for pid in t} - shadowed
            scenario["topic_ids"] = {catalog.slot_name[s]: catalog.topic_id(s) for s in live | owned_slots}
        return scenario

    def _assign_a_document(self, assignor: str) -> np.ndarray:
        """The new target's owner per pid, from ``assign`` (or ``kassign.assign``) run on the target document."""
        if self.assign is not None:
            result = self.assign(assignor, self.target_document())
        else:
            result = server_assign(assignor, self.target_document(), self.release)
        catalog = self.catalog
        owner = np.full(catalog.size, -1, dtype=np.int64)
        for member_id in self.members:
            pids = [catalog.pid(t, p) for t, p in result.get(member_id, ())]
            owner[pids] = self.target.number_of(member_id)
        return owner

    def _assign_on_integers(self, assignor: str) -> np.ndarray:
        """The new target's owner per pid, the server-side assignor run on the group as the coordinator
        keeps it: the same group :meth:`target_document` describes, assembled from arrays."""
        catalog = self.catalog
        member_ids = list(self.members)
        count = len(member_ids)
        numbers = self.target.numbers_of(member_ids)
        join_order = np.full(self.target.numbers(), -1, dtype=np.int64)
        join_order[numbers] = np.arange(count)
        subscriptions, subscription = self._subscription_classes(member_ids)
        # the current targets, pid by pid (so each member's pids ascending, as the document lists them)
        pid_slot, pid_partition = catalog.pid_arrays()
        owner = self.target.owner()
        pids = np.flatnonzero(owner >= 0)
        shadowed = catalog.shadowed_slots()
        if shadowed:
            pids = pids[~np.isin(pid_slot[pids], list(shadowed))]
        slots = pid_slot[pids]
        owned_slots = np.flatnonzero(np.bincount(slots, minlength=len(catalog.slot_name)))
        name_of_slot = np.zeros(len(catalog.slot_name), dtype=np.int64)
        name_of_slot[owned_slots] = np.arange(len(owned_slots))
        subscribed = self._subscribers
        live = [slot for name, slot in catalog.slot_of.items() if name in subscribed]
        ids_stated = catalog.recreated()
        uuid_of_name = {catalog.slot_name[slot]: catalog.assignor_uuid(slot, ids_stated)
                        for slot in [*owned_slots.tolist(), *live]}
        group = assemble_server_group(
            member_ids=member_ids,
            instance_ids=list(map(attrgetter("instance_id"), self.members.values())),
            subscriptions=subscriptions,
            subscription=subscription,
            topics={catalog.slot_name[slot]: len(catalog.slot_pids[slot]) for slot in live},
            uuid_of_name=uuid_of_name,
            owned_member=join_order[owner[pids]],
            owned_name=name_of_slot[slots],
            owned_names=[catalog.slot_name[slot] for slot in owned_slots.tolist()],
            owned_partitions=pid_partition[pids],
        )
        owners = server_assignor(assignor)[1](group, self.release)
        # back from the group's numbering: its flat ids to pids, its members to ours
        flat_pids = np.concatenate([np.zeros(0, dtype=np.int64)] + [
            catalog.pid_array(catalog.slot_of[name]) for name in group.topic_names])
        member_numbers = self.target.numbers_of(group.member_ids)
        new_owner = np.full(catalog.size, -1, dtype=np.int64)
        has = owners >= 0
        new_owner[flat_pids[has]] = member_numbers[owners[has]]
        return new_owner

    def _subscription_classes(self, member_ids: list[str]) -> tuple[list[tuple[str, ...]], np.ndarray]:
        """The members' distinct topic lists, numbered in order of first appearance among ``member_ids``,
        and each member's number (as a scenario document of these members would number them)."""
        seen = np.fromiter(map(self._member_topic_list.__getitem__, member_ids), dtype=np.int64,
                           count=len(member_ids))
        distinct, first, inverse = np.unique(seen, return_index=True, return_inverse=True)
        order = np.argsort(first)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        lists = list(self._topic_lists)
        return [lists[number] for number in distinct[order].tolist()], rank[inverse]

    # -- reconciling

    def _reconcile(self, member: GroupMember, owned: frozenset[int] | None) -> GroupMember:
        """One step of the member's state machine towards the current target."""
        if member.state == MemberState.UNREVOKED_PARTITIONS:
            if _still_owns(owned, member.pending_revocation):
                return member  # still waiting for the member to give them up
            return self._next_assignment(member, member.epoch + 1, owned)
        # STABLE behind the target epoch, or UNRELEASED_PARTITIONS: retry from the same epoch
        return self._next_assignment(member, member.epoch, owned)

    def _next_assignment(self, member: GroupMember, epoch: int, owned: frozenset[int] | None) -> GroupMember:
        target = self.target.get(member.member_id, frozenset())
        current = member.assigned
        kept = current & target
        to_revoke = current - kept
        wanted = target - kept
        # held by anyone, this member included (its own pending revocations count)
        free = frozenset(filterfalse(self.holder.__contains__, wanted))
        unreleased = len(free) != len(wanted)
        if to_revoke and _still_owns(owned, to_revoke):
            return member.moved_to(MemberState.UNREVOKED_PARTITIONS, epoch, kept, to_revoke)
        state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
        # a member that keeps exactly what it has keeps its set (the holders then need no update)
        assigned = current if not to_revoke and not free else kept | free
        return member.moved_to(state, self.assignment_epoch, assigned, _NO_PARTITIONS)


def _held(member: GroupMember) -> frozenset[int]:
    """What a member's record holds: its assignment and what it has yet to revoke."""
    if not member.pending_revocation:
        return member.assigned
    return member.assigned | member.pending_revocation


def _still_owns(owned: frozenset[int] | None, partitions: frozenset[int]) -> bool:
    """Whether the member (by its last report) still owns any of ``partitions``; no report: assume so."""
    return owned is None or not owned.isdisjoint(partitions)
