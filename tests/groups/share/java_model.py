"""A slow, literal model of Kafka's share-group ``simple`` assignor, for cross-checking kassign's.

It replays the assignor step by step on simulated ``java.util.HashMap``s (:class:`JMap`: buckets,
insertion order within a bucket, growth), built straight from the scenario document with none of
kassign's own group machinery, so that a property test can compare the two on generated groups.
Buckets that Java would turn into trees are not modelled: the model raises :class:`TreeBin` and
the caller skips that example.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Mapping
from typing import Any

from kassign.core.javaorder import java_string_hash
from kassign.groups.consumer.group import derived_topic_id

_MASK = 0xFFFFFFFF


class TreeBin(Exception):
    """Nine keys met in one bucket of a table of 64 or more: Java would keep them in a tree."""


class NoSuchElement(Exception):
    """Where Kafka's assignor calls ``next()`` on an exhausted iterator."""


def _spread(h: int) -> int:
    h &= _MASK
    return h ^ (h >> 16)


def _table_size_for(n: int) -> int:
    size = 1
    while size < n:
        size <<= 1
    return size


class JMap:
    """Keys of a Java HashMap/HashSet in iteration order, with values (None for a set)."""

    def __init__(self, hash_of, initial: int | None = None) -> None:
        self.hash_of = hash_of
        self.cap = 16 if initial is None else _table_size_for(initial)
        self.buckets: dict[int, list[Any]] = {}
        self.values: dict[Any, Any] = {}

    @classmethod
    def new_hash_map(cls, hash_of, mappings: int) -> JMap:
        """``AssignorHelpers.newHashMap(n)`` / ``newHashSet(n)``."""
        import numpy as np
        return cls(hash_of, int(np.float32(mappings + 1) / np.float32(0.75) + np.float32(1)))

    @classmethod
    def copy_of(cls, hash_of, items: list[Any]) -> JMap:
        """``new HashSet<>(collection)``."""
        import numpy as np
        made = cls(hash_of, max(int(np.float32(len(items)) / np.float32(0.75)) + 1, 16))
        for item in items:
            made.put(item)
        return made

    def _bucket(self, key: Any) -> int:
        return _spread(self.hash_of(key)) & (self.cap - 1)

    def __contains__(self, key: Any) -> bool:
        return key in self.values

    def __len__(self) -> int:
        return len(self.values)

    def get(self, key: Any) -> Any:
        return self.values.get(key)

    def put(self, key: Any, value: Any = None) -> None:
        if key in self.values:
            self.values[key] = value
            return
        self.values[key] = value
        chain = self.buckets.setdefault(self._bucket(key), [])
        chain.append(key)
        if len(chain) >= 9:
            if self.cap < 64:
                self._grow()
            else:
                raise TreeBin()
        if len(self.values) > self.cap * 3 // 4:
            self._grow()

    def add(self, key: Any) -> None:
        self.put(key)

    def compute_if_absent(self, key: Any, value: Any) -> Any:
        """``computeIfAbsent``: unlike ``put`` it grows the table before looking the key up (when the map
        already holds more than 3/4 of it), puts a new key at the head of its bucket, and a bucket of 8
        is too many."""
        if len(self.values) > self.cap * 3 // 4:  # checked before the lookup: a present key can grow it too
            self._grow()
        if key in self.values:
            return self.values[key]
        self.values[key] = value
        chain = self.buckets.setdefault(self._bucket(key), [])
        chain.insert(0, key)
        if len(chain) >= 8:
            if self.cap < 64:
                self._grow()
            else:
                raise TreeBin()
        return value

    def remove(self, key: Any) -> bool:
        if key not in self.values:
            return False
        del self.values[key]
        self.buckets[self._bucket(key)].remove(key)
        return True

    def _grow(self) -> None:
        old = self.buckets
        self.cap *= 2
        self.buckets = {}
        for b in sorted(old):
            for key in old[b]:
                self.buckets.setdefault(self._bucket(key), []).append(key)

    def keys(self) -> list[Any]:
        return [k for b in sorted(self.buckets) for k in self.buckets[b]]

    def copy_keys(self) -> list[Any]:
        return self.keys()


