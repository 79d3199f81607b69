"""Kafka Streams' classic task assignment (high-availability assignor) at a large application's scale.

The case: 200 clients with 4 stream threads each, a topology of 20 subtopologies x 200 partitions
(4,000 tasks, every other subtopology stateful: 2,000 stateful tasks), 1 standby replica, 2
warm-up replicas, acceptable recovery lag 10,000. Two rounds are timed:

* ``steady``: the application after a settled rebalance. Each client reports ``-2`` for the
  active tasks it runs and offset sums 0-5,000 behind the end for its standbys; one client has
  been replaced by a new one with no state, so its tasks move through warm-ups.
* ``fresh``: the first rebalance of the same application, nobody holding state.

Each timed call reads the scenario from its JSON text (``json.loads``) and returns SPEC section 8's
answer dict, as the CLI would. Both of Kafka Streams' assignors are timed: ``high-availability``
(the default) and ``sticky`` (``task.assignor.class``).

Run: ``python bench/bench_kstreams.py [--runs 7]`` (prints best and median, ms).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kassign.groups.streams.classic import assign_streams_classic

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


def timings(strategy: str, text: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        assign_streams_classic(strategy, json.loads(text))
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed calls per case")
    args = parser.parse_args()
    fresh = fresh_case()
    cases = {"steady": steady_case(fresh), "fresh": fresh}
    print(f"load average (1 min) {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"{CLIENTS} clients x {THREADS} threads, {SUBTOPOLOGIES * PARTITIONS:,} tasks; best / median of {args.runs}, ms")
    for strategy in ("high-availability", "sticky"):
        for name, doc in cases.items():
            text = json.dumps(doc)
            answer = assign_streams_classic(strategy, json.loads(text))
            standbys = sum(len(c["standby"]) for c in answer["clients"].values())
            ms = timings(strategy, text, args.runs)
            print(f"{strategy:<18} {name:<7} {min(ms):9.1f} {statistics.median(ms):9.1f}   "
                  f"(standbys incl. warm-ups: {standbys}, probing rebalance: {answer['probing_rebalance']})")

if __name__ == "__main__":
    main()
