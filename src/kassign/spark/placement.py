"""Where the pipeline places each record, as Spark columns: Kafka's Java producer, keyed and keyless.

A keyed record goes to ``toPositive(murmur2(serialised key)) % partitions`` of its topic (``kafka_partition``);
a keyless one where the producer model puts it (``--null-keys sticky``: Kafka's Java producer of the run's
release, ``kassign.producer.keyless``: 3.3 and later fill ``--batch-size`` bytes on one partition before moving
on, among the partitions led in the producer's rack with ``--partitioner-rack-aware`` (4.4); 3.0-3.2 move when
a record does not fit the partition's batch, keyed records filling batches too; ``round-robin``), with one
modelled producer per Spark input split.
On the JVM engine both are one column evaluated in the executor JVM (``KassignMurmur2``, ``KassignNullKeys``);
on the Arrow engine keyless records go through a Python worker (``kassign.spark.nullkeys``), a second read.

For example, with 3 partitions and the default sticky model, key ``a`` lands on partition 1 and key ``b`` on
partition 2 (murmur2 of the UTF-8 bytes, sign bit cleared, modulo 3), and a split's keyless records fill 16 KiB
on one partition before the next batch goes to another.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kassign.core.errors import KassignError
from kassign.spark.nullkeys import ProducerSetup, assign_null_keys, null_key_column
from kassign.spark.options import MODELS, PipelineOptions, producer_release
from kassign.spark.partition import engine_in_use, kafka_partition_by_topic


def producer_setup(opts: PipelineOptions) -> ProducerSetup:
    """The modelled producers' release, racks, rack-awareness and the leaders' racks, from the options (the
    ``key_figures`` stage fills ``opts.leader_racks`` for rack-aware producers before anything is placed)."""
    return ProducerSetup(producer_release(opts), tuple(opts.client_racks), opts.partitioner_rack_aware,
                         {t: tuple(r) for t, r in (opts.leader_racks or {}).items()})


def check_null_key_model(opts: PipelineOptions) -> None:
    """One line naming the models when ``--null-keys`` names none of them."""
    if opts.null_key_model not in MODELS:
        raise KassignError(f"--null-keys must be one of {', '.join(MODELS)}, got {opts.null_key_model!r}")


def keyed_partition(counts: Mapping[str, int], default_count: int, opts: PipelineOptions,
                    key_type: str | None) -> Column:
    """Kafka's partition of each keyed record: the topic's count where ``counts`` names it, else the default."""
    return kafka_partition_by_topic(counts, default_count, engine=opts.engine, key_type=key_type)


def on_the_jvm(opts: PipelineOptions) -> bool:
    """True when kassign's JVM code serves the one pass (keyless placement and per-split counting);
    False where the Arrow engine serves instead."""
    return opts.engine != "arrow" and engine_in_use(SparkSession.getActiveSession()) == "jvm"


def sees_keyed(opts: PipelineOptions) -> bool:
    """Whether the modelled producer must see keyed records too (Kafka 3.0-3.2's sticky partitioner: keyed
    records fill the batches whose turnover moves the keyless records' partition)."""
    return producer_setup(opts).sees_keyed(opts.null_key_model)


def keyless_placement(counts: Mapping[str, int], opts: PipelineOptions, keyed: Column | None = None) -> Column | None:
    """The producer model as a column evaluated in the executor JVM (one producer per split); None where the
    Arrow engine serves instead. Evaluate it for keyless records only, or, where ``sees_keyed(opts)``, for
    every record with ``keyed`` its partition where it has a key (the column is null for keyed records)."""
    if not on_the_jvm(opts):
        return None
    return null_key_column(F.col("topic"), F.col("bytes"), opts.null_key_model, counts, opts.partitions,
                           opts.batch_size, opts.seed, setup=producer_setup(opts), keyed=keyed)


def _placement(counts: Mapping[str, int], opts: PipelineOptions, key_type: str | None) -> Column | None:
    """Every record's partition as one JVM column (keyed: murmur2; keyless: the producer model); None
    where the Arrow engine serves instead."""
    keyed = keyed_partition(counts, opts.partitions, opts, key_type)
    if sees_keyed(opts):
        hashed = F.when(F.col("key").isNotNull(), keyed)
        keyless = keyless_placement(counts, opts, hashed)
        return None if keyless is None else F.coalesce(keyless, hashed)
    keyless = keyless_placement(counts, opts)
    if keyless is None:
        return None
    return F.when(F.col("key").isNull(), keyless).otherwise(keyed)


def place_keyless_in_python(keyless: DataFrame, counts: Mapping[str, int], opts: PipelineOptions,
                            keyed: str | None = None) -> DataFrame:
    """Records with their partition, placed by the Python producer model (the Arrow engine): keyless records,
    or every record where ``keyed`` names a column of keyed records' partitions (null for keyless ones)."""
    schema = T.StructType(keyless.schema.fields + [T.StructField("partition", T.IntegerType())])
    return keyless.mapInArrow(
        assign_null_keys(opts.null_key_model, dict(counts), opts.partitions, opts.batch_size, opts.seed,
                         setup=producer_setup(opts), keyed=keyed), schema)


def partition_records(records: DataFrame, counts: Mapping[str, int], opts: PipelineOptions,
                      key_type: str | None = None) -> DataFrame:
    """Every record (topic, key, bytes) with its partition. ``counts`` gives topics whose partition
    count is not ``opts.partitions``."""
    check_null_key_model(opts)
    placement = _placement(counts, opts, key_type)
    if placement is not None:
        return records.withColumn("partition", placement)
    if sees_keyed(opts):  # every record through the model, in input order, keyed ones keeping theirs
        hashed = records.withColumn("_keyed", F.when(F.col("key").isNotNull(),
                                                     keyed_partition(counts, opts.partitions, opts, key_type)))
        return place_keyless_in_python(hashed, counts, opts, keyed="_keyed").drop("_keyed")
    keyed = records.filter(F.col("key").isNotNull()).withColumn(
        "partition", keyed_partition(counts, opts.partitions, opts, key_type))
    # Keyless rows first: a union numbers its first child's tasks 0..splits-1, so each modelled producer
    # gets its input split's number, as in the JVM column.
    return place_keyless_in_python(records.filter(F.col("key").isNull()), counts, opts).unionByName(keyed)
