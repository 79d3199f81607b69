"""The one pass's second half on the driver: the splits' key figures merged, each key's columns added.

Rule: every input split counts its rows per ([topic,] key, partition, reason) in kassign's JVM tables
(``KassignKeyFigures``); the driver JVM adds each split's tables into its own as the split finishes
(``merge_on_driver``), hands the merged groups to Python as Arrow columns, and then, once per distinct
key, this module adds what the later stages need:

- ``partition``: a keyed record's partition under Java's rule, ``toPositive(murmur2(key)) % n`` with
  the topic's count ``n`` (keyless rows keep the partition the producer model gave them in the scan;
  rows set aside have none). Records read from a live topic keep the partition they are in;
- ``hash``: that 31-bit murmur2, which the sweep takes modulo every candidate count;
- ``key_display``: the key as people read it (text as is, integers in decimal, bytes as ``0x`` and
  lower-case hex; a live topic's keys, which are bytes, as text where they are valid UTF-8).

The hash is ``kassign.producer.partitioner.hashes_for_keys``, the definition the Arrow engine's Spark column and
the scalar ``partition_for_key`` share; the JVM engine's copy of it is tested equal on every vector.

Example: two splits count ("a", null, null, 2, 15), ("b", null, null, 1, 30) and ("a", null, null, 1, 5),
(null, 3, null, 1, 7) as (key, partition, reason, records, bytes); merged for a topic of 12 partitions, as
(key, partition, reason, records, bytes, key_display, hash): ("a", 4, null, 3, 20, "a", 584102524), ("b", 8, null, 1, 30, "b", 294391796) (the hashes' remainders
mod 12 are 4 and 8) and the keyless (null, 3, null, 1, 7).

Why on the driver and not in a Spark aggregation: the splits' tables (1.16 M groups from 7 splits of 10 M
records with 200 k keys, about 45 MB) reach the driver as the splits end, and adding them up there overlaps
the splits still running, where Spark's merge needs a shuffle, a second stage, its own hash aggregate
(1.5-2.6 s of CPU), a Parquet write of the result and the driver reading it back. Why in the driver JVM
and not in Python: sending the partial groups as rows to Python (an Arrow conversion per group in the
tasks) and summing them there with Arrow's hash aggregate cost 0.9 s more of a 10 M-row pipeline run
(median of 6 alternating runs).

Bound: the splits' tables come to the driver only while they fit in ``spark.driver.maxResultSize``
(Spark's own limit on what tasks send the driver, 1 GiB unless set), and are merged there only while the
merged tables stay within a quarter of the driver's heap. Past either, ``merge_on_driver`` returns None:
the caller then merges in Spark, whose aggregation spills to disk, and streams the result (memory
independent of keys).

Data layout: the merged groups cross from the JVM as one file of column buffers (validity bitmaps, int32
offsets, values), wrapped as Arrow arrays without a step per value; the keyed rows' hashes as one int32
numpy array from a batch kernel over the key column's own buffers, partitions and display text built from
numpy arrays.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from kassign.producer import hashing
from kassign.core.errors import KassignError
from kassign.producer.keys import flatten_keys
from kassign.producer.partitioner import hashes_for_keys

log = logging.getLogger(__name__)

RESULT_LIMIT = "spark.driver.maxResultSize"
FIGURE_COLUMNS = ["topic", "key", "partition", "reason", "records", "bytes", "key_display", "hash"]
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


_MAGIC = b"KKFCOLS1"
_ARROW_TYPES = {T.StringType: pa.string(), T.BinaryType: pa.binary(), T.IntegerType: pa.int32(), T.LongType: pa.int64()}


def merge_on_driver(placed: DataFrame, group: list[str], max_groups: int = 0, max_bytes: int = 0,
                    max_driver_bytes: int = 0) -> pa.Table | None:
    """Records and bytes per ``group`` of ``placed`` (rows with those columns and ``bytes``), each split
    counted in kassign's JVM tables and the splits merged by the driver JVM as they finish
    (``KassignKeyFigures.mergeOnDriver``), as one Arrow table. None when the splits' figures exceed
    ``spark.driver.maxResultSize`` or the merged tables ``max_driver_bytes`` (0: a quarter of the
    driver's heap): then merge in Spark. ``max_groups``/``max_bytes`` bound a split's tables (0: sized
    from the heap)."""
    spark = placed.sparkSession
    counted = placed.select(*group, "bytes")  # the layout KassignKeyFigures reads: the grouping columns, then bytes
    fd, path = tempfile.mkstemp(prefix="kassign-merged-", suffix=".columns")
    os.close(fd)
    try:
        try:
            rows = spark._jvm.kassign.spark.KassignKeyFigures.mergeOnDriver(
                counted._jdf, max_groups, max_bytes, max_driver_bytes, path)
        except Exception as err:  # Spark's and py4j's wrappers both carry the job's abort message
            if RESULT_LIMIT not in str(err):
                raise
            log.info("the splits' key figures exceed %s; merging them in Spark instead", RESULT_LIMIT)
            return None
        if rows < 0:
            log.info("the merged key figures exceed the driver's bound; merging them in Spark instead")
            return None
        schema = pa.schema([pa.field(f.name, _ARROW_TYPES[type(f.dataType)]) for f in counted.schema.fields[:-1]]
                           + [pa.field("records", pa.int64(), nullable=False), pa.field("bytes", pa.int64())])
        return read_column_file(Path(path), schema)
    finally:
        os.unlink(path)


def read_column_file(path: Path, schema: pa.Schema) -> pa.Table:
    """The columns ``KassignKeyFigures.ColumnFile`` wrote, as Arrow arrays over the file's bytes (one read,
    no step per value); ``schema``: the file's columns, in order."""
    data = pa.py_buffer(path.read_bytes())
    if data.size < 16 or data[:8].to_pybytes() != _MAGIC:
        raise KassignError(f"kassign's merged key figures in {path} are not a column file")
    rows = int(np.frombuffer(data, np.int64, 1, 8)[0])
    at = 16

    def buffer() -> pa.Buffer:
        nonlocal at
        size = int(np.frombuffer(data, np.int64, 1, at)[0])
        piece = data.slice(at + 8, size)
        at += 8 + (size + 7) // 8 * 8
        return piece

    columns = []
    for field in schema:
        variable = pa.types.is_string(field.type) or pa.types.is_binary(field.type)
        column = pa.Array.from_buffers(field.type, rows, [buffer() for _ in range(3 if variable else 2)], null_count=-1)
        column.validate()
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def key_columns(merged: pa.Table, counts: Mapping[str, int], default_count: int, key_type: str | None,
                constant_topic: str | None, live: bool = False) -> pa.Table:
    """``merged`` (with or without a ``topic`` column) as the key figures: ``FIGURE_COLUMNS``, keyed
    rows with Java's partition, their hash and display text. ``constant_topic`` names the topic of
    every record when ``merged`` has no topic column (rows set aside get none). ``live``: records read
    from Kafka, whose partition is where they are (kept), their keys bytes shown as text where valid UTF-8."""
    good = pc.is_null(merged["reason"])
    if "topic" not in merged.column_names:
        merged = merged.append_column("topic", pc.if_else(good, pa.scalar(constant_topic, pa.string()), None))
    keyed_mask = pc.and_(good, pc.is_valid(merged["key"])).to_numpy(zero_copy_only=False)
    keyed_rows = np.flatnonzero(keyed_mask)
    keys = merged["key"].take(keyed_rows)
    hashes = np.zeros(len(merged), np.int64)
    hashes[keyed_rows] = hashes_for_keys(keys, hashing.MURMUR2, key_type).astype(np.int64) & 0x7FFFFFFF
    partitions = merged["partition"].fill_null(0).to_numpy(zero_copy_only=False).astype(np.int32)
    if not live:
        per_row_count = _partition_counts(merged["topic"].take(keyed_rows), counts, default_count)
        partitions[keyed_rows] = (hashes[keyed_rows] % per_row_count).astype(np.int32)
    keyless_partition = pc.is_valid(merged["partition"]).to_numpy(zero_copy_only=False)
    display = pa.nulls(len(merged), pa.string()) if not len(keyed_rows) else _spread(
        _readable(keys) if live else _display(keys), keyed_rows, len(merged))
    columns = [merged["topic"], merged["key"], pa.array(partitions, pa.int32(), mask=~(keyed_mask | keyless_partition)),
               merged["reason"], merged["records"], merged["bytes"], display, pa.array(hashes, pa.int64(), mask=~keyed_mask)]
    # records is never null (every group has at least one row), as Spark's count() declares it
    schema = pa.schema([pa.field(name, column.type, nullable=name != "records")
                        for name, column in zip(FIGURE_COLUMNS, columns)])
    return pa.table(columns, schema=schema)


