"""The scenario document: one consumer group at one rebalance (stated for users in the
manual's formats page, docs/formats.md).

``parse_scenario`` checks the document's shape and says exactly where it is wrong;
it does not judge member data against the cluster (an owned partition of a topic
that no longer exists is the assignor's business, and Kafka ignores such claims).

Members are kept as columns (:class:`Members`): a coordinator-sized group has ten
thousand members sharing a handful of subscriptions, and the consumer protocol's
assignors read integers and arrays, not one object per member. Reading them goes two
ways with one outcome. When every entry has the plain shape JSON gives, the document
is checked column by column (:func:`_members_at_once`: in one C pass where kassign's
compiled part is built, :func:`_members_natively`, else in a few C-level passes of
Python's builtins, :func:`_members_column_by_column`); any other document, well-formed
or not, is read member by member (:class:`_MemberParser`), which accepts the rarer shapes
Python callers pass and names the first problem.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from kassign import _accel
from kassign.groups.classic.assignors.base import (
    ConsumerPartitionAssignor,
    Subscription,
    TopicPartition,
    new_topic_partition,
)
from kassign.core.cluster import Cluster
from kassign.core.documents import load_json
from kassign.core.errors import KassignError, ScenarioError, shown
from kassign.core.javaorder import java_string_hashes
from kassign.core.limits import JAVA_INT_MAX, JAVA_INT_MIN, is_whole_number, partition_budget
from kassign.core.text import all_utf8, escaped, utf8_problem


class MemberSpec(NamedTuple):
    """One member as the scenario states it."""

    topics: tuple[str, ...]
    owned: tuple[TopicPartition, ...] = ()
    generation: int = -1
    rack: str | None = None
    instance_id: str | None = None


# One member as the member-by-member reader gives it: its MemberSpec with the topics given
# by subscription number.
MemberRow = tuple[int, tuple[TopicPartition, ...], int, "str | None", "str | None"]


class Members(Mapping[str, MemberSpec]):
    """The group's members as columns; member ``i`` is ``ids[i]``, in the document's order.

    * ``subscriptions``: the distinct topic lists, numbered in order of first appearance;
      member ``i`` lists ``subscriptions[subscription[i]]``;
    * ``owned_topics``, ``owned_partitions``: every owned pair, member after member, each
      member's in its listed order; member ``i``'s are ``owned_start[i] .. owned_start[i+1]-1``;
    * ``generations``, ``racks``, ``instance_ids``: one entry per member;
    * ``owned_topic_codes``: where a reader numbered the owned topics as it read them, ``(names, code)``
      with ``owned_topics[j] == names[code[j]]``, the names distinct and in order of first listing;
      else None (see :meth:`owned_topics_coded`);
    * what a reader learnt while each id was at hand (the native one does), else None / False:
      ``id_hashes`` (each id's Java ``String.hashCode()``, see :meth:`java_id_hashes`), ``ids_ascending``
      (the ids are in Python's ascending order) and ``ascii`` (every id and owned topic is ASCII);
    * ``subscription_topics``: where a reader numbered the subscriptions' names, ``(names, start, code)``:
      subscription ``s`` lists ``names[code[j]]`` for ``j`` in ``start[s] .. start[s+1]-1``, -1 for a
      name not among ``names`` (the scenario's topics); else None.

    As a mapping it is ``{member id: MemberSpec}``. The MemberSpecs are built on first
    use: the consumer protocol's assignors never ask for them. The columns are read-only.
    """

    def __init__(self, ids: list[str], subscriptions: list[tuple[str, ...]], subscription: np.ndarray,
                 owned_start: np.ndarray, owned_topics: list[str], owned_partitions: np.ndarray,
                 generations: list[int], racks: list[str | None], instance_ids: list[str | None],
                 owned_topic_codes: tuple[list[str], np.ndarray] | None = None, id_hashes: np.ndarray | None = None,
                 ids_ascending: bool | None = None, ascii: bool = False,
                 subscription_topics: tuple[list[str], np.ndarray, np.ndarray] | None = None) -> None:
        self.ids = ids
        self.subscriptions = subscriptions
        self.subscription = subscription
        self.owned_start = owned_start
        self.owned_topics = owned_topics
        self.owned_partitions = owned_partitions
        self.generations = generations
        self.racks = racks
        self.instance_ids = instance_ids
        self.owned_topic_codes = owned_topic_codes
        self.id_hashes = id_hashes
        self.ids_ascending = ids_ascending
        self.ascii = ascii
        self.subscription_topics = subscription_topics

    def java_id_hashes(self) -> np.ndarray:
        """Each member id's Java ``String.hashCode()`` (unsigned 32-bit, int64): the coordinator's member map
        is a ``HashMap`` of the ids."""
        if self.id_hashes is None:
            self.id_hashes = java_string_hashes(self.ids)
        return self.id_hashes

    def owned_topics_coded(self) -> tuple[list[str], np.ndarray]:
        """``(names, code)``: the distinct owned topics in order of first listing, and each owned pair's
        topic as its place among them."""
        if self.owned_topic_codes is None:
            names = list(dict.fromkeys(self.owned_topics))
            number_of = dict(zip(names, range(len(names))))
            code = np.fromiter(map(number_of.__getitem__, self.owned_topics), dtype=np.int64,
                               count=len(self.owned_topics))
            self.owned_topic_codes = (names, code)
        return self.owned_topic_codes

    @classmethod
    def from_rows(cls, ids: list[str], subscriptions: list[tuple[str, ...]], rows: list[MemberRow]) -> Members:
        """Columns of one :data:`MemberRow` per member of ``ids``."""
        subscription, owned, generations, racks, instance_ids = map(list, zip(*rows)) if rows else ([],) * 5
        pairs = list(chain.from_iterable(owned))
        return cls(
            ids=ids,
            subscriptions=subscriptions,
            subscription=np.array(subscription, dtype=np.int64),
            owned_start=_starts(map(len, owned), len(owned)),
            owned_topics=list(map(itemgetter(0), pairs)),
            owned_partitions=np.array(list(map(itemgetter(1), pairs)), dtype=np.int64),
            generations=generations,
            racks=racks,
            instance_ids=instance_ids,
        )

    @classmethod
    def from_specs(cls, specs: Mapping[str, MemberSpec]) -> Members:
        """Columns of ``{member id: MemberSpec}`` (taken as they are: checking is parse_scenario's)."""
        numbers: dict[tuple[str, ...], int] = {}
        rows = [(numbers.setdefault(tuple(spec.topics), len(numbers)), *spec[1:]) for spec in specs.values()]
        return cls.from_rows(list(specs), list(numbers), rows)

    def topic_lists(self) -> list[tuple[str, ...]]:
        """Each member's subscribed topics (one shared tuple per distinct list)."""
        return list(map(self.subscriptions.__getitem__, self.subscription.tolist()))

    def owned_lists(self) -> list[tuple[TopicPartition, ...]]:
        """Each member's owned partitions, as listed."""
        native = _accel.native
        partitions = self.owned_partitions
        if native is not None and native.PAIR_TYPES and len(partitions) and partitions.min() >= 0:
            # in one C pass (the result dict's builder), each topic's name shared by its pairs
            names, code = self.owned_topics_coded()
            built = native.member_pairs(list(self.ids), np.asarray(self.owned_start, dtype=np.int64),
                                        np.asarray(code, dtype=np.int64), np.asarray(partitions, dtype=np.int64),
                                        list(names), None, None, TopicPartition)
            if len(built) == len(self.ids):  # ids are distinct (a document's keys are)
                return list(map(tuple, built.values()))
        pairs = list(map(new_topic_partition, zip(self.owned_topics, self.owned_partitions.tolist())))
        cut = self.owned_start.tolist()
        return list(map(tuple, map(pairs.__getitem__, map(slice, cut[:-1], cut[1:]))))

    @cached_property
    def _specs(self) -> dict[str, MemberSpec]:
        rows = zip(self.topic_lists(), self.owned_lists(), self.generations, self.racks, self.instance_ids)
        return dict(zip(self.ids, map(MemberSpec._make, rows)))

    def __getitem__(self, member_id: str) -> MemberSpec:
        return self._specs[member_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, member_id: object) -> bool:
        return member_id in self._id_set

    @cached_property
    def _id_set(self) -> frozenset[str]:
        return frozenset(self.ids)

    def __repr__(self) -> str:
        return f"Members({dict(self.items())!r})"


def _starts(lengths: Iterable[int], count: int) -> np.ndarray:
    """CSR starts: item ``i``'s entries are ``start[i] .. start[i+1]-1``."""
    start = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.fromiter(lengths, dtype=np.int64, count=count), out=start[1:])
    return start


@dataclass(frozen=True)
class Scenario:
    """A checked scenario. ``members`` may be given as ``{member id: MemberSpec}``; it is kept as
    :class:`Members`."""

    topics: dict[str, int]
    members: Members
    partition_racks: dict[str, list[list[str]]] = field(default_factory=dict)
    topic_ids: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.members, Members):
            object.__setattr__(self, "members", Members.from_specs(self.members))

    def cluster(self) -> Cluster:
        racks = {t: r for t, r in self.partition_racks.items() if t in self.topics}
        return Cluster(self.topics, partition_racks=racks)

    def subscriptions(self, assignor: ConsumerPartitionAssignor) -> dict[str, Subscription]:
        """Each member's subscription as that member's copy of ``assignor`` would send it."""
        members = self.members
        topic_lists, owned_lists = members.topic_lists(), members.owned_lists()
        columns = (members.ids, topic_lists, owned_lists, members.generations, members.racks, members.instance_ids)
        if not (isinstance(assignor, ConsumerPartitionAssignor)
                and type(assignor).subscription is ConsumerPartitionAssignor.subscription):
            return {
                member_id: assignor.subscription(
                    topics, owned_partitions=owned, generation=generation, rack=rack, group_instance_id=instance_id
                )
                for member_id, topics, owned, generation, rack, instance_id in zip(*columns)
            }
        # The base class's subscription on columns (the lists are tuples of TopicPartition already), with
        # every member's user data at once where the assignor can encode it so (the eager sticky one).
        names, code = members.owned_topics_coded()
        user_data = assignor.batch_user_data(members.owned_start, code, names, members.owned_partitions,
                                             members.generations)
        if user_data is None:
            user_data = list(map(assignor.subscription_user_data, topic_lists, owned_lists, members.generations))
        return {
            member_id: Subscription(topics=topics, user_data=data, owned_partitions=owned, generation=generation,
                                    rack=rack, group_instance_id=instance_id)
            for member_id, topics, owned, generation, rack, instance_id, data in zip(*columns, user_data)
        }


def _fail(path: str, problem: str) -> ScenarioError:
    return ScenarioError(f"scenario {path}: {problem}")


# The exact types of whole numbers the column-by-column reader takes: Python's int and numpy's
# integer scalars. Each passes is_whole_number; subclasses (whose int() or comparisons may be their own)
# are left to the member-by-member reader.
_PLAIN_INT_TYPES = frozenset({int, *(np.dtype(code).type for code in np.typecodes["AllInteger"])})


def _java_int(value: Any, path: str, *, low: int = JAVA_INT_MIN, must: str = "expected a whole number") -> int:
    """``value`` as a Python int within ``low .. 2^31-1`` (numpy integer scalars accepted)."""
    if not is_whole_number(value) or value < low:
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
    if type(doc) is dict:  # JSON's shape, checked at once: names, and counts that are exact ints in 0 .. 2^31-1
        counts = list(doc.values())
        if (_only(counts, int) and _all_text(list(doc))
                and (not counts or 0 <= min(counts) <= max(counts) <= JAVA_INT_MAX)):
            return dict(doc)  # what the checks below give for it, without a Python step per topic
    if not isinstance(doc, Mapping):
        raise _fail("topics", 'expected an object of topic name -> partition count, e.g. {"t0": 3}')
    _names(doc, "topics")
    return {name: _java_int(count, f"topics.{name}", low=0, must="partition count must be a whole number >= 0")
            for name, count in doc.items()}


# The shapes an owned [topic, partition] pair comes in: what JSON gives, and what assign returns.
_PLAIN_PAIR_TYPES = (list, tuple, TopicPartition)


def _parse_owned(doc: Any, path: str) -> tuple[TopicPartition, ...]:
    if not isinstance(doc, (list, tuple)):
        raise _fail(path, 'expected a list of [topic, partition] pairs, e.g. [["t0", 2]]')
    owned = []
    for i, pair in enumerate(doc):
        kind = type(pair)
        if (kind in _PLAIN_PAIR_TYPES and len(pair) == 2 and type(pair[0]) is str
                and type(pair[1]) is int and JAVA_INT_MIN <= pair[1] <= JAVA_INT_MAX):
            owned.append(pair if kind is TopicPartition else new_topic_partition(pair))
            continue
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str)
                and is_whole_number(pair[1])):
            raise _fail(f"{path}[{i}]", f"expected [topic, partition], got {shown(pair)}")
        owned.append(TopicPartition(pair[0], _java_int(pair[1], f"{path}[{i}]")))
    return tuple(owned)


