"""What each entry point loads: the `kassign` command only the subcommand it runs, and `kassign pipeline`
judges its options before PySpark, Arrow or the assignors are loaded (so before any JVM), in a fresh process."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("pyspark", "pyarrow", "numba", "pandas", "scipy", "matplotlib")


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(done.stdout.split())


@pytest.mark.parametrize("code", [
    "import kassign.cli.main",
    "import kassign",
    "import kassign.spark",
    "from kassign.spark.options import PipelineOptions, check_options",
    "import kassign.cli.main as m; m.cli.get_command(None, 'pipeline')",
    # describe-group: a classic group's Subscription bytes are read without the assignors (numba: 1-1.5 s)
    "import kassign.cli.main as m; m.cli.get_command(None, 'describe-group')",
    "from kassign.kafka.live_group import read_group",
    "from kassign.groups.classic.protocol.wire import decode_subscription, decode_assignment",
])
def test_entry_points_load_nothing_heavy(code):
    assert _loaded_after(code) == set()


def test_public_names_load_on_first_use():
    assert "pyspark" not in _loaded_after("import kassign; kassign.partition_for_key(b'user-1', 12)")
    assert "pyspark" in _loaded_after("import kassign.spark; kassign.spark.kafka_partition")
    out = subprocess.run([sys.executable, "-c", "import kassign; print(kassign.partition_for_key(b'user-1', 12), "
                          "sorted(set(kassign.__all__) - set(dir(kassign))))"], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split(None, 1) == ["8", "[]\n"], out.stderr[-2000:]


def test_a_parquet_input_and_a_broker_list_are_judged_without_numba_or_arrow_datasets(tmp_path):
    """The pipeline command reads the input's columns and ``--brokers`` before Spark's JVM starts: neither may
    load numba (the placers' kernels) or pyarrow.dataset (a quarter second each on this machine)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"key": ["a"], "size": [3]}), tmp_path / "in.parquet")
    code = ("from kassign.spark.options import PipelineOptions, check_options\n"
            "from kassign.replicas.brokers import parse_broker_list\n"
            f"check_options(PipelineOptions(out={str(tmp_path / 'out')!r}, input={str(tmp_path / 'in.parquet')!r}, "
            "size_column='size', brokers=parse_broker_list('0:a,1:b,2')))\n"
            "import sys\nprint(' '.join(m for m in ('numba', 'pyarrow.dataset') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == []


def test_the_summary_tables_load_no_live_client():
    """The pipeline's terminal summary and report (``spark.tables``) word a live group's check; a file run
    must not pay for the live client's imports (a quarter second) to print them."""
    code = "import kassign.spark.tables\nimport sys\nprint('kassign.kafka.connection' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False"]
