"""Simulation scenarios: a group's starting members and a timeline of what happens to it.

A scenario is YAML (or JSON, which YAML reads too)::

    name: one member leaves
    topics: {t0: 2, t1: 2}
    members:                       # all join at time 0, in this order (the first leads)
      C0: {topics: [t0, t1]}
      C1: {topics: [t0, t1], instance_id: host-1, rack: r1}
      C2: {topics: [t0], strategies: [range, cooperative-sticky]}
    settings:                      # optional; these are the defaults
      round_seconds: 2             # one JoinGroup + SyncGroup round
      session_timeout: 45          # how long a silent member stays in the group
      rebalance_timeout: 300       # longest a join phase waits for a member
      heartbeat_interval: 5        # consumer protocol only: seconds between a member's heartbeats
    strategies: [range, sticky]    # optional: what `simulate` compares by default
    events:
      - {at: 10, type: leave, member: C1}
      - {at: 20, type: join, member: C3, topics: [t0]}
      - {at: 30, type: crash, member: C0}
      - {at: 40, type: restart, member: C1, down: 5}
      - {at: 50, type: subscribe, member: C2, topics: [t0, t1]}
      - {at: 60, type: add_partitions, topic: t0, add: 2}
      - {at: 70, type: create_topic, topic: t9, partitions: 3}
      - {at: 80, type: delete_topic, topic: t9}

A member without ``strategies`` lists just the strategy being simulated; one with
``strategies`` keeps its own list (that is how mixed groups and protocol choice
are replayed). Everything is checked up front, with the path of what is wrong.

Kafka 4's consumer group protocol (KIP-848): a member (or a join event) with
``group_protocol: consumer`` heartbeats to the coordinator, which assigns with a
server-side assignor (``remote_assignor: uniform`` or ``range``, Kafka's
``group.remote.assignor``; without one the group uses the broker's default,
uniform). Simulating the strategy ``consumer:uniform`` (or ``consumer:range``,
or ``consumer``) puts every member without its own protocol settings on the
consumer protocol instead. Such members have no ``strategies`` and no own
``session_timeout`` (both are classic client settings); the group's heartbeat
interval and session timeout are the settings ``heartbeat_interval`` (default 5,
``group.consumer.heartbeat.interval.ms``) and ``session_timeout`` (default 45,
``group.consumer.session.timeout.ms``). A group holds members of one protocol:
mixing classic and consumer members (Kafka 4's upgrade path) is not simulated.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kassign.core.documents import load_yaml
from kassign.core.errors import KassignError, ScenarioError, shown
from kassign.core.limits import is_whole_number, partition_budget
from kassign.core.text import escaped, utf8_problem
from kassign.groups.scenario import read_scenario_text

EVENT_FIELDS: dict[str, tuple[set[str], set[str]]] = {
    # type: (required fields, optional fields) besides `at` and `type`
    "join": ({"member", "topics"}, {"instance_id", "rack", "strategies", "session_timeout", "group_protocol",
                                    "remote_assignor"}),
    "leave": ({"member"}, set()),
    "crash": ({"member"}, set()),
    "restart": ({"member", "down"}, set()),
    "subscribe": ({"member", "topics"}, set()),
    "add_partitions": ({"topic", "add"}, set()),
    "create_topic": ({"topic", "partitions"}, set()),
    "delete_topic": ({"topic"}, set()),
}
_MEMBER_FIELDS = {"topics", "instance_id", "rack", "strategies", "session_timeout", "group_protocol", "remote_assignor"}
_SETTINGS = {"round_seconds": 2.0, "session_timeout": 45.0, "rebalance_timeout": 300.0, "heartbeat_interval": 5.0}
GROUP_PROTOCOLS = ("classic", "consumer")
REMOTE_ASSIGNORS = ("uniform", "range")  # the group coordinator's assignors (group.consumer.assignors)
CLASSIC, CONSUMER = GROUP_PROTOCOLS
_TOP_LEVEL = {"name", "description", "topics", "members", "settings", "strategies", "events"}


@dataclass(frozen=True)
class MemberPlan:
    topics: tuple[str, ...]
    instance_id: str | None = None
    rack: str | None = None
    strategies: tuple[str, ...] = ()
    session_timeout: float | None = None
    group_protocol: str | None = None  # None: whatever the simulated strategy implies
    remote_assignor: str | None = None


@dataclass(frozen=True)
class Event:
    at: float
    type: str
    member: str | None = None
    topic: str | None = None
    topics: tuple[str, ...] = ()
    count: int = 0  # partitions to add, or a new topic's partitions
    down: float = 0.0
    plan: MemberPlan | None = None  # for join
    index: int = -1  # position in the file's events list, for messages (the timeline is sorted by time)

    def describe(self) -> str:
        if self.type == "join":
            return f"join {self.member} ({', '.join(self.topics)})"
        if self.type == "restart":
            return f"restart {self.member} (down {self.down:g}s)"
        if self.type == "subscribe":
            return f"{self.member} subscribes to {', '.join(self.topics) or 'nothing'}"
        if self.type == "add_partitions":
            return f"add {self.count} partitions to {self.topic}"
        if self.type == "create_topic":
            return f"create {self.topic} ({self.count} partitions)"
        if self.type == "delete_topic":
            return f"delete {self.topic}"
        return f"{self.type} {self.member}"


@dataclass(frozen=True)
class SimScenario:
    topics: dict[str, int]
    members: dict[str, MemberPlan]
    events: list[Event]
    name: str = "scenario"
    description: str = ""
    strategies: tuple[str, ...] = ()
    settings: dict[str, float] = field(default_factory=lambda: dict(_SETTINGS))


def _fail(path: str, problem: str) -> ScenarioError:
    return ScenarioError(f"simulation scenario {path}: {problem}")


MAX_SECONDS = 10_000_000  # about 116 days: longer timelines are a typo, and would take as long to play
MAX_COUNT = 2**31 - 1  # partition counts are Java ints in Kafka


def _number(value: Any, path: str, minimum: float = 0.0) -> float:
    # compared before math.isfinite, which cannot take an int beyond a float's range
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not minimum <= value <= MAX_SECONDS
            or not math.isfinite(value)):
        raise _fail(path, f"expected a number of seconds from {minimum:g} to {MAX_SECONDS:,}, got {shown(value)}")
    return float(value)


def _count(value: Any, path: str, minimum: int = 0) -> int:
    if not is_whole_number(value) or not minimum <= value <= MAX_COUNT:
        raise _fail(path, f"expected a whole number from {minimum} to {MAX_COUNT}, got {shown(value)}")
    return int(value)


def _name(value: Any, path: str, what: str = "name") -> str:
    if is_whole_number(value):
        raise _fail(path, f"expected a {what}, got the number {value}; quote it ('{value}') if that is the {what}")
    if not isinstance(value, str) or not value:
        raise _fail(path, f"expected a non-empty name, got {shown(value)}")
    _utf8(value, path, what)
    return value


def _names(value: Any, path: str, allow_empty: bool = True, what: str = "name") -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value) or (not value and not allow_empty):
        raise _fail(path, f"expected a list of names, got {shown(value)}")
    for name in value:
        _utf8(name, path, what)
    return tuple(value)


def _utf8(name: str, path: str, what: str) -> None:
    """Names travel as UTF-8 in Kafka's protocol, which the simulated JoinGroup writes (see kassign.core.text)."""
    problem = utf8_problem(name, what)
    if problem:
        raise _fail(path, problem)


