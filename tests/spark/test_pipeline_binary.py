"""A Parquet input with binary keys and a value column: raw key bytes hashed, bytes = key + value."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq

from kassign import partition_for_key
from kassign.spark.pipeline import PipelineOptions, run_pipeline

KEYS = [bytes([i % 7, 0xFF, i % 3]) for i in range(120)] + [None] * 6 + [b""]
VALUES = [b"v" * (i % 11) if i % 5 else None for i in range(len(KEYS))]


def test_binary_keys_and_value_column(spark, tmp_path):
    pq.write_table(pa.table({"k": pa.array(KEYS, pa.binary()), "payload": pa.array(VALUES, pa.binary())}),
                   str(tmp_path / "input.parquet"))
    summary = run_pipeline(spark, PipelineOptions(
        out=str(tmp_path / "out"), input=str(tmp_path / "input.parquet"), key_column="k", value_column="payload",
        partitions=4, members=2, max_partitions=8, null_key_model="round-robin", brokers=[(0, None), (1, None)],
        replication_factor=1, strategies=("range", "load-aware")))
    assert summary["rows"]["accounted"] and summary["rows"]["input"] == len(KEYS)
    expected_bytes = Counter()
    for key, value in zip(KEYS, VALUES):
        if key is not None:
            expected_bytes[partition_for_key(key, 4)] += len(key) + len(value or b"")
    rows = {r["partition"]: r for r in summary["partition_load"]}
    null_bytes = sum(len(v or b"") for k, v in zip(KEYS, VALUES) if k is None)
    assert sum(r["bytes"] for r in rows.values()) == sum(expected_bytes.values()) + null_bytes
    # Round-robin over 4 partitions: the 6 keyless records land 2,2,1,1 (one producer, random start).
    keyless = sorted(r["records"] - r["keyed_records"] for r in rows.values())
    assert keyless == [1, 1, 2, 2]
    hot = rows[partition_for_key(bytes([0, 0xFF, 0]), 4)]["hot_keys"]
    assert all(h["key"].startswith("0x") for h in hot)
    assert set(summary["consumers"]) == {"range", "load-aware"}
