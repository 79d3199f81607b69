"""Stage ``set_aside``: the input rows that cannot be placed, each with its reason, raw text and line.

Reads: ``digest`` (how many rows each reason set aside, from the one pass), ``tagged`` and ``found`` (to read
those rows again, only when there are any).

Writes: ``set_aside``: reason, raw text, file and line of every row set aside (empty, with its schema, when
none was; live topics set nothing aside: a record read is where its producer put it).

Decides: ``set_aside`` in summary.json (per reason: rows and the first row), a warning counting them, and the
end of the run when no row is left to place ("no records to place: ...").

For example, a CSV whose line 7 reads ``c,1.7`` under ``--size-column size`` gives the row
``("size column 'size' is not a whole number", "c,1.7", "events.csv", 7)``.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kassign.core.errors import KassignError
from kassign.spark import inputs
from kassign.spark.stages.base import PipelineContext, Stage, StageResult
from kassign.spark.stages.read_input import good

SET_ASIDE_SCHEMA = pa.schema([("reason", pa.string()), ("raw", pa.string()), ("file", pa.string()),
                              ("line", pa.int64())])


def run(ctx: PipelineContext) -> StageResult:
    if ctx.opts.live:
        ctx.write_rows("set_aside", [], SET_ASIDE_SCHEMA)
        return StageResult(("set_aside",), {"set_aside": []})
    digest = ctx.digest
    ctx.aside_rows = _set_aside_table(ctx, bool(digest.reasons))
    aside_counts = {r["reason"]: r["rows"] for r in ctx.aside_rows}
    if not digest.topics():
        raise KassignError("no records to place: the input is empty or every row was set aside "
                           f"({', '.join(f'{k}: {v}' for k, v in aside_counts.items()) or 'no rows'})")
    first = [{"reason": r["reason"], "rows": r["rows"], "first": r["first"].asDict()} for r in ctx.aside_rows]
    return StageResult(("set_aside",), {"set_aside": first}, _aside_warning(digest, aside_counts))


STAGE = Stage("set_aside", run, reads=("digest",), makes=("aside_rows",), writes=("set_aside",))


def set_aside_rows(tagged: DataFrame) -> DataFrame:
    """The rows set aside: their reason and the bookkeeping columns that locate them."""
    return tagged.filter(~good()).drop("topic", "key", "bytes")


def _set_aside_table(ctx: PipelineContext, any_rows: bool) -> list[Any]:
    """Write the set_aside table (read again only when there is something to set aside); return, per
    reason, its row count and first row."""
    if not any_rows:  # an empty table with the schema, without starting Spark tasks
        ctx.write_rows("set_aside", [], SET_ASIDE_SCHEMA)
        return []
    aside = set_aside_rows(ctx.tagged)
    if ctx.found is not None:
        aside = inputs.number_lines(ctx.spark, ctx.found, aside)
    else:
        aside = aside.select("reason", F.lit(None).cast("string").alias("raw"),
                             F.lit(None).cast("string").alias("file"), F.lit(None).cast("long").alias("line"))
    written = ctx.write_frame(aside, "set_aside")
    return (written.groupBy("reason").agg(
        F.count(F.lit(1)).alias("rows"),
        F.min_by(F.struct("file", "line", F.substring("raw", 1, 200).alias("raw")),
                 F.coalesce(F.col("line"), F.lit(0))).alias("first"))
        .orderBy(F.desc("rows"), "reason").collect())


def _aside_warning(digest: Any, aside_counts: dict[str, int]) -> list[str]:
    if not aside_counts:
        return []
    input_rows = sum(digest.reasons.values()) + sum(t["records"] for t in digest.topics().values())
    return [f"{sum(aside_counts.values()):,} of {input_rows:,} input rows set aside "
            f"({'; '.join(f'{k}: {v:,}' for k, v in aside_counts.items())}); "
            f"they are in the set_aside table with their raw text"]
