"""Where records without a key go: a producer model, applied per Spark input split.

Kafka does not hash a null key; the producer spreads such records itself. Each Spark
task (one input split, in file order) plays one producer; its choices depend on the
model:

- ``round-robin`` (Kafka's classic DefaultPartitioner, before 2.4): the k-th keyless
  record of a topic goes to ``(start + k) % n``; ``start`` is a per-producer random value.
- ``sticky`` (Kafka's Java producer, as the run's release places keyless records:
  ``kassign.producer.keyless`` states the rules and is the one implementation in Python). 3.3 and later
  (KIP-794): keyless records stick to one partition until ``batch_size`` bytes (``batch.size``, default
  16384) went to it, then the producer draws the next one among all partitions (it may draw the same
  again); with ``partitioner.rack.aware`` (4.4, KIP-1123) among the partitions led in the producer's rack.
  Bytes, not records: with ``batch_size`` 1000, records of 300 bytes switch after every 4th record
  (1200 >= 1000), records of 600 bytes after every 2nd. 3.0-3.2 (KIP-480): the partition changes when a
  record does not fit its batch, to another partition; keyed records fill the same batches, so the
  producer sees them too (``partitions(..., keyed=...)``).
- ``random`` (other clients, see ``kassign.producer.clients``): every such record picks a
  partition uniformly at random: Sarama does exactly this; librdkafka's ``*_random``
  partitioners keep a random partition for ``sticky.partitioning.linger.ms`` (10 ms), a
  time window the records do not carry, so its stickiness is not modelled.

What is not modelled (the adaptive choice by broker queue lengths, slow leaders, batches sent before they
are full, the per-record overhead) is listed in ``kassign.producer.keyless``.

Racks: ``client_racks`` gives the modelled producers' racks (the producer of split ``i`` is in
``client_racks[i % len(client_racks)]``) and ``leaders`` each topic's leaders' racks, one per partition.

Randomness is ``java.util.Random``, one per topic, seeded by (seed, split number, stream, topic)
(topic by Java's ``String.hashCode``), so the same input,
split the same way, always gives the same result, and the JVM copy of these rules
(``KassignMurmur2.NullKeyProducer``, which lets the pipeline place keyless records in the same
pass as keyed ones) draws exactly the same numbers. A producer draws a topic's first partition
when it meets that topic's first keyless record. Data layout: numpy arrays of sizes and
partitions per batch.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from pyspark.sql import Column

from kassign.core.javaorder import java_string_hash, signed32
from kassign.core.javarandom import JavaRandom, java_long
from kassign.core.releases import DEFAULT_KAFKA_VERSION, KIP_480
from kassign.producer.keyless import KeylessProducer


# The JVM copy's model codes, and its mix of (seed, split, stream) into one java.util.Random seed.
MODEL_CODES = {"round-robin": 0, "sticky": 1, "random": 2}
_SPLIT_MIX = 0x9E3779B97F4A7C15
_STREAM_MIX = 0xBF58476D1CE4E5B9
_TOPIC_MIX = 0x94D049BB133111EB


@dataclass(frozen=True)
class ProducerSetup:
    """How the modelled Java producers are set up beyond the model: the release whose rule places keyless records,
    the producers' racks (producer ``i`` in ``client_racks[i % len]``), ``partitioner.rack.aware``, and each
    topic's leaders' racks (one per partition; a topic not named has leaders in no known rack)."""

    kafka_version: str = DEFAULT_KAFKA_VERSION
    client_racks: tuple[str, ...] = ()
    rack_aware: bool = False
    leaders: Mapping[str, tuple[str | None, ...]] = field(default_factory=dict)

    def sees_keyed(self, model: str) -> bool:
        """Whether keyed records change where keyless ones go (the sticky model under KIP-480, Kafka 3.0-3.2)."""
        from kassign.producer.keyless import keyless_rule

        return model == "sticky" and keyless_rule(self.kafka_version) == KIP_480


DEFAULT_SETUP = ProducerSetup()


def topic_seed(seed: int, split: int, stream: int, topic: str) -> int:
    """The java.util.Random seed of one topic's draws in the producer modelled over ``split`` (``stream`` > 0:
    another client's). A generator per topic: the draws do not depend on how topics interleave."""
    return java_long(seed + split * _SPLIT_MIX + stream * _STREAM_MIX + signed32(java_string_hash(topic)) * _TOPIC_MIX)


