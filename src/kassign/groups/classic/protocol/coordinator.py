"""The group coordinator's side of the classic rebalance protocol (JoinGroup / SyncGroup).

The coordinator never looks inside subscriptions: it sees, per member, a list of
(strategy name, opaque bytes). Its decisions:

- Admission. The first member of an empty group may bring any non-empty
  strategy list. Any later member must share at least one strategy with every
  current member, else it is refused with INCONSISTENT_GROUP_PROTOCOL.
- Protocol choice. Candidates are the strategies every member lists. Each member
  votes for the first candidate in its own preference order; the candidate with
  most votes wins. On a tie Kafka takes whichever tied name its HashMap of votes
  yields first; we reproduce that order (see ``javamap``).
- Generations. Each completed join phase starts a new generation (the first is 1).
- Leader. The first member to join an empty group leads. When the leader leaves,
  the first remaining member in the members map's iteration order takes over.
- Static membership. A member with a ``group.instance.id`` that comes back under
  the same id while the group is stable is re-admitted without a rebalance
  unless its subscription changed; it receives the assignment kept for it.

Example. A lists [cooperative-sticky, range], B lists [range, cooperative-sticky],
C lists [range]: candidates {range}; all three vote range; range is chosen. If C
listed [roundrobin] it would be refused: nothing it lists is supported by A and B.

Data layout: members are kept in one insertion-ordered dict keyed by member id;
the Java iteration order is computed only when an order is needed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from kassign.core.errors import KassignError
from kassign.core.javaorder import java_string_hash_order
from kassign.groups.classic.protocol.wire import decode_subscription


class InconsistentGroupProtocolError(KassignError):
    """Kafka's INCONSISTENT_GROUP_PROTOCOL: the member shares no strategy with the group."""


@dataclass
class MemberRecord:
    """What the coordinator knows of one member."""

    member_id: str
    instance_id: str | None
    protocols: list[tuple[str, bytes]]

    def strategy_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, strategy: str) -> bytes:
        for name, data in self.protocols:
            if name == strategy:
                return data
        raise KassignError(f"member {self.member_id!r} does not list strategy {strategy!r}")


@dataclass(frozen=True)
class JoinResult:
    """The end of a join phase: what the JoinGroup responses carry."""

    generation: int
    protocol: str
    leader: str
    members: list[MemberRecord]  # in the coordinator's iteration order, as the leader receives them


@dataclass
class GroupCoordinator:
    group_id: str = "group"
    members: dict[str, MemberRecord] = field(default_factory=dict)
    leader: str | None = None
    generation: int = 0
    protocol: str | None = None
    assignments: dict[str, bytes] = field(default_factory=dict)
    _largest_size: int = 0
    _support: Counter[str] | None = None

    # -- membership

    def member_order(self) -> list[str]:
        return java_string_hash_order(self.members, largest_size=self._largest_size)

    def static_member(self, instance_id: str) -> str | None:
        for record in self.members.values():
            if record.instance_id == instance_id:
                return record.member_id
        return None

    def _strategy_support(self) -> Counter[str]:
        """How many members list each strategy; kept up to date by join/remove, since every join checks it."""
        if self._support is None:
            self._support = Counter(name for r in self.members.values() for name in set(r.strategy_names()))
        return self._support

    def check_supports(self, member_id: str, strategies: Sequence[str]) -> None:
        if not strategies:
            raise InconsistentGroupProtocolError(f"member {member_id!r} lists no assignment strategy")
        record = self.members.get(member_id)
        others = len(self.members) - (record is not None)
        if not others:
            return
        own = set(record.strategy_names()) if record is not None else set()
        support = self._strategy_support()
        if not any(support[s] - (s in own) == others for s in strategies):
            group_names = sorted(self.candidate_protocols(exclude=member_id))
            raise InconsistentGroupProtocolError(
                f"INCONSISTENT_GROUP_PROTOCOL: member {member_id!r} lists [{', '.join(strategies)}] but the group's "
                f"members all support only [{', '.join(group_names)}]; add one of those to its strategies"
            )

    def join(self, member_id: str, instance_id: str | None, protocols: list[tuple[str, bytes]]) -> None:
        """A JoinGroup request: admit a new member or record a known member's new metadata."""
        self.check_supports(member_id, [name for name, _ in protocols])
        record = self.members.get(member_id)
        support = self._strategy_support()
        if record is not None:
            support.subtract(set(record.strategy_names()))
        support.update({name for name, _ in protocols})
        if record is None:
            self.members[member_id] = MemberRecord(member_id, instance_id, list(protocols))
            self._largest_size = max(self._largest_size, len(self.members))
            if self.leader is None:
                self.leader = member_id
        else:
            record.protocols = list(protocols)

    def remove(self, member_id: str) -> None:
        """LeaveGroup, or a session that expired."""
        record = self.members.pop(member_id, None)
        if record is None:
            return
        self._strategy_support().subtract(set(record.strategy_names()))
        self.assignments.pop(member_id, None)
        if self.leader == member_id:
            order = self.member_order()
            self.leader = order[0] if order else None
        if not self.members:
            self.protocol = None

    def static_rejoin_needs_rebalance(self, member_id: str, protocols: list[tuple[str, bytes]]) -> bool:
        """A known static member is back: only a changed subscription (topics or strategies) forces a rebalance."""
        record = self.members[member_id]
        old_names, new_names = record.strategy_names(), [name for name, _ in protocols]
        if old_names != new_names:
            return True
        if self.protocol is None:
            return True
        new_topics = decode_subscription(dict(protocols)[self.protocol]).topics
        old_topics = decode_subscription(record.metadata(self.protocol)).topics
        return sorted(new_topics) != sorted(old_topics)

    # -- protocol choice

    def candidate_protocols(self, exclude: str | None = None) -> set[str]:
        records = [r for m, r in self.members.items() if m != exclude]
        if not records:
            return set()
        common = set(records[0].strategy_names())
        for record in records[1:]:
            common &= set(record.strategy_names())
        return common

    def select_protocol(self) -> str:
        candidates = self.candidate_protocols()
        if not candidates:
            raise InconsistentGroupProtocolError("the group's members share no assignment strategy")
        votes: dict[str, int] = {}
        for member_id in self.member_order():
            choice = next(name for name in self.members[member_id].strategy_names() if name in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best = max(votes.values())
        # Kafka keeps votes in a HashMap and takes the first maximum it meets
        return next(name for name in java_string_hash_order(votes) if votes[name] == best)

    # -- rounds

    def complete_join(self) -> JoinResult:
        if not self.members:
            raise KassignError("cannot complete a join phase: the group has no members")
        self.protocol = self.select_protocol()
        self.generation += 1
        if self.leader not in self.members:
            self.leader = self.member_order()[0]
        ordered = [self.members[m] for m in self.member_order()]
        return JoinResult(self.generation, self.protocol, self.leader, ordered)

    def complete_sync(self, assignments: dict[str, bytes]) -> dict[str, bytes]:
        """The leader's SyncGroup: members it left out get an empty assignment (the empty bytes)."""
        strangers = set(assignments) - set(self.members)
        if strangers:
            raise KassignError(f"the leader assigned partitions to members not in the group: {sorted(strangers)}")
        self.assignments = {m: assignments.get(m, b"") for m in self.members}
        return dict(self.assignments)
