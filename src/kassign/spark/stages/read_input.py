"""Stage ``read_input``: the input (a file, or the generated sample) as tagged rows, every row a record or a reason.

Reads: the input named by ``opts`` (``kassign.spark.inputs`` for Parquet, CSV and JSON lines; the sample
otherwise), and its columns: ``--key-column``, ``--value-column`` or ``--size-column``, ``--topic-column``.

Writes: ``sample_input`` (the generated sample, with --write-sample only); nothing else: the rows stay a plan
until the one pass counts them.

Decides: how keys are serialised (``key_type`` in summary.json: a string column as UTF-8, binary as is,
int/bigint or ``--key-type int|long`` as Kafka's IntegerSerializer/LongSerializer write them), each row's
reason to be set aside (the first that applies: a line that does not parse, the key, the size, the topic),
and ``input``, the description of what was read. A column that is not there is a one-line error.

For example, the CSV line ``x,abc`` with ``--key-column id --size-column size`` becomes a row with key ``x``
and the reason ``size column 'size' is not a number``; ``y,3`` becomes the record ``("topic", "y", 3 B)``.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kassign.core.errors import KassignError
from kassign.producer.keys import INT_WIDTHS, check_key_type
from kassign.spark import inputs
from kassign.spark.counting import INTEGRAL_TYPES
from kassign.spark.options import PipelineOptions, _detect_format
from kassign.spark.sample import SAMPLE_TOPIC, sample_frame
from kassign.spark.stages.base import PipelineContext, Stage, StageResult

KEY_AS_IS = "as is (string: UTF-8, binary: raw)"  # summary.json's key_type for keys hashed as they are


def run(ctx: PipelineContext) -> StageResult:
    raw, desc = _open(ctx)
    ctx.key_type = key_serialiser(raw, ctx.opts)
    ctx.tagged = normalise(raw, ctx.opts, ctx.input_format)
    tables = ("sample_input",) if ctx.opts.input is None and ctx.opts.write_sample else ()
    return StageResult(tables, {"input": desc, "key_type": ctx.key_type or KEY_AS_IS})


STAGE = Stage("read_input", run, makes=("tagged", "found", "input_format", "key_type"), writes=("sample_input",))


def _open(ctx: PipelineContext) -> tuple[DataFrame, dict[str, Any]]:
    """The input's rows and their description; fills ``found`` (None for the sample) and ``input_format``."""
    opts = ctx.opts
    if opts.input is None:
        source = sample_frame(ctx.spark, opts.rows, opts.keys, opts.skew, opts.null_share, opts.seed)
        raw = ctx.write_frame(source, "sample_input") if opts.write_sample else source  # seeded: same rows re-read
        opts.size_column = opts.size_column or "value_size"
        opts.key_column, opts.topic_column = "key", "topic"
        ctx.input_format = "parquet"
        return raw, {"kind": "sample", "rows": opts.rows, "keys": opts.keys, "skew": opts.skew,
                     "null_share": opts.null_share, "seed": opts.seed}
    fmt = _detect_format(opts.input, opts.input_format)
    ctx.found = inputs.read(ctx.spark, opts.input, fmt, opts.null_value)
    ctx.input_format = fmt
    desc = {"kind": "file", "path": opts.extra.get("input_label", opts.input), "format": fmt}
    if opts.null_value is not None:
        desc["null_value"] = opts.null_value
    return ctx.found.df, desc


def _require_column(df: DataFrame, name: str, option: str) -> T.DataType:
    fields = {f.name: f.dataType for f in df.schema.fields}
    if name not in fields:
        visible = ", ".join(n for n in fields if n not in inputs.INTERNAL)
        raise KassignError(f"{option} {name!r} is not a column of the input; columns are: {visible}")
    return fields[name]


