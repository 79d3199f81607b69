"""Play a scenario's timeline with Kafka 4's consumer group protocol (KIP-848).

The classic engine (``engine``) plays each rebalance as a block of JoinGroup /
SyncGroup rounds during which the group waits. Here nothing waits for anybody: the
clock moves from one thing to the next, and the things are scenario events and
``ConsumerGroupHeartbeat`` requests. The coordinator (``kassign.groups.consumer.coordinator``)
computes the target assignment with the real server-side assignor (the one behind
``kassign.assign(..., protocol="consumer")``, of the Kafka release ``kafka_version`` names,
default 4.4: :mod:`kassign.core.releases`) and moves each member towards it one
heartbeat at a time; a partition goes to its next owner only after its previous
owner has said, on a heartbeat, that it revoked it.

Hot paths run on integers and arrays. Partitions are dense integers and ownership
numpy arrays indexed by partition; the coordinator keeps its target as a member
number per partition between events and feeds the server-side assignor arrays (no
scenario document is written or parsed per target; sets are rebuilt only for members
whose share changed, when asked for); the members' heartbeat clock is a compiled heap
(``heartbeats``) that plays routine heartbeats in compiled stretches: those that only
renew a session, or only move a member to a new target's epoch because it already
holds its share. Most are routine: 1,000 members through 200 events (100 minutes)
send 1.19 million heartbeats under the uniform assignor, all but about 8,000 routine;
under range, which moves 2.6 million partitions, 1.12 million of 1.45 million.

The members, as the Java consumer behaves (``group.protocol=consumer``):

- a member heartbeats every ``heartbeat_interval`` seconds, counted from its last
  heartbeat; it heartbeats at once when it joins (epoch 0), when it leaves (epoch -1,
  after revoking everything; a static member shutting down sends -2 and keeps its
  assignment on the coordinator), and right after applying a new assignment (revoke
  first, then take the new partitions), to acknowledge it;
- a subscription change goes out with the next regular heartbeat; subscribing to
  nothing leaves the group;
- requests, callbacks and commits take no time: a revocation is acknowledged at the
  instant it is asked for. What costs time is waiting for heartbeats: the new owner
  of a partition receives it on its first heartbeat after the previous owner let go;
- a crashed member stops heartbeating; the coordinator fences it when its session
  expires, ``session_timeout`` after its last heartbeat (not after the crash);
- a deleted topic's partitions are gone at once (lost, not revoked); partition and
  topic changes reach the group on its next heartbeat, as Kafka's coordinator acts
  on new metadata;
- the starting members start one after another, evenly spread over the first
  heartbeat interval (member i of n at i/n of it): real consumers never start in
  the same instant, and since each keeps the heartbeat rhythm its start gave it,
  a later event finds them at different points of their interval (on average
  half an interval from their next heartbeat), not all at once;
- at the same instant, scenario events go first, then heartbeats in the order they
  were scheduled. Member ids are the scenario's names, members sit in the order they
  joined (the coordinator's member map order that the assignor sees).

Worked example (``examples/consumer-protocol.yaml`` plays a larger timeline against
eager and cooperative groups): topic t with 4 partitions, uniform assignor, heartbeat
interval 5 s, A alone since time 0 and owning all four; B joins at 12 s.
``ConsumerTimelineRun(scenario, "consumer:uniform", trace=True)`` records each step
(``TraceEntry``); ``tests/groups/simulate/test_consumer_protocol.py`` checks this sequence.

======  ==========================================  =============  =============
time    what happens                                A owns         B owns
======  ==========================================  =============  =============
12      B joins (epoch 0): group epoch 2, target    t-0..3         -
        A: t-0,t-1  B: t-2,t-3; B gets nothing yet
        (t-2, t-3 still A's), UNRELEASED
15      A's regular heartbeat: revoke t-2,t-3       t-0,t-1        -
        (UNREVOKED); A revokes, acknowledges at
        once; A at epoch 2, STABLE
17      B's regular heartbeat: t-2,t-3 are free,    t-0,t-1        t-2,t-3
        B receives them, STABLE
======  ==========================================  =============  =============

A never stops consuming t-0 and t-1; t-2 and t-3 are idle from 15 s to 17 s (4
unowned partition-seconds), where an eager rebalance would idle all four for a
round and cooperative-sticky the two that move for its second round.

Metrics are those of ``metrics`` (one table and one plot for every protocol):
``rounds`` counts target assignments computed, ``heartbeats`` the requests sent
while the group was converging, ``unsettled_seconds`` how long it was converging.
After every step the safety invariant is checked: no partition has two owners at
any instant (``InvariantViolation`` otherwise). When the timeline is over the run
goes on until the group has settled (every member owns exactly its target), so the
last row's figures include the convergence.

Data layout: partitions are dense integers (``TopicCatalog``); who consumes what and
who consumed it last are numpy int32 arrays indexed by partition (member index, -1
for none), so ``moved`` is a vector operation and the unowned count follows each take
and drop (it is counted again only when the subscribed topics change). Each member's
next heartbeat is an entry of ``HeartbeatClock`` (time, sequence number), marked with
what it will do if it is routine (``Routine``: the coordinator's own answer, asked
after each of the member's heartbeats and, for everyone, after each new target); a
stretch ends at the first heartbeat that is not routine, which is played step by step.
"""

