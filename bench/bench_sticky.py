"""Benchmark: sticky assignment of a big group with identical subscriptions, kassign vs Kafka and kafka-python.

1,000,000 partitions (500 topics x 2,000), 2,000 members, same subscriptions: the fresh
assignment, and the follow-up rebalance where every member re-joins owning its partitions
(eager: history in user data; cooperative: in the subscription). Issue #22's goal: the dict API
``kassign.assign`` at most 1x Kafka's Java assignor; issue #3's: fresh under 1 s, follow-up under
1.5 s, peak memory under 2 GiB.

    python bench/bench_sticky.py [--kafka-classpath 'kafka_2.13-3.9.0/libs/*'] [--runs 5]
                                 [--topics 500] [--partitions 2000] [--members 2000]
                                 [--kafka-python-timeout 60] [--plot sticky.png]

With ``--kafka-classpath`` Kafka's own StickyAssignor and CooperativeStickyAssignor run in a JVM
beside (``bench/kafka_java.py``), on the same scenario, one kassign run then one Kafka run, so both
see the same load; best and median are printed with the ratio. Without it the Kafka column says
so and a reference figure is printed as a note. Times are the leader's ``assign`` call end to end:
decoding every member's history, settling claims, assigning, and building the result objects
(``TopicPartition`` objects, or the dict API's tuples from the scenario dict). kafka-python is timed
in a subprocess with a time cap, on a small group (for a ratio) and on the full group (usually
"did not finish").

**The dict API's input is freshly parsed from JSON.** Each timed ``kassign.assign`` call gets the
scenario decoded afresh from its JSON text, serialised once beforehand: ``json.loads`` runs before
the clock starts, for every timed call (``kafka_java.FromJson``), so every member has its own topics
list and owned pairs of its own strings, as the CLI's JSON, a live describe and a user's own dicts
give them (a document built once in Python shares one list and one string per name among all
members, which identity shortcuts exploit). The assignor-class rows (``StickyAssignor.assign``) time
the classes on subscriptions built beforehand, as a leader holds them after decoding the JoinGroup.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from types import SimpleNamespace

from kafka_java import (
    NEEDS_CLASSPATH,
    FromJson,
    KafkaHarness,
    alternate,
    assignment_digest,
    ratio,
)
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

import kassign
from kassign.groups.classic.assignors.cooperative_sticky import CooperativeStickyAssignor
from kassign.groups.classic.assignors.eager_sticky import StickyAssignor
from kassign.core.cluster import Cluster


def group(topics: int, partitions: int, members: int):
    names = [f"topic-{i:04d}" for i in range(topics)]
    return Cluster({t: partitions for t in names}), names, [f"consumer-{i:05d}" for i in range(members)]


CPU_TIMES: dict[str, float] = {}  # case -> best process CPU time, shown beside wall time (the box may be shared)


def best_of(repeats: int, fn, case: str = ""):
    best, best_cpu, result = float("inf"), float("inf"), None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    CPU_TIMES[case] = best_cpu
    return best, result


def peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def kassign_cases(topics: int, partitions: int, members: int, repeats: int) -> dict[str, float]:
    """Fresh, eager follow-up (history in user data) and cooperative follow-up (history in the subscription)."""
    cluster, topic_names, member_names = group(topics, partitions, members)
    sticky, cooperative = StickyAssignor(), CooperativeStickyAssignor()
    fresh_subs = {m: sticky.subscription(topic_names) for m in member_names}
    fresh_time, fresh = best_of(repeats, lambda: sticky.assign(cluster, fresh_subs), "fresh")
    eager_subs = {
        m: sticky.subscription(topic_names, owned_partitions=fresh[m].partitions, generation=1) for m in member_names
    }
    eager_time, eager = best_of(repeats, lambda: sticky.assign(cluster, eager_subs), "follow-up (eager, user data)")
    assert all(eager[m].partitions == fresh[m].partitions for m in member_names), "follow-up moved partitions"
    coop_subs = {
        m: cooperative.subscription(topic_names, owned_partitions=fresh[m].partitions, generation=1)
        for m in member_names
    }
    coop_time, _ = best_of(repeats, lambda: cooperative.assign(cluster, coop_subs), "follow-up (cooperative)")
    return {"fresh": fresh_time, "follow-up (eager, user data)": eager_time, "follow-up (cooperative)": coop_time,
            "_subs": (cluster, eager_subs)}


# Kafka's own classes on this 2-core machine class (Kafka 4.0 trunk, JDK 17, warm JVM, best of 10
# alternating with kassign; not this run): shown only when no --kafka-classpath is given.
KAFKA_REFERENCE = {"fresh": "about 0.08-0.10 s", "follow-up (eager, user data)": "about 2.3 s",
                   "follow-up (cooperative)": "about 1.2 s"}


def scenario_document(cluster_topics: list[str], partitions: int, member_names: list[str],
                      owned: dict[str, list] | None = None) -> dict:
    """The group as a scenario document; with ``owned``, every member holds those partitions since generation 1."""
    members = {m: {"topics": cluster_topics} for m in member_names}
    if owned is not None:
        members = {m: {"topics": cluster_topics, "owned": [list(tp) for tp in owned[m]], "generation": 1}
                   for m in member_names}
    return {"topics": {t: partitions for t in cluster_topics}, "members": members}


def versus_kafka(topics: int, partitions: int, members: int, classpath: str | None, runs: int,
                 console: Console) -> Table:
    """kassign's dict API and assignor classes beside Kafka's Java assignors, alternating, on the big group."""
    cluster, topic_names, member_names = group(topics, partitions, members)
    sticky, cooperative = StickyAssignor(), CooperativeStickyAssignor()
    fresh_doc = scenario_document(topic_names, partitions, member_names)
    fresh = kassign.assign("sticky", fresh_doc)
    follow_doc = scenario_document(topic_names, partitions, member_names, owned=fresh)
    fresh_subs = {m: sticky.subscription(topic_names) for m in member_names}
    eager_subs = {m: sticky.subscription(topic_names, owned_partitions=fresh[m], generation=1) for m in member_names}
    coop_subs = {m: cooperative.subscription(topic_names, owned_partitions=fresh[m], generation=1)
                 for m in member_names}
    fresh_text, follow_text = json.dumps(fresh_doc), json.dumps(follow_doc)
    cases: list[tuple[str, str, dict, str, dict[str, Callable[[], object] | FromJson]]] = [
        ("fresh", "sticky", fresh_doc, fresh_text, {
            "kassign.assign (dict, fresh JSON)": FromJson(fresh_text, partial(kassign.assign, "sticky")),
            "StickyAssignor.assign": lambda: sticky.assign(cluster, fresh_subs)}),
        ("follow-up (eager, user data)", "sticky", follow_doc, follow_text, {
            "kassign.assign (dict, fresh JSON)": FromJson(follow_text, partial(kassign.assign, "sticky")),
            "StickyAssignor.assign": lambda: sticky.assign(cluster, eager_subs)}),
        ("follow-up (cooperative)", "cooperative-sticky", follow_doc, follow_text, {
            "kassign.assign (dict, fresh JSON)": FromJson(follow_text, partial(kassign.assign, "cooperative-sticky")),
            "CooperativeSticky.assign": lambda: cooperative.assign(cluster, coop_subs)}),
    ]
    table = Table(title=f"{topics * partitions:,} partitions, {members:,} members: kassign beside Kafka "
                        f"(best / median of {runs}, alternating)")
    for column in ("case", "implementation", "best s", "median s", "vs Kafka (best / median)"):
        table.add_column(column)
    agreement: list[str] = []
    for case, strategy, document, text, calls in cases:
        console.print(f"timing {case} ...")
        kafka = KafkaHarness(classpath, strategy, document) if classpath else None
        try:
            times = alternate(calls, kafka, runs)
            agrees = kafka.digest() == assignment_digest(kassign.assign(strategy, json.loads(text))) if kafka else None
        finally:
            if kafka is not None:
                kafka.close()
        kafka_times = times.pop("Kafka", None)
        for name, ours in times.items():
            versus = ratio(ours, kafka_times) if kafka_times else "-"
            table.add_row(case, name, f"{min(ours):.3f}", f"{statistics.median(ours):.3f}", versus)
        if kafka_times:
            agreement.append(f"{case}: {'the same assignment' if agrees else 'A DIFFERENT ASSIGNMENT'}")
            table.add_row(case, "Kafka (Java, this run)", f"{min(kafka_times):.3f}",
                          f"{statistics.median(kafka_times):.3f}", "1x")
        else:
            table.add_row(case, "Kafka (Java)", NEEDS_CLASSPATH, "", "")
            table.add_row(case, "  note: reference figure, not this run", KAFKA_REFERENCE[case], "", "")
    if agreement:
        table.caption = "kassign and Kafka give " + "; ".join(agreement)
    return table


def kafka_python_worker(topics: int, partitions: int, members: int) -> None:
    """Run in a subprocess: kafka-python's StickyPartitionAssignor, fresh then follow-up; prints JSON."""
    from kafka.coordinator.assignors.sticky.sticky_assignor import (
        StickyPartitionAssignor,
    )
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    from kassign.groups.classic.assignors.sticky.userdata import encode_sticky_user_data

    topic_names = [f"topic-{i:04d}" for i in range(topics)]
    all_partitions = set(range(partitions))
    cluster = SimpleNamespace(partitions_for_topic=lambda topic: all_partitions, topics=lambda: set(topic_names))

    def join(user_data):
        return [SimpleNamespace(member_id=f"consumer-{i:05d}",
                                metadata=ConsumerProtocolSubscription(0, topic_names, user_data(i)))
                for i in range(members)]

    start = time.perf_counter()
    fresh = StickyPartitionAssignor().assign(cluster, join(lambda i: b""))
    fresh_time = time.perf_counter() - start
    print(json.dumps({"fresh": fresh_time}), flush=True)
    # Our encoder's bytes are Kafka's format, so kafka-python reads them as a Java member's.
    owned = {m: [(tp.topic, tp.partition) for tp in a.partitions()] for m, a in fresh.items()}
    members_again = join(lambda i: encode_sticky_user_data(owned[f"consumer-{i:05d}"], 1))
    start = time.perf_counter()
    StickyPartitionAssignor().assign(cluster, members_again)
    print(json.dumps({"follow-up (eager, user data)": time.perf_counter() - start}), flush=True)


