"""Kafka's own large sticky test, ``testLargeAssignmentAndGroupWithNonEqualSubscription``.

500 topics x 2,000 partitions (1,000,000), 2,000 members: 1,999 subscribe to every topic,
the last one to the first topic only, so the general (different subscriptions) path runs.
Fresh assignment, then the follow-up where every member re-joins owning what it got.
Timed end to end through ``kassign.assign_table`` and ``kassign.assign`` from the scenario
dict, for the eager ``sticky`` (history in Kafka's user-data bytes) and ``cooperative-sticky``
(history in the subscription). Kafka's Java classes on this machine class (warm JVM, best
of 3): fresh 10.4 s, follow-up 8.2 s.

    python bench/bench_sticky_large.py [--topics 500] [--partitions 2000] [--members 2000]
"""

from __future__ import annotations

import argparse
import time

import kassign

KAFKA_SECONDS = {"fresh": 10.4, "follow-up": 8.2}


def scenario(topics: int, partitions: int, members: int) -> dict:
    names = [f"topic{t}" for t in range(topics)]
    group = {f"consumer{m}": {"topics": names} for m in range(members - 1)}
    group[f"consumer{members - 1}"] = {"topics": names[:1]}
    return {"topics": {n: partitions for n in names}, "members": group}


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--members", type=int, default=2000)
    args = parser.parse_args()
    fresh_case = scenario(args.topics, args.partitions, args.members)
    total = args.topics * args.partitions
    print(f"{total:,} partitions, {args.members:,} members (the last on one topic)")
    print(f"{'strategy':<20} {'round':<10} {'API':<13} {'seconds':>8}   Kafka (Java)")
    for strategy in ("sticky", "cooperative-sticky"):
        seconds, table = timed(lambda: kassign.assign_table(strategy, fresh_case))
        print(f"{strategy:<20} {'fresh':<10} {'assign_table':<13} {seconds:8.2f}   {KAFKA_SECONDS['fresh']:.1f} s")
        before = _owners(table)
        owned: dict[str, list] = {}
        for (topic, partition), member in before.items():
            owned.setdefault(member, []).append([topic, partition])
        follow = {"topics": fresh_case["topics"],
                  "members": {m: {**spec, "owned": owned.get(m, []), "generation": 1}
                              for m, spec in fresh_case["members"].items()}}
        seconds, again = timed(lambda: kassign.assign_table(strategy, follow))
        after = _owners(again)
        moved = sum(1 for tp, member in before.items() if after.get(tp) != member)
        print(f"{strategy:<20} {'follow-up':<10} {'assign_table':<13} {seconds:8.2f}   "
              f"{KAFKA_SECONDS['follow-up']:.1f} s   ({moved:,} moved)")
        seconds, _ = timed(lambda: kassign.assign(strategy, follow))
        print(f"{strategy:<20} {'follow-up':<10} {'assign':<13} {seconds:8.2f}")


def _owners(table) -> dict[tuple[str, int], str]:
    columns = (table.column(c).to_pylist() for c in ("member", "topic", "partition"))
    return {(topic, partition): member for member, topic, partition in zip(*columns)}


if __name__ == "__main__":
    main()
