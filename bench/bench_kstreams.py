"""Kafka Streams' classic task assignment (both assignors) at a large application's scale, beside Kafka's own.

The case: 200 clients with 4 stream threads each, a topology of 20 subtopologies x 200 partitions
(4,000 tasks, every other subtopology stateful: 2,000 stateful tasks), 1 standby replica, 2
warm-up replicas, acceptable recovery lag 10,000. Two rounds are timed:

* ``steady``: the application after a settled rebalance. Each client reports ``-2`` for the
  active tasks it runs and offset sums 0-5,000 behind the end for its standbys; one client has
  been replaced by a new one with no state, so its tasks move through warm-ups.
* ``fresh``: the first rebalance of the same application, nobody holding state.

Each strategy is timed through ``assign_streams_classic`` (the Kafka Streams scenario document in, the answer dict
out) on a freshly parsed copy of the scenario's JSON (``json.loads`` untimed), and again (``parsed``)
on a scenario read beforehand (``parse_streams_classic``). Both of Kafka Streams' assignors are
timed: ``high-availability`` (the default) and ``sticky`` (``task.assignor.class``).

With ``--kafka-classpath`` the same scenarios also run through Kafka Streams' own classes in a JVM
(``bench/java/KafkaStreamsClassicAssignorBench.java``), alternating with kassign so both see the same
load: ``HighAvailabilityTaskAssignor.assign(...)`` on client states built beforehand, as the leader
builds them (owned partitions, offset sums, lags from the end offset sums), and the KIP-924
``StickyTaskAssignor.assign(ApplicationState)``. Kafka's time covers the assignor alone; kassign's
also the split over each client's stream threads and the answer dict. Before printing a case the bench
checks that both sides gave the same active and standby tasks per client and the same probing flag,
and stops if not. The classpath needs Kafka Streams' classes and kafka-clients (a Kafka download's
``'kafka_2.13-4.4.0/libs/*'``; the harness runs against 4.3.1's and 4.4's); ``--kafka-version`` names
their release (default 4.4), and kassign answers as it. Without it, only kassign is timed.

Figures (2026-11-29, 2 cores, load average 2.4; best / median of 9, ms; kassign / Kafka 4.4, the 4.4 branch at
87943b2ff8, JIT-compiled before it is timed): high-availability steady 54.0 / 55.6 vs 739.0 / 852.9 (0.07x /
0.07x), fresh 40.8 / 42.4 vs 710.3 / 801.2 (0.06x / 0.05x); sticky steady 100.4 / 102.7 vs 98.1 / 125.4 (1.02x /
0.82x), fresh 140.9 / 144.6 vs 110.9 / 134.8 (1.27x / 1.07x); the same answers on both sides.

Run: ``python bench/bench_kstreams.py [--kafka-classpath CP [--kafka-version 4.3]] [--runs 7]
[--strategies high-availability,sticky]``
(prints best and median, ms).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kafka_java import NEEDS_CLASSPATH, JavaHarness, alternate, best_and_median, ratio

from kassign.core.releases import DEFAULT_KAFKA_VERSION
from kassign.groups.streams.classic import assign_streams_classic
from kassign.groups.streams.classic.scenario import parse_streams_classic

HARNESS = Path(__file__).resolve().parent / "java" / "KafkaStreamsClassicAssignorBench.java"

CLIENTS, THREADS, SUBTOPOLOGIES, PARTITIONS = 200, 4, 20, 200


def fresh_case(seed: int = 11) -> dict:
    rng = random.Random(seed)
    subtopologies = {str(s): {"partitions": PARTITIONS, "stateful": s % 2 == 0} for s in range(SUBTOPOLOGIES)}
    ends = {f"{s}_{p}": rng.randrange(10_000, 5_000_000) for s in range(0, SUBTOPOLOGIES, 2) for p in range(PARTITIONS)}
    clients = {}
    for _ in range(CLIENTS):
        process = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        clients[process] = {"consumers": {
            f"orders-{process}-StreamThread-{t + 1}-consumer-{uuid.UUID(int=rng.getrandbits(128), version=4)}":
                {"owned": [], "offset_sums": {}} for t in range(THREADS)}}
    return {"subtopologies": subtopologies, "end_offset_sums": ends, "clients": clients,
            "num_standby_replicas": 1, "max_warmup_replicas": 2, "acceptable_recovery_lag": 10_000}


def steady_case(fresh: dict, seed: int = 12) -> dict:
    """The round after ``fresh`` settled, with one client replaced by a newcomer without state."""
    rng = random.Random(seed)
    answer = assign_streams_classic("high-availability", fresh)
    ends = fresh["end_offset_sums"]
    doc = json.loads(json.dumps(fresh))
    for process, spec in doc["clients"].items():
        for member, consumer in spec["consumers"].items():
            mine = answer["consumers"][member]
            consumer["owned"] = mine["active"]
            sums = {t: -2 for t in mine["active"] if t in ends}
            sums.update({t: max(0, ends[t] - rng.randrange(0, 5_000)) for t in mine["standby"]})
            consumer["offset_sums"] = sums
    gone = sorted(doc["clients"])[rng.randrange(CLIENTS)]
    del doc["clients"][gone]
    newcomer = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    doc["clients"][newcomer] = {"consumers": {
        f"orders-{newcomer}-StreamThread-{t + 1}-consumer-{t}": {"owned": [], "offset_sums": {}} for t in range(THREADS)}}
    return doc


def write_scenario_file(doc: Mapping, path: Path) -> None:
    """The scenario in the harness's whitespace-separated format (see its class comment)."""
    def pairs(tasks: Iterable[str]) -> list[str]:
        return [" ".join(task.split("_")) for task in tasks]

    subs, ends = doc["subtopologies"], doc.get("end_offset_sums", {})
    lines = [f"config {doc.get('num_standby_replicas', 0)} {doc.get('max_warmup_replicas', 2)} "
             f"{doc.get('acceptable_recovery_lag', 10_000)}", f"subtopologies {len(subs)}"]
    lines += [f"{sid} {spec['partitions']} {int(spec.get('stateful', False))}" for sid, spec in subs.items()]
    lines.append(f"ends {len(ends)}")
    lines += [f"{task} {end}" for task, end in zip(pairs(ends), ends.values())]
    lines.append(f"clients {len(doc['clients'])}")
    for process, spec in doc["clients"].items():
        lines.append(f"{process} consumers {len(spec['consumers'])}")
        for member, consumer in spec["consumers"].items():
            owned, sums = consumer.get("owned", []), consumer.get("offset_sums", {})
            lines.append(" ".join([member, str(len(owned)), *pairs(owned), str(len(sums)),
                                   *(f"{task} {n}" for task, n in zip(pairs(sums), sums.values()))]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def digest(answer: Mapping) -> str:
    """SHA-256 of :func:`answer_lines`, each ended by a newline: the harness's ``digest``."""
    return hashlib.sha256("".join(line + "\n" for line in answer_lines(answer)).encode()).hexdigest()


class KafkaStreamsClassicHarness(JavaHarness):
    """One JVM running Kafka Streams' classic assignors; ``load`` picks scenario and assignor, ``run``
    times one ``assign``."""

    def __init__(self, classpath: str) -> None:
        super().__init__(classpath, HARNESS, heap="2g")
        self._scenario = self.folder / "scenario.txt"
        self._strategy = "high-availability"
        write_scenario_file({"subtopologies": {}, "clients": {}}, self._scenario)
        self.start(str(self._scenario))

    def load(self, scenario: Mapping, strategy: str) -> None:
        write_scenario_file(scenario, self._scenario)
        self._ask(f"load {self._scenario}", expect="ready")
        self._strategy = strategy

    def run(self) -> float:
        return float(self._ask(f"run {self._strategy}"))

    def lines(self) -> list[str]:
        """Kafka's last answer as the lines :func:`digest` hashes."""
        self._ask(f"lines {self.folder / 'lines.txt'}", expect="written")
        return (self.folder / "lines.txt").read_text(encoding="utf-8").splitlines()


def answer_lines(answer: Mapping) -> list[str]:
    """``process TAB active|standby TAB task`` lines, sorted, then ``probing TAB true|false``."""
    lines = sorted(f"{process}\t{kind}\t{task}" for process, kinds in answer["clients"].items()
                   for kind in ("active", "standby") for task in kinds[kind])
    return [*lines, f"probing\t{str(answer['probing_rebalance']).lower()}"]


def time_case(strategy: str, text: str, kafka: KafkaStreamsClassicHarness | None, runs: int,
              warmups: int = 3, version: str = DEFAULT_KAFKA_VERSION) -> dict[str, list[float]]:
    """Seconds per call, alternating sides (``kafka_java.alternate``): ``kassign``, the dict API on a
    freshly parsed copy of ``text`` (``json.loads`` untimed); ``parsed``, on a scenario read beforehand
    (``parse_streams_classic``), as Kafka's client states are built beforehand; ``Kafka``. kassign
    answers as Kafka ``version``."""
    documents = iter([json.loads(text) for _ in range(warmups + runs)])
    scenarios = iter([parse_streams_classic(json.loads(text)) for _ in range(warmups + runs)])
    ours = {"kassign": lambda: assign_streams_classic(strategy, next(documents), version),
            "parsed": lambda: assign_streams_classic(strategy, next(scenarios), version)}
    return alternate(ours, kafka, runs, warmups)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka-classpath", help="Kafka Streams' classes and their dependencies, as java -cp takes "
                                                  "them (e.g. 'kafka_2.13-4.4.0/libs/*'), to time Kafka in this run")
    parser.add_argument("--runs", type=int, default=7, help="timed calls per case and side")
    parser.add_argument("--strategies", default="high-availability,sticky")
    parser.add_argument("--kafka-version", default=DEFAULT_KAFKA_VERSION,
                        help="the release kassign answers as (with --kafka-classpath: that of Kafka's classes)")
    args = parser.parse_args()
    fresh = fresh_case()
    cases = {"steady": steady_case(fresh), "fresh": fresh}
    kafka = KafkaStreamsClassicHarness(args.kafka_classpath) if args.kafka_classpath else None
    print(f"load average (1 min) {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"{CLIENTS} clients x {THREADS} threads, {SUBTOPOLOGIES * PARTITIONS:,} tasks; best / median of {args.runs}, "
          f"ms; kassign as Kafka {args.kafka_version}")
    print(f"{'assignor':<18} {'case':<7} {'input':<7}{'kassign':>17}   {'Kafka (Java)':<22} "
          "kassign vs Kafka (best / median)")
    try:
        for strategy in args.strategies.split(","):
            for name, doc in cases.items():
                text = json.dumps(doc)
                answer = assign_streams_classic(strategy, json.loads(text), args.kafka_version)
                if kafka is not None:
                    kafka.load(doc, strategy)
                times = time_case(strategy, text, kafka, args.runs, version=args.kafka_version)
                if kafka is not None and kafka.digest() != digest(answer):
                    theirs = set(kafka.lines())
                    only = [f"  kassign only: {line}" for line in answer_lines(answer) if line not in theirs][:5]
                    raise SystemExit("\n".join([f"{strategy} {name}: kassign's answer differs from Kafka's", *only]))
                standbys = sum(len(c["standby"]) for c in answer["clients"].values())
                for label, key in (("", "kassign"), ("parsed", "parsed")):
                    ours = best_and_median(times[key], 1e-3, 1)
                    if kafka is not None:
                        theirs, versus = best_and_median(times["Kafka"], 1e-3, 1), ratio(times[key], times["Kafka"])
                    else:
                        theirs, versus = NEEDS_CLASSPATH, ""
                    print(f"{strategy:<18} {name:<7} {label:<7}{ours:>17}   {theirs:<22} {versus}")
                print(f"{'':<18} {name:<7} standbys incl. warm-ups: {standbys}, "
                      f"probing rebalance: {answer['probing_rebalance']}"
                      + (", the same answer as Kafka's" if kafka is not None else ""))
    finally:
        if kafka is not None:
            kafka.close()


if __name__ == "__main__":
    main()
