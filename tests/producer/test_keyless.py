"""kassign.producer.keyless: where each Kafka release's producer puts keyless records.

Kafka's own unit tests are translated one for one (their clusters, batch sizes, random sequences and the
partitions they expect): 3.0.2's StickyPartitionCacheTest, UniformStickyPartitionerTest and
RecordAccumulatorTest.testStickyBatches (KIP-480); 3.3.2's BuiltInPartitionerTest and
RecordAccumulatorTest.testUniformBuiltInPartitioner (KIP-794); the 4.4 branch's BuiltInPartitionerTest with its
rack cases (KIP-1123). Adaptive partitioning (queue sizes): BuiltInPartitionerTest.adaptivePartitionsTest as
3.3.2, 3.9.2 and 4.3.1 have it and as the 4.4 branch has it (three broker/client rack settings),
adaptivePartitionsTestWithRackAwareness (4.4 branch), and RecordAccumulatorTest.testAdaptiveBuiltInPartitioner
(3.3.2 to the 4.4 branch, the same case throughout); then facts of the accumulator's pass that Kafka's tests do
not pin down, each checked against Kafka's classes driven with the same random numbers. Hypothesis properties
follow.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core.errors import KassignError
from kassign.core.releases import KIP_480, KIP_794, KIP_1123
from kassign.producer.keyless import (NO_LEADER, KeylessProducer, counted_queue_sizes, keyless_rule, keyless_targets,
                                     keyless_weights)


def sequential():
    """Kafka's tests' mock random source: 0, 1, 2, ..."""
    counter = itertools.count()
    return lambda: next(counter)


seeds = st.integers(min_value=-(2**63), max_value=2**63 - 1)

# 3.0.2's and 3.3.2's test clusters: nodes without racks; topic A has 3 partitions, topic B one
LED = [None, None, None]


# -- 3.0 to 3.2: KIP-480 (StickyPartitionCache) -------------------------------------------------------------

@given(seed=seeds)
def test_kip480_sticky_partition_cache(seed):
    """StickyPartitionCacheTest.testStickyPartitionCache."""
    a = KeylessProducer(3, kafka_version="3.0.2", leaders=LED, seed=seed)
    b = KeylessProducer(1, kafka_version="3.0.2", leaders=[None], seed=seed)
    part_a = a.sticky_partition()
    assert part_a == a.sticky_partition()
    part_b = b.sticky_partition()
    assert part_b == b.sticky_partition()
    changed = a.new_batch(part_a)
    assert changed == a.sticky_partition() and changed != part_a
    assert a.sticky_partition() == changed
    assert a.new_batch(part_a) == changed  # a new batch on a partition that is no longer sticky changes nothing
    assert b.new_batch(part_b) == b.sticky_partition() == 0  # one partition: it stays


@given(seed=seeds)
def test_kip480_unavailable_partitions(seed):
    """StickyPartitionCacheTest.unavailablePartitionsTest: partition 1 of A, 0 of B and 0 of C have no leader."""
    a = KeylessProducer(3, kafka_version="3.2", leaders=[None, NO_LEADER, None], seed=seed)
    part_a = a.sticky_partition()
    assert part_a != 1
    for _ in range(100):
        part_a = a.new_batch(part_a)
        assert a.sticky_partition() != 1
    b = KeylessProducer(2, kafka_version="3.2", leaders=[NO_LEADER, None], seed=seed)
    part_b = b.sticky_partition()
    assert part_b == 1
    for _ in range(100):
        part_b = b.new_batch(part_b)
        assert b.sticky_partition() == 1
    c = KeylessProducer(1, kafka_version="3.2", leaders=[NO_LEADER], seed=seed)
    part_c = c.sticky_partition()
    assert part_c == 0
    assert c.new_batch(part_c) == 0


@given(seed=seeds)
def test_kip480_two_available_partitions_take_turns(seed):
    """UniformStickyPartitionerTest.testRoundRobinWithUnavailablePartitions: partitions listed 1 (no leader), 2,
    0; 50 records, a new batch, 50 more: only 0 and 2, evenly."""
    producer = KeylessProducer(3, kafka_version="3.0", leaders=[None, NO_LEADER, None], seed=seed)
    counts = {0: 0, 2: 0}
    part = 0
    for _ in range(50):
        part = producer.sticky_partition()
        counts[part] += 1
    producer.new_batch(part)
    for _ in range(50):
        part = producer.sticky_partition()
        counts[part] += 1
    assert counts == {0: 50, 2: 50}


@given(seed=seeds)
def test_kip480_a_stale_new_batch_does_not_move_it(seed):
    """UniformStickyPartitionerTest.testRoundRobinWithNullKeyBytes: topic A (3 partitions) and B (1)."""
    a = KeylessProducer(3, kafka_version="3.0", leaders=LED, seed=seed)
    b = KeylessProducer(1, kafka_version="3.0", leaders=[None], seed=seed + 1 if seed < 2**63 - 1 else 0)
    counts: dict[int, int] = {}

    def thirty() -> int:
        partition = -1
        for i in range(30):
            partition = a.sticky_partition()
            counts[partition] = counts.get(partition, 0) + 1
            if i % 5 == 0:
                b.sticky_partition()
        return partition

    old = thirty()
    a.new_batch(old)
    b.new_batch(0)
    new = thirty()
    a.new_batch(old)  # the wrong previous partition: the sticky one stays
    thirty()
    assert counts[old] == 30 and counts[new] == 60


def test_kip480_a_batch_fills_then_the_next_record_opens_one_elsewhere():
    """RecordAccumulatorTest.testStickyBatches: records of one size fill the sticky partition's batch; the one
    that does not fit opens the second batch on another partition, which takes as many."""
    producer = KeylessProducer(3, kafka_version="3.0.2", batch_size=1025, seed=5)
    partitions = producer.place(np.full(40, 100))  # 10 records of 100 bytes fit 1025, the 11th does not
    runs = [len(list(group)) for _, group in itertools.groupby(partitions.tolist())]
    assert runs[:3] == [10, 10, 10]


# -- 3.3 and later: KIP-794 (BuiltInPartitioner) --------------------------------------------------------------

@pytest.mark.parametrize("version", ["3.3.2", "4.3", "4.4"])
def test_kip794_sticky_partitioning(version):
    """BuiltInPartitionerTest.testStickyPartitioning (3.3.2 and 4.4): a sticky batch size of 3, records of 1
    byte, draws 0, 1, ...: three records on partition 0, then 1; a one-partition topic always 0."""
    a = KeylessProducer(3, kafka_version=version, batch_size=3, leaders=LED, draw=sequential())
    part_a = a.sticky_partition()
    a.appended(1)
    assert a.sticky_partition() == part_a
    a.appended(1)
    assert a.sticky_partition() == part_a
    a.appended(1)
    assert a.sticky_partition() != part_a
    assert (part_a, a.sticky_partition()) == (0, 1)
    b = KeylessProducer(1, kafka_version=version, batch_size=1, leaders=[None], draw=sequential())
    for _ in range(10):
        assert b.sticky_partition() == 0
        b.appended(1)


@pytest.mark.parametrize("version, rack_aware, rack", [
    ("3.3.2", False, None), ("4.4", False, None), ("4.4", True, "rack0"), ("4.4", True, "rack1"),
    ("4.4", True, "rack2")])
@settings(max_examples=25)
@given(seed=seeds)
def test_kip794_unavailable_partitions(version, rack_aware, rack, seed):
    """BuiltInPartitionerTest.unavailablePartitionsTest (4.4: rack-unaware, and rack-aware in rack0, rack1,
    rack2). A's leaders: node 0 (rack0), none, node 2 (rack0); B's: none, node 0; C's: none."""
    a = KeylessProducer(3, kafka_version=version, batch_size=1, leaders=["rack0", NO_LEADER, "rack0"],
                        client_rack=rack, rack_aware=rack_aware, seed=seed)
    part_a = a.sticky_partition()
    a.appended(1)
    assert part_a != 1
    seen = set()
    for _ in range(100):
        another = a.sticky_partition()
        a.appended(1)
        assert another != 1
        seen.add(another)
    assert seen - {part_a}, f"expected a partition other than {part_a}"
    b = KeylessProducer(2, kafka_version=version, batch_size=1, leaders=[NO_LEADER, "rack0"], client_rack=rack,
                        rack_aware=rack_aware, seed=seed)
    for _ in range(101):
        assert b.sticky_partition() == 1
        b.appended(1)
    c = KeylessProducer(1, kafka_version=version, batch_size=1, leaders=[NO_LEADER], client_rack=rack,
                        rack_aware=rack_aware, seed=seed)
    assert c.sticky_partition() == 0
    c.appended(1)
    assert c.sticky_partition() == 0