# What YAML makes of an unquoted key that is not a name, for the hint to quote it.
_YAML_KINDS = {bool: "a boolean (an unquoted yes, no, on, off, true or false)",
               type(None): "null (an unquoted null or ~, or no name at all)", float: "a number"}


def _keyed_names(doc: Mapping[Any, Any], path: str, kind: str, field: str) -> list[tuple[str, Any]]:
    """``(name, value)`` for every key of ``doc`` (``kind`` "member" or "topic", named by its ``field``),
    each key read as text: a YAML ``1`` is the name ``'1'``. Any other key YAML did not read as text
    (true, null, 1.5, a date) is refused with a hint to quote it, and two keys that read as the same
    text (``1`` and ``'1'``) are refused, naming it."""
    what = f"{kind} {field}"
    result: list[tuple[str, Any]] = []
    first: dict[str, Any] = {}
    for key, value in doc.items():
        if isinstance(key, str):
            name = key
        elif is_whole_number(key):
            name = str(int(key))
        else:
            read_as = _YAML_KINDS.get(type(key), f"a {type(key).__name__}")
            written = json.dumps(key) if isinstance(key, (bool, type(None))) else str(key)
            raise _fail(path, f"{what} {written} is not a name: YAML read it as {read_as}; quote it as you wrote "
                        "it, e.g. 'on' or '1.50', to use it as a name")
        if not name:
            raise _fail(path, f"expected non-empty {what}s, got {shown(key)}")
        if name in first:
            raise _fail(path, f"{kind}s {first[name]!r} and {key!r} have the same {field} once read as text "
                        f"({name!r}); give each {kind} a {field} of its own")
        first[name] = key
        _utf8(name, path, what)
        result.append((name, value))
    return result