def _partition_counts(topics: pa.ChunkedArray | pa.Array, counts: Mapping[str, int], default_count: int) -> np.ndarray:
    """Each row's topic's partition count (``counts``, else ``default_count``) as an int64 array."""
    encoded = pc.dictionary_encode(topics)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    per_topic = np.array([counts.get(t, default_count) for t in encoded.dictionary.to_pylist()] or [1], np.int64)
    return per_topic[encoded.indices.to_numpy(zero_copy_only=False)]


def _display(keys: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Keys (none null) as shown: text as is, integers in decimal, bytes as 0x and lower-case hex."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if pa.types.is_integer(keys.type):
        return pc.cast(keys, pa.string())
    if pa.types.is_string(keys.type) or pa.types.is_large_string(keys.type):
        return keys.cast(pa.string())
    data, offsets, _ = flatten_keys(keys)
    offsets = offsets.astype(np.int64)
    data = data[offsets[0]:offsets[-1]]  # a slice's offsets start past its buffer's start
    offsets = offsets - offsets[0]
    lengths = np.diff(offsets)
    shown = np.empty(2 * len(data) + 2 * len(lengths), np.uint8)
    starts = 2 * offsets[:-1] + 2 * np.arange(len(lengths))
    shown[starts] = ord("0")
    shown[starts + 1] = ord("x")
    # byte i of key k goes to 2*i + 2*(k+1): its key's "0x" prefixes and the two hex digits of earlier bytes
    at = 2 * np.arange(len(data)) + 2 * (np.repeat(np.arange(len(lengths)), lengths) + 1)
    shown[at] = _HEX[data >> 4]
    shown[at + 1] = _HEX[data & 15]
    new_offsets = np.append(starts, len(shown)).astype(np.int64)
    return pa.LargeStringArray.from_buffers(len(lengths), pa.py_buffer(new_offsets), pa.py_buffer(shown)).cast(
        pa.string())


def _readable(keys: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Keys read from Kafka (bytes, none null) as shown: their text where valid UTF-8, else 0x and hex."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    try:
        return keys.cast(pa.string())  # every key valid UTF-8 (Arrow checks it, as Python's strict decoder does)
    except pa.ArrowInvalid:
        pass
    hexed = _display(keys).to_pylist()
    shown = []
    for key, fallback in zip(keys.to_pylist(), hexed):
        try:
            shown.append(key.decode("utf-8"))
        except UnicodeDecodeError:
            shown.append(fallback)
    return pa.array(shown, pa.string())


def _spread(values: pa.Array, rows: np.ndarray, length: int) -> pa.Array:
    """``values`` placed at ``rows`` of an array of ``length``, null elsewhere."""
    where = np.full(length, -1, np.int64)
    where[rows] = np.arange(len(rows))
    return values.take(pa.array(where, mask=where < 0))