_MEMBER_KEYS = frozenset({"topics", "owned", "generation", "rack", "instance_id"})


class _Subscriptions:
    """The distinct topic lists of one document, numbered in order of first appearance. Members
    usually share a handful, so each distinct list is checked once; members listing equal names
    share one tuple."""

    def __init__(self) -> None:
        self.lists: list[tuple[str, ...]] = []
        self._numbers: dict[tuple[Any, ...], int] = {}
        self._last: tuple[Any, int] = (object(), -1)  # the object numbered last (held, so its id stays its own)

    def number(self, topics: Any) -> int | None:
        """The number of ``topics``, or None if it is not a list (or tuple) of topic names."""
        last_topics, last_number = self._last
        if topics is last_topics:
            return last_number  # members often share one list object: skip hashing its names again
        if not isinstance(topics, (list, tuple)):
            return None
        key = tuple(topics)
        try:
            number = self._numbers.get(key)
        except TypeError:  # an unhashable element: not a name anyway
            return None
        if number is None:
            if not all(map(isinstance, key, repeat(str))):
                return None
            number = self._numbers[key] = len(self.lists)
            self.lists.append(key)
        self._last = (topics, number)
        return number


class _MemberParser:
    """Checks members one by one, raising at the first problem with where it is."""

    def __init__(self) -> None:
        self.subscriptions = _Subscriptions()

    def __call__(self, member_id: Any, doc: Any) -> MemberRow:
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
        return (
            self._subscription(member_id, doc),
            _parse_owned(owned, f"members.{member_id}.owned") if owned is not None else (),
            _java_int(generation, f"members.{member_id}.generation"),
            None if rack is None else _text(rack, f"members.{member_id}.rack"),
            None if instance_id is None else _text(instance_id, f"members.{member_id}.instance_id"),
        )

    def _subscription(self, member_id: str, doc: Mapping[str, Any]) -> int:
        topics = doc.get("topics")
        number = self.subscriptions.number(topics)
        if number is not None:
            return number
        if "topics" not in doc:
            raise _fail(f"members.{member_id}", 'missing "topics" (the list of topics this member subscribes to)')
        raise _fail(f"members.{member_id}.topics", f"expected a list of topic names, got {shown(topics)}")


