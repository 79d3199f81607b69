"""The Streams simulator with rack-aware task assignment (KIP-925): the timeline's rack fields, the
``NAME:rack=STRATEGY`` strategies, what reaches the assignor, and the cross-rack count."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign.core.errors import ScenarioError
from kassign.groups.simulate.streams_engine import StreamsTimelineRun, simulate_streams
from kassign.groups.simulate.streams_metrics import strategy_label, summary_sentences
from kassign.groups.simulate.streams_scenario import parse_streams_timeline, streams_strategy_options
from tests.conftest import REPO
from tests.groups.simulate.run_cli import kassign
from tests.groups.simulate.timelines import changed

# Two instances in two zones; orders-0 has its only replica in az-b, orders-1 in az-a. Kafka's
# round robin gives 0_0 to the first process (a, in az-a) and 0_1 to b: both read across zones.
TWO_ZONES = {
    "application": {
        "subtopologies": {"0": {"partitions": 2, "stateful": True, "source_topics": ["orders"],
                                "changelog_topics": ["store-changelog"]}},
        "state_bytes": "1 MiB", "restore_bytes_per_second": "1 MiB",
        "partition_racks": {"orders": [["az-b"], ["az-a"]],
                            "store-changelog": [["az-a", "az-b"], ["az-a", "az-b"]]},
    },
    "settings": {"rack_aware_assignment_strategy": "min_traffic"},
    "instances": {"a": {"rack": "az-a", "process_id": "00000000-0000-0000-0000-000000000001"},
                  "b": {"rack": "az-b", "process_id": "00000000-0000-0000-0000-000000000002"}},
    "events": [{"at": 60, "type": "restart", "instance": "a", "down": 60}],
}


def doc_with(**changes) -> dict:
    return changed(TWO_ZONES, **changes)


def run(doc: dict, strategy: str):
    return simulate_streams(parse_streams_timeline(doc), strategy)


# -- what the timeline takes ---------------------------------------------------------------------------


def test_the_rack_fields_are_read():
    timeline = parse_streams_timeline(doc_with(settings={"rack_aware_assignment_strategy": "balance_subtopology",
                                                         "rack_aware_assignment_traffic_cost": 7,
                                                         "rack_aware_assignment_non_overlap_cost": -3}))
    app = timeline.application
    assert app.source_topics == {0: ["orders"]} and app.changelog_topics == {0: ["store-changelog"]}
    assert app.partition_racks["orders"] == [["az-b"], ["az-a"]]
    assert timeline.plans["a"].rack == "az-a" and timeline.plans["b"].rack == "az-b"
    assert timeline.settings["rack_aware_assignment_strategy"] == "balance_subtopology"
    assert (timeline.settings["rack_aware_assignment_traffic_cost"],
            timeline.settings["rack_aware_assignment_non_overlap_cost"]) == (7, -3)


def test_defaults_are_kafkas():
    timeline = parse_streams_timeline(doc_with(settings={}))
    assert timeline.settings["rack_aware_assignment_strategy"] == "none"
    assert timeline.settings["rack_aware_assignment_traffic_cost"] is None


def test_a_start_and_a_scale_out_give_racks():
    events = [{"at": 10, "type": "stop", "instance": "a"}, {"at": 20, "type": "start", "instance": "a", "rack": "az-b"},
              {"at": 30, "type": "scale_out", "add": 1, "rack": "az-a"}]
    timeline = parse_streams_timeline(doc_with(events=events))
    starts = [a for a in timeline.actions if a.kind == "start"]
    assert [(a.instance, a.plan.rack) for a in starts] == [("a", "az-b"), ("instance-1", "az-a")]


@pytest.mark.parametrize("change, where", [
    ({"settings": {"rack_aware_assignment_strategy": "nearest"}}, "settings.rack_aware_assignment_strategy"),
    ({"settings": {"rack_aware_assignment_traffic_cost": 2**31}}, "settings.rack_aware_assignment_traffic_cost"),
    ({"settings": {"rack_aware_assignment_non_overlap_cost": 1.5}},
     "settings.rack_aware_assignment_non_overlap_cost"),
    ({"application__subtopologies__0__source_topics": None}, "application.subtopologies.0.source_topics"),
    ({"application__subtopologies__0__changelog_topics": None}, "application.subtopologies.0.changelog_topics"),
    ({"application__subtopologies__0__source_topics": []}, "application.subtopologies.0.source_topics"),
    ({"application__partition_racks": None}, "application.partition_racks"),
    ({"application__partition_racks__orders": [["az-b"]]}, "application.partition_racks"),
    ({"application__partition_racks__orders": "az-a"}, "application.partition_racks"),
    ({"instances__a__rack": ""}, "instances.a.rack"),
])
def test_bad_rack_fields_are_refused_with_their_path(change, where):
    with pytest.raises(ScenarioError, match=f"streams timeline {where}"):
        parse_streams_timeline(doc_with(**change))


def test_a_stateless_subtopology_has_no_changelog():
    doc = doc_with(application__subtopologies={"0": {"partitions": 2, "source_topics": ["orders"],
                                                     "changelog_topics": ["x"]}})
    with pytest.raises(ScenarioError, match="stateless subtopology has no changelog"):
        parse_streams_timeline(doc)


def test_partition_racks_alone_need_source_topics_only():
    doc = doc_with(settings={}, application__subtopologies__0__changelog_topics=None)
    assert run(doc, "high-availability").racks_modelled
    with pytest.raises(ScenarioError, match="source_topics"):
        parse_streams_timeline(doc_with(settings={}, application__subtopologies__0__source_topics=None))


def test_without_partition_racks_nothing_is_counted():
    doc = doc_with(settings={}, application__partition_racks=None)
    played = run(doc, "high-availability")
    assert not played.racks_modelled and "cross_rack_tasks_mean" not in played.totals()
    assert "cross_rack_tasks" not in played.to_json()["events"][0]
    with pytest.raises(ScenarioError, match="partition_racks"):
        run(doc, "high-availability:rack=min_traffic")  # the strategy's rack-aware variant needs them


# -- strategies ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, parsed", [
    ("sticky", ("sticky", None, None)),
    ("high-availability:rack=none", ("high-availability", None, "none")),
    ("sticky:standbys=1:rack=balance_subtopology", ("sticky", 1, "balance_subtopology")),
    ("optimal:rack=min_traffic:standbys=0", ("optimal", 0, "min_traffic")),
])
def test_strategy_options(name, parsed):
    assert streams_strategy_options(name) == parsed


@pytest.mark.parametrize("name", ["sticky:rack=nearest", "sticky:rack=none:rack=none", "sticky:standbys=1:standbys=2",
                                  "sticky:racks=none"])
def test_bad_strategy_options(name):
    with pytest.raises(ScenarioError, match="may follow"):
        streams_strategy_options(name)


def test_the_streams_protocol_has_no_rack_option():
    with pytest.raises(ScenarioError, match="only :standbys=N may follow"):
        streams_strategy_options("sticky:rack=none", "streams")


def test_labels_say_the_options():
    assert strategy_label("high-availability:rack=none") == "high-availability without rack-aware assignment"
    assert strategy_label("sticky:standbys=1:rack=min_traffic") == \
        "sticky with one standby and with rack-aware min_traffic"


# -- the engine ------------------------------------------------------------------------------------------


def test_min_traffic_puts_each_task_where_it_reads_locally():
    # with the racks, high-availability swaps the round robin's deal: nothing reads across zones; while a
    # is down (60 s to 120 s, handed over at 62 s, taken back at 122 s) 0_1 reads orders-1 from az-b
    aware = run(TWO_ZONES, "high-availability")
    assert [r.cross_rack_tasks for r in aware.records] == [0, 0]
    assert aware.end == 124 and aware.cross_rack_task_seconds == pytest.approx(60.0)
    assert aware.totals()["cross_rack_tasks_mean"] == pytest.approx(60 / 124, abs=1e-6)
    plain = run(TWO_ZONES, "high-availability:rack=none")
    assert [r.cross_rack_tasks for r in plain.records] == [2, 2]
    # 2 for 60 s, 1 while a is down (62 s to 122 s), 2 from 122 s (0_0 moved back at once)
    assert plain.cross_rack_task_seconds == pytest.approx(2 * 60 + 1 * 60 + 2 * 2)


def test_sticky_optimises_only_with_both_costs():
    assert [r.cross_rack_tasks for r in run(TWO_ZONES, "sticky").records] == [2, 2]
    both = doc_with(settings={"rack_aware_assignment_strategy": "min_traffic",
                              "rack_aware_assignment_traffic_cost": 10, "rack_aware_assignment_non_overlap_cost": 1})
    assert run(both, "sticky").records[0].cross_rack_tasks == 0


def test_optimal_ignores_racks_and_says_so():
    played = [run(TWO_ZONES, s) for s in ("high-availability", "optimal")]
    assert played[1].rack_strategy == "ignored" and played[1].records[0].cross_rack_tasks == 2
    assert played[1].to_json()["rack_aware_assignment_strategy"] == "ignored"
    assert summary_sentences(played)[-1] == ("optimal ignores rack-aware assignment (min_traffic): kassign's "
                                             "optimal places tasks without looking at racks")
    assert not summary_sentences([played[0], run(TWO_ZONES, "optimal:rack=none")])[-1].startswith("optimal ignores")


def test_a_consumer_without_a_rack_turns_it_off_as_in_kafka():
    doc = doc_with(instances__b={"process_id": "00000000-0000-0000-0000-000000000002"})
    played = run(doc, "high-availability")
    # the plain deal stands; b's tasks are not counted (no rack), a's 0_0 reads orders-0 from az-b
    assert played.records[0].cross_rack_tasks == 1


SPREAD = ["az-a", "az-b", "az-c"]


@st.composite
def rack_timelines(draw):
    n = draw(st.integers(2, 4))
    parts = draw(st.integers(1, 6))
    replicas = [sorted(draw(st.sets(st.sampled_from(SPREAD), min_size=1, max_size=2))) for _ in range(parts)]
    names = [f"app-{i + 1}" for i in range(n)]
    events = draw(st.lists(st.fixed_dictionaries({
        "at": st.integers(1, 600), "type": st.just("restart"), "instance": st.sampled_from(names),
        "down": st.integers(1, 120)}), max_size=2))
    events.sort(key=lambda e: e["at"])
    kept, busy = [], {}
    for e in events:  # no restart of an instance that is still down
        if busy.get(e["instance"], -1) < e["at"]:
            kept.append(e)
            busy[e["instance"]] = e["at"] + e["down"]
    return {
        "application": {"subtopologies": {"0": {"partitions": parts, "stateful": True, "source_topics": ["in"],
                                                "changelog_topics": ["log"]}},
                        "state_bytes": "1 MiB", "restore_bytes_per_second": "1 MiB",
                        "partition_racks": {"in": replicas, "log": replicas}},
        "settings": {"rack_aware_assignment_strategy": draw(st.sampled_from(["none", "min_traffic"])),
                     "round_seconds": draw(st.sampled_from([0, 2]))},
        "instances": {name: {"rack": draw(st.sampled_from(SPREAD))} for name in names},
        "events": kept,
    }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rack_timelines(), st.sampled_from(["high-availability", "sticky", "optimal"]))
def test_the_count_is_the_tasks_reading_across_racks(doc, strategy):
    """After every rebalance, the count is what the delivered actives and the racks give, recounted here;
    and the time-weighted mean lies between no task and all of them."""
    timeline = parse_streams_timeline(doc)
    engine = StreamsTimelineRun(timeline, strategy, segments=False)
    seen = []
    real_apply = engine._apply

    def recount():
        racks = doc["application"]["partition_racks"]["in"]
        n = 0
        for task, slot in enumerate(engine.active.tolist()):
            if slot >= 0:
                rack = engine.plans[slot].rack
                n += rack is not None and rack not in racks[task]
        return n

    def apply_and_recount():
        real_apply()
        seen.append((engine.cross_rack_tasks(), recount()))

    engine._apply = apply_and_recount
    played = engine.run()
    assert all(mine == theirs for mine, theirs in seen)
    mean = played.totals()["cross_rack_tasks_mean"]
    assert 0 <= mean <= len(timeline.application.tasks)


def test_racks_everywhere_nothing_reads_across():
    doc = doc_with(application__partition_racks={"orders": [["az-a", "az-b"]] * 2,
                                                 "store-changelog": [["az-a", "az-b"]] * 2})
    for strategy in ("high-availability", "sticky", "optimal", "high-availability:rack=none"):
        played = run(doc, strategy)
        assert played.cross_rack_task_seconds == 0 and {r.cross_rack_tasks for r in played.records} == {0}


def test_the_simulated_rebalance_matches_assign_on_the_same_input():
    # the engine's scenario carries every rack field: the assignor's answer is the CLI's answer
    from kassign.groups.streams.classic import assign_streams_classic

    engine = StreamsTimelineRun(parse_streams_timeline(TWO_ZONES), "high-availability", segments=False)
    engine._begin()
    members = [s for s in engine.join_order if engine.up[s]]
    scenario, _ = engine._scenario(members, engine._reported(members))
    assert scenario.rack_aware_assignment_strategy == "min_traffic"
    assert [c.rack for client in scenario.clients for c in client.consumers] == ["az-a", "az-b"]
    answer = assign_streams_classic("high-availability", scenario)
    assert [v["active"] for v in answer["clients"].values()] == [["0_1"], ["0_0"]]
    assert np.array_equal(engine.active, [1, 0])


# -- the CLI --------------------------------------------------------------------------------------------

EXAMPLE = REPO / "examples" / "streams-rack-aware.yaml"


def test_the_example_shows_the_trade():
    result = kassign("simulate", str(EXAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    totals = {r["strategy"]: r["totals"] for r in doc["strategies"]}
    assert totals["high-availability"]["cross_rack_tasks_mean"] < totals["high-availability:rack=none"][
        "cross_rack_tasks_mean"]
    assert totals["sticky"]["cross_rack_tasks_mean"] < totals["sticky:rack=none"]["cross_rack_tasks_mean"]
    assert totals["sticky"]["restored_bytes"] > totals["sticky:rack=none"]["restored_bytes"]
    assert doc["settings"]["rack_aware_assignment_strategy"] == "min_traffic"
    assert any(line.startswith("optimal ignores rack-aware assignment") for line in doc["summary"])


def test_a_bad_rack_strategy_on_the_command_line():
    result = kassign("simulate", str(EXAMPLE), "--strategies", "sticky:rack=closest")
    assert result.returncode != 0 and "rack=none|min_traffic|balance_subtopology" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_negative_traffic_cost_is_a_java_int():
    # StreamsConfig takes any int: at -5 a cross-rack read is a gain, and the flow keeps the deal
    doc = doc_with(settings={"rack_aware_assignment_strategy": "min_traffic",
                             "rack_aware_assignment_traffic_cost": -5})
    assert run(doc, "high-availability").records[0].cross_rack_tasks == 2
