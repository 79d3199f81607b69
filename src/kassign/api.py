"""``kassign.assign`` and ``kassign.assign_tasks``: one group type's assignor over a scenario document, as a given
Kafka release runs it. The documents they read and the answers they give are stated field by field in the
manual's reference (docs/formats.md, docs/outputs.md).

``assign`` places partitions: ``protocol="classic"`` (the members' own assignor), ``"consumer"`` (KIP-848, the
coordinator's ``uniform`` or ``range``) or ``"share"`` (KIP-932, ``simple``; a partition may go to several
members). ``assign_tasks`` places a Kafka Streams application's tasks: ``protocol="classic"`` (the group leader's
``high-availability`` or ``sticky``, or kassign's exact ``optimal``) or ``"streams"`` (KIP-1071, the broker's ``sticky``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from kassign.groups.classic.assignors import ConsumerPartitionAssignor, assign_scenario, get_assignor
from kassign.groups.consumer.assignors import assign_server_side
from kassign.core.errors import KassignError
from kassign.groups.flat import FlatAssignment, no_cyclic_gc
from kassign.core.releases import DEFAULT_KAFKA_VERSION, release_for
from kassign.groups.scenario import Scenario, parse_scenario


PROTOCOLS = ("classic", "consumer", "share")
TASK_PROTOCOLS = ("classic", "streams")


def assign(
    strategy: str | ConsumerPartitionAssignor,
    scenario: Mapping[str, Any] | Scenario,
    protocol: str = "classic",
    kafka_version: str = DEFAULT_KAFKA_VERSION,
    **options: Any,
) -> dict[str, list[tuple[str, int]]]:
    """Assign the scenario's partitions with ``strategy``.

    ``scenario``: [a classic consumer group](formats.md#a-classic-consumer-group),
    [a consumer-protocol group](formats.md#a-consumer-protocol-group-kip-848) or
    [a share group](formats.md#a-share-group-kip-932), as a dict (or a parsed ``Scenario``).
    Returns ``{member: [(topic, partition), ...]}`` sorted, with every member present.
    ``protocol="classic"`` runs a client-side assignor (``range``, ``sticky``, ...; the
    members' ``owned`` are what they held); ``protocol="consumer"`` runs the Kafka 4
    group coordinator's (``uniform`` or ``range``; ``owned`` is each member's current
    target). ``options`` go to a classic assignor's constructor (e.g. ``seed`` for ``random``).

    ``kafka_version`` (``"MAJOR.MINOR"`` or ``"MAJOR.MINOR.PATCH"``) is the Kafka release to
    answer as (:mod:`kassign.core.releases`): the consumer protocol's ``uniform`` differs between
    4.0.0 and later releases (KAFKA-18688), the share groups' ``simple`` between 4.1 and later
    releases (KAFKA-19362/19363); the classic assignors are the same in every 4.x.
    A release kassign does not model is a ``KassignError`` naming those it does.
    """
    if protocol == "share":
        from kassign.groups.share import assign_share

        _no_options(protocol, options)
        return assign_share(strategy, scenario, kafka_version)  # type: ignore[arg-type]
    parsed = _read(scenario)
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
    if protocol == "share":
        from kassign.groups.share import assign_share_table

        _no_options(protocol, options)
        return assign_share_table(strategy, scenario, kafka_version)  # type: ignore[arg-type]
    return assign_flat(strategy, scenario, protocol, kafka_version, **options).to_table()


def assign_flat(
    strategy: str | ConsumerPartitionAssignor,
    scenario: Mapping[str, Any] | Scenario,
    protocol: str = "classic",
    kafka_version: str = DEFAULT_KAFKA_VERSION,
    **options: Any,
) -> FlatAssignment:
    """The assignment as integer arrays (:class:`kassign.groups.flat.FlatAssignment`), checked."""
    if protocol not in PROTOCOLS:
        raise KassignError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    release = release_for(kafka_version, protocol)
    if protocol == "share":
        from kassign.groups.share.api import share_flat

        _no_options(protocol, options)
        return share_flat(strategy, scenario, release.label)  # type: ignore[arg-type]
    parsed = _read(scenario)
    if protocol == "consumer":
        _no_options(protocol, options)
        return assign_server_side(strategy, parsed, release)
    assignor = get_assignor(strategy, kafka_version=release, **options)
    return assign_scenario(assignor, parsed)


def assign_tasks(strategy: str, scenario: Mapping[str, Any], protocol: str = "classic",
                 kafka_version: str = DEFAULT_KAFKA_VERSION) -> dict[str, Any]:
    """Assign a Kafka Streams application's tasks with ``strategy``.

    ``protocol="classic"`` (the default): the group leader's StreamsPartitionAssignor, ``high-availability``
    (Kafka Streams' default) or ``sticky``, or kassign's own ``optimal``, on
    [a Kafka Streams application's scenario](formats.md#a-kafka-streams-application); the answer is
    ``{"clients": {PROCESS: {"active", "standby"}}, "consumers": {MEMBER: {"active", "standby"}},
    "probing_rebalance": bool}``.
    ``protocol="streams"``: a KIP-1071 streams group, the broker's ``sticky`` on
    [a streams group's scenario](formats.md#a-streams-group-kip-1071); the
    answer is ``{MEMBER: {"active": {SUBTOPOLOGY: [partitions]}, "standby": {...}, "warmup": {...}}}``. As
    ``kafka_version`` 4.4 (the default) a member's ``offset_sums`` (task -> the offset sum its heartbeat
    reported) count too; 4.2 and 4.3 read none.
    """
    if protocol == "streams":
        from kassign.groups.streams.sticky import assign_streams

        return assign_streams(strategy, scenario, kafka_version)
    if protocol == "classic":
        from kassign.groups.streams.classic import assign_streams_classic

        return assign_streams_classic(strategy, scenario, kafka_version)
    raise KassignError(f"protocol must be one of {', '.join(TASK_PROTOCOLS)} for tasks, got {protocol!r}")


def _read(scenario: Mapping[str, Any] | Scenario) -> Scenario:
    """The scenario checked (:func:`parse_scenario`), with the cyclic collector off (:func:`no_cyclic_gc`).

    A document just decoded from JSON is young: its thousands of lists and dicts sit in the collector's
    young generations, and the first collection that kassign's own allocations set off would traverse
    them, every member's topic list item by item (a million names: 15 ms of an 85 ms call), only to find
    them all alive. Read with the collector off, they leave with everything else young for the oldest
    generation, unexamined, as a result's lists do."""
    with no_cyclic_gc():
        return parse_scenario(scenario)


def _no_options(protocol: str, options: Mapping[str, Any]) -> None:
    if options:
        raise KassignError(f"the {protocol} protocol's assignors take no options, got {sorted(options)}")
