"""replica -> broker: Kafka's replica placement for new topics and partitions.

This module's own rule is the legacy one (AdminUtils): ZooKeeper-era topic creation and
``kafka-reassign-partitions.sh --generate``. The KRaft controller's striped placer lives in
``kassign.replicas.striped``; ``assign_replicas(..., placer="striped")`` reaches it.

Rack-unaware (no broker has a rack). Brokers are taken in the order given. The
first replica of partition p sits on broker ``(p + start) % n``; the followers sit
at a shift from it that is the same for a whole lap of n partitions and grows by
one each lap, so followers of consecutive laps spread over different brokers.

Rack-aware (every broker has a rack). Brokers are first interleaved rack by rack
(racks sorted by name, brokers by id within a rack: r1b0, r2b0, r3b0, r1b1, ...),
then placed as above over that list, except that a follower is skipped while its
rack already holds a replica and some rack holds none, or its broker already
holds one and some broker holds none. Result: at most one replica per rack until
every rack has one.

Example (rack-unaware, brokers 0,1,2, 4 partitions, rf 2, start index 0)::

    0: [0, 1]   1: [1, 2]   2: [2, 0]   3: [0, 2]

Data layout: broker ids live in one list indexed by position; the placement loop
works on positions and small integer sets.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kassign.core.errors import KassignError, ReplicaPlacementError
from kassign.core.javarandom import JavaRandom, check_seed, random_seed
from kassign.core.limits import partition_budget, whole_number
from kassign.replicas.brokers import INT_MAX, Broker, normalise_brokers, normalise_striped_brokers
from kassign.replicas.striped import SHORT_MAX, SHORT_MIN, place_striped



def _replica_index(first: int, shift: int, replica: int, num_brokers: int) -> int:
    return (first + 1 + (shift + replica) % (num_brokers - 1)) % num_brokers


def rack_alternated_brokers(broker_racks: Mapping[int, str]) -> list[int]:
    """Brokers interleaved rack by rack: racks sorted by name, brokers by id within each rack."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker)
    queues = [sorted(by_rack[rack]) for rack in sorted(by_rack)]
    result: list[int] = []
    depth = 0
    while len(result) < len(broker_racks):
        result.extend(queue[depth] for queue in queues if depth < len(queue))
        depth += 1
    return result


def _check_request(brokers: Sequence[Broker], num_partitions: int, replication_factor: int) -> None:
    if num_partitions <= 0:
        raise ReplicaPlacementError("Number of partitions must be larger than 0.", "InvalidPartitionsException")
    if replication_factor <= 0:
        raise ReplicaPlacementError("Replication factor must be larger than 0.", "InvalidReplicationFactorException")
    if replication_factor > len(brokers):
        raise ReplicaPlacementError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.",
            "InvalidReplicationFactorException",
        )


def _request_numbers(partitions: Any, replication_factor: Any, start_index: Any,
                     start_partition: Any) -> tuple[int, int, int, int]:
    """The request's numbers as Java ints, checked before anything is allocated."""
    numbers = (whole_number(partitions, "partitions"), whole_number(replication_factor, "replication factor"),
               whole_number(start_index, "start index"), whole_number(start_partition, "start partition"))
    partition_budget(numbers[0], "replica placement")
    return numbers


PLACERS = ("legacy", "striped")


def assign_replicas(
    brokers: Iterable[Any],
    partitions: int,
    replication_factor: int,
    start_index: int = -1,
    start_partition: int = -1,
    *,
    placer: str = "legacy",
    seed: int | None = None,
) -> dict[int, list[int]]:
    """Replica lists per partition id, exactly as Kafka places them.

    ``placer="legacy"`` (the default) is Kafka's ``assignReplicasToBrokers`` (AdminUtils:
    ZooKeeper-era topic creation, and ``kafka-reassign-partitions.sh --generate``).
    ``brokers`` is ``[(id, rack_or_None), ...]`` in the order Kafka takes them, or a dict of
    id -> rack_or_None (its racks are used; a set is refused, having no order). A negative ``start_index`` means a
    random start (and random follower shift), as in Kafka; ``seed`` makes that
    reproducible.

    ``placer="striped"`` is the KRaft controller's striped placer (topic creation and
    partition addition on KRaft), see ``kassign.replicas.striped``. ``brokers`` is
    ``[(id, rack_or_None, fenced), ...]`` in the order the controller lists them (pairs
    mean unfenced), or a dict of id -> rack_or_None or id -> (rack_or_None, fenced); ``seed`` seeds its ``java.util.Random`` (a Java long; None draws a
    fresh one, as a controller would); ``start_index`` does not apply. ``start_partition``
    numbers the first new partition (-1 means 0) and does not change the placement;
    ``partitions`` may be 0.

    Raises ``ReplicaPlacementError`` (with Kafka's exception name) where Kafka refuses,
    ``KassignError`` for malformed input.
    """
    if placer == "striped":
        return _assign_striped(brokers, partitions, replication_factor, start_index, start_partition, seed)
    if placer != "legacy":
        raise KassignError(f"unknown replica placer {placer!r}; choose one of {', '.join(PLACERS)}")
    partitions, replication_factor, start_index, start_partition = _request_numbers(
        partitions, replication_factor, start_index, start_partition)
    broker_list = normalise_brokers(brokers)
    _check_request(broker_list, partitions, replication_factor)
    racks = [rack for _, rack in broker_list]
    rng = random.Random(seed)
    if all(rack is None for rack in racks):
        ids = [broker for broker, _ in broker_list]
        return _place(ids, partitions, replication_factor, start_index, start_partition, rng, None)
    if any(rack is None for rack in racks):
        raise ReplicaPlacementError(
            "Not all brokers have rack information for replica rack aware assignment.", "AdminOperationException"
        )
    broker_racks = {broker: rack for broker, rack in broker_list}
    arranged = rack_alternated_brokers(broker_racks)  # type: ignore[arg-type]
    return _place(arranged, partitions, replication_factor, start_index, start_partition, rng, broker_racks)


