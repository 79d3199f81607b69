"""Simulator at scale: 200 members, 20,000 partitions, 100 events, all four strategies.

Target: the whole comparison in under a minute. Prints seconds per strategy and
per rebalance round. Run: .venv/bin/python bench/bench_simulate.py [--members N --partitions P --events E]
"""

from __future__ import annotations

import argparse
import random
import time

from rich.progress import Progress

from kassign.simulate import parse_sim_scenario, simulate


def build(members: int, partitions: int, events: int, seed: int = 7) -> dict:
    rng = random.Random(seed)
    topics = {f"topic-{i}": partitions // 20 for i in range(20)}
    names = list(topics)
    group = {f"consumer-{i:03d}": {"topics": names} for i in range(members)}
    alive, timeline, fresh, t = list(group), [], 0, 0.0
    for _ in range(events):
        t += 30
        kind = rng.choice(["join", "leave", "crash", "join", "leave"])
        if kind == "join" or len(alive) < members // 2:
            name = f"new-{fresh:03d}"
            fresh += 1
            timeline.append({"at": t, "type": "join", "member": name, "topics": names})
            alive.append(name)
        else:
            name = alive.pop(rng.randrange(len(alive)))
            timeline.append({"at": t, "type": kind, "member": name})
    return {"name": "scale", "topics": topics, "members": group, "events": timeline,
            "settings": {"round_seconds": 2, "session_timeout": 10}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--members", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--strategies", default="range,roundrobin,sticky,cooperative-sticky")
    args = parser.parse_args()
    scenario = parse_sim_scenario(build(args.members, args.partitions, args.events))
    print(f"{args.members} members, {sum(scenario.topics.values())} partitions, {len(scenario.events)} events")
    total = 0.0
    with Progress(transient=True) as progress:
        for strategy in args.strategies.split(","):
            task = progress.add_task(strategy, total=len(scenario.events))
            start = time.perf_counter()
            run = simulate(scenario, strategy, on_event=lambda: progress.advance(task))
            elapsed = time.perf_counter() - start
            total += elapsed
            t = run.totals()
            progress.console.print(
                f"{strategy:>20}: {elapsed:7.2f} s  ({1000 * elapsed / max(t['rounds'], 1):6.1f} ms/round, "
                f"{t['rounds']} rounds, moved {t['moved']}, revoked {t['revoked']}, "
                f"unowned {t['unowned_partition_seconds']:.0f} p·s)"
            )
    print(f"all strategies: {total:.2f} s (target < 60 s)")


if __name__ == "__main__":
    main()
