"""Record keys as the bytes a producer hashes: Kafka's key serialisers, for one key or a batch.

A partitioner never sees a key, only its serialised bytes, so the key type matters:

- ``string``: ``StringSerializer``, the UTF-8 bytes of the text. ``"user-1"`` -> ``75 73 65 72 2d 31``.
- ``bytes``: ``ByteArraySerializer``, the bytes as they are.
- ``int``: ``IntegerSerializer``, 4 bytes big-endian two's complement. ``42`` -> ``00 00 00 2a``,
  ``-1`` -> ``ff ff ff ff``.
- ``long``: ``LongSerializer``, 8 bytes big-endian. ``42`` -> ``00 00 00 00 00 00 00 2a``.

``key_type=None`` takes the type from the value: ``str`` is ``string``, ``bytes`` is ``bytes``;
a pyarrow or numpy int32 array is ``int`` and an int64 array ``long``. A Python ``int`` is
ambiguous (4 or 8 bytes?) and needs ``key_type``.

Batch layout: keys become one flat ``uint8`` buffer plus ``int64`` offsets (n + 1 of them,
Arrow's binary layout) and a null mask; a null key is an empty span there, marked in the
mask. A pyarrow binary or string array is used without copying its bytes; integer keys are
serialised by one vectorised big-endian cast.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kassign.core.errors import KassignError
from kassign.core.limits import is_whole_number

KEY_TYPES = ("string", "bytes", "int", "long")
INT_WIDTHS = {"int": 4, "long": 8}
_INT_RANGES = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}
_AMBIGUOUS_INT = "pass key_type='int' (Kafka's IntegerSerializer, 4 bytes) or key_type='long' (LongSerializer, 8 bytes)"

Flat = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]


def check_key_type(key_type: str | None) -> str | None:
    """``key_type`` itself, once known to be one of ``KEY_TYPES`` (or None: from the values)."""
    if key_type is not None and key_type not in KEY_TYPES:
        raise KassignError(f"unknown key type {key_type!r}: use one of {', '.join(KEY_TYPES)}")
    return key_type


def utf8(text: str) -> bytes:
    """A str key as Kafka's StringSerializer writes it; a lone surrogate is not text it can write."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        shown = text.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
        raise KassignError(f"key {shown!r} has a lone surrogate at position {err.start}; it is not text a "
                           "StringSerializer can write (pass the key as bytes)") from None


def serialize_key(key: Any, key_type: str | None = None) -> bytes | None:
    """The bytes Kafka's serialiser writes for ``key``; None for a null key."""
    if key_type is None and isinstance(key, bytes):  # the common case first
        return key
    check_key_type(key_type)
    if key is None:
        return None
    if key_type in INT_WIDTHS:
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)):
            raise KassignError(f"key {key!r} is not a whole number, but the key type is {key_type}")
        low, high = _INT_RANGES[key_type]
        if not low <= int(key) <= high:
            raise KassignError(f"key {key} does not fit a Java {key_type} ({low}..{high})")
        return int(key).to_bytes(INT_WIDTHS[key_type], "big", signed=True)
    if isinstance(key, str):
        return utf8(key)
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    if is_whole_number(key):
        raise KassignError(f"key {key!r} is an integer: {_AMBIGUOUS_INT}")
    raise KassignError(f"a key is {type(key).__name__}; keys must be bytes, str, an integer with key_type, or None")


def flatten_keys(keys: Any, key_type: str | None = None) -> Flat:
    """Keys as (flat uint8 bytes, int32 or int64 offsets of len n+1, null mask or None); an Arrow
    array's own buffers are used without a copy."""
    check_key_type(key_type)
    import pyarrow as pa

    if isinstance(keys, pa.ChunkedArray):
        if pa.types.is_dictionary(keys.type):  # chunks may each carry their own dictionary
            keys = pa.chunked_array([c.dictionary_decode() for c in keys.chunks], type=keys.type.value_type)
        keys = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    if isinstance(keys, pa.Array) and pa.types.is_dictionary(keys.type):
        keys = keys.dictionary_decode()  # Parquet readers hand out dictionary-encoded string columns
    if isinstance(keys, pa.Array):
        if pa.types.is_integer(keys.type):
            return _flatten_ints(_arrow_ints(keys), _int_type(str(keys.type), key_type), _arrow_nulls(keys))
        if key_type in INT_WIDTHS:
            raise KassignError(f"key type {key_type} needs integer keys, got a pyarrow {keys.type} array")
        return _flatten_arrow(keys, pa)
    if isinstance(keys, np.ndarray):
        if keys.ndim != 1:
            raise KassignError(f"numpy keys must be a one-dimensional array, got shape {keys.shape}")
        if keys.dtype.kind in "iu":
            return _flatten_ints(keys, _int_type(str(keys.dtype), key_type), None)
        if keys.dtype.kind not in "SUO":  # bytes, text, or Python objects (checked one by one)
            raise KassignError(f"keys are a numpy {keys.dtype} array; numpy keys must be integers (with key_type), "
                               "bytes (dtype S), text (dtype U) or objects")
    _check_key_sequence(keys)
    if key_type in INT_WIDTHS:
        return _flatten_int_list(list(keys), key_type)
    return _flatten_objects(list(keys))