class _Producer:
    """One producer's keyless-record state per topic."""

    def __init__(self, model: str, counts: Mapping[str, int], default_count: int, batch_size: int, seed: int,
                 split: int, stream: int = 0, setup: ProducerSetup = DEFAULT_SETUP) -> None:
        self.model = model
        self.counts = counts
        self.default_count = default_count
        self.batch_size = batch_size
        # `stream` tells apart several producers modelled over the same split (producer agreement stage).
        self.seed, self.split, self.stream = seed, split, stream
        self.setup = setup
        racks = setup.client_racks
        self.client_rack = racks[split % len(racks)] if racks else None
        self.rngs: dict[str, JavaRandom] = {}
        # round-robin: topic -> [start, records sent]
        self.per_topic: dict[str, list[int]] = {}
        self.sticky: dict[str, KeylessProducer] = {}

    def _rng(self, topic: str) -> JavaRandom:
        rng = self.rngs.get(topic)
        if rng is None:
            rng = self.rngs[topic] = JavaRandom(topic_seed(self.seed, self.split, self.stream, topic))
        return rng

    def _sticky(self, topic: str, n: int) -> KeylessProducer:
        producer = self.sticky.get(topic)
        if producer is None:
            rng = self._rng(topic)
            setup = self.setup
            producer = self.sticky[topic] = KeylessProducer(
                n, kafka_version=setup.kafka_version, batch_size=self.batch_size, leaders=setup.leaders.get(topic),
                client_rack=self.client_rack, rack_aware=setup.rack_aware,
                draw=lambda: rng.next_bits(32) & 0x7FFFFFFF)
        return producer

    def partitions(self, topic: str, sizes: np.ndarray, keyed: np.ndarray | None = None) -> np.ndarray:
        """The partitions of one topic's records, in order: ``keyed`` holds the keyed records' partitions (-1 for
        keyless ones; None: all keyless), which they keep."""
        n = self.counts.get(topic, self.default_count)
        if self.model == "sticky":
            return self._sticky(topic, n).place(sizes, keyed)
        if keyed is not None:
            rows = np.flatnonzero(np.asarray(keyed) < 0)
            out = np.asarray(keyed).astype(np.int32)
            out[rows] = self.partitions(topic, np.asarray(sizes)[rows])
            return out
        rng = self._rng(topic)
        if self.model == "random":
            return np.array([rng.next_int(n) for _ in range(len(sizes))], dtype=np.int32)
        state = self.per_topic.get(topic)
        if state is None:
            state = self.per_topic[topic] = [rng.next_int(n), 0]
        out = ((state[0] + state[1] + np.arange(len(sizes), dtype=np.int64)) % n).astype(np.int32)
        state[1] += len(sizes)
        return out


