"""Optimal sticky assignment when members subscribe to different topics.

Rule, in strict priority order (Kafka's own order: KIP-881 exists to cut cross-rack
traffic, so a rack-mismatched partition is moved even when its owner could keep it):

1. Balance. The per-member partition counts are as even as the subscriptions allow:
   the sorted count vector is the least-majorized one (equivalently, the integer
   assignment with the smallest sum of squared counts).
2. Racks (KIP-881). Among all assignments optimal for 1, the fewest rack mismatches as
   Kafka counts them (``sticky.racks``): a partition at a member that has a rack holding
   none of its replicas. A member without a rack mismatches nothing, so a partition it
   holds is as well placed as at a member on the partition's rack.
3. Stickiness. Among all assignments optimal for 1 and 2, the largest number of
   partitions stay with their rightful previous owner.

Worked example. Topics t0, t1, t2 have 1, 2, 3 partitions;
C0 subscribes to t0, C1 to t0 and t1, C2 to t0, t1 and t2. Fresh::

    C0: t0p0    C1: t1p0 t1p1    C2: t2p0 t2p1 t2p2

Then C0 leaves, everyone else keeps what it owned::

    C1: t0p0 t1p0 t1p1    C2: t2p0 t2p1 t2p2

(loads 3/3; Kafka's heuristic reaches the same here, but on other groups it leaves a
spread of 2 or more where 1 is possible.)

Method. Partitions of one topic only differ by their previous owner and replica racks, so
they are grouped into classes (topic, owner, rack set) and the problem becomes a small
min-cost flow: source -> class -> {its owner directly | the topic's hub | a per-(topic,
rack) node} -> member -> sink, where leaving the owner costs 1 per unit, a mismatch
costs ``rack_miss`` (more than all moves together), and a member's k-th unit
costs ``balance * (2k - 1)`` (``2 * balance`` more than all rack and move costs together),
so the min-cost flow is exactly the lexicographic optimum. See ``sticky.flow`` for the solver. Concrete partitions are then
handed out class by class following the arc flows; within a class every choice is
equally good. Members without a rack sit on one more (topic, rack) node, "no rack", that
every class of the topic reaches without a mismatch; the hub reaches every subscriber at
the cost of one, so a class reaches any member at exactly its mismatch cost.

Hot path: partition numbers, member indexes and class ids are numpy int arrays; the
flow solver is numba-compiled. Racks arrive as a ``RackContext`` (integer arrays); only
``member_racks`` / ``partition_racks`` given as names are read in a loop per partition.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from numba import njit

from kassign.groups.balancer import next_least_loaded, reset_balancer
from kassign.groups.classic.assignors.sticky.flow import build_residual_csr, convex_min_cost_flow
from kassign.groups.classic.assignors.sticky.racks import RackContext, rack_context
from kassign.core.errors import KassignError

log = logging.getLogger(__name__)

# A safe ceiling for any cost or potential the solver computes (int64 with headroom).
_COST_CEILING = 1 << 60


def assign_general(
    num_partitions: np.ndarray,
    subscriptions: list[np.ndarray],
    previous_owner: list[np.ndarray],
    member_racks: list[str | None] | None = None,
    partition_racks: list[list[frozenset[str]]] | None = None,
    *,
    racks: RackContext | None = None,
) -> list[np.ndarray]:
    """Balance-optimal, then rack-optimal, then sticky-optimal assignment.

    ``num_partitions[t]`` is topic ``t``'s partition count, ``subscriptions[m]`` the sorted
    topic indexes member ``m`` subscribes to, ``previous_owner[t][p]`` the member that
    rightfully owned partition ``p`` of topic ``t`` (-1: nobody). Returns, per topic, the
    member index each partition goes to (-1 for topics nobody subscribes to).

    Racks, when they count: either ``racks``, over these member indexes and the partitions
    numbered topic after topic (the engine's, built once Kafka's whole rule says racks
    count), or ``member_racks`` per member and ``partition_racks`` per topic, per partition
    (an empty list: no rack data for the topic), which count when some member's rack holds
    a replica of some subscribed partition.
    """
    counts = _check_counts(num_partitions)
    num_topics, num_members = len(counts), len(subscriptions)
    sub_topic, sub_member = _subscription_pairs(subscriptions, num_topics)
    offsets = np.zeros(num_topics + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    owners = _valid_owners(previous_owner, counts, offsets, sub_topic, sub_member, num_members)
    partition_topic = np.repeat(np.arange(num_topics, dtype=np.int64), counts)
    subscribed_topic = np.zeros(num_topics, bool)
    subscribed_topic[sub_topic] = True

    result = np.full(int(offsets[-1]), -1, np.int64)
    live = np.flatnonzero(subscribed_topic[partition_topic])
    if racks is None and member_racks is not None and partition_racks is not None:
        racks = _named_racks(member_racks, partition_racks, counts, subscribed_topic, num_members)
    elif racks is not None and (len(racks.member_rack) != num_members
                                or racks.partition_on_rack.shape[1] != len(partition_topic)):
        raise KassignError(f"rack data covers {len(racks.member_rack)} members and {racks.partition_on_rack.shape[1]} "
                           f"partitions, the group has {num_members} and {len(partition_topic)}")
    if len(live):
        view = _RackView.build(racks, live) if racks is not None else None
        settled = None if view is not None else _keep_everything(owners, offsets, sub_topic, sub_member, num_members)
        if settled is not None:
            result = settled
        else:
            result[live] = _solve(live, partition_topic, owners, counts, sub_topic, sub_member, num_members, view)
    return [result[offsets[t] : offsets[t + 1]].astype(np.int32) for t in range(num_topics)]


# ---------------------------------------------------------------------------------------------
# The common follow-up: everybody keeps everything


def _keep_everything(owners: np.ndarray, offsets: np.ndarray, sub_topic: np.ndarray, sub_member: np.ndarray,
                     num_members: int) -> np.ndarray | None:
    """The optimum when it keeps every rightfully owned partition, else None.

    Most rebalances of a settled group (everyone re-joins, a member leaves) end with every
    member keeping all it owned and the rest spread over the least loaded subscribers. When
    that result is balance-optimal it is the lexicographic optimum (without racks): nothing
    kept could be kept more. Balance-optimal is checked exactly: a load vector of this kind is
    the most even one iff no member can pass a partition, along a chain of members each
    taking one of the previous one's topics, to a member with at least 2 fewer (Frank and
    Murota's exchange criterion for decreasingly minimal bases). Costs O(partitions +
    subscriptions), against the flow's many phases over one node per (topic, owner)."""
    owned = int(np.count_nonzero(owners >= 0))
    if owned * 2 < len(owners):  # a fresh group: the flow is the right tool
        return None
    topic_start = np.zeros(len(offsets), np.int64)
    np.cumsum(np.bincount(sub_topic, minlength=len(offsets) - 1), out=topic_start[1:])
    by_member = np.argsort(sub_member, kind="stable")
    member_start = np.zeros(num_members + 1, np.int64)
    np.cumsum(np.bincount(sub_member, minlength=num_members), out=member_start[1:])
    result = owners.copy()
    loads = _fill_least_loaded(result, offsets, topic_start, sub_member, num_members)
    if _improving_chain(result, loads, offsets, member_start, sub_topic[by_member]):
        return None
    return result


