"""The group as Kafka 4's group coordinator hands it to a server-side assignor.

Data layout. Everything the assignors loop over is an integer:

* members are numbered ``0..M-1`` in the order the coordinator's ``HashMap`` of
  members iterates them (see :mod:`kassign.javaorder`); ``member_ids[i]`` names them;
* existing topics are numbered ``0..T-1`` in topic-id order (Kafka's ``Uuid``
  order: most significant 64 bits, then least, each signed), so "ties broken by topic
  id" is "ties broken by topic number"; ``num_partitions[t]`` is a numpy array;
* members listing the same topic names share a *subscription class*:
  ``member_class[m]`` numbers it, and class ``c``'s topic numbers, distinct, in listing
  order, are ``class_topics[class_start[c]:class_start[c+1]]`` (names of topics that
  do not exist drop out, as Kafka's name -> id view drops them). A group of ten thousand
  members usually has a handful of classes, so per-subscription work is done once per
  class, and the (member, topic) pairs are expanded by compiled loops;
* a member's current target is a list of ``(topic number, [partitions])`` in Java's
  ``HashMap<Uuid, HashSet<Integer>>`` iteration order, computed only when an assignor
  asks for it (only the homogeneous uniform builder's revocation depends on it).

Topic ids. A scenario may carry ``topic_ids`` (name -> Kafka's 22-character URL-safe
base64 form, or the dashed hex form). Without one, a topic's id is derived from its
name: ``uuid.uuid5(uuid.NAMESPACE_URL, "kafka-topic:" + name)``, so the same names
always give the same ids (a real cluster draws them at random; give the real ids to
reproduce a real cluster's order exactly).
"""

from __future__ import annotations

import base64
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import chain

import numpy as np
from numba import njit

from kassign.errors import ScenarioError
from kassign.javaorder import (
    JavaHashOrder,
    copy_constructor_capacity,
    hash_iteration_order,
    java_int_set_copy_order,
    java_string_hash,
    java_string_hashes,
    java_uuid_hash,
)
from kassign.scenario import Members, Scenario

log = logging.getLogger(__name__)

_SIGN64 = 1 << 63


def derived_topic_id(name: str) -> str:
    """The id kassign gives a topic whose real id the scenario does not state."""
    raw = uuid.uuid5(uuid.NAMESPACE_URL, "kafka-topic:" + name).bytes
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


@lru_cache(maxsize=1 << 16)
def _derived_uuid(name: str) -> tuple[int, int]:
    # A pure function of the name; a coordinator has its ids at hand, so kassign keeps them too.
    return parse_topic_id(derived_topic_id(name), name)


def parse_topic_id(text: str, topic: str) -> tuple[int, int]:
    """``(most, least)`` significant 64 bits, unsigned, of a Kafka topic id."""
    raw: bytes | None = None
    if len(text) == 36 and text.count("-") == 4:
        try:
            raw = uuid.UUID(text).bytes
        except ValueError:
            raw = None
    elif len(text) in (22, 24):
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except ValueError:
            raw = None
    if raw is None or len(raw) != 16:
        raise ScenarioError(
            f"scenario topic_ids.{topic}: {text!r} is not a topic id (22 characters of URL-safe base64, "
            "as Kafka prints them, or a dashed UUID)"
        )
    return int.from_bytes(raw[:8], "big"), int.from_bytes(raw[8:], "big")


def _uuid_sort_key(most_least: tuple[int, int]) -> tuple[int, int]:
    most, least = most_least
    return (most ^ _SIGN64, least ^ _SIGN64)  # signed order through an unsigned key


