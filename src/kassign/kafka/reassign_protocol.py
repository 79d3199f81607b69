"""The admin APIs that change where replicas live and who leads them, every version, as plain data.

One ``encode_*_request(version, ...)`` and ``decode_*(reader, version)`` per API and, for tests and pretend brokers,
the other direction (``decode_*_request``, ``encode_*``), as in :mod:`kassign.kafka.cluster_protocol`. Fields and
their order are those of Kafka 4.3's message schemas:

===========================  ===  ========  =================================================================
API                          key  versions  what it does
===========================  ===  ========  =================================================================
ElectLeaders                  43  0-2       elects leaders of the named partitions (all when null): v1+ says
                                            which election (0 preferred, 1 unclean); per partition an error
                                            (84 ELECTION_NOT_NEEDED where the leader already is the one
                                            wanted); v1+ a top-level error. Flexible from v2
IncrementalAlterConfigs       44  0-1       changes configs of topics (resource type 2) or brokers (4): per
                                            config an operation (0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT) and a
                                            value (null to delete); per resource an error. Flexible from v1
AlterPartitionReassignments   45  0-1       starts reassignments (a partition's target replica list) or
                                            cancels them (a null list); v1+ whether the replication factor may
                                            change (the answer repeats it); per partition an error. Flexible
===========================  ===  ========  =================================================================

A broker answers each of them per item: a request can succeed for one partition and fail for the next, and the
top-level error is 0 then. Answers keep the items in the order the broker wrote them.

Example: starting kc-move 0 [1, 2] -> [3, 2] on a Kafka 4.3.1 broker is ``encode_alter_partition_reassignments_
request(1, [Reassignment("kc-move", 0, [3, 2])], timeout_ms=20000)``; its answer decodes as
``AlterReassignmentsAnswer(error=0, message=None, results=[ItemResult("kc-move", 0, 0, None)],
allow_replication_factor_change=True)``. Cancelling it is the same request with ``replicas=None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from kassign.kafka import protocol as P
from kassign.kafka.connection import API_ALTER_PARTITION_REASSIGNMENTS, API_ELECT_LEADERS, API_INCREMENTAL_ALTER_CONFIGS
from kassign.kafka.flexible import FlexReader, FlexWriter, is_flexible

VERSIONS = {API_ELECT_LEADERS: (0, 2), API_INCREMENTAL_ALTER_CONFIGS: (0, 1),
            API_ALTER_PARTITION_REASSIGNMENTS: (0, 1)}
TOPIC, BROKER = 2, 4  # config resource types
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3  # IncrementalAlterConfigs operations
OPERATIONS = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}
PREFERRED, UNCLEAN = 0, 1  # ElectLeaders election types

# error codes these APIs answer, beyond those kassign.kafka.protocol names
ERRORS = {39: "INVALID_REPLICA_ASSIGNMENT", 40: "INVALID_CONFIG", 41: "NOT_CONTROLLER", 42: "INVALID_REQUEST",
          44: "POLICY_VIOLATION", 58: "SASL_AUTHENTICATION_FAILED", 60: "REASSIGNMENT_IN_PROGRESS",
          80: "ELIGIBLE_LEADERS_NOT_AVAILABLE", 83: "PREFERRED_LEADER_NOT_AVAILABLE", 84: "ELECTION_NOT_NEEDED",
          85: "NO_REASSIGNMENT_IN_PROGRESS", 87: "GROUP_SUBSCRIBED_TO_TOPIC", 88: "INVALID_RECORD",
          37: "INVALID_PARTITIONS", 38: "INVALID_REPLICATION_FACTOR"}
ELECTION_NOT_NEEDED = 84
NO_REASSIGNMENT_IN_PROGRESS = 85


def error_name(code: int) -> str:
    return ERRORS.get(code) or P.error_name(code)


def _writer(api_key: int, version: int) -> FlexWriter:
    return FlexWriter(is_flexible(api_key, version))


class ItemResult(NamedTuple):
    """One partition's answer (ElectLeaders, AlterPartitionReassignments)."""

    topic: str
    partition: int
    error: int
    message: str | None


# -- AlterPartitionReassignments --------------------------------------------------------------------------------

class Reassignment(NamedTuple):
    """One partition's target replica list (leader first), or None to cancel its running reassignment."""

    topic: str
    partition: int
    replicas: list[int] | None