from __future__ import annotations

import heapq
import time
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace

import numpy as np

from kassign.core.errors import KassignError
from kassign.groups.flat import no_cyclic_gc
from kassign.groups.consumer.coordinator import (
    LEAVE_GROUP_EPOCH,
    LEAVE_GROUP_STATIC_EPOCH,
    AssignFunction,
    ConsumerGroupCoordinator,
    HeartbeatRequest,
    Routine,
    TopicCatalog,
)
from kassign.groups.classic.protocol.rebalance import InvariantViolation
from kassign.core.releases import DEFAULT_KAFKA_VERSION, ReleaseLike, release_for
from kassign.groups.simulate.heartbeats import HeartbeatClock
from kassign.groups.simulate.metrics import EventRecord, StrategyRun, spread
from kassign.groups.simulate.scenario import CONSUMER, Event, MemberPlan, SimScenario, parse_strategy, run_protocol

_SETTLE_LIMIT_INTERVALS = 1000  # after the timeline, give up (and say so) if the group has not settled by then


@dataclass(frozen=True)
class TraceEntry:
    """One step of a traced run (``ConsumerTimelineRun(..., trace=True)``).

    ``action`` is ``heartbeat`` (``epoch``: the member epoch the response carried,
    ``state``: the member's state on the coordinator afterwards, ``sent_epoch``: the
    epoch the request carried), ``revoke``, ``assign`` or ``lose`` (``partitions``:
    what the member gave up, received, or lost without a revocation), or ``fenced``.
    """

    at: float
    member: str
    action: str
    epoch: int = 0
    sent_epoch: int = 0
    state: str = ""
    group_epoch: int = 0
    partitions: tuple[tuple[str, int], ...] = ()


@dataclass(eq=False)
class _Client:
    """One consumer process (the Java client's side of the protocol)."""

    name: str
    index: int
    plan: MemberPlan
    topics: tuple[str, ...]
    assignor: str | None
    running: bool = True
    joined: bool = False  # sends heartbeats as a member of the group
    epoch: int = 0
    owned: frozenset[int] = frozenset()  # what it consumes, as it reports it on its heartbeats
    sent_topics: tuple[str, ...] | None = None
    expiry_token: int = 0
    expiry_pending: bool = False


