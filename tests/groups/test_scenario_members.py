"""Members read column by column (the plain JSON shape) and member by member (everything else)
must agree: each bulk reader (in C where kassign._native is built, and in Python) may only accept
what the member-by-member reader accepts, with the same result, so every error still comes from
one place with one message."""

from __future__ import annotations

import json
from collections import OrderedDict
from enum import IntEnum
from types import MappingProxyType
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign.groups.classic.assignors import get_assignor
from kassign.groups.classic.assignors.base import Assignment, TopicPartition
from kassign.groups.classic.assignors.cooperative_sticky import CooperativeStickyAssignor
from kassign.groups.classic.assignors.eager_sticky import StickyAssignor
from kassign.core.errors import ScenarioError
from kassign.core.javaorder import java_string_hashes
from kassign.groups.scenario import (
    Members,
    MemberSpec,
    Scenario,
    _check_instance_ids,
    _members_at_once,
    _members_column_by_column,
    _members_natively,
    _members_one_by_one,
    parse_scenario,
)
from kassign import _accel
from tests.conftest import load_vectors

NAMES = st.sampled_from(["t0", "t1", "t2"])


class Level(IntEnum):  # an int subclass: accepted, as int(value)
    TWO = 2


# Per place in a member entry, what a Python caller might put there instead: wrong types, numpy
# scalars (accepted where ints go), str subclasses, Java's int bounds and one beyond.
NEAR_MISSES: dict[str, list[Any]] = {
    "member id": [7, None, True, b"m", np.str_("m")],
    "entry": [None, [], ["t0"], "t0", MappingProxyType({"topics": ["t0"]}), OrderedDict(topics=["t0"])],
    "topics": [None, "t0", {"t0": 1}, ("t0",), [], ["t0", 3], ["t0", None], [np.str_("t0")], [b"t0"], [True],
               [["t0"]]],
    "topic in list": [3, None, True, b"t0", np.str_("t0"), ("t0",)],
    "owned": [None, "t0", {}, (), [], ("t0", 1), {"t0": 1}],
    "pair": [None, "t0", ["t0"], ["t0", 1, 2], [1, "t0"], ["t0", True], ["t0", 1.5], ["t0", "1"], ["t0", None],
             ["t0", 2**31 - 1], ["t0", 2**31], ("t0", -(2**31)), ("t0", -(2**31) - 1), ["t0", np.int16(2)],
             ["t0", np.uint8(3)], ["t0", np.uint64(2**63)], ["t0", np.int64(-(2**31) - 1)], ["t0", Level.TWO],
             ["t0", np.bool_(True)], [np.str_("t0"), 1], [b"t0", 1], TopicPartition("t0", 1),
             TopicPartition("t0", np.int16(1)), TopicPartition(np.str_("t0"), 1), {"t0": 1}, {0: "t0", 1: 1}],
    "generation": [None, True, 1.5, "7", 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, np.int32(3), np.bool_(True),
                   np.uint64(2**63), np.int8(-3), Level.TWO],
    "rack": [None, 3, True, b"r", np.str_("r"), ["r"]],
    "instance_id": [None, 3, True, b"h", np.str_("h"), "host-shared"],
    "colour": [1],
}


@st.composite
def member_documents(draw: Any) -> dict[Any, Any]:
    """A plain members object (members share topic-list objects, as Python callers' often do),
    then, half the time, one near miss somewhere."""
    pool = draw(st.lists(st.lists(NAMES, max_size=3), min_size=1, max_size=3))
    members: dict[Any, Any] = {}
    for i in range(draw(st.integers(0, 5))):
        topics = draw(st.sampled_from(pool))
        entry: dict[str, Any] = {"topics": topics if draw(st.booleans()) else list(topics)}
        if draw(st.booleans()):
            entry["owned"] = draw(st.lists(st.tuples(NAMES, st.integers(-1, 4)).map(list), max_size=3))
        if draw(st.booleans()):
            entry["generation"] = draw(st.integers(-1, 9))
        if draw(st.booleans()):
            entry["rack"] = draw(st.sampled_from(["r0", "r1", None]))
        if draw(st.booleans()):
            entry["instance_id"] = draw(st.sampled_from([f"host-{i}", "host-shared", None]))
        members[f"m{i}"] = entry
    if members and draw(st.booleans()):
        place = draw(st.sampled_from([*NEAR_MISSES, "no topics"]))
        _put(members, draw(st.sampled_from(sorted(members))), place,
             None if place == "no topics" else draw(st.sampled_from(NEAR_MISSES[place])))
    return members


