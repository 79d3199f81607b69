"""Kafka 4.1's rule of the share-group ``simple`` assignor: a member per partition by the hash of
its id, current holdings kept up to a count, the rest dealt round robin.

:mod:`kassign.groups.share.simple` is the assignor (both rules, with a worked example where they
differ); :func:`~kassign.groups.share.simple.simple_assign` runs this module's
:func:`hashed_assign` for a 4.1 release (``rule(release, SHARE_SIMPLE)``), on the same group,
scenario checks, assignable partitions and subscription orders as 4.2 and later.

Members are the integers of :class:`~kassign.groups.consumer.group.ServerGroup`, numbered in the
coordinator's member-map order (Kafka's ``memberIds()``); partitions are flat ids. The one Java
hash order that matters on the homogeneous path is that of the map of current holders (keys
``TopicIdPartition``, put by ``computeIfAbsent``: :func:`~kassign.groups.share.common._java_table`
replays it); on the heterogeneous path it is the map of subscribing members (keys the ids' strings).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kassign.core.javaorder import hash_iteration_order, hashmap_positions
from kassign.groups.consumer.group import ServerGroup
from kassign.groups.share.common import (
    ShareAssignorError,
    _java_order,
    _java_table,
    homogeneous_targets,
    partition_name,
    partitions_of,
    subscription_topics,
    unlink,
)

_MASK32 = 0xFFFFFFFF
_NONE = (np.zeros(0, np.int64), np.zeros(0, np.int64))


def hashed_assign(group: ServerGroup, scenario, assignable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kafka 4.1's new target as pairs ``(member numbers, flat ids)``, each pair once (``group`` has members)."""
    hashes = scenario.members.java_id_hashes()[group.given_position]  # by member number
    if group.homogeneous:
        return _homogeneous(group, scenario, assignable, hashes)
    return _heterogeneous(group, scenario, assignable, hashes)


def hash_picks(id_hashes: np.ndarray, sizes: np.ndarray | int) -> np.ndarray:
    """Each member's place in its list of ``sizes`` partitions: ``abs(hashCode % size)`` in Java's
    ``int`` arithmetic (the remainder takes the sign of the hash)."""
    signed = np.asarray(id_hashes, dtype=np.int64)
    signed = np.where(signed >= 1 << 31, signed - (1 << 32), signed)
    return np.abs(signed) % sizes


# -- homogeneous ----------------------------------------------------------------------------------

