"""``kassign plan --bootstrap-server``: the planner's inputs read from the cluster itself.

The rule: one read of the cluster (:func:`kassign.kafka.cluster_inputs.read_cluster`: Metadata, DescribeLogDirs,
ListPartitionReassignments, and with ``--sample`` the sizes and end offsets twice) gives the planner everything
``kassign.plan_reassignment`` takes without a cluster:

- ``current``: the placement, Kafka's replica order (the preferred leader first), minus the partitions that are
  under-replicated now (fewer in-sync replicas than replicas): moving a replica of a partition that is already
  short of copies risks it, so such a partition is left where it is and said, unless ``--move-under-replicated``;
- ``brokers``: the cluster's brokers with their racks, unless ``--brokers`` names the target brokers;
- ``sizes``: each partition's leader replica's bytes; ``rates``: bytes written per second when sampled. A
  cluster whose brokers do not speak DescribeLogDirs at all (some Kafka-compatible servers) is planned on counts,
  and the terminal and ``inputs`` say that sizes and disks were not read; a broker that speaks it and fails to
  answer is an error;
- ``disk``: each broker's volume size and free bytes (DescribeLogDirs v4 and later), so that what else fills the
  disk counts against its limit; ``capacity``: the ``--capacity`` file, checked against the cluster's broker ids
  before anything else is read.

The summary's ``inputs`` then holds where each came from (API, version, broker, sample window, file).

Worked example: a 3-broker cluster where ``kc-move`` 2 has replicas [3, 1] but only broker 3 in sync: the plan
covers every other partition of the topics read, ``kc-move`` 2 keeps [3, 1], and the terminal says
"kc-move-2 is under-replicated (in sync: 3 of replicas 3, 1): left where it is (--move-under-replicated moves it)".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kassign.kafka.cluster_inputs import ClusterInputs, LogDirsNotSpokenError, read_cluster

__all__ = ["LivePlanInputs", "read_live_inputs"]


@dataclass
class LivePlanInputs:
    """What ``plan_reassignment`` takes, read live, with the cluster read kept for the summary."""

    current: dict[str, Any]
    brokers: list[tuple[int, str | None]]
    sizes: dict[str, dict[int, int]] | None  # None: the brokers do not speak DescribeLogDirs
    rates: dict[str, dict[int, float]] | None
    disk: dict[int, dict[str, int]] | None
    capacity: dict[str, Any] | None
    cluster: ClusterInputs
    held: list[tuple[str, int]] = field(default_factory=list)  # under-replicated partitions left out
    notes: list[str] = field(default_factory=list)

    def inputs_json(self) -> dict[str, Any]:
        """The summary's ``inputs`` as the cluster gave them: sizes, rates, disks, capacity, sources, notes."""
        document = self.cluster.to_json()
        document["held_under_replicated"] = [{"topic": t, "partition": p} for t, p in self.held]
        return document


def read_live_inputs(bootstrap: str, config: dict[str, str] | None, timeout: float, topics: list[str] | None,
                     sample: str | None, capacity_path: str | None, move_under_replicated: bool,
                     progress: Callable[[float, float], None] | None = None) -> LivePlanInputs:
    """Read the cluster once (see the module's rule); raises a one-line ``KassignError`` where it cannot."""
    notes: list[str] = []
    try:
        cluster = read_cluster(bootstrap, config, timeout, topics or None, sample, capacity_path, progress=progress)
        sized = True
    except LogDirsNotSpokenError as err:
        if sample is not None:
            raise
        cluster = read_cluster(bootstrap, config, timeout, topics or None, None, capacity_path, log_dirs=False)
        sized = False
        notes.append(f"{err}: replica sizes and disks not read, the plan balances replica and leader counts")
    under = set(cluster.under_replicated)
    held: list[tuple[str, int]] = []
    partitions = []
    for row in cluster.current["partitions"]:
        key = (row["topic"], row["partition"])
        if key in under and not move_under_replicated:
            held.append(key)
            in_sync = cluster.isr.get(row["topic"], {}).get(row["partition"], [])
            notes.append(f"{row['topic']}-{row['partition']} is under-replicated (in sync: "
                         f"{', '.join(map(str, in_sync)) or 'none'} of replicas {', '.join(map(str, row['replicas']))})"
                         ": left where it is (--move-under-replicated moves it)")
            continue
        partitions.append(row)
    current = {"version": cluster.current.get("version", 1), "partitions": partitions}
    disk = {b: {"total_bytes": d.total_bytes, **({"usable_bytes": d.usable_bytes} if d.usable_bytes is not None
                                                 else {})}
            for b, d in sorted(cluster.disks.items()) if d.total_bytes is not None}
    capacity = cluster.capacity_document.to_json() if cluster.capacity_document is not None else None
    return LivePlanInputs(current=current, brokers=cluster.broker_list, sizes=cluster.sizes if sized else None,
                          rates=cluster.rates,
                          disk=disk or None, capacity=capacity, cluster=cluster, held=held, notes=notes)
