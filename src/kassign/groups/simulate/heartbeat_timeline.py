"""The clock of the heartbeat-driven simulators: share groups (:mod:`.share_engine`) and streams groups
(:mod:`.streams_group_engine`).

Both group types run as Kafka 4's group coordinator runs every group after KIP-848: members heartbeat every
``heartbeat_interval`` seconds, counted from their previous heartbeat; a change (a member joining, leaving or
fenced, a subscription or a topic changing) bumps the group epoch; a heartbeat that finds the group epoch
ahead of the target assignment's makes the coordinator compute a new target; each member learns its part on
its own next heartbeat. Nobody waits for anybody: there is no JoinGroup barrier.

What this module keeps, the same for both:

- one queue of timed items (scenario events, members starting, session expiries, the engines' own timers)
  and one heartbeat per member; at one instant, items and heartbeats go in the order they were scheduled,
  so the scenario's events (scheduled first) come before the heartbeats due then;
- a member heartbeats ``heartbeat_interval`` after its previous heartbeat; the engines make a member that
  applied a new assignment heartbeat at once (it acknowledges it, as the Java clients do);
- the coordinator computes a new target at most once per ``assignment_interval`` (Kafka 4.3's
  ``group.share.assignment.interval.ms`` and ``group.streams.assignment.interval.ms``, 1 s by default; Kafka
  4.2 has no such pause, :data:`ASSIGNMENT_INTERVAL`): a heartbeat that comes sooner leaves the target as it
  is, and a later heartbeat computes it;
- while the group is settled, heartbeats only renew sessions: the clock skips them, keeping every member's
  rhythm (and its last heartbeat, from which a session is counted), and jumps to the next item.

Records: one per scenario event (events at the same instant share one), charged with what the timeline
spent from that event until the next one: targets computed, heartbeats sent while the group was not
settled, the seconds it was not settled, and ``settle_seconds``, from the event until the group last
settled before the next event (None when it was not settled by then).

Example (a share group; ``tests/groups/simulate/test_share_engine.py`` checks it): A and B heartbeat every 5 s,
A at 0, 5, 10, ..., B at 2.5, 7.5, ...; B leaves at 11 s, and its leave heartbeat bumps the group epoch. A's
heartbeat at 15 s computes the new target and hands A its part: the group settles 4 s after the event. If
the next event comes at 100 s, A's heartbeats from 20 s to 95 s only renewed its session: the clock skips
them, and A's next heartbeat is still due at 100 s, after the event.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, fields
from typing import Any

from kassign.core.errors import KassignError
from kassign.core.releases import KafkaRelease
from kassign.core.units import human_seconds

_LISTED_KINDS = ("join", "leave", "crash", "start", "stop")  # events at one instant read as "join A, B"
SETTLE_LIMIT_INTERVALS = 1000  # after the last item, give up (and say so) if the group has not settled by then


def assignment_interval(release: KafkaRelease) -> float:
    """The coordinator's default pause between two target computations, in seconds, for ``release``:
    1 s from Kafka 4.3 (KAFKA-20300, ``group.{share,streams}.assignment.interval.ms``), none before."""
    return 1.0 if release.at_least(4, 3) else 0.0


class GroupDidNotSettle(KassignError):
    """The simulated group kept changing long after the timeline's last event."""


@dataclass
class HeartbeatRecord:
    """What one event (or several at one instant) set off, until the next event."""

    index: int  # 0: the start of the timeline
    at: float
    kind: str
    description: str
    names: tuple[str, ...] = ()  # the members or instances the event names
    note: str = ""
    targets: int = 0  # target assignments the coordinator computed
    heartbeats: int = 0  # heartbeats sent while the group was not settled
    unsettled_seconds: float = 0.0
    settle_seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.startswith("_"):
                continue
            if isinstance(value, float):
                value = round(value, 6)
            elif isinstance(value, tuple):
                value = list(value)
            doc[f.name] = value
        return doc


def settle_phrase(record: HeartbeatRecord, interval: float, reached: str) -> str:
    """``every member <reached> 5 s after the event (heartbeats every 5 s)``, or that it had not settled."""
    if record.settle_seconds is None:
        return "the group had not settled when the next event came"
    return (f"every member {reached} {human_seconds(record.settle_seconds)} after the event (heartbeats every "
            f"{human_seconds(interval)})")


