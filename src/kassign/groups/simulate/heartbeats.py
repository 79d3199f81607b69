"""The members' heartbeat clock for the consumer-protocol simulator, on arrays.

Each member has at most one heartbeat scheduled: its time and a sequence number (the
order it was scheduled in, which breaks ties between equal times, as a heap of
``(time, sequence)`` entries would). The schedule is a binary heap of member numbers
held in numpy arrays and kept by compiled code, so rescheduling a member moves its
entry instead of leaving a stale one behind.

Most heartbeats are routine. In a group that is not changing they do nothing but
renew the member's session; after a new target, most members hold exactly their share
already and their next heartbeat only moves them to the target's epoch. The simulator
marks each member's next heartbeat (``routine``: ``RENEWS_SESSION``,
``REACHES_TARGET_EPOCH``, or 0 for anything else, played one at a time), and
:meth:`HeartbeatClock.run_routine` plays a stretch of routine ones in one compiled
call: in time order, each renews its session (the time is kept in ``last_beat``),
counts towards the record's figures exactly as the step-by-step loop adds them (the
same float additions, in the same order), and is scheduled again one interval later
with the next sequence number. A member reaching the target's epoch is written to a
log for the caller to apply to its record, and the group is settled once the last
member it waits for has reached it. The stretch ends at the first heartbeat that is
not routine, that comes after the next other item of the simulator's queue, or when
the group is settled and nothing else is to come.

Example: members 0 and 1 renewing, heartbeating every 5 s at 1 s and 3 s, an event at
12 s: ``run_routine`` plays 1, 3, 6, 8, 11 s and stops with member 1 due at 13 s,
after the event.

Data layout: ``times`` (float64) and ``ints`` (int64 rows: heap, position in the
heap, sequence number) indexed by member number; ``state`` holds the heap's size and
the next sequence number, which the simulator's other queue draws from as well.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from kassign.core import heaps

from kassign.groups.consumer.coordinator import Routine

_RENEWS_SESSION, _REACHES_TARGET_EPOCH = int(Routine.RENEWS_SESSION), int(Routine.REACHES_TARGET_EPOCH)
_HEAP, _POSITION, _SEQUENCE = 0, 1, 2  # rows of ``ints``
_SIZE, _NEXT_SEQUENCE = 0, 1  # entries of ``state``
_NOT_QUEUED = -1
_STRETCH = 4096  # by default, at most this many heartbeats traced, or members reaching the target's epoch, per stretch


class Stretch(NamedTuple):
    """What :meth:`HeartbeatClock.run_routine` played."""

    now: float  # the clock after it
    played: int
    counted: int  # heartbeats of a group not settled (the record's ``heartbeats``)
    unowned: float  # the record's unowned partition-seconds after it
    unsettled: float  # the record's unsettled seconds after it
    reached: list[int]  # members that reached the target's epoch, in order
    traced: list[tuple[int, float]]  # (member, time) of every heartbeat played, when tracing


class HeartbeatClock:
    """Every member's next heartbeat; member numbers are small integers, allocated by the caller."""

    def __init__(self, capacity: int = 16, *, traced: bool = False, stretch: int = _STRETCH) -> None:
        self.times = np.zeros(capacity, dtype=np.float64)
        self.ints = np.full((3, capacity), _NOT_QUEUED, dtype=np.int64)
        self.state = np.zeros(2, dtype=np.int64)
        self.routine = np.zeros(capacity, dtype=np.int8)  # what its next heartbeat would do, if routine (Routine)
        self.last_beat = np.full(capacity, -np.inf)  # time of its latest heartbeat played by run_routine
        self.traced = traced
        self._reached = np.zeros(stretch, dtype=np.int64)
        self._trace_members = np.zeros(stretch if traced else 0, dtype=np.int64)
        self._trace_times = np.zeros(stretch if traced else 0)

    def take_sequence(self) -> int:
        """The next sequence number (for the caller's other queue items, so ties order across both)."""
        number = int(self.state[_NEXT_SEQUENCE])
        self.state[_NEXT_SEQUENCE] = number + 1
        return number

    def reserve(self, member: int) -> None:
        """Make room for member numbers up to ``member`` (the others take member numbers as given)."""
        if member >= len(self.times):
            self._grow(member + 1)

    def schedule(self, member: int, at: float) -> None:
        """(Re)schedule ``member``'s heartbeat at ``at``, replacing any it had."""
        _schedule(self.times, self.ints, self.state, member, at)

    def cancel(self, member: int) -> None:
        """No heartbeat for ``member`` until it is scheduled again."""
        _cancel(self.times, self.ints, self.state, member)
        self.routine[member] = 0

    def take_last_beat(self, member: int) -> float | None:
        """The time of ``member``'s latest heartbeat played by :meth:`run_routine` since the last call, or None."""
        if self.last_beat[member] == -np.inf:
            return None
        at = float(self.last_beat[member])
        self.last_beat[member] = -np.inf
        return at

    def first(self) -> tuple[int, float, int] | None:
        """``(member, time, sequence)`` of the earliest heartbeat, or None."""
        if not self.state.item(_SIZE):
            return None
        member = self.ints.item(_HEAP, 0)
        return member, self.times.item(member), self.ints.item(_SEQUENCE, member)

    def run_routine(self, *, stop_at: float, stop_sequence: int, limit: float, interval: float, now: float,
                    unserved: int, waiting: int, others_settled: bool, stop_when_settled: bool, unowned: float,
                    unsettled: float) -> Stretch:
        """Play routine heartbeats in order until one is not routine, comes after ``(stop_at,
        stop_sequence)`` or after ``limit``, or, with ``stop_when_settled``, the group is settled: when
        ``waiting`` (the members the group waits for) is down to 0 and ``others_settled``.

        ``unowned`` (partition-seconds) and ``unsettled`` (seconds) grow as the clock moves from ``now``,
        by ``unserved`` partitions at a time. At most a few thousand members reaching the target's epoch
        (or heartbeats traced) are played per call: the caller calls again for more."""
        now, played, counted, reached, unowned, unsettled = _run_routine(
            self.times, self.ints, self.state, self.routine, self.last_beat, stop_at, stop_sequence, limit, interval,
            now, unserved, waiting, others_settled, stop_when_settled, unowned, unsettled, self._reached, self.traced,
            self._trace_members, self._trace_times)
        traced = (list(zip(self._trace_members[:played].tolist(), self._trace_times[:played].tolist()))
                  if self.traced and played else [])
        return Stretch(now, played, counted, unowned, unsettled, self._reached[:reached].tolist() if reached else [],
                       traced)

    def _grow(self, needed: int) -> None:
        capacity = max(needed, 2 * len(self.times))
        extra = capacity - len(self.times)
        self.times = np.concatenate([self.times, np.zeros(extra)])
        self.ints = np.concatenate([self.ints, np.full((3, extra), _NOT_QUEUED, dtype=np.int64)], axis=1)
        self.routine = np.concatenate([self.routine, np.zeros(extra, dtype=np.int8)])
        self.last_beat = np.concatenate([self.last_beat, np.full(extra, -np.inf)])


