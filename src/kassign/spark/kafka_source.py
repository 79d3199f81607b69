"""The ``kassign-kafka`` Spark data source: live Kafka topics as a DataFrame, every partition in parallel.

Each record becomes a row ``topic, partition, offset, timestamp, key, size`` (``size`` = key +
value + header bytes; values are not kept). Reading is bounded: from each partition's earliest
offset (or ``since``, or the last ``last`` offsets) to its end offset as it was when the read was
planned, so a busy topic never keeps a job running.

The rule for splitting: the read is planned once on the driver (``kassign.kafka.client``), then
cut into Spark input partitions of at most ``max.offsets.per.split`` offsets, by default the
total over twice the session's parallelism (at least ``MIN_SPLIT_OFFSETS``), so both cores of a
laptop or every executor of a cluster read at once. A partition bigger than that is cut into
offset ranges; small partitions are packed together. Example: partitions of 900k, 80k and 20k
offsets on 2 cores (split size 250k): four ranges of the big one (250k, 250k, 250k, 150k) and
one split holding both small ones.

::

    import kassign.spark
    kassign.spark.register_sources(spark)
    df = (spark.read.format("kassign-kafka").option("bootstrap.servers", "broker:9092")
          .option("topic", "orders").option("last", "100000").load())
    df = kassign.spark.read_kafka(spark, "broker:9092", ["orders", "payments"], since="2026-11-24T00:00:00Z")

Options: ``bootstrap.servers``, ``topic`` (comma-separated), ``since``, ``last``, client properties
prefixed ``kafka.`` (``kafka.security.protocol``...), ``max.offsets.per.split``. A DataFrame from
``spark.read`` plans again each time Spark plans a query on it; ``read_kafka`` plans once, so
every query on its DataFrame sees the same offsets.

Data layout: executors decode Fetch answers into Arrow record batches (``kassign.kafka.records``)
that go to Spark as they are; no record becomes a Python object.
"""

from __future__ import annotations

import json
import math
import os
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kassign.core.errors import KassignError, LiveClusterError

FORMAT = "kassign-kafka"
MIN_SPLIT_OFFSETS = 100_000
PLAN_OPTION = "kassign.replicas.plan"  # a plan made by read_kafka (JSON): the reader does not plan again
ACCOUNTING_OPTION = "kassign.accounting"  # "true": add the gap column and one row per gap reason and range
PARALLELISM_OPTION = "kassign.parallelism"

RECORD_FIELDS = [T.StructField("topic", T.StringType()), T.StructField("partition", T.IntegerType()),
                 T.StructField("offset", T.LongType()), T.StructField("timestamp", T.TimestampType()),
                 T.StructField("key", T.BinaryType()), T.StructField("size", T.LongType())]
GAP_FIELD = T.StructField("gap", T.StringType())
RECORD_SCHEMA = T.StructType(RECORD_FIELDS)
ACCOUNTING_SCHEMA = T.StructType(RECORD_FIELDS + [GAP_FIELD])


def _arrow_schema(accounting: bool) -> pa.Schema:
    fields = [pa.field("topic", pa.string()), pa.field("partition", pa.int32()), pa.field("offset", pa.int64()),
              pa.field("timestamp", pa.timestamp("us", tz="UTC")), pa.field("key", pa.binary()),
              pa.field("size", pa.int64())]
    if accounting:
        fields.append(pa.field("gap", pa.string()))
    return pa.schema(fields)


# -- options ----------------------------------------------------------------------------------------------------

def client_properties(options: Mapping[str, str]) -> dict[str, str]:
    """The ``kafka.``-prefixed options as client properties."""
    return {k[len("kafka."):]: str(v) for k, v in options.items() if k.lower().startswith("kafka.")}


def _topics(value: str | Sequence[str] | None) -> list[str]:
    names = value.split(",") if isinstance(value, str) else list(value or [])
    topics = [t.strip() for t in names if t and t.strip()]
    if not topics:
        raise LiveClusterError("name at least one topic to read (option 'topic')")
    return list(dict.fromkeys(topics))


