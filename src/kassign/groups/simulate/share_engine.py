"""Play a share group's timeline (KIP-932): the group coordinator and the broker's ``simple`` assignor.

A share group has no rebalance barrier and no revocation step. The coordinator recomputes the target
assignment whenever the group changes, on the first heartbeat that sees the change (Kafka 4.3: at most
once per ``assignment_interval``); each member receives its part on its own next heartbeat and from then
fetches exactly that: it starts on partitions new to it and stops fetching those it lost, at once, while
the others go on. A partition may be in several members' targets (the broker hands its records out one by
one under acquisition locks), so members joining a group with fewer partitions than members only spread
the fetches. Targets come from :func:`kassign.groups.share.assign_share` (the release ``kafka_version``
names, 4.2, 4.3 or 4.4), fed what Kafka's coordinator feeds it: every member in the order it joined, its
subscription and its current target, and the partitions whose share state is initialised.

The coordinator, as Kafka 4.2's, 4.3's and 4.4's ``GroupMetadataManager`` runs a share group (4.4 runs it as 4.3
does: the same assignor, the same 1 s assignment interval):

- a member joining (epoch 0), leaving (epoch -1), fenced (its session, ``session_timeout``, ran out after its
  last heartbeat), or sending a new subscription bumps the group epoch; so does a change to a subscribed
  topic (partitions added, a topic created or deleted), seen on the next heartbeat of any member;
- a partition may be assigned only once its share state is initialised: after each heartbeat the
  coordinator asks the share coordinator to initialise the subscribed partitions that are not (it takes
  ``initialize_seconds``); a later heartbeat that finds initialised partitions missing from the target
  bumps the group epoch again. So partitions added to a topic reach members one target later than the
  change that created them;
- a heartbeat whose member is behind the target's epoch (or changed its subscription) gets the target,
  less the topics it does not subscribe to or that no longer exist; the Java share consumer acknowledges a
  new assignment at once with another heartbeat.

The members: as in the consumer-protocol simulator, the starting members join one after another over the
first heartbeat interval and keep that rhythm; requests take no time; a crash stops the member's fetching
at once while the coordinator keeps it (and its partitions) until the session times out; a restart is a
leave and, ``down`` seconds later, a join as a new member; subscribing to nothing leaves the group.

Worked example (``tests/groups/simulate/test_share_engine.py`` checks it): topic ``t`` with 2 partitions,
A and B from time 0 (heartbeats every 5 s: A at 0, 5, 10, ..., B at 2.5, 7.5, ...). A's join at 0 s finds
no share state for ``t`` and asks for it; B's join at 2.5 s finds it initialised and computes the first
target, B ``t-0`` and A ``t-1`` (A receives its part at 5 s). C joins at 12 s: sharing = ceil(3 / 2) = 2,
and the target becomes A ``t-0, t-1``, B ``t-0``, C ``t-1``. Nobody stops fetching: C starts on ``t-1`` at
once, B moves to the new epoch at 12.5 s with what it has, A adds ``t-0`` at 15 s; settled 3 s after the
join. Had D joined at 12.5 s too, Kafka 4.2 would have computed its target on its join heartbeat, while
Kafka 4.3 waits for the next heartbeat a second after the previous target (A's, at 15 s), and D starts
fetching at 17.5 s, on its own next heartbeat.

Data layout: partitions are the dense integers of
:class:`~kassign.groups.consumer.coordinator.TopicCatalog`; targets and what members fetch are frozensets
of them, and a member's fetchers count is a numpy array indexed by partition.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from kassign.core.releases import DEFAULT_KAFKA_VERSION, ReleaseLike, UnsupportedReleaseError, release_for
from kassign.groups.consumer.coordinator import TopicCatalog
from kassign.groups.share import assign_share
from kassign.groups.simulate.heartbeat_timeline import HeartbeatTimeline, assignment_interval
from kassign.groups.simulate.scenario import Event, MemberPlan
from kassign.groups.simulate.share_metrics import ShareEventRecord, ShareRun, sharing_counts
from kassign.groups.simulate.share_scenario import ShareTimeline

STRATEGY = "share:simple"


@dataclass(eq=False)
class _Member:
    """One share consumer, and what the coordinator keeps about it (``c_``: the coordinator's side)."""

    name: str
    plan: MemberPlan
    topics: tuple[str, ...]
    running: bool = True
    joining: bool = False  # its next heartbeat joins the group (epoch 0)
    sent_topics: tuple[str, ...] | None = None
    fetching: frozenset[int] = frozenset()
    expiry_token: int = 0
    c_topics: tuple[str, ...] = ()
    c_epoch: int = 0
    c_assigned: frozenset[int] = frozenset()


class ShareTimelineRun(HeartbeatTimeline):
    """A share-group timeline played once; :meth:`run` plays it. ``trace``: keep ``(time, member, action,
    partitions)`` for every target received, fetch started and stopped (for tests and curious readers)."""

    def __init__(self, timeline: ShareTimeline, kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION, *,
                 trace: bool = False) -> None:
        self.release = release_for(kafka_version, "share")
        if not self.release.at_least(4, 2):
            # the coordinator played here is that of 4.2 to 4.4; 4.1's assignor alone is modelled (kassign assign)
            raise UnsupportedReleaseError(
                f"the share-group simulator plays the coordinator of Kafka 4.2, 4.3 and 4.4, not Kafka "
                f"{self.release}'s (kassign assign --protocol share answers Kafka 4.1's simple assignor); pass 4.2, "
                "4.3 or 4.4 as kafka_version (--kafka-version)")
        settings = dict(timeline.settings)
        if settings["assignment_interval"] is None:
            settings["assignment_interval"] = assignment_interval(self.release)
        super().__init__(settings["heartbeat_interval"], settings["session_timeout"], settings["assignment_interval"])
        self.timeline = timeline
        self.settings = settings
        self.catalog = TopicCatalog(timeline.scenario.topics)
        self.members: dict[str, _Member] = {}
        self.group: dict[str, _Member] = {}  # the coordinator's members, in the order they joined
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.target: dict[str, frozenset[int]] = {}
        self.metadata_refresh = False
        self.initialized: set[int] = set()
        self.initializing: set[int] = set()
        self.fetchers = np.zeros(0, dtype=np.int64)  # running members fetching each partition
        self.load = np.zeros(0)
        self._grow()
        self._unfetched: int | None = None
        # what the group's state gives (subscriptions, pending initialisation, settled) is worked out again only
        # after something changed: most heartbeats only renew a session
        self._version = 0
        self._memo: dict[str, tuple[int, object]] = {}
        self.trace: list[tuple[float, str, str, tuple[tuple[str, int], ...]]] | None = [] if trace else None

    # -- bookkeeping --------------------------------------------------------------------------------

    def _grow(self) -> None:
        catalog = self.catalog
        extra = catalog.size - len(self.load)
        if extra > 0:
            loads = [self.timeline.load_of(*catalog.topic_partition(pid))
                     for pid in range(len(self.load), catalog.size)]
            self.load = np.concatenate([self.load, np.array(loads, dtype=float)])
            self.fetchers = np.concatenate([self.fetchers, np.zeros(extra, dtype=np.int64)])
        self._unfetched = None

    def _log(self, member: str, action: str, pids) -> None:
        if self.trace is not None and pids:
            pairs = tuple(sorted(self.catalog.topic_partition(pid) for pid in pids))
            self.trace.append((self.now, member, action, pairs))

    def _memoized(self, name: str, compute):
        known = self._memo.get(name)
        if known is not None and known[0] == self._version:
            return known[1]
        value = compute()
        self._memo[name] = (self._version, value)
        return value

    def _group_topics(self) -> frozenset[str]:
        """Topic names the group's members subscribe to (a crashed member's too, until fenced)."""
        return self._memoized("group topics", lambda: frozenset(t for m in self.group.values() for t in m.c_topics))

    def subscribed_topics(self) -> frozenset[str]:
        """Topic names the group subscribes to, and those of members about to join."""
        return self._memoized("topics", lambda: self._group_topics() | frozenset(
            t for m in self.members.values() if m.joining and m.running for t in m.topics))

    def subscribed_pids(self) -> list[int]:
        catalog = self.catalog
        return self._memoized("pids", lambda: [pid for name in sorted(self.subscribed_topics())
                                                if name in catalog.slot_of for pid in catalog.pids_of(name)])

    def unfetched(self) -> int:
        if self._unfetched is None:
            pids = self.subscribed_pids()
            self._unfetched = int(np.count_nonzero(self.fetchers[pids] == 0)) if pids else 0
        return self._unfetched

    def accrue(self, seconds: float) -> None:
        if self.records:
            self.records[-1].unfetched_partition_seconds += self.unfetched() * seconds

    def _fetch(self, member: _Member, assigned: frozenset[int]) -> bool:
        """The member fetches ``assigned`` (live partitions only) from now on; True if that changed."""
        catalog = self.catalog
        new = assigned if catalog.all_live() else frozenset(p for p in assigned if catalog.is_live(p))
        old = member.fetching
        if new == old:
            return False
        stopped, started = old - new, new - old
        record = self.records[-1]
        if member.running and member.name in self.group:
            record.stopped += len(stopped)
        record.started += len(started)
        if stopped:
            self.fetchers[list(stopped)] -= 1
            self._log(member.name, "stop", stopped)
        if started:
            self.fetchers[list(started)] += 1
            self._log(member.name, "start", started)
        member.fetching = new
        self._unfetched = None
        return True

    def _lose(self, member: _Member) -> None:
        """The member stops fetching everything (it leaves, crashes or its topics are gone)."""
        if member.fetching:
            record = self.records[-1]
            record.lost += len(member.fetching)
            pids = list(member.fetching)
            self.fetchers[pids] -= 1
            record.orphaned += int(np.count_nonzero(self.fetchers[pids] == 0))
            self._log(member.name, "lose", member.fetching)
            member.fetching = frozenset()
            self._unfetched = None

    # -- the coordinator ----------------------------------------------------------------------------

    def _live_subscribed(self, topics) -> frozenset[int]:
        catalog = self.catalog
        return frozenset(pid for name in topics if name in catalog.slot_of for pid in catalog.pids_of(name))

    def _init_needed(self) -> set[int]:
        if not self.group:
            return set()
        return set(self.subscribed_pids()) - self.initialized - self.initializing

    def _initialized_assignment_pending(self) -> bool:
        """Kafka's check: some subscribed topic's initialised partitions differ from those in the target."""
        if not self.group or not self.initialized:
            return False
        return self._memoized("init pending", self._initialized_differ)

    def _initialized_differ(self) -> bool:
        catalog = self.catalog
        assigned = set().union(*self.target.values()) if self.target else set()
        for name in self._group_topics():
            slot = catalog.slot_of.get(name)
            if slot is None:
                continue
            pids = set(catalog.slot_pids[slot])
            ready = pids & self.initialized
            if ready and pids & assigned != ready:
                return True
        return False

    def _remove(self, member: _Member) -> None:
        """The coordinator drops a member (it left, or its session ran out): a new group epoch."""
        self.group.pop(member.name, None)
        self.target.pop(member.name, None)
        member.c_topics, member.c_assigned, member.c_epoch = (), frozenset(), 0
        self.group_epoch += 1
        self._unfetched = None

    def _document(self) -> tuple[dict, dict[str, int]]:
        """The group as the assignor's scenario (a share group's), and topic name -> slot for its answer."""
        catalog = self.catalog
        subscribed = {t for m in self.group.values() for t in m.c_topics}
        live = {name: slot for name, slot in catalog.slot_of.items() if name in subscribed}
        slots = dict(live)
        shadowed = catalog.shadowed_slots()
        deleted_names = [catalog.slot_name[s] for s, alive in enumerate(catalog.slot_alive) if not alive]
        members = {}
        for name, member in self.group.items():
            owned = []
            for pid in sorted(self.target.get(name, ())):
                slot = catalog.pid_slot[pid]
                topic = catalog.slot_name[slot]
                if not catalog.slot_alive[slot] and (slot in shadowed or deleted_names.count(topic) > 1):
                    continue  # a deleted topic stays in a target (Kafka keeps it) if its name says which one
                slots[topic] = slot  # also a live topic nobody subscribes to any more, which Kafka keeps too
                owned.append([topic, catalog.pid_partition[pid]])
            members[name] = {"topics": list(member.c_topics), "owned": owned}
            if member.plan.rack is not None:
                members[name]["rack"] = member.plan.rack
        initialized = {name: sorted(catalog.pid_partition[pid] for pid in catalog.slot_pids[slot]
                                    if pid in self.initialized) for name, slot in live.items()}
        document = {"topics": {name: catalog.count(name) for name in live},
                    "topic_ids": {name: catalog.topic_id(slot) for name, slot in slots.items()},
                    "members": members, "initialized": initialized}
        return document, slots

    def _compute_target(self) -> None:
        document, slots = self._document()
        answer = assign_share("simple", document, self.release.label)
        catalog = self.catalog
        self.target = {name: frozenset(catalog.slot_pids[slots[topic]][p] for topic, p in pairs)
                       for name, pairs in answer.items()}
        self.assignment_epoch = self.group_epoch
        self.target_computed()

    def _maybe_initialize(self) -> bool:
        """Ask for the share state of the subscribed partitions that have none yet; True if any."""
        needed = self._init_needed()
        if needed:
            self.initializing |= needed
            self.push(self.now + self.settings["initialize_seconds"], "initialized", frozenset(needed))
        return bool(needed)

    # -- a heartbeat ---------------------------------------------------------------------------------

    def heartbeat(self, name: str) -> None:
        member = self.members[name]
        bump = subscription_changed = False
        if member.joining:
            member.joining = False
            self.group[name] = member
            member.c_topics = member.sent_topics = member.topics
            member.c_epoch, member.c_assigned = 0, frozenset()
            bump = subscription_changed = True
        elif member.sent_topics != member.topics:
            member.c_topics = member.sent_topics = member.topics
            bump = subscription_changed = True
        if subscription_changed:
            self._version += 1
        if self.assignment_epoch >= self.group_epoch and self._initialized_assignment_pending():
            bump = True
        if self.metadata_refresh:
            self.metadata_refresh = False
            bump = True
        changed = bump
        if bump:
            self.group_epoch += 1
            self._unfetched = None
            self._version += 1
        if self.group_epoch > self.assignment_epoch and self.may_compute_target():
            self._compute_target()
            changed = True
        if subscription_changed or member.c_epoch != self.assignment_epoch:
            wanted = self._live_subscribed(member.c_topics)
            member.c_assigned = self.target.get(name, frozenset()) & wanted
            member.c_epoch = self.assignment_epoch
            changed = True
        changed |= self._maybe_initialize()
        fetched = self._fetch(member, member.c_assigned)
        if changed or fetched:
            self._version += 1
        if fetched:
            self.last_beat[name] = self.now
            self.schedule_beat(name, self.now)  # the client acknowledges its new assignment at once
        else:
            self.beat_now(name)

    # -- settled --------------------------------------------------------------------------------------

    def settled(self) -> bool:
        return self._memoized("settled", self._settled_now)

    def _settled_now(self) -> bool:
        for member in self.members.values():
            changed = member.name in self.group and member.sent_topics != member.topics
            if member.running and (member.joining or changed):
                return False
        if any(not m.running for m in self.group.values()):
            return False  # a crashed member still holds its partitions until its session times out
        if not self.group:
            return True
        if self.group_epoch != self.assignment_epoch or self.metadata_refresh:
            return False
        if self.initializing or self._init_needed() or self._initialized_assignment_pending():
            return False
        return all(m.c_epoch == self.assignment_epoch for m in self.group.values())

    def on_settled(self, record: ShareEventRecord) -> None:
        self._snapshot(record, settled=True)

    def _snapshot(self, record: ShareEventRecord, settled: bool) -> None:
        catalog = self.catalog
        pids = self.subscribed_pids()
        holders = self.fetchers[pids] if pids else np.zeros(0, dtype=np.int64)
        record.sharing = sharing_counts(holders.tolist())
        record.holders = {f"{t}-{p}": int(h) for (t, p), h in
                          zip((catalog.topic_partition(pid) for pid in pids), holders.tolist())}
        running = [m for m in self.group.values() if m.running]
        record.members = len(running)
        record.partitions_per_member = {m.name: len(m.fetching) for m in running}
        if self.timeline.loads:
            share = np.where(self.fetchers > 0, self.load / np.maximum(self.fetchers, 1), 0.0)
            record.bytes_per_member = {m.name: float(share[list(m.fetching)].sum()) if m.fetching else 0.0
                                       for m in running}
        record.idle_members = tuple(m.name for m in running if not m.fetching)
        record.uninitialized = sum(1 for pid in pids if pid not in self.initialized)
        record.settled_snapshot = settled

    # -- events ---------------------------------------------------------------------------------------

    def _open(self, at: float, kind: str, description: str, names: tuple[str, ...] = ()) -> ShareEventRecord:
        if self.records and self.records[-1].settle_seconds is None and not (
                self.records[-1].index > 0 and self.records[-1].at == at):
            self._snapshot(self.records[-1], settled=False)  # as the next event finds the group
        return self.open_record(ShareEventRecord, at, kind, description, names)

    def _new_member(self, name: str, plan: MemberPlan, join: bool = True) -> _Member:
        """A member (a new one, or one back from a restart); it joins now, unless ``join`` is False."""
        member = _Member(name, plan, tuple(dict.fromkeys(plan.topics)), joining=join and bool(plan.topics))
        self.members[name] = member
        if member.joining:
            self.schedule_beat(name, self.now)
        return member

    def _leave(self, member: _Member) -> None:
        """The member leaves the group: it stops fetching and sends its leave heartbeat (epoch -1)."""
        self._lose(member)
        self.cancel_beat(member.name)
        member.joining = False
        if member.name in self.group:
            self._remove(member)
            self.records[-1].heartbeats += 1

    def handle(self, kind: str, payload) -> None:
        self._version += 1  # every item may change the group
        try:
            self._handle(kind, payload)
        finally:
            self._version += 1  # and what was worked out while it was handled is out of date

    def _handle(self, kind: str, payload) -> None:
        if kind == "initialized":
            live = {pid for pid in payload if self.catalog.is_live(pid)}
            self.initializing -= payload
            self.initialized |= live
            return
        if kind == "start":
            member = payload
            if self.members.get(member.name) is member and member.running and member.plan.topics:
                member.joining = True  # unless it left or crashed before its turn came
                self.schedule_beat(member.name, self.now)
            return
        if kind == "expire":
            name, token = payload
            member = self.members[name]
            if token == member.expiry_token and not member.running and name in self.group:
                self._remove(member)
                note = f"{name}'s session timed out at {self.now:g} s: fenced"
                record = self.records[-1]
                record.note = f"{record.note}; {note}" if record.note else note
            return
        if kind == "return":
            record = self.records[-1]
            old = self.members[payload]
            if old.running:
                return
            self._new_member(payload, old.plan)
            note = f"{payload} back at {self.now:g} s: joins as a new member"
            record.note = f"{record.note}; {note}" if record.note else note
            return
        self._event(payload)

    def _event(self, event: Event) -> None:
        record = self._open(event.at, event.type, event.describe(), (event.member,) if event.member else ())
        member = self.members.get(event.member) if event.member else None
        if event.type != "join" and event.member is not None and (member is None or not member.running):
            note = f"skipped: {event.member} is not running at this time"
            record.note = f"{record.note}; {note}" if record.note else note
            return
        if event.type == "join":
            self._new_member(event.member, event.plan)
        elif event.type == "leave":
            self._leave(member)
            member.running = False
        elif event.type == "crash":
            self._lose(member)
            member.running = False
            member.joining = False
            self.cancel_beat(member.name)
            if member.name in self.group:
                member.expiry_token += 1
                deadline = self.last_beat.get(member.name, self.now) + self.session_timeout
                self.push(deadline, "expire", (member.name, member.expiry_token))
                record.note = f"session expires at {deadline:g} s (its last heartbeat + {self.session_timeout:g} s)"
        elif event.type == "restart":
            self._leave(member)
            member.running = False
            self.push(self.now + event.down, "return", member.name)
        elif event.type == "subscribe":
            self._subscribe(member, tuple(dict.fromkeys(event.topics)))
        else:
            self._metadata_change(event)

    def _subscribe(self, member: _Member, topics: tuple[str, ...]) -> None:
        record = self.records[-1]
        member.plan = replace(member.plan, topics=topics)
        member.topics = topics
        self._unfetched = None
        if not topics:
            if member.name in self.group or member.joining:
                self._leave(member)  # it keeps running, outside the group
                record.note = "subscribes to nothing: leaves the group"
            return
        if member.name not in self.group and not member.joining:
            member.joining = True
            self.schedule_beat(member.name, self.now)
            record.note = "joins the group with its new subscription"
        elif member.name in self.group:
            record.note = "the new subscription goes out with its next heartbeat"

    def _metadata_change(self, event: Event) -> None:
        catalog, topic = self.catalog, event.topic
        record = self.records[-1]
        if event.type == "add_partitions":
            catalog.add_partitions(topic, event.count)
        elif event.type == "create_topic":
            catalog.create(topic, event.count)
        else:
            gone = set(catalog.delete(topic))
            for member in self.members.values():
                lost = member.fetching & gone
                if lost:
                    self.fetchers[list(lost)] -= 1
                    member.fetching = member.fetching - lost
            self.initialized -= gone
            self.initializing -= gone
        self._grow()
        if topic in {t for m in self.group.values() for t in m.c_topics}:
            self.metadata_refresh = True
            record.note = "the group sees it on its next heartbeat"
        else:
            record.note = "no member subscribes to it: nothing changes"

    # -- the run --------------------------------------------------------------------------------------

    def run(self) -> ShareRun:
        started = time.perf_counter()
        scenario = self.timeline.scenario
        starters = list(scenario.members.items())
        self._open(0.0, "start", f"{len(starters)} members join", tuple(name for name, _ in starters))
        for i, (name, plan) in enumerate(starters):
            self.push(i * self.interval / len(starters), "start", self._new_member(name, plan, join=False))
        for event in scenario.events:
            self.push(event.at, "event", event)
        self.play()
        return ShareRun(STRATEGY, self.release.label, self.records, self.settings, bool(self.timeline.loads),
                        time.perf_counter() - started)


def simulate_share(timeline: ShareTimeline, kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION) -> ShareRun:
    """Play a share-group timeline with the broker's ``simple`` assignor of Kafka ``kafka_version`` (4.2, 4.3, 4.4)."""
    return ShareTimelineRun(timeline, kafka_version).run()
