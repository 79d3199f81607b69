"""replica -> broker: Kafka's replica placement for new topics and partitions, per Kafka release.

This module's own rule is the legacy one (AdminUtils): ZooKeeper-mode topic creation and, up to
Kafka 4.0, ``kafka-reassign-partitions.sh --generate``. The KRaft controller's striped placer lives in
``kassign.replicas.striped``; ``assign_replicas(..., placer="striped")`` reaches it.

Which release does what (``kafka_version``; facts of each release's AdminUtils and StripedReplicaPlacer):

- AdminUtils places alike in every release that has it, 3.0 to 4.0, with the same refusals (the class
  moved from Scala to Java in 3.6 and checked the racks at another point in 3.9, with the same result).
  3.x creates topics with it on ZooKeeper-mode clusters; 4.0 has no ZooKeeper mode, but its
  ``kafka-reassign-partitions.sh --generate`` still proposes with it. From 4.1 (KAFKA-18798) that tool
  uses the striped placer too, and AdminUtils is gone: asking ``placer="legacy"`` of 4.1 or later is a
  one-line error that says so, since no part of those releases places replicas this way and an answer
  labelled with them would mislead.
- The striped placer places alike in every release from 3.0 to 4.4; 3.0 to 3.2 had KRaft as early
  access only (the answer says so); two of its refusals read differently from 4.3.0 on (KAFKA-19774).
- Without ``placer``, the release decides: a 3.x release means AdminUtils (its ZooKeeper mode, and what
  its ``--generate`` proposes), a 4.x release the striped placer (how its controller creates topics).
  Without ``kafka_version`` either, the call answers with AdminUtils as it always has (the documented
  ``assign_replicas(brokers, partitions, replication_factor, start_index=-1, start_partition=-1)``), as
  Kafka 3.9, the newest release with ZooKeeper mode; with ``placer="striped"`` alone, as 4.4.

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

Example (rack-unaware, brokers 0,1,2, 4 partitions, rf 2, start index 0; any release from 3.0 to 4.0)::

    0: [0, 1]   1: [1, 2]   2: [2, 0]   3: [0, 2]

Data layout: broker ids live in one list indexed by position; the placement loop
works on positions and small integer sets.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kassign.core.errors import KassignError, ReplicaPlacementError, shown
from kassign.core.releases import (ADMIN_UTILS, DEFAULT_KAFKA_VERSION, KAFKA_18798, KRAFT, KRAFT_EARLY_ACCESS,
                                   PLACEMENT, REASSIGN_GENERATE, STRIPED_MESSAGES, ZOOKEEPER_OR_KRAFT, KafkaRelease,
                                   UnsupportedReleaseError, release_for, rule)
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


def _check_int_range(num_brokers: int, num_racks: int, partitions: int, replication_factor: int, start_index: int,
                     start_partition: int) -> None:
    """Refuse a request on which AdminUtils' Java ints would overflow: partition ids wrap to negative numbers and
    broker positions go below 0 (an exception), answers kassign does not reproduce. Real requests never come
    near (Kafka draws the start below the broker count); only a huge start index or partition id does."""
    last = max(0, start_partition) + partitions - 1
    start = start_index if start_index >= 0 else num_brokers - 1
    shift = start + last // num_brokers + 1
    if last > INT_MAX or last + start > INT_MAX or shift * max(1, num_racks) + replication_factor * num_brokers > INT_MAX:
        raise KassignError(
            f"this request overflows Kafka's 32-bit int arithmetic (start index {start_index}, partitions "
            f"{max(0, start_partition)} to {last}): Kafka would number partitions below 0 or fail, which kassign "
            f"does not reproduce; keep start index + partition ids below 2^31")


def _request_numbers(partitions: Any, replication_factor: Any, start_index: Any,
                     start_partition: Any) -> tuple[int, int, int, int]:
    """The request's numbers as Java ints, checked before anything is allocated."""
    numbers = (whole_number(partitions, "partitions"), whole_number(replication_factor, "replication factor"),
               whole_number(start_index, "start index"), whole_number(start_partition, "start partition"))
    partition_budget(numbers[0], "replica placement")
    return numbers


PLACERS = ("legacy", "striped")

# the release a legacy answer names when none is asked for: the newest with ZooKeeper mode (AdminUtils answers
# alike from 3.0 to 4.0)
LEGACY_DEFAULT_VERSION = "3.9"