def _int_hash(i: int) -> int:
    return i & _MASK


def _uuid_of(text: str) -> tuple[int, int]:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    return int.from_bytes(raw[:8], "big"), int.from_bytes(raw[8:], "big")


def _uuid_hash(u: tuple[int, int]) -> int:
    x = u[0] ^ u[1]
    return ((x >> 32) ^ x) & _MASK


def _tip_hash(tip: tuple[tuple[int, int], int]) -> int:
    return (31 * _uuid_hash(tip[0]) + tip[1]) & _MASK


class _Unfilled:
    """``HashSet<Integer>`` of member indices sized for every member: iterates by spread hash."""

    def __init__(self, members: int) -> None:
        self.map = JMap.new_hash_map(_int_hash, members)

    def add(self, m: int) -> None:
        self.map.add(m)


def _topic_ids(scenario: Mapping[str, Any]) -> tuple[dict[str, int], dict[str, tuple[int, int]], dict]:
    """``(topics, ids, name_of)``: the topics' counts, every named topic's id (given or derived), and back."""
    topics: dict[str, int] = dict(scenario["topics"])
    ids = {name: _uuid_of(scenario.get("topic_ids", {}).get(name) or derived_topic_id(name))
           for name in {*topics, *scenario.get("topic_ids", {}),
                        *(t for m in scenario["members"].values() for t, _ in m.get("owned", []))}}
    return topics, ids, {u: n for n, u in ids.items()}


def simple_assign(scenario: Mapping[str, Any]) -> dict[str, set[tuple[str, int]]]:
    """Kafka's ``simple`` assignor on a scenario document (SPEC section 6): member -> set of (topic, partition)."""
    topics, ids, name_of = _topic_ids(scenario)
    initialized = scenario.get("initialized")

    def assignable(u: tuple[int, int], p: int) -> bool:
        if initialized is None:
            return True
        return p in set(initialized.get(name_of[u], ()))

    member_map = JMap(java_string_hash)
    for member_id in scenario["members"]:
        member_map.put(member_id)
    member_ids = member_map.keys()
    spec = scenario["members"]
    name_sets = {m: JMap.copy_of(java_string_hash, list(spec[m]["topics"])) for m in member_ids}

    def subscribed_ids(m: str) -> list[tuple[int, int]]:  # the TopicIds view, in its order
        return [ids[n] for n in name_sets[m].keys() if n in topics]

    old = {i: _old_assignment(spec[m], ids) for i, m in enumerate(member_ids)}
    if not member_ids:
        return {}
    names_of = [frozenset(spec[m]["topics"]) for m in member_ids]
    if all(n == names_of[0] for n in names_of):
        result = _homogeneous(member_ids, old, subscribed_ids(member_ids[0]), names_of[0], topics, name_of,
                              assignable, ids)
    else:
        result = _heterogeneous(member_ids, old, [subscribed_ids(m) for m in member_ids], topics, name_of,
                                assignable)
    out: dict[str, set[tuple[str, int]]] = {m: set() for m in scenario["members"]}
    if result is None:
        return out
    for i, assignment in result.items():
        for u, ps in assignment.items():
            out[member_ids[i]].update((name_of[u], p) for p in ps)
    return out


def _old_assignment(member: Mapping[str, Any], ids) -> JMap:
    """A member's current target as the coordinator holds it: ``HashMap<Uuid, HashSet<Integer>>``, topics put in
    the order their first partition is listed, each topic's set copied at once from its listed partitions."""
    listed: dict[tuple[int, int], list[int]] = {}
    for t, p in member.get("owned", []):
        listed.setdefault(ids[t], []).append(p)
    made = JMap(_uuid_hash)
    for u, ps in listed.items():
        made.put(u, JMap.copy_of(_int_hash, ps))
    return made


def _desired_counts(sharing: int, targets: int, members: int) -> list[int]:
    precise = sharing * targets / float(members)
    return [math.ceil(precise * (i + 1)) - math.ceil(precise * i) for i in range(members)]


