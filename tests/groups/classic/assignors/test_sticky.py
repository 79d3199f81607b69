"""StickyAssignor (eager): Kafka's vectors, the seeds' story, user data in Kafka's format, claims, properties."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kassign
from kassign.groups.classic.assignors import get_assignor
from kassign.groups.classic.assignors.sticky.claims import Claim, TopicLayout, resolve_previous_owners
from kassign.groups.classic.assignors.sticky.uniform import _Quotas, _round_robin_blocks, _round_robin_loop
from kassign.groups.classic.assignors.sticky.userdata import encode_sticky_user_data
from kassign.groups.classic.assignors.base import Assignment, Subscription, TopicPartition
from kassign.groups.classic.assignors.eager_sticky import StickyAssignor
from kassign.core.cluster import Cluster
from tests.conftest import vector_params


def per_member_sorted(assignment):
    return {m: sorted(tuple(tp) for tp in v) for m, v in assignment.items()}


def lines(name, uniform):
    """Vector lines with (or without) the same subscriptions everywhere; one skip param when absent."""
    return vector_params(name, where=lambda line: line["uniform"] == uniform)


@pytest.mark.parametrize("line", lines("assign-sticky.jsonl", uniform=True))
def test_uniform_vectors_match_kafka(line):
    got = kassign.assign("sticky", line["scenario"])
    assert per_member_sorted(got) == per_member_sorted(line["expected"])


def _spread(assignment, members):
    counts = [len(assignment.get(m, [])) for m in members]
    return max(counts) - min(counts)


def _moved(assignment, scenario):
    previous = {tuple(tp): m for m, spec in scenario["members"].items() for tp in spec.get("owned", [])}
    return sum(1 for m, v in assignment.items() for tp in v if previous.get(tuple(tp), m) != m)


@pytest.mark.parametrize("line", lines("assign-sticky.jsonl", uniform=False))
def test_general_lines_never_worse_than_kafka(line):
    scenario = line["scenario"]
    got = kassign.assign("sticky", scenario)
    owners = Counter(tp for v in got.values() for tp in v)
    assert all(c == 1 for c in owners.values())
    for member, partitions in got.items():
        assert {t for t, _ in partitions} <= set(scenario["members"][member]["topics"])
    ours, kafka = _spread(got, scenario["members"]), _spread(line["kafka_result"], scenario["members"])
    assert ours <= kafka
    if ours == kafka:
        assert _moved(got, scenario) <= _moved(line["kafka_result"], scenario)


SEED_TOPICS = {"t0": 2, "t1": 2, "t2": 2, "t3": 2}


def test_seed_story_fresh_three_members():
    members = {c: {"topics": list(SEED_TOPICS)} for c in ("C0", "C1", "C2")}
    got = kassign.assign("sticky", {"topics": SEED_TOPICS, "members": members})
    # Round robin over partitions sorted by topic, members sorted by id, as the seed shows.
    assert got == {
        "C0": [("t0", 0), ("t1", 1), ("t3", 0)],
        "C1": [("t0", 1), ("t2", 0), ("t3", 1)],
        "C2": [("t1", 0), ("t2", 1)],
    }


def test_seed_story_c1_leaves_c0_and_c2_keep_everything():
    before = {"C0": [["t0", 0], ["t1", 1], ["t3", 0]], "C2": [["t1", 0], ["t2", 1]]}
    members = {c: {"topics": list(SEED_TOPICS), "owned": owned, "generation": 1} for c, owned in before.items()}
    got = kassign.assign("sticky", {"topics": SEED_TOPICS, "members": members})
    for member, owned in before.items():
        assert {tuple(tp) for tp in owned} <= set(got[member])
    assert sorted(len(v) for v in got.values()) == [4, 4]
    # Worked by hand: C0 keeps 3 and C2 keeps 2; the round robin over [C0, C2] hands
    # t0p1 to C0 (now full), then t2p0 and t3p1 to C2.
    assert got["C0"] == [("t0", 0), ("t0", 1), ("t1", 1), ("t3", 0)]
    assert got["C2"] == [("t1", 0), ("t2", 0), ("t2", 1), ("t3", 1)]


def test_history_travels_in_kafka_user_data():
    assignor = StickyAssignor()
    sub = assignor.subscription(["t0"], owned_partitions=[("t0", 1), ("t0", 3)], generation=7)
    assert sub.user_data == encode_sticky_user_data([("t0", 1), ("t0", 3)], 7)
    # A Java member's bytes (version 0, no generation) are read the same way.
    java_v0 = bytes.fromhex("00000001" "0002" "7430" "00000002" "00000000" "00000002")
    subs = {"A": Subscription(("t0",), user_data=java_v0), "B": Subscription(("t0",))}
    got = assignor.assign(Cluster({"t0": 4}), subs)
    assert {TopicPartition("t0", 0), TopicPartition("t0", 2)} == set(got["A"].partitions)


def test_on_assignment_is_remembered_for_the_next_subscription():
    member = StickyAssignor()
    assert member.subscription(["t0"]).user_data == b""
    member.on_assignment(Assignment((TopicPartition("t0", 2),)), generation=4)
    assert member.subscription(["t0"]).user_data == encode_sticky_user_data([("t0", 2)], 4)


def test_member_reused_across_rebalances_keeps_its_partitions():
    cluster = Cluster({"t0": 6})
    members = {m: StickyAssignor() for m in ("A", "B", "C")}
    leader = StickyAssignor()
    first = leader.assign(cluster, {m: a.subscription(["t0"]) for m, a in members.items()})
    for m, a in members.items():
        a.on_assignment(first[m], generation=1)
    del members["B"]
    second = leader.assign(cluster, {m: a.subscription(["t0"]) for m, a in members.items()})
    for m in members:
        assert set(first[m].partitions) <= set(second[m].partitions)
    assert sorted(len(second[m].partitions) for m in members) == [3, 3]


def test_unreadable_user_data_is_ignored_with_a_warning(caplog):
    subs = {"A": Subscription(("t0",), user_data=b"\x00\x00\x00\x05garbage"), "B": Subscription(("t0",))}
    with caplog.at_level(logging.WARNING, logger="kassign"):
        got = StickyAssignor().assign(Cluster({"t0": 4}), subs)
    assert "unreadable sticky user data of member A" in caplog.text
    assert sorted(len(a.partitions) for a in got.values()) == [2, 2]


def test_stale_claims_are_dropped_with_warnings(caplog):
    scenario = {
        "topics": {"t0": 2},
        "members": {
            "A": {"topics": ["t0"], "owned": [["gone", 0], ["t0", 9], ["t0", 1]], "generation": 3},
            "B": {"topics": ["t0"]},
        },
    }
    with caplog.at_level(logging.WARNING, logger="kassign"):
        got = kassign.assign("sticky", scenario)
    assert got == {"A": [("t0", 1)], "B": [("t0", 0)]}
    assert "topics the cluster does not have" in caplog.text
    assert "beyond its topic's partition count" in caplog.text


def test_higher_generation_wins_a_double_claim(caplog):
    members = {
        "old": {"topics": ["t0"], "owned": [["t0", 0], ["t0", 1]], "generation": 2},
        "new": {"topics": ["t0"], "owned": [["t0", 0]], "generation": 5},
    }
    with caplog.at_level(logging.WARNING, logger="kassign"):
        got = kassign.assign("sticky", {"topics": {"t0": 2}, "members": members})
    assert got == {"new": [("t0", 0)], "old": [("t0", 1)]}
    assert "older generation" in caplog.text or "newer generation" in caplog.text


def test_same_generation_double_claim_belongs_to_nobody(caplog):
    layout = TopicLayout({"t0": 3})
    claims = [
        Claim.from_pairs("A", 4, ["t0"], [("t0", 0), ("t0", 1)]),
        Claim.from_pairs("B", 4, ["t0"], [("t0", 1), ("t0", 2)]),
    ]
    with caplog.at_level(logging.WARNING, logger="kassign"):
        resolved = resolve_previous_owners(layout, claims)
    assert resolved.owner.tolist() == [0, -1, 1]
    assert resolved.contested.tolist() == [1]
    assert "same generation" in caplog.text


def test_unsubscribed_topic_claims_are_dropped(caplog):
    layout = TopicLayout({"t0": 2, "t1": 2})
    with caplog.at_level(logging.WARNING, logger="kassign"):
        resolved = resolve_previous_owners(layout, [Claim.from_pairs("A", 1, ["t0"], [("t1", 0), ("t0", 1)])])
    assert resolved.owned_partitions() == {"A": (TopicPartition("t0", 1),)}
    assert "no longer subscribes" in caplog.text


def test_registry_and_cli_subprocess(tmp_path):
    assert isinstance(get_assignor("org.apache.kafka.clients.consumer.StickyAssignor"), StickyAssignor)
    scenario = {"topics": SEED_TOPICS, "members": {c: {"topics": list(SEED_TOPICS)} for c in ("C0", "C1", "C2")}}
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    out = subprocess.run(
        [sys.executable, "-m", "kassign.cli.main", "assign", "--strategy", "sticky", str(path), "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["assignment"]["C2"] == [["t1", 0], ["t2", 1]]


# ---- properties -------------------------------------------------------------------------------


@st.composite
def uniform_groups(draw):
    topics = {f"t{i}": draw(st.integers(1, 6)) for i in range(draw(st.integers(1, 4)))}
    names = draw(st.lists(st.text("abcXYZ-0123", min_size=1, max_size=5), min_size=1, max_size=7, unique=True))
    all_partitions = [(t, p) for t, n in topics.items() for p in range(n)]
    shuffled = draw(st.permutations(all_partitions))
    members = {}
    for name in names:
        members[name] = {"topics": list(topics), "generation": draw(st.integers(-1, 3))}
    # Hand each partition to at most one previous owner, some to nobody.
    for tp in shuffled:
        holder = draw(st.sampled_from([*names, None]))
        if holder is not None:
            members[holder].setdefault("owned", []).append(list(tp))
    return {"topics": topics, "members": members}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(uniform_groups())
def test_uniform_assignment_is_complete_balanced_and_sticky(scenario):
    got = kassign.assign("sticky", scenario)
    counts = Counter(tp for v in got.values() for tp in v)
    total = sum(scenario["topics"].values())
    assert len(counts) == total and set(counts.values()) == {1}
    sizes = [len(v) for v in got.values()]
    assert max(sizes) - min(sizes) <= 1
    quota = total // len(scenario["members"])
    for member, spec in scenario["members"].items():
        owned = {tuple(tp) for tp in spec.get("owned", [])}
        kept = owned & set(got[member])
        # Balance allows keeping up to the minimum quota, so that much always stays.
        assert len(kept) >= min(len(owned), quota)


@settings(max_examples=120, deadline=None)
@given(
    counts=st.lists(st.integers(0, 6), min_size=1, max_size=8),
    extra_members=st.integers(0, 3),
    spread=st.sampled_from(["all, as None", "all, as ids", "scattered ids"]),
)
def test_vectorised_round_robin_matches_the_partition_by_partition_loop(counts, extra_members, spread):
    members = len(counts) + extra_members
    total = sum(counts) + members * 3 + 2
    quotas_a, quotas_b = _Quotas(total, members), _Quotas(total, members)
    start = np.zeros(members, dtype=np.int64)
    start[: len(counts)] = np.minimum(counts, quotas_a.min)
    for q in (quotas_a, quotas_b):
        q.count[:] = start
        q.under = [m for m in range(members) if start[m] < q.min]
        q.at_min = [m for m in range(members) if start[m] == q.min and q.min < q.max]
    left = total - int(start.sum())
    # The unassigned ids among the owner array's slots: all of them, or every other one of twice as many.
    unassigned = np.arange(left, dtype=np.int64) * (2 if spread == "scattered ids" else 1)
    owner_a = np.full(int(unassigned[-1]) + 1 if left else 0, -1, dtype=np.int32)
    owner_b = owner_a.copy()
    _round_robin_loop(unassigned.tolist(), quotas_a, owner_a)
    _round_robin_blocks(None if spread == "all, as None" else unassigned, quotas_b, owner_b)
    assert owner_a.tolist() == owner_b.tolist()
    assert quotas_a.count.tolist() == quotas_b.count.tolist()
    assert (quotas_a.under, quotas_a.at_min) == (quotas_b.under, quotas_b.at_min)


@st.composite
def rack_groups(draw):
    scenario = draw(uniform_groups())
    racks = ["r0", "r1", "r2"]
    for spec in scenario["members"].values():
        spec["rack"] = draw(st.sampled_from([*racks, None]))
    scenario["partition_racks"] = {
        t: [draw(st.lists(st.sampled_from(racks), min_size=1, max_size=2, unique=True)) for _ in range(n)]
        for t, n in scenario["topics"].items()
    }
    return scenario


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rack_groups(), st.sampled_from(["sticky", "cooperative-sticky"]))
def test_rack_aware_uniform_assignment_stays_balanced(scenario, strategy):
    got = kassign.assign(strategy, scenario)
    counts = Counter(tp for v in got.values() for tp in v)
    assert set(counts.values()) <= {1}
    if strategy == "sticky":
        assert len(counts) == sum(scenario["topics"].values())
        sizes = [len(v) for v in got.values()]
        assert max(sizes) - min(sizes) <= 1
