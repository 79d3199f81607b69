"""Messy input through the real pipeline: every bad row set aside with its reason, raw text and line
number, counted; nothing crashes, nothing is reinterpreted; a failed run leaves no --out behind."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kassign import partition_for_key
from kassign.core.errors import KassignError
from kassign.spark.pipeline import PipelineOptions, run_pipeline

# line 1 is the header; a blank line (6) is skipped, not counted
CSV_LINES = [
    "id,size",             # 1 header
    "a,5",                 # 2 good
    ",7",                  # 3 empty key: hashed as the empty string
    '"",8',                # 4 quoted empty key: the same
    "b,-5",                # 5 negative
    "",                    # 6 blank
    "c,1.7",               # 7 not whole
    "d,",                  # 8 empty size
    "e,NaN",               # 9
    "f,inf",               # 10
    "g,abc",               # 11
    "h,1,2",               # 12 too many columns
    "i",                   # 13 too few
    '"unterminated,3',     # 14
    "j\x00k,4",            # 15 NUL byte
    "l,99999999999999999999",  # 16 too large for a long
    "m,1e3",               # 17 a whole number written with an exponent: 1000
    "NULL,9",              # 18 the text NULL: a key, unless --null-value NULL
]
CSV_REASONS = {
    5: "size column 'size' is negative", 7: "size column 'size' is not a whole number",
    8: "size column 'size' is empty", 9: "size column 'size' is NaN", 10: "size column 'size' is infinite",
    11: "size column 'size' is not a number", 12: "CSV line without exactly 2 columns",
    13: "CSV line without exactly 2 columns", 14: "CSV line with an unterminated quote",
    15: "line contains a NUL byte", 16: "size column 'size' is too large",
}


def _options(path, out, **extra) -> PipelineOptions:
    base = dict(out=str(out), input=str(path), key_column="id", size_column="size", partitions=3, members=2,
                max_partitions=4, brokers=[(0, None), (1, None)], replication_factor=1, strategies=("range",))
    base.update(extra)
    return PipelineOptions(**base)


def _aside(out) -> dict[int, dict]:
    return {r["line"]: r for r in pq.read_table(str(out / "set_aside")).to_pylist()}


def test_messy_csv_rows_are_set_aside_with_reason_raw_line_and_number(spark, tmp_path):
    path = tmp_path / "events.csv"
    path.write_text("\n".join(CSV_LINES) + "\n")
    summary = run_pipeline(spark, _options(path, tmp_path / "out"))
    aside = _aside(tmp_path / "out")
    assert {line: r["reason"] for line, r in aside.items()} == CSV_REASONS
    assert all(r["raw"] == CSV_LINES[line - 1] and r["file"].endswith("events.csv") for line, r in aside.items())
    rows = summary["rows"]
    assert rows["input"] == len(CSV_LINES) - 2  # header and blank line are not records
    assert sum(rows["set_aside"].values()) == len(CSV_REASONS) and rows["accounted"]
    placed = pq.read_table(str(tmp_path / "out" / "partitioned")).to_pylist()
    assert sorted((r["key"], r["bytes"]) for r in placed) == [("", 7), ("", 8), ("NULL", 9), ("a", 5), ("m", 1000)]
    assert all(r["partition"] == partition_for_key(r["key"].encode(), 3) for r in placed)  # "" is hashed too
    assert summary["set_aside"][0]["rows"] == 2 and summary["warnings"][0].startswith("11 of 16 input rows set aside")
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["rows"]["set_aside"] == rows["set_aside"]

    # --null-value says which text means null: "" makes empty fields null keys, and an empty size "missing"
    summary = run_pipeline(spark, _options(path, tmp_path / "out2", null_value=""))
    placed = pq.read_table(str(tmp_path / "out2" / "partitioned")).to_pylist()
    assert sorted((r["key"] is None, r["bytes"]) for r in placed if not r["key"]) == [(True, 7), (True, 8)]
    assert _aside(tmp_path / "out2")[8]["reason"] == "size column 'size' is missing (null)"


def test_bad_sizes_in_json_lines_and_parquet(spark, tmp_path):
    lines = ['{"id": "a", "size": 5}', '{"id": "b", "size": -5}', '{"id": "c", "size": 1.7}',
             '{"id": "d", "size": NaN}', '{"id": "e", "size": Infinity}', '{"id": "f"}', "{broken",
             '{"id": "g", "size": "12"}', '{"id": "h", "size": "x"}', "[1, 2]"]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    summary = run_pipeline(spark, _options(tmp_path / "in.jsonl", tmp_path / "json"))
    assert {n: r["reason"] for n, r in _aside(tmp_path / "json").items()} == {
        2: "size column 'size' is negative", 3: "size column 'size' is not a whole number",
        4: "size column 'size' is NaN", 5: "size column 'size' is infinite",
        6: "size column 'size' is missing (null)", 7: "line is not a JSON object",
        9: "size column 'size' is not a number", 10: "line is not a JSON object"}
    assert summary["rows"]["per_stage"]["partitioned"] == 2 and summary["rows"]["accounted"]

    sizes = [5.0, -5.0, 1.7, math.nan, math.inf, None, 3.0]
    pq.write_table(pa.table({"id": [f"k{i}" for i in range(len(sizes))], "size": sizes}), tmp_path / "in.parquet")
    summary = run_pipeline(spark, _options(tmp_path / "in.parquet", tmp_path / "pq"))
    aside = _aside(tmp_path / "pq")  # Parquet: "line" is the row number in its file
    assert {n: r["reason"].split("' ")[1] for n, r in aside.items()} == {
        2: "is negative", 3: "is not a whole number", 4: "is NaN", 5: "is infinite", 6: "is missing (null)"}
    assert json.loads(aside[3]["raw"]) == {"id": "k2", "size": 1.7}
    assert summary["partition_load"] and sum(r["bytes"] for r in summary["partition_load"]) == 8


def test_a_scenario_nobody_subscribes_to_warns(spark, tmp_path):
    (tmp_path / "in.csv").write_text("id,size\na,1\nb,2\n")
    scenario = {"topics": {"other": 2}, "members": {"m1": {"topics": ["other"]}}}
    summary = run_pipeline(spark, _options(tmp_path / "in.csv", tmp_path / "out", scenario=scenario))
    assert summary["warnings"] == [
        "no member of the scenario subscribes to a topic in the data (topics in the data: topic; subscribed: "
        "other): consumer load and rebalance cost are empty"]
    assert summary["rows"]["unconsumed_records"] == {"consumer_load:range": 2}
    assert "no member of the scenario subscribes" in (tmp_path / "out" / "report.html").read_text()


def test_a_failed_run_leaves_no_out_and_keeps_the_previous_one(spark, tmp_path):
    (tmp_path / "in.jsonl").write_text('{"id": "a", "size": 1}\n')
    out = tmp_path / "out"
    with pytest.raises(KassignError, match="--size-column 'weight' is not a column"):  # found by Spark, mid-run
        run_pipeline(spark, _options(tmp_path / "in.jsonl", out, size_column="weight"))
    assert list(tmp_path.iterdir()) == [tmp_path / "in.jsonl"]  # neither out nor a partial directory
    run_pipeline(spark, _options(tmp_path / "in.jsonl", out))
    before = (out / "summary.json").read_text()
    with pytest.raises(KassignError):
        run_pipeline(spark, _options(tmp_path / "in.jsonl", out, size_column="weight"))
    assert (out / "summary.json").read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "in.jsonl", "out"]
