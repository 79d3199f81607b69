"""The replication throttle of a reassignment, as Kafka's ``kafka-reassign-partitions.sh --throttle`` sets it.

A throttle has two halves. On each topic with a moving partition, two replica lists say which replicas the
throttle applies to, as ``partition:broker`` items joined by commas:

- ``leader.replication.throttled.replicas``: every *source* of every moving partition, the replicas it has now
  (those the new replicas may copy from);
- ``follower.replication.throttled.replicas``: every *destination*, a broker of the target that is not a source
  (the replicas being built).

On every broker that is a source or a destination of some moving partition (the *reassigning* brokers), the rate
``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate``, both the given bytes per second.

The moving partitions are the reassignments already running on the cluster (their sources: the replicas listed
minus those being added; their destinations: those being added) together with the ones being started (sources: the
current replicas, or, for a partition already being reassigned, that reassignment's sources; destinations: the
target minus the sources). A partition in the request whose replica set does not change still counts, with its
replicas as sources and no destination. Items are sorted as text (so ``10:1`` comes before ``2:1``), each topic's
two lists are set together in one change (a topic whose follower list is empty gets it set to the empty text), and
the whole lists are SET, replacing what was there: a later batch sets the lists of everything running then.

Removing it (when the last move is done, or on cancel): DELETE both lists on the plan's topics and both rates on the
brokers where they were set. (Kafka's tool also deletes ``replica.alter.log.dirs.io.max.bytes.per.second`` on every
broker of the cluster; kassign never sets that one and leaves it alone.)

Worked example (the moves of kafka-reassign-partitions.sh ``--throttle 100000`` on a 3-broker cluster): kc-move 0
[1, 2] -> [3, 2], 1 [2, 3] -> [1, 3], 2 [3, 1] -> [2, 1], nothing else running. Sources 0: {1, 2}, 1: {2, 3},
2: {3, 1}; destinations 0: {3}, 1: {1}, 2: {2}. So kc-move gets leader list ``0:1,0:2,1:2,1:3,2:1,2:3`` and
follower list ``0:3,1:1,2:2``, and brokers 1, 2 and 3 get both rates = 100000.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kassign.core.errors import KassignError

LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
TOPIC_CONFIGS = (LEADER_REPLICAS, FOLLOWER_REPLICAS)
BROKER_CONFIGS = (LEADER_RATE, FOLLOWER_RATE)

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class Running:
    """A reassignment running on the cluster, as ListPartitionReassignments lists it."""

    topic: str
    partition: int
    replicas: tuple[int, ...]  # the target, then those being removed
    adding: tuple[int, ...]
    removing: tuple[int, ...] = ()


@dataclass
class Throttle:
    """What to SET: per topic its two replica lists, per broker its two rates."""

    topics: dict[str, tuple[str, str]] = field(default_factory=dict)  # topic -> (leader list, follower list)
    brokers: list[int] = field(default_factory=list)
    rate: int = 0

    def changes(self) -> list[tuple[str, str, list[tuple[str, str]]]]:
        """``[(kind, name, [(config, value)])]``, kind "topic" or "broker": topics first (as Kafka's tool sets
        them), each topic's two lists, then each broker's two rates."""
        out: list[tuple[str, str, list[tuple[str, str]]]] = [
            ("topic", topic, [(LEADER_REPLICAS, leader), (FOLLOWER_REPLICAS, follower)])
            for topic, (leader, follower) in self.topics.items()]
        out += [("broker", str(b), [(LEADER_RATE, str(self.rate)), (FOLLOWER_RATE, str(self.rate))])
                for b in self.brokers]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"rate": self.rate, "brokers": self.brokers,
                "topics": {t: {LEADER_REPLICAS: lead, FOLLOWER_REPLICAS: follow}
                           for t, (lead, follow) in self.topics.items()}}


def check_rate(rate: Any) -> int:
    """A throttle in bytes per second: a whole number above 0 (one line otherwise)."""
    if isinstance(rate, bool) or not isinstance(rate, int) or rate <= 0:
        raise KassignError(f"--throttle must be a whole number of bytes per second above 0, got {rate!r}")
    return rate


def move_map(running: Iterable[Running], starting: Mapping[TopicPartition, Sequence[int]],
             current: Mapping[TopicPartition, Sequence[int]]) -> dict[str, dict[int, tuple[set[int], set[int]]]]:
    """topic -> partition -> (sources, destinations): the running reassignments, then those starting (see the
    module's rule)."""
    moves: dict[str, dict[int, tuple[set[int], set[int]]]] = {}
    for r in running:
        sources = set(r.replicas) - set(r.adding)
        moves.setdefault(r.topic, {})[r.partition] = (sources, set(r.adding))
    for (topic, partition), target in starting.items():
        parts = moves.setdefault(topic, {})
        if partition in parts:
            sources = set(parts[partition][0])
        elif (topic, partition) in current:
            sources = set(current[(topic, partition)])
        else:
            raise KassignError(f"{topic}-{partition} has no current replicas to move from")
        parts[partition] = (sources, set(target) - sources)
    return moves


def throttle_for(running: Iterable[Running], starting: Mapping[TopicPartition, Sequence[int]],
                 current: Mapping[TopicPartition, Sequence[int]], rate: int) -> Throttle:
    """The throttle Kafka's tool sets when ``starting`` (partition -> target replicas) is started while ``running``
    runs, at ``rate`` bytes per second."""
    rate = check_rate(rate)
    moves = move_map(running, starting, current)
    topics: dict[str, tuple[str, str]] = {}
    brokers: set[int] = set()
    for topic in sorted(moves):
        leader: set[str] = set()
        follower: set[str] = set()
        for partition, (sources, destinations) in moves[topic].items():
            leader.update(f"{partition}:{b}" for b in sources)
            follower.update(f"{partition}:{b}" for b in destinations if b not in sources)
            brokers.update(sources)
            brokers.update(destinations)
        topics[topic] = (",".join(sorted(leader)), ",".join(sorted(follower)))
    return Throttle(topics, sorted(brokers), rate)


def removal(topics: Iterable[str], brokers: Iterable[int]) -> list[tuple[str, str, list[str]]]:
    """``[(kind, name, [config to DELETE])]``: both replica lists on each topic, both rates on each broker."""
    return ([("topic", t, list(TOPIC_CONFIGS)) for t in sorted(set(topics))]
            + [("broker", str(b), list(BROKER_CONFIGS)) for b in sorted(set(brokers))])