def _put(members: dict[Any, Any], member_id: str, place: str, value: Any) -> None:
    entry = members[member_id]
    if place == "member id":
        members[value] = members.pop(member_id)
    elif place == "entry":
        members[member_id] = value
    elif place == "no topics":
        del entry["topics"]
    elif place == "topic in list":
        entry["topics"] = [*entry["topics"], value]
    elif place == "pair":
        entry["owned"] = [*entry.get("owned", []), value]
    else:
        entry[place] = value


def read_member_by_member(members: Any) -> Members:
    """The member-by-member reader, then the instance-id check parse_scenario runs after either reader."""
    result = _members_one_by_one(members)
    _check_instance_ids(result)
    return result


BULK_READERS = {"column by column": _members_column_by_column, "natively": _members_natively}


def assert_same(bulk: Members, one_by_one: Members) -> None:
    for column in ("ids", "subscriptions", "owned_topics", "generations", "racks", "instance_ids"):
        got, want = getattr(bulk, column), getattr(one_by_one, column)
        assert got == want and list(map(type, got)) == list(map(type, want)), column
    for column in ("subscription", "owned_start", "owned_partitions"):
        got, want = getattr(bulk, column), getattr(one_by_one, column)
        assert got.dtype == want.dtype and np.array_equal(got, want), column
    names, code = bulk.owned_topics_coded()
    assert [names[c] for c in code.tolist()] == one_by_one.owned_topics
    assert names == list(dict.fromkeys(one_by_one.owned_topics))  # distinct, in order of first listing
    assert dict(bulk.items()) == dict(one_by_one.items())
    # what a reader learnt on the way, where it says it did
    assert np.array_equal(bulk.java_id_hashes(), java_string_hashes(one_by_one.ids))
    if bulk.ids_ascending is not None:
        assert bulk.ids_ascending == (one_by_one.ids == sorted(one_by_one.ids))
    if bulk.ascii:
        assert all(text.isascii() for text in [*one_by_one.ids, *one_by_one.owned_topics])


def assert_readers_agree(members: Any) -> None:
    """Each bulk reader accepts only what the member-by-member reader accepts, with the same result;
    parse_scenario raises exactly what the member-by-member reader (then the instance-id check) raises."""
    for name, reader in BULK_READERS.items():
        bulk = reader(members)
        try:
            one_by_one = _members_one_by_one(members)
        except ScenarioError as err:
            assert bulk is None, f"the bulk reader {name} accepted what the member-by-member reader refuses: {err}"
        else:
            if bulk is not None:
                assert_same(bulk, one_by_one)
    doc = {"topics": {"t0": 3, "t1": 1}, "members": members}
    try:
        expected = read_member_by_member(members)
    except ScenarioError as err:
        with pytest.raises(ScenarioError) as raised:
            parse_scenario(doc)
        assert str(raised.value) == str(err)
        return
    assert_same(parse_scenario(doc).members, expected)


@pytest.mark.parametrize(("place", "value"), [
    pytest.param(place, value, id=f"{place}-{i}")
    for place, values in NEAR_MISSES.items() for i, value in enumerate(values)
])
@pytest.mark.parametrize("member_id", ["m0", "m1"])
def test_every_near_miss_is_read_alike(place: str, value: Any, member_id: str) -> None:
    shared = ["t0", "t1"]
    members = {"m0": {"topics": shared, "owned": [["t0", 1]], "generation": 2, "rack": "r", "instance_id": "h0"},
               "m1": {"topics": shared}}
    _put(members, member_id, place, value)
    assert_readers_agree(members)


@settings(max_examples=1000, deadline=None)
@given(member_documents())
def test_generated_documents_are_read_alike(members: dict[Any, Any]) -> None:
    assert_readers_agree(members)


def test_plain_documents_take_the_bulk_path() -> None:
    shared = ["t0", "t1"]
    members = {
        "a": {"topics": shared, "owned": [["t0", 2], ("t1", 0)]},
        "b": {"topics": shared, "owned": [TopicPartition("t0", 1)], "generation": 3, "rack": None},
        "c": {"topics": ("t1",), "instance_id": "host-c", "rack": "r1"},
        "d": {"topics": [], "owned": []},
    }
    for reader in bulk_readers():
        bulk = reader(members)
        assert bulk is not None
        assert_same(bulk, read_member_by_member(members))
        assert bulk["a"].topics is bulk["b"].topics  # one tuple per distinct list
        assert bulk["b"] == MemberSpec(("t0", "t1"), (("t0", 1),), 3, None, None)


@pytest.mark.parametrize("name", ["assign-sticky.jsonl", "assign-uniform.jsonl", "assign-range-server.jsonl"])
def test_every_reference_scenario_takes_the_bulk_path(name: str) -> None:
    for line in load_vectors(name):
        members = line["scenario"]["members"]
        for reader in bulk_readers():
            bulk = reader(members)
            assert bulk is not None
            assert_same(bulk, read_member_by_member(members))


