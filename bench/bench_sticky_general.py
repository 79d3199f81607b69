"""Benchmark: optimal sticky assignment with different subscriptions, kassign vs kafka-python, same input.

Target (issue #3): 10,000 partitions (100 topics x 100), 500 members subscribing to random
subsets of topics, under 1.5 s for a fresh assignment and for the follow-up where ownership is
the previous result with a few members gone and a few new ones. kafka-python's
StickyPartitionAssignor runs on the same input in a subprocess with a time cap.

Three groups are measured: "random" (each member subscribes to a random-size random subset of
topics), "sparse" (1 to 4 topics each) and "skewed" (as sparse, but topic sizes vary from 1 to
199 partitions, about 10,000 in all, so the best spread is above 0). Prints a
table (time, spread = max-min partitions per member, partitions moved from their previous
owner) and writes a plot of the sorted per-member loads.

    python bench/bench_sticky_general.py [--kafka-timeout 120] [--out bench/out]
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from kassign.groups.classic.assignors.sticky.optimal import assign_general

# ---------------------------------------------------------------------------------------------
# Inputs


@dataclass
class Case:
    """One rebalance: member subscriptions (topic indexes) and the previous owner of each partition."""

    name: str
    counts: np.ndarray
    subs: list[np.ndarray]
    owners: list[np.ndarray]


def random_subscriptions(rng: np.random.Generator, members: int, topics: int, low: int, high: int) -> list[np.ndarray]:
    return [np.sort(rng.choice(topics, rng.integers(low, high + 1), replace=False)).astype(np.int32) for _ in range(members)]


def follow_up(rng: np.random.Generator, case: Case, result: list[np.ndarray], churn: int, low: int, high: int) -> Case:
    """The fresh result becomes ownership; ``churn`` members leave and ``churn`` new ones join."""
    members = len(case.subs)
    leaving = set(rng.choice(members, churn, replace=False).tolist())
    survivors = [m for m in range(members) if m not in leaving]
    new_index = np.full(members + 1, -1, np.int32)  # old index -> new index, -1 for "gone" (and for -1)
    new_index[survivors] = np.arange(len(survivors))
    subs = [case.subs[m] for m in survivors] + random_subscriptions(rng, churn, len(case.counts), low, high)
    owners = [new_index[r] for r in result]
    return Case(case.name.replace("fresh", "follow-up"), case.counts, subs, owners)


# ---------------------------------------------------------------------------------------------
# Measures


def loads_of(result: list[np.ndarray], members: int) -> np.ndarray:
    flat = np.concatenate(result)
    return np.bincount(flat[flat >= 0], minlength=members)


def moved_count(case: Case, result: list[np.ndarray]) -> int:
    """Partitions whose previous owner still subscribes to the topic but did not keep them."""
    total = 0
    for t, (owner, now) in enumerate(zip(case.owners, result)):
        rightful = np.array([o >= 0 and t in set(case.subs[o].tolist()) for o in owner.tolist()], bool)
        total += int((rightful & (owner != now)).sum())
    return total


def time_ours(case: Case, repeats: int) -> tuple[float, list[np.ndarray]]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = assign_general(case.counts, case.subs, case.owners)
        best = min(best, time.perf_counter() - start)
    return best, result


# ---------------------------------------------------------------------------------------------
# kafka-python, in a subprocess so it can be stopped


def kafka_python_worker(path: str) -> None:
    """Run kafka-python's StickyPartitionAssignor on the case in ``path``; print JSON."""
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.structs import TopicPartition

    doc = json.loads(Path(path).read_text())
    counts = doc["counts"]

    class Metadata:  # the two cluster-metadata calls the assignor makes
        def topics(self):
            return {f"t{t}" for t in range(len(counts))}

        def partitions_for_topic(self, topic):
            return set(range(counts[int(topic[1:])]))

    member = collections.namedtuple("Member", "member_id metadata")
    owned: dict[int, list] = collections.defaultdict(list)
    for t, topic_owners in enumerate(doc["owners"]):
        for p, m in enumerate(topic_owners):
            if m >= 0:
                owned[m].append(TopicPartition(f"t{t}", p))
    members = [
        member(
            f"m{m:04d}",
            StickyPartitionAssignor._metadata([f"t{t}" for t in subs], owned[m] if m in owned else None, 1),
        )
        for m, subs in enumerate(doc["subs"])
    ]
    start = time.perf_counter()
    assignment = StickyPartitionAssignor().assign(Metadata(), members)
    seconds = time.perf_counter() - start
    result = [[-1] * n for n in counts]
    for member_id, member_assignment in assignment.items():
        for topic, partitions in member_assignment.assignment:
            for p in partitions:
                result[int(topic[1:])][p] = int(member_id[1:])
    print(json.dumps({"seconds": seconds, "result": result}))


