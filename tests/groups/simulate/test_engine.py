"""The timeline engine: the seeds' stories, static membership, timing, and safety over random timelines."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign.groups.classic.assignors.base import TopicPartition as TP
from kassign.core.errors import ScenarioError
from kassign.groups.simulate import load_sim_scenario, parse_sim_scenario, simulate
from tests.groups.simulate.timelines import draw_events, draw_topics
from tests.conftest import REPO

EXAMPLES = REPO / "examples"
FOUR = ["t0", "t1", "t2", "t3"]


def final_owned(run_strategy, scenario):
    from kassign.groups.simulate.engine import TimelineRun

    timeline = TimelineRun(scenario, run_strategy)
    run = timeline.run()
    return run, {m: sorted(mb.owned) for m, mb in timeline.members.items()}


def test_seed_story_member_leaves_three_member_group_roundrobin_reshuffles():
    scenario = load_sim_scenario(EXAMPLES / "seeds-sticky-vs-roundrobin.yaml")
    run, owned = final_owned("roundrobin", scenario)
    assert owned == {"C0": [TP("t0", 0), TP("t1", 0), TP("t2", 0), TP("t3", 0)],
                     "C2": [TP("t0", 1), TP("t1", 1), TP("t2", 1), TP("t3", 1)]}
    assert run.records[1].moved == 5


def test_seed_story_member_leaves_three_member_group_sticky_keeps_the_rest():
    scenario = load_sim_scenario(EXAMPLES / "seeds-sticky-vs-roundrobin.yaml")
    run, owned = final_owned("sticky", scenario)
    assert run.records[0].loads == {"C0": 3, "C1": 3, "C2": 2}
    # C0 and C2 keep all they had (the seed's point) and share C1's partitions evenly; which of C1's
    # partitions goes where is the assignor's business, checked against Kafka's vectors elsewhere
    assert set(owned["C0"]) >= {TP("t0", 0), TP("t1", 1), TP("t3", 0)}
    assert set(owned["C2"]) >= {TP("t1", 0), TP("t2", 1)}
    assert len(owned["C0"]) == len(owned["C2"]) == 4
    assert run.records[1].moved == 3  # only C1's three partitions


def test_seed_story_different_subscriptions():
    scenario = load_sim_scenario(EXAMPLES / "seeds-different-subscriptions.yaml")
    rr, rr_owned = final_owned("roundrobin", scenario)
    assert rr.records[0].loads == {"C0": 1, "C1": 1, "C2": 4}
    assert rr_owned == {"C1": [TP("t0", 0), TP("t1", 1)], "C2": [TP("t1", 0), TP("t2", 0), TP("t2", 1), TP("t2", 2)]}
    sticky, st_owned = final_owned("sticky", scenario)
    assert sticky.records[0].loads == {"C0": 1, "C1": 2, "C2": 3}
    assert st_owned == {"C1": [TP("t0", 0), TP("t1", 0), TP("t1", 1)], "C2": [TP("t2", 0), TP("t2", 1), TP("t2", 2)]}
    assert sticky.records[1].moved == 1


def scenario(events, members=3, strategy_topics=FOUR, **settings_):
    return parse_sim_scenario({
        "topics": {t: 2 for t in FOUR},
        "members": {f"C{i}": {"topics": strategy_topics, "instance_id": f"host-{i}"} for i in range(members)},
        "settings": {"round_seconds": 2, "session_timeout": 10, **settings_},
        "events": events,
    })


def test_eager_pauses_everything_cooperative_only_what_moves():
    sc = scenario([{"at": 5, "type": "join", "member": "C3", "topics": FOUR}])
    eager = simulate(sc, "sticky").records[1]
    coop = simulate(sc, "cooperative-sticky").records[1]
    assert (eager.rounds, eager.revoked) == (1, 8)
    assert eager.unowned_partition_seconds == 8 * 2  # all 8 partitions idle for the one round
    assert coop.rounds == 2 and coop.revoked == coop.moved == 2
    assert coop.unowned_partition_seconds == 2 * 2  # 2 moving partitions idle during round 2 only
    assert eager.moved == 2


def test_static_member_back_within_session_timeout_causes_no_rebalance():
    run = simulate(scenario([{"at": 5, "type": "restart", "member": "C1", "down": 4}]), "range")
    restart, back = run.records[1], run.records[2]
    assert restart.rounds == 0 and back.rounds == 0
    assert "no rebalance" in back.note
    assert restart.unowned_partition_seconds == 4 * run.records[0].loads["C1"]  # its partitions idle while down
    assert back.generation == run.records[0].generation and back.loads == run.records[0].loads


def test_static_member_away_too_long_is_expired_then_rejoins():
    run = simulate(scenario([{"at": 5, "type": "restart", "member": "C1", "down": 30}]), "range")
    kinds = [(r.kind, r.at, r.rounds) for r in run.records[1:]]
    assert kinds == [("restart", 5, 0), ("expire", 15, 1), ("return", 35, 1)]
    assert "C1" not in run.records[2].loads and "C1" in run.records[3].loads


def test_crash_is_noticed_after_the_session_timeout():
    run = simulate(scenario([{"at": 5, "type": "crash", "member": "C2"}]), "roundrobin")
    crash, expire = run.records[1], run.records[2]
    assert crash.rounds == 0 and expire.at == 15 and expire.rounds == 1
    assert crash.unowned_partition_seconds == 10 * run.records[0].loads["C2"]
    assert set(expire.loads) == {"C0", "C1"}


def test_dynamic_restart_leaves_and_rejoins():
    sc = parse_sim_scenario({"topics": {"t0": 4}, "members": {"A": {"topics": ["t0"]}, "B": {"topics": ["t0"]}},
                             "events": [{"at": 1, "type": "restart", "member": "B", "down": 3}]})
    run = simulate(sc, "range")
    assert [(r.kind, r.rounds) for r in run.records[1:]] == [("restart", 1), ("return", 1)]


def test_metadata_events_rebalance_only_when_subscribed():
    sc = parse_sim_scenario({
        "topics": {"t0": 2},
        "members": {"A": {"topics": ["t0", "new"]}, "B": {"topics": ["t0"]}},
        "events": [{"at": 1, "type": "create_topic", "topic": "other", "partitions": 3},
                   {"at": 2, "type": "create_topic", "topic": "new", "partitions": 3},
                   {"at": 3, "type": "add_partitions", "topic": "t0", "add": 2},
                   {"at": 4, "type": "delete_topic", "topic": "new"},
                   {"at": 5, "type": "subscribe", "member": "B", "topics": []}]})
    records = simulate(sc, "range").records
    assert [r.rounds for r in records[1:]] == [0, 1, 1, 1, 1]
    assert records[2].loads == {"A": 4, "B": 1} and records[3].loads == {"A": 5, "B": 2}
    assert records[4].loads == {"A": 2, "B": 2} and records[5].loads == {"A": 4, "B": 0}


def test_member_without_a_common_strategy_is_refused_and_the_group_carries_on():
    sc = parse_sim_scenario({"topics": {"t0": 2}, "members": {"A": {"topics": ["t0"]}},
                             "events": [{"at": 1, "type": "join", "member": "B", "topics": ["t0"],
                                         "strategies": ["roundrobin"]},
                                        {"at": 2, "type": "leave", "member": "B"}]})
    records = simulate(sc, "range").records
    assert "INCONSISTENT_GROUP_PROTOCOL" in records[1].note and records[1].rounds == 0
    assert "skipped" in records[2].note


@pytest.mark.parametrize("doc,fragment", [
    ({"topics": {"t0": -1}}, "topics.t0"),
    ({"topics": {}, "events": [{"at": 1, "type": "fly"}]}, "events[0].type"),
    ({"topics": {}, "events": [{"at": 1, "type": "leave"}]}, "needs member"),
    ({"topics": {}, "events": [{"at": 1, "type": "leave", "member": "X"}]}, "no member 'X'"),
    ({"topics": {}, "events": [{"at": 1, "type": "delete_topic", "topic": "x"}]}, "does not exist"),
    ({"topics": {}, "settings": {"speed": 1}}, "allowed settings"),
    ({"topics": {}, "members": {"A": {"topics": ["t"]}}, "events": [{"at": 1, "type": "crash", "member": "A"},
                                                                     {"at": 2, "type": "leave", "member": "A"}]},
     "crashed earlier"),
])
def test_bad_scenarios_say_where(doc, fragment):
    with pytest.raises(ScenarioError, match=None) as err:
        parse_sim_scenario(doc)
    assert fragment in str(err.value)


# -- safety over random timelines ------------------------------------------------------------------

STRATEGIES = ["range", "roundrobin", "sticky", "cooperative-sticky"]


@st.composite
def timelines(draw):
    topics = draw_topics(draw)
    names = list(topics)
    members = {f"C{i}": {"topics": draw(st.lists(st.sampled_from(names), min_size=1, unique=True)),
                         **({"instance_id": f"h{i}"} if draw(st.booleans()) else {})}
               for i in range(draw(st.integers(1, 4)))}
    events = draw_events(draw, topics, members, gaps=[0.5, 1, 3, 7, 20], downs=[1, 5, 60], recreate=False)
    return {"topics": topics, "members": members, "events": events,
            "settings": {"round_seconds": 1, "session_timeout": 10, "rebalance_timeout": 30}}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=timelines(), strategy=st.sampled_from(STRATEGIES))
def test_safety_invariant_holds_over_random_timelines(doc, strategy):
    # run_rebalance raises InvariantViolation at the first step where a partition has two owners
    # or a stable group leaves a subscribed partition unowned; here we also re-check the outcome.
    from kassign.groups.simulate.engine import TimelineRun

    timeline = TimelineRun(parse_sim_scenario(doc), strategy)
    run = timeline.run()
    owners: dict = {}
    for member in timeline.members.values():
        for tp in member.owned:
            assert tp not in owners, f"{tp} owned twice"
            owners[tp] = member.member_id
            assert tp.topic in timeline.topics and tp.partition < timeline.topics[tp.topic]
    for record in run.records:
        assert record.unowned_partition_seconds >= 0 and record.moved >= 0 and record.revoked >= 0
        if strategy != "cooperative-sticky":
            assert record.rounds <= 1


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_static_member_back_after_its_topic_was_deleted_does_not_keep_it(strategy):
    """Found by the property above: the only subscriber of t0 is down (static, within its session
    timeout) when t0 is deleted, so nobody rebalances then. When it comes back, its kept assignment
    predates the deletion; as Kafka's leader does on a metadata mismatch, the group rebalances and the
    deleted partitions are gone."""
    from kassign.groups.simulate.engine import TimelineRun

    doc = {
        "topics": {"t0": 1, "t1": 1},
        "members": {"C0": {"topics": ["t0", "t1"], "instance_id": "h0"}},
        "events": [
            {"at": 1.0, "type": "restart", "member": "C0", "down": 1},
            {"at": 1.5, "type": "delete_topic", "topic": "t0"},
        ],
        "settings": {"round_seconds": 1, "session_timeout": 10, "rebalance_timeout": 30},
    }
    timeline = TimelineRun(parse_sim_scenario(doc), strategy)
    run = timeline.run()
    assert [tuple(tp) for tp in timeline.members["C0"].owned] == [("t1", 0)]
    assert "metadata changed while it was away" in run.records[-1].note


def test_a_static_member_that_is_down_still_holds_its_partitions_in_the_loads() -> None:
    scenario = load_sim_scenario(REPO / "examples" / "static-membership.yaml")
    for strategy in ("range", "consumer:uniform"):
        events = simulate(scenario, strategy).records
        down = next(r for r in events if r.description.startswith("restart S1"))
        assert down.loads.get("S1", 0) > 0, (strategy, down.loads)  # within its session timeout: still its own
        assert sum(down.loads.values()) == 8
