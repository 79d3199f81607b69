"""``simple``: the share-group assignor (KIP-932) of Kafka 4.1 to 4.4's group coordinator.

A share group's members read the partitions of their topics together, record by record, so a
partition may be assigned to several members. The coordinator recomputes every member's
*target* from the current targets whenever the group changes. Only partitions whose share state
is initialised may be handed out (``initialized`` in the scenario).

The rule changed once: Kafka 4.2 (KAFKA-19362, KAFKA-19363) replaced 4.1's. ``simple_assign`` takes
the release and runs the rule :func:`~kassign.core.releases.rule` names for it (``SHARE_SIMPLE``);
everything around the rule (the group, the checks, which partitions may be assigned, the order of a
member's topics) is the same code for both.

**The rule of 4.2, 4.3 and 4.4** (4.4 left the assignor as 4.3 had it). For a set of ``P`` assignable partitions and ``M`` members reading them:

* each partition wants ``sharing = ceil(M / P)`` members;
* member ``i`` (0-based, in the coordinator's member-map order) wants
  ``ceil(x * (i + 1)) - ceil(x * i)`` partitions, ``x = sharing * P / M`` in double precision,
  so the counts differ by at most one and add up to ``sharing * P``;
* a member keeps its current partitions of topics it still subscribes to, except that
  (1) a member holding more than it wants gives up the first ones of its set in Java's
  ``HashSet`` order, and (2) a partition held by more than ``sharing`` members is given up
  by the first of its holders in ``HashSet<Integer>`` order;
* then the partitions, walked in the order of Java's ``HashMap`` of partitions (those held
  first, in the order met, then the assignable ones), each take members until they have
  ``sharing``, from a round robin over the members still below their count (ascending
  member numbers), skipping members that already hold that partition. A full pass of the round
  robin that places nothing ends the filling; the members left below their count stay so.

When every member subscribes to the same topics (the homogeneous path) the rule runs once over
all their partitions. Otherwise (the heterogeneous path) it runs topic by topic, each topic's
subscribers counting only that topic's partitions: a member subscribed to two topics gets its
share of each.

**Example** (checked by the test suite). Topic ``t0`` with 3 partitions, members ``A .. E``
subscribed, none holding anything: ``sharing = 2``, ``x = 1.2``, so the first member in map
order wants 2 partitions and the others 1 each, and every partition gets two members. With the
topic id ``AAAAAAAAAAAAAAAAAAAAAA`` (all zero bits) the maps order the members ``A, B, C, D, E``
and the partitions ``0, 1, 2``; each partition takes its two members before the next is
looked at: ``t0-0`` takes A and B, ``t0-1`` C and D, ``t0-2`` E and then A (its second).
Result: ``A: t0-0, t0-2; B: t0-0; C: t0-1; D: t0-1; E: t0-2``. If E then leaves, ``x = 1.5``
and the counts become 2, 1, 2, 1: everyone keeps what it has, and ``t0-2``, one holder short,
goes to C, the one member below its count.

**The rule of 4.1** (:mod:`kassign.groups.share.hashed`). A member's list is the assignable partitions
of its topics, topic after topic in the order above, ascending within one. When every member
subscribes to the same topics (``P`` partitions, ``M`` members, count ``c = ceil(P / M)``):

* each member takes the partition at ``abs(hashCode(id) % P)`` of the list (Java's ``int`` remainder);
* walking Kafka's ``HashMap`` of current holders (keys ``TopicIdPartition``; per partition its holders
  in member order), a member keeps a current partition of a subscribed topic that no member was
  hashed to while it holds fewer than ``c`` (partitions of other topics are dropped);
* the partitions nobody holds yet, in list order, are dealt round robin over the members in member
  order; a member takes one while it holds at most ``c`` (so ``c + 1`` is possible), else leaves the
  round. If every member leaves with partitions left, Kafka throws ``PartitionAssignorException``.

Otherwise each member's hash picks among its own list; each topic's partitions that nobody was hashed
to and nobody holds now are dealt round robin over that topic's readers (members whose list has a
partition of it) in the order of Kafka's ``HashMap`` of member ids; and each member keeps all its
current partitions of topics it still reads that nobody was hashed to. A partition whose current
holder no longer reads its topic is neither dealt nor kept: unassigned for that round.

**Where the rules differ** (checked by the test suite): the example above as 4.1 runs it. ``P = 3``,
``M = 5``, ``c = 1``; the ids' hashes are 65 .. 69, so A and D land on ``t0-2``, B and E on ``t0-0``,
C on ``t0-1``, and nothing is left to deal: ``A: t0-2; B: t0-0; C: t0-1; D: t0-2; E: t0-0``, one
partition each where 4.3 gives A two. In a new group with a single member, or with each topic read by
one member, both rules give every reader all of its partitions.

**Where kassign differs.** Nowhere in the answer. Kafka 4.2 to 4.4 keep, in the heterogeneous path, the
current partitions of topics that nobody subscribes to any more or that were deleted; kassign
does the same (the answer then names a topic absent from ``topics``). Where Kafka's round robin
throws ``java.util.NoSuchElementException`` (its members ran out of room while a partition still
wanted members, possible when current targets hold partitions that are not initialised) kassign
raises :class:`ShareAssignorError` naming that exception. Buckets that Java turns into trees are
modelled where the set is only ever added to; a holder set that is a tree and lost a member
before it is walked is refused (:class:`~kassign.core.javaorder.JavaOrderUndefined`), never guessed.

Data layout: members and topics are the integers of
:class:`~kassign.groups.consumer.group.ServerGroup`; partitions are flat ids. The work is done
in *units* (the whole group on the homogeneous path, one topic per unit otherwise), each a slice
of (member, partition) pairs in the order Kafka meets them, and four compiled passes over all
units: revoke from members over their count, revoke from partitions over ``sharing``, order the
partition map, fill. Java's hash orders come from each collection's capacity, which the passes
replay from its insertions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from kassign.core.releases import HASH_THEN_ROUND_ROBIN, LATEST, SHARE_SIMPLE, KafkaRelease, rule
from kassign.core.javaorder import JavaOrderUndefined, hashmap_positions
from kassign.groups.consumer.group import ServerGroup, build_server_group
from kassign.groups.share.common import (
    ShareAssignorError,
    _java_order,
    _java_table,
    homogeneous_targets,
    partition_name,
    unlink,
)
from kassign.groups.share.scenario import ShareScenario

_MASK32 = 0xFFFFFFFF


@dataclass(frozen=True)
class ShareTarget:
    """The new target assignment: pair ``j`` gives flat partition ``flat[j]`` of the layout
    (``topic_names``, ``offsets``) to member number ``member[j]`` of ``group``; each pair once.
    The layout is the group's existing topics, then any topic that no longer exists but stays in
    a member's target (heterogeneous path), sized by the highest partition held."""

    group: ServerGroup
    member: np.ndarray
    flat: np.ndarray
    topic_names: list[str]
    offsets: np.ndarray