def _plain(assignment: JMap) -> dict[tuple[int, int], set[int]]:
    return {u: set(assignment.get(u).keys()) for u in assignment.keys()}


def _homogeneous(member_ids, old, subscribed, names, topics, name_of, assignable, ids):
    if not names:
        return None
    num = len(member_ids)
    targets = [(u, p) for u in subscribed for p in range(topics[name_of[u]]) if assignable(u, p)]
    sharing = 0 if not targets else (num + len(targets) - 1) // len(targets)
    desired = _desired_counts(sharing, len(targets), num)
    contains = {ids[n] for n in names if n in topics}
    new: dict[int, dict] = {}
    by_partition = JMap.new_hash_map(_tip_hash, len(targets))
    by_member = JMap.new_hash_map(_int_hash, num)
    unfilled = JMap.new_hash_map(_int_hash, num)
    overfilled = JMap.new_hash_map(_int_hash, num)
    old_order = JMap.new_hash_map(_int_hash, num)
    for i in range(num):
        old_order.put(i)
    for i in old_order.keys():
        count = 0
        copy = None
        for u in old[i].keys():
            if u in contains:
                for p in old[i].get(u).keys():
                    count += 1
                    by_partition.compute_if_absent((u, p), JMap(_int_hash)).add(i)
                    by_member.compute_if_absent(i, JMap(_tip_hash)).add((u, p))
                    if count >= desired[i] and copy is None:
                        copy = _plain(old[i])
            else:
                if copy is None:
                    copy = _plain(old[i])
                copy.pop(u, None)
        if copy is not None:
            new[i] = copy
        if count < desired[i]:
            unfilled.add(i)
        elif count > desired[i]:
            overfilled.add(i)
    for i in overfilled.keys():
        mine = by_member.get(i)
        for tip in mine.keys():
            if len(mine) <= desired[i]:
                break
            new[i][tip[0]].discard(tip[1])
            by_partition.get(tip).remove(i)
            mine.remove(tip)
    for tip in by_partition.keys():
        holders = by_partition.get(tip)
        count = len(holders)
        if count > sharing:
            for i in holders.keys():
                if i not in new:
                    new[i] = _plain(old[i])
                partitions = new[i].get(tip[0])
                if partitions is not None and tip[1] in partitions:
                    partitions.discard(tip[1])
                    count -= 1
                    holders.remove(i)
                    by_member.get(i).remove(tip)
                    unfilled.add(i)
                if count <= sharing:
                    break
    for tip in targets:
        by_partition.compute_if_absent(tip, JMap(_int_hash))

    def size_of(i):
        mine = by_member.get(i)
        return 0 if mine is None else len(mine)

    def give(i, tip):
        if i not in new:
            new[i] = _plain(old[i])
        new[i].setdefault(tip[0], set()).add(tip[1])
        by_member.compute_if_absent(i, JMap(_tip_hash)).add(tip)

    _assign_remaining(by_partition, unfilled, sharing, desired, size_of, give)
    return {i: (new[i] if i in new else _plain(old[i])) for i in range(num)}


def _assign_remaining(by_partition: JMap, unfilled: JMap, sharing: int, desired, size_of, give) -> None:
    """The round robin over the members still below their count, shared by both builders."""
    if len(unfilled) == 0:
        return
    members = unfilled.keys()
    at = 0
    assigned_this_pass = False
    for key in by_partition.keys():
        holders = by_partition.get(key)
        if len(holders) < sharing:
            to_make = sharing - len(holders)
            while to_make > 0:
                while at < len(members) and members[at] not in unfilled:
                    at += 1
                if at >= len(members):
                    if not assigned_this_pass:
                        break
                    members = unfilled.keys()
                    at = 0
                    assigned_this_pass = False
                    if not members:
                        raise NoSuchElement()
                i = members[at]
                at += 1
                if i not in holders:
                    give(i, key)
                    to_make -= 1
                    assigned_this_pass = True
                    if size_of(i) >= desired[i]:
                        unfilled.remove(i)
        if len(unfilled) == 0:
            break


