"""Streams groups' broker assignor ``sticky`` (KIP-1071) at application scale, beside Kafka's own.

The cases, each timed through ``assign_streams("sticky", scenario)`` (the streams group scenario document in, the
answer dict out), the scenario freshly parsed from JSON before every timed call (``json.loads`` is
not timed, so nothing kassign caches from an earlier call's input can help):

* fresh: 500 members in 100 processes (5 each), 20 subtopologies x 100 partitions (2,000 tasks),
  every other subtopology stateful, 1 standby replica; nobody holds anything yet.
* process-leaves: the fresh answer fed back as the members' current tasks (what 4.4's coordinator
  passes; 4.2 and 4.3 pass the previous target, the same in a reconciled group), and one process (its 5
  members) gone.
* process-restarts: the same answer, but one process came back after a restart: its 5 members have new
  member ids and no tasks, and report offset sums of the stateful tasks they held (``offset_sums``, which
  Kafka 4.4 reads, KAFKA-20719; 4.2 and 4.3 ignore them).

A second row per case (``parsed``) times the assignor on a group read from the dict beforehand
(``parse_streams_group``), the like-for-like comparison with Kafka's group spec built beforehand; it
still builds the answer dict.

With ``--kafka-classpath`` the same scenarios also run through Kafka's own ``StickyTaskAssignor`` in a
JVM, alternating with kassign so both see the same load; Kafka's time is its ``assign(GroupSpec,
TopologyDescriber)`` on a group spec built beforehand, and the two answers are compared by digest.
``--kafka-version`` names the release of those classes (default 4.4), and kassign answers as it: 4.4's
harness is ``bench/java/KafkaStreamsAssignorBench44.java`` (4.4 moved the assignor API to
group-coordinator-api; it passes each member's current tasks and reported offset sums, as 4.4's
coordinator does), 4.2's and 4.3's ``bench/java/KafkaStreamsAssignorBench.java``. The classpath needs
Kafka's group coordinator classes and the group-coordinator-api (a Kafka download's
``'kafka_2.13-4.3.1/libs/*'`` with ``--kafka-version 4.3``). Without it, only kassign is timed.

Run: ``python bench/bench_streams_groups.py [--kafka-classpath CP [--kafka-version 4.3]] [--runs 25]`` (prints
best and median).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kafka_java import NEEDS_CLASSPATH, JavaHarness, ratio, warm_jvm

from kassign.core.releases import DEFAULT_KAFKA_VERSION
from kassign.groups.flat import no_cyclic_gc
from kassign.groups.streams.sticky import assign_streams, check_streams_release, sticky_assign
from kassign.groups.streams.tasks import parse_streams_group

# The harness for Kafka's assignor API from each release on: 4.2's (also 4.3's), and 4.4's
HARNESSES = {(4, 2): "KafkaStreamsAssignorBench.java", (4, 4): "KafkaStreamsAssignorBench44.java"}


def fresh_case(seed: int = 7) -> dict:
    rng = random.Random(seed)
    processes = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(100)]
    members = {}
    for process in processes:
        for _ in range(5):
            member = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
                             for _ in range(22))
            members[member] = {"process_id": process}
    subtopologies = {str(s): {"partitions": 100, "stateful": s % 2 == 0} for s in range(20)}
    return {"subtopologies": subtopologies, "num_standby_replicas": 1, "members": members}


def process_leaves_case(fresh: dict, version: str = DEFAULT_KAFKA_VERSION) -> dict:
    answer = assign_streams("sticky", fresh, version)
    gone = next(iter(fresh["members"].values()))["process_id"]
    members = {m: {"process_id": spec["process_id"], "active": answer[m]["active"], "standby": answer[m]["standby"]}
               for m, spec in fresh["members"].items() if spec["process_id"] != gone}
    return dict(fresh, members=members)


def process_restarts_case(fresh: dict, version: str = DEFAULT_KAFKA_VERSION, seed: int = 8) -> dict:
    """The fresh answer held, but one process restarted: its members come back under new member ids with
    nothing assigned and report offset sums (up to 5,000 behind a common end) of the stateful tasks they held."""
    rng = random.Random(seed)
    answer = assign_streams("sticky", fresh, version)
    restarted = next(iter(fresh["members"].values()))["process_id"]
    stateful = {sid for sid, spec in fresh["subtopologies"].items() if spec.get("stateful")}
    members = {}
    for m, spec in fresh["members"].items():
        if spec["process_id"] != restarted:
            members[m] = {"process_id": spec["process_id"], "active": answer[m]["active"],
                          "standby": answer[m]["standby"]}
            continue
        held = sorted({(sid, p) for kind in ("active", "standby") for sid, partitions in answer[m][kind].items()
                       if sid in stateful for p in partitions})
        members[m + "-restarted"] = {"process_id": restarted,
                                     "offset_sums": {f"{sid}_{p}": 1_000_000 - rng.randrange(5_000) for sid, p in held}}
    return dict(fresh, members=members)


def digest(answer: Mapping[str, Mapping[str, Mapping[str, list[int]]]]) -> str:
    """SHA-256 of sorted ``member TAB kind TAB subtopology TAB partition`` lines: the harness's ``digest``."""
    lines = sorted(f"{m}\t{kind}\t{sid}\t{p}\n" for m, kinds in answer.items() for kind, tasks in kinds.items()
                   for sid, partitions in tasks.items() for p in partitions)
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def write_scenario_file(scenario: Mapping, path: Path, offsets: bool = True) -> None:
    """The scenario in the harness's whitespace-separated format (see its class comment); ``offsets``: with
    each member's reported offset sums (4.4's harness), else without (4.2's and 4.3's, which read none)."""
    subs = scenario["subtopologies"]
    lines = [f"standby {scenario.get('num_standby_replicas', 0)}", f"subtopologies {len(subs)}"]
    lines += [f"{sid} {spec['partitions']} {int(spec.get('stateful', False))}" for sid, spec in subs.items()]
    lines.append(f"members {len(scenario['members'])}")
    for member, spec in scenario["members"].items():
        fields = [member, spec["process_id"]]
        for kind in ("active", "standby"):
            pairs = [f"{sid} {p}" for sid, partitions in spec.get(kind, {}).items() for p in partitions]
            fields += [str(len(pairs)), *pairs]
        if offsets:
            sums = spec.get("offset_sums") or {}
            fields += [str(len(sums)), *(f"{' '.join(task.rsplit('_', 1))} {n}" for task, n in sums.items())]
        lines.append(" ".join(fields))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


