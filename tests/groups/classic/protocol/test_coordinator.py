"""Protocol choice, admission, leaders and generations, and each member's rebalance protocol."""

from __future__ import annotations

import pytest

from kassign.groups.classic.assignors import COOPERATIVE, EAGER, get_assignor
from kassign.groups.classic.assignors.base import AbstractPartitionAssignor
from kassign.core.errors import KassignError
from kassign.groups.classic.protocol.coordinator import GroupCoordinator, InconsistentGroupProtocolError
from kassign.core.javaorder import java_string_hash, java_string_hash_order, signed32
from kassign.groups.classic.protocol.member import GroupMember, RebalanceProtocol, rebalance_protocol_for


def coordinator_with(*members: tuple[str, list[str]]) -> GroupCoordinator:
    coordinator = GroupCoordinator()
    for member_id, strategies in members:
        coordinator.join(member_id, None, [(s, b"") for s in strategies])
    return coordinator


def test_only_common_strategies_are_candidates_and_preference_votes_decide():
    c = coordinator_with(("A", ["cooperative-sticky", "range"]), ("B", ["range", "cooperative-sticky"]),
                         ("C", ["range"]))
    assert c.candidate_protocols() == {"range"}
    assert c.select_protocol() == "range"


def test_majority_of_first_choices_wins():
    c = coordinator_with(("A", ["sticky", "range"]), ("B", ["sticky", "range"]), ("C", ["range", "sticky"]))
    assert c.select_protocol() == "sticky"
    c.join("D", None, [("range", b""), ("sticky", b"")])
    c.join("E", None, [("range", b""), ("sticky", b"")])
    assert c.select_protocol() == "range"


def test_tie_goes_to_the_first_name_in_java_hashmap_order():
    c = coordinator_with(("A", ["sticky", "range"]), ("B", ["range", "sticky"]))
    # "range" and "sticky" land in different buckets of a 16-slot table; Java iterates buckets in order
    first = min(["range", "sticky"], key=lambda n: ((java_string_hash(n) & 0xFFFFFFFF) ^
                                                    ((java_string_hash(n) & 0xFFFFFFFF) >> 16)) & 15)
    assert c.select_protocol() == first


def test_member_sharing_nothing_with_the_group_is_refused_with_kafkas_error():
    c = coordinator_with(("A", ["range"]), ("B", ["range", "roundrobin"]))
    with pytest.raises(InconsistentGroupProtocolError, match="INCONSISTENT_GROUP_PROTOCOL"):
        c.join("C", None, [("roundrobin", b"")])
    assert "C" not in c.members
    c.join("D", None, [("sticky", b""), ("range", b"")])  # one shared strategy is enough
    assert set(c.members) == {"A", "B", "D"}


def test_first_member_leads_generations_count_and_a_new_leader_takes_over():
    c = coordinator_with(("A", ["range"]), ("B", ["range"]), ("C", ["range"]))
    assert c.leader == "A"
    assert c.complete_join().generation == 1
    assert c.complete_join().generation == 2
    c.remove("A")
    assert c.leader == java_string_hash_order(["B", "C"], largest_size=3)[0]
    c.remove("B"), c.remove("C")
    assert c.leader is None and c.protocol is None


def test_java_string_hash_matches_known_values():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert signed32(java_string_hash("polygenelubricants")) == -2147483648  # the classic Integer.MIN_VALUE hash


def test_hashmap_order_buckets_then_insertion():
    keys = [f"consumer-{i}" for i in range(20)]
    order = java_string_hash_order(keys)
    assert sorted(order) == sorted(keys)
    buckets = [((java_string_hash(k) & 0xFFFFFFFF) ^ ((java_string_hash(k) & 0xFFFFFFFF) >> 16)) & 31 for k in order]
    assert buckets == sorted(buckets)  # 20 keys -> table of 32


class _CoopOnly(AbstractPartitionAssignor):
    name = "coop-only"
    supported_protocols = (COOPERATIVE,)

    def assign_partitions(self, partitions_per_topic, subscriptions, cluster):
        return {m: [] for m in subscriptions}


def test_member_protocol_is_the_most_advanced_all_its_assignors_support():
    assert rebalance_protocol_for([get_assignor("range")]) == RebalanceProtocol.EAGER
    assert rebalance_protocol_for([get_assignor("cooperative-sticky")]) == RebalanceProtocol.COOPERATIVE
    # one eager assignor in the list keeps the whole member eager
    assert rebalance_protocol_for([get_assignor("cooperative-sticky"), get_assignor("range")]) == RebalanceProtocol.EAGER
    with pytest.raises(KassignError, match="share no rebalance protocol"):
        rebalance_protocol_for([_CoopOnly(), get_assignor("range")])
    assert get_assignor("range").supported_protocols == (EAGER,)


def test_member_lists_one_subscription_per_strategy_in_order():
    member = GroupMember("A", ["t0"], ["cooperative-sticky", "range"])
    assert [name for name, _ in member.join_protocols()] == ["cooperative-sticky", "range"]
    assert member.protocol == RebalanceProtocol.EAGER
