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


def test_missing_column_exits_2_naming_the_columns(tmp_path):
    data = tmp_path / "records.csv"
    data.write_text("user,amount\nalice,3\nbob,4\n")
    done = run(str(data), "--out", str(tmp_path / "out"), "--key-column", "customer",
               "--conf", "spark.ui.showConsoleProgress=false")
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last == "kassign: error: --key-column 'customer' is not a column of the input; columns are: user, amount"
    assert "Traceback" not in done.stderr