def _members_one_by_one(doc: Mapping[Any, Any]) -> Members:
    parse = _MemberParser()
    rows = list(map(parse, doc, doc.values()))
    return Members.from_rows(list(doc), parse.subscriptions.lists, rows)


def _members_at_once(doc: Mapping[Any, Any], topics: Mapping[str, int] | None = None) -> Members | None:
    """The members read column by column if every entry has the plain shape JSON gives, else None
    (see :func:`_members_column_by_column`). ``topics``: the scenario's, whose names the native reader
    numbers the subscriptions by as it reads them."""
    members = _members_natively(doc, topics)
    return members if members is not None else _members_column_by_column(doc)


def _members_natively(doc: Mapping[Any, Any], topics: Mapping[str, int] | None = None) -> Members | None:
    """:func:`_members_column_by_column` in one C pass (``kassign._native.read_members``), for the plainest
    shape only: exact ``dict``, ``str``, ``int``, ``list`` and ``tuple`` (and :class:`TopicPartition` pairs).
    None where the compiled part is not built or the document has any other shape (a numpy integer, a
    ``str`` subclass ...): the Python readers then decide. With ``topics``, each distinct subscription's
    names are numbered by their place in ``topics`` as the reader first meets them
    (:attr:`Members.subscription_topics`)."""
    native = _accel.native
    if native is None:
        return None
    names = None if topics is None else list(topics)
    numbers = None if names is None else dict(zip(names, range(len(names))))
    columns = native.read_members(doc, TopicPartition, numbers)
    if columns is None:
        return None
    (ids, subscriptions, subscription, owned_start, owned_topics, owned_partitions, generations, racks,
     instance_ids, owned_names, owned_code, id_hashes, ascii, ascending, codes) = columns
    return Members(ids, subscriptions, _int64s(subscription), _int64s(owned_start), owned_topics,
                   _int64s(owned_partitions), generations, racks, instance_ids,
                   owned_topic_codes=(owned_names, _int64s(owned_code)), id_hashes=_int64s(id_hashes),
                   ids_ascending=ascending, ascii=ascii,
                   subscription_topics=None if codes is None else (names, *map(_int64s, codes)))


