"""Java's HashSet iteration order (kassign.core.javaorder): a set built at once by the copy
constructor against one grown an add at a time, at the sizes where their tables differ.

The expected orders come from Java's rules, restated here on their own: a key sits in
bucket ``(h ^ (h >>> 16)) & (capacity - 1)`` (``Integer.hashCode`` is the value), and the
set iterates bucket by bucket, each bucket in insertion order. The table sizes are facts
of ``java.util.HashMap`` (JDK 17), written out rather than computed:

* ``new HashSet<>(collection)`` of ``n`` elements: ``new HashMap<>(max((int) (n / .75f) + 1, 16))``,
  a table of the next power of two at or above that, then the elements added in the
  collection's order;
* ``new HashSet<>()`` then ``n`` adds: 16 buckets, doubled whenever the size exceeds 3/4 of them.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core.javaorder import (
    JavaHashOrder,
    compute_if_absent_order,
    copy_constructor_capacity,
    hash_iteration_order,
    java_int_set_copy_order,
    java_int_set_order,
    java_sorted_positions,
    java_string_hash,
    java_string_hash_order,
    java_string_hashes,
    hashmap_positions,
    table_size_for,
)

# n -> (table of new HashSet<>(a collection of n), table after n adds to new HashSet<>())
TABLES = {
    1: (16, 16),
    11: (16, 16),
    12: (32, 16),
    13: (32, 32),
    24: (64, 32),
    25: (64, 64),
    48: (128, 64),
    49: (128, 128),
    96: (256, 128),
    97: (256, 256),
}
# at n = 12 * 2**k the copy constructor's table is twice the grown one; one more and they agree
DIFFERENT_TABLES = [n for n, (copied, grown) in TABLES.items() if copied != grown]


def expected_order(values: list[int], table: int) -> list[int]:
    """Java's iteration order of distinct ``values`` added in this order to a table of ``table`` buckets."""
    def bucket(v: int) -> int:
        h = v & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (table - 1)
    assert all(sum(bucket(w) == bucket(v) for w in values) <= 8 for v in values), \
        "no bucket reaches 9 keys (Java would then grow a small table or make a tree bin)"
    return [v for _, v in sorted(((bucket(v), i), v) for i, v in enumerate(values))]


def listed(n: int, seed: int) -> list[int]:
    """``n`` distinct partition numbers in a shuffled listing order; from 12 on, several share
    buckets in either table (the tables have at most 4n buckets, the numbers reach 6n). From
    seed 1 on they sit above 65536, where the high half folds into the bucket. (These orders
    were checked once against a real JDK 17's HashSet.)"""
    rng = random.Random(seed)
    while True:
        values = [v + (seed << 16) for v in rng.sample(range(6 * n), n)]
        if all(max(keys_per_bucket(values, t)) <= 8 for t in TABLES[n]):
            return values


def keys_per_bucket(values: list[int], table: int) -> list[int]:
    counts = [0] * table
    for v in values:
        counts[(v ^ (v >> 16)) & (table - 1)] += 1
    return counts


@pytest.mark.parametrize("n", sorted(TABLES))
def test_copy_constructor_table_size(n: int) -> None:
    copied, grown = TABLES[n]
    assert table_size_for(copy_constructor_capacity(n)) == copied
    assert JavaHashOrder.copy_of(range(n), int).capacity == copied
    assert JavaHashOrder.of(range(n), int).capacity == grown


