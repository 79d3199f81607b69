"""Where Kafka's Java producer puts a record without a key, as each release does (KIP-480, KIP-794, KIP-1123).

A keyless record is not hashed: the producer keeps one *sticky* partition per topic, sends keyless records
there, and moves on after a while. When it moves, and where to, changed twice:

- **3.0-3.2, KIP-480** (``DefaultPartitioner`` with ``StickyPartitionCache``): the sticky partition changes
  when the producer has to open a new batch on it, that is when the record at hand does not fit the
  partition's open batch (``batch.size`` bytes), or the partition has no open batch. The record then goes to
  the new partition, drawn at random among the *available* partitions (those with a leader), never the one
  it leaves when two or more are available (the draw is repeated until it differs). With none available it is
  drawn among all partitions. Keyed records fill the same batches: a keyed record that opens a new batch on
  the current sticky partition moves the sticky partition too (the partitioner hears of every new batch).
  The very first keyless record of a topic draws twice: once to have a sticky partition, once more because
  that partition has no batch yet.
- **3.3 and later, KIP-794** (``BuiltInPartitioner``): the sticky partition changes once ``batch.size``
  bytes of keyless records went to it; the record that reaches the mark stays, the next one goes to a
  partition drawn at random among the available ones (all of them when none is). The draw may give the same
  partition again. Keyed records do not touch it.
- **4.4, KIP-1123**: with ``partitioner.rack.aware=true`` and ``client.rack`` set, the draw is made among the
  available partitions whose leader is in the producer's rack; where none is, among all available ones, as
  without it. A leader without a rack is in no rack. Off by default; ``partitioner.rack.aware`` without
  ``client.rack`` is a configuration error in Kafka, and so here.

Every uniform draw is ``candidates[r % len(candidates)]`` with ``r`` a non-negative random int (Kafka:
``toPositive(ThreadLocalRandom.nextInt())``); here ``r`` is ``nextInt() & 0x7fffffff`` of a
``java.util.Random`` seeded by the caller (``seed``), or any source of such ints (``draw``), so a run can be
repeated. Candidates are taken in partition order. (Kafka's producer takes them in the order of its metadata's
``HashMap`` of every topic's partitions, which one topic alone does not fix: the chances are the same, the
partition a given ``r`` picks may not be.)

Worked example (4.4, KIP-1123): 6 partitions whose leaders sit in racks ``a, b, c, a, b, c``; a producer with
``client.rack=b`` and ``partitioner.rack.aware=true`` draws among partitions 1 and 4 only. With draws 0, 1, 2
and ``batch.size`` 1000, records of 400 bytes go to 1, 1, 1 (the third reaches 1200 >= 1000, then the draw 1
picks 4), 4, 4, 4, then 1 (draw 2). Rack-unaware, draws 0, 1, 2 would pick partitions 0, 1, 2. Under 3.x's
KIP-480 with the same draws: the first record draws 0 (partition 0) and then 1 (no batch yet on 0: partition
1), and records 1 and 2 fit its batch (800 bytes); record 3 does not (1200 > 1000), so it opens a batch on
partition 2.

**Adaptive partitioning (3.3 and later, KIP-794's ``partitioner.adaptive.partitioning.enable``, on by
default).** Once it has made a batch for every partition of the topic, Kafka's producer weights the draw by how
much waits for each partition, as its sender thread last saw it. kassign does so when the caller gives ``queue_sizes``: per partition, the batches waiting in the
producer's accumulator (Kafka counts batches, the length of each partition's queue, not bytes), and
optionally ``unavailable``, the partitions whose leader has not been ready to send for longer than
``partitioner.availability.timeout.ms`` (0, the default, leaves none out). Then:

- The partitions taking part are those with a leader, in the order the accumulator visits them (its
  ``java.util.HashMap`` of queues: partition order up to 65,536 partitions, beyond that ordered by
  ``p ^ (p >> 16)``), less the unavailable ones -- but a partition is left out only when its queue is not
  empty: Kafka looks at a leader's latency only for partitions with a batch waiting. A partition left out
  hands its place to the next one taking part, and if that one's queue is empty it inherits the queue size
  of the one left out (Kafka writes a size only for queues that hold batches); kassign does the same.
- Each gets the weight ``longest + 1 - its queue`` (``longest``: the longest queue taking part), so a
  partition with the longest queue still gets 1, and one with an empty queue the most. The weights are summed
  in that order into a running table, and the draw ``r % total`` picks the first partition whose running sum
  is greater than it.
- There is no table, and the draw stays uniform, when the topic has a single partition, when every partition
  with a leader is left out, or when every partition has a leader, none is left out and all queues are
  equally long.
- 4.4 with ``partitioner.rack.aware``: a second table is built the same way over the partitions taking part
  whose leader is in ``client.rack`` (weights from the longest queue among them), and the draw uses it when it
  has any; otherwise the whole table. Whether there is a table at all is still decided over every partition.

Without ``queue_sizes`` kassign draws uniformly, as today: every partition is taken to be equally fast. That
is what Kafka does too before its sender has queued a batch for every partition of the topic, with adaptive
partitioning off, or with a custom partitioner -- and what its weights come to when every queue is equally
long. Queue sizes are a snapshot the caller gives (``set_queue_sizes`` replaces it): the records kassign
places are not added to them, as there is no sender to drain them.

Worked example (adaptive): 5 partitions, all led, queues ``5, 0, 3, 0, 1``: weights ``1, 6, 3, 6, 5``,
running table ``1, 7, 10, 16, 21``. The draw 7 gives ``7 % 21 = 7``; the first sum above 7 is 10: partition 2.
Over any 21 consecutive draws partition 0 is picked once, 1 six times, 2 three times, 3 six, 4 five. With
partition 0 unavailable (its queue is not empty) and partition 1's queue empty, partition 1 takes 0's place
with queue size 5: table ``1, 4, 10, 15`` over partitions 1, 2, 3, 4.

Not modelled, for want of brokers and a clock: when the sender's passes happen (the caller says what it saw),
batches sent before they are full (``linger.ms``: here a batch stays open until a record does not fit it),
KIP-794 deferring a switch while the partition's last batch is not full (it switches at twice ``batch.size``
at the latest), and the per-record overhead Kafka counts on top of key, value and header bytes. Sizes are the
bytes given.

Data layout: per topic, numpy int arrays of candidate partitions (and, adaptive, of the running table and its
partitions); per record, ints. ``place`` takes arrays of sizes and keyed partitions (-1 for keyless) and
returns an int32 array of partitions. ``keyless_weights`` gives each partition's weight in the next draw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kassign.core.errors import KassignError, shown
from kassign.core.javarandom import JavaRandom, check_seed
from kassign.core.releases import (DEFAULT_KAFKA_VERSION, KEYLESS, KEYLESS_RACKS, KIP_480, KIP_794, KIP_1123,
                                   KafkaRelease, ReleaseLike, release_for, rule)

__all__ = ["NO_LEADER", "KeylessProducer", "keyless_rule", "keyless_targets", "keyless_weights", "counted_queue_sizes",
           "check_rack_awareness", "check_queue_sizes"]

_JAVA_INT_MAX = 2**31 - 1
_NO_BATCH = -1  # KIP-480: a partition without an open batch


class _NoLeader:
    """A partition without a leader right now (not available to the sticky partitioner)."""

    _instance: _NoLeader | None = None

    def __new__(cls) -> _NoLeader:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_LEADER"


NO_LEADER = _NoLeader()
Leaders = Sequence[Any]  # per partition: its leader's rack (str), None (a leader without a rack) or NO_LEADER


def check_rack_awareness(release: KafkaRelease, rack_aware: bool, client_rack: str | None) -> None:
    """One line where ``partitioner.rack.aware`` cannot be asked: a release before 4.4, or no ``client.rack``."""
    if not isinstance(rack_aware, bool):
        raise KassignError(f"partitioner.rack.aware must be true or false, got {shown(rack_aware)}")
    if client_rack is not None and not isinstance(client_rack, str):
        raise KassignError(f"client.rack must be a rack name, got {shown(client_rack)}")
    if not rack_aware:
        return
    if rule(release, KEYLESS_RACKS) != KIP_1123:
        raise KassignError(f"partitioner.rack.aware came with Kafka 4.4 (KIP-1123); Kafka {release.label}'s "
                           f"producer has no such setting: drop it or pass --kafka-version 4.4")
    if client_rack is None or not client_rack.strip():
        raise KassignError("partitioner.rack.aware needs client.rack (the producer's rack), as Kafka refuses it "
                           "without one")


def keyless_rule(kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION, rack_aware: bool = False) -> str:
    """The rule placing keyless records: ``"kip-480"``, ``"kip-794"`` or ``"kip-1123"`` (rack-aware, 4.4)."""
    release = release_for(kafka_version, "classic")
    if rack_aware and rule(release, KEYLESS_RACKS) == KIP_1123:
        return KIP_1123
    return rule(release, KEYLESS)


def _leaders(leaders: Leaders | None, partitions: int) -> tuple[Any, ...]:
    if leaders is None:
        return ("",) * partitions  # every partition led, racks unknown
    if isinstance(leaders, (str, bytes)) or not isinstance(leaders, Sequence):
        raise KassignError(f"leaders must be a list with one entry per partition, got {shown(leaders)}")
    out = tuple(leaders)
    if len(out) != partitions:
        raise KassignError(f"leaders name {len(out)} partitions, the topic has {partitions}")
    for entry in out:
        if entry is not None and entry is not NO_LEADER and not isinstance(entry, str):
            raise KassignError(f"a leader's rack must be a rack name, None (no rack) or NO_LEADER, got {shown(entry)}")
    return out


def keyless_targets(leaders: Leaders, client_rack: str | None = None, rack_aware: bool = False) -> np.ndarray:
    """The partitions a keyless record can land on: those led in ``client_rack`` (rack-aware) where there are
    any, else every partition with a leader, else every partition (partition order)."""
    entries = _leaders(leaders, len(leaders))
    available = np.array([p for p, r in enumerate(entries) if r is not NO_LEADER], np.int32)
    if rack_aware and client_rack:
        in_rack = available[[entries[p] == client_rack for p in available.tolist()]] if len(available) else available
        if len(in_rack):
            return in_rack
    return available if len(available) else np.arange(len(entries), dtype=np.int32)


# -- adaptive partitioning (KIP-794): the running tables the sender's pass builds ---------------------------------

_HASHMAP_IN_ORDER = 1 << 16  # up to this many partitions, java.util.HashMap visits 0..n-1 in partition order


def _visit_order(partitions: int) -> np.ndarray:
    """The order the accumulator visits a topic's partitions in: its ``java.util.HashMap`` keyed by partition
    holds every partition 0..n-1 in a table larger than n, each in the bucket ``p ^ (p >>> 16)`` (no two share
    one), and iterates bucket by bucket."""
    order = np.arange(partitions, dtype=np.int64)
    if partitions <= _HASHMAP_IN_ORDER:
        return order
    return order[np.argsort(order ^ (order >> 16), kind="stable")]


def check_queue_sizes(release: KafkaRelease, partitions: int, queue_sizes: Any,
                      unavailable: Any = None) -> tuple[tuple[int, ...] | None, frozenset[int]]:
    """``queue_sizes`` (batches waiting, one per partition) and ``unavailable`` (partitions) as checked ints, or
    one line saying what is wrong: a release without adaptive partitioning, a wrong count, a bad number."""
    if queue_sizes is None:
        if unavailable is not None and len(_as_list(unavailable, "unavailable")):
            raise KassignError("unavailable partitions are left out by the adaptive draw only: give the queue sizes "
                               "too (Kafka checks its leaders' latency while it weighs their queues)")
        return None, frozenset()
    if rule(release, KEYLESS) == KIP_480:
        raise KassignError(f"adaptive partitioning (queue sizes) came with Kafka 3.3 (KIP-794); Kafka "
                           f"{release.label}'s sticky partitioner draws uniformly: drop the queue sizes or pass "
                           "--kafka-version 3.3 or later")
    sizes = _as_list(queue_sizes, "queue sizes")
    if len(sizes) != partitions:
        raise KassignError(f"queue sizes name {len(sizes)} partitions, the topic has {partitions}")
    for size in sizes:
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or not 0 <= size <= _JAVA_INT_MAX:
            raise KassignError(f"a queue size is a number of batches from 0 to {_JAVA_INT_MAX}, got {shown(size)}")
    left_out = set()
    for p in _as_list(unavailable, "unavailable") if unavailable is not None else ():
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or not 0 <= p < partitions:
            raise KassignError(f"unavailable partition {shown(p)} is not one of the topic's {partitions}")
        left_out.add(int(p))
    return tuple(int(s) for s in sizes), frozenset(left_out)


def _as_list(values: Any, what: str) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray, set, frozenset)):
        raise KassignError(f"{what} must be a list of whole numbers, got {shown(values)}")
    return list(values.tolist() if isinstance(values, np.ndarray) else values)


def _running_table(sizes: list[int], partitions: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Weights ``longest + 1 - size`` summed in order: (running sums, their partitions)."""
    longest = max(sizes)
    cumulative = np.cumsum(np.array([longest + 1 - s for s in sizes], dtype=np.int64))
    if cumulative[-1] > _JAVA_INT_MAX:
        raise KassignError(f"these queue sizes make Kafka's table of weights sum to {int(cumulative[-1])}, past a "
                           f"Java int ({_JAVA_INT_MAX}): Kafka's draw is then no weighted draw; give queue sizes "
                           "in batches, as Kafka counts them")
    return cumulative, np.array(partitions, dtype=np.int32)


