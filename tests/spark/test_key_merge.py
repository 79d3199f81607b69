"""The splits' key figures merged by the driver equal Spark's merge, row for row, on a real local Spark;
past ``spark.driver.maxResultSize`` or the driver's bound the pipeline falls back to Spark's merge with the
same answers."""

from __future__ import annotations

import contextlib
import json

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.spark import key_merge


def _jvm_or_skip(spark):
    from kassign.spark.partition import register_jvm_udf

    if not register_jvm_udf(spark):
        pytest.skip("no JVM UDF in this session (javac missing)")


def _rows(table: pa.Table) -> list[tuple]:
    return sorted((tuple(r.values()) for r in table.select(key_merge.FIGURE_COLUMNS).to_pylist()), key=repr)


def _both_merges(spark, df, opts, counts):
    """(Spark's merge with its key columns, the driver's) as sorted row lists."""
    from kassign.spark.counting import with_key_columns
    from kassign.spark.stages.key_figures import driver_key_figures, key_figures, rows_to_count
    from kassign.spark.stages.read_input import key_serialiser, normalise

    tagged = normalise(df, opts, "parquet")
    key_type = key_serialiser(df, opts)
    in_spark = with_key_columns(key_figures(tagged, counts, opts, key_type), opts, key_type)
    spark_rows = sorted((tuple(r[c] for c in key_merge.FIGURE_COLUMNS) for r in in_spark.collect()), key=repr)
    placed, group = rows_to_count(tagged, counts, opts)
    on_driver = driver_key_figures(placed, group, counts, opts, key_type)
    return spark_rows, _rows(on_driver), on_driver


def _text_input(spark, rows: int = 6000, keys: int = 97):
    from pyspark.sql import functions as F

    # two topics, keys with multi-byte text and the empty key, keyless rows, a negative size (set aside)
    key = (F.when(F.col("id") % 5 == 0, F.lit(None))
           .when(F.col("id") % 7 == 0, F.lit(""))
           .otherwise(F.concat(F.lit("ключ-"), (F.col("id") % keys).cast("string"))))
    return spark.range(0, rows, 1, 4).select(
        F.when(F.col("id") % 2 == 0, "a").otherwise("b").alias("topic"), key.alias("key"),
        F.when(F.col("id") == 17, -1).otherwise(100 + F.col("id") % 300).alias("size"))


def test_driver_merge_equals_sparks_merge_with_topics_and_reasons(spark, tmp_path):
    from kassign.spark.pipeline import PipelineOptions

    _jvm_or_skip(spark)
    opts = PipelineOptions(out=str(tmp_path), input="x", key_column="key", size_column="size", topic_column="topic",
                           partitions=6, batch_size=700)
    in_spark, on_driver, table = _both_merges(spark, _text_input(spark), opts, {"b": 9})
    assert on_driver == in_spark
    keyed = [r for r in on_driver if r[1] is not None]
    assert {r[0] for r in keyed} == {"a", "b"} and any(r[1] == "" for r in keyed)
    assert all(r[2] == r[7] % (9 if r[0] == "b" else 6) for r in keyed)  # Java's rule, the topic's own count
    assert [r for r in on_driver if r[3] is not None] == [(None, None, None, "size column 'size' is negative", 1,
                                                           None, None, None)]
    assert not table.schema.field("records").nullable  # as Spark's count() declares it (key_stats' schema)


@pytest.mark.parametrize("kind", ["binary", "int", "long", "long-from-text"])
def test_driver_merge_equals_sparks_merge_for_every_key_type_with_one_topic(spark, tmp_path, kind):
    from pyspark.sql import functions as F

    from kassign.spark.pipeline import PipelineOptions

    _jvm_or_skip(spark)
    number = (F.col("id") * 7919 % 211 - 105)
    key = {"binary": F.when(F.col("id") % 9 == 0, F.lit(b"")).otherwise(F.unhex(F.lpad(F.hex(number * 977), 6, "0"))),
           "int": number.cast("int"), "long": (number * 10_000_000_000).cast("long"),
           "long-from-text": F.when(F.col("id") % 13 == 0, F.lit("not a number")).otherwise(number.cast("string"))}[kind]
    df = spark.range(0, 3000, 1, 3).select(F.when(F.col("id") % 11 == 0, F.lit(None)).otherwise(key).alias("key"),
                                           (10 + F.col("id") % 50).alias("size"))
    opts = PipelineOptions(out=str(tmp_path), input="x", key_column="key", size_column="size", partitions=5,
                           key_type="long" if kind == "long-from-text" else None)
    in_spark, on_driver, _ = _both_merges(spark, df, opts, {})
    assert on_driver == in_spark
    keyed = [r for r in on_driver if r[1] is not None]
    assert keyed and all(r[0] == "topic" for r in keyed)
    if kind == "binary":
        assert all(r[6] == "0x" + bytes(r[1]).hex() for r in keyed)
    if kind == "long-from-text":
        assert any(r[3] == "key column 'key' is not a valid long" for r in on_driver)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=12), min_size=1, max_size=40), st.integers(0, 3), st.integers(0, 3))
