"""The group as Kafka 4's group coordinator hands it to a server-side assignor.

Data layout. Everything the assignors loop over is an integer:

* members are numbered ``0..M-1`` in the order the coordinator's ``HashMap`` of
  members iterates them (see :mod:`kassign.javaorder`); ``member_ids[i]`` names them;
* existing topics are numbered ``0..T-1`` in topic-id order (Kafka's ``Uuid``
  order: most significant 64 bits, then least, each signed), so "ties broken by topic
  id" is "ties broken by topic number"; ``num_partitions[t]`` is a numpy array;
* a member's subscription is a ``frozenset`` of topic numbers (names of topics that
  do not exist drop out, as Kafka's name -> id view drops them);
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
from functools import cached_property

import numpy as np

from kassign.errors import ScenarioError
from kassign.javaorder import (
    JavaHashOrder,
    copy_constructor_capacity,
    hash_iteration_order,
    java_string_hash,
    java_string_hashes,
    java_uuid_hash,
)
from kassign.scenario import MemberSpec, Scenario

log = logging.getLogger(__name__)

_SIGN64 = 1 << 63


def derived_topic_id(name: str) -> str:
    """The id kassign gives a topic whose real id the scenario does not state."""
    raw = uuid.uuid5(uuid.NAMESPACE_URL, "kafka-topic:" + name).bytes
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


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
    subscriptions: list[frozenset[int]]
    homogeneous: bool
    _specs: list[MemberSpec] = field(repr=False)
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
        all the names."""
        names = _dedup(self._specs[member].topics)
        name_order = JavaHashOrder.of(names, java_string_hash).keys()
        ids = JavaHashOrder(copy_constructor_capacity(len(names)))
        for name in name_order:
            t = self._topic_index.get(name)
            if t is not None:
                ids.add(t, java_uuid_hash(*self.topic_uuids[t]))
        return ids.keys()

    def current_target(self, member: int) -> list[tuple[int, list[int]]]:
        """The member's current target as Java iterates its ``HashMap<Uuid, HashSet<Integer>>``.

        Topics that no longer exist come as topic number -1 (their partitions are
        always taken away); partitions beyond a topic's count are dropped."""
        per_topic: dict[str, list[int]] = {}
        for topic, partition in self._specs[member].owned:
            per_topic.setdefault(topic, []).append(partition)
        topic_order = JavaHashOrder.of(per_topic, lambda name: java_uuid_hash(*self._uuid_of_name[name])).keys()
        result = []
        for name in topic_order:
            t = self._topic_index.get(name, -1)
            partitions = _java_int_set(per_topic[name])
            if t >= 0:
                partitions = [p for p in partitions if 0 <= p < self.num_partitions[t]]
            result.append((t, partitions))
        return result

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
        """Every (member, flat partition id) of the current targets, partitions that exist only."""
        members: list[int] = []
        topics: list[int] = []
        partitions: list[int] = []
        index = self._topic_index
        for member, spec in enumerate(self._specs):
            for topic, partition in spec.owned:
                members.append(member)
                topics.append(index.get(topic, -1))
                partitions.append(partition)
        member = np.array(members, dtype=np.int64)
        topic = np.array(topics, dtype=np.int64)
        partition = np.array(partitions, dtype=np.int64)
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


def _dedup(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _java_int_set(values: Sequence[int]) -> list[int]:
    order = JavaHashOrder()
    for v in values:
        order.add(v, v)
    return order.keys()


def member_order(member_ids: Sequence[str]) -> list[str]:
    """The coordinator's members ``HashMap`` (filled in the order given), as Java iterates it."""
    positions = hash_iteration_order(java_string_hashes(member_ids))
    return [member_ids[i] for i in positions.tolist()]


def build_server_group(scenario: Scenario) -> ServerGroup:
    """Number the scenario's members and topics the way the server-side assignors see them."""
    uuid_of_name = _topic_uuids(scenario)
    existing = sorted(scenario.topics, key=lambda name: _uuid_sort_key(uuid_of_name[name]))
    topic_index = {name: i for i, name in enumerate(existing)}
    ordered = member_order(list(scenario.members))
    specs = [scenario.members[m] for m in ordered]
    subscription_of: dict[tuple[str, ...], frozenset[int]] = {}
    name_sets: dict[tuple[str, ...], frozenset[str]] = {}
    subscriptions = []
    for spec in specs:
        subscriptions.append(_subscription(spec.topics, topic_index, subscription_of))
        if spec.topics not in name_sets:
            name_sets[spec.topics] = frozenset(spec.topics)
    homogeneous = len(set(name_sets.values())) <= 1
    return ServerGroup(
        member_ids=ordered,
        instance_ids=[spec.instance_id for spec in specs],
        topic_names=existing,
        topic_uuids=[uuid_of_name[name] for name in existing],
        num_partitions=np.array([scenario.topics[name] for name in existing], dtype=np.int64),
        subscriptions=subscriptions,
        homogeneous=homogeneous,
        _specs=specs,
        _topic_index=topic_index,
        _uuid_of_name=uuid_of_name,
    )


def _subscription(topics: tuple[str, ...], topic_index: Mapping[str, int],
                  cache: dict[tuple[str, ...], frozenset[int]]) -> frozenset[int]:
    found = cache.get(topics)
    if found is None:
        found = frozenset(map(topic_index.get, topics)).difference((None,))
        cache[topics] = found
    return found


def _topic_uuids(scenario: Scenario) -> dict[str, tuple[int, int]]:
    """Every topic name the scenario mentions -> its id, stated or derived; ids must be distinct."""
    names = dict.fromkeys(scenario.topics)
    names.update(dict.fromkeys(scenario.topic_ids))
    for spec in scenario.members.values():
        names.update(dict.fromkeys(topic for topic, _ in spec.owned))
    result: dict[str, tuple[int, int]] = {}
    seen: dict[tuple[int, int], str] = {}
    for name in names:
        stated = scenario.topic_ids.get(name)
        value = parse_topic_id(stated, name) if stated is not None else parse_topic_id(derived_topic_id(name), name)
        if value in seen:
            raise ScenarioError(f"scenario topic_ids: topics {seen[value]!r} and {name!r} have the same id")
        seen[value] = name
        result[name] = value
    return result
