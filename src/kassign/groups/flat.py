"""An assignment as integers, and the two shapes users get it in.

Every built-in assignor ends with the same thing: one owner per partition. Here that
is a :class:`FlatAssignment`:

* ``members``: member names, numbered ``0..M-1`` in whatever order the assignor
  walked them;
* ``topics`` and ``offsets``: topic ``t``'s partitions are the flat ids
  ``offsets[t] .. offsets[t+1]-1``, partition ``p`` being ``offsets[t] + p``;
* ``owner``: the member number holding each flat id, ``-1`` for nobody.

An assignor that deliberately gives a partition to several members (``broadcast``;
any assignor whose ``exclusive`` is False) is kept as ``(member, flat id)`` pairs in
``shared`` instead; ``owner`` is then unused.

Example: members ``["b", "a"]``, topics ``["t1", "t0"]`` with 1 and 2 partitions
(``offsets [0, 1, 3]``), ``owner [0, 1, 0]``: ``b`` holds ``t1-0`` and ``t0-1``, ``a``
holds ``t0-0``. As the dict API gives it: ``{"a": [("t0", 0)], "b": [("t0", 1), ("t1", 0)]}``;
as a table, the same three rows in that order.

Both shapes are built from the arrays: a compiled counting sort groups the assigned
partitions by member (in name order), topics in name order within a member, partitions
ascending within a topic, as a topic number and a partition number each, so no Python
object exists per partition until the dict's tuples, and none at all for the table.
(topic, partition) pairs are materialised only here, all at once: one list of names and
one of numbers gathered from a few hundred shared objects, zipped into tuples, then
cut into the members' lists count by count (:func:`member_lists`). The tuples of the last topic
layout are kept (:func:`layout_pairs`), so asking again for the same topics makes only the lists.
Where the compiled part is built (:mod:`kassign._accel`), the dict is made from the arrays in one C pass
instead (``owner_pairs``, ``shared_pairs``: :meth:`FlatAssignment._native_dict`), in the same order,
sharing the same kept tuples.
"""

from __future__ import annotations

import contextlib
import gc
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
from numba import njit

from kassign import _accel
from kassign.core.errors import KassignError
from kassign.core.limits import is_whole_number

Pairs = list[tuple[str, int]]