def _last(value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        raise LiveClusterError(f"last must be a whole number of records, got {value!r}") from None
    if number < 1:
        raise LiveClusterError(f"last must be >= 1, got {number}")
    return number


def plan(bootstrap: str, topics: Sequence[str], since: Any = None, last: Any = None,
         config: Mapping[str, str] | None = None) -> Any:
    """Plan a read (``kassign.kafka.client.plan_read``) with its own connections, closed afterwards."""
    from kassign.kafka.client import Cluster, plan_read
    from kassign.kafka.config import ClientSettings

    with Cluster(bootstrap, ClientSettings.from_properties(config)) as cluster:
        return plan_read(cluster, _topics(topics), since=since or None, last=_last(last))


# -- splits -----------------------------------------------------------------------------------------------------

class Split(InputPartition):
    """One Spark input partition: ranges ``(topic, partition, start, end, leader)`` read in turn."""

    def __init__(self, ranges: list[tuple[str, int, int, int, int]]) -> None:
        super().__init__(ranges)
        self.ranges = ranges


def cut(read_plan: Any, max_offsets: int) -> list[Split]:
    """The plan's ranges cut to at most ``max_offsets`` offsets each, small ones packed together."""
    pieces: list[tuple[str, int, int, int, int]] = []
    for topic, part in read_plan.ranges():
        start = part.start
        while start < part.end:
            end = min(part.end, start + max_offsets)
            pieces.append((topic, part.partition, start, end, part.leader))
            start = end
    splits: list[Split] = []
    current: list[tuple[str, int, int, int, int]] = []
    size = 0
    for piece in pieces:
        span = piece[3] - piece[2]
        if current and size + span > max_offsets:
            splits.append(Split(current))
            current, size = [], 0
        current.append(piece)
        size += span
    if current:
        splits.append(Split(current))
    return splits


def split_size(read_plan: Any, parallelism: int, requested: int | None = None) -> int:
    if requested is not None:
        return max(1, requested)
    total = sum(p.end - p.start for _, p in read_plan.ranges())
    return max(MIN_SPLIT_OFFSETS, math.ceil(total / max(1, 2 * parallelism)))


# -- reading ----------------------------------------------------------------------------------------------------

def _constant_strings(value: str, n: int) -> pa.Array:
    data = value.encode("utf-8")
    offsets = np.arange(n + 1, dtype=np.int64) * len(data)
    if offsets[-1] >= 2**31:
        return pa.array([value] * n, pa.string())
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.astype(np.int32)),
                                                  pa.py_buffer(data * n)])


def record_batch(topic: str, partition: int, decoded: Any, schema: pa.Schema) -> pa.RecordBatch:
    """One decoded Fetch answer as a record batch of ``schema`` (timestamps -1 become null)."""
    n = len(decoded)
    stamps = decoded.timestamps
    missing = stamps < 0
    timestamps = pa.array(stamps * 1000, pa.timestamp("us", tz="UTC"), mask=missing if missing.any() else None)
    columns = [_constant_strings(topic, n), pa.array(np.full(n, partition, np.int32)), pa.array(decoded.offsets),
               timestamps, decoded.keys, pa.array(decoded.sizes)]
    if len(schema) == 7:
        columns.append(pa.nulls(n, pa.string()))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def gap_batch(topic: str, partition: int, start: int, gaps: Mapping[str, int], schema: pa.Schema) -> pa.RecordBatch:
    """One row per gap reason of a range: ``size`` holds how many offsets, ``offset`` the range's start."""
    reasons = [r for r, n in gaps.items() if n > 0]
    k = len(reasons)
    return pa.RecordBatch.from_arrays([
        pa.array([topic] * k, pa.string()), pa.array([partition] * k, pa.int32()), pa.array([start] * k, pa.int64()),
        pa.nulls(k, pa.timestamp("us", tz="UTC")), pa.nulls(k, pa.binary()),
        pa.array([gaps[r] for r in reasons], pa.int64()), pa.array(reasons, pa.string())], schema=schema)


