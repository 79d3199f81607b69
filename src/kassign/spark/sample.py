"""The sample data set: Zipf-skewed keys, a share of null keys, value sizes, generated inside Spark.

Key rank r in 1..K follows Zipf with exponent ``skew`` (continuous inverse-CDF, floored), so
key "user-1" is the hottest. Value sizes are log-normal around ~400 bytes. Everything is
derived from ``rand(seed)`` over a ``range`` with a fixed number of slices, so the same
options give the same rows on any cluster.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from kassign.core.errors import KassignError

SAMPLE_TOPIC = "events"
ROWS_PER_SLICE = 500_000


def _zipf_rank(u: Column, keys: int, skew: float) -> Column:
    if abs(skew - 1.0) < 1e-9:
        x = F.pow(F.lit(float(keys)), u)
    else:
        a = 1.0 - skew
        x = F.pow((F.lit(float(keys) ** a - 1.0) * u + F.lit(1.0)), F.lit(1.0 / a))
    return F.least(F.greatest(F.floor(x), F.lit(1)), F.lit(keys)).cast("long")


def sample_frame(spark: SparkSession, rows: int, keys: int, skew: float, null_share: float, seed: int) -> DataFrame:
    """Columns: topic (string), key (string, nullable), value_size (long)."""
    if rows < 1 or keys < 1:
        raise KassignError(f"--rows and --keys must be >= 1, got rows={rows}, keys={keys}")
    if not 0 <= null_share <= 1:
        raise KassignError(f"--null-share must be between 0 and 1, got {null_share}")
    if skew < 0:
        raise KassignError(f"--skew must be >= 0 (0 = uniform keys), got {skew}")
    slices = max(2, -(-rows // ROWS_PER_SLICE))
    rank = _zipf_rank(F.rand(seed), keys, skew)
    size = F.greatest(F.lit(1), F.round(F.exp(F.randn(seed + 1) * 0.8 + 5.6))).cast("long")
    key = F.when(F.rand(seed + 2) < null_share, F.lit(None).cast("string")).otherwise(
        F.concat(F.lit("user-"), rank.cast("string")))
    return spark.range(0, rows, 1, slices).select(
        F.lit(SAMPLE_TOPIC).alias("topic"), key.alias("key"), size.alias("value_size"))