@pytest.mark.parametrize("n", sorted(TABLES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_int_set_order_built_at_once_and_grown(n: int, seed: int) -> None:
    values = listed(n, seed)
    copied, grown = TABLES[n]
    assert java_int_set_copy_order(values) == expected_order(values, copied)
    assert java_int_set_order(values) == expected_order(values, grown)


@pytest.mark.parametrize("n", DIFFERENT_TABLES)
def test_the_two_constructions_differ_where_the_tables_do(n: int) -> None:
    # n even numbers 0, 2, .. 2n - 2: past the grown table's end they wrap to the front
    values = list(range(0, 2 * n, 2))
    assert java_int_set_copy_order(values) == values  # the copy's table holds them all in order
    assert java_int_set_order(values) != values


def test_twelve_partitions_numbered_up_to_22() -> None:
    # the case behind issue #20: 12 partitions make a 32-bucket table when copied at once,
    # while 12 adds stay at 16 buckets (12 is not more than 3/4 of 16), so 16.. wrap around
    values = list(range(0, 24, 2))
    assert java_int_set_copy_order(values) == values
    assert java_int_set_order(values) == [0, 16, 2, 18, 4, 20, 6, 22, 8, 10, 12, 14]


def test_copy_constructor_with_repeated_elements_is_sized_by_the_collection() -> None:
    # HashSet(Collection) sizes by c.size(), repeats included: 12 listed (11 distinct) -> 32 buckets
    values = [16, *range(0, 22, 2)]  # 16 twice
    assert len(values) == 12 and len(set(values)) == 11
    assert JavaHashOrder.copy_of(values, int).capacity == 32
    assert java_int_set_copy_order(values) == expected_order(list(dict.fromkeys(values)), 32)


def test_copy_constructor_divides_in_float_as_java_does() -> None:
    # (int) (25165823 / .75f): the int rounds to the float 25165824, so the quotient is exactly 2**25
    # and the request 2**25 + 1 needs a table of 2**26 (in double it would be 2**25 - 1 + 1 -> 2**25)
    assert copy_constructor_capacity(25165823) == (1 << 25) + 1
    assert copy_constructor_capacity(0) == 16


# Tree bins. From 64 buckets on, a bucket that reaches 9 keys becomes a red-black tree, and Java
# then iterates it along a list threaded through the tree (root first), not in insertion order.
# Partition numbers a stride apart pile up in few buckets: what a member gets when a topic's
# partitions are dealt round-robin to its subscribers (the uniform assignor's heterogeneous
# builder does so). The expected orders are what JDK 17's HashSet printed for these lists.
STRIDE_16 = list(range(3, 628, 16))  # 40 numbers: a 64-bucket table, 10 in each of 4 buckets
JDK17_STRIDE_16 = [
    195, 3, 67, 131, 259, 323, 387, 451, 515, 579, 211, 19, 83, 147, 275, 339, 403, 467, 531, 595,
    227, 35, 99, 163, 291, 355, 419, 483, 547, 611, 243, 51, 115, 179, 307, 371, 435, 499, 563, 627,
]
STRIDE_32 = list(range(5, 1510, 32))  # 48 numbers: a 128-bucket table when copied, 12 in each of 4 buckets
JDK17_STRIDE_32_COPIED = [
    389, 5, 133, 261, 517, 645, 773, 901, 1029, 1157, 1285, 1413, 421, 37, 165, 293, 549, 677, 805, 933,
    1061, 1189, 1317, 1445, 453, 69, 197, 325, 581, 709, 837, 965, 1093, 1221, 1349, 1477, 485, 101, 229,
    357, 613, 741, 869, 997, 1125, 1253, 1381, 1509,
]
# added one at a time the table is 64 (48 is not more than 3/4 of 64), 24 keys in each of 2 buckets
JDK17_STRIDE_32_GROWN = [
    453, 197, 5, 69, 133, 261, 325, 389, 517, 581, 645, 709, 773, 837, 901, 965, 1029, 1093, 1157, 1221,
    1285, 1349, 1413, 1477, 485, 229, 37, 101, 165, 293, 357, 421, 549, 613, 677, 741, 805, 869, 933, 997,
    1061, 1125, 1189, 1253, 1317, 1381, 1445, 1509,
]


def test_tree_bins_of_a_set_built_at_once() -> None:
    assert java_int_set_copy_order(STRIDE_16) == JDK17_STRIDE_16
    assert java_int_set_copy_order(STRIDE_32) == JDK17_STRIDE_32_COPIED


def test_tree_bins_of_a_set_grown_one_add_at_a_time() -> None:
    assert java_int_set_order(STRIDE_16) == JDK17_STRIDE_16
    assert java_int_set_order(STRIDE_32) == JDK17_STRIDE_32_GROWN


# Java orders strings by UTF-16 code units: U+FFFD sorts after the surrogate pair of U+1F600, which
# Python's code point order puts last.
@pytest.mark.parametrize("texts", [
    ["b", "a", "", "ab", "a"],
    ["\U0001f600", "\ufffd", "x", "\ud7ff"],
    [f"member-{i}" for i in random.Random(3).sample(range(1000), 200)],
])
def test_java_sorted_positions_follow_utf16_order(texts: list[str]) -> None:
    by_units = sorted(range(len(texts)), key=lambda i: texts[i].encode("utf-16-be", "surrogatepass"))
    assert java_sorted_positions(texts) == by_units


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(["a", "Z", "\0", "é", "\u4e2d", "\U0001f600", "\ud800"]),
                        max_size=6), max_size=12))
def test_string_hashes_at_once_equal_one_by_one(texts: list[str]) -> None:
    """The bulk hashes (NUL-separated when no text has a NUL, else by lengths) are String.hashCode of each."""
    assert java_string_hashes(texts).tolist() == [java_string_hash(text) for text in texts]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), max_size=200, unique=True), st.sampled_from([None, 0, 1, 16, 40, 300]))