def test_kip794_uniform_built_in_partitioner_through_the_accumulator():
    """RecordAccumulatorTest.testUniformBuiltInPartitioner (3.3.2): batch.size 1024, draws 0, 1, ...; a small
    record, then four of batch.size bytes: partitions 0, 0, 1, 2, 0. (Kafka draws the second partition one
    record later, when the big record's batch is full; the partitions are the same.)"""
    producer = KeylessProducer(3, kafka_version="3.3.2", batch_size=1024, draw=sequential())
    assert producer.place([5, 1024, 1024, 1024, 1024]).tolist() == [0, 0, 1, 2, 0]


def test_kip794_batch_size_zero_is_one():
    """BuiltInPartitionerTest.testStickyBatchSizeMoreThatZero with KafkaProducer's max(1, batch.size): batch.size
    0 switches after every record."""
    producer = KeylessProducer(4, kafka_version="4.4", batch_size=0, draw=sequential())
    assert producer.place([1, 1, 1, 1, 1]).tolist() == [0, 1, 2, 3, 0]


# -- 4.4: KIP-1123 (partitioner.rack.aware) -------------------------------------------------------------------

# the 4.4 test's nodes 0..3 in rack0, rack1, rack0, rack1: topic A's partitions 0..3 are led by them in order
ONLINE = ["rack0", "rack1", "rack0", "rack1"]


