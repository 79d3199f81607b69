"""Read a live Kafka cluster's metadata: partition counts, replica lists with leaders and broker racks,
and the current assignment in kafka-reassign-partitions.sh's JSON shape. Every call ends within
``timeout`` seconds with the data or one :class:`LiveClusterError`.

Example::

    from kassign.kafka import metadata as live
    live.partition_counts("broker:9092", ["orders"])            # {"orders": 12}
    layout = live.read_layout("broker:9092", ["orders"])
    layout.brokers                                              # {1: "rack-a", 2: "rack-b", 3: None}
    live.current_assignment("broker:9092", ["orders"])          # {"version": 1, "partitions": [...]}

One Metadata request (kassign's own client, ``kassign.kafka``) answers all of it, racks included
(Metadata v1 and later carry each broker's rack). All topics are asked for, so no broker creates a
topic because it was named. ``config`` takes client properties (``--command-config FILE``, read with
:func:`read_command_config`), as the Kafka tools take them: ``kassign.kafka.config``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kassign.core.errors import LiveClusterError
from kassign.kafka.client import Cluster
from kassign.kafka.config import ClientSettings, read_command_config

__all__ = ["ClusterLayout", "LiveClusterError", "PartitionLayout", "brokers", "current_assignment",
           "partition_counts", "rack_problems", "read_command_config", "read_layout"]

DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class PartitionLayout:
    partition: int
    leader: int | None  # None: no leader right now
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass
class ClusterLayout:
    """Brokers (id -> rack or None) and, per topic, its partitions in order."""

    brokers: dict[int, str | None] = field(default_factory=dict)
    topics: dict[str, list[PartitionLayout]] = field(default_factory=dict)


def _settings(config: Mapping[str, str] | None, timeout: float) -> ClientSettings:
    """The client properties with ``timeout`` as every request's deadline."""
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= 3600:
        raise LiveClusterError(f"timeout must be between 0 and 3600 seconds, got {timeout!r}")
    return ClientSettings.from_properties({**(config or {}), "request.timeout.ms": str(max(100, int(timeout * 1000)))})


# ---------------------------------------------------------------- reading


def read_layout(bootstrap: str, topics: Iterable[str] | None = None, *, config: Mapping[str, str] | None = None,
                timeout: float = DEFAULT_TIMEOUT) -> ClusterLayout:
    """Brokers with racks and, for ``topics`` (all non-internal topics when None), every partition's
    leader, replicas and in-sync replicas. Unknown topics raise :class:`LiveClusterError`."""
    with Cluster(bootstrap, _settings(config, timeout)) as cluster:
        metadata = cluster.metadata()
        if topics is None:
            wanted = sorted(name for name, t in metadata.topics.items() if not t.internal and not name.startswith("__"))
        else:
            wanted = list(dict.fromkeys(topics))
        found = cluster.topics(wanted) if wanted else {}
    layout = ClusterLayout(brokers={node: b.rack or None for node, b in sorted(metadata.brokers.items())})
    for name, topic in found.items():
        layout.topics[name] = [
            PartitionLayout(p, part.leader if part.leader >= 0 else None, part.replicas, part.isr)
            for p, part in sorted(topic.partitions.items())
        ]
    return layout


def partition_counts(bootstrap: str, topics: Iterable[str], *, config: Mapping[str, str] | None = None,
                     timeout: float = DEFAULT_TIMEOUT) -> dict[str, int]:
    """Topic -> partition count, from the cluster's metadata (for ``kassign partition --bootstrap-server``)."""
    layout = read_layout(bootstrap, topics, config=config, timeout=timeout)
    return {t: len(parts) for t, parts in layout.topics.items()}


def current_assignment(bootstrap: str, topics: Iterable[str] | None = None, *,
                       config: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """The current replica assignment in kafka-reassign-partitions.sh's JSON shape (for ``kassign plan``)."""
    layout = read_layout(bootstrap, topics, config=config, timeout=timeout)
    return {"version": 1, "partitions": [
        {"topic": t, "partition": p.partition, "replicas": list(p.replicas)}
        for t, parts in layout.topics.items() for p in parts
    ]}


def brokers(bootstrap: str, *, config: Mapping[str, str] | None = None,
            timeout: float = DEFAULT_TIMEOUT) -> list[tuple[int, str | None]]:
    """``[(broker id, rack or None), ...]``, the shape ``plan_reassignment`` and ``assign_replicas`` take."""
    return sorted(read_layout(bootstrap, [], config=config, timeout=timeout).brokers.items())


def rack_problems(layout: ClusterLayout) -> list[str]:
    """Partitions whose replicas could spread over more racks than they do (only when every broker has a rack)."""
    racks = layout.brokers
    if not racks or any(r is None for r in racks.values()):
        return []
    available = len(set(racks.values()))
    problems = []
    for topic, parts in layout.topics.items():
        for p in parts:
            used = {racks.get(b) for b in p.replicas}
            best = min(available, len(p.replicas))
            if len(used) < best:
                problems.append(f"{topic}-{p.partition}: replicas {list(p.replicas)} on {len(used)} rack(s), "
                                f"{best} possible")
    return problems
