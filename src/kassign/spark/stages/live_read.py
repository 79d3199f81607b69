"""Stage ``live_read``: the one pass over live topics: every planned offset read, records and bytes per key.

Reads: ``plan`` and ``counts`` (the live_plan stage's), and the records themselves, read on the executors by
the ``kassign-kafka`` source (``kassign.spark.kafka_source``).

Writes: ``key_stats``: records and bytes per (topic, key, actual partition), and the offsets not read per
(topic, partition, reason); ``forensics_keys`` (unless --no-forensics): the keys that are split over
partitions or that no known partitioner puts where they are.

Decides: the ``digest`` every later stage starts from (partitions are where the records are; ``java_records``
and ``java_bytes`` where Kafka's Java producer would have put them), which producer put each topic's records
there (``forensics`` in summary.json; ``forensics.TOPIC.keyless``: whether the keyless records sit only on
partitions led in some racks, as rack-aware producers put them, from the leaders' racks), ``engine``, ``null_key_model`` (none: nothing is modelled) and
``key_type`` (keys as they are). An error raised on an executor ends the run with its own one line.

For example, 40 records of key ``a`` found in partition 2 of a 6-partition topic, where murmur2 puts ``a`` on
partition 5, count 40 records in partition 2 and 40 Java records in partition 5.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kassign.core.errors import KassignError
from kassign.spark import inputs, key_merge
from kassign.spark.counting import count_per_group, merge_in_spark, with_key_columns
from kassign.spark.digest import GAP_PREFIX, LiveFigures, digest_figures
from kassign.spark.options import PipelineOptions
from kassign.spark.partition import engine_in_use
from kassign.spark.placement import on_the_jvm
from kassign.spark.stages.base import HOT_KEYS, PipelineContext, Stage, StageResult
from kassign.spark.stages.read_input import KEY_AS_IS
from kassign.spark.warm_up import prepare_driver_meanwhile

_LIVE_MODEL = {"model": "none: a live topic's records are where their producers put them"}


def run(ctx: PipelineContext) -> StageResult:
    from kassign.spark.forensics import Forensics
    from kassign.spark.kafka_source import read_kafka

    opts, counts = ctx.opts, ctx.counts
    prepare_driver_meanwhile(opts.strategies)
    ctx.job("kassign stages 1-2: read the topics, count per key and partition (one pass)")
    df = read_kafka(ctx.spark, opts.bootstrap, list(ctx.plan.topics), config=opts.client_config, read_plan=ctx.plan,
                    accounting=True)
    records = live_records(df)
    figures_path = ctx.out / ".key_figures"
    try:
        figures = _live_figures_on_driver(records, counts, opts)
        if figures is None:
            merge_in_spark(with_key_columns(live_key_figures(records, opts), opts, None), figures_path, opts)
    except Exception as err:  # an executor's one-line error arrives inside Spark's wrapping
        raise _executor_error(err) from None
    forensics = Forensics(counts, ctx.out / "forensics_keys") if opts.forensics else None
    ctx.digest = digest_figures(figures if figures is not None else figures_path, ctx.out / "key_stats",
                                opts.max_partitions, HOT_KEYS, live=LiveFigures(counts, forensics))
    shutil.rmtree(figures_path, ignore_errors=True)
    part = {"engine": engine_in_use(ctx.spark) if opts.engine == "auto" else opts.engine,
            "null_key_model": _LIVE_MODEL, "key_type": KEY_AS_IS}
    if forensics is None:
        return StageResult(("key_stats",), part)
    part["forensics"] = found = forensics.summary()
    from kassign.spark.forensics import keyless_placement

    for topic, entry in found.items():
        keyless = [_keyless(ctx.digest, topic, p) for p in range(counts[topic])]
        placement = keyless_placement(keyless, (ctx.leader_racks or {}).get(topic, []))
        if placement is not None:
            entry["keyless"] = placement
    ctx.distinct_keys = {t: f["distinct_keys"] for t, f in found.items()}
    return StageResult(("key_stats", "forensics_keys"), part)


def _keyless(digest, topic: str, partition: int) -> tuple[int, int]:
    figures = digest.partitions.get((topic, partition))
    return (figures.records - figures.keyed_records, figures.keyless_bytes) if figures is not None else (0, 0)


STAGE = Stage("live_read", run, reads=("plan", "counts", "leader_racks"), makes=("digest", "distinct_keys"),
              writes=("key_stats", "forensics_keys"))


def live_records(df: DataFrame) -> DataFrame:
    """The kassign-kafka source's rows (with its accounting column) as the pipeline's tagged rows: records with
    their actual partition; gap rows as a reason with their offsets in ``bytes``."""
    reason = F.when(F.col("gap").isNotNull(), F.concat(F.lit(GAP_PREFIX), F.col("gap")))
    return df.select("topic", F.col("key"), F.col("size").alias("bytes"), "partition", reason.alias("reason"))


def live_key_figures(tagged: DataFrame, opts: PipelineOptions) -> DataFrame:
    """The one pass over records read from Kafka: records and bytes per (topic, key, actual partition), plus
    the offsets not read per (topic, partition, reason). Clustered by (topic, key): each output file holds
    every row of its keys, which the forensics need."""
    group = ["topic", "key", "partition", "reason"]
    placed = tagged.select(*group, "bytes")
    if on_the_jvm(opts):
        return count_per_group(placed, group, cluster_by=["topic", "key"])
    return (placed.repartition("topic", "key").groupBy(*group)
            .agg(F.count(F.lit(1)).alias("records"), F.sum("bytes").alias("bytes")))


def _live_figures_on_driver(records: DataFrame, counts: Mapping[str, int], opts: PipelineOptions) -> pa.Table | None:
    """The live pass's key figures with the splits' counts merged on the driver (``kassign.spark.key_merge``):
    the partition where each record is kept, keys shown as text where valid UTF-8. None where Spark merges
    instead (the Arrow engine, or counts beyond ``spark.driver.maxResultSize``)."""
    if not on_the_jvm(opts):
        return None
    merged = key_merge.merge_on_driver(records, ["topic", "key", "partition", "reason"])
    if merged is None:
        return None
    # partitions are where the records are; every row names its topic
    return key_merge.key_columns(merged, counts, opts.partitions, None, None, live=True)


def _executor_error(err: Exception) -> KassignError:
    """The one line an executor raised (a kassign error inside Spark's wrapping of the Python worker's
    traceback, e.g. ``kassign.kafka.connection.BrokerError: ...``), or Spark's first line."""
    raised = re.findall(r"(?m)^(kassign(?:\.\w+)+): (.+)$", str(err))
    if raised:
        return KassignError(raised[-1][1].strip())
    return KassignError(f"reading the topics failed: {inputs._spark_error(err)}")