def read_split(bootstrap: str, config: Mapping[str, str], ranges: Sequence[tuple[str, int, int, int, int]],
               accounting: bool) -> Iterator[pa.RecordBatch]:
    """Every record of ``ranges`` as Arrow batches (and, with ``accounting``, the gaps)."""
    from kassign.kafka.client import Cluster, RangeReader
    from kassign.kafka.config import ClientSettings

    schema = _arrow_schema(accounting)
    with Cluster(bootstrap, ClientSettings.from_properties(config)) as cluster:
        for topic, partition, start, end, leader in ranges:
            reader = RangeReader(cluster, topic, partition, start, end, leader)
            for decoded in reader:
                yield record_batch(topic, partition, decoded, schema)
            if accounting and reader.accounting.gaps:
                yield gap_batch(topic, partition, start, reader.accounting.gaps, schema)


class KafkaSourceReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str], accounting: bool) -> None:
        self.options = dict(options)
        self.accounting = accounting
        self.config = client_properties(self.options)
        text = self.options.get(PLAN_OPTION)
        from kassign.kafka.client import ReadPlan

        if text:
            self.plan = ReadPlan.from_json(json.loads(text))
        else:
            bootstrap = self.options.get("bootstrap.servers") or self.options.get("kafka.bootstrap.servers")
            if not bootstrap:
                raise LiveClusterError("the kassign-kafka source needs option bootstrap.servers")
            self.plan = plan(bootstrap, self.options.get("topic") or self.options.get("topics"),
                             self.options.get("since"), self.options.get("last"), self.config)
        self.bootstrap = self.plan.bootstrap

    def partitions(self) -> Sequence[InputPartition]:
        requested = self.options.get("max.offsets.per.split")
        parallelism = int(self.options.get(PARALLELISM_OPTION) or os.cpu_count() or 2)
        size = split_size(self.plan, parallelism, int(requested) if requested else None)
        splits = cut(self.plan, size)
        return splits or [Split([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        yield from read_split(self.bootstrap, self.config, partition.value, self.accounting)


class KafkaSource(DataSource):
    """``spark.read.format("kassign-kafka")``: see the module docstring."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> T.StructType:
        return ACCOUNTING_SCHEMA if self._accounting() else RECORD_SCHEMA

    def _accounting(self) -> bool:
        return str(self.options.get(ACCOUNTING_OPTION, "false")).lower() == "true"

    def reader(self, schema: T.StructType) -> DataSourceReader:
        return KafkaSourceReader(self.options, self._accounting())


_registered: weakref.WeakSet = weakref.WeakSet()


def register_sources(spark: SparkSession) -> None:
    """Make the ``kassign-kafka`` format known to ``spark`` (once per session; later calls do nothing)."""
    if spark not in _registered:
        spark.dataSource.register(KafkaSource)
        _registered.add(spark)


def read_kafka(spark: SparkSession, bootstrap: str, topics: str | Sequence[str], *, since: Any = None,
               last: int | None = None, config: Mapping[str, str] | None = None,
               max_offsets_per_split: int | None = None, read_plan: Any = None,
               accounting: bool = False) -> DataFrame:
    """The records of ``topics`` as a DataFrame, planned once here (see the module docstring).

    ``config``: client properties (as ``--command-config`` gives them). ``read_plan``: a plan made
    earlier with ``kassign.kafka.client.plan_read`` (then ``since``/``last`` are the plan's)."""
    if read_plan is None:
        read_plan = plan(bootstrap, topics, since, last, config)
    register_sources(spark)
    reader = (spark.read.format(FORMAT).option(PLAN_OPTION, json.dumps(read_plan.to_json()))
              .option(PARALLELISM_OPTION, str(spark.sparkContext.defaultParallelism)))
    for key, value in (config or {}).items():
        reader = reader.option(f"kafka.{key}", str(value))
    if max_offsets_per_split is not None:
        if max_offsets_per_split < 1:
            raise KassignError(f"max_offsets_per_split must be >= 1, got {max_offsets_per_split}")
        reader = reader.option("max.offsets.per.split", str(max_offsets_per_split))
    if accounting:
        reader = reader.option(ACCOUNTING_OPTION, "true")
    return reader.load()