# The clock is an indexed heap (kassign.core.heaps) keyed by due time; equal times go in the order they
# were scheduled (the sequence row), as events queued at one instant would.
@njit(cache=True)
def _sift_up(times, ints, i):
    heaps.sift_up(ints[_HEAP], ints[_POSITION], times, ints[_SEQUENCE], i)


@njit(cache=True)
def _sift_down(times, ints, i, size):
    heaps.sift_down(ints[_HEAP], ints[_POSITION], times, ints[_SEQUENCE], i, size)


@njit(cache=True)
def _schedule(times, ints, state, member, at):
    times[member] = at
    ints[_SEQUENCE, member] = state[_NEXT_SEQUENCE]
    state[_NEXT_SEQUENCE] += 1
    i = ints[_POSITION, member]
    if i == _NOT_QUEUED:
        i = state[_SIZE]
        state[_SIZE] += 1
        ints[_HEAP, i] = member
        ints[_POSITION, member] = i
        _sift_up(times, ints, i)
    else:
        _sift_up(times, ints, i)
        _sift_down(times, ints, ints[_POSITION, member], state[_SIZE])


@njit(cache=True)
def _cancel(times, ints, state, member):
    i = ints[_POSITION, member]
    if i == _NOT_QUEUED:
        return
    ints[_POSITION, member] = _NOT_QUEUED
    state[_SIZE] -= 1
    size = state[_SIZE]
    if i < size:
        last = ints[_HEAP, size]
        ints[_HEAP, i] = last
        ints[_POSITION, last] = i
        _sift_up(times, ints, i)
        _sift_down(times, ints, ints[_POSITION, last], size)


@njit(cache=True)
def _run_routine(times, ints, state, routine, last_beat, stop_at, stop_sequence, limit, interval, now, unserved,
                 waiting, others_settled, stop_when_settled, unowned, unsettled, reached, traced, trace, trace_times):
    played = counted = caught_up = 0
    settled = others_settled and waiting == 0
    while state[_SIZE] > 0:
        member = ints[_HEAP, 0]
        at = times[member]
        kind = routine[member]
        if kind == 0 or at > limit or (stop_when_settled and settled):
            break
        if at > stop_at or (at == stop_at and ints[_SEQUENCE, member] > stop_sequence):
            break
        if (traced and played == len(trace)) or (kind == _REACHES_TARGET_EPOCH and caught_up == len(reached)):
            break
        if at > now:  # the clock moves: the same additions, in the same order, as one step at a time
            unowned += unserved * (at - now)
            if not settled:
                unsettled += at - now
            now = at
        last_beat[member] = at
        if kind == _REACHES_TARGET_EPOCH:
            counted += 1  # the group waited for it, so it was not settled
            reached[caught_up] = member
            caught_up += 1
            waiting -= 1
            settled = others_settled and waiting == 0
            routine[member] = _RENEWS_SESSION
        elif not settled:
            counted += 1
        if traced:
            trace[played] = member
            trace_times[played] = at
        played += 1
        times[member] = at + interval
        ints[_SEQUENCE, member] = state[_NEXT_SEQUENCE]
        state[_NEXT_SEQUENCE] += 1
        _sift_down(times, ints, 0, state[_SIZE])
    return now, played, counted, caught_up, unowned, unsettled
