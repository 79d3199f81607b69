"""The consumer-protocol simulator's fast paths against the plain one, on random timelines.

The fast run keeps the group on the coordinator's integers (the target as an owner per
partition, the server-side assignor fed arrays) and plays the heartbeats that only renew
a session, or only move a member to the target's epoch, in compiled stretches. The plain
run recomputes every target from scratch, through a scenario document and
``kassign.assign(..., protocol="consumer")``, and plays every heartbeat one at a time.
Both must agree on everything: the figures, the trace, and where the group ends up, at the
same Kafka release (the uniform assignor's rule differs between 4.0.0 and later ones)."""

from __future__ import annotations

from functools import partial

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign.groups.consumer.coordinator import server_assign
from kassign.groups.simulate import parse_sim_scenario
from kassign.groups.simulate.consumer_protocol import ConsumerTimelineRun
from tests.groups.simulate.timelines import draw_events


class PlainRun(ConsumerTimelineRun):
    """Every target from a scenario document, every heartbeat through the step-by-step path."""

    def __init__(self, scenario, strategy, release="4.3"):
        super().__init__(scenario, strategy, assign=partial(server_assign, kafka_version=release), trace=True,
                         kafka_version=release)

    def _play_heartbeats_in_bulk(self, other, limit):
        return 0


def outcome(timeline: ConsumerTimelineRun) -> dict:
    run = timeline.run()
    doc = run.to_json()
    doc.pop("elapsed_seconds")
    coordinator = timeline.coordinator
    return {
        "run": doc,
        "records": [vars(record) for record in run.records],  # unrounded figures
        "trace": timeline.trace,
        "members": dict(coordinator.members),
        "target": dict(coordinator.target),
        "holder": dict(coordinator.holder),
        "deadlines": dict(coordinator.session_deadline),
        "epochs": (coordinator.group_epoch, coordinator.assignment_epoch, coordinator.targets_computed),
        "owned": {name: client.owned for name, client in timeline.clients.items()},
    }


@st.composite
def timelines(draw):
    topics = {f"t{i}": draw(st.integers(1, 7)) for i in range(draw(st.integers(1, 4)))}
    names = list(topics)
    subscriptions = st.lists(st.sampled_from(names), min_size=1, unique=True)
    shared = draw(subscriptions)
    members = {}
    for i in range(draw(st.integers(1, 8))):
        doc = {"topics": shared if draw(st.booleans()) else draw(subscriptions)}
        if draw(st.integers(0, 3)) == 0:
            doc["instance_id"] = f"h{i}"
        if draw(st.integers(0, 3)) == 0:
            doc.update(group_protocol="consumer", remote_assignor=draw(st.sampled_from(["uniform", "range"])))
        members[f"C{i}"] = doc
    interval = draw(st.sampled_from([1, 2.5, 5]))
    events = draw_events(draw, topics, members, gaps=[0, 0.5, 1, 2.5, 4, 9, 30], downs=[0.5, 3, 40], recreate=True)
    timeout = interval * draw(st.sampled_from([2, 3, 9]))
    return {"topics": topics, "members": members, "events": events,
            "settings": {"heartbeat_interval": interval, "session_timeout": timeout}}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=timelines(), strategy=st.sampled_from(["consumer", "consumer:uniform", "consumer:range"]),
       release=st.sampled_from(["4.0.0", "4.3"]))
def test_the_fast_run_equals_the_plain_one(doc, strategy, release):
    scenario = parse_sim_scenario(doc)
    fast = ConsumerTimelineRun(scenario, strategy, trace=True, kafka_version=release)
    assert outcome(fast) == outcome(PlainRun(scenario, strategy, release))


def test_a_long_quiet_timeline_is_played_in_bulk_and_equals_the_plain_one():
    """Twenty members, an hour of heartbeats between a few changes, a crash waiting for its session
    (unowned partitions while the group is settled): the figures add up the same, to the bit."""
    names = [f"m{i:02d}" for i in range(20)]
    doc = {"topics": {"a": 30, "b": 7}, "members": {n: {"topics": ["a", "b"]} for n in names},
           "settings": {"heartbeat_interval": 3, "session_timeout": 40},
           "events": [{"at": 600, "type": "crash", "member": "m03"},
                      {"at": 1200, "type": "join", "member": "x", "topics": ["a"]},
                      {"at": 1800, "type": "subscribe", "member": "m07", "topics": ["b"]},
                      {"at": 3600, "type": "leave", "member": "m11"}]}
    for strategy, release in [("consumer:uniform", "4.3"), ("consumer:uniform", "4.0.0"), ("consumer:range", "4.3")]:
        scenario = parse_sim_scenario(doc)
        fast = ConsumerTimelineRun(scenario, strategy, trace=True, kafka_version=release)
        assert outcome(fast) == outcome(PlainRun(scenario, strategy, release))
        beats = sum(1 for entry in fast.trace if entry.action == "heartbeat")
        assert fast.played_in_bulk > beats // 2  # most heartbeats went through a compiled stretch
