"""key -> partition: Kafka's murmur2, every producer client's partitioner, and the Java producer's model.

``murmur2`` is MurmurHash2 (32-bit, seed 0x9747b28c) as Kafka's ``Utils.murmur2``
computes it: little-endian 4-byte blocks, a 1-3 byte tail, result as a signed
32-bit int. With the default ``partitioner="java"`` a keyed record goes to
``(murmur2(key) & 0x7fffffff) % partitions``: ``b"user-1"`` hashes to 1404122828,
so with 12 partitions it lands on 1404122828 % 12 = 8.

``partitioner="CLIENT:NAME"`` picks another client's rule (librdkafka, KafkaJS, Sarama;
each stated with a worked example in ``kassign.producer.clients``); ``key_type`` picks Kafka's key
serialiser (``kassign.producer.keys``: ``int`` keys are 4 big-endian bytes, ``long`` keys 8).

A key the client does not hash (a null key for most clients, which then pick a
partition at random, in turn or sticky) gets -1. The hash rules live once in
``kassign.producer.hashing``: the scalar path calls them in Python, the batch path runs the same
functions compiled by numba over Arrow's flat byte buffer (``kassign.producer.kernels``).
"""

from __future__ import annotations

import itertools
import random
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from kassign.producer import hashing
from kassign.producer.clients import NOT_HASHED, resolve
from kassign.core.cluster import Cluster
from kassign.core.errors import InvalidPartitionError, KassignError, shown
from kassign.producer.keys import flatten_keys, serialize_key
from kassign.core.limits import JAVA_INT_MAX, is_whole_number

MASK32 = hashing.MASK32
SEED = hashing.MURMUR2_SEED
M = hashing.MURMUR2_M
NULL_KEY_PARTITION = NOT_HASHED


def _to_signed32(value: int) -> int:
    return value - (1 << 32) if value & 0x80000000 else value


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Kafka's ``Utils.murmur2``: a signed 32-bit hash of ``data``.

    ``data`` is bytes, a bytearray or a memoryview (hashed as ``bytes(view)``). Nothing else is
    turned into bytes for you: ``bytes(5)`` is five zero bytes and ``bytes([1, 2])`` two bytes,
    neither of which is what a producer's serialiser writes for 5 or [1, 2].
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        return _to_signed32(hashing.hash_bytes(hashing.MURMUR2, bytes(data)))
    if isinstance(data, str):
        raise KassignError("murmur2 hashes bytes; encode text first, e.g. key.encode('utf-8')")
    if isinstance(data, np.ndarray):
        hint = "; pass array.tobytes() to hash its memory"
    elif is_whole_number(data):
        hint = ("; serialise a number first as the producer does, e.g. kassign.producer.keys.serialize_key(42, 'int') "
                "(4 bytes) or 'long' (8 bytes)")
    else:
        hint = ""
    raise KassignError(f"murmur2 hashes bytes (bytes, bytearray or memoryview), got {type(data).__name__}{hint}")


def to_positive(number: int) -> int:
    """Kafka's ``Utils.toPositive``: clear the sign bit (not ``abs``)."""
    return number & 0x7FFFFFFF


def _check_partition_count(num_partitions: int) -> None:
    """A topic's partition count: Kafka keeps it in a Java int, so 1 .. 2^31-1 (numpy integers too)."""
    if not is_whole_number(num_partitions):
        raise KassignError(f"number of partitions must be a whole number >= 1, got {num_partitions!r}")
    if not 1 <= num_partitions <= JAVA_INT_MAX:
        raise KassignError(f"number of partitions must be from 1 to {JAVA_INT_MAX} (Kafka keeps a topic's "
                           f"partition count in a Java int), got {shown(int(num_partitions))}")