def _heterogeneous(member_ids, old, subscribed, topics, name_of, assignable):
    num = len(member_ids)
    union = JMap(_uuid_hash)
    for ids in subscribed:
        for u in ids:
            union.add(u)
    if len(union) == 0:
        return None
    subscribers: dict[tuple[int, int], list[int]] = {}
    for i, ids in enumerate(subscribed):
        for u in ids:
            subscribers.setdefault(u, []).append(i)
    new: dict[int, dict] = {}
    old_order = JMap.new_hash_map(_int_hash, num)
    for i in range(num):
        old_order.put(i)
    for u in union.keys():
        targets = [p for p in range(topics[name_of[u]]) if assignable(u, p)]
        members = subscribers[u]
        sharing = 0 if not targets else (len(members) + len(targets) - 1) // len(targets)
        desired = [0] * num
        for k, c in enumerate(_desired_counts(sharing, len(targets), len(members))):
            desired[members[k]] = c
        by_partition = JMap.new_hash_map(_int_hash, len(targets))
        by_member = JMap.new_hash_map(_int_hash, len(members))
        for i in old_order.keys():
            if len(old[i]) == 0:
                continue
            mine = old[i].get(u)
            if mine is not None:
                for p in mine.keys():
                    by_partition.compute_if_absent(p, JMap(_int_hash)).add(i)
                    by_member.compute_if_absent(i, JMap(_int_hash)).add(p)
        for i in by_member.keys():
            mine = by_member.get(i)
            for p in mine.keys():
                if len(mine) <= desired[i]:
                    break
                by_partition.get(p).remove(i)
                mine.remove(p)
                if i not in new:
                    new[i] = _plain(old[i])
                new[i][u].discard(p)
        for p in by_partition.keys():
            holders = by_partition.get(p)
            count = len(holders)
            if count > sharing:
                for i in holders.keys():
                    if i not in new:
                        new[i] = _plain(old[i])
                    partitions = new[i].get(u)
                    if partitions is not None and p in partitions:
                        partitions.discard(p)
                        count -= 1
                        holders.remove(i)
                        by_member.get(i).remove(p)
                    if count <= sharing:
                        break
        for p in targets:
            by_partition.compute_if_absent(p, JMap.new_hash_map(_int_hash, len(members)))
        unfilled = JMap.new_hash_map(_int_hash, num)
        for i in members:
            mine = by_member.get(i)
            if (0 if mine is None else len(mine)) < desired[i]:
                unfilled.add(i)

        def size_of(i, by_member=by_member):
            return len(by_member.get(i))

        def give(i, p, u=u, by_member=by_member):
            if i not in new:
                new[i] = _plain(old[i])
            new[i].setdefault(u, set()).add(p)
            by_member.compute_if_absent(i, JMap(_int_hash)).add(p)

        _assign_remaining(by_partition, unfilled, sharing, desired, size_of, give)
    return {i: (new[i] if i in new else _plain(old[i])) for i in range(num)}


def as_sets(assignment: Mapping[str, Iterable[Iterable[Any]]]) -> dict[str, set[tuple[str, int]]]:
    return {m: {(t, p) for t, p in ps} for m, ps in assignment.items()}


# -- Kafka 4.1's rule (hash, then current holdings, then round robin) ------------------------------

class PartitionAssignorError(Exception):
    """Where Kafka 4.1's round robin runs out of members (``PartitionAssignorException``)."""


