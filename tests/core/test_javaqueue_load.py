"""The fast forms of Java's queue and hash-set orders give what the general ones give: the load queue
(compiled, weights read from arrays) against the queue with a key function while weights change under
it, ``poll_first`` against polling one head at a time, the compiled ``ConstrainedPrioritySet`` poll
against polling the general queue and putting the passed-over clients back in ``hash_set_order``, and
hash sets that only grow by load factor against the general order."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core import javasets, loadheap
from kassign.core.javaorder import hash_iteration_order, table_size_for
from kassign.core.javaqueue import JavaPriorityQueue, LoadPriorityQueue


def _clients(seed: int) -> tuple[random.Random, int, np.ndarray, np.ndarray]:
    """A generator, a number of clients, their task counts and their thread counts."""
    rng = random.Random(seed)
    n = rng.randrange(1, 40)
    return (rng, n, np.array([rng.randrange(6) for _ in range(n)], dtype=np.int64),
            np.array([rng.randrange(1, 4) for _ in range(n)], dtype=np.int64))


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


def _spreads(hashes: list[int]) -> np.ndarray:
    h = np.array(hashes, dtype=np.int64)
    return h ^ (h >> 16)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 70), hash_bits=st.sampled_from([32, 10, 0]), seed=st.integers(0, 2**32 - 1),
       steps=st.integers(1, 120))
def test_constrained_poll_is_the_general_queue_step_for_step(n: int, hash_bits: int, seed: int, steps: int) -> None:
    """Kafka's ``ConstrainedPrioritySet``, modelled on the general queue (poll until accepted, the
    passed-over clients offered back in ``HashSet`` order; re-offering a queued client removes it
    first) while loads change under the queued clients, against the compiled poll. Narrow hash codes
    crowd buckets, so the tree-bin fallback is met too."""
    rng = random.Random(seed)
    counts = np.array([rng.randrange(8) for _ in range(n)], dtype=np.int64)
    capacity = np.array([rng.randrange(1, 4) for _ in range(n)], dtype=np.int64)
    # 0 bits: hash codes (k << 16 | k) spread to k << 16: all share bucket 0, so a tree bin may form
    hashes = [rng.getrandbits(hash_bits) if hash_bits else (k := rng.randrange(1 << 15)) << 16 | k
              for _ in range(n)]
    general = JavaPriorityQueue(lambda c: (counts[c] / capacity[c], c))
    fast = LoadPriorityQueue(counts, capacity)
    everyone = np.arange(n, dtype=np.int64)
    for c in everyone.tolist():
        general.offer(c)
    fast.offer_all(everyone)
    fallbacks = 0
    for _ in range(steps):
        step = rng.random()
        if step < 0.5:
            accept = np.array([rng.random() < 0.3 for _ in range(n)], dtype=bool)
            found, passed = general.poll_first(lambda c: bool(accept[c]))
            for c in javasets.hash_set_order([hashes[c] for c in passed], passed):
                general.offer(c)
            got, left = fast.poll_constrained(accept, _spreads(hashes))
            fallbacks += bool(left)
            for c in javasets.hash_set_order([hashes[c] for c in left], left):
                fast.offer(c)
            assert got == found
            if found is not None and rng.random() < 0.7:
                counts[found] += 1  # the client takes a task and goes back in
                general.offer(found)
                fast.offer_all(np.array([found], dtype=np.int64))
        elif step < 0.7:
            c = rng.randrange(n)  # a re-offer: a queued client moves to where its load puts it now
            general.remove(c)
            general.offer(c)
            fast.offer_all(np.array([c], dtype=np.int64))
        else:
            c = rng.randrange(n)  # a load changes while the client sits in the queue
            counts[c] = max(0, counts[c] + rng.choice([-1, 1, 2]))
        assert list(fast) == list(general)
    if hash_bits == 32:
        assert not fallbacks  # 32-bit hashes of at most 70 clients never crowd a bucket this much


@settings(max_examples=300, deadline=None)
@given(hashes=st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 63).map(lambda b: b * 4096 + 7), max_size=120,
                       unique=True))
def test_compiled_hash_set_order_is_the_general_one(hashes: list[int]) -> None:
    """The kernel's ``HashSet`` order (or its refusal where a tree bin may form) against the model."""
    positions = loadheap.hash_set_positions(_spreads(hashes)).tolist()
    items = list(range(len(hashes)))
    if positions or not hashes:
        assert positions == javasets.hash_set_order(hashes, items)
    else:
        assert javasets.may_have_tree_bins(_spreads(hashes))
