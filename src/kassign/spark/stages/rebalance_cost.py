"""Stage ``rebalance_cost``: what moves, per strategy, when the last member leaves and when one joins.

Reads: ``scenario``, ``consumers`` (each strategy's assignment before) and ``loads``; the release the
consumer_load stage answered as.

Writes: ``rebalance_cost``: one row per (strategy, event): the member, partitions, records and bytes that
change owner (a member leaving also counts the partitions it was forced to give up).

Decides: ``rebalance`` in summary.json. The group is run again, with each member's owned partitions, until no
partition waits on a revocation (cooperative strategies take two rounds). Share groups have no rebalance
barrier, so their strategies are left out.

For example, with range over 4 members and 12 partitions, when ``consumer-3`` leaves its 3 partitions move, and
so does every partition range hands to another member in the new split of 12 over 3.
"""

from __future__ import annotations

from kassign.spark import loads as stage_loads
from kassign.spark.stages.base import PipelineContext, Stage, StageResult


def run(ctx: PipelineContext) -> StageResult:
    ctx.rebalance = stage_loads.rebalance_cost(ctx.scenario, ctx.consumers, ctx.loads, ctx.kafka_version)
    rows = [{"strategy": s, "event": e, **v} for s, events in ctx.rebalance.items() for e, v in events.items()]
    ctx.write_rows("rebalance_cost", rows)
    return StageResult(("rebalance_cost",), {"rebalance": ctx.rebalance})


STAGE = Stage("rebalance_cost", run, reads=("scenario", "kafka_version", "consumers", "loads"), makes=("rebalance",),
              writes=("rebalance_cost",))
