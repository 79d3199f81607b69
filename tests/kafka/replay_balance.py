"""The 3-broker Kafka 4.3.1 cluster of ``shared/captures/kafka-4.3.1-cluster/`` replayed on 127.0.0.1, for reading
a live cluster's balancing inputs without one: each pretend broker answers Metadata with the captured v13 answer
(its brokers' ports rewritten to the pretend brokers'), DescribeLogDirs with its own captured answer (re-encoded
at the version asked, so that older versions can be replayed too), DescribeCluster with the captured answer, and
ListOffsets (v1-v5, not captured) from the ``written`` end offsets of the captures, log start 0.

Example::

    cluster = ReplayedCluster()      # skips the test, saying so, where the captures are absent
    inputs = read_cluster(cluster.bootstrap, timeout=5)
    cluster.stop()

``grow(broker, topic, partition, bytes, offsets)`` makes the next answers of that broker (and, for the offsets,
of the partition's leader) show a replica grown by that much: what a sample reads twice.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable

import pytest

from kassign.kafka import cluster_protocol as C
from kassign.kafka import groups_protocol as G
from kassign.kafka import topics_protocol as TP
from kassign.kafka.flexible import FlexWriter
from tests.conftest import REPO
from tests.kafka.replay_broker import ReplayBroker, capture_body, list_offsets_asked

CAPTURES = REPO.parent / "shared" / "captures" / "kafka-4.3.1-cluster"
DECODERS = {**C.DECODERS, 3: TP.decode_metadata}


def have_captures() -> bool:
    return (CAPTURES / "metadata-racks.json").is_file()


def skip_without_captures() -> None:
    if not have_captures():
        pytest.skip(f"Kafka 4.3.1 cluster captures not found at {CAPTURES}")


def load(name: str) -> dict:
    return json.loads((CAPTURES / name).read_text())


def decoded(name: str):
    doc = load(name)
    _, answer = G.decode_response(doc["api_key"], doc["api_version"], base64.b64decode(doc["response_b64"]),
                                  DECODERS)
    return answer


def metadata_with_isr(topic: str, partition: int, isr: list[int]):
    """The captured Metadata answer with one partition's in-sync replicas replaced (an under-replicated one)."""
    meta = decoded("metadata-racks.json")
    found = next(t for t in meta.topics if t.name == topic)
    at = next(i for i, p in enumerate(found.partitions) if p.partition == partition)
    found.partitions[at] = dataclasses.replace(found.partitions[at], isr=list(isr))
    return meta


def encode_metadata_answer(version: int, answer: TP.MetadataAnswer) -> bytes:
    """A Metadata answer's body as a broker writes it (v1 and later)."""
    w = FlexWriter(version >= 9)
    if version >= 3:
        w.int32(answer.throttle_ms)

    def broker(w: FlexWriter, b: TP.MetadataBroker) -> None:
        w.int32(b.node_id).string(b.host).int32(b.port).string(b.rack).tags()

    def partition(w: FlexWriter, p: TP.MetadataPartition) -> None:
        w.int16(p.error).int32(p.partition).int32(p.leader)
        if version >= 7:
            w.int32(p.leader_epoch)
        w.array(p.replicas, FlexWriter.int32).array(p.isr, FlexWriter.int32)
        if version >= 5:
            w.array(p.offline, FlexWriter.int32)
        w.tags()

    def topic(w: FlexWriter, t: TP.MetadataTopic) -> None:
        w.int16(t.error).string(t.name)
        if version >= 10:
            w.uuid(t.topic_id)
        w.boolean(t.internal).array(t.partitions, partition)
        if version >= 8:
            w.int32(t.authorized_operations)
        w.tags()

    w.array(answer.brokers, broker).string(answer.cluster_id).int32(answer.controller).array(answer.topics, topic)
    if 8 <= version <= 10:
        w.int32(-(1 << 31))
    if version >= 13:
        w.int16(answer.error)
    return w.tags().bytes()


def end_offsets() -> dict[tuple[str, int], int]:
    written = load("describe-log-dirs-broker-1.json")["decoded"]["written"]
    ends = {}
    for name, facts in written.items():
        topic, _, p = name.rpartition("-")
        ends[(topic, int(p))] = facts["end_offset"]
    ends[("kc-empty", 0)] = 0
    return ends


