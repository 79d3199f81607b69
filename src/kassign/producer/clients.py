"""Every common producer client's partitioner, by name ``CLIENT:NAME``.

Each partitioner is a hash (``kassign.producer.hashing``), a fold of the 32-bit hash to a
non-negative position, and ``partition = position % partitions``; plus what the client
does with a null key and with an empty key. Worked examples, 12 partitions, key
``b"user-8"``, whose hashes are murmur2 2650219769 (int32 -1644747527), crc32 133889712,
fnv1a 3998445167 (int32 -296522129) and KafkaJS-legacy 909453930:

- ``java``: Kafka's Java producer: ``(murmur2(key) & 0x7fffffff) % n``:
  502736121 % 12 -> 9. Null key: not hashed (sticky batches, KIP-794) -> -1.
- ``librdkafka:consistent``: ``crc32(key) % n``, the CRC read unsigned: 133889712 % 12 -> 0.
  Null key hashed as the empty key: crc32(b"") = 0 -> 0.
- ``librdkafka:consistent_random`` (librdkafka's default): as ``consistent`` -> 0, but null
  and empty keys are not hashed (a random partition, kept for ``sticky.partitioning.linger.ms``) -> -1.
- ``librdkafka:murmur2``: as ``java`` -> 9. Null key hashed as empty: murmur2(b"") -> 9.
- ``librdkafka:murmur2_random``: as ``java`` -> 9; null key -> -1; the empty key is hashed -> 9.
- ``librdkafka:fnv1a``: ``abs(int32(fnv1a(key))) % n``: 296522129 % 12 -> 5. Null key hashed
  as empty: fnv1a(b"") = 0x811C9DC5, int32 -2128831035, abs % 12 -> 3.
- ``librdkafka:fnv1a_random``: as ``fnv1a`` -> 5; null key -> -1; the empty key is hashed -> 3.
- ``kafkajs:default`` and ``kafkajs:java-compatible`` (one class since KafkaJS 2.0): as
  ``java`` -> 9. Null key: round-robin -> -1.
- ``kafkajs:legacy``: ``(legacy(key) & 0x7fffffff) % n`` with KafkaJS's float64 murmur2
  (``hashing.kafkajs_legacy_span``): 909453930 % 12 -> 6. Null key: round-robin -> -1.
- ``sarama:hash`` (Sarama's default, ``NewHashPartitioner``): FNV-1a, ``abs(int32(h) % n)``,
  the same as ``abs(int32(h)) % n`` -> 5. Null key: random -> -1; the empty key is hashed -> 3.
- ``sarama:reference-abs`` (``NewReferenceHashPartitioner``): ``(int32(fnv1a) & 0x7fffffff) % n``:
  1850961519 % 12 -> 3.
- ``sarama:hash-unsigned`` (``WithHashUnsigned``): ``fnv1a % n`` unsigned: 3998445167 % 12 -> 11.
- ``sarama:crc`` (``NewConsistentCRCHashPartitioner``): ``crc32 % n`` unsigned, as librdkafka
  ``consistent`` -> 0. Null key: random -> -1; the empty key is hashed -> 0.
- ``sarama:murmur2`` (``NewMurmur2Partitioner``): as ``java`` -> 9. Null key: random -> -1.

Every Sarama partitioner picks a random partition for a null key and hashes an empty one.

A result of -1 means "this client does not hash it; it picks at random or in turn"; how
the pipeline models that choice is ``unhashed_model``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kassign.producer import hashing as H
from kassign.core.errors import KassignError

DEFAULT = "java"
NOT_HASHED = -1


class UnknownPartitionerError(KassignError):
    """No producer partitioner answers to the requested name."""


@dataclass(frozen=True)
class ClientPartitioner:
    """One client's partitioning rule (see the module docstring for each)."""

    name: str
    hash_kind: int
    fold: int
    null_key_hashed: bool  # True: a null key is hashed as the empty key (a fixed partition)
    empty_key_random: bool  # True: an empty key is not hashed either (librdkafka consistent_random)
    unhashed_model: str  # how unhashed records spread: "sticky" (KIP-794), "round-robin" or "random"
    rule: str

    @property
    def client(self) -> str:
        return self.name.split(":", 1)[0]

    def position(self, key: bytes) -> int:
        """The non-negative value this client reduces modulo the partition count."""
        return int(H.fold_hash(self.fold, H.SPANS[self.hash_kind](key, 0, len(key))))

    def hash32(self, key: bytes) -> int:
        """The client's 32-bit hash of ``key``, unsigned."""
        return H.hash_bytes(self.hash_kind, key)

    def hashes(self, key: bytes | None) -> bool:
        """Whether this client hashes ``key`` at all (else it picks a partition itself)."""
        if key is None:
            return self.null_key_hashed
        return not (self.empty_key_random and len(key) == 0)

    def partition(self, key: bytes | None, num_partitions: int) -> int:
        """The partition for a serialised key; -1 where the client does not hash it."""
        if not self.hashes(key):
            return NOT_HASHED
        return self.position(key or b"") % num_partitions


