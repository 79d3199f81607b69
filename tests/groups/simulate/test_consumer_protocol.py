"""Kafka 4's consumer group protocol (KIP-848) in the simulator: named stories, the
coordinator's rules, scenario checks, and safety and convergence over random timelines."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign.core.errors import KassignError, ScenarioError
from kassign.groups.consumer.coordinator import (
    ConsumerGroupCoordinator,
    GroupMember,
    HeartbeatRequest,
    MemberState,
    TopicCatalog,
)
from kassign.groups.simulate import parse_sim_scenario, simulate
from kassign.groups.simulate.consumer_protocol import ConsumerTimelineRun
from tests.groups.simulate.timelines import draw_events, draw_topics
from tests.conftest import REPO

EXAMPLES = REPO / "examples"


def traced(doc, strategy="consumer:uniform"):
    timeline = ConsumerTimelineRun(parse_sim_scenario(doc), strategy, trace=True)
    run = timeline.run()
    return timeline, run


def owned(timeline, member):
    return sorted(timeline.catalog.topic_partition(pid) for pid in timeline.clients[member].owned)


def steps(timeline, member=None, actions=("heartbeat", "revoke", "assign", "lose", "fenced")):
    return [e for e in timeline.trace if (member is None or e.member == member) and e.action in actions]


# -- named stories -----------------------------------------------------------------------------------

def test_revoke_before_assign_with_epochs():
    """The module's worked example: A owns t-0..3 alone; B joins at 12 s (heartbeats every 5 s)."""
    timeline, run = traced({"topics": {"t": 4}, "members": {"A": {"topics": ["t"]}},
                            "events": [{"at": 12, "type": "join", "member": "B", "topics": ["t"]}]})
    after_join = [e for e in timeline.trace if e.at >= 12]
    got = [(e.at, e.member, e.action, e.sent_epoch, e.epoch, e.state, e.partitions) if e.action == "heartbeat"
           else (e.at, e.member, e.action, e.partitions) for e in after_join]
    assert got == [
        # B joins with epoch 0: group epoch 2, new target; its partitions are still A's, so it gets none yet
        (12, "B", "heartbeat", 0, 2, "UNRELEASED_PARTITIONS", ()),
        # A's next regular heartbeat: it must give up t-2, t-3 and stays at epoch 1 until it has
        (15, "A", "heartbeat", 1, 1, "UNREVOKED_PARTITIONS", ()),
        (15, "A", "revoke", (("t", 2), ("t", 3))),
        # it acknowledges at once and moves to epoch 2, keeping t-0, t-1 throughout
        (15, "A", "heartbeat", 1, 2, "STABLE", ()),
        # only now are t-2, t-3 free: B receives them on its next heartbeat
        (17, "B", "heartbeat", 2, 2, "STABLE", ()),
        (17, "B", "assign", (("t", 2), ("t", 3))),
    ]
    join = run.records[1]
    assert (join.rounds, join.moved, join.revoked, join.generation) == (1, 2, 2, 2)
    assert join.unowned_partition_seconds == pytest.approx(2 * 2)  # t-2, t-3 idle from 15 s to 17 s
    assert join.unsettled_seconds == pytest.approx(5)  # 12 s to 17 s
    assert join.loads == {"A": 2, "B": 2}
    assert timeline.coordinator.holder_epoch == {pid: 2 for pid in range(4)}


GROUP = {"topics": {"orders": 12, "payments": 6},
         "members": {m: {"topics": ["orders", "payments"]} for m in ("A", "B", "C")},
         "settings": {"heartbeat_interval": 5, "session_timeout": 45}}


