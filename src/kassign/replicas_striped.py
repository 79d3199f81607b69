"""replica -> broker on KRaft: the controller's striped placement of new partitions.

Since Kafka runs without ZooKeeper, the controller places the replicas of a new topic
(CreateTopics) and of partitions added to a topic (CreatePartitions) with its striped
placer. ``kafka-reassign-partitions.sh --generate`` still uses the older rule in
``kassign.replicas``.

The rule
--------
Brokers are grouped by rack (brokers without a rack form one more rack). Within a rack
there are two queues, unfenced brokers and fenced ones, each sorted by id. Racks are sorted
by name, the rack-less one first.

Setup, drawing from one ``java.util.Random``: every non-empty queue gets a random start
position (fenced queue before unfenced queue, racks visited in the order of Java's
``HashMap`` over the rack names), then the rack list gets a random start position.

Each partition, in turn:

1. The leader is the next broker of the unfenced queue of the rack at the current start
   position; a rack with no unfenced broker left passes the turn to the next rack.
2. Followers are taken one per rack, going round the racks from the start position and
   skipping the leader's rack once; each rack gives its next unfenced broker, or if none
   is left its next fenced broker, or, with both queues used up, nothing (the next rack
   is asked).
3. The rack start position moves on by one. That diagonal walk is the "stripe".

Each queue hands out every broker at most once per partition "round"; a new round moves
that queue's own start on by one. After as many partitions as there are unfenced brokers
(when more than one), the rack list and every queue are shuffled and the round counter
starts again from zero. A queue last used in round 0 and not touched since keeps its
position into the next round 0, which is why the pattern is not a perfect rotation.

Kafka refuses, with InvalidReplicationFactorException, checked in this order: a
replication factor below 1; no unfenced broker; a replication factor above the number of
brokers (fenced ones count).

Worked example
--------------
Brokers ``(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c"), (5, "c")``, none fenced,
4 partitions, replication factor 3, seed 1. The setup draws give the unfenced queues the
start positions a: 1 (broker 1), b: 0 (broker 2), c: 0 (broker 4), and the rack list the
start position 0 (rack a)::

    partition 0: [1, 2, 4]     racks a, b, c   every queue at its drawn start
    partition 1: [3, 5, 0]     racks b, c, a   new round: each queue moves on by one
    partition 2: [4, 1, 2]     racks c, a, b
    partition 3: [0, 3, 5]     racks a, b, c   the rack start wraps round

Leaders walk a, b, c, a over the racks, and every partition has one replica per rack.

Data layout
-----------
The hot path works on integer lists only: rack names become positions, each rack's two
queues are lists of broker ids at list numbers ``2 * rack`` (unfenced) and
``2 * rack + 1`` (fenced), and the per-queue cursor, start and round live in three
parallel integer lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kassign.errors import KassignError, ReplicaPlacementError
from kassign.javaorder import java_string_key
from kassign.javarandom import JavaRandom, java_shuffle

StripedBroker = tuple[int, "str | None", bool]

INT_MAX = (1 << 31) - 1
SHORT_MAX = (1 << 15) - 1
SHORT_MIN = -(1 << 15)
_INVALID_RF = "InvalidReplicationFactorException"


# --- Java's HashMap iteration order over the rack names -------------------------------------


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: ``h = 31 * h + unit`` over the UTF-16 code units, as a signed int."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h > INT_MAX else h


def _spread(hash_code: int) -> int:
    """HashMap's bucket hash: the high half folded into the low half; a signed int."""
    h = hash_code & 0xFFFFFFFF
    h ^= h >> 16
    return h - (1 << 32) if h > INT_MAX else h


_EQUAL_HASHES = (
    "9 or more rack names share one Java hash bucket and some of them have equal Java hash codes; "
    "Kafka orders those by object identity, which changes from run to run, so its placement cannot be "
    "reproduced: rename the racks"
)


