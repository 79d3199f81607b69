"""What a streams group's timeline (KIP-1071) did, event by event, and the summary in words.

Each event (events at one instant together, and the start) is one :class:`StreamsGroupRecord`, charged
with what happened from it until the next event. Besides the clock's figures
(:class:`~kassign.groups.simulate.heartbeat_timeline.HeartbeatRecord`):

- ``moved``: active tasks that started on another instance (process) than the one that ran them last;
  ``moved_within``: on another stream thread (member) of the same instance, whose state it shares;
- of the moves of stateful tasks: ``promoted``, the new instance held a standby of the task (its state
  was kept up to date there); ``from_disk``, it had state for the task left on disk from earlier (a
  restarted instance, a task coming back); ``state_lost``, it had none: the task restores its whole
  changelog there (``lost_tasks`` names them, ``lost_state_bytes`` adds up their changelogs where sizes
  are given);
- ``revoked``: active tasks members that stayed in the group gave up because their new target left them
  out (the streams protocol revokes a task before anyone else gets it);
- ``restore_bytes``: changelog bytes the event made instances read: new actives catching up, new standbys
  filling up (where sizes are given);
- ``paused_task_seconds``: over time, the tasks no member was running (stateless tasks too: a task moving
  between members pauses from its revocation until its new owner has it and, if stateful, has restored);
  ``longest_pause``: the longest such pause of one task that began in the event's span, however long it lasted;
- the group once the event has settled (or when the next event comes, if it has not): active and standby
  tasks per instance, and ``missing_standbys``, standby replicas the assignor could not place.

``segments`` and ``outages`` (:class:`~kassign.groups.simulate.streams_metrics.Segment`,
:class:`~kassign.groups.simulate.streams_metrics.Outage`) are every stateful task's replicas and pauses
over time, the same pieces the Kafka Streams (classic) report draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kassign.core.units import human_bytes, human_seconds
from kassign.groups.simulate.heartbeat_timeline import HeartbeatRecord, event_line, listed, record_totals, settle_phrase
from kassign.groups.simulate.streams_metrics import Outage, Segment


@dataclass
class StreamsGroupRecord(HeartbeatRecord):
    moved: int = 0
    moved_within: int = 0
    promoted: int = 0
    from_disk: int = 0
    state_lost: int = 0
    lost_tasks: tuple[str, ...] = ()
    lost_state_bytes: float = 0.0
    revoked: int = 0
    restore_bytes: float = 0.0
    paused_task_seconds: float = 0.0
    longest_pause: float = 0.0
    # the group once settled (or as the next event found it)
    active_per_instance: dict[str, int] = field(default_factory=dict)
    standby_per_instance: dict[str, int] = field(default_factory=dict)
    missing_standbys: int = 0
    settled_snapshot: bool = True


@dataclass
class StreamsGroupRun:
    """One streams-group timeline played with the broker's ``sticky`` task assignor."""

    strategy: str
    kafka_version: str
    records: list[StreamsGroupRecord]
    settings: dict[str, Any]
    end: float
    task_names: list[str] = field(default_factory=list, repr=False)
    stateful: list[bool] = field(default_factory=list, repr=False)
    segments: list[Segment] = field(default_factory=list, repr=False)
    outages: list[Outage] = field(default_factory=list, repr=False)
    num_standby_replicas: int = 0
    sized: bool = False  # some stateful task has a known changelog size
    elapsed_seconds: float = 0.0

    def totals(self) -> dict[str, Any]:
        totals = record_totals(self.records, counts=("moved", "moved_within", "promoted", "from_disk", "state_lost",
                                                     "revoked"),
                               byte_sums=("lost_state_bytes", "restore_bytes"), second_sums=("paused_task_seconds",))
        totals["longest_pause"] = round(max((r.longest_pause for r in self.records), default=0.0), 6)
        return totals

    def to_json(self) -> dict[str, Any]:
        events = []
        for r in self.records:
            doc = r.to_json()
            doc["lost_state_bytes"] = int(round(r.lost_state_bytes))
            doc["restore_bytes"] = int(round(r.restore_bytes))
            events.append(doc)
        return {"strategy": self.strategy, "group_type": "streams", "kafka_version": self.kafka_version,
                "num_standby_replicas": self.num_standby_replicas, "end_seconds": round(self.end, 6),
                "totals": self.totals(), "events": events, "elapsed_seconds": round(self.elapsed_seconds, 4)}


