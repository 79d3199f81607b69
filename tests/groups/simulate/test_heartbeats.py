"""The simulator's heartbeat clock (kassign.groups.simulate.heartbeats) against a plain model: a dict
of (time, sequence number) per member, the earliest first, played one heartbeat at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign.groups.consumer.coordinator import Routine
from kassign.groups.simulate.heartbeats import HeartbeatClock

MEMBERS = 12
TIMES = st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.5, 3.0, 7.0])  # repeated times: ties go by sequence number


class Model:
    """Each member's next heartbeat as (time, sequence), the sequence counter shared with others."""

    def __init__(self) -> None:
        self.next: dict[int, tuple[float, int]] = {}
        self.sequence = 0

    def schedule(self, member: int, at: float) -> None:
        self.next[member] = (at, self.sequence)
        self.sequence += 1

    def first(self) -> tuple[int, float, int] | None:
        if not self.next:
            return None
        member = min(self.next, key=self.next.__getitem__)
        return (member, *self.next[member])

    def run_routine(self, routine: dict[int, int], *, stop: tuple[float, int], limit: float, interval: float,
                    now: float, unserved: int, waiting: int, others_settled: bool, stop_when_settled: bool,
                    sums: list[float]) -> tuple[float, list[tuple[int, float]], int, list[int]]:
        """The documented rules, one heartbeat at a time."""
        played: list[tuple[int, float]] = []
        counted, reached = 0, []
        settled = others_settled and waiting == 0
        while (beat := self.first()) is not None:
            member, at, sequence = beat
            kind = routine.get(member, Routine.OTHER)
            if kind == Routine.OTHER or at > limit or (stop_when_settled and settled) or (at, sequence) > stop:
                break
            if at > now:
                sums[0] += unserved * (at - now)
                if not settled:
                    sums[1] += at - now
                now = at
            if kind == Routine.REACHES_TARGET_EPOCH:
                counted += 1
                reached.append(member)
                waiting -= 1
                settled = others_settled and waiting == 0
                routine[member] = Routine.RENEWS_SESSION
            elif not settled:
                counted += 1
            played.append((member, at))
            self.schedule(member, at + interval)
        return now, played, counted, reached


operations = st.lists(st.one_of(
    st.tuples(st.just("schedule"), st.integers(0, MEMBERS - 1), TIMES),
    st.tuples(st.just("cancel"), st.integers(0, MEMBERS - 1), st.just(0.0)),
    st.tuples(st.just("other"), st.just(0), st.just(0.0)),  # an item of the caller's other queue takes a number
), max_size=60)


@settings(max_examples=200, deadline=None)
@given(operations)
def test_the_earliest_heartbeat_comes_first_ties_by_sequence(ops):
    clock, model = HeartbeatClock(4), Model()
    clock.reserve(MEMBERS - 1)
    for op, member, at in ops:
        if op == "schedule":
            clock.schedule(member, at)
            model.schedule(member, at)
        elif op == "cancel":
            clock.cancel(member)
            model.next.pop(member, None)
        else:
            assert clock.take_sequence() == model.sequence
            model.sequence += 1
        assert clock.first() == model.first()
    while (beat := clock.first()) is not None:  # drained in the model's order
        assert beat == model.first()
        clock.cancel(beat[0])
        del model.next[beat[0]]


@st.composite
def stretches(draw):
    scheduled = draw(st.dictionaries(st.integers(0, MEMBERS - 1), TIMES, min_size=1))
    routine = {m: draw(st.sampled_from(list(Routine))) for m in scheduled}
    waiting = sum(kind == Routine.REACHES_TARGET_EPOCH for kind in routine.values()) + draw(st.integers(0, 2))
    return {
        "scheduled": scheduled, "routine": routine, "waiting": waiting,
        "stop": (draw(st.sampled_from([2.5, 9.0, 40.0, np.inf])), draw(st.integers(-1, 30))),
        "limit": draw(st.sampled_from([5.0, 30.0])), "interval": draw(st.sampled_from([1.0, 2.5, 5.0])),
        "unserved": draw(st.integers(0, 7)), "others_settled": draw(st.booleans()),
        "stop_when_settled": draw(st.booleans()), "sums": [draw(st.sampled_from([0.0, 0.1, 12.3])), 0.3],
    }


def play(case: dict, stretch: int) -> tuple:
    """The clock's run, called again while it plays something (a small stretch stops early)."""
    clock = HeartbeatClock(MEMBERS, traced=True, stretch=stretch)
    for member, at in case["scheduled"].items():
        clock.schedule(member, at)
        clock.routine[member] = case["routine"][member]
    now, waiting, unowned, unsettled = 0.0, case["waiting"], *case["sums"]
    played, counted, reached = [], 0, []
    while True:
        result = clock.run_routine(stop_at=case["stop"][0], stop_sequence=case["stop"][1], limit=case["limit"],
                                   interval=case["interval"], now=now, unserved=case["unserved"], waiting=waiting,
                                   others_settled=case["others_settled"],
                                   stop_when_settled=case["stop_when_settled"], unowned=unowned, unsettled=unsettled)
        if not result.played:
            break
        now, unowned, unsettled = result.now, result.unowned, result.unsettled
        played += result.traced
        counted += result.counted
        reached += result.reached
        waiting -= len(result.reached)
    last = {m: float(clock.last_beat[m]) for m in case["scheduled"] if clock.last_beat[m] > -np.inf}
    return now, played, counted, reached, unowned, unsettled, last, clock.first()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stretches())
def test_a_stretch_plays_routine_heartbeats_as_one_at_a_time(case):
    model = Model()
    for member, at in case["scheduled"].items():
        model.schedule(member, at)
    sums = list(case["sums"])
    now, played, counted, reached = model.run_routine(
        dict(case["routine"]), stop=case["stop"], limit=case["limit"], interval=case["interval"], now=0.0,
        unserved=case["unserved"], waiting=case["waiting"], others_settled=case["others_settled"],
        stop_when_settled=case["stop_when_settled"], sums=sums)
    last: dict[int, float] = {}
    for member, at in played:
        last[member] = at
    expected = (now, played, counted, reached, sums[0], sums[1], last, model.first())
    assert play(case, stretch=4096) == expected
    assert play(case, stretch=1) == expected  # cut into stretches of one, it comes to the same