@dataclass(frozen=True)
class FlatAssignment:
    members: list[str]
    topics: list[str]
    offsets: np.ndarray
    owner: np.ndarray
    shared: tuple[np.ndarray, np.ndarray] | None = None
    members_sorted: bool = False  # the caller knows ``members`` are in ascending order (a reader saw them)

    def grouped(self) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
        """``(names, bounds, topic, partition)``: member ``names`` sorted; ``names[i]`` holds the
        pairs ``bounds[i] .. bounds[i+1]-1`` of the ``topic`` (index into ``topics``) and
        ``partition`` columns, by topic name, then partition."""
        if self.members_sorted:
            names, member_rank = self.members, np.arange(len(self.members), dtype=np.int64)
        else:
            names, member_rank = _sorted_with_ranks(self.members)
        topic_order = np.array(sorted(range(len(self.topics)), key=self.topics.__getitem__), dtype=np.int64)
        offsets = np.asarray(self.offsets, dtype=np.int64)
        if self.shared is not None:
            bounds, flat = _group_pairs(*self.shared, member_rank, topic_order, offsets)
            return (names, bounds, *self.topic_and_partition(flat))
        return (names, *group_by_owner(self.owner, offsets, member_rank, topic_order))

    def topic_and_partition(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        topic = topic_of_flat(self.offsets, flat)
        return topic, flat - self.offsets[topic]

    def to_dict(self, members: Iterable[str] = ()) -> dict[str, Pairs]:
        """The dict API's shape: ``{member: [(topic, partition), ...]}``, members sorted, each list sorted;
        every member of ``members`` present (with ``[]`` if it holds nothing)."""
        native = _accel.native
        if native is not None:
            result = self._native_dict(native)
        else:
            names, bounds, topic, partition = self.grouped()
            with no_cyclic_gc():
                result = self._pairs_by_member(names, bounds, topic, partition)
        missing = [] if members is self.members else [m for m in members if m not in result]
        if missing:
            result.update((m, []) for m in missing)
            result = dict(sorted(result.items()))
        return result

    def _native_dict(self, native: Any) -> dict[str, Pairs]:
        """:meth:`_pairs_by_member` of :meth:`grouped`'s columns, in one C pass from ``owner``
        (``kassign._native.owner_pairs``) or from the ``shared`` pairs (``shared_pairs``): the grouped
        columns are never made. For a million partitions they were a counting sort writing two 8 MiB columns
        out of order (10 ms), read back by the C pass; for a share group's ten thousand pairs, numpy steps from
        flat ids to topic and partition columns and back (0.5 ms around 50 us of work). The same lists,
        sharing the same kept tuples where :meth:`_pairs_by_member` shares them."""
        if self.members_sorted:
            names, member_rank = list(self.members), np.arange(len(self.members), dtype=np.int64)
        else:
            names, member_rank = _sorted_with_ranks(list(self.members))
        topics = list(self.topics)
        topic_order = np.array(sorted(range(len(topics)), key=topics.__getitem__), dtype=np.int64)
        offsets = np.ascontiguousarray(self.offsets, dtype=np.int64)
        if self.shared is not None:
            member = np.ascontiguousarray(self.shared[0], dtype=np.int64)
            flat = np.ascontiguousarray(self.shared[1], dtype=np.int64)
            kept = self._kept_pairs(topics, offsets, len(flat), len(names))
            with no_cyclic_gc():
                return native.shared_pairs(names, member_rank, member, flat, topic_order, offsets, topics, kept)
        owner = np.ascontiguousarray(self.owner)  # int32 from the sticky engine, int64 elsewhere: both read as they are
        if owner.dtype != np.int32:
            owner = owner.astype(np.int64, copy=False)
        kept = None if offsets[-1] > _KEPT_PAIRS_AT_MOST else \
            self._kept_pairs(topics, offsets, int(np.count_nonzero(owner >= 0)), len(names))
        with no_cyclic_gc():
            return native.owner_pairs(names, member_rank, owner, topic_order, offsets, topics, kept)

    @staticmethod
    def _kept_pairs(topics: list[str], offsets: np.ndarray, rows: int, members: int) -> list[tuple[str, int]] | None:
        """The layout's kept tuples (:func:`layout_pair_list`) where :meth:`_pairs_by_member` shares them: a
        layout small enough to keep, and many short lists (``rows`` pairs over ``members`` lists)."""
        if offsets[-1] <= _KEPT_PAIRS_AT_MOST and rows <= _SHORT_LISTS * members:
            return layout_pair_list(topics, offsets)
        return None

    def _pairs_by_member(self, names: list[str], bounds: np.ndarray, topic: np.ndarray,
                         partition: np.ndarray) -> dict[str, Pairs]:
        """``{names[i]: list of (topic, partition) tuples}``, member ``i``'s rows ``bounds[i] .. bounds[i+1]-1``,
        without the compiled part (:meth:`_native_dict` otherwise).

        On a layout small enough to keep its tuples, many short lists share the kept tuples, gathered count by
        count (:func:`member_lists`); otherwise few long lists are sliced out of one list of new tuples (few long
        lists cost little per member)."""
        offsets = np.asarray(self.offsets, dtype=np.int64)
        keep = offsets[-1] <= _KEPT_PAIRS_AT_MOST and len(topic) <= _SHORT_LISTS * (len(bounds) - 1)
        if not keep:
            return pairs_by_member(names, bounds, self.topics, topic, partition)
        return dict(zip(names, member_lists(layout_pairs(self.topics, offsets)[offsets[topic] + partition], bounds)))

    def to_table(self) -> pa.Table:
        """Columns ``member`` (string), ``topic`` (string), ``partition`` (int32); one row per
        assigned partition, in the order of :meth:`to_dict`."""
        names, bounds, topic, partition = self.grouped()
        member_index = np.repeat(np.arange(len(names), dtype=np.int32), np.diff(bounds))
        member = pa.DictionaryArray.from_arrays(pa.array(member_index), pa.array(names, type=pa.string()))
        topic_column = pa.DictionaryArray.from_arrays(pa.array(topic.astype(np.int32)),
                                                      pa.array(self.topics, type=pa.string()))
        return pa.table({
            "member": member.cast(pa.string()),
            "topic": topic_column.cast(pa.string()),
            "partition": pa.array(partition.astype(np.int32)),
        })

    @classmethod
    def from_mapping(cls, result: Any, counts: Mapping[str, int], topics_of: Mapping[str, Iterable[str]],
                     who: str, *, exclusive: bool = True) -> FlatAssignment:
        """An assignor's own result (member -> partitions) as arrays, checked as a Kafka leader does not.

        ``counts``: partition count of every topic that may be assigned; ``topics_of``: each
        member's subscribed topics. Refuses anything but a mapping of known members to
        (topic, partition) lists, a partition given twice, an unknown topic, a partition number
        outside its topic, and a partition of a topic its member does not subscribe to, naming
        ``who`` and the first problem. ``exclusive=False`` allows a partition to several members."""
        if not isinstance(result, Mapping):
            raise KassignError(f"{who} returned {type(result).__name__}, expected a mapping of member -> Assignment")
        strangers = [m for m in result if m not in topics_of]
        if strangers:
            raise KassignError(f"{who} assigned partitions to unknown members {sorted(map(str, strangers))}")
        topics = list(counts)
        index = {t: i for i, t in enumerate(topics)}
        offsets = np.zeros(len(topics) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(counts.values(), dtype=np.int64, count=len(topics)), out=offsets[1:])
        owner = np.full(int(offsets[-1]), -1, dtype=np.int64)
        members = list(result)
        holders: list[tuple[int, int]] = []
        for m, member in enumerate(members):
            subscribed = frozenset(topics_of[member])
            for topic, partition in _partitions_of(result[member], who, member):
                t = index.get(topic)
                if t is None:
                    raise KassignError(f"{who} assigned {topic}-{partition} to {member!r}, but no member subscribes "
                                       f"to a topic {topic!r} that the cluster has")
                if not 0 <= partition < counts[topic]:
                    raise KassignError(f"{who} assigned {topic}-{partition} to {member!r}, but {topic!r} has "
                                       f"partitions 0..{counts[topic] - 1}")
                if topic not in subscribed:
                    raise KassignError(f"{who} assigned {topic}-{partition} to {member!r}, which does not "
                                       f"subscribe to {topic!r}")
                flat = int(offsets[t]) + partition
                if not exclusive:
                    holders.append((m, flat))
                    continue
                if owner[flat] >= 0:
                    raise KassignError(f"{who} assigned {topic}-{partition} to both {members[owner[flat]]!r} "
                                       f"and {member!r}")
                owner[flat] = m
        if exclusive:
            return cls(members, topics, offsets, owner)
        pairs = np.array(sorted(set(holders)), dtype=np.int64).reshape(-1, 2)
        return cls(members, topics, offsets, owner, shared=(pairs[:, 0].copy(), pairs[:, 1].copy()))


def pair_objects(topics: list[str], topic: np.ndarray, partition: np.ndarray,
                 make: Callable[[Iterator[tuple[str, int]]], Iterator[Any]] = iter) -> list[Any]:
    """One ``(topic, partition)`` object per row of the ``topic`` (index into ``topics``) and
    ``partition`` columns: the tuples zip builds, or ``make`` of them (e.g. ``map(cls._make, ...)``).

    Both columns are gathered from shared objects (the topic names, one int per partition number),
    so the only new objects are the pairs themselves."""
    names = np.array(topics, dtype=object)
    numbers = np.array(range(int(partition.max()) + 1 if len(partition) else 0), dtype=object)
    return list(make(zip(names[topic].tolist(), numbers[partition].tolist())))


def pairs_by_member(names: list[str], bounds: np.ndarray, topics: list[str], topic: np.ndarray,
                    partition: np.ndarray, pair_type: type[tuple] | None = None) -> dict[str, list[Any]]:
    """``{names[i]: [pair, ...]}`` with member ``i``'s rows ``bounds[i] .. bounds[i+1]-1`` of the ``topic``
    (index into ``topics``) and ``partition`` columns as new ``(topic, partition)`` pairs: tuples, or
    ``pair_type``'s (a tuple subclass without fields of its own, such as ``TopicPartition``). In one C pass
    where the compiled part is built, else through :func:`pair_objects`."""
    native = _accel.native
    if native is not None and (pair_type is None or native.PAIR_TYPES):
        return native.member_pairs(list(names), np.asarray(bounds, dtype=np.int64), topic, partition, list(topics),
                                   None, None, pair_type)
    make = iter if pair_type is None else partial(map, partial(tuple.__new__, pair_type))
    return dict(zip(names, sliced(pair_objects(topics, topic, partition, make), bounds)))


# How many names _sorted_with_ranks looks at before it bets that all are sorted (a sort of sorted names is one pass).
_PEEK = 64


def _sorted_with_ranks(names: list[str]) -> tuple[list[str], np.ndarray]:
    """``names`` sorted, and the rank of each of ``names`` in that order."""
    if all(map(operator.le, names[:_PEEK], names[1:_PEEK])):  # documents often list members sorted
        in_order = sorted(names)
        if in_order == names:
            return in_order, np.arange(len(names), dtype=np.int64)
    order = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names), dtype=np.int64)
    return [names[m] for m in order], rank


