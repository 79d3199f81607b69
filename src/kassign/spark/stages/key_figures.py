"""Stage ``key_figures``: the one pass over the input: every record placed, records and bytes per key.

Reads: ``tagged`` (the input stage's rows) and ``key_type``; the scenario's partition counts (topics it names
get its count, every other topic ``--partitions``).

Writes: ``key_stats``: records and bytes per (topic, key, partition), with the key as shown and its hash
(``kassign.spark.digest``).

Decides: every record's partition as Kafka's Java producer would choose it (keyed: murmur2; keyless: the
``--null-keys`` model, one producer per input split), and the ``digest`` every later stage starts from; in
summary.json ``engine`` and ``null_key_model``.

The input is read once: keyless records are placed by the producer model in the scan (it follows the input
order), each split counts per key in kassign's JVM tables, the driver merges the splits' counts
(``kassign.spark.key_merge``; Spark merges them where they exceed ``spark.driver.maxResultSize``), and a keyed
row's partition is computed once per key. The Arrow engine reads keyless records a second time, in a Python
worker. For example, 3 M records over 200 k keys become 200 k rows here, plus one per set-aside reason.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping

from kassign.core.errors import KassignError

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kassign.spark import key_merge
from kassign.spark.counting import count_per_group, merge_in_spark, with_key_columns
from kassign.spark.digest import digest_figures
from kassign.spark.options import PipelineOptions
from kassign.spark.partition import engine_in_use
from kassign.spark.placement import (check_null_key_model, keyed_partition, keyless_placement, on_the_jvm,
                                     place_keyless_in_python, producer_setup, sees_keyed)
from kassign.spark.stages.base import HOT_KEYS, PipelineContext, Stage, StageResult
from kassign.spark.stages.read_input import constant_topic, good, good_records
from kassign.spark.warm_up import prepare_driver_meanwhile


def run(ctx: PipelineContext) -> StageResult:
    opts = ctx.opts
    ctx.placement_counts = known = dict(opts.scenario["topics"]) if opts.scenario is not None else {}
    if opts.partitioner_rack_aware:
        opts.leader_racks = _leader_racks(ctx, known)
    ctx.job("kassign stages 1-2: partition every record, count per key (one pass)")
    to_count = rows_to_count(ctx.tagged, known, opts, ctx.key_type)
    # Started now (unless the caller did so while the JVM started), while the driver only waits for
    # Spark: earlier, it would hold the GIL that the query's many py4j calls need.
    prepare_driver_meanwhile(opts.strategies)
    figures = driver_key_figures(*to_count, known, opts, ctx.key_type) if to_count is not None else None
    if figures is not None:
        ctx.digest = digest_figures(figures, ctx.out / "key_stats", opts.max_partitions, HOT_KEYS)
    else:
        figures_path = ctx.out / ".key_figures"
        merge_in_spark(with_key_columns(key_figures(ctx.tagged, known, opts, ctx.key_type), opts, ctx.key_type),
                       figures_path, opts)
        ctx.digest = digest_figures(figures_path, ctx.out / "key_stats", opts.max_partitions, HOT_KEYS)
        shutil.rmtree(figures_path)
    model = null_key_model(opts)
    return StageResult(("key_stats",), {"engine": engine_in_use(ctx.spark) if opts.engine == "auto" else opts.engine,
                                        "null_key_model": model})


STAGE = Stage("key_figures", run, reads=("tagged", "key_type"), makes=("placement_counts", "digest"),
              writes=("key_stats",))


def null_key_model(opts: PipelineOptions) -> dict:
    """summary.json's ``null_key_model``: the model, and for Kafka's sticky partitioner the release whose rule
    placed keyless records, the rule, the producers' racks and rack-awareness."""
    model = {"model": opts.null_key_model, "batch_size": opts.batch_size, "seed": opts.seed,
             "producer": "one per Spark input split"}
    if opts.null_key_model == "sticky":
        from kassign.producer.keyless import keyless_rule

        setup = producer_setup(opts)
        model.update({"kafka_version": setup.kafka_version,
                      "rule": keyless_rule(setup.kafka_version, setup.rack_aware),
                      "client_racks": list(setup.client_racks),
                      "partitioner_rack_aware": setup.rack_aware})
        if setup.rack_aware:
            model["leader_racks"] = {t: list(r) for t, r in sorted(setup.leaders.items())}
            model["leader_racks_from"] = opts.extra.get("leader_racks_from", "given")
    return model