def _member_plan(doc: Any, path: str) -> MemberPlan:
    if not isinstance(doc, Mapping):
        raise _fail(path, "expected an object such as {topics: [t0]}")
    unknown = set(doc) - _MEMBER_FIELDS
    if unknown:
        raise _fail(path, f"unknown field(s) {sorted(unknown)}; allowed: {sorted(_MEMBER_FIELDS)}")
    if "topics" not in doc:
        raise _fail(path, "missing topics (the topics this member subscribes to)")
    protocol = doc.get("group_protocol")
    if protocol is not None and (not isinstance(protocol, str) or protocol not in GROUP_PROTOCOLS):
        raise _fail(f"{path}.group_protocol", f"expected classic or consumer, got {shown(protocol)}")
    assignor = doc.get("remote_assignor")
    if assignor is not None:
        if protocol != CONSUMER:
            raise _fail(f"{path}.remote_assignor", "only members with group_protocol: consumer have a remote "
                        "(server-side) assignor; add group_protocol: consumer or drop remote_assignor")
        if not isinstance(assignor, str) or assignor not in REMOTE_ASSIGNORS:
            raise _fail(f"{path}.remote_assignor", f"expected one of {', '.join(REMOTE_ASSIGNORS)} (the group "
                        f"coordinator's assignors), got {shown(assignor)}")
    if protocol == CONSUMER:
        for classic_only, what in (("strategies", "partition.assignment.strategy"),
                                   ("session_timeout", "the client's session.timeout.ms")):
            if doc.get(classic_only) is not None:
                raise _fail(f"{path}.{classic_only}", f"a group_protocol: consumer member has no {classic_only} "
                            f"({what} is a classic-protocol setting); "
                            + ("use remote_assignor: uniform|range" if classic_only == "strategies"
                               else "the group's settings.session_timeout applies"))
    return MemberPlan(
        topics=_names(doc["topics"], f"{path}.topics", what="topic name"),
        instance_id=None if doc.get("instance_id") is None
        else _name(doc["instance_id"], f"{path}.instance_id", "instance_id"),
        rack=None if doc.get("rack") is None else _name(doc["rack"], f"{path}.rack", "rack"),
        strategies=_names(doc.get("strategies", []), f"{path}.strategies"),
        session_timeout=None if doc.get("session_timeout") is None
        else _number(doc["session_timeout"], f"{path}.session_timeout", 0.001),
        group_protocol=protocol,
        remote_assignor=assignor,
    )


def _event(doc: Any, index: int) -> Event:
    return replace(_event_fields(doc, f"events[{index}]"), index=index)


def _event_fields(doc: Any, path: str) -> Event:
    if not isinstance(doc, Mapping):
        raise _fail(path, "expected an object such as {at: 10, type: leave, member: C1}")
    kind = doc.get("type")
    if not isinstance(kind, str) or kind not in EVENT_FIELDS:
        raise _fail(f"{path}.type", f"expected one of {', '.join(EVENT_FIELDS)}, got {shown(kind)}")
    required, optional = EVENT_FIELDS[kind]
    missing = required - set(doc)
    if "at" not in doc:
        missing.add("at")
    if missing:
        raise _fail(path, f"a {kind} event needs {', '.join(sorted(missing))}")
    unknown = set(doc) - required - optional - {"at", "type"}
    if unknown:
        raise _fail(path, f"unknown field(s) {sorted(unknown)} for a {kind} event")
    at = _number(doc["at"], f"{path}.at")
    member = _name(doc["member"], f"{path}.member", "member id") if "member" in doc else None
    topic = _name(doc["topic"], f"{path}.topic", "topic name") if "topic" in doc else None
    if kind == "join":
        plan = _member_plan({k: v for k, v in doc.items() if k in _MEMBER_FIELDS}, path)
        return Event(at, kind, member=member, topics=plan.topics, plan=plan)
    if kind == "subscribe":
        return Event(at, kind, member=member, topics=_names(doc["topics"], f"{path}.topics", what="topic name"))
    if kind == "restart":
        return Event(at, kind, member=member, down=_number(doc["down"], f"{path}.down"))
    if kind == "add_partitions":
        return Event(at, kind, topic=topic, count=_count(doc["add"], f"{path}.add", 1))
    if kind == "create_topic":
        return Event(at, kind, topic=topic, count=_count(doc["partitions"], f"{path}.partitions", 1))
    return Event(at, kind, member=member, topic=topic)