@dataclass
class AlterReassignmentsAnswer:
    error: int
    message: str | None
    results: list[ItemResult]
    allow_replication_factor_change: bool = True  # v1+ (v0: the broker always allows it)
    throttle_ms: int = 0


def _by_topic(items: Sequence[tuple]) -> list[tuple[str, list]]:
    """Items grouped under their topic (the first element), topics in the order first met."""
    grouped: dict[str, list] = {}
    for item in items:
        grouped.setdefault(item[0], []).append(item)
    return list(grouped.items())


def encode_alter_partition_reassignments_request(version: int, moves: Sequence[Reassignment], timeout_ms: int = 60000,
                                                 allow_replication_factor_change: bool = True) -> bytes:
    """``moves`` grouped by topic on the wire, in the order given."""
    w = _writer(API_ALTER_PARTITION_REASSIGNMENTS, version).int32(timeout_ms)
    if version >= 1:
        w.boolean(allow_replication_factor_change)
    w.array(_by_topic(moves), lambda w, t: (
        w.string(t[0]),
        w.array(t[1], lambda w, m: (w.int32(m.partition), w.array(m.replicas, FlexWriter.int32), w.tags())),
        w.tags()))
    return w.tags().bytes()


def decode_alter_partition_reassignments_request(r: FlexReader, version: int) -> tuple[list[Reassignment], int, bool]:
    """(moves, timeout_ms, allow_replication_factor_change)."""
    timeout = r.int32()
    allow = r.boolean() if version >= 1 else True

    def topic(r: FlexReader) -> list[Reassignment]:
        name = r.text()

        def partition(r: FlexReader) -> Reassignment:
            index = r.int32()
            replicas = r.nullable_array(FlexReader.int32, 4)
            r.tags()
            return Reassignment(name, index, replicas)

        parts = r.array(partition, 2)
        r.tags()
        return parts

    moves = [m for parts in r.array(topic, 3) for m in parts]
    r.tags()
    return moves, timeout, allow


def _item_results(r: FlexReader) -> list[ItemResult]:
    """Per topic, per partition: index, error code and message (AlterPartitionReassignments' and ElectLeaders'
    answers lay their results out alike), flattened."""
    def topic(r: FlexReader) -> list[ItemResult]:
        name = r.text()

        def partition(r: FlexReader) -> ItemResult:
            index, code, text = r.int32(), r.int16(), r.string()
            r.tags()
            return ItemResult(name, index, code, text)

        parts = r.array(partition, 7)
        r.tags()
        return parts

    return [p for parts in r.array(topic, 3) for p in parts]


def decode_alter_partition_reassignments(r: FlexReader, version: int) -> AlterReassignmentsAnswer:
    throttle = r.int32()
    allow = r.boolean() if version >= 1 else True
    error, message = r.int16(), r.string()

    results = _item_results(r)
    r.tags()
    return AlterReassignmentsAnswer(error, message, results, allow, throttle)


def encode_alter_partition_reassignments(version: int, answer: AlterReassignmentsAnswer) -> bytes:
    w = _writer(API_ALTER_PARTITION_REASSIGNMENTS, version).int32(answer.throttle_ms)
    if version >= 1:
        w.boolean(answer.allow_replication_factor_change)
    w.int16(answer.error).string(answer.message)
    w.array(_by_topic(answer.results), lambda w, t: (
        w.string(t[0]),
        w.array(t[1], lambda w, p: (w.int32(p.partition), w.int16(p.error), w.string(p.message), w.tags())),
        w.tags()))
    return w.tags().bytes()


# -- IncrementalAlterConfigs ------------------------------------------------------------------------------------

class ConfigChange(NamedTuple):
    name: str
    operation: int  # SET, DELETE, APPEND, SUBTRACT
    value: str | None  # None with DELETE


@dataclass
class ConfigAlteration:
    """The changes to one resource's configs."""

    resource_type: int  # TOPIC or BROKER
    name: str  # a topic's name or a broker's id as text
    changes: list[ConfigChange] = field(default_factory=list)


class ResourceResult(NamedTuple):
    error: int
    message: str | None
    resource_type: int
    name: str


def encode_incremental_alter_configs_request(version: int, resources: Sequence[ConfigAlteration],
                                             validate_only: bool = False) -> bytes:
    w = _writer(API_INCREMENTAL_ALTER_CONFIGS, version)
    w.array(resources, lambda w, res: (
        w.int8(res.resource_type), w.string(res.name),
        w.array(res.changes, lambda w, c: (w.string(c.name), w.int8(c.operation), w.string(c.value), w.tags())),
        w.tags()))
    w.boolean(validate_only)
    return w.tags().bytes()


