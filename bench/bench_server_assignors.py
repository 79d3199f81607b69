"""Kafka 4's server-side assignors at group-coordinator scale, beside Kafka's own.

Two cases from the Kafka 4 issue, each timed through ``kassign.assign(..., protocol="consumer")``
(the dict API: scenario in, sorted member -> [(topic, partition)] out) and, with
``--kafka-classpath``, beside Kafka's own ``UniformAssignor`` run in a JVM on the same scenario
(``bench/kafka_java.py``), one kassign run then one Kafka run so both see the same load:

* join: 10,000 members settled on 100 topics x 100 partitions (one partition each), a
  10,001st member joins (homogeneous uniform path). Issue #22's goal: at most 1x Kafka.
* fresh: 1,000 members, each subscribed to 10-50 of 100 topics x 100 partitions, no
  current target (heterogeneous uniform path).

Kafka's time is its assignor's ``assign(GroupSpec, SubscribedTopicDescriber)`` on a group spec
built beforehand (a coordinator keeps its group in memory); kassign's includes building the result
dict and, on the first row of each case, reading the scenario dict as well. The second row
(``parsed``) hands ``kassign.assign`` a scenario parsed beforehand (``kassign.groups.scenario.parse_scenario``),
the like-for-like comparison with Kafka's group spec built beforehand. Without a classpath the Kafka column says so and
the documented reference figures are printed as a labelled note. Server-side range has no
Kafka counterpart here.

Run: ``python bench/bench_server_assignors.py [--kafka-classpath 'kafka_2.13-3.9.0/libs/*'] [--runs 25]``
(prints best and median).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kafka_java import (
    NEEDS_CLASSPATH,
    KafkaHarness,
    alternate,
    assignment_digest,
    ratio,
)

import kassign
from kassign.groups.scenario import Scenario, parse_scenario

# Kafka's coordinator on this 2-core machine class (warm JVM; not this run): shown only without a classpath.
KAFKA_REFERENCE_MS = {"join": "about 5-10 ms", "fresh": "about 10 ms"}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka-classpath", help="Kafka's classes and their dependencies, as java -cp takes them "
                                                  "(e.g. 'kafka_2.13-3.9.0/libs/*'), to time Kafka in this run")
    parser.add_argument("--runs", type=int, default=25, help="alternating runs of each side per case")
    args = parser.parse_args()
    cases = {"join": join_case(), "fresh": fresh_case()}
    print(f"load average (1 min) {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"best / median of {args.runs} alternating runs, ms")
    print(f"{'case':<7} {'strategy':<9} {'input':<7}{'kassign':>15}   {'Kafka (Java)':<22} kassign vs Kafka (best / median)")
    for case, scenario in cases.items():
        for strategy in ("uniform", "range"):
            kafka = KafkaHarness(args.kafka_classpath, "uniform", scenario, heap="1g") \
                if args.kafka_classpath and strategy == "uniform" else None
            try:
                def ours(strategy: str = strategy, scenario: dict = scenario) -> object:
                    return kassign.assign(strategy, scenario, protocol="consumer")

                def ours_parsed(strategy: str = strategy, parsed: Scenario = parse_scenario(scenario)) -> object:
                    return kassign.assign(strategy, parsed, protocol="consumer")

                times = alternate({"kassign": ours, "parsed": ours_parsed}, kafka, args.runs, warmups=5)
                agrees = kafka is not None and kafka.digest() == assignment_digest(
                    kassign.assign(strategy, scenario, protocol="consumer"))
            finally:
                if kafka is not None:
                    kafka.close()
            for label, name in (("", "kassign"), ("parsed", "parsed")):
                ours = times[name]
                ours_text = f"{min(ours) * 1e3:.1f} / {statistics.median(ours) * 1e3:.1f}"
                if "Kafka" in times:
                    theirs = times["Kafka"]
                    kafka_text = f"{min(theirs) * 1e3:.1f} / {statistics.median(theirs) * 1e3:.1f}"
                    versus = ratio(ours, theirs) + ("" if agrees else "  (DIFFERENT ASSIGNMENT)")
                elif strategy == "uniform":
                    kafka_text, versus = NEEDS_CLASSPATH, f"(note: reference, not this run: {KAFKA_REFERENCE_MS[case]})"
                else:
                    kafka_text, versus = "(no Kafka counterpart)", ""
                print(f"{case:<7} {strategy:<9} {label:<7}{ours_text:>15}   {kafka_text:<22} {versus}")


if __name__ == "__main__":
    main()
