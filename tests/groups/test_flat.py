"""Columnar results (``kassign.assign_table``) and the checks on an assignor's own result."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import textwrap
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
import kassign.groups.flat as flat_module
from kassign import _accel
from kassign.core.errors import KassignError
from kassign.groups.classic.assignors.base import TopicPartition
from kassign.groups.flat import FlatAssignment, member_lists, pair_objects, pairs_by_member, sliced
from tests.conftest import vector_params

CLASSIC = ["range", "roundrobin", "sticky", "cooperative-sticky", "random", "broadcast", "load-aware"]
CONSUMER = ["uniform", "range"]


def rows(assignment: dict) -> list[tuple[str, str, int]]:
    return [(member, topic, partition) for member, pairs in assignment.items() for topic, partition in pairs]


def table_rows(table: pa.Table) -> list[tuple[str, str, int]]:
    return list(zip(table.column("member").to_pylist(), table.column("topic").to_pylist(),
                    table.column("partition").to_pylist()))


@st.composite
def scenarios(draw):
    topics = {f"t{i}": draw(st.integers(0, 6)) for i in range(draw(st.integers(1, 4)))}
    names = list(topics) + ["absent"]
    members = {}
    for i in range(draw(st.integers(0, 5))):
        member = {"topics": draw(st.lists(st.sampled_from(names), max_size=4))}
        owned = draw(st.lists(st.tuples(st.sampled_from(names), st.integers(-1, 7)), max_size=4, unique=True))
        if owned:
            member["owned"] = [list(pair) for pair in owned]
        members[draw(st.sampled_from(["b", "a", "Z", "é", "c10", "c9"])) + str(i)] = member
    return {"topics": topics, "members": members}


@settings(max_examples=150, deadline=None)
@given(scenarios(), st.sampled_from([("classic", s) for s in CLASSIC] + [("consumer", s) for s in CONSUMER]))
def test_table_is_the_same_assignment_as_the_dict(scenario, which) -> None:
    protocol, strategy = which
    options = {"seed": 3} if strategy == "random" else {}
    try:
        expected = kassign.assign(strategy, scenario, protocol=protocol, **options)
    except KassignError as err:  # e.g. two members holding one partition in the consumer protocol
        with pytest.raises(KassignError, match=str(err)[:30].replace("(", r"\(").replace("[", r"\[")):
            kassign.assign_table(strategy, scenario, protocol=protocol, **options)
        return
    table = kassign.assign_table(strategy, scenario, protocol=protocol, **options)
    assert table.schema.names == ["member", "topic", "partition"]
    assert table.schema.types == [pa.string(), pa.string(), pa.int32()]
    assert table_rows(table) == rows(expected)


@pytest.mark.parametrize("line", vector_params("assign-uniform.jsonl"))
def test_table_matches_kafkas_uniform_vectors(line: dict) -> None:
    if "expected" not in line:
        pytest.skip("an error line")
    expected = {m: [(t, p) for t, p in parts] for m, parts in sorted(line["expected"].items())}
    # the vectors' release
    table = kassign.assign_table("uniform", line["scenario"], protocol="consumer", kafka_version="4.0.0")
    assert table_rows(table) == rows(expected)


def test_worked_example_of_the_module_docstring() -> None:
    flat = FlatAssignment(["b", "a"], ["t1", "t0"], np.array([0, 1, 3]), np.array([0, 1, 0]))
    assert flat.to_dict() == {"a": [("t0", 0)], "b": [("t0", 1), ("t1", 0)]}
    assert table_rows(flat.to_table()) == [("a", "t0", 0), ("b", "t0", 1), ("b", "t1", 0)]
    assert flat.to_dict(["c"]) == {"a": [("t0", 0)], "b": [("t0", 1), ("t1", 0)], "c": []}


def reference_dict(flat: FlatAssignment, members: list[str]) -> dict[str, list[tuple[str, int]]]:
    """The dict shape the plain way, pair by pair (what to_dict built before it worked on columns)."""
    holders: list[tuple[int, int]]
    if flat.shared is not None:
        holders = list(zip(flat.shared[0].tolist(), flat.shared[1].tolist()))
    else:
        holders = [(m, f) for f, m in enumerate(flat.owner.tolist()) if m >= 0]
    result: dict[str, list[tuple[str, int]]] = {m: [] for m in [*flat.members, *members]}
    for m, f in holders:
        t = int(np.searchsorted(flat.offsets, f, side="right")) - 1
        result.setdefault(flat.members[m], []).append((flat.topics[t], f - int(flat.offsets[t])))
    return {m: sorted(pairs) for m, pairs in sorted(result.items())}


@st.composite
def flat_assignments(draw):
    members = draw(st.lists(st.sampled_from(["b", "a", "Z", "é", "c10", "c9", "m", "ü"]), unique=True, max_size=6))
    topics = draw(st.lists(st.sampled_from(["t1", "t0", "x", "ä", "t10"]), unique=True, max_size=4))
    counts = [draw(st.integers(0, 300)) for _ in topics]
    offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)
    total = int(offsets[-1])
    holder = st.integers(-1, len(members) - 1) if members else st.just(-1)
    owner = np.array(draw(st.lists(holder, min_size=total, max_size=total)), dtype=draw(st.sampled_from(
        [np.int64, np.int32])))
    shared = None
    if members and total and draw(st.booleans()):
        pairs = sorted(set(draw(st.lists(st.tuples(st.integers(0, len(members) - 1), st.integers(0, total - 1)),
                                         max_size=40))))
        shared = (np.array([m for m, _ in pairs], dtype=np.int64), np.array([f for _, f in pairs], dtype=np.int64))
    return FlatAssignment(members, topics, offsets, owner, shared=shared)


@settings(max_examples=200, deadline=None)
@given(flat_assignments(), st.lists(st.sampled_from(["a", "new", "zz"]), max_size=2))
def test_dict_and_table_equal_the_pair_by_pair_reference(flat: FlatAssignment, extra: list[str]) -> None:
    expected = reference_dict(flat, extra)
    got = flat.to_dict(extra)
    assert got == expected
    assert list(got) == list(expected)  # members sorted
    assert all(type(pair) is tuple for pairs in got.values() for pair in pairs)
    assert table_rows(flat.to_table()) == rows({m: p for m, p in expected.items() if p})


@settings(max_examples=200, deadline=None)
@given(flat_assignments(), st.lists(st.sampled_from(["a", "new", "zz"]), max_size=2))
def test_members_known_sorted_skip_the_sort_with_the_same_result(flat: FlatAssignment, extra: list[str]) -> None:
    """A reader that saw the ids in ascending order says so (members_sorted): no sort, the same answer."""
    ordered = dataclasses.replace(flat, members=sorted(flat.members))
    ordered = dataclasses.replace(ordered, owner=_renumbered(flat, ordered.members), shared=None)
    known = dataclasses.replace(ordered, members_sorted=True)
    assert known.to_dict(extra) == ordered.to_dict(extra) and list(known.to_dict(extra)) == list(ordered.to_dict(extra))
    assert known.to_table().equals(ordered.to_table())


def _renumbered(flat: FlatAssignment, members: list[str]) -> np.ndarray:
    """``flat``'s owner array with members numbered by their place in ``members``."""
    place = np.array([members.index(m) for m in flat.members] + [-1], dtype=np.int64)
    return place[np.asarray(flat.owner, dtype=np.int64)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 14), max_size=40), st.data())