# Above this many distinct list lengths, member_lists slices each list out on its own.
_FEW_LENGTHS = 8
# Lists this long on average, or shorter, are worth building without a Python step per member.
_SHORT_LISTS = 8


def member_lists(pairs: np.ndarray, bounds: np.ndarray) -> list[list[Any]]:
    """Member ``i``'s list of ``pairs[bounds[i]:bounds[i+1]]`` (an object array), for each ``i``.

    An assignment gives most members one of a few counts, so the members are taken count by count:
    the pairs of all members holding ``k`` are gathered as a table of ``k`` columns, which numpy
    turns into its rows' lists in one call (no slice object, no per-member Python step), then put
    in their members' places. Many distinct counts: one slice per member."""
    bounds = np.asarray(bounds, dtype=np.int64)
    lengths = np.diff(bounds)
    how_many = np.bincount(lengths) if len(lengths) else np.zeros(0, dtype=np.int64)
    sizes = np.flatnonzero(how_many).tolist()
    if len(sizes) > _FEW_LENGTHS:
        return list(sliced(pairs.tolist(), bounds))
    lists = np.empty(len(lengths), dtype=object)
    for size in sizes:
        members = np.flatnonzero(lengths == size)
        rows = (bounds[members][:, None] + np.arange(size, dtype=np.int64)).ravel()
        table = pairs[rows].reshape(len(members), size).tolist()
        lists[members] = np.fromiter(table, dtype=object, count=len(members))
    return lists.tolist()


