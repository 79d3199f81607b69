"""The keyless-record producer models, on plain arrays (no Spark needed)."""

from __future__ import annotations

import numpy as np
import pytest

from kassign.spark.nullkeys import _Producer


def test_round_robin_visits_partitions_in_turn_across_batches():
    producer = _Producer("round-robin", {"t": 5}, 5, 16384, seed=1, split=0)
    first = producer.partitions("t", np.full(7, 100))
    second = producer.partitions("t", np.full(6, 100))
    sequence = np.concatenate([first, second])
    assert np.all(np.diff(sequence) % 5 == 1)  # each record goes to the next partition
    counts = np.bincount(sequence, minlength=5)
    assert counts.max() - counts.min() == 1  # 13 records over 5 partitions


def test_sticky_switches_only_after_batch_size_bytes():
    producer = _Producer("sticky", {"t": 50}, 50, batch_size=1000, seed=3, split=2)
    sizes = np.full(100, 300)  # a batch fills on its 4th record (1200 >= 1000)
    partitions = producer.partitions("t", sizes)
    runs = np.split(partitions, np.flatnonzero(np.diff(partitions)) + 1)
    # Every run is a whole number of 4-record batches (two consecutive batches may land on one partition).
    assert all(len(run) % 4 == 0 for run in runs[:-1])
    assert len(set(partitions[::4].tolist())) > 5  # and batches do move around


def test_same_seed_and_split_give_the_same_choices_other_splits_differ():
    sizes = np.full(200, 500)
    a = _Producer("sticky", {"t": 12}, 12, 4000, seed=9, split=0).partitions("t", sizes)
    b = _Producer("sticky", {"t": 12}, 12, 4000, seed=9, split=0).partitions("t", sizes)
    c = _Producer("sticky", {"t": 12}, 12, 4000, seed=9, split=1).partitions("t", sizes)
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()


def test_sticky_counts_bytes_not_records():
    # batch.size 1000: 400+400+400 = 1200 fills the first batch on its 3rd record, 100+2000 the next on its 2nd.
    producer = _Producer("sticky", {"t": 1000}, 1000, batch_size=1000, seed=4, split=0)
    partitions = producer.partitions("t", np.array([400, 400, 400, 100, 2000, 50]))
    switches = set((np.flatnonzero(np.diff(partitions)) + 1).tolist())
    assert switches == {3, 5}, partitions


def test_random_model_picks_each_record_independently_and_reproducibly():
    a = _Producer("random", {"t": 8}, 8, 16384, seed=1, split=3, stream=2).partitions("t", np.full(4000, 10))
    b = _Producer("random", {"t": 8}, 8, 16384, seed=1, split=3, stream=2).partitions("t", np.full(4000, 10))
    other = _Producer("random", {"t": 8}, 8, 16384, seed=1, split=3, stream=3).partitions("t", np.full(4000, 10))
    assert a.tolist() == b.tolist() != other.tolist()
    counts = np.bincount(a, minlength=8)
    assert counts.min() > 400 and np.mean(a[1:] != a[:-1]) > 0.8  # spread out, no stickiness


def test_fill_unhashed_fills_only_the_nulls_of_each_column():
    import pyarrow as pa

    from kassign.spark.nullkeys import fill_unhashed

    batch = pa.RecordBatch.from_pydict({
        "topic": ["t", "t", "t", "u"], "bytes": [10, 10, 10, 10],
        "p0": pa.array([1, None, 2, None], pa.int32()), "p1": pa.array([None, 0, None, 3], pa.int32())})
    run = fill_unhashed(["round-robin", "random"], ["p0", "p1"], {"t": 5, "u": 4}, 5, 100, seed=7)
    (out,) = list(run(iter([batch])))
    p0, p1 = out.column("p0").to_pylist(), out.column("p1").to_pylist()
    assert p0[0] == 1 and p0[2] == 2 and 0 <= p0[1] < 5 and 0 <= p0[3] < 4
    assert p1[1] == 0 and p1[3] == 3 and 0 <= p1[0] < 5 and 0 <= p1[2] < 5
    assert out.schema == batch.schema


# -- the JVM copy of the models ---------------------------------------------------------------------------------

