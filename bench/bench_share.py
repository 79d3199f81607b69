"""Share groups (KIP-932): kassign's ``simple`` assignor at group-coordinator scale, beside Kafka's own.

Four cases, 1,000 members on 100 topics x 100 partitions (10,000 partitions) by default:

* ``homogeneous fresh``: every member subscribes to every topic, nobody holds anything;
* ``homogeneous leave``: the fresh answer as every member's current target, then one member gone;
* ``heterogeneous fresh``: each member subscribes to 10-50 of the topics (seeded), nobody holds anything;
* ``heterogeneous leave``: as for the homogeneous case.

Each timed kassign call is ``assign_share("simple", doc)`` on a document freshly decoded from JSON
text serialised beforehand (the decoding is not timed): it reads and checks the scenario, builds the
group, assigns and builds the result dict. The ``parsed`` row hands it a scenario checked beforehand
(``parse_share_scenario``), the like-for-like comparison with Kafka, whose group spec is built before
its runs; the breakdown row splits one call into reading the scenario, assigning (group built
included) and building the dict, in runs of its own after the timed ones. kassign, kassign on a parsed
scenario and Kafka run one after another (``kafka_java.alternate``, as the other Kafka benches do), so
both sides see the same load.

With ``--kafka-classpath`` (Kafka 4.2 or later: kafka-clients, kafka-group-coordinator,
kafka-group-coordinator-api, kafka-server-common and their dependencies, e.g. ``'kafka_2.13-4.3.1/libs/*'``)
Kafka's ``SimpleAssignor`` runs in a JVM beside (``bench/java/KafkaShareAssignorBench.java`` through
``bench/kafka_java.py``), on the same scenario, one kassign run then one Kafka run so both see the same
load, and the two answers are compared. Without it the Kafka column says so.

Run: ``python bench/bench_share.py [--kafka-classpath 'kafka_2.13-4.3.1/libs/*'] [--runs 15]
[--members 1000] [--topics 100] [--partitions 100]`` (prints best and median, ms).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kafka_java import NEEDS_CLASSPATH, FromJson, KafkaHarness, alternate, assignment_digest, ratio

from kassign.groups.share import assign_share
from kassign.groups.share.api import _flat
from kassign.groups.share.scenario import parse_share_scenario
from kassign.groups.share.simple import simple_assign

SHARE_HARNESS = Path(__file__).resolve().parent / "java" / "KafkaShareAssignorBench.java"


def fresh(members: int, topics: int, partitions: int, homogeneous: bool, seed: int = 7) -> dict:
    names = [f"topic-{t:03d}" for t in range(topics)]
    rng = random.Random(seed)
    low, high = max(1, topics // 10), max(1, topics // 2)
    return {
        "topics": {name: partitions for name in names},
        "members": {f"member-{i:04d}": {"topics": names if homogeneous else rng.sample(names, rng.randint(low, high))}
                    for i in range(members)},
    }


def one_leaves(doc: dict) -> dict:
    """The group after its fresh answer: every member holds its target, then the first member leaves."""
    answer = assign_share("simple", doc)
    members = {m: {**spec, "owned": [list(pair) for pair in answer[m]]} for m, spec in doc["members"].items()}
    del members[next(iter(members))]
    return {**doc, "members": members}


def run_case(text: str, kafka: KafkaHarness | None, runs: int, warmups: int = 3) -> dict[str, list[float]]:
    """Seconds per run: the dict API on freshly decoded JSON and on a parsed scenario, one of each and one
    Kafka run in turn (:func:`kafka_java.alternate`); then, in runs of their own, the three stages of one
    call. Timed apart, so the stage runs' extra decodings do not change the heap the timed calls read."""
    calls = {"kassign": FromJson(text, partial(assign_share, "simple")),
             "parsed": FromJson(text, partial(assign_share, "simple"), parse_share_scenario)}
    times = alternate(calls, kafka, runs, warmups)
    stages: dict[str, list[float]] = {name: [] for name in ("read", "assign", "dict")}
    for _ in range(runs):
        doc = json.loads(text)  # not timed
        start = time.perf_counter()
        share = parse_share_scenario(doc)
        read = time.perf_counter()
        target = simple_assign(share)
        assigned = time.perf_counter()
        flat = _flat(target)
        flat.to_dict(flat.members)
        for name, seconds in zip(stages, (read - start, assigned - read, time.perf_counter() - assigned)):
            stages[name].append(seconds)
    return {**times, **stages}


def ms(values: list[float]) -> str:
    return f"{min(values) * 1e3:.2f} / {statistics.median(values) * 1e3:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka-classpath", help="Kafka 4.2+'s classes and their dependencies, as java -cp takes "
                                                  "them (e.g. 'kafka_2.13-4.3.1/libs/*'), to time Kafka in this run")
    parser.add_argument("--runs", type=int, default=15, help="alternating runs of each side per case")
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=100, help="partitions per topic")
    args = parser.parse_args()
    cases = {}
    for homogeneous in (True, False):
        doc = fresh(args.members, args.topics, args.partitions, homogeneous)
        kind = "homogeneous" if homogeneous else "heterogeneous"
        cases[f"{kind} fresh"] = doc
        cases[f"{kind} leave"] = one_leaves(doc)
    print(f"{args.members:,} members, {args.topics} topics x {args.partitions} partitions; load average (1 min) "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; best / median of {args.runs} runs, ms")
    print(f"{'case':<21} {'kassign':>15} {'parsed':>15}   {'read + assign + dict (best)':<28} "
          f"{'Kafka (Java)':<22} kassign vs Kafka")
    for name, doc in cases.items():
        text = json.dumps(doc)
        kafka = KafkaHarness(args.kafka_classpath, "simple", doc, heap="2g", harness=SHARE_HARNESS) \
            if args.kafka_classpath else None
        try:
            times = run_case(text, kafka, args.runs)
            same = kafka is not None and kafka.digest() == assignment_digest(assign_share("simple", json.loads(text)))
        finally:
            if kafka is not None:
                kafka.close()
        stages = " + ".join(f"{min(times[s]) * 1e3:.2f}" for s in ("read", "assign", "dict"))
        if kafka is not None:
            kafka_text = ms(times["Kafka"])
            versus = f"{ratio(times['kassign'], times['Kafka'])} (parsed {ratio(times['parsed'], times['Kafka'])})"
            versus += "" if same else "  (DIFFERENT ASSIGNMENT)"
        else:
            kafka_text, versus = NEEDS_CLASSPATH, ""
        print(f"{name:<21} {ms(times['kassign']):>15} {ms(times['parsed']):>15}   {stages:<28} {kafka_text:<22} {versus}")


if __name__ == "__main__":
    main()