@dataclass
class ServerGroup:
    """One consumer group at one target-assignment computation, as integers."""

    member_ids: list[str]
    instance_ids: list[str | None]
    topic_names: list[str]
    topic_uuids: list[tuple[int, int]]
    num_partitions: np.ndarray
    member_class: np.ndarray
    class_start: np.ndarray
    class_topics: np.ndarray
    homogeneous: bool
    _members: Members = field(repr=False)
    _position: np.ndarray = field(repr=False)  # member number -> its place in ``_members``
    _topic_index: dict[str, int] = field(repr=False)
    _uuid_of_name: dict[str, tuple[int, int]] = field(repr=False)

    @property
    def num_members(self) -> int:
        return len(self.member_ids)

    @property
    def num_topics(self) -> int:
        return len(self.topic_names)

    def subscription_order(self, member: int) -> list[int]:
        """``new HashSet<>(subscribedTopicIds)`` of one member, as Java iterates it.

        The view Kafka copies walks the member's topic names in their own HashSet order
        and maps each to its id, skipping names that do not exist; the copy is sized for
        all the (distinct) names. The names' set was itself built at once from the listed
        names (``new HashSet<>(list)`` in the member's builder), sized for the list."""
        place = int(self._position[member])
        listed = self._members.subscriptions[self._members.subscription[place]]
        name_order = JavaHashOrder.copy_of(listed, java_string_hash).keys()
        ids = JavaHashOrder(copy_constructor_capacity(len(name_order)))
        for name in name_order:
            t = self._topic_index.get(name)
            if t is not None:
                ids.add(t, java_uuid_hash(*self.topic_uuids[t]))
        return ids.keys()

    def current_target(self, member: int) -> list[tuple[int, list[int]]]:
        """The member's current target as Java iterates its ``HashMap<Uuid, HashSet<Integer>>``.

        The coordinator builds it from the member's record: topics put one at a time, in the
        order their first partition is listed, each topic's set built at once from its listed
        partitions (``new HashSet<>(partitions)``, so sized for all of them from the start).
        Topics that no longer exist come as topic number -1 (their partitions are
        always taken away); partitions beyond a topic's count are dropped."""
        members, place = self._members, int(self._position[member])
        lo, hi = members.owned_start[place], members.owned_start[place + 1]
        per_topic: dict[str, list[int]] = {}
        for topic, partition in zip(members.owned_topics[lo:hi], members.owned_partitions[lo:hi].tolist()):
            per_topic.setdefault(topic, []).append(partition)
        topic_order = JavaHashOrder.of(per_topic, lambda name: java_uuid_hash(*self._uuid_of_name[name])).keys()
        result = []
        for name in topic_order:
            t = self._topic_index.get(name, -1)
            partitions = java_int_set_copy_order(per_topic[name])
            if t >= 0:
                partitions = [p for p in partitions if 0 <= p < self.num_partitions[t]]
            result.append((t, partitions))
        return result

    @property
    def num_classes(self) -> int:
        return len(self.class_start) - 1

    def class_topic_list(self, cls: int) -> np.ndarray:
        """Topic numbers subscribed by class ``cls`` (distinct, in listing order)."""
        return self.class_topics[self.class_start[cls]:self.class_start[cls + 1]]

    @cached_property
    def subscriptions(self) -> list[frozenset[int]]:
        """Each member's subscribed topic numbers (shared objects for members of one class)."""
        per_class = [frozenset(self.class_topic_list(c).tolist()) for c in range(self.num_classes)]
        return [per_class[c] for c in self.member_class.tolist()]

    @cached_property
    def subscribers_by_topic(self) -> tuple[np.ndarray, np.ndarray]:
        """``(start, members)``: topic ``t``'s subscribers, ascending member numbers, are
        ``members[start[t]:start[t+1]]``."""
        return _expand_subscribers(self.member_class, self.class_start, self.class_topics, self.num_topics)

    def subscribes(self, members: np.ndarray, topics: np.ndarray) -> np.ndarray:
        """Whether each ``members[i]`` subscribes to ``topics[i]``."""
        start, subscribers = self.subscribers_by_topic
        key = subscribers + np.repeat(np.arange(self.num_topics, dtype=np.int64), np.diff(start)) * self.num_members
        return np.isin(topics * self.num_members + members, key)

    @cached_property
    def offsets(self) -> np.ndarray:
        """Topic ``t``'s partitions are flat ids ``offsets[t] .. offsets[t+1]-1``."""
        offsets = np.zeros(self.num_topics + 1, dtype=np.int64)
        np.cumsum(self.num_partitions, out=offsets[1:])
        return offsets

    @cached_property
    def topic_of_partition(self) -> np.ndarray:
        """Topic number of each flat partition id."""
        return np.repeat(np.arange(self.num_topics, dtype=np.int64), self.num_partitions)

    @cached_property
    def _current_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every (member, flat partition id) of the current targets, partitions that exist only;
        by member number, each member's in listed order."""
        members = self._members
        start = members.owned_start[:-1][self._position]
        lengths = members.owned_start[1:][self._position] - start
        member = np.repeat(np.arange(self.num_members, dtype=np.int64), lengths)
        # member k's pairs sit at start[k].. in the scenario's columns and at out_start[k].. here
        out_start = np.cumsum(lengths) - lengths
        pair = np.arange(len(member), dtype=np.int64) + np.repeat(start - out_start, lengths)
        topic = np.fromiter(map(_TopicNumbers(self._topic_index).__getitem__, members.owned_topics),
                            dtype=np.int64, count=len(members.owned_topics))[pair]
        partition = members.owned_partitions[pair]
        exists = topic >= 0
        exists[exists] &= (partition[exists] >= 0) & (partition[exists] < self.num_partitions[topic[exists]])
        return member[exists], self.offsets[topic[exists]] + partition[exists]

    @cached_property
    def current_owner(self) -> np.ndarray:
        """Each flat partition's owner in the current target (-1: nobody)."""
        member, flat = self._current_pairs
        owner = np.full(int(self.offsets[-1]), -1, dtype=np.int64)
        owner[flat] = member
        clash = owner[flat] != member
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            t = int(self.topic_of_partition[flat[i]])
            raise ScenarioError(
                f"scenario members: partition {self.topic_names[t]}-{int(flat[i] - self.offsets[t])} is in the "
                f"current target of both {self.member_ids[int(owner[flat[i]])]!r} and "
                f"{self.member_ids[int(member[i])]!r}; a consumer group's target assignment gives each "
                "partition to one member"
            )
        return owner

    def current_counts(self, topics: np.ndarray) -> np.ndarray:
        """Per member, how many partitions of ``topics`` (a bool mask over topics) it currently holds."""
        member, flat = self._current_pairs
        keep = topics[self.topic_of_partition[flat]]
        return np.bincount(member[keep], minlength=self.num_members)