def _homogeneous(group: ServerGroup, scenario, assignable: np.ndarray,
                 hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    listed = homogeneous_targets(group, scenario, assignable)
    if listed is None:
        return _NONE
    targets, subscribed = listed
    num = group.num_members
    members = np.arange(num, dtype=np.int64)
    # the balanced count, rounded up; the round robin lets a member reach it plus one
    desired = (len(targets) + num - 1) // num
    hashed = targets[hash_picks(hashes, len(targets))] if len(targets) else np.zeros(0, np.int64)
    keep_member, keep_flat = _kept_homogeneous(group, subscribed, hashed, max(desired - 1, 0))
    claimed = np.zeros(int(group.offsets[-1]), dtype=bool)
    claimed[hashed] = True
    claimed[keep_flat] = True
    unassigned = targets[~claimed[targets]]
    sizes = np.bincount(keep_member, minlength=num) + (1 if len(targets) else 0)
    dealt = _deal_with_count(sizes, len(unassigned), desired)
    if len(dealt) < len(unassigned):
        raise _inconsistent(group, int(unassigned[len(dealt)]))
    hashed_members = members if len(targets) else np.zeros(0, np.int64)
    return (np.concatenate([hashed_members, keep_member, dealt]),
            np.concatenate([hashed, keep_flat, unassigned]))


def _kept_homogeneous(group: ServerGroup, subscribed: np.ndarray, hashed: np.ndarray,
                      room: int) -> tuple[np.ndarray, np.ndarray]:
    """The current holdings that stay: walked in the order of Kafka's map of current holders, a member
    keeps a partition of a topic it still subscribes to that no member was hashed to, up to ``room``
    of them (its hashed partition fills the rest of its count)."""
    num = group.num_members
    start, key, partition = group.walk_current_keys(np.arange(num, dtype=np.int64))
    if not len(key) or room == 0:
        return _NONE
    owner = np.repeat(np.arange(num, dtype=np.int64), np.diff(start))
    place = _holder_map_places(group, key, partition)
    exists = key < group.num_topics
    flat = np.where(exists, group.offsets[np.minimum(key, group.num_topics - 1)] + partition, -1)
    taken = np.zeros(int(group.offsets[-1]) + 1, dtype=bool)
    taken[hashed] = True
    eligible = np.flatnonzero(exists & subscribed[np.where(exists, key, 0)] & ~taken[flat])
    # within one partition the holders are listed in member order, which ``owner`` already is
    by_member = eligible[np.lexsort((place[eligible], owner[eligible]))]
    first = np.searchsorted(owner[by_member], owner[by_member], side="left")
    kept = by_member[np.arange(len(by_member)) - first < room]
    return owner[kept], flat[kept]


def _holder_map_places(group: ServerGroup, key: np.ndarray, partition: np.ndarray) -> np.ndarray:
    """Per walked pair, its key's place in the iteration of ``HashMap<TopicIdPartition, List<String>>``
    filled by ``computeIfAbsent`` in walk order (a new key first in its bucket)."""
    width = int(partition.max()) + 1
    code = key * width + partition
    distinct, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    by_insertion = np.argsort(first, kind="stable")
    inserted = distinct[by_insertion]
    topic_hash = group.current.key_hashes[inserted // width]
    hashes = (31 * topic_hash + inserted % width) & _MASK32  # a record's hashCode: 31 * h(topicId) + partition
    # computeIfAbsent grows a full table even for a key it finds: only a call after the last insertion counts
    looked_up_after = bool(first[inverse[-1]] != len(code) - 1)
    capacity, tree = _java_table(hashes, 0, len(hashes), 16, True, looked_up_after)
    if tree:
        order = np.array(hashmap_positions(hashes.tolist(), compute_if_absent=True,
                                           looked_up_after=looked_up_after), dtype=np.int64)
    else:
        order = _java_order(np.arange(len(hashes), dtype=np.int64), hashes, 0, len(hashes), capacity, True)
    place_of_inserted = np.empty(len(hashes), dtype=np.int64)
    place_of_inserted[order] = np.arange(len(hashes))
    place_of_distinct = np.empty(len(hashes), dtype=np.int64)
    place_of_distinct[by_insertion] = place_of_inserted
    return place_of_distinct[inverse]


@njit(cache=True)
def _deal_with_count(sizes, count, desired):
    """The members (ascending numbers, round and round) that take ``count`` partitions one by one: a
    member takes one while it holds at most ``desired``, else leaves the round. Fewer than ``count``
    when every member has left (Kafka throws there)."""
    num = len(sizes)
    nxt = np.arange(1, num + 1, dtype=np.int64)
    nxt[num - 1] = -1
    prv = np.arange(-1, num - 1, dtype=np.int64)
    head = 0 if num else -1
    out = np.empty(count, dtype=np.int64)
    at = head
    i = 0
    while i < count:
        if at < 0:
            at = head
            if head < 0:
                return out[:i]
        m = at
        at = nxt[m]
        if sizes[m] <= desired:
            sizes[m] += 1
            out[i] = m
            i += 1
        else:
            head = unlink(nxt, prv, head, m)
    return out


def _inconsistent(group: ServerGroup, flat: int) -> ShareAssignorError:
    return ShareAssignorError(
        "Kafka 4.1's simple assignor throws PartitionAssignorException (\"Inconsistent number of member IDs\") "
        f"on this group: every member passed its count while {partition_name(group, flat)} was still to be dealt "
        "(current targets holding partitions that are not initialized leave too little room)",
        "PartitionAssignorException")


# -- heterogeneous --------------------------------------------------------------------------------

def _heterogeneous(group: ServerGroup, scenario, assignable: np.ndarray,
                   hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    members = scenario.members
    listing_of = np.asarray(members.subscription, dtype=np.int64)[group.given_position]  # by member number
    index = dict(zip(group.topic_names, range(group.num_topics)))
    lists = [partitions_of(group, subscription_topics(index, listing), assignable) for listing in members.subscriptions]
    sizes = np.array([len(p) for p in lists], dtype=np.int64)
    listed = np.array([len(listing) > 0 for listing in members.subscriptions], dtype=bool)
    # which topics each subscription reads (those with an assignable partition in its list)
    topic_of_flat = group.topic_of_partition
    reads = np.zeros((len(lists), group.num_topics), dtype=bool)
    for s, flats in enumerate(lists):
        reads[s, topic_of_flat[flats]] = True

    # the map of subscribing members: those listing any topic, put in member order, iterated by id hash
    joined = np.flatnonzero(listed[listing_of])
    order = joined[hash_iteration_order(hashes[joined])]
    # step 1: each member hashed onto one partition of its own list
    hashing = order[sizes[listing_of[order]] > 0]
    picks = hash_picks(hashes[hashing], sizes[listing_of[hashing]])
    list_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    hashed = np.concatenate([*lists, np.zeros(0, np.int64)])[list_start[listing_of[hashing]] + picks]
    total = int(group.offsets[-1])
    taken = np.zeros(total, dtype=bool)
    taken[hashed] = True
    # step 2: round robin, topic by topic, over partitions nobody was hashed to nor holds now
    current = group.current
    exists = current.key < group.num_topics
    cur_member = current.member[exists]
    cur_flat = group.offsets[current.key[exists]] + current.partition[exists]
    held = np.zeros(total, dtype=bool)
    held[cur_flat] = True
    dealt_member, dealt_flat = _round_robin_by_topic(order, listing_of, reads, assignable & ~taken & ~held,
                                                    topic_of_flat)
    # step 3: current holdings of topics the member still reads, unless someone was hashed to them
    keep = reads[listing_of[cur_member], topic_of_flat[cur_flat]] & ~taken[cur_flat]
    kept = np.unique(cur_member[keep] * total + cur_flat[keep])  # a member may list a partition twice
    return (np.concatenate([hashing, dealt_member, kept // total]),
            np.concatenate([hashed, dealt_flat, kept % total]))


def _round_robin_by_topic(order: np.ndarray, listing_of: np.ndarray, reads: np.ndarray, open_flat: np.ndarray,
                          topic_of_flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each topic's open partitions (ascending) dealt to its readers in member-map order, from the first
    reader again for every topic."""
    pair_topic, pair_member = np.nonzero(reads[listing_of[order]].T)  # topic-major, readers in map order
    pair_member = order[pair_member]
    start = np.searchsorted(pair_topic, np.arange(reads.shape[1] + 1))
    readers = np.diff(start)
    flats = np.flatnonzero(open_flat & (readers[topic_of_flat] > 0))
    topic = topic_of_flat[flats]
    first_of_topic = np.searchsorted(topic, topic, side="left")
    turn = (np.arange(len(flats)) - first_of_topic) % np.maximum(readers[topic], 1)
    return pair_member[start[topic] + turn], flats
