"""Stage 0 of the pipeline: reading messy input without crashing and without guessing.

Every input row either becomes a record or is *set aside* with a reason, its raw text and,
for CSV and JSON lines, its file and line number. Nothing is dropped silently and nothing is
reinterpreted: an empty CSV field is an empty string (a hashed empty key), not a null,
unless ``--null-value`` names the text that means null.

Text formats are read as lines (``spark.read.text``) and parsed with ``from_csv`` /
``from_json`` in PERMISSIVE mode, so the raw line is at hand for every row: a line with too
many or too few columns, an unterminated quote, a NUL byte or broken JSON is set aside with
that line. Line numbers come from each line's place in its input split (the file source's
``_metadata.file_block_start``) plus the lines of the earlier splits of the same file, one
small aggregation; only set-aside rows are numbered.

Sizes must be non-negative whole numbers. Spark 4 casts under ANSI rules (a bad value fails
the whole job), so every conversion here is a ``try_cast`` and every failure has its reason:
empty, null, not a number, NaN, infinite, negative, not a whole number, too large.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kassign.core.errors import KassignError

CORRUPT = "_corrupt_record"
RAW = "__kassign_raw"
PROBLEM = "__kassign_problem"
FILE = "__kassign_file"
BLOCK = "__kassign_block"
ROW_ID = "__kassign_row"
ROW_NUMBER = "__kassign_row_number"  # Parquet: the row's number in its file, 1-based
INTERNAL = (CORRUPT, RAW, PROBLEM, FILE, BLOCK, ROW_ID, ROW_NUMBER)
# What from_csv is told means null: a text no CSV contains, so every field is read as written.
_NO_NULL = "\u0000kassign:no-null\u0000"
_LONG_MAX = 2.0 ** 63


@dataclass
class Input:
    """The input as a DataFrame of its own columns plus kassign's bookkeeping columns."""

    df: DataFrame
    fmt: str
    path: str
    text: bool  # read as lines: set-aside rows get a file and a line number
    columns: list[str] = field(default_factory=list)
    offsets: list[tuple[str, int, int]] | None = None  # (file, split start, line number minus row id)


def user_columns(df: DataFrame) -> list[str]:
    return [c for c in df.columns if c not in INTERNAL]


def _spark_error(err: Exception) -> str:
    """The line of a Spark/py4j error a user can act on (not 'An error occurred while calling o44.load')."""
    text = str(err).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for marker in ("is not a Parquet file", "PATH_NOT_FOUND", "Permission denied", "UNABLE_TO_INFER_SCHEMA",
                   "FileNotFoundException", "AccessDeniedException"):
        for line in lines:
            if marker in line:
                return line.split("Exception: ", 1)[-1][:300]
    return (lines[0] if lines else type(err).__name__)[:300]


def _text_lines(spark: SparkSession, path: str) -> DataFrame:
    """Every line with its file, its split's start byte and a row id (ordered within a split)."""
    return spark.read.text(path).select(
        F.col("value").alias(RAW), F.col("_metadata.file_path").alias(FILE),
        F.col("_metadata.file_block_start").alias(BLOCK), F.monotonically_increasing_id().alias(ROW_ID))