def _int64s(buffer: bytearray) -> np.ndarray:
    return np.frombuffer(buffer, dtype=np.int64)


def _members_column_by_column(doc: Mapping[Any, Any]) -> Members | None:
    """The members read column by column, if every entry has the plain shape JSON gives: string
    ids; dicts of known fields with ``topics``; lists or tuples of names; owned pairs of a name and
    a whole number; whole numbers (ints or numpy integers) within Java's range; strings or null for
    ``rack`` and ``instance_id``.

    Never raises: None sends the document to :class:`_MemberParser`, which names the problem,
    or accepts the rarer shapes it allows (other mappings, subclasses, null ``owned``). Each test
    here accepts a subset of what that parser accepts, with the same result;
    tests/groups/test_scenario_members.py feeds every near miss and generated documents through both."""
    if type(doc) is not dict:
        return None
    ids, entries = list(doc), list(doc.values())
    if not (_all_text(ids) and _only(entries, dict)):
        return None
    subscriptions = _Subscriptions()
    subscription = _subscription_numbers(list(map(dict.get, entries, repeat("topics"))), subscriptions)
    if subscription is None:  # some member without a list of names as its topics
        return None
    owned_lists = list(map(dict.get, entries, repeat("owned"), repeat(())))
    owned_kinds = list(map(type, owned_lists))
    fields = {"topics", "owned"} if _only_topics_and_owned(entries, owned_kinds) \
        else set(chain.from_iterable(entries))
    if not _MEMBER_KEYS.issuperset(fields):
        return None
    # the cheap columns first: a document left to the other reader should cost little here
    # a field no member has is all defaults, valid by construction: only present fields are checked
    generations = _column(entries, fields, "generation", -1)
    racks = _column(entries, fields, "rack", None)
    instance_ids = _column(entries, fields, "instance_id", None)
    if not (("generation" not in fields or _whole_numbers(generations))
            and ("rack" not in fields or _only(racks, str, type(None)))
            and ("instance_id" not in fields or _only(instance_ids, str, type(None)))):
        return None
    if "generation" in fields and not _only(generations, int):
        generations = list(map(int, generations))  # numpy integers, as the other reader stores them
    owned = _owned_columns(owned_lists, owned_kinds)
    if owned is None:
        return None
    return Members(ids, subscriptions.lists, subscription, *owned, generations, racks, instance_ids)