@njit(cache=True)
def _fill_least_loaded(owner, offsets, topic_start, subscribers, num_members):
    """Unowned partitions of subscribed topics to the least loaded subscriber, topic by topic."""
    loads = np.zeros(num_members, np.int64)
    for p in range(len(owner)):
        if owner[p] >= 0:
            loads[owner[p]] += 1
    state = np.zeros(8, np.int64)
    order = np.empty(num_members, np.int64)
    for t in range(len(offsets) - 1):
        members = subscribers[topic_start[t]:topic_start[t + 1]]
        if len(members) == 0:
            continue
        reset = False
        for p in range(offsets[t], offsets[t + 1]):
            if owner[p] < 0:
                if not reset:
                    reset_balancer(state, order, loads, members)
                    reset = True
                m = next_least_loaded(state, order, loads, len(members))
                owner[p] = m
                loads[m] += 1
    return loads


@njit(cache=True)
def _improving_chain(owner, loads, offsets, member_start, member_topics):
    """Whether some member could pass a partition along subscriptions to one with 2 fewer."""
    num_topics = len(offsets) - 1
    num_members = len(loads)
    # holders of each topic, CSR
    stamp = np.full(num_members, -1, np.int64)
    holder_count = np.zeros(num_topics + 1, np.int64)
    for t in range(num_topics):
        for p in range(offsets[t], offsets[t + 1]):
            m = owner[p]
            if m >= 0 and stamp[m] != t:
                stamp[m] = t
                holder_count[t + 1] += 1
    for t in range(num_topics):
        holder_count[t + 1] += holder_count[t]
    holders = np.empty(holder_count[num_topics], np.int64)
    fill = holder_count[:-1].copy()
    stamp[:] = -1
    for t in range(num_topics):
        for p in range(offsets[t], offsets[t + 1]):
            m = owner[p]
            if m >= 0 and stamp[m] != t:
                stamp[m] = t
                holders[fill[t]] = m
                fill[t] += 1
    # least load reachable from each member, by reverse searches from the least loaded up
    unreached = np.int64(1) << 62
    reach = np.full(num_members, unreached, np.int64)
    topic_seen = np.zeros(num_topics, np.bool_)
    queue = np.empty(num_members, np.int64)
    for root in np.argsort(loads, kind="mergesort"):
        if reach[root] != unreached:
            continue
        reach[root] = loads[root]
        head, tail = 0, 1
        queue[0] = root
        while head < tail:
            x = queue[head]
            head += 1
            for i in range(member_start[x], member_start[x + 1]):
                t = member_topics[i]
                if topic_seen[t]:
                    continue
                topic_seen[t] = True
                for j in range(holder_count[t], holder_count[t + 1]):
                    u = holders[j]
                    if reach[u] == unreached:
                        reach[u] = loads[root]
                        queue[tail] = u
                        tail += 1
    for m in range(num_members):
        if loads[m] >= reach[m] + 2:
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Input checking


