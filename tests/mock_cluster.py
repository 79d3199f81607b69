"""librdkafka's in-process mock cluster, with racks and topics of our choosing.

confluent-kafka starts a mock cluster for a client configured with ``test.mock.num.brokers``,
but offers no Python call to set broker racks or create topics on it (the mock does not
implement CreateTopics or DescribeCluster: both wait for a controller, and the mock's metadata
names controller 0 beside brokers 1..N, so they time out). librdkafka's own C API does both,
and the very librdkafka confluent-kafka ships exports it, so :class:`MockCluster` calls it
through ctypes: ``rd_kafka_mock_cluster_new``, ``rd_kafka_mock_broker_set_rack``,
``rd_kafka_mock_topic_create``, ``rd_kafka_mock_cluster_bootstraps``.

Its brokers listen on 127.0.0.1 (librdkafka binds the mock to the loopback address) inside
this process; :meth:`MockCluster.stop` destroys them.
"""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Mapping

_RD_KAFKA_PRODUCER = 0


def _librdkafka() -> ctypes.CDLL:
    import confluent_kafka

    here = os.path.dirname(confluent_kafka.__file__)
    found = sorted(glob.glob(os.path.join(here, os.pardir, "confluent_kafka.libs", "librdkafka*.so*")))
    if not found:
        raise RuntimeError("this confluent-kafka wheel ships no librdkafka shared library to call the mock API in")
    lib = ctypes.CDLL(os.path.realpath(found[0]))
    p, c_int, c_str = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    for name, res, args in [
        ("rd_kafka_conf_new", p, []),
        ("rd_kafka_new", p, [c_int, p, c_str, ctypes.c_size_t]),
        ("rd_kafka_destroy", None, [p]),
        ("rd_kafka_mock_cluster_new", p, [p, c_int]),
        ("rd_kafka_mock_cluster_destroy", None, [p]),
        ("rd_kafka_mock_cluster_bootstraps", c_str, [p]),
        ("rd_kafka_mock_broker_set_rack", c_int, [p, ctypes.c_int32, c_str]),
        ("rd_kafka_mock_topic_create", c_int, [p, c_str, c_int, c_int]),
    ]:
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


class MockCluster:
    """``brokers`` mock brokers (ids 1..N) with ``racks`` (broker id -> rack) and ``topics``
    (name -> (partitions, replication factor)), listening on 127.0.0.1."""

    def __init__(self, brokers: int, racks: Mapping[int, str] | None = None,
                 topics: Mapping[str, tuple[int, int]] | None = None) -> None:
        self._lib = lib = _librdkafka()
        errstr = ctypes.create_string_buffer(512)
        self._rk = lib.rd_kafka_new(_RD_KAFKA_PRODUCER, lib.rd_kafka_conf_new(), errstr, len(errstr))
        if not self._rk:
            raise RuntimeError(f"rd_kafka_new failed: {errstr.value.decode()}")
        self._cluster = lib.rd_kafka_mock_cluster_new(self._rk, brokers)
        if not self._cluster:
            lib.rd_kafka_destroy(self._rk)
            raise RuntimeError("rd_kafka_mock_cluster_new failed")
        self.bootstrap = lib.rd_kafka_mock_cluster_bootstraps(self._cluster).decode()
        for broker, rack in (racks or {}).items():
            self._check(lib.rd_kafka_mock_broker_set_rack(self._cluster, broker, rack.encode()), f"rack of {broker}")
        for name, (partitions, replication) in (topics or {}).items():
            self.create_topic(name, partitions, replication)

    def create_topic(self, name: str, partitions: int, replication_factor: int) -> None:
        self._check(self._lib.rd_kafka_mock_topic_create(self._cluster, name.encode(), partitions,
                                                         replication_factor), f"topic {name}")

    @staticmethod
    def _check(code: int, what: str) -> None:
        if code != 0:
            raise RuntimeError(f"mock cluster: setting {what} failed with librdkafka error {code}")

    def stop(self) -> None:
        if self._cluster:
            self._lib.rd_kafka_mock_cluster_destroy(self._cluster)
            self._cluster = None
        if self._rk:
            self._lib.rd_kafka_destroy(self._rk)
            self._rk = None
