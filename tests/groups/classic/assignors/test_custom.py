"""The seeds' custom assignors (random, broadcast) and loading a user's own assignor by dotted path."""

from __future__ import annotations

import sys
import textwrap
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign.groups.classic.assignors import available_assignors, get_assignor
from kassign.groups.classic.assignors.random import RandomAssignor
from kassign.core.errors import UnknownAssignorError

GROUP = {
    "topics": {"t0": 6, "t1": 3, "t2": 2},
    "members": {"C0": {"topics": ["t0", "t1"]}, "C1": {"topics": ["t0"]}, "C2": {"topics": ["t1", "missing"]}},
}


def test_random_is_reproducible_per_seed() -> None:
    first = kassign.assign("random", GROUP, seed=42)
    assert kassign.assign("random", GROUP, seed=42) == first
    outcomes = {str(kassign.assign("random", GROUP, seed=s)) for s in range(10)}
    assert len(outcomes) > 1, "different seeds give different assignments"


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_gives_each_partition_to_one_subscriber(seed: int) -> None:
    assignment = kassign.assign("random", GROUP, seed=seed)
    owners = Counter(tp for parts in assignment.values() for tp in parts)
    assert set(owners) == {("t0", p) for p in range(6)} | {("t1", p) for p in range(3)}
    assert set(owners.values()) == {1}
    for member, parts in assignment.items():
        assert {t for t, _ in parts} <= set(GROUP["members"][member]["topics"])


def test_random_assignor_is_a_normal_assignor_object() -> None:
    assignor = get_assignor("random", seed=1)
    assert isinstance(assignor, RandomAssignor) and assignor.name == "random"


def test_broadcast_gives_every_subscriber_every_partition() -> None:
    assert kassign.assign("broadcast", GROUP) == {
        "C0": [("t0", p) for p in range(6)] + [("t1", p) for p in range(3)],
        "C1": [("t0", p) for p in range(6)],
        "C2": [("t1", p) for p in range(3)],
    }


def test_kafka_class_names_resolve() -> None:
    assert get_assignor("org.apache.kafka.clients.consumer.RangeAssignor").name == "range"
    assert get_assignor("org.apache.kafka.clients.consumer.RoundRobinAssignor").name == "roundrobin"


def test_registry_lists_builtins() -> None:
    assert {"range", "roundrobin", "sticky", "cooperative-sticky", "random", "broadcast"} <= set(available_assignors())


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "my_assignors.py").write_text(textwrap.dedent('''
        from kassign.groups.classic.assignors import AbstractPartitionAssignor, TopicPartition

        class FirstTakesAll(AbstractPartitionAssignor):
            """Everything to the alphabetically first subscriber of each topic."""
            name = "first-takes-all"

            def assign_partitions(self, partitions_per_topic, subscriptions, cluster):
                out = {m: [] for m in subscriptions}
                for topic, count in partitions_per_topic.items():
                    first = min(m for m, s in subscriptions.items() if topic in s.topics)
                    out[first].extend(TopicPartition(topic, p) for p in range(count))
                return out

        class NotAnAssignor:
            pass

        class Broken(AbstractPartitionAssignor):
            name = "broken"
    '''))
    (tmp_path / "explodes.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("my_assignors", "explodes"):
        sys.modules.pop(name, None)


def test_user_assignor_by_dotted_path(user_module) -> None:
    expected = {"C0": [("t0", p) for p in range(6)] + [("t1", p) for p in range(3)], "C1": [], "C2": []}
    assert kassign.assign("my_assignors:FirstTakesAll", GROUP) == expected
    assert kassign.assign("my_assignors.FirstTakesAll", GROUP) == expected


@pytest.mark.parametrize(
    ("strategy", "message"),
    [
        ("nonsense", "unknown assignor 'nonsense'"),
        ("no_such_module:Thing", "no module named 'no_such_module'"),
        ("my_assignors:Missing", "has no 'Missing'"),
        ("my_assignors:NotAnAssignor", "is not an assignor"),
        ("my_assignors:Broken", "does not implement assign_partitions"),
        ("explodes:Thing", "RuntimeError: boom at import"),
    ],
)
def test_bad_assignor_names_are_clear(user_module, strategy: str, message: str) -> None:
    with pytest.raises(UnknownAssignorError, match=message):
        kassign.assign(strategy, GROUP)


def test_unknown_options_are_reported() -> None:
    with pytest.raises(UnknownAssignorError, match="does not accept options"):
        kassign.assign("range", GROUP, colour="blue")