def kafka_python(topics: int, partitions: int, members: int, timeout: float) -> dict[str, float | str]:
    cmd = [sys.executable, __file__, "--kafka-python-worker", str(topics), str(partitions), str(members)]
    results: dict[str, float | str] = {}
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired as expired:
        out = (expired.stdout or b"").decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
    for line in out.splitlines():
        if line.startswith("{"):
            results.update(json.loads(line))
    for case in ("fresh", "follow-up (eager, user data)"):
        results.setdefault(case, f"did not finish in {timeout:.0f} s")
    return results


def plot(rows, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{who}\n{case}" for who, size, case, t in rows if isinstance(t, float)]
    values = [t for *_, t in rows if isinstance(t, float)]
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.barh(labels, values)
    ax.set_xscale("log")
    ax.set_xlabel("seconds (log scale)")
    ax.set_title("Sticky assignment, identical subscriptions")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--kafka-python-worker":
        kafka_python_worker(*map(int, sys.argv[2:]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=2000, help="partitions per topic")
    parser.add_argument("--members", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--small", default="20,100,100", help="topics,partitions,members where kafka-python can finish")
    parser.add_argument("--kafka-python-timeout", type=float, default=60.0, help="0 skips kafka-python")
    parser.add_argument("--kafka-classpath", help="Kafka's classes and their dependencies, as java -cp takes them "
                                                  "(e.g. 'kafka_2.13-3.9.0/libs/*'), to time Kafka in this run")
    parser.add_argument("--runs", type=int, default=5, help="alternating runs of each side on the big group")
    parser.add_argument("--plot", help="write a bar chart of the timings to this PNG")
    args = parser.parse_args()
    small = tuple(int(x) for x in args.small.split(","))
    big = (args.topics, args.partitions, args.members)

    console = Console(width=max(Console().width, 110))
    kassign_cases(2, 3, 2, repeats=1)  # load numba's compiled kernels outside the timings
    console.print(versus_kafka(*big, args.kafka_classpath, args.runs, console))
    rows: list[tuple[str, str, str, float | str]] = []
    peak = 0
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("benchmarking", total=5)
        for size in (small, big):
            label = f"{size[0] * size[1]:,} partitions, {size[2]:,} members"
            timings = kassign_cases(*size, repeats=args.repeats)
            cluster, eager_subs = timings.pop("_subs")
            rows += [("kassign", label, case, t) for case, t in timings.items()]
            rows += [("kassign (CPU time)", label, case, CPU_TIMES[case]) for case in timings]
            progress.advance(task)
            if size == big:
                peak = peak_bytes(lambda: StickyAssignor().assign(cluster, eager_subs))
                progress.advance(task)
            if args.kafka_python_timeout > 0:
                rows += [("kafka-python", label, case, t)
                         for case, t in kafka_python(*size, args.kafka_python_timeout).items()]
            progress.advance(task)

    table = Table(title="Sticky assignor, every member subscribed to every topic")
    for column in ("implementation", "group", "case", "time"):
        table.add_column(column)
    for who, label, case, t in rows:
        table.add_row(who, label, case, f"{t:.3f} s" if isinstance(t, float) else t)
    console.print(table)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    console.print(f"peak traced memory of one follow-up assign on the big group: {peak / 2**20:.0f} MiB "
                  f"(process max RSS {rss:.0f} MiB; target < 2048 MiB)")
    ours = {case: t for who, label, case, t in rows if who == "kassign" and label.startswith(f"{small[0] * small[1]:,}")}
    theirs = {case: t for who, label, case, t in rows if who == "kafka-python" and label.startswith(f"{small[0] * small[1]:,}")}
    for case, t in theirs.items():
        if isinstance(t, float):
            console.print(f"small group, {case}: kassign is {t / ours[case]:.0f}x faster than kafka-python")
    if args.plot:
        plot(rows, args.plot)
        console.print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
