"""The scenario document: one consumer group at one rebalance (SPEC section 1).

``parse_scenario`` checks the document's shape and says exactly where it is wrong;
it does not judge member data against the cluster (an owned partition of a topic
that no longer exists is the assignor's business, and Kafka ignores such claims).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from kassign.assignors.base import ConsumerPartitionAssignor, Subscription, TopicPartition
from kassign.cluster import Cluster
from kassign.documents import load_json
from kassign.errors import KassignError, ScenarioError, shown
from kassign.limits import JAVA_INT_MAX, partition_budget


class MemberSpec(NamedTuple):
    """One member as the scenario states it (a tuple: a coordinator-sized group has many)."""

    topics: tuple[str, ...]
    owned: tuple[TopicPartition, ...] = ()
    generation: int = -1
    rack: str | None = None
    instance_id: str | None = None


@dataclass(frozen=True)
class Scenario:
    topics: dict[str, int]
    members: dict[str, MemberSpec]
    partition_racks: dict[str, list[list[str]]] = field(default_factory=dict)
    topic_ids: dict[str, str] = field(default_factory=dict)

    def cluster(self) -> Cluster:
        racks = {t: r for t, r in self.partition_racks.items() if t in self.topics}
        return Cluster(self.topics, partition_racks=racks)

    def subscriptions(self, assignor: ConsumerPartitionAssignor) -> dict[str, Subscription]:
        """Each member's subscription as that member's copy of ``assignor`` would send it."""
        return {
            member_id: assignor.subscription(
                spec.topics,
                owned_partitions=spec.owned,
                generation=spec.generation,
                rack=spec.rack,
                group_instance_id=spec.instance_id,
            )
            for member_id, spec in self.members.items()
        }


def _fail(path: str, problem: str) -> ScenarioError:
    return ScenarioError(f"scenario {path}: {problem}")




def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _java_int(value: Any, path: str, *, low: int = -(2**31), must: str = "expected a whole number") -> int:
    """``value`` as a Python int within ``low .. 2^31-1`` (numpy integer scalars accepted)."""
    if not _is_int(value) or value < low:
        raise _fail(path, f"{must}, got {shown(value)}")
    if value > JAVA_INT_MAX:
        raise _fail(path, f"{must} and at most {JAVA_INT_MAX} (Kafka keeps it in a Java int), got {shown(value)}")
    return int(value)


def _text(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(path, f"expected a string, got {shown(value)}")
    return value


def _names(doc: Any, path: str) -> Iterable[Any]:
    """The keys of an object whose keys are names; JSON keys are strings, Python callers' must be too."""
    for name in doc:
        if not isinstance(name, str):
            raise _fail(path, f"names must be strings, got {shown(name)} ({type(name).__name__})")
    return doc


def _parse_topics(doc: Any) -> dict[str, int]:
    if not isinstance(doc, Mapping):
        raise _fail("topics", 'expected an object of topic name -> partition count, e.g. {"t0": 3}')
    _names(doc, "topics")
    return {name: _java_int(count, f"topics.{name}", low=0, must="partition count must be a whole number >= 0")
            for name, count in doc.items()}


_new_topic_partition = functools.partial(tuple.__new__, TopicPartition)


def _parse_owned(doc: Any, path: str) -> tuple[TopicPartition, ...]:
    if not isinstance(doc, (list, tuple)):
        raise _fail(path, 'expected a list of [topic, partition] pairs, e.g. [["t0", 2]]')
    owned = []
    for i, pair in enumerate(doc):
        kind = type(pair)
        if ((kind is list or kind is tuple or kind is TopicPartition) and len(pair) == 2 and type(pair[0]) is str
                and type(pair[1]) is int and -JAVA_INT_MAX - 1 <= pair[1] <= JAVA_INT_MAX):
            # what JSON gives, and what assign returns, checked in one expression
            owned.append(pair if kind is TopicPartition else _new_topic_partition(pair))
            continue
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str) and _is_int(pair[1])):
            raise _fail(f"{path}[{i}]", f"expected [topic, partition], got {shown(pair)}")
        owned.append(TopicPartition(pair[0], _java_int(pair[1], f"{path}[{i}]")))
    return tuple(owned)


_MEMBER_KEYS = frozenset({"topics", "owned", "generation", "rack", "instance_id"})


_UNSEEN = object()


