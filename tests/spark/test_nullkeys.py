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