class _TreeBin:
    """A HashMap bin that grew past 8 entries on a table of 64+ buckets.

    Java then keeps the bin as a red-black tree ordered by hash, and iteration follows a
    linked list threaded through it whose order depends on the tree's shape (the root
    always moves to the front). Here only the shape and that list are kept. Java breaks
    ties between equal hashes by identity hash codes, which differ from run to run, so a
    bin with two equal hashes has no reproducible order and is refused.
    """

    __slots__ = ("order", "left", "right", "parent", "red", "root")

    def __init__(self, items: list[tuple[int, int]]) -> None:
        self.order: list[tuple[int, int]] = []
        self._build(items)

    def _build(self, items: list[tuple[int, int]]) -> None:
        if len({h for h, _ in items}) < len(items):
            raise KassignError(_EQUAL_HASHES)
        self.left: dict[tuple[int, int], tuple[int, int] | None] = {}
        self.right: dict[tuple[int, int], tuple[int, int] | None] = {}
        self.parent: dict[tuple[int, int], tuple[int, int] | None] = {}
        self.red: dict[tuple[int, int], bool] = {}
        self.root: tuple[int, int] | None = None
        for item in items:
            self._insert(item)
        self.order = list(items)
        self._root_to_front()

    def _root_to_front(self) -> None:
        self.order.remove(self.root)  # type: ignore[arg-type]
        self.order.insert(0, self.root)  # type: ignore[arg-type]

    def _insert(self, x: tuple[int, int]) -> tuple[int, int] | None:
        """Plain binary-search-tree insert by hash, then Java's rebalancing; returns the parent."""
        self.left[x] = self.right[x] = None
        if self.root is None:
            self.parent[x] = None
            self.red[x] = False
            self.root = x
            return None
        p = self.root
        while True:
            go_left = p[0] > x[0]
            child = self.left[p] if go_left else self.right[p]
            if child is None:
                self.parent[x] = p
                if go_left:
                    self.left[p] = x
                else:
                    self.right[p] = x
                self._rebalance(x)
                return p
            p = child

    def add(self, x: tuple[int, int]) -> None:
        if any(h == x[0] for h, _ in self.order):
            raise KassignError(_EQUAL_HASHES)
        parent = self._insert(x)
        self.order.insert(self.order.index(parent) + 1, x)  # type: ignore[arg-type]
        self._root_to_front()

    def _rotate(self, p: tuple[int, int], to_left: bool) -> None:
        near, far = (self.left, self.right) if to_left else (self.right, self.left)
        r = far[p]
        if r is None:
            return
        inner = near[r]
        far[p] = inner
        if inner is not None:
            self.parent[inner] = p
        pp = self.parent[p]
        self.parent[r] = pp
        if pp is None:
            self.root = r
            self.red[r] = False
        elif self.left[pp] == p:
            self.left[pp] = r
        else:
            self.right[pp] = r
        near[r] = p
        self.parent[p] = r

    def _rebalance(self, x: tuple[int, int]) -> None:
        self.red[x] = True
        while True:
            xp = self.parent[x]
            if xp is None:
                self.red[x] = False
                self.root = x
                return
            xpp = self.parent[xp]
            if not self.red[xp] or xpp is None:
                return
            xp_is_left = self.left[xpp] == xp
            uncle = self.right[xpp] if xp_is_left else self.left[xpp]
            if uncle is not None and self.red[uncle]:
                self.red[uncle] = self.red[xp] = False
                self.red[xpp] = True
                x = xpp
                continue
            inner = self.right[xp] if xp_is_left else self.left[xp]
            if x == inner:
                x = xp
                self._rotate(x, to_left=xp_is_left)
                xp = self.parent[x]
                xpp = None if xp is None else self.parent[xp]
            if xp is not None:
                self.red[xp] = False
                if xpp is not None:
                    self.red[xpp] = True
                    self._rotate(xpp, to_left=not xp_is_left)


