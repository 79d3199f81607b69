"""The streams-group simulator (KIP-1071) on timelines checked by hand: reconciliation (revoke before assign,
unreleased tasks; Kafka 4.4's roles changing in place), session timeouts, the initial rebalance delay, Kafka 4.3's
assignment interval, local state and restoration (and 4.4 handing it back through offset sums), and the words of
the report."""

from __future__ import annotations

import pytest

from kassign.core.errors import KassignError, ScenarioError
from kassign.groups.simulate.streams_group_engine import StreamsGroupTimelineRun, simulate_streams_group
from kassign.groups.simulate.streams_group_metrics import event_sentence, summary_sentences
from kassign.groups.simulate.streams_scenario import is_streams_group_timeline, parse_streams_timeline

MIB = 2 ** 20
TWO_TASKS = {"protocol": "streams", "application": {"subtopologies": {"0": {"partitions": 2, "stateful": True}}},
             "settings": {"num_standby_replicas": 1}, "instances": {"a": {}, "b": {}}}
SIZED = {"protocol": "streams",
         "application": {"subtopologies": {"0": {"partitions": 2, "stateful": True}}, "state_bytes": "1 GiB",
                         "restore_bytes_per_second": "100 MiB", "growth_bytes_per_second": "1 MiB"},
         "instances": {"a": {}, "b": {}}}


def play(doc, strategy="sticky", kafka_version="4.3"):
    engine = StreamsGroupTimelineRun(parse_streams_timeline(doc), strategy, kafka_version, trace=True)
    return engine, engine.run()


@pytest.mark.parametrize("kafka_version", ["4.2", "4.3"])
def test_the_docstring_example_a_standby_is_revoked_before_it_is_promoted(kafka_version):
    engine, run = play({**TWO_TASKS, "events": [{"at": 20, "type": "stop", "instance": "b"}]},
                       kafka_version=kafka_version)
    assert engine.trace == [(20.0, "b-StreamThread-1", "revoke", ("0_0", "0_1")),  # b closes its tasks and leaves
                            (20.0, "a-StreamThread-1", "revoke", ("0_0",)),  # a gives up its standby of 0_0 first
                            (25.0, "a-StreamThread-1", "assign", ("0_0",))]  # and gets 0_0 active a heartbeat later
    start, stop = run.records
    assert start.settle_seconds == 0.0 and start.active_per_instance == {"a": 1, "b": 1}
    assert start.standby_per_instance == {"a": 1, "b": 1}
    assert (stop.targets, stop.moved, stop.promoted, stop.state_lost, stop.revoked) == (1, 1, 1, 0, 0)
    assert (stop.paused_task_seconds, stop.longest_pause, stop.settle_seconds) == (5.0, 5.0, 5.0)
    assert stop.active_per_instance == {"a": 2} and stop.missing_standbys == 2
    sentence = event_sentence(stop, run)
    assert sentence.startswith("20 s, stop b: 1 task moved to another instance: 1 promoted from a standby; ")
    assert "2 standby replicas could not be placed" in sentence and "reconciled 5 s after the event" in sentence


def test_kafka_4_4_promotes_the_standby_in_place():
    # the same stop under 4.4 (whose fresh group puts 0_0 on a and 0_1 on b, each the other's standby): a's
    # heartbeat at 20 s grants 0_1 active in the step that drops its standby, so 0_1 never waits
    engine, run = play({**TWO_TASKS, "events": [{"at": 20, "type": "stop", "instance": "b"}]}, kafka_version="4.4")
    assert engine.trace == [(20.0, "b-StreamThread-1", "revoke", ("0_0", "0_1")),
                            (20.0, "a-StreamThread-1", "revoke", ("0_1",)),  # the standby goes ...
                            (20.0, "a-StreamThread-1", "assign", ("0_1",))]  # ... as the active task comes
    stop = run.records[1]
    assert (stop.targets, stop.moved, stop.promoted, stop.state_lost, stop.revoked) == (1, 1, 1, 0, 0)
    assert (stop.paused_task_seconds, stop.longest_pause, stop.settle_seconds) == (0.0, 0.0, 0.0)
    assert run.kafka_version == "4.4"


@pytest.mark.parametrize("kafka_version, pause", [("4.3", 50.0), ("4.4", 45.0)])
def test_a_crashed_instance_keeps_its_tasks_until_its_session_times_out_then_the_standby_takes_over(kafka_version,
                                                                                                     pause):
    # b fenced at 62.5 s; a's next heartbeat (65 s) computes the target: 4.3 revokes a's standby there and
    # grants the active task at 70 s, 4.4 promotes it at 65 s
    engine, run = play({**TWO_TASKS, "events": [{"at": 20, "type": "crash", "instance": "b"}]},
                       kafka_version=kafka_version)
    crash = run.records[1]
    assert (crash.paused_task_seconds, crash.longest_pause, crash.settle_seconds, crash.promoted) == \
        (pause, pause, pause, 1)


