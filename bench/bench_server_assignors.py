"""Kafka 4's server-side assignors at group-coordinator scale, beside Kafka's own.

Two cases, each timed through the dict API, ``kassign.assign(..., protocol="consumer")`` (scenario in,
sorted member -> [(topic, partition)] out) and ``kassign.assign_table`` (the same as a pyarrow table),
and, with ``--kafka-classpath``, beside Kafka's own ``UniformAssignor`` run in a JVM on the same scenario
(``bench/kafka_java.py``), one kassign run then one Kafka run so both see the same load:

* join: 10,000 members settled on 100 topics x 100 partitions (one partition each), a
  10,001st member joins (homogeneous uniform path). Issue #32's goal: at most 1x Kafka.
* fresh: 1,000 members, each subscribed to 10-50 of 100 topics x 100 partitions, no
  current target (heterogeneous uniform path).

**Input freshly parsed from JSON.** Every timed kassign call gets a document decoded afresh from the
scenario's JSON text, serialised once beforehand: ``json.loads`` runs before the clock starts, for each
timed call (``kafka_java.FromJson``). So every member has its own ``topics`` list of its own strings, as
the CLI's JSON, a live describe and a user's own dicts give them; a document built once in Python and
reused would let identity shortcuts (one list object shared by every member, strings whose hashes are
cached from an earlier call) skip the work real input needs.

Kafka's time is its assignor's ``assign(GroupSpec, SubscribedTopicDescriber)`` on a group spec
built beforehand (a coordinator keeps its group in memory, and knows the group is homogeneous from
the moment each member subscribed); kassign's includes reading the scenario dict and building the
result. On the join that reading is most of kassign's time: to know the group is homogeneous it must
look at every member's 100 names, a million string objects JSON just made, each one or two cache lines
that are not in any cache (the native reader compares them text by text with the member before, with
no hashing; what is left is memory traffic). The ``floor`` row (join, uniform) times only that look: every member's list compared with the first's
(:func:`same_topics_as_the_first`), on the same fresh decodings, beside Kafka's whole call: a floor for any
reader of the dict, kassign's or another. The ``parsed`` row hands ``kassign.assign`` a scenario checked
beforehand (``parse_scenario`` of a fresh decoding, untimed), the like-for-like comparison with Kafka's
group spec built beforehand. Below each case, one call split in stages (best of the runs): reading the
scenario, building the group and assigning, building the dict. Without a classpath the Kafka column
says so and the documented reference figures are printed as a labelled note. Server-side range has no
Kafka counterpart here.

Run: ``python bench/bench_server_assignors.py [--kafka-classpath 'kafka_2.13-4.3.1/libs/*'] [--runs 25]``
(prints best and median).
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

from kafka_java import (
    NEEDS_CLASSPATH,
    FromJson,
    KafkaHarness,
    alternate,
    assignment_digest,
    ratio,
)

import kassign
from kassign.core.releases import DEFAULT_KAFKA_VERSION, release_for
from kassign.groups.consumer.assignors import assign_server_side
from kassign.groups.scenario import parse_scenario

# Kafka 4.4's UniformAssignor on this 2-core machine class (JIT-compiled, alternating with kassign, 2026-11-29;
# not this run): shown only without a classpath.
KAFKA_REFERENCE_MS = {"join": "about 5 ms", "fresh": "about 6 ms"}


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


def same_topics_as_the_first(document: dict) -> bool:
    """The least any reader of the document can do before it knows which rule applies (the homogeneous
    or the heterogeneous path): compare every member's topic list with the first member's, by CPython's
    own list and str comparison in C; nothing numbered, nothing built. The ``floor`` row times it on the
    same fresh decodings, beside Kafka's whole call."""
    entries = iter(document["members"].values())
    first = next(entries)["topics"]
    return all(entry["topics"] == first for entry in entries)


def stages(case: FromJson, runs: int) -> str:
    """One ``kassign.assign`` split in its stages, best of ``runs`` fresh decodings, ms."""
    release = release_for(DEFAULT_KAFKA_VERSION, "consumer")
    best = [float("inf")] * 3
    for _ in range(runs):
        document = case.fresh()
        start = time.perf_counter()
        parsed = parse_scenario(document)
        read = time.perf_counter()
        flat = assign_server_side("uniform", parsed, release)
        assigned = time.perf_counter()
        flat.to_dict(parsed.members.ids)
        done = time.perf_counter()
        best = [min(b, t) for b, t in zip(best, (read - start, assigned - read, done - assigned))]
    return " + ".join(f"{b * 1e3:.1f}" for b in best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka-classpath", help="Kafka's classes and their dependencies, as java -cp takes them "
                                                  "(e.g. 'kafka_2.13-4.3.1/libs/*'), to time Kafka in this run")
    parser.add_argument("--runs", type=int, default=25, help="alternating runs of each side per case")
    args = parser.parse_args()
    cases = {"join": join_case(), "fresh": fresh_case()}
    print(f"load average (1 min) {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"best / median of {args.runs} alternating runs, ms; kassign's input freshly decoded from JSON each run")
    print(f"{'case':<7} {'strategy':<9} {'call':<7}{'kassign':>15}   {'Kafka (Java)':<22} kassign vs Kafka (best / median)")
    for case, scenario in cases.items():
        text = json.dumps(scenario)
        for strategy in ("uniform", "range"):
            kafka = KafkaHarness(args.kafka_classpath, "uniform", scenario, heap="1g") \
                if args.kafka_classpath and strategy == "uniform" else None
            calls = {
                "assign": FromJson(text, partial(kassign.assign, strategy, protocol="consumer")),
                "table": FromJson(text, partial(kassign.assign_table, strategy, protocol="consumer")),
                "parsed": FromJson(text, partial(kassign.assign, strategy, protocol="consumer"), parse_scenario),
            }
            if case == "join" and strategy == "uniform":
                calls["floor"] = FromJson(text, same_topics_as_the_first)
            try:
                times = alternate(calls, kafka, args.runs, warmups=5)
                agrees = kafka is not None and kafka.digest() == assignment_digest(
                    kassign.assign(strategy, json.loads(text), protocol="consumer"))
            finally:
                if kafka is not None:
                    kafka.close()
            for name in calls:
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
                print(f"{case:<7} {strategy:<9} {name:<7}{ours_text:>15}   {kafka_text:<22} {versus}")
            if strategy == "uniform":
                print(f"{'':<17} stages of one assign (best, ms): read + group and assign + dict = "
                      f"{stages(calls['assign'], args.runs)}")


if __name__ == "__main__":
    main()
