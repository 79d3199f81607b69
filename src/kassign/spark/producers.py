"""Pipeline stage "producer agreement": where the same records land under different producer clients.

Teams mix producers (Java services, librdkafka-based Python/Go/.NET services, Sarama, KafkaJS);
one key then lands on different partitions depending on who wrote it, which breaks per-key
ordering and co-partitioned joins. For each producer in ``--producers`` this stage places
every record as that client does (``kafka_partition(..., partitioner=...)``) and reports,
against the first producer (the reference):

- the share of records, of keyed records, of distinct keys (per topic) and of bytes that land
  on a different partition than under the reference;
- the records and bytes per partition that producer would create.

Records a client does not hash (null keys, and for ``librdkafka:consistent_random`` empty
keys) follow that client's model (``ClientPartitioner.unhashed_model``, see ``nullkeys``):
the Java producer's ``--null-keys`` model, round-robin for KafkaJS, random for Sarama and
librdkafka's ``*_random``. Where a client hashes a null key (librdkafka ``consistent``,
``murmur2``, ``fnv1a``), all such records go to that one partition. A keyless record under
two random models counts as moved when the models happen to pick different partitions.

Tables: ``producer_partitions`` (every record with one partition column per producer),
``producer_agreement`` (one row per producer), ``producer_load`` (producer, topic, partition).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kassign.producer.clients import ClientPartitioner
from kassign.spark.nullkeys import fill_unhashed
from kassign.spark.partition import kafka_partition_by_topic


def column_name(index: int) -> str:
    """Producer ``index``'s partition column (names like "librdkafka:murmur2" are awkward as columns)."""
    return f"p{index}"


def unhashed_model(client: ClientPartitioner, java_model: str) -> str:
    """How ``client`` places records it does not hash; the Java producer's is the pipeline's --null-keys."""
    return java_model if client.unhashed_model == "sticky" else client.unhashed_model


def describe_null_keys(client: ClientPartitioner, java_model: str, batch_size: int, counts: Mapping[str, int]) -> str:
    """One line for tables: what this client does with a null key."""
    if client.null_key_hashed:
        fixed = sorted({client.partition(None, n) for n in counts.values()})
        return f"hashed: partition {', '.join(map(str, fixed))}"
    model = unhashed_model(client, java_model)
    if model == "sticky":
        return f"sticky, {batch_size} B"
    return {"round-robin": "round-robin", "random": "random"}[model]


def producer_partitions(partitioned: DataFrame, counts: Mapping[str, int], clients: Sequence[ClientPartitioner],
                        java_model: str, batch_size: int, seed: int, default_count: int, engine: str,
                        key_type: str | None) -> DataFrame:
    """Stage 1's records (topic, key, bytes, partition) with one int partition column per producer, none null.

    The Java producer's column is stage 1's ``partition`` itself, so its figures here match
    the other stages' exactly, null keys included.
    """
    names = [column_name(i) for i in range(len(clients))]
    placed = partitioned.select("topic", "key", "bytes", *(
        (F.col("partition") if c.name == "java"
         else kafka_partition_by_topic(counts, default_count, engine, c.name, key_type)).alias(name)
        for c, name in zip(clients, names)))
    all_hashed = None
    for name in names:
        condition = F.col(name).isNotNull()
        all_hashed = condition if all_hashed is None else all_hashed & condition
    hashed = placed.filter(all_hashed)
    # Only rows some client does not hash go through Python (mostly null keys), in input order per split.
    unhashed = placed.filter(~all_hashed)
    models = [unhashed_model(c, java_model) for c in clients]
    filled = unhashed.mapInArrow(fill_unhashed(models, names, dict(counts), default_count, batch_size, seed),
                                 unhashed.schema)
    return filled.unionByName(hashed)  # unhashed first: their producers get the input split's number


