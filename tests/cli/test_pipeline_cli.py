"""`kassign pipeline` as a user runs it: a real subprocess; bad input exits 2 with one line on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

KASSIGN = Path(sys.executable).with_name("kassign")


def run(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(KASSIGN), "pipeline", *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, message", [
    (["--partitions", "0"], "--partitions must be >= 1"),
    (["--conf", "spark.executor.memory"], "--conf expects KEY=VALUE"),
    (["--target-share", "1.5"], "--target-share must be in (0, 1]"),
    (["--replication-factor", "7"], "--replication-factor must be between 1 and the number of brokers (6)"),
    (["--null-keys", "sometimes"], "Invalid value for '--null-keys'"),
    (["--size-column", "bytes"], "need an INPUT path"),
    (["--scenario", "/nonexistent/group.json"], "cannot read scenario file"),
])
def test_bad_options_exit_2_with_one_line_before_spark_starts(args, message, tmp_path):
    done = run("--out", str(tmp_path), *args, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_missing_column_exits_2_with_one_line_before_spark_starts(tmp_path, fmt):
    """Local CSV/Parquet schemas are read by pyarrow up front; JSON lines are checked by Spark
    (tests/spark/test_pipeline.py), since their schema is the union over all lines."""
    data = tmp_path / f"records.{fmt}"
    if fmt == "csv":
        data.write_text("user,amount\nalice,3\nbob,4\n")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"user": ["alice", "bob"], "amount": [3, 4]}), data)
    done = run(str(data), "--out", str(tmp_path / "out"), "--key-column", "customer", timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "kassign: error: --key-column 'customer' is not a column of the input; columns are: user, amount"
    ]
