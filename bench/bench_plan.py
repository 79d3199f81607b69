"""Reassignment plan at cluster scale, beside Kafka's own --generate on the same input.

Cluster: 100 brokers in 5 racks (20 each), 100 topics x 1,000 partitions, rf 3 (100,000
partitions, 300,000 replicas), placed the way Kafka places new topics (AdminUtils, each topic
from its own random start). Then 10 brokers are added (2 per rack): plan onto all 110.

Timed: ``kassign.plan_reassignment`` end to end (the current JSON as a dict in, the proposed
JSON out), after one warm-up run that compiles the numba kernels (its time is printed too).
Beside it: what ``kafka-reassign-partitions.sh --generate`` proposes for the same topics and
brokers (``kassign.assign_replicas`` is Kafka's placement; its random start is drawn from 5
seeds here, min and mean shown). Target: under 10 s.

Run: ``python bench/bench_plan.py``.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter

import kassign
from kassign.plan import kafka_generate_document

RACKS = [f"rack-{c}" for c in "abcde"]


def cluster() -> tuple[dict, list[tuple[int, str]]]:
    old = [(b, RACKS[b % 5]) for b in range(100)]
    partitions = []
    for t in range(100):
        placement = kassign.assign_replicas(old, 1000, 3, seed=10_000 + t)
        partitions += [{"topic": f"topic-{t:03d}", "partition": p, "replicas": r} for p, r in placement.items()]
    brokers = old + [(100 + i, RACKS[i % 5]) for i in range(10)]
    return {"version": 1, "partitions": partitions}, brokers


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
        generated = kafka_generate_document(current, brokers, seed=seed)
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


if __name__ == "__main__":
    main()