def _only_topics_and_owned(entries: list[dict[str, Any]], owned_kinds: list[type]) -> bool:
    """Whether no entry has a field but ``topics`` (which every entry has) and ``owned`` (``owned_kinds``:
    the type of each entry's, ``tuple`` where absent), told by counting instead of collecting every
    entry's keys.

    An ``owned`` given as a tuple counts as absent, so the count of present fields can only fall short:
    if it still equals the number of keys the entries have, nothing else is there."""
    try:
        present = 2 * len(entries) - owned_kinds.count(tuple)
    except Exception:  # noqa: BLE001 (an odd type's own == may raise; the general check then decides)
        return False
    return sum(map(len, entries)) == present


def _only(values: list[Any], *kinds: type) -> bool:
    """Every value is exactly of one of ``kinds`` (no subclasses: ``bool`` is not an ``int`` here)."""
    return set(map(type, values)).issubset(kinds)


def _all_text(values: list[Any]) -> bool:
    """Every value is a ``str``, subclasses included (the member-by-member reader keeps those as they
    are, as this one does): one join, which refuses anything else."""
    try:
        "".join(values)
    except TypeError:
        return False
    return True


def _whole_numbers(values: list[Any]) -> bool:
    """Every value passes :func:`_java_int`: of a plain int type, within Java's int range."""
    if not _only(values, *_PLAIN_INT_TYPES):
        return False
    return not values or JAVA_INT_MIN <= min(values) <= max(values) <= JAVA_INT_MAX