def _p(name: str, kind: int, fold: int, null_hashed: bool, empty_random: bool, model: str,
       rule: str) -> ClientPartitioner:
    return ClientPartitioner(name, kind, fold, null_hashed, empty_random, model, rule)


_ALL = (
    _p("java", H.MURMUR2, H.FOLD_SIGN_BIT, False, False, "sticky", "(murmur2 & 0x7fffffff) % n; null key sticky"),
    _p("librdkafka:consistent", H.CRC32, H.FOLD_UNSIGNED, True, False, "random", "crc32 % n; null key as empty"),
    _p("librdkafka:consistent_random", H.CRC32, H.FOLD_UNSIGNED, False, True, "random",
       "crc32 % n; null and empty keys random"),
    _p("librdkafka:murmur2", H.MURMUR2, H.FOLD_SIGN_BIT, True, False, "random",
       "(murmur2 & 0x7fffffff) % n; null key as empty"),
    _p("librdkafka:murmur2_random", H.MURMUR2, H.FOLD_SIGN_BIT, False, False, "random",
       "(murmur2 & 0x7fffffff) % n; null key random"),
    _p("librdkafka:fnv1a", H.FNV1A, H.FOLD_ABS, True, False, "random", "abs(int32(fnv1a)) % n; null key as empty"),
    _p("librdkafka:fnv1a_random", H.FNV1A, H.FOLD_ABS, False, False, "random",
       "abs(int32(fnv1a)) % n; null key random"),
    _p("kafkajs:default", H.MURMUR2, H.FOLD_SIGN_BIT, False, False, "round-robin",
       "(murmur2 & 0x7fffffff) % n; null key round-robin"),
    _p("kafkajs:legacy", H.KAFKAJS_LEGACY, H.FOLD_SIGN_BIT, False, False, "round-robin",
       "(float64 murmur2 & 0x7fffffff) % n; null key round-robin"),
    _p("kafkajs:java-compatible", H.MURMUR2, H.FOLD_SIGN_BIT, False, False, "round-robin",
       "(murmur2 & 0x7fffffff) % n; null key round-robin"),
    _p("sarama:hash", H.FNV1A, H.FOLD_ABS, False, False, "random", "abs(int32(fnv1a)) % n; null key random"),
    _p("sarama:reference-abs", H.FNV1A, H.FOLD_SIGN_BIT, False, False, "random",
       "(int32(fnv1a) & 0x7fffffff) % n; null key random"),
    _p("sarama:hash-unsigned", H.FNV1A, H.FOLD_UNSIGNED, False, False, "random", "fnv1a % n; null key random"),
    _p("sarama:crc", H.CRC32, H.FOLD_UNSIGNED, False, False, "random", "crc32 % n; null key random"),
    _p("sarama:murmur2", H.MURMUR2, H.FOLD_SIGN_BIT, False, False, "random",
       "(murmur2 & 0x7fffffff) % n; null key random"),
)
PARTITIONERS: dict[str, ClientPartitioner] = {p.name: p for p in _ALL}
NAMES: tuple[str, ...] = tuple(PARTITIONERS)
_ALIASES = {"java:default": "java", "kafka": "java"}


def resolve(name: str | ClientPartitioner | None) -> ClientPartitioner:
    """The partitioner called ``name`` (``CLIENT:NAME``; None means ``java``)."""
    if isinstance(name, ClientPartitioner):
        return name
    if name is None:
        return PARTITIONERS[DEFAULT]
    exact = PARTITIONERS.get(name) if isinstance(name, str) else None
    if exact is not None:  # the common case, before any normalising
        return exact
    if not isinstance(name, str):
        raise UnknownPartitionerError(f"partitioner must be a name such as 'sarama:hash', got {type(name).__name__}")
    wanted = name.strip().lower()
    wanted = _ALIASES.get(wanted, wanted)
    if wanted not in PARTITIONERS:
        raise UnknownPartitionerError(f"unknown partitioner {name!r}: use one of {', '.join(NAMES)}")
    return PARTITIONERS[wanted]


def resolve_list(text: str) -> list[ClientPartitioner]:
    """``"java,sarama:hash"`` -> partitioners, in order, each once."""
    names = [part for part in (p.strip() for p in text.split(",")) if part]
    if not names:
        raise UnknownPartitionerError(f"no partitioner named in {text!r}: use one or more of {', '.join(NAMES)}")
    chosen: list[ClientPartitioner] = []
    for name in names:
        partitioner = resolve(name)
        if partitioner in chosen:
            raise UnknownPartitionerError(f"partitioner {partitioner.name} is named twice in {text!r}")
        chosen.append(partitioner)
    return chosen
