"""The timeline engine: play a scenario's events against one strategy on a simulated clock.

Nothing sleeps: the clock jumps from event to event, and a rebalance advances it
by ``round_seconds`` per round. An event that falls inside a running rebalance
starts once the group is stable again (the rebalance's time stays with the event
that caused it).

How each event plays:

- join: the newcomer is admitted (or refused with INCONSISTENT_GROUP_PROTOCOL,
  recorded in the row's note) and the group rebalances.
- leave: the member revokes what it owns, sends LeaveGroup, the group rebalances.
- crash: the member stops; its partitions sit idle until its session times out,
  which is a row of its own (``expire``) and triggers the rebalance.
- restart (down D seconds): a static member (``instance_id``) simply stops; back
  within its session timeout, it takes its old assignment again and nobody
  rebalances; away longer, it is expired and later rejoins as a newcomer. A
  dynamic member leaves on shutdown (rebalance) and rejoins as a newcomer
  (another rebalance).
- subscribe: the member rejoins with its new topics.
- add_partitions / create_topic / delete_topic: the leader sees the metadata
  change and the group rebalances if any member subscribes to that topic (a
  deleted topic's partitions are simply gone).

A rebalance that starts while some member is down waits in its join phase until
that member's session expires (at most ``rebalance_timeout``) and then goes on
without it; if it comes back later it joins as a newcomer.

Data layout: see ``metrics``: ownership comparisons run on integer arrays.

This engine plays the classic protocol; strategies of Kafka 4's consumer group
protocol (``consumer:uniform``, ...) are played by ``consumer_protocol``, and
``simulate`` picks the engine.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from kassign.core.cluster import Cluster
from kassign.core.errors import KassignError
from kassign.groups.classic.assignors import answers_per_release
from kassign.groups.classic.protocol.coordinator import GroupCoordinator, InconsistentGroupProtocolError
from kassign.groups.classic.protocol.member import GroupMember
from kassign.groups.classic.protocol.rebalance import SHARING_ASSIGNORS, run_rebalance
from kassign.core.releases import DEFAULT_KAFKA_VERSION, ReleaseLike, release_for
from kassign.groups.simulate.metrics import EventRecord, OwnershipSnapshot, StrategyRun, moved_between, spread
from kassign.groups.simulate.scenario import CLASSIC, CONSUMER, Event, MemberPlan, SimScenario, run_protocol


@dataclass
class _Down:
    member: GroupMember
    expires_at: float


class TimelineRun:
    """One strategy over one scenario."""

    def __init__(self, scenario: SimScenario, strategy: str, kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION) -> None:
        if run_protocol(scenario, strategy) != CLASSIC:
            raise KassignError(f"strategy {strategy!r} runs the consumer group protocol here: simulate it with "
                               "kassign.groups.simulate.simulate() (or ConsumerTimelineRun), not TimelineRun")
        self.scenario = scenario
        self.strategy = strategy
        # the release whose clients run Kafka's assignors (range, roundrobin, sticky, cooperative-sticky)
        self.release = release_for(kafka_version, CLASSIC)
        names = [strategy] + [s for plan in scenario.members.values() for s in plan.strategies]
        self.release_matters = any(answers_per_release(name) for name in dict.fromkeys(names))
        self.round_seconds = scenario.settings["round_seconds"]
        self.session_timeout = scenario.settings["session_timeout"]
        self.rebalance_timeout = scenario.settings["rebalance_timeout"]
        self.topics = dict(scenario.topics)
        # The metadata the group's current assignment was computed from (the leader's snapshot).
        self.assigned_metadata: dict[str, int] = dict(self.topics)
        self.coordinator = GroupCoordinator()
        self.members: dict[str, GroupMember] = {}  # live members in the group
        self.down: dict[str, _Down] = {}  # in the group but not running
        self.plans: dict[str, MemberPlan] = dict(scenario.members)
        self.now = 0.0
        self.records: list[EventRecord] = []
        self._queue: list[tuple[float, int, Event]] = []
        self._seq = 0

    # -- bookkeeping

    def cluster(self) -> Cluster:
        return Cluster(self.topics)

    def _schedule(self, event: Event) -> None:
        heapq.heappush(self._queue, (event.at, self._seq, event))
        self._seq += 1

    def _sharing(self) -> bool:
        return self.coordinator.protocol in SHARING_ASSIGNORS

    def unserved(self) -> int:
        """Subscribed partitions that no running member is consuming."""
        everyone = list(self.members.values()) + [d.member for d in self.down.values()]
        subscribed = {t for m in everyone for t in m.topics if t in self.topics}
        total = sum(self.topics[t] for t in subscribed)
        if self._sharing():
            served = len({tp for m in self.members.values() for tp in m.owned if tp.topic in subscribed})
        else:
            served = sum(1 for m in self.members.values() for tp in m.owned if tp.topic in subscribed)
        return total - served

    def _advance(self, to: float) -> None:
        if to > self.now:
            if self.records:
                self.records[-1].unowned_partition_seconds += self.unserved() * (to - self.now)
            self.now = to

    def _snapshot(self) -> OwnershipSnapshot:
        owned = {m: mb.owned for m, mb in self.members.items()}
        owned.update({m: d.member.owned for m, d in self.down.items()})
        return OwnershipSnapshot(owned)

    def _new_member(self, name: str, plan: MemberPlan) -> GroupMember:
        strategies = list(plan.strategies) or [self.strategy]
        return GroupMember(
            name,
            plan.topics,
            strategies,
            instance_id=plan.instance_id,
            rack=plan.rack,
            session_timeout=plan.session_timeout or self.session_timeout,
            kafka_version=self.release,
        )

    def _subscribed_by_anyone(self, topic: str) -> bool:
        return any(topic in m.topics for m in self.members.values())

    # -- rebalancing

    def _rebalance(self, record: EventRecord) -> None:
        revoked = 0
        if self.down:
            # the join phase waits for members that do not answer, until their sessions expire
            for member in self.members.values():
                revoked += len(member.prepare_join())
            wait_end = min(max(d.expires_at for d in self.down.values()), self.now + self.rebalance_timeout)
            self._advance(max(wait_end, self.now))
            for name in list(self.down):
                self.coordinator.remove(name)
                del self.down[name]
            record.note = (record.note + "; " if record.note else "") + "join phase waited for members that were down"
        if not self.members:
            return
        rounds = run_rebalance(
            self.coordinator, self.members, self.cluster(),
            before_sync=lambda: self._advance(self.now + self.round_seconds),
        )
        record.rounds += len(rounds)
        record.revoked += revoked + sum(r.revoked for r in rounds)
        self.assigned_metadata = dict(self.topics)

    def _metadata_moved_on(self) -> bool:
        """Subscribed topics differ from the leader's snapshot: Kafka's leader then asks for a rebalance."""
        subscribed = {t for member in self.members.values() for t in member.topics}
        return any(self.topics.get(t) != self.assigned_metadata.get(t) for t in subscribed)

    # -- events

    def _join(self, name: str, plan: MemberPlan, record: EventRecord) -> None:
        member = self._new_member(name, plan)
        try:
            self.coordinator.check_supports(name, member.strategy_names)
        except InconsistentGroupProtocolError as err:
            record.note = f"refused: {err}"
            return
        self.plans[name] = plan
        self.members[name] = member
        self._rebalance(record)

    def _leave(self, name: str, record: EventRecord) -> None:
        member = self.members.pop(name)
        record.revoked += len(member.owned)
        self.coordinator.remove(name)
        self._rebalance(record)

    def _go_down(self, name: str, returns_in: float | None) -> None:
        member = self.members.pop(name)
        expires_at = self.now + member.session_timeout
        self.down[name] = _Down(member, expires_at)
        self._schedule(Event(expires_at, "expire", member=name))
        if returns_in is not None:
            self._schedule(Event(self.now + returns_in, "return", member=name))

    def _expire(self, name: str, record: EventRecord) -> bool:
        down = self.down.get(name)
        if down is None or down.expires_at > self.now:
            return False  # came back in time, or already removed by a rebalance
        del self.down[name]
        self.coordinator.remove(name)
        record.note = "session timed out"
        self._rebalance(record)
        return True

    def _return(self, name: str, record: EventRecord) -> None:
        down = self.down.pop(name, None)
        plan = self.plans[name]
        if down is not None and plan.instance_id and self.coordinator.protocol is not None:
            member = down.member
            member.restart()
            protocols = member.join_protocols()
            if not self.coordinator.static_rejoin_needs_rebalance(name, protocols):
                self.coordinator.join(name, member.instance_id, protocols)
                member.adopt(self.coordinator.protocol, self.coordinator.assignments[name], self.coordinator.generation)
                self.members[name] = member
                if not self._metadata_moved_on():
                    record.note = "static member back within its session timeout: no rebalance"
                    return
                # Its kept assignment predates a metadata change nobody acted on while it was away
                # (e.g. its topic was deleted): what no longer exists is gone, and the leader rebalances.
                for topic in {tp.topic for tp in member.owned} - set(self.topics):
                    member.drop_topic(topic)
                record.note = "static member back, but the metadata changed while it was away: rebalance"
                self._rebalance(record)
                return
            self.members[name] = member
            self._rebalance(record)
            return
        if down is not None:
            self.coordinator.remove(name)
        record.note = "rejoins as a new member"
        self._join(name, plan, record)

    def _apply(self, event: Event, record: EventRecord) -> bool:
        """Play one event; False when it turned out to be a no-op that needs no row."""
        kind, name = event.type, event.member
        if name is not None and kind not in ("join", "expire", "return") and name not in self.members:
            record.note = f"skipped: {name} is not running at this time"
            return True
        if kind == "join":
            self._join(name, event.plan, record)
        elif kind == "leave":
            self._leave(name, record)
        elif kind == "crash":
            self._go_down(name, None)
            record.note = f"session expires at {self.now + self.down[name].member.session_timeout:g}s"
        elif kind == "restart":
            if self.plans[name].instance_id:
                self._go_down(name, event.down)
            else:
                self._leave(name, record)
                self._schedule(Event(self.now + event.down, "return", member=name))
        elif kind == "expire":
            return self._expire(name, record)
        elif kind == "return":
            self._return(name, record)
        elif kind == "subscribe":
            self.members[name].subscribe(event.topics)
            self.plans[name] = replace(self.plans[name], topics=event.topics)
            self._rebalance(record)
        else:
            self._metadata_change(event, record)
        return True

    def _metadata_change(self, event: Event, record: EventRecord) -> None:
        topic = event.topic
        if event.type == "add_partitions":
            self.topics[topic] += event.count
        elif event.type == "create_topic":
            self.topics[topic] = event.count
        else:
            for member in list(self.members.values()) + [d.member for d in self.down.values()]:
                member.drop_topic(topic)
            del self.topics[topic]
        if self._subscribed_by_anyone(topic):
            self._rebalance(record)
        else:
            record.note = "no member subscribes to it: no rebalance"

    # -- the run

    def _record(self, event: Event, description: str) -> EventRecord:
        return EventRecord(index=len(self.records), at=event.at, started=self.now, kind=event.type, description=description,
                           member=event.member)

    def _finish(self, record: EventRecord, before: OwnershipSnapshot) -> None:
        record.moved = moved_between(before, self._snapshot())
        record.unsettled_seconds = self.now - record.started
        loads = {m: len(mb.owned) for m, mb in self.members.items()}
        # a member that is down but still in the group (a static member within its session
        # timeout, a crashed one not yet expired) still holds its partitions: nobody reads them
        loads.update({m: len(d.member.owned) for m, d in self.down.items()})
        record.loads = loads
        record.spread = spread(loads)
        record.generation = self.coordinator.generation
        record.protocol = self.coordinator.protocol
        record.leader = self.coordinator.leader

    def run(self, on_event: Callable[[], None] | None = None) -> StrategyRun:
        started = time.perf_counter()
        start = Event(0.0, "start", member=None)
        record = self._record(start, f"{len(self.scenario.members)} members join")
        before = self._snapshot()
        self.records.append(record)
        for name, plan in self.scenario.members.items():
            member = self._new_member(name, plan)
            try:
                self.coordinator.join(name, member.instance_id, member.join_protocols())
            except InconsistentGroupProtocolError as err:
                record.note = (record.note + "; " if record.note else "") + f"{name} refused: {err}"
                continue
            self.members[name] = member
        self._rebalance(record)
        self._finish(record, before)
        for event in self.scenario.events:
            self._schedule(event)
        while self._queue:
            at, _, event = heapq.heappop(self._queue)
            self._advance(max(at, self.now))
            labels = {"expire": f"{event.member} session expires", "return": f"{event.member} is back"}
            record = self._record(event, labels.get(event.type) or event.describe())
            before = self._snapshot()
            self.records.append(record)
            if not self._apply(event, record):
                self.records.pop()
                continue
            self._finish(record, before)
            if on_event is not None and event.type not in ("expire", "return"):
                on_event()
        return StrategyRun(self.strategy, self.records, time.perf_counter() - started,
                           kafka_version=self.release.label if self.release_matters else None)


def simulate(scenario: SimScenario, strategy: str, on_event: Callable[[], None] | None = None,
             kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION) -> StrategyRun:
    """Play the whole timeline with every member (without its own list) using ``strategy``.

    ``consumer``, ``consumer:uniform`` and ``consumer:range`` play it with Kafka 4's
    consumer group protocol (``kassign.groups.simulate.consumer_protocol``), with the assignors of
    Kafka release ``kafka_version`` (:mod:`kassign.core.releases`); other names with the classic
    protocol, its members' clients running that release's assignors (3.x releases differ in the sticky
    assignors, and before 3.5.0 in racks). A scenario whose members all set ``group_protocol: consumer``
    runs the consumer protocol whatever the name.
    """
    if run_protocol(scenario, strategy) == CONSUMER:
        from kassign.groups.simulate.consumer_protocol import ConsumerTimelineRun

        return ConsumerTimelineRun(scenario, strategy, kafka_version=kafka_version).run(on_event)
    return TimelineRun(scenario, strategy, kafka_version).run(on_event)