def _leader_racks(ctx: PipelineContext, known: Mapping[str, int]) -> dict[str, list[str | None]]:
    """Every topic's leaders' racks for rack-aware producers: --leader-racks where given, else the scenario's
    partition_racks (the first rack of each partition: its preferred leader's), else the leaders of the replica
    placement the brokers stage reports (``--brokers``, ``--replication-factor``, ``--placer``, ``--seed``). The
    placement numbers topics in name order, so a topic column's topics are listed first (one query)."""
    from kassign.spark.loads import leader_racks

    opts = ctx.opts
    constant = constant_topic(opts)
    if constant is not None:
        topics = [constant]
    else:
        ctx.job("kassign: the topics in the data (rack-aware producers need their leaders first)")
        rows = good_records(ctx.tagged).select("topic").distinct().collect()
        topics = sorted(r["topic"] for r in rows)
    counts = {t: known.get(t, opts.partitions) for t in topics}
    given = dict(opts.leader_racks or {})
    scenario_racks = (opts.scenario or {}).get("partition_racks") or {}
    racks = leader_racks(opts.brokers, counts, opts.replication_factor, opts.seed, opts.placer)
    sources = set()
    for topic in topics:
        if topic in given or "*" in given:
            leaders, source = list(given.get(topic, given.get("*"))), "given (--leader-racks)"
        elif topic in scenario_racks:
            leaders, source = [r[0] if r else None for r in scenario_racks[topic]], "the scenario's partition_racks"
        else:
            leaders, source = racks[topic], "the replica placement on --brokers (leader: first replica)"
        if len(leaders) != counts[topic]:
            raise KassignError(f"{source} for topic {topic!r} names {len(leaders)} partitions; the topic has "
                               f"{counts[topic]}")
        racks[topic] = [r or None for r in leaders]
        sources.add(source)
    opts.extra["leader_racks_from"] = "; ".join(sorted(sources))
    return {t: racks[t] for t in topics}


def _placed_for_counting(tagged: DataFrame, counts: Mapping[str, int], opts: PipelineOptions,
                         key_type: str | None = None) -> tuple[DataFrame, list[str]]:
    """The JVM engine's rows to count and their grouping columns: ([topic,] key, partition, reason) and bytes,
    keyless records already placed by the producer model (it follows the input order); a keyed record's
    partition depends on its topic and key alone, so it is left for once per key afterwards. With one topic
    for the whole input, the topic stays out of the grouping (every row would hash it)."""
    group = ["key", "partition", "reason"] if constant_topic(opts) is not None else ["topic", "key", "partition", "reason"]
    if sees_keyed(opts):  # Kafka 3.0-3.2: the producer sees every record (the column is null for keyed ones)
        hashed = F.when(F.col("key").isNotNull(), keyed_partition(counts, opts.partitions, opts, key_type))
        chosen = F.when(good(), keyless_placement(counts, opts, hashed))
    else:
        chosen = F.when(good() & F.col("key").isNull(), keyless_placement(counts, opts))
    placed = tagged.select(*(F.when(good(), F.col(c)).alias(c) for c in ("topic", "key", "bytes")),
                           chosen.alias("partition"), "reason")
    return placed.select(*group, "bytes"), group