def _check_counts(num_partitions: np.ndarray) -> np.ndarray:
    counts = np.asarray(num_partitions, dtype=np.int64).reshape(-1)
    if (counts < 0).any():
        raise KassignError(f"partition counts must be >= 0, got {counts[counts < 0][:3].tolist()}")
    return counts


def _subscription_pairs(subscriptions: Sequence[np.ndarray], num_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (topic, member) subscription pair, sorted by topic then member, duplicates removed."""
    lists = [np.asarray(s, dtype=np.int64).reshape(-1) for s in subscriptions]
    topics = np.concatenate(lists) if lists else np.zeros(0, np.int64)
    members = np.repeat(np.arange(len(lists), dtype=np.int64), [len(s) for s in lists])
    bad = (topics < 0) | (topics >= num_topics)
    if bad.any():
        member = int(members[bad][0])
        raise KassignError(
            f"member {member} subscribes to topic index {int(topics[bad][0])}, but there are only {num_topics} topics"
        )
    keys = _sorted_unique(topics * max(len(lists), 1) + members)
    return keys // max(len(lists), 1), keys % max(len(lists), 1)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` by sorting: numpy 2's hash-based unique is several times slower on a million ints."""
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) else ordered


def _valid_owners(
    previous_owner: Sequence[np.ndarray],
    counts: np.ndarray,
    offsets: np.ndarray,
    sub_topic: np.ndarray,
    sub_member: np.ndarray,
    num_members: int,
) -> np.ndarray:
    """Flat previous owner per partition; owners that left or no longer subscribe become -1."""
    if len(previous_owner) != len(counts):
        raise KassignError(f"previous_owner has {len(previous_owner)} topics, num_partitions has {len(counts)}")
    owners = np.full(int(offsets[-1]), -1, np.int64)
    for t, topic_owners in enumerate(previous_owner):
        topic_owners = np.asarray(topic_owners, dtype=np.int64).reshape(-1)
        if len(topic_owners) != counts[t]:
            raise KassignError(
                f"previous_owner for topic index {t} has {len(topic_owners)} entries, the topic has {counts[t]} partitions"
            )
        owners[offsets[t] : offsets[t + 1]] = topic_owners
    out_of_range = (owners >= num_members) | (owners < -1)
    if out_of_range.any():
        log.warning("ignoring %d previous owners that are not members of the group", int(out_of_range.sum()))
        owners[out_of_range] = -1
    has_owner = owners >= 0
    topic_of = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    pair_keys = sub_topic * max(num_members, 1) + sub_member
    claim_keys = topic_of[has_owner] * max(num_members, 1) + owners[has_owner]
    still_subscribed = np.isin(claim_keys, pair_keys, assume_unique=False)
    owners[np.flatnonzero(has_owner)[~still_subscribed]] = -1
    return owners


