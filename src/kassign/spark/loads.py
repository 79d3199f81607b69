"""Driver-side stages over per-partition aggregates: consumers, brokers, rebalance cost, sweep verdict.

Inputs here are small (one row per partition, or per candidate partition count), never
per-record data. Loads travel as ``{(topic, partition): (records, bytes)}``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from kassign.api import assign, assign_table
from kassign.groups.classic.assignors import get_assignor
from kassign.groups.consumer.assignors import server_assignor
from kassign.core.errors import KassignError, UnknownAssignorError
from kassign.core.releases import DEFAULT_KAFKA_VERSION, UnsupportedReleaseError, release_for
from kassign.groups.share.api import check_share_strategy
from kassign.replicas.placement import assign_replicas
from kassign.spark.options import STRATEGIES

log = logging.getLogger(__name__)

# STRATEGIES: classic (client-side) strategies by name; Kafka 4's consumer-protocol (server-side) ones as
# "consumer:NAME", the group coordinator's assignor NAME; a share group's as "share:NAME" (defined with the
# options, which are judged first). Every one answers as the run's Kafka release (the classic range, sticky and
# cooperative-sticky of 3.x releases differ from 4.x's; kassign's own random, broadcast and load-aware do not depend on it).
CONSUMER_PREFIX = "consumer:"
SHARE_PREFIX = "share:"
PartitionLoads = Mapping[tuple[str, int], tuple[int, int]]


def protocol_of(strategy: str) -> tuple[str, str]:
    """``(protocol, assignor name)`` of a pipeline strategy name."""
    for prefix, protocol in ((CONSUMER_PREFIX, "consumer"), (SHARE_PREFIX, "share")):
        if strategy.startswith(prefix):
            return protocol, strategy[len(prefix):]
    return "classic", strategy


def _run(api: Callable[..., Any], strategy: str, scenario: dict, loads: PartitionLoads,
         kafka_version: str = DEFAULT_KAFKA_VERSION) -> Any:
    """``api`` (``assign`` or ``assign_table``) for a pipeline strategy name."""
    protocol, name = protocol_of(strategy)
    if protocol != "classic":
        return api(name, scenario, protocol=protocol, kafka_version=kafka_version)
    return api(strategy, scenario, kafka_version=kafka_version, **_options(strategy, loads))


def _assign(strategy: str, scenario: dict, loads: PartitionLoads,
            kafka_version: str = DEFAULT_KAFKA_VERSION) -> dict[str, list[tuple[str, int]]]:
    return _run(assign, strategy, scenario, loads, kafka_version)


def _assign_table(strategy: str, scenario: dict, loads: PartitionLoads,
                  kafka_version: str = DEFAULT_KAFKA_VERSION) -> pa.Table:
    return _run(assign_table, strategy, scenario, loads, kafka_version)


def loads_table(loads: PartitionLoads) -> pa.Table:
    """The per-partition loads as columns topic, partition (int32), records, bytes."""
    keys = list(loads)
    return pa.table({"topic": pa.array([t for t, _ in keys], pa.string()),
                     "partition": pa.array([p for _, p in keys], pa.int32()),
                     "records": pa.array([loads[k][0] for k in keys], pa.int64()),
                     "bytes": pa.array([loads[k][1] for k in keys], pa.int64())})


def available_strategies(wanted: Sequence[str] = STRATEGIES,
                         kafka_version: str = DEFAULT_KAFKA_VERSION) -> tuple[list[str], dict[str, str]]:
    """Strategies kassign can run now (at ``kafka_version``), and why the others were skipped."""
    usable, skipped = [], {}
    for name in wanted:
        protocol, assignor = protocol_of(name)
        try:
            if protocol == "consumer":
                release_for(kafka_version, "consumer")  # 3.x: early access or none at all, said in the skip reason
                server_assignor(assignor)
            elif protocol == "share":
                release_for(kafka_version, "share")
                check_share_strategy(assignor)
            else:
                get_assignor(name, kafka_version=kafka_version)
            usable.append(name)
        except (UnknownAssignorError, UnsupportedReleaseError) as err:
            log.warning("skipping strategy %s: %s", name, err)
            skipped[name] = str(err)
    return usable, skipped


def _options(strategy: str, loads: PartitionLoads) -> dict[str, Any]:
    if strategy == "load-aware":
        return {"partition_loads": {tp: float(b) for tp, (_, b) in loads.items()}}
    return {}


def _member_totals(assigned: pa.Table, per_partition: pa.Table, members: Sequence[str]) -> dict[str, dict[str, int]]:
    """Each member's partitions, records and bytes: the assignment joined to the loads, summed per member."""
    joined = assigned.join(per_partition, ["topic", "partition"], join_type="left outer")
    sums = joined.group_by("member").aggregate([("partition", "count"), ("records", "sum"), ("bytes", "sum")])
    found = {m: (n, r or 0, b or 0) for m, n, r, b in zip(
        *(sums.column(c).to_pylist() for c in ("member", "partition_count", "records_sum", "bytes_sum")))}
    return {m: dict(zip(("partitions", "records", "bytes"), found.get(m, (0, 0, 0)))) for m in members}