def test_kip1123_sticky_partitioning_with_rack_awareness():
    """BuiltInPartitionerTest.testStickyPartitioningWithRackAwareness (4.4 branch), draws 0, 1, ..."""
    a = KeylessProducer(4, kafka_version="4.4", batch_size=1, leaders=ONLINE, client_rack="rack0", rack_aware=True,
                        draw=sequential())
    assert a.rule == KIP_1123
    # while partitions of the producer's rack are online, it switches between them
    assert a.sticky_partition() == 0
    a.appended(1)
    assert a.sticky_partition() == 2
    a.appended(1)
    assert a.sticky_partition() == 0
    # one partition of its rack goes offline: the other one is chosen
    one_offline = ["rack0", "rack1", NO_LEADER, "rack1"]
    a.appended(1, one_offline)
    assert a.sticky_partition() == 0
    a.appended(1)
    assert a.sticky_partition() == 0
    # both go offline: partitions of other racks
    two_offline = [NO_LEADER, "rack1", NO_LEADER, "rack1"]
    a.appended(1, two_offline)
    assert a.sticky_partition() == 3
    # back online: its rack again
    a.appended(1, ONLINE)
    assert a.sticky_partition() == 0
    # brokers without racks: every partition
    for expected in (3, 0, 1, 2, 3):
        a.appended(1, [None, None, None, None])
        assert a.sticky_partition() == expected


def test_kip1123_worked_example_of_the_docstring():
    racks = ["a", "b", "c", "a", "b", "c"]
    aware = KeylessProducer(6, batch_size=1000, leaders=racks, client_rack="b", rack_aware=True, draw=sequential())
    assert aware.place(np.full(7, 400)).tolist() == [1, 1, 1, 4, 4, 4, 1]
    unaware = KeylessProducer(6, batch_size=1000, leaders=racks, client_rack="b", draw=sequential())
    assert unaware.place(np.full(7, 400)).tolist() == [0, 0, 0, 1, 1, 1, 2]
    sticky_cache = KeylessProducer(6, kafka_version="3.2", batch_size=1000, leaders=racks, draw=sequential())
    assert sticky_cache.place(np.full(3, 400)).tolist() == [1, 1, 2]
    assert keyless_targets(racks, "b", True).tolist() == [1, 4]
    assert keyless_targets(racks, "d", True).tolist() == list(range(6))  # no leader in d: every partition
    assert keyless_targets(racks, "b", False).tolist() == list(range(6))


