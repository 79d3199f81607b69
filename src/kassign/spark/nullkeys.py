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
- ``random`` (other clients, see ``kassign.client_partitioners``): every such record picks a
  partition uniformly at random: Sarama does exactly this; librdkafka's ``*_random``
  partitioners keep a random partition for ``sticky.partitioning.linger.ms`` (10 ms), a
  time window the records do not carry, so its stickiness is not modelled.

What KIP-794 does beyond this is not modelled: the adaptive choice weighted by broker
queue lengths (``partitioner.adaptive.partitioning.enable``; without brokers every
partition is equally fast, so the choice is uniform), skipping partitions whose leader is
slow (``partitioner.availability.timeout.ms``), deferring the switch while the partition
still holds a batch that is not full (Kafka switches anyway at twice ``batch.size``), and
the per-record overhead Kafka counts on top of key and value bytes.

Randomness is seeded by (seed, split number[, stream]), so the same input, split the same
way, always gives the same result. Data layout: numpy arrays of sizes and partitions per batch.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa

MODELS = ("round-robin", "sticky")  # the Java producer's, for --null-keys; "random" serves other clients
DEFAULT_BATCH_SIZE = 16384


class _Producer:
    """One producer's keyless-record state per topic."""

    def __init__(self, model: str, counts: Mapping[str, int], default_count: int, batch_size: int, seed: int,
                 split: int, stream: int | None = None) -> None:
        self.model = model
        self.counts = counts
        self.default_count = default_count
        self.batch_size = batch_size
        # `stream` tells apart several producers modelled over the same split (producer agreement stage).
        self.rng = np.random.default_rng([seed, split] if stream is None else [seed, split, stream])
        self.counter: dict[str, int] = {}
        self.sticky: dict[str, list[int]] = {}  # topic -> [current partition, bytes in current batch]

    def partitions(self, topic: str, sizes: np.ndarray) -> np.ndarray:
        n = self.counts.get(topic, self.default_count)
        if self.model == "round-robin":
            start = self.counter.setdefault(topic, int(self.rng.integers(0, n)))
            self.counter[topic] = start + len(sizes)
            return ((start + np.arange(len(sizes), dtype=np.int64)) % n).astype(np.int32)
        if self.model == "random":
            return self.rng.integers(0, n, size=len(sizes)).astype(np.int32)
        return self._sticky(topic, n, sizes)

    def _sticky(self, topic: str, n: int, sizes: np.ndarray) -> np.ndarray:
        state = self.sticky.setdefault(topic, [int(self.rng.integers(0, n)), 0])
        out = np.empty(len(sizes), dtype=np.int32)
        current, filled = state
        for i, size in enumerate(sizes.tolist()):
            out[i] = current
            filled += size
            if filled >= self.batch_size:  # batch full: the next record starts a new batch elsewhere
                current = int(self.rng.integers(0, n))
                filled = 0
        state[0], state[1] = current, filled
        return out


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