def test_bytes_are_shown_as_0x_and_lower_case_hex(keys, before, after):
    """Also for a slice of a longer array (Arrow's offsets then start past its data's start)."""
    whole = pa.array([b"x" * 5] * before + keys + [b"y"] * after, pa.binary())
    for array in (pa.array(keys, pa.binary()), whole.slice(before, len(keys))):
        assert key_merge._display(array).to_pylist() == ["0x" + k.hex() for k in keys]
        assert key_merge._readable(array).to_pylist() == [_as_text(k) for k in keys]


def _as_text(key: bytes) -> str:
    try:
        return key.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + key.hex()


@contextlib.contextmanager
def _result_limit(spark, size: str):
    """Spark's limit on what tasks send the driver, changed on the running context (each task set reads it)."""
    conf = spark.sparkContext._jsc.sc().conf()
    before = conf.get(key_merge.RESULT_LIMIT, "1g")
    conf.set(key_merge.RESULT_LIMIT, size)
    try:
        yield
    finally:
        conf.set(key_merge.RESULT_LIMIT, before)


def _placed(spark, tmp_path, rows: int, keys: int):
    """(options, the rows to count, their grouping columns) of a Parquet input with two topics."""
    from kassign.spark.pipeline import PipelineOptions
    from kassign.spark.stages.key_figures import _placed_for_counting
    from kassign.spark.stages.read_input import normalise

    data = tmp_path / "input.parquet"
    _text_input(spark, rows, keys).write.parquet(data.as_uri())
    opts = dict(input=str(data), key_column="key", size_column="size", topic_column="topic", partitions=6,
                write_partitioned=False, write_sample=False)
    tagged = normalise(spark.read.parquet(data.as_uri()), PipelineOptions(out=str(tmp_path / "x"), **opts), "parquet")
    return (opts, *_placed_for_counting(tagged, {}, PipelineOptions(out=str(tmp_path / "x"), **opts)))


def _sorted(table: pa.Table, group: list[str]) -> pa.Table:
    return table.sort_by([(c, "ascending") for c in group])


def _same_pipeline_answers(spark, tmp_path, opts, fallback: contextlib.AbstractContextManager) -> None:
    """The pipeline's summary and key_stats with the driver's merge equal those of Spark's merge (``fallback``)."""
    import pyarrow.parquet as pq

    from kassign.spark.pipeline import PipelineOptions, run_pipeline

    driver = run_pipeline(spark, PipelineOptions(out=str(tmp_path / "driver"), **opts))
    with fallback:
        in_spark = run_pipeline(spark, PipelineOptions(out=str(tmp_path / "spark"), **opts))
    assert json.dumps(driver, sort_keys=True) == json.dumps(in_spark, sort_keys=True).replace(
        str(tmp_path / "spark"), str(tmp_path / "driver"))
    stats = [pq.read_table(tmp_path / name / "key_stats").sort_by([("topic", "ascending"), ("key", "ascending")])
             for name in ("driver", "spark")]
    assert stats[0].num_rows > 0 and stats[0].equals(stats[1])


def test_split_counts_beyond_the_result_limit_are_merged_in_spark_with_the_same_answers(spark, tmp_path):
    _jvm_or_skip(spark)
    opts, placed, group = _placed(spark, tmp_path, 40_000, 20_000)  # a split's tables: over 100 KiB
    with _result_limit(spark, "64k"):
        assert key_merge.merge_on_driver(placed, group) is None
    assert key_merge.merge_on_driver(placed, group).num_rows > 0
    _same_pipeline_answers(spark, tmp_path, opts, _result_limit(spark, "64k"))