class KafkaStreamsHarness(JavaHarness):
    """One JVM running Kafka's ``StickyTaskAssignor``; ``load`` switches scenario, ``run`` times one call."""

    def __init__(self, classpath: str, version: str = DEFAULT_KAFKA_VERSION) -> None:
        """``version``: the release of the classes on ``classpath``, which picks the harness."""
        release = check_streams_release(version)
        since = max(line for line in HARNESSES if line <= (release.major, release.minor))
        self._offsets = since >= (4, 4)  # 4.4's harness reads the members' offset sums
        super().__init__(classpath, Path(__file__).resolve().parent / "java" / HARNESSES[since], heap="1g")
        self._scenario = self.folder / "scenario.txt"
        write_scenario_file({"subtopologies": {}, "members": {}}, self._scenario, self._offsets)
        self.start(str(self._scenario))

    def load(self, scenario: Mapping) -> None:
        write_scenario_file(scenario, self._scenario, self._offsets)
        self._ask(f"load {self._scenario}", expect="ready")

    def run(self) -> float:
        return float(self._ask("run"))


def time_case(text: str, kafka: KafkaStreamsHarness | None, runs: int, warmups: int = 5,
              version: str = DEFAULT_KAFKA_VERSION) -> dict[str, list[float]]:
    """Seconds of ``runs`` kassign calls (as Kafka ``version``), each on a freshly parsed copy of ``text``
    (``"kassign"``: the dict API; ``"parsed"``: the assignor on a group read beforehand, as Kafka's group
    spec is built beforehand), alternating with Kafka's (under ``"Kafka"``) when a harness is given; after
    ``warmups`` untimed rounds, and before them :func:`kafka_java.warm_jvm`'s untimed Kafka calls."""
    release = check_streams_release(version)
    times: dict[str, list[float]] = {"kassign": [], "parsed": []}
    if kafka is not None:
        times["Kafka"] = []
        warm_jvm(kafka.run)
    for round_number in range(warmups + runs):
        took = {}
        scenario = json.loads(text)
        start = time.perf_counter()
        answer = assign_streams("sticky", scenario, release)
        took["kassign"] = time.perf_counter() - start
        del answer
        group = parse_streams_group(json.loads(text))
        with no_cyclic_gc():
            start = time.perf_counter()
            answer = sticky_assign(group, release)
            took["parsed"] = time.perf_counter() - start
        del answer, group, scenario
        if kafka is not None:
            took["Kafka"] = kafka.run()
        if round_number >= warmups:
            for name, seconds in took.items():
                times[name].append(seconds)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka-classpath", help="Kafka's classes and their dependencies, as java -cp takes them "
                                                  "(e.g. 'kafka_2.13-4.4.0/libs/*'), to time Kafka in this run")
    parser.add_argument("--runs", type=int, default=25, help="timed runs of each side per case")
    parser.add_argument("--kafka-version", default=DEFAULT_KAFKA_VERSION,
                        help="the release kassign answers as (with --kafka-classpath: that of Kafka's classes, "
                             "which picks the harness: 4.4's API, or 4.2's and 4.3's)")
    args = parser.parse_args()
    fresh = fresh_case()
    cases = {"fresh": fresh, "process-leaves": process_leaves_case(fresh, args.kafka_version),
             "process-restarts": process_restarts_case(fresh, args.kafka_version)}
    kafka = KafkaStreamsHarness(args.kafka_classpath, args.kafka_version) if args.kafka_classpath else None
    print(f"load average (1 min) {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"best / median of {args.runs} runs, ms; kassign as Kafka {check_streams_release(args.kafka_version)}")
    print(f"{'case':<17}{'members':>8}{'tasks':>7} {'input':<7}{'kassign':>15}   {'Kafka (Java)':<22} "
          "kassign vs Kafka (best / median)")
    try:
        for name, scenario in cases.items():
            text = json.dumps(scenario)
            if kafka is not None:
                kafka.load(scenario)
            times = time_case(text, kafka, args.runs, version=args.kafka_version)
            same = kafka is not None and kafka.digest() == digest(assign_streams("sticky", json.loads(text),
                                                                                 args.kafka_version))
            tasks = sum(spec["partitions"] for spec in scenario["subtopologies"].values())
            for label, key in (("", "kassign"), ("parsed", "parsed")):
                ours = times[key]
                ours_text = f"{min(ours) * 1e3:.2f} / {statistics.median(ours) * 1e3:.2f}"
                if kafka is not None:
                    theirs = times["Kafka"]
                    kafka_text = f"{min(theirs) * 1e3:.2f} / {statistics.median(theirs) * 1e3:.2f}"
                    versus = ratio(ours, theirs) + ("" if same else "  (DIFFERENT ASSIGNMENT)")
                else:
                    kafka_text, versus = NEEDS_CLASSPATH, ""
                print(f"{name:<17}{len(scenario['members']):>8}{tasks:>7} {label:<7}{ours_text:>15}   "
                      f"{kafka_text:<22} {versus}")
    finally:
        if kafka is not None:
            kafka.close()


if __name__ == "__main__":
    main()
