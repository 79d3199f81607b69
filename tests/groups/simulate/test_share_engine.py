"""The share-group simulator (KIP-932) on timelines checked by hand: heartbeats, targets, share-state
initialisation, Kafka 4.3's assignment interval, and the words of the report."""

from __future__ import annotations

import pytest

from kassign.core.errors import KassignError, ScenarioError
from kassign.groups.simulate.heartbeat_timeline import assignment_interval
from kassign.groups.simulate.share_engine import ShareTimelineRun, simulate_share
from kassign.groups.simulate.share_metrics import event_sentence, summary_sentences
from kassign.groups.simulate.share_scenario import is_share_timeline, parse_share_timeline
from kassign.core.releases import release_for

A_AND_B = {"group_type": "share", "topics": {"t": 2}, "members": {"A": {"topics": ["t"]}, "B": {"topics": ["t"]}}}


def play(events, kafka_version="4.3", **extra):
    doc = {**A_AND_B, **extra, "events": events}
    run = ShareTimelineRun(parse_share_timeline(doc), kafka_version, trace=True)
    return run, run.run()


def test_the_docstring_example_a_newcomer_only_spreads_the_fetches():
    engine, run = play([{"at": 12, "type": "join", "member": "C", "topics": ["t"]}], "4.2")
    # the start: A's join asks for the share state, B's join (2.5 s) computes the first target
    assert engine.trace[:2] == [(2.5, "B", "start", (("t", 0),)), (5.0, "A", "start", (("t", 1),))]
    start, join = run.records
    assert (start.targets, start.settle_seconds, start.unfetched_partition_seconds) == (2, 5.0, 7.5)
    # C joins: two members per partition; C starts at once, A adds t-0 on its heartbeat at 15 s
    assert engine.trace[2:] == [(12.0, "C", "start", (("t", 1),)), (15.0, "A", "start", (("t", 0),))]
    assert (join.targets, join.settle_seconds, join.stopped, join.lost, join.unfetched_partition_seconds) == (
        1, 3.0, 0, 0, 0.0)
    assert join.sharing == {2: 2} and join.holders == {"t-0": 2, "t-1": 2}
    assert join.partitions_per_member == {"A": 2, "B": 1, "C": 1} and join.idle_members == ()
    sentence = event_sentence(join, 5.0)
    assert sentence.startswith("12 s, join C (t): no member stopped fetching during the change: a share group "
                               "hands records out one by one, so C joining only spread the fetches")
    assert "nothing was revoked" in sentence and "every member had its new target 3 s after the event" in sentence


@pytest.mark.parametrize("kafka_version, d_starts", [("4.2", 12.5), ("4.3", 17.5)])
def test_kafka_4_3_computes_a_target_at_most_once_a_second(kafka_version, d_starts):
    engine, run = play([{"at": 12, "type": "join", "member": "C", "topics": ["t"]},
                        {"at": 12.5, "type": "join", "member": "D", "topics": ["t"]}], kafka_version)
    assert [entry for entry in engine.trace if entry[1] == "D"] == [(d_starts, "D", "start", (("t", 0),))]
    assert run.records[1].settle_seconds is None  # D's join came before C's had settled
    assert run.records[2].settle_seconds == 5.0
    assert run.settings["assignment_interval"] == (1.0 if kafka_version == "4.3" else 0.0)


def test_the_assignment_interval_is_the_release_s_default_or_the_timeline_s():
    assert assignment_interval(release_for("4.3", "share")) == 1.0
    assert assignment_interval(release_for("4.2.0", "share")) == 0.0
    _, run = play([], "4.3", settings={"assignment_interval": 0})
    assert run.settings["assignment_interval"] == 0.0