@pytest.mark.parametrize("model", ["sticky", "round-robin", "random"])
def test_the_jvm_column_chooses_exactly_what_the_python_model_chooses(spark, model):
    from pyspark.sql import functions as F

    from kassign.spark.nullkeys import null_key_column
    from kassign.spark.partition import register_jvm_udf

    if not register_jvm_udf(spark):
        pytest.skip("no JVM UDF in this session (javac missing)")
    splits, per_split = 3, 700
    # spark.range gives each split a contiguous run of ids, in order: split i holds ids i*700 .. i*700+699
    df = spark.range(0, splits * per_split, 1, splits).select(
        F.when(F.col("id") % 3 == 0, "événements").otherwise("t").alias("topic"),
        (50 + (F.col("id") * 37) % 400).alias("bytes"), "id")
    column = null_key_column(F.col("topic"), F.col("bytes"), model, {"t": 7}, 5, 1000, seed=2**62 + 5, stream=3)
    got = [r["p"] for r in df.select(column.alias("p"), "id").orderBy("id").collect()]
    expected = []
    for split in range(splits):
        producer = _Producer(model, {"t": 7}, 5, 1000, 2**62 + 5, split=split, stream=3)
        for i in range(split * per_split, (split + 1) * per_split):
            topic = "événements" if i % 3 == 0 else "t"  # a negative String.hashCode, a non-ASCII name
            expected.append(int(producer.partitions(topic, np.array([50 + (i * 37) % 400]))[0]))
    assert got == expected


SETUPS = {
    "4.4 rack-aware": ("sticky", "4.4", ("rack-a", "rack-b"), True,
                       {"t": ("rack-a", "rack-b", "rack-c", "rack-a", "rack-b", "rack-c", None),
                        "événements": ("rack-c", "rack-c", "rack-a", "rack-b", None)}),
    "3.2 keyed records share batches": ("sticky", "3.2", (), False, {}),
    "3.3 built-in partitioner": ("sticky", "3.3", ("rack-a",), False, {}),
    "round-robin ignores keyed records": ("round-robin", "3.1", (), False, {}),
}


@pytest.mark.parametrize("name", list(SETUPS))
def test_the_jvm_column_chooses_what_python_chooses_per_release_and_rack(spark, name):
    """Every release's rule, producers in two racks (split i in rack i % 2), keyed rows seen where the release's
    producer sees them (3.0-3.2): the JVM copy draws exactly the numbers kassign.producer.keyless draws."""
    from pyspark.sql import functions as F

    from kassign.spark.nullkeys import ProducerSetup, null_key_column
    from kassign.spark.partition import register_jvm_udf

    if not register_jvm_udf(spark):
        pytest.skip("no JVM UDF in this session (javac missing)")
    model, version, racks, aware, leaders = SETUPS[name]
    setup = ProducerSetup(version, racks, aware, leaders)
    splits, per_split = 3, 700
    df = spark.range(0, splits * per_split, 1, splits).select(
        F.when(F.col("id") % 3 == 0, "événements").otherwise("t").alias("topic"),
        (50 + (F.col("id") * 37) % 400).alias("bytes"),
        F.when(F.col("id") % 4 == 1, F.col("id") % 5).cast("int").alias("keyed"), "id")
    column = null_key_column(F.col("topic"), F.col("bytes"), model, {"t": 7}, 5, 1000, seed=77, stream=0,
                             setup=setup, keyed=F.col("keyed"))
    got = [r["p"] for r in df.select(column.alias("p"), "id").orderBy("id").collect()]
    expected = []
    for split in range(splits):
        producer = _Producer(model, {"t": 7}, 5, 1000, 77, split=split, setup=setup)
        for i in range(split * per_split, (split + 1) * per_split):
            topic = "événements" if i % 3 == 0 else "t"
            keyed = i % 5 if i % 4 == 1 else -1
            placed = int(producer.partitions(topic, np.array([50 + (i * 37) % 400]), np.array([keyed]))[0])
            expected.append(None if keyed >= 0 else placed)
    assert got == expected
    if aware:  # producers in rack-a (splits 0, 2) and rack-b (split 1) land only where their rack leads
        rows = df.select(column.alias("p"), "topic", F.spark_partition_id().alias("split")).collect()
        for r in rows:
            if r["p"] is not None:
                rack = racks[r["split"] % 2]
                in_rack = [p for p, x in enumerate(leaders[r["topic"]]) if x == rack]
                assert r["p"] in (in_rack or range(len(leaders[r["topic"]])))