def test_a_member_joins_a_settled_group_and_the_others_keep_consuming_what_they_keep():
    timeline, run = traced({**GROUP, "events": [{"at": 60, "type": "join", "member": "D",
                                                 "topics": ["orders", "payments"]}]})
    join = run.records[1]
    assert sorted(join.loads.values()) == [4, 4, 5, 5]
    assert join.moved == join.revoked == join.loads["D"] == 4  # only what D takes moves
    given_up = {tp for e in steps(timeline, None, ("revoke",)) if e.at >= 60 for tp in e.partitions}
    assert given_up == set(owned(timeline, "D"))
    for member in ("A", "B", "C"):
        kept = set(owned(timeline, member))
        window = [e for e in steps(timeline, member, ("revoke", "lose", "assign")) if e.at >= 60]
        # each old member only ever gives partitions up (no stop-the-world revoke-all, no re-assign)
        assert all(e.action == "revoke" for e in window)
        assert not kept & {tp for e in window for tp in e.partitions}
    # the idle time is only D's partitions between their old owner's next heartbeat (A at 60 s, B at
    # 61.67 s, C at 63.33 s: the members started a third of an interval apart) and D's, at 65 s
    assert join.unowned_partition_seconds == pytest.approx(sum(65 - e.at for e in steps(timeline, None, ("revoke",))
                                                               if e.at >= 60 for _ in e.partitions))
    assert join.unowned_partition_seconds == pytest.approx(5 + 10 / 3 + 2 * 5 / 3)
    eager = simulate(parse_sim_scenario({**GROUP, "events": [{"at": 60, "type": "join", "member": "D",
                                                              "topics": ["orders", "payments"]}]}), "sticky")
    assert eager.records[1].revoked == 18 and eager.records[1].unowned_partition_seconds == 18 * 2


def test_a_member_leaves():
    timeline, run = traced({**GROUP, "events": [{"at": 60, "type": "leave", "member": "B"}]})
    before, leave = run.records[0].loads, run.records[1]
    assert leave.revoked == before["B"] == 6  # B revokes everything it had, nobody else revokes
    assert leave.moved == 6 and leave.loads == {"A": 9, "C": 9}
    assert not [e for e in steps(timeline, None, ("revoke",)) if e.at >= 60 and e.member != "B"]
    assert "B" not in timeline.coordinator.members
    assert leave.generation == run.records[0].generation + 1
    # B's partitions wait only for A's and C's next heartbeats (the first one computes the new target)
    assert 0 < leave.unowned_partition_seconds <= 6 * 5


def test_session_timeout_expiry():
    timeline, run = traced({**GROUP, "events": [{"at": 61, "type": "crash", "member": "C"}]})
    crash, expire = run.records[1], run.records[2]
    last_heartbeat = max(e.at for e in steps(timeline, "C", ("heartbeat",)))
    assert last_heartbeat <= 61 < last_heartbeat + 5
    assert expire.kind == "expire" and expire.at == pytest.approx(last_heartbeat + 45)
    assert "session timed out" in expire.note and expire.rounds == 1
    assert crash.rounds == 0 and crash.revoked == 0  # lost, not revoked
    assert crash.unowned_partition_seconds == pytest.approx(6 * (expire.at - 61))
    assert expire.loads == {"A": 9, "B": 9} and expire.moved == 6
    assert [e.action for e in steps(timeline, "C") if e.at >= 61] == ["lose", "fenced"]


def test_static_member_back_within_its_session_timeout_keeps_its_assignment_without_a_new_epoch():
    doc = {**GROUP, "members": {**GROUP["members"], "S": {"topics": ["orders", "payments"], "instance_id": "host-s"}},
           "events": [{"at": 60, "type": "restart", "member": "S", "down": 20}]}
    timeline, run = traced(doc)
    restart, back = run.records[1], run.records[2]
    assert (restart.rounds, back.rounds) == (0, 0)
    assert back.generation == run.records[0].generation and "no new group epoch" in back.note
    assert back.loads == run.records[0].loads
    assert restart.unowned_partition_seconds == pytest.approx(20 * run.records[0].loads["S"])
    assert timeline.coordinator.members["S"].state == MemberState.STABLE


def test_static_member_away_too_long_is_fenced_and_rejoins_as_new():
    doc = {**GROUP, "members": {"S": {"topics": ["orders"], "instance_id": "host-s"}, "A": {"topics": ["orders"]}},
           "events": [{"at": 60, "type": "restart", "member": "S", "down": 90}]}
    _, run = traced(doc)
    assert [r.kind for r in run.records] == ["start", "restart", "expire", "return"]
    assert run.records[2].loads == {"A": 12} and run.records[3].loads == {"A": 6, "S": 6}
    assert "rejoins as a new member" in run.records[3].note