def decode_incremental_alter_configs_request(r: FlexReader, version: int) -> tuple[list[ConfigAlteration], bool]:
    def change(r: FlexReader) -> ConfigChange:
        name, op, value = r.text(), r.int8(), r.string()
        r.tags()
        return ConfigChange(name, op, value)

    def resource(r: FlexReader) -> ConfigAlteration:
        kind, name = r.int8(), r.text()
        changes = r.array(change, 3)
        r.tags()
        return ConfigAlteration(kind, name, changes)

    resources = r.array(resource, 3)
    validate = r.boolean()
    r.tags()
    return resources, validate


def decode_incremental_alter_configs(r: FlexReader, version: int) -> list[ResourceResult]:
    r.int32()  # throttle

    def resource(r: FlexReader) -> ResourceResult:
        code, message, kind, name = r.int16(), r.string(), r.int8(), r.text()
        r.tags()
        return ResourceResult(code, message, kind, name)

    results = r.array(resource, 5)
    r.tags()
    return results


def encode_incremental_alter_configs(version: int, results: Sequence[ResourceResult], throttle_ms: int = 0) -> bytes:
    w = _writer(API_INCREMENTAL_ALTER_CONFIGS, version).int32(throttle_ms)
    w.array(results, lambda w, res: (w.int16(res.error), w.string(res.message), w.int8(res.resource_type),
                                     w.string(res.name), w.tags()))
    return w.tags().bytes()


# -- ElectLeaders -----------------------------------------------------------------------------------------------

@dataclass
class ElectionAnswer:
    error: int  # v1+ (0 at v0)
    results: list[ItemResult]
    throttle_ms: int = 0


def encode_elect_leaders_request(version: int, partitions: Sequence[tuple[str, Sequence[int]]] | None,
                                 election: int = PREFERRED, timeout_ms: int = 60000) -> bytes:
    """``partitions``: (topic, partition indexes) pairs, or None for every partition. v0 knows only the preferred
    election."""
    if version == 0 and election != PREFERRED:
        raise ValueError("ElectLeaders v0 elects preferred leaders only")
    w = _writer(API_ELECT_LEADERS, version)
    if version >= 1:
        w.int8(election)
    w.array(partitions, lambda w, t: (w.string(t[0]), w.array(t[1], FlexWriter.int32), w.tags()))
    w.int32(timeout_ms)
    return w.tags().bytes()


def decode_elect_leaders_request(r: FlexReader,
                                 version: int) -> tuple[list[tuple[str, list[int]]] | None, int, int]:
    """(partitions or None, election type, timeout_ms)."""
    election = r.int8() if version >= 1 else PREFERRED

    def topic(r: FlexReader) -> tuple[str, list[int]]:
        name, parts = r.text(), r.int32s()
        r.tags()
        return name, parts

    partitions = r.nullable_array(topic, 2)
    timeout = r.int32()
    r.tags()
    return partitions, election, timeout


def decode_elect_leaders(r: FlexReader, version: int) -> ElectionAnswer:
    throttle = r.int32()
    error = r.int16() if version >= 1 else 0

    results = _item_results(r)
    r.tags()
    return ElectionAnswer(error, results, throttle)


def encode_elect_leaders(version: int, answer: ElectionAnswer) -> bytes:
    w = _writer(API_ELECT_LEADERS, version).int32(answer.throttle_ms)
    if version >= 1:
        w.int16(answer.error)
    w.array(_by_topic(answer.results), lambda w, t: (
        w.string(t[0]),
        w.array(t[1], lambda w, p: (w.int32(p.partition), w.int16(p.error), w.string(p.message), w.tags())),
        w.tags()))
    return w.tags().bytes()


DECODERS = {API_ELECT_LEADERS: decode_elect_leaders, API_INCREMENTAL_ALTER_CONFIGS: decode_incremental_alter_configs,
            API_ALTER_PARTITION_REASSIGNMENTS: decode_alter_partition_reassignments}
REQUEST_DECODERS = {API_ELECT_LEADERS: decode_elect_leaders_request,
                    API_INCREMENTAL_ALTER_CONFIGS: decode_incremental_alter_configs_request,
                    API_ALTER_PARTITION_REASSIGNMENTS: decode_alter_partition_reassignments_request}