def _column(entries: list[dict[str, Any]], fields: set[str], name: str, default: Any) -> list[Any]:
    """Each entry's ``name`` field, ``default`` where absent; ``fields``: every field some entry has."""
    if name not in fields:
        return [default] * len(entries)
    return list(map(dict.get, entries, repeat(name), repeat(default)))


def _subscription_numbers(topic_lists: list[Any], subscriptions: _Subscriptions) -> np.ndarray | None:
    """Each member's subscription number; None if some member's ``topics`` is not a list of names."""
    # Members usually share a few list objects: number each object once. The entries hold them, so ids stay unique.
    if topic_lists and all(map(operator.is_, topic_lists, repeat(topic_lists[0]))):
        number = subscriptions.number(topic_lists[0])  # one list object for all: one check
        return None if number is None else np.zeros(len(topic_lists), dtype=np.int64)
    distinct = dict(zip(map(id, topic_lists), topic_lists))
    number_of = {key: subscriptions.number(topics) for key, topics in distinct.items()}
    if None in number_of.values():
        return None
    if len(number_of) == 1:
        return np.zeros(len(topic_lists), dtype=np.int64)
    return np.fromiter(map(number_of.__getitem__, map(id, topic_lists)), dtype=np.int64, count=len(topic_lists))


def _owned_columns(owned: list[Any], kinds: list[type]) -> tuple[np.ndarray, list[str], np.ndarray] | None:
    """``(owned_start, owned_topics, owned_partitions)``; None unless every pair has a plain shape.
    ``kinds``: the type of each of ``owned``."""
    if not set(kinds).issubset((list, tuple)):
        return None
    pairs = list(chain.from_iterable(owned))
    if not _only(pairs, *_PLAIN_PAIR_TYPES):
        return None
    try:  # unpacking takes exactly two items
        topics = [topic for topic, _ in pairs]
        partitions = [partition for _, partition in pairs]
    except ValueError:
        return None
    if not _all_text(topics):
        return None
    numbers = _java_int_array(partitions)
    if numbers is None:
        return None
    return _list_starts(owned), topics, numbers


def _list_starts(lists: list[Any]) -> np.ndarray:
    """:func:`_starts` of the lists' lengths; lists under 256 items long are measured a byte each."""
    try:
        lengths = np.frombuffer(bytearray(map(len, lists)), dtype=np.uint8)
    except ValueError:  # a list of 256 items or more
        return _starts(map(len, lists), len(lists))
    start = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=start[1:])
    return start


def _java_int_array(values: list[Any]) -> np.ndarray | None:
    """``values`` as an int64 array if each passes :func:`_whole_numbers`, else None. Plain ints are
    converted first and their range checked on the array (one pass over the objects, not three)."""
    if not _only(values, int):
        return np.array(values, dtype=np.int64) if _whole_numbers(values) else None
    try:
        numbers = np.array(values, dtype=np.int64)
    except OverflowError:
        return None
    if len(numbers) and not JAVA_INT_MIN <= numbers.min() <= numbers.max() <= JAVA_INT_MAX:
        return None
    return numbers


