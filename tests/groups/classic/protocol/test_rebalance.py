"""Eager and cooperative rebalances through the real coordinator, members and assignors."""

from __future__ import annotations

import pytest

from kassign.groups.classic.assignors import COOPERATIVE, EAGER
from kassign.groups.classic.assignors.base import AbstractPartitionAssignor, TopicPartition
from kassign.core.cluster import Cluster
from kassign.groups.classic.protocol.coordinator import GroupCoordinator
from kassign.groups.classic.protocol.member import GroupMember
from kassign.groups.classic.protocol.rebalance import InvariantViolation, run_rebalance

T = [f"t{i}" for i in range(4)]
CLUSTER = Cluster({t: 2 for t in T})


def group(strategy, names=("C0", "C1", "C2"), topics=T):
    coordinator = GroupCoordinator()
    members = {n: GroupMember(n, topics, [strategy]) for n in names}
    return coordinator, members


def owners(members):
    return {tp: m for m, mb in members.items() for tp in mb.owned}


def test_eager_member_revokes_everything_before_joining():
    coordinator, members = group("range")
    run_rebalance(coordinator, members, CLUSTER)
    members["C3"] = GroupMember("C3", T, ["range"])
    rounds = run_rebalance(coordinator, members, CLUSTER)
    assert len(rounds) == 1
    assert rounds[0].revoked == 8  # all 8 partitions were given up, even those that stayed put
    assert rounds[0].generation == 2


def test_cooperative_join_takes_two_rounds_and_only_moving_partitions_are_revoked():
    coordinator, members = group("cooperative-sticky", names=("C0", "C1"))
    run_rebalance(coordinator, members, CLUSTER)
    before = owners(members)
    members["C2"] = GroupMember("C2", T, ["cooperative-sticky"])
    rounds = run_rebalance(coordinator, members, CLUSTER)
    assert len(rounds) == 2
    first, second = rounds
    # round 1: nothing reaches the newcomer; what moves is revoked and left unowned
    assert first.assignment["C2"] == ()
    round1_owner = {tp: m for m, parts in first.assignment.items() for tp in parts}
    revoked_in_round_1 = {tp for tp in before if tp not in round1_owner}
    assert first.revoked == len(revoked_in_round_1) > 0
    # round 2: exactly those partitions go to C2, nobody else changes
    assert set(second.assignment["C2"]) == revoked_in_round_1
    assert second.revoked == 0
    after = owners(members)
    moved = {tp for tp in before if after[tp] != before[tp]}
    assert moved == revoked_in_round_1
    assert sorted(len(mb.owned) for mb in members.values()) == [2, 3, 3]


class _Grabby(AbstractPartitionAssignor):
    """Claims to cooperate but hands partitions straight to a new owner: the leader must refuse."""

    name = "grabby"
    supported_protocols = (COOPERATIVE,)

    def assign_partitions(self, partitions_per_topic, subscriptions, cluster):
        order = sorted(subscriptions)
        every = [TopicPartition(t, p) for t in sorted(partitions_per_topic) for p in range(partitions_per_topic[t])]
        shift = len(subscriptions) - 1  # rotates owners each generation once there are owned partitions
        return {m: [tp for i, tp in enumerate(every) if order[(i + shift) % len(order)] == m] for m in order}


def test_leader_refuses_a_cooperative_assignment_that_skips_revocation():
    coordinator = GroupCoordinator()
    members = {"C0": GroupMember("C0", T, [_Grabby()])}
    run_rebalance(coordinator, members, CLUSTER)
    members["C1"] = GroupMember("C1", T, [_Grabby()])
    with pytest.raises(InvariantViolation, match="still owns it"):
        run_rebalance(coordinator, members, CLUSTER)


class _Lazy(AbstractPartitionAssignor):
    name = "lazy"
    supported_protocols = (EAGER,)

    def assign_partitions(self, partitions_per_topic, subscriptions, cluster):
        return {m: [] for m in subscriptions}


def test_partitions_left_without_owner_break_the_invariant():
    coordinator = GroupCoordinator()
    with pytest.raises(InvariantViolation, match="have no owner"):
        run_rebalance(coordinator, {"C0": GroupMember("C0", T, [_Lazy()])}, CLUSTER)


def test_broadcast_shares_partitions_on_purpose_and_is_not_flagged():
    coordinator, members = group("broadcast", names=("C0", "C1"))
    run_rebalance(coordinator, members, CLUSTER)
    assert len(members["C0"].owned) == len(members["C1"].owned) == 8


def test_mixed_group_upgrading_to_cooperative_stays_safe():
    coordinator = GroupCoordinator()
    members = {
        "C0": GroupMember("C0", T, ["cooperative-sticky", "range"]),  # eager: range cannot cooperate
        "C1": GroupMember("C1", T, ["cooperative-sticky"]),           # cooperative
    }
    rounds = run_rebalance(coordinator, members, CLUSTER)
    assert rounds[-1].protocol == "cooperative-sticky"
    members["C2"] = GroupMember("C2", T, ["cooperative-sticky"])
    run_rebalance(coordinator, members, CLUSTER)
    assert sorted(len(mb.owned) for mb in members.values()) == [2, 3, 3]
