"""A live group, read whole: its description (any type), its topics' partition counts and offsets, the Kafka
release its broker runs, and kassign's check of its assignment, in one pass over one set of connections.

The rule for each part:

- **the group**: :func:`kassign.kafka.groups.describe_group` (ListGroups for the type, then the type's describe API);
- **topics**: every topic a member subscribes to or holds (streams: the topology's source topics), with its
  partition count from Metadata; where that names none (an empty group, or a broker that keeps no member
  subscriptions), the topics where the group has committed offsets (OffsetFetch of every partition), said in
  the group's notes;
- **offsets**: classic, consumer and streams groups commit offsets (OffsetFetch); a share group has a
  share-partition *start offset* instead (DescribeShareGroupOffsets: records before it are done), which stands
  where a committed offset would. End offsets are each partition's high watermark (or last stable offset under
  ``isolation.level=read_committed``) from Fetch, as the live reader takes them. Lag: end minus committed (or
  start offset), counted from the partition's first offset where the group has none;
- **the release**: ``kafka_version`` as given; otherwise inferred from the broker's ApiVersions
  (:mod:`kassign.kafka.release_inference`), or the default with the reason it could not be told;
- **the check**: :func:`kassign.kafka.group_check.check_group` with that release.

Example: a stable uniform consumer group of three members on ``orders`` (7 partitions) on a Kafka 4.3.1 broker
reads as ``{"group": {"type": "consumer", "state": "Stable", ...}, "kafka_version": "4.3", "kafka_version_from":
"inferred", "group_check": {"equal": true, ...}, "lag": {"orders": {...}}}``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from kassign.core.errors import LiveClusterError
from kassign.core.releases import DEFAULT_KAFKA_VERSION, parse_release
from kassign.kafka.client import Cluster, committed_offsets, plan_read
from kassign.kafka.config import ClientSettings
from kassign.kafka.group_check import check_group
from kassign.kafka.groups import (GroupDescription, committed_topics, describe_group, release_hints,
                                  share_start_offsets)
from kassign.kafka.release_inference import infer_release

def choose_release(cluster: Cluster, kafka_version: str | None) -> tuple[str, str, str]:
    """``(release, "given" | "inferred" | "default", why)`` for answers about this cluster."""
    if kafka_version is not None:
        return parse_release(kafka_version).label, "given", "as given (--kafka-version)"
    try:
        line, why = infer_release(release_hints(cluster))
    except LiveClusterError as err:
        line, why = None, f"the broker's ApiVersions could not be read ({err})"
    if line is None:
        return DEFAULT_KAFKA_VERSION, "default", f"{why}; answering as Kafka {DEFAULT_KAFKA_VERSION}, the default"
    return line, "inferred", why


def group_topics(group: GroupDescription) -> list[str]:
    """The topics whose partitions the group consumes, in name order."""
    if group.type == "streams":
        subs = (group.topology or {}).get("subtopologies", {})
        return sorted({t for sub in subs.values() for t in sub.get("source_topics", [])}
                      | {t for m in group.members.values() for t in m.topics})
    named = {t for m in group.members.values() for t in m.topics}
    for member in group.members.values():
        for held in (member.assignment, member.target):
            if isinstance(held, list):
                named.update(t for t, _ in held)
    return sorted(named)


def group_partitions(cluster: Cluster, group: GroupDescription) -> tuple[dict[str, int], list[str]]:
    """The partition count of every topic the group consumes, and a warning per topic without metadata."""
    topics = group_topics(group)
    if not topics and group.type in ("classic", "consumer"):
        topics = committed_topics(cluster, group.id)
        if topics:
            why = "the coordinator named none for its members" if group.members else "it has no members"
            group.notes.append(f"its topics are those where it has committed offsets ({why})")
    metadata = cluster.metadata() if topics else None
    counts = {t: len(metadata.topics[t].partitions) for t in topics
              if metadata is not None and t in metadata.topics and not metadata.topics[t].error}
    return counts, [f"{group.id}: topic {t} has no metadata (deleted, or not visible to this client)"
                    for t in topics if t not in counts]


def group_positions(cluster: Cluster, group: GroupDescription, counts: Mapping[str, int],
                    deadline: float | None = None) -> dict[str, list[int | None]]:
    """Per topic and partition, where the group stands: its committed offset, or for a share group its
    share-partition start offset; None where it has none."""
    if not counts:
        return {}
    if group.type == "share":
        starts = share_start_offsets(cluster, group.id, counts, deadline=deadline)
        return {t: [None if starts.get(t, {}).get(p, -1) < 0 else starts[t][p] for p in range(n)]
                for t, n in counts.items()}
    return committed_offsets(cluster, group.id, counts)


def initialized_partitions(group: GroupDescription,
                           positions: Mapping[str, list[int | None]]) -> dict[str, list[int]] | None:
    """A share group's partitions with share state (a start offset), the ones its assignor may hand out."""
    if group.type != "share":
        return None
    return {t: [p for p, at in enumerate(marks) if at is not None] for t, marks in positions.items()}


def read_group(cluster: Cluster, group_id: str, kafka_version: str | None = None,
               deadline: float | None = None) -> dict[str, Any]:
    """Everything about ``group_id`` (see the module docstring), as plain data for ``--json`` and summary.json
    (every field: [JSON output](outputs.md#kassign-describe-group))."""
    described = describe_group(cluster, group_id, deadline=deadline)
    release, source, why = choose_release(cluster, kafka_version)
    counts, warnings = group_partitions(cluster, described)
    positions = group_positions(cluster, described, counts, deadline)
    check = check_group(described, counts, release, initialized_partitions(described, positions))
    return {"group": described.to_json(), "group_check": check, "kafka_version": release,
            "kafka_version_from": source, "kafka_version_why": why, "partitions": counts,
            "lag": lag_table(cluster, counts, positions, described.type) if counts else {},
            "warnings": warnings + [f"{described.id}: {note}" for note in described.notes]}


def lag_table(cluster: Cluster, counts: Mapping[str, int], positions: Mapping[str, list[int | None]],
              group_type: str) -> dict[str, Any]:
    """The ``lag`` object per topic: ``committed`` (a share group: its start offsets), ``end_offsets``, ``lag``."""
    plan = plan_read(cluster, sorted(counts))
    out: dict[str, Any] = {}
    for name, topic in plan.topics.items():
        marks = list(positions.get(name, [None] * topic.count))
        ends = [p.end for p in topic.partitions]
        lags = [max(0, p.end - (c if c is not None else p.log_start)) for p, c in zip(topic.partitions, marks)]
        entry: dict[str, Any] = {"committed": marks, "end_offsets": ends, "lag": lags}
        if group_type == "share":
            entry["position"] = "share-partition start offset"
        out[name] = entry
    return out


def open_cluster(bootstrap: str, config: Mapping[str, str] | None, timeout: float) -> Cluster:
    """A cluster connection whose every request ends within ``timeout`` seconds."""
    if not 0 < timeout <= 3600:
        raise LiveClusterError(f"--timeout must be between 0 and 3600 seconds, got {timeout:g}")
    settings = ClientSettings.from_properties({**(config or {}),
                                               "request.timeout.ms": str(max(100, int(timeout * 1000)))})
    return Cluster(bootstrap, settings)


def deadline_after(seconds: float) -> float:
    return time.monotonic() + seconds