@contextlib.contextmanager
def _driver_bound(monkeypatch, max_driver_bytes: int):
    """``merge_on_driver`` with the merged tables bounded by ``max_driver_bytes``, wherever it is called from."""
    merge = key_merge.merge_on_driver
    with monkeypatch.context() as patch:
        patch.setattr(key_merge, "merge_on_driver",
                      lambda placed, group: merge(placed, group, max_driver_bytes=max_driver_bytes))
        yield


def test_merged_tables_beyond_the_drivers_bound_are_merged_in_spark_with_the_same_answers(spark, tmp_path,
                                                                                          monkeypatch):
    _jvm_or_skip(spark)
    opts, placed, group = _placed(spark, tmp_path, 40_000, 20_000)
    assert key_merge.merge_on_driver(placed, group, max_driver_bytes=64 << 10) is None
    whole = key_merge.merge_on_driver(placed, group, max_driver_bytes=64 << 20)
    assert whole.column("records").to_numpy().sum() == 40_000  # every row counted once
    _same_pipeline_answers(spark, tmp_path, opts, _driver_bound(monkeypatch, 64 << 10))


def test_tables_flushed_many_times_per_split_merge_to_the_same_figures(spark, tmp_path):
    _jvm_or_skip(spark)
    _, placed, group = _placed(spark, tmp_path, 20_000, 3_000)
    once = key_merge.merge_on_driver(placed, group)
    flushed = key_merge.merge_on_driver(placed, group, max_groups=200, max_bytes=1 << 14)
    assert once.num_rows > 2_000 and _sorted(flushed, group).equals(_sorted(once, group))
    assert once.column("records").to_numpy().sum() == 20_000  # every row counted once


def test_the_merge_leaves_no_file_behind(spark, tmp_path, monkeypatch):
    import tempfile

    _jvm_or_skip(spark)
    _, placed, group = _placed(spark, tmp_path, 2_000, 100)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    assert key_merge.merge_on_driver(placed, group).num_rows > 0
    assert key_merge.merge_on_driver(placed, group, max_driver_bytes=1) is None
    assert list((tmp_path / "tmp").iterdir()) == []


def test_other_failures_are_not_taken_for_the_limit(spark):
    _jvm_or_skip(spark)
    failing = spark.range(3).selectExpr("CAST(id AS STRING) AS key",
                                        "CAST(raise_error('kassign test: not the result limit') AS BIGINT) AS bytes")
    with pytest.raises(Exception, match="not the result limit"):
        key_merge.merge_on_driver(failing, ["key"])


def test_a_file_that_is_not_a_column_file_is_refused(tmp_path):
    from kassign.core.errors import KassignError

    path = tmp_path / "figures.columns"
    path.write_bytes(b"PAR1" + bytes(20))
    with pytest.raises(KassignError, match="not a column file"):
        key_merge.read_column_file(path, pa.schema([("key", pa.string())]))


_AWKWARD = [b"", b"plain", "ключ".encode(), b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"ok\x00nul",
            b"\xe2\x82", "🙂".encode()]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_AWKWARD), st.binary(max_size=8)), min_size=1, max_size=30))
def test_live_keys_are_shown_as_text_only_where_valid_utf8(keys):
    shown = key_merge._readable(pa.array(keys, pa.binary())).to_pylist()
    expected = []
    for key in keys:
        try:
            expected.append(key.decode("utf-8"))
        except UnicodeDecodeError:
            expected.append("0x" + key.hex())
    assert shown == expected


def test_live_keys_are_shown_as_sparks_readable_key_shows_them(spark):
    """The driver's rule for a live key's text equals the Spark expression the Spark merge uses (overlong
    forms, surrogates, code points past U+10FFFF and cut sequences are not text)."""
    from pyspark.sql import types as T

    from kassign.spark.counting import readable_key

    df = spark.createDataFrame([(k,) for k in _AWKWARD], T.StructType([T.StructField("key", T.BinaryType())]))
    in_spark = [r[0] for r in df.select(readable_key()).collect()]
    assert key_merge._readable(pa.array(_AWKWARD, pa.binary())).to_pylist() == in_spark