def _shared_totals(assigned: pa.Table, loads: PartitionLoads, members: Sequence[str]) -> dict[str, dict[str, int]]:
    """Each share-group member's partitions and its even share of their records and bytes."""
    holders: dict[tuple[str, int], list[str]] = {}
    for member, topic, partition in zip(*(assigned.column(c).to_pylist() for c in ("member", "topic", "partition"))):
        holders.setdefault((topic, partition), []).append(member)
    totals = {m: {"partitions": 0, "records": 0, "bytes": 0} for m in members}
    for tp, who in holders.items():
        records, size = loads.get(tp, (0, 0))
        for i, member in enumerate(who):
            totals[member]["partitions"] += 1
            totals[member]["records"] += records // len(who) + (1 if i < records % len(who) else 0)
            totals[member]["bytes"] += size // len(who) + (1 if i < size % len(who) else 0)
    return totals


def _assignment_lists(assigned: pa.Table, members: Sequence[str]) -> dict[str, list[list]]:
    """``{member: [[topic, partition], ...]}`` in the assignor's order, every member present."""
    lists: dict[str, list[list]] = {m: [] for m in members}
    for member, topic, partition in zip(*(assigned.column(c).to_pylist() for c in ("member", "topic", "partition"))):
        lists[member].append([topic, partition])
    return lists


def _spread(values: Sequence[int]) -> dict[str, float]:
    if not values:
        return {"max_minus_min": 0, "max_over_mean": 0.0}
    mean = sum(values) / len(values)
    return {"max_minus_min": max(values) - min(values), "max_over_mean": round(max(values) / mean, 4) if mean else 0.0}


def consumer_load(scenario: dict, strategies: Sequence[str], loads: PartitionLoads,
                  kafka_version: str = DEFAULT_KAFKA_VERSION) -> dict[str, Any]:
    """Per strategy: each member's partitions, records, bytes, and the spread of bytes. The assignment
    comes as a table (``kassign.assign_table``) and is joined to the per-partition loads in Arrow.

    In a share group several members may fetch from one partition; the broker hands its records out one
    by one to whichever asks, so each member is counted an even share of that partition's records and bytes
    (records rounded down, the remainder to the first members)."""
    result = {}
    per_partition = loads_table(loads)
    names = sorted(scenario["members"])  # assign's member order
    for strategy in strategies:
        assigned = _assign_table(strategy, scenario, loads, kafka_version)
        shared = protocol_of(strategy)[0] == "share"
        members = _shared_totals(assigned, loads, names) if shared else _member_totals(assigned, per_partition, names)
        result[strategy] = {
            "assignment": _assignment_lists(assigned, names),
            "members": members,
            "records": sum(v["records"] for v in members.values()),
            "bytes_spread": _spread([v["bytes"] for v in members.values()]),
        }
    return result


def _rebalance_rounds(strategy: str, scenario: dict, loads: PartitionLoads, owned: Mapping[str, Sequence],
                      kafka_version: str = DEFAULT_KAFKA_VERSION) -> dict:
    """Run the group until nobody is left without an owner because of a revocation (cooperative needs 2 rounds)."""
    generation = 1
    current = {m: list(owned.get(m, [])) for m in scenario["members"]}
    result: dict = {}
    for _ in range(3):
        doc = {"topics": scenario["topics"], "members": {
            m: {**spec, "owned": [list(tp) for tp in current[m]], "generation": generation}
            for m, spec in scenario["members"].items()}}
        result = _assign(strategy, doc, loads, kafka_version)
        if all(sorted(map(tuple, result[m])) == sorted(map(tuple, current[m])) for m in result):
            break
        current = {m: [tuple(tp) for tp in result[m]] for m in result}
        generation += 1
    return result


def _moved(before: Mapping[str, Sequence], after: Mapping[str, Sequence], loads: PartitionLoads) -> dict[str, int]:
    owner_before = {tuple(tp): m for m, tps in before.items() for tp in tps}
    owner_after = {tuple(tp): m for m, tps in after.items() for tp in tps}
    moved = [tp for tp, m in owner_before.items() if owner_after.get(tp) != m]
    return {"partitions": len(moved), "bytes": sum(loads.get(tp, (0, 0))[1] for tp in moved),
            "records": sum(loads.get(tp, (0, 0))[0] for tp in moved)}