def member_positions(member_ids: Sequence[str]) -> np.ndarray:
    """The coordinator's members ``HashMap`` (filled in the order given), as Java iterates it:
    the position in ``member_ids`` of the first member it yields, the second, ..."""
    return hash_iteration_order(java_string_hashes(member_ids))


def build_server_group(scenario: Scenario) -> ServerGroup:
    """Number the scenario's members and topics the way the server-side assignors see them.

    The scenario's distinct subscriptions are the subscription classes, so the members are
    never visited one by one here: their columns are permuted into member order."""
    members = scenario.members
    uuid_of_name = _topic_uuids(scenario)
    existing = sorted(scenario.topics, key=lambda name: _uuid_sort_key(uuid_of_name[name]))
    topic_index = {name: i for i, name in enumerate(existing)}
    position = member_positions(members.ids)
    places = position.tolist()
    class_start, class_topics = _class_topics(members.subscriptions, topic_index)
    return ServerGroup(
        member_ids=list(map(members.ids.__getitem__, places)),
        instance_ids=list(map(members.instance_ids.__getitem__, places)),
        topic_names=existing,
        topic_uuids=[uuid_of_name[name] for name in existing],
        num_partitions=np.array([scenario.topics[name] for name in existing], dtype=np.int64),
        member_class=members.subscription[position],
        class_start=class_start,
        class_topics=class_topics,
        homogeneous=_same_names(members.subscriptions),
        _members=members,
        _position=position,
        _topic_index=topic_index,
        _uuid_of_name=uuid_of_name,
    )


class _TopicNumbers(dict):
    """Topic name -> number; a name that does not exist is -1 (Kafka's name -> id view drops it)."""

    def __missing__(self, name: str) -> int:
        return -1


def _class_topics(distinct: list[tuple[str, ...]], topic_index: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """CSR of each class's topic numbers, distinct, in listing order, names that do not exist dropped."""
    lookup = _TopicNumbers(topic_index)
    lengths = np.fromiter(map(len, distinct), dtype=np.int64, count=len(distinct))
    topics = np.fromiter(map(lookup.__getitem__, chain.from_iterable(distinct)), dtype=np.int64,
                         count=int(lengths.sum()))
    return _distinct_per_class(topics, lengths, len(topic_index))


@njit(cache=True)
def _distinct_per_class(topics, lengths, num_topics):
    """Each class's slice of ``topics`` without repeats and without -1 (no such topic), as CSR."""
    start = np.zeros(len(lengths) + 1, dtype=np.int64)
    out = np.empty(len(topics), dtype=np.int64)
    last_class = np.full(num_topics, -1, dtype=np.int64)
    read = 0
    for c in range(len(lengths)):
        write = start[c]
        for i in range(read, read + lengths[c]):
            t = topics[i]
            if t >= 0 and last_class[t] != c:
                last_class[t] = c
                out[write] = t
                write += 1
        read += lengths[c]
        start[c + 1] = write
    return start, out[:start[-1]]


@njit(cache=True)
def _expand_subscribers(member_class, class_start, class_topics, num_topics):
    """Per topic, its subscribers in member order: a counting sort of every (member, topic) pair."""
    start = np.zeros(num_topics + 1, dtype=np.int64)
    for m in range(len(member_class)):
        c = member_class[m]
        for i in range(class_start[c], class_start[c + 1]):
            start[class_topics[i] + 1] += 1
    for t in range(num_topics):
        start[t + 1] += start[t]
    fill = start[:-1].copy()
    members = np.empty(start[num_topics], dtype=np.int64)
    for m in range(len(member_class)):
        c = member_class[m]
        for i in range(class_start[c], class_start[c + 1]):
            t = class_topics[i]
            members[fill[t]] = m
            fill[t] += 1
    return start, members


def _same_names(distinct: list[tuple[str, ...]]) -> bool:
    """Kafka's homogeneous test: every member subscribes to the same topic *names* (existing or not)."""
    if len(distinct) <= 1:
        return True
    first = frozenset(distinct[0])
    return all(first.issuperset(names) and first.issubset(names) for names in distinct[1:])


def _topic_uuids(scenario: Scenario) -> dict[str, tuple[int, int]]:
    """Every topic name the scenario mentions -> its id, stated or derived; ids must be distinct."""
    names = dict.fromkeys(scenario.topics)
    names.update(dict.fromkeys(scenario.topic_ids))
    names.update(dict.fromkeys(scenario.members.owned_topics))
    result: dict[str, tuple[int, int]] = {}
    seen: dict[tuple[int, int], str] = {}
    for name in names:
        stated = scenario.topic_ids.get(name)
        value = parse_topic_id(stated, name) if stated is not None else _derived_uuid(name)
        if value in seen:
            raise ScenarioError(f"scenario topic_ids: topics {seen[value]!r} and {name!r} have the same id")
        seen[value] = name
        result[name] = value
    return result
