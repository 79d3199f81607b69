"""Kafka 4's server-side assignors: the group coordinator's, for the KIP-848 consumer protocol.

With ``group.protocol=consumer`` the members no longer assign partitions among
themselves: the group coordinator computes each member's target assignment with the
assignor named by ``group.remote.assignor`` (one of ``group.consumer.assignors``,
default ``uniform``). kassign reproduces both of Kafka's: ``uniform``
(:mod:`.uniform`) and ``range`` (:mod:`.range_server`).

Each takes a :class:`~kassign.groups.consumer.group.ServerGroup` and the Kafka release
(:class:`~kassign.core.releases.KafkaRelease`; only ``uniform`` with every member subscribing to
the same topics differs between releases) and returns one owner per partition (member
numbers by flat partition id, -1 for none); :func:`assign_server_side` turns that into
the dict API's shape at the edge.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kassign.groups.consumer.group import ServerGroup, assemble_server_group, build_server_group, derived_topic_id
from kassign.groups.consumer.range import range_assign
from kassign.groups.consumer.uniform import uniform_assign
from kassign.core.errors import UnknownAssignorError
from kassign.groups.flat import FlatAssignment
from kassign.core.releases import DEFAULT_KAFKA_VERSION, KafkaRelease, ReleaseLike, release_for
from kassign.groups.scenario import Scenario

ServerAssignor = Callable[[ServerGroup, KafkaRelease], np.ndarray]

SERVER_ASSIGNORS: dict[str, ServerAssignor] = {
    "uniform": uniform_assign,
    "range": range_assign,
}

_KAFKA_CLASS_NAMES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}

__all__ = ["SERVER_ASSIGNORS", "ServerGroup", "assemble_server_group", "assign_server_side", "build_server_group",
           "derived_topic_id", "server_assignor"]


def server_assignor(name: object) -> tuple[str, ServerAssignor]:
    """The server-side assignor called ``name`` (short name or Kafka's class name)."""
    if not isinstance(name, str):
        raise UnknownAssignorError(f"strategy must be a name such as 'uniform' or 'range', got {name!r}")
    short = _KAFKA_CLASS_NAMES.get(name, name)
    if short not in SERVER_ASSIGNORS:
        raise UnknownAssignorError(
            f"no server-side assignor {name!r} for protocol 'consumer'; Kafka 4's group coordinator has "
            f"{', '.join(sorted(SERVER_ASSIGNORS))}"
        )
    return short, SERVER_ASSIGNORS[short]


def assign_server_side(name: object, scenario: Scenario,
                       kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION) -> FlatAssignment:
    """The coordinator's new target assignment, as arrays (:mod:`kassign.groups.flat`), as Kafka
    ``kafka_version``'s coordinator computes it (:mod:`kassign.core.releases`)."""
    release = release_for(kafka_version, "consumer")
    _, assignor = server_assignor(name)
    group = build_server_group(scenario)
    owners = assignor(group, release)
    # members back in the document's order, which is often sorted already: the result lists them sorted
    held = owners >= 0
    owners[held] = group.given_position[owners[held]]
    return FlatAssignment(scenario.members.ids, group.topic_names, group.offsets, owners,
                          members_sorted=bool(scenario.members.ids_ascending))
