"""The pipeline's option checks that read the input before Spark starts (kassign.spark.options)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kassign.core.errors import KassignError
from kassign.spark.options import PipelineOptions, _local_columns, check_options


def test_the_columns_of_a_partitioned_parquet_directory_are_the_ones_spark_reads(spark, tmp_path):
    """Spark writes part files beside _SUCCESS and checksum files, and a partitionBy column as name=value
    directories: the pre-flight reading finds what Spark's own reader finds."""
    frame = spark.createDataFrame([("a", "t1", 3, 1), ("b", "t2", 4, 2)], "key string, topic string, size int, day int")
    path = tmp_path / "data"
    frame.write.partitionBy("topic", "day").parquet(str(path))
    assert (path / "_SUCCESS").exists() and any(p.name.startswith(".") for p in path.rglob("*"))
    assert _local_columns(str(path), "parquet") == spark.read.parquet(str(path)).columns


def test_a_partition_column_passes_the_check_and_a_missing_one_is_refused(tmp_path):
    (tmp_path / "topic=orders").mkdir()
    pq.write_table(pa.table({"key": ["a"], "size": [3]}), tmp_path / "topic=orders" / "part-0.parquet")
    check_options(PipelineOptions(out=str(tmp_path / "out"), input=str(tmp_path), size_column="size",
                                  topic_column="topic"))
    with pytest.raises(KassignError, match=r"--topic-column 'tenant' is not a column of the input; "
                                           r"columns are: key, size, topic$"):
        check_options(PipelineOptions(out=str(tmp_path / "out"), input=str(tmp_path), size_column="size",
                                      topic_column="tenant"))


def test_hidden_files_are_skipped_and_a_directory_without_data_has_no_columns(tmp_path):
    (tmp_path / "_temporary").mkdir()
    (tmp_path / "_temporary" / "part-9.parquet").write_text("half written")
    (tmp_path / ".part-0.parquet.crc").write_text("checksum")
    assert _local_columns(str(tmp_path), "parquet") == []
    pq.write_table(pa.table({"user": ["a"]}), tmp_path / "part-0.parquet")
    assert _local_columns(str(tmp_path), "parquet") == ["user"]


def test_a_file_that_is_not_parquet_is_named(tmp_path):
    fake = tmp_path / "fake.parquet"
    fake.write_text("this is not parquet\n")
    with pytest.raises(KassignError, match=r"^input '.*fake.parquet' is not a Parquet file or directory \("):
        _local_columns(str(fake), "parquet")