class ConsumerTimelineRun:
    """One consumer-protocol run (``consumer``, ``consumer:uniform`` or ``consumer:range``) over one scenario,
    with the assignors of Kafka release ``kafka_version`` (:mod:`kassign.core.releases`)."""

    def __init__(self, scenario: SimScenario, strategy: str = "consumer", assign: AssignFunction | None = None,
                 *, trace: bool = False, kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION) -> None:
        if run_protocol(scenario, strategy) != CONSUMER:
            raise KassignError(f"strategy {strategy!r} runs the classic protocol here; use kassign.groups.simulate.simulate()")
        self.release = release_for(kafka_version, CONSUMER)
        self.scenario = scenario
        self.strategy = strategy
        self.run_assignor = parse_strategy(strategy)[1]
        settings = scenario.settings
        self.interval = settings["heartbeat_interval"]
        self.session_timeout = settings["session_timeout"]
        self.catalog = TopicCatalog(scenario.topics)
        self.coordinator = ConsumerGroupCoordinator(self.catalog, session_timeout=self.session_timeout, assign=assign,
                                                    release=self.release)
        self.clients: dict[str, _Client] = {}
        self.member_index: dict[str, int] = {}
        self.member_names: list[str] = []
        self.owner = np.full(self.catalog.size, -1, dtype=np.int32)  # who consumes each partition now
        self.last_owner = self.owner.copy()  # who consumed it last (a partition between owners: the previous)
        self._pid_slot = np.asarray(self.catalog.pid_slot, dtype=np.int32)
        self.now = 0.0
        self.records: list[EventRecord] = []
        self._before: np.ndarray = self.last_owner.copy()
        self._queue: list[tuple[float, int, str, object]] = []  # scenario events, starts, session expiries
        self.heartbeats = HeartbeatClock(traced=trace)
        self._targets_marked = 0  # targets computed when the routine marks were last cleared
        self._routine_stale = False  # a new target: every member's mark is to be looked at again
        self.played_in_bulk = 0  # heartbeats played by HeartbeatClock.run_routine rather than one by one
        self._timers = 0  # scenario events, returns and session expiries still to come
        self._pending: set[str] = set()  # clients whose join or subscription change the coordinator has not seen
        self._unserved: int | None = None
        self._joined_topics: Counter[str] = Counter()  # topic -> joined clients listing it
        self._counted_slots: frozenset[int] | None = None  # the subscribed topics ``_served`` counts partitions of
        self._counted_for: tuple[int, int] | None = None  # the subscription changes _counted_slots reflects
        self._joined_changes = 0  # goes up whenever _joined_topics changes
        self._counted_mask = np.zeros(len(self.catalog.slot_name), dtype=bool)  # per slot: in _counted_slots
        self._counted_by_slot: list[bool] = self._counted_mask.tolist()  # the same, for element access
        self._subscribed_total = 0  # partitions of the counted slots
        self._served = 0  # of those, partitions some member consumes
        self._targets_seen = 0
        self.trace: list[TraceEntry] | None = [] if trace else None

    def _log(self, member: str, action: str, partitions: set[int] = (), **fields: object) -> None:
        if self.trace is not None:
            tps = tuple(sorted(self.catalog.topic_partition(pid) for pid in partitions))
            self.trace.append(TraceEntry(self.now, member, action, partitions=tps,
                                         group_epoch=self.coordinator.group_epoch, **fields))  # type: ignore[arg-type]

    # -- clock and bookkeeping

    def _push(self, at: float, kind: str, payload: object) -> None:
        heapq.heappush(self._queue, (at, self.heartbeats.take_sequence(), kind, payload))
        self._timers += 1

    def _schedule_heartbeat(self, client: _Client, at: float) -> None:
        self.heartbeats.schedule(client.index, at)

    def settled(self) -> bool:
        coordinator = self.coordinator
        refresh_due = coordinator.metadata_refresh and bool(coordinator.members)
        return coordinator.settled() and not refresh_due and not self._pending

    def _advance(self, to: float) -> None:
        if to > self.now:
            if self.records:
                record = self.records[-1]
                record.unowned_partition_seconds += self.unserved() * (to - self.now)
                if not self.settled():
                    record.unsettled_seconds += to - self.now
            self.now = to

    def _grow(self) -> None:
        """New partitions appeared in the catalog: extend the per-partition arrays."""
        extra = self.catalog.size - len(self.owner)
        if extra > 0:
            pad = np.full(extra, -1, dtype=np.int32)
            self.owner = np.concatenate([self.owner, pad])
            self.last_owner = np.concatenate([self.last_owner, pad])
            self._pid_slot = np.asarray(self.catalog.pid_slot, dtype=np.int32)
        new_slots = len(self.catalog.slot_name) - len(self._counted_mask)
        self._counted_mask = np.concatenate([self._counted_mask, np.zeros(new_slots, dtype=bool)])
        self._counted_by_slot = self._counted_mask.tolist()
        self._counted_slots = None  # topics grew: count again
        self._unserved = None

    def unserved(self) -> int:
        """Subscribed partitions (of topics the group's members or joined clients list) that no
        running member is consuming. The consumed count follows each take and drop; it is counted
        again only when the subscribed topics change."""
        if self._unserved is None:
            catalog = self.catalog
            changes = (self.coordinator.subscription_changes, self._joined_changes)
            if self._counted_slots is None or changes != self._counted_for:
                subscribed = self.coordinator.subscribed_topics() | self._joined_topics.keys()
                live = frozenset(catalog.slot_of[t] for t in subscribed if t in catalog.slot_of)
                self._counted_for = changes
            else:
                live = self._counted_slots
            if live != self._counted_slots:
                mask = np.zeros(len(catalog.slot_name), dtype=bool)
                mask[list(live)] = True
                self._counted_slots, self._counted_mask, self._counted_by_slot = live, mask, mask.tolist()
                self._subscribed_total = sum(len(catalog.slot_pids[s]) for s in live)
                self._served = int(np.count_nonzero((self.owner >= 0) & mask[self._pid_slot])) if len(self.owner) else 0
            self._unserved = self._subscribed_total - self._served
        return self._unserved

    def _set_joined(self, client: _Client, joined: bool) -> None:
        if client.joined != joined:
            self._count_topics(client.topics, 1 if joined else -1)
            client.joined = joined

    def _set_topics(self, client: _Client, topics: tuple[str, ...]) -> None:
        if client.joined:
            self._count_topics(client.topics, -1)
            self._count_topics(topics, 1)
        client.topics = topics

    def _count_topics(self, topics: tuple[str, ...], step: int) -> None:
        counts = self._joined_topics
        self._joined_changes += 1
        for topic in set(topics):
            counts[topic] += step
            if not counts[topic]:
                del counts[topic]

    def _dirty(self) -> None:
        self._unserved = None

    # -- records

    def _open(self, at: float, kind: str, description: str, member: str | None = None) -> EventRecord:
        self._close()
        record = EventRecord(index=len(self.records), at=at, started=self.now, kind=kind, description=description,
                             member=member)
        self.records.append(record)
        self._before = self.last_owner.copy()
        return record

    def _close(self) -> None:
        if not self.records:
            return
        record = self.records[-1]
        before, after = self._before, self.last_owner[: len(self._before)]
        record.moved = int(np.count_nonzero((before >= 0) & (after >= 0) & (before != after)))
        members = self.coordinator.members
        # a member that is down but not yet expired is still in the group: the coordinator keeps its
        # assignment for it (nobody reads those partitions meanwhile)
        record.loads = {name: len(c.owned) if c.running else len(members[name].assigned)
                        for name, c in self.clients.items() if name in members}
        record.spread = spread(record.loads)
        record.generation = self.coordinator.group_epoch
        record.protocol = self.coordinator.last_assignor or self.coordinator.group_assignor()
        record.leader = None

    def _count_rounds(self) -> None:
        computed = self.coordinator.targets_computed
        if computed != self._targets_seen and self.records:
            self.records[-1].rounds += computed - self._targets_seen
        self._targets_seen = computed

    # -- the client's side

    def _new_client(self, name: str, plan: MemberPlan) -> _Client:
        index = self.member_index.get(name)
        if index is None:
            index = self.member_index[name] = len(self.member_names)
            self.member_names.append(name)
        client = _Client(name, index, plan, tuple(plan.topics), plan.remote_assignor or self.run_assignor)
        self.heartbeats.reserve(index)
        replaced = self.clients.get(name)
        if replaced is not None and replaced.joined:
            self._count_topics(replaced.topics, -1)  # its topics count no more
        self.clients[name] = client
        return client

    # a member's share is a few partitions: element by element beats whole-array calls here
    def _take(self, client: _Client, partitions: Collection[int]) -> None:
        owner, last_owner, index = self.owner, self.last_owner, client.index
        counted, slot_of = self._counted_by_slot, self.catalog.pid_slot
        served = 0
        for pid in partitions:
            other = owner[pid]
            if other >= 0:
                topic, p = self.catalog.topic_partition(pid)
                raise InvariantViolation(
                    f"at {self.now:g}s {topic}-{p} would be owned by both {self.member_names[other]!r} and "
                    f"{client.name!r}: the coordinator handed it over before it was revoked")
            owner[pid] = last_owner[pid] = index
            served += counted[slot_of[pid]]
        self._served += served

    def _drop(self, client: _Client, partitions: Collection[int]) -> None:
        owner, index = self.owner, client.index
        counted, slot_of = self._counted_by_slot, self.catalog.pid_slot
        served = 0
        for pid in partitions:
            if owner[pid] == index:
                owner[pid] = -1
                served += counted[slot_of[pid]]
        self._served -= served

    def _apply_assignment(self, client: _Client, assignment: frozenset[int]) -> bool:
        """Revoke what is no longer assigned, then take what is new; True when anything changed."""
        catalog = self.catalog
        assigned = assignment if catalog.all_live() else frozenset(pid for pid in assignment if catalog.is_live(pid))
        owned = client.owned
        revoke = owned - assigned
        add = assigned - owned
        if not revoke and not add:
            return False
        if revoke:
            self._drop(client, revoke)
            self.records[-1].revoked += len(revoke)
            if self.trace is not None:
                self._log(client.name, "revoke", revoke)
        self._take(client, add)
        if add and self.trace is not None:
            self._log(client.name, "assign", add)
        client.owned = assigned
        self._dirty()
        return True

    def _lose_everything(self, client: _Client) -> None:
        """The process stops or is fenced: what it owned is gone without a revocation."""
        if client.owned:
            self._log(client.name, "lose", client.owned)
        self._drop(client, client.owned)
        client.owned = frozenset()
        self._dirty()

    def _heartbeat(self, client: _Client, epoch: int | None = None) -> None:
        was_settled = self.settled()
        coordinator = self.coordinator
        if self.heartbeats.last_beat.item(client.index) != -np.inf:
            self._renew_to_last_bulk_beat(client)
        epoch = client.epoch if epoch is None else epoch
        send_topics = client.topics if client.sent_topics != client.topics or epoch == 0 else None
        request = HeartbeatRequest(
            client.name, epoch, instance_id=client.plan.instance_id, rack=client.plan.rack, topics=send_topics,
            assignor=client.assignor, owned=client.owned,
        )
        members_before = len(coordinator.members)
        response = coordinator.heartbeat(request, self.now)
        if self.trace is not None:
            record = coordinator.members.get(client.name)
            self._log(client.name, "heartbeat", epoch=response.epoch, sent_epoch=epoch,
                      state=record.state.name if record is not None and response.error is None else (response.error or ""))
        if len(coordinator.members) != members_before:
            self._dirty()
        if epoch in (LEAVE_GROUP_EPOCH, LEAVE_GROUP_STATIC_EPOCH):
            self._set_joined(client, False)
            self._pending.discard(client.name)
            self._dirty()
        elif response.error == "UNRELEASED_INSTANCE_ID":
            # the previous instance with this group.instance.id has not left yet: try again later
            self._schedule_heartbeat(client, self.now + self.interval)
        elif response.error is not None:
            # fenced or unknown: give up everything and rejoin with epoch 0
            self._lose_everything(client)
            client.epoch = 0
            client.sent_topics = None
            self._pending.add(client.name)
            self._schedule_heartbeat(client, self.now)
        else:
            if send_topics is not None:
                client.sent_topics = send_topics
            self._pending.discard(client.name)
            client.epoch = response.epoch
            changed = response.assignment is not None and self._apply_assignment(client, response.assignment)
            # after applying a new assignment the member acknowledges it at once
            self._schedule_heartbeat(client, self.now if changed else self.now + self.interval)
        if coordinator.targets_computed != self._targets_seen:
            self._count_rounds()
        if self.records and (not was_settled or not self.settled()):
            self.records[-1].heartbeats += 1
        self._mark_routine(client)

    def _mark_routine(self, client: _Client) -> None:
        """After a client's heartbeat: what its next one will do, if routine. A new target changes
        what every member's next heartbeat does: all are looked at again before the next stretch."""
        routine = self.heartbeats.routine
        if self.coordinator.targets_computed != self._targets_marked:
            self._targets_marked = self.coordinator.targets_computed
            routine[:] = Routine.OTHER
            self._routine_stale = True
        routine[client.index] = self._routine_of(client)

    def _mark_all_routine(self) -> None:
        """What every member's next heartbeat will do, if routine."""
        clients = [client for client in map(self.clients.get, self.coordinator.members) if client is not None]
        self.heartbeats.routine[[client.index for client in clients]] = list(map(self._routine_of, clients))
        self._routine_stale = False

    def _routine_of(self, client: _Client) -> Routine:
        """What the client's next regular heartbeat will do: the coordinator's answer for a request
        that sends nothing new (``Routine.OTHER`` when the client has something new to send)."""
        member = self.coordinator.members.get(client.name)
        if (member is None or not client.running or not client.joined or client.name in self._pending
                or client.sent_topics != client.topics):
            return Routine.OTHER
        return self.coordinator.routine(member, client.epoch, client.plan.instance_id, client.plan.rack,
                                        client.assignor)

    def _renew_to_last_bulk_beat(self, client: _Client) -> None:
        """The coordinator's session deadline after the client's heartbeats played in bulk (only the
        last one counts)."""
        last_beat = self.heartbeats.take_last_beat(client.index)
        if last_beat is not None and client.name in self.coordinator.members:
            self.coordinator.session_deadline[client.name] = last_beat + self.session_timeout

    def _join(self, client: _Client) -> None:
        self._set_joined(client, True)
        client.epoch = 0
        client.sent_topics = None
        self._pending.add(client.name)
        self._dirty()
        self._heartbeat(client, 0)

    def _leave(self, client: _Client, record: EventRecord, *, static: bool = False) -> None:
        """Shut down (or unsubscribe) cleanly: revoke, then the leave heartbeat."""
        if not static:
            record.revoked += len(client.owned)
        self._lose_everything(client)
        self.heartbeats.cancel(client.index)  # no more regular heartbeats
        if client.joined:
            self._heartbeat(client, LEAVE_GROUP_STATIC_EPOCH if static else LEAVE_GROUP_EPOCH)

    def _stop(self, client: _Client) -> None:
        client.running = False
        self.heartbeats.cancel(client.index)
        self._pending.discard(client.name)
        self._dirty()

    def _watch_session(self, client: _Client) -> float | None:
        """The member stopped heartbeating: the coordinator will fence it at its session deadline."""
        self._renew_to_last_bulk_beat(client)
        deadline = self.coordinator.session_deadline.get(client.name)
        if deadline is None or client.name not in self.coordinator.members:
            return None
        client.expiry_token += 1
        client.expiry_pending = True
        self._push(deadline, "expire", (client.name, client.expiry_token))
        return deadline

    def _unwatch_session(self, client: _Client) -> None:
        if client.expiry_pending:
            client.expiry_pending = False
            client.expiry_token += 1
            self._timers -= 1

    # -- events

    def _event(self, event: Event) -> None:
        kind, name = event.type, event.member
        client = self.clients.get(name) if name is not None else None
        if client is not None:
            self.heartbeats.routine[client.index] = Routine.OTHER  # whatever it changes, its next heartbeat says so
        if kind == "expire":
            self._expire(client, event)
            return
        labels = {"return": f"{name} is back"}
        record = self._open(event.at, kind, labels.get(kind) or event.describe(), name)
        if name is not None and kind not in ("join", "return") and (client is None or not client.running):
            record.note = f"skipped: {name} is not running at this time"
            return
        if kind == "join":
            client = self._new_client(name, event.plan)
            if client.topics:
                self._join(client)
            else:
                record.note = "subscribes to nothing: stays out of the group until it subscribes"
            if event.plan.session_timeout is not None:
                record.note = (record.note + "; " if record.note else "") + (
                    "its own session_timeout is a classic setting; the consumer protocol uses the group's")
        elif kind == "leave":
            self._leave(client, record)
            self._stop(client)
        elif kind == "crash":
            self._lose_everything(client)
            self._stop(client)
            deadline = self._watch_session(client)
            if deadline is not None:
                record.note = f"session expires at {deadline:g}s (its last heartbeat + {self.session_timeout:g}s)"
        elif kind == "restart":
            static = bool(client.plan.instance_id)
            self._leave(client, record, static=static)
            self._stop(client)
            if static:
                self._watch_session(client)
                record.note = "static member leaves with epoch -2: keeps its assignment for its session timeout"
            self._push(self.now + event.down, "event", Event(self.now + event.down, "return", member=name))
        elif kind == "return":
            self._return(client, record)
        elif kind == "subscribe":
            self._subscribe(client, event.topics, record)
        else:
            self._metadata_change(event, record)

    def _expire(self, client: _Client, event: Event) -> None:
        self._renew_to_last_bulk_beat(client)
        epoch_before = self.coordinator.group_epoch
        if not self.coordinator.expire_session(client.name, self.now):
            return
        self._log(client.name, "fenced")
        record = self._open(event.at, "expire", f"{client.name} session expires", client.name)
        record.note = "session timed out: fenced" + (
            "" if self.coordinator.group_epoch == epoch_before else f"; group epoch {self.coordinator.group_epoch}")
        self._dirty()

    def _return(self, client: _Client, record: EventRecord) -> None:
        plan = client.plan
        old = client
        client = self._new_client(old.name, plan)
        self._set_topics(client, old.topics)
        client.expiry_token, client.expiry_pending = old.expiry_token, old.expiry_pending
        self._unwatch_session(client)
        epoch_before = self.coordinator.group_epoch
        kept = plan.instance_id is not None and old.name in self.coordinator.members
        if not client.topics:
            record.note = "subscribes to nothing: stays out of the group"
            return
        self._join(client)
        if kept and self.coordinator.group_epoch == epoch_before:
            record.note = "static member back within its session timeout: same assignment, no new group epoch"
        else:
            record.note = "rejoins as a new member"

    def _subscribe(self, client: _Client, topics: tuple[str, ...], record: EventRecord) -> None:
        client.plan = replace(client.plan, topics=topics)
        self._set_topics(client, tuple(dict.fromkeys(topics)))
        self._dirty()
        if not client.topics:
            if client.joined:
                self._leave(client, record)
                record.note = "subscribes to nothing: leaves the group"
            return
        if not client.joined:
            self._join(client)
            record.note = "joins the group with its new subscription"
            return
        if client.sent_topics != client.topics:
            self._pending.add(client.name)
            record.note = "the new subscription goes out with its next heartbeat"

    def _metadata_change(self, event: Event, record: EventRecord) -> None:
        catalog, topic = self.catalog, event.topic
        if event.type == "add_partitions":
            catalog.add_partitions(topic, event.count)
        elif event.type == "create_topic":
            catalog.create(topic, event.count)
        else:
            gone = catalog.delete(topic)
            gone_set = set(gone)
            for client in self.clients.values():
                lost = client.owned & gone_set
                if lost:
                    self._drop(client, lost)
                    client.owned = client.owned - lost
            if gone:
                self.last_owner[gone] = -1  # gone, so not "moved" either
        self._grow()
        if topic in self.coordinator.subscribed_topics():
            self.coordinator.request_metadata_refresh()
            record.note = "the group sees it on its next heartbeat"
        else:
            record.note = "no member subscribes to it: no rebalance"

    # -- the run

    def _quiet(self) -> bool:
        return self._timers == 0 and self.settled()

    def _play_heartbeats_in_bulk(self, other: tuple[float, int, str, object] | None, limit: float | None) -> int:
        """Play, in one compiled stretch, routine heartbeats up to the next other item of the queue, each
        as the step-by-step loop would (the clock, the figures, the trace), then apply to the coordinator
        the members that reached the target's epoch; how many were played."""
        coordinator = self.coordinator
        if coordinator.group_epoch != coordinator.assignment_epoch or coordinator.metadata_refresh:
            return 0
        record = self.records[-1]
        stretch = self.heartbeats.run_routine(
            stop_at=other[0] if other is not None else np.inf, stop_sequence=other[1] if other is not None else -1,
            limit=np.inf if limit is None else limit, interval=self.interval, now=self.now, unserved=self.unserved(),
            waiting=coordinator.waiting_for(), others_settled=not self._pending, stop_when_settled=self._timers == 0,
            unowned=record.unowned_partition_seconds, unsettled=record.unsettled_seconds)
        if not stretch.played:
            return 0
        self.played_in_bulk += stretch.played
        self.now = stretch.now
        record.unowned_partition_seconds, record.unsettled_seconds = stretch.unowned, stretch.unsettled
        record.heartbeats += stretch.counted
        names = [self.member_names[member] for member in stretch.reached]
        if self.trace is not None:
            self._trace_stretch(stretch.traced, set(names))
        for name in names:
            self.clients[name].epoch = coordinator.reach_target_epoch(name).epoch
        return stretch.played

    def _trace_stretch(self, played: list[tuple[int, float]], reaching: set[str]) -> None:
        """Trace entries of a stretch of routine heartbeats, before the members in ``reaching`` are moved
        to the target's epoch: the first heartbeat of each of those is the one that moves it."""
        coordinator, trace = self.coordinator, self.trace
        assert trace is not None
        target_epoch = coordinator.assignment_epoch
        reached: set[str] = set()
        for member, at in played:
            name = self.member_names[member]
            sent = target_epoch if name in reached else coordinator.members[name].epoch
            reached.update({name} & reaching)
            trace.append(TraceEntry(at, name, "heartbeat", epoch=target_epoch if name in reached else sent,
                                    sent_epoch=sent, state="STABLE", group_epoch=coordinator.group_epoch))

    def run(self, on_event: Callable[[], None] | None = None) -> StrategyRun:
        started = time.perf_counter()
        start = self._open(0.0, "start", f"{len(self.scenario.members)} members join")
        starters = list(self.scenario.members.items())
        own_timeouts = [name for name, plan in starters if plan.session_timeout is not None]
        if own_timeouts:
            start.note = (f"{', '.join(own_timeouts)}: a member's own session_timeout is a classic setting; "
                          "the consumer protocol uses the group's")
        for i, (name, plan) in enumerate(starters):
            client = self._new_client(name, plan)
            self._push(i * self.interval / len(starters), "start", client)
        for event in self.scenario.events:
            self._push(event.at, "event", event)
        # millions of short-lived records and sets, none in a cycle: nothing for the cyclic collector to find
        with no_cyclic_gc():
            self._play_queue(on_event)
        for client in self.clients.values():
            self._renew_to_last_bulk_beat(client)
        self._close()
        run = StrategyRun(self.strategy, self.records, time.perf_counter() - started, group_protocol=CONSUMER,
                          kafka_version=self.release.label)
        return run

    def _play_queue(self, on_event: Callable[[], None] | None) -> None:
        """Play the queue until it is empty, or nothing is left to come and the group has settled."""
        limit: float | None = None
        clock = self.heartbeats
        while True:
            if self._quiet():
                break
            other = self._queue[0] if self._queue else None
            beat = clock.first()
            if beat is None and other is None:
                break
            if beat is not None and self._timers == 0 and limit is None:
                limit = beat[1] + _SETTLE_LIMIT_INTERVALS * self.interval  # what processing it would set
            beat_first = beat is not None and (other is None or beat[1:] < other[:2])
            if beat_first and self._routine_stale:
                self._mark_all_routine()
            if beat is not None and clock.routine.item(beat[0]) and self._play_heartbeats_in_bulk(other, limit):
                continue
            if beat_first:
                member, at, _ = beat  # type: ignore[misc]
                clock.cancel(member)
                kind, payload = "heartbeat", self.clients[self.member_names[member]]
            else:
                at, _, kind, payload = heapq.heappop(self._queue)
                if kind == "expire":
                    name, token = payload  # type: ignore[misc]
                    client = self.clients[name]
                    if token != client.expiry_token:
                        continue
                    client.expiry_pending = False
                    self._timers -= 1
                    payload = Event(at, "expire", member=client.name)
                else:
                    self._timers -= 1
                    if kind == "start":
                        client = payload  # type: ignore[assignment]
                        if self.clients.get(client.name) is not client or not client.running or client.joined:
                            continue
            if self._timers == 0 and limit is None:
                limit = at + _SETTLE_LIMIT_INTERVALS * self.interval
            if limit is not None and at > limit:
                raise InvariantViolation(
                    f"the consumer group did not settle within {_SETTLE_LIMIT_INTERVALS} heartbeat intervals "
                    f"after the timeline ended (at {self.now:g}s)")
            if at > self.now:
                self._advance(at)
            if kind == "heartbeat":
                self._heartbeat(payload)  # type: ignore[arg-type]
            elif kind == "start":
                if payload.topics:  # type: ignore[union-attr]
                    self._join(payload)  # type: ignore[arg-type]
            else:
                event: Event = payload  # type: ignore[assignment]
                self._event(event)
                self._count_rounds()
                if on_event is not None and event.type not in ("expire", "return"):
                    on_event()
