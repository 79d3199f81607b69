"""``uniform``: Kafka 4's default server-side assignor (``group.consumer.assignors``).

The group coordinator runs it whenever the group changes, to compute every member's
new *target* assignment from the current targets. It aims for balance first (member
counts differ by at most one), then stickiness (a member keeps what it has).

**Every member subscribes to the same topics** (the homogeneous path, exact balance):

1. quota: ``P // M`` partitions per member, and the first ``P % M`` members, in the
   coordinator's member-map order, get one more;
2. each member, in that order, keeps its current partitions up to its quota, walking
   its current target in Java's ``HashMap``/``HashSet`` order; the rest are released;
3. partitions nobody holds (topics in the order of Java's ``HashSet`` of the group's
   topic ids, partitions ascending), then the released ones, fill the members below
   quota in member order.

Example: topics ``t0`` (3 partitions), ``t1`` (2); members A, B iterated in that
order, B currently holding ``t0-0, t0-1, t0-2``. Quotas: A 3, B 2. B keeps two of its
three and releases one; A, holding nothing, takes ``t1-0, t1-1`` and B's released
partition. Result: A 3 partitions, B 2, two of B's kept.

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

Racks are ignored, as in Kafka 4.0.

Data layout: members and topics are integers (:mod:`kassign.assignors.server.group`);
the heterogeneous builder keeps one owner array per topic and a size array per member,
and names are put back only at the edge.
"""

from __future__ import annotations

import numpy as np

from kassign.assignors.server.group import ServerGroup

# Kafka's bound on the heterogeneous balancing passes over the topics.
MAX_BALANCE_PASSES = 16


def uniform_assign(group: ServerGroup) -> list[np.ndarray]:
    """Each topic's partition owners (member numbers, -1 none) in the new target."""
    if group.num_members == 0:
        return [np.full(int(n), -1, dtype=np.int64) for n in group.num_partitions]
    if group.homogeneous:
        return _homogeneous(group)
    return _heterogeneous(group)


# -- every member subscribes to the same topics ---------------------------------------------------

def _homogeneous(group: ServerGroup) -> list[np.ndarray]:
    owners = [np.full(int(n), -1, dtype=np.int64) for n in group.num_partitions]
    topics = group.subscription_order(0)
    if not topics:
        return owners
    subscribed = set(topics)
    held = group.current_owner
    unassigned: list[tuple[int, int]] = []
    for t in topics:
        unassigned.extend((t, int(p)) for p in np.flatnonzero(held[t] < 0))
    total = int(sum(int(group.num_partitions[t]) for t in topics))
    base, extra = divmod(total, group.num_members)

    unfilled: list[tuple[int, int]] = []
    for member in range(group.num_members):
        quota = base + (1 if member < extra else 0)
        for t, partitions in _current_target(group, member, held, subscribed, quota):
            if t not in subscribed:
                continue
            keep, release = partitions[:quota], partitions[quota:]
            quota -= len(keep)
            owners[t][keep] = member
            unassigned.extend((t, p) for p in release)
        if quota > 0:
            unfilled.append((member, quota))

    cursor = 0
    for member, quota in unfilled:
        for t, p in unassigned[cursor:cursor + quota]:
            owners[t][p] = member
        cursor += quota
    return owners


def _current_target(group: ServerGroup, member: int, held: list[np.ndarray], subscribed: set[int], quota: int):
    """The member's current target; Java's iteration order is worked out only when it can matter."""
    mine = [(t, np.flatnonzero(held[t] == member)) for t in subscribed]
    if sum(len(p) for _, p in mine) <= quota:
        return [(t, list(p)) for t, p in mine if len(p)]
    return group.current_target(member)


# -- subscriptions differ ------------------------------------------------------------------------

def _heterogeneous(group: ServerGroup) -> list[np.ndarray]:
    sizes = [0] * group.num_members
    subscribers: dict[int, list[int]] = {}
    for member, topics in enumerate(group.subscriptions):
        for t in topics:
            subscribers.setdefault(t, []).append(member)
    if not subscribers:
        return [np.full(int(n), -1, dtype=np.int64) for n in group.num_partitions]
    owners = [[-1] * int(n) for n in group.num_partitions]
    held = group.current_owner
    for t in subscribers:
        for p in np.flatnonzero(held[t] >= 0):
            member = int(held[t][p])
            if t in group.subscriptions[member]:
                owners[t][p] = member
                sizes[member] += 1

    def topic_order(topics) -> list[int]:
        # partitions per subscriber descending (as Java doubles), subscribers ascending, topic id
        return sorted(topics, key=lambda t: (-(int(group.num_partitions[t]) / len(subscribers[t])),
                                             len(subscribers[t]), t))

    balancer = _Balancer(sizes)
    for t in topic_order(t for t in subscribers if -1 in owners[t]):
        balancer.reset(subscribers[t])
        for p, owner in enumerate(owners[t]):
            if owner == -1:
                member = balancer.next_least_loaded()
                owners[t][p] = member
                sizes[member] += 1

    shared = topic_order(t for t in subscribers if len(subscribers[t]) >= 2)
    if shared:
        _balance_topics(shared, owners, sizes, subscribers, balancer)
    return [np.array(o, dtype=np.int64) for o in owners]


