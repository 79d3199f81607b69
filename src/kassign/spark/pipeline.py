"""``kassign pipeline``: where a keyed data set's load lands, from partitions to brokers, as a list of stages.

Each stage is a module of ``kassign.spark.stages`` with one job and the same shape (what it reads, the tables
it writes, what it decides: ``kassign.spark.stages.base``); this driver runs them in order. A file or the
generated sample takes ``FILE_STAGES``, live topics ``LIVE_STAGES``: each reads its input once and ends with
the ``members`` stage (the group the later stages answer for). The warnings gathered so far are then said,
and ``LOAD_STAGES`` follow: partition load, the sweep, consumers, brokers, rebalance cost, producers, the
conservation check and the summary with its verdict, summary.json and report.html.

The stages model Kafka's Java producer (``producer_agreement`` compares other clients). Keys are hashed as
serialised: string columns as UTF-8, binary as is, int and bigint columns (or text with ``key_type`` int/long)
as Kafka's IntegerSerializer and LongSerializer write them (4 or 8 bytes, big-endian).

One pass: the input is read once, into records and bytes per (topic, key, partition) plus a count per
set-aside reason (``kassign.spark.stages.key_figures``; live topics: ``live_read``). Every later stage starts
from those rows (as many as distinct keys), taken by the driver in Arrow batches (``kassign.spark.digest``),
keeping only per-partition and per-partition-count figures. The input is read again only for tables asked for
(``partitioned``, producer agreement) and for the set-aside table when rows were set aside. The driver never
holds per-record data.

Everything is written to a hidden directory beside ``--out`` and renamed to it at the end: a run that fails
or is killed never leaves an ``--out`` that looks complete. For example::

    run_pipeline(spark, PipelineOptions(out="out", rows=100_000, keys=5_000))["verdict"]["best_strategy"]
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from kassign.core.errors import KassignError
# PipelineOptions, check_options and preflight_live stay importable from here (the API's home for them), and
# prepare_driver_meanwhile, which the CLI starts while the JVM starts
from kassign.spark.options import PipelineOptions, check_options, preflight_live  # noqa: F401
from kassign.spark.stages import (broker_load, consumer_load, conservation, key_figures, keyless_racks, live_group,
                                  live_plan, live_read, live_source, members, partition_load, partitioned,
                                  producer_agreement, read_input, rebalance_cost, set_aside, summary, sweep)
from kassign.spark.stages.base import PipelineContext, run_stages
from kassign.spark.warm_up import prepare_driver_meanwhile  # noqa: F401

log = logging.getLogger(__name__)

FILE_STAGES = (read_input.STAGE, key_figures.STAGE, set_aside.STAGE, partitioned.STAGE, members.STAGE)
LIVE_STAGES = (live_plan.STAGE, live_read.STAGE, set_aside.STAGE, live_source.STAGE, live_group.STAGE, members.STAGE)
LOAD_STAGES = (partition_load.STAGE, keyless_racks.STAGE, sweep.STAGE, consumer_load.STAGE, broker_load.STAGE, rebalance_cost.STAGE,
               producer_agreement.STAGE, conservation.STAGE, summary.STAGE)


def run_pipeline(spark: SparkSession, opts: PipelineOptions) -> dict[str, Any]:
    """Run every stage, write the tables, summary.json and report.html under ``opts.out``; return the summary
    (summary.json's document, every field stated in [JSON output](outputs.md#summaryjson)).

    Everything is written to a hidden directory beside ``out`` first and renamed to ``out`` at the
    end, so a run that fails or is killed never leaves an ``out`` that looks complete (an earlier
    run's ``out`` stays as it was until the new one is whole)."""
    check_options(opts)
    final = Path(opts.out)
    staging = final.parent / f".{final.name}.kassign-partial-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        staging.mkdir(parents=True)
    except OSError as err:
        raise KassignError(f"cannot write --out {opts.out!r}: {err.strerror or err}") from None
    try:
        result = _run(PipelineContext(spark, opts, staging))
        _publish(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        spark.sparkContext.setJobDescription(None)
    return result


def _run(ctx: PipelineContext) -> dict[str, Any]:
    run_stages(ctx, LIVE_STAGES if ctx.opts.live else FILE_STAGES)
    for text in ctx.warnings:  # said once, before any load is worked out
        log.warning("%s", text)
    run_stages(ctx, LOAD_STAGES)
    return ctx.summary


def _publish(staging: Path, final: Path) -> None:
    """Replace ``final`` by ``staging`` (two renames; the old output is removed once the new one is in place)."""
    old = final.parent / f".{final.name}.kassign-old-{os.getpid()}"
    if final.exists():
        final.rename(old)
    staging.rename(final)
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)