# -- 3.3 and later: adaptive partitioning (queue sizes) ----------------------------------------------------------

def frequencies(producer: KeylessProducer, draws: int) -> list[int]:
    """How often each partition is the sticky one over ``draws`` records of 1 byte (batch size 1: one draw each),
    as Kafka's tests count: peek, count, append."""
    counts = [0] * producer.partitions
    for _ in range(draws):
        counts[producer.sticky_partition()] += 1
        producer.appended(1)
    return counts


QUEUES = [5, 0, 3, 0, 1]  # adaptivePartitionsTest's queue sizes: weights 6 - size


@pytest.mark.parametrize("version", ["3.3.2", "3.9.2", "4.3.1"])
def test_kip794_adaptive_partitions(version):
    """BuiltInPartitionerTest.adaptivePartitionsTest (3.3.2; 3.9.2 and 4.3.1 only swap the mock random source):
    queue sizes 5, 0, 3, 0, 1 on partitions led by nodes without racks, draws 0, 1, ...; over twice the table's
    range (21) every partition is picked twice its weight, max + 1 - queue size."""
    producer = KeylessProducer(5, kafka_version=version, batch_size=1, leaders=[None] * 5, queue_sizes=QUEUES,
                               draw=sequential())
    assert producer.weights.tolist() == [6 - q for q in QUEUES] and producer.weights.sum() == 21
    assert frequencies(producer, 21 * 2) == [(6 - q) * 2 for q in QUEUES]


NODE_RACKS = ["rack0", "rack1", "rack0", "rack1", "rack2"]  # the 4.4 test's nodes 0, 1, 2, 3, 11


@pytest.mark.parametrize("broker_racks, rack_aware, client_rack", [
    (False, False, None), (True, False, None), (False, True, "rack0")])
def test_kip794_adaptive_partitions_44(broker_racks, rack_aware, client_rack):
    """BuiltInPartitionerTest.adaptivePartitionsTest (4.4 branch): the same case with broker racks present or not
    and a rack-aware client whose rack leads nothing in the table; none of them draws by rack."""
    leaders = NODE_RACKS if broker_racks else [None] * 5
    producer = KeylessProducer(5, kafka_version="4.4", batch_size=1, leaders=leaders, client_rack=client_rack,
                               rack_aware=rack_aware, queue_sizes=QUEUES, draw=sequential())
    assert producer.weights.sum() == 21
    assert frequencies(producer, 21 * 2) == [(6 - q) * 2 for q in QUEUES]


def test_kip1123_adaptive_partitions_with_rack_awareness():
    """BuiltInPartitionerTest.adaptivePartitionsTestWithRackAwareness (4.4 branch): a rack0 producer, queue sizes
    5, 0, 3, 0 on partitions led in rack0, rack1, rack0, rack1: only 0 and 2 are drawn, weighted 1 and 3
    (twice over the rack's range of 4); then partition 2 loses its leader (queues 1, 2, -, 3): only 0; then 0
    too (queues -, 1, -, 2): the other racks' partitions, weighted 2 and 1."""
    a = KeylessProducer(4, kafka_version="4.4", batch_size=1, leaders=ONLINE, client_rack="rack0", rack_aware=True,
                        queue_sizes=[5, 0, 3, 0], draw=sequential())
    assert a.weights.tolist() == [1, 0, 3, 0]
    assert frequencies(a, 4 * 2) == [2, 0, 6, 0]
    a.set_leaders(["rack0", "rack1", NO_LEADER, "rack1"])
    a.set_queue_sizes([1, 2, 0, 3])
    for _ in range(4):
        a.appended(1)
        assert a.sticky_partition() == 0
    a.set_leaders([NO_LEADER, "rack1", NO_LEADER, "rack1"])
    a.set_queue_sizes([0, 1, 0, 2])
    a.appended(1)
    assert a.sticky_partition() == 1
    a.appended(1)
    assert a.sticky_partition() == 3


