"""The group as Kafka 4's group coordinator hands it to a server-side assignor.

Data layout. Everything the assignors loop over is an integer:

* members are numbered ``0..M-1`` in the order the coordinator's ``HashMap`` of
  members iterates them (see :mod:`kassign.core.javaorder`); ``member_ids[i]`` names them;
* existing topics are numbered ``0..T-1`` in topic-id order (Kafka's ``Uuid``
  order: most significant 64 bits, then least, each signed), so "ties broken by topic
  id" is "ties broken by topic number"; ``num_partitions[t]`` is a numpy array;
* members listing the same topic names share a *subscription class*:
  ``member_class[m]`` numbers it, and class ``c``'s topic numbers, distinct, in listing
  order, are ``class_topics[class_start[c]:class_start[c+1]]`` (names of topics that
  do not exist drop out, as Kafka's name -> id view drops them). A group of ten thousand
  members usually has a handful of classes, so per-subscription work is done once per
  class, and the (member, topic) pairs are expanded by compiled loops;
* the members' current targets are integer columns (:class:`CurrentTargets`): one
  (member, topic key, partition) triple per pair, each member's in the order listed
  (members may interleave), where a topic key is the topic's number, or a number from
  ``T`` on for a topic that no longer exists. Their order in Java's
  ``HashMap<Uuid, HashSet<Integer>>`` is computed only when an assignor asks for it, for
  the members it asks about, by a compiled walk (only the homogeneous uniform builder's
  revocation depends on it).

A group is assembled from columns (:func:`assemble_server_group`): a scenario document's
(:func:`build_server_group`), or those a coordinator keeps between target computations
(the simulator's), so nobody has to write a document to run an assignor.

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

from kassign.core.errors import ScenarioError
from kassign.core.javaorder import (
    JavaHashOrder,
    copy_constructor_capacity,
    hash_iteration_order,
    insert_only_capacity_with,
    int_set_positions,
    java_int_set_copy_order,
    java_string_hash,
    java_string_hashes,
    java_uuid_hash,
    strictly_ascending,
    table_size_for,
)
from kassign.groups.scenario import Members, Scenario

log = logging.getLogger(__name__)

_SIGN64 = 1 << 63


def derived_topic_id(name: str) -> str:
    """The id kassign gives a topic whose real id the scenario does not state."""
    raw = uuid.uuid5(uuid.NAMESPACE_URL, "kafka-topic:" + name).bytes
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


@lru_cache(maxsize=1 << 16)
def derived_topic_uuid(name: str) -> tuple[int, int]:
    """:func:`derived_topic_id` as ``(most, least)`` significant 64 bits, unsigned."""
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


@dataclass(frozen=True)
class CurrentTargets:
    """Every member's current target as integer columns, one entry per (member, partition) pair.

    ``member`` is the member number; each member's pairs come in the order listed, though
    members' pairs may interleave. ``key`` is the topic's number for an existing topic, ``T``
    and up for a topic that no longer exists; ``key_hashes[k]`` is topic key ``k``'s
    ``Uuid.hashCode()`` (unsigned 32-bit)."""

    member: np.ndarray
    key: np.ndarray
    partition: np.ndarray
    key_hashes: np.ndarray


@dataclass
class ServerGroup:
    """One consumer group at one target-assignment computation, as integers.

    Member ``i`` was given as member ``given_position[i]`` (of ``given_member_ids`` and
    ``given_instance_ids``, in the order :func:`assemble_server_group` took them); its names in member
    order (:attr:`member_ids`, :attr:`instance_ids`) are gathered only when asked for."""

    given_member_ids: Sequence[str] = field(repr=False)
    given_instance_ids: Sequence[str | None] = field(repr=False)
    given_position: np.ndarray = field(repr=False)
    topic_names: list[str]
    topic_uuids: list[tuple[int, int]]
    num_partitions: np.ndarray
    member_class: np.ndarray
    class_start: np.ndarray
    class_topics: np.ndarray
    homogeneous: bool
    current: CurrentTargets = field(repr=False)
    _class_names: list[tuple[str, ...]] = field(repr=False)  # class c's topic names as its members list them
    _topic_index: dict[str, int] = field(repr=False)

    @cached_property
    def member_ids(self) -> list[str]:
        """Member ``i``'s id, for each member number ``i``."""
        return list(map(self.given_member_ids.__getitem__, self.given_position.tolist()))

    @cached_property
    def instance_ids(self) -> list[str | None]:
        """Member ``i``'s ``group.instance.id`` (None: a dynamic member), for each member number ``i``."""
        return list(map(self.given_instance_ids.__getitem__, self.given_position.tolist()))

    @property
    def num_members(self) -> int:
        return len(self.given_position)

    @property
    def num_topics(self) -> int:
        return len(self.topic_names)

    def subscription_order(self, member: int) -> list[int]:
        """``new HashSet<>(subscribedTopicIds)`` of one member, as Java iterates it.

        The view Kafka copies walks the member's topic names in their own HashSet order
        and maps each to its id, skipping names that do not exist; the copy is sized for
        all the (distinct) names. The names' set was itself built at once from the listed
        names (``new HashSet<>(list)`` in the member's builder), sized for the list."""
        name_order = _name_set_order(tuple(self._class_names[int(self.member_class[member])]))
        topics = [t for t in map(self._topic_index.get, name_order) if t is not None]
        hashes = self.current.key_hashes[:self.num_topics][topics]  # topic keys below T are the topic numbers
        order = hash_iteration_order(hashes, copy_constructor_capacity(len(name_order)))
        return [topics[i] for i in order.tolist()]

    def current_target(self, member: int) -> list[tuple[int, list[int]]]:
        """The member's current target as Java iterates its ``HashMap<Uuid, HashSet<Integer>>``.

        The coordinator builds it from the member's record: topics put one at a time, in the
        order their first partition is listed, each topic's set built at once from its listed
        partitions (``new HashSet<>(partitions)``, so sized for all of them from the start).
        Topics that no longer exist come as topic number -1 (their partitions are
        always taken away); partitions beyond a topic's count are dropped.
        :meth:`walk_current_targets` gives the same for many members at once."""
        return [(key if key < self.num_topics else -1, partitions)
                for key, partitions in self._current_target_keys(member)]

    def _current_target_keys(self, member: int) -> list[tuple[int, list[int]]]:
        """:meth:`current_target` with each topic's key (from ``num_topics`` on: one that no longer exists)."""
        current = self.current
        mine = current.member == member
        per_topic: dict[int, list[int]] = {}
        for key, partition in zip(current.key[mine].tolist(), current.partition[mine].tolist()):
            per_topic.setdefault(key, []).append(partition)
        topic_order = JavaHashOrder.of(per_topic, current.key_hashes.tolist().__getitem__).keys()
        result = []
        for key in topic_order:
            partitions = java_int_set_copy_order(per_topic[key])
            if key < self.num_topics:
                result.append((key, [p for p in partitions if 0 <= p < self.num_partitions[key]]))
            else:
                result.append((key, partitions))
        return result

    def walk_current_targets(self, members: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(start, topic, partition)``: the current targets of ``members`` in Java's order, as
        :meth:`current_target` lists them (topic -1: no longer exists; partitions beyond a
        topic's count dropped), member ``members[i]``'s at ``start[i] .. start[i+1]-1``."""
        start, key, partition = self.walk_current_keys(members)
        return start, np.where(key < self.num_topics, key, -1), partition

    def walk_current_keys(self, members: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`walk_current_targets` keeping topics that no longer exist, by their topic key
        (``num_topics`` and up, see :class:`CurrentTargets`): Kafka 4.1's share assignor puts
        them in its map of current holders."""
        current = self.current
        members = np.asarray(members, dtype=np.int64)
        place = np.full(self.num_members, -1, dtype=np.int64)  # member number -> its place in ``members``
        place[members] = np.arange(len(members))
        start, key, partition, tree_bins = _java_walk(place[current.member], current.key, current.partition,
                                                      _spread(current.key_hashes), len(members))
        if tree_bins.any():
            # 9 or more partitions of one topic share a bucket: Java keeps them in a tree bin
            start, key, partition = _with_tree_bins(self, members, start, key, partition, tree_bins)
        exists = key < self.num_topics
        keep = ~exists
        keep[exists] = (partition[exists] >= 0) & (partition[exists] < self.num_partitions[key[exists]])
        owner = np.repeat(np.arange(len(members), dtype=np.int64), np.diff(start))
        start = np.zeros(len(members) + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner[keep], minlength=len(members)), out=start[1:])
        return start, key[keep], partition[keep]

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
        current = self.current
        member, topic, partition = current.member, current.key, current.partition
        exists = topic < self.num_topics
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


@lru_cache(maxsize=256)
def _name_set_order(listed: tuple[str, ...]) -> tuple[str, ...]:
    """``new HashSet<>(listed)`` of topic names as Java iterates it (kept: a group's subscriptions
    change far less often than its targets are computed)."""
    return tuple(JavaHashOrder.copy_of(listed, java_string_hash).keys())


def _spread(hashes: np.ndarray) -> np.ndarray:
    """``HashMap.hash`` of each unsigned 32-bit hash code."""
    hashes = np.asarray(hashes, dtype=np.int64)
    return hashes ^ (hashes >> 16)


@njit(cache=True)
def _java_walk(place, key, partition, key_spread, members):
    """:meth:`ServerGroup.current_target` of ``members`` members, compiled, before the filtering of topics
    that no longer exist: pair ``j`` belongs to member ``place[j]`` (-1: to none of them), each member's
    pairs as listed. Returns ``(start, key, partition, tree_bins)``, member ``i``'s walk at ``start[i] ..
    start[i+1]-1``; ``tree_bins[i]`` flags a member one of whose topic sets has 9+ partitions in one
    bucket (left to the caller: Java keeps those in a tree bin)."""
    # the members' pairs, member after member, each member's as listed (a counting sort)
    start = np.zeros(members + 1, dtype=np.int64)
    for j in range(len(place)):
        if place[j] >= 0:
            start[place[j] + 1] += 1
    for i in range(members):
        start[i + 1] += start[i]
    fill = start[:members].copy()
    pairs = np.empty(start[members], dtype=np.int64)
    for j in range(len(place)):
        if place[j] >= 0:
            pairs[fill[place[j]]] = j
            fill[place[j]] += 1
    out_start = np.zeros(members + 1, dtype=np.int64)
    out_key = np.empty(len(pairs), dtype=np.int64)
    out_partition = np.empty(len(pairs), dtype=np.int64)
    tree_bins = np.zeros(members, dtype=np.bool_)
    group_of_key = np.full(len(key_spread), -1, dtype=np.int64)  # scratch: a topic key's group, this member
    # scratch for one member's walk, allocated once: a thousand members' small maps would otherwise make
    # tens of thousands of small arrays
    most = 0
    for i in range(members):
        most = max(most, start[i + 1] - start[i])
    first_key = np.empty(most, dtype=np.int64)
    size = np.zeros(most + 1, dtype=np.int64)
    at = np.empty(most, dtype=np.int64)
    by_group = np.empty(most, dtype=np.int64)
    spreads = np.empty(most, dtype=np.int64)
    map_order = np.empty(most, dtype=np.int64)
    in_bucket = np.zeros(64, dtype=np.int64)
    write = 0
    for i in range(members):
        mine = pairs[start[i]:start[i + 1]]
        # group the pairs by topic key, topics in order of first listing, pairs as listed within
        groups = 0
        size[:len(mine) + 1] = 0
        for j in mine:
            g = group_of_key[key[j]]
            if g < 0:
                g = group_of_key[key[j]] = groups
                first_key[groups] = key[j]
                groups += 1
            size[g + 1] += 1
        for g in range(groups):
            size[g + 1] += size[g]
        at[:groups] = size[:groups]
        for j in mine:
            g = group_of_key[key[j]]
            by_group[at[g]] = partition[j]
            at[g] += 1
        for g in range(groups):
            spreads[g] = key_spread[first_key[g]]
            group_of_key[first_key[g]] = -1  # clean the scratch for the next member
        in_bucket[:] = 0
        capacity = insert_only_capacity_with(spreads[:groups], 16, in_bucket)
        _bucket_then_insertion(spreads[:groups], capacity, map_order)
        for g in map_order[:groups]:
            listed = by_group[size[g]:size[g + 1]]
            if len(listed) == 1:  # a set of one partition
                out_key[write] = first_key[g]
                out_partition[write] = listed[0]
                write += 1
                continue
            distinct = listed if strictly_ascending(listed) else listed[_first_occurrences(listed)]
            positions, plain = int_set_positions(distinct, table_size_for(copy_constructor_capacity(len(listed))))
            if not plain:
                tree_bins[i] = True
                continue
            for p in positions:
                out_key[write] = first_key[g]
                out_partition[write] = distinct[p]
                write += 1
        out_start[i + 1] = write
    return out_start, out_key[:write], out_partition[:write], tree_bins


@njit(cache=True)
def _bucket_then_insertion(spreads, capacity, order):
    """``order[:n]``: positions 0..n-1 of ``spreads`` by bucket (``spread & (capacity - 1)``), then by
    position (a map's iteration order); an insertion sort for the few topics a member holds, a sort
    beyond."""
    n = len(spreads)
    if n > 32:
        order[:n] = np.argsort((spreads & (capacity - 1)) * n + np.arange(n))
        return
    for g in range(n):
        bucket = spreads[g] & (capacity - 1)
        k = g
        while k > 0 and (spreads[order[k - 1]] & (capacity - 1)) > bucket:
            order[k] = order[k - 1]
            k -= 1
        order[k] = g


@njit(cache=True)
def _first_occurrences(values):
    """Positions, ascending, of the first occurrence of each distinct value."""
    by_value = np.argsort(values, kind="mergesort")
    first = np.zeros(len(values), dtype=np.bool_)
    for j in range(len(values)):
        if j == 0 or values[by_value[j]] != values[by_value[j - 1]]:
            first[by_value[j]] = True
    return np.flatnonzero(first)


def _with_tree_bins(group: ServerGroup, members: np.ndarray, start: np.ndarray, key: np.ndarray,
                    partition: np.ndarray, tree_bins: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The walk with the flagged members' targets replaced by :meth:`ServerGroup.current_target`'s
    (which orders tree bins), topics that no longer exist keyed from ``num_topics`` on again."""
    keys: list[np.ndarray] = []
    partitions: list[np.ndarray] = []
    for i, member in enumerate(members.tolist()):
        if tree_bins[i]:
            pairs = [(t, p) for t, ps in group._current_target_keys(member) for p in ps]
            keys.append(np.array([t for t, _ in pairs], dtype=np.int64))
            partitions.append(np.array([p for _, p in pairs], dtype=np.int64))
        else:
            keys.append(key[start[i]:start[i + 1]])
            partitions.append(partition[start[i]:start[i + 1]])
    new_start = np.zeros(len(members) + 1, dtype=np.int64)
    np.cumsum([len(k) for k in keys], out=new_start[1:])
    return new_start, np.concatenate(keys), np.concatenate(partitions)


def member_positions(member_ids: Sequence[str], hashes: np.ndarray | None = None) -> np.ndarray:
    """The coordinator's members ``HashMap`` (filled in the order given), as Java iterates it:
    the position in ``member_ids`` of the first member it yields, the second, ...; ``hashes``: the
    ids' ``String.hashCode()`` where known already."""
    return hash_iteration_order(java_string_hashes(member_ids) if hashes is None else hashes)


def build_server_group(scenario: Scenario) -> ServerGroup:
    """Number the scenario's members and topics the way the server-side assignors see them."""
    members = scenario.members
    owned_names, owned_name = _owned_topic_numbers(members, scenario.topics)
    return assemble_server_group(
        member_ids=members.ids,
        member_hashes=members.java_id_hashes(),
        subscription_topics=members.subscription_topics,
        instance_ids=members.instance_ids,
        subscriptions=members.subscriptions,
        subscription=members.subscription,
        topics=scenario.topics,
        uuid_of_name=_topic_uuids(scenario, owned_names),
        owned_member=np.repeat(np.arange(len(members.ids), dtype=np.int64), np.diff(members.owned_start)),
        owned_name=owned_name,
        owned_names=owned_names,
        owned_partitions=members.owned_partitions,
    )


def _owned_topic_numbers(members: Members, topics: Mapping[str, int]) -> tuple[list[str], np.ndarray]:
    """``(names, number)``: owned pair ``j`` is of topic ``names[number[j]]``. Usually every owned topic
    still exists: the names are then the scenario's topics; otherwise the distinct owned names, in order
    of first listing. Each distinct owned name is looked up once (:meth:`Members.owned_topics_coded`)."""
    owned_names, code = members.owned_topics_coded()
    topic_number = dict(zip(topics, range(len(topics))))
    try:
        number_of_owned = np.array([topic_number[name] for name in owned_names], dtype=np.int64)
    except KeyError:  # a topic that no longer exists
        return owned_names, code
    return list(topics), number_of_owned[code]


def assemble_server_group(*, member_ids: Sequence[str], instance_ids: Sequence[str | None],
                          subscriptions: Sequence[tuple[str, ...]], subscription: np.ndarray,
                          topics: Mapping[str, int], uuid_of_name: Mapping[str, tuple[int, int]],
                          owned_member: np.ndarray, owned_name: np.ndarray, owned_names: Sequence[str],
                          owned_partitions: np.ndarray, member_hashes: np.ndarray | None = None,
                          subscription_topics: tuple[Sequence[str], np.ndarray, np.ndarray] | None = None,
                          ) -> ServerGroup:
    """Number a group given as columns, members in the order the coordinator put them in its map.

    ``subscriptions``: the distinct topic lists, member ``i`` listing ``subscriptions[subscription[i]]``;
    ``topics``: the existing topics' partition counts; ``uuid_of_name``: the id of every topic in
    ``topics`` and ``owned_names``; the current targets are pairs, pair ``j`` of member ``owned_member[j]``
    (each member's in the order listed): topic ``owned_names[owned_name[j]]``, partition ``owned_partitions[j]``.
    The distinct subscriptions are the subscription classes, so the members are never visited one
    by one here: their columns are permuted into member order. ``member_hashes``: the ids' Java hashes,
    where the caller has them (computed otherwise); ``subscription_topics``: the subscriptions' names as
    numbers, where a reader numbered them (:attr:`kassign.groups.scenario.Members.subscription_topics`)."""
    existing, existing_hashes = _topics_by_id(topics, uuid_of_name)
    topic_index = {name: i for i, name in enumerate(existing)}
    position = member_positions(member_ids, member_hashes)
    class_start, class_topics = _class_topics(subscriptions, topic_index, subscription_topics)
    return ServerGroup(
        given_member_ids=member_ids,
        given_instance_ids=instance_ids,
        given_position=position,
        topic_names=existing,
        topic_uuids=[uuid_of_name[name] for name in existing],
        num_partitions=np.array([topics[name] for name in existing], dtype=np.int64),
        member_class=np.asarray(subscription, dtype=np.int64)[position],
        class_start=class_start,
        class_topics=class_topics,
        homogeneous=_same_names(subscriptions),
        current=_current_targets(position, owned_member, owned_name, owned_names, owned_partitions, topic_index,
                                 uuid_of_name, existing_hashes),
        _class_names=list(subscriptions),
        _topic_index=topic_index,
    )


def _current_targets(position: np.ndarray, owned_member: np.ndarray, owned_name: np.ndarray,
                     owned_names: Sequence[str], owned_partitions: np.ndarray, topic_index: Mapping[str, int],
                     uuid_of_name: Mapping[str, tuple[int, int]], existing_hashes: np.ndarray) -> CurrentTargets:
    """The owned columns with members renumbered in member order and names turned into topic keys.
    ``existing_hashes``: the Java hashes of the ids of ``topic_index``'s topics, in its order."""
    gone: dict[str, int] = {}  # topics that no longer exist, keyed from T on in order of first listing
    key_of_name = np.array([topic_index[name] if name in topic_index
                            else len(topic_index) + gone.setdefault(name, len(gone)) for name in owned_names],
                           dtype=np.int64)
    gone_hashes = np.array([java_uuid_hash(*uuid_of_name[name]) for name in gone], dtype=np.int64)
    key_hashes = np.concatenate([existing_hashes, gone_hashes])
    number = np.empty(len(position), dtype=np.int64)  # given member -> its member number
    number[position] = np.arange(len(position))
    member = number[np.asarray(owned_member, dtype=np.int64)]
    key = key_of_name[np.asarray(owned_name, dtype=np.int64)] if len(member) else np.zeros(0, dtype=np.int64)
    return CurrentTargets(member, key, np.asarray(owned_partitions, dtype=np.int64), key_hashes)


class _TopicNumbers(dict):
    """Topic name -> number; a name that does not exist is -1 (Kafka's name -> id view drops it)."""

    def __missing__(self, name: str) -> int:
        return -1


def _class_topics(distinct: list[tuple[str, ...]], topic_index: Mapping[str, int],
                  coded: tuple[Sequence[str], np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """CSR of each class's topic numbers, distinct, in listing order, names that do not exist dropped.
    ``coded``: ``(names, start, code)``, the classes' names already numbered by ``names`` (-1: none of
    them): then only ``names`` are looked up, not every name of every class."""
    lookup = _TopicNumbers(topic_index)
    if coded is not None:
        names, start, code = coded
        number = np.fromiter(map(lookup.__getitem__, chain(names, [""])), dtype=np.int64, count=len(names) + 1)
        number[-1] = -1  # code -1 (a name none of ``names`` is) picks it
        return _distinct_per_class(number[code], np.diff(start), len(topic_index))
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


# A group's topics change far less often than its assignment is asked for: the last answers of _topic_uuids and
# _topics_by_id, with what they were asked, are kept (a hundred topics: some 80 us of Python per call).
_last_topic_uuids: tuple[tuple, dict[str, tuple[int, int]]] | None = None
_last_topics_by_id: tuple[tuple, list[str], np.ndarray] | None = None


def _topic_uuids(scenario: Scenario, owned_names: list[str]) -> dict[str, tuple[int, int]]:
    """Every topic name the scenario mentions -> its id, stated or derived; ids must be distinct.
    ``owned_names``: the distinct names of the members' owned topics. The last answer is given again (a copy)
    for the same names and stated ids."""
    global _last_topic_uuids
    asked = (tuple(scenario.topics), tuple(scenario.topic_ids.items()), tuple(owned_names))
    kept = _last_topic_uuids
    if kept is not None and kept[0] == asked:
        return dict(kept[1])
    result = _topic_uuids_of(scenario, owned_names)
    _last_topic_uuids = (asked, dict(result))
    return result


def _topics_by_id(topics: Mapping[str, int],
                  uuid_of_name: Mapping[str, tuple[int, int]]) -> tuple[list[str], np.ndarray]:
    """``topics``' names sorted by id as the coordinator's map of topic ids orders them (Uuid's signed
    comparison), and the Java hash of each one's id; the last answer again (copies) for the same names and ids."""
    global _last_topics_by_id
    names = tuple(topics)
    asked = (names, tuple(map(uuid_of_name.__getitem__, names)))
    kept = _last_topics_by_id
    if kept is not None and kept[0] == asked:
        return list(kept[1]), kept[2].copy()
    existing = sorted(topics, key=lambda name: _uuid_sort_key(uuid_of_name[name]))
    hashes = np.array([java_uuid_hash(*uuid_of_name[name]) for name in existing], dtype=np.int64)
    _last_topics_by_id = (asked, list(existing), hashes.copy())
    return existing, hashes


def _topic_uuids_of(scenario: Scenario, owned_names: list[str]) -> dict[str, tuple[int, int]]:
    names = dict.fromkeys(scenario.topics)
    names.update(dict.fromkeys(scenario.topic_ids))
    names.update(dict.fromkeys(owned_names))
    result: dict[str, tuple[int, int]] = {}
    seen: dict[tuple[int, int], str] = {}
    for name in names:
        stated = scenario.topic_ids.get(name)
        value = parse_topic_id(stated, name) if stated is not None else derived_topic_uuid(name)
        if value in seen:
            raise ScenarioError(f"scenario topic_ids: topics {seen[value]!r} and {name!r} have the same id")
        seen[value] = name
        result[name] = value
    return result
