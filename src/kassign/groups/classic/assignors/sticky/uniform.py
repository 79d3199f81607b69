"""Sticky assignment when every member subscribes to the same topics (Kafka's "constrained" path).

With N partitions and M members every member ends with ``N // M`` or ``N // M + 1``
partitions, and exactly ``N % M`` members get the extra one. The steps, as Kafka
3.7.1 and later take them (its output depends on each detail, so each is kept;
``sticky.rules`` switches to what earlier releases do, marked "before 3.7.1"):

1. Keep previous ownership. Members are visited in Java ``HashMap`` order. A
   member's still-valid owned partitions (rack-matched ones only, when rack-aware)
   are sorted by partition number, then topic (before 3.7.1: left in the member's
   own order). Fewer than the minimum: keep them all. At least the maximum while
   extra slots remain: keep the maximum and take a slot. Otherwise keep the
   minimum; the rest are revoked.
   When rack-aware, owned partitions with no replica on the member's rack are
   given up too (a same-rack member may take them; before 3.7.1 they are not
   counted as given up, so a cooperative round hands them over at once).
2. Rack-aware only (KIP-881, 3.5.0 and later): walk the unassigned partitions, those
   whose racks host the fewest members first, and hand each to the next same-rack
   member still under its quota, round robin (then to same-rack members at the
   minimum while extra slots remain); partitions no member's rack matches wait.
   Before 3.7.1 a member reaching the minimum here is offered an extra partition
   even when enough members have one, and one filled up to the maximum is not
   counted: too many extras can go out, and the group then fails as Kafka's does
   (``StickyInvariantError`` carrying Kafka's message).
3. Round robin the rest, partitions sorted by topic then partition, over the
   members still below the minimum (sorted by member id) until each reaches it,
   then one extra each to members at the minimum, in the order they got there.

Example. C0, C1, C2 subscribe to t0..t3 (2 partitions each). Fresh: C0 gets t0p0,
t1p1, t3p0; C1 gets t0p1, t2p0, t3p1; C2 gets t1p0, t2p1. C1 leaves; C0 keeps its
three and C2 its two, then the round robin over [C0, C2] hands t0p1 to C0 (now at
four, done), and t2p0, t3p1 to C2.

For the cooperative protocol the result also lists the partitions in flight: those
given up by one member and handed to another, and those claimed twice in one
generation.

Hot path on integers: partitions are global indexes (``TopicLayout``), members are
indexes, ownership is one int32 array; without racks the round robin is built with
``np.tile`` per block of rounds instead of a loop per partition. The rack-aware
steps loop in Python over the unassigned partitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kassign.groups.classic.assignors.sticky.claims import NO_OWNER, TopicLayout
from kassign.groups.classic.assignors.sticky.racks import RackContext
from kassign.groups.classic.assignors.sticky.rules import StickyRules, sticky_rules


class StickyInvariantError(RuntimeError):
    """The uniform algorithm reached a state Kafka would also reject: ``kafka_message`` is the message of the
    ``IllegalStateException`` Kafka throws there."""

    def __init__(self, message: str, kafka_message: str = "", member: int | None = None) -> None:
        super().__init__(message)
        self.kafka_message = kafka_message or message
        self.member = member  # the member index Kafka's message names (its "%s"), if any


class SharedPartitionError(RuntimeError):
    """Two members keep one partition (Kafka to 3.5.1, where two can hold it: ``claims``' ``shared``)."""

    def __init__(self, partition: int, members: tuple[int, int]) -> None:
        super().__init__(f"partition {partition} kept by members {members}")
        self.partition = partition
        self.members = members


@dataclass
class UniformResult:
    owner: np.ndarray  # int32 [N]: member index per partition
    transferring: np.ndarray  # global ids newly assigned that another member had to give up first


class _Quotas:
    """Per-member counts and the two waiting lists of Kafka's constrained builder."""

    def __init__(self, total: int, members: int) -> None:
        self.min = total // members
        self.max = -(-total // members)
        self.expected_over_min = total % members
        self.over_min = 0
        self.count = np.zeros(members, dtype=np.int64)
        self.under: list[int] = []  # below the minimum
        self.at_min: list[int] = []  # at the minimum, may still get the extra partition


def _keep_owned(
    layout: TopicLayout,
    owned: Sequence[np.ndarray],
    walk_order: Sequence[int],
    quotas: _Quotas,
    racks: RackContext | None,
    owner: np.ndarray,
    given_up: np.ndarray | None,
    rules: StickyRules,
    shared: bool = False,
) -> None:
    """Step 1. ``given_up`` may be None only when nobody owns anything (a new group keeps nothing).
    ``shared``: some partition is in two members' ``owned`` (then a second keeper is a
    :class:`SharedPartitionError`)."""
    topic_of = layout.topic_of
    num_topics = max(len(layout.topics), 1)
    for m in walk_order:
        ids = owned[m]
        if len(ids) == 0:  # nothing to keep: only the waiting lists change (no array work per new member)
            if quotas.min > 0:
                quotas.under.append(m)
            elif quotas.over_min < quotas.expected_over_min:
                quotas.at_min.append(m)
            continue
        assert given_up is not None
        if racks is not None:
            mismatched = racks.mismatched(m, ids)
            if rules.kafka_15170:  # before, Kafka forgets who gave them up: they move without a revocation
                given_up[ids[mismatched]] = m  # may move to a same-rack member, or come back to m
            ids = ids[~mismatched]
        if len(ids) > 1 and rules.sorted_owned:
            # Kafka 3.7.1+ (KAFKA-16277) sorts a member's owned partitions by partition number first, then topic;
            # before, the member keeps the first ones in the order it listed them.
            key = layout.partition_of(ids) * num_topics + topic_of[ids]
            ids = ids[np.argsort(key, kind="stable")]
        if len(ids) < quotas.min:
            keep = ids
            quotas.under.append(m)
        elif len(ids) >= quotas.max and quotas.over_min < quotas.expected_over_min:
            quotas.over_min += 1
            if quotas.over_min == quotas.expected_over_min:
                quotas.at_min.clear()
            keep = ids[: quotas.max]
        else:
            keep = ids[: quotas.min]
            if quotas.over_min < quotas.expected_over_min:
                quotas.at_min.append(m)
        if shared:
            taken = keep[owner[keep] != NO_OWNER]
            if len(taken):
                raise SharedPartitionError(int(taken[0]), (int(owner[taken[0]]), m))
        owner[keep] = m
        given_up[ids[len(keep) :]] = m
        quotas.count[m] = len(keep)


def _next_rack_member(racks: RackContext, partition: int, candidates: list[int], start: int) -> int:
    n = len(candidates)
    for i in range(n):
        index = (start + i) % n
        if racks.matches(candidates[index], partition):
            return index
    return -1


def _rack_round_robin(partitions: np.ndarray, quotas: _Quotas, racks: RackContext, owner: np.ndarray,
                      kafka_15170: bool = True) -> list[int]:
    """Step 2: same-rack members only; returns the partitions left for step 3. Without ``kafka_15170``
    (before 3.7.1) a member reaching the minimum is offered an extra partition even when enough members
    have one, and a member filled up to the maximum here is not counted as having one."""
    left: list[int] = []
    next_start = 0
    for p in partitions.tolist():
        member = -1
        index = _next_rack_member(racks, p, quotas.under, next_start)
        if index >= 0:
            member = quotas.under[index]
            count = quotas.count[member] + 1
            if count >= quotas.min:
                quotas.under.pop(index)
                if count < quotas.max and (quotas.over_min < quotas.expected_over_min or not kafka_15170):
                    quotas.at_min.append(member)
            else:
                index += 1
            next_start = index % len(quotas.under) if quotas.under else 0
        elif quotas.at_min:
            first = _next_rack_member(racks, p, quotas.at_min, 0)
            if first >= 0:
                member = quotas.at_min[first]
                if quotas.count[member] + 1 == quotas.max:
                    quotas.at_min.pop(first)
                    if kafka_15170:
                        quotas.over_min += 1
                        if quotas.over_min == quotas.expected_over_min:
                            quotas.at_min.clear()
        if member >= 0:
            owner[p] = member
            quotas.count[member] += 1
        else:
            left.append(p)
    return left


def _round_robin_loop(partitions: Sequence[int], quotas: _Quotas, owner: np.ndarray) -> None:
    """Step 3 partition by partition, exactly as Kafka iterates (used after the rack step)."""
    under, at_min = quotas.under, quotas.at_min
    cursor = 0
    for p in partitions:
        from_under = bool(under)
        if cursor < len(under):
            member = under[cursor]
            cursor += 1
        elif under:
            member, cursor = under[0], 1  # wrap around for another round
        elif at_min:
            member = at_min.pop(0)
        else:
            raise StickyInvariantError("no member left below its quota, yet partitions remain",
                                       "No more unfilled consumers to be assigned.")
        owner[p] = member
        quotas.count[member] += 1
        if from_under and quotas.count[member] == quotas.min:
            cursor -= 1
            under.pop(cursor)
            at_min.append(member)
        elif quotas.count[member] == quotas.max:
            quotas.over_min += 1  # Kafka counts it here too (only its final check reads the count)


def _round_robin_blocks(partitions: np.ndarray | None, quotas: _Quotas, owner: np.ndarray) -> None:
    """Step 3 vectorised: the same sequence as ``_round_robin_loop`` written per block of identical rounds.

    ``partitions``: the unassigned partitions, ascending; None for every partition of ``owner`` (a new
    group), whose blocks are then written as slices: no index array, no copy of the member sequence."""
    count = len(owner) if partitions is None else len(partitions)
    under = np.array(quotas.under, dtype=np.int64)
    deficit = quotas.min - quotas.count[under] if len(under) else np.zeros(0, dtype=np.int64)
    need = int(deficit.sum())
    if need > count:
        raise StickyInvariantError("members are below the minimum but no partitions are left")
    done = position = 0
    for threshold in np.unique(deficit).tolist():
        active = under[deficit >= threshold].astype(owner.dtype)  # members still short during rounds [done, threshold)
        rounds = threshold - done
        end = position + rounds * len(active)
        if partitions is None:
            owner[position:end].reshape(rounds, len(active))[...] = active
        else:
            owner[partitions[position:end]] = np.tile(active, rounds)
        position, done = end, threshold
    quotas.count[under] += deficit
    # Members reach the minimum in the round of their deficit, in list order within a round.
    reached = under[np.argsort(deficit, kind="stable")].tolist()
    at_min = quotas.at_min + reached
    extra = count - need
    if extra > len(at_min):
        raise StickyInvariantError("partitions remain but every member is at its maximum")
    receivers = np.array(at_min[:extra], dtype=np.int64)
    if partitions is None:
        owner[need:] = receivers
    else:
        owner[partitions[need:]] = receivers
    quotas.count[receivers] += 1
    quotas.under = []
    quotas.at_min = at_min[extra:]


def assign_uniform(
    layout: TopicLayout,
    owned: Sequence[np.ndarray],
    walk_order: Sequence[int],
    name_rank: np.ndarray,
    contested: np.ndarray,
    racks: RackContext | None = None,
    rules: StickyRules | None = None,
    shared: np.ndarray | None = None,
) -> UniformResult:
    """Kafka's constrained sticky assignment over global partition indexes.

    ``owned[m]``: member m's rightful previous partitions; ``walk_order``: member
    indexes in Java HashMap order; ``name_rank[m]``: rank of member m's id in Java
    string order; ``contested``: partitions claimed twice in one generation; ``rules``:
    the release's switches (``sticky.rules``; None: the newest release's); ``shared``: partitions in
    two members' ``owned`` (Kafka to 3.5.1 only).
    """
    rules = sticky_rules() if rules is None else rules
    members = len(owned)
    owner = np.full(layout.total, NO_OWNER, dtype=np.int32)
    if members == 0 or layout.total == 0:
        return UniformResult(owner, np.zeros(0, dtype=np.int64))
    # The member that had to let each partition go; a new group (nobody owns anything) gives up nothing.
    history = any(map(len, owned))
    given_up = np.full(layout.total, NO_OWNER, dtype=np.int32) if history else None
    quotas = _Quotas(layout.total, members)
    _keep_owned(layout, owned, walk_order, quotas, racks, owner, given_up, rules,
                shared is not None and len(shared) > 0)
    unassigned = np.flatnonzero(owner == NO_OWNER) if history else None  # None: every partition, in order
    rank = name_rank.tolist()
    quotas.under.sort(key=rank.__getitem__)
    quotas.at_min.sort(key=rank.__getitem__)
    if racks is not None:
        everything = np.arange(layout.total, dtype=np.int64) if unassigned is None else unassigned
        order = np.argsort(racks.members_on_partition_racks[everything], kind="stable")
        left = _rack_round_robin(everything[order], quotas, racks, owner, rules.kafka_15170)
        _round_robin_loop(left, quotas, owner)
    else:
        _round_robin_blocks(unassigned, quotas, owner)
    if quotas.under:
        if quotas.over_min != quotas.expected_over_min:
            said = ("We haven't reached the expected number of members with more than the minQuota partitions, "
                    "but no more partitions to be assigned")
        else:
            said = "Consumer: [%s] doesn't reach minQuota partitions, and no more partitions to be assigned"
        raise StickyInvariantError(f"{len(quotas.under)} member(s) stay below the minimum of {quotas.min}", said,
                                   quotas.under[0])
    if given_up is None and len(contested) == 0:  # nothing was given up, so nothing is in flight
        return UniformResult(owner, np.zeros(0, dtype=np.int64))
    if unassigned is None:
        unassigned = np.arange(layout.total, dtype=np.int64)
    contested_mask = np.zeros(layout.total, dtype=bool)
    contested_mask[contested] = True  # claimed twice in one generation: handed out only once everyone let go
    in_flight = contested_mask[unassigned]
    if given_up is not None:
        previous = given_up[unassigned]
        if rules.kafka_15170:
            in_flight |= (previous != NO_OWNER) & (previous != owner[unassigned])
        else:  # before 3.7.1 a revoked partition is in flight even when it goes back to the member that gave it up
            in_flight |= previous != NO_OWNER
    return UniformResult(owner, unassigned[in_flight])