# ---------------------------------------------------------------------------------------------
# Racks


def _named_racks(
    member_racks: Sequence[str | None],
    partition_racks: Sequence[Sequence[frozenset[str]]],
    counts: np.ndarray,
    subscribed_topic: np.ndarray,
    num_members: int,
) -> RackContext | None:
    """``rack_context`` from rack names; topics nobody subscribes to do not count."""
    if len(member_racks) != num_members:
        raise KassignError(f"member_racks has {len(member_racks)} entries for {num_members} members")
    per_topic: list[Sequence[frozenset[str]]] = []
    for t, count in enumerate(counts.tolist()):
        racks_of_topic = partition_racks[t] if t < len(partition_racks) else None
        if not racks_of_topic or not subscribed_topic[t]:
            per_topic.append([frozenset()] * count)
            continue
        if len(racks_of_topic) != count:
            raise KassignError(
                f"partition_racks for topic index {t} has {len(racks_of_topic)} entries, the topic has {count} partitions"
            )
        per_topic.append(racks_of_topic)
    return rack_context(member_racks, per_topic, prefer_rack_aware=True)


class _RackView:
    """The live partitions' racks in classes, for the flow network.

    ``partition_set``: per live partition, the id of its rack set (partitions whose replicas
    sit on the same member racks share one). ``member_node_rack``: each member's rack index,
    members without a rack on one more index, ``num_racks - 1``. ``fits[s, r]``: a member on
    rack index ``r`` holds a partition of set ``s`` without a mismatch (``RackContext.mismatched``).
    """

    def __init__(self, partition_set: np.ndarray, member_node_rack: np.ndarray, fits: np.ndarray) -> None:
        self.partition_set = partition_set
        self.member_node_rack = member_node_rack
        self.fits = fits

    @property
    def num_sets(self) -> int:
        return self.fits.shape[0]

    @property
    def num_racks(self) -> int:
        return self.fits.shape[1]

    @classmethod
    def build(cls, racks: RackContext, live: np.ndarray) -> _RackView:
        partition_set, first = _distinct_columns(racks.partition_on_rack[:, live])
        no_rack = racks.partition_on_rack.shape[0]
        member_node_rack = np.where(racks.member_rack >= 0, racks.member_rack, no_rack).astype(np.int64)
        # Any member on a rack index stands for all on it; an index without members keeps False (no node).
        present = np.full(no_rack + 1, -1, np.int64)
        present[member_node_rack] = np.arange(len(member_node_rack))
        fits = np.zeros((len(first), no_rack + 1), bool)
        columns = np.flatnonzero(present >= 0)
        if len(columns):
            fits[:, columns] = ~racks.mismatched(present[columns][None, :], live[first][:, None])
        return cls(partition_set, member_node_rack, fits)