def _check_instance_ids(members: Members) -> None:
    if members.instance_ids.count(None) == len(members):
        return
    seen: dict[str, str] = {}
    for member_id, instance_id in zip(members.ids, members.instance_ids):
        if instance_id is None:
            continue
        if instance_id in seen:
            raise _fail(f"members.{member_id}.instance_id", f"{instance_id!r} is also the instance_id of "
                        f"{seen[instance_id]!r}; static members need distinct group.instance.id values")
        seen[instance_id] = member_id


def _parse_partition_racks(doc: Any, topics: Mapping[str, int]) -> dict[str, list[list[str]]]:
    if not isinstance(doc, Mapping):
        raise _fail("partition_racks", "expected an object of topic -> per-partition lists of racks")
    _names(doc, "partition_racks")
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
    _names(doc, "topic_ids")
    return {name: _text(topic_id, f"topic_ids.{name}") for name, topic_id in doc.items()}


def _check_names_are_utf8(topics: dict[str, int], members: Members, partition_racks: dict[str, list[list[str]]],
                          topic_ids: dict[str, str]) -> None:
    """Every name is text UTF-8 can carry (see :mod:`kassign.core.text`): Kafka sends names as UTF-8, and the
    sticky user data and derived topic ids encode them, so a lone surrogate is refused here, where it is
    named, for every strategy alike. A few joins check them all (the long columns joined as the lists
    they are, not copied into one); only a failing document is walked."""
    replica_racks = chain.from_iterable(chain.from_iterable(partition_racks.values()))
    small = chain(topics, chain.from_iterable(members.subscriptions), partition_racks, replica_racks, topic_ids,
                  topic_ids.values())
    # ASCII is UTF-8: the long columns need no join when the reader saw them all ASCII
    long_columns = () if members.ascii else (members.ids, members.owned_topics)
    columns = (*long_columns, _stated(members.racks), _stated(members.instance_ids), small)
    if all(map(all_utf8, columns)):
        return
    for path, what, names in _named_texts(topics, members, partition_racks, topic_ids):
        for name in names:
            problem = utf8_problem(name, what)
            if problem:
                raise _fail(path, problem)


def _stated(values: list[str | None]) -> list[str]:
    """The values that are not None (often none are: no walk then)."""
    if values.count(None) == len(values):
        return []
    return [value for value in values if value is not None]


def _named_texts(topics: dict[str, int], members: Members, partition_racks: dict[str, list[list[str]]],
                 topic_ids: dict[str, str]) -> Iterator[tuple[str, str, Iterable[str]]]:
    """``(path, what it is, names)`` for every name of a scenario, in document order."""
    yield "topics", "topic name", topics
    yield "members", "member id", members.ids
    owned = members.owned_lists()
    for i, member_id in enumerate(members.ids):
        where = f"members.{escaped(member_id)}"
        yield f"{where}.topics", "topic name", members.subscriptions[members.subscription[i]]
        yield f"{where}.owned", "topic name", (topic for topic, _ in owned[i])
        for name, value in (("rack", members.racks[i]), ("instance_id", members.instance_ids[i])):
            yield f"{where}.{name}", name, () if value is None else (value,)
    yield "partition_racks", "topic name", partition_racks
    for topic, per_partition in partition_racks.items():
        yield f"partition_racks.{escaped(topic)}", "rack", chain.from_iterable(per_partition)
    yield "topic_ids", "topic name", topic_ids
    yield "topic_ids", "topic id", topic_ids.values()


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
    members = _members_at_once(members_doc, topics)
    if members is None:
        members = _members_one_by_one(members_doc)
    _check_instance_ids(members)
    partition_racks = _parse_partition_racks(doc.get("partition_racks", {}), topics)
    topic_ids = _parse_topic_ids(doc.get("topic_ids", {}))
    _check_names_are_utf8(topics, members, partition_racks, topic_ids)
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
