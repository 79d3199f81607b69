"""What a share group's timeline did, event by event, and the summary in words.

Each event of the timeline (events at one instant together, and the start) is one
:class:`ShareEventRecord`, charged with what happened from it until the next event. Besides the clock's
figures (:class:`~kassign.groups.simulate.heartbeat_timeline.HeartbeatRecord`: targets computed,
heartbeats while the group was not settled, unsettled seconds, ``settle_seconds``):

- ``stopped``: times a member that stays in the group stopped fetching a partition because its new
  target left it out (on its own heartbeat: a share group has no revocation step, the member just stops);
  ``started``: times a member started fetching a partition it did not fetch before;
- ``lost``: partitions members that left or crashed were fetching (a crashed member's stay assigned to it
  until its session times out);
- ``unfetched_partition_seconds``: over time, the subscribed partitions no running member fetches
  (partitions whose share state is not initialised yet count too: nobody may fetch them);
- the group as it is once the event has settled (or when the next event comes, if it has not): the
  members, how many members fetch each partition (``sharing``: members per partition -> partitions),
  partitions and, with ``loads``, bytes per second per member (a partition's rate split evenly among the
  members fetching it), members fetching nothing, and partitions waiting for their share state.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kassign.core.units import human_bytes
from kassign.groups.simulate.heartbeat_timeline import HeartbeatRecord, event_line, listed, record_totals, settle_phrase


@dataclass
class ShareEventRecord(HeartbeatRecord):
    stopped: int = 0
    started: int = 0
    lost: int = 0
    orphaned: int = 0  # of those, partitions then fetched by no other member
    unfetched_partition_seconds: float = 0.0
    # the group once settled (or as the next event found it)
    members: int = 0
    sharing: dict[int, int] = field(default_factory=dict)  # members fetching a partition -> partitions
    partitions_per_member: dict[str, int] = field(default_factory=dict)
    bytes_per_member: dict[str, float] = field(default_factory=dict)  # only with loads
    idle_members: tuple[str, ...] = ()
    uninitialized: int = 0
    holders: dict[str, int] = field(default_factory=dict)  # "topic-partition" -> members fetching it
    settled_snapshot: bool = True  # False: the snapshot is as the next event found the group

    @property
    def max_sharing(self) -> int:
        return max(self.sharing, default=0)

    @property
    def unfetched(self) -> int:
        return self.sharing.get(0, 0)


@dataclass
class ShareRun:
    """One share-group timeline played with the broker's ``simple`` assignor."""

    strategy: str
    kafka_version: str
    records: list[ShareEventRecord]
    settings: dict[str, Any]
    has_loads: bool = False
    elapsed_seconds: float = 0.0

    def totals(self) -> dict[str, Any]:
        totals = record_totals(self.records, counts=("stopped", "started", "lost"),
                               second_sums=("unfetched_partition_seconds",))
        totals["revoked"] = 0  # a share group has no revocation step
        totals["max_members_per_partition"] = max((r.max_sharing for r in self.records), default=0)
        return totals

    def to_json(self) -> dict[str, Any]:
        events = []
        for r in self.records:
            doc = r.to_json()
            doc["sharing"] = {str(k): v for k, v in sorted(r.sharing.items())}
            doc["bytes_per_member"] = {m: round(v, 3) for m, v in r.bytes_per_member.items()}
            if not self.has_loads:
                del doc["bytes_per_member"]
            events.append(doc)
        return {"strategy": self.strategy, "group_type": "share", "kafka_version": self.kafka_version,
                "totals": self.totals(), "events": events, "elapsed_seconds": round(self.elapsed_seconds, 4)}


METRIC_MEANINGS = {
    "targets": "target assignments the group coordinator computed (after each change, on a heartbeat)",
    "heartbeats": "heartbeats the members sent until the group settled",
    "stopped": "times a member that stayed in the group stopped fetching a partition its new target left out "
               "(no revocation step: it just stops, on its own heartbeat)",
    "started": "times a member started fetching a partition, on its own heartbeat",
    "lost": "partitions members that left or crashed were fetching",
    "unfetched_partition_seconds": "for each subscribed partition, the seconds no running member fetched it, summed",
    "settle_seconds": "from the event until every member had its new target (the group settled)",
    "members_per_partition": "how many members fetch a partition at once: a share group hands records out one by "
                             "one, so several may",
}


