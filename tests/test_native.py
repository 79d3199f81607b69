"""kassign._native, the dict API's edges in C: built wherever a C compiler and Python's headers are,
no reference leaked or dropped on any path (read, declined, failed), bad arguments refused instead of
read out of bounds. Its results against the Python paths: tests/groups/test_scenario_members.py (reading
members) and tests/groups/test_flat.py (building the result dict)."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kassign import _accel
from kassign.groups.classic.assignors.base import TopicPartition

native = _accel.native
needs_native = pytest.mark.skipif(native is None, reason="kassign._native is not built here (or KASSIGN_NO_NATIVE "
                                                         "is set): the pure-Python paths serve")


def test_built_wherever_a_compiler_is() -> None:
    """A failed build is only a warning in pip's output (the extension is optional): caught here instead."""
    if os.environ.get("KASSIGN_NO_NATIVE", "") not in ("", "0"):
        pytest.skip("KASSIGN_NO_NATIVE is set")
    compiler = shutil.which("cc") or shutil.which("gcc")
    headers = Path(sysconfig.get_paths()["include"], "Python.h").exists()
    if not (compiler and headers):
        pytest.skip(f"no C compiler ({compiler}) or no Python.h ({headers}): the pure-Python paths serve")
    assert native is not None, "a C compiler and Python's headers are here, yet kassign._native did not build"