def _check_timeline(topics: dict[str, int], members: dict[str, MemberPlan], events: list[Event]) -> None:
    """Names must make sense in order: members exist before they act, topics before they change."""
    present = set(members)
    crashed: set[str] = set()
    instance_ids: dict[str, str] = {}
    for member, plan in members.items():
        if plan.instance_id in instance_ids:
            raise _fail(f"members.{member}.instance_id", f"{plan.instance_id!r} is also the instance_id of "
                        f"{instance_ids[plan.instance_id]!r}; static members need distinct group.instance.id values")
        if plan.instance_id:
            instance_ids[plan.instance_id] = member
    existing = set(topics)
    counts = dict(topics)  # partitions per topic as the timeline goes: Java ints, and in all within the budget
    _check_budget(counts, "topics")
    for event in events:
        where = f"events[{event.index}] ({event.type} at {event.at:g}s)"
        if event.member is not None:
            if event.type == "join":
                if event.member in present or event.member in crashed:
                    raise _fail(where, f"member {event.member!r} already exists; give the newcomer another name")
                iid = event.plan.instance_id if event.plan else None
                if iid and iid in instance_ids:
                    raise _fail(where, f"instance_id {iid!r} is already used by {instance_ids[iid]!r}")
                if iid:
                    instance_ids[iid] = event.member
                present.add(event.member)
            elif event.member in crashed:
                raise _fail(where, f"member {event.member!r} crashed earlier; use a restart event to model a comeback")
            elif event.member not in present:
                raise _fail(where, f"no member {event.member!r} at this point; known: {', '.join(sorted(present)) or 'none'}")
            if event.type == "leave":
                present.discard(event.member)
            elif event.type == "crash":
                present.discard(event.member)
                crashed.add(event.member)
        if event.type == "create_topic":
            if event.topic in existing:
                raise _fail(where, f"topic {event.topic!r} already exists")
            existing.add(event.topic)
            counts[event.topic] = event.count
            _check_budget(counts, where)
        elif event.type in ("add_partitions", "delete_topic"):
            if event.topic not in existing:
                raise _fail(where, f"topic {event.topic!r} does not exist at this point")
            if event.type == "delete_topic":
                existing.discard(event.topic)
                counts.pop(event.topic, None)
            else:
                total = counts[event.topic] + event.count
                if total > MAX_COUNT:
                    raise _fail(where, f"topic {event.topic!r} would have {total:,} partitions; Kafka keeps a topic's "
                                f"partition count in a Java int (at most {MAX_COUNT:,})")
                counts[event.topic] = total
                _check_budget(counts, where)


def _check_budget(counts: dict[str, int], where: str) -> None:
    """The partitions that exist at one time are materialised by the simulation: at most MAX_PARTITIONS."""
    try:
        partition_budget(sum(counts.values()), "the group's topics")
    except KassignError as err:
        raise _fail(where, str(err)) from None


def parse_sim_scenario(doc: Any) -> SimScenario:
    if not isinstance(doc, Mapping):
        raise ScenarioError("simulation scenario: expected a mapping with topics, members and events")
    unknown = set(doc) - _TOP_LEVEL
    if unknown:
        raise ScenarioError(f"simulation scenario: unknown field(s) {sorted(unknown)}; allowed: {sorted(_TOP_LEVEL)}")
    topics_doc = doc.get("topics", {})
    if not isinstance(topics_doc, Mapping):
        raise _fail("topics", "expected topic name -> partition count, e.g. {t0: 3}")
    topics = {t: _count(n, f"topics.{escaped(t)}") for t, n in _keyed_names(topics_doc, "topics", "topic", "name")}
    members_doc = doc.get("members", {}) or {}
    if not isinstance(members_doc, Mapping):
        raise _fail("members", "expected member id -> {topics: [...]}")
    members = {m: _member_plan(p, f"members.{escaped(m)}")
               for m, p in _keyed_names(members_doc, "members", "member", "id")}
    settings_doc = doc.get("settings", {}) or {}
    if not isinstance(settings_doc, Mapping) or set(settings_doc) - set(_SETTINGS):
        raise _fail("settings", f"allowed settings: {', '.join(_SETTINGS)}")
    settings = dict(_SETTINGS)
    for key, value in settings_doc.items():
        settings[key] = _number(value, f"settings.{key}", 0.0 if key == "round_seconds" else 0.001)
    events_doc = doc.get("events", []) or []
    if not isinstance(events_doc, list):
        raise _fail("events", "expected a list of events")
    events = [_event(e, i) for i, e in enumerate(events_doc)]
    events = sorted(events, key=lambda e: e.at)  # stable: same-time events keep their listed order
    _check_timeline(topics, members, events)
    strategies = _names(doc.get("strategies", []), "strategies", what="strategy")
    for strategy in strategies:
        try:
            parse_strategy(strategy)
        except ScenarioError as err:
            raise _fail("strategies", str(err)) from None
    name = doc.get("name", "scenario")
    scenario = SimScenario(
        topics=topics,
        members=members,
        events=events,
        name=str(name),
        description=str(doc.get("description", "")),
        strategies=strategies,
        settings=settings,
    )
    if any(plan.group_protocol == CONSUMER for _, _, plan in member_plans(scenario)):
        run_protocol(scenario, CONSUMER_STRATEGY_PREFIX)  # a consumer-protocol group: check it now
    return scenario