def test_a_scenario_built_from_member_specs_keeps_them_as_columns() -> None:
    specs = {"b": MemberSpec(("t",), (TopicPartition("t", 1),)), "a": MemberSpec(("t",))}
    built = Scenario(topics={"t": 3}, members=specs)
    assert isinstance(built.members, Members) and dict(built.members) == specs
    doc = {"topics": {"t": 3}, "members": {"b": {"topics": ["t"], "owned": [["t", 1]]}, "a": {"topics": ["t"]}}}
    for protocol, strategy in (("consumer", "uniform"), ("consumer", "range"), ("classic", "sticky")):
        assert kassign.assign(strategy, built, protocol=protocol) == kassign.assign(strategy, doc, protocol=protocol)


def test_members_read_as_a_mapping_of_member_specs() -> None:
    members = parse_scenario({"topics": {}, "members": {"b": {"topics": ["t"]}, "a": {"topics": []}}}).members
    assert list(members) == ["b", "a"] and len(members) == 2
    assert "a" in members and "z" not in members and members.get("z") is None
    assert members == {"b": MemberSpec(("t",)), "a": MemberSpec(())}


def test_long_owned_lists_read_alike() -> None:
    """Owned lists are measured a byte each below 256 pairs, and counted one by one from there."""
    members = {"a": {"topics": ["t0"], "owned": [["t0", p] for p in range(300)]},
               "b": {"topics": ["t0"], "owned": [["t0", 300]]}, "c": {"topics": ["t0"]}}
    for reader in bulk_readers():
        bulk = reader(members)
        assert bulk is not None and bulk.owned_start.tolist() == [0, 300, 301, 301]
        assert_same(bulk, read_member_by_member(members))


def test_owned_pairs_of_many_topics_in_turn_read_alike() -> None:
    """A share group's targets: each member one partition of each of many topics, the topics taken in turn, every
    name a new string. Thousands of distinct names share the native reader's few hundred name slots, so names
    of equal text and names that only land in the same slot both occur, in every kind of string."""
    names = [f"topic-{t:04d}" if t % 3 else f"t\u0394-{t}" if t % 2 else f"t\U0001F642{t}" for t in range(3000)]
    members = {f"m{i}": {"topics": [fresh(name) for name in names[:5]],
                         "owned": [[fresh(names[(i * 7 + k * 131) % len(names)]), k] for k in range(40)]}
               for i in range(200)}
    assert_readers_agree(members)
    for reader in bulk_readers():
        bulk = reader(members)
        assert bulk is not None
        assert_same(bulk, read_member_by_member(members))


def bulk_readers() -> list[Any]:
    """The bulk readers a plain document must take: both where kassign._native is built."""
    return [_members_column_by_column] + ([_members_natively] if _accel.native is not None else [])


def test_plain_documents_take_the_native_path_where_it_is_built() -> None:
    if _accel.native is None:
        pytest.skip("kassign._native is not built here (or KASSIGN_NO_NATIVE is set): the Python readers serve")
    members = {"a": {"topics": ["t0"], "owned": [["t0", 1]]}, "b": {"topics": ["t0"]}}
    assert _members_natively(members) is not None
    assert _members_at_once(members).owned_topic_codes is not None  # the native reader numbered them
    assert _members_natively({"a": {"topics": ["t0"], "generation": np.int32(3)}}) is None  # left to Python


# Names as real input spells them: ASCII, Latin-1, beyond (kind 2), beyond the BMP (a surrogate pair in Java).
TEXTS = st.sampled_from(["t0", "t1", "t10", "t", "", "tö", "t\u0394", "t\U0001F642", "topic-0001", "topic-0002"])


def fresh(text: str) -> str:
    """An equal string that is a new object, as every string JSON decodes is."""
    return json.loads(json.dumps(text))


