"""The replication throttle as kafka-reassign-partitions.sh --throttle sets it: which replicas go in the leader and
follower lists, which brokers get the rate, checked against what the real tool set on a Kafka 4.3.1 cluster
(``describe-configs-topic.json`` of the cluster captures)."""

from __future__ import annotations

import pytest

from kassign.core.errors import KassignError
from kassign.replicas.execute.throttle import (FOLLOWER_REPLICAS, LEADER_REPLICAS, Running, check_rate, removal,
                                               throttle_for)
from tests.kafka.replay_balance import have_captures, load

CURRENT = {("kc-move", 0): [1, 2], ("kc-move", 1): [2, 3], ("kc-move", 2): [3, 1], ("kc-move", 3): [1, 3]}
TARGET = {("kc-move", 0): [3, 2], ("kc-move", 1): [1, 3], ("kc-move", 2): [2, 1]}


def test_the_captured_moves_get_the_captured_lists():
    throttle = throttle_for([], TARGET, CURRENT, 100000)
    assert throttle.topics == {"kc-move": ("0:1,0:2,1:2,1:3,2:1,2:3", "0:3,1:1,2:2")}
    assert throttle.brokers == [1, 2, 3] and throttle.rate == 100000


@pytest.mark.skipif(not have_captures(), reason="Kafka 4.3.1 cluster captures not found")
def test_lists_equal_what_the_real_tool_set():
    from tests.kafka.replay_balance import decoded

    (topic,) = decoded("describe-configs-topic.json")
    told = {c.name: c.value for c in topic.configs if c.name in (LEADER_REPLICAS, FOLLOWER_REPLICAS)}
    leader, follower = throttle_for([], TARGET, CURRENT, 100000).topics["kc-move"]
    assert told == {LEADER_REPLICAS: leader, FOLLOWER_REPLICAS: follower}
    request = load("incremental-alter-configs-throttle-topic.json")["decoded"]["request"]["topic:kc-move"]
    assert [(c["name"], c["value"]) for c in request] == [(LEADER_REPLICAS, leader), (FOLLOWER_REPLICAS, follower)]


def test_items_sort_as_text():
    current = {("t", 10): [1], ("t", 2): [1]}
    throttle = throttle_for([], {("t", 10): [4], ("t", 2): [4]}, current, 5)
    assert throttle.topics["t"] == ("10:1,2:1", "10:4,2:4")


def test_running_reassignments_join_and_keep_their_sources():
    # t-0 is being moved [1, 2] -> [3, 2] (listed as [3, 2, 1], adding 3): restarting it towards [4, 2] keeps its
    # sources {1, 2}; u-5 runs apart and stays in the lists
    running = [Running("t", 0, (3, 2, 1), (3,), (1,)), Running("u", 5, (7, 8), (8,), ())]
    throttle = throttle_for(running, {("t", 0): [4, 2]}, {("t", 0): [3, 2, 1]}, 9)
    assert throttle.topics == {"t": ("0:1,0:2", "0:4"), "u": ("5:7", "5:8")}
    assert throttle.brokers == [1, 2, 4, 7, 8]


def test_order_only_change_lists_its_replicas_as_sources():
    throttle = throttle_for([], {("t", 0): [2, 1]}, {("t", 0): [1, 2]}, 9)
    assert throttle.topics == {"t": ("0:1,0:2", "")}


def test_changes_and_removal():
    throttle = throttle_for([], TARGET, CURRENT, 100000)
    assert throttle.changes()[0] == ("topic", "kc-move", [(LEADER_REPLICAS, "0:1,0:2,1:2,1:3,2:1,2:3"),
                                                          (FOLLOWER_REPLICAS, "0:3,1:1,2:2")])
    assert throttle.changes()[1] == ("broker", "1", [("leader.replication.throttled.rate", "100000"),
                                                     ("follower.replication.throttled.rate", "100000")])
    assert removal(["kc-move"], [3, 1]) == [
        ("topic", "kc-move", [LEADER_REPLICAS, FOLLOWER_REPLICAS]),
        ("broker", "1", ["leader.replication.throttled.rate", "follower.replication.throttled.rate"]),
        ("broker", "3", ["leader.replication.throttled.rate", "follower.replication.throttled.rate"])]


def test_bad_rates_are_one_line():
    for bad in (0, -5, 1.5, "100", True):
        with pytest.raises(KassignError, match=r"^--throttle must be a whole number of bytes per second above 0"):
            check_rate(bad)