def test_switched_off_by_the_environment() -> None:
    code = "from kassign import _accel; print(_accel.native is None)"
    env = {**os.environ, "KASSIGN_NO_NATIVE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


def refcounts(objects: list[Any]) -> list[int]:
    return [sys.getrefcount(o) for o in objects]


class Trap:
    """A key equal in hash to "rack" whose comparison raises: reading an entry that holds it fails."""

    def __hash__(self) -> int:
        return hash("rack")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("compared")


def documents(topics: list[str], owned_topic: str, numbers: list[int]) -> dict[str, Any]:
    """Documents that are read, declined at the last member, and failed at the last member."""
    plain = {f"m{i}": {"topics": topics, "owned": [[owned_topic, numbers[i]]], "generation": numbers[i],
                       "rack": owned_topic} for i in range(len(numbers))}
    declined = {**plain, "last": {"topics": topics, "owned": [[owned_topic, np.int64(1)]]}}
    failing = {**plain, "last": {"topics": topics, Trap(): 1}}
    return {"read": plain, "declined": declined, "failing": failing}


@needs_native
@pytest.mark.parametrize("case", ["read", "declined", "failing"])
def test_reading_keeps_every_reference_count(case: str) -> None:
    topics, owned_topic = ["t0", "t1"], "t-owned-" + "x" * 3
    numbers = [100_000 + i for i in range(20)]  # not cached small ints
    doc = documents(topics, owned_topic, numbers)[case]
    watched = [doc, topics, owned_topic, *numbers, *doc.values(), *doc]
    before = refcounts(watched)
    for _ in range(50):
        try:
            result = native.read_members(doc, TopicPartition)
        except RuntimeError:
            assert case == "failing"
        else:
            assert (result is None) == (case == "declined")
            del result
    assert refcounts(watched) == before


@needs_native
def test_building_keeps_every_reference_count_and_untracks_the_pairs() -> None:
    names, topics = ["a", "b", "c"], ["topic-x", "topic-y"]
    bounds = np.array([0, 2, 2, 5], dtype=np.int64)
    topic = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    partition = np.array([3, 0, 70_000, 3, 70_000], dtype=np.int64)  # 70,000: past CPython's cached small ints
    kept = [(t, p) for t in topics for p in range(4)]
    flat = np.array([3, 4, 5, 0, 7], dtype=np.int64)
    watched = [*names, *topics, *kept, TopicPartition]
    before = refcounts(watched)
    for _ in range(50):
        built = native.member_pairs(names, bounds, topic, partition, topics, None, None)
        assert built == {"a": [("topic-x", 3), ("topic-y", 0)], "b": [],
                         "c": [("topic-y", 70_000), ("topic-x", 3), ("topic-y", 70_000)]}
        assert built["c"][0] is not built["c"][2] and built["c"][0][1] is built["c"][2][1]  # one int per number
        assert not gc.is_tracked(built["a"][0])  # a str and an int: no cycle possible
        named = native.member_pairs(names, bounds, topic, partition, topics, None, None,
                                    TopicPartition if native.PAIR_TYPES else None)
        assert named == built and named["c"][1][1] == 3
        if native.PAIR_TYPES:  # Python before 3.14 (kassign.groups.flat uses its Python builder for pair types after)
            assert type(named["c"][1]) is TopicPartition and named["c"][1].partition == 3
            assert hash(named["c"][1]) == hash(("topic-x", 3))
        assert not gc.is_tracked(named["a"][0])
        shared = native.member_pairs(names, bounds, None, None, topics, flat, kept)
        assert shared == {"a": [kept[3], kept[4]], "b": [], "c": [kept[5], kept[0], kept[7]]}
        assert shared["a"][0] is kept[3]
        del built, named, shared
    assert refcounts(watched) == before


@needs_native
def test_a_huge_partition_number_costs_no_table_of_that_size() -> None:
    """Partition numbers share one int object per number through a table indexed by number; a pair naming
    partition 2**31 - 1 (a Java int, as a scenario may claim it) must not make that table 2**31 entries
    long (16 GiB asked for, and a walk over every entry: 8 s a call)."""
    import tracemalloc

    names, topics = ["a", "b"], ["t"]
    bounds = np.array([0, 2, 3], dtype=np.int64)
    topic = np.zeros(3, dtype=np.int64)
    partition = np.array([2**31 - 1, 5, 2**31 - 1], dtype=np.int64)
    tracemalloc.start()
    try:
        built = native.member_pairs(names, bounds, topic, partition, topics, None, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert built == {"a": [("t", 2**31 - 1), ("t", 5)], "b": [("t", 2**31 - 1)]}
    assert peak < 2 << 20, f"{peak:,} bytes at the peak"


BAD_BUILDS = [
    ({"bounds": np.array([0, 1], dtype=np.int64)}, ValueError, "bounds do not match"),
    ({"bounds": np.array([0, 3, 2, 5], dtype=np.int64)}, ValueError, "must not decrease"),
    ({"bounds": np.array([1, 2, 3, 5], dtype=np.int64)}, ValueError, "bounds do not match"),
    ({"topic": np.array([0, 1, 2, 0, 1], dtype=np.int64)}, IndexError, "out of range"),
    ({"topic": np.array([0, 1, -1, 0, 1], dtype=np.int64)}, IndexError, "out of range"),
    ({"partition": np.array([0, -1, 0, 0, 0], dtype=np.int64)}, IndexError, "out of range"),
    ({"partition": np.array([0, 2**31, 0, 0, 0], dtype=np.int64)}, IndexError, "out of range"),
    ({"partition": np.zeros(4, dtype=np.int64)}, ValueError, "bounds do not match"),
    ({"topic": np.zeros(5, dtype=np.int32)}, TypeError, "int64"),
    ({"topic": np.zeros(10, dtype=np.int64)[::2]}, (TypeError, ValueError, BufferError), None),
    ({"flat": np.array([0, 1, 2, 3, 8], dtype=np.int64), "kept": [("t", p) for p in range(8)]}, IndexError,
     "outside the kept pairs"),
    ({"kept": ("not", "a", "list")}, TypeError, "kept pairs"),
    ({"pair_type": int}, TypeError, "tuple subclass|before 3.14"),
    ({"pair_type": TopicPartition("t", 0)}, TypeError, "tuple subclass|before 3.14"),
    ({"pair_type": type("WithDict", (tuple,), {})}, TypeError, "tuple subclass|before 3.14"),  # has a __dict__
]


@needs_native
@pytest.mark.parametrize(("change", "error", "message"), BAD_BUILDS)
def test_bad_columns_are_refused_not_read(change: dict[str, Any], error: Any, message: str | None) -> None:
    args = {"names": ["a", "b", "c"], "bounds": np.array([0, 2, 2, 5], dtype=np.int64),
            "topic": np.zeros(5, dtype=np.int64), "partition": np.zeros(5, dtype=np.int64), "topic_names": ["t"],
            "flat": None, "kept": None, "pair_type": None}
    if "flat" in change or "kept" in change:
        args.update(flat=np.zeros(5, dtype=np.int64), kept=[("t", 0)])
    args.update(change)
    with pytest.raises(error, match=message):
        native.member_pairs(*args.values())


@needs_native
def test_building_from_arrays_keeps_every_reference_count() -> None:
    """owner_pairs (from an owner array, int32 or int64) and shared_pairs (from (member, flat id) pairs), with
    new pairs and with kept ones: the same dicts as member_pairs, no reference gained or lost."""
    names, topics = ["a", "b", "c"], ["topic-y", "topic-x"]  # topic_order [1, 0]: x first
    offsets = np.array([0, 3, 70_003], dtype=np.int64)  # y: 3 partitions, x: 70,000 (past the cached small ints)
    owner = np.full(70_003, -1, dtype=np.int64)
    owner[[0, 2, 3 + 69_999, 3]] = [2, 0, 2, 0]  # members numbered c, a, b below: rank [2, 0, 1]
    rank, order = np.array([2, 0, 1], dtype=np.int64), np.array([1, 0], dtype=np.int64)
    kept = [(t, p) for t, size in zip(topics, (3, 70_000)) for p in range(size)]
    # owner: member 2 ("b") holds y-0 and x-69999, member 0 ("c") y-2 and x-0; "a" nothing
    expected = {"a": [], "b": [("topic-x", 69_999), ("topic-y", 0)], "c": [("topic-x", 0), ("topic-y", 2)]}
    # shared pairs: member 1 ("a") holds x-0 and y-2, member 0 ("c") x-69999 and y-0, listed out of order
    member, flat = np.array([1, 0, 0, 1], dtype=np.int64), np.array([3, 3 + 69_999, 0, 2], dtype=np.int64)
    expected_shared = {"a": [("topic-x", 0), ("topic-y", 2)], "b": [], "c": [("topic-x", 69_999), ("topic-y", 0)]}
    watched = [*names, *topics, *kept[:5], kept[-1]]
    before = refcounts(watched)
    for _ in range(20):
        for dtype in (np.int64, np.int32):
            built = native.owner_pairs(names, rank, owner.astype(dtype), order, offsets, topics, None)
            assert built == expected and list(built) == names
            assert not gc.is_tracked(built["b"][0])
            assert native.owner_pairs(names, rank, owner.astype(dtype), order, offsets, topics, kept) == expected
        shared = native.shared_pairs(names, rank, member, flat, order, offsets, topics, kept)
        assert shared == expected_shared and list(shared) == names and shared["a"][1] is kept[2]
        made = native.shared_pairs(names, rank, member, flat, order, offsets, topics, None)
        assert made == expected_shared and made["a"][1] is not kept[2] and not gc.is_tracked(made["a"][1])
        del built, shared, made
    assert refcounts(watched) == before


BAD_ARRAYS = [
    ("owner", {"owner": np.array([0, 3], dtype=np.int64)}, IndexError, "owner out of range"),
    ("owner", {"owner": np.array([0, 1], dtype=np.int16)}, TypeError, "int32 or int64"),
    ("owner", {"owner": np.array([0], dtype=np.int64)}, ValueError, "do not match"),
    ("both", {"member_rank": np.array([0, 1, 3], dtype=np.int64)}, IndexError, "rank out of range"),
    ("both", {"member_rank": np.array([0, 1], dtype=np.int64)}, ValueError, "do not match"),
    ("both", {"offsets": np.array([0, 3, 2], dtype=np.int64)}, ValueError, "do not match|must not decrease"),
    ("both", {"kept": [("t", 0)]}, ValueError, "do not match"),
    ("both", {"kept": ("t", "u")}, TypeError, "kept pairs"),
    ("both", {"pair_type": int}, TypeError, "tuple subclass"),
    ("owner", {"topic_order": np.array([2], dtype=np.int64)}, IndexError, "topic number out of range"),
    ("shared", {"topic_order": np.array([0, 0], dtype=np.int64)}, ValueError, "every topic once"),
    ("shared", {"topic_order": np.array([1], dtype=np.int64)}, ValueError, "do not match"),
    ("shared", {"member": np.array([0, 3], dtype=np.int64)}, IndexError, "out of range"),
    ("shared", {"flat": np.array([0, 2], dtype=np.int64)}, IndexError, "out of range"),
    ("shared", {"flat": np.array([0], dtype=np.int64)}, ValueError, "do not match"),
]


@needs_native
@pytest.mark.parametrize(("which", "change", "error", "message"), BAD_ARRAYS)
def test_bad_arrays_are_refused_not_read(which: str, change: dict[str, Any], error: Any, message: str) -> None:
    """Two topics of one partition each; three members."""
    common = {"names": ["a", "b", "c"], "member_rank": np.array([0, 1, 2], dtype=np.int64)}
    layout = {"topic_order": np.array([1, 0], dtype=np.int64), "offsets": np.array([0, 1, 2], dtype=np.int64),
              "topic_names": ["t", "u"], "kept": None, "pair_type": None}
    calls = {"owner": (native.owner_pairs, {**common, "owner": np.array([0, -1], dtype=np.int64), **layout}),
             "shared": (native.shared_pairs, {**common, "member": np.array([0, 2], dtype=np.int64),
                                              "flat": np.array([0, 1], dtype=np.int64), **layout})}
    for name, (call, args) in calls.items():
        if which in (name, "both"):
            args = {**args, **{key: value for key, value in change.items() if key in args}}
            with pytest.raises(error, match=message):
                call(*args.values())


def big_build(rows: int, members: int = 1_000) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Arguments of member_pairs for ``rows`` new pairs over ``members`` members and 50 topics."""
    names = [f"m{i:04d}" for i in range(members)]
    bounds = np.linspace(0, rows, members + 1).astype(np.int64)
    topic = np.arange(rows, dtype=np.int64) % 50
    partition = np.arange(rows, dtype=np.int64) // 50
    return names, bounds, topic, partition, [f"t{i}" for i in range(50)]


def virtual_size() -> int:
    """This process's mapped memory in bytes (pages mapped, touched or not)."""
    return int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")


needs_huge_arenas = pytest.mark.skipif(native is None or not native.arenas_served()[0],
                                       reason="arenas in huge pages are built on Linux only")


HUGE_ARENAS_PROBE = """
import numpy as np
from kassign import _native
from tests.test_native import big_build
names, bounds, topic, partition, topics = big_build(300_000)
before = _native.arenas_served()[1]
built = _native.member_pairs(names, bounds, topic, partition, topics, None, None)
served = _native.arenas_served()[1] - before
assert built[names[-1]][-1] == (topics[int(topic[-1])], int(partition[-1]))
others = [(i, str(i)) for i in range(300_000)]
small = _native.member_pairs(*big_build(1_000, members=10), None, None)
shared = _native.member_pairs(names[:2], np.array([0, 1, 2]), None, None, topics, np.array([0, 1]), [("t", 0)] * 2)
print(served, _native.arenas_served()[1] - before - served)
"""


@needs_huge_arenas
def test_a_large_build_takes_its_arenas_in_huge_pages_and_only_it() -> None:
    """In a fresh interpreter (a long-lived one may have room left in arenas it already has)."""
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", HUGE_ARENAS_PROBE], cwd=root, capture_output=True, text=True,
                         check=True, timeout=120).stdout
    served, afterwards = map(int, out.split())
    assert served >= 300_000 * 56 // (1 << 20) - 2  # about one 1 MiB arena per 18,000 pairs of 56 bytes
    # Afterwards CPython's own allocator serves again: other objects, a small build, shared pairs take none.
    assert afterwards == 0


GIVEN_BACK_PROBE = """
import gc
from kassign import _native
from tests.test_native import big_build, virtual_size

def build_and_drop(rows):
    names, bounds, topic, partition, topics = big_build(rows)
    built = _native.member_pairs(names, bounds, topic, partition, topics, None, None)
    assert sum(map(len, built.values())) == rows
    del built
    gc.collect()

build_and_drop(400_000)
first = virtual_size()
for round_number in range(40):
    build_and_drop(400_000 + round_number * 9_000)  # arena counts odd and even: a spare half at times
print(virtual_size() - first)
"""


@needs_huge_arenas
def test_huge_page_arenas_are_given_back() -> None:
    """Results built and dropped again and again map no more memory than the first: CPython unmaps
    the arenas like its own, and the half chunk a build leaves unused is unmapped at once (in a fresh
    interpreter, where no other thread maps memory meanwhile)."""
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", GIVEN_BACK_PROBE], cwd=root, capture_output=True, text=True,
                         check=True, timeout=300).stdout
    assert int(out) < 24 << 20


@needs_native
def test_a_large_build_equals_the_python_builder() -> None:
    from kassign.groups.flat import pair_objects, sliced
    names, bounds, topic, partition, topics = big_build(150_000, members=700)
    built = native.member_pairs(names, bounds, topic, partition, topics, None, None)
    expected = dict(zip(names, sliced(pair_objects(topics, topic, partition), bounds)))
    assert built == expected
