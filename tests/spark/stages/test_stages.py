"""The pipeline as a list of stages: the driver's lists are the ones docs/pipeline.md gives, every stage module
has the same shape (its docstring says what it reads, writes and decides; ``STAGE`` declares the same), every
field a stage reads is made by an earlier stage, and a real run writes exactly the tables the stages declare."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

from kassign.spark import pipeline, stages
from kassign.spark.stages.base import PipelineContext, Stage

DOCS = Path(__file__).resolve().parents[3] / "docs" / "pipeline.md"
GIVEN = {"spark", "opts", "out"}
MODULES = sorted(m.name for m in pkgutil.iter_modules(stages.__path__) if m.name != "base")


def _stage_modules():
    return [importlib.import_module(f"kassign.spark.stages.{name}") for name in MODULES]


def _names(line: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", line)


def _docs_lists() -> dict[str, list[str]]:
    text = DOCS.read_text()
    found = {}
    for label in ("a file or the sample", "live topics", "then, for both"):
        line = next(line for line in text.splitlines() if line.startswith(f"- {label}:"))
        found[label] = _names(line.split(":", 1)[1])
    return found


def _docs_table() -> list[list[str]]:
    """The rows of the docs' stage table (stage, reads, writes, decides)."""
    text = DOCS.read_text().split("## Stages", 1)[1]
    rows = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in row] for row in rows]


def test_the_drivers_stage_lists_are_the_ones_the_docs_give():
    lists = _docs_lists()
    assert [s.name for s in pipeline.FILE_STAGES] == lists["a file or the sample"]
    assert [s.name for s in pipeline.LIVE_STAGES] == lists["live topics"]
    assert [s.name for s in pipeline.LOAD_STAGES] == lists["then, for both"]


def test_the_docs_table_has_every_stage_once_with_the_tables_it_writes():
    table = _docs_table()
    names = [_names(row[0])[0] for row in table]
    assert len(names) == len(set(names))
    assert set(names) == {s.name for s in pipeline.FILE_STAGES + pipeline.LIVE_STAGES + pipeline.LOAD_STAGES}
    assert names[-len(pipeline.LOAD_STAGES):] == [s.name for s in pipeline.LOAD_STAGES]
    declared = {s.name: s for s in pipeline.FILE_STAGES + pipeline.LIVE_STAGES + pipeline.LOAD_STAGES}
    for row in table:
        stage = declared[_names(row[0])[0]]
        written = set(_names(row[2]))  # summary.json and report.html (files, not tables) do not match
        assert written == set(stage.writes), stage.name


def test_every_stage_module_is_in_a_list_and_named_as_its_stage():
    listed = {s.name for s in pipeline.FILE_STAGES + pipeline.LIVE_STAGES + pipeline.LOAD_STAGES}
    assert set(MODULES) == listed
    for module in _stage_modules():
        assert isinstance(module.STAGE, Stage) and module.STAGE.name == module.__name__.rsplit(".", 1)[1]


@pytest.mark.parametrize("name", MODULES)
def test_each_stage_docstring_says_what_it_reads_writes_and_decides(name):
    module = importlib.import_module(f"kassign.spark.stages.{name}")
    doc = module.__doc__
    assert doc.startswith(f"Stage ``{name}``: ")
    paragraphs = {p.split(":", 1)[0]: p for p in doc.split("\n\n")}
    assert {"Reads", "Writes", "Decides"} <= set(paragraphs), name
    assert "For example" in doc, name
    for table in module.STAGE.writes:
        assert f"``{table}``" in paragraphs["Writes"], (name, table)
    if not module.STAGE.writes:
        assert paragraphs["Writes"].startswith("Writes: no table"), name


def test_every_field_a_stage_reads_is_made_before_it():
    fields = {f.name for f in dataclasses.fields(PipelineContext)}
    for first in (pipeline.FILE_STAGES, pipeline.LIVE_STAGES):
        made = set(GIVEN)
        for stage in first + pipeline.LOAD_STAGES:
            assert set(stage.reads) <= fields and set(stage.makes) <= fields, stage.name
            assert set(stage.reads) <= made, (stage.name, set(stage.reads) - made)
            made |= set(stage.makes)


def test_a_run_writes_exactly_the_tables_its_stages_declare(spark, tmp_path):
    opts = pipeline.PipelineOptions(out=str(tmp_path / "out"), rows=3000, keys=200, max_partitions=8,
                                    producers=["java", "kafkajs:legacy"])
    ctx = PipelineContext(spark, opts, tmp_path / "staging")
    ctx.out.mkdir()
    summary = pipeline._run(ctx)
    declared = {s.name: set(s.writes) for s in pipeline.FILE_STAGES + pipeline.LOAD_STAGES}
    assert list(ctx.written) == list(declared)
    for name, tables in ctx.written.items():
        assert set(tables) <= declared[name], name
    written = {t for tables in ctx.written.values() for t in tables}
    assert written == set(summary["tables"]) == {p.name for p in ctx.out.iterdir() if p.is_dir()}
    assert written == set().union(*declared.values())  # this run asks for every table a file pass can write