def test_member_lists_equal_one_slice_per_member(lengths: list[int], data) -> None:
    """Lists made count by count (few distinct counts) or slice by slice (many) are the plain slices."""
    bounds = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)
    rows = int(bounds[-1])
    topics = ["t0", "t1", "t2"]
    topic = np.array(data.draw(st.lists(st.integers(0, 2), min_size=rows, max_size=rows)), dtype=np.int64)
    partition = np.array(data.draw(st.lists(st.integers(0, 9), min_size=rows, max_size=rows)), dtype=np.int64)
    pairs = pair_objects(topics, topic, partition)
    got = member_lists(np.fromiter(pairs, dtype=object, count=len(pairs)), bounds)
    assert got == list(sliced(pairs, bounds))
    assert all(type(pairs) is list for pairs in got) and len({id(pairs) for pairs in got}) == len(got)


@settings(max_examples=50, deadline=None)
@given(flat_assignments())
def test_dict_without_kept_tuples_is_the_same(flat: FlatAssignment) -> None:
    """Layouts too big to keep their tuples build each row's tuple instead, with the same result;
    and a kept layout's tuples give the same dict when asked again."""
    kept = flat.to_dict()
    assert flat.to_dict() == kept
    limit = flat_module._KEPT_PAIRS_AT_MOST
    flat_module._KEPT_PAIRS_AT_MOST = -1
    try:
        assert flat.to_dict() == kept == reference_dict(flat, [])
    finally:
        flat_module._KEPT_PAIRS_AT_MOST = limit


