"""Numbers people ask of an assignment: counts per member, spread, and what moved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kassign.scenario import MemberSpec


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


def previous_owners(members: Mapping[str, MemberSpec]) -> dict[tuple[str, int], str]:
    """Who rightfully owned each partition: on conflicting claims the highest generation wins (KIP-341)."""
    owner: dict[tuple[str, int], tuple[int, str]] = {}
    for member, spec in members.items():
        for tp in spec.owned:
            key = (tp[0], tp[1])
            claim = owner.get(key)
            if claim is None or spec.generation > claim[0]:
                owner[key] = (spec.generation, member)
    return {tp: member for tp, (_, member) in owner.items()}


def assignment_report(
    assignment: Mapping[str, Sequence[tuple[str, int]]], members: Mapping[str, MemberSpec]
) -> AssignmentReport:
    counts = {member: len(partitions) for member, partitions in assignment.items()}
    spread = (max(counts.values()) - min(counts.values())) if counts else 0
    owners = previous_owners(members)
    current = {tuple(tp): member for member, partitions in assignment.items() for tp in partitions}
    kept = sum(1 for tp, member in owners.items() if current.get(tp) == member)
    moved = sum(1 for tp, member in owners.items() if tp in current and current[tp] != member)
    return AssignmentReport(counts, spread, moved, kept, len(owners))