def rebalance_cost(scenario: dict, consumers: Mapping[str, Any], loads: PartitionLoads,
                   kafka_version: str = DEFAULT_KAFKA_VERSION) -> dict[str, Any]:
    """For each strategy: what moves when the last member leaves, and when a new member joins. A share group
    has no rebalance barrier (members keep fetching while the target changes, and nothing is revoked first),
    so its strategies have no such cost and are left out."""
    members = list(scenario["members"])
    if not members:
        return {}
    leaver = members[-1]
    joiner = "joiner"
    while joiner in scenario["members"]:
        joiner += "_"
    all_topics = sorted({t for spec in scenario["members"].values() for t in spec["topics"]})
    result = {}
    for strategy, load in consumers.items():
        if protocol_of(strategy)[0] == "share":
            continue
        before = {m: [tuple(tp) for tp in tps] for m, tps in load["assignment"].items()}
        left = {"topics": scenario["topics"], "members": {m: s for m, s in scenario["members"].items() if m != leaver}}
        joined = {"topics": scenario["topics"], "members": {**scenario["members"], joiner: {"topics": all_topics}}}
        entry = {}
        if left["members"]:
            after_leave = _rebalance_rounds(strategy, left, loads, before, kafka_version)
            entry["member_leaves"] = {"member": leaver, **_moved(before, after_leave, loads),
                                      "forced_partitions": len(before[leaver])}
        after_join = _rebalance_rounds(strategy, joined, loads, before, kafka_version)
        entry["member_joins"] = {"member": joiner, **_moved(before, after_join, loads)}
        result[strategy] = entry
    return result


def replica_placements(brokers: Sequence[tuple[int, str | None]], partition_counts: Mapping[str, int],
                       replication_factor: int, seed: int, placer: str = "striped") -> dict[str, dict[int, list[int]]]:
    """Kafka's replica placement of every topic (leader first): topic ``i`` (by name) placed with seed
    ``seed + i``, as ``broker_load`` reports it."""
    return {topic: assign_replicas(list(brokers), count, replication_factor, placer=placer, seed=seed + offset)
            for offset, (topic, count) in enumerate(sorted(partition_counts.items()))}


def leader_racks(brokers: Sequence[tuple[int, str | None]], partition_counts: Mapping[str, int],
                 replication_factor: int, seed: int, placer: str = "striped") -> dict[str, list[str | None]]:
    """Per topic, the rack of each partition's leader (the first replica) in ``replica_placements``."""
    racks = dict(brokers)
    return {topic: [racks[placement[p][0]] for p in sorted(placement)]
            for topic, placement in replica_placements(brokers, partition_counts, replication_factor, seed,
                                                       placer).items()}


def broker_load(brokers: Sequence[tuple[int, str | None]], partition_counts: Mapping[str, int], replication_factor: int,
                loads: PartitionLoads, seed: int, placer: str = "striped") -> dict[str, Any]:
    """Leader and replica bytes per broker and per rack, with Kafka's replica placement per topic.

    ``placer="striped"`` is what a KRaft controller (Kafka 4) does when a topic is created,
    ``"legacy"`` is ZooKeeper-era AdminUtils placement; topic ``i`` (by name) is placed with
    seed ``seed + i``, so a run is reproducible from the seed in the summary."""
    per_broker = {b: {"rack": r, "leader_partitions": 0, "replicas": 0, "leader_records": 0, "leader_bytes": 0,
                      "replica_bytes": 0} for b, r in brokers}
    placements = {}
    for topic, placement in replica_placements(brokers, partition_counts, replication_factor, seed, placer).items():
        placements[topic] = {str(p): r for p, r in placement.items()}
        for p, replicas in placement.items():
            records, size = loads.get((topic, p), (0, 0))
            leader = per_broker[replicas[0]]
            leader["leader_partitions"] += 1
            leader["leader_records"] += records
            leader["leader_bytes"] += size
            for b in replicas:
                per_broker[b]["replicas"] += 1
                per_broker[b]["replica_bytes"] += size
    per_rack: dict[str, dict[str, int]] = {}
    for b in per_broker.values():
        rack = per_rack.setdefault(b["rack"] or "(none)", {"leader_bytes": 0, "replica_bytes": 0, "leader_records": 0})
        for k in rack:
            rack[k] += b[k]
    return {"placer": placer, "seed": seed,
            "brokers": {str(b): v for b, v in per_broker.items()}, "racks": per_rack, "placement": placements,
            "leader_records": sum(v["leader_records"] for v in per_broker.values()),
            "leader_bytes_spread": _spread([v["leader_bytes"] for v in per_broker.values()])}


def sweep_verdict(rows: Sequence[tuple[int, int, int]], total_bytes: int, target_share: float) -> dict[str, Any]:
    """From (partition count, hottest partition bytes, partitions) rows: skew per count and the recommendation."""
    if not 0 < target_share <= 1:
        raise KassignError(f"--target-share must be in (0, 1], got {target_share}")
    curve = []
    recommended = None
    for n, hottest, _ in sorted(rows):
        mean = total_bytes / n
        share = hottest / total_bytes if total_bytes else 0.0
        curve.append({"partitions": n, "hottest_bytes": hottest, "skew": round(hottest / mean, 4) if mean else 0.0,
                      "hottest_share": round(share, 6)})
        if recommended is None and share <= target_share:
            recommended = n
    return {"target_share": target_share, "recommended_partitions": recommended, "curve": curve}