def event_line(record: HeartbeatRecord, parts: list[str]) -> str:
    """One event's sentence: its time, what it was, then what it meant."""
    return f"{human_seconds(record.at)}, {record.description}: " + "; ".join(parts)


def listed(names: tuple[str, ...], most: int = 6) -> str:
    """The first few names, and ``...`` for the rest."""
    return ", ".join(names[:most]) + (", ..." if len(names) > most else "")


def record_totals(records: list[Any], counts: tuple[str, ...] = (), byte_sums: tuple[str, ...] = (),
                  second_sums: tuple[str, ...] = ()) -> dict[str, Any]:
    """The clock's totals over ``records`` (targets, heartbeats, unsettled seconds, the longest time an event
    took to settle), with the sums of the named figures: ``counts`` as they are, ``byte_sums`` as whole bytes,
    ``second_sums`` to the microsecond."""
    totals: dict[str, Any] = {"targets": sum(r.targets for r in records),
                              "heartbeats": sum(r.heartbeats for r in records)}
    for name in counts:
        totals[name] = sum(getattr(r, name) for r in records)
    for name in byte_sums:
        totals[name] = int(round(sum(getattr(r, name) for r in records)))
    for name in (*second_sums, "unsettled_seconds"):
        totals[name] = round(sum(getattr(r, name) for r in records), 6)
    settle = [r.settle_seconds for r in records if r.index > 0 and r.settle_seconds is not None]
    totals["max_settle_seconds"] = round(max(settle), 6) if settle else None
    return totals