def test_subscription_and_metadata_changes_reach_the_group_on_its_next_heartbeat():
    doc = {"topics": {"t0": 4}, "members": {"A": {"topics": ["t0", "t1"]}, "B": {"topics": ["t0"]}},
           "settings": {"heartbeat_interval": 5},
           "events": [{"at": 20, "type": "create_topic", "topic": "t1", "partitions": 2},
                      {"at": 40, "type": "add_partitions", "topic": "t0", "add": 2},
                      {"at": 60, "type": "create_topic", "topic": "other", "partitions": 3},
                      {"at": 80, "type": "subscribe", "member": "B", "topics": ["t0", "t1"]},
                      {"at": 100, "type": "delete_topic", "topic": "t1"},
                      {"at": 120, "type": "subscribe", "member": "B", "topics": []}]}
    timeline, run = traced(doc)
    rows = {r.description: r for r in run.records}
    assert all("next heartbeat" in r.note for r in run.records[1:6] if r.rounds)
    assert [r.rounds for r in run.records[1:]] == [1, 1, 0, 1, 1, 1]
    assert rows["create t1 (2 partitions)"].loads == {"A": 3, "B": 3}  # uniform evens A's extra topic out
    assert rows["add 2 partitions to t0"].loads == {"A": 4, "B": 4}
    assert "no member subscribes" in rows["create other (3 partitions)"].note
    assert rows["B subscribes to t0, t1"].loads == {"A": 4, "B": 4}
    assert rows["delete t1"].loads == {"A": 3, "B": 3} and rows["delete t1"].revoked == 1
    assert rows["B subscribes to nothing"].loads == {"A": 6} and "leaves the group" in rows["B subscribes to nothing"].note
    assert "B" not in timeline.coordinator.members


def test_the_example_scenario_shows_the_difference():
    scenario = parse_sim_scenario(__import__("yaml").safe_load((EXAMPLES / "consumer-protocol.yaml").read_text()))
    runs = {s: simulate(scenario, s) for s in scenario.strategies}
    assert [r.group_protocol for r in runs.values()] == ["classic", "classic", "consumer"]
    join_while_down = {s: r.records[3] for s, r in runs.items()}
    assert all(r.description.startswith("join C5") for r in join_while_down.values())
    # classic rebalances wait for C1's session to expire; the consumer protocol does not
    assert "waited" in join_while_down["range"].note and "waited" not in join_while_down["consumer:uniform"].note
    total = {s: r.totals()["unowned_partition_seconds"] for s, r in runs.items()}
    assert total["consumer:uniform"] < total["cooperative-sticky"] < total["range"]
    assert runs["consumer:uniform"].totals()["heartbeats"] > 0 and runs["range"].totals()["heartbeats"] == 0


# -- the coordinator's own rules ---------------------------------------------------------------------

def test_the_group_assignor_is_the_one_most_members_ask_for_else_uniform():
    coordinator = ConsumerGroupCoordinator(TopicCatalog({"t": 1}))
    assert coordinator.group_assignor() == "uniform"
    coordinator.members = {"a": GroupMember("a", assignor="range"), "b": GroupMember("b")}
    assert coordinator.group_assignor() == "range"
    coordinator.members["c"] = GroupMember("c", assignor="uniform")
    assert coordinator.group_assignor() == "uniform"  # a tie goes to the first in Java's HashMap order
    coordinator.members["d"] = GroupMember("d", assignor="range")
    assert coordinator.group_assignor() == "range"


def test_heartbeats_with_a_wrong_epoch_are_fenced_and_a_held_instance_id_is_refused():
    coordinator = ConsumerGroupCoordinator(TopicCatalog({"t": 2}))
    first = coordinator.heartbeat(HeartbeatRequest("a", 0, instance_id="i", topics=("t",), owned=frozenset()), 0.0)
    assert (first.epoch, first.assignment, first.error) == (1, frozenset({0, 1}), None)
    assert coordinator.heartbeat(HeartbeatRequest("a", 7), 1.0).error == "FENCED_MEMBER_EPOCH"
    assert coordinator.heartbeat(HeartbeatRequest("x", 3), 1.0).error == "UNKNOWN_MEMBER_ID"
    again = coordinator.heartbeat(HeartbeatRequest("b", 0, instance_id="i", topics=("t",)), 1.0)
    assert again.error == "UNRELEASED_INSTANCE_ID"  # instance i has not left (no epoch -2 heartbeat)
    assert not coordinator.expire_session("a", 30.0) and coordinator.expire_session("a", 45.0)
    assert coordinator.members == {} and coordinator.group_epoch == 2


