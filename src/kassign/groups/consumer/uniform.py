"""``uniform``: Kafka 4's default server-side assignor (``group.consumer.assignors``).

The group coordinator runs it whenever the group changes, to compute every member's
new *target* assignment from the current targets. It aims for balance first (member
counts differ by at most one), then stickiness (a member keeps what it has).

**Every member subscribes to the same topics** (the homogeneous path, exact balance).
With ``P`` partitions and ``M`` members each gets ``P // M`` or one more, and ``P % M``
members (the *extras*) get one more. Which members get the extras is the one rule that
changed between the Kafka releases kassign models (:mod:`kassign.core.releases`):

1. quota: every member's quota is ``P // M``, plus one for the members that get an extra:

   - Kafka 4.0.0: the first ``P % M`` members in the coordinator's member-map order;
   - Kafka 4.0.1, 4.1 and later (KAFKA-18688): the members are visited in that order
     while extras are left; a member's quota includes an extra slot as long as any is
     left, and it keeps the slot if its current partitions fill it (it holds at least
     ``P // M + 1``); a member that does not fill it gives it up for a later member,
     unless the members left, itself included, are no more than the extras left, in which
     case each of them takes one. So a group already balanced keeps every partition where
     it is, and a fresh group gives the extras to the *last* members;

2. each member, in member order, keeps its current partitions up to its quota (with the
   extra slot while it still has one), walking its current target in Java's
   ``HashMap``/``HashSet`` order; the rest are released;
3. partitions nobody holds (topics in the order of Java's ``HashSet`` of the group's
   topic ids, partitions ascending), then the released ones, fill the members below
   their final quota in member order.

Example, 4.0.0: topics ``t0`` (3 partitions), ``t1`` (2); members A, B iterated in that
order, B currently holding ``t0-0, t0-1, t0-2``. Quotas: A 3 (it is first), B 2. B keeps
two of its three and releases one; A, holding nothing, takes ``t1-0, t1-1`` and B's
released partition. Result: A 3 partitions, B 2, two of B's kept, one moved.

The same group, 4.0.1 and later: A's quota has the extra slot (3), but A holds nothing, and
with 2 members left for 1 extra it gives the slot up (quota 2). B's quota has the extra
slot; B holds 3 and keeps all three. A takes ``t1-0, t1-1``. Result: A 2, B 3, nothing
moved. A fresh group of A, B, C on one topic of 5 partitions: 4.0.0 gives A ``0, 1``, B
``2, 3``, C ``4``; 4.0.1 and later give A ``0``, B ``1, 2``, C ``3, 4`` (A gives its
extra slot up, B and C are the last two members for the two extras).

Both rules only decide two quotas per member (what it may keep, what it ends with); the
walks, the release and the fill are one implementation for every release.

**Subscriptions differ** (the heterogeneous path, a heuristic):

1. current partitions of topics a member still subscribes to stay;
2. the rest go topic by topic -- topics ordered by partitions per subscriber
   (descending), then subscriber count (ascending), then topic id -- each partition to
   the least loaded subscriber (ties: member order);
3. up to 16 passes over the topics (same order, subscribed by 2+ members) move a
   topic's partitions from its most to its least loaded subscribers until each topic's
   subscribers differ by at most one.

Balancing one topic at a time can stop short of the most even spread possible (two
topics with overlapping subscribers can each look balanced while the group is not).
kassign reproduces Kafka's result exactly, because that is what a broker will do, and
its assignment report states the most even spread possible beside it.

Racks are ignored, as in every Kafka release kassign models (4.0 to 4.3).

Data layout: members and topics are integers (:mod:`kassign.groups.consumer.group`);
the heterogeneous builder keeps one owner array per topic and a size array per member,
and names are put back only at the edge.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kassign.groups.balancer import (
    HIGH_LEVEL,
    LOW_LEVEL,
    exclude_last_most_loaded,
    next_least_loaded,
    next_most_loaded,
    reset_balancer,
)
from kassign.groups.consumer.group import ServerGroup
from kassign.core.releases import LATEST, KafkaRelease

# Kafka's bound on the heterogeneous balancing passes over the topics.
MAX_BALANCE_PASSES = 16


def uniform_assign(group: ServerGroup, release: KafkaRelease = LATEST) -> np.ndarray:
    """Each partition's owner (member number, -1 none) in the new target, by flat partition id,
    as Kafka ``release``'s coordinator computes it (only the homogeneous path differs by release)."""
    if group.num_members == 0:
        return np.full(int(group.offsets[-1]), -1, dtype=np.int64)
    if group.homogeneous:
        return _homogeneous(group, release.has_kafka_18688)
    return _heterogeneous(group)


