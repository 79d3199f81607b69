"""Stage ``partition_load``: records, bytes, keys and the hottest keys of every partition.

Reads: ``digest`` (per-partition figures and hot keys, from the one pass) and ``counts``.

Writes: ``partition_load``: one row per (topic, partition): records, bytes, keyed records, distinct keys (exact:
one figure row per key) and the hottest keys with their share of the partition's bytes; live topics add
``java_records``/``java_bytes``, where Kafka's Java producer would have put the same records, and a row for
every partition, empty or not.

Decides: ``partition_load`` in summary.json, and the load per partition (records, bytes; a partition with no
record counts 0) that the consumer, broker and rebalance stages place.

For example, partition 3 holding 10 records of key ``a`` (100 B) and 5 of ``b`` (20 B) is the row records 15,
bytes 120, distinct keys 2, hot keys ``a`` (share 0.833333), ``b`` (0.166667).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from kassign.spark.digest import Digest, PartitionFigures
from kassign.spark.stages.base import PipelineContext, Stage, StageResult

_HOT_KEY = pa.struct([("key", pa.string()), ("records", pa.int64()), ("bytes", pa.int64()), ("share", pa.float64())])
PARTITION_LOAD_SCHEMA = pa.schema([("topic", pa.string()), ("partition", pa.int32()), ("records", pa.int64()),
                                   ("bytes", pa.int64()), ("keyed_records", pa.int64()), ("distinct_keys", pa.int64()),
                                   ("hot_keys", pa.list_(_HOT_KEY))])
LIVE_PARTITION_LOAD_SCHEMA = PARTITION_LOAD_SCHEMA.append(pa.field("java_records", pa.int64())).append(
    pa.field("java_bytes", pa.int64()))


def run(ctx: PipelineContext) -> StageResult:
    live = ctx.opts.live
    ctx.load_rows = partition_load(ctx.digest, ctx.counts if live else None)
    ctx.write_rows("partition_load", ctx.load_rows, LIVE_PARTITION_LOAD_SCHEMA if live else PARTITION_LOAD_SCHEMA)
    ctx.loads = {(r["topic"], r["partition"]): (r["records"], r["bytes"]) for r in ctx.load_rows}
    for topic, n in ctx.counts.items():  # partitions that got no record still exist
        for p in range(n):
            ctx.loads.setdefault((topic, p), (0, 0))
    return StageResult(("partition_load",), {"partition_load": ctx.load_rows})


STAGE = Stage("partition_load", run, reads=("digest", "counts"), makes=("load_rows", "loads"),
              writes=("partition_load",))


def partition_load(digest: Digest, live_counts: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """Per partition (one row each, ordered): records, bytes, keyed records, distinct keys (exact: one
    figure row per key) and the hottest keys with their share of the partition's bytes.

    Live topics (``live_counts``): every partition has a row (measured: where the records are), and
    ``java_records``/``java_bytes`` say where Kafka's Java producer would have put the same records."""
    partitions = dict(digest.partitions)
    if live_counts is not None:
        for topic, n in live_counts.items():
            for p in range(n):
                partitions.setdefault((topic, p), PartitionFigures())
    rows = []
    for (topic, partition), f in sorted(partitions.items()):
        row = {"topic": topic, "partition": partition, "records": f.records, "bytes": f.bytes,
               "keyed_records": f.keyed_records, "distinct_keys": f.distinct_keys,
               "hot_keys": digest.hot_keys.get((topic, partition), [])}
        if live_counts is not None:
            row["java_records"], row["java_bytes"] = digest.java.get((topic, partition), (0, 0))
        rows.append(row)
    return rows