def test_a_static_instance_back_under_a_new_member_id_takes_over_the_departed_record():
    coordinator = ConsumerGroupCoordinator(TopicCatalog({"t": 4}))
    coordinator.heartbeat(HeartbeatRequest("a1", 0, instance_id="i", topics=("t",), owned=frozenset()), 0.0)
    coordinator.heartbeat(HeartbeatRequest("b", 0, topics=("t",), owned=frozenset()), 0.0)
    revoke = coordinator.heartbeat(HeartbeatRequest("a1", 1, owned=frozenset({0, 1, 2, 3})), 1.0)
    assert (revoke.epoch, revoke.assignment) == (1, frozenset({0, 1}))
    assert coordinator.members["a1"].state == MemberState.UNREVOKED_PARTITIONS
    assert coordinator.heartbeat(HeartbeatRequest("a1", 1, owned=frozenset({0, 1})), 1.0).epoch == 2
    coordinator.heartbeat(HeartbeatRequest("a1", -2), 2.0)  # shuts down, meaning to come back
    assert coordinator.holder == {0: "a1", 1: "a1"} and coordinator.holder_epoch == {0: -2, 1: -2}
    back = coordinator.heartbeat(HeartbeatRequest("a2", 0, instance_id="i", topics=("t",), owned=frozenset()), 3.0)
    assert (back.epoch, back.assignment, coordinator.group_epoch) == (2, frozenset({0, 1}), 2)
    assert list(coordinator.members) == ["b", "a2"] and coordinator.holder == {0: "a2", 1: "a2"}


# -- scenario checks ---------------------------------------------------------------------------------

@pytest.mark.parametrize("doc,fragment", [
    ({"members": {"A": {"topics": ["t"], "group_protocol": "kip848"}}}, "members.A.group_protocol"),
    ({"members": {"A": {"topics": ["t"], "remote_assignor": "uniform"}}}, "members.A.remote_assignor"),
    ({"members": {"A": {"topics": ["t"], "group_protocol": "consumer", "remote_assignor": "sticky"}}},
     "members.A.remote_assignor"),
    ({"members": {"A": {"topics": ["t"], "group_protocol": "consumer", "strategies": ["range"]}}},
     "members.A.strategies"),
    ({"members": {"A": {"topics": ["t"], "group_protocol": "consumer", "session_timeout": 10}}},
     "members.A.session_timeout"),
    ({"members": {"A": {"topics": ["t"], "group_protocol": "consumer"}, "B": {"topics": ["t"], "strategies": ["range"]}}},
     "members.B: this member would use the classic protocol"),
    ({"members": {"A": {"topics": ["t"], "group_protocol": "consumer"}},
      "events": [{"at": 1, "type": "join", "member": "B", "topics": ["t"], "group_protocol": "classic"}]},
     "events[0] (join at 1s)"),
    ({"members": {"A": {"topics": ["t"], "group_protocol": "consumer"}}, "settings": {"heartbeat_interval": 45}},
     "settings.heartbeat_interval"),
    ({"strategies": ["consumer:sticky"]}, "strategies"),
])
def test_bad_consumer_protocol_scenarios_say_where(doc, fragment):
    with pytest.raises(ScenarioError) as err:
        parse_sim_scenario({"topics": {"t": 2}, **doc})
    assert fragment in str(err.value)


def test_mixing_is_refused_when_the_run_would_mix():
    scenario = parse_sim_scenario({"topics": {"t": 2}, "members": {"A": {"topics": ["t"]},
                                                                    "B": {"topics": ["t"], "strategies": ["range"]}}})
    simulate(scenario, "sticky")  # B keeps its own classic list: fine
    with pytest.raises(KassignError, match="members.B.*mixing classic and consumer"):
        simulate(scenario, "consumer:uniform")


