"""The Kafka Streams timeline engine: every rebalance of a classic Streams application, in order.

The clock jumps from one moment that matters to the next (an event, a session timing out, a
rebalance round ending, a probing rebalance falling due); between them the state of every task
on every instance moves on in closed form, on ``instance x task`` arrays.

**Rebalances.** Every assignment is the real group leader's, as the Kafka release asked for
(``kafka_version``, 3.0 to 4.4, default 4.4) computes it: :func:`assign_streams_classic`
(high-availability or, from 3.8, sticky; or kassign's optimal, as a KIP-924 assignor would run
it) on the subscriptions the instances would send: each consumer (one per stream thread) lists
the active tasks it owns and the offset sums of the task state on disk (``-2`` for an active task
that runs, the restored offset for one still restoring, a standby's or warm-up's position, and
what a task closed earlier left behind until ``state_cleanup_delay_ms`` cleans it up; nothing for
a stateless task); the leader compares them with the changelogs' end offsets. A strategy the
release lacks (sticky before 3.8, rack-aware assignment before 3.6, ``balance_subtopology`` in
3.6, client tags before 3.2) is refused before anything is played. A round (JoinGroup and
SyncGroup) takes ``round_seconds``; the subscriptions are taken when it starts, the assignment
takes effect when it ends. Around the assignor, what ``StreamsPartitionAssignor`` does:

* an active task given to a consumer while another consumer still owns it is held back for this
  round (cooperative rebalancing): the owner revokes it, the receiver keeps it as a standby
  meanwhile if its instance had state for it, and an immediate follow-up rebalance hands it over;
* an assignment that asks for a probing rebalance (and needs no follow-up) schedules one
  ``probing_rebalance_interval_ms`` later; any newer assignment replaces that schedule.

**Membership.** A ``start`` joins at once and the group rebalances. A ``stop`` closes its tasks
cleanly; with ``leave_group`` the group rebalances at once, without it the instance stays in the
group until its session times out. A ``crash`` stops the tasks at once and the group notices after
``session_timeout``. A rebalance that starts while a stopped instance is still in the group waits
in its join phase until that session times out (at most ``rebalance_timeout``).

**State.** Positions count changelog records (``state_bytes / record_bytes`` at the start). A
running active task writes ``growth`` records a second to its changelog; nothing is written
while the task has no running active (restoring does not write). An active task restores from
its position to the end offset at the task's restoration speed and runs once it gets there;
standbys and warm-ups read at the same speed and then follow the changelog. A restarted instance
keeps its process id and its state (offset sums as it left them) unless the event says the state
is lost; a newcomer has nothing on disk.

Example: instances a and b, one stateful task each (a 2 GiB changelog, 100 KiB/s written to it
while the task runs, restored at 20 MiB/s, 1 KiB records), no standbys, rounds of 2 s; a restarts
at 60 s, down 5 minutes, leaving the group. Its task goes to b, which has nothing on disk and restores
the 2 GiB and the 6 MiB written in the first minute: the task runs again at 164.7 s, 104.7 s after it
stopped. Back at 360 s, a's state lags by what b wrote since (19,530 records, more than
``acceptable_recovery_lag``): high-availability gives a a warm-up and, at the probing rebalance ten
minutes later, hands the task back (a follow-up round: 2 s more); sticky hands it back at once, since
a reported state for it (2 s). With one standby the task is promoted on b: 2 s, and 2 s at the
hand-back.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable

import numpy as np

from kassign.core.errors import KassignError, ScenarioError
from kassign.groups.simulate.streams_metrics import Outage, Segment, StreamsEventRecord, StreamsRun
from kassign.groups.simulate.streams_scenario import (
    Action,
    InstancePlan,
    StreamsTimeline,
    derived_process_id,
    rack_problem,
    streams_strategy_options,
)
from kassign.core.javaorder import java_string_hash_order, java_uuid_hash
from kassign.core.releases import DEFAULT_KAFKA_VERSION, KafkaRelease
from kassign.groups.streams.classic.assign import check_release_has, decide_streams_classic, streams_release
from kassign.groups.streams.classic.scenario import (
    JAVA_LONG_MAX,
    LATEST_OFFSET,
    Client,
    Consumer,
    StreamsClassicScenario,
)

NONE, ACTIVE, STANDBY = 0, 1, 2  # a replica's role on an instance
# what the per-task charts show (0: nothing)
SHOWN = {1: "active", 2: "restoring", 3: "warm-up", 4: "standby"}
SETTLE_CAP = 7 * 86_400.0  # after the last event, the clock stops at the latest this much later
INSTANT_FOLLOWUPS = 100  # follow-up rebalances at one instant (rounds of 0 s) before kassign ends the chain


class _Decision:
    """One assignment, as it will be delivered when the round ends."""

    def __init__(self, cause: int, kind: str, slots: list[int], n_tasks: int) -> None:
        self.cause = cause
        self.kind = kind  # membership, probing, followup
        self.slots = slots  # the instances in this round
        self.active_slot = np.full(n_tasks, -1, dtype=np.int64)  # where each active task is delivered now
        self.active_thread = np.full(n_tasks, -1, dtype=np.int64)
        self.standby = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))  # slots, tasks, threads
        self.warm = np.zeros(0, dtype=bool)  # per standby: a warm-up
        self.withheld = 0
        self.probing = False
        self.wanted = (self.active_slot, self.active_thread)  # what the leader gave, before hand-over


class CrossRack:
    """Which tasks read across racks from which rack: ``cross[rack row, task]`` is true when one of the
    task's source partitions has no replica in that rack (a consumer with ``client.rack`` fetches from a
    replica in its own rack where there is one, KIP-392). Rows are added as racks turn up."""

    def __init__(self, app) -> None:
        self.sources = [[(topic, part) for topic in app.source_topics.get(sub, [])] for sub, part in app.tasks]
        self.partition_racks = app.partition_racks
        self.rows: dict[str, int] = {}
        self.cross = np.zeros((0, len(app.tasks)), dtype=bool)

    def row(self, rack: str) -> int:
        known = self.rows.get(rack)
        if known is None:
            line = np.array([any(rack not in self.partition_racks[topic][part] for topic, part in parts)
                             for parts in self.sources], dtype=bool)
            self.cross = np.vstack([self.cross, line[None, :]])
            known = self.rows[rack] = len(self.rows)
        return known


class _Answer:
    """The leader's answer as arrays (before cooperative hand-over): what a repeated input gives again."""

    def __init__(self, decided_slot, decided_thread, standby, probing) -> None:
        self.decided_slot = decided_slot
        self.decided_thread = decided_thread
        self.standby = standby
        self.probing = probing


