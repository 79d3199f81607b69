"""The 32-bit key hashes producer clients partition by, each written once.

Every function hashes ``data[start:end]`` and returns the hash as an unsigned 32-bit
value in a Python int. The same source serves both paths: called directly on ``bytes``
it is the scalar path; ``kassign.producer.kernels`` compiles it unchanged with numba for the
batch path over Arrow's flat byte buffer. So the functions use only integer (and, for
KafkaJS's legacy hash, float64) arithmetic, module-level constants, and no calls to
helpers other than the ones here that ``kassign.producer.kernels`` binds to their compiled versions
(numba compiles a function together with the globals it names, and a plain Python helper
would not compile). A byte ``data[j]`` is an int in Python and a uint8 in
numba, where mixing it with int64 values gives int64, so both paths compute in the same
integers.

- ``murmur2_span``: MurmurHash2, seed 0x9747b28c, as Kafka's ``Utils.murmur2`` (Java
  producer, librdkafka ``murmur2``, KafkaJS ``DefaultPartitioner``, Sarama murmur2).
  ``b"user-1"`` -> 1404122828.
- ``crc32_span``: CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, the one zlib
  computes), as librdkafka ``consistent`` and Sarama's CRC partitioner. ``b"user-1"`` ->
  ``zlib.crc32(b"user-1")`` = 2116437524.
- ``fnv1a_span``: FNV-1a 32-bit (offset basis 0x811C9DC5, prime 0x01000193), as
  librdkafka ``fnv1a`` and Sarama's default hash partitioner. ``b""`` -> 0x811C9DC5.
- ``kafkajs_legacy_span``: what KafkaJS's ``LegacyPartitioner`` computes. It meant to be
  murmur2 but evaluates it in JavaScript numbers: every multiplication is a float64
  product (rounded to 53 significant bits) that is then wrapped to 32 bits, and its
  block loop runs ``ceil(len / 4)`` times, so the last partial block is hashed once
  padded with zero bytes and then again as the tail. Only keys whose intermediate
  products stay below 2**53 agree with murmur2, which is almost none.

``fold_hash`` turns a hash into the non-negative "position" a client takes the modulo
of (``partition = position % partitions``): clear the sign bit (Java), read it unsigned
(librdkafka consistent), or take the absolute value of the signed 32-bit hash (Sarama,
librdkafka fnv1a; -2**31 stays 2**31 as a 32-bit unsigned value).
"""

from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF
SIGN32 = 0x80000000

# Hash kinds and fold rules, as small integer codes the batch kernel switches on.
MURMUR2 = 0
CRC32 = 1
FNV1A = 2
KAFKAJS_LEGACY = 3
HASH_NAMES = {MURMUR2: "murmur2", CRC32: "crc32", FNV1A: "fnv1a", KAFKAJS_LEGACY: "kafkajs-legacy-murmur2"}

FOLD_SIGN_BIT = 0  # h & 0x7fffffff (Kafka's Utils.toPositive)
FOLD_UNSIGNED = 1  # h read as uint32
FOLD_ABS = 2  # |int32(h)|, so -2**31 gives 2**31

MURMUR2_SEED = 0x9747B28C
MURMUR2_M = 0x5BD1E995
MURMUR2_M_FLOAT = float(MURMUR2_M)
FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193


def _crc32_table() -> np.ndarray:
    table = np.zeros(256, dtype=np.int64)
    for byte in range(256):
        c = byte
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table[byte] = c
    return table


CRC32_TABLE = _crc32_table()


def murmur2_mix(h, k):
    """murmur2's step for one whole 4-byte block: ``k`` (the block read little-endian) mixed into ``h``."""
    m = MURMUR2_M
    mask = MASK32
    k = (k * m) & mask
    k ^= k >> 24
    return ((h * m) & mask) ^ ((k * m) & mask)


def murmur2_tail_word(data, j, tail):
    """The ``tail`` (0-3) bytes at ``data[j:]`` read little-endian, as ``murmur2_tail`` takes them."""
    word = 0
    for b in range(tail):
        word |= data[j + b] << (8 * b)
    return word


def murmur2_tail(h, tail_word, tail):
    """murmur2's step for the ``tail`` (0-3) bytes left after the whole blocks, given as ``tail_word``,
    those bytes read little-endian (folding them in one by one, highest first, is the same XOR)."""
    if tail > 0:
        h = ((h ^ tail_word) * MURMUR2_M) & MASK32
    return h


def murmur2_avalanche(h):
    """murmur2's final mix."""
    h ^= h >> 13
    h = (h * MURMUR2_M) & MASK32
    return h ^ (h >> 15)


def murmur2_span(data, start, end):
    """Kafka's murmur2 of ``data[start:end]`` as an unsigned 32-bit int.

    Its steps (``murmur2_mix``, ``murmur2_tail_word``, ``murmur2_tail``, ``murmur2_avalanche``) are shared with
    ``kassign.producer.kernels``' lockstep loop, which runs the same steps across many keys at once."""
    length = end - start
    h = (MURMUR2_SEED ^ length) & MASK32
    whole_end = start + (length & ~3)
    j = start
    while j < whole_end:  # 4-byte little-endian blocks
        h = murmur2_mix(h, data[j] | (data[j + 1] << 8) | (data[j + 2] << 16) | (data[j + 3] << 24))
        j += 4
    return murmur2_avalanche(murmur2_tail(h, murmur2_tail_word(data, j, end - j), end - j))


