"""`kassign pipeline` refuses bad options, paths and --out with one line (exit 2) before Spark starts;
report.html of a real run renders in a headless browser."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

KASSIGN = Path(sys.executable).with_name("kassign")


def run(*args: str, timeout: int = 60, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(KASSIGN), "pipeline", *args], capture_output=True, text=True, timeout=timeout,
                          input=stdin)


def one_line_error(done: subprocess.CompletedProcess, message: str) -> None:
    assert done.returncode == 2 and done.stdout == "", done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kassign: error: ") and message in lines[0], done.stderr


@pytest.mark.parametrize("args, message", [
    (["--rows", "0"], "--rows must be >= 1"),
    (["--keys", "0"], "--keys must be between 1"),
    (["--skew", "nan"], "--skew must be a finite number"),
    (["--skew", "-1"], "--skew must be >= 0"),
    (["--null-share", "1.5"], "--null-share must be between 0 and 1"),
    (["--null-share", "inf"], "--null-share must be a finite number"),
    (["--members", "0"], "--members must be between 1"),
    (["--partitions", "2147483648"], "--partitions must be >= 1 and at most 100,000"),
    (["--batch-size", "2147483648"], "--batch-size must be between 1 and 2147483647"),
    (["--seed", "-1"], "--seed must be between 0"),
    (["--target-share", "nan"], "--target-share must be a finite number"),
    (["--null-value", "NULL"], "need an INPUT path"),
])
def test_sample_options_are_checked_before_spark(args, message, tmp_path):
    one_line_error(run("--out", str(tmp_path / "out"), *args), message)


def _csv(tmp_path: Path) -> Path:
    data = tmp_path / "in.csv"
    data.write_text("id,size,payload\na,1,x\n")
    return data


def test_input_and_out_problems_are_one_line_errors(tmp_path):
    data = _csv(tmp_path)
    out = str(tmp_path / "out")
    one_line_error(run(str(data), "--out", out, "--key-column", "id", "--size-column", "size",
                       "--value-column", "payload"), "give --value-column or --size-column, not both")
    one_line_error(run(str(data), "--out", out, "--key-column", "id", "--size-column", "weight"),
                   "--size-column 'weight' is not a column of the input; columns are: id, size, payload")
    fake = tmp_path / "fake.parquet"
    fake.write_text("this is not parquet\n")
    one_line_error(run(str(fake), "--out", out), "input '" + str(fake) + "' is not a Parquet file")
    one_line_error(run(str(tmp_path / "nope.csv"), "--out", out), "no such file or directory")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    one_line_error(run(str(data), "--out", str(a_file), "--key-column", "id"), "is a file, not a directory")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    one_line_error(run(str(data), "--out", str(busy), "--key-column", "id"), "is a directory with other files")
    one_line_error(run(str(fake), "--out", out, "--null-value", "NULL"), "--null-value applies to CSV input only")
    one_line_error(run("-", "--out", out, stdin="id\n"), "INPUT '-' (standard input) needs --format")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes everything")
def test_unreadable_input_and_unwritable_out(tmp_path):
    data = _csv(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        one_line_error(run(str(data), "--out", str(locked / "out"), "--key-column", "id"), "is not writable")
    finally:
        locked.chmod(0o700)
    data.chmod(0o000)
    try:
        one_line_error(run(str(data), "--out", str(tmp_path / "out"), "--key-column", "id"), "permission denied")
    finally:
        data.chmod(0o600)


@pytest.mark.slow  # a whole Spark run (30-60 s); the default suite keeps the pipeline's other runs
def test_stdin_csv_run_and_report_renders_in_a_browser(tmp_path):
    """A real (small) run fed on standard input; its report.html opened in headless Chromium."""
    from tests.browser import check_page, chromium

    chromium()  # skips where no browser is installed
    lines = ["user,size"] + [f"user-{i % 40 if i % 7 else 1},{100 + (i * 37) % 900}" for i in range(2000)]
    lines += ["bad,-5", "worse,1.5", "x,1,2"]
    out = tmp_path / "out"
    done = run("-", "--format", "csv", "--out", str(out), "--key-column", "user", "--size-column", "size",
               "--partitions", "6", "--members", "3", "--max-partitions", "12", stdin="\n".join(lines) + "\n",
               timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "kassign: warning: 3 of 2,003 input rows set aside" in done.stderr
    assert "rows set aside" in done.stdout and "verdict:" in done.stdout
    assert "KiB" in done.stdout or "MiB" in done.stdout
    page = (out / "report.html").read_text()
    for part in ("Verdict", "hot keys per partition", "bytes per rack", "rows set aside", "<figcaption>"):
        assert part in page, part
    verdict = check_page(out / "report.html", tmp_path / "report.png")
    assert verdict == "KASSIGN-OK 4"
    # a table of one row per record is written only when asked
    assert not (out / "partitioned").exists() and (out / "partition_load").is_dir()


@pytest.mark.slow  # a whole Spark run (30-60 s); the default suite keeps the pipeline's other runs
def test_write_partitioned_and_sample_when_asked(tmp_path):
    out = tmp_path / "out"
    done = run("--rows", "3000", "--keys", "50", "--out", str(out), "--write-partitioned", "--write-sample",
               timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    import pyarrow.parquet as pq

    assert pq.read_table(str(out / "partitioned")).num_rows == 3000
    assert pq.read_table(str(out / "sample_input")).num_rows == 3000


@pytest.mark.slow  # a whole Spark run (30-60 s); the default suite keeps the pipeline's other runs
def test_a_failure_after_spark_started_is_one_line_even_beside_another_spark(tmp_path):
    """JSON lines are checked by Spark, so a missing key column fails after the JVM started. Another Spark on
    this machine (its UI port 4040 taken, as a running Spark shell would) must not add lines either: the JVM's
    output goes to a log file, and the UI stays off."""
    import socket

    data = tmp_path / "in.jsonl"
    data.write_text('{"user": "a", "bytes": 3}\n')
    with socket.socket() as busy:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            busy.bind(("127.0.0.1", 4040))
            busy.listen(1)
        except OSError:
            pass  # already taken, by another Spark perhaps: the same situation
        done = run(str(data), "--out", str(tmp_path / "out"), "--key-column", "nokey", timeout=120)
    one_line_error(done, "--key-column 'nokey' is not a column of the input; columns are: bytes, user")
    assert not (tmp_path / "out").exists()
