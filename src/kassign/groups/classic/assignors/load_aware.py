"""LoadAwareAssignor: balance measured load (bytes) per member, not partition counts, and stay sticky.

Rule. Every partition has a weight (its measured load, e.g. bytes per second; the
leader's assignor is built with ``partition_loads``). Every member has a capacity
(default 1; a member announces its own in its subscription user data). A member's
fair share is ``total load x its capacity / sum of capacities``.

1. Sticky: a member keeps the partitions it owned (heaviest first) while its load
   stays within ``(1 + tolerance) x`` its fair share; a member keeps at least one
   owned partition even if that one alone is heavier. When two members claim one
   partition, the higher generation wins (KIP-341).
2. Balance: every other partition, heaviest first, goes to the subscribed member
   whose ``(load + weight) / capacity`` would be smallest; ties go to the member
   with fewer partitions, then to the first in Kafka's member order.
3. Refine: while the busiest member can hand one of the partitions placed in step 2
   to another subscriber, or swap it for a lighter one placed in step 2, so that
   both end below its current load and neither below the group's least busy member,
   the best such move is made. Kept partitions never move in this step.

Example. Members C0 and C1 subscribe to t0, whose 4 partitions weigh [8, 4, 2, 2]::

    range:       C0: [t0p0, t0p1] = 12    C1: [t0p2, t0p3] = 4
    load-aware:  C0: [t0p0]       = 8     C1: [t0p1, t0p2, t0p3] = 8

If C0 then owned [t0p0, t0p1] (fair share 8, limit 8.8 with tolerance 0.1), it keeps
t0p0 and gives up t0p1, ending in the same balanced assignment.

User data. This assignor's subscription user data is UTF-8 JSON,
``{"capacity": 2.0, "owned": [["t0", 1]], "generation": 5}``; ownership travels in it so
that stickiness survives the eager protocol, which revokes everything before rejoining.
User data that is not such JSON, or a capacity that is not a positive number, is
ignored with a logged warning (capacity 1, ownership from the subscription), never fatal.

Data layout: partitions are indexes into numpy weight arrays and members indexes into
load/capacity arrays; the balancing loop touches integers and floats only.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kassign.groups.classic.assignors.base import (
    PartitionCounts,
    PartitionLists,
    Subscriptions,
    AbstractPartitionAssignor,
    Subscription,
    TopicPartition,
    members_in_kafka_order,
)
from kassign.core.cluster import Cluster
from kassign.groups.classic.assignors import options
from kassign.core.errors import KassignError

log = logging.getLogger(__name__)

DEFAULT_TOLERANCE = 0.1


def _positive_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def encode_user_data(capacity: float, owned: Sequence[TopicPartition], generation: int) -> bytes:
    """The user data a member of this strategy sends: capacity, owned partitions, generation."""
    doc = {"capacity": capacity, "owned": [[tp[0], tp[1]] for tp in owned], "generation": generation}
    return json.dumps(doc, separators=(",", ":")).encode("utf-8")


def decode_user_data(member: str, user_data: bytes) -> tuple[float, list[TopicPartition] | None, int | None]:
    """(capacity, owned or None, generation or None); anything malformed is ignored with a warning."""
    if not user_data:
        return 1.0, None, None
    if not isinstance(user_data, (bytes, bytearray, memoryview)):
        log.warning("member %s: ignoring load-aware user data that is not bytes (%s)", member, type(user_data).__name__)
        return 1.0, None, None
    try:
        doc = json.loads(bytes(user_data).decode("utf-8"))
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
    except (UnicodeDecodeError, ValueError) as err:
        log.warning("member %s: ignoring unreadable load-aware user data (%s)", member, err)
        return 1.0, None, None
    capacity = doc.get("capacity", 1.0)
    if not _positive_number(capacity):
        log.warning("member %s: ignoring capacity %r (must be a positive number); using 1", member, capacity)
        capacity = 1.0
    owned: list[TopicPartition] | None = None
    raw_owned = doc.get("owned")
    if raw_owned is not None:
        if isinstance(raw_owned, list) and all(
            isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
            and isinstance(pair[1], int) and not isinstance(pair[1], bool) for pair in raw_owned
        ):
            owned = [TopicPartition(t, p) for t, p in raw_owned]
        else:
            log.warning("member %s: ignoring malformed owned partitions in user data", member)
    generation = doc.get("generation")
    if not isinstance(generation, int) or isinstance(generation, bool):
        generation = None
    return float(capacity), owned, generation


def _flatten_loads(partition_loads: Mapping[Any, Any]) -> list[tuple[TopicPartition, Any]]:
    """Both accepted shapes of ``partition_loads`` as ((topic, partition), load) pairs."""
    pairs: list[tuple[TopicPartition, Any]] = []
    for key, value in partition_loads.items():
        if isinstance(key, str) and isinstance(value, (list, tuple)):
            pairs.extend((TopicPartition(key, p), load) for p, load in enumerate(value))
        elif isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int):
            pairs.append((TopicPartition(key[0], key[1]), value))
        else:
            raise KassignError(
                f"partition_loads: {key!r} -> {value!r} is neither (topic, partition) -> load "
                "nor topic -> [load per partition]"
            )
    return pairs


class LoadAwareAssignor(AbstractPartitionAssignor):
    name = "load-aware"

    def __init__(
        self,
        partition_loads: Mapping[Any, float] | None = None,
        capacity: float = 1.0,
        tolerance: float = DEFAULT_TOLERANCE,
        default_load: float = 0.0,
    ) -> None:
        """``partition_loads``: ``{(topic, partition): load}``, or ``{topic: [load of partition 0, 1, ...]}``
        (the JSON-friendly form, e.g. ``-o 'partition_loads={"t0": [8, 4]}'`` on the command line);
        partitions not listed weigh ``default_load``.

        Without any loads every partition weighs 1, which balances partition counts.
        ``capacity`` is this member's own, announced in its user data.
        """
        self.capacity = options.number(self.name, "capacity", capacity, positive=True)
        self.tolerance = options.number(self.name, "tolerance", tolerance)
        default = options.number(self.name, "default_load", default_load)
        if partition_loads is not None and not isinstance(partition_loads, Mapping):
            raise KassignError(f"load-aware option partition_loads takes an object of (topic, partition) -> load "
                               f"or topic -> [load per partition], got {partition_loads!r}")
        self.loads: dict[TopicPartition, float] = {}
        for tp, load in _flatten_loads(partition_loads or {}):
            self.loads[tp] = options.number(self.name, f"partition_loads ({tp[0]}-{tp[1]})", load)
        self.default_load = default if partition_loads else 1.0

    def subscription_user_data(self, topics: Sequence[str], owned_partitions: Sequence[TopicPartition],
                               generation: int) -> bytes:
        return encode_user_data(self.capacity, owned_partitions, generation)

    def assign_partitions(self, partitions_per_topic: PartitionCounts, subscriptions: Subscriptions,
                          cluster: Cluster) -> PartitionLists:
        members = members_in_kafka_order(subscriptions)
        partitions = [TopicPartition(t, p) for t in sorted(partitions_per_topic) for p in range(partitions_per_topic[t])]
        index_of = {tp: i for i, tp in enumerate(partitions)}
        weights = np.array([self.loads.get(tp, self.default_load) for tp in partitions], dtype=np.float64)
        topic_of = [tp.topic for tp in partitions]

        capacities = np.ones(len(members), dtype=np.float64)
        claims: dict[int, tuple[int, int]] = {}  # partition index -> (generation, member index)
        for m, member in enumerate(members):
            sub = subscriptions[member]
            capacity, owned, generation = decode_user_data(member, sub.user_data)
            capacities[m] = capacity
            owned = list(sub.owned_partitions) if owned is None else owned
            generation = sub.generation if generation is None else generation
            subscribed = set(sub.topics)
            for tp in owned:
                i = index_of.get(TopicPartition(tp[0], tp[1]))
                if i is None or topic_of[i] not in subscribed:
                    continue  # a partition that no longer exists, or a topic it left
                if i not in claims or generation > claims[i][0]:
                    claims[i] = (generation, m)

        owner = np.full(len(partitions), -1, dtype=np.int64)
        load = np.zeros(len(members), dtype=np.float64)
        count = np.zeros(len(members), dtype=np.int64)
        limits = weights.sum() * capacities / capacities.sum() * (1 + self.tolerance) if members else capacities
        self._keep_owned(claims, weights, owner, load, count, limits)
        kept = owner >= 0
        eligible = self._eligible(members, subscriptions, topic_of)
        self._balance_rest(eligible, topic_of, weights, capacities, owner, load, count)
        self._refine(eligible, topic_of, weights, capacities, owner, load, kept)

        out: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
        for i, m in enumerate(owner):
            if m >= 0:
                out[members[m]].append(partitions[i])
        return out

    @staticmethod
    def _keep_owned(claims: Mapping[int, tuple[int, int]], weights: np.ndarray, owner: np.ndarray,
                    load: np.ndarray, count: np.ndarray, limits: np.ndarray) -> None:
        # Heaviest first, so a member keeps as many bytes as its limit allows (fewer bytes move).
        for i in sorted(claims, key=lambda i: (-weights[i], i)):
            m = claims[i][1]
            if count[m] == 0 or load[m] + weights[i] <= limits[m] + 1e-9 * limits[m]:
                owner[i] = m
                load[m] += weights[i]
                count[m] += 1

    @staticmethod
    def _eligible(members: list[str], subscriptions: Mapping[str, Subscription],
                  topic_of: list[str]) -> dict[str, np.ndarray]:
        """Topic -> indexes of the members subscribing to it."""
        return {topic: np.array([m for m, member in enumerate(members) if topic in subscriptions[member].topics],
                                dtype=np.int64) for topic in set(topic_of)}

    @staticmethod
    def _balance_rest(eligible: Mapping[str, np.ndarray], topic_of: list[str], weights: np.ndarray,
                      capacities: np.ndarray, owner: np.ndarray, load: np.ndarray, count: np.ndarray) -> None:
        free = np.flatnonzero(owner < 0)
        for i in free[np.lexsort((free, -weights[free]))]:
            candidates = eligible[topic_of[i]]
            if candidates.size == 0:
                continue
            after = (load[candidates] + weights[i]) / capacities[candidates]
            # lexsort's last key is primary: projected load, then partition count, then member order.
            best = candidates[np.lexsort((candidates, count[candidates], after))[0]]
            owner[i] = best
            load[best] += weights[i]
            count[best] += 1

    @staticmethod
    def _refine(eligible: Mapping[str, np.ndarray], topic_of: list[str], weights: np.ndarray, capacities: np.ndarray,
                owner: np.ndarray, load: np.ndarray, kept: np.ndarray, max_rounds: int | None = None) -> None:
        """Greedy placement can leave the busiest member above what one move or swap would fix; fix that."""
        if len(load) == 0:  # no members: nothing to refine
            return
        movable = ~kept & (owner >= 0)
        # Each round lowers the busiest member's load; the cap bounds the cost on huge groups.
        rounds = max_rounds if max_rounds is not None else min(4 * int(movable.sum()) + 1, 500)
        for _ in range(rounds):
            relative = load / capacities
            busiest = int(np.argmax(relative))
            ceiling, floor = relative[busiest], relative.min()
            best_gain, best_move = 1e-12 * max(ceiling, 1.0), None
            for i in np.flatnonzero(movable & (owner == busiest)):
                others = eligible[topic_of[i]]
                others = others[others != busiest]
                if others.size == 0:
                    continue
                # Hand partition i over (j = -1) or swap it for a lighter movable j of the same topic's subscribers.
                swaps = np.flatnonzero(movable & np.isin(owner, others) & (weights < weights[i]))
                if swaps.size:  # the busiest member must subscribe to what it takes back
                    swaps = swaps[[busiest in eligible[topic_of[j]] for j in swaps]]
                targets = np.concatenate([others, owner[swaps]])
                deltas = np.concatenate([np.full(others.size, weights[i]), weights[i] - weights[swaps]])
                picks = np.concatenate([np.full(others.size, -1), swaps])
                new_busiest = (load[busiest] - deltas) / capacities[busiest]
                new_target = (load[targets] + deltas) / capacities[targets]
                worst = np.maximum(new_busiest, new_target)
                ok = (worst < ceiling) & (np.minimum(new_busiest, new_target) >= floor)
                if not ok.any():
                    continue
                gain = np.where(ok, ceiling - worst, -np.inf)
                k = int(np.argmax(gain))
                if gain[k] > best_gain:
                    best_gain, best_move = gain[k], (int(i), int(targets[k]), int(picks[k]), float(deltas[k]))
            if best_move is None:
                return
            i, target, j, delta = best_move
            owner[i] = target
            if j >= 0:
                owner[j] = busiest
            load[busiest] -= delta
            load[target] += delta
