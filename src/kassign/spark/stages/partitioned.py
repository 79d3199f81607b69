"""Stage ``partitioned``: every record with its partition, one row per record, when something needs it.

Reads: ``tagged``, ``key_type`` and ``placement_counts`` (the same placement the one pass used).

Writes: ``partitioned`` (topic, key, bytes, partition), with --write-partitioned only; with --producers the
rows are kept as a plan for the producer-agreement stage instead.

Decides: nothing new (the one pass decided every partition); it is the input's second read, taken only when
asked for. For example, ``("topic", "a", 5 B)`` with 3 partitions is written as ``("topic", "a", 5, 1)``.
"""

from __future__ import annotations

from kassign.spark.options import producer_clients
from kassign.spark.placement import partition_records
from kassign.spark.stages.base import PipelineContext, Stage, StageResult
from kassign.spark.stages.read_input import good_records


def run(ctx: PipelineContext) -> StageResult:
    opts = ctx.opts
    if not (opts.write_partitioned or producer_clients(opts)):
        return StageResult()
    ctx.job("kassign stage 1: the partitioned table")
    ctx.partitioned = partition_records(good_records(ctx.tagged), ctx.placement_counts, opts, ctx.key_type)
    if not opts.write_partitioned:
        return StageResult()
    ctx.partitioned = ctx.write_frame(ctx.partitioned, "partitioned")
    return StageResult(("partitioned",))


STAGE = Stage("partitioned", run, reads=("tagged", "key_type", "placement_counts"), makes=("partitioned",),
              writes=("partitioned",))
