"""What a rebalance cost: per-event records and per-strategy totals.

Definitions (per event, i.e. per row of the timeline):

- rounds: JoinGroup/SyncGroup rounds the event caused (0 when no rebalance).
- moved: partitions that had an owner before the event and a different owner
  once the group is stable again (an owner that crashed counts as the owner).
- revoked: partitions members gave up through their rebalance listener (eager:
  everything they owned; cooperative: only what moves; a member leaving gives
  up all it owns). Partitions of a crashed member are lost, not revoked.
- unowned partition-seconds: the time integral, from this event until the next
  one starts, of the number of subscribed partitions nobody is consuming (no
  owner, or an owner that is down). Rebalance duration model: each round takes
  ``round_seconds``; eager members own nothing from the start of the rebalance
  until their assignment arrives; cooperative members keep consuming what they
  keep, and what moves is idle from its revocation (end of round 1) until the
  follow-up round ends. A join phase that waits for a member that is down lasts
  until that member's session expires (at most ``rebalance_timeout``).
- spread: max - min partitions per live member after the event.
- unsettled seconds: how long, from this event until the next one starts, the
  group was not settled: classic, the rebalance's duration; consumer protocol,
  until the target is up to date and every member owns exactly its target.
- heartbeats (consumer protocol only; 0 for classic runs, whose cost is
  ``rounds``): ConsumerGroupHeartbeat requests sent while the group was not
  settled, i.e. what it took to converge.

For the consumer group protocol (KIP-848; ``consumer_protocol``) the same
definitions hold with its own mechanics: ``rounds`` counts target assignments
the coordinator computed; a partition is unowned from the moment its previous
owner revokes it (or stops) until its next owner receives it on a heartbeat;
``moved`` compares each partition's latest owner (a partition between owners
still counts as its previous owner's) at this event and at the next.

Data layout: ownership snapshots are int32 numpy arrays indexed by a global
partition number (topic offset + partition), holding member indexes (-1 = none),
so comparing two snapshots is a vector operation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from kassign.groups.classic.assignors.base import TopicPartition


@dataclass
class EventRecord:
    index: int
    at: float
    started: float
    kind: str
    description: str
    note: str = ""
    member: str | None = None
    rounds: int = 0
    moved: int = 0
    revoked: int = 0
    unowned_partition_seconds: float = 0.0
    unsettled_seconds: float = 0.0
    heartbeats: int = 0
    spread: int = 0
    generation: int = 0
    protocol: str | None = None
    leader: str | None = None
    loads: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["unowned_partition_seconds"] = round(self.unowned_partition_seconds, 6)
        doc["unsettled_seconds"] = round(self.unsettled_seconds, 6)
        return doc


@dataclass
class StrategyRun:
    strategy: str
    records: list[EventRecord]
    elapsed_seconds: float = 0.0
    group_protocol: str = "classic"
    kafka_version: str | None = None  # the release whose assignors ran, where it matters (consumer protocol)

    def per_scenario_event(self, metric: str) -> list[tuple[str, float]]:
        """``(label, value)`` per scenario event (the start first), with the rows an event caused
        later (a session expiry after a crash or a restart, a restarted member's return) added to
        the row of that event, so that runs of different protocols line up event by event."""
        groups: list[tuple[str, float]] = []
        owner: dict[str, int] = {}  # member -> group of its latest crash or restart
        for record in self.records:
            value = float(getattr(record, metric))
            if record.kind in ("expire", "return") and groups:
                i = owner.get(record.member or "", len(groups) - 1)
                groups[i] = (groups[i][0], groups[i][1] + value)
                continue
            if record.kind in ("crash", "restart") and record.member:
                owner[record.member] = len(groups)
            groups.append((f"{record.at:g}s {record.description}", value))
        return groups

    def totals(self) -> dict[str, Any]:
        rebalancing = [r for r in self.records if r.rounds]
        return {
            "rebalances": len(rebalancing),
            "rounds": sum(r.rounds for r in self.records),
            "moved": sum(r.moved for r in self.records),
            "revoked": sum(r.revoked for r in self.records),
            "unowned_partition_seconds": round(sum(r.unowned_partition_seconds for r in self.records), 6),
            "unsettled_seconds": round(sum(r.unsettled_seconds for r in self.records), 6),
            "heartbeats": sum(r.heartbeats for r in self.records),
            "max_spread": max((r.spread for r in self.records), default=0),
            "final_spread": self.records[-1].spread if self.records else 0,
        }

    def to_json(self) -> dict[str, Any]:
        doc = {
            "strategy": self.strategy,
            "group_protocol": self.group_protocol,
            "totals": self.totals(),
            "events": [r.to_json() for r in self.records],
            "elapsed_seconds": round(self.elapsed_seconds, 4),
        }
        if self.kafka_version is not None:
            doc["kafka_version"] = self.kafka_version
        return doc


class OwnershipSnapshot:
    """Who owns what at one moment, as an integer array over a fixed partition numbering."""

    def __init__(self, owned: Mapping[str, Iterable[TopicPartition]]) -> None:
        self.members = list(owned)
        self.by_member = {m: tuple(parts) for m, parts in owned.items()}

    def to_array(self, offsets: Mapping[str, int], size: int, member_index: Mapping[str, int]) -> np.ndarray:
        owners = np.full(size, -1, dtype=np.int32)
        for member, parts in self.by_member.items():
            if not parts:
                continue
            idx = np.fromiter((offsets[t] + p for t, p in parts if t in offsets), dtype=np.int64)
            owners[idx] = member_index[member]
        return owners

    def topic_extent(self) -> dict[str, int]:
        extent: dict[str, int] = {}
        for parts in self.by_member.values():
            for t, p in parts:
                if p + 1 > extent.get(t, 0):
                    extent[t] = p + 1
        return extent


def moved_between(before: OwnershipSnapshot, after: OwnershipSnapshot) -> int:
    """Partitions owned before and after by different members."""
    extent = before.topic_extent()
    for t, n in after.topic_extent().items():
        extent[t] = max(extent.get(t, 0), n)
    offsets: dict[str, int] = {}
    size = 0
    for topic in sorted(extent):
        offsets[topic] = size
        size += extent[topic]
    if size == 0:
        return 0
    index = {m: i for i, m in enumerate(dict.fromkeys(before.members + after.members))}
    old = before.to_array(offsets, size, index)
    new = after.to_array(offsets, size, index)
    return int(np.count_nonzero((old >= 0) & (new >= 0) & (old != new)))


def spread(loads: Mapping[str, int]) -> int:
    return (max(loads.values()) - min(loads.values())) if loads else 0


def protocol_in_force(run: StrategyRun, record: EventRecord) -> str:
    """The assignor the group actually ran at this event: a classic group runs the protocol its
    members agreed on (a rolling upgrade switches from range to cooperative-sticky part way);
    a consumer-protocol group runs the coordinator's assignor."""
    if run.group_protocol == "consumer":
        return run.strategy
    return record.protocol or "-"


# One sentence per metric, for tables' readers and the HTML report.
METRIC_MEANINGS = {
    "rebalances": "how many events made the group rebalance",
    "rounds": "JoinGroup/SyncGroup rounds the classic protocol ran (the consumer protocol has none)",
    "heartbeats": "heartbeats the members sent until the group settled (consumer protocol only)",
    "moved": "partitions that ended the event with a different member than before it",
    "revoked": "partitions members gave up during the event, including ones they got back",
    "unowned_partition_seconds": "for each partition, seconds nobody consumed it, summed: the pause users feel",
    "unsettled_seconds": "seconds from the event until every member held its final assignment",
    "max_spread": "the largest difference in partition counts between two members after any event",
    "final_spread": "that difference at the end of the timeline",
}
