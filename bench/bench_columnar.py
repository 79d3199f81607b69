"""Columnar results: ``kassign.assign_table`` beside ``kassign.assign`` and Kafka's Java time.

Two cases from the speed issue, each timed end to end from the scenario dict (best and median
of 5 runs for sticky, 25 for the millisecond-scale uniform case, after a warm-up that compiles
the numba kernels; the machine's load average is printed first, as figures taken beside other
work are noisy):

* sticky, 1,000,000 partitions (500 topics x 2,000), 2,000 members, same subscriptions,
  fresh. Kafka's StickyAssignor: about 0.09 s (warm JVM, this machine class).
  Goals: ``assign`` <= 3x Java, ``assign_table`` <= 2x Java.
* KIP-848 uniform, 10,000 members settled on 100 x 100 partitions, a 10,001st joins.
  Kafka's group coordinator: about 5-10 ms. Goal: ``assign_table`` <= 2x Java.

Run: ``python bench/bench_columnar.py``
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kassign  # noqa: E402
from bench_server_assignors import join_case  # noqa: E402

from kassign.groups.scenario import parse_scenario  # noqa: E402

# Reference figures measured earlier on this machine class, not in this run: bench_sticky.py and
# bench_server_assignors.py time Kafka's own classes beside kassign with --kafka-classpath.
JAVA_SECONDS = {"sticky 1M": (0.08, 0.09), "uniform join": (0.006, 0.010)}
RUNS = {"sticky 1M": 5, "uniform join": 25}


def sticky_case() -> dict:
    topics = {f"topic-{i:04d}": 2000 for i in range(500)}
    names = list(topics)
    return {"topics": topics, "members": {f"consumer-{i:05d}": {"topics": names} for i in range(2000)}}


def timed(fn, runs: int = 5) -> list[float]:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    cases = {
        "sticky 1M": ("sticky", sticky_case(), "classic"),
        "uniform join": ("uniform", join_case(), "consumer"),
    }
    print(f"load average (1 min) {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'case':<14} {'API':<13} {'best s':>8} {'median s':>9}   {'Kafka (ref.)':<14} ratio (best / Java upper)")
    for case, (strategy, scenario, protocol) in cases.items():
        low, high = JAVA_SECONDS[case]
        java = f"{low:.3f} s" if low == high else f"{low:.3f}-{high:.3f} s"
        parsed = parse_scenario(scenario)
        for api, doc in (("assign", scenario), ("assign_table", scenario), ("assign_table*", parsed)):
            run = getattr(kassign, api.rstrip("*"))
            times = timed(lambda: run(strategy, doc, protocol=protocol), RUNS[case])
            print(f"{case:<14} {api:<13} {min(times):8.3f} {statistics.median(times):9.3f}   {java:<14} "
                  f"{min(times) / high:.1f}x")
    print("* from a parsed kassign.groups.scenario.Scenario, as a coordinator holds its group: Kafka's figures do not "
          "include reading the group either")
    print("Kafka (ref.): a reference figure, not this run; bench_sticky.py and bench_server_assignors.py with "
          "--kafka-classpath time Kafka's own classes in the same run")


if __name__ == "__main__":
    main()
