"""Stage ``producer_agreement``: where the same records land under each producer client of ``--producers``.

Reads: ``partitioned`` (every record with the Java producer's partition: the partitioned stage's rows),
``counts`` and ``key_type``; the clients named by ``--producers`` (``kassign.spark.producers``).

Writes: ``producer_partitions`` (every record with one partition column per producer), ``producer_agreement``
(one row per producer) and ``producer_load`` (records and bytes per producer, topic and partition).

Decides: ``producers`` in summary.json: against the first producer (the reference), the share of records, keyed
records, keys and bytes that land elsewhere, how each treats keyless records, and the bytes skew each would
create. Without --producers it does nothing.

For example, ``--producers java,librdkafka:consistent_random`` puts key ``a`` on murmur2's partition under the
first and on CRC-32's under the second; where those differ, ``a``'s records count as moved.
"""

from __future__ import annotations

from kassign.spark import producers as stage_producers
from kassign.spark.options import producer_clients
from kassign.spark.stages.base import PipelineContext, Stage, StageResult

TABLES = ("producer_partitions", "producer_agreement", "producer_load")


def run(ctx: PipelineContext) -> StageResult:
    opts = ctx.opts
    clients = producer_clients(opts)
    if ctx.partitioned is None or not clients:
        return StageResult()
    ctx.job("kassign stage 7: producer agreement")
    placed = ctx.write_frame(stage_producers.producer_partitions(
        ctx.partitioned, ctx.counts, clients, opts.null_key_model, opts.batch_size, opts.seed, opts.partitions,
        opts.engine, ctx.key_type), "producer_partitions")
    agreement = stage_producers.agreement(placed, clients)
    load = stage_producers.complete_load(stage_producers.producer_load(placed, clients), clients, ctx.counts)
    for row in agreement:
        row["null_keys"] = stage_producers.describe_null_keys(
            next(c for c in clients if c.name == row["producer"]), opts.null_key_model, opts.batch_size, ctx.counts)
        row["max_over_mean_bytes"] = stage_producers.skew(load, row["producer"])
    ctx.write_rows("producer_agreement", agreement)
    ctx.write_rows("producer_load", load)
    ctx.producers = {"reference": clients[0].name,
                     "columns": {stage_producers.column_name(i): c.name for i, c in enumerate(clients)},
                     "agreement": agreement, "load": load}
    return StageResult(TABLES, {"producers": ctx.producers})


STAGE = Stage("producer_agreement", run, reads=("counts",), makes=("producers",), writes=TABLES)
