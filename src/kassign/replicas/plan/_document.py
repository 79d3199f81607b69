"""From arrays back to documents: replica order, the plan JSON, batches, and Kafka's --generate.

(topic, partition) names are materialised only here, at the edge.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kassign.core.javarandom import JavaRandom
from kassign.core.releases import (ADMIN_UTILS, DEFAULT_KAFKA_VERSION, REASSIGN_GENERATE, STRIPED_MESSAGES,
                                   KafkaRelease, release_for, rule)
from kassign.replicas.plan._model import Problem
from kassign.replicas.placement import assign_replicas
from kassign.replicas.striped import place_striped


@njit(cache=True)
def order_replicas(current, final, leader, rf):
    """Replica lists: the leader first, then the other replicas in their current order, a new
    replica taking the place of the one it replaces (new ones in ascending id order).

    ``current``/``final``: broker ids (P x W, -1 padding); ``leader``: broker id per partition.
    """
    P, W = final.shape
    out = np.full((P, W), -1, np.int64)
    fresh = np.empty(W, np.int64)
    middle = np.empty(W, np.int64)
    for p in range(P):
        r = rf[p]
        k = 0
        for j in range(W):
            b = final[p, j]
            if b < 0:
                continue
            seen = False
            for i in range(r):
                if current[p, i] == b:
                    seen = True
            if not seen:
                fresh[k] = b
                k += 1
        fresh[:k].sort()
        used = 0
        for i in range(r):
            c = current[p, i]
            stays = False
            for j in range(W):
                if final[p, j] == c and c >= 0:
                    stays = True
            if stays:
                middle[i] = c
            else:
                middle[i] = fresh[used]
                used += 1
        out[p, 0] = leader[p]
        at = 1
        for i in range(r):
            if middle[i] != leader[p]:
                out[p, at] = middle[i]
                at += 1
    return out


def document(problem: Problem, replicas: np.ndarray, rows: np.ndarray | None = None) -> dict:
    """The reassignment JSON for ``rows`` (default: every partition, in the input's order)."""
    index = range(problem.num_partitions) if rows is None else rows
    lists = replicas.tolist()
    return {"version": 1, "partitions": [
        {"topic": problem.topics[problem.topic_of[i]], "partition": int(problem.partition_of[i]),
         "replicas": [b for b in lists[i] if b >= 0]}
        for i in index]}


def changed_rows(current: np.ndarray, proposed: np.ndarray) -> np.ndarray:
    width = max(current.shape[1], proposed.shape[1])
    return np.flatnonzero((_pad(current, width) != _pad(proposed, width)).any(axis=1))


def _pad(a: np.ndarray, width: int) -> np.ndarray:
    if a.shape[1] == width:
        return a
    return np.concatenate([a, np.full((a.shape[0], width - a.shape[1]), -1, a.dtype)], axis=1)


def moved_per_partition(current: np.ndarray, proposed: np.ndarray) -> np.ndarray:
    """Replicas of each partition on a broker that did not hold it."""
    new = (proposed[:, :, None] != current[:, None, :]).all(axis=2) & (proposed >= 0)
    return new.sum(axis=1)


def split_batches(problem: Problem, proposed: np.ndarray, count: int) -> list[np.ndarray]:
    """Changed partitions split into ``count`` steps; each step lists full, valid replica lists
    (the final ones), so each is a reassignment Kafka can run on its own, in any state the
    earlier steps left. Greedily, largest first: each partition joins the step where its brokers
    carry the least traffic so far, so each broker's moves (replicas, or bytes with sizes) spread
    over the steps and the steps come out about even, which suits one throttle for all."""
    rows = changed_rows(problem.current, proposed)
    if count <= 1 or len(rows) == 0:
        return [rows]
    moved = moved_per_partition(problem.current, proposed)
    weight = np.asarray(moved * problem.sizes if problem.sizes is not None else moved, np.int64)
    brokers = np.unique(np.concatenate([problem.current[problem.current >= 0], proposed[proposed >= 0]]))
    code = {int(b): i for i, b in enumerate(brokers)}
    traffic = np.zeros((count, len(brokers)), np.int64)
    totals = np.zeros(count, np.int64)
    members: list[list[int]] = [[] for _ in range(count)]
    order = rows[np.lexsort((rows, -weight[rows], -moved[rows]))]
    cur, new = problem.current.tolist(), proposed.tolist()
    for i in order.tolist():
        before = {b for b in cur[i] if b >= 0}
        after = {b for b in new[i] if b >= 0}
        touched = [code[b] for b in (after - before) | (before - after)]
        w = max(int(weight[i]), 1)
        if touched:  # the step whose brokers carry least so far, then the lightest step
            busy = traffic[:, touched].sum(axis=1)
            step = min(range(count), key=lambda k: (busy[k], totals[k], k))
        else:  # a leader change only
            step = min(range(count), key=lambda k: (len(members[k]), k))
        members[step].append(i)
        traffic[step, touched] += w
        totals[step] += w
    return [np.array(sorted(m), np.int64) for m in members if m]


def kafka_generate(problem: Problem, seed: int = 0, kafka_version: str | None = None) -> np.ndarray:
    """What ``kafka-reassign-partitions.sh --generate`` of ``kafka_version`` (default the newest, 4.4) proposes
    for these topics and brokers.

    Kafka places each topic from scratch over the target brokers: as many partitions as the topic lists, the
    replication factor of its first listed partition, placement i to the topic's i-th partition number in
    ascending order (Kafka numbers them 0..n-1, the same thing whenever the document lists them all). Which
    placer depends on the release (:func:`generate_placer`): 3.0 to 4.0 AdminUtils from a random start (here
    ``seed`` + the topic's position, so runs repeat); 4.1 and later (KAFKA-18798) the KRaft controller's striped
    placer with every broker unfenced and one ``java.util.Random`` for the whole run (here seeded with
    ``seed``, the topics taken in the order the document lists them; Kafka's is unseeded).
    """
    placer, release = generate_placer(kafka_version)
    brokers = [(int(b), r) for b, r in zip(problem.targets.tolist(), problem.target_racks)]
    width = max(problem.current.shape[1], 1)
    firsts: dict[int, int] = {}
    for i, t in enumerate(problem.topic_of.tolist()):
        firsts.setdefault(t, i)
    rf_kafka = {t: int(problem.rf[i]) for t, i in firsts.items()}
    width = max(width, max(rf_kafka.values()))
    result = np.full((problem.num_partitions, width), -1, np.int64)
    rng = JavaRandom(seed) if placer == "striped" else None
    striped_brokers = [(b, r, False) for b, r in brokers]
    for position, (t, _) in enumerate(sorted(firsts.items(), key=lambda item: item[1])):
        rows = np.flatnonzero(problem.topic_of == t)
        rows = rows[np.argsort(problem.partition_of[rows], kind="stable")]
        if rng is not None:
            lists = place_striped(striped_brokers, len(rows), rf_kafka[t], rng, rule(release, STRIPED_MESSAGES))
        else:
            placement = assign_replicas(brokers, len(rows), rf_kafka[t], seed=seed + position, placer="legacy",
                                        kafka_version=release.label)
            lists = [placement[k] for k in range(len(rows))]
        for k, row in enumerate(rows.tolist()):
            replicas = lists[k]
            result[row, : len(replicas)] = replicas
    return result


def generate_placer(kafka_version: str | None = None) -> tuple[str, KafkaRelease]:
    """``("legacy" | "striped", release)``: the placer ``kafka-reassign-partitions.sh --generate`` of
    ``kafka_version`` (default the newest, 4.4) proposes with (the release table's ``REASSIGN_GENERATE``)."""
    release = release_for(DEFAULT_KAFKA_VERSION if kafka_version is None else kafka_version, "classic")
    return ("legacy" if rule(release, REASSIGN_GENERATE) == ADMIN_UTILS else "striped"), release


def generate_words(kafka_version: str | None, seed: int) -> str:
    """One line for the plan's notes: which release's --generate the comparison is, with which placer."""
    placer, release = generate_placer(kafka_version)
    if placer == "legacy":
        how = "AdminUtils, each topic from a random start"
    else:
        how = "the striped placer (KAFKA-18798, 4.1 and later), one random generator for the run"
    return f"Kafka --generate as Kafka {release.label} runs it: {how} (--kafka-seed {seed})"