def partition_for_key(key: bytes | str | int | None, num_partitions: int, partitioner: str = "java",
                      key_type: str | None = None) -> int:
    """The partition ``partitioner`` (default: Kafka's Java producer) picks for ``key``.

    ``key`` is bytes, text (hashed as UTF-8), an integer with ``key_type="int"`` or
    ``"long"``, or None. Returns -1 where the client does not hash the key (see
    ``kassign.producer.clients``: e.g. a null key under ``java``).
    """
    _check_partition_count(num_partitions)
    return resolve(partitioner).partition(serialize_key(key, key_type), int(num_partitions))


def partitions_for_keys(keys: Any, num_partitions: int, partitioner: str = "java",
                        key_type: str | None = None) -> np.ndarray:
    """Partitions for a batch of keys, as ``partition_for_key`` gives them one by one.

    ``keys``: a list (bytes, str, None; integers with ``key_type``), or a pyarrow
    binary/string/integer array (int32 serialises as ``int``, int64 as ``long``), or a
    numpy integer array. Returns an int32 numpy array; -1 where the client does not hash
    the key.
    """
    _check_partition_count(num_partitions)
    client = resolve(partitioner)
    from kassign.producer.kernels import hash_loop

    data, offsets, nulls = flatten_keys(keys, key_type)
    n = int(num_partitions)
    partitions = np.empty(len(offsets) - 1, dtype=np.int32)
    hash_loop(data, offsets, client.hash_kind, client.fold, partitions, modulus=n)  # hash and reduce in one pass
    _mark_unhashed(partitions, client, offsets, nulls, n)
    return partitions


def _mark_unhashed(partitions: np.ndarray, client: Any, offsets: np.ndarray, nulls: np.ndarray | None, n: int) -> None:
    """Null and (for some clients) empty keys: the fixed partition where the client hashes them, else -1."""
    if client.empty_key_random:
        partitions[np.diff(offsets) == 0] = NULL_KEY_PARTITION
    if nulls is not None:
        # a null key is the empty key where the client hashes it (Arrow may give a null slot bytes), else unhashed
        partitions[nulls] = client.partition(b"", n) if client.null_key_hashed else NULL_KEY_PARTITION


def partitions_for_clients(keys: Any, num_partitions: int, partitioners: Sequence[str],
                           key_type: str | None = None) -> np.ndarray:
    """``partitions_for_keys`` under several partitioners at once: an int32 array of shape
    (len(partitioners), len(keys)), row i for ``partitioners[i]``. Each hash function runs once
    over the keys, whatever the number of clients sharing it (15 clients use 4 hashes)."""
    _check_partition_count(num_partitions)
    clients = [resolve(name) for name in partitioners]
    from kassign.producer.kernels import fold_loop, hash_loop

    data, offsets, nulls = flatten_keys(keys, key_type)
    n = int(num_partitions)
    count = len(offsets) - 1
    hashes: dict[int, np.ndarray] = {}
    result = np.empty((len(clients), count), dtype=np.int32)
    for row, client in enumerate(clients):
        if client.hash_kind not in hashes:
            unsigned = np.empty(count, dtype=np.int64)
            hash_loop(data, offsets, client.hash_kind, hashing.FOLD_UNSIGNED, unsigned)
            hashes[client.hash_kind] = unsigned
        fold_loop(hashes[client.hash_kind], client.fold, n, result[row])
        _mark_unhashed(result[row], client, offsets, nulls, n)
    return result


def hashes_for_keys(keys: Any, hash_kind: int = hashing.MURMUR2, key_type: str | None = None) -> np.ndarray:
    """The 32-bit ``hash_kind`` hash of every key as a signed int32 array (a null key hashes as empty)."""
    from kassign.producer.kernels import hash_loop

    data, offsets, _ = flatten_keys(keys, key_type)
    hashes = np.empty(len(offsets) - 1, dtype=np.int64)
    hash_loop(data, offsets, hash_kind, hashing.FOLD_UNSIGNED, hashes)
    return hashes.astype(np.uint32).view(np.int32)


def murmur2_many(keys: Any) -> np.ndarray:
    """Kafka's murmur2 of every key as an int32 array (a null key hashes as the empty key)."""
    return hashes_for_keys(keys, hashing.MURMUR2)