def read_csv(spark: SparkSession, path: str, null_value: str | None) -> Input:
    header = spark.read.option("header", "true").option("mode", "PERMISSIVE").csv(path)
    names = [f.name for f in header.schema.fields if f.name != CORRUPT]
    schema = T.StructType([T.StructField(n, T.StringType()) for n in names] + [T.StructField(CORRUPT, T.StringType())])
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT, "nullValue": _NO_NULL}
    offsets, headers = _split_offsets(spark, path)
    lines = _text_lines(spark, path)
    # the first line of every file is its header (as Spark's CSV reader with header=true); blank lines are skipped
    if headers:
        lines = lines.filter(~F.col(ROW_ID).isin(headers))
    lines = lines.filter(F.trim(F.col(RAW)) != "")
    parsed = lines.withColumn("__kassign_parsed", F.from_csv(F.col(RAW), schema.simpleString(), options))
    corrupt = F.col("__kassign_parsed").getField(CORRUPT).isNotNull()
    fields = []
    for name in names:
        value = F.col("__kassign_parsed").getField(name)
        # a null here is an empty unquoted field: read as the empty string it is, or null if --null-value says so
        value = F.when(~corrupt, F.coalesce(value, F.lit("")))
        if null_value is not None:
            value = F.when(value == F.lit(null_value), F.lit(None).cast("string")).otherwise(value)
        fields.append(value.alias(name))
    quotes = F.length(F.col(RAW)) - F.length(F.regexp_replace(F.col(RAW), '"', ""))
    problem = (F.when(F.col(RAW).contains("\u0000"), F.lit("line contains a NUL byte"))
               .when(corrupt & (quotes % 2 == 1), F.lit("CSV line with an unterminated quote"))
               .when(corrupt, F.lit(f"CSV line without exactly {len(names)} columns")))
    df = parsed.select(*fields, problem.alias(PROBLEM), RAW, FILE, BLOCK, ROW_ID)
    return Input(df, "csv", path, True, names, offsets)