def test_kafka_4_4_hands_state_on_disk_back_after_a_full_restart():
    # all three instances restart together and come back with new member ids and nothing assigned; under 4.4 each
    # reports the offset sums of the state it kept (KAFKA-20719) and gets those tasks back; 4.3 deals them out
    # afresh, in another order, and two tasks restore their state from scratch
    names = ("app-1", "app-2", "app-3")
    doc = {**SIZED, "application": {**SIZED["application"], "subtopologies": {"0": {"partitions": 3, "stateful": True}}},
           "instances": {name: {} for name in names},
           "events": [{"at": 20, "type": "restart", "instance": name, "down": 30} for name in names]}
    moves = {}
    for version in ("4.3", "4.4"):
        _, run = play(doc, kafka_version=version)
        restart = run.records[1]
        moves[version] = (restart.moved, restart.state_lost, restart.from_disk)
    assert moves == {"4.3": (2, 2, 0), "4.4": (0, 0, 0)}


def test_kafka_4_4_hands_the_assignor_current_assignments_and_offset_sums():
    engine = StreamsGroupTimelineRun(parse_streams_timeline({**SIZED, "events": []}), "sticky", "4.4")
    engine.run()
    a, b = (engine.members[f"{name}-StreamThread-1"] for name in ("a", "b"))
    a.assigned = (frozenset({0}), frozenset(), frozenset())  # as if a had not yet got its target's 0_1 ...
    engine.target[a.id] = (frozenset({0, 1}), frozenset(), frozenset())
    b.offset_sums = {0: 5}  # ... and b reported state of 0_0
    members = engine._document()["members"]
    assert members[a.id] == {"process_id": a.process, "active": {"0": [0]}}
    assert members[b.id]["offset_sums"] == {"0_0": 5}
    engine.in_place = False  # 4.3's coordinator: the previous target, no offset sums
    members = engine._document()["members"]
    assert members[a.id]["active"] == {"0": [0, 1]} and "offset_sums" not in members[b.id]


def test_a_crashed_instance_keeps_its_tasks_until_its_session_times_out():
    engine, run = play({**TWO_TASKS, "events": [{"at": 20, "type": "crash", "instance": "b"}]})
    assert engine.trace[1:] == [(65.0, "a-StreamThread-1", "revoke", ("0_0",)),
                                (70.0, "a-StreamThread-1", "assign", ("0_0",))]
    crash = run.records[1]
    assert crash.note == "b-StreamThread-1 fenced at 62.5 s (session timed out)"  # last heartbeat 17.5 s + 45 s
    assert (crash.paused_task_seconds, crash.longest_pause, crash.settle_seconds, crash.promoted) == (50, 50, 50, 1)


def test_a_task_without_local_state_restores_its_changelog_before_it_runs():
    engine, run = play({**SIZED, "events": [{"at": 20, "type": "stop", "instance": "b"}]})
    stop = run.records[1]
    # 0_0 ran 20 s on b: 1 GiB + 20 MiB of changelog, restored on a at 100 MiB/s: 10.44 s
    assert (stop.state_lost, stop.lost_tasks, stop.lost_state_bytes) == (1, ("0_0",), 1044 * MIB)
    assert stop.restore_bytes == 1044 * MIB
    assert stop.longest_pause == pytest.approx(10.44) and stop.paused_task_seconds == pytest.approx(10.44)
    assert [(o.task, o.start, o.end) for o in run.outages] == [(0, 20.0, pytest.approx(30.44))]
    states = {(s.task, s.instance, s.state) for s in run.segments}
    # the clock stops once nothing is left to happen: when 0_0 has restored
    assert states == {(0, "b", "active"), (0, "a", "restoring"), (1, "a", "active")}
    assert "1 lost their local state (0_0, 1.0 GiB of changelog to restore)" in event_sentence(stop, run)


def test_a_restarted_instance_is_not_given_back_the_task_whose_state_it_kept():
    engine, run = play({**SIZED, "events": [{"at": 20, "type": "restart", "instance": "b", "down": 60}]})
    restart = run.records[1]
    # back at 80 s with new member ids: the broker's sticky assignor sees no previous tasks for them, keeps 0_0
    # on a (its previous owner) and moves 0_1 to b, which has state for 0_0 only
    assert engine.trace[2:] == [(85.0, "a-StreamThread-1", "revoke", ("0_1",)),
                                (90.0, "b-StreamThread-1-2", "assign", ("0_1",))]
    assert (restart.moved, restart.state_lost, restart.from_disk, restart.lost_tasks) == (2, 2, 0, ("0_0", "0_1"))
    assert restart.lost_state_bytes == (1044 + 1109) * MIB  # 0_1 ran 85 s before it moved
    assert restart.revoked == 1 and restart.note == "b back at 80 s" and restart.settle_seconds == 70.0
    assert restart.longest_pause == pytest.approx(16.09)