@pytest.mark.parametrize("version", ["3.3.2", "3.9.2", "4.3.1", "4.4"])
def test_kip794_adaptive_built_in_partitioner_through_the_accumulator(version):
    """RecordAccumulatorTest.testAdaptiveBuiltInPartitioner: batch.size 128, partitions 0 and 1 led by node 0 and
    2 by node 1, 1, 7 and 2 batches queued, draws 0, 1, ...; a first record, then 28 (twice the range of 14) of
    batch.size bytes: picked 2 * (8 - queue size) times. Then node 0 has not been ready for longer than
    partitioner.availability.timeout.ms: everything goes to partition 2 (after the one record that switches)."""
    queues = np.array([1, 7, 2])
    producer = KeylessProducer(3, kafka_version=version, batch_size=128, queue_sizes=queues.tolist(),
                               draw=sequential())
    placed = producer.place(np.full(29, 128))
    assert np.bincount(placed[1:], minlength=3).tolist() == [14, 2, 12]
    queues += np.bincount(placed, minlength=3)  # the sender's next pass sees those batches too
    producer.set_queue_sizes(queues.tolist(), unavailable=[0, 1])
    assert producer.place(np.full(11, 128))[1:].tolist() == [2] * 10


def test_adaptive_worked_example_of_the_docstring():
    assert keyless_weights(None, QUEUES, partitions=5).tolist() == [1, 6, 3, 6, 5]
    producer = KeylessProducer(5, batch_size=1, queue_sizes=QUEUES, draw=iter([7]).__next__)
    assert producer.sticky_partition() == 2
    assert keyless_weights(None, QUEUES, unavailable=[0], partitions=5).tolist() == [0, 1, 3, 6, 5]
    assert counted_queue_sizes(None, QUEUES, [0], partitions=5).tolist() == [-1, 5, 3, 0, 1]
    assert counted_queue_sizes([None, NO_LEADER, None], [2, 7, 0], [0]).tolist() == [-1, -1, 2]


def test_adaptive_pass_facts_checked_against_kafkas_classes():
    """What the accumulator's pass does that Kafka's tests leave open (each drawn the same by Kafka's 3.3.2 and
    4.4 RecordAccumulator.ready() and BuiltInPartitioner on the same random numbers)."""
    # a slow leader is left out only when its partition has batches waiting
    assert keyless_weights(None, [0, 2, 1], unavailable=[0], partitions=3).tolist() == [3, 1, 2]
    # the partition after one left out inherits its queue size when its own queue is empty; a leaderless
    # partition between them changes nothing
    assert keyless_weights(["a", "b", NO_LEADER, "c", "d"], [4, 1, 9, 0, 2], unavailable=[1]).tolist() == [
        1, 0, 0, 4, 3]
    # every partition with a leader left out: no table, a uniform draw over the partitions with a leader
    assert keyless_weights(["a", NO_LEADER, "b"], [1, 0, 2], unavailable=[0, 2]).tolist() == [1, 0, 1]
    # equal queues with a leaderless partition: a table, but of equal weights
    assert keyless_weights(["a", NO_LEADER, "b"], [3, 0, 3]).tolist() == [1, 0, 1]
    # a single partition: never a table
    assert keyless_weights(None, [5], unavailable=[0], partitions=1).tolist() == [1]
    # 4.4, rack-aware: weights from the longest queue in the rack; a table is decided over every partition
    assert keyless_weights(["a", "b", "a", "b"], [1, 9, 3, 0], client_rack="a", rack_aware=True).tolist() == [
        3, 0, 1, 0]
    assert keyless_weights(["a", "b", "a", "b"], [2, 2, 2, 2], client_rack="a", rack_aware=True).tolist() == [
        1, 0, 1, 0]


def test_adaptive_order_past_65536_partitions_is_the_accumulators_hashmap():
    """Past 65,536 partitions the accumulator's HashMap visits partition p in bucket p ^ (p >>> 16): 65,537 before
    65,536. Queue 1 on partition 0, none elsewhere (weights 1, 2, 2, ...): the last two places of the table
    hold 65,537 then 65,536 (Kafka 4.4's classes draw the same)."""
    n = 65538
    queues = [1] + [0] * (n - 1)
    draws = iter([131072, 131074])
    producer = KeylessProducer(n, batch_size=1, queue_sizes=queues, draw=lambda: next(draws))
    assert producer.sticky_partition() == 65537
    producer.appended(1)
    assert producer.sticky_partition() == 65536