def time_kafka_python(case: Case, timeout: float) -> tuple[float | None, list[np.ndarray] | None]:
    doc = {
        "counts": case.counts.tolist(),
        "subs": [s.tolist() for s in case.subs],
        "owners": [o.tolist() for o in case.owners],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(doc, handle)
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--kafka-python-worker", handle.name],
            capture_output=True, text=True, timeout=timeout, check=True,
        )
    except subprocess.TimeoutExpired:
        return None, None
    finally:
        Path(handle.name).unlink(missing_ok=True)
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    return answer["seconds"], [np.array(r, np.int32) for r in answer["result"]]


# ---------------------------------------------------------------------------------------------
# Report


def plot_loads(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, (len(rows) + 1) // 2, figsize=(4.2 * ((len(rows) + 1) // 2), 6.8), squeeze=False)
    for ax, row in zip(axes.T.reshape(-1), rows):
        ax.plot(np.sort(row["our_loads"]), label=f"kassign (spread {row['our_spread']})")
        if row["kp_loads"] is not None:
            ax.plot(np.sort(row["kp_loads"]), label=f"kafka-python (spread {row['kp_spread']})", linestyle="--")
        ax.set_title(row["case"], fontsize=9)
        ax.set_xlabel("members, sorted by load")
        ax.set_ylabel("partitions")
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=100, help="partitions per topic")
    parser.add_argument("--members", type=int, default=500)
    parser.add_argument("--churn", type=int, default=5, help="members leaving and joining for the follow-up")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kafka-timeout", type=float, default=120.0, help="seconds before kafka-python is stopped")
    parser.add_argument("--skip-kafka-python", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    parser.add_argument("--kafka-python-worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.kafka_python_worker:
        kafka_python_worker(args.kafka_python_worker)
        return 0

    console = Console(width=150)
    start = time.perf_counter()
    assign_general(np.array([2, 1]), [np.array([0]), np.array([0, 1])], [np.array([-1, -1]), np.array([-1])])
    console.print(f"numba compile / cache load: {time.perf_counter() - start:.2f} s (excluded below)")

    uniform_counts = np.full(args.topics, args.partitions, np.int64)
    skewed_counts = np.random.default_rng(11).integers(1, 2 * args.partitions, args.topics)
    groups = {
        "random": (1, args.topics, uniform_counts),
        "sparse": (1, 4, uniform_counts),
        "skewed": (1, 3, skewed_counts),
    }
    rows = []
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("benchmarking", total=2 * len(groups) * (1 if args.skip_kafka_python else 2))
        for name, (low, high, counts) in groups.items():
            rng = np.random.default_rng(7)
            subs = random_subscriptions(rng, args.members, args.topics, low, high)
            fresh = Case(f"{name}, fresh", counts, subs, [np.full(n, -1, np.int32) for n in counts])
            fresh_result = None  # the follow-up starts from the fresh run's result
            for case in (fresh, None):
                if case is None:
                    case = follow_up(rng, fresh, fresh_result, args.churn, low, high)
                progress.update(task, description=f"kassign: {case.name}")
                seconds, result = time_ours(case, args.repeats)
                if case is fresh:
                    fresh_result = result
                progress.advance(task)
                row = {"case": case.name, "ours_s": seconds, "our_loads": loads_of(result, len(case.subs)),
                       "our_moved": moved_count(case, result), "kp_s": None, "kp_loads": None, "kp_moved": None}
                if not args.skip_kafka_python:
                    progress.update(task, description=f"kafka-python: {case.name}")
                    kp_seconds, kp_result = time_kafka_python(case, args.kafka_timeout)
                    progress.advance(task)
                    if kp_result is not None:
                        row.update(kp_s=kp_seconds, kp_loads=loads_of(kp_result, len(case.subs)),
                                   kp_moved=moved_count(case, kp_result))
                row["our_spread"] = int(np.ptp(row["our_loads"]))
                row["kp_spread"] = None if row["kp_loads"] is None else int(np.ptp(row["kp_loads"]))
                rows.append(row)

    table = Table(title=f"sticky, different subscriptions: {args.topics} topics, ~{args.topics * args.partitions} partitions, {args.members} members")
    for column in ("case", "kassign s", "spread", "moved", "sum sq", "kafka-python s", "spread", "moved", "sum sq"):
        table.add_column(column, justify="right")
    for row in rows:
        if row["kp_loads"] is not None:
            peer = [f"{row['kp_s']:.2f}", str(row["kp_spread"]), str(row["kp_moved"]), str(int((row["kp_loads"] ** 2).sum()))]
        elif args.skip_kafka_python:
            peer = ["skipped", "", "", ""]
        else:
            peer = [f"did not finish in {args.kafka_timeout:.0f} s", "", "", ""]
        table.add_row(row["case"], f"{row['ours_s']:.3f}", str(row["our_spread"]), str(row["our_moved"]),
                      str(int((row["our_loads"] ** 2).sum())), *peer)
    console.print(table)
    plot = args.out / "sticky_general_loads.png"
    plot_loads(rows, plot)
    console.print(f"plot: {plot}")
    slow = [r["case"] for r in rows if r["ours_s"] > 1.5]
    console.print("target (< 1.5 s each): " + ("met" if not slow else f"MISSED for {', '.join(slow)}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
