"""The pipeline's producer-agreement stage on small inputs, its figures recomputed in plain Python."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kassign import partition_for_key
from kassign.core.errors import KassignError
from kassign.spark.pipeline import PipelineOptions, run_pipeline

PARTITIONS = 5
PRODUCERS = ["java", "librdkafka:consistent_random"]
# Two topics; null keys and empty keys (librdkafka's default does not hash either).
RECORDS = [{"topic": "a", "key": f"k{i % 23}", "size": 10 + i % 7} for i in range(240)]
RECORDS += [{"topic": "b", "key": f"order-{i % 5}", "size": 100} for i in range(60)]
RECORDS += [{"topic": "a", "key": None, "size": 40} for _ in range(30)]
RECORDS += [{"topic": "b", "key": "", "size": 3} for _ in range(12)]


def _options(input_path, out, **extra) -> PipelineOptions:
    base = dict(out=str(out), input=str(input_path), key_column="key", size_column="size", topic_column="topic",
                partitions=PARTITIONS, members=2, max_partitions=6, null_key_model="sticky", batch_size=100,
                replication_factor=1, brokers=[(0, None), (1, None)], strategies=("range",), producers=PRODUCERS)
    base.update(extra)
    return PipelineOptions(**base)


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("producers")
    (root / "records.jsonl").write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n")
    summary = run_pipeline(spark, _options(root / "records.jsonl", root / "out"))
    return summary, root / "out"


def _table(out, name) -> list[dict]:
    return pq.read_table(str(out / name)).to_pylist()


def test_keyed_records_land_where_each_client_puts_them(run):
    summary, out = run
    assert summary["producers"]["columns"] == {"p0": "java", "p1": "librdkafka:consistent_random"}
    placed = _table(out, "producer_partitions")
    assert len(placed) == len(RECORDS)
    for row in placed:
        for column, name in summary["producers"]["columns"].items():
            assert 0 <= row[column] < PARTITIONS
            if row["key"]:  # hashed by both clients
                assert row[column] == partition_for_key(row["key"].encode(), PARTITIONS, partitioner=name)


def test_java_column_is_stage_one_and_null_keys_follow_each_rule(run):
    _, out = run
    placed = _table(out, "producer_partitions")
    stage1 = Counter((r["topic"], r["key"], r["bytes"], r["partition"]) for r in _table(out, "partitioned"))
    assert Counter((r["topic"], r["key"], r["bytes"], r["p0"]) for r in placed) == stage1
    # Java sticks with a partition for batch.size (100) bytes: 40-byte null-key records switch every 3rd record.
    java_nulls = Counter(r["p0"] for r in placed if r["key"] is None)
    assert sum(java_nulls.values()) == 30 and all(c % 3 == 0 for c in java_nulls.values())
    # librdkafka's default places null and empty keys at random: spread out, not all on one partition.
    assert len({r["p1"] for r in placed if not r["key"]}) > 1
    # and the one-pass figures (null keys placed inside the aggregation's scan) are the same placement
    java_load = {(r["topic"], r["partition"]): (r["records"], r["bytes"])
                 for r in _table(out, "producer_load") if r["producer"] == "java" and r["records"]}
    assert {(r["topic"], r["partition"]): (r["records"], r["bytes"]) for r in _table(out, "partition_load")} == java_load


def _recompute(placed: list[dict]) -> dict[str, dict]:
    """The agreement figures from the per-record table, in plain Python."""
    figures = {}
    for column in ("p0", "p1"):
        moved = [r for r in placed if r[column] != r["p0"]]
        keys = {(r["topic"], r["key"]) for r in placed if r["key"] is not None}
        moved_keys = {(r["topic"], r["key"]) for r in moved if r["key"] is not None}
        figures[column] = {
            "records": len(placed), "records_moved": len(moved),
            "keyed_records": sum(r["key"] is not None for r in placed),
            "keyed_records_moved": sum(r["key"] is not None for r in moved),
            "keys": len(keys), "keys_moved": len(moved_keys),
            "bytes": sum(r["bytes"] for r in placed), "bytes_moved": sum(r["bytes"] for r in moved)}
    return figures


def test_agreement_figures_recomputed_in_plain_python(run):
    summary, out = run
    placed = _table(out, "producer_partitions")
    expected = _recompute(placed)
    agreement = {r["producer"]: r for r in summary["producers"]["agreement"]}
    for column, name in summary["producers"]["columns"].items():
        row = agreement[name]
        for field, value in expected[column].items():
            assert row[field] == value, (name, field)
        assert row["records_moved_share"] == pytest.approx(value_share(expected[column], "records"), abs=1e-6)
        assert row["keys_moved_share"] == pytest.approx(value_share(expected[column], "keys"), abs=1e-6)
        assert row["bytes_moved_share"] == pytest.approx(value_share(expected[column], "bytes"), abs=1e-6)
    assert agreement["java"]["records_moved"] == 0
    # Keyed records independently of the table: which (topic, key) pairs two clients place differently.
    hashed = {(r["topic"], r["key"]) for r in RECORDS if r["key"]}
    differ = {tk for tk in hashed
              if partition_for_key(tk[1].encode(), PARTITIONS) != partition_for_key(
                  tk[1].encode(), PARTITIONS, partitioner="librdkafka:consistent_random")}
    moved_keys = agreement["librdkafka:consistent_random"]["keys_moved"]
    assert len(differ) <= moved_keys <= len(differ) + 1  # + the empty key of topic b, if its random picks moved
    assert agreement["librdkafka:consistent_random"]["keys"] == len(hashed) + 1


def value_share(figures: dict, what: str) -> float:
    return figures[f"{what}_moved"] / figures[what]


def test_per_partition_load_tables_and_conservation(run):
    summary, out = run
    placed = _table(out, "producer_partitions")
    load = _table(out, "producer_load")
    assert len(load) == len(PRODUCERS) * 2 * PARTITIONS  # every partition of both topics, empty ones included
    for column, name in summary["producers"]["columns"].items():
        records, size = Counter(), Counter()
        for r in placed:
            records[r["topic"], r[column]] += 1
            size[r["topic"], r[column]] += r["bytes"]
        for row in (r for r in load if r["producer"] == name):
            assert (row["records"], row["bytes"]) == (records[row["topic"], row["partition"]],
                                                      size[row["topic"], row["partition"]])
        assert summary["rows"]["per_stage"][f"producer_load:{name}"] == len(RECORDS)
    assert summary["rows"]["accounted"]
    assert {r["producer"] for r in _table(out, "producer_agreement")} == set(PRODUCERS)
    page = (out / "report.html").read_text()
    assert "Producer agreement" in page and page.count("<div class=kchart ") == 5
    assert 'data-name="producers"' in page


def test_long_key_column_and_bad_producer_names(spark, tmp_path):
    values = [i * 7919 - 5000 for i in range(80)] + [None] * 4
    pq.write_table(pa.table({"id": pa.array(values, pa.int64()), "size": pa.array([50] * len(values))}),
                   str(tmp_path / "ids.parquet"))
    opts = _options(tmp_path / "ids.parquet", tmp_path / "out", key_column="id", topic_column=None,
                    producers=["java", "kafkajs:legacy"])
    summary = run_pipeline(spark, opts)
    placed = _table(tmp_path / "out", "producer_partitions")
    for row in placed:
        if row["key"] is not None:
            assert row["p0"] == partition_for_key(row["key"], PARTITIONS, key_type="long")
            assert row["p1"] == partition_for_key(row["key"], PARTITIONS, partitioner="kafkajs:legacy",
                                                  key_type="long")
    assert summary["key_type"] == "long" and summary["rows"]["accounted"]
    # Stages 1-2 hash the same 8 LongSerializer bytes.
    keyed = defaultdict(int)
    for v in values:
        if v is not None:
            keyed[partition_for_key(v, PARTITIONS, key_type="long")] += 1
    got = {r["partition"]: r["keyed_records"] for r in summary["partition_load"]}
    assert {p: got.get(p, 0) for p in range(PARTITIONS)} == {p: keyed.get(p, 0) for p in range(PARTITIONS)}
    with pytest.raises(KassignError, match="unknown partitioner 'go'"):
        run_pipeline(spark, _options(tmp_path / "ids.parquet", tmp_path / "bad", key_column="id", topic_column=None,
                                     producers=["java", "go"]))
    with pytest.raises(KassignError, match="--key-type string needs string or binary"):
        run_pipeline(spark, _options(tmp_path / "ids.parquet", tmp_path / "bad", key_column="id", topic_column=None,
                                     key_type="string"))
