"""The pipeline with a consumer group from a scenario file, end to end through Spark.

The scenario sets its own partition counts (overriding --partitions), members with different
subscriptions, and previous ownership; every consumer-load figure is recomputed here from the
per-record table and kassign.assign on the same scenario.
"""

from __future__ import annotations

from collections import Counter

import pyarrow.parquet as pq

import kassign
from kassign import partition_for_key
from kassign.spark.pipeline import PipelineOptions, run_pipeline
from tests.spark.test_pipeline import ORDERS, SKEWED, write_input

SCENARIO = {
    "topics": {"orders": 4, "skewed": 8},
    "members": {
        "A": {"topics": ["orders"]},
        "B": {"topics": ["orders", "skewed"], "owned": [["skewed", 0], ["skewed", 1], ["orders", 3]], "generation": 2},
        "C": {"topics": ["skewed"], "owned": [["skewed", 2]], "generation": 2},
    },
}


def test_scenario_group_end_to_end(spark, tmp_path) -> None:
    out = tmp_path / "out"
    summary = run_pipeline(spark, PipelineOptions(
        out=str(out), input=str(write_input(tmp_path / "records.jsonl")), key_column="key", size_column="size",
        topic_column="topic", partitions=6, scenario=SCENARIO, max_partitions=10, replication_factor=2,
        brokers=[(0, "r1"), (1, "r2")], null_key_model="round-robin"))

    records = pq.read_table(str(out / "partitioned")).to_pylist()
    for row in records:
        if row["key"] is not None:
            assert row["partition"] == partition_for_key(row["key"].encode("utf-8"), SCENARIO["topics"][row["topic"]])
    bytes_per_partition = Counter()
    for row in records:
        bytes_per_partition[(row["topic"], row["partition"])] += row["bytes"]
    assert sum(bytes_per_partition.values()) == sum(r["size"] for r in ORDERS + SKEWED)

    for strategy in ("range", "roundrobin", "sticky", "cooperative-sticky", "consumer:uniform", "consumer:range"):
        load = summary["consumers"][strategy]
        protocol, _, name = strategy.rpartition(":")
        expected = kassign.assign(name, SCENARIO, protocol=protocol or "classic")
        assert {m: sorted(map(tuple, parts)) for m, parts in load["assignment"].items()} == expected, strategy
        for member, partitions in expected.items():
            assert load["members"][member]["bytes"] == sum(bytes_per_partition[tp] for tp in partitions), (strategy, member)
        assert all(t == "orders" for t, _ in expected["A"]) and all(t == "skewed" for t, _ in expected["C"])