@dataclass
class _Units:
    """The rule's independent runs, as slices of shared columns (see the module docstring)."""

    pair_start: np.ndarray      # unit u's pairs: pair_start[u] .. pair_start[u+1]-1, in the order Kafka meets them
    pair_member: np.ndarray
    pair_flat: np.ndarray
    target_start: np.ndarray    # unit u's assignable partitions, in the order Kafka lists them
    target_flat: np.ndarray
    member_start: np.ndarray    # unit u's members, ascending by Java's Integer order, and what each wants
    member: np.ndarray
    desired: np.ndarray
    sharing: np.ndarray
    map_table: np.ndarray       # the partition map's initial table size


def simple_assign(share: ShareScenario, release: KafkaRelease = LATEST) -> ShareTarget:
    """Kafka's ``simple`` share assignor on a checked scenario, as ``release`` runs it."""
    scenario = share.scenario
    group = build_server_group(scenario)
    layout_names, layout_offsets = list(group.topic_names), group.offsets
    if group.num_members == 0:
        return ShareTarget(group, np.zeros(0, np.int64), np.zeros(0, np.int64), layout_names, layout_offsets)
    assignable = share.assignable(group.topic_names, group.offsets)
    if rule(release, SHARE_SIMPLE) == HASH_THEN_ROUND_ROBIN:
        from kassign.groups.share.hashed import hashed_assign  # it builds on this module's helpers

        member, flat = hashed_assign(group, scenario, assignable)
        return ShareTarget(group, member, flat, layout_names, layout_offsets)
    rank = _integer_order_rank(group.num_members)
    member, flat = _current_pairs(group, rank)
    if group.homogeneous:
        units, flat_hash, kept = _homogeneous_units(group, scenario, assignable, rank, member, flat)
    else:
        units, flat_hash, kept = _heterogeneous_units(group, assignable, rank, member, flat)
    if units is None:  # nothing subscribed: Kafka answers an empty assignment for everyone
        return ShareTarget(group, np.zeros(0, np.int64), np.zeros(0, np.int64), layout_names, layout_offsets)
    new_member, new_flat, stays = _run(group, units, flat_hash)
    # distinct already: a member's current partitions are a set, units are disjoint, and a partition
    # takes no member that holds it
    members = [member[kept], units.pair_member[stays], new_member]
    flats = [flat[kept], units.pair_flat[stays], new_flat]
    if not group.homogeneous:
        gone_member, gone_flat, layout_names, layout_offsets = _gone_pairs(group, scenario)
        members.append(gone_member)
        flats.append(gone_flat)
    return ShareTarget(group, np.concatenate(members), np.concatenate(flats), layout_names, layout_offsets)


