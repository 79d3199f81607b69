"""The fast forms of Java's queue and hash-set orders give what the general ones give: the load queue
(weights written out) against the queue with a key function while weights change under it,
``poll_first`` against polling one head at a time, and hash sets that only grow by load factor
against the general order."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kassign.core import javasets
from kassign.core.javaorder import hash_iteration_order, table_size_for
from kassign.core.javaqueue import JavaPriorityQueue, LoadPriorityQueue


def _clients(seed: int) -> tuple[random.Random, int, list[int], list[int]]:
    """A generator, a number of clients, their task counts and their thread counts."""
    rng = random.Random(seed)
    n = rng.randrange(1, 40)
    return rng, n, [rng.randrange(6) for _ in range(n)], [rng.randrange(1, 4) for _ in range(n)]


@pytest.mark.parametrize("seed", range(20))
def test_load_queue_moves_as_the_general_queue_while_weights_change(seed: int) -> None:
    rng, n, counts, capacity = _clients(seed)
    general = JavaPriorityQueue(lambda c: (counts[c] / capacity[c], c))
    load = LoadPriorityQueue(counts, capacity)
    for _ in range(300):
        step = rng.random()
        if step < 0.4:
            c = rng.randrange(n)
            if c not in general:
                general.offer(c)
                load.offer(c)
        elif step < 0.7:
            assert general.poll() == load.poll()
        elif step < 0.85:
            c = rng.randrange(n)
            assert general.remove(c) == load.remove(c)
        else:
            counts[rng.randrange(n)] += 1  # a weight changes while the client sits in the queue
        assert list(general) == list(load)


@pytest.mark.parametrize("seed", range(20))
def test_poll_first_is_polling_until_a_head_is_accepted(seed: int) -> None:
    rng, n, counts, capacity = _clients(seed)
    one, other = LoadPriorityQueue(counts, capacity), LoadPriorityQueue(counts, capacity)
    for c in rng.sample(range(n), rng.randrange(n + 1)):
        one.offer(c)
        other.offer(c)
    counts[rng.randrange(n)] += 2  # out of heap order: the array decides
    accepted = set(rng.sample(range(n), rng.randrange(n + 1)))
    passed, found = [], None
    while other:
        head = other.poll()
        if head in accepted:
            found = head
            break
        passed.append(head)
    assert one.poll_first(accepted.__contains__) == (found, passed)
    assert list(one) == list(other)


def test_hash_sets_that_grow_by_load_factor_iterate_as_the_general_order() -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(3000):
        n = rng.randrange(9, javasets._MEDIUM + 1)
        bits = rng.choice([32, 12, 8])  # narrow hashes crowd buckets (then the general path answers)
        hashes = [rng.getrandbits(bits) for _ in range(n)]
        capacity = rng.choice([None, 16, 40, 100])
        order = javasets.hash_set_order(hashes, list(range(n)), capacity)
        expected = hash_iteration_order(np.asarray(hashes, dtype=np.int64), capacity).tolist()
        table = 16 if capacity is None else int(table_size_for(capacity))
        if javasets._load_factor_order(hashes, list(range(n)), table) is not None:
            checked += 1
            assert order == expected
    assert checked > 1000