def key_figures(tagged: DataFrame, counts: Mapping[str, int], opts: PipelineOptions,
                key_type: str | None = None) -> DataFrame:
    """The one pass over the input, merged in Spark: records and bytes per (topic, key, partition),
    plus one row per reason rows were set aside for (topic, key and partition null there).

    Everything later (partition load, hot keys, the sweep, consumers, brokers) is computed from
    these rows, as many as there are distinct keys. On the JVM engine the input is read once:
    keyless records are placed by the JVM copy of the producer model inside the same scan. The file
    pass merges on the driver instead where the splits' counts fit (``driver_key_figures``)."""
    check_null_key_model(opts)
    figures = [F.count(F.lit(1)).alias("records"), F.sum("bytes").alias("bytes")]
    if on_the_jvm(opts):
        placed, group = _placed_for_counting(tagged, counts, opts, key_type)
        grouped = count_per_group(placed, group)
        constant = constant_topic(opts)
        if constant is not None:
            grouped = grouped.select(F.when(good(), F.lit(constant)).alias("topic"), *group, "records", "bytes")
        keyed = good() & F.col("key").isNotNull()
        return grouped.withColumn("partition", F.when(keyed, keyed_partition(counts, opts.partitions, opts, key_type))
                                  .otherwise(F.col("partition")))
    # Arrow engine: keyless records go through a Python worker (a second read of the input).
    if sees_keyed(opts):  # Kafka 3.0-3.2: every record through the producer model, keyed ones keeping theirs
        hashed = good_records(tagged).withColumn(
            "_keyed", F.when(F.col("key").isNotNull(), keyed_partition(counts, opts.partitions, opts, key_type)))
        placed = place_keyless_in_python(hashed, counts, opts, keyed="_keyed")
        aside = tagged.filter(~good()).select(*(F.lit(None).cast(tagged.schema[c].dataType).alias(c)
                                                for c in ("topic", "key", "bytes")),
                                              F.lit(None).cast("int").alias("partition"), "reason")
        placed = placed.select("topic", "key", "bytes", "partition", F.lit(None).cast("string").alias("reason"))
        return placed.unionByName(aside).groupBy("topic", "key", "partition", "reason").agg(*figures)
    not_keyless = tagged.filter(~(good() & F.col("key").isNull())).select(
        *(F.when(good(), F.col(c)).alias(c) for c in ("topic", "key", "bytes")),
        F.when(good(), keyed_partition(counts, opts.partitions, opts, key_type)).alias("partition"), "reason")
    keyless = place_keyless_in_python(good_records(tagged).filter(F.col("key").isNull()), counts, opts)
    keyless = keyless.select("topic", "key", "bytes", "partition", F.lit(None).cast("string").alias("reason"))
    return keyless.unionByName(not_keyless).groupBy("topic", "key", "partition", "reason").agg(*figures)


def rows_to_count(tagged: DataFrame, counts: Mapping[str, int], opts: PipelineOptions,
                  key_type: str | None = None) -> tuple[DataFrame, list[str]] | None:
    """The JVM engine's rows to count per key (``_placed_for_counting``) and their grouping columns; None on
    the Arrow engine. ``driver_key_figures`` counts and merges them."""
    check_null_key_model(opts)
    if not on_the_jvm(opts):
        return None
    return _placed_for_counting(tagged, counts, opts, key_type)


def driver_key_figures(placed: DataFrame, group: list[str], counts: Mapping[str, int], opts: PipelineOptions,
                       key_type: str | None = None) -> pa.Table | None:
    """``with_key_columns(key_figures(...))`` with the splits' counts merged by the driver
    (``kassign.spark.key_merge.merge_on_driver``; ``placed``: rows with the grouping columns and ``bytes``):
    one Spark stage instead of two. None when the splits' counts exceed ``spark.driver.maxResultSize`` or the
    driver's bound (then merge in Spark). Live topics merge in ``kassign.spark.stages.live_read``."""
    merged = key_merge.merge_on_driver(placed, group)
    if merged is None:
        return None
    return key_merge.key_columns(merged, counts, opts.partitions, key_type, constant_topic(opts))