# -- the group's current targets ----------------------------------------------------------------

def _integer_order_rank(num_members: int) -> np.ndarray:
    """Each member number's place in a ``HashMap``/``HashSet`` of all member numbers sized for them
    (``AssignorHelpers.newHashMap``): the table exceeds the largest number, so the order is by
    ``Integer``'s spread hash, which is the number itself below 65,536."""
    numbers = np.arange(num_members, dtype=np.int64)
    if num_members <= 1 << 16:
        return numbers
    rank = np.empty(num_members, dtype=np.int64)
    rank[np.argsort(numbers ^ (numbers >> 16), kind="stable")] = numbers
    return rank


def _current_pairs(group: ServerGroup, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every member's current partitions of existing topics, member after member in Integer order,
    each member's in the order Java walks its ``HashMap<Uuid, HashSet<Integer>>``: (member, flat id)."""
    current = group.current
    holders = np.flatnonzero(np.bincount(current.member[current.key < group.num_topics], minlength=group.num_members))
    if not len(holders):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    holders = holders[np.argsort(rank[holders], kind="stable")]
    start, topic, partition = group.walk_current_targets(holders)
    member = np.repeat(holders, np.diff(start))
    exists = topic >= 0  # topics that no longer exist are handled from the scenario (_gone_pairs)
    return member[exists], group.offsets[topic[exists]] + partition[exists]


def _gone_pairs(group: ServerGroup, scenario) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """Current partitions of topics that no longer exist (kept by the heterogeneous path), on a
    layout extended by those topics."""
    members = scenario.members
    names, code = members.owned_topics_coded()
    gone_names = [name for name in names if name not in scenario.topics]
    layout_names, offsets = list(group.topic_names), group.offsets
    if not gone_names:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), layout_names, offsets
    gone_index = np.full(len(names), -1, dtype=np.int64)
    gone_index[[names.index(name) for name in gone_names]] = np.arange(len(gone_names))
    which = gone_index[code]
    mine = which >= 0
    partitions = np.asarray(members.owned_partitions, dtype=np.int64)[mine]
    given = np.repeat(np.arange(len(members.ids), dtype=np.int64), np.diff(members.owned_start))[mine]
    number = np.empty(group.num_members, dtype=np.int64)
    number[group.given_position] = np.arange(group.num_members)
    sizes = np.zeros(len(gone_names), dtype=np.int64)
    np.maximum.at(sizes, which[mine], partitions + 1)
    extended = np.concatenate([offsets, offsets[-1] + np.cumsum(sizes)])
    flat = extended[group.num_topics + which[mine]] + partitions
    # a member may list a partition twice; its target holds it once
    key = np.unique(number[given] * int(extended[-1]) + flat)
    return key // int(extended[-1]), key % int(extended[-1]), layout_names + gone_names, extended


# -- the units ------------------------------------------------------------------------------------

def _desired_counts(sharing: int, targets: int, members: int) -> np.ndarray:
    """What each of ``members`` (in member order) wants: successive differences of ``ceil(x * i)``,
    ``x = sharing * targets / members`` in double precision, as Kafka computes them."""
    x = (sharing * targets) / float(members)
    return np.diff(np.ceil(x * np.arange(members + 1, dtype=np.float64))).astype(np.int64)


