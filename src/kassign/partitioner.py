"""key -> partition: Kafka's murmur2 and the producer's partitioners.

``murmur2`` is MurmurHash2 (32-bit, seed 0x9747b28c) as Kafka's ``Utils.murmur2``
computes it: little-endian 4-byte blocks, a 1-3 byte tail, result as a signed
32-bit int. A keyed record goes to ``(murmur2(key) & 0x7fffffff) % partitions``.

Data layout of the batch path: keys travel as one flat ``uint8`` buffer plus an
``int64`` offsets array (Arrow's binary layout), so the numba kernel walks
integers only and a pyarrow array is hashed without copying its bytes. A null
key is marked in a boolean mask and gets partition -1 (Kafka does not hash it).
"""

from __future__ import annotations

import functools
import itertools
import random
import struct
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kassign.cluster import Cluster
from kassign.errors import InvalidPartitionError, KassignError

SEED = 0x9747B28C
M = 0x5BD1E995
MASK32 = 0xFFFFFFFF
NULL_KEY_PARTITION = -1
_BLOCKS = struct.Struct("<I")


def _to_signed32(value: int) -> int:
    return value - (1 << 32) if value & 0x80000000 else value


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2``: a signed 32-bit hash of ``data``."""
    if isinstance(data, str):
        raise KassignError("murmur2 hashes bytes; encode text first, e.g. key.encode('utf-8')")
    data = bytes(data)
    length = len(data)
    h = (SEED ^ length) & MASK32
    whole = length & ~3
    for (k,) in _BLOCKS.iter_unpack(data[:whole]) if whole else ():
        k = (k * M) & MASK32
        k ^= k >> 24
        k = (k * M) & MASK32
        h = ((h * M) & MASK32) ^ k
    tail = length & 3
    if tail:
        if tail == 3:
            h ^= data[whole + 2] << 16
        if tail >= 2:
            h ^= data[whole + 1] << 8
        h ^= data[whole]
        h = (h * M) & MASK32
    h ^= h >> 13
    h = (h * M) & MASK32
    h ^= h >> 15
    return _to_signed32(h)


def to_positive(number: int) -> int:
    """Kafka's ``Utils.toPositive``: clear the sign bit (not ``abs``)."""
    return number & 0x7FFFFFFF


def _check_partition_count(num_partitions: int) -> None:
    if not isinstance(num_partitions, (int, np.integer)) or isinstance(num_partitions, bool) or num_partitions < 1:
        raise KassignError(f"number of partitions must be a whole number >= 1, got {num_partitions!r}")


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """The partition Kafka's default partitioner picks for a keyed record."""
    _check_partition_count(num_partitions)
    return to_positive(murmur2(key)) % num_partitions


def _murmur2_batch(data, offsets, out):  # pragma: no cover - compiled by numba
    m = np.uint64(M)
    mask = np.uint64(MASK32)
    for i in range(offsets.shape[0] - 1):
        start = offsets[i]
        length = offsets[i + 1] - start
        h = (np.uint64(SEED) ^ np.uint64(length)) & mask
        whole = length & ~3
        j = start
        end = start + whole
        while j < end:
            k = (
                np.uint64(data[j])
                | (np.uint64(data[j + 1]) << np.uint64(8))
                | (np.uint64(data[j + 2]) << np.uint64(16))
                | (np.uint64(data[j + 3]) << np.uint64(24))
            )
            k = (k * m) & mask
            k ^= k >> np.uint64(24)
            k = (k * m) & mask
            h = ((h * m) & mask) ^ k
            j += 4
        tail = length & 3
        if tail == 3:
            h ^= np.uint64(data[end + 2]) << np.uint64(16)
        if tail >= 2:
            h ^= np.uint64(data[end + 1]) << np.uint64(8)
        if tail >= 1:
            h ^= np.uint64(data[end])
            h = (h * m) & mask
        h ^= h >> np.uint64(13)
        h = (h * m) & mask
        h ^= h >> np.uint64(15)
        out[i] = np.int64(h)


@functools.cache
def _murmur2_kernel() -> Callable[..., None]:
    """The batch loop compiled by numba on first use (so the CLI does not pay numba's import)."""
    import numba

    return numba.njit(cache=True, nogil=True)(_murmur2_batch)


def _flatten_keys(keys: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Keys as (flat uint8 bytes, int64 offsets of len n+1, null mask or None)."""
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        pa = None
    if pa is not None and isinstance(keys, (pa.Array, pa.ChunkedArray)):
        return _flatten_arrow(keys, pa)
    if isinstance(keys, (bytes, str)):
        raise KassignError("partitions_for_keys takes a list of keys; for one key use partition_for_key")
    keys = list(keys)
    try:
        lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
        blob = b"".join(keys)
        nulls = None
    except TypeError:
        encoded: list[bytes] = []
        nulls = np.zeros(len(keys), dtype=bool)
        for i, key in enumerate(keys):
            if key is None:
                nulls[i] = True
                encoded.append(b"")
            elif isinstance(key, str):
                encoded.append(key.encode("utf-8"))
            elif isinstance(key, (bytes, bytearray, memoryview)):
                encoded.append(bytes(key))
            else:
                raise KassignError(f"key #{i} is {type(key).__name__}; keys must be bytes, str or None") from None
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        blob = b"".join(encoded)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(blob, dtype=np.uint8), offsets, nulls


def _flatten_arrow(keys: Any, pa: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    if pa.types.is_string(keys.type) or pa.types.is_binary(keys.type):
        offset_type = np.int32
    elif pa.types.is_large_string(keys.type) or pa.types.is_large_binary(keys.type):
        offset_type = np.int64
    elif pa.types.is_string_view(keys.type) or pa.types.is_binary_view(keys.type):
        return _flatten_arrow(keys.cast(pa.large_binary()), pa)
    else:
        raise KassignError(f"pyarrow keys must be binary or string, got {keys.type}")
    _, offsets_buf, data_buf = keys.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[keys.offset : keys.offset + len(keys) + 1].astype(np.int64)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    nulls = keys.is_null().to_numpy(zero_copy_only=False) if keys.null_count else None
    return data, offsets, nulls


def _hash_batch(keys: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """Unsigned 32-bit murmur2 of every key (held in int64) and the null mask."""
    data, offsets, nulls = _flatten_keys(keys)
    hashes = np.empty(len(offsets) - 1, dtype=np.int64)
    _murmur2_kernel()(data, offsets, hashes)
    return hashes, nulls


def murmur2_many(keys: Any) -> np.ndarray:
    """Kafka's murmur2 of every key as an int32 array (a null key hashes as the empty key)."""
    hashes, _ = _hash_batch(keys)
    return hashes.astype(np.uint32).view(np.int32)


def partitions_for_keys(keys: Any, num_partitions: int) -> np.ndarray:
    """Partitions for a batch of keys (list of bytes/str, or a pyarrow binary/string array).

    Returns an int32 numpy array; a null key gets -1, since Kafka does not hash
    records without a key (see ``DefaultPartitioner`` for where they go).
    """
    _check_partition_count(num_partitions)
    hashes, nulls = _hash_batch(keys)
    partitions = ((hashes & 0x7FFFFFFF) % int(num_partitions)).astype(np.int32)
    if nulls is not None:
        partitions[nulls] = NULL_KEY_PARTITION
    return partitions


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
    available = cluster.available_partitions(topic)
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
