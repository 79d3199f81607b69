"""Stage ``broker_load``: leader and replica bytes per broker and per rack.

Reads: ``counts`` and ``loads`` (records and bytes per partition), ``--brokers`` (racks allowed),
``--replication-factor``, ``--placer`` and ``--seed``.

Writes: ``broker_load``: one row per broker: rack, leaders, leader records and bytes, replicas, replica bytes.

Decides: ``brokers`` in summary.json: replicas placed as a KRaft controller places them when it creates a topic
(``--placer striped``, the default) or as ZooKeeper-era AdminUtils did (``legacy``), the placer and the seed it
used, and the bytes per broker and per rack (``kassign.spark.loads.broker_load``).

For example, 6 partitions of 10 MiB each with replication factor 3 on brokers ``0:a,1:b,2:c`` put a replica
of every partition on every broker: 6 replicas and 60 MiB of replica bytes each, a third per rack.
"""

from __future__ import annotations

from kassign.spark import loads as stage_loads
from kassign.spark.stages.base import PipelineContext, Stage, StageResult


def run(ctx: PipelineContext) -> StageResult:
    opts = ctx.opts
    ctx.brokers = stage_loads.broker_load(opts.brokers, ctx.counts, opts.replication_factor, ctx.loads, opts.seed,
                                          opts.placer)
    ctx.write_rows("broker_load", [{"broker": int(b), **v} for b, v in ctx.brokers["brokers"].items()])
    return StageResult(("broker_load",), {"brokers": ctx.brokers})


STAGE = Stage("broker_load", run, reads=("counts", "loads"), makes=("brokers",), writes=("broker_load",))