def _sharing(members: int, targets: int) -> int:
    return 0 if targets == 0 else (members + targets - 1) // targets


def _map_table(targets: int) -> int:
    """``AssignorHelpers.newHashMap(targets)``'s table: ``(int) ((targets + 1) / 0.75f + 1)``, rounded
    up to a power of two."""
    asked = int(np.float32(targets + 1) / np.float32(0.75) + np.float32(1))
    return 1 << max(asked - 1, 0).bit_length()


# The partitions' hashes depend on the topic layout alone (ids and partition counts), which changes far less often
# than the coordinator asks: layouts of at most this many partitions keep them between calls (a few MiB at most).
# Nothing that depends on the members or their assignment is kept between calls.
_KEPT_LAYOUT_AT_MOST = 1 << 17
_last_partition_hashes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # (key hashes, offsets, answer)


def _topic_partition_hashes(group: ServerGroup) -> np.ndarray:
    """Per flat id, ``TopicIdPartition.hashCode()`` (a record: ``31 * topicId.hashCode() + partition``). The
    last answer again (a copy) for the same topics' hashes and sizes: ten thousand partitions cost some 30 us."""
    global _last_partition_hashes
    key_hashes, offsets = group.current.key_hashes, group.offsets
    kept = _last_partition_hashes
    if kept is not None and np.array_equal(kept[0], key_hashes) and np.array_equal(kept[1], offsets):
        return kept[2].copy()
    topic = group.topic_of_partition
    partition = np.arange(int(offsets[-1]), dtype=np.int64) - offsets[topic]
    hashes = (31 * key_hashes[topic] + partition) & _MASK32
    if len(hashes) <= _KEPT_LAYOUT_AT_MOST:
        _last_partition_hashes = (key_hashes.copy(), offsets.copy(), hashes.copy())
    return hashes


def _homogeneous_units(group: ServerGroup, scenario, assignable: np.ndarray, rank: np.ndarray,
                       member: np.ndarray, flat: np.ndarray) -> tuple[_Units | None, np.ndarray, np.ndarray]:
    """One unit for the whole group: the topics of the first member's subscription, walked as the
    coordinator's view of it iterates (its names' ``HashSet`` order, names that do not exist
    skipped). Current partitions of other topics are dropped."""
    listed = homogeneous_targets(group, scenario, assignable)
    if listed is None:
        return None, np.zeros(0, np.int64), np.zeros(0, bool)
    targets, subscribed = listed
    mine = subscribed[group.topic_of_partition[flat]]
    num = group.num_members
    sharing = _sharing(num, len(targets))
    order = np.argsort(rank, kind="stable")
    units = _Units(
        pair_start=np.array([0, int(mine.sum())], dtype=np.int64),
        pair_member=member[mine], pair_flat=flat[mine],
        target_start=np.array([0, len(targets)], dtype=np.int64), target_flat=targets,
        member_start=np.array([0, num], dtype=np.int64), member=order,
        desired=_desired_counts(sharing, len(targets), num)[order],
        sharing=np.array([sharing], dtype=np.int64),
        map_table=np.array([_map_table(len(targets))], dtype=np.int64),
    )
    return units, _topic_partition_hashes(group), np.zeros(len(member), dtype=bool)


