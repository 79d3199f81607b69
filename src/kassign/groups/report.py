"""Numbers people ask of an assignment: counts per member, spread, and what moved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kassign.groups.classic.assignors.sticky.claims import Claim, TopicLayout, resolve_previous_owners
from kassign.groups.classic.assignors.sticky.optimal import assign_general
from kassign.groups.consumer.group import build_server_group
from kassign.groups.scenario import MemberSpec, Scenario


@dataclass(frozen=True)
class AssignmentReport:
    counts: dict[str, int]
    spread: int
    moved: int
    kept: int
    previously_owned: int

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": self.counts,
            "spread": self.spread,
            "moved": self.moved,
            "kept": self.kept,
            "previously_owned": self.previously_owned,
        }


def previous_owners(topics: Mapping[str, int], members: Mapping[str, MemberSpec]) -> dict[tuple[str, int], str]:
    """Who rightfully owned each partition, by the sticky assignors' rule (higher generation wins,
    a same-generation tie goes to nobody, stale claims are dropped with a warning)."""
    layout = TopicLayout(topics)
    claims = [Claim.from_pairs(m, spec.generation, spec.topics, spec.owned) for m, spec in members.items()]
    resolved = resolve_previous_owners(layout, claims)
    owned = resolved.owned_partitions()
    return {(t, p): member for member, partitions in owned.items() for t, p in partitions}


def assignment_report(
    assignment: Mapping[str, Sequence[tuple[str, int]]], members: Mapping[str, MemberSpec], topics: Mapping[str, int]
) -> AssignmentReport:
    counts = {member: len(partitions) for member, partitions in assignment.items()}
    spread = (max(counts.values()) - min(counts.values())) if counts else 0
    owners = previous_owners(topics, members)
    current = {tuple(tp): member for member, partitions in assignment.items() for tp in partitions}
    kept = sum(1 for tp, member in owners.items() if current.get(tp) == member)
    moved = sum(1 for tp, member in owners.items() if tp in current and current[tp] != member)
    return AssignmentReport(counts, spread, moved, kept, len(owners))


# The state of one partition after an assignment, as `kafka-consumer-groups.sh --describe` users think of it.
KEPT, MOVED, ASSIGNED, REVOKED, NO_SUBSCRIBER = "kept", "moved", "assigned", "revoked until the next round", \
    "unassigned: no subscriber"


@dataclass(frozen=True)
class PartitionState:
    topic: str
    partition: int
    member: str | None
    previous: str | None
    state: str

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "member": self.member,
                "previous": self.previous, "state": self.state}


def partition_states(assignment: Mapping[str, Sequence[tuple[str, int]]], members: Mapping[str, MemberSpec],
                     topics: Mapping[str, int]) -> list[PartitionState]:
    """Every partition of ``topics``, sorted: who has it now, who had it, and what happened.

    A partition nobody holds was either given up by its previous owner and withheld for this
    round (the cooperative protocol revokes first and hands it out at the next round), or
    has no member subscribing to its topic."""
    owners = previous_owners(topics, members)
    current = {(t, p): member for member, partitions in assignment.items() for t, p in partitions}
    states = []
    for topic in sorted(topics):
        for partition in range(topics[topic]):
            member, previous = current.get((topic, partition)), owners.get((topic, partition))
            if member is not None:
                state = KEPT if member == previous else MOVED if previous is not None else ASSIGNED
            else:
                state = REVOKED if previous is not None else NO_SUBSCRIBER
            states.append(PartitionState(topic, partition, member, previous, state))
    return states


def unknown_topics(members: Mapping[str, MemberSpec], topics: Mapping[str, int]) -> dict[str, list[str]]:
    """Topics members subscribe to that the cluster does not have -> those members (sorted)."""
    result: dict[str, list[str]] = {}
    for member in sorted(members):
        for topic in dict.fromkeys(members[member].topics):
            if topic not in topics:
                result.setdefault(topic, []).append(member)
    return dict(sorted(result.items()))


def most_even_spread(scenario: Scenario) -> int:
    """The smallest max-min partition count any assignment of this group can reach.

    Solved exactly with the optimal sticky assignor's balance flow; set beside a
    heuristic's result (Kafka's uniform assignor with different subscriptions), it shows
    how much imbalance the heuristic left."""
    group = build_server_group(scenario)
    if group.num_members == 0:
        return 0
    subscriptions = [np.array(sorted(topics), dtype=np.int64) for topics in group.subscriptions]
    nobody = [np.full(int(n), -1, dtype=np.int64) for n in group.num_partitions]
    owners = assign_general(group.num_partitions, subscriptions, nobody)
    counts = np.zeros(group.num_members, dtype=np.int64)
    for topic_owners in owners:
        taken = topic_owners[topic_owners >= 0]
        counts += np.bincount(taken, minlength=group.num_members)
    return int(counts.max() - counts.min())