def read_json(spark: SparkSession, path: str) -> Input:
    inferred = spark.read.option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT).json(path)
    fields = [f for f in inferred.schema.fields if f.name != CORRUPT]
    schema = T.StructType(fields + [T.StructField(CORRUPT, T.StringType())])
    lines = _text_lines(spark, path).filter(F.trim(F.col(RAW)) != "")
    parsed = lines.withColumn("__kassign_parsed", F.from_json(F.col(RAW), schema, {
        "mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}))
    corrupt = F.col("__kassign_parsed").getField(CORRUPT).isNotNull()
    problem = (F.when(F.col(RAW).contains("\u0000"), F.lit("line contains a NUL byte"))
               .when(corrupt, F.lit("line is not a JSON object")))
    df = parsed.select(*(F.col("__kassign_parsed").getField(f.name).alias(f.name) for f in fields),
                       problem.alias(PROBLEM), RAW, FILE, BLOCK, ROW_ID)
    return Input(df, "json", path, True, [f.name for f in fields])


def read_parquet(spark: SparkSession, path: str) -> Input:
    df = spark.read.parquet(path)
    names = [c for c in df.columns]
    # the raw row, for the set-aside table: binary as hex (to_json would write base64)
    shown = [F.concat(F.lit("0x"), F.lower(F.hex(F.col(f"`{f.name}`")))).alias(f.name)
             if isinstance(f.dataType, T.BinaryType) else F.col(f"`{f.name}`") for f in df.schema.fields]
    raw = F.to_json(F.struct(*shown)) if shown else F.lit("{}")
    return Input(df.select("*", F.lit(None).cast("string").alias(PROBLEM), raw.alias(RAW),
                           F.col("_metadata.file_path").alias(FILE),
                           (F.col("_metadata.row_index") + 1).alias(ROW_NUMBER)), "parquet", path, False, names)


def read(spark: SparkSession, path: str, fmt: str, null_value: str | None = None) -> Input:
    try:
        if fmt == "csv":
            found = read_csv(spark, path, null_value)
        elif fmt == "json":
            found = read_json(spark, path)
        else:
            found = read_parquet(spark, path)
        found.df.schema  # resolves the path now, so a bad one fails here with a clear message
    except KassignError:
        raise
    except Exception as err:  # AnalysisException (path not found, unreadable files) arrives wrapped by py4j
        raise KassignError(f"cannot read {fmt} input {path!r}: {_spark_error(err)}") from None
    return found


# -- sizes ------------------------------------------------------------------------------------------------------

_NUMERIC = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType, T.DecimalType)


def check_size_type(data_type: T.DataType, column: str) -> None:
    if not isinstance(data_type, (*_NUMERIC, T.StringType)):
        raise KassignError(f"--size-column {column!r} has type {data_type.simpleString()}; "
                           "sizes must be whole numbers (an integer, decimal or text column)")


def parse_size(column: str, data_type: T.DataType, strip_quotes: bool = False) -> tuple[Column, Column]:
    """(size as bigint, reason the row is set aside or null) for a size column of any accepted type."""
    raw = F.col(f"`{column}`")
    name = f"size column {column!r}"

    def why(text: str) -> Column:
        return F.lit(f"{name} {text}")

    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        value = raw.cast("long")
        reason = F.when(raw.isNull(), why("is missing (null)")).when(value < 0, why("is negative"))
        return value, reason
    if isinstance(data_type, T.StringType):
        text = F.trim(raw)
        if strip_quotes:  # from_json gives a JSON number token in a text column with its quotes (NaN as "NaN")
            text = F.regexp_replace(text, r'^"(.*)"$', "$1")
        exact = text.try_cast("long")
        number = text.try_cast("double")
        reason = (F.when(raw.isNull(), why("is missing (null)"))
                  .when(text == "", why("is empty"))
                  .when(number.isNull(), why("is not a number")))
    else:  # float, double, decimal
        exact = F.lit(None).cast("long")
        number = raw.cast("double")
        reason = F.when(raw.isNull(), why("is missing (null)"))
    reason = (reason.when(F.isnan(number), why("is NaN"))
              .when(number.isin(float("inf"), float("-inf")), why("is infinite"))
              .when(number < 0, why("is negative"))
              .when(exact.isNotNull(), F.lit(None).cast("string"))
              .when(number % F.lit(1.0) != 0, why("is not a whole number"))  # not floor(): it overflows on 1e20
              .when(number >= _LONG_MAX, why("is too large")))
    if isinstance(data_type, T.DecimalType):
        whole = F.when((number >= 0) & (number < _LONG_MAX), raw.try_cast("long"))
    else:
        whole = F.when((number >= 0) & (number < _LONG_MAX), number.try_cast("long"))
    value = F.coalesce(exact, whole)
    return value, reason


# -- line numbers ------------------------------------------------------------------------------------------------

def _split_offsets(spark: SparkSession, path: str) -> tuple[list[tuple[str, int, int]], list[int]]:
    """Per input split: (file, start byte, line number of its first line minus its first row id); and
    the row ids of every file's first line. One pass over the lines; one row per split reaches the driver."""
    splits = (_text_lines(spark, path).groupBy(FILE, BLOCK)
              .agg(F.min(ROW_ID).alias("first_row"), F.count(F.lit(1)).alias("lines")).collect())
    offsets: list[tuple[str, int, int]] = []
    before: dict[str, int] = {}
    headers = []
    for row in sorted(splits, key=lambda r: (r[FILE], r[BLOCK])):
        if row[FILE] not in before:
            headers.append(row["first_row"])
        offsets.append((row[FILE], row[BLOCK], before.get(row[FILE], 0) - row["first_row"] + 1))
        before[row[FILE]] = before.get(row[FILE], 0) + row["lines"]
    return offsets, headers


def number_lines(spark: SparkSession, found: Input, aside: DataFrame) -> DataFrame:
    """``aside`` (set-aside rows with the bookkeeping columns) as ``reason, raw, file, line``: ``line`` is the
    1-based line number (CSV, JSON lines) or row number in its file (Parquet)."""
    if not found.text:
        return aside.select("reason", F.col(RAW).alias("raw"), F.col(FILE).alias("file"),
                            F.col(ROW_NUMBER).cast("long").alias("line"))
    if found.offsets is None:
        found.offsets, _ = _split_offsets(spark, found.path)
    offsets = found.offsets
    base = spark.createDataFrame(offsets, f"{FILE} string, {BLOCK} long, __kassign_base long")
    return (aside.join(F.broadcast(base), [FILE, BLOCK], "left")
            .select("reason", F.col(RAW).alias("raw"), F.col(FILE).alias("file"),
                    (F.col(ROW_ID) + F.col("__kassign_base")).alias("line")))