class Partitioner(ABC):
    """Kafka's producer ``Partitioner``: picks the partition of a record."""

    @abstractmethod
    def partition(self, topic: str, key_bytes: bytes | None, value_bytes: bytes | None, cluster: Cluster) -> int:
        """The partition for a record of ``topic`` with the given serialized key and value."""

    def close(self) -> None:
        """Release resources; nothing to release for the built-in partitioners."""


def _partition_count(topic: str, cluster: Cluster) -> int:
    count = cluster.partition_count(topic)
    if not count:
        raise KassignError(f"topic {topic!r} has no partitions in the cluster metadata")
    return count


class _TopicCounters:
    """A per-topic counter, as Kafka keeps one per topic in a concurrent map."""

    def __init__(self, first: Any) -> None:
        self._first = first
        self._counters: dict[str, itertools.count] = {}
        self._lock = threading.Lock()

    def next(self, topic: str) -> int:
        with self._lock:
            counter = self._counters.get(topic)
            if counter is None:
                counter = self._counters[topic] = itertools.count(self._first())
            return _to_signed32(next(counter) & MASK32)


def _spread_over_available(counter_value: int, topic: str, cluster: Cluster) -> int:
    available = cluster.available_partition_ids(topic)
    if available:
        return available[to_positive(counter_value) % len(available)]
    return to_positive(counter_value) % _partition_count(topic, cluster)


def validate_record_partition(topic: str, record_partition: int, cluster: Cluster) -> int:
    """An explicit partition, checked against the topic's range as ``KafkaProducer`` checks it."""
    count = _partition_count(topic, cluster)
    if not 0 <= record_partition < count:
        raise InvalidPartitionError(
            f"Invalid partition given with record: {record_partition} is not in the range [0...{count})."
        )
    return record_partition


def choose_partition(partitioner: Partitioner, topic: str, key_bytes: bytes | None, value_bytes: bytes | None,
                     cluster: Cluster, record_partition: int | None = None) -> int:
    """What ``KafkaProducer.send`` does: an explicit partition wins (once validated), else the partitioner picks."""
    if record_partition is not None:
        return validate_record_partition(topic, record_partition, cluster)
    return partitioner.partition(topic, key_bytes, value_bytes, cluster)


class DefaultPartitioner(Partitioner):
    """Kafka's classic default partitioner.

    An explicit partition wins (see ``choose_partition``); a keyed record goes to
    ``toPositive(murmur2(key)) % partitions`` over *all* partitions; a record
    without a key goes round-robin over the *available* partitions (those with a
    leader), or over all of them when none is available. The round-robin counter
    starts at a random value per topic, as Kafka's does; pass ``seed`` for a
    reproducible start.
    """

    def __init__(self, seed: int | None = None) -> None:
        rng = random.Random(seed)
        self._counters = _TopicCounters(lambda: rng.getrandbits(32))

    def partition(self, topic: str, key_bytes: bytes | None, value_bytes: bytes | None, cluster: Cluster,
                  record_partition: int | None = None) -> int:
        if record_partition is not None:
            return validate_record_partition(topic, record_partition, cluster)
        if key_bytes is None:
            return _spread_over_available(self._counters.next(topic), topic, cluster)
        return partition_for_key(key_bytes, _partition_count(topic, cluster))


class RoundRobinPartitioner(Partitioner):
    """Kafka's ``RoundRobinPartitioner``: every record, keyed or not, to the next available partition.

    The per-topic counter starts at 0.
    """

    def __init__(self) -> None:
        self._counters = _TopicCounters(lambda: 0)

    def partition(self, topic: str, key_bytes: bytes | None, value_bytes: bytes | None, cluster: Cluster) -> int:
        return _spread_over_available(self._counters.next(topic), topic, cluster)


def partition_records(partitioner: Partitioner, topic: str, keys: Sequence[bytes | None], cluster: Cluster) -> list[int]:
    """Run ``partitioner`` over a sequence of record keys, in order."""
    return [partitioner.partition(topic, key, None, cluster) for key in keys]