def test_rule_per_release_and_rack_awareness():
    assert keyless_rule("3.0") == keyless_rule("3.2.3") == KIP_480
    assert keyless_rule("3.3.0") == keyless_rule("4.4") == KIP_794
    assert keyless_rule("4.4", rack_aware=True) == KIP_1123


@pytest.mark.parametrize("kwargs, message", [
    ({"kafka_version": "4.3", "rack_aware": True, "client_rack": "a"}, "partitioner.rack.aware came with Kafka 4.4"),
    ({"kafka_version": "3.2", "rack_aware": True, "client_rack": "a"}, "partitioner.rack.aware came with Kafka 4.4"),
    ({"rack_aware": True}, "partitioner.rack.aware needs client.rack"),
    ({"rack_aware": True, "client_rack": " "}, "partitioner.rack.aware needs client.rack"),
    ({"rack_aware": "yes", "client_rack": "a"}, "must be true or false"),
    ({"kafka_version": "2.8"}, "not a release kassign models"),
    ({"batch_size": -1}, "batch.size must be"),
    ({"leaders": ["a", "b"]}, "leaders name 2 partitions, the topic has 3"),
    ({"leaders": ["a", 1, "b"]}, "a leader's rack must be"),
])
def test_bad_input_is_one_line(kwargs, message):
    with pytest.raises(KassignError, match=message) as err:
        KeylessProducer(3, **kwargs)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("kwargs, message", [
    ({"kafka_version": "3.2", "queue_sizes": [1, 2, 3]}, "adaptive partitioning (queue sizes) came with Kafka 3.3"),
    ({"queue_sizes": [1, 2]}, "queue sizes name 2 partitions, the topic has 3"),
    ({"queue_sizes": [1, -2, 3]}, "a queue size is a number of batches"),
    ({"queue_sizes": [1, 2.5, 3]}, "a queue size is a number of batches"),
    ({"queue_sizes": "1,2,3"}, "queue sizes must be a list"),
    ({"unavailable": [1]}, "unavailable partitions are left out by the adaptive draw only"),
    ({"queue_sizes": [1, 2, 3], "unavailable": [3]}, "unavailable partition 3 is not one of the topic's 3"),
    ({"queue_sizes": [0, 2**31 - 1, 2**31 - 1]}, "past a Java int"),
])
def test_bad_queue_sizes_are_one_line(kwargs, message):
    with pytest.raises(KassignError, match=re.escape(message)) as err:
        KeylessProducer(3, **kwargs)
    assert "\n" not in str(err.value)


def test_bad_calls_are_one_line():
    with pytest.raises(KassignError, match="does not hear of new batches"):
        KeylessProducer(3).new_batch(0)
    with pytest.raises(KassignError, match="moves on new batches"):
        KeylessProducer(3, kafka_version="3.1").appended(1)
    with pytest.raises(KassignError, match="sizes must be >= 0"):
        KeylessProducer(3).place([1, -1])
    with pytest.raises(KassignError, match="not one of the topic's 3"):
        KeylessProducer(3, kafka_version="3.1").keyed(3, 10)


# -- properties -----------------------------------------------------------------------------------------------

sizes_lists = st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=300)


@given(sizes=sizes_lists, n=st.integers(1, 9), batch=st.integers(0, 5000), seed=seeds)
def test_kip480_never_draws_the_partition_it_leaves(sizes, n, batch, seed):
    """KIP-480: a record goes where the previous one went, unless it did not fit that batch; then to another
    partition whenever there is another (and the batches it leaves were full)."""
    producer = KeylessProducer(n, kafka_version="3.2", batch_size=batch, seed=seed)
    placed = producer.place(sizes).tolist()
    filled = {}
    for i, (size, p) in enumerate(zip(sizes, placed)):
        if i and p != placed[i - 1]:
            assert n > 1
            assert filled[placed[i - 1]] + size > batch or filled[placed[i - 1]] >= batch
        if i and p == placed[i - 1] and filled.get(p, -1) >= 0:
            assert n == 1 or filled[p] + size <= batch and filled[p] < batch
            filled[p] += size
        else:
            filled[p] = size