# The (topic, partition) tuples of the last topic layout a dict was built for, kept while it has at most
# this many partitions: a group's topics change far less often than its assignment is asked for.
_KEPT_PAIRS_AT_MOST = 1 << 17
_kept_pairs: tuple[tuple[tuple[str, ...], bytes], np.ndarray] | None = None
_kept_pair_list: tuple[np.ndarray, list[tuple[str, int]]] | None = None  # the same tuples as a list, for the C pass


def topic_of_flat(offsets: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """The topic number of each flat id of ``flat`` (all in the layout ``offsets``). Where the layout is not
    much longer than ``flat``, read from a table of every flat id's topic: one gather, against a binary search
    per id (ten thousand share-group pairs: a tenth of the time)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    if int(offsets[-1]) <= 8 * len(flat):
        return np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))[flat]
    return np.searchsorted(offsets, flat, side="right") - 1


def layout_pairs(topics: list[str], offsets: np.ndarray) -> np.ndarray:
    """One ``(topic, partition)`` tuple per flat id of the layout (an object array), made once per layout
    of at most ``_KEPT_PAIRS_AT_MOST`` partitions. Tuples are immutable, so results built at different
    times may share them."""
    global _kept_pairs
    offsets = np.asarray(offsets, dtype=np.int64)
    key = (tuple(topics), offsets.tobytes())
    kept = _kept_pairs
    if kept is not None and kept[0] == key:
        return kept[1]
    topic = np.repeat(np.arange(len(topics), dtype=np.int64), np.diff(offsets))
    flat = np.arange(int(offsets[-1]), dtype=np.int64)
    pairs = np.fromiter(pair_objects(topics, topic, flat - offsets[topic]), dtype=object, count=len(flat))
    _kept_pairs = (key, pairs)
    return pairs


def layout_pair_list(topics: list[str], offsets: np.ndarray) -> list[tuple[str, int]]:
    """:func:`layout_pairs` as a list, kept with it: a result built again for the same layout takes the list
    as it is, instead of listing ten thousand tuples (and releasing them) on every call."""
    global _kept_pair_list
    pairs = layout_pairs(topics, offsets)
    kept = _kept_pair_list
    if kept is not None and kept[0] is pairs:
        return kept[1]
    listed = pairs.tolist()
    _kept_pair_list = (pairs, listed)
    return listed


def sliced(items: list[Any], bounds: np.ndarray) -> Iterator[list[Any]]:
    """``items[bounds[i]:bounds[i+1]]`` for each ``i``."""
    cut = bounds.tolist()
    return map(items.__getitem__, map(slice, cut[:-1], cut[1:]))


def group_by_owner(owner: np.ndarray, offsets: np.ndarray, member_rank: np.ndarray,
                   topic_order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(bounds, topic, partition)``: the partitions with an owner (``owner[f] >= 0``, ``f`` a flat id
    over ``offsets``), grouped by ``member_rank[owner]``, topics walked in ``topic_order`` (default: by
    number), partitions ascending; rank ``r``'s at ``bounds[r] .. bounds[r+1]-1``."""
    offsets = np.asarray(offsets, dtype=np.int64)
    if topic_order is None:
        topic_order = np.arange(len(offsets) - 1, dtype=np.int64)
    return _group_by_owner(np.asarray(owner), member_rank, topic_order, offsets)


def _partitions_of(value: Any, who: str, member: str) -> Iterable[Any]:
    partitions = getattr(value, "partitions", value)
    if isinstance(partitions, (str, bytes)) or not isinstance(partitions, Iterable):
        raise KassignError(f"{who} returned {type(value).__name__} for {member!r}; expected an Assignment "
                           "or a list of (topic, partition)")
    for pair in partitions:
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and isinstance(pair[0], str)
                and is_whole_number(pair[1])):
            raise KassignError(f"{who} returned {pair!r} for {member!r}; expected (topic, partition)")
        yield pair[0], int(pair[1])