def test_iteration_order_of_arrays_equals_the_map_model(hashes: list[int], initial_capacity: int | None) -> None:
    """hash_iteration_order (arrays, a counting sort by bucket) walks keys as JavaHashOrder does."""
    model = JavaHashOrder(initial_capacity)
    for position, hash32 in enumerate(hashes):
        model.add(position, hash32)
    got = hash_iteration_order(np.array(hashes, dtype=np.int64), initial_capacity).tolist()
    assert got == model.keys()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 2**32 - 1), st.integers(0, 40).map(lambda k: 64 * k)), max_size=150,
                unique=True), st.sampled_from([None, 0, 1, 2, 13, 16, 40, 300]), st.booleans())
def test_compute_if_absent_order_equals_the_map_model(hashes: list[int], initial_capacity: int | None,
                                                      looked_up_after: bool) -> None:
    """compute_if_absent_order (arrays; keys 64 apart can make tree bins) walks keys as hashmap_positions'
    computeIfAbsent model does (new keys first in their bucket, the table grown before an insertion)."""
    got = compute_if_absent_order(np.array(hashes, dtype=np.int64), initial_capacity, looked_up_after).tolist()
    assert got == hashmap_positions(hashes, initial_capacity, compute_if_absent=True, looked_up_after=looked_up_after)


def test_compute_if_absent_order_of_colliding_keys() -> None:
    # JDK 17 (as tests/groups/share/test_simple.py has it): 0, 16, 32 share bucket 0 of 16, each new one first
    assert compute_if_absent_order(np.array([0, 16, 32, 1])).tolist() == [2, 1, 0, 3]
    assert compute_if_absent_order(np.array([*range(12), 16])).tolist() == [12, *range(12)]
    assert compute_if_absent_order(np.array([*range(12), 16]), looked_up_after=True).tolist() == list(range(13))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ABab\x00\u00e9\U0001f600", max_size=4), max_size=120),
       st.sampled_from([None, 0, 1, 16, 40]), st.integers(0, 300))
def test_string_key_order_equals_the_map_model(keys: list[str], initial_capacity: int | None,
                                               largest_size: int) -> None:
    """java_string_hash_order (bulk hashes, the array walk while the map never held more) orders keys as
    JavaHashOrder fed one put per key does, repeats keeping their first place ("Aa" and "BB" collide)."""
    model = JavaHashOrder(initial_capacity)
    for key in keys:
        model.add(key, java_string_hash(key))
    model.grow_for(largest_size)
    assert java_string_hash_order(keys, initial_capacity, largest_size) == model.keys()


# -- HashMap filled by computeIfAbsent (Kafka's CollectionUtils.groupPartitionsByTopic) ---------------------
# Each expected order was printed by a JDK 17 HashMap<String, Integer> given computeIfAbsent(key, ...) for every
# key in turn, repeats included.

@pytest.mark.parametrize("calls, java", [
    # a bucket iterates newest first: Aa2 and orders3 share bucket 2 of 16, put in that order
    ("BB4 pay1 Aa2 orders3 t0", "orders3 Aa2 BB4 t0 pay1"),
    # 13 keys stay in 16 buckets while no call follows the 13th (put would have grown to 32)
    ("topic0 topic1 topic2 topic3 topic4 topic5 topic6 topic7 topic8 topic9 topic10 topic11 topic12",
     "topic1 topic2 topic0 topic5 topic6 topic10 topic3 topic11 topic4 topic12 topic9 topic7 topic8"),
    # one more call (for a key already there) finds 13 > 12 and grows the table first
    ("topic0 topic1 topic2 topic3 topic4 topic5 topic6 topic7 topic8 topic9 topic10 topic11 topic12 topic0",
     "topic1 topic2 topic0 topic5 topic6 topic3 topic4 topic12 topic9 topic7 topic8 topic10 topic11"),
    ("k0 k1 k2 k3 k4 k5 k6 k7 k8 k9 k10 k11 k12", "k0 k1 k2 k3 k4 k11 k5 k10 k6 k7 k12 k8 k9"),
    # "Aa" and "BB" hash alike: ten colliding keys, a bucket of 8 grows the table below 64 buckets
    ("Aa BB AaAa BBBB AaBB BBAa AaAaAa BBBBBB AaAaBB BBAaAa", "BBAaAa AaAaBB BBBBBB AaAaAa BB Aa BBAa AaBB BBBB AaAa"),
])
def test_compute_if_absent_order_is_javas(calls: str, java: str) -> None:
    from kassign.core.javaorder import compute_if_absent_order, java_string_hashes

    keys = calls.split()
    distinct = list(dict.fromkeys(keys))
    looked_up_after = keys[-1] != distinct[-1] or keys.count(keys[-1]) > 1
    order = compute_if_absent_order(java_string_hashes(distinct), looked_up_after=looked_up_after)
    assert [distinct[i] for i in order.tolist()] == java.split()