@given(sizes=sizes_lists, n=st.integers(1, 9), batch=st.integers(1, 5000), seed=seeds)
def test_kip794_moves_exactly_after_batch_size_bytes(sizes, n, batch, seed):
    """KIP-794: the partition may change only after the record that brings its bytes to batch.size; the run
    over arrays equals record after record."""
    whole = KeylessProducer(n, batch_size=batch, seed=seed).place(sizes).tolist()
    one_by_one = KeylessProducer(n, batch_size=batch, seed=seed)
    assert whole == [one_by_one.keyless(s) for s in sizes]
    produced = 0
    for i, size in enumerate(sizes[:-1]):
        produced += size
        if produced >= batch:
            produced = 0
        elif whole[i + 1] != whole[i]:
            raise AssertionError(f"moved after record {i} with {produced} of {batch} bytes")


@given(racks=st.lists(st.sampled_from(["a", "b", "c", None, NO_LEADER]), min_size=1, max_size=12),
       rack=st.sampled_from(["a", "b", "c"]), sizes=sizes_lists, seed=seeds)
def test_kip1123_lands_only_on_partitions_led_in_its_rack(racks, rack, sizes, seed):
    producer = KeylessProducer(len(racks), batch_size=700, leaders=racks, client_rack=rack, rack_aware=True,
                               seed=seed)
    placed = set(producer.place(sizes).tolist())
    in_rack = {p for p, r in enumerate(racks) if r == rack}
    led = {p for p, r in enumerate(racks) if r is not NO_LEADER}
    assert placed <= (in_rack or led or set(range(len(racks))))
    assert placed <= set(keyless_targets(racks, rack, True).tolist())


@given(sizes=sizes_lists, keyed_share=st.floats(0, 1), n=st.integers(1, 6), seed=seeds)
def test_kip480_keyed_records_keep_their_partition_and_share_batches(sizes, keyed_share, n, seed):
    rng = np.random.default_rng(abs(seed) % 2**32)
    keyed = np.where(rng.random(len(sizes)) < keyed_share, rng.integers(0, n, len(sizes)), -1)
    producer = KeylessProducer(n, kafka_version="3.1", batch_size=2000, seed=seed)
    placed = producer.place(sizes, keyed)
    assert (placed[keyed >= 0] == keyed[keyed >= 0]).all()
    assert ((placed >= 0) & (placed < n)).all()
    # the same records one call at a time
    again = KeylessProducer(n, kafka_version="3.1", batch_size=2000, seed=seed)
    step = [again.keyless(s) if k < 0 else (again.keyed(int(k), s), int(k))[1] for s, k in zip(sizes, keyed.tolist())]
    assert placed.tolist() == step


# -- adaptive properties ----------------------------------------------------------------------------------------

leader_lists = st.lists(st.sampled_from(["a", "b", "c", None, NO_LEADER]), min_size=1, max_size=12)


@given(racks=leader_lists, size=st.integers(0, 50), rack=st.sampled_from(["a", "b"]), aware=st.booleans(),
       version=st.sampled_from(["3.3.2", "3.9.2", "4.4"]), sizes=sizes_lists, seed=seeds)
def test_adaptive_with_equal_queues_draws_as_uniform(racks, size, rack, aware, version, sizes, seed):
    """Every queue equally long: the same partitions as without queue sizes, record for record (with a
    leaderless partition Kafka builds a table, of equal weights)."""
    aware = aware and version == "4.4"
    kwargs = dict(kafka_version=version, batch_size=700, leaders=racks, client_rack=rack, rack_aware=aware)
    uniform = KeylessProducer(len(racks), seed=seed, **kwargs)
    adaptive = KeylessProducer(len(racks), seed=seed, queue_sizes=[size] * len(racks), **kwargs)
    assert adaptive.place(sizes).tolist() == uniform.place(sizes).tolist()
    assert adaptive.weights.tolist() == uniform.weights.tolist()


