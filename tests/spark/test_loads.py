"""Driver-side stages on hand-made partition loads (no Spark): consumers, brokers, rebalance, sweep verdict."""

from __future__ import annotations

import pytest

import kassign
from kassign.core.errors import KassignError
from kassign.spark import loads as stage
from kassign.spark.pipeline import PipelineOptions
from kassign.spark.stages.members import _scenario

LOADS = {("t", p): (10 * (p + 1), 1000 * (p + 1)) for p in range(6)}  # partition p: 10(p+1) records, 1000(p+1) bytes
SCENARIO = {"topics": {"t": 6}, "members": {"a": {"topics": ["t"]}, "b": {"topics": ["t"]}, "c": {"topics": ["t"]}}}


def test_consumer_load_sums_each_members_partitions():
    result = stage.consumer_load(SCENARIO, ["range", "load-aware"], LOADS)
    assert result["range"]["members"] == {  # range: a gets p0-1, b p2-3, c p4-5
        "a": {"partitions": 2, "records": 30, "bytes": 3000},
        "b": {"partitions": 2, "records": 70, "bytes": 7000},
        "c": {"partitions": 2, "records": 110, "bytes": 11000},
    }
    assert result["range"]["bytes_spread"] == {"max_minus_min": 8000, "max_over_mean": round(11000 / 7000, 4)}
    assert sorted(m["bytes"] for m in result["load-aware"]["members"].values()) == [7000, 7000, 7000]
    assert result["load-aware"]["records"] == sum(r for r, _ in LOADS.values())


def test_consumer_load_joins_the_assignment_table_to_the_loads_exactly():
    # two topics, a member without partitions, a partition without load: the Arrow join must give what
    # summing kassign.assign's lists gives, for every strategy
    scenario = {"topics": {"t": 6, "u": 5}, "members": {
        "m3": {"topics": ["t", "u"]}, "m1": {"topics": ["t"]}, "m2": {"topics": ["u"]}, "idle": {"topics": []}}}
    loads = {**LOADS, **{("u", p): (p, 7 * p) for p in range(4)}}  # ("u", 4) carries nothing
    result = stage.consumer_load(scenario, list(stage.STRATEGIES), loads)
    for strategy, got in result.items():
        expected = stage._assign(strategy, scenario, loads)
        assert got["assignment"] == {m: [[t, p] for t, p in tps] for m, tps in expected.items()}, strategy
        assert list(got["members"]) == list(expected)
        for member, tps in expected.items():
            assert got["members"][member] == {
                "partitions": len(tps), "records": sum(loads.get(tp, (0, 0))[0] for tp in tps),
                "bytes": sum(loads.get(tp, (0, 0))[1] for tp in tps)}, (strategy, member)


def test_rebalance_cost_counts_what_changes_owner():
    consumers = stage.consumer_load(SCENARIO, ["range", "roundrobin"], LOADS)
    cost = stage.rebalance_cost(SCENARIO, consumers, LOADS)
    # range without c: a p0-2, b p3-5. Before: a p0-1, b p2-3, c p4-5 -> p2, p4, p5 change owner.
    assert cost["range"]["member_leaves"] == {"member": "c", "partitions": 3, "bytes": 3000 + 5000 + 6000,
                                              "records": 30 + 50 + 60, "forced_partitions": 2}
    joined = {**SCENARIO["members"], "joiner": {"topics": ["t"]}}
    after = kassign.assign("range", {"topics": {"t": 6}, "members": joined})
    before_owner = {tuple(tp): m for m, tps in consumers["range"]["assignment"].items() for tp in tps}
    moved = [tp for m, tps in after.items() for tp in tps if before_owner[tp] != m]
    assert cost["range"]["member_joins"]["partitions"] == len(moved)


def test_cooperative_rebalance_runs_until_revoked_partitions_find_an_owner():
    consumers = stage.consumer_load(SCENARIO, ["cooperative-sticky"], LOADS)
    cost = stage.rebalance_cost(SCENARIO, consumers, LOADS)["cooperative-sticky"]
    assert cost["member_joins"]["partitions"] == 1  # 6 partitions, 4 members: the joiner takes 1 (2 rounds)
    assert cost["member_leaves"]["partitions"] == cost["member_leaves"]["forced_partitions"] == 2


@pytest.mark.parametrize("placer", ["striped", "legacy"])
def test_broker_load_matches_kafkas_placement(placer):
    brokers = [(0, "r1"), (1, "r2"), (2, "r1")]
    result = stage.broker_load(brokers, {"t": 6}, 2, LOADS, seed=5, placer=placer)
    placement = kassign.assign_replicas(brokers, 6, 2, placer=placer, seed=5)
    assert (result["placer"], result["seed"]) == (placer, 5)
    assert result["placement"]["t"] == {str(p): r for p, r in placement.items()}
    for broker, row in result["brokers"].items():
        assert row["leader_bytes"] == sum(LOADS[("t", p)][1] for p, r in placement.items() if r[0] == int(broker))
        assert row["replica_bytes"] == sum(LOADS[("t", p)][1] for p, r in placement.items() if int(broker) in r)
    assert result["racks"]["r1"]["leader_bytes"] + result["racks"]["r2"]["leader_bytes"] == 21000


