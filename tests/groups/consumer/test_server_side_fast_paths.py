"""The dict API's fast paths for the server-side assignors against the plain ones, on random groups.

Every member is read by the column reader (one shared topic list checked once, fields counted,
owned pairs in bulk), numbered by the group builder (owned topics numbered by the scenario's
topics while all still exist) and returned through the count-by-count result lists with kept
tuples. The reference reads the same members one by one (a read-only mapping is not taken in
bulk), and builds the dict pair by pair from the owner array."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign.groups.consumer.assignors import assign_server_side, build_server_group
from kassign.groups.consumer.group import _class_topics, _owned_topic_numbers
from kassign.groups.scenario import _members_at_once, _members_column_by_column, _members_natively, parse_scenario

TOPIC_NAMES = ["t0", "t1", "t2", "t3", "gone"]  # "gone": named in owned lists, absent from topics


@st.composite
def groups(draw: Any) -> dict[str, Any]:
    topics = {name: draw(st.integers(0, 6)) for name in TOPIC_NAMES[:4] if draw(st.booleans())}
    shared = draw(st.lists(st.sampled_from(TOPIC_NAMES), min_size=1, max_size=4))
    partitions = [(t, p) for t in TOPIC_NAMES for p in range(topics.get(t, 3))]
    members: dict[str, dict[str, Any]] = {}
    for i in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["shared", "equal copy", "reordered", "own"]))
        listed = {"shared": shared, "equal copy": list(shared), "reordered": shared[::-1]}.get(kind) or draw(
            st.lists(st.sampled_from(TOPIC_NAMES), min_size=1, max_size=4))
        entry: dict[str, Any] = {"topics": listed}
        if draw(st.booleans()):
            entry["owned"] = []
        members[f"m{draw(st.integers(0, 99)):02d}-{i}"] = entry
    ids = list(members)
    if ids:  # each partition in at most one member's current target
        for pair in draw(st.lists(st.sampled_from(partitions), unique=True, max_size=12)) if partitions else []:
            members[draw(st.sampled_from(ids))].setdefault("owned", []).append(list(pair))
    if draw(st.booleans()):
        members = dict(sorted(members.items()))
    return {"topics": topics, "members": members}


def pair_by_pair(scenario: dict[str, Any], strategy: str, release: str) -> dict[str, list[tuple[str, int]]]:
    """The same assignment read member by member and written out one pair at a time."""
    slow = parse_scenario({**scenario, "members": MappingProxyType(scenario["members"])})
    flat = assign_server_side(strategy, slow, kafka_version=release)
    result: dict[str, list[tuple[str, int]]] = {member: [] for member in slow.members.ids}
    for f, m in enumerate(flat.owner.tolist()):
        if m >= 0:
            t = int(np.searchsorted(flat.offsets, f, side="right")) - 1
            result[flat.members[m]].append((flat.topics[t], f - int(flat.offsets[t])))
    return {member: sorted(pairs) for member, pairs in sorted(result.items())}


@settings(max_examples=300, deadline=None)
@given(groups(), st.sampled_from(["uniform", "range"]), st.sampled_from(["4.0.0", "4.3"]))
def test_fast_paths_equal_the_plain_ones(scenario: dict[str, Any], strategy: str, release: str) -> None:
    # both sides at the same release: the uniform assignor's homogeneous rule differs between these two
    assert _members_at_once(scenario["members"]) is not None  # the bulk reader takes these groups
    got = kassign.assign(strategy, scenario, protocol="consumer", kafka_version=release)
    expected = pair_by_pair(scenario, strategy, release)
    assert got == expected and list(got) == list(expected)
    assert kassign.assign(strategy, scenario, protocol="consumer", kafka_version=release) == expected  # kept tuples
    # decoded from JSON, every member's list and string is its own: the readers compare them by value
    from_json = json.loads(json.dumps(scenario))
    assert kassign.assign(strategy, from_json, protocol="consumer", kafka_version=release) == expected
    assert kassign.assign_table(strategy, from_json, protocol="consumer", kafka_version=release).to_pylist() == [
        {"member": m, "topic": t, "partition": p} for m, pairs in expected.items() for t, p in pairs]
    slow = build_server_group(parse_scenario({**scenario, "members": MappingProxyType(scenario["members"])}))
    for fast in (build_server_group(parse_scenario(scenario)), build_server_group(parse_scenario(from_json))):
        assert fast.member_ids == slow.member_ids and fast.instance_ids == slow.instance_ids
        assert np.array_equal(fast.member_class, slow.member_class) and fast.homogeneous == slow.homogeneous
        assert np.array_equal(fast.class_start, slow.class_start)
        assert np.array_equal(fast.class_topics, slow.class_topics)
        for member in range(fast.num_members):
            assert fast.current_target(member) == slow.current_target(member)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(TOPIC_NAMES), max_size=12), st.sets(st.sampled_from(TOPIC_NAMES)))
def test_owned_topics_are_numbered_by_name_either_way(owned: list[str], existing: set[str]) -> None:
    """Numbered by the scenario's topics (all owned ones exist) or by the owned names themselves (some
    are gone), each owned pair keeps its topic name; gone names come in order of first listing. Either
    from the codes the native reader makes as it reads, or from codes made on first use."""
    doc = {"m": {"topics": [], "owned": [[topic, p] for p, topic in enumerate(owned)]}}
    for members in (_members_column_by_column(doc), _members_natively(doc)):
        if members is None:  # kassign._native not built
            continue
        names, number = _owned_topic_numbers(members, dict.fromkeys(sorted(existing), 1))
        assert [names[i] for i in number.tolist()] == owned
        if not set(owned) <= existing:
            assert names == list(dict.fromkeys(owned))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(TOPIC_NAMES), max_size=5), min_size=1, max_size=6),
       st.lists(st.sampled_from(TOPIC_NAMES[:4]), unique=True))
def test_subscriptions_numbered_as_read_equal_those_numbered_after(lists: list[list[str]], existing: list[str]) -> None:
    """The native reader numbers each distinct subscription's names by the scenario's topics as it reads
    them; the group's classes (distinct topic numbers in listing order, names that are no topic dropped) are
    then those numbered name by name afterwards."""
    topics = dict.fromkeys(existing, 2)
    doc = json.loads(json.dumps({f"m{i}": {"topics": listed} for i, listed in enumerate(lists)}))
    members = _members_natively(doc, topics)
    if members is None:
        return  # kassign._native not built
    names, start, code = members.subscription_topics
    assert names == list(topics) and len(start) == len(members.subscriptions) + 1
    for s, listed in enumerate(members.subscriptions):
        assert [names[c] if c >= 0 else None for c in code[start[s]:start[s + 1]].tolist()] == [
            name if name in topics else None for name in listed]
    index = {name: i for i, name in enumerate(sorted(topics))}
    coded = _class_topics(members.subscriptions, index, members.subscription_topics)
    plain = _class_topics(members.subscriptions, index)
    assert all(np.array_equal(a, b) for a, b in zip(coded, plain))
