"""``kassign.assign``: run a strategy over a scenario document (SPEC section 3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from kassign.groups.classic.assignors import ConsumerPartitionAssignor, assign_scenario, get_assignor
from kassign.groups.consumer.assignors import assign_server_side
from kassign.core.errors import KassignError
from kassign.groups.flat import FlatAssignment
from kassign.core.releases import DEFAULT_KAFKA_VERSION, release_for
from kassign.groups.scenario import Scenario, parse_scenario


PROTOCOLS = ("classic", "consumer")


def assign(
    strategy: str | ConsumerPartitionAssignor,
    scenario: Mapping[str, Any] | Scenario,
    protocol: str = "classic",
    kafka_version: str = DEFAULT_KAFKA_VERSION,
    **options: Any,
) -> dict[str, list[tuple[str, int]]]:
    """Assign the scenario's partitions with ``strategy``.

    Returns ``{member: [(topic, partition), ...]}`` sorted, with every member present.
    ``protocol="classic"`` runs a client-side assignor (``range``, ``sticky``, ...; the
    members' ``owned`` are what they held); ``protocol="consumer"`` runs the Kafka 4
    group coordinator's (``uniform`` or ``range``; ``owned`` is each member's current
    target). ``options`` go to a classic assignor's constructor (e.g. ``seed`` for ``random``).

    ``kafka_version`` (``"MAJOR.MINOR"`` or ``"MAJOR.MINOR.PATCH"``) is the Kafka release to
    answer as (:mod:`kassign.core.releases`): the consumer protocol's ``uniform`` differs between
    4.0.0 and later releases (KAFKA-18688); the classic assignors are the same in every 4.x.
    A release kassign does not model is a ``KassignError`` naming those it does.
    """
    parsed = parse_scenario(scenario)
    return assign_flat(strategy, parsed, protocol, kafka_version, **options).to_dict(parsed.members.ids)


def assign_table(
    strategy: str | ConsumerPartitionAssignor,
    scenario: Mapping[str, Any] | Scenario,
    protocol: str = "classic",
    kafka_version: str = DEFAULT_KAFKA_VERSION,
    **options: Any,
) -> pa.Table:
    """The same assignment as :func:`assign`, as a ``pyarrow.Table`` with columns ``member``
    (string), ``topic`` (string), ``partition`` (int32): one row per assigned partition, in
    :func:`assign`'s order, built from integer arrays without a Python object per partition."""
    return assign_flat(strategy, scenario, protocol, kafka_version, **options).to_table()


def assign_flat(
    strategy: str | ConsumerPartitionAssignor,
    scenario: Mapping[str, Any] | Scenario,
    protocol: str = "classic",
    kafka_version: str = DEFAULT_KAFKA_VERSION,
    **options: Any,
) -> FlatAssignment:
    """The assignment as integer arrays (:class:`kassign.groups.flat.FlatAssignment`), checked."""
    parsed = parse_scenario(scenario)
    if protocol not in PROTOCOLS:
        raise KassignError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    release = release_for(kafka_version, protocol)
    if protocol == "consumer":
        if options:
            raise KassignError(f"the consumer protocol's assignors take no options, got {sorted(options)}")
        return assign_server_side(strategy, parsed, release)
    assignor = get_assignor(strategy, **options)
    return assign_scenario(assignor, parsed)
