"""``assign_streams_classic``: a classic Kafka Streams rebalance, as its group leader computes it.

Two of Kafka Streams' task assignors: ``high-availability`` (the default, KIP-441,
:mod:`kassign.groups.streams.classic.high_availability`) and ``sticky`` (its StickyTaskAssignor, chosen with
``task.assignor.class``, :mod:`kassign.groups.streams.classic.sticky`); and kassign's own ``optimal``
(:mod:`kassign.groups.streams.classic.optimal`: exact balance, then stickiness and the least restoration, no
warm-ups); then the split over each client's stream threads (:mod:`kassign.groups.streams.classic.threads`).

The answer (SPEC section 8) gives every client's active and standby tasks (warm-up replicas
are standbys, as Kafka hands them out), every consumer's share of its client's tasks, and
whether the leader schedules a probing rebalance. Task lists are sorted by (subtopology,
partition); clients appear in process UUID order (signed, as Java compares UUIDs), consumers
in member id order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kassign.core.errors import KassignError, UnknownAssignorError, shown
from kassign.groups.streams.classic.high_availability import HighAvailabilityAssignor
from kassign.groups.streams.classic.lags import lag_matrix, merged_offset_sums
from kassign.groups.streams.classic.optimal import assign_optimal
from kassign.groups.streams.classic.scenario import StreamsClassicScenario, parse_streams_classic
from kassign.groups.streams.classic.sticky import StickyAssignor
from kassign.groups.streams.classic.threads import high_availability_orders, split_over_consumers

STRATEGIES = ("high-availability", "sticky", "optimal")
_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?\Z")


def check_kafka_version(kafka_version: Any) -> str:
    """Kafka Streams' classic assignors are the same in every 4.x release; anything else is refused."""
    match = _VERSION.match(kafka_version) if isinstance(kafka_version, str) else None
    if not match:
        raise KassignError(f"kafka_version must be \"MAJOR.MINOR\" or \"MAJOR.MINOR.PATCH\", got {shown(kafka_version)}")
    if match[1] != "4":
        raise KassignError(f"kafka_version {kafka_version}: kassign models Kafka Streams' classic task assignment "
                           "of Kafka 4.x (any 4.MINOR release), not other major releases")
    return kafka_version


def assign_streams_classic(strategy: str, scenario: Mapping, kafka_version: str = "4.3") -> dict:
    """Tasks per client and per consumer of a classic Kafka Streams application, and whether a
    probing rebalance follows (SPEC section 8). ``strategy``: ``"high-availability"`` (Kafka
    Streams' default), ``"sticky"`` (its StickyTaskAssignor, chosen with ``task.assignor.class``) or
    ``"optimal"`` (kassign's own: never a probing rebalance)."""
    if strategy not in STRATEGIES:
        raise UnknownAssignorError(f"unknown Kafka Streams task assignor {shown(strategy)}; "
                                   f"choose one of: {', '.join(STRATEGIES)}")
    check_kafka_version(kafka_version)
    parsed = scenario if isinstance(scenario, StreamsClassicScenario) else parse_streams_classic(scenario)
    return _answer(parsed, *decide_streams_classic(strategy, parsed))


def decide_streams_classic(strategy: str, parsed: StreamsClassicScenario) -> tuple[list, list, bool]:
    """:func:`assign_streams_classic` on numbers (a known ``strategy``, a parsed scenario): per client
    its (sorted active tasks, sorted standby tasks); per client {consumer index: its share}; whether
    a probing rebalance follows. Tasks and clients by their numbers in the scenario."""
    merged = merged_offset_sums(parsed)
    if strategy == "sticky":
        sticky = StickyAssignor(parsed, merged)
        sticky.assign()
        per_client = [(sorted(sticky.active[c]), sorted(set(sticky.given[c]) - sticky.active[c]))
                      for c in range(len(parsed.clients))]
        return per_client, split_over_consumers(parsed, merged, sticky.thread_split_orders, per_client), False
    if strategy == "optimal":
        clients = assign_optimal(parsed, merged)
        probing = False
    else:
        assignor = HighAvailabilityAssignor(parsed, lag_matrix(parsed, merged))
        probing = assignor.assign()
        clients = assignor.clients
    per_client = [(sorted(clients.active[c]), sorted(clients.standby[c])) for c in range(len(clients))]
    return per_client, split_over_consumers(parsed, merged, high_availability_orders(parsed, clients), per_client), probing


def _answer(scenario: StreamsClassicScenario, per_client: list, split: list, probing: bool) -> dict:
    name = scenario.task_name
    clients_out = {}
    consumers_out = {}
    for ci, client in enumerate(scenario.clients):
        clients_out[client.process_id] = {
            "active": [name(t) for t in per_client[ci][0]],
            "standby": [name(t) for t in per_client[ci][1]],
        }
        for mi, assignment in split[ci].items():
            consumers_out[client.consumers[mi].member_id] = {
                "active": [name(t) for t in assignment.active],
                "standby": [name(t) for t in assignment.standby],
            }
    ordered = {m: consumers_out[m] for m in sorted(consumers_out)}
    return {"clients": clients_out, "consumers": ordered, "probing_rebalance": probing}
