"""Ordering a plan's moves into batches (``kassign.replicas.execute.plan_batches``) at cluster scale.

10,000 moves over 100 brokers (each partition rf 3 on brokers 0-89, one replica moved to any other broker, sizes
1 B - 1 GB), concurrency 5, every broker with a disk limit; then the same moves with the limits tight (each broker's
limit 5 GB above the larger of its bytes before and after the plan: about 10 average moves' worth of room, so that
frees must come before copies). Printed: best of 3 seconds, the batches
against the least the concurrency allows. Target: under a second. Nothing to compare with (Kafka's tool starts
every move at once).

Then the executor's own work per poll with those 10,000 moves waiting (no cluster: which moves may start now,
and rewriting the plan file that holds the state, which happens only when a move changes state).

Run: ``python bench/bench_execute_batches.py``.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path

from kassign.replicas.execute import Disk, Move, plan_batches


def moves(seed: int = 7, count: int = 10_000) -> list[Move]:
    rng = random.Random(seed)
    out = []
    for p in range(count):
        current = rng.sample(range(90), 3)
        target = list(current)
        target[rng.randrange(3)] = rng.choice([b for b in range(100) if b not in current])
        out.append(Move(f"t{p % 50}", p, tuple(current), tuple(target), rng.randint(1, 10**9)))
    return out


def run(label: str, work: list[Move], disks: dict[int, Disk]) -> None:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        schedule = plan_batches(work, 5, disks)
        best = min(best, time.perf_counter() - started)
    print(f"{label}: {best:.3f} s best of 3, {len(schedule.batches)} batches (least {schedule.least_batches})")


def main() -> None:
    work = moves()
    run("10,000 moves, loose disks", work, {b: Disk(10**12, 3 * 10**12) for b in range(100)})
    before = {b: 10**12 for b in range(100)}
    after = dict(before)
    for m in work:
        for b in m.adding:
            after[b] += m.size
        for b in m.removing:
            after[b] -= m.size
    run("10,000 moves, limits 5 GB above before/after", work,
        {b: Disk(before[b], max(before[b], after[b]) + 5 * 10**9) for b in range(100)})
    poll_work(work)


def poll_work(work: list[Move]) -> None:
    from kassign.kafka import executor as E

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "plan.json"
        named = [Move(f"t{i // 200}", i % 200, m.current, m.target, m.size) for i, m in enumerate(work)]
        path.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": m.topic, "partition": m.partition, "replicas": list(m.target)} for m in named]}))
        plan = E.read_plan(path)
        view = E.ClusterView(set(range(100)), {(m.topic, m.partition): list(m.current) for m in named}, {}, {}, {})
        state = E._fresh_state(plan, view, named, 5, None, 0.8, {})
        plan.document[E.STATE_KEY] = state
        runner = E.Executor(None, plan)  # type: ignore[arg-type]
        runner.moves = {m.name: m for m in named}
        for k, batch in enumerate(plan_batches(named, 5).batches):
            state["batches"].append([m.name for m in batch])
            for m in batch:
                state["moves"][m.name]["batch"] = k
        started = time.perf_counter()
        chosen = runner._eligible(state)
        eligible = time.perf_counter() - started
        started = time.perf_counter()
        plan.save()
        saved = time.perf_counter() - started
        print(f"a poll's own work, 10,000 moves: {eligible * 1000:.1f} ms to choose {len(chosen)} starts, "
              f"{saved * 1000:.0f} ms to rewrite the {path.stat().st_size / 1e6:.1f} MB plan file")


if __name__ == "__main__":
    main()