def _members(n: int) -> str:
    return f"{n:,} member" + ("" if n == 1 else "s")


def _partitions(n: int) -> str:
    return f"{n:,} partition" + ("" if n == 1 else "s")


def _cause(record: ShareEventRecord) -> str:
    """The event as the subject of "only spread the fetches"."""
    if record.kind == "join":
        return f"{_members(len(record.names))} joining" if len(record.names) > 1 else f"{record.names[0]} joining"
    if record.kind == "add_partitions":
        return "the new partitions"
    return "the change"


def _sharing_phrase(record: ShareEventRecord) -> str:
    top = record.max_sharing
    if top <= 1:
        return "each partition fetched by one member" if record.sharing.get(1) else "no partition fetched"
    return f"{_partitions(record.sharing[top])} now fetched by {top} members at once"


def event_sentence(record: ShareEventRecord, interval: float) -> str:
    """What one event meant, in the report's words."""
    parts = []
    if record.lost:
        who = ", ".join(record.names) if record.kind in ("leave", "crash") else "members leaving"
        if record.orphaned == record.lost:
            alone = "fetched by nobody else"
        elif record.orphaned:
            alone = f"{record.orphaned:,} of them fetched by nobody else"
        else:
            alone = "fetched by other members too" if record.lost > 1 else "fetched by another member too"
        until = ("; the coordinator kept the crashed member in the group until its session timed out"
                 if record.kind == "crash" else "")
        parts.append(f"{who} stopped fetching {_partitions(record.lost)} ({alone}){until}")
    if record.stopped == 0 and record.lost == 0:
        parts.append(f"no member stopped fetching during the change: a share group hands records out one by one, "
                     f"so {_cause(record)} only spread the fetches ({_sharing_phrase(record)}); nothing was revoked")
    elif record.stopped:
        parts.append(f"members stopped fetching {_partitions(record.stopped)} their new targets left out, each on its "
                     f"own next heartbeat and without a revocation step, while others started on "
                     f"{_partitions(record.started)} on theirs ({_sharing_phrase(record)}); nothing was revoked")
    else:
        parts.append(f"the others went on fetching, and took over on their heartbeats what nobody fetched "
                     f"({_sharing_phrase(record)}); nothing was revoked")
    if record.unfetched_partition_seconds > 0:
        parts.append(f"{record.unfetched_partition_seconds:,.4g} partition-seconds went unfetched meanwhile")
    if record.idle_members:
        parts.append(f"{_members(len(record.idle_members))} fetch nothing ({listed(record.idle_members, 4)})")
    parts.append(settle_phrase(record, interval, "had its new target"))
    return event_line(record, parts)


def summary_sentences(run: ShareRun) -> list[str]:
    """The terminal's summary: a sentence per event, then the totals."""
    interval = run.settings["heartbeat_interval"]
    lines = [event_sentence(r, interval) for r in run.records if r.index > 0]
    t = run.totals()
    loads = ""
    last = run.records[-1]
    if run.has_loads and last.bytes_per_member:
        values = list(last.bytes_per_member.values())
        loads = (f"; at the end each member fetches {human_bytes(min(values))}/s to {human_bytes(max(values))}/s")
    lines.append(f"{run.strategy} in all: {t['targets']:,} targets computed, {t['heartbeats']:,} heartbeats while "
                 f"settling, {t['stopped']:,} fetches stopped by members that stayed, 0 revoked, "
                 f"{t['unfetched_partition_seconds']:,.4g} unfetched partition-seconds; up to "
                 f"{t['max_members_per_partition']} members per partition{loads}")
    return lines


def sharing_counts(holders: list[int]) -> dict[int, int]:
    """Members per partition -> how many partitions have that many."""
    return dict(sorted(Counter(holders).items()))