def load_sim_scenario(path: str | Path) -> SimScenario:
    """Read and check a scenario file (YAML or JSON)."""
    if str(path) == "-":
        return parse_sim_scenario(load_yaml(sys.stdin.read(), "scenario on stdin"))
    return parse_sim_scenario(load_yaml(read_scenario_text(path), f"scenario file {str(path)!r}"))


# -- which protocol a run uses ----------------------------------------------------------------------

CONSUMER_STRATEGY_PREFIX = "consumer"


def parse_strategy(strategy: str) -> tuple[str, str | None]:
    """``(group protocol, remote assignor)`` a simulated strategy name stands for.

    ``consumer`` and ``consumer:uniform`` / ``consumer:range`` mean the consumer group
    protocol (with that server-side assignor, or the broker's default); anything else
    names a classic client-side strategy.
    """
    head, sep, tail = strategy.partition(":")
    if head != CONSUMER_STRATEGY_PREFIX:
        return CLASSIC, None
    if not sep:
        return CONSUMER, None
    if tail not in REMOTE_ASSIGNORS:
        raise ScenarioError(f"strategy {strategy!r}: the consumer protocol's server-side assignors are "
                            f"{', '.join(REMOTE_ASSIGNORS)} (e.g. consumer:uniform)")
    return CONSUMER, tail


def member_plans(scenario: SimScenario) -> list[tuple[str, str, MemberPlan]]:
    """Every member the timeline brings: ``(path for messages, member id, plan)``."""
    plans = [(f"members.{name}", name, plan) for name, plan in scenario.members.items()]
    plans += [(f"events[{e.index}] ({e.type} at {e.at:g}s)", e.member, e.plan)
              for i, e in enumerate(scenario.events) if e.type == "join" and e.plan is not None]
    return plans


def member_protocol(plan: MemberPlan, strategy: str) -> str:
    """The protocol one member runs when ``strategy`` is simulated."""
    if plan.group_protocol:
        return plan.group_protocol
    if plan.strategies:
        return CLASSIC
    return parse_strategy(strategy)[0]


def run_protocol(scenario: SimScenario, strategy: str) -> str:
    """The protocol the group runs when ``strategy`` is simulated; refuses mixed groups."""
    default = parse_strategy(strategy)[0]
    first: dict[str, str] = {}
    for path, _, plan in member_plans(scenario):
        protocol = member_protocol(plan, strategy)
        first.setdefault(protocol, path)
        if len(first) > 1:
            other = next(p for p in first if p != protocol)
            raise _fail(path, f"this member would use the {protocol} protocol and {first[other]} the {other} "
                        f"protocol when simulating {strategy!r}; a group mixing classic and consumer members "
                        "(Kafka 4's upgrade path) is not simulated: give every member the same group_protocol, "
                        "or simulate a strategy that fits them all")
    protocol = next(iter(first), default)
    if protocol == CONSUMER:
        interval, timeout = scenario.settings["heartbeat_interval"], scenario.settings["session_timeout"]
        if interval >= timeout:
            raise _fail("settings.heartbeat_interval", f"{interval:g}s must be less than session_timeout "
                        f"({timeout:g}s), as Kafka requires of the consumer protocol's settings")
    return protocol