def test_a_group_of_consumer_members_runs_the_consumer_protocol_whatever_the_strategy_name():
    doc = {"topics": {"t": 4}, "members": {"A": {"topics": ["t"], "group_protocol": "consumer",
                                                 "remote_assignor": "range"}}}
    run = simulate(parse_sim_scenario(doc), "range")
    assert run.group_protocol == "consumer" and run.records[0].protocol == "range"


# -- safety and convergence over random timelines ----------------------------------------------------

class Checked(ConsumerTimelineRun):
    """A run that re-checks, independently of the engine's own check, after every step:
    no partition has two owners, and the coordinator's holders match its members."""

    steps = 0

    def _verify(self) -> None:
        Checked.steps += 1
        seen: dict[int, str] = {}
        for client in self.clients.values():
            for pid in client.owned:
                assert pid not in seen, f"{self.catalog.topic_partition(pid)} owned by {seen[pid]} and {client.name}"
                seen[pid] = client.name
                assert client.running
        assert {pid: self.member_names[o] for pid, o in enumerate(self.owner) if o >= 0} == seen
        coordinator = self.coordinator
        holders = {pid: m.member_id for m in coordinator.members.values() for pid in m.assigned | m.pending_revocation}
        assert holders == coordinator.holder
        for pid, name in seen.items():  # a consumed partition is one the coordinator gave that member
            assert coordinator.holder.get(pid) == name or not self.catalog.is_live(pid)

    def _heartbeat(self, client, epoch=None):
        super()._heartbeat(client, epoch)
        self._verify()

    def _event(self, event):
        super()._event(event)
        self._verify()


@st.composite
def consumer_timelines(draw):
    topics = draw_topics(draw)
    names = list(topics)
    assignors = st.sampled_from([None, "uniform", "range"])

    def member_doc(i):
        doc = {"topics": draw(st.lists(st.sampled_from(names), min_size=1, unique=True))}
        if draw(st.booleans()):
            doc["instance_id"] = f"h{i}"
        assignor = draw(assignors)
        if assignor:
            doc.update(group_protocol="consumer", remote_assignor=assignor)
        return doc

    members = {f"C{i}": member_doc(i) for i in range(draw(st.integers(1, 4)))}
    interval = draw(st.sampled_from([1, 2, 5]))
    events = draw_events(draw, topics, members, gaps=[0.3, 1, 2.5, 4, 9, 30], downs=[0.5, 3, 40], recreate=True)
    return {"topics": topics, "members": members, "events": events,
            "settings": {"heartbeat_interval": interval, "session_timeout": interval * draw(st.sampled_from([2, 5])),
                         "rebalance_timeout": 30}}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=consumer_timelines(), strategy=st.sampled_from(["consumer", "consumer:uniform", "consumer:range"]))
def test_never_two_owners_and_every_partition_with_its_target_owner_once_quiet(doc, strategy):
    timeline = Checked(parse_sim_scenario(doc), strategy)
    run = timeline.run()
    coordinator, catalog = timeline.coordinator, timeline.catalog
    # quiet: the target is current and every member has reached it
    assert coordinator.settled()
    assert coordinator.group_epoch == coordinator.assignment_epoch or not coordinator.members
    subscribed = coordinator.subscribed_topics()
    expected = {pid for t in subscribed for pid in catalog.pids_of(t)}
    consumed = set()
    for name, client in timeline.clients.items():
        if name in coordinator.members:
            assert client.running, f"{name} is in the group but not running"
            assert client.owned == coordinator.target[name] == coordinator.members[name].assigned
            assert coordinator.members[name].state == MemberState.STABLE
            consumed |= client.owned
        else:
            assert not client.owned
    assert consumed == expected  # every partition of every subscribed topic has its target owner
    for record in run.records:
        assert record.unowned_partition_seconds >= -1e-9 and record.moved >= 0 and record.revoked >= 0
        assert record.unsettled_seconds >= 0 and record.heartbeats >= 0