def _place(
    ids: list[int],
    num_partitions: int,
    replication_factor: int,
    fixed_start_index: int,
    start_partition: int,
    rng: random.Random,
    broker_racks: Mapping[int, str | None] | None,
) -> dict[int, list[int]]:
    n = len(ids)
    start = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    num_racks = len(set(broker_racks.values())) if broker_racks else 0
    result: dict[int, list[int]] = {}
    partition = max(0, start_partition)
    for _ in range(num_partitions):
        if partition > 0 and partition % n == 0:
            shift += 1
        first = (partition + start) % n
        if broker_racks is None:
            replicas = [ids[first]] + [ids[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1)]
        else:
            replicas = _rack_aware_replicas(ids, first, shift * num_racks, replication_factor, broker_racks, num_racks)
        result[partition] = replicas
        partition += 1
    return result


def _rack_aware_replicas(
    ids: list[int], first: int, shift: int, replication_factor: int, broker_racks: Mapping[int, Any], num_racks: int
) -> list[int]:
    n = len(ids)
    leader = ids[first]
    replicas = [leader]
    racks_used = {broker_racks[leader]}
    brokers_used = {leader}
    k = 0
    for _ in range(replication_factor - 1):
        while True:
            broker = ids[_replica_index(first, shift, k, n)]
            rack = broker_racks[broker]
            k += 1
            rack_ok = rack not in racks_used or len(racks_used) == num_racks
            broker_ok = broker not in brokers_used or len(brokers_used) == n
            if rack_ok and broker_ok:
                replicas.append(broker)
                racks_used.add(rack)
                brokers_used.add(broker)
                break
    return replicas


def _assign_striped(
    brokers: Iterable[Any],
    partitions: int,
    replication_factor: int,
    start_index: int,
    start_partition: int,
    seed: int | None,
) -> dict[int, list[int]]:
    partitions, replication_factor, start_index, start_partition = _request_numbers(
        partitions, replication_factor, start_index, start_partition)
    if start_index != -1:
        raise KassignError("start_index applies only to the legacy placer; the striped placer starts where its "
                           "random seed puts it")
    if not SHORT_MIN <= replication_factor <= SHORT_MAX:
        raise KassignError(f"replication factor must fit a 16-bit integer, as in Kafka's requests "
                           f"({SHORT_MIN} .. {SHORT_MAX}), got {replication_factor}")
    if partitions < 0:
        raise KassignError(f"partitions must be 0 or more, got {partitions}")
    if start_partition < -1:
        raise KassignError(f"start partition must be 0 or more (-1 means 0), got {start_partition}")
    first = max(0, start_partition)
    if first + partitions - 1 > INT_MAX:
        raise KassignError(f"partition ids must stay below 2^31; {partitions} partitions from {first} do not")
    broker_list = normalise_striped_brokers(brokers)
    rng = JavaRandom(random_seed() if seed is None else check_seed(seed))
    placements = place_striped(broker_list, partitions, replication_factor, rng)
    return {first + i: replicas for i, replicas in enumerate(placements)}


TOPIC_NAME_MAX = 249
_TOPIC_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def check_topic_name(topic: Any) -> str:
    """Kafka's rule for topic names: 1 to 249 characters of ASCII letters, digits, '.', '_' and '-',
    and not '.' or '..'. Kafka refuses any other name, so a file naming one would fail there."""
    if not isinstance(topic, str) or not topic:
        raise KassignError(f"a topic name must be a non-empty string, got {topic!r}")
    if topic in (".", ".."):
        raise KassignError(f"topic name {topic!r} is not allowed by Kafka")
    if len(topic) > TOPIC_NAME_MAX:
        raise KassignError(f"topic name of {len(topic)} characters is longer than Kafka allows ({TOPIC_NAME_MAX})")
    bad = sorted(set(topic) - _TOPIC_CHARACTERS)
    if bad:
        shown = "".join(bad).encode("unicode_escape").decode("ascii")
        raise KassignError(f"topic name {topic.encode('unicode_escape').decode('ascii')!r} has characters Kafka "
                           f"refuses ({shown!r}); use ASCII letters, digits, '.', '_' and '-'")
    return topic


def reassignment_json(topic: str, assignment: Mapping[int, Sequence[int]]) -> dict[str, Any]:
    """The document ``kafka-reassign-partitions.sh --execute --reassignment-json-file`` reads."""
    check_topic_name(topic)
    return {
        "version": 1,
        "partitions": [
            {"topic": topic, "partition": partition, "replicas": list(replicas)}
            for partition, replicas in sorted(assignment.items())
        ],
    }


