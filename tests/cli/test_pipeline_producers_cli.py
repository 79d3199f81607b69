"""`kassign pipeline --producers ... --key-type ...` as a user runs it (subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kassign import partition_for_key

KASSIGN = Path(sys.executable).with_name("kassign")


def run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(KASSIGN), "pipeline", *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, message", [
    (["--producers", "java,rdkafka"], "unknown partitioner 'rdkafka': use one of java, librdkafka:consistent"),
    (["--producers", "java,java"], "named twice"),
    (["--key-type", "long"], "need an INPUT path"),
])
def test_bad_producer_options_exit_2_before_spark_starts(args, message, tmp_path):
    done = run("--out", str(tmp_path), *args, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr


@pytest.mark.slow  # a whole Spark run (30-60 s); the default suite keeps the pipeline's other runs
def test_csv_with_numeric_text_keys_as_longs_and_two_producers(tmp_path):
    ids = [str(i * 37 - 400) for i in range(150)] + ["", "not-a-number"]
    (tmp_path / "events.csv").write_text("id,size\n" + "".join(f"{i},{20}\n" for i in ids))
    out = tmp_path / "out"
    done = run(str(tmp_path / "events.csv"), "--out", str(out), "--key-column", "id", "--key-type", "long",
               "--size-column", "size", "--partitions", "6", "--members", "2", "--brokers", "0,1",
               "--replication-factor", "1", "--producers", "java,sarama:hash")
    assert done.returncode == 0, done.stderr
    assert "producer agreement" in done.stdout and "sarama:hash" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    # An empty CSV field is an empty key (not null: no --null-value), which is no long: set aside with the
    # unparseable one, each with its reason.
    assert summary["rows"]["set_aside"] == {"key column 'id' is not a valid long": 2}
    agreement = {r["producer"]: r for r in summary["producers"]["agreement"]}
    numbers = [int(i) for i in ids[:150]]
    moved = sum(partition_for_key(v, 6, key_type="long") != partition_for_key(v, 6, partitioner="sarama:hash",
                                                                              key_type="long") for v in numbers)
    assert agreement["sarama:hash"]["keys_moved"] == moved
    assert agreement["sarama:hash"]["keys"] == 150 and summary["rows"]["accounted"]