class _MemberParser:
    """Checks members one by one. Members usually share a handful of subscriptions, so each
    distinct topic list is checked once and every member listing it shares one tuple."""

    def __init__(self) -> None:
        self._known: dict[tuple[Any, ...], tuple[str, ...]] = {}
        self._last: tuple[Any, tuple[str, ...]] | None = None  # the list object checked last, and its tuple

    def __call__(self, member_id: Any, doc: Any) -> MemberSpec:
        if not isinstance(member_id, str):
            raise _fail("members", f"member ids must be strings, got {shown(member_id)} ({type(member_id).__name__})")
        if not isinstance(doc, Mapping):
            raise _fail(f"members.{member_id}", 'expected an object such as {"topics": ["t0"]}')
        if not _MEMBER_KEYS.issuperset(doc):
            unknown = sorted(map(str, set(doc) - _MEMBER_KEYS))
            raise _fail(f"members.{member_id}", f"unknown field(s) {unknown}; allowed: {sorted(_MEMBER_KEYS)}")
        owned = doc.get("owned")
        generation = doc.get("generation", -1)
        rack = doc.get("rack")
        instance_id = doc.get("instance_id")
        return MemberSpec(
            self._topics(member_id, doc),
            _parse_owned(owned, f"members.{member_id}.owned") if owned is not None else (),
            generation if generation == -1 and type(generation) is int
            else _java_int(generation, f"members.{member_id}.generation"),
            None if rack is None else _text(rack, f"members.{member_id}.rack"),
            None if instance_id is None else _text(instance_id, f"members.{member_id}.instance_id"),
        )

    def _topics(self, member_id: str, doc: Mapping[str, Any]) -> tuple[str, ...]:
        topics = doc.get("topics")
        last = self._last
        if last is not None and last[0] is topics and len(topics) == len(last[1]):
            return last[1]  # Python callers often share one list between members
        if isinstance(topics, (list, tuple)):
            key = tuple(topics)
            try:
                known = self._known.get(key, _UNSEEN)
            except TypeError:  # an unhashable element: not a name anyway
                known = None
            if known is _UNSEEN:
                known = self._known[key] = key if all(map(isinstance, key, repeat(str))) else None
            if known is not None:
                self._last = (topics, known)
                return known
        if "topics" not in doc:
            raise _fail(f"members.{member_id}", 'missing "topics" (the list of topics this member subscribes to)')
        raise _fail(f"members.{member_id}.topics", f"expected a list of topic names, got {shown(topics)}")


def _check_instance_ids(members: Mapping[str, MemberSpec]) -> None:
    seen: dict[str, str] = {}
    for member_id, spec in members.items():
        if spec.instance_id is None:
            continue
        if spec.instance_id in seen:
            raise _fail(f"members.{member_id}.instance_id", f"{spec.instance_id!r} is also the instance_id of "
                        f"{seen[spec.instance_id]!r}; static members need distinct group.instance.id values")
        seen[spec.instance_id] = member_id


def _parse_partition_racks(doc: Any, topics: Mapping[str, int]) -> dict[str, list[list[str]]]:
    if not isinstance(doc, Mapping):
        raise _fail("partition_racks", "expected an object of topic -> per-partition lists of racks")
    result: dict[str, list[list[str]]] = {}
    for topic, per_partition in doc.items():
        path = f"partition_racks.{topic}"
        if not isinstance(per_partition, list) or not all(
            isinstance(racks, list) and all(isinstance(r, str) for r in racks) for racks in per_partition
        ):
            raise _fail(path, 'expected one list of rack names per partition, e.g. [["rack-a"], ["rack-b"]]')
        if topic in topics and len(per_partition) != topics[topic]:
            raise _fail(path, f"lists racks for {len(per_partition)} partitions, but the topic has {topics[topic]}")
        result[topic] = per_partition
    return result


def _parse_topic_ids(doc: Any) -> dict[str, str]:
    if not isinstance(doc, Mapping):
        raise _fail("topic_ids", 'expected an object of topic name -> topic id, e.g. {"t0": "zlHH1P2WR-GsRZQpv0_Hxw"}')
    return {name: _text(topic_id, f"topic_ids.{name}") for name, topic_id in doc.items()}


_SCENARIO_KEYS = ("topics", "members", "partition_racks", "topic_ids")


def parse_scenario(doc: Any) -> Scenario:
    """Check a scenario document (already decoded from JSON) and return it typed."""
    if isinstance(doc, Scenario):
        return doc
    if not isinstance(doc, Mapping):
        raise ScenarioError('scenario: expected a JSON object with "topics" and "members"')
    unknown = set(doc).difference(_SCENARIO_KEYS)
    if unknown:
        raise ScenarioError(f"scenario: unknown field(s) {sorted(map(str, unknown))}; allowed: {', '.join(_SCENARIO_KEYS)}")
    for key in ("topics", "members"):
        if key not in doc:
            raise ScenarioError(f'scenario: missing "{key}"')
    topics = _parse_topics(doc["topics"])
    try:
        partition_budget(sum(topics.values()), "scenario topics")
    except KassignError as err:
        raise ScenarioError(str(err)) from None
    members_doc = doc["members"]
    if not isinstance(members_doc, Mapping):
        raise _fail("members", 'expected an object of member id -> subscription, e.g. {"C0": {"topics": ["t0"]}}')
    members = dict(zip(members_doc, map(_MemberParser(), members_doc, members_doc.values())))
    _check_instance_ids(members)
    partition_racks = _parse_partition_racks(doc.get("partition_racks", {}), topics)
    topic_ids = _parse_topic_ids(doc.get("topic_ids", {}))
    return Scenario(topics=topics, members=members, partition_racks=partition_racks, topic_ids=topic_ids)


def read_scenario_text(path: str | Path) -> str:
    """A scenario file's text, or a ScenarioError saying why it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ScenarioError(f"cannot read scenario file {str(path)!r}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"scenario file {str(path)!r} is not UTF-8 text") from None


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario JSON file (``-``: standard input)."""
    if str(path) == "-":
        return parse_scenario(load_json(sys.stdin.read(), "scenario on stdin"))
    return parse_scenario(load_json(read_scenario_text(path), f"scenario file {str(path)!r}"))


def assignment_to_json(assignment: Mapping[str, list[tuple[str, int]]]) -> dict[str, list[list[Any]]]:
    return {member: [[t, p] for t, p in partitions] for member, partitions in assignment.items()}