def test_a_crashed_member_s_partitions_wait_for_its_session_to_time_out():
    engine, run = play([{"at": 20, "type": "crash", "member": "B"}])
    crash = run.records[1]
    # B's last heartbeat was at 17.5 s: fenced at 62.5 s; A's heartbeat at 65 s takes t-0 over
    assert [e for e in engine.trace if e[0] >= 20] == [(20.0, "B", "lose", (("t", 0),)),
                                                       (65.0, "A", "start", (("t", 0),))]
    assert (crash.lost, crash.orphaned, crash.unfetched_partition_seconds, crash.settle_seconds) == (1, 1, 45.0, 45.0)
    assert "fenced" in crash.note and "62.5 s" in crash.note
    assert crash.partitions_per_member == {"A": 2} and crash.members == 1


def test_new_partitions_wait_for_their_share_state_one_target_later():
    engine, run = play([{"at": 20, "type": "add_partitions", "topic": "t", "add": 2}])
    added = run.records[1]
    # A's heartbeat at 20 s sees the new metadata (a target without the new partitions) and asks for their share
    # state; B's at 22.5 s finds them initialised and computes the target that hands them out
    assert [e for e in engine.trace if e[0] >= 20] == [(22.5, "B", "start", (("t", 2),)),
                                                       (25.0, "A", "start", (("t", 3),))]
    assert (added.targets, added.unfetched_partition_seconds, added.settle_seconds, added.stopped) == (2, 7.5, 5.0, 0)
    assert added.uninitialized == 0 and added.sharing == {1: 4}


def test_the_share_state_takes_as_long_as_the_timeline_says():
    engine, run = play([{"at": 20, "type": "add_partitions", "topic": "t", "add": 2}],
                       settings={"initialize_seconds": 4})
    # initialised at 24 s: A's heartbeat at 25 s computes the target that hands them out, B's at 27.5 s takes its part
    assert [e for e in engine.trace if e[0] >= 20] == [(25.0, "A", "start", (("t", 3),)),
                                                       (27.5, "B", "start", (("t", 2),))]
    assert run.records[1].unfetched_partition_seconds == pytest.approx(5 + 7.5)


def test_a_leave_and_the_clock_skipping_routine_heartbeats():
    engine, run = play([{"at": 11, "type": "leave", "member": "B"},
                        {"at": 100, "type": "join", "member": "C", "topics": ["t"]}])
    leave, join = run.records[1:]
    assert leave.settle_seconds == 4.0 and leave.lost == 1 and leave.heartbeats == 2  # B's leave, A's at 15 s
    # A's heartbeats from 20 s to 95 s were skipped, its rhythm kept: its heartbeat due at 100 s comes after the
    # event and before C's join heartbeat, which computes the target; C starts on t-0 at once, and A fetches t-0
    # too until its next heartbeat stops it (a share group allows both)
    assert [e for e in engine.trace if e[0] >= 100] == [(100.0, "C", "start", (("t", 0),)),
                                                        (105.0, "A", "stop", (("t", 0),))]
    assert join.heartbeats == 4  # A at 100 s, C's join and its acknowledgement, A at 105 s
    assert join.stopped == 1 and join.settle_seconds == 5.0 and join.partitions_per_member == {"A": 1, "C": 1}
    assert "members stopped fetching 1 partition their new targets left out" in event_sentence(join, 5.0)


def test_members_more_than_partitions_share_them_and_loads_split_evenly():
    doc = {"group_type": "share", "topics": {"t": 2}, "loads": {"t": ["1 MiB/s", "3 MiB/s"]},
           "members": {m: {"topics": ["t"]} for m in ("A", "B", "C", "D")},
           "events": [{"at": 30, "type": "join", "member": "E", "topics": ["t"]},
                      {"at": 30, "type": "join", "member": "F", "topics": ["t"]}]}
    run = simulate_share(parse_share_timeline(doc))
    start, join = run.records
    assert start.sharing == {2: 2} and join.sharing == {3: 2}
    assert join.description == "join E, F" and join.names == ("E", "F") and join.stopped == 0
    mib = 1024 ** 2
    # each partition's rate split among its three members: every member fetches one partition
    assert sorted(join.bytes_per_member.values()) == [mib / 3] * 3 + [mib] * 3
    sentence = event_sentence(join, 5.0)
    assert "so 2 members joining only spread the fetches (2 partitions now fetched by 3 members at once); " \
           "nothing was revoked" in sentence
    assert summary_sentences(run)[-1].startswith("share:simple in all: ")