def java_hashmap_order(hash_codes: Sequence[int]) -> list[int]:
    """Positions of distinct keys, put in this order into a new ``java.util.HashMap``, in the
    order the map iterates them. ``hash_codes`` are the keys' ``hashCode()`` values.

    Buckets are visited in index order (``spread(hash) & (capacity - 1)``); a bucket lists
    its keys in insertion order. The table starts at 16 buckets and doubles when it holds
    more than 3/4 of its capacity, or when one bucket reaches 9 keys on a table below 64
    buckets; from 64 buckets on such a bucket becomes a tree bin instead (``_TreeBin``).
    """
    capacity, threshold = 16, 12
    bins: dict[int, list[tuple[int, int]] | _TreeBin] = {}

    def resize() -> None:
        nonlocal capacity, threshold, bins
        capacity, threshold = capacity * 2, threshold * 2
        old, bins = bins, {}
        for index in sorted(old):
            content = old[index]
            items = content.order if isinstance(content, _TreeBin) else content
            halves: dict[int, list[tuple[int, int]]] = {}
            for item in items:
                halves.setdefault(item[0] & (capacity - 1), []).append(item)
            for new_index, part in halves.items():
                if isinstance(content, _TreeBin) and len(part) > 6:
                    # stays a tree: rebuilt only if the bin really split, else kept as it was
                    bins[new_index] = _TreeBin(part) if len(halves) > 1 else content
                else:
                    bins[new_index] = part

    for position, hash_code in enumerate(hash_codes):
        item = (_spread(hash_code), position)
        index = item[0] & (capacity - 1)
        content = bins.get(index)
        if content is None:
            bins[index] = [item]
        elif isinstance(content, _TreeBin):
            content.add(item)
        else:
            content.append(item)
            if len(content) > 8:
                if capacity < 64:
                    resize()
                else:
                    bins[index] = _TreeBin(content)
        if position + 1 > threshold:
            resize()
    order: list[int] = []
    for index in sorted(bins):
        content = bins[index]
        order.extend(position for _, position in (content.order if isinstance(content, _TreeBin) else content))
    return order


# --- input --------------------------------------------------------------------------------


def normalise_striped_brokers(brokers: Iterable[Any]) -> list[StripedBroker]:
    """``[(id, rack_or_None, fenced), ...]`` checked; ``(id, rack)`` pairs and bare ids are unfenced."""
    result: list[StripedBroker] = []
    seen: set[int] = set()
    for entry in brokers:
        if isinstance(entry, int) and not isinstance(entry, bool):
            fields: tuple[Any, ...] = (entry, None, False)
        elif isinstance(entry, (tuple, list)) and len(entry) in (2, 3):
            fields = tuple(entry) if len(entry) == 3 else (entry[0], entry[1], False)
        else:
            raise KassignError(f"a broker must be (id, rack_or_None, fenced) or (id, rack_or_None), got {entry!r}")
        broker_id, rack, fenced = fields
        if not isinstance(broker_id, int) or isinstance(broker_id, bool) or not 0 <= broker_id <= INT_MAX:
            raise KassignError(f"broker id must be a whole number from 0 to {INT_MAX}, got {broker_id!r}")
        if rack is not None and (not isinstance(rack, str) or not rack):
            raise KassignError(f"broker {broker_id}: rack must be a non-empty string or None, got {rack!r}")
        if not isinstance(fenced, bool):
            raise KassignError(f"broker {broker_id}: fenced must be True or False, got {fenced!r}")
        if broker_id in seen:
            raise KassignError(f"broker {broker_id} is listed twice")
        seen.add(broker_id)
        result.append((broker_id, rack, fenced))
    return result


def check_striped_request(brokers: Sequence[StripedBroker], replication_factor: int) -> None:
    """Kafka's three refusals, in Kafka's order."""
    if replication_factor <= 0:
        raise ReplicaPlacementError(
            f"Replication factor {replication_factor} is not positive; every partition needs at least one replica.",
            _INVALID_RF,
        )
    if not any(not fenced for _, _, fenced in brokers):
        what = f"all {len(brokers)} brokers are fenced" if brokers else "there are no brokers"
        raise ReplicaPlacementError(
            f"No unfenced broker to lead the new partitions: {what}.", _INVALID_RF
        )
    if replication_factor > len(brokers):
        raise ReplicaPlacementError(
            f"Replication factor {replication_factor} needs that many brokers, "
            f"but only {len(brokers)} are registered (fenced ones included).",
            _INVALID_RF,
        )


# --- the placer ---------------------------------------------------------------------------


