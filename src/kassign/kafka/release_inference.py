"""Which Kafka release a broker runs, from what it says in ApiVersions, where the answer is unambiguous.

The rule: a broker's ApiVersions answer (v3 and later) lists its *supported* features; the highest
``metadata.version`` level its software can run names its release line, because every release line adds
its own metadata versions (feature levels, Kafka's MetadataVersion):

| levels | release line |
| --- | --- |
| 22 to 25 (4.0-IV0 to 4.0-IV3) | 4.0 |
| 26, 27 (4.1-IV0, 4.1-IV1) | 4.1 |
| 28, 29 (4.2-IV0, 4.2-IV1) | 4.2 |
| 30 (4.3-IV0) | 4.3 |

A higher level is a release newer than kassign models, or a 4.3 broker with unstable feature versions
enabled: ambiguous. The *finalized* level (what the cluster was upgraded to) is not used: a cluster
upgraded to 4.3 software may still run an older metadata version, while its group coordinator already
runs 4.3's assignors. No patch release is told apart; where that matters (the consumer protocol's
``uniform`` changed in 4.0.1), the line's latest rule is used and the reason says so.

Example: a Kafka 4.3.1 broker supports metadata.version 7 to 30, so ``infer_release`` gives
``("4.3", "the broker supports metadata.version up to level 30 (4.3-IV0): Kafka 4.3")``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# highest supported metadata.version level -> release line (facts of Kafka's MetadataVersion)
_LINES = ((22, 25, "4.0", "4.0-IV"), (26, 27, "4.1", "4.1-IV"), (28, 29, "4.2", "4.2-IV"), (30, 30, "4.3", "4.3-IV"))
# ConsumerGroupHeartbeat: every Kafka 4 broker speaks it, none of 3.6 and earlier does in production
_CONSUMER_GROUP_HEARTBEAT = 68


def infer_release(hints: Mapping[str, Any]) -> tuple[str | None, str]:
    """``(release line or None, why)`` from :func:`kassign.kafka.groups.release_hints`'s answer; None where the
    broker's answer does not name one release kassign models."""
    supported = (hints.get("supported_features") or {}).get("metadata.version")
    if not supported:
        if _CONSUMER_GROUP_HEARTBEAT not in {int(k) for k in (hints.get("api_versions") or {})}:
            return None, "the broker names no metadata.version and does not speak the consumer group protocol " \
                         "(not a Kafka 4 broker, or one that hides its features)"
        return None, "the broker names no metadata.version in ApiVersions, so its release cannot be told"
    top = int(supported[1])
    for low, high, line, stem in _LINES:
        if low <= top <= high:
            level_name = f"{stem}{top - low}"
            patch = " (patch release not told apart: 4.0.0's uniform differs from 4.0.1's; the 4.0 line's " \
                    "latest rule is used)" if line == "4.0" else ""
            return line, f"the broker supports metadata.version up to level {top} ({level_name}): Kafka {line}{patch}"
    if top < _LINES[0][0]:
        return None, f"the broker supports metadata.version up to level {top}, a release before Kafka 4.0"
    return None, (f"the broker supports metadata.version up to level {top}: a release newer than 4.3, or 4.3 with "
                  "unstable feature versions enabled")
