"""The shape every stage of ``kassign pipeline`` has, and what the stages hand one another.

A stage is one module of ``kassign.spark.stages`` with one job. Its docstring opens with that job, then says
in three paragraphs what it **Reads** (the context fields earlier stages made, or the input itself), what it
**Writes** (its tables under ``--out``, or none) and what it **Decides** (its part of summary.json, its
warnings, or the error that stops the run). It exposes ``STAGE``::

    STAGE = Stage("sweep", run, reads=("digest", "counts"), makes=("sweep",), writes=("partition_sweep",))

``run(ctx)`` fills the context fields named in ``makes`` and returns a ``StageResult``: the tables it wrote,
its part of summary.json (the ``summary`` stage puts the parts in summary.json's order) and its warnings (the
``members`` stage says them all at once). The driver (``kassign.spark.pipeline``) runs a list of stages in
order; ``tests/spark/stages`` checks that every field a stage reads is made by an earlier one.

>>> from kassign.spark.stages import sweep
>>> sweep.STAGE.name, sweep.STAGE.writes
('sweep', ('partition_sweep',))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from kassign.spark.options import PipelineOptions

HOT_KEYS = 3  # hottest keys kept per partition


@dataclass
class StageResult:
    """What one stage did: the tables it wrote, its part of summary.json, its warnings."""

    tables: tuple[str, ...] = ()
    summary: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Stage:
    """One step of the pipeline: ``run(ctx)`` reads the context fields ``reads``, fills ``makes`` and writes the
    tables ``writes`` under ``--out`` (some only when asked: the docstring says when)."""

    name: str
    run: Callable[[PipelineContext], StageResult]
    reads: tuple[str, ...] = ()
    makes: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


@dataclass
class PipelineContext:
    """The run's settings (``spark``, ``opts``, ``out``: the staging directory) and what earlier stages made.

    Fields are None (or empty) until the stage that makes them has run; some stay None on purpose (``partitioned``
    without --write-partitioned or --producers, ``live_group`` without --group, ``key_type`` for text keys)."""

    spark: SparkSession
    opts: PipelineOptions
    out: Path
    # the input (file pass)
    tagged: DataFrame | None = None  # every input row as topic, key, bytes, reason
    found: Any = None  # kassign.spark.inputs.Input, None for the sample
    input_format: str | None = None
    key_type: str | None = None  # "int"/"long" when keys are serialised as integers
    placement_counts: dict[str, int] = field(default_factory=dict)  # topics whose count is not --partitions
    # the one pass
    digest: Any = None  # kassign.spark.digest.Digest
    aside_rows: list[Any] = field(default_factory=list)  # per reason: rows and the first row
    partitioned: DataFrame | None = None
    # live topics
    plan: Any = None  # kassign.kafka.client.ReadPlan
    release: tuple[str, str, str] | None = None  # (release, where it came from, why)
    leader_racks: dict[str, list[str | None]] | None = None  # live: topic -> each partition's leader's rack
    live_group: Any = None  # kassign.spark.stages.live_plan.LiveGroup
    source: dict[str, Any] | None = None
    distinct_keys: dict[str, int] | None = None  # keys per topic (a split key is one key)
    lag: dict[str, list[int]] | None = None  # topic -> lag per partition
    group_scenario: dict | None = None  # the live group's own members, as a scenario
    # the group and the loads
    counts: dict[str, int] = field(default_factory=dict)  # topic -> partition count
    scenario: dict | None = None
    load_rows: list[dict[str, Any]] = field(default_factory=list)
    loads: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)  # (topic, partition) -> records, bytes
    sweep: dict[str, Any] = field(default_factory=dict)
    kafka_version: str | None = None  # the release the consumer stages answer as
    consumers: dict[str, Any] = field(default_factory=dict)
    brokers: dict[str, Any] = field(default_factory=dict)
    rebalance: dict[str, Any] = field(default_factory=dict)
    producers: dict[str, Any] | None = None
    # gathered by the driver from every StageResult
    parts: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    written: dict[str, tuple[str, ...]] = field(default_factory=dict)  # stage -> the tables it wrote
    summary: dict[str, Any] | None = None  # summary.json, once the summary stage has run

    def job(self, description: str | None) -> None:
        """Name the Spark jobs that follow (Spark's UI and kassign's progress line show it)."""
        self.spark.sparkContext.setJobDescription(description)

    def write_frame(self, df: DataFrame, name: str) -> DataFrame:
        """``df`` written as the table ``name`` and read back from it."""
        write_only(df, self.out / name)
        return df.sparkSession.read.parquet((self.out / name).absolute().as_uri())

    def write_rows(self, name: str, rows: Sequence[Mapping[str, Any]], schema: pa.Schema | None = None) -> None:
        """A small driver-side table as Parquet under ``out/name`` (replacing an earlier run's); with a
        ``schema``, written even when empty."""
        import pyarrow.parquet as pq

        target = self.out / name
        target.mkdir(parents=True, exist_ok=True)
        for old in target.glob("*.parquet"):
            old.unlink()
        if rows or schema is not None:
            pq.write_table(pa.Table.from_pylist(list(rows), schema=schema), (target / "part-0.parquet").as_posix())


def write_only(df: DataFrame, path: Path) -> None:
    """``df`` as Parquet at ``path``, not read back."""
    # a file: URI, so a cluster whose default file system is HDFS still writes where the driver reads
    df.write.mode("overwrite").parquet(path.absolute().as_uri())


def run_stages(ctx: PipelineContext, stages: Sequence[Stage]) -> None:
    """Run ``stages`` in order, gathering each one's summary part and warnings into the context."""
    for stage in stages:
        result = stage.run(ctx)
        ctx.written[stage.name] = result.tables
        ctx.parts.update(result.summary)
        ctx.warnings += result.warnings