class StripedPlacer:
    """The controller's per-request placement state over one broker list and one random source.

    ``rng`` is anything with ``next_int(bound)`` drawn as ``java.util.Random`` does
    (``JavaRandom`` or a subclass). Building the placer makes the setup draws; each
    ``place(rf)`` call places one partition.
    """

    def __init__(self, brokers: Sequence[StripedBroker], rng: JavaRandom) -> None:
        self.rng = rng
        rack_of: dict[str | None, int] = {}
        queues: list[list[int]] = []
        for broker_id, rack, fenced in brokers:
            r = rack_of.get(rack)
            if r is None:
                r = rack_of[rack] = len(rack_of)
                queues.append([])
                queues.append([])
            queues[2 * r + (1 if fenced else 0)].append(broker_id)
        names = list(rack_of)
        # racks in java.util.HashMap order: the order of the setup draws and of every shuffle
        self.hash_order = java_hashmap_order([0 if n is None else java_string_hash(n) for n in names])
        self.queues = queues
        count = len(queues)
        self.cursor = [0] * count
        self.start = [0] * count
        self.round = [0] * count
        for r in self.hash_order:
            for q in (2 * r + 1, 2 * r):
                if queues[q]:
                    queues[q].sort()
                    self.start[q] = rng.next_int(len(queues[q]))
        self.racks = sorted(range(len(names)), key=lambda r: (names[r] is not None, java_string_key(names[r] or "")))
        self.num_racks = len(names)
        self.num_brokers = len(brokers)
        self.num_unfenced = sum(1 for _, _, fenced in brokers if not fenced)
        self.offset = rng.next_int(self.num_racks) if self.num_racks else 0
        self.epoch = 0

    def _take(self, q: int, epoch: int) -> int:
        """The next broker of queue ``q`` in round ``epoch``, or -1 when it has none left."""
        queue = self.queues[q]
        size = len(queue)
        if not size:
            return -1
        if self.round[q] != epoch:
            self.round[q] = epoch
            self.cursor[q] = 0
            self.start[q] = (self.start[q] + 1) % size
        i = self.cursor[q]
        if i >= size:
            return -1
        self.cursor[q] = i + 1
        return queue[(i + self.start[q]) % size]

    def _shuffle(self) -> None:
        java_shuffle(self.racks, self.rng)
        for r in self.hash_order:
            java_shuffle(self.queues[2 * r + 1], self.rng)
            java_shuffle(self.queues[2 * r], self.rng)

    def place(self, replication_factor: int) -> list[int]:
        """One partition's replicas, leader first (the request was checked beforehand)."""
        if self.epoch == self.num_unfenced and self.num_unfenced > 1:
            self._shuffle()
            self.epoch = 0
        num_racks = self.num_racks
        if self.offset == num_racks:
            self.offset = 0
        epoch, racks, take = self.epoch, self.racks, self._take
        leader_rack = self.offset
        for _ in range(num_racks):
            leader = take(2 * racks[leader_rack], epoch)
            if leader >= 0:
                break
            leader_rack = (leader_rack + 1) % num_racks
        else:
            raise self._stuck()
        replicas = [leader]
        rack_index = self.offset
        for _ in range(replication_factor - 1):
            follower = -1
            misses = 0
            while follower < 0:
                if rack_index == leader_rack:
                    leader_rack = -1
                else:
                    r = racks[rack_index]
                    follower = take(2 * r, epoch)
                    if follower < 0:
                        follower = take(2 * r + 1, epoch)
                    if follower < 0:
                        misses += 1
                        if misses > num_racks:
                            raise self._stuck()
                rack_index = (rack_index + 1) % num_racks
            replicas.append(follower)
        self.epoch += 1
        self.offset += 1
        return replicas

    @staticmethod
    def _stuck() -> KassignError:
        # Every queue has answered "none left" for this round; Kafka's loop would never end here.
        return KassignError(
            "striped placement cannot finish: every broker queue is used up for this round "
            "(Kafka's controller would loop forever on this request)"
        )


def place_striped(
    brokers: Sequence[StripedBroker], num_partitions: int, replication_factor: int, rng: JavaRandom
) -> list[list[int]]:
    """Replica lists for ``num_partitions`` new partitions, in partition order, leader first.

    ``brokers`` must already be normalised (``normalise_striped_brokers``). The setup draws
    happen before Kafka's checks, exactly as in Kafka (they cannot change whether it refuses).
    """
    placer = StripedPlacer(brokers, rng)
    check_striped_request(brokers, replication_factor)
    return [placer.place(replication_factor) for _ in range(num_partitions)]
