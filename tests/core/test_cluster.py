"""Cluster metadata: availability, replica racks, and the assignor base's view of it."""

from __future__ import annotations

import logging

import pytest

from kassign.groups.classic.assignors.base import Subscription, subscribed_partition_counts
from kassign.core.cluster import Cluster, Node
from kassign.core.errors import KassignError


def test_available_partitions_are_those_with_a_leader() -> None:
    cluster = Cluster({"t": 4, "u": 2}, leaders={"t": [1, None, 2, None]})
    assert cluster.available_partitions("t") == [0, 2]
    assert cluster.available_partitions("u") == [0, 1], "no leader data: all available"
    assert cluster.partition_count("missing") is None


def test_replica_racks_from_brokers() -> None:
    cluster = Cluster(
        {"t": 2},
        replicas={"t": [[1, 2], [2, 3]]},
        nodes=[Node(1, "r1"), Node(2, "r2"), Node(3, None)],
    )
    assert cluster.replica_racks("t") == [frozenset({"r1", "r2"}), frozenset({"r2"})]
    info = cluster.partitions_for_topic("t")[1]
    assert (info.partition, info.replicas, info.replica_racks) == (1, (2, 3), frozenset({"r2"}))


def test_replica_racks_given_directly() -> None:
    cluster = Cluster({"t": 2}, partition_racks={"t": [["a"], ["a", "b"]]})
    assert cluster.replica_racks("t") == [frozenset({"a"}), frozenset({"a", "b"})]
    assert Cluster({"t": 2}).replica_racks("t") == [frozenset(), frozenset()]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"topics": {"t": -1}}, "partition count"),
        ({"topics": {"t": 2}, "leaders": {"t": [1]}}, "leaders for topic 't' lists 1 partitions"),
        ({"topics": {"t": 1}, "partition_racks": {"t": [[], []]}}, "partition_racks for topic 't'"),
    ],
)
def test_inconsistent_metadata_is_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(KassignError, match=message):
        Cluster(**kwargs)


def test_topics_without_metadata_are_skipped_with_a_debug_log(caplog) -> None:
    subscriptions = {"a": Subscription(("t", "ghost")), "b": Subscription(("ghost", "empty"))}
    with caplog.at_level(logging.DEBUG, logger="kassign.groups.classic.assignors.base"):
        counts = subscribed_partition_counts(Cluster({"t": 3, "empty": 0}), subscriptions)
    assert counts == {"t": 3}
    skipped = [r.getMessage() for r in caplog.records]
    assert skipped == [
        "Skipping assignment for topic ghost since no metadata is available",
        "Skipping assignment for topic empty since no metadata is available",
    ]