def strategy_settings(timeline: StreamsTimeline, strategy: str, release: KafkaRelease) -> tuple[str, dict]:
    """The assignor a strategy name plays and the settings it plays with (``NAME:standbys=N``,
    ``NAME:rack=STRATEGY``), checked against what ``release`` has (one line naming the strategy otherwise)."""
    assignor, standbys, rack = streams_strategy_options(strategy)
    settings = dict(timeline.settings)
    if standbys is not None:
        settings["num_standby_replicas"] = standbys
    if rack is not None:
        settings["rack_aware_assignment_strategy"] = rack
        problem = rack_problem(timeline.application, settings)
        if problem:
            raise ScenarioError(f"strategy {strategy}: {problem[0]}: {problem[1]}")
    try:
        check_release_has(assignor, settings, release)
    except KassignError as err:
        raise KassignError(f"strategy {strategy}: {err}") from None
    return assignor, settings


class StreamsTimelineRun:
    """One strategy over one Streams timeline; :meth:`run` plays it."""

    def __init__(self, timeline: StreamsTimeline, strategy: str, kafka_version: str = DEFAULT_KAFKA_VERSION,
                 on_rebalance: Callable[[], None] | None = None, segments: bool = True) -> None:
        self.release = streams_release(kafka_version)
        self.kafka_version = self.release.label
        self.assignor, self.settings = strategy_settings(timeline, strategy, self.release)
        self.timeline = timeline
        self.strategy = strategy
        self.on_rebalance = on_rebalance
        app = timeline.application
        n_tasks, n_slots = len(app.tasks), len(timeline.names)
        self.names = list(timeline.names)
        self.slot_of = {name: i for i, name in enumerate(self.names)}
        self.task_names = [app.task_name(t) for t in range(n_tasks)]
        self.is_stateful = app.stateful
        self.st = np.flatnonzero(app.stateful)
        record = np.where(app.stateful, app.record_bytes, 1.0)
        self.record_bytes = record
        self.end = app.state_bytes / record  # changelog end offsets, in records
        self.growth = app.growth_bytes / record
        self.speed = np.where(app.stateful, app.restore_bytes / record, 1.0)
        # instance x task
        self.pos = np.full((n_slots, n_tasks), -1.0)  # records in the local store; -1: no state on disk
        self.role = np.zeros((n_slots, n_tasks), dtype=np.int8)
        self.thread = np.full((n_slots, n_tasks), -1, dtype=np.int32)  # the consumer holding it (-1: none)
        self.warm = np.zeros((n_slots, n_tasks), dtype=bool)
        self.boot = np.zeros((n_slots, n_tasks), dtype=bool)  # a replica still catching up for the first time
        self.idle_since = np.zeros((n_slots, n_tasks))
        self.cause = np.zeros((n_slots, n_tasks), dtype=np.int64)  # the record a replica's reading is charged to
        # per task
        self.active = np.full(n_tasks, -1, dtype=np.int64)  # the instance the active task is delivered to
        self.running = np.zeros(n_tasks, dtype=bool)
        self.decided = np.full(n_tasks, -1, dtype=np.int64)  # the leader's last choice of instance
        self.outage_record = np.full(n_tasks, -1, dtype=np.int64)
        self.outage_start = np.zeros(n_tasks)
        # per instance
        self.up = np.zeros(n_slots, dtype=bool)
        self.ghost = np.full(n_slots, math.inf)  # a stopped instance still in the group: when its session ends
        self.ghost_record = np.zeros(n_slots, dtype=np.int64)
        self.started_at = np.zeros(n_slots)
        self.incarnation = [0] * n_slots
        self.joins = [0] * n_slots
        self.plans: list[InstancePlan] = [timeline.plans[name] for name in self.names]
        self.process_ids = [p.process_id or derived_process_id(n) for n, p in zip(self.names, self.plans)]
        self.racks = CrossRack(app) if app.partition_racks else None
        self.rack_row = np.array([self._rack_row(p.rack) for p in self.plans], dtype=np.int64)
        self.cross_rack_seconds = 0.0  # cross-rack active tasks, integrated over time
        self.join_order: list[int] = []
        # the chart's view of each replica
        self.shown = np.zeros((n_slots, n_tasks), dtype=np.int8)
        self.shown_since = np.zeros((n_slots, n_tasks))
        self.segments: list[Segment] = []
        self.keep_segments = segments
        self.outages: list[Outage] = []
        # the clock and what is pending
        self.now = 0.0
        self.request: float | None = None
        self.request_record = 0
        self.request_kind = "membership"
        self.round_end: float | None = None
        self.decision: _Decision | None = None
        self.probe_at: float | None = None
        self.probe_record = 0
        self.unsettled = 0.0
        self.records = [StreamsEventRecord(0, 0.0, "initial", "the timeline starts", tuple(timeline.instances))]
        for i, event in enumerate(timeline.events, start=1):
            self.records.append(StreamsEventRecord(i, event.at, event.type, event.describe(),
                                                   (event.instance,) if event.instance else event.instances,
                                                   settle_seconds=None))
        self.records[0].settle_seconds = None
        # caches: the sticky assignor's answers by input, member ids, HashMap orders, process id keys
        self._memo: dict[bytes, _Answer] = {}
        self._chain: set[bytes] = set()
        self._ids: dict[tuple, list[str]] = {}
        self._layouts: dict[tuple, tuple] = {}
        self._client_keys: dict[str, tuple] = {}
        self._instant, self._instant_followups = -1.0, 0

    # -- the run --------------------------------------------------------------------------------

    def run(self) -> StreamsRun:
        started = time.perf_counter()
        actions = list(self.timeline.actions)
        self._begin()
        a = 0
        last_event = self.timeline.events[-1].at if self.timeline.events else 0.0
        until = self.timeline.until
        capped = False
        while True:
            next_action = actions[a].at if a < len(actions) else math.inf
            ghost = float(self.ghost.min()) if len(self.ghost) else math.inf
            join = self._join_time()
            probe = self.probe_at if self.probe_at is not None else math.inf
            round_end = self.round_end if self.round_end is not None else math.inf
            moment = min(next_action, ghost, join, probe, round_end)
            limit = until if until is not None else last_event + SETTLE_CAP
            if moment == math.inf or moment > limit:
                end = until if until is not None else (limit if moment != math.inf else self._quiet_end())
                capped = until is None and moment != math.inf
                if end > self.now:
                    self._advance(end)
                break
            self._advance(moment)
            if moment == round_end:
                self._apply()
            elif moment == next_action:
                while a < len(actions) and actions[a].at == moment:
                    self._act(actions[a])
                    a += 1
            elif moment == ghost:
                self._expire(moment)
            elif moment == probe:
                self.probe_at = None
                self._ask(self.probe_record, "probing")
            else:
                self._start_round()
        self._finish()
        run = StreamsRun(self.strategy, self.kafka_version, self.records, self.now, self.unsettled,
                         time.perf_counter() - started, self.segments, self.outages, self.task_names,
                         self.is_stateful.tolist(), int(self.settings["num_standby_replicas"]), capped)
        if self.racks is not None:
            run.cross_rack_task_seconds = self.cross_rack_seconds
            run.rack_strategy = ("ignored" if self.assignor == "optimal"
                                 else self.settings["rack_aware_assignment_strategy"])
        return run

    # -- racks ---------------------------------------------------------------------------------------

    def _rack_row(self, rack: str | None) -> int:
        return -1 if rack is None or self.racks is None else self.racks.row(rack)

    def cross_rack_tasks(self) -> int:
        """Active tasks (delivered) on an instance with a rack where one of their source partitions has no
        replica in that rack."""
        tasks = np.flatnonzero(self.active >= 0)
        rows = self.rack_row[self.active[tasks]]
        known = rows >= 0
        return int(np.count_nonzero(self.racks.cross[rows[known], tasks[known]]))

    def _quiet_end(self) -> float:
        """With nothing pending, the clock runs on until every restoring task runs."""
        st = self.st
        restoring = st[(self.active[st] >= 0) & ~self.running[st]]
        if not len(restoring):
            return self.now
        slots = self.active[restoring]
        left = (self.end[restoring] - self.pos[slots, restoring]) / self.speed[restoring]
        return self.now + float(left.max())

    # -- the start --------------------------------------------------------------------------------

    def _begin(self) -> None:
        for name in self.timeline.instances:
            s = self.slot_of[name]
            self.up[s] = True
            self.join_order.append(s)
        if not self.timeline.instances:
            return
        if self.settings["initial_state"] == "empty":
            self.outage_record[self.st] = 0  # a first deployment: every stateful task restores from nothing
            self._ask(0, "membership")
            return
        # settled: replay the leader on its own answers, every replica caught up, until nothing changes
        previous = None
        for _ in range(8):
            decision = self._decide(0, "membership")
            key = b"".join(a.tobytes() for a in (decision.active_slot, decision.active_thread, *decision.standby))
            self._deliver(decision, settled=True)
            if key == previous and not decision.probing and not decision.withheld:
                break
            previous = key
        self.records[0].rebalances = 0
        self.records[0].moved = 0
        self.records[0].warmups = 0
        self.records[0].settle_seconds = 0.0
        if self.racks is not None:
            self.records[0].cross_rack_tasks = self.cross_rack_tasks()
        self.probe_at = None
        self.request = None

    # -- what happens to instances --------------------------------------------------------------------

    def _act(self, action: Action) -> None:
        s = self.slot_of[action.instance]
        if action.kind == "start":
            self._start_instance(s, action)
            self._ask(action.record, "membership")
            return
        self._stop_instance(s, action.record, lost=action.state_lost)
        if action.kind == "stop" and action.leave_group:
            self._ask(action.record, "membership")
        else:
            self.ghost[s] = max(self.ghost[s] if self.ghost[s] != math.inf else 0.0,
                                action.at + self.settings["session_timeout"])
            self.ghost_record[s] = action.record

    def _start_instance(self, s: int, action: Action) -> None:
        if action.plan is not None:
            self.plans[s] = action.plan
            self.rack_row[s] = self._rack_row(action.plan.rack)
        if action.state_lost:
            self.pos[s] = -1.0
            self.incarnation[s] += 1
            self.process_ids[s] = derived_process_id(self.names[s], self.incarnation[s])
        self.up[s] = True
        self.started_at[s] = self.now
        self.joins[s] += 1
        self.thread[s] = -1
        if s in self.join_order:
            self.join_order.remove(s)
        self.join_order.append(s)

    def _stop_instance(self, s: int, record: int, lost: bool) -> None:
        """The instance's tasks stop now: its actives go dark, its standbys stop reading."""
        tasks = np.flatnonzero(self.active == s)
        self._end_actives(tasks, record)
        self.role[s] = NONE
        self.warm[s] = False
        self.boot[s] = False
        self.idle_since[s] = self.now
        self.thread[s] = -1
        self.up[s] = False
        if lost:
            self.pos[s] = -1.0
        self._reshow()

    def _end_actives(self, tasks: np.ndarray, record: int) -> None:
        """These tasks' active replicas stop (the state stays on disk): their outage starts unless one
        already runs."""
        if not len(tasks):
            return
        slots = self.active[tasks]
        self.role[slots, tasks] = NONE
        self.idle_since[slots, tasks] = self.now
        self.active[tasks] = -1
        stateful = tasks[self.is_stateful[tasks]]
        starting = stateful[self.outage_record[stateful] < 0]
        self.outage_record[starting] = record
        self.outage_start[starting] = self.now
        self.running[tasks] = False

    def _expire(self, moment: float) -> None:
        for s in np.flatnonzero(self.ghost <= moment).tolist():
            self.ghost[s] = math.inf
            self._ask(int(self.ghost_record[s]), "membership")

    # -- rebalances -----------------------------------------------------------------------------

    def _ask(self, record: int, kind: str) -> None:
        """Somebody wants a rebalance: it starts as soon as no round runs (and the join phase is done).
        Requests that meet in one rebalance charge it to the latest event among them; a member joining
        or leaving outranks a follow-up or probing rebalance, which it makes unnecessary."""
        if self.request is None:
            self.request = self.now
            self.request_record, self.request_kind = record, kind
        elif kind == "membership" and self.request_kind != "membership":
            self.request_record, self.request_kind = record, kind
        elif kind == "membership" or self.request_kind != "membership":
            self.request_record = max(self.request_record, record)

    def _join_time(self) -> float:
        if self.request is None or self.round_end is not None:
            return math.inf
        ghosts = self.ghost[self.ghost != math.inf]
        if not len(ghosts):
            return self.request
        # the join phase waits for members that will never rejoin until their sessions end
        return max(self.request, min(float(ghosts.max()), self.request + self.settings["rebalance_timeout"]))

    def _start_round(self) -> None:
        self.ghost[:] = math.inf  # whoever has not rejoined is out of the group now
        record, kind = self.request_record, self.request_kind
        self.request = None
        if not self.up.any():
            return  # nobody left to rebalance
        decision = self._decide(record, kind)
        self.decision = decision
        self.round_end = self.now + self.settings["round_seconds"]

    def _apply(self) -> None:
        decision = self.decision
        self.decision = None
        self.round_end = None
        if decision.withheld and self.now == self._instant:
            self._instant_followups += 1
            if self._instant_followups >= INSTANT_FOLLOWUPS:
                # rounds of 0 s and follow-ups that go on and on: the clock would never move on; the
                # leader's assignment stands as given, handed over at once
                decision.active_slot, decision.active_thread = decision.wanted
                decision.withheld = 0
                self.records[decision.cause].cycling = True
        else:
            self._instant, self._instant_followups = self.now, 0
        self._deliver(decision, settled=False)
        record = self.records[decision.cause]
        if self.racks is not None:
            record.cross_rack_tasks = self.cross_rack_tasks()
        if decision.withheld:
            self._ask(decision.cause, "followup")
            self.probe_at = None
        elif decision.probing:
            self.probe_at = self._computed_at + self.settings["probing_rebalance_interval_ms"] / 1000.0
            self.probe_record = decision.cause
        else:
            self.probe_at = None
        if self.request is None and self.probe_at is None:
            record.settle_seconds = self.now - record.at
        else:
            record.settle_seconds = None

    def _decide(self, record: int, kind: str) -> _Decision:
        """The leader's assignment from the subscriptions as they are now."""
        self._clean_up_state()
        self._computed_at = self.now
        members = [s for s in self.join_order if self.up[s]]
        reported = self._reported(members)
        answer = None
        key = None
        if self.assignor == "sticky":
            # Kafka Streams' sticky assignor reads no lag values, only which tasks each consumer owns and
            # reports, and their order by lag: the same of those is the same answer
            key = self._signature(members, reported)
            answer = self._memo.get(key)
            if kind != "followup":
                self._chain = {key}
            elif key in self._chain:
                self.records[record].cycling = True  # a follow-up met an input it met before: a cycle
            else:
                self._chain.add(key)
        if answer is None:
            answer = self._ask_leader(record, members, reported)
            if key is not None:
                self._memo[key] = answer
        if self.on_rebalance is not None:
            self.on_rebalance()
        decision = _Decision(record, kind, members, len(self.task_names))
        decided = answer.decided_slot
        before = self.decided
        moved = int(np.count_nonzero((before >= 0) & (decided >= 0) & (before != decided)))
        self.decided = decided
        target = self.records[record]
        target.rebalances += 1
        target.moved += moved
        if kind == "probing":
            target.probing += 1
        elif kind == "followup":
            target.followups += 1
        decision.probing = answer.probing
        self._hand_over(decision, answer)
        return decision

    def _ask_leader(self, record: int, members: list[int], reported) -> _Answer:
        scenario, member_of = self._scenario(members, reported)
        try:
            # the assignor's numbers, not its document: the scenario numbers tasks as this engine does
            _, split, probing = decide_streams_classic(self.assignor, scenario, self.release)
        except KassignError as err:
            where = self.records[record]
            raise KassignError(f"{self.strategy} at {self.now:g} s (after {where.description}): {err}") from None
        n_tasks = len(self.task_names)
        decided_slot = np.full(n_tasks, -1, dtype=np.int64)
        decided_thread = np.full(n_tasks, -1, dtype=np.int64)
        actives, active_slots, active_threads, slots, tasks, threads = [], [], [], [], [], []
        shares = sorted((client.consumers[mi].member_id, share)
                        for client, per_consumer in zip(scenario.clients, split) for mi, share in per_consumer.items())
        for member_id, share in shares:  # the answer's order: by member id
            s, k = member_of[member_id]
            actives += share.active
            active_slots += [s] * len(share.active)
            active_threads += [k] * len(share.active)
            slots += [s] * len(share.standby)
            tasks += share.standby
            threads += [k] * len(share.standby)
        decided_slot[actives] = active_slots  # a task is active on one consumer at most
        decided_thread[actives] = active_threads
        standby = (np.array(slots, dtype=np.int64), np.array(tasks, dtype=np.int64), np.array(threads, dtype=np.int64))
        return _Answer(decided_slot, decided_thread, standby, bool(probing))

    def _hand_over(self, decision: _Decision, answer: _Answer) -> None:
        """What the leader sends this round. Cooperative rebalancing: a task another consumer owns is
        revoked first and handed over in a follow-up rebalance; meanwhile its receiver keeps it as a
        standby if its instance had state for it. Warm-ups are marked for the charts and counts."""
        slot, thread = answer.decided_slot, answer.decided_thread
        owner = self.active
        owner_thread = np.where(owner >= 0, self.thread[np.maximum(owner, 0), np.arange(len(owner))], -1)
        held = (slot >= 0) & (owner >= 0) & ((owner != slot) | (owner_thread != thread))
        decision.withheld = int(np.count_nonzero(held))
        decision.wanted = (slot, thread)
        decision.active_slot = np.where(held, -1, slot)
        decision.active_thread = np.where(held, -1, thread)
        sb_slots, sb_tasks, sb_threads = answer.standby
        warm = self._warmups(answer.standby, decision.cause)
        if decision.withheld:
            # Kafka's "previously owned standby": the instance reported state for it and did not run it
            tasks = np.flatnonzero(held & self.is_stateful)
            slots = slot[tasks]
            keep = (self.pos[slots, tasks] >= 0) & (self.role[slots, tasks] != ACTIVE)
            sb_slots = np.concatenate([sb_slots, slots[keep]])
            sb_tasks = np.concatenate([sb_tasks, tasks[keep]])
            sb_threads = np.concatenate([sb_threads, thread[tasks[keep]]])
            warm = np.concatenate([warm, np.zeros(int(keep.sum()), dtype=bool)])
        decision.standby = (sb_slots, sb_tasks, sb_threads)
        decision.warm = warm

    def _warmups(self, standby, record: int) -> np.ndarray:
        """Kafka hands warm-ups out as standbys: the ones beyond num_standby_replicas, on instances not
        caught up (the most lagging first), are the warm-ups."""
        slots, tasks, _ = standby
        warm = np.zeros(len(tasks), dtype=bool)
        wanted = int(self.settings["num_standby_replicas"])
        counts = np.bincount(tasks, minlength=len(self.task_names)) if len(tasks) else None
        if counts is None or not (counts > wanted).any():
            return warm
        bound = self.settings["acceptable_recovery_lag"]
        extra = counts[tasks] > wanted
        pos = self.pos[slots, tasks]
        lag = np.floor(self.end[tasks]) - np.where(pos >= 0, np.floor(pos), 0.0)
        behind = np.where(lag > bound, lag, -1.0)
        order = np.lexsort((-behind, tasks))  # per task, the most lagging first
        rank = np.empty(len(tasks), dtype=np.int64)
        first = np.searchsorted(tasks[order], tasks[order])
        rank[order] = np.arange(len(order)) - first
        warm = extra & (rank < counts[tasks] - wanted)
        created = warm & ~self.warm[slots, tasks]
        self.records[record].warmups += int(created.sum())
        return warm

    def _reported(self, members: list[int]):
        """Every task state the members report, as arrays: member rank, consumer (thread), task,
        offset sum (-2 for an active task that runs), and the active tasks each consumer owns."""
        rank = np.full(len(self.names), -1, dtype=np.int64)
        rank[members] = np.arange(len(members))
        on_disk = (self.pos >= 0) & (rank >= 0)[:, None] & self.is_stateful[None, :]
        si, ti = np.nonzero(on_disk)
        value = np.floor(self.pos[si, ti]).astype(np.int64)
        value[(self.active[ti] == si) & self.running[ti]] = LATEST_OFFSET
        thread = np.maximum(self.thread[si, ti], 0)  # a closed task's directory: the first thread locks it
        owned = np.flatnonzero(self.active >= 0)
        owner = self.active[owned]
        return rank, si, ti, value, thread, owned, owner, self.thread[owner, owned]

    def _signature(self, members: list[int], reported) -> bytes:
        rank, si, ti, value, thread, owned, owner, owner_thread = reported
        ends = np.floor(self.end[ti]).astype(np.int64)
        lag = np.where(value == LATEST_OFFSET, LATEST_OFFSET, np.where(value > ends, ends, ends - value))
        order = np.lexsort((ti, lag, thread, rank[si]))
        parts = [np.array([len(members)], dtype=np.int64), np.array(members, dtype=np.int64),
                 np.array([self.joins[s] * 1_000_003 + self.incarnation[s] for s in members], dtype=np.int64),
                 rank[si][order], thread[order], ti[order], (value[order] == LATEST_OFFSET).astype(np.int64),
                 np.array([-1], dtype=np.int64), rank[owner], owner_thread, owned]
        return b"".join(p.tobytes() for p in parts)

    def _scenario(self, members: list[int], reported) -> tuple[StreamsClassicScenario, dict[str, tuple[int, int]]]:
        """The assignor's scenario (a Kafka Streams application's) as the members' subscriptions give it, built directly
        (every field is valid by construction, so the document's checks are skipped)."""
        rank, si, ti, value, thread, owned, owner, owner_thread = reported
        app = self.timeline.application
        member_of, clients_in_order, subscription_order = self._layout(members)
        consumers = [[Consumer(m, [], {}, self.plans[s].rack) for m in self._member_ids(s)] for s in members]
        for r, k, t, v in zip(rank[si].tolist(), thread.tolist(), ti.tolist(), value.tolist()):
            consumers[r][k].offset_sums[t] = v
        # a stateless task reports no offset sum (Kafka's TaskManager skips a task without changelogs; Kafka 3.0's
        # split over threads would fail on one)
        for r, k, t in zip(rank[owner].tolist(), owner_thread.tolist(), owned.tolist()):
            consumers[r][k].owned.append(t)
        client_list = [Client(pid, order_key, hash_code, dict(tags), consumers[r])
                       for r, pid, order_key, hash_code, tags in clients_in_order]
        ends = np.floor(self.end).astype(np.int64)
        scenario = StreamsClassicScenario(
            tasks=list(app.tasks),
            stateful=self.is_stateful.tolist(),
            end_offset_sums=np.where(self.is_stateful, ends, 0).tolist(),
            clients=client_list,
            num_standby_replicas=int(self.settings["num_standby_replicas"]),
            max_warmup_replicas=int(self.settings["max_warmup_replicas"]),
            acceptable_recovery_lag=min(int(self.settings["acceptable_recovery_lag"]), JAVA_LONG_MAX),
            probing_rebalance_interval_ms=int(self.settings["probing_rebalance_interval_ms"]),
            rack_aware_assignment_tags=list(self.settings["rack_aware_assignment_tags"]),
            subscription_order=list(subscription_order),
            rack_aware_assignment_strategy=self.settings["rack_aware_assignment_strategy"],
            rack_aware_assignment_traffic_cost=self.settings["rack_aware_assignment_traffic_cost"],
            rack_aware_assignment_non_overlap_cost=self.settings["rack_aware_assignment_non_overlap_cost"],
            source_topics=app.source_topics,
            changelog_topics=app.changelog_topics,
            partition_racks=app.partition_racks,
        )
        return scenario, member_of

    def _layout(self, members: list[int]) -> tuple:
        """What the scenario takes from the membership alone, worked out once per membership (the
        members' ids name it: a new join or a new incarnation gives new ids): member id -> (instance,
        thread); the clients in UUID order, each (rank among the members, process id, UUID order key,
        hash code, tags); and the subscriptions in the leader's HashMap order, as (client, consumer)."""
        ids = tuple(m for s in members for m in self._member_ids(s))
        layout = self._layouts.get(ids)
        if layout is None:
            member_of = {m: (s, k) for s in members for k, m in enumerate(self._member_ids(s))}
            clients = sorted(((r, self.process_ids[s], *self._client_key(self.process_ids[s]), self.plans[s].tags)
                              for r, s in enumerate(members)), key=lambda c: c[2])
            where = {m: (ci, k) for ci, client in enumerate(clients)
                     for k, m in enumerate(self._member_ids(members[client[0]]))}
            order = tuple(where[m] for m in java_string_hash_order(ids))
            layout = self._layouts[ids] = (member_of, clients, order)
        return layout

    def _member_ids(self, s: int) -> list[str]:
        """Each stream thread's consumer, named as Kafka names a dynamic member: its client id
        (process id, thread) and a suffix new at every join."""
        key = (s, self.joins[s], self.incarnation[s])
        ids = self._ids.get(key)
        if ids is None:
            pid = self.process_ids[s]
            ids = self._ids[key] = [f"{pid}-StreamThread-{k + 1}-consumer-{self.joins[s]:04d}"
                                    for k in range(self.plans[s].threads)]
        return ids

    def _client_key(self, process_id: str) -> tuple[tuple[int, int], int]:
        """``java.util.UUID``'s order (both halves as signed longs) and Kafka's hash of a process id."""
        known = self._client_keys.get(process_id)
        if known is None:
            value = uuid.UUID(process_id).int
            most, least = value >> 64, value & ((1 << 64) - 1)
            signed = (most - (1 << 64) if most >> 63 else most, least - (1 << 64) if least >> 63 else least)
            known = self._client_keys[process_id] = (signed, java_uuid_hash(most, least))
        return known

    def _clean_up_state(self) -> None:
        """The state cleaner deletes task directories unassigned for state_cleanup_delay_ms (counted from
        the instance's start at the earliest: its cleaner first runs that long after it starts)."""
        delay = self.settings["state_cleanup_delay_ms"] / 1000.0
        since = np.maximum(self.idle_since, self.started_at[:, None])
        stale = (self.pos >= 0) & (self.role == NONE) & self.up[:, None] & (self.now - since >= delay)
        if stale.any():
            self.pos[stale] = -1.0

    def _deliver(self, decision: _Decision, settled: bool) -> None:
        """The assignment takes effect: revocations, new actives, standbys and warm-ups."""
        record = decision.cause
        live = np.zeros(len(self.names), dtype=bool)
        live[decision.slots] = True
        live &= self.up
        n_tasks = len(self.task_names)
        tasks_all = np.arange(n_tasks)
        delivered = (decision.active_slot >= 0) & live[np.maximum(decision.active_slot, 0)]
        new_slot = np.where(delivered, decision.active_slot, -1)
        new_thread = np.where(delivered, decision.active_thread, -1)
        current = self.active
        current_thread = np.where(current >= 0, self.thread[np.maximum(current, 0), tasks_all], -1)
        changed = (current != new_slot) | (current_thread != new_thread)
        # revoke what moves (the old owner's state stays on disk)
        leaving = np.flatnonzero(changed & (current >= 0))
        if len(leaving):
            old = current[leaving]
            self._end_actives(leaving, record)
            self.thread[old, leaving] = -1
        # standbys: drop the ones not given again, add the new ones
        sb_slots, sb_tasks, sb_threads = decision.standby
        given = live[sb_slots] if len(sb_slots) else np.zeros(0, dtype=bool)
        sb_slots, sb_tasks, sb_threads, warm = sb_slots[given], sb_tasks[given], sb_threads[given], decision.warm[given]
        keep = np.zeros(self.role.shape, dtype=bool)
        keep[sb_slots, sb_tasks] = True
        dropped = (self.role == STANDBY) & ~keep
        if dropped.any():
            self.idle_since[dropped] = self.now
            self.thread[dropped] = -1
            self.boot[dropped] = False
            self.role[dropped] = NONE
        fresh = keep & (self.role != STANDBY)
        self.thread[sb_slots, sb_tasks] = sb_threads
        if fresh.any():
            fs, ft = np.nonzero(fresh)
            no_state = self.pos[fs, ft] < 0
            self.pos[fs[no_state], ft[no_state]] = 0.0
            if settled:
                self.pos[fs, ft] = self.end[ft]
            self.role[fs, ft] = STANDBY
            self.cause[fs, ft] = record
            self.boot[fs, ft] = self.pos[fs, ft] < self.end[ft]
        self.warm[:] = False
        self.warm[sb_slots[warm], sb_tasks[warm]] = True
        # new actives
        arriving = np.flatnonzero(changed & (new_slot >= 0))
        if len(arriving):
            slots = new_slot[arriving]
            self.role[slots, arriving] = ACTIVE
            self.thread[slots, arriving] = new_thread[arriving]
            self.warm[slots, arriving] = False
            self.boot[slots, arriving] = False
            self.active[arriving] = slots
            stateful = self.is_stateful[arriving]
            fresh_state = stateful & (self.pos[slots, arriving] < 0)
            self.pos[slots[fresh_state], arriving[fresh_state]] = 0.0
            if settled:
                self.pos[slots[stateful], arriving[stateful]] = self.end[arriving[stateful]]
            self.cause[slots, arriving] = record
            caught_up = ~stateful | (self.pos[slots, arriving] >= self.end[arriving])
            self.running[arriving] = caught_up
            self._end_outages(arriving[caught_up & stateful], self.now)
            waiting = arriving[stateful & ~caught_up]
            starting = waiting[self.outage_record[waiting] < 0]
            self.outage_record[starting] = record
            self.outage_start[starting] = self.now
        self._reshow()

    # -- time passing ---------------------------------------------------------------------------

    def _advance(self, to: float) -> None:
        dt = to - self.now
        if dt <= 0:
            return
        if (self.request is not None or self.round_end is not None or self.probe_at is not None
                or (self.ghost != math.inf).any()):
            self.unsettled += dt  # a rebalance is running or bound to come (a session that will time out too)
        if self.racks is not None:
            self.cross_rack_seconds += self.cross_rack_tasks() * dt
        st = self.st
        if not len(st):
            self.now = to
            return
        end0 = self.end[st]
        speed = self.speed[st]
        growth = self.growth[st]
        active = self.active[st]
        has = active >= 0
        running = self.running[st]
        # when each task runs: 0 if it does, its restoring time if an active restores, never otherwise
        tau = np.full(len(st), math.inf)
        tau[running] = 0.0
        restoring = has & ~running
        r_tasks = st[restoring]
        r_slots = active[restoring]
        r_pos = self.pos[r_slots, r_tasks]
        tau[restoring] = (end0[restoring] - r_pos) / speed[restoring]
        tau_c = np.minimum(tau, dt)
        end1 = end0 + growth * (dt - tau_c)
        # outages: every task not running at the start is dark until tau (or all along)
        dark = ~running
        if dark.any():
            self._charge_outages(st[dark], tau_c[dark])
        # restoring actives
        if len(r_tasks):
            read = np.minimum(speed[restoring] * dt, end0[restoring] - r_pos)
            done = tau[restoring] <= dt
            new_pos = np.where(done, end1[restoring], r_pos + read)
            self.pos[r_slots, r_tasks] = new_pos
            self._charge_reading(r_slots, r_tasks, read)
            finished = r_tasks[done]
            if len(finished):
                at = self.now + tau[restoring][done]
                self.running[finished] = True
                self._end_outages(finished, at)
                self._show_at(r_slots[done], finished, at, 1)
        # running actives follow their own changelog
        run_tasks = st[running]
        if len(run_tasks):
            self.pos[active[running], run_tasks] = end1[running]
        # standbys and warm-ups
        s_idx, t_idx = np.nonzero(self.role[:, st] == STANDBY)
        if len(s_idx):
            tasks = st[t_idx]
            p0 = self.pos[s_idx, tasks]
            v = speed[t_idx]
            g = growth[t_idx]
            e0, e1, tc = end0[t_idx], end1[t_idx], tau_c[t_idx]
            p1 = np.minimum(np.minimum(p0 + v * dt, e0 + v * (dt - tc)), e1)
            self.pos[s_idx, tasks] = p1
            booting = self.boot[s_idx, tasks]
            if booting.any():
                b = booting
                # the first moment a booting replica catches up, and what it read until then
                before_growth = p0[b] + v[b] * tc[b] >= e0[b]
                gap = e0[b] - p0[b] - v[b] * tc[b]
                faster = v[b] > g[b]
                with np.errstate(divide="ignore", invalid="ignore"):
                    later = np.where(faster, tc[b] + gap / np.where(faster, v[b] - g[b], 1.0), math.inf)
                caught = before_growth | (later <= dt)
                upto = np.where(before_growth, e0[b], e0[b] + g[b] * (np.minimum(later, dt) - tc[b]))
                read = np.where(caught, upto - p0[b], p1[b] - p0[b])
                self._charge_reading(s_idx[b], tasks[b], read)
                done = np.flatnonzero(b)[caught]
                self.boot[s_idx[done], tasks[done]] = False
        self.end[st] = end1
        self.now = to

    def _charge_outages(self, tasks: np.ndarray, seconds: np.ndarray) -> None:
        records = self.outage_record[tasks]
        for t, r, sec in zip(tasks.tolist(), records.tolist(), seconds.tolist()):
            if r >= 0 and sec > 0:
                self.records[r].add_outage(t, sec)

    def _charge_reading(self, slots: np.ndarray, tasks: np.ndarray, records_read: np.ndarray) -> None:
        if not len(tasks):
            return
        amounts = records_read * self.record_bytes[tasks]
        causes = self.cause[slots, tasks]
        sums = np.bincount(causes, weights=amounts, minlength=len(self.records))
        for r in np.flatnonzero(sums).tolist():
            self.records[r].restored_bytes += float(sums[r])

    def _end_outages(self, tasks: np.ndarray, at) -> None:
        if not len(tasks):
            return
        at = np.broadcast_to(np.asarray(at, dtype=float), tasks.shape)
        for t, when in zip(tasks.tolist(), at.tolist()):
            record = int(self.outage_record[t])
            if record >= 0:
                if when > self.outage_start[t]:
                    self.outages.append(Outage(t, float(self.outage_start[t]), when, record))
                self.outage_record[t] = -1

    def _finish(self) -> None:
        for t in np.flatnonzero(self.outage_record >= 0).tolist():
            record = int(self.outage_record[t])
            self.records[record].still_unavailable += 1
            self.outages.append(Outage(t, float(self.outage_start[t]), self.now, record))
        self.outage_record[:] = -1
        self._close_view()

    # -- the charts' view -------------------------------------------------------------------------

    def _view(self) -> np.ndarray:
        view = np.zeros(self.role.shape, dtype=np.int8)
        view[self.role == STANDBY] = 4
        view[(self.role == STANDBY) & self.warm] = 3
        actives = np.flatnonzero(self.active >= 0)
        slots = self.active[actives]
        view[slots, actives] = np.where(self.running[actives], 1, 2)
        view[:, ~self.is_stateful] = 0
        return view

    def _reshow(self) -> None:
        if not self.keep_segments:
            return
        view = self._view()
        changed = np.nonzero(view != self.shown)
        self._close(changed, self.now)
        self.shown[changed] = view[changed]
        self.shown_since[changed] = self.now

    def _show_at(self, slots: np.ndarray, tasks: np.ndarray, at: np.ndarray, state: int) -> None:
        if not self.keep_segments:
            return
        self._close((slots, tasks), at)
        self.shown[slots, tasks] = state
        self.shown_since[slots, tasks] = at

    def _close(self, where: tuple[np.ndarray, np.ndarray], at) -> None:
        slots, tasks = where
        if not len(slots):
            return
        ends = np.broadcast_to(np.asarray(at, dtype=float), slots.shape)
        states = self.shown[slots, tasks]
        starts = self.shown_since[slots, tasks]
        for s, t, state, start, stop in zip(slots.tolist(), tasks.tolist(), states.tolist(), starts.tolist(),
                                            ends.tolist()):
            if state and stop > start:
                self.segments.append(Segment(t, self.names[s], SHOWN[state], start, stop))

    def _close_view(self) -> None:
        self._close(np.nonzero(self.shown), self.now)
        self.shown[:] = 0


def simulate_streams(timeline: StreamsTimeline, strategy: str, kafka_version: str = DEFAULT_KAFKA_VERSION,
                     on_rebalance: Callable[[], None] | None = None, segments: bool = True) -> StreamsRun:
    """Play ``timeline`` with one Kafka Streams task assignor (``high-availability``, ``sticky`` or
    kassign's ``optimal``, optionally ``NAME:standbys=N``) as Kafka ``kafka_version``'s group leader would. ``segments``:
    keep every replica's states over time (for the per-task charts)."""
    return StreamsTimelineRun(timeline, strategy, kafka_version, on_rebalance, segments).run()
