"""The whole pipeline on a small crafted JSON-lines input, checked against plain-Python computations."""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections import Counter, defaultdict

import pyarrow.parquet as pq
import pytest

from kassign import partition_for_key
from kassign.core.errors import KassignError
from kassign.spark.pipeline import PipelineOptions, run_pipeline

PARTITIONS = 6
# Topic "orders": many keys plus null keys. Topic "skewed": one key carries a third of the bytes.
ORDERS = [{"topic": "orders", "key": f"order-{i % 37}", "size": 100 + i % 13} for i in range(300)]
ORDERS += [{"topic": "orders", "key": None, "size": 50} for _ in range(40)]
ORDERS += [{"topic": "orders", "key": "ünïcödé-ключ", "size": 10}]
SKEWED = [{"topic": "skewed", "key": "hot", "size": 1000} for _ in range(60)]
SKEWED += [{"topic": "skewed", "key": f"cold-{i}", "size": 40} for i in range(3000)]
BAD = ['{"topic": null, "key": "x", "size": 5}', '{"topic": "orders", "key": "y", "size": -1}', "{not json at all"]
TARGET_SHARE = 0.4


def write_input(path):
    lines = [json.dumps(r) for r in ORDERS + SKEWED] + BAD
    path.write_text("\n".join(lines) + "\n")
    return path


def options(input_path, out, **extra) -> PipelineOptions:
    base = dict(out=str(out), input=str(input_path), key_column="key", size_column="size", topic_column="topic",
                partitions=PARTITIONS, members=3, max_partitions=20, target_share=TARGET_SHARE, null_key_model="sticky",
                batch_size=200, replication_factor=2,
                brokers=[(0, "r1"), (1, "r2"), (2, "r1"), (3, "r2")])
    base.update(extra)
    return PipelineOptions(**base)


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("pipeline")
    input_path = write_input(root / "records.jsonl")
    summary = run_pipeline(spark, options(input_path, root / "out"))
    return summary, root / "out", input_path


def keyed_expectation():
    records, size = Counter(), Counter()
    for r in ORDERS + SKEWED:
        if r["key"] is not None:
            tp = (r["topic"], partition_for_key(r["key"].encode("utf-8"), PARTITIONS))
            records[tp] += 1
            size[tp] += r["size"]
    return records, size


def table(out, name):
    return pq.read_table(str(out / name)).to_pylist()


def test_every_record_is_accounted_for(run):
    summary, _, _ = run
    rows = summary["rows"]
    assert rows["input"] == len(ORDERS) + len(SKEWED) + len(BAD)
    assert rows["set_aside"] == {"line is not a JSON object": 1, "topic column 'topic' is null": 1,
                                 "size column 'size' is negative": 1}
    good = len(ORDERS) + len(SKEWED)
    assert rows["expected_per_stage"] == good
    assert set(rows["per_stage"].values()) == {good} and rows["accounted"]


def test_partitioned_table_matches_partition_for_key_and_null_keys_stay_in_range(run):
    _, out, _ = run
    rows = table(out, "partitioned")
    assert len(rows) == len(ORDERS) + len(SKEWED)
    for row in rows:
        if row["key"] is None:
            assert 0 <= row["partition"] < PARTITIONS
        else:
            assert row["partition"] == partition_for_key(row["key"].encode("utf-8"), PARTITIONS)
    nulls = [r["partition"] for r in rows if r["key"] is None]
    # sticky with batch.size 200 and 50-byte records: batches of 4 records; 40 records in 10 batches.
    assert len(nulls) == 40 and all(c % 4 == 0 for c in Counter(nulls).values())


def test_partition_load_records_bytes_and_hot_keys(run):
    summary, out, _ = run
    records, size = keyed_expectation()
    rows = {(r["topic"], r["partition"]): r for r in table(out, "partition_load")}
    null_records = sum(1 for r in ORDERS if r["key"] is None)
    assert sum(r["records"] - r["keyed_records"] for r in rows.values()) == null_records
    for tp, row in rows.items():
        assert row["keyed_records"] == records[tp]
        keyed_bytes = row["bytes"] - 50 * (row["records"] - row["keyed_records"])
        assert keyed_bytes == size[tp]
    hot_tp = ("skewed", partition_for_key(b"hot", PARTITIONS))
    top = rows[hot_tp]["hot_keys"][0]
    assert top["key"] == "hot" and top["bytes"] == 60_000
    assert top["share"] == pytest.approx(60_000 / rows[hot_tp]["bytes"], abs=1e-6)
    assert len(summary["partition_load"]) == len(rows)
    keys = defaultdict(set)
    for r in ORDERS + SKEWED:
        if r["key"] is not None:
            keys[(r["topic"], partition_for_key(r["key"].encode("utf-8"), PARTITIONS))].add(r["key"])
    assert {tp: row["distinct_keys"] for tp, row in rows.items()} == {tp: len(keys.get(tp, ())) for tp in rows}