def test_sweep_verdict_picks_the_first_count_under_target():
    verdict = stage.sweep_verdict([(1, 100, 1), (2, 70, 2), (3, 40, 3), (4, 30, 4)], 100, 0.45)
    assert verdict["recommended_partitions"] == 3
    assert [c["skew"] for c in verdict["curve"]] == [1.0, 1.4, 1.2, 1.2]
    assert stage.sweep_verdict([(1, 100, 1)], 100, 0.5)["recommended_partitions"] is None
    with pytest.raises(KassignError):
        stage.sweep_verdict([], 1, 0)


def test_a_scenario_file_sets_members_and_partition_counts():
    scenario = {"topics": {"events": 4}, "members": {"x": {"topics": ["events"]}, "y": {"topics": ["events"]}}}
    doc, counts = _scenario(PipelineOptions(out="-", scenario=scenario, partitions=12), ["events", "other"])
    assert counts == {"events": 4, "other": 12}
    assert list(doc["members"]) == ["x", "y"]
    doc, counts = _scenario(PipelineOptions(out="-", members=2, partitions=3), ["events"])
    assert doc == {"topics": {"events": 3}, "members": {"consumer-0": {"topics": ["events"]},
                                                        "consumer-1": {"topics": ["events"]}}}


def test_unavailable_strategies_are_skipped_with_the_reason():
    usable, skipped = stage.available_strategies(["range", "no-such-strategy", "consumer:uniform", "consumer:sticky"])
    assert usable == ["range", "consumer:uniform"] and set(skipped) == {"no-such-strategy", "consumer:sticky"}


def test_consumer_protocol_strategies_run_the_group_coordinators_assignors():
    consumers = stage.consumer_load(SCENARIO, ["consumer:uniform", "consumer:range"], LOADS)
    for name in ("uniform", "range"):
        expected = kassign.assign(name, SCENARIO, protocol="consumer")
        assert consumers[f"consumer:{name}"]["assignment"] == {m: [list(tp) for tp in v] for m, v in expected.items()}
    cost = stage.rebalance_cost(SCENARIO, consumers, LOADS)
    # uniform keeps the two members' targets within quota: the leaver's 2 partitions move, nothing else
    assert cost["consumer:uniform"]["member_leaves"]["partitions"] == 2
    # a joiner of 4 members on 6 partitions: quotas 2,2,1,1 -> at least one partition moves, at most 2
    assert 1 <= cost["consumer:uniform"]["member_joins"]["partitions"] <= 2


def test_the_classic_strategies_answer_as_the_runs_release():
    # racks count for range from Kafka 3.5.0: members a (rack r1) and b (rack r0) over partitions on r0, r1, r0, r1
    racked = {"topics": {"t": 4}, "partition_racks": {"t": [["r0"], ["r1"], ["r0"], ["r1"]]},
              "members": {"a": {"topics": ["t"], "rack": "r1"}, "b": {"topics": ["t"], "rack": "r0"}}}
    loads = {("t", p): (1, 100 * (p + 1)) for p in range(4)}
    old = stage.consumer_load(racked, ["range", "roundrobin"], loads, "3.4.0")
    new = stage.consumer_load(racked, ["range", "roundrobin"], loads, "4.4")
    assert old["range"]["assignment"] == {"a": [["t", 0], ["t", 1]], "b": [["t", 2], ["t", 3]]}
    assert new["range"]["assignment"] == {"a": [["t", 1], ["t", 3]], "b": [["t", 0], ["t", 2]]}
    assert old["roundrobin"]["assignment"] == new["roundrobin"]["assignment"]
    assert stage.available_strategies(["sticky", "random"], "3.0")[0] == ["sticky", "random"]


def test_a_release_without_the_consumer_protocol_skips_its_strategies_saying_why():
    for version, why in (("3.9", "early access"), ("3.6.2", "has no consumer protocol")):
        usable, skipped = stage.available_strategies(["range", "consumer:uniform", "consumer:range", "share:simple"],
                                                     version)
        assert usable == ["range"] and set(skipped) == {"consumer:uniform", "consumer:range", "share:simple"}
        assert why in skipped["consumer:uniform"] and f"Kafka {version} has the classic protocol's" in skipped["consumer:range"]
    assert stage.available_strategies(["consumer:uniform"], "4.0.0")[0] == ["consumer:uniform"]
