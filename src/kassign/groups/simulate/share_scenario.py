"""Share-group timelines (KIP-932): the consumer-group timeline format, played as a share group.

A share-group timeline is the YAML of :mod:`.scenario` with ``group_type: share`` (or ``strategies:
[share:simple]``, or ``kassign simulate --strategies share:simple`` on any consumer-group timeline)::

    name: workers scale out
    group_type: share
    topics: {orders: 4}
    loads: {orders: 2 MiB/s}        # optional: bytes per second each partition brings (or a list, one per partition)
    members:                        # all join at time 0, in this order
      worker-1: {topics: [orders]}
      worker-2: {topics: [orders]}
    settings:                       # optional; Kafka's defaults
      heartbeat_interval: 5         # group.share.heartbeat.interval.ms
      session_timeout: 45           # group.share.session.timeout.ms
      assignment_interval: 1        # group.share.assignment.interval.ms (Kafka 4.3; 4.2 has none)
      initialize_seconds: 0         # how long initialising a partition's share state takes
    events:
      - {at: 60, type: join, member: worker-3, topics: [orders]}
      - {at: 120, type: crash, member: worker-1}
      - {at: 180, type: add_partitions, topic: orders, add: 2}

Events are the consumer-group timeline's: ``join``, ``leave``, ``crash``, ``restart`` (``down`` seconds),
``subscribe``, ``add_partitions``, ``create_topic``, ``delete_topic``. A share consumer has no
``group.instance.id`` and no assignor of its own, so members take only ``topics`` (and ``rack``):
``instance_id``, ``strategies``, ``session_timeout``, ``group_protocol`` and ``remote_assignor`` are
refused, as are the classic settings ``round_seconds`` and ``rebalance_timeout``. ``loads`` gives a topic's
partitions a rate each (``2 MiB/s``, a number of bytes per second, or a list with one per partition at the
topic's start); partitions added later take the topic's rate, or the mean of its list. Everything is checked
up front, and a mistake is one line naming the place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kassign.core.errors import ScenarioError, shown
from kassign.core.text import escaped
from kassign.groups.simulate.scenario import SimScenario, member_plans, parse_sim_scenario
from kassign.groups.simulate.streams_scenario import size_in_bytes

SHARE_PREFIX = "share"
SHARE_STRATEGIES = ("share:simple", "share")
SHARE_SETTINGS = {"heartbeat_interval": 5.0, "session_timeout": 45.0, "assignment_interval": None,
                  "initialize_seconds": 0.0}
_CLASSIC_ONLY_SETTINGS = {"round_seconds": "a share group has no JoinGroup rounds",
                          "rebalance_timeout": "a share group has no rebalance to wait for"}
_REFUSED_MEMBER_FIELDS = {
    "instance_id": "a share consumer has no group.instance.id (share groups have no static members)",
    "strategies": "a share group's assignor is the broker's (simple); members name none",
    "session_timeout": "the group's settings.session_timeout (group.share.session.timeout.ms) applies",
    "group_protocol": "every member of a share group is a share consumer",
    "remote_assignor": "a share group's assignor is the broker's (simple)",
}


def is_share_strategy(name: str) -> bool:
    return name.partition(":")[0] == SHARE_PREFIX


def check_share_strategies(names: list[str], where: str) -> None:
    """Every name is the share assignor: ``share:simple`` or ``share`` (the broker's one assignor)."""
    for name in names:
        if name not in SHARE_STRATEGIES:
            other = "it" if is_share_strategy(name) else "a consumer-group strategy"
            raise ScenarioError(f"{where}: {shown(name)} is {other}, not a share-group strategy; a share group has "
                                "one assignor, share:simple, and is compared with no consumer-group strategy in one "
                                "run (simulate the two timelines separately)")


def is_share_timeline(document: Any, strategies_option: str | None = None) -> bool:
    """A consumer-group style document played as a share group: ``group_type: share``, a ``strategies``
    list of share strategies, or ``--strategies share:...``."""
    if not isinstance(document, Mapping):
        return False
    if "group_type" in document:
        return True  # parse_share_timeline checks the value
    if strategies_option is not None:
        return any(is_share_strategy(s.strip()) for s in strategies_option.split(","))
    listed = document.get("strategies")
    return isinstance(listed, list) and any(isinstance(s, str) and is_share_strategy(s) for s in listed)


@dataclass(frozen=True)
class ShareTimeline:
    scenario: SimScenario  # topics, members, events, name, description (its settings are not used)
    settings: dict[str, Any] = field(default_factory=lambda: dict(SHARE_SETTINGS))
    loads: dict[str, float | tuple[float, ...]] = field(default_factory=dict)  # bytes/s per partition

    @property
    def name(self) -> str:
        return self.scenario.name

    def load_of(self, topic: str, partition: int) -> float:
        """Bytes per second partition ``partition`` of ``topic`` brings (0 without ``loads``)."""
        given = self.loads.get(topic)
        if given is None:
            return 0.0
        if isinstance(given, float):
            return given
        return given[partition] if partition < len(given) else sum(given) / len(given)


def _fail(path: str, problem: str) -> ScenarioError:
    return ScenarioError(f"share timeline {path}: {problem}")


def _settings(doc: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The share settings, and what is left for the consumer-group reader (its checks and messages)."""
    if doc is None:
        return dict(SHARE_SETTINGS), {}
    if not isinstance(doc, Mapping):
        raise _fail("settings", f"expected a mapping such as {{heartbeat_interval: 5}}, got {shown(doc)}")
    settings = dict(SHARE_SETTINGS)
    rest = {}
    for key, value in doc.items():
        if key in _CLASSIC_ONLY_SETTINGS:
            raise _fail(f"settings.{key}", f"{_CLASSIC_ONLY_SETTINGS[key]}; its settings are "
                        f"{', '.join(SHARE_SETTINGS)}")
        if key in ("assignment_interval", "initialize_seconds"):
            if (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3600
                    or value != value):
                raise _fail(f"settings.{key}", f"expected seconds from 0 to 3,600, got {shown(value)}")
            settings[key] = float(value)
        elif key in SHARE_SETTINGS:
            rest[key] = value
        else:
            raise _fail("settings", f"unknown setting {shown(key)}; a share group's settings are "
                        f"{', '.join(SHARE_SETTINGS)}")
    return settings, rest


def _loads(doc: Any, scenario: SimScenario) -> dict[str, float | tuple[float, ...]]:
    if doc is None:
        return {}
    if not isinstance(doc, Mapping):
        raise _fail("loads", f"expected topic -> bytes per second per partition, e.g. {{orders: 2 MiB/s}}, "
                    f"got {shown(doc)}")
    sizes = dict(scenario.topics)
    for event in scenario.events:
        if event.type == "create_topic":
            sizes.setdefault(event.topic, event.count)
    loads: dict[str, float | tuple[float, ...]] = {}
    for topic, value in doc.items():
        path = f"loads.{escaped(str(topic))}"
        if topic not in sizes:
            raise _fail(path, f"no topic {shown(topic)} in topics or created by an event")
        if isinstance(value, list):
            if len(value) != sizes[topic]:
                raise _fail(path, f"{len(value)} rates for {sizes[topic]} partitions; give one per partition, or "
                            "one rate for every partition")
            loads[topic] = tuple(size_in_bytes(v, f"{path}[{i}]", rate=True, document="share timeline")
                                 for i, v in enumerate(value))
        else:
            loads[topic] = float(size_in_bytes(value, path, rate=True, document="share timeline"))
    return loads


def parse_share_timeline(doc: Any) -> ShareTimeline:
    """Check a share-group timeline document (see the module docstring)."""
    if not isinstance(doc, Mapping):
        raise _fail("(top level)", "expected a mapping with topics, members and events")
    kind = doc.get("group_type", SHARE_PREFIX)
    if kind != SHARE_PREFIX:
        raise _fail("group_type", f"expected share (the only group type this reader plays; a consumer-group "
                    f"timeline needs no group_type), got {shown(kind)}")
    strategies = doc.get("strategies", []) or []
    if not isinstance(strategies, list) or not all(isinstance(s, str) for s in strategies):
        raise _fail("strategies", f"expected a list of strategy names, got {shown(strategies)}")
    check_share_strategies(strategies, "share timeline strategies")
    settings, rest = _settings(doc.get("settings"))
    plain = {k: v for k, v in doc.items() if k not in ("group_type", "loads", "strategies", "settings")}
    plain["settings"] = rest
    scenario = parse_sim_scenario(plain)
    for path, _, plan in member_plans(scenario):
        for name, why in _REFUSED_MEMBER_FIELDS.items():
            value = getattr(plan, name)
            if value not in (None, ()):
                raise _fail(f"{path}.{name}", why)
    settings["heartbeat_interval"] = scenario.settings["heartbeat_interval"]
    settings["session_timeout"] = scenario.settings["session_timeout"]
    if settings["heartbeat_interval"] >= settings["session_timeout"]:
        raise _fail("settings.heartbeat_interval", f"{settings['heartbeat_interval']:g} s must be less than "
                    f"session_timeout ({settings['session_timeout']:g} s), as Kafka requires")
    return ShareTimeline(scenario, settings, _loads(doc.get("loads"), scenario))
