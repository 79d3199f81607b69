"""``./run demo``: the tour runs end to end and shows each step's real output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO

DEMO = REPO / "examples" / "demo.py"


# slow: about 35 s, and each step's command also runs in the CLI tests and the manual's examples
@pytest.mark.slow
def test_the_demo_runs_every_step() -> None:
    done = subprocess.run([sys.executable, str(DEMO)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    steps = done.stdout.count("\n== ")
    assert steps == done.stdout.count("$ kassign ") and steps >= 7
    assert "replicas moved" in done.stdout and "Kafka --generate" in done.stdout
    assert "most even assignment possible has spread 0" in done.stdout
    # the live step: a local broker, two producer clients, the pipeline on the live topic
    assert "== live topic: a local broker on 127.0.0.1:" in done.stdout
    assert "of keyed records are where Kafka's Java producer puts them and" in done.stdout
    assert "where librdkafka's default (CRC32) does" in done.stdout and "keys sit on two partitions" in done.stdout