METRIC_MEANINGS = {
    "targets": "target assignments the group coordinator computed (after each change, on a heartbeat)",
    "heartbeats": "heartbeats the members (one per stream thread) sent until the group settled",
    "moved": "active tasks that started on another instance than the one that ran them last",
    "moved_within": "active tasks that moved to another stream thread of the same instance (same state)",
    "promoted": "moved stateful tasks whose new instance held a standby of them",
    "from_disk": "moved stateful tasks whose new instance had their state left on disk from earlier",
    "state_lost": "moved stateful tasks whose new instance had no state for them: they restore their whole "
                  "changelog",
    "revoked": "active tasks members that stayed gave up, before anyone else could have them",
    "restore_bytes": "changelog bytes new actives and new standbys read to catch up (where sizes are given)",
    "paused_task_seconds": "for each task, the seconds no member ran it (moving, restoring, or its owner down "
                           "until fenced), summed",
    "settle_seconds": "from the event until every member had reconciled to its new target",
}


def _tasks(n: int) -> str:
    return f"{n:,} task" + ("" if n == 1 else "s")


def event_sentence(record: StreamsGroupRecord, run: StreamsGroupRun) -> str:
    """What one event meant, in the report's words."""
    parts = []
    if record.moved:
        kinds = []
        if record.promoted:
            kinds.append(f"{record.promoted:,} promoted from a standby")
        if record.from_disk:
            kinds.append(f"{record.from_disk:,} on state left on disk")
        if record.state_lost:
            lost = f"{record.state_lost:,} lost their local state ({listed(record.lost_tasks)}"
            lost += f", {human_bytes(record.lost_state_bytes)} of changelog to restore)" if record.lost_state_bytes \
                else ")"
            kinds.append(lost)
        stateless = record.moved - record.promoted - record.from_disk - record.state_lost
        if stateless and kinds:
            kinds.insert(0, f"{stateless:,} stateless")
        parts.append(f"{_tasks(record.moved)} moved to another instance" + (f": {'; '.join(kinds)}" if kinds else "")
                     + (" (stateless)" if stateless and not kinds else ""))
    else:
        parts.append("no active task moved to another instance")
    if record.moved_within:
        parts.append(f"{_tasks(record.moved_within)} moved between stream threads of one instance (same state)")
    if record.revoked:
        parts.append(f"{_tasks(record.revoked)} revoked from their owners before the new ones got them")
    if record.paused_task_seconds > 0:
        parts.append(f"tasks went {human_seconds(record.paused_task_seconds)} without running in all (the longest "
                     f"pause {human_seconds(record.longest_pause)})")
    if record.restore_bytes:
        parts.append(f"{human_bytes(record.restore_bytes)} of changelog read to catch up")
    if record.missing_standbys:
        parts.append(f"{record.missing_standbys:,} standby replicas could not be placed (too few instances)")
    parts.append(settle_phrase(record, run.settings["heartbeat_interval"], "had reconciled"))
    return event_line(record, parts)


PROTOCOL_SENTENCE = ("under the streams protocol nobody waits for a rebalance, but a task never has two owners: "
                     "each member reconciles on its own heartbeats, and a task moving from one member to another is "
                     "revoked from the first (on its heartbeat) before the second gets it (on its next one); a "
                     "standby is given up before it is promoted")
# Kafka 4.4 (KAFKA-20665): a role changes in place
PROTOCOL_SENTENCE_IN_PLACE = PROTOCOL_SENTENCE.replace(
    "a standby is given up before it is promoted",
    "a standby is promoted in place, in the step that grants its active task")


def protocol_sentence(in_place: bool) -> str:
    """The first sentence of the summary, as the release reconciles: 4.2/4.3 revoke a standby before its
    promotion, 4.4 promotes it in place."""
    text = PROTOCOL_SENTENCE_IN_PLACE if in_place else PROTOCOL_SENTENCE
    return text[0].upper() + text[1:]


def summary_sentences(run: StreamsGroupRun) -> list[str]:
    """The terminal's summary: a sentence per event, then the totals."""
    lines = [event_sentence(r, run) for r in run.records if r.index > 0]
    t = run.totals()
    lost = f" ({human_bytes(t['lost_state_bytes'])} of changelog)" if t["lost_state_bytes"] else ""
    lines.append(f"{run.strategy} in all: {t['targets']:,} targets computed, {t['moved']:,} active tasks moved "
                 f"({t['promoted']:,} promoted standbys, {t['state_lost']:,} without local state{lost}), "
                 f"{t['revoked']:,} revoked from members that stayed, {human_seconds(t['paused_task_seconds'])} of "
                 "paused tasks")
    return lines