def _distinct_columns(on_rack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For a bool [R, L] matrix: each column's class id, and the first column of each class."""
    packed = np.packbits(on_rack, axis=0)  # [ceil(R / 8), L]
    if packed.shape[0] <= 8:
        key = np.zeros(packed.shape[1], np.uint64)
        for i, row in enumerate(packed):
            key |= row.astype(np.uint64) << np.uint64(8 * i)
    else:
        key = np.ascontiguousarray(packed.T).view(np.dtype((np.void, packed.shape[0]))).reshape(-1)
    _, first, class_id = np.unique(key, return_index=True, return_inverse=True)
    return class_id.reshape(-1).astype(np.int64), first


# ---------------------------------------------------------------------------------------------
# The flow network


class _Network:
    """Arcs collected as flat arrays, with the node numbering of the optimal-sticky network."""

    def __init__(self) -> None:
        self.tails: list[np.ndarray] = []
        self.heads: list[np.ndarray] = []
        self.caps: list[np.ndarray] = []
        self.costs: list[np.ndarray] = []

    def add(self, tails: np.ndarray, heads: np.ndarray, caps: np.ndarray, costs: np.ndarray | int) -> slice:
        """Add arcs; returns their index range."""
        first = sum(len(t) for t in self.tails)
        tails = np.asarray(tails, np.int64)
        self.tails.append(tails)
        self.heads.append(np.asarray(heads, np.int64))
        self.caps.append(np.asarray(caps, np.int64))
        self.costs.append(np.broadcast_to(np.asarray(costs, np.int64), tails.shape).copy())
        return slice(first, first + len(tails))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return tuple(np.concatenate(x) if x else np.zeros(0, np.int64) for x in (self.tails, self.heads, self.caps, self.costs))


def _solve(
    live: np.ndarray,
    partition_topic: np.ndarray,
    owners: np.ndarray,
    counts: np.ndarray,
    sub_topic: np.ndarray,
    sub_member: np.ndarray,
    num_members: int,
    racks: _RackView | None,
) -> np.ndarray:
    """Member index for every live partition (those of subscribed topics)."""
    num_topics = len(counts)
    topic = partition_topic[live]
    owner = owners[live]
    use_racks = racks is not None
    num_sets = racks.num_sets if use_racks else 1
    rack_set = racks.partition_set if use_racks else np.zeros(len(live), np.int64)

    # Partition classes: same topic, same rightful owner, same replica racks.
    class_key = (topic * (num_members + 1) + owner + 1) * num_sets + rack_set
    class_keys, class_of, class_size = np.unique(class_key, return_inverse=True, return_counts=True)
    class_of = class_of.reshape(-1)
    class_topic = class_keys // num_sets // (num_members + 1)
    class_owner = (class_keys // num_sets) % (num_members + 1) - 1
    class_set = class_keys % num_sets
    num_classes = len(class_keys)

    # Weights: each tier must outweigh every possible total of the tiers below it. Stickiness is
    # the lowest tier (1 per partition leaving its owner); one rack mismatch outweighs every move.
    kept_max = int((owner >= 0).sum())
    sticky = 1
    rack_miss = kept_max + 1 if use_racks else 0
    rack_total = len(live) if use_racks else 0
    balance = (rack_miss * rack_total + sticky * kept_max) // 2 + 1
    if balance * (2 * len(live) + 1) * 4 >= _COST_CEILING and use_racks:
        log.warning("rack preference dropped: %d partitions is too many to weigh racks exactly", len(live))
        return _solve(live, partition_topic, owners, counts, sub_topic, sub_member, num_members, None)
    if balance * (2 * len(live) + 1) * 4 >= _COST_CEILING:
        raise KassignError(f"{len(live)} partitions is beyond what the optimal sticky solver can weigh exactly")

    # Node numbering: 0 source, then classes, topic hubs, (topic, rack) nodes, members.
    hub_of_topic = np.full(num_topics, -1, np.int64)
    subscribed = np.unique(sub_topic)
    hub_of_topic[subscribed] = 1 + num_classes + np.arange(len(subscribed))
    next_node = 1 + num_classes + len(subscribed)
    # Rack nodes: one per (topic, rack) pair that some subscriber of the topic sits on ("no rack"
    # included: members without a rack mismatch nothing).
    num_racks = racks.num_racks if use_racks else 0
    rack_node_of = np.full((num_topics, max(num_racks, 1)), -1, np.int64)
    if use_racks:
        pair_rack = racks.member_node_rack[sub_member]
        keys = np.unique(sub_topic * num_racks + pair_rack)
        rack_node_of[keys // num_racks, keys % num_racks] = next_node + np.arange(len(keys))
        next_node += len(keys)
        fits = racks.fits
    first_member = next_node
    num_nodes = first_member + num_members

    net = _Network()
    class_nodes = 1 + np.arange(num_classes, dtype=np.int64)
    net.add(np.zeros(num_classes, np.int64), class_nodes, class_size, 0)
    # Class -> arcs, in the order partitions of a class are handed out: owner, racks, hub.
    class_arcs: list[tuple[slice, np.ndarray, int]] = []
    owned = np.flatnonzero(class_owner >= 0)
    owner_cost = 0
    if use_racks:
        owner_fits = fits[class_set[owned], racks.member_node_rack[class_owner[owned]]]
        owner_cost = np.where(owner_fits, 0, rack_miss)
    class_arcs.append((net.add(class_nodes[owned], first_member + class_owner[owned], class_size[owned], owner_cost), owned, 0))
    if use_racks:
        reachable = fits[class_set] & (rack_node_of[class_topic] >= 0)
        classes, rack = np.nonzero(reachable)  # by class, then rack
        heads = rack_node_of[class_topic[classes], rack]
        class_arcs.append((net.add(class_nodes[classes], heads, class_size[classes], sticky), classes, 1))
    all_classes = np.arange(num_classes, dtype=np.int64)
    hub_cost = sticky + rack_miss
    class_arcs.append((net.add(class_nodes, hub_of_topic[class_topic], class_size, hub_cost), all_classes, 2))
    # Hub / rack node -> member arcs: each member reached from a hub holds what it gets from there.
    spread = [net.add(hub_of_topic[sub_topic], first_member + sub_member, counts[sub_topic], 0)]
    if use_racks:
        spread.append(net.add(rack_node_of[sub_topic, pair_rack], first_member + sub_member, counts[sub_topic], 0))

    tails, heads, caps, costs = net.arrays()
    start, head, cap, cost, rev, forward_pos = build_residual_csr(num_nodes, tails, heads, caps, costs)
    load = convex_min_cost_flow(start, head, cap, cost, rev, first_member, num_members, balance, len(live))
    if int(load.sum()) != len(live):
        raise AssertionError("optimal sticky flow could not place every partition")  # unreachable: arcs are uncapped
    flow = caps - cap[forward_pos]
    return _hand_out(class_of, class_arcs, spread, flow, heads, tails, first_member)


def _hand_out(
    class_of: np.ndarray,
    class_arcs: list[tuple[slice, np.ndarray, int]],
    spread: list[slice],
    flow: np.ndarray,
    heads: np.ndarray,
    tails: np.ndarray,
    first_member: int,
) -> np.ndarray:
    """Turn arc flows into one member per partition (partitions keep their order inside a class)."""
    # Step 1: each class's partitions, in partition order, follow its out-arcs in order.
    arc_ids = np.concatenate([np.arange(s.start, s.stop) for s, _, _ in class_arcs])
    arc_class = np.concatenate([classes for _, classes, _ in class_arcs])
    arc_rank = np.concatenate([np.full(len(classes), rank) for _, classes, rank in class_arcs])
    order = np.lexsort((arc_rank, arc_class))
    by_class = np.argsort(class_of, kind="stable")
    next_node = np.empty(len(class_of), np.int64)
    next_node[by_class] = np.repeat(heads[arc_ids[order]], flow[arc_ids[order]])
    # Step 2: partitions parked on a hub or rack node go on to members, following that node's arcs.
    member = next_node - first_member
    parked = np.flatnonzero(next_node < first_member)
    if len(parked):
        spread_ids = np.concatenate([np.arange(s.start, s.stop) for s in spread])
        spread_order = spread_ids[np.lexsort((heads[spread_ids], tails[spread_ids]))]
        parked = parked[np.argsort(next_node[parked], kind="stable")]
        member[parked] = np.repeat(heads[spread_order], flow[spread_order]) - first_member
    return member