def key_serialiser(df: DataFrame, opts: PipelineOptions) -> str | None:
    """``int`` or ``long`` when keys are serialised as integers, None for text/binary keys.

    Without --key-type the column type decides: int -> int, bigint -> long, string/binary as
    they are. --key-type int|long also parses a text column (rows that do not parse are set aside).
    """
    column_type = _require_column(df, opts.key_column, "--key-column")
    wanted = check_key_type(opts.key_type)
    name = f"--key-column {opts.key_column!r} has type {column_type.simpleString()}"
    if wanted in INT_WIDTHS:
        if not isinstance(column_type, (*INTEGRAL_TYPES, T.StringType)):
            raise KassignError(f"{name}; --key-type {wanted} needs an integer or text column")
        return wanted
    if isinstance(column_type, (T.StringType, T.BinaryType)):
        return None
    if wanted is None and isinstance(column_type, T.IntegerType):
        return "int"
    if wanted is None and isinstance(column_type, T.LongType):
        return "long"
    need = f"--key-type {wanted} needs" if wanted else "keys must be"
    raise KassignError(f"{name}; {need} string or binary, or int/bigint (Kafka hashes the serialised bytes; "
                       "--key-type int|long serialises integers and numeric text)")


def _key_and_size(opts: PipelineOptions, serialiser: str | None) -> tuple[F.Column, F.Column, list]:
    """The key column to hash, its serialised length, and reasons to set a row aside."""
    raw = F.col(opts.key_column)
    if serialiser is None:
        return raw, F.coalesce(F.octet_length(raw), F.lit(0)), []
    # try_cast (not cast): under ANSI a bad value would fail the whole job instead of one row.
    sql_type = "INT" if serialiser == "int" else "BIGINT"
    key = F.expr(f"try_cast(`{opts.key_column.replace('`', '``')}` AS {sql_type})")
    unfit = raw.isNotNull() & key.isNull()
    size = F.when(key.isNull(), F.lit(0)).otherwise(F.lit(INT_WIDTHS[serialiser]))
    return key, size, [(unfit, f"key column {opts.key_column!r} is not a valid {serialiser}")]


def constant_topic(opts: PipelineOptions) -> str | None:
    """The one topic of every record when the input has no topic column, else None."""
    if opts.topic_column:
        return None
    return SAMPLE_TOPIC if opts.input is None else "topic"


def normalise(df: DataFrame, opts: PipelineOptions, fmt: str | None = None) -> DataFrame:
    """Every input row as topic, key, bytes and ``reason`` (null for a record; else why it is set aside),
    plus the bookkeeping columns that locate it.

    Columns are checked first. The first reason that applies is the row's reason: a line that
    does not parse, then the key, the size, the topic."""
    serialiser = key_serialiser(df, opts)
    if opts.value_column and opts.size_column:
        raise KassignError("give --value-column or --size-column, not both")
    key, key_size, reasons = _key_and_size(opts, serialiser)
    if opts.size_column:
        size_type = _require_column(df, opts.size_column, "--size-column")
        inputs.check_size_type(size_type, opts.size_column)
        size, why = inputs.parse_size(opts.size_column, size_type, strip_quotes=fmt == "json")
        reasons.append((why.isNotNull(), why))
    elif opts.value_column:
        _require_column(df, opts.value_column, "--value-column")
        # Kafka's record size counts key and value bytes; a null value (tombstone) has 0 value bytes.
        size = key_size + F.coalesce(F.octet_length(F.col(opts.value_column)), F.lit(0))
    else:
        size = key_size
    if opts.topic_column:
        _require_column(df, opts.topic_column, "--topic-column")
        topic = F.col(opts.topic_column).cast("string")
        reasons.append((topic.isNull(), f"topic column {opts.topic_column!r} is null"))
        reasons.append((topic == "", f"topic column {opts.topic_column!r} is empty"))
    else:
        topic = F.lit(constant_topic(opts))
    if inputs.PROBLEM in df.columns:
        reasons.insert(0, (F.col(inputs.PROBLEM).isNotNull(), F.col(inputs.PROBLEM)))
    reason = F.lit(None).cast("string")
    for condition, text in reversed(reasons):
        reason = F.when(condition, text if isinstance(text, Column) else F.lit(text)).otherwise(reason)
    keep = [c for c in (inputs.RAW, inputs.FILE, inputs.BLOCK, inputs.ROW_ID, inputs.ROW_NUMBER) if c in df.columns]
    return df.select(topic.alias("topic"), key.alias("key"), size.cast("long").alias("bytes"), reason.alias("reason"),
                     *keep)


def good() -> Column:
    """True for a row that becomes a record (no reason to set it aside)."""
    return F.col("reason").isNull()


def good_records(tagged: DataFrame) -> DataFrame:
    """The rows that become records: topic, key, bytes."""
    return tagged.filter(good()).select("topic", "key", "bytes")