def _accumulator_pass(entries: Sequence[Any], queue_sizes: tuple[int, ...],
                      unavailable: frozenset[int]) -> tuple[list[int], list[int], list[Any]]:
    """The partitions taking part, in the pass's order, with the queue sizes it counted and their leaders."""
    n = len(entries)
    sizes = [0] * n
    ids = [0] * n
    racks: list[Any] = [None] * n
    slot = -1
    for p in _visit_order(n).tolist():
        leader = entries[p]
        if leader is NO_LEADER:
            continue  # no place in the table
        slot += 1
        ids[slot] = p
        racks[slot] = leader
        if queue_sizes[p] == 0:
            continue  # an empty queue: nothing written, nothing checked (the slot keeps what it held)
        sizes[slot] = queue_sizes[p]
        if p in unavailable:
            slot -= 1  # the next partition taking part overwrites this place
    return ids[:slot + 1], sizes[:slot + 1], racks[:slot + 1]


def _load_table(entries: Sequence[Any], queue_sizes: tuple[int, ...] | None, unavailable: frozenset[int],
                rack: str | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The table the next draw uses, as the sender's pass over the accumulator leaves it (``rack``: the
    producer's, rack-aware only), or None for a uniform draw."""
    if queue_sizes is None:
        return None
    ids, sizes, racks = _accumulator_pass(entries, queue_sizes, unavailable)
    if not ids or len(entries) < 2:
        return None
    if len(ids) == len(entries) and min(sizes) == max(sizes):
        return None
    if rack is not None:
        in_rack = [i for i in range(len(ids)) if racks[i] == rack]
        if in_rack:
            return _running_table([sizes[i] for i in in_rack], [ids[i] for i in in_rack])
    return _running_table(sizes, ids)


def _entries(leaders: Leaders | None, partitions: int | None, who: str) -> tuple[Any, ...]:
    if leaders is None and partitions is None:
        raise KassignError(f"{who} needs the leaders or the partition count")
    if leaders is not None and partitions is None:
        partitions = len(_leaders(leaders, len(leaders) if isinstance(leaders, Sequence) else 0))
    if not isinstance(partitions, (int, np.integer)) or isinstance(partitions, bool) or partitions < 1:
        raise KassignError(f"partitions must be a whole number from 1, got {shown(partitions)}")
    return _leaders(leaders, int(partitions))


def counted_queue_sizes(leaders: Leaders | None, queue_sizes: Any, unavailable: Any = None,
                        kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION, partitions: int | None = None) -> np.ndarray:
    """The queue size Kafka's pass counts for each partition taking part in the adaptive draw, -1 for those
    that do not (no leader, or left out): the given size, except where a partition with an empty queue follows
    one left out and inherits its size. Example: ``counted_queue_sizes(None, [5, 0, 3], [0], partitions=3)``
    is ``[-1, 5, 3]``."""
    entries = _entries(leaders, partitions, "counted_queue_sizes")
    sizes, left_out = check_queue_sizes(release_for(kafka_version, "classic"), len(entries), queue_sizes, unavailable)
    counted = np.full(len(entries), -1, np.int64)
    if sizes is not None:
        ids, seen, _ = _accumulator_pass(entries, sizes, left_out)
        counted[ids] = seen
    return counted


def keyless_weights(leaders: Leaders | None, queue_sizes: Any = None, unavailable: Any = None,
                    client_rack: str | None = None, rack_aware: bool = False,
                    kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION, partitions: int | None = None) -> np.ndarray:
    """Each partition's weight in the producer's next draw of its sticky partition (int64, one per partition;
    the chance is weight / sum, 0 never): adaptive with ``queue_sizes`` (3.3 and later), else 1 for each of
    ``keyless_targets``. ``leaders`` None: ``partitions`` partitions, all led, no racks.

    Example: ``keyless_weights(None, [5, 0, 3, 0, 1], partitions=5)`` is ``[1, 6, 3, 6, 5]``."""
    release = release_for(kafka_version, "classic")
    check_rack_awareness(release, rack_aware, client_rack)
    entries = _entries(leaders, partitions, "keyless_weights")
    sizes, left_out = check_queue_sizes(release, len(entries), queue_sizes, unavailable)
    weights = np.zeros(len(entries), np.int64)
    table = _load_table(entries, sizes, left_out, client_rack if rack_aware else None)
    if table is None:
        weights[keyless_targets(entries, client_rack, rack_aware)] = 1
    else:
        cumulative, ids = table
        weights[ids] = np.diff(cumulative, prepend=0)
    return weights


def _size(size: Any) -> int:
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        raise KassignError(f"a record's size must be a whole number of bytes >= 0, got {shown(size)}")
    return int(size)


class KeylessProducer:
    """One producer's keyless records on one topic of ``partitions`` partitions, as ``kafka_version`` places them.

    ``leaders``: per partition, its leader's rack, None for a leader without a rack, ``NO_LEADER`` for none
    (default: every partition led, no racks). ``seed`` seeds the ``java.util.Random`` drawn from; ``draw``
    (a callable returning non-negative ints) replaces it. ``queue_sizes`` (batches waiting per partition) and
    ``unavailable`` (partitions whose leader is past ``partitioner.availability.timeout.ms``) make the draws
    adaptive, 3.3 and later (None: uniform); ``set_queue_sizes`` replaces them, ``weights`` shows them.
    ``keyless(size)`` places one keyless record, ``keyed(partition, size)`` tells the producer about a keyed
    one (KIP-480 only: it shares batches), ``place(sizes, keyed)`` does either for arrays of records in order.
    """

    def __init__(self, partitions: int, *, kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION,
                 batch_size: int = 16384, leaders: Leaders | None = None, client_rack: str | None = None,
                 rack_aware: bool = False, seed: int = 0, draw: Callable[[], int] | None = None,
                 queue_sizes: Any = None, unavailable: Any = None) -> None:
        if not isinstance(partitions, (int, np.integer)) or isinstance(partitions, bool) or not 1 <= partitions <= _JAVA_INT_MAX:
            raise KassignError(f"partitions must be a whole number from 1 to {_JAVA_INT_MAX}, got {shown(partitions)}")
        if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool) or not 0 <= batch_size <= _JAVA_INT_MAX:
            raise KassignError(f"batch.size must be a whole number from 0 to {_JAVA_INT_MAX}, got {shown(batch_size)}")
        self.release = release_for(kafka_version, "classic")
        check_rack_awareness(self.release, rack_aware, client_rack)
        self.partitions = int(partitions)
        self.rule = KIP_1123 if rack_aware else rule(self.release, KEYLESS)
        self.kip480 = self.rule == KIP_480
        # KIP-480 batches hold batch.size bytes (0: one record each); the built-in partitioner counts at least 1
        self.batch_size = int(batch_size) if self.kip480 else max(1, int(batch_size))
        self.client_rack = client_rack
        self.rack_aware = rack_aware
        if draw is None:
            rng = JavaRandom(check_seed(seed))
            draw = lambda: rng.next_bits(32) & 0x7FFFFFFF  # noqa: E731  toPositive(nextInt())
        self._draw = draw
        self._leaders: tuple[Any, ...] = ()
        self._available = self._candidates = np.zeros(0, np.int32)
        self._queue_sizes, self._unavailable = check_queue_sizes(self.release, self.partitions, queue_sizes,
                                                                 unavailable)
        self._table: tuple[np.ndarray, np.ndarray] | None = None
        self.set_leaders(leaders)
        self.current: int | None = None  # the sticky partition, None before the first draw
        self._produced = 0  # KIP-794: keyless bytes sent to the current sticky partition
        self._fill = np.full(self.partitions, _NO_BATCH, np.int64) if self.kip480 else None

    # -- the cluster --------------------------------------------------------------------------------------------

    def set_leaders(self, leaders: Leaders | None) -> None:
        """The partitions' leaders from now on (Kafka re-reads its metadata; a draw uses the latest). With queue
        sizes, the adaptive table is rebuilt on them, as the sender's next pass would."""
        entries = _leaders(leaders, self.partitions)
        if entries == self._leaders:
            return
        self._leaders = entries
        self._available = np.array([p for p, r in enumerate(entries) if r is not NO_LEADER], np.int32)
        self._candidates = self._available
        if self.rack_aware and len(self._available):
            in_rack = self._available[[entries[p] == self.client_rack for p in self._available.tolist()]]
            if len(in_rack):
                self._candidates = in_rack
        self._update_table()

    def set_queue_sizes(self, queue_sizes: Any, unavailable: Any = None) -> None:
        """What the sender's latest pass saw, from now on (Kafka: ``RecordAccumulator.ready`` handing the queue
        sizes to ``updatePartitionLoadStats``): batches waiting per partition, and the partitions whose leader is
        past ``partitioner.availability.timeout.ms``. None: uniform draws again."""
        self._queue_sizes, self._unavailable = check_queue_sizes(self.release, self.partitions, queue_sizes,
                                                                 unavailable)
        self._update_table()

    def _update_table(self) -> None:
        self._table = _load_table(self._leaders, self._queue_sizes, self._unavailable,
                                  self.client_rack if self.rack_aware else None)

    @property
    def weights(self) -> np.ndarray:
        """Each partition's weight in the built-in partitioner's next draw (3.3 and later; int64, 0: never
        drawn; the chance is weight / sum)."""
        weights = np.zeros(self.partitions, np.int64)
        if self._table is not None:
            cumulative, ids = self._table
            weights[ids] = np.diff(cumulative, prepend=0)
        elif len(self._candidates):
            weights[self._candidates] = 1
        else:
            weights[:] = 1
        return weights

    # -- the draws ----------------------------------------------------------------------------------------------

    def _next_built_in(self) -> int:
        """KIP-794 (and KIP-1123): one draw, weighted by the running table when there is one, else among the
        candidates, or among all partitions when none has a leader."""
        r = self._draw()
        if self._table is not None:
            cumulative, ids = self._table
            return int(ids[np.searchsorted(cumulative, r % int(cumulative[-1]), side="right")])
        candidates = self._candidates
        if len(candidates):
            return int(candidates[r % len(candidates)])
        return r % self.partitions

    def _next_sticky_cache(self, previous: int) -> int:
        """KIP-480: a new batch on ``previous`` moves the sticky partition if it is the current one (or there is
        none yet), to another available partition when two or more are."""
        old = self.current
        if old is not None and old != previous:
            return old
        available = self._available
        if len(available) == 0:
            new = self._draw() % self.partitions
        elif len(available) == 1:
            new = int(available[0])
        else:
            new = None
            while new is None or new == old:
                new = int(available[self._draw() % len(available)])
        self.current = new
        return new

    # -- the partitioner's calls, as Kafka makes them --------------------------------------------------------

    def sticky_partition(self, leaders: Leaders | None = None) -> int:
        """The current sticky partition, drawn first if there is none yet (Kafka: ``StickyPartitionCache.partition``,
        ``BuiltInPartitioner.peekCurrentPartitionInfo``)."""
        if leaders is not None:
            self.set_leaders(leaders)
        if self.current is None:
            if self.kip480:
                return self._next_sticky_cache(-1)
            self.current = self._next_built_in()
        return self.current

    def new_batch(self, partition: int, leaders: Leaders | None = None) -> int:
        """KIP-480: the producer opens a new batch on ``partition`` (``onNewBatch``); the sticky partition moves
        when it is that one (or when there is none yet). Returns the sticky partition after the call."""
        if not self.kip480:
            raise KassignError(f"Kafka {self.release.label}'s built-in partitioner (KIP-794) does not hear of "
                               "new batches: it moves after batch.size bytes (appended)")
        if leaders is not None:
            self.set_leaders(leaders)
        return self._next_sticky_cache(partition)

    def appended(self, size: int, leaders: Leaders | None = None) -> None:
        """KIP-794: ``size`` keyless bytes went to the sticky partition; from ``batch.size`` bytes on, the next
        partition is drawn (``updatePartitionInfo``)."""
        if self.kip480:
            raise KassignError(f"Kafka {self.release.label}'s sticky partitioner (KIP-480) moves on new batches, "
                               "not on bytes appended")
        if leaders is not None:
            self.set_leaders(leaders)
        self._produced += _size(size)
        if self._produced >= self.batch_size:
            self.current = self._next_built_in()
            self._produced = 0

    # -- records ------------------------------------------------------------------------------------------------

    def _fits(self, partition: int, size: int) -> bool:
        """KIP-480: whether ``partition``'s open batch takes ``size`` more bytes (a full batch takes nothing)."""
        filled = int(self._fill[partition])
        return 0 <= filled < self.batch_size and filled + size <= self.batch_size

    def keyless(self, size: int, leaders: Leaders | None = None) -> int:
        """The partition of one keyless record of ``size`` bytes (``leaders``: the cluster as of this record)."""
        size = _size(size)
        partition = self.sticky_partition(leaders)
        if not self.kip480:
            self.appended(size)
            return partition
        if self._fits(partition, size):
            self._fill[partition] += size
            return partition
        self._fill[partition] = _NO_BATCH  # the batch it did not fit is closed
        partition = self._next_sticky_cache(partition)
        if self._fits(partition, size):  # an open batch there (keyed records') takes it
            self._fill[partition] += size
        else:
            self._fill[partition] = size
        return partition

    def keyed(self, partition: int, size: int, leaders: Leaders | None = None) -> None:
        """A keyed record of ``size`` bytes sent to ``partition``: under KIP-480 it fills that partition's batch,
        and opening a new batch on the sticky partition moves it; later rules ignore keyed records."""
        if not self.kip480:
            return
        size = _size(size)
        if leaders is not None:
            self.set_leaders(leaders)
        if not isinstance(partition, (int, np.integer)) or not 0 <= partition < self.partitions:
            raise KassignError(f"partition {shown(partition)} is not one of the topic's {self.partitions}")
        if self._fits(partition, size):
            self._fill[partition] += size
            return
        self._next_sticky_cache(partition)
        self._fill[partition] = size

    def place(self, sizes: Any, keyed: Any = None) -> np.ndarray:
        """Every record's partition, in order: ``sizes`` in bytes, ``keyed`` the keyed records' partitions
        (-1 for keyless ones; None: all keyless). Keyed records keep their partition."""
        sizes = np.asarray(sizes, dtype=np.int64)
        if len(sizes) and sizes.min() < 0:
            raise KassignError(f"record sizes must be >= 0 bytes, got {int(sizes.min())}")
        if keyed is None:
            if not self.kip480:
                return self._built_in_run(sizes)
            keyed = np.full(len(sizes), -1, np.int64)
        keyed = np.asarray(keyed, dtype=np.int64)
        if len(keyed) != len(sizes):
            raise KassignError(f"{len(sizes)} sizes but {len(keyed)} keyed partitions")
        out = keyed.astype(np.int32)
        if not self.kip480:
            rows = np.flatnonzero(keyed < 0)
            out[rows] = self._built_in_run(sizes[rows])
            return out
        for i, (size, partition) in enumerate(zip(sizes.tolist(), keyed.tolist())):
            if partition < 0:
                out[i] = self.keyless(size)
            else:
                self.keyed(partition, size)
        return out

    def _built_in_run(self, sizes: np.ndarray) -> np.ndarray:
        """KIP-794 over keyless records only: one draw per switch, the switch points found on the running sum."""
        out = np.empty(len(sizes), np.int32)
        if not len(sizes):
            return out
        total = np.cumsum(sizes)
        start = 0
        while start < len(sizes):
            if self.current is None:
                self.current = self._next_built_in()
            before = int(total[start - 1]) if start else 0
            # the first record whose bytes bring this partition's total to batch.size ends its stint
            end = int(np.searchsorted(total, before + self.batch_size - self._produced, side="left"))
            if end >= len(sizes):
                out[start:] = self.current
                self._produced += int(total[-1]) - before
                break
            out[start:end + 1] = self.current
            self.current = self._next_built_in()
            self._produced = 0
            start = end + 1
        return out