queue_lists = st.lists(st.integers(0, 40), min_size=2, max_size=12)


@given(queues=queue_lists, data=st.data())
def test_adaptive_weights_favour_short_queues(queues, data):
    """Without partitions left out, each led partition weighs longest + 1 - its queue: the longest queue weighs
    1 (still drawn, once a cycle), an empty one the most; over one cycle of draws 0 .. total - 1 each partition
    is drawn exactly its weight."""
    racks = data.draw(st.lists(st.sampled_from(["a", None, NO_LEADER]), min_size=len(queues),
                               max_size=len(queues)))
    producer = KeylessProducer(len(queues), batch_size=1, leaders=racks, queue_sizes=queues, draw=sequential())
    weights = producer.weights
    led = [p for p, r in enumerate(racks) if r is not NO_LEADER]
    if not led:
        return
    longest = max(queues[p] for p in led)
    if len(led) == len(queues) and min(queues) == longest:
        assert weights.tolist() == [1] * len(queues)  # no table: uniform
        return
    assert weights.tolist() == [longest + 1 - q if r is not NO_LEADER else 0 for q, r in zip(queues, racks)]
    assert np.bincount(producer.place(np.ones(int(weights.sum()), np.int64)), minlength=len(queues)).tolist() == \
        weights.tolist()
    for a in led:
        for b in led:
            if queues[a] < queues[b]:
                assert weights[a] > weights[b]


@given(queues=queue_lists, data=st.data(), seed=seeds)
def test_adaptive_leaves_out_slow_leaders_with_batches_waiting(queues, data, seed):
    """A partition whose leader is past partitioner.availability.timeout.ms is never drawn while its queue holds
    batches, unless every partition with a leader is left out (then the draw is uniform over them all)."""
    n = len(queues)
    slow = data.draw(st.sets(st.integers(0, n - 1)))
    producer = KeylessProducer(n, batch_size=1, queue_sizes=queues, unavailable=slow, seed=seed)
    drawn = set(producer.place(np.ones(60, np.int64)).tolist())
    left_out = {p for p in slow if queues[p] > 0}
    if left_out == set(range(n)):
        assert producer.weights.tolist() == [1] * n
    else:
        assert not drawn & left_out and not np.any(producer.weights[sorted(left_out)])


@given(racks=st.lists(st.sampled_from(["a", "b", None, NO_LEADER]), min_size=2, max_size=12), data=st.data(),
       seed=seeds)
def test_adaptive_rack_aware_weighs_the_racks_partitions_among_themselves(racks, data, seed):
    """4.4, rack-aware: when partitions led in the producer's rack take part, only they are drawn, weighed
    against the longest queue among them."""
    queues = data.draw(st.lists(st.integers(0, 20), min_size=len(racks), max_size=len(racks)))
    producer = KeylessProducer(len(racks), batch_size=1, leaders=racks, client_rack="a", rack_aware=True,
                               queue_sizes=queues, seed=seed)
    in_rack = [p for p, r in enumerate(racks) if r == "a"]
    weights = producer.weights
    assert weights.tolist() == keyless_weights(racks, queues, client_rack="a", rack_aware=True).tolist()
    if in_rack:
        longest = max(queues[p] for p in in_rack)
        equal = all(r is not NO_LEADER for r in racks) and len(set(queues)) == 1
        expected = [(1 if equal else longest + 1 - q) if r == "a" else 0 for q, r in zip(queues, racks)]
        assert weights.tolist() == expected
        assert set(producer.place(np.ones(40, np.int64)).tolist()) <= set(in_rack)


@given(queues=queue_lists, sizes=sizes_lists, batch=st.integers(1, 5000), seed=seeds)
def test_adaptive_run_over_arrays_equals_record_after_record(queues, sizes, batch, seed):
    whole = KeylessProducer(len(queues), batch_size=batch, queue_sizes=queues, seed=seed).place(sizes).tolist()
    one_by_one = KeylessProducer(len(queues), batch_size=batch, queue_sizes=queues, seed=seed)
    assert whole == [one_by_one.keyless(s) for s in sizes]