@contextlib.contextmanager
def python_builders(kept_pairs_at_most: int) -> Iterator[None]:
    """The pure-Python builders (kassign._native set aside), with layouts of at most ``kept_pairs_at_most``
    partitions keeping their tuples."""
    native, limit = _accel.native, flat_module._KEPT_PAIRS_AT_MOST
    _accel.native, flat_module._KEPT_PAIRS_AT_MOST = None, kept_pairs_at_most
    try:
        yield
    finally:
        _accel.native, flat_module._KEPT_PAIRS_AT_MOST = native, limit


@settings(max_examples=200, deadline=None)
@given(flat_assignments(), st.lists(st.sampled_from(["a", "new", "zz"]), max_size=2), st.booleans())
def test_native_and_python_builders_give_the_same_dict(flat: FlatAssignment, extra: list[str], keep: bool) -> None:
    """kassign._native.member_pairs, sharing kept tuples or making its own, equals the Python builders."""
    if _accel.native is None:
        pytest.skip("kassign._native is not built here: only the Python builders run")
    limit = flat_module._KEPT_PAIRS_AT_MOST if keep else -1
    with python_builders(limit):
        expected = flat.to_dict(extra)
    flat_module._KEPT_PAIRS_AT_MOST, was = limit, flat_module._KEPT_PAIRS_AT_MOST
    try:
        got = flat.to_dict(extra)
    finally:
        flat_module._KEPT_PAIRS_AT_MOST = was
    assert got == expected and list(got) == list(expected)
    assert all(type(pairs) is list for pairs in got.values())
    assert all(type(pair) is tuple and type(pair[0]) is str and type(pair[1]) is int
               for pairs in got.values() for pair in pairs)
    assert len({id(pairs) for pairs in got.values()}) == len(got)  # no list shared between members


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=30), st.data(), st.sampled_from([None, TopicPartition]))
def test_pairs_by_member_in_c_and_in_python(lengths: list[int], data, pair_type) -> None:
    """New pairs per member, as tuples (the dict API) or TopicPartitions (the assignor classes), alike from
    the C pass and from the Python builder, and alike to plain slices of the pairs."""
    names = [f"m{i}" for i in range(len(lengths))]
    bounds = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)
    rows = int(bounds[-1])
    topics = ["t0", "t1", "t2"]
    topic = np.array(data.draw(st.lists(st.integers(0, 2), min_size=rows, max_size=rows)), dtype=np.int64)
    partition = np.array(data.draw(st.lists(st.integers(0, 70_000), min_size=rows, max_size=rows)), dtype=np.int64)
    with python_builders(flat_module._KEPT_PAIRS_AT_MOST):
        expected = pairs_by_member(names, bounds, topics, topic, partition, pair_type)
    got = pairs_by_member(names, bounds, topics, topic, partition, pair_type)
    assert got == expected == dict(zip(names, sliced(pair_objects(topics, topic, partition), bounds)))
    kind = tuple if pair_type is None else pair_type
    assert all(type(pair) is kind for pairs in [*got.values(), *expected.values()] for pair in pairs)


def test_members_and_topics_given_as_tuples() -> None:
    """An assignor's own FlatAssignment may hold tuples where kassign's hold lists."""
    flat = FlatAssignment(("b", "a"), ("t1", "t0"), np.array([0, 1, 3]), np.array([0, 1, 0]))
    expected = {"a": [("t0", 0)], "b": [("t0", 1), ("t1", 0)]}
    assert flat.to_dict() == expected
    with python_builders(flat_module._KEPT_PAIRS_AT_MOST):
        assert flat.to_dict() == expected


def test_to_dict_keeps_the_collector_as_it_found_it() -> None:
    import gc

    gc.disable()
    try:
        FlatAssignment(["a"], ["t"], np.array([0, 2]), np.array([0, 0])).to_dict()
        assert not gc.isenabled()
    finally:
        gc.enable()
    FlatAssignment(["a"], ["t"], np.array([0, 2]), np.array([0, 0])).to_dict()
    assert gc.isenabled()