def _heterogeneous_units(group: ServerGroup, assignable: np.ndarray, rank: np.ndarray, member: np.ndarray,
                         flat: np.ndarray) -> tuple[_Units | None, np.ndarray, np.ndarray]:
    """One unit per topic that some member subscribes to (ascending topic numbers). Every member's
    current partitions of that topic take part (a member no longer subscribed wants none of them);
    current partitions of other topics stay as they are."""
    sub_start, subscribers = group.subscribers_by_topic
    readers = np.diff(sub_start)
    topics = np.flatnonzero(readers > 0)
    if not len(topics):
        return None, np.zeros(0, np.int64), np.zeros(0, bool)
    num_topics = group.num_topics
    topic_of_flat = group.topic_of_partition
    unit_of_topic = np.full(num_topics, -1, dtype=np.int64)
    unit_of_topic[topics] = np.arange(len(topics))

    unit = unit_of_topic[topic_of_flat[flat]]
    kept = unit < 0
    by_unit = np.argsort(unit, kind="stable")
    by_unit = by_unit[~kept[by_unit]]
    pair_start = np.searchsorted(unit[by_unit], np.arange(len(topics) + 1))

    # assignable partitions per unit, ascending (units ascend by topic, so one pass over the flat ids)
    target_flat = np.flatnonzero(assignable & (readers[topic_of_flat] > 0))
    targets = np.bincount(topic_of_flat[target_flat], minlength=num_topics)[topics]
    # subscribers per unit: the topics' slices of the subscriber lists, ascending member numbers
    count = readers[topics]
    member_start = np.zeros(len(topics) + 1, dtype=np.int64)
    np.cumsum(count, out=member_start[1:])
    first = np.repeat(sub_start[topics] - member_start[:-1], count)
    readers_flat = subscribers[first + np.arange(member_start[-1])]
    sharing = np.where(targets > 0, (count + targets - 1) // np.maximum(targets, 1), 0)
    index = np.arange(member_start[-1]) - np.repeat(member_start[:-1], count)  # place among its topic's readers
    x = np.repeat((sharing * targets) / count.astype(np.float64), count)
    desired = (np.ceil(x * (index + 1)) - np.ceil(x * index)).astype(np.int64)
    if group.num_members > 1 << 16:  # beyond that Java's Integer order is not the numbers' order
        order = np.lexsort((rank[readers_flat], np.repeat(np.arange(len(topics)), count)))
        readers_flat, desired = readers_flat[order], desired[order]
    asked = (np.float32(1) + (targets + 1).astype(np.float32) / np.float32(0.75)).astype(np.int64)
    units = _Units(
        pair_start=pair_start, pair_member=member[by_unit], pair_flat=flat[by_unit],
        target_start=np.concatenate([[0], np.cumsum(targets)]).astype(np.int64), target_flat=target_flat,
        member_start=member_start, member=readers_flat, desired=desired, sharing=sharing,
        map_table=_power_of_two_at_least(asked),
    )
    # each topic's partitions are Integer keys: their hash is the partition number
    return units, np.arange(len(topic_of_flat), dtype=np.int64) - group.offsets[topic_of_flat], kept


def _power_of_two_at_least(values: np.ndarray) -> np.ndarray:
    result = np.ones(len(values), dtype=np.int64)
    while (result < values).any():
        result = np.where(result < values, result * 2, result)
    return result


# -- the four passes --------------------------------------------------------------------------------

def _run(group: ServerGroup, units: _Units, flat_hash: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(member, flat, stays)``: the pairs each unit adds, and which of its current pairs stay."""
    revoked = np.zeros(len(units.pair_member), dtype=bool)
    # 1. members over their count give up the first partitions of their set
    trees = _revoke_from_full_members(units.pair_start, units.pair_member, units.pair_flat, flat_hash,
                                      units.member_start, units.member, units.desired, group.num_members, revoked)
    for lo, hi, excess in trees.tolist():
        order = hashmap_positions(flat_hash[units.pair_flat[lo:hi]].tolist())
        revoked[lo + np.array(order[:excess], dtype=np.int64)] = True
    # 2. partitions over `sharing` lose their first holders
    trees = _revoke_from_crowded_partitions(units.pair_start, units.pair_member, units.pair_flat, units.sharing,
                                            revoked, int(group.offsets[-1]))
    for pairs in _tree_holder_sets(trees, units):
        _revoke_tree_holders(pairs, units, revoked)
    # 3. the partition map's order
    key_start, key_flat, tree_units, looked_up_after = _map_orders(units, flat_hash, int(group.offsets[-1]))
    key_flat = _with_tree_maps(key_start, key_flat, tree_units, units, flat_hash, looked_up_after)
    # 4. the round robin
    new_member, new_flat, failed = _fill(units.pair_start, units.pair_member, units.pair_flat, revoked,
                                         key_start, key_flat, units.member_start, units.member, units.desired,
                                         units.sharing, group.num_members, int(group.offsets[-1]))
    if failed[0] >= 0:
        raise _no_such_element(group, int(failed[1]))
    return new_member, new_flat, ~revoked


def _map_orders(units: _Units, flat_hash: np.ndarray, total: int) -> tuple[np.ndarray, ...]:
    """:func:`_partition_map_orders` of the units. Not kept between calls: its inputs are the group's current
    holders and targets, which change whenever the coordinator asks again."""
    return _partition_map_orders(units.pair_start, units.pair_flat, units.target_start, units.target_flat,
                                 units.map_table, flat_hash, total)


def _tree_holder_sets(trees: np.ndarray, units: _Units) -> list[np.ndarray]:
    """The pairs (in insertion order) of each partition whose holder set Java keeps partly as a tree."""
    result = []
    for u, flat in trees.tolist():
        lo, hi = units.pair_start[u], units.pair_start[u + 1]
        result.append(lo + np.flatnonzero(units.pair_flat[lo:hi] == flat))
    return result


def _revoke_tree_holders(pairs: np.ndarray, units: _Units, revoked: np.ndarray) -> None:
    if revoked[pairs].any():
        raise JavaOrderUndefined(
            "kassign does not model this group: a partition has so many current holders that Java keeps "
            "nine or more of them in a tree bin, and one of them was taken away before Kafka walks the set "
            "(Java then reorders the tree)")
    u = int(np.searchsorted(units.pair_start, pairs[0], side="right")) - 1
    order = hashmap_positions(units.pair_member[pairs].tolist())
    excess = len(pairs) - int(units.sharing[u])
    revoked[pairs[np.array(order[:excess], dtype=np.int64)]] = True


def _with_tree_maps(key_start: np.ndarray, key_flat: np.ndarray, tree_units: np.ndarray, units: _Units,
                    flat_hash: np.ndarray, looked_up_after: np.ndarray) -> np.ndarray:
    """The partition maps of ``tree_units`` (where a bucket became a tree) ordered by the full model."""
    for u in tree_units.tolist():
        lo, hi = key_start[u], key_start[u + 1]
        inserted = _map_insertions(units, u)
        order = hashmap_positions(flat_hash[inserted].tolist(), int(units.map_table[u]), compute_if_absent=True,
                                  looked_up_after=bool(looked_up_after[u]))
        key_flat[lo:hi] = inserted[np.array(order, dtype=np.int64)]
    return key_flat


def _map_insertions(units: _Units, u: int) -> np.ndarray:
    """Unit ``u``'s partitions in the order they enter its map: held ones as met, then the assignable rest."""
    held = units.pair_flat[units.pair_start[u]:units.pair_start[u + 1]]
    targets = units.target_flat[units.target_start[u]:units.target_start[u + 1]]
    both = np.concatenate([held, targets])
    _, first = np.unique(both, return_index=True)
    return both[np.sort(first)]


def _no_such_element(group: ServerGroup, flat: int) -> ShareAssignorError:
    return ShareAssignorError(
        "Kafka's simple assignor throws java.util.NoSuchElementException on this group: every member reached "
        f"its count while {partition_name(group, flat)} still wanted members (current targets holding partitions "
        "that are not initialized leave too little room)", "NoSuchElementException")


# -- compiled parts -------------------------------------------------------------------------------

@njit(cache=True)
def _revoke_from_full_members(pair_start, pair_member, pair_flat, flat_hash, member_start, members, desired,
                              num_members, revoked):
    """Pass 1: a member holding more than it wants gives up the first partitions of its ``HashSet``
    (filled by ``add`` in the order met). Returns ``(lo, hi, excess)`` per member whose set has a
    tree bin, left to the caller."""
    wants = np.zeros(num_members, dtype=np.int64)
    trees = np.zeros((0, 3), dtype=np.int64)
    positions = np.arange(len(pair_flat))
    hashes = flat_hash[pair_flat]
    for u in range(len(pair_start) - 1):
        for k in range(member_start[u], member_start[u + 1]):
            wants[members[k]] = desired[k]
        i = pair_start[u]
        while i < pair_start[u + 1]:
            m = pair_member[i]
            j = i
            while j < pair_start[u + 1] and pair_member[j] == m:
                j += 1
            excess = j - i - wants[m]
            if excess > 0:
                capacity, tree = _java_table(hashes, i, j, 16, False)
                if tree:
                    trees = np.concatenate((trees, np.array([[i, j, excess]], dtype=np.int64)))
                else:
                    order = _java_order(positions, hashes, i, j, capacity, False)
                    for r in range(excess):
                        revoked[order[r]] = True
            i = j
        for k in range(member_start[u], member_start[u + 1]):
            wants[members[k]] = 0
    return trees


@njit(cache=True)
def _revoke_from_crowded_partitions(pair_start, pair_member, pair_flat, sharing, revoked, total):
    """Pass 2: a partition held by more than ``sharing`` members loses its first holders in the order
    of its ``HashSet<Integer>`` of holders (filled by ``add`` in the order met). Returns ``(unit, flat)``
    per partition whose holder set has a tree bin, left to the caller."""
    trees = np.zeros((0, 2), dtype=np.int64)
    starts = np.zeros(total + 1, dtype=np.int64)
    for u in range(len(pair_start) - 1):
        lo, hi = pair_start[u], pair_start[u + 1]
        by_flat = _stable_by_flat(pair_flat, lo, hi, starts)
        i = 0
        n = hi - lo
        while i < n:
            flat = pair_flat[by_flat[i]]
            j = i
            live = 0
            while j < n and pair_flat[by_flat[j]] == flat:
                if not revoked[by_flat[j]]:
                    live += 1
                j += 1
            if live > sharing[u]:
                holders = by_flat[i:j]
                member_hash = pair_member[holders]
                capacity, tree = _java_table(member_hash, 0, j - i, 16, False)
                if tree:
                    trees = np.concatenate((trees, np.array([[u, flat]], dtype=np.int64)))
                else:
                    order = _java_order(holders, member_hash, 0, j - i, capacity, False)
                    excess = live - sharing[u]
                    for p in order:
                        if excess == 0:
                            break
                        if not revoked[p]:
                            revoked[p] = True
                            excess -= 1
            i = j
    return trees


@njit(cache=True)
def _stable_by_flat(pair_flat, lo, hi, starts):
    """Positions ``lo .. hi-1`` grouped by flat id, in order within one (a counting sort; ``starts`` is
    zeroed scratch of one more than the flat ids, left zeroed)."""
    out = np.empty(hi - lo, dtype=np.int64)
    if hi - lo < 2 or (hi - lo) * 8 < len(starts):  # few pairs: a comparison sort beats a pass over every flat id
        order = np.argsort(pair_flat[lo:hi], kind="mergesort")
        for k in range(hi - lo):
            out[k] = lo + order[k]
        return out
    for i in range(lo, hi):
        starts[pair_flat[i] + 1] += 1
    for f in range(len(starts) - 1):
        starts[f + 1] += starts[f]
    for i in range(lo, hi):
        out[starts[pair_flat[i]]] = i
        starts[pair_flat[i]] += 1
    starts[:] = 0
    return out


@njit(cache=True)
def _partition_map_orders(pair_start, pair_flat, target_start, target_flat, map_table, flat_hash, total):
    """Pass 3: each unit's partition map in Java's order. Partitions enter by ``computeIfAbsent``: the
    held ones as met, then the assignable ones not yet in. Returns ``(key_start, key_flat, tree_units)``;
    units whose map has a tree bin are left to the caller."""
    units = len(pair_start) - 1
    seen = np.full(total, -1, dtype=np.int64)
    key_start = np.zeros(units + 1, dtype=np.int64)
    inserted = np.empty(len(pair_flat) + len(target_flat), dtype=np.int64)
    key_flat = np.empty(len(pair_flat) + len(target_flat), dtype=np.int64)
    tree_units = np.zeros(0, dtype=np.int64)
    write = 0
    looked_up_after = np.zeros(units, dtype=np.bool_)
    for u in range(units):
        n = 0
        for i in range(pair_start[u], pair_start[u + 1]):
            looked_up_after[u] = seen[pair_flat[i]] == u
            if seen[pair_flat[i]] != u:
                seen[pair_flat[i]] = u
                inserted[write + n] = pair_flat[i]
                n += 1
        for i in range(target_start[u], target_start[u + 1]):
            looked_up_after[u] = seen[target_flat[i]] == u
            if seen[target_flat[i]] != u:
                seen[target_flat[i]] = u
                inserted[write + n] = target_flat[i]
                n += 1
        keys = inserted[write:write + n]
        hashes = flat_hash[keys]
        capacity, tree = _java_table(hashes, 0, n, map_table[u], True, looked_up_after[u])
        if tree:
            tree_units = np.append(tree_units, u)
            key_flat[write:write + n] = keys
        else:
            key_flat[write:write + n] = _java_order(keys, hashes, 0, n, capacity, True)
        write += n
        key_start[u + 1] = write
    return key_start, key_flat[:write], tree_units, looked_up_after


@njit(cache=True)
def _fill(pair_start, pair_member, pair_flat, revoked, key_start, key_flat, member_start, members, desired,
          sharing, num_members, total):
    """Pass 4: walk each unit's partition map; a partition with fewer than ``sharing`` holders takes
    members from a round robin over the unit's members still below their count (Java's iterator over
    a ``HashSet<Integer>``: it restarts only after a pass that placed someone, and a member that
    reaches its count leaves). Kafka does not record the new holder in the partition's holder set,
    so a restart within one partition can meet the same member again: that counts as a placement
    without adding anything. Returns ``(member, flat, failed)``: ``failed`` is ``(unit, flat)`` where
    Java's iterator would throw, else ``(-1, -1)``."""
    count = np.zeros(num_members, dtype=np.int64)
    wants = np.zeros(num_members, dtype=np.int64)
    last = np.full(num_members, -1, dtype=np.int64)
    stamp = np.full(num_members, -1, dtype=np.int64)
    key_of_flat = np.full(total, -1, dtype=np.int64)
    bound = 0
    for u in range(len(sharing)):
        bound += (key_start[u + 1] - key_start[u]) * sharing[u]
    out_member = np.empty(bound, dtype=np.int64)
    out_flat = np.empty(bound, dtype=np.int64)
    written = 0
    failed = np.array([-1, -1], dtype=np.int64)
    visit = 0
    for u in range(len(sharing)):
        k0, k1 = key_start[u], key_start[u + 1]
        lo, hi = pair_start[u], pair_start[u + 1]
        # live holders per partition, grouped in map-key order (a counting sort)
        for k in range(k0, k1):
            key_of_flat[key_flat[k]] = k - k0
        holder_start = np.zeros(k1 - k0 + 1, dtype=np.int64)
        for i in range(lo, hi):
            if not revoked[i]:
                holder_start[key_of_flat[pair_flat[i]] + 1] += 1
                count[pair_member[i]] += 1
        for k in range(k1 - k0):
            holder_start[k + 1] += holder_start[k]
        fill = holder_start[:-1].copy()
        holders = np.empty(holder_start[-1], dtype=np.int64)
        for i in range(lo, hi):
            if not revoked[i]:
                k = key_of_flat[pair_flat[i]]
                holders[fill[k]] = pair_member[i]
                fill[k] += 1
        # the members below their count, as a linked list in iteration order
        m0, m1 = member_start[u], member_start[u + 1]
        nxt = np.full(m1 - m0, -1, dtype=np.int64)
        prv = np.full(m1 - m0, -1, dtype=np.int64)
        head = -1
        tail = -1
        for k in range(m0, m1):
            wants[members[k]] = desired[k]
            if count[members[k]] < desired[k]:
                if tail >= 0:
                    nxt[tail] = k - m0
                    prv[k - m0] = tail
                else:
                    head = k - m0
                tail = k - m0
        at = head  # the iterator's next element
        placed = False
        if head >= 0:
            for k in range(k1 - k0):
                h0, h1 = holder_start[k], holder_start[k + 1]
                to_make = sharing[u] - (h1 - h0)
                if to_make > 0:
                    flat = key_flat[k0 + k]
                    visit += 1
                    for h in range(h0, h1):
                        stamp[holders[h]] = visit
                    while to_make > 0:
                        if at < 0:
                            if not placed:
                                break
                            at = head
                            placed = False
                            if at < 0:
                                failed[0] = u
                                failed[1] = flat
                                return out_member[:written], out_flat[:written], failed
                        current = at
                        at = nxt[current]
                        m = members[m0 + current]
                        if stamp[m] != visit:
                            if last[m] != flat:
                                last[m] = flat
                                count[m] += 1
                                out_member[written] = m
                                out_flat[written] = flat
                                written += 1
                            to_make -= 1
                            placed = True
                            if count[m] >= wants[m]:
                                head = unlink(nxt, prv, head, current)
                if head < 0:
                    break
        # clean the scratch for the next unit
        for k in range(m0, m1):
            count[members[k]] = 0
            wants[members[k]] = 0
            last[members[k]] = -1
        for i in range(lo, hi):
            count[pair_member[i]] = 0
    return out_member[:written], out_flat[:written], failed