def test_an_empty_start_waits_the_initial_rebalance_delay():
    doc = {**TWO_TASKS, "settings": {"num_standby_replicas": 1, "initial_state": "empty"}, "events": []}
    engine, run = play(doc)
    # a joins at 0 s, b at 2.5 s; the target is computed when the 3 s delay is over; each gets it on its heartbeat
    assert engine.trace == [(5.0, "a-StreamThread-1", "assign", ("0_0", "0_1")),
                            (7.5, "b-StreamThread-1", "assign", ("0_0", "0_1"))]
    start = run.records[0]
    assert (start.targets, start.settle_seconds, start.paused_task_seconds) == (1, 7.5, 12.5)
    doc["settings"]["initial_rebalance_delay"] = 0
    engine, run = play(doc)
    assert run.records[0].targets == 2  # a's join computes one target, b's another


@pytest.mark.parametrize("kafka_version, times", [("4.2", [20.0, 20.5]), ("4.3", [20.0, 22.5])])
def test_kafka_4_3_computes_a_target_at_most_once_a_second(kafka_version, times):
    doc = {**TWO_TASKS, "events": [{"at": 20, "type": "start", "instance": "c"},
                                   {"at": 20.5, "type": "start", "instance": "d"}]}
    engine, run = play(doc, kafka_version=kafka_version)
    # c's join heartbeat computes a target at 20 s; d's at 20.5 s does too under 4.2, while 4.3 waits for the
    # next heartbeat a second later (b's, at 22.5 s)
    assert engine.target_times == times
    assert [r.targets for r in run.records[1:]] == [1, 1]


def test_threads_are_members_of_one_process_and_standbys_per_strategy():
    doc = {"protocol": "streams",
           "application": {"subtopologies": {"0": {"partitions": 4, "stateful": True}, "1": {"partitions": 4}}},
           "instances": {"app-1": {"threads": 2}, "app-2": {"threads": 2}},
           "events": [{"at": 30, "type": "scale_out", "add": 1, "threads": 2}]}
    run = simulate_streams_group(parse_streams_timeline(doc), "sticky:standbys=1")
    start, scale = run.records
    assert start.active_per_instance == {"app-1": 4, "app-2": 4}
    assert start.standby_per_instance == {"app-1": 2, "app-2": 2}
    assert run.num_standby_replicas == 1 and scale.names == ("app-3",)
    assert sum(scale.active_per_instance.values()) == 8 and scale.active_per_instance["app-3"] > 0
    assert scale.moved >= scale.promoted + scale.from_disk + scale.state_lost
    lines = summary_sentences(run)
    assert lines[-1].startswith("sticky:standbys=1 in all: 2 targets computed")


@pytest.mark.parametrize("doc, message", [
    ({**TWO_TASKS, "protocol": "kraft"}, "streams timeline protocol: expected classic"),
    ({**TWO_TASKS, "strategies": ["high-availability"]}, "streams timeline strategies[0]: unknown streams group "
                                                        "assignor 'high-availability'"),
    ({**SIZED, "protocol": "classic", "settings": {"heartbeat_interval": 3}},
     "streams timeline settings.heartbeat_interval: a setting of the streams protocol"),
    ({**TWO_TASKS, "settings": {"heartbeat_interval": 60}}, "streams timeline settings.heartbeat_interval: 60 s"),
])
def test_bad_documents_are_one_line_with_the_place(doc, message):
    with pytest.raises(ScenarioError) as caught:
        parse_streams_timeline(doc)
    assert str(caught.value).replace('"', "'").startswith(message) and "\n" not in str(caught.value)


def test_sizes_are_optional_only_under_the_streams_protocol_and_releases_are_checked():
    timeline = parse_streams_timeline(TWO_TASKS)
    assert timeline.protocol == "streams" and is_streams_group_timeline(TWO_TASKS)
    with pytest.raises(ScenarioError, match="a stateful task needs state_bytes"):
        parse_streams_timeline({**TWO_TASKS, "protocol": "classic"})
    with pytest.raises(KassignError, match=r"Kafka 4.1's streams groups \(KIP-1071\) were early access"):
        StreamsGroupTimelineRun(timeline, "sticky", "4.1")