@pytest.mark.parametrize("protocol", ["classic", "share"])
@pytest.mark.parametrize("scenario", [{"topics": {"t": 2}, "members": {"a": {"topics": ["t"]}}},
                                      {"topics": {"t": 2}, "members": {"a": {"topics": "t"}}}])  # read, refused
def test_the_dict_api_reads_with_the_collector_off_and_leaves_it_as_it_found_it(scenario, protocol) -> None:
    """kassign.assign reads a scenario with the cyclic collector off (kassign.api._read); on success and on a
    refused document alike the collector is left on if it was on, off if it was off."""
    import gc

    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            with contextlib.suppress(KassignError):
                kassign.assign("sticky" if protocol == "classic" else "simple", scenario, protocol=protocol)
            assert gc.isenabled() == enabled
        finally:
            gc.enable()


# -- an assignor's own result is checked, naming the assignor and the first problem ---------------

SCENARIO = {"topics": {"t0": 3, "t1": 2}, "members": {"A": {"topics": ["t0"]}, "B": {"topics": ["t0", "t1"]}}}

BAD_RESULTS = [
    ("[]", "returned list, expected a mapping"),
    ("{'Z': []}", r"unknown members \['Z'\]"),
    ("{'A': [('t0', 0)], 'B': [('t0', 0)]}", "assigned t0-0 to both 'A' and 'B'"),
    ("{'A': [('nope', 0)]}", "no member subscribes to a topic 'nope'"),
    ("{'A': [('t0', 3)]}", r"'t0' has partitions 0..2"),
    ("{'A': [('t0', -1)]}", r"'t0' has partitions 0..2"),
    ("{'A': [('t1', 0)]}", "'A', which does not subscribe to 't1'"),
    ("{'A': 5}", "returned int for 'A'"),
    ("{'A': [('t0', '0')]}", r"returned \('t0', '0'\) for 'A'"),
]


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    def write(body: str) -> str:
        name = f"user_assignor_{abs(hash(body))}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
        monkeypatch.syspath_prepend(str(tmp_path))
        sys.modules.pop(name, None)
        return name
    return write


@pytest.mark.parametrize(("returned", "message"), BAD_RESULTS)
def test_a_users_invalid_result_is_refused(user_module, returned: str, message: str) -> None:
    module = user_module(f"""
        from kassign.groups.classic.assignors import ConsumerPartitionAssignor

        class Mine(ConsumerPartitionAssignor):
            name = "mine"

            def assign(self, cluster, subscriptions):
                return {returned}
    """)
    with pytest.raises(KassignError, match=f"assignor 'mine'.*{message}"):
        kassign.assign(f"{module}:Mine", SCENARIO)
    with pytest.raises(KassignError, match=message):
        kassign.assign_table(f"{module}:Mine", SCENARIO)


def test_a_users_assignor_that_raises_is_named(user_module) -> None:
    module = user_module("""
        from kassign.groups.classic.assignors import ConsumerPartitionAssignor

        class Boom(ConsumerPartitionAssignor):
            name = "boom"

            def assign(self, cluster, subscriptions):
                raise ZeroDivisionError("division by zero")
    """)
    with pytest.raises(KassignError, match="assignor 'boom' failed: ZeroDivisionError: division by zero"):
        kassign.assign(f"{module}:Boom", SCENARIO)


def test_a_users_assignor_that_cannot_be_built_is_named(user_module) -> None:
    module = user_module("""
        from kassign.groups.classic.assignors import ConsumerPartitionAssignor

        class Fragile(ConsumerPartitionAssignor):
            name = "fragile"

            def __init__(self):
                raise RuntimeError("no config")

            def assign(self, cluster, subscriptions):
                return {}
    """)
    with pytest.raises(KassignError, match="could not be created: RuntimeError: no config"):
        kassign.assign(f"{module}:Fragile", SCENARIO)


def test_a_partition_to_several_members_only_when_the_assignor_says_so(user_module) -> None:
    module = user_module("""
        from kassign.groups.classic.assignors import ConsumerPartitionAssignor

        class Fan(ConsumerPartitionAssignor):
            name = "fan"
            exclusive = False

            def assign(self, cluster, subscriptions):
                return {m: [("t0", 0)] for m in subscriptions}
    """)
    assert kassign.assign(f"{module}:Fan", SCENARIO) == {"A": [("t0", 0)], "B": [("t0", 0)]}
    assert table_rows(kassign.assign_table(f"{module}:Fan", SCENARIO)) == [("A", "t0", 0), ("B", "t0", 0)]
