"""The Kafka Streams timeline engine: hand-checked small timelines, and invariants over random ones.

The small timelines use 1-byte records so that sizes read as record counts: a task of 1,000 records
restored at 100 records a second takes 10 s.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign.groups.simulate import streams_engine
from kassign.groups.simulate.streams_engine import simulate_streams
from kassign.groups.simulate.streams_metrics import summary_sentences
from kassign.groups.simulate.streams_scenario import load_streams_timeline, parse_streams_timeline
from kassign.groups.streams.classic.scenario import parse_streams_classic
from tests.conftest import REPO
from tests.groups.simulate.timelines import draw_streams_events

EXAMPLES = REPO / "examples"


def two_instances(events, growth=0, round_seconds=0, standbys=0, until=None, **settings_):
    return parse_streams_timeline({
        "until": until,
        "application": {"subtopologies": {"0": {"partitions": 2, "stateful": True}},
                        "state_bytes": 1000, "record_bytes": 1, "growth_bytes_per_second": growth,
                        "restore_bytes_per_second": 100},
        "settings": {"round_seconds": round_seconds, "num_standby_replicas": standbys, **settings_},
        "instances": {"a": {}, "b": {}},
        "events": events,
    })


def outages(run, record):
    return sorted(round(o.end - o.start, 6) for o in run.outages if o.record == record)


def active_at(run, task_name, moment):
    task = run.task_names.index(task_name)
    for segment in run.segments:
        if segment.task == task and segment.state in ("active", "restoring") and segment.start <= moment < segment.end:
            return segment.instance
    return None


# -- hand-checked ------------------------------------------------------------------------------------

def test_a_restart_without_standbys_costs_the_restoration_and_with_one_standby_nothing():
    timeline = two_instances([{"at": 100, "type": "restart", "instance": "a", "down": 60}])
    run = simulate_streams(timeline, "high-availability")
    restart = run.records[1]
    # a leaves: its task goes to b, which has no state: 1,000 records at 100 a second
    assert restart.unavailable_tasks == 1 and restart.unavailable_seconds == pytest.approx(10.0)
    assert restart.restored_bytes == pytest.approx(1000.0)
    # a is back with its state (nothing was written meanwhile): the task goes back at once
    assert outages(run, 1) == [10.0]
    with_standby = simulate_streams(timeline, "high-availability:standbys=1")
    assert with_standby.records[1].unavailable_seconds == 0 and with_standby.records[1].unavailable_tasks == 0
    assert with_standby.num_standby_replicas == 1
    sentence = summary_sentences([run, with_standby])[0]
    assert sentence == ("an instance restart costs 10 s of unavailability on 1 stateful task under high-availability, "
                        "0 s under high-availability with one standby")


def test_rounds_take_time_and_a_handed_over_task_waits_one_round():
    timeline = two_instances([{"at": 100, "type": "restart", "instance": "a", "down": 60}], round_seconds=2)
    run = simulate_streams(timeline, "high-availability")
    # leave at 100, assignment at 102, restored at 112; back at 160: b owns the task, so it is revoked
    # at 162 and handed to a by the follow-up rebalance at 164
    assert outages(run, 1) == [2.0, 12.0]
    assert run.records[1].rebalances == 3 and run.records[1].followups == 1
    standby = simulate_streams(timeline, "high-availability:standbys=1")
    assert outages(standby, 1) == [2.0, 2.0]


def test_warm_up_then_probing_rebalance_moves_the_task_back():
    # the changelog grows 10 records a second while the task runs: a is back 400 records behind, more
    # than the acceptable recovery lag of 100, so the task stays on b and a warms up
    timeline = two_instances([{"at": 100, "type": "restart", "instance": "a", "down": 60}], growth=10,
                             acceptable_recovery_lag=100, probing_rebalance_interval_ms=60_000, until=300)
    run = simulate_streams(timeline, "high-availability")
    restart = run.records[1]
    assert restart.warmups == 1 and restart.probing == 1
    moved_task = run.task_names[run.outages[0].task]
    assert active_at(run, moved_task, 159) == "b"
    warmups = [s for s in run.segments if s.state == "warm-up"]
    assert [(s.instance, s.start, s.end) for s in warmups] == [("a", 160.0, 220.0)]
    # the probing rebalance at 160 + 60 s finds a caught up and moves the task back
    assert active_at(run, moved_task, 219) == "b" and active_at(run, moved_task, 220) == "a"
    assert restart.settle_seconds == pytest.approx(120.0) and restart.followups == 1
    # before the restart the end offset was 1,000 + 100 s x 10, which b restores in 20 s; the hand-over at
    # 220 costs nothing with rounds of 0 s
    assert outages(run, 1) == [20.0]
    # restored: b's 2,000 records, and a's warm-up catching up 400 records while 10 a second are added
    assert restart.restored_bytes == pytest.approx(2000 + 400 * 100 / 90)
    # sticky asks for no probing: the task stays on b
    sticky = simulate_streams(timeline, "sticky")
    assert sticky.records[1].probing == 0 and sticky.records[1].warmups == 0


def test_a_crash_costs_the_session_timeout_more_than_a_graceful_leave():
    leave = simulate_streams(two_instances([{"at": 100, "type": "stop", "instance": "a"}]), "high-availability")
    crash = simulate_streams(two_instances([{"at": 100, "type": "crash", "instance": "a"}]), "high-availability")
    no_leave = simulate_streams(two_instances([{"at": 100, "type": "stop", "instance": "a", "leave_group": False}]),
                                "high-availability")
    assert outages(leave, 1) == [10.0]
    assert outages(crash, 1) == [55.0]  # 45 s until the session times out, then 10 s of restoring
    assert outages(no_leave, 1) == [55.0]  # a plain close() does not leave the group either


def test_a_rebalance_waits_for_a_crashed_member_until_its_session_ends():
    events = [{"at": 100, "type": "crash", "instance": "a"}, {"at": 110, "type": "start", "instance": "c"}]
    run = simulate_streams(two_instances(events), "high-availability")
    # c's join at 110 cannot finish before a's session ends at 145
    assert run.records[2].rebalances >= 1
    assert outages(run, 1)[0] >= 45.0


def test_lost_state_restores_from_nothing():
    kept = simulate_streams(two_instances([{"at": 100, "type": "restart", "instance": "a", "down": 5}]), "sticky")
    lost = simulate_streams(two_instances([{"at": 100, "type": "restart", "instance": "a", "down": 5,
                                            "state_lost": True}]), "sticky")
    assert lost.records[1].restored_bytes >= kept.records[1].restored_bytes


def test_an_empty_start_restores_everything_and_charges_it_to_the_start():
    timeline = two_instances([], initial_state="empty")
    run = simulate_streams(timeline, "high-availability")
    start = run.records[0]
    assert start.unavailable_tasks == 2 and start.unavailable_seconds == pytest.approx(10.0)
    assert start.restored_bytes == pytest.approx(2000.0)


def test_nothing_happens_without_events():
    run = simulate_streams(two_instances([]), "high-availability")
    assert run.totals()["rebalances"] == 0 and run.totals()["unavailable_task_seconds"] == 0 and run.end == 0


def test_the_example_tells_its_story():
    timeline = load_streams_timeline(EXAMPLES / "streams-restart.yaml")
    ha = simulate_streams(timeline, "high-availability")
    standby = simulate_streams(timeline, "high-availability:standbys=1")
    restart, crash = ha.records[1], ha.records[2]
    # app-2's two tasks restore 2 GiB and what the changelog grew by, at 25 MiB/s, after a 2 s round
    assert restart.unavailable_tasks == 2 and 84 < restart.unavailable_seconds < 90
    assert restart.warmups >= 2 and restart.probing >= 1  # back 15,000 records behind: warm-ups
    assert crash.unavailable_seconds > 45 + 2 + 80  # noticed after the session timeout
    assert standby.records[1].unavailable_seconds < 10 and standby.records[2].unavailable_seconds < 50
    assert ha.kafka_version == "4.4"  # the default release
    assert simulate_streams(timeline, "high-availability", "3.3").kafka_version == "3.3"


def test_runs_are_repeatable():
    timeline = load_streams_timeline(EXAMPLES / "streams-restart.yaml")
    first = json.dumps(simulate_streams(timeline, "sticky").to_json() | {"elapsed_seconds": 0})
    again = json.dumps(simulate_streams(timeline, "sticky").to_json() | {"elapsed_seconds": 0})
    assert first == again


def test_the_assignor_sees_what_the_subscriptions_would_say(monkeypatch):
    """The engine builds the assignor's scenario directly; the same subscriptions as a SPEC section 8
    document give the same scenario."""
    seen = []
    original = streams_engine.StreamsTimelineRun._scenario

    def spy(self, members, reported):
        scenario, member_of = original(self, members, reported)
        seen.append((scenario, [self.process_ids[s] for s in members]))
        return scenario, member_of

    monkeypatch.setattr(streams_engine.StreamsTimelineRun, "_scenario", spy)
    timeline = load_streams_timeline(EXAMPLES / "streams-restart.yaml")
    simulate_streams(timeline, "high-availability:standbys=1")
    simulate_streams(timeline, "sticky")
    assert len(seen) > 10
    for scenario, join_order in seen:
        assert parse_streams_classic(as_document(scenario, join_order)) == scenario


def as_document(scenario, join_order):
    name = scenario.task_name
    by_pid = {c.process_id: c for c in scenario.clients}
    subs: dict[str, dict] = {}
    for (sub, _), stateful in zip(scenario.tasks, scenario.stateful):
        entry = subs.setdefault(str(sub), {"partitions": 0, "stateful": stateful})
        entry["partitions"] += 1
    return {
        "subtopologies": subs,
        "end_offset_sums": {name(t): e for t, e in enumerate(scenario.end_offset_sums) if scenario.stateful[t]},
        "clients": {pid: {"client_tags": by_pid[pid].client_tags,
                          "consumers": {c.member_id: {"owned": [name(t) for t in c.owned],
                                                      "offset_sums": {name(t): v for t, v in c.offset_sums.items()}}
                                        for c in by_pid[pid].consumers}}
                    for pid in join_order},
        "num_standby_replicas": scenario.num_standby_replicas,
        "max_warmup_replicas": scenario.max_warmup_replicas,
        "acceptable_recovery_lag": scenario.acceptable_recovery_lag,
        "probing_rebalance_interval_ms": scenario.probing_rebalance_interval_ms,
    }


# -- invariants over random timelines ------------------------------------------------------------------

@st.composite
def timelines(draw, crash_only=False):
    n = draw(st.integers(2, 4))
    names = [f"i{k}" for k in range(n)]
    subtopologies = {"0": {"partitions": draw(st.integers(1, 6)), "stateful": True}}
    if draw(st.booleans()):
        subtopologies["1"] = {"partitions": draw(st.integers(1, 4)), "stateful": draw(st.booleans())}
    speed = draw(st.sampled_from([50, 200, 1000]))
    growth = draw(st.sampled_from([0, 5, 20]))
    settings_ = {"num_standby_replicas": draw(st.integers(0, 2)), "max_warmup_replicas": draw(st.integers(1, 2)),
                 "acceptable_recovery_lag": draw(st.sampled_from([0, 50, 10_000])),
                 "probing_rebalance_interval_ms": 60_000, "round_seconds": draw(st.sampled_from([0, 1, 2])),
                 "session_timeout": draw(st.sampled_from([5, 45]))}
    if crash_only:
        events = [{"at": 30, "type": "crash", "instance": draw(st.sampled_from(names))}]
    else:
        events = draw_streams_events(draw, names)
    return parse_streams_timeline({
        "application": {"subtopologies": subtopologies, "state_bytes": draw(st.sampled_from([0, 500, 3000])),
                        "record_bytes": 1, "growth_bytes_per_second": growth, "restore_bytes_per_second": speed},
        "settings": settings_, "instances": {name: {"threads": draw(st.integers(1, 2))} for name in names},
        "events": events,
    })


def overlapping(intervals):
    intervals = sorted(intervals)
    return any(b[0] < a[1] - 1e-9 for a, b in zip(intervals, intervals[1:]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timeline=timelines(), strategy=st.sampled_from(["high-availability", "sticky", "optimal"]))
def test_every_task_has_at_most_one_active_and_costs_are_never_negative(timeline, strategy):
    run = simulate_streams(timeline, strategy)
    for task in range(len(run.task_names)):
        actives = [(s.start, s.end) for s in run.segments if s.task == task and s.state in ("active", "restoring")]
        assert not overlapping(actives), run.task_names[task]
        running = [(s.start, s.end) for s in run.segments if s.task == task and s.state == "active"]
        dark = [(o.start, o.end) for o in run.outages if o.task == task]
        assert not overlapping(dark)
        assert not overlapping(running + dark)  # an outage is a time without a running active task
    for record in run.records:
        assert record.restored_bytes >= -1e-6
        assert record.unavailable_task_seconds >= 0 and record.unavailable_seconds >= 0
        assert record.unavailable_seconds <= run.end + 1e-6
    totals = run.totals()
    assert totals["rebalances"] == sum(r.rebalances for r in run.records)
    assert totals["unavailable_task_seconds"] == pytest.approx(sum(r.unavailable_task_seconds for r in run.records),
                                                               abs=1e-5)
    # every outage is charged in full to its event
    for record in run.records:
        charged = sum(o.end - o.start for o in run.outages if o.record == record.index)
        assert record.unavailable_task_seconds == pytest.approx(charged, abs=1e-6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timeline=timelines(crash_only=True))
def test_with_a_standby_a_crash_costs_no_restoration(timeline):
    """With a standby per task kept up (restoring faster than the changelog grows), a crash leaves a task
    without an active only until the session times out and one round promotes its standby: no
    restoring, except where the high-availability assignor counts an instance without the state as
    caught up (a lag within acceptable_recovery_lag) and restores that much."""
    run = simulate_streams(timeline, "high-availability:standbys=1")
    s = timeline.settings
    speed = float(timeline.application.restore_bytes.max())  # records per second: 1-byte records
    slack = s["acceptable_recovery_lag"] / speed
    for outage in (o for o in run.outages if o.record == 1 and o.start == 30):
        assert outage.end - outage.start <= s["session_timeout"] + s["round_seconds"] + slack + 1e-6


def test_a_scale_out_moves_stateful_tasks_through_warm_ups_under_high_availability_only():
    timeline = parse_streams_timeline({
        "application": {"subtopologies": {"0": {"partitions": 4, "stateful": True}}, "state_bytes": 1000,
                        "record_bytes": 1, "restore_bytes_per_second": 100},
        "settings": {"round_seconds": 0, "acceptable_recovery_lag": 100, "probing_rebalance_interval_ms": 60_000},
        "instances": {"a": {}, "b": {}},
        "events": [{"at": 100, "type": "scale_out", "add": 1}],
    })
    ha = simulate_streams(timeline, "high-availability").records[1]
    # KIP-441: the newcomer warms up first and takes over once caught up, at a probing rebalance
    assert ha.warmups >= 1 and ha.probing >= 1 and ha.unavailable_task_seconds == 0
    sticky = simulate_streams(timeline, "sticky", "4.3").records[1]
    # 4.3's sticky assignor balances at once: the newcomer restores what it is given
    assert sticky.warmups == 0 and sticky.unavailable_seconds == pytest.approx(10.0)
    # 4.4's (KAFKA-20198): a and b keep their fair share rounded up, ceil(4 x 1 / 3) = 2 each, so nothing moves and
    # the newcomer stays idle
    sticky = simulate_streams(timeline, "sticky", "4.4").records[1]
    assert sticky.moved == 0 and sticky.unavailable_seconds == 0


def test_the_engine_docstring_example():
    timeline = parse_streams_timeline({
        "application": {"subtopologies": {"0": {"partitions": 2, "stateful": True}}, "state_bytes": "2 GiB",
                        "growth_bytes_per_second": "100 KiB", "record_bytes": "1 KiB",
                        "restore_bytes_per_second": "20 MiB"},
        "instances": {"a": {}, "b": {}},
        "events": [{"at": 60, "type": "restart", "instance": "a", "down": "5m"}],
    })
    ha = simulate_streams(timeline, "high-availability")
    assert outages(ha, 1) == [2.0, pytest.approx(104.69296875)]
    assert [(s.instance, s.start, s.end) for s in ha.segments if s.state == "warm-up"] == [("a", 362.0, 962.0)]
    sticky = simulate_streams(timeline, "sticky")
    assert outages(sticky, 1) == [2.0, pytest.approx(104.69296875)] and sticky.records[1].probing == 0
    standby = simulate_streams(timeline, "high-availability:standbys=1")
    assert outages(standby, 1) == [2.0, 2.0]


def test_follow_ups_that_would_never_let_the_clock_move_are_ended():
    """The sticky assignor can hand tasks back and forth, a follow-up rebalance at a time (a task it gives
    away while its owner runs it is revoked; unowned, it goes back to the instance that has its state);
    with rounds of 0 s the clock would stand still, so kassign ends such a chain and says so."""
    timeline = parse_streams_timeline({
        "application": {"subtopologies": {"0": {"partitions": 8, "stateful": True},
                                          "1": {"partitions": 8, "stateful": True}, "2": {"partitions": 8}},
                        "state_bytes": 1000, "record_bytes": 1, "restore_bytes_per_second": 100},
        "settings": {"round_seconds": 0},
        "instances": {f"i{k}": {"threads": 2} for k in range(6)},
        "events": [{"at": 100 * k, "type": "restart", "instance": f"i{k % 6}", "down": 10} for k in range(1, 12)],
    })
    run = simulate_streams(timeline, "sticky", "4.3", segments=False)
    cycling = [r for r in run.records if r.cycling]
    assert cycling and all(r.followups <= 2 * streams_engine.INSTANT_FOLLOWUPS + 2 for r in run.records)
    assert cycling[0].followups >= streams_engine.INSTANT_FOLLOWUPS  # played until the guard, then ended
    # with rounds of 1 s the same timeline plays out without cycling follow-ups
    slower = parse_streams_timeline({**timeline_doc(timeline), "settings": {"round_seconds": 1}})
    assert max(r.followups for r in simulate_streams(slower, "sticky", "4.3", segments=False).records) < 10
    # 4.4's room rule (KAFKA-20198) plays the 0 s timeline without cycling
    assert not any(r.cycling for r in simulate_streams(timeline, "sticky", "4.4", segments=False).records)


def timeline_doc(timeline):
    return {
        "application": {"subtopologies": {str(sub): {"partitions": count, "stateful": flag}
                                          for sub, (count, flag) in timeline.application.partitions.items()},
                        "state_bytes": 1000, "record_bytes": 1, "restore_bytes_per_second": 100},
        "instances": {name: {"threads": plan.threads} for name, plan in timeline.instances.items()},
        "events": [{"at": e.at, "type": e.type, "instance": e.instance, "down": e.down} for e in timeline.events],
    }