def _balance_topics(topics: list[int], owners: list[list[int]], sizes: list[int],
                    subscribers: dict[int, list[int]], balancer: _Balancer) -> None:
    """Passes over the topics until a whole pass moves nothing (or the pass limit)."""
    last_moved = -1
    for _ in range(MAX_BALANCE_PASSES):
        for index, t in enumerate(topics):
            if index == last_moved:
                return
            moved = _balance_topic(owners[t], sizes, subscribers[t], balancer)
            if moved or last_moved == -1:
                last_moved = index


def _balance_topic(owner: list[int], sizes: list[int], members: list[int], balancer: _Balancer) -> int:
    """Move one topic's partitions from its most to its least loaded subscribers."""
    if balancer.reset(members) <= 1:
        return 0
    # partitions grouped by owner (ascending), ascending within; each owner gives from its end
    by_owner = sorted(range(len(owner)), key=lambda p: (owner[p], p))
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    for i, p in enumerate(by_owner):
        start.setdefault(owner[p], i)
        end[owner[p]] = i + 1
    moved = 0
    while not balancer.balanced():
        giver = balancer.next_most_loaded()
        while giver != -1 and end.get(giver, 0) - start.get(giver, 0) <= 0:
            balancer.exclude_last_most_loaded()
            giver = balancer.next_most_loaded()
        if giver == -1:
            break
        end[giver] -= 1
        partition = by_owner[end[giver]]
        taker = balancer.next_least_loaded()
        if balancer.balanced():
            break
        sizes[giver] -= 1
        sizes[taker] += 1
        owner[partition] = taker
        moved += 1
    return moved


class _Balancer:
    """Hands out the least loaded and most loaded of one topic's subscribers, in turn.

    Members are sorted by (load, member number). The least loaded range grows from the
    left: each member in it gets one partition per level, then the level rises and
    members at the new level join. The most loaded range grows from the right in the
    same way, one partition taken per member per level. The order is fixed at reset;
    loads are read live, as partitions move. Members with nothing of the topic to give
    are swapped out of the most loaded range.
    """

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.order: list[int] = []

    def reset(self, members: list[int]) -> int:
        sizes = self.sizes
        self.order = order = sorted(members, key=lambda m: (sizes[m], m))
        n = len(order)
        self.low_end = 0
        self.low_level = sizes[order[0]] - 1
        self.low_next = 0
        self.high_start = n
        self.high_end = n
        self.high_level = sizes[order[-1]] + 1
        self.high_next = n - 1
        return sizes[order[-1]] - sizes[order[0]]

    def next_least_loaded(self) -> int:
        order, sizes = self.order, self.sizes
        if self.low_next >= self.low_end:
            self.low_level += 1
            while self.low_end < len(order) and sizes[order[self.low_end]] == self.low_level:
                self.low_end += 1
            self.low_next = 0
        member = order[self.low_next]
        self.low_next += 1
        return member

    def next_most_loaded(self) -> int:
        order, sizes = self.order, self.sizes
        if self.high_next < self.high_start:
            if self.high_end <= self.high_start and self.high_start > 0:
                # every member of the range was excluded: restart from the next member's level
                self.high_level = sizes[order[self.high_start - 1]]
            else:
                self.high_level -= 1
            while self.high_start > 0 and sizes[order[self.high_start - 1]] == self.high_level:
                self.high_start -= 1
            self.high_next = self.high_end - 1
        if self.high_next < 0:
            return -1
        member = order[self.high_next]
        self.high_next -= 1
        return member

    def exclude_last_most_loaded(self) -> None:
        """Swap the member just returned by ``next_most_loaded`` out of the most loaded range."""
        order = self.order
        i, last = self.high_next + 1, self.high_end - 1
        order[i], order[last] = order[last], order[i]
        self.high_end -= 1

    def balanced(self) -> bool:
        return self.high_level - self.low_level <= 1