def _check_key_sequence(keys: Any) -> None:
    """A batch is a sequence of keys in order: not one key, not an unordered or keyed collection."""
    if isinstance(keys, (bytes, bytearray, memoryview, str)):
        raise KassignError("partitions_for_keys takes a list of keys; for one key use partition_for_key")
    if isinstance(keys, (set, frozenset)):
        raise KassignError("keys: a set has no order, so the partitions could not be matched to the keys; "
                           "pass a list")
    if isinstance(keys, dict):
        raise KassignError("keys must be a list of keys, not a dict; pass list(d) for its keys or "
                           "list(d.values()) for its values")
    try:
        iter(keys)
    except TypeError:
        raise KassignError(f"keys must be a list (or tuple, numpy or pyarrow array) of keys, "
                           f"got {type(keys).__name__}") from None


def _int_type(dtype: str, key_type: str | None) -> str:
    """The serialiser for an integer array: as asked, else int32 -> int, int64 -> long."""
    if key_type in INT_WIDTHS:
        return key_type
    if key_type is not None:
        raise KassignError(f"key type {key_type} needs text or binary keys, got {dtype} integers")
    inferred = {"int32": "int", "int64": "long"}.get(dtype)
    if inferred is None:
        raise KassignError(f"keys are {dtype} integers: {_AMBIGUOUS_INT}")
    return inferred


def _arrow_ints(keys: Any) -> np.ndarray:
    return keys.fill_null(0).to_numpy(zero_copy_only=False) if keys.null_count else keys.to_numpy()


def _arrow_nulls(keys: Any) -> np.ndarray | None:
    return keys.is_null().to_numpy(zero_copy_only=False) if keys.null_count else None


def _flatten_ints(values: np.ndarray, key_type: str, nulls: np.ndarray | None) -> Flat:
    """Big-endian two's complement bytes of every value; a null is an empty span."""
    width = INT_WIDTHS[key_type]
    low, high = _INT_RANGES[key_type]
    present = values if nulls is None else values[~nulls]
    if present.size and (int(present.min()) < low or int(present.max()) > high):
        bad = next(int(v) for v in present.tolist() if not low <= v <= high)
        raise KassignError(f"key {bad} does not fit a Java {key_type} ({low}..{high})")
    data = present.astype(f">i{width}").view(np.uint8)
    lengths = np.full(len(values), width, dtype=np.int64)
    if nulls is not None:
        lengths[nulls] = 0
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return data, offsets, nulls


def _flatten_int_list(keys: list, key_type: str) -> Flat:
    nulls = np.fromiter((k is None for k in keys), dtype=bool, count=len(keys))
    for i, key in enumerate(keys):
        if key is not None and (isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer))):
            raise KassignError(f"key #{i} is {type(key).__name__}, but the key type is {key_type}")
    try:
        values = np.array([0 if k is None else int(k) for k in keys], dtype=np.int64)
    except OverflowError:
        bad = next(k for k in keys if k is not None and not -(2**63) <= k < 2**63)
        raise KassignError(f"key {bad} does not fit a Java {key_type}") from None
    return _flatten_ints(values, key_type, nulls if nulls.any() else None)


def _flatten_objects(keys: list) -> Flat:
    # The common case, a list of bytes, in one join. Only exact bytes: join takes any buffer, whose
    # len() need not be its size in bytes (a numpy str_, a memoryview over int32 items).
    if set(map(type, keys)) <= {bytes}:
        lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
        blob = b"".join(keys)
        nulls = None
    else:
        encoded: list[bytes] = []
        nulls = np.zeros(len(keys), dtype=bool)
        for i, key in enumerate(keys):
            if key is None:
                nulls[i] = True
                encoded.append(b"")
            elif isinstance(key, str):
                encoded.append(utf8(key))
            elif isinstance(key, (bytes, bytearray, memoryview)):
                encoded.append(bytes(key))
            elif is_whole_number(key):
                raise KassignError(f"key #{i} is int: {_AMBIGUOUS_INT}")
            else:
                raise KassignError(f"key #{i} is {type(key).__name__}; keys must be bytes, str or None")
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        blob = b"".join(encoded)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(blob, dtype=np.uint8), offsets, nulls


def _flatten_arrow(keys: Any, pa: Any) -> Flat:
    if pa.types.is_string(keys.type) or pa.types.is_binary(keys.type):
        offset_type = np.int32
    elif pa.types.is_large_string(keys.type) or pa.types.is_large_binary(keys.type):
        offset_type = np.int64
    elif pa.types.is_string_view(keys.type) or pa.types.is_binary_view(keys.type):
        return _flatten_arrow(keys.cast(pa.large_binary()), pa)
    else:
        raise KassignError(f"pyarrow keys must be binary, string or integer, got {keys.type}")
    _, offsets_buf, data_buf = keys.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[keys.offset : keys.offset + len(keys) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    return data, offsets, _arrow_nulls(keys)
