"""Entry points for share groups: a scenario in, the coordinator's new target assignment out.

``assign_share("simple", scenario)`` answers in the dict API's shape: ``{member: [(topic,
partition), ...]}``, every member present, each list sorted by topic then partition, a partition
possibly under several members. ``assign_share_table`` gives the same rows as a pyarrow table.

Kafka releases (:func:`share_release`): 4.1, 4.2, 4.3 and 4.4. Kafka 4.1's ``simple`` places members by
the hash of their id, then round robin; KAFKA-19362 and KAFKA-19363 replaced that for 4.2
(:mod:`.simple` states both rules). 4.0 had only an early-access preview; kassign refuses it, saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from kassign.core.errors import UnknownAssignorError, shown
from kassign.core.releases import DEFAULT_KAFKA_VERSION, release_for
from kassign.groups.flat import FlatAssignment, no_cyclic_gc
from kassign.groups.scenario import Scenario
from kassign.groups.share.scenario import ShareScenario, parse_share_scenario
from kassign.groups.share.simple import ShareTarget, simple_assign

_SIMPLE_NAMES = frozenset({"simple", "org.apache.kafka.coordinator.group.assignor.SimpleAssignor"})


def share_release(kafka_version: object = DEFAULT_KAFKA_VERSION) -> str:
    """The release line (``"4.1"`` to ``"4.4"``) of ``kafka_version`` (``"MAJOR.MINOR"`` or
    ``"MAJOR.MINOR.PATCH"``) whose share assignor answers; a KassignError naming the releases
    modelled for any other (:mod:`kassign.core.releases`, feature ``share``)."""
    release = release_for(kafka_version, "share")  # type: ignore[arg-type]
    return f"{release.major}.{release.minor}"


def check_share_strategy(strategy: object) -> None:
    """Refuse a strategy name that is not Kafka's share assignor ``simple``."""
    if not isinstance(strategy, str) or strategy not in _SIMPLE_NAMES:
        raise UnknownAssignorError(f"no share-group assignor {shown(strategy)}; Kafka's share groups have one, "
                                   "'simple' (org.apache.kafka.coordinator.group.assignor.SimpleAssignor)")


def share_target(strategy: str, scenario: Mapping[str, Any] | Scenario | ShareScenario,
                 kafka_version: str = DEFAULT_KAFKA_VERSION) -> ShareTarget:
    """The new target assignment as arrays (:class:`~kassign.groups.share.simple.ShareTarget`)."""
    return _target(strategy, scenario, kafka_version)[0]


def _target(strategy: str, scenario: Mapping[str, Any] | Scenario | ShareScenario,
            kafka_version: str) -> tuple[ShareTarget, bool]:
    """:func:`share_target`, and whether the scenario lists its members in ascending order (its reader saw)."""
    check_share_strategy(strategy)
    release = release_for(kafka_version, "share")  # type: ignore[arg-type]
    with no_cyclic_gc():  # a young document's lists left untraversed, as kassign.api._read reads one
        share = parse_share_scenario(scenario)
    return simple_assign(share, release), bool(share.scenario.members.ids_ascending)


def _flat(target: ShareTarget, members_sorted: bool = False) -> FlatAssignment:
    """``members_sorted``: the group's members are listed in ascending order (the result then needs no sort)."""
    group = target.group
    members = list(group.given_member_ids)
    total = int(target.offsets[-1])
    return FlatAssignment(members, target.topic_names, target.offsets, np.full(total, -1, dtype=np.int64),
                          shared=(group.given_position[target.member], target.flat), members_sorted=members_sorted)


def share_flat(strategy: str, scenario: Mapping[str, Any] | Scenario | ShareScenario,
               kafka_version: str = DEFAULT_KAFKA_VERSION) -> FlatAssignment:
    """The new target assignment as integer arrays (:class:`~kassign.groups.flat.FlatAssignment`, several
    members per partition allowed): what :func:`assign_share` and :func:`assign_share_table` are built from."""
    return _flat(*_target(strategy, scenario, kafka_version))


def assign_share(strategy: str, scenario: Mapping[str, Any] | Scenario | ShareScenario,
                 kafka_version: str = DEFAULT_KAFKA_VERSION) -> dict[str, list[tuple[str, int]]]:
    """A share group's new target assignment: ``{member: [(topic, partition), ...]}``, every member
    present, partitions sorted (topic, then partition); one partition may be under several members.

    ``strategy``: ``"simple"`` (or Kafka's class name); ``scenario``: a share group's document (the consumer protocol's
    scenario plus ``initialized``); ``kafka_version``: a 4.1, 4.2, 4.3 or 4.4 release (4.1
    answers with its own rule, see :mod:`.simple`)."""
    flat = _flat(*_target(strategy, scenario, kafka_version))
    return flat.to_dict(flat.members)


def assign_share_table(strategy: str, scenario: Mapping[str, Any] | Scenario | ShareScenario,
                       kafka_version: str = DEFAULT_KAFKA_VERSION) -> pa.Table:
    """:func:`assign_share` as a pyarrow table: columns ``member`` (string), ``topic`` (string),
    ``partition`` (int32), one row per (member, partition), in the dict's order."""
    return _flat(*_target(strategy, scenario, kafka_version)).to_table()