def simple_assign_41(scenario: Mapping[str, Any]) -> dict[str, set[tuple[str, int]]]:
    """Kafka 4.1's ``simple`` assignor on a scenario document, step by step: member -> set of (topic, partition)."""
    topics, ids, name_of = _topic_ids(scenario)
    initialized = scenario.get("initialized")
    spec = scenario["members"]
    out: dict[str, set[tuple[str, int]]] = {m: set() for m in spec}
    member_map = JMap(java_string_hash)
    for member_id in spec:
        member_map.put(member_id)
    member_ids = member_map.keys()
    if not member_ids:
        return out
    name_sets = {m: JMap.copy_of(java_string_hash, list(spec[m]["topics"])) for m in member_ids}

    def targets_of(m: str) -> list[tuple[tuple[int, int], int]]:  # computeTargetPartitions over the TopicIds view
        result = []
        for name in name_sets[m].keys():
            if name in topics:
                for p in range(topics[name]):
                    if initialized is None or p in set(initialized.get(name, ())):
                        result.append((ids[name], p))
        return result

    current = JMap(_tip_hash)  # TopicIdPartition -> [member ids], in memberIds order
    for m in member_ids:
        by_topic = _old_assignment(spec[m], ids)
        for u in by_topic.keys():
            for p in by_topic.get(u).keys():
                holders = current.compute_if_absent((u, p), [])
                holders.append(m)

    names = [frozenset(spec[m]["topics"]) for m in member_ids]
    if all(n == names[0] for n in names):
        final = _homogeneous_41(member_ids, names[0], targets_of(member_ids[0]), current, ids, topics)
    else:
        final = _heterogeneous_41(member_ids, {m: targets_of(m) for m in member_ids if spec[m]["topics"]}, current)
    for m, tips in final.items():
        out[m].update((name_of[u], p) for u, p in tips)
    return out


def _java_abs_mod(member_id: str, size: int) -> int:
    h = java_string_hash(member_id) & _MASK
    signed = h - (1 << 32) if h >= 1 << 31 else h
    return abs(int(math.fmod(signed, size)))


def _homogeneous_41(member_ids, names, targets, current, ids, topics):
    if not names:
        return {}
    subscribed = {ids[n] for n in names if n in topics}
    num, count = len(member_ids), len(targets)
    desired = (count + num - 1) // num
    hashed: dict = {}
    if targets:
        for m in member_ids:
            hashed.setdefault(targets[_java_abs_mod(m, count)], []).append(m)
    final: dict[str, set] = {}
    claimed = set()
    for tip, ms in hashed.items():
        for m in ms:
            final.setdefault(m, set()).add(tip)
            claimed.add(tip)
    for tip in current.keys():
        if tip[0] in subscribed:
            for m in current.get(tip):
                mine = final.setdefault(m, set())
                if len(mine) < desired and tip not in hashed:
                    mine.add(tip)
                    claimed.add(tip)
    ring = list(member_ids)
    at = 0
    queue = [tip for tip in targets if tip not in claimed]
    i = 0
    while i < len(queue):
        if at >= len(ring):
            at = 0
            if not ring:
                raise PartitionAssignorError()
        m = ring[at]
        mine = final.setdefault(m, set())
        if len(mine) <= desired:
            mine.add(queue[i])
            at += 1
            i += 1
        else:
            del ring[at]  # the iterator's remove: the next member moves into this place
    return final


def _heterogeneous_41(member_ids, subscriptions, current):
    by_member = JMap(java_string_hash)
    for m in member_ids:
        if m in subscriptions:
            by_member.put(m, subscriptions[m])
    readers: dict = {}
    for m in by_member.keys():
        for tip in by_member.get(m):
            readers.setdefault(tip[0], [])
            if m not in readers[tip[0]]:
                readers[tip[0]].append(m)
    hashed: dict = {}
    for m in by_member.keys():
        mine = by_member.get(m)
        if mine:
            hashed.setdefault(mine[_java_abs_mod(m, len(mine))], []).append(m)
    unassigned: dict = {}
    for m in by_member.keys():
        for tip in by_member.get(m):
            if tip not in hashed and tip not in current and tip not in unassigned.get(tip[0], []):
                unassigned.setdefault(tip[0], []).append(tip)
    for u, tips in unassigned.items():
        for k, tip in enumerate(tips):
            hashed.setdefault(tip, []).append(readers[u][k % len(readers[u])])
    final: dict[str, set] = {}
    for tip, ms in hashed.items():
        for m in ms:
            final.setdefault(m, set()).add(tip)
    for tip in current.keys():
        for m in current.get(tip):
            if m in readers.get(tip[0], []) and tip not in hashed:
                final.setdefault(m, set()).add(tip)
    return final