class HeartbeatTimeline:
    """The clock and the records; an engine subclasses it and says what a heartbeat, an item, settled and
    the time in between mean (:meth:`heartbeat`, :meth:`handle`, :meth:`settled`, :meth:`accrue`)."""

    def __init__(self, interval: float, session_timeout: float, pause: float) -> None:
        self.interval = interval
        self.session_timeout = session_timeout
        self.pause = pause  # the coordinator's assignment interval
        self.now = 0.0
        self.records: list[Any] = []
        self._queue: list[tuple[float, int, str, Any]] = []
        self._beats: list[tuple[float, int, str, int]] = []  # (at, sequence, member, token); stale ones skipped
        self._sequence = 0
        self.next_beat: dict[str, float] = {}
        self.last_beat: dict[str, float] = {}
        self._token: dict[str, int] = {}
        self.targets_computed = 0
        self.target_times: list[float] = []  # when each target assignment was computed
        self._last_target_at: float | None = None
        self._settled = True

    # -- what an engine says ------------------------------------------------------------------------

    def settled(self) -> bool:
        raise NotImplementedError

    def heartbeat(self, member: str) -> None:
        raise NotImplementedError

    def handle(self, kind: str, payload: Any) -> None:
        raise NotImplementedError

    def accrue(self, seconds: float) -> None:
        """The clock moves on by ``seconds``: the engine adds up what it measures over time."""

    def on_settled(self, record: Any) -> None:
        """The group has just settled within ``record``'s span: the engine takes its snapshot."""

    # -- scheduling ---------------------------------------------------------------------------------

    def _take_sequence(self) -> int:
        self._sequence += 1
        return self._sequence

    def push(self, at: float, kind: str, payload: Any) -> None:
        heapq.heappush(self._queue, (at, self._take_sequence(), kind, payload))

    def schedule_beat(self, member: str, at: float) -> None:
        token = self._token.get(member, 0) + 1
        self._token[member] = token
        self.next_beat[member] = at
        heapq.heappush(self._beats, (at, self._take_sequence(), member, token))

    def cancel_beat(self, member: str) -> None:
        self._token[member] = self._token.get(member, 0) + 1
        self.next_beat.pop(member, None)

    def beat_now(self, member: str) -> None:
        """Mark ``member``'s heartbeat as sent now and schedule its next regular one."""
        self.last_beat[member] = self.now
        self.schedule_beat(member, self.now + self.interval)

    def _peek_beat(self) -> tuple[float, int, str, int] | None:
        beats = self._beats
        while beats and self._token.get(beats[0][2]) != beats[0][3]:
            heapq.heappop(beats)
        return beats[0] if beats else None

    def _skip_routine_beats(self, until: float) -> None:
        """The group is settled until ``until``: every heartbeat due before then only renews a session.
        Move each member's schedule past them, in its own rhythm, and remember its last one."""
        for member, at in list(self.next_beat.items()):
            if at >= until:
                continue
            skipped = math.ceil((until - at) / self.interval)
            nxt = at + skipped * self.interval
            while nxt < until:  # floating point: never leave a skipped beat behind
                nxt += self.interval
                skipped += 1
            self.last_beat[member] = nxt - self.interval
            self.schedule_beat(member, nxt)

    # -- the coordinator's pause ------------------------------------------------------------------

    def may_compute_target(self) -> bool:
        return self._last_target_at is None or self.pause == 0 or self.now >= self._last_target_at + self.pause

    def target_computed(self) -> None:
        self.targets_computed += 1
        self.target_times.append(self.now)
        self._last_target_at = self.now
        if self.records:
            self.records[-1].targets += 1

    # -- records ------------------------------------------------------------------------------------

    def open_record(self, record_type: type, at: float, kind: str, description: str,
                    names: tuple[str, ...] = ()) -> Any:
        """A new record for an event, or the current one when an event came at the same instant before
        (index 0, the start, stays on its own)."""
        if self.records and self.records[-1].index > 0 and self.records[-1].at == at:
            record = self.records[-1]
            record.names = tuple(dict.fromkeys(record.names + names))
            if record.kind == kind and kind in _LISTED_KINDS:
                record.description = f"{kind} {', '.join(record.names)}"
            else:
                record.description = f"{record.description}; {description}"
            if record.kind != kind:
                record.kind = "several"
            return record
        record = record_type(index=len(self.records), at=at, kind=kind, description=description, names=names)
        self.records.append(record)
        return record

    # -- the loop -----------------------------------------------------------------------------------

    def _advance(self, to: float) -> None:
        if to <= self.now:
            return
        seconds = to - self.now
        if self.records and not self._settled:
            self.records[-1].unsettled_seconds += seconds
        self.accrue(seconds)
        self.now = to

    def _after_step(self) -> None:
        settled = self.settled()
        if self.records:
            record = self.records[-1]
            if settled and (not self._settled or record.settle_seconds is None):
                record.settle_seconds = self.now - record.at
                self.on_settled(record)
            elif not settled and self._settled:
                record.settle_seconds = None  # unsettled again (a restarted member back): settles later, or not
        self._settled = settled

    def play(self, until: float | None = None) -> None:
        """Play every item and heartbeat until nothing is to come and the group has settled (or, given
        ``until``, until the clock reaches it)."""
        limit: float | None = None
        while True:
            item = self._queue[0] if self._queue else None
            if item is None:
                if self._settled:
                    break
                if limit is None:
                    limit = self.now + SETTLE_LIMIT_INTERVALS * self.interval
            elif self._settled:
                self._skip_routine_beats(item[0])
            beat = self._peek_beat()
            if beat is None and item is None:
                break
            if until is not None and min(beat[0] if beat else math.inf, item[0] if item else math.inf) > until:
                self._advance(until)
                break
            if beat is not None and (item is None or beat[:2] < item[:2]):
                heapq.heappop(self._beats)
                if limit is not None and beat[0] > limit:
                    raise GroupDidNotSettle(
                        f"the group did not settle within {SETTLE_LIMIT_INTERVALS} heartbeat intervals after the "
                        f"timeline's last event (at {self.now:g} s)")
                self._advance(beat[0])
                self.next_beat.pop(beat[2], None)
                was = self._settled
                self.heartbeat(beat[2])
                if self.records and (not was or not self.settled()):
                    self.records[-1].heartbeats += 1
            else:
                at, _, kind, payload = heapq.heappop(self._queue)
                self._advance(at)
                self.handle(kind, payload)
            self._after_step()
        if until is not None and self.now < until:
            self._advance(until)
