"""replica -> broker on KRaft: the controller's striped placement of new partitions.

Since Kafka runs without ZooKeeper, the controller places the replicas of a new topic
(CreateTopics) and of partitions added to a topic (CreatePartitions) with its striped
placer; from Kafka 4.1 on (KAFKA-18798) ``kafka-reassign-partitions.sh --generate`` uses it
too (before that it used the AdminUtils rule of ``kassign.replicas.placement``).

Which release does what: the placements are the same in every release from 3.0 to 4.4 (the
class moved package in 3.3 and returned richer objects later, nothing that changes a replica
list). 3.0 to 3.2 shipped KRaft as early access, not for production (KIP-833 made it
production-ready in 3.3); their controller already placed this way. Two refusals were
reworded in 4.3.0 (KAFKA-19774, KIP-1066: a broker whose log directories are all cordoned
takes no new replicas, so the messages name that case too); 3.0 to 4.2 word them as before.

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
brokers (fenced ones count). From 4.3 the controller also leaves out a broker whose log
directories are all cordoned, as it always left out one that is shutting down: such
brokers are not in the list at all.

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

from collections.abc import Sequence

from kassign.replicas.brokers import StripedBroker
from kassign.core.errors import KassignError, ReplicaPlacementError
from kassign.core.releases import KAFKA_19774
from kassign.core.javaorder import JavaOrderUndefined, hashmap_positions, java_string_hash, java_string_key
from kassign.core.javarandom import JavaRandom, java_shuffle

SHORT_MAX = (1 << 15) - 1
SHORT_MIN = -(1 << 15)
_INVALID_RF = "InvalidReplicationFactorException"
_EQUAL_HASHES = (
    "9 or more rack names share one Java hash bucket and some of them have equal Java hash codes; "
    "Kafka orders those by object identity, which changes from run to run, so its placement cannot be "
    "reproduced: rename the racks"
)


# --- input --------------------------------------------------------------------------------


def check_striped_request(brokers: Sequence[StripedBroker], replication_factor: int,
                          messages: str = KAFKA_19774) -> None:
    """Kafka's three refusals, in Kafka's order, in the words of the release whose ``messages`` rule is given
    (:data:`kassign.core.releases.STRIPED_MESSAGES`)."""
    cordoned = messages == KAFKA_19774
    if replication_factor <= 0:
        raise ReplicaPlacementError(
            f"Invalid replication factor {replication_factor}: the replication factor must be positive.", _INVALID_RF)
    if not any(not fenced for _, _, fenced in brokers):
        raise ReplicaPlacementError(
            "All brokers are currently fenced" + (", or have all their log directories cordoned." if cordoned else "."),
            _INVALID_RF)
    if replication_factor > len(brokers):
        raise ReplicaPlacementError(
            f"The target replication factor of {replication_factor} cannot be reached because only {len(brokers)} "
            f"broker(s) are registered" + (" or some brokers have all their log directories cordoned." if cordoned
                                           else "."),
            _INVALID_RF)


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
        try:
            self.hash_order = hashmap_positions([0 if n is None else java_string_hash(n) for n in names])
        except JavaOrderUndefined:
            raise KassignError(_EQUAL_HASHES) from None
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
    brokers: Sequence[StripedBroker], num_partitions: int, replication_factor: int, rng: JavaRandom,
    messages: str = KAFKA_19774,
) -> list[list[int]]:
    """Replica lists for ``num_partitions`` new partitions, in partition order, leader first.

    ``brokers`` must already be normalised (``normalise_striped_brokers``). The setup draws
    happen before Kafka's checks, exactly as in Kafka (they cannot change whether it refuses).
    ``messages``: how a refusal reads (the release's :data:`~kassign.core.releases.STRIPED_MESSAGES` rule).
    """
    placer = StripedPlacer(brokers, rng)
    check_striped_request(brokers, replication_factor, messages)
    return [placer.place(replication_factor) for _ in range(num_partitions)]
