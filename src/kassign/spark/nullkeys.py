"""Where records without a key go: a producer model, applied per Spark input split.

Kafka does not hash a null key; the producer spreads such records itself. Each Spark
task (one input split, in file order) plays one producer; its choices depend on the
model:

- ``round-robin`` (Kafka's classic DefaultPartitioner, before 2.4): the k-th keyless
  record of a topic goes to ``(start + k) % n``; ``start`` is a per-producer random value.
- ``sticky`` (KIP-480/KIP-794, Kafka >= 2.4): keyless records stick to one partition
  until ``batch_size`` bytes (``batch.size``, default 16384) went to it, then the
  producer picks the next partition uniformly at random (it may pick the same again,
  as the built-in partitioner does without load statistics). Bytes, not records: with
  ``batch_size`` 1000, records of 300 bytes switch after every 4th record
  (1200 >= 1000), records of 600 bytes after every 2nd.
- ``random`` (other clients, see ``kassign.producer.clients``): every such record picks a
  partition uniformly at random: Sarama does exactly this; librdkafka's ``*_random``
  partitioners keep a random partition for ``sticky.partitioning.linger.ms`` (10 ms), a
  time window the records do not carry, so its stickiness is not modelled.

What KIP-794 does beyond this is not modelled: the adaptive choice weighted by broker
queue lengths (``partitioner.adaptive.partitioning.enable``; without brokers every
partition is equally fast, so the choice is uniform), skipping partitions whose leader is
slow (``partitioner.availability.timeout.ms``), deferring the switch while the partition
still holds a batch that is not full (Kafka switches anyway at twice ``batch.size``), and
the per-record overhead Kafka counts on top of key and value bytes.

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

import numpy as np
import pyarrow as pa

from pyspark.sql import Column

from kassign.core.javaorder import java_string_hash, signed32
from kassign.core.javarandom import JavaRandom, java_long


# The JVM copy's model codes, and its mix of (seed, split, stream) into one java.util.Random seed.
MODEL_CODES = {"round-robin": 0, "sticky": 1, "random": 2}
_SPLIT_MIX = 0x9E3779B97F4A7C15
_STREAM_MIX = 0xBF58476D1CE4E5B9
_TOPIC_MIX = 0x94D049BB133111EB


def topic_seed(seed: int, split: int, stream: int, topic: str) -> int:
    """The java.util.Random seed of one topic's draws in the producer modelled over ``split`` (``stream`` > 0:
    another client's). A generator per topic: the draws do not depend on how topics interleave."""
    return java_long(seed + split * _SPLIT_MIX + stream * _STREAM_MIX + signed32(java_string_hash(topic)) * _TOPIC_MIX)


class _Producer:
    """One producer's keyless-record state per topic."""

    def __init__(self, model: str, counts: Mapping[str, int], default_count: int, batch_size: int, seed: int,
                 split: int, stream: int = 0) -> None:
        self.model = model
        self.counts = counts
        self.default_count = default_count
        self.batch_size = batch_size
        # `stream` tells apart several producers modelled over the same split (producer agreement stage).
        self.seed, self.split, self.stream = seed, split, stream
        self.rngs: dict[str, JavaRandom] = {}
        # topic -> [partition (sticky) or start (round-robin), bytes in the batch (sticky) or records sent]
        self.per_topic: dict[str, list[int]] = {}

    def _rng(self, topic: str) -> JavaRandom:
        rng = self.rngs.get(topic)
        if rng is None:
            rng = self.rngs[topic] = JavaRandom(topic_seed(self.seed, self.split, self.stream, topic))
        return rng

    def partitions(self, topic: str, sizes: np.ndarray) -> np.ndarray:
        n = self.counts.get(topic, self.default_count)
        rng = self._rng(topic)
        if self.model == "random":
            return np.array([rng.next_int(n) for _ in range(len(sizes))], dtype=np.int32)
        state = self.per_topic.get(topic)
        if state is None:
            state = self.per_topic[topic] = [rng.next_int(n), 0]
        if self.model == "round-robin":
            out = ((state[0] + state[1] + np.arange(len(sizes), dtype=np.int64)) % n).astype(np.int32)
            state[1] += len(sizes)
            return out
        return self._sticky(n, rng, state, sizes)

    def _sticky(self, n: int, rng: JavaRandom, state: list[int], sizes: np.ndarray) -> np.ndarray:
        out = np.empty(len(sizes), dtype=np.int32)
        current, filled = state
        for i, size in enumerate(sizes.tolist()):
            out[i] = current
            filled += size
            if filled >= self.batch_size:  # batch full: the next record starts a new batch elsewhere
                current = rng.next_int(n)
                filled = 0
        state[0], state[1] = current, filled
        return out


def null_key_column(topic: Column, size: Column, model: str, counts: Mapping[str, int], default_count: int,
                    batch_size: int, seed: int, stream: int = 0) -> Column | None:
    """The model as a column computed in the executor JVM (same choices as ``_Producer``), or None
    where the session cannot reach kassign's Java class (then ``assign_null_keys`` serves).

    Evaluate it only for the rows the producer places (inside ``F.when``), once per row, in input order.
    """
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    try:
        jvm = spark._jvm
        java_counts = jvm.java.util.HashMap()
        for name, n in counts.items():
            java_counts.put(name, int(n))
        factory = jvm.kassign.spark.KassignMurmur2.nullKeyColumn
        return Column(factory(topic._jc, size._jc, MODEL_CODES[model], int(seed), int(stream), int(batch_size),
                              java_counts, int(default_count)))
    except Exception:  # py4j: the class is only in the SQL class loader (ADD JAR), or no JVM UDF at all
        return None


def assign_null_keys(model: str, counts: Mapping[str, int], default_count: int, batch_size: int, seed: int):
    """A ``mapInArrow`` function adding ``partition`` to keyless records (columns topic, bytes, ...)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        producer = _Producer(model, counts, default_count, batch_size, seed, context.partitionId() if context else 0)
        for batch in batches:
            topics = batch.column("topic").to_numpy(zero_copy_only=False)
            sizes = batch.column("bytes").to_numpy(zero_copy_only=False).astype(np.int64)
            partitions = np.empty(len(topics), dtype=np.int32)
            for topic in np.unique(topics) if len(topics) else []:
                rows = np.flatnonzero(topics == topic)
                partitions[rows] = producer.partitions(str(topic), sizes[rows])
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
