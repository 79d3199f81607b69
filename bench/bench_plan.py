"""Reassignment plan at cluster scale, beside Kafka's own --generate on the same input.

Cluster: 100 brokers in 5 racks (20 each), 100 topics x 1,000 partitions, rf 3 (100,000
partitions, 300,000 replicas), placed the way Kafka places new topics (AdminUtils, each topic
from its own random start). Then 10 brokers are added (2 per rack): plan onto all 110.

Timed: ``kassign.plan_reassignment`` end to end (the current JSON as a dict in, the proposed
JSON out), after one warm-up run that compiles the numba kernels (its time is printed too).
Beside it: what ``kafka-reassign-partitions.sh --generate`` proposes for the same topics and
brokers as Kafka 3.x and 4.0 run it (AdminUtils, ``kafka_version="4.0"``; ``kassign.assign_replicas`` is
Kafka's placement; its random start is drawn from 5 seeds here, min and mean shown). Target: under 10 s.

Then the same cluster with ``sizes`` (byte balancing): Zipf-like bytes per partition, the
partition of rank k holding about 50 GiB / k^0.8 (ranks shuffled with a fixed seed; the largest
partition is about 0.8 x the mean bytes per broker, the smallest a few MiB). Timed the same way;
printed: bytes moved against the proven lower bound (``bytes_moved_bound``), the largest broker
against the mean, and whether the result is proven optimal and by what (the whole integer
program has 11 million variables here, so the heuristic plus neighbourhood programs run).
Target: under 10 s as well.

Run: ``python bench/bench_plan.py``.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter

import numpy as np

import kassign
from kassign.replicas.plan import kafka_generate_document

# the figures in docs/plans.md are AdminUtils' (3.x, 4.0); 4.1 and later's --generate uses the striped placer
GENERATE_AS = "4.0"
from kassign.core.units import human_bytes

RACKS = [f"rack-{c}" for c in "abcde"]


def cluster() -> tuple[dict, list[tuple[int, str]]]:
    old = [(b, RACKS[b % 5]) for b in range(100)]
    partitions = []
    for t in range(100):
        placement = kassign.assign_replicas(old, 1000, 3, seed=10_000 + t)
        partitions += [{"topic": f"topic-{t:03d}", "partition": p, "replicas": r} for p, r in placement.items()]
    brokers = old + [(100 + i, RACKS[i % 5]) for i in range(10)]
    return {"version": 1, "partitions": partitions}, brokers


def zipf_sizes(current: dict, seed: int = 1) -> dict:
    """Bytes per partition: rank k (shuffled) holds about 50 GiB / k^0.8."""
    entries = current["partitions"]
    ranks = np.random.default_rng(seed).permutation(len(entries)) + 1
    sizes = (50 * 2**30 / ranks**0.8).astype(np.int64) + 1
    return {(e["topic"], e["partition"]): int(s) for e, s in zip(entries, sizes.tolist())}


def figures(doc: dict, current: dict, ids: list[int]) -> dict:
    replicas = Counter(b for e in doc["partitions"] for b in e["replicas"])
    leaders = Counter(e["replicas"][0] for e in doc["partitions"])
    moved = sum(len(set(n["replicas"]) - set(o["replicas"])) for n, o in zip(doc["partitions"], current["partitions"]))
    changed = sum(n["replicas"][0] != o["replicas"][0] for n, o in zip(doc["partitions"], current["partitions"]))
    return {"moved": moved, "leaders changed": changed,
            "replica spread": max(replicas[b] for b in ids) - min(replicas[b] for b in ids),
            "leader spread": max(leaders[b] for b in ids) - min(leaders[b] for b in ids)}


def main() -> None:
    current, brokers = cluster()
    ids = [b for b, _ in brokers]
    start = time.perf_counter()
    kassign.plan_reassignment(current, brokers)
    first = time.perf_counter() - start
    times = []
    for _ in range(3):
        start = time.perf_counter()
        plan = kassign.plan_reassignment(current, brokers)
        times.append(time.perf_counter() - start)
    ours = figures(plan, current, ids)
    kafka_runs = []
    kafka_times = []
    for seed in range(5):
        start = time.perf_counter()
        generated = kafka_generate_document(current, brokers, seed=seed, kafka_version=GENERATE_AS)
        kafka_times.append(time.perf_counter() - start)
        kafka_runs.append(figures(generated, current, ids))
    must = 10 * (300_000 // 110)  # each new broker must reach the floor of the mean
    print("100,000 partitions, rf 3, 100 brokers in 5 racks + 10 added (2 per rack)")
    print(f"kassign plan_reassignment: best {min(times):.2f} s, median {statistics.median(times):.2f} s "
          f"(first run in the process, which loads the numba kernels or, with a cold cache, compiles them: "
          f"{first:.2f} s); target < 10 s")
    print(f"Kafka --generate (kassign.assign_replicas per topic, 5 random starts): {min(kafka_times):.2f} s each")
    print(f"{'':<22} {'kassign':>12} {'Kafka min':>12} {'Kafka mean':>12}")
    for key in ("moved", "leaders changed", "replica spread", "leader spread"):
        values = [run[key] for run in kafka_runs]
        label = "replicas moved" if key == "moved" else key
        print(f"{label:<22} {ours[key]:>12,} {min(values):>12,} {statistics.mean(values):>12,.0f}")
    print(f"least possible replicas moved: {must:,} (10 new brokers x {300_000 // 110:,}, the floor of the mean)")
    print(f"kassign moves {ours['moved'] / min(r['moved'] for r in kafka_runs):.1%} of what Kafka's --generate moves "
          f"at best")
    bytes_case(current, brokers, ids)


def bytes_case(current: dict, brokers: list, ids: list[int]) -> None:
    sizes = zipf_sizes(current)
    start = time.perf_counter()
    kassign.plan_reassignment(current, brokers, sizes=sizes)
    first = time.perf_counter() - start
    times = []
    for _ in range(3):
        start = time.perf_counter()
        plan = kassign.plan_reassignment(current, brokers, sizes=sizes)
        times.append(time.perf_counter() - start)
    s = plan.summary
    generated = kafka_generate_document(current, brokers, seed=0, kafka_version=GENERATE_AS)
    kafka_bytes = sum(sizes[(n["topic"], n["partition"])] * len(set(n["replicas"]) - set(o["replicas"]))
                      for n, o in zip(generated["partitions"], current["partitions"]))
    per_broker = Counter()
    for e in generated["partitions"]:
        for b in e["replicas"]:
            per_broker[b] += sizes[(e["topic"], e["partition"])]
    kafka_top = max(per_broker[b] for b in ids) / (sum(per_broker.values()) / len(ids))
    print()
    print("the same cluster with sizes (Zipf-like bytes, largest partition ~0.8 x the mean per broker)")
    print(f"kassign plan_reassignment(sizes=...): best {min(times):.2f} s, median {statistics.median(times):.2f} s "
          f"(first run {first:.2f} s); target < 10 s")
    gap = s["bytes_moved"] / s["bytes_moved_bound"] - 1 if s["bytes_moved_bound"] else 0.0
    print(f"bytes moved          {human_bytes(s['bytes_moved']):>12}  (proven lower bound "
          f"{human_bytes(s['bytes_moved_bound'])}: at most {gap:.4%} above the optimum)")
    print(f"largest broker/mean  {s['bytes_max_over_mean_after']:>12}  (before {s['bytes_max_over_mean_before']}; "
          f"within {s['tolerance']:.0%}: {s['bytes_within_tolerance']})")
    print(f"replicas moved       {s['replicas_moved']:>12,}  leaders changed {s['leaders_changed']:,}")
    print(f"solved by {s['bytes_solver']}, proven optimal: {s['bytes_optimal']}")
    print(f"Kafka --generate (seed 0) moves {human_bytes(kafka_bytes)}, largest broker/mean "
          f"{kafka_top:.4f}")


if __name__ == "__main__":
    main()