def test_the_one_pass_figures_agree_with_the_partitioned_table(run):
    # partition_load comes from one aggregation that places keyless records inside the scan; the
    # partitioned table places every record in a separate pass: the producer model must agree row for row.
    _, out, _ = run
    per_partition = Counter()
    for row in table(out, "partitioned"):
        per_partition[(row["topic"], row["partition"], row["key"] is None)] += 1
    load = {(r["topic"], r["partition"]): r for r in table(out, "partition_load")}
    assert {tp: r["records"] - r["keyed_records"] for tp, r in load.items()} == {
        tp: per_partition[(*tp, True)] for tp in load}


def brute_force_recommendation(max_partitions):
    keyed = defaultdict(int)
    for r in SKEWED:
        keyed[r["key"]] += r["size"]
    total = sum(keyed.values())
    for n in range(1, max_partitions + 1):
        per = Counter()
        for key, b in keyed.items():
            per[partition_for_key(key.encode(), n)] += b
        if max(per.values()) / total <= TARGET_SHARE:
            return n, max(per.values())
    return None, None


def test_sweep_recommends_the_smallest_count_under_the_target(run):
    summary, out, _ = run
    expected_n, hottest = brute_force_recommendation(20)
    sweep = summary["sweep"]["skewed"]
    assert sweep["recommended_partitions"] == expected_n
    assert expected_n is not None and expected_n > 2  # the crafted set needs a few partitions
    assert next(c for c in sweep["curve"] if c["partitions"] == expected_n)["hottest_bytes"] == hottest
    assert sweep["hottest_key_share"] == pytest.approx(60_000 / (60_000 + 3000 * 40), abs=1e-6)
    sweep_rows = table(out, "partition_sweep")
    assert {r["partitions"] for r in sweep_rows if r["topic"] == "skewed"} == set(range(1, 21))


def test_consumer_broker_and_rebalance_stages(run):
    summary, out, _ = run
    total_bytes = sum(r["size"] for r in ORDERS + SKEWED)
    for strategy, load in summary["consumers"].items():
        assert sum(m["bytes"] for m in load["members"].values()) == total_bytes, strategy
        assert sum(m["partitions"] for m in load["members"].values()) == 2 * PARTITIONS
    spreads = {s: c["bytes_spread"]["max_minus_min"] for s, c in summary["consumers"].items()}
    assert spreads["load-aware"] <= spreads["range"]
    members = table(out, "consumer_load")
    assert {r["strategy"] for r in members} == set(summary["consumers"])
    brokers = summary["brokers"]["brokers"]
    assert sum(b["leader_bytes"] for b in brokers.values()) == total_bytes
    assert sum(b["replica_bytes"] for b in brokers.values()) == 2 * total_bytes
    assert set(summary["brokers"]["racks"]) == {"r1", "r2"}
    for strategy, events in summary["rebalance"].items():
        leave = events["member_leaves"]
        assert leave["partitions"] >= leave["forced_partitions"] > 0, strategy
        assert events["member_joins"]["partitions"] >= 1
    assert {r["event"] for r in table(out, "rebalance_cost")} == {"member_leaves", "member_joins"}


def test_report_is_self_contained_with_its_charts(run):
    _, out, _ = run
    page = (out / "report.html").read_text()
    blocks = re.findall(r'<script type="application/json" data-chart="chart-([\w-]+)">(.*?)</script>', page)
    assert [name for name, _ in blocks] == ["partition-load", "sweep", "consumer-load", "broker-load"]
    for name, block in blocks:
        assert json.loads(block)["data"], name
    # everything the page runs is in it: plotly.js packed inline, no script, image or style from elsewhere
    bundle = re.search(r'<script type="application/octet-stream" id="plotly-js">([A-Za-z0-9+/=]+)</script>', page)
    assert b"plotly" in gzip.decompress(base64.b64decode(bundle.group(1)))[:2000].lower()
    assert not re.search(r"<(script|img|link|iframe)\b[^>]*\b(src|href)=", page)
    assert "http://" not in page and "https://" not in page
    assert json.loads((out / "summary.json").read_text())["rows"]["accounted"] is True


def test_bad_input_is_a_one_line_error(spark, tmp_path, run):
    _, _, input_path = run
    cases = [
        (options(input_path, tmp_path, key_column="nope"), "--key-column 'nope' is not a column"),
        (options(input_path, tmp_path, size_column="weight"), "--size-column 'weight' is not a column"),
        # an integer column is a key since issue #11 (LongSerializer), unless the key type says text
        (options(input_path, tmp_path, key_column="size", key_type="string"),
         "has type bigint; --key-type string needs string or binary"),
        (options(tmp_path / "missing.parquet", tmp_path), "cannot read input .*: no such file or directory"),
        (options(f"file://{tmp_path}/missing.parquet", tmp_path), "cannot read parquet input .*PATH_NOT_FOUND"),
        (options(input_path, tmp_path, null_key_model="random"), "--null-keys must be one of"),
        (options(input_path, tmp_path, replication_factor=9), "--replication-factor must be between"),
    ]
    for opts, message in cases:
        with pytest.raises(KassignError, match=message) as err:
            run_pipeline(spark, opts)
        assert "\n" not in str(err.value)