def test_subscribing_to_nothing_leaves_and_a_restart_joins_again():
    doc = {**A_AND_B, "topics": {"t": 2, "u": 1},
           "events": [{"at": 20, "type": "subscribe", "member": "B", "topics": []},
                      {"at": 40, "type": "restart", "member": "A", "down": 10},
                      {"at": 70, "type": "subscribe", "member": "B", "topics": ["u"]}]}
    engine = ShareTimelineRun(parse_share_timeline(doc), trace=True)
    run = engine.run()
    unsubscribe, restart, subscribe = run.records[1:]
    assert unsubscribe.note == "subscribes to nothing: leaves the group" and unsubscribe.members == 1
    assert "A back at 50 s: joins as a new member" in restart.note
    assert subscribe.partitions_per_member == {"A": 2, "B": 1} and subscribe.sharing == {1: 3}


def test_a_topic_nobody_subscribes_to_changes_nothing_and_a_deleted_one_is_gone():
    doc = {**A_AND_B, "events": [{"at": 20, "type": "create_topic", "topic": "x", "partitions": 3},
                                 {"at": 30, "type": "delete_topic", "topic": "t"}]}
    run = simulate_share(parse_share_timeline(doc))
    create, delete = run.records[1:]
    assert create.note == "no member subscribes to it: nothing changes" and create.targets == 0
    assert delete.sharing == {} and delete.idle_members == ("A", "B")


@pytest.mark.parametrize("doc, message", [
    ({**A_AND_B, "group_type": "consumer"}, "share timeline group_type: expected share"),
    ({**A_AND_B, "members": {"A": {"topics": ["t"], "instance_id": "i"}}},
     "share timeline members.A.instance_id: a share consumer has no group.instance.id"),
    ({**A_AND_B, "settings": {"round_seconds": 2}}, "share timeline settings.round_seconds: a share group has no"),
    ({**A_AND_B, "loads": {"t": [1]}}, "share timeline loads.t: 1 rates for 2 partitions"),
    ({**A_AND_B, "loads": {"x": 1}}, 'share timeline loads.x: no topic "x"'),
    ({**A_AND_B, "loads": {"t": "fast"}}, "share timeline loads.t: expected bytes per second"),
    ({**A_AND_B, "strategies": ["share:simple", "range"]}, 'share timeline strategies: "range" is a consumer-group'),
    ({**A_AND_B, "settings": {"heartbeat_interval": 50}}, "share timeline settings.heartbeat_interval: 50 s must be"),
])
def test_bad_documents_are_one_line_with_the_place(doc, message):
    with pytest.raises(ScenarioError) as caught:
        parse_share_timeline(doc)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_releases_without_the_modelled_share_assignor_are_refused():
    with pytest.raises(KassignError, match=r"Kafka 4.0's share groups \(KIP-932\) were early access"):
        ShareTimelineRun(parse_share_timeline(A_AND_B), "4.0")
    with pytest.raises(KassignError, match="plays the coordinator of Kafka 4.2, 4.3 and 4.4, not Kafka 4.1.1's"):
        ShareTimelineRun(parse_share_timeline(A_AND_B), "4.1.1")


def test_which_documents_are_share_timelines():
    assert is_share_timeline({"group_type": "share"})
    assert is_share_timeline({"strategies": ["share:simple"]})
    assert is_share_timeline({"topics": {}}, "share:simple")
    assert not is_share_timeline({"topics": {}}, "range,consumer:uniform")
    assert not is_share_timeline({"topics": {}, "strategies": ["range"]})
