"""Stage ``keyless_racks``: what rack-aware producers (Kafka 4.4, KIP-1123) do to the load of each rack's partitions.

Reads: ``digest`` (keyless records and bytes per partition, from the one pass), ``counts``, and the options:
``--client-rack``, ``--partitioner-rack-aware``, the leaders' racks the key-figures stage used
(``opts.leader_racks``).

Writes: no table.

Decides: ``keyless_racks`` in summary.json, with --partitioner-rack-aware only: per topic, the partitions each
rack leads, the keyless records and bytes on them, and the hottest partition's keyless bytes against the mean
over the partitions that got keyless records; the verdict's ``keyless_racks`` sentence per topic. A rack-aware
producer draws only among the partitions led in its rack, so a rack leading fewer partitions concentrates its
producers' keyless bytes on fewer, hotter partitions.

For example, 6 partitions led in racks ``a, b, c, a, b, c`` and 600 KB of keyless records from producers in rack
``b`` put about 300 KB on partitions 1 and 4 each and nothing on the other four: the hottest carries 3x the mean
of the six partitions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kassign.spark.stages.base import PipelineContext, Stage, StageResult


def run(ctx: PipelineContext) -> StageResult:
    opts = ctx.opts
    if opts.live or not opts.partitioner_rack_aware or opts.null_key_model != "sticky":
        return StageResult()
    per_partition = {key: (f.records - f.keyed_records, f.keyless_bytes) for key, f in ctx.digest.partitions.items()}
    found = keyless_racks(ctx.counts, opts.leader_racks or {}, per_partition, list(opts.client_racks))
    return StageResult(summary={"keyless_racks": found})


STAGE = Stage("keyless_racks", run, reads=("digest", "counts"))


def keyless_racks(counts: Mapping[str, int], leaders: Mapping[str, Sequence[str | None]],
                  keyless: Mapping[tuple[str, int], tuple[int, int]], client_racks: Sequence[str]) -> dict[str, Any]:
    """Per topic: each rack's partitions (by leader), keyless records and bytes there, and the hottest partition."""
    result = {}
    for topic, n in sorted(counts.items()):
        racks = list(leaders.get(topic) or [None] * n)
        per_rack: dict[str, dict[str, Any]] = {}
        for p in range(n):
            name = racks[p] if p < len(racks) and racks[p] else "(none)"
            entry = per_rack.setdefault(name, {"partitions": [], "keyless_records": 0, "keyless_bytes": 0,
                                               "producers": name in client_racks})
            records, size = keyless.get((topic, p), (0, 0))
            entry["partitions"].append(p)
            entry["keyless_records"] += records
            entry["keyless_bytes"] += size
        values = [keyless.get((topic, p), (0, 0))[1] for p in range(n)]
        total = sum(values)
        if not total:
            continue
        hottest = max(range(n), key=lambda p: (values[p], -p))
        mean = total / n
        result[topic] = {"racks": per_rack, "keyless_bytes": total,
                         "partitions_with_keyless": sum(1 for v in values if v),
                         "hottest_partition": {"partition": hottest, "rack": racks[hottest] if hottest < len(racks) else None,
                                               "keyless_bytes": values[hottest],
                                               "over_mean": round(values[hottest] / mean, 4)}}
    return result


def sentence(topic: str, entry: Mapping[str, Any], client_racks: Sequence[str]) -> str:
    """The verdict's line for one topic."""
    racks = entry["racks"]
    parts = []
    for rack in dict.fromkeys(client_racks):
        led = racks.get(rack, {}).get("partitions", [])
        parts.append(f"producers in {rack} land only on the {len(led)} partition{'s' if len(led) != 1 else ''} "
                     f"led there" if led else f"producers in {rack} (no leader there) land anywhere")
    hot = entry["hottest_partition"]
    return (f"{topic}: rack-aware producers (Kafka 4.4, KIP-1123): {'; '.join(parts)}; keyless records sit on "
            f"{entry['partitions_with_keyless']} of {sum(len(r['partitions']) for r in racks.values())} partitions, "
            f"the hottest (partition {hot['partition']}, led in {hot['rack'] or 'no rack'}) carrying "
            f"{hot['over_mean']:.2f}× the mean keyless bytes.")
