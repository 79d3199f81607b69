"""Simulator at scale, both protocols (``--protocol classic`` or ``consumer`` for one).

Classic protocol: 200 members, 20,000 partitions, 100 events, all four strategies; target:
the whole comparison in under a minute. Prints seconds per strategy and per rebalance round.

Consumer protocol (KIP-848, the group coordinator's server-side assignors): 1,000 members,
20,000 partitions, 200 events, consumer:uniform and consumer:range; target: at most 10 s
each. Each strategy runs ``--runs`` times (the machine is shared: best and median are
printed, beside the target, with the CPU seconds of the best run).

Run: .venv/bin/python bench/bench_simulate.py [--protocol classic|consumer] [--members N --partitions P
--events E] [--strategies a,b] [--runs R]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from rich.progress import Progress

from kassign.groups.simulate import parse_sim_scenario, simulate
from kassign.groups.simulate.scenario import SimScenario

CONSUMER_TARGET_SECONDS = 10.0
DEFAULTS = {  # protocol -> (members, events, strategies)
    "classic": (200, 100, "range,roundrobin,sticky,cooperative-sticky"),
    "consumer": (1000, 200, "consumer:uniform,consumer:range"),
}


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


def classic(scenario: SimScenario, strategies: list[str]) -> None:
    total = 0.0
    with Progress(transient=True) as progress:
        for strategy in strategies:
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


def consumer(scenario: SimScenario, strategies: list[str], runs: int) -> None:
    print(f"{'strategy':>18}  {'best s':>7}  {'median s':>8}  {'target s':>8}  {'CPU s':>6}  figures")
    for strategy in strategies:
        walls, cpus = [], []
        for _ in range(runs):
            start, cpu = time.perf_counter(), time.process_time()
            run = simulate(scenario, strategy)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        t = run.totals()
        print(f"{strategy:>18}  {min(walls):7.2f}  {statistics.median(walls):8.2f}  {CONSUMER_TARGET_SECONDS:8.0f}  "
              f"{min(cpus):6.2f}  {t['rounds']} targets, {t['heartbeats']} heartbeats while unsettled, "
              f"moved {t['moved']}, revoked {t['revoked']}, unowned {t['unowned_partition_seconds']:.0f} p·s "
              f"({runs} runs)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", choices=sorted(DEFAULTS), help="only this protocol's case (default: both)")
    parser.add_argument("--members", type=int)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--events", type=int)
    parser.add_argument("--strategies")
    parser.add_argument("--runs", type=int, default=3, help="runs per strategy (consumer protocol)")
    args = parser.parse_args()
    for protocol in [args.protocol] if args.protocol else list(DEFAULTS):
        members, events, strategies = DEFAULTS[protocol]
        members, events = args.members or members, events if args.events is None else args.events
        scenario = parse_sim_scenario(build(members, args.partitions, events))
        print(f"{members} members, {sum(scenario.topics.values())} partitions, {len(scenario.events)} events, "
              f"{protocol} protocol")
        chosen = (args.strategies or strategies).split(",")
        if protocol == "consumer":
            consumer(scenario, chosen, args.runs)
        else:
            classic(scenario, chosen)


if __name__ == "__main__":
    main()
