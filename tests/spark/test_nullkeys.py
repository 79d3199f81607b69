"""The keyless-record producer models, on plain arrays (no Spark needed)."""

from __future__ import annotations

import numpy as np

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
