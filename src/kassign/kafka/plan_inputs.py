"""A live cluster as a planner's inputs: what ``kassign.plan_reassignment`` takes, read from the cluster itself.

The rule: one read of the cluster (:func:`kassign.kafka.cluster_inputs.read_cluster`: Metadata, DescribeLogDirs,
ListPartitionReassignments, and with ``sample`` the sizes and end offsets twice) gives every argument the planner
takes without a cluster:

- ``current``: the placement, Kafka's replica order (the preferred leader first), minus the partitions that are
  under-replicated now (fewer in-sync replicas than replicas): moving a replica of a partition that is already
  short of copies risks it, so such a partition is left where it is and said, unless ``move_under_replicated``;
- ``brokers``: the cluster's brokers with their racks;
- ``sizes``: each partition's leader replica's bytes; ``rates``: bytes written per second when sampled. A
  cluster whose brokers do not speak DescribeLogDirs at all (some Kafka-compatible servers) is planned on counts,
  and ``notes`` and ``inputs_json()`` say that sizes and disks were not read; a broker that speaks it and fails
  to answer is an error;
- ``disk``: each broker's volume size and free bytes (DescribeLogDirs v4 and later), so that what else fills the
  disk counts against its limit; ``capacity``: the capacity document, checked against the cluster's broker ids
  before anything else is read.

Worked example: a 3-broker cluster where ``kc-move`` 2 has replicas [3, 1] but only broker 3 in sync::

    inputs = kassign.read_plan_inputs("127.0.0.1:9092", sample="30s", capacity="capacity.json")
    plan = kassign.plan_reassignment(**inputs.arguments())

covers every other partition of the cluster's topics, ``kc-move`` 2 keeps [3, 1], and ``inputs.notes`` says
"kc-move-2 is under-replicated (in sync: 3 of replicas 3, 1): left where it is (--move-under-replicated moves it)"
(``move_under_replicated=True`` in Python).
``inputs.inputs_json()`` is what ``kassign plan --bootstrap-server --json`` prints as ``summary.inputs.cluster``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kassign.kafka.cluster_inputs import DEFAULT_TIMEOUT, ClusterInputs, LogDirsNotSpokenError, read_cluster

__all__ = ["PlanInputs", "read_plan_inputs"]


@dataclass
class PlanInputs:
    """What ``plan_reassignment`` takes, read live (``arguments()``), with the cluster read kept for the summary."""

    current: dict[str, Any]
    brokers: list[tuple[int, str | None]]
    sizes: dict[str, dict[int, int]] | None  # None: the brokers do not speak DescribeLogDirs
    rates: dict[str, dict[int, float]] | None
    disk: dict[int, dict[str, int]] | None
    capacity: dict[str, Any] | None
    cluster: ClusterInputs
    held: list[tuple[str, int]] = field(default_factory=list)  # under-replicated partitions left out
    notes: list[str] = field(default_factory=list)

    def arguments(self) -> dict[str, Any]:
        """``plan_reassignment``'s arguments: ``current``, ``brokers``, ``sizes``, ``rates``, ``disk``,
        ``capacity`` (add ``goals``, ``disk_limit``, ``tolerance`` and the options as you would without a
        cluster)."""
        return {"current": self.current, "brokers": self.brokers, "sizes": self.sizes, "rates": self.rates,
                "disk": self.disk, "capacity": self.capacity}

    def inputs_json(self) -> dict[str, Any]:
        """The summary's ``inputs.cluster`` as the cluster gave them: sizes, rates, disks, capacity, sources,
        notes, and the under-replicated partitions left where they are."""
        document = self.cluster.to_json()
        document["held_under_replicated"] = [{"topic": t, "partition": p} for t, p in self.held]
        return document


def read_plan_inputs(bootstrap: str, *, config: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT,
                     topics: Iterable[str] | None = None, sample: float | str | None = None,
                     capacity: Mapping[str, Any] | str | Path | None = None, move_under_replicated: bool = False,
                     progress: Callable[[float, float], None] | None = None) -> PlanInputs:
    """Read ``bootstrap``'s cluster once for a plan (see the module's rule): ``topics`` (default every topic but
    the internal ones), write rates when ``sample`` (seconds, or text such as ``"30s"``, at least 1 s) is given,
    the ``capacity`` document (a dict or a JSON file's path). ``config``: client properties (security settings);
    ``timeout``: every request's deadline in seconds; ``progress(elapsed, window)`` is called while a sample
    waits. Raises a one-line ``KassignError`` where the cluster cannot be read; nothing is written to it."""
    notes: list[str] = []
    wanted = None if topics is None else (list(topics) or None)
    try:
        cluster = read_cluster(bootstrap, config, timeout, wanted, sample, capacity, progress=progress)
        sized = True
    except LogDirsNotSpokenError as err:
        if sample is not None:
            raise
        cluster = read_cluster(bootstrap, config, timeout, wanted, None, capacity, log_dirs=False)
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
    document = cluster.capacity_document.to_json() if cluster.capacity_document is not None else None
    return PlanInputs(current=current, brokers=cluster.broker_list, sizes=cluster.sizes if sized else None,
                      rates=cluster.rates, disk=disk or None, capacity=document, cluster=cluster, held=held,
                      notes=notes)