def test_kafka_3_2s_producer_moves_on_when_keyed_records_fill_its_batch():
    """KIP-480 in the pipeline's producer: keyed records on the sticky partition fill its batch, so the keyless
    records after them move on sooner than with keyless records alone (3.3 and later ignore keyed records)."""
    from kassign.spark.nullkeys import ProducerSetup

    sizes = np.full(60, 100)
    keyed = np.where(np.arange(60) % 2 == 0, -1, 0)  # every other record is keyed to partition 0
    alone = _Producer("sticky", {"t": 4}, 4, 1000, 3, 0, setup=ProducerSetup("3.2")).partitions("t", sizes[keyed < 0])
    mixed = _Producer("sticky", {"t": 4}, 4, 1000, 3, 0, setup=ProducerSetup("3.2")).partitions("t", sizes, keyed)
    switches = lambda p: int((np.diff(p) != 0).sum())  # noqa: E731
    assert switches(mixed[keyed < 0]) > switches(alone)
    later = _Producer("sticky", {"t": 4}, 4, 1000, 3, 0, setup=ProducerSetup("3.3"))
    assert later.partitions("t", sizes, keyed)[keyed < 0].tolist() == \
        _Producer("sticky", {"t": 4}, 4, 1000, 3, 0, setup=ProducerSetup("3.3")).partitions("t", sizes[keyed < 0]).tolist()


@pytest.mark.parametrize("producer", [
    {},
    {"kafka_version": "3.2"},
    {"kafka_version": "4.4", "client_racks": ["rack-a", "rack-b"], "partitioner_rack_aware": True,
     "leader_racks": {"a": ["rack-a", "rack-b", "rack-c"] * 2, "b": ["rack-b", "rack-a", "rack-c"] * 3}},
], ids=["4.4", "3.2", "4.4 rack-aware"])
def test_key_figures_are_the_same_on_both_engines(spark, tmp_path, producer):
    from pyspark.sql import functions as F

    from kassign.spark.partition import register_jvm_udf
    from kassign.spark.pipeline import PipelineOptions
    from kassign.spark.stages.key_figures import key_figures
    from kassign.spark.stages.read_input import normalise

    if not register_jvm_udf(spark):
        pytest.skip("no JVM UDF in this session (javac missing)")
    df = spark.range(0, 6000, 1, 4).select(
        F.when(F.col("id") % 2 == 0, "a").otherwise("b").alias("topic"),
        F.when(F.col("id") % 5 == 0, F.lit(None)).otherwise(F.concat(F.lit("k"), (F.col("id") % 97).cast("string")))
        .alias("key"),
        F.when(F.col("id") == 17, -1).otherwise(100 + F.col("id") % 300).alias("size"))
    figures = {}
    for engine in ("jvm", "arrow"):
        opts = PipelineOptions(out=str(tmp_path), input="x", key_column="key", size_column="size",
                               topic_column="topic", partitions=6, batch_size=700, engine=engine, **producer)
        tagged = normalise(df, opts, "parquet")
        rows = key_figures(tagged, {"b": 9}, opts).collect()
        figures[engine] = sorted((tuple(r) for r in rows), key=repr)
    assert figures["jvm"] == figures["arrow"]
    reasons = [r for r in figures["jvm"] if r[3] is not None]
    assert reasons == [(None, None, None, "size column 'size' is negative", 1, None)]
    keyless_b = [r for r in figures["jvm"] if r[0] == "b" and r[1] is None]
    assert keyless_b and all(0 <= r[2] < 9 for r in keyless_b)  # topic b has 9 partitions, a the default 6
    if producer.get("partitioner_rack_aware"):  # producers in rack-a and rack-b: never b's partitions led in rack-c
        assert {r[2] for r in keyless_b} <= {0, 1, 3, 4, 6, 7}