def null_key_column(topic: Column, size: Column, model: str, counts: Mapping[str, int], default_count: int,
                    batch_size: int, seed: int, stream: int = 0, setup: ProducerSetup = DEFAULT_SETUP,
                    keyed: Column | None = None) -> Column | None:
    """The model as a column computed in the executor JVM (same choices as ``_Producer``), or None
    where the session cannot reach kassign's Java class (then ``assign_null_keys`` serves).

    Evaluate it only for the rows the producer places (inside ``F.when``), once per row, in input order.
    ``keyed``: each record's partition where it has a key (null for keyless ones): where the release's
    producer sees keyed records (``setup.sees_keyed``), evaluate the column for every record, keyed ones
    included; it gives null for those.
    """
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    try:
        jvm = spark._jvm
        java_counts = jvm.java.util.HashMap()
        for name, n in counts.items():
            java_counts.put(name, int(n))
        gateway = spark.sparkContext._gateway
        racks = gateway.new_array(jvm.java.lang.String, len(setup.client_racks))
        for i, rack in enumerate(setup.client_racks):
            racks[i] = rack
        java_leaders = jvm.java.util.HashMap()
        for name, leaders in setup.leaders.items():
            array = gateway.new_array(jvm.java.lang.String, len(leaders))
            for i, rack in enumerate(leaders):
                array[i] = rack
            java_leaders.put(name, array)
        from pyspark.sql import functions as F

        keyed_column = keyed if keyed is not None else F.lit(None).cast("int")
        rule = 1 if setup.sees_keyed("sticky") else 0
        factory = jvm.kassign.spark.KassignMurmur2.nullKeyColumn
        return Column(factory(topic._jc, size._jc, keyed_column._jc, MODEL_CODES[model], int(seed), int(stream),
                              int(batch_size), java_counts, int(default_count), rule, bool(setup.rack_aware), racks,
                              java_leaders))
    except Exception:  # py4j: the class is only in the SQL class loader (ADD JAR), or no JVM UDF at all
        return None


def assign_null_keys(model: str, counts: Mapping[str, int], default_count: int, batch_size: int, seed: int,
                     setup: ProducerSetup = DEFAULT_SETUP, keyed: str | None = None):
    """A ``mapInArrow`` function adding ``partition`` to keyless records (columns topic, bytes, ...). With
    ``keyed`` (a column of keyed records' partitions, null for keyless ones) it takes every record in input
    order and keyed records keep that partition (the release's producer may see them: ``setup.sees_keyed``)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        producer = _Producer(model, counts, default_count, batch_size, seed, context.partitionId() if context else 0,
                             setup=setup)
        for batch in batches:
            topics = batch.column("topic").to_numpy(zero_copy_only=False)
            sizes = batch.column("bytes").to_numpy(zero_copy_only=False).astype(np.int64)
            given = None
            if keyed is not None:
                given = batch.column(keyed).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
            partitions = np.empty(len(topics), dtype=np.int32)
            for topic in np.unique(topics) if len(topics) else []:
                rows = np.flatnonzero(topics == topic)
                partitions[rows] = producer.partitions(str(topic), sizes[rows], None if given is None else given[rows])
            yield batch.append_column("partition", pa.array(partitions, type=pa.int32()))

    return run


def fill_unhashed(models: Sequence[str], columns: Sequence[str], counts: Mapping[str, int], default_count: int,
                  batch_size: int, seed: int):
    """A ``mapInArrow`` function filling nulls of each partition column with its producer's model.

    ``columns[i]`` holds producer i's partition, null where that client does not hash the
    key; ``models[i]`` says how it places such records. One modelled producer per (split,
    column), each seeing its own unhashed records in input order.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        split = context.partitionId() if context else 0
        producers = [_Producer(model, counts, default_count, batch_size, seed, split, stream=i + 1)
                     for i, model in enumerate(models)]
        for batch in batches:
            topics = batch.column("topic").to_numpy(zero_copy_only=False)
            sizes = batch.column("bytes").to_numpy(zero_copy_only=False).astype(np.int64)
            arrays = dict(zip(batch.schema.names, batch.columns))
            for producer, name in zip(producers, columns):
                if not arrays[name].null_count:
                    continue
                partitions = arrays[name].fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)
                for topic in np.unique(topics):
                    rows = np.flatnonzero((topics == topic) & (partitions < 0))
                    if len(rows):
                        partitions[rows] = producer.partitions(str(topic), sizes[rows])
                arrays[name] = pa.array(partitions, pa.int32())
            yield pa.RecordBatch.from_arrays(list(arrays.values()), schema=batch.schema)

    return run
