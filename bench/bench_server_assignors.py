"""Kafka 4's server-side assignors at group-coordinator scale.

Two cases from the Kafka 4 issue, each timed through ``kassign.assign(..., protocol="consumer")``
(the dict API: scenario in, sorted member -> [(topic, partition)] out) and printed beside the
figure Kafka's own coordinator needs on this 2-core machine class (measured with Kafka's Java
classes, warm JVM, best of 3):

* join: 10,000 members settled on 100 topics x 100 partitions (one partition each), a
  10,001st member joins (homogeneous uniform path). Kafka: about 5-10 ms.
* fresh: 1,000 members, each subscribed to 10-50 of 100 topics x 100 partitions, no
  current target (heterogeneous uniform path). Kafka: about 10 ms.

Run: ``python bench/bench_server_assignors.py`` (prints best and median of several runs).
"""

from __future__ import annotations

import random
import statistics
import time

import kassign

KAFKA_MS = {"join": (5.0, 10.0), "fresh": (10.0, 10.0)}


def join_case() -> dict:
    topics = {f"topic-{t:03d}": 100 for t in range(100)}
    names = list(topics)
    members: dict[str, dict] = {}
    for i in range(10_000):
        t, p = divmod(i, 100)
        members[f"consumer-{i:05d}"] = {"topics": names, "owned": [[names[t], p]]}
    first = kassign.assign("uniform", {"topics": topics, "members": members}, protocol="consumer")
    members = {m: {"topics": names, "owned": [list(tp) for tp in first[m]]} for m in members}
    members["consumer-new"] = {"topics": names}
    return {"topics": topics, "members": members}


def fresh_case(seed: int = 7) -> dict:
    rng = random.Random(seed)
    names = [f"topic-{t:03d}" for t in range(100)]
    members = {f"consumer-{i:04d}": {"topics": rng.sample(names, rng.randint(10, 50))} for i in range(1_000)}
    return {"topics": {n: 100 for n in names}, "members": members}


def time_ms(strategy: str, scenario: dict, runs: int) -> list[float]:
    kassign.assign(strategy, scenario, protocol="consumer")  # warm-up (numba compile, caches)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        kassign.assign(strategy, scenario, protocol="consumer")
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    cases = {"join": join_case(), "fresh": fresh_case()}
    print(f"{'case':<8} {'strategy':<9} {'best ms':>9} {'median ms':>10}   Kafka's coordinator   ratio (best / Kafka's upper)")
    for case, scenario in cases.items():
        for strategy in ("uniform", "range"):
            times = time_ms(strategy, scenario, runs=7)
            low, high = KAFKA_MS[case]
            kafka = f"{low:.0f}-{high:.0f} ms" if low != high else f"{low:.0f} ms"
            ratio = f"{min(times) / high:.1f}x" if strategy == "uniform" else "(no Kafka figure)"
            print(f"{case:<8} {strategy:<9} {min(times):9.1f} {statistics.median(times):10.1f}   {kafka:<20}  {ratio}")


if __name__ == "__main__":
    main()
