"""Play a Kafka Streams timeline as a streams group (KIP-1071): the broker assigns the tasks.

With ``group.protocol=streams`` every stream thread of an instance is a member of the group, and every
member of one instance shares its process id (and its state directory). The group coordinator computes
the target assignment with the broker's ``sticky`` task assignor
(:func:`kassign.groups.streams.sticky.assign_streams`, of the release ``kafka_version`` names: 4.2, 4.3 or
4.4, the default), fed every member in the order it joined and its process; then each member reconciles
towards its target on its own heartbeats. There is no JoinGroup barrier, but a task never has two owners:
the coordinator gives a member an active task only once no process holds it as an active task and no
replica of it sits on the member's process, and a standby only once the member's process holds the task
in no role (4.4 lets the member's own other role of the task pass: it changes in place). So a task
moving from A to B is revoked from A (on A's heartbeat) before B gets it (on B's next heartbeat). This is
Kafka's reconciliation (``CurrentAssignmentBuilder``), step for step: a member with tasks to give up waits
in ``UNREVOKED_TASKS`` at its epoch until it says (on a heartbeat) that it gave them up; one whose new
tasks are still held elsewhere waits in ``UNRELEASED_TASKS``.

What the release changes (:data:`kassign.core.releases.STREAMS_COORDINATOR`):

- Kafka 4.2 and 4.3 hand the assignor each member's previous target as its current tasks, and a task that
  changes role on a member is revoked first: a standby promoted to active is given up (and acknowledged)
  before the active task comes, on a later heartbeat;
- Kafka 4.4 hands the assignor the tasks each member is assigned now (KAFKA-20790; the same in a
  reconciled group) and the task offset sums each member last reported (KAFKA-20116, read by the assignor
  since KAFKA-20719), and changes roles in place (KAFKA-20665): a standby (or warm-up) whose task the
  target makes active stays until the active task can be granted, which then replaces it in the same
  step, and an active task becoming a standby is granted as one at once. A member reports its offset sums
  on joining, then when its tasks changed or ``TASK_OFFSET_INTERVAL`` (60 s, the broker's default) passed:
  the state its instance holds on disk, less the active tasks it runs itself; the simulator reports a
  replica's bytes, where Kafka sums changelog offsets (only their order counts). 4.4's warm-up refinement
  (``AssignmentRefiner``) inserts no warm-up task yet, so none is played.

The coordinator, as Kafka's runs a streams group: a member joining or leaving (or fenced, its session
``session_timeout`` after its last heartbeat) bumps the group epoch; a heartbeat that finds the epoch
ahead of the target's computes a new target (from Kafka 4.3: at most once per ``assignment_interval``); a
group that was empty waits ``initial_rebalance_delay`` after the first member joins before it computes one,
so that the others can join first. Every member is dynamic (the timeline sets no ``group.instance.id``;
4.2 and 4.3 have no static membership in streams groups at all): an instance that restarts comes back with
new member ids and its process id, and nothing assigned. Under 4.2 and 4.3 the assignor then sees no
previous tasks for it (its state on disk is not asked about); under 4.4 it sees the offset sums of that
state, and hands tasks back to it where its quotas allow.

The members: the Java client acknowledges a new assignment at once with a heartbeat, revoking first;
requests take no time. Instances start, stop (with or without leaving the group), crash and restart as
the timeline says (:mod:`.streams_scenario`); a ``settled`` start (the default) begins with the group
already reconciled, every replica caught up; an ``empty`` start has the instances join over the first
heartbeat interval with nothing on disk.

State, where the application gives sizes: a stateful task's changelog has ``state_bytes`` at the start and
grows by ``growth_bytes_per_second`` while its active task runs; a replica on an instance reads it at the
task's restoration speed (a standby keeps reading to follow it); an instance keeps a task's state on disk
when it stops holding it, until the state cleaner removes it ``state_cleanup_delay_ms`` later. An active
task arriving on an instance restores what its local state lacks before it runs (without a restoration
speed the simulator cannot say how long that takes, and runs it at once); the report names each move:
promoted from a standby, on state left on disk, or with no local state at all.

Worked example (``tests/groups/simulate/test_streams_group_engine.py`` checks it): one stateful
subtopology of 2 partitions, one standby, instances a and b with one stream thread each, settled; Kafka 4.3:
b runs 0_0 and keeps a standby of 0_1, a the other way round; heartbeats every 5 s, a's at 0, 5, ..., b's at
2.5, 7.5, .... b stops at 20 s, leaving the group. a's heartbeat at 20 s computes the new target, a active on
both tasks; first a must give up its standby of 0_0 (revoked, and acknowledged at once), and the
acknowledging heartbeat still finds that standby among its process's tasks (the coordinator updates its
owners only after it), so 0_0 comes with a's next heartbeat, at 25 s: promoted from the standby, paused 5 s.
Had b crashed instead, the coordinator would have kept it until its session timed out (its last heartbeat
at 17.5 s + 45 s), and 0_0 would have paused from 20 s to 70 s. Under Kafka 4.4 (whose fresh group puts
0_0 on a and 0_1 on b) a's heartbeat at 20 s promotes its standby of 0_1 in place: no pause; after a crash,
the pause ends with a's first heartbeat after b is fenced, at 65 s.

Data layout: tasks are the integers of :class:`~kassign.groups.simulate.streams_scenario.Application`
(``TaskId`` order), instances the timeline's slots; each member's tasks are three frozensets (active,
standby, warm-up); replica states are ``instance x task`` numpy arrays.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from kassign.core.errors import KassignError
from kassign.core.releases import (
    DEFAULT_KAFKA_VERSION,
    KAFKA_20665,
    STREAMS_COORDINATOR,
    ReleaseLike,
    release_for,
    rule,
)
from kassign.groups.classic.protocol.rebalance import InvariantViolation
from kassign.groups.simulate.heartbeat_timeline import HeartbeatTimeline, assignment_interval
from kassign.groups.simulate.streams_group_metrics import StreamsGroupRecord, StreamsGroupRun
from kassign.groups.simulate.streams_metrics import Outage, Segment
from kassign.groups.simulate.streams_scenario import (
    Action,
    StreamsTimeline,
    derived_process_id,
    parse_streams_strategy,
)
from kassign.groups.streams.sticky import assign_streams

ACTIVE, STANDBY, WARMUP = 0, 1, 2
KINDS = ("active", "standby", "warmup")
STABLE, UNREVOKED, UNRELEASED = "STABLE", "UNREVOKED_TASKS", "UNRELEASED_TASKS"
IDLE, READING, RESTORING, RUNNING = 0, 1, 2, 3  # a replica's state on an instance
LAST_NONE, LAST_ACTIVE, LAST_STANDBY = 0, 1, 2  # the role an instance last held a task in
SHOWN = {1: "active", 2: "restoring", 4: "standby"}  # the chart's states (streams_report's names)
SETTLED_START_ROUNDS = 10
TASK_OFFSET_INTERVAL = 60.0  # group.streams.task.offset.interval.ms (Kafka 4.4's default): offset sums resent at most
# this often while a member's tasks stay the same

Tasks = tuple[frozenset, frozenset, frozenset]
EMPTY: Tasks = (frozenset(), frozenset(), frozenset())


@dataclass(eq=False)
class _Member:
    """One stream thread: the client's side (``owned``, ``running``) and the coordinator's."""

    id: str
    slot: int
    process: str
    running: bool = True
    joining: bool = True  # its next heartbeat joins (epoch 0)
    in_group: bool = False
    epoch: int = 0
    state: str = STABLE
    assigned: Tasks = EMPTY
    pending: Tasks = EMPTY  # tasks pending revocation
    owned: Tasks = EMPTY  # what the client runs
    expiry_token: int = 0
    # the task offset sums (task -> sum) its last report gave the coordinator (Kafka 4.4), when, and for which tasks
    offset_sums: dict | None = None
    reported_at: float = float("-inf")
    reported_owned: Tasks = EMPTY


class StreamsGroupTimelineRun(HeartbeatTimeline):
    """A Streams timeline with ``protocol: streams`` played once; :meth:`run` plays it. ``trace``: keep
    ``(time, member, action, tasks)`` for every revocation and assignment a client applies."""

    def __init__(self, timeline: StreamsTimeline, strategy: str = "sticky",
                 kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION, *, trace: bool = False) -> None:
        _, standbys = parse_streams_strategy(strategy, "streams")
        self.release = release_for(kafka_version, "streams")
        self.in_place = rule(self.release, STREAMS_COORDINATOR) == KAFKA_20665  # Kafka 4.4's coordinator
        settings = dict(timeline.settings)
        if standbys is not None:
            settings["num_standby_replicas"] = standbys
        if settings.get("assignment_interval") is None:
            settings["assignment_interval"] = assignment_interval(self.release)
        super().__init__(settings["heartbeat_interval"], settings["session_timeout"], settings["assignment_interval"])
        self.timeline, self.strategy, self.settings = timeline, strategy, settings
        app = timeline.application
        self.app = app
        self.task_of = {task: i for i, task in enumerate(app.tasks)}
        self.task_names = [app.task_name(t) for t in range(len(app.tasks))]
        self.stateful = app.stateful
        self.sized = app.stateful & (app.sized if app.sized is not None else True)
        self.speed = app.restore_bytes
        self.growth = app.growth_bytes
        self.subtopologies = {str(sub): {"partitions": n, "stateful": bool(st)} for sub, (n, st) in
                              sorted(app.partitions.items())}
        n_slots, n_tasks = len(timeline.names), len(app.tasks)
        self.names = list(timeline.names)
        self.slot_of = {name: i for i, name in enumerate(self.names)}
        self.plans = [timeline.plans[name] for name in self.names]
        self.process_ids = [plan.process_id or derived_process_id(name) for name, plan in zip(self.names, self.plans)]
        self.incarnation = [0] * n_slots
        self.joins = [0] * n_slots
        self.up = np.zeros(n_slots, dtype=bool)
        self.started_at = np.zeros(n_slots)
        self.slot_members: list[list[str]] = [[] for _ in range(n_slots)]
        # replicas on instances
        self.pos = np.full((n_slots, n_tasks), -1.0)  # bytes of the task's state on disk; -1: none
        self.pos_at = np.zeros((n_slots, n_tasks))
        self.mode = np.zeros((n_slots, n_tasks), dtype=np.int8)
        self.idle_since = np.zeros((n_slots, n_tasks))
        self.last_role = np.zeros((n_slots, n_tasks), dtype=np.int8)
        self.standbys_held = np.zeros((n_slots, n_tasks), dtype=np.int32)
        self.restore_token = np.zeros((n_slots, n_tasks), dtype=np.int64)
        # tasks
        self.end = app.state_bytes.astype(float).copy()  # changelog size at end_at
        self.end_at = np.zeros(n_tasks)
        self.task_running = np.zeros(n_tasks, dtype=bool)
        self.runner: list[str | None] = [None] * n_tasks  # the member running (or restoring) the active task
        self.last_slot = np.full(n_tasks, -1, dtype=np.int64)
        self.last_member: list[str | None] = [None] * n_tasks
        self.pause_start = np.full(n_tasks, np.nan)
        self.pause_record = np.zeros(n_tasks, dtype=np.int64)
        # the coordinator
        self.members: dict[str, _Member] = {}
        self.group: dict[str, _Member] = {}
        self.group_epoch = self.assignment_epoch = 0
        self.target: dict[str, Tasks] = {}
        self.active_proc: dict[int, str] = {}
        self.replica_procs: tuple[dict[int, set], dict[int, set]] = ({}, {})  # standby, warm-up
        self.delay_pending = False
        # the charts
        self.shown = np.zeros((n_slots, n_tasks), dtype=np.int8)
        self.shown_since = np.zeros((n_slots, n_tasks))
        self.segments: list[Segment] = []
        self.outages: list[Outage] = []
        self._event_records: dict[int, StreamsGroupRecord] = {}
        self.trace: list[tuple[float, str, str, tuple[str, ...]]] | None = [] if trace else None

    # -- time and state -------------------------------------------------------------------------------

    def _end(self, t: int) -> float:
        if self.task_running[t]:
            return self.end[t] + self.growth[t] * (self.now - self.end_at[t])
        return self.end[t]

    def _set_running(self, t: int, running: bool) -> None:
        self.end[t] = self._end(t)
        self.end_at[t] = self.now
        self.task_running[t] = running

    def _position(self, s: int, t: int) -> float:
        p, mode = self.pos[s, t], self.mode[s, t]
        if p < 0 or mode == IDLE:
            return p
        if mode == RUNNING or self.speed[t] <= 0:
            return self._end(t)
        return min(p + self.speed[t] * (self.now - self.pos_at[s, t]), self._end(t))

    def _set_mode(self, s: int, t: int, mode: int) -> None:
        self.pos[s, t] = self._position(s, t)
        self.pos_at[s, t] = self.now
        self.mode[s, t] = mode
        if mode == IDLE:
            self.idle_since[s, t] = self.now

    def _clean(self, s: int, t: int) -> None:
        """The state cleaner deletes a task directory unassigned for state_cleanup_delay_ms (counted from the
        instance's start at the earliest)."""
        if self.mode[s, t] == IDLE and self.pos[s, t] >= 0 and self.up[s]:
            since = max(self.idle_since[s, t], self.started_at[s])
            if self.now - since >= self.settings["state_cleanup_delay_ms"] / 1000.0:
                self.pos[s, t] = -1.0
                self.last_role[s, t] = LAST_NONE

    def accrue(self, seconds: float) -> None:
        if self.records:
            paused = len(self.task_running) - int(np.count_nonzero(self.task_running))
            self.records[-1].paused_task_seconds += paused * seconds

    def _pause(self, t: int) -> None:
        if np.isnan(self.pause_start[t]):
            self.pause_start[t] = self.now
            self.pause_record[t] = len(self.records) - 1

    def _resume(self, t: int) -> None:
        start = self.pause_start[t]
        if not np.isnan(start):
            record = self.records[int(self.pause_record[t])]
            if self.now > start:
                self.outages.append(Outage(t, float(start), self.now, record.index))
                record.longest_pause = max(record.longest_pause, self.now - float(start))
            self.pause_start[t] = np.nan

    def _show(self, s: int, t: int, state: int) -> None:
        if not self.stateful[t] or self.shown[s, t] == state:
            return
        old = int(self.shown[s, t])
        if old and self.now > self.shown_since[s, t]:
            self.segments.append(Segment(t, self.names[s], SHOWN[old], float(self.shown_since[s, t]), self.now))
        self.shown[s, t] = state
        self.shown_since[s, t] = self.now

    def _log(self, member: str, action: str, tasks) -> None:
        if self.trace is not None and tasks:
            self.trace.append((self.now, member, action, tuple(self.task_names[t] for t in sorted(tasks))))

    # -- the client: applying an assignment -------------------------------------------------------

    def _stop_active(self, s: int, t: int) -> None:
        self.runner[t] = None
        if self.mode[s, t] == RUNNING:
            self._set_running(t, False)
        self.restore_token[s, t] += 1
        self._set_mode(s, t, IDLE)
        self.last_role[s, t] = LAST_ACTIVE
        self._pause(t)
        self._show(s, t, 0)

    def _stop_standby(self, s: int, t: int) -> None:
        self.standbys_held[s, t] -= 1
        if self.standbys_held[s, t] == 0:
            self._set_mode(s, t, IDLE)
            self._show(s, t, 0)

    def _start_active(self, member: _Member, t: int) -> None:
        s, record = member.slot, self.records[-1]
        if self.runner[t] is not None:
            raise InvariantViolation(f"at {self.now:g} s task {self.task_names[t]} would run on {member.id!r} and "
                                     f"{self.runner[t]!r} at once")
        if self.standbys_held[s, t]:
            raise InvariantViolation(f"at {self.now:g} s task {self.task_names[t]} would be active and standby on "
                                     f"instance {self.names[s]!r}")
        self._clean(s, t)
        before = int(self.last_slot[t])
        if before == s and self.last_member[t] != member.id:
            record.moved_within += 1
        elif before >= 0 and before != s:
            record.moved += 1
            if self.stateful[t]:
                if self.pos[s, t] >= 0 and self.last_role[s, t] == LAST_STANDBY:
                    record.promoted += 1
                elif self.pos[s, t] >= 0:
                    record.from_disk += 1
                else:
                    record.state_lost += 1
                    record.lost_tasks = record.lost_tasks + (self.task_names[t],)
                    if self.sized[t]:
                        record.lost_state_bytes += self._end(t)
        self.runner[t] = member.id
        self.last_slot[t], self.last_member[t] = s, member.id
        self.last_role[s, t] = LAST_ACTIVE
        if self.stateful[t] and self.pos[s, t] < 0:
            self.pos[s, t] = 0.0
        lag = max(0.0, self._end(t) - self._position(s, t)) if self.sized[t] else 0.0
        record.restore_bytes += lag
        if lag > 0 and self.speed[t] > 0:
            self._set_mode(s, t, RESTORING)
            self.restore_token[s, t] += 1
            self.push(self.now + lag / self.speed[t], "restored", (s, t, int(self.restore_token[s, t])))
            self._show(s, t, 2)
        else:
            self._run(s, t)

    def _run(self, s: int, t: int) -> None:
        self._set_mode(s, t, RUNNING)
        self._set_running(t, True)
        self._resume(t)
        self._show(s, t, 1)

    def _start_standby(self, member: _Member, t: int) -> None:
        s = member.slot
        if self.runner[t] is not None and self.members[self.runner[t]].slot == s:
            raise InvariantViolation(f"at {self.now:g} s task {self.task_names[t]} would be active and standby on "
                                     f"instance {self.names[s]!r}")
        self.standbys_held[s, t] += 1
        if self.standbys_held[s, t] > 1:
            return
        self._clean(s, t)
        if self.pos[s, t] < 0:
            self.pos[s, t] = 0.0
        if self.sized[t]:
            self.records[-1].restore_bytes += max(0.0, self._end(t) - self.pos[s, t])
        self._set_mode(s, t, READING)
        self.last_role[s, t] = LAST_STANDBY
        self._show(s, t, 4)

    def _apply(self, member: _Member, new: Tasks) -> bool:
        """The client revokes what its assignment no longer holds, then starts what is new."""
        old, s = member.owned, member.slot
        if old == new:
            return False
        gone_active = old[ACTIVE] - new[ACTIVE]
        for t in sorted(gone_active):
            self._stop_active(s, t)
        if member.in_group and member.running:
            self.records[-1].revoked += len(gone_active)
        old_replicas, new_replicas = old[STANDBY] | old[WARMUP], new[STANDBY] | new[WARMUP]
        for t in sorted(old_replicas - new_replicas):
            self._stop_standby(s, t)
        self._log(member.id, "revoke", gone_active | (old_replicas - new_replicas))
        for t in sorted(new[ACTIVE] - old[ACTIVE]):
            self._start_active(member, t)
        for t in sorted(new_replicas - old_replicas):
            self._start_standby(member, t)
        self._log(member.id, "assign", (new[ACTIVE] - old[ACTIVE]) | (new_replicas - old_replicas))
        member.owned = new
        return True

    # -- the coordinator ------------------------------------------------------------------------------

    def _index(self, member: _Member, tasks: tuple[Tasks, ...], add: bool) -> None:
        """Kafka's current-owner maps: task -> the process holding it active, and the processes holding it
        as a standby or warm-up; a member's assigned tasks and those pending revocation both count."""
        proc = member.process
        for group in tasks:
            for t in group[ACTIVE]:
                if add:
                    self.active_proc[t] = proc
                elif self.active_proc.get(t) == proc:
                    del self.active_proc[t]
            for kind, owners in ((STANDBY, self.replica_procs[0]), (WARMUP, self.replica_procs[1])):
                for t in group[kind]:
                    if add:
                        owners.setdefault(t, set()).add(proc)
                    elif t in owners:
                        owners[t].discard(proc)
                        if not owners[t]:
                            del owners[t]

    def _update(self, member: _Member, state: str, epoch: int, assigned: Tasks, pending: Tasks) -> None:
        self._index(member, (member.assigned, member.pending), add=False)
        member.state, member.epoch, member.assigned, member.pending = state, epoch, assigned, pending
        self._index(member, (assigned, pending), add=True)

    def _held_elsewhere(self, member: _Member, kind: int, t: int) -> bool:
        """Whether ``t`` cannot be granted to ``member`` in role ``kind`` yet. 4.2/4.3: an active task while any
        process runs it or the member's process holds a replica of it; a replica while its process holds the task
        in any role. 4.4 lets the member's own other role of the task pass (it changes in place)."""
        proc = member.process
        in_standby = proc in self.replica_procs[0].get(t, ())
        in_warmup = proc in self.replica_procs[1].get(t, ())
        runs_here = self.active_proc.get(t) == proc
        if self.in_place:
            own = member.assigned
            if kind == ACTIVE:
                return t in self.active_proc or (in_standby and t not in own[STANDBY]) or \
                    (in_warmup and t not in own[WARMUP])
            if kind == STANDBY:
                return (runs_here and t not in own[ACTIVE]) or in_standby or (in_warmup and t not in own[WARMUP])
            return runs_here or (in_standby and t not in own[STANDBY]) or in_warmup
        if kind == ACTIVE:
            return t in self.active_proc or in_standby or in_warmup
        return runs_here or in_standby or in_warmup

    def _next_assignment(self, member: _Member, epoch: int, target: Tasks, owned: Tasks) -> None:
        keep, revoke, add = [], [], []
        unreleased = False
        for kind in (ACTIVE, STANDBY, WARMUP):
            current, wanted = member.assigned[kind], target[kind]
            kept = current & wanted
            free = frozenset(t for t in wanted - kept if not self._held_elsewhere(member, kind, t))
            unreleased |= len(free) < len(wanted - kept)
            keep.append(kept)
            revoke.append(current - kept)
            add.append(free)
        if self.in_place:
            self._change_roles_in_place(member.assigned, target, owned, keep, revoke, add)
        target_epoch = self.assignment_epoch
        if any(revoke) and any(owned[k] & revoke[k] for k in range(3)):
            self._update(member, UNREVOKED, epoch, tuple(keep), tuple(revoke))
        elif any(add):
            self._update(member, UNRELEASED if unreleased else STABLE, target_epoch,
                         tuple(k | a for k, a in zip(keep, add)), EMPTY)
        else:
            self._update(member, UNRELEASED if unreleased else STABLE, target_epoch, tuple(keep), EMPTY)

    @staticmethod
    def _change_roles_in_place(current: Tasks, target: Tasks, owned: Tasks, keep: list, revoke: list,
                               add: list) -> None:
        """Kafka 4.4's in-place role changes (KAFKA-20665), on the lists ``_next_assignment`` computed: an active
        task the target makes a standby is granted as a standby at once (its active role still waits to be
        revoked); a standby becoming a warm-up (or back) changes without a revocation; a standby or warm-up the
        target makes active is not revoked, and stays until the active task is granted, which then replaces it
        in one step (only when nothing else is left to revoke)."""
        for kind, other in ((STANDBY, ACTIVE), (WARMUP, STANDBY), (STANDBY, WARMUP)):
            moved = current[other] & add[kind]  # demoted, or converted between the two replica roles
            if moved:
                add[kind] -= moved
                keep[kind] |= moved
                if other != ACTIVE:
                    revoke[other] -= moved
        promoted = [current[kind] & target[ACTIVE] for kind in (STANDBY, WARMUP)]
        for kind, tasks in zip((STANDBY, WARMUP), promoted):
            revoke[kind] -= tasks
        to_revoke = any(revoke) and any(owned[k] & revoke[k] for k in range(3))
        for kind, tasks in zip((STANDBY, WARMUP), promoted):
            waiting = tasks if to_revoke else tasks - add[ACTIVE]
            keep[kind] |= waiting

    def _reconcile(self, member: _Member) -> None:
        target = EMPTY if self.delay_pending else self.target.get(member.id, EMPTY)
        if member.state == STABLE:
            if member.epoch != self.assignment_epoch:
                self._next_assignment(member, member.epoch, target, member.owned)
        elif member.state == UNREVOKED:
            if not any(member.owned[k] & member.pending[k] for k in range(3)):
                self._next_assignment(member, member.epoch + 1, target, member.owned)
        else:
            self._next_assignment(member, member.epoch, target, member.owned)

    def _document(self, settled: bool = False) -> dict:
        """The assignor's input: every member in the order it joined, with its process, the tasks the
        coordinator hands over as its current ones (4.2/4.3: its previous target; 4.4: what it is assigned now,
        which is its target in a ``settled`` group) and, 4.4, the offset sums it reported."""
        members = {}
        current = self.in_place and not settled
        for mid, member in self.group.items():
            spec: dict = {"process_id": member.process}
            for kind, tasks in zip(KINDS, member.assigned if current else self.target.get(mid, EMPTY)):
                if tasks:
                    by_sub: dict[str, list[int]] = {}
                    for t in sorted(tasks):
                        sub, partition = self.app.tasks[t]
                        by_sub.setdefault(str(sub), []).append(partition)
                    spec[kind] = by_sub
            tags = self.plans[member.slot].tags
            if tags:
                spec["client_tags"] = dict(tags)
            if current and member.offset_sums:
                spec["offset_sums"] = {self.task_names[t]: value for t, value in sorted(member.offset_sums.items())}
            members[mid] = spec
        return {"subtopologies": self.subtopologies,
                "num_standby_replicas": int(self.settings["num_standby_replicas"]), "members": members}

    def _assign(self, settled: bool = False) -> dict[str, Tasks]:
        try:
            answer = assign_streams("sticky", self._document(settled), self.release)
        except KassignError as err:
            raise KassignError(f"{self.strategy} at {self.now:g} s: {err}") from None
        task_of = self.task_of
        return {mid: tuple(frozenset(task_of[(int(sub), p)] for sub, parts in given[kind].items() for p in parts)
                           for kind in KINDS) for mid, given in answer.items()}

    def _compute_target(self) -> None:
        self.target = self._assign()
        self.assignment_epoch = self.group_epoch
        self.target_computed()

    def _remove(self, member: _Member) -> None:
        """The member leaves the group (a leave heartbeat, or fenced): its tasks are free."""
        self._index(member, (member.assigned, member.pending), add=False)
        member.assigned = member.pending = EMPTY
        member.in_group = False
        self.group.pop(member.id, None)
        self.target.pop(member.id, None)
        self.group_epoch += 1

    # -- a heartbeat ----------------------------------------------------------------------------------

    def _report_offsets(self, member: _Member) -> None:
        """Kafka 4.4's client reports its task offset sums on joining, then when its tasks changed or
        ``TASK_OFFSET_INTERVAL`` passed: the state its instance holds on disk (as bytes here: Kafka sums
        changelog offsets, which grow with it), less the active tasks the member itself runs."""
        if not (member.joining or member.owned != member.reported_owned
                or self.now - member.reported_at >= TASK_OFFSET_INTERVAL):
            return
        s = member.slot
        sums = {}
        for t in np.flatnonzero(self.pos[s] >= 0).tolist():
            if self.mode[s, t] == RUNNING and t in member.owned[ACTIVE]:
                continue
            if self.mode[s, t] == IDLE and self.now - max(self.idle_since[s, t], self.started_at[s]) >= \
                    self.settings["state_cleanup_delay_ms"] / 1000.0:
                continue  # the state cleaner has removed it (it would be, at the next look)
            sums[t] = int(self._position(s, t))
        member.offset_sums, member.reported_at, member.reported_owned = sums, self.now, member.owned

    def heartbeat(self, mid: str) -> None:
        member = self.members[mid]
        if self.in_place:
            self._report_offsets(member)
        if member.joining:
            member.joining = False
            delay = self.settings["initial_rebalance_delay"]
            if not self.group and delay > 0 and not self.delay_pending:
                self.delay_pending = True
                self.push(self.now + delay, "delayed", None)
            self.group[mid] = member
            member.in_group = True
            self._update(member, STABLE, 0, EMPTY, EMPTY)
            self.group_epoch += 1
        if self.group_epoch > self.assignment_epoch and not self.delay_pending and self.may_compute_target():
            self._compute_target()
        self._reconcile(member)
        if self._apply(member, member.assigned):
            self.last_beat[mid] = self.now
            self.schedule_beat(mid, self.now)  # the client acknowledges at once, saying what it owns now
        else:
            self.beat_now(mid)

    def settled(self) -> bool:
        if self.delay_pending:
            return False
        if any(m.running and m.joining for m in self.members.values()):
            return False
        if self.group and self.group_epoch != self.assignment_epoch:
            return False
        for member in self.group.values():
            if (not member.running or member.state != STABLE or member.epoch != self.assignment_epoch
                    or member.owned != member.assigned):
                return False
        return True

    def on_settled(self, record: StreamsGroupRecord) -> None:
        self._snapshot(record, settled=True)

    def _snapshot(self, record: StreamsGroupRecord, settled: bool) -> None:
        active = {self.names[s]: 0 for s in np.flatnonzero(self.up).tolist()}
        standby = dict(active)
        for member in self.group.values():
            if member.running:
                name = self.names[member.slot]
                active[name] = active.get(name, 0) + len(member.owned[ACTIVE])
                standby[name] = standby.get(name, 0) + len(member.owned[STANDBY]) + len(member.owned[WARMUP])
        record.active_per_instance, record.standby_per_instance = active, standby
        wanted = int(self.settings["num_standby_replicas"]) * int(np.count_nonzero(self.stateful))
        placed = sum(len(tasks[STANDBY]) for tasks in self.target.values())
        record.missing_standbys = max(0, wanted - placed) if self.group else 0
        record.settled_snapshot = settled

    # -- instances ------------------------------------------------------------------------------------

    def _member_ids(self, s: int) -> list[str]:
        name, joins = self.names[s], self.joins[s]
        suffix = "" if joins <= 1 else f"-{joins}"
        return [f"{name}-StreamThread-{k + 1}{suffix}" for k in range(self.plans[s].threads)]

    def _start_instance(self, action: Action | None, s: int, join_now: bool = True) -> list[_Member]:
        """The instance starts: one member per stream thread, each joining on its first heartbeat (now, unless
        ``join_now`` is False and the caller schedules it)."""
        if action is not None:
            if action.plan is not None:
                self.plans[s] = action.plan
            if action.state_lost:
                self._wipe(s)
                self.incarnation[s] += 1
                self.process_ids[s] = derived_process_id(self.names[s], self.incarnation[s])
        self.up[s] = True
        self.started_at[s] = self.now
        self.joins[s] += 1
        members = [_Member(mid, s, self.process_ids[s]) for mid in self._member_ids(s)]
        self.slot_members[s] = [m.id for m in members]
        for member in members:
            self.members[member.id] = member
            if join_now:
                self.schedule_beat(member.id, self.now)
        return members

    def _wipe(self, s: int) -> None:
        self.pos[s] = -1.0
        self.last_role[s] = LAST_NONE

    def _stop_instance(self, s: int, leave: bool, lost: bool) -> None:
        record = self.records[-1]
        for mid in self.slot_members[s]:
            member = self.members[mid]
            if not member.running:
                continue
            member.running = False
            member.joining = False
            self._apply(member, EMPTY)  # its tasks close (a crash: they just stop)
            self.cancel_beat(mid)
            if not member.in_group:
                continue
            if leave:
                self._remove(member)
                record.heartbeats += 1  # the leave heartbeat
            else:
                member.expiry_token += 1
                deadline = self.last_beat.get(mid, self.now) + self.session_timeout
                self.push(deadline, "expire", (mid, member.expiry_token))
        self.up[s] = False
        if lost:
            self._wipe(s)

    # -- items ----------------------------------------------------------------------------------------

    def _record_for(self, action: Action) -> StreamsGroupRecord:
        record = self._event_records.get(action.record)
        if record is None:
            event = self.timeline.events[action.record - 1]
            previous = self.records[-1]
            if previous.settle_seconds is None and not (previous.index > 0 and previous.at == event.at):
                self._snapshot(previous, settled=False)  # as this event finds the group
            names = (event.instance,) if event.instance else tuple(event.instances)
            record = self.open_record(StreamsGroupRecord, event.at, event.type, event.describe(), names)
            self._event_records[action.record] = record
        return record

    def handle(self, kind: str, payload) -> None:
        if kind == "action":
            self._act(payload)
        elif kind == "restored":
            s, t, token = payload
            if token == self.restore_token[s, t] and self.mode[s, t] == RESTORING:
                self._run(s, t)
        elif kind == "expire":
            mid, token = payload
            member = self.members[mid]
            if token == member.expiry_token and not member.running and member.in_group:
                self._remove(member)
                record = self.records[-1]
                note = f"{mid} fenced at {self.now:g} s (session timed out)"
                record.note = f"{record.note}; {note}" if record.note else note
        elif kind == "delayed":
            self.delay_pending = False
            if self.group and self.group_epoch > self.assignment_epoch and self.may_compute_target():
                self._compute_target()

    def _act(self, action: Action) -> None:
        s = self.slot_of[action.instance]
        event = self.timeline.events[action.record - 1]
        if action.at == event.at:
            self._record_for(action)
        else:
            record = self.records[-1]
            note = f"{action.instance} back at {self.now:g} s"
            record.note = f"{record.note}; {note}" if record.note else note
        if action.kind == "start":
            self._start_instance(action, s)
        else:
            self._stop_instance(s, leave=action.kind == "stop" and action.leave_group, lost=action.state_lost)

    # -- the start --------------------------------------------------------------------------------------

    def _settled_start(self, members: list[_Member]) -> None:
        """The group reconciled before the timeline: the assignor run on its own answers until they stop
        changing, every member holding its target, every replica caught up."""
        for member in members:
            self.group[member.id] = member
            member.in_group, member.joining = True, False
        self.group_epoch = self.assignment_epoch = 1
        for _ in range(SETTLED_START_ROUNDS):
            target = self._assign(settled=True)
            if target == self.target:
                break
            self.target = target
        for member in members:
            self._update(member, STABLE, 1, self.target.get(member.id, EMPTY), EMPTY)
            tasks = member.assigned
            s = member.slot
            for t in tasks[ACTIVE]:
                self.pos[s, t] = self.end[t]
                self.runner[t] = member.id
                self.last_slot[t], self.last_member[t] = s, member.id
                self.last_role[s, t] = LAST_ACTIVE
                self._run(s, t)
            for t in tasks[STANDBY] | tasks[WARMUP]:
                self.pos[s, t] = self.end[t]
                self.standbys_held[s, t] += 1
                self.mode[s, t] = READING
                self.last_role[s, t] = LAST_STANDBY
                self._show(s, t, 4)
            member.owned = tasks
        for i, member in enumerate(members):
            phase = i * self.interval / len(members)
            self.last_beat[member.id] = phase - self.interval
            self.schedule_beat(member.id, phase)

    def run(self) -> StreamsGroupRun:
        started = time.perf_counter()
        timeline = self.timeline
        self.open_record(StreamsGroupRecord, 0.0, "initial", "the timeline starts", tuple(timeline.instances))
        for t in range(len(self.task_names)):
            self._pause(t)  # nothing runs before the group assigns
        members = [m for name in timeline.instances for m in self._start_instance(None, self.slot_of[name], False)]
        if self.settings["initial_state"] == "empty":
            for i, member in enumerate(members):  # they join one after another over the first interval
                self.schedule_beat(member.id, i * self.interval / len(members))
        elif members:
            self._settled_start(members)
        for action in timeline.actions:
            self.push(action.at, "action", action)
        self._after_step()  # a settled start is settled at once
        self.play(timeline.until)
        if self.records[-1].settle_seconds is None:
            self._snapshot(self.records[-1], settled=False)
        self._finish()
        return StreamsGroupRun(self.strategy, self.release.label, self.records, self.settings, self.now,
                               self.task_names, self.stateful.tolist(), self.segments, self.outages,
                               int(self.settings["num_standby_replicas"]), bool(self.sized.any()),
                               time.perf_counter() - started)

    def _finish(self) -> None:
        for t in np.flatnonzero(~np.isnan(self.pause_start)).tolist():
            start, record = float(self.pause_start[t]), self.records[int(self.pause_record[t])]
            if self.now > start:
                self.outages.append(Outage(t, start, self.now, record.index))
                record.longest_pause = max(record.longest_pause, self.now - start)
        for s, t in zip(*np.nonzero(self.shown)):
            self._show(int(s), int(t), 0)


def simulate_streams_group(timeline: StreamsTimeline, strategy: str = "sticky",
                           kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION) -> StreamsGroupRun:
    """Play a Streams timeline as a streams group (KIP-1071) with the broker's ``sticky`` task assignor and
    coordinator of Kafka ``kafka_version`` (4.2, 4.3 or 4.4); ``strategy`` ``sticky:standbys=N`` plays N standby
    replicas."""
    return StreamsGroupTimelineRun(timeline, strategy, kafka_version).run()