def crc32_span(data, start, end):
    """CRC-32 (IEEE, as zlib) of ``data[start:end]``, unsigned 32-bit."""
    c = MASK32
    for j in range(start, end):
        c = int(CRC32_TABLE[(c ^ data[j]) & 0xFF]) ^ (c >> 8)
    return c ^ MASK32


def fnv1a_span(data, start, end):
    """FNV-1a 32-bit of ``data[start:end]``, unsigned."""
    h = FNV_OFFSET
    for j in range(start, end):
        h = ((h ^ data[j]) * FNV_PRIME) & MASK32
    return h


def kafkajs_legacy_span(data, start, end):
    """KafkaJS ``LegacyPartitioner``'s hash of ``data[start:end]``, unsigned 32-bit.

    JavaScript semantics spelled out: ``a * b`` on two 32-bit ints is a float64 product,
    here ``int(float(a) * M)`` (exact: the rounded product is a whole number below
    2**63); ``x ^ y`` first wraps both sides to signed 32 bits (``ToInt32``) and
    ``x >>> s`` wraps to unsigned 32 bits (``ToUint32``); both are "value mod 2**32".
    """
    length = end - start
    # ToInt32(seed ^ length), written inline: ((v & MASK32) ^ SIGN32) - SIGN32 is v wrapped to int32.
    h = (((MURMUR2_SEED ^ length) & MASK32) ^ SIGN32) - SIGN32
    blocks = (length + 3) >> 2  # the JS loop tests i < length / 4 (a fraction), so a partial block runs too
    for block in range(blocks):
        j = start + 4 * block
        word = 0
        for b in range(4):  # bytes past the end read as `undefined`, and undefined & 0xff is 0
            if j + b < end:
                word |= data[j + b] << (8 * b)
        k = ((word & MASK32) ^ SIGN32) - SIGN32
        k = int(float(k) * MURMUR2_M_FLOAT)  # k *= M
        k = ((((k & MASK32) ^ SIGN32) - SIGN32) ^ ((k & MASK32) >> 24))  # k ^= k >>> 24
        k = int(float(k) * MURMUR2_M_FLOAT)  # k *= M
        hm = int(float(h) * MURMUR2_M_FLOAT)  # h *= M
        h = ((((hm & MASK32) ^ SIGN32) - SIGN32) ^ (((k & MASK32) ^ SIGN32) - SIGN32))  # h ^= k
    tail = length & 3
    base = start + (length & ~3)
    if tail == 3:
        h ^= data[base + 2] << 16
    if tail >= 2:
        h ^= data[base + 1] << 8
    if tail >= 1:
        h ^= data[base]
        h = int(float(h) * MURMUR2_M_FLOAT)
    h = ((((h & MASK32) ^ SIGN32) - SIGN32) ^ ((h & MASK32) >> 13))  # h ^= h >>> 13
    h = int(float(h) * MURMUR2_M_FLOAT)  # h *= M
    h = ((((h & MASK32) ^ SIGN32) - SIGN32) ^ ((h & MASK32) >> 15))  # h ^= h >>> 15
    return h & MASK32


def fold_hash(fold, h):
    """The non-negative position a client reduces modulo the partition count (see module doc)."""
    if fold == FOLD_SIGN_BIT:
        return h & 0x7FFFFFFF
    if fold == FOLD_ABS:
        signed = ((h & MASK32) ^ SIGN32) - SIGN32
        return -signed if signed < 0 else signed
    return h & MASK32


SPANS = {MURMUR2: murmur2_span, CRC32: crc32_span, FNV1A: fnv1a_span, KAFKAJS_LEGACY: kafkajs_legacy_span}


def hash_bytes(kind: int, data: bytes) -> int:
    """The ``kind`` hash of a whole key, unsigned 32-bit (scalar path)."""
    return int(SPANS[kind](data, 0, len(data)))


def hash_loop(data, offsets, kind, fold, modulus, out):
    """Batch path: ``out[i]`` = ``fold_hash(fold, hash of key i)``, keys in Arrow's (bytes, offsets) layout;
    reduced ``% modulus`` (the partition count) when ``modulus`` > 0, so the partition is written in
    the same pass.

    Compiled by ``kassign.producer.kernels`` with the span functions above bound to their numba
    versions; the branch on ``kind`` is per key and always the same, so it costs nothing
    next to the hashing.
    """
    for i in range(offsets.shape[0] - 1):
        start = offsets[i]
        end = offsets[i + 1]
        if kind == MURMUR2:
            h = murmur2_span(data, start, end)
        elif kind == CRC32:
            h = crc32_span(data, start, end)
        elif kind == FNV1A:
            h = fnv1a_span(data, start, end)
        else:
            h = kafkajs_legacy_span(data, start, end)
        position = fold_hash(fold, h)
        out[i] = position % modulus if modulus > 0 else position