@njit(cache=True)
def _owner_bounds(owner, member_rank):
    """``bounds``: rank ``r``'s assigned partitions will be at ``bounds[r] .. bounds[r+1]-1``."""
    bounds = np.zeros(len(member_rank) + 1, dtype=np.int64)
    for f in range(len(owner)):
        if owner[f] >= 0:
            bounds[member_rank[owner[f]] + 1] += 1
    for i in range(len(member_rank)):
        bounds[i + 1] += bounds[i]
    return bounds


@njit(cache=True)
def _fill_by_owner(owner, member_rank, topic_order, offsets, bounds, topic, partition):
    """Counting sort of the assigned partitions by their owner's rank into ``topic`` and ``partition``,
    walking topics in ``topic_order``, partitions ascending."""
    fill = bounds[:-1].copy()
    for t in topic_order:
        first = offsets[t]
        for f in range(first, offsets[t + 1]):
            if owner[f] >= 0:
                r = member_rank[owner[f]]
                topic[fill[r]] = t
                partition[fill[r]] = f - first
                fill[r] += 1


def _group_by_owner(owner: np.ndarray, member_rank: np.ndarray, topic_order: np.ndarray,
                    offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(bounds, topic, partition)``, rank ``r``'s pairs at ``bounds[r] .. bounds[r+1]-1``. The two columns
    are allocated by numpy, which advises huge pages for large arrays (a million rows: about 1,400 page
    faults measured, against 2,900 for numba's own arrays), and filled by the compiled counting sort."""
    bounds = _owner_bounds(owner, member_rank)
    topic = np.empty(int(bounds[-1]), dtype=np.int64)
    partition = np.empty(int(bounds[-1]), dtype=np.int64)
    _fill_by_owner(owner, member_rank, topic_order, offsets, bounds, topic, partition)
    return bounds, topic, partition


def _group_pairs(member, flat, member_rank, topic_order, offsets):
    """:func:`_group_by_owner` for (member, flat id) pairs, where a flat id may have several holders
    (share groups: tens of thousands of pairs, so two counting sorts rather than a comparison sort)."""
    sizes = np.diff(offsets)
    start = np.zeros(len(sizes), dtype=np.int64)  # where each topic starts in the walk (topics in topic_order)
    start[topic_order] = np.cumsum(sizes[topic_order]) - sizes[topic_order]
    topic = topic_of_flat(offsets, flat)
    return _pairs_by_rank(member_rank[member], start[topic] + flat - offsets[topic], len(member_rank),
                          int(offsets[-1]), flat)


@njit(cache=True)
def _pairs_by_rank(rank, position, ranks, positions, flat):
    """``(bounds, flat)``: the pairs by ``rank``, then by ``position``, rank ``r``'s at ``bounds[r] .. bounds[r+1]-1``."""
    by_position = np.zeros(positions + 1, dtype=np.int64)
    for p in position:
        by_position[p + 1] += 1
    for p in range(positions):
        by_position[p + 1] += by_position[p]
    order = np.empty(len(position), dtype=np.int64)
    for i in range(len(position)):
        order[by_position[position[i]]] = i
        by_position[position[i]] += 1
    bounds = np.zeros(ranks + 1, dtype=np.int64)
    for r in rank:
        bounds[r + 1] += 1
    for r in range(ranks):
        bounds[r + 1] += bounds[r]
    fill = bounds[:-1].copy()
    out = np.empty(len(order), dtype=np.int64)
    for i in order:
        out[fill[rank[i]]] = flat[i]
        fill[rank[i]] += 1
    return bounds, out


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Build many acyclic objects (a result's lists of pairs) without the cyclic garbage collector,
    then hand everything young to the oldest generation, unexamined.

    Left young, a result's lists would be traversed element by element by the next young
    collections (a million pair references, touched in no useful order: tens of milliseconds)
    only to find that all of them survive, which promotion records anyway. Freezing and
    unfreezing at once moves every tracked object to the oldest generation in constant time;
    the next full collection examines them, as it does every long-lived object. Left to the
    collector when the process has frozen objects of its own, which unfreezing would release."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
