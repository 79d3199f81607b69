"""``assign_streams_classic``: a classic Kafka Streams rebalance, as its group leader computes it.

Two of Kafka Streams' task assignors: ``high-availability`` (the default, KIP-441,
:mod:`kassign.groups.streams.classic.high_availability`) and ``sticky`` (its StickyTaskAssignor, chosen with
``task.assignor.class``, :mod:`kassign.groups.streams.classic.sticky`); and kassign's own ``optimal``
(:mod:`kassign.groups.streams.classic.optimal`: exact balance, then stickiness and the least restoration, no
warm-ups); then the split over each client's stream threads (:mod:`kassign.groups.streams.classic.threads`).

``kafka_version`` names the release whose leader decides, any from 3.0 to 4.4 (default 4.4): the
rules that changed between them are in :mod:`kassign.core.releases` (``KSTREAMS_*``) and each module
says what its releases do; a release lacking what is asked (``sticky`` before 3.8, rack-aware
assignment before 3.6, ``balance_subtopology`` in 3.6, client tags before 3.2) is a one-line
:class:`~kassign.core.errors.KassignError` saying what that release has. ``optimal`` is kassign's and
answers alike in every release, but the split over threads it is given is the release's.

The answer gives every client's active and standby tasks (warm-up replicas
are standbys, as Kafka hands them out), every consumer's share of its client's tasks, and
whether the leader schedules a probing rebalance. Task lists are sorted by (subtopology,
partition); clients appear in process UUID order (signed, as Java compares UUIDs), consumers
in member id order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kassign.core.errors import KassignError, UnknownAssignorError, shown
from kassign.core.releases import (DEFAULT_KAFKA_VERSION, HIGH_AVAILABILITY_ONLY, KSTREAMS_CLIENT_TAGS, KSTREAMS_RACK_AWARE,
                                   KSTREAMS_TASK_ASSIGNORS, LATEST, MIN_TRAFFIC_ONLY, NO_CLIENT_TAGS, NO_RACK_AWARE,
                                   KafkaRelease, release_for, rule)
from kassign.groups.streams.classic.high_availability import HighAvailabilityAssignor
from kassign.groups.streams.classic.lags import lag_matrix, merged_offset_sums
from kassign.groups.streams.classic.optimal import assign_optimal
from kassign.groups.streams.classic.scenario import StreamsClassicScenario, parse_streams_classic
from kassign.groups.streams.classic.sticky import StickyAssignor
from kassign.groups.streams.classic.threads import high_availability_orders, split_over_consumers

STRATEGIES = ("high-availability", "sticky", "optimal")


def streams_release(kafka_version: Any) -> KafkaRelease:
    """The Kafka release ``kafka_version`` names, checked to be one kassign models (3.0 to 4.4): Kafka Streams'
    classic task assignment ships with every one of them."""
    return release_for(kafka_version, "classic")


def check_release_has(strategy: str, settings: Mapping[str, Any], release: KafkaRelease) -> None:
    """A one-line :class:`KassignError` when ``release`` lacks what the strategy or the settings ask for.
    ``settings``: the scenario's ``rack_aware_assignment_*`` settings (absent: Kafka Streams' defaults)."""
    label = release.label
    if strategy == "sticky" and rule(release, KSTREAMS_TASK_ASSIGNORS) == HIGH_AVAILABILITY_ONLY:
        raise KassignError(f"Kafka {label} has no sticky task assignor for Kafka Streams (task.assignor.class and "
                           f"its StickyTaskAssignor, KIP-924, came with 3.8); Kafka {label}'s classic Kafka Streams "
                           "assigns with high-availability; pass kafka_version (--kafka-version) 3.8 or later")
    if settings.get("rack_aware_assignment_tags") and rule(release, KSTREAMS_CLIENT_TAGS) == NO_CLIENT_TAGS:
        raise KassignError(f"Kafka {label} has no rack_aware_assignment_tags (rack.aware.assignment.tags, KIP-708, "
                           f"came with 3.2); Kafka {label} places standbys on the least loaded clients; leave the "
                           "tags out or pass kafka_version (--kafka-version) 3.2 or later")
    rack_aware = rule(release, KSTREAMS_RACK_AWARE)
    strategy_set = settings.get("rack_aware_assignment_strategy", "none")
    costs = [key for key in ("rack_aware_assignment_traffic_cost", "rack_aware_assignment_non_overlap_cost")
             if settings.get(key) is not None]
    if rack_aware == NO_RACK_AWARE and (strategy_set != "none" or costs):
        what = f"rack_aware_assignment_strategy {strategy_set}" if strategy_set != "none" else " and ".join(costs)
        raise KassignError(f"Kafka {label} has no rack-aware task assignment ({what}: rack.aware.assignment.strategy "
                           "and its costs, KIP-925, came with 3.6); leave them out or pass kafka_version "
                           "(--kafka-version) 3.6 or later")
    if rack_aware == MIN_TRAFFIC_ONLY and strategy_set == "balance_subtopology":
        raise KassignError(f"Kafka {label} rejects rack_aware_assignment_strategy balance_subtopology (its StreamsConfig "
                           "throws ConfigException: balance_subtopology came with 3.7); Kafka 3.6 takes none or "
                           "min_traffic")


def _settings_of(parsed: StreamsClassicScenario) -> dict[str, Any]:
    return {key: getattr(parsed, key) for key in ("rack_aware_assignment_tags", "rack_aware_assignment_strategy",
                                                  "rack_aware_assignment_traffic_cost",
                                                  "rack_aware_assignment_non_overlap_cost")}


def assign_streams_classic(strategy: str, scenario: Mapping, kafka_version: str = DEFAULT_KAFKA_VERSION) -> dict:
    """Tasks per client and per consumer of a classic Kafka Streams application, and whether a
    probing rebalance follows, as Kafka ``kafka_version`` (3.0 to 4.4) decides them.
    ``strategy``: ``"high-availability"`` (Kafka Streams' default), ``"sticky"`` (its StickyTaskAssignor,
    chosen with ``task.assignor.class``, 3.8 and later) or ``"optimal"`` (kassign's own: never a probing
    rebalance; the split over stream threads is the release's)."""
    if strategy not in STRATEGIES:
        raise UnknownAssignorError(f"unknown Kafka Streams task assignor {shown(strategy)}; "
                                   f"choose one of: {', '.join(STRATEGIES)}")
    release = streams_release(kafka_version)
    parsed = scenario if isinstance(scenario, StreamsClassicScenario) else parse_streams_classic(scenario)
    check_release_has(strategy, _settings_of(parsed), release)
    return _answer(parsed, *decide_streams_classic(strategy, parsed, release))


def decide_streams_classic(strategy: str, parsed: StreamsClassicScenario,
                           release: KafkaRelease = LATEST) -> tuple[list, list, bool]:
    """:func:`assign_streams_classic` on numbers (a known ``strategy``, a parsed scenario, a release that has
    what they ask for): per client its (sorted active tasks, sorted standby tasks); per client {consumer
    index: its share}; whether a probing rebalance follows. Tasks and clients by their numbers in the scenario."""
    merged = merged_offset_sums(parsed)
    if strategy == "sticky":
        sticky = StickyAssignor(parsed, merged, release)
        sticky.assign()
        per_client = [(sorted(sticky.active[c]), sorted(set(sticky.given[c]) - sticky.active[c]))
                      for c in range(len(parsed.clients))]
        return per_client, split_over_consumers(parsed, merged, sticky.thread_split_orders, per_client, release), False
    if strategy == "optimal":
        clients = assign_optimal(parsed, merged)
        probing = False
    else:
        assignor = HighAvailabilityAssignor(parsed, lag_matrix(parsed, merged), release)
        probing = assignor.assign()
        clients = assignor.clients
    per_client = [(sorted(clients.active[c]), sorted(clients.standby[c])) for c in range(len(clients))]
    orders = high_availability_orders(parsed, clients)
    return per_client, split_over_consumers(parsed, merged, orders, per_client, release), probing


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