@dataclass(frozen=True)
class Placement:
    """Which rule answers a placement request: ``placer`` (``"legacy"`` or ``"striped"``) as ``release`` runs it,
    and ``what``, one line that names both (the CLI prints it)."""

    release: KafkaRelease
    placer: str
    what: str

    @property
    def kafka_version(self) -> str:
        return self.release.label


def placement_rule(kafka_version: Any = None, placer: Any = None) -> Placement:
    """The placer and release that answer ``assign_replicas(..., placer=placer, kafka_version=kafka_version)``
    (the module docstring says how each is chosen), or a one-line :class:`KassignError`."""
    if placer is not None and placer not in PLACERS:
        raise KassignError(f"unknown replica placer {shown(placer)}; choose one of {', '.join(PLACERS)}")
    if kafka_version is None:
        version = DEFAULT_KAFKA_VERSION if placer == "striped" else LEGACY_DEFAULT_VERSION
        release = release_for(version, "classic")
        chosen = placer or "legacy"
    else:
        release = release_for(kafka_version, "classic")
        chosen = placer or ("legacy" if rule(release, PLACEMENT) == ZOOKEEPER_OR_KRAFT else "striped")
    label = release.label
    if chosen == "striped":
        if rule(release, KRAFT) == KRAFT_EARLY_ACCESS:
            what = (f"Kafka {label}: the KRaft controller's striped placer (KRaft was early access before 3.3, "
                    "not for production; its controller placed as later releases do)")
        else:
            generate = ("; kafka-reassign-partitions.sh --generate too"
                        if rule(release, REASSIGN_GENERATE) == KAFKA_18798 else "")
            what = f"Kafka {label}: the KRaft controller's striped placer (topic creation, added partitions{generate})"
        return Placement(release, "striped", what)
    if rule(release, REASSIGN_GENERATE) != ADMIN_UTILS:
        raise UnsupportedReleaseError(
            f"Kafka {label} has no AdminUtils placement (placer \"legacy\"): ZooKeeper mode ended with 3.9, and from "
            f"4.1 kafka-reassign-partitions.sh --generate uses the striped placer too (KAFKA-18798); ask placer "
            f"\"striped\" (--placer striped), or a release from 3.0 to 4.0 for AdminUtils")
    if rule(release, PLACEMENT) == ZOOKEEPER_OR_KRAFT:
        what = (f"Kafka {label}: AdminUtils, as ZooKeeper-mode topic creation and kafka-reassign-partitions.sh "
                "--generate place replicas (alike from 3.0 to 4.0)")
    else:
        what = (f"Kafka {label}: AdminUtils, as its kafka-reassign-partitions.sh --generate proposes (4.0 has no "
                "ZooKeeper mode; its controller creates topics with the striped placer)")
    return Placement(release, "legacy", what)


def assign_replicas(
    brokers: Iterable[Any],
    partitions: int,
    replication_factor: int,
    start_index: int = -1,
    start_partition: int = -1,
    *,
    placer: str | None = None,
    seed: int | None = None,
    kafka_version: str | None = None,
) -> dict[int, list[int]]:
    """Replica lists per partition id, exactly as Kafka places them.

    ``kafka_version`` (``"MAJOR.MINOR"`` or ``"MAJOR.MINOR.PATCH"``, 3.0 to 4.4) and ``placer`` choose the rule
    (:func:`placement_rule`): without ``placer`` a 3.x release means AdminUtils and a 4.x release the striped
    placer; without either, AdminUtils as before (Kafka 3.9). AdminUtils asked of 4.1 or later is a
    :class:`KassignError`: those releases have only the striped placer.

    ``placer="legacy"`` is Kafka's ``assignReplicasToBrokers`` (AdminUtils: ZooKeeper-mode topic
    creation, and ``kafka-reassign-partitions.sh --generate`` up to 4.0).
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

    Raises ``ReplicaPlacementError`` (with Kafka's exception name, and Kafka's message as that release
    words it) where Kafka refuses, ``KassignError`` for malformed input.
    """
    chosen = placement_rule(kafka_version, placer)
    if chosen.placer == "striped":
        return _assign_striped(brokers, partitions, replication_factor, start_index, start_partition, seed,
                               rule(chosen.release, STRIPED_MESSAGES))
    partitions, replication_factor, start_index, start_partition = _request_numbers(
        partitions, replication_factor, start_index, start_partition)
    broker_list = normalise_brokers(brokers)
    _check_request(broker_list, partitions, replication_factor)
    _check_int_range(len(broker_list), len({rack for _, rack in broker_list}), partitions, replication_factor,
                     start_index, start_partition)
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
    messages: str,
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
    placements = place_striped(broker_list, partitions, replication_factor, rng, messages)
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


