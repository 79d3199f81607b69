"""Real brokers and a Spark session for kassign's Kafka reader tests (127.0.0.1 only, stopped by their fixture).

- ``tansu`` (session): the tansu broker of ``tests.groups.classic.clients`` (one node, id 111, in-memory).
- ``mock3`` (module): librdkafka's in-process mock cluster, 3 brokers with racks.
- ``spark`` (session): a local Spark session, as ``tests/spark/conftest.py`` makes one.
- :func:`mock_delete_records` / :func:`mock_delete_topic`: librdkafka's own mock-cluster calls
  that move a partition's log start or drop a topic inside the mock broker (the mock does not
  implement the DeleteRecords or DeleteTopics requests).
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator

import pytest

from tests.groups.classic.clients.conftest import tansu, topic_name  # noqa: F401  (fixtures, re-used as they are)

MOCK_RACKS = {1: "rack-a", 2: "rack-b", 3: "rack-c"}


@pytest.fixture(scope="module")
def mock3() -> Iterator[object]:
    pytest.importorskip("confluent_kafka", reason="the mock cluster is librdkafka's, shipped by confluent-kafka")
    from tests.mock_cluster import MockCluster

    mock = MockCluster(3, MOCK_RACKS)
    try:
        yield mock
    finally:
        mock.stop()


def _mock_call(mock, name: str, argtypes: list) -> ctypes._CFuncPtr:
    fn = getattr(mock._lib, name)
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_void_p, *argtypes]
    return fn


def mock_delete_records(mock, topic: str, partition: int, before: int) -> None:
    """``rd_kafka_mock_partition_delete_records``: the log of ``topic``-``partition`` starts at ``before``."""
    fn = _mock_call(mock, "rd_kafka_mock_partition_delete_records",
                    [ctypes.c_char_p, ctypes.c_int32, ctypes.c_int64])
    code = fn(mock._cluster, topic.encode(), partition, before)
    if code != 0:
        raise RuntimeError(f"mock cluster: delete records of {topic}-{partition} failed with error {code}")


def mock_delete_topic(mock, topic: str) -> None:
    """``rd_kafka_mock_topic_delete``."""
    code = _mock_call(mock, "rd_kafka_mock_topic_delete", [ctypes.c_char_p])(mock._cluster, topic.encode())
    if code != 0:
        raise RuntimeError(f"mock cluster: deleting topic {topic} failed with error {code}")


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark", reason="the Spark data source needs pyspark")
    from kassign.spark.session import spark_session

    session = spark_session("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.ui.showConsoleProgress": "false",
                                         "spark.default.parallelism": "2"}, app_name="kassign-kafka-tests")
    yield session
    session.stop()


class Broker:
    """A running broker the tests produce to and read from: ``tansu`` or the 3-broker ``mock``."""

    def __init__(self, name: str, bootstrap: str, create, handle) -> None:
        self.name, self.bootstrap, self._create, self.handle = name, bootstrap, create, handle

    def create_topic(self, topic: str, partitions: int) -> None:
        self._create(topic, partitions)

    def __repr__(self) -> str:
        return f"Broker({self.name}, {self.bootstrap})"


def make_broker(request: pytest.FixtureRequest, name: str) -> Broker:
    if name == "tansu":
        tansu_broker = request.getfixturevalue("tansu")
        return Broker("tansu", tansu_broker.bootstrap, tansu_broker.create_topic, tansu_broker)
    mock = request.getfixturevalue("mock3")
    return Broker("mock", mock.bootstrap, lambda topic, partitions: mock.create_topic(topic, partitions, 2), mock)


@pytest.fixture(params=["tansu", "mock"])
def broker(request: pytest.FixtureRequest) -> Broker:
    """Each test that takes it runs on tansu and on librdkafka's mock cluster (3 brokers, replication 2)."""
    return make_broker(request, request.param)