class ReplayedCluster:
    """Three pretend brokers answering as the captured cluster did."""

    def __init__(self, log_dirs_version: int = 5, metadata: TP.MetadataAnswer | None = None,
                 log_dirs: dict[int, C.LogDirsAnswer | Callable[[int, bytes], bytes | None] | None] | None = None,
                 list_offsets: bool = True, reassignments: str | None = "done") -> None:
        skip_without_captures()
        self.metadata = metadata or decoded("metadata-racks.json")
        self.log_dirs = {b: decoded(f"describe-log-dirs-broker-{b}.json") for b in (1, 2, 3)}
        self.ends = end_offsets()
        self.starts = dict.fromkeys(self.ends, 0)
        versions = {3: (0, 13), 35: (0, log_dirs_version), 2: (1, 5), 60: (0, 2), 32: (0, 4), 46: (0, 0)}
        self.brokers = {b.node_id: ReplayBroker(versions, {}, b.node_id) for b in self.metadata.brokers}
        self.bootstrap = self.brokers[min(self.brokers)].bootstrap
        ports = {node: broker.port for node, broker in self.brokers.items()}
        self.metadata = dataclasses.replace(self.metadata, brokers=[
            dataclasses.replace(b, port=ports[b.node_id]) for b in self.metadata.brokers])
        overrides = log_dirs or {}
        for node, broker in self.brokers.items():
            broker.answers[3] = self._metadata_answer
            own = overrides.get(node, self.log_dirs.get(node))
            broker.answers[35] = own if callable(own) or own is None else self._log_dirs_answer(node, own)
            if list_offsets:
                broker.answers[2] = self._list_offsets
            broker.answers[60] = self._cluster_answer
            if reassignments is not None:  # "done", "ongoing": that capture's answer; None: not spoken
                doc = load(f"list-partition-reassignments-{reassignments}.json")
                broker.answers[46] = capture_body(46, 0, base64.b64decode(doc["response_b64"]))
            else:
                broker.versions.pop(46)

    def stop(self) -> None:
        for broker in self.brokers.values():
            broker.stop()

    def __enter__(self) -> ReplayedCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _metadata_answer(self, version: int, body: bytes) -> bytes:
        return encode_metadata_answer(version, self.metadata)

    def _log_dirs_answer(self, node: int, answer: C.LogDirsAnswer) -> Callable[[int, bytes], bytes]:
        self.log_dirs[node] = answer

        def reply(version: int, body: bytes) -> bytes:
            return C.encode_describe_log_dirs(version, self.log_dirs[node])

        return reply

    def _cluster_answer(self, version: int, body: bytes) -> bytes:
        answer = decoded("describe-cluster.json")
        answer.brokers = [dataclasses.replace(b, port=self.brokers[b.node_id].port) for b in answer.brokers]
        return C.encode_describe_cluster(version, answer)

    def _list_offsets(self, version: int, body: bytes) -> bytes:
        asked = list_offsets_asked(version, body)
        w = FlexWriter(False)
        if version >= 2:
            w.int32(0)

        def partition(w: FlexWriter, item: tuple[str, int, int]) -> None:
            topic, index, stamp = item
            table = self.starts if stamp == -2 else self.ends
            w.int32(index).int16(0).int64(-1).int64(table[(topic, index)])
            if version >= 4:
                w.int32(0)

        w.array(asked, lambda w, t: (w.string(t[0]), w.array([(t[0], i, s) for i, s in t[1]], partition)))
        return w.bytes()

    def grow(self, broker: int, topic: str, partition: int, size: int, offsets: int = 0, start: int = 0) -> None:
        """Broker ``broker``'s replica of ``topic``-``partition`` changes by ``size`` bytes; the partition's end
        offset by ``offsets`` and its log start by ``start``, from the next answers on."""
        answer = self.log_dirs[broker]
        for d in answer.log_dirs:
            d.replicas = [r._replace(size=r.size + size) if (r.topic, r.partition) == (topic, partition) else r
                          for r in d.replicas]
        self.ends[(topic, partition)] += offsets
        self.starts[(topic, partition)] += start
