"""Streams-group timelines at random (hypothesis): one active task per task at every instant, standbys never on
the active task's instance, and once quiet every task running where the broker's target puts it."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign.groups.simulate.streams_group_engine import ACTIVE, STANDBY, StreamsGroupTimelineRun
from kassign.groups.simulate.streams_scenario import parse_streams_timeline
from tests.groups.simulate.timelines import STREAMS_EVENT_KINDS, draw_streams_events


class Checked(StreamsGroupTimelineRun):
    """After every step, the clients' tasks: never two members running one active task, never an instance
    holding a task both as active and as standby."""

    def _after_step(self) -> None:
        super()._after_step()
        actives: Counter = Counter()
        by_slot: dict[int, tuple[set, set]] = {}
        for member in self.members.values():
            if not member.running:
                assert not any(member.owned), f"{member.id} is down but holds tasks"
                continue
            actives.update(member.owned[ACTIVE])
            active, standby = by_slot.setdefault(member.slot, (set(), set()))
            active |= member.owned[ACTIVE]
            standby |= member.owned[STANDBY]
        assert all(n == 1 for n in actives.values()), f"at {self.now} s two members run one task: {actives}"
        for slot, (active, standby) in by_slot.items():
            assert not active & standby, f"at {self.now} s {self.names[slot]} holds {active & standby} twice"


@st.composite
def streams_timelines(draw):
    subtopologies = {str(i): {"partitions": draw(st.integers(1, 4)), "stateful": draw(st.booleans())}
                     for i in range(draw(st.integers(1, 2)))}
    application = {"subtopologies": subtopologies}
    if draw(st.booleans()):
        application.update(state_bytes="64 MiB", restore_bytes_per_second=draw(st.sampled_from(["8 MiB", "1 GiB"])),
                           growth_bytes_per_second="64 KiB")
    names = [f"app-{i}" for i in range(1, draw(st.integers(1, 4)) + 1)]
    events = draw_streams_events(draw, names, kinds=STREAMS_EVENT_KINDS + ("scale_in",), gaps=(0, 0.5, 2, 7, 30, 120),
                                 downs=(1, 20, 90), keep_one=False, flags=True)
    interval = draw(st.sampled_from([1, 5]))
    return {"protocol": "streams", "application": application, "events": events,
            "instances": {name: {"threads": draw(st.integers(1, 2))} for name in names},
            "settings": {"num_standby_replicas": draw(st.integers(0, 2)), "heartbeat_interval": interval,
                         "session_timeout": interval * draw(st.sampled_from([3, 9])),
                         "initial_state": draw(st.sampled_from(["settled", "empty"])),
                         "state_cleanup_delay_ms": draw(st.sampled_from([60_000, 600_000]))}}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=streams_timelines(), kafka_version=st.sampled_from(["4.2", "4.3", "4.4"]))
def test_one_active_per_task_and_every_task_where_the_target_puts_it_once_quiet(doc, kafka_version):
    engine = Checked(parse_streams_timeline(doc), "sticky", kafka_version)
    run = engine.run()
    assert engine.settled()
    n_tasks = len(engine.task_names)
    if engine.group:
        owners = Counter(t for m in engine.group.values() for t in m.owned[ACTIVE])
        assert owners == Counter(range(n_tasks))  # every task has exactly one active member
        for mid, member in engine.group.items():
            assert member.running and member.owned == member.assigned == engine.target[mid]
        standbys = int(engine.settings["num_standby_replicas"])
        for t in range(n_tasks):
            holders = [m.slot for m in engine.group.values() if t in m.owned[STANDBY]]
            active_slot = next(m.slot for m in engine.group.values() if t in m.owned[ACTIVE])
            assert active_slot not in holders and len(holders) == len(set(holders)) <= standbys
            if not engine.stateful[t]:
                assert not holders
    for record in run.records:
        assert record.moved >= record.promoted + record.from_disk + record.state_lost
        assert record.paused_task_seconds >= 0 and record.longest_pause >= 0 and record.revoked >= 0
        assert record.state_lost == len(record.lost_tasks)