def agreement(partitions: DataFrame, clients: Sequence[ClientPartitioner]) -> list[dict[str, Any]]:
    """Per producer, what lands elsewhere than under the reference (producer 0)."""
    reference = F.col(column_name(0))
    keyed = F.col("key").isNotNull()
    aggregates = [F.count(F.lit(1)).alias("records"), F.sum("bytes").alias("bytes"),
                  F.count("key").alias("keyed_records")]
    for i in range(len(clients)):
        moved = F.col(column_name(i)) != reference
        aggregates += [F.sum(moved.cast("long")).alias(f"records_{i}"),
                       F.sum(F.when(moved, F.col("bytes")).otherwise(0)).alias(f"bytes_{i}"),
                       F.sum((moved & keyed).cast("long")).alias(f"keyed_{i}")]
    totals = partitions.agg(*aggregates).collect()[0]
    # A key moved when any of its records did (for a hashed key, all of them do or none does).
    per_key = (partitions.filter(keyed).groupBy("topic", "key")
               .agg(*(F.max((F.col(column_name(i)) != reference).cast("int")).alias(f"moved_{i}")
                      for i in range(len(clients)))))
    key_totals = per_key.agg(F.count(F.lit(1)).alias("keys"),
                             *(F.sum(f"moved_{i}").alias(f"keys_{i}") for i in range(len(clients)))).collect()[0]
    rows = []
    for i, client in enumerate(clients):
        row = {"producer": client.name, "records": totals["records"], "records_moved": totals[f"records_{i}"] or 0,
               "keyed_records": totals["keyed_records"], "keyed_records_moved": totals[f"keyed_{i}"] or 0,
               "keys": key_totals["keys"], "keys_moved": key_totals[f"keys_{i}"] or 0,
               "bytes": totals["bytes"] or 0, "bytes_moved": totals[f"bytes_{i}"] or 0}
        for what in ("records", "keyed_records", "keys", "bytes"):
            row[f"{what}_moved_share"] = round(row[f"{what}_moved"] / row[what], 6) if row[what] else 0.0
        rows.append(row)
    return rows


def producer_load(partitions: DataFrame, clients: Sequence[ClientPartitioner]) -> list[dict[str, Any]]:
    """Records and bytes per (producer, topic, partition): one pass, one small shuffle."""
    exploded = partitions.select("topic", "bytes", F.posexplode(F.array(
        *(F.col(column_name(i)) for i in range(len(clients))))).alias("producer_index", "partition"))
    rows = (exploded.groupBy("producer_index", "topic", "partition")
            .agg(F.count(F.lit(1)).alias("records"), F.sum("bytes").alias("bytes")).collect())
    result = [{"producer": clients[r["producer_index"]].name, "topic": r["topic"], "partition": r["partition"],
               "records": r["records"], "bytes": r["bytes"] or 0} for r in rows]
    return sorted(result, key=lambda r: ([c.name for c in clients].index(r["producer"]), r["topic"], r["partition"]))


def complete_load(load: list[dict[str, Any]], clients: Sequence[ClientPartitioner],
                  counts: Mapping[str, int]) -> list[dict[str, Any]]:
    """``load`` with a zero row for every partition a producer left empty (they still exist)."""
    seen = {(r["producer"], r["topic"], r["partition"]) for r in load}
    rows = list(load)
    for client in clients:
        for topic, n in counts.items():
            rows += [{"producer": client.name, "topic": topic, "partition": p, "records": 0, "bytes": 0}
                     for p in range(n) if (client.name, topic, p) not in seen]
    order = [c.name for c in clients]
    return sorted(rows, key=lambda r: (order.index(r["producer"]), r["topic"], r["partition"]))


def skew(load: Sequence[Mapping[str, Any]], producer: str) -> float:
    """Hottest partition's bytes over the mean, over every partition of every topic."""
    values = [r["bytes"] for r in load if r["producer"] == producer]
    mean = sum(values) / len(values) if values else 0
    return round(max(values) / mean, 4) if mean else 0.0