# -- every member subscribes to the same topics ---------------------------------------------------

def _homogeneous(group: ServerGroup, keep_extras: bool) -> np.ndarray:
    offsets = group.offsets
    owners = np.full(int(offsets[-1]), -1, dtype=np.int64)
    topics = group.subscription_order(0)
    if not topics:
        return owners
    subscribed = np.zeros(group.num_topics, dtype=bool)
    subscribed[topics] = True
    held = group.current_owner
    # what nobody holds: topics in subscription order, partitions ascending
    rank = np.zeros(group.num_topics, dtype=np.int64)
    rank[topics] = np.arange(len(topics))
    unheld = np.flatnonzero((held < 0) & subscribed[group.topic_of_partition])
    unheld = unheld[np.argsort(rank[group.topic_of_partition[unheld]], kind="stable")]
    total = int(group.num_partitions[topics].sum())
    counts = group.current_counts(subscribed)
    keep_quota, quota = (_quotas_keeping_extras if keep_extras else _quotas_first_get_extras)(counts, total)

    # Members within quota keep everything; only the others walk their target in Java's order.
    keep = subscribed[group.topic_of_partition] & (held >= 0)
    owners[keep] = held[keep]
    over = np.flatnonzero(counts > keep_quota)
    released = _beyond_quota(group, over, keep_quota, subscribed)
    owners[released] = -1
    counts[over] = keep_quota[over]

    # Members below their final quota, in member order, take what nobody holds, then what was released.
    room = quota - counts
    takers = np.repeat(np.arange(group.num_members, dtype=np.int64), room)
    free = np.concatenate([unheld, released])
    owners[free] = takers[:len(free)]
    return owners