@st.composite
def fresh_member_documents(draw: Any) -> dict[str, Any]:
    """Members as decoded JSON gives them: each its own topics list of its own strings, equal by value to
    another member's or differing from it in one place, in order, in length; owned pairs of equal topics
    as distinct objects; ids in any order, some non-ASCII."""
    base = draw(st.lists(TEXTS, max_size=5))
    members: dict[str, Any] = {}
    for i in range(draw(st.integers(0, 8))):
        topics = list(base)
        change = draw(st.sampled_from(["same", "same", "reversed", "one other", "shorter", "longer", "own"]))
        if change == "reversed":
            topics.reverse()
        elif change == "one other" and topics:
            topics[draw(st.integers(0, len(topics) - 1))] = draw(TEXTS)
        elif change == "shorter":
            topics = topics[:-1]
        elif change == "longer":
            topics.append(draw(TEXTS))
        elif change == "own":
            topics = draw(st.lists(TEXTS, max_size=5))
        entry: dict[str, Any] = {"topics": [fresh(name) for name in topics]}
        if draw(st.booleans()):
            entry["owned"] = [[fresh(draw(TEXTS)), draw(st.integers(0, 3))] for _ in range(draw(st.integers(0, 3)))]
        members[fresh(draw(st.sampled_from(["m", "a", "z", "m\u00e9", "m\U0001F642", "m\u4e2d"])) + str(i))] = entry
    return members


@settings(max_examples=500, deadline=None)
@given(fresh_member_documents())
def test_lists_equal_by_value_are_read_as_lists_equal_by_identity(members: dict[str, Any]) -> None:
    """The native reader numbers a member's list by comparing it text by text with the subscription before;
    the result must be what numbering every list by value gives, and what the same document read from
    JSON (every string new) and as shared objects gives."""
    assert_readers_agree(members)
    shared = {member: {**entry, "topics": list(map(sys.intern, entry["topics"]))} for member, entry in members.items()}
    for reader in bulk_readers():
        bulk, again = reader(members), reader(shared)
        assert bulk is not None and again is not None
        assert_same(bulk, read_member_by_member(shared))
        assert bulk.subscription.tolist() == again.subscription.tolist()


def test_a_list_equal_to_the_one_before_but_for_one_name_is_a_subscription_of_its_own() -> None:
    names = [f"topic-{t:03d}" for t in range(100)]
    members = json.loads(json.dumps({f"m{i}": {"topics": names} for i in range(5)}))
    members["m3"]["topics"][99] = "topic-100"
    members["m4"]["topics"] = members["m4"]["topics"][::-1]
    for reader in bulk_readers():
        bulk = reader(members)
        assert bulk is not None and bulk.subscription.tolist() == [0, 0, 0, 1, 2]
        assert bulk.subscriptions[2] == tuple(reversed(names))
        assert_same(bulk, read_member_by_member(members))


def test_the_native_reader_says_what_it_learnt_from_the_ids() -> None:
    if _accel.native is None:
        pytest.skip("kassign._native is not built here (or KASSIGN_NO_NATIVE is set): the Python readers serve")
    plain = _members_natively({"a": {"topics": []}, "b": {"topics": [], "owned": [["t0", 1]]}})
    assert plain.ids_ascending and plain.ascii and plain.java_id_hashes().tolist() == [97, 98]
    unsorted = _members_natively({"b": {"topics": []}, "a": {"topics": []}})
    assert unsorted.ids_ascending is False and unsorted.ascii
    astral = _members_natively({"m\U0001F642": {"topics": []}, "n": {"topics": [], "owned": [["t\u00e9", 0]]}})
    assert astral.ascii is False
    assert astral.java_id_hashes().tolist() == java_string_hashes(["m\U0001F642", "n"]).tolist()
    assert astral.java_id_hashes()[1] == 110


class _OwnBytes(StickyAssignor):
    def subscription_user_data(self, topics, owned_partitions, generation):  # type: ignore[override]
        return f"{len(owned_partitions)}/{generation}".encode()


def _assignors() -> list[Any]:
    remembering = StickyAssignor()
    remembering.on_assignment(Assignment((TopicPartition("t1", 2), TopicPartition("t0", 0))), 4)
    return [StickyAssignor(), remembering, CooperativeStickyAssignor(), get_assignor("range"), _OwnBytes()]


@settings(max_examples=300, deadline=None)
@given(st.one_of(member_documents(), fresh_member_documents()))
def test_subscriptions_on_columns_are_those_each_member_sends(members: dict[Any, Any]) -> None:
    """Scenario.subscriptions builds every member's subscription from the columns (the eager sticky
    assignor's user data encoded for all members at once, owned lists built in one pass): each equals
    what the member's own copy of the assignor sends, member by member."""
    try:
        scenario = parse_scenario({"topics": {"t0": 3, "t1": 1}, "members": members})
    except ScenarioError:
        return
    for assignor in _assignors():
        expected = {member: assignor.subscription(spec.topics, owned_partitions=spec.owned, generation=spec.generation,
                                                  rack=spec.rack, group_instance_id=spec.instance_id)
                    for member, spec in scenario.members.items()}
        got = scenario.subscriptions(assignor)
        assert got == expected and list(got) == list(expected)
        assert all(type(tp) is TopicPartition for s in got.values() for tp in s.owned_partitions)