def _quotas_first_get_extras(counts: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """Kafka 4.0.0: ``(keep, final)`` quotas per member, both ``P // M`` plus one for the first ``P % M``."""
    base, extra = divmod(total, len(counts))
    quota = np.full(len(counts), base, dtype=np.int64)
    quota[:extra] += 1
    return quota, quota


def _quotas_keeping_extras(counts: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """KAFKA-18688 (4.0.1, 4.1 and later): ``(keep, final)`` quotas per member."""
    base, extra = divmod(total, len(counts))
    keep_quota = np.empty(len(counts), dtype=np.int64)
    quota = np.empty(len(counts), dtype=np.int64)
    _extras_kept_kernel(counts, base, extra, keep_quota, quota)
    return keep_quota, quota


@njit(cache=True)
def _extras_kept_kernel(counts, base, extra, keep_quota, quota):
    """Kafka's visit of the members in order, counting the extras left: while any is left a member
    may keep ``base + 1``; it ends with the extra if it holds that many, or if the members left
    (itself included) are no more than the extras left; otherwise it gives the slot up. One
    compiled pass: a 10,001-member join takes about 17 us here against 70 us for the same rule
    as half a dozen whole-array numpy steps."""
    members = len(counts)
    left = extra
    for i in range(members):
        if left > 0:
            keep_quota[i] = base + 1
            if counts[i] > base or members - i <= left:
                quota[i] = base + 1
                left -= 1
            else:
                quota[i] = base
        else:
            keep_quota[i] = base
            quota[i] = base


def _beyond_quota(group: ServerGroup, over: np.ndarray, quota: np.ndarray, subscribed: np.ndarray) -> np.ndarray:
    """What the members ``over`` their quota release: each walks its current target in Java's order,
    partitions of subscribed topics only, and keeps the first ``quota`` of them; the rest, member by
    member in walk order, are released (as flat ids)."""
    start, topic, partition = group.walk_current_targets(over)
    walker = np.repeat(np.arange(len(over), dtype=np.int64), np.diff(start))
    valid = topic >= 0
    valid[valid] = subscribed[topic[valid]]
    walker, flat = walker[valid], group.offsets[topic[valid]] + partition[valid]
    # rank of each valid pair within its member's walk
    first = np.searchsorted(walker, np.arange(len(over)))
    rank = np.arange(len(walker), dtype=np.int64) - first[walker]
    return flat[rank >= quota[over][walker]]


# -- subscriptions differ ------------------------------------------------------------------------

def _heterogeneous(group: ServerGroup) -> np.ndarray:
    num_topics, num_members = group.num_topics, group.num_members
    sub_start, subscribers = group.subscribers_by_topic

    held = group.current_owner
    # a current partition stays only with a member still subscribed to its topic
    owners = np.full(len(held), -1, dtype=np.int64)
    flat = np.flatnonzero(held >= 0)
    stays = flat[group.subscribes(held[flat], group.topic_of_partition[flat])]
    owners[stays] = held[stays]
    sizes = np.bincount(owners[stays], minlength=num_members).astype(np.int64)

    count = sub_start[1:] - sub_start[:-1]
    per_subscriber = np.zeros(num_topics)
    np.divide(group.num_partitions, count, out=per_subscriber, where=count > 0)
    # partitions per subscriber descending, then subscriber count ascending, then topic id (= number)
    topic_order = np.lexsort((np.arange(num_topics), count, -per_subscriber))
    _heterogeneous_kernel(owners, sizes, group.offsets, sub_start, subscribers, topic_order[count[topic_order] > 0],
                          MAX_BALANCE_PASSES)
    return owners


@njit(cache=True)
def _heterogeneous_kernel(owners, sizes, offsets, sub_start, subscribers, topic_order, max_passes):
    """Kafka's heterogeneous uniform builder on arrays: fill what is unowned, then balance topic by topic."""
    state = np.zeros(8, dtype=np.int64)
    order = np.empty(len(sizes), dtype=np.int64)
    for t in topic_order:
        lo, hi = offsets[t], offsets[t + 1]
        unowned = False
        for flat in range(lo, hi):
            if owners[flat] < 0:
                unowned = True
                break
        if not unowned:
            continue
        members = subscribers[sub_start[t]:sub_start[t + 1]]
        reset_balancer(state, order, sizes, members)
        for flat in range(lo, hi):
            if owners[flat] < 0:
                member = next_least_loaded(state, order, sizes, len(members))
                owners[flat] = member
                sizes[member] += 1

    shared = topic_order[(sub_start[topic_order + 1] - sub_start[topic_order]) >= 2]
    start = np.zeros(len(sizes), dtype=np.int64)
    end = np.zeros(len(sizes), dtype=np.int64)
    last_moved = -1
    for _ in range(max_passes):
        for index in range(len(shared)):
            if index == last_moved:
                return
            t = shared[index]
            moved = _balance_topic(owners[offsets[t]:offsets[t + 1]], sizes, subscribers[sub_start[t]:sub_start[t + 1]],
                                   state, order, start, end)
            if moved > 0 or last_moved == -1:
                last_moved = index


@njit(cache=True)
def _balance_topic(owner, sizes, members, state, order, start, end):
    """Move one topic's partitions from its most to its least loaded subscribers."""
    n = len(members)
    low = high = sizes[members[0]]
    for member in members:  # most topics are balanced already: skip the sort then
        low = min(low, sizes[member])
        high = max(high, sizes[member])
    if high - low <= 1:
        return 0
    reset_balancer(state, order, sizes, members)
    # partitions grouped by owner (ascending), ascending within; each owner gives from its end
    by_owner = np.argsort(owner * len(owner) + np.arange(len(owner)), kind="mergesort")
    for i in range(n):
        start[members[i]] = 0
        end[members[i]] = 0
    for i in range(len(by_owner) - 1, -1, -1):
        start[owner[by_owner[i]]] = i
    for i in range(len(by_owner)):
        end[owner[by_owner[i]]] = i + 1
    moved = 0
    while state[HIGH_LEVEL] - state[LOW_LEVEL] > 1:
        giver = next_most_loaded(state, order, sizes)
        while giver != -1 and end[giver] - start[giver] <= 0:
            exclude_last_most_loaded(state, order)
            giver = next_most_loaded(state, order, sizes)
        if giver == -1:
            break
        end[giver] -= 1
        partition = by_owner[end[giver]]
        taker = next_least_loaded(state, order, sizes, n)
        if state[HIGH_LEVEL] - state[LOW_LEVEL] <= 1:
            break
        sizes[giver] -= 1
        sizes[taker] += 1
        owner[partition] = taker
        moved += 1
    return moved
