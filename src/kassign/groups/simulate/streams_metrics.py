"""What a Kafka Streams timeline cost, event by event and in all, and the summary in words.

Each scenario event (and the timeline's start) is one :class:`StreamsEventRecord`; everything an
event sets off is charged to it: the rebalances it causes (a crash's at its session timeout, a
restart's two, the follow-up rebalances that hand over revoked tasks, the probing rebalances that
move tasks through warm-ups), the tasks those move, the state they restore, and every outage
they start, whenever it ends. Definitions:

- rebalances: rebalances charged to the event; ``probing`` of them were probing rebalances
  (``probing.rebalance.interval.ms`` after an assignment that asked for one) and ``followups``
  the immediate ones that hand a revoked task to its new owner.
- moved: active tasks the group leader gave to another instance than in the assignment before.
- warmups: warm-up replicas the high-availability assignor created (Kafka hands them out as
  standbys: kassign counts a standby beyond ``num_standby_replicas`` on an instance that is not
  caught up as one).
- restored bytes: changelog bytes read into local state stores: by active tasks restoring and by
  standbys and warm-ups until they first catch up (a standby that is caught up and keeps
  following its changelog is not restoring).
- unavailability: for each stateful task, the time from the moment its active task stops (a
  crash, a shutdown, a revocation) until a new active task runs: restored and caught up. An
  outage is charged to the event that started it; ``unavailable_tasks`` counts the stateful
  tasks with an outage, ``unavailable_seconds`` the longest of them (summed over the task's
  outages), ``unavailable_task_seconds`` all of them added up.
- settle seconds: from the event until the assignment it led to asked for no further rebalance
  (``None`` when another event came first).
- cross-rack tasks (where the application gives ``partition_racks``): active tasks whose instance
  has a rack (``client.rack``) and reads one of the task's source partitions from another rack: no
  replica of it sits in the instance's rack (a consumer fetches from a replica in its own rack
  where there is one). Per event, as the event's last assignment left them (``None``: it led to no
  rebalance); in total, their mean over the timeline, weighted by time. Instances without a rack
  do not count; standbys and changelog writes do not either.

Totals add the events up; ``unsettled_seconds`` is how long, over the whole timeline, a further
rebalance was pending or running.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kassign.core.units import human_bytes, human_seconds


@dataclass
class StreamsEventRecord:
    index: int  # 0: the start of the timeline; then one per scenario event, in time order
    at: float
    kind: str  # initial (the start of the timeline), start, stop, crash, restart, scale_out, scale_in
    description: str
    instances: tuple[str, ...] = ()
    rebalances: int = 0
    probing: int = 0
    followups: int = 0
    moved: int = 0
    warmups: int = 0
    restored_bytes: float = 0.0
    unavailable_task_seconds: float = 0.0
    unavailable_seconds: float = 0.0
    unavailable_tasks: int = 0
    settle_seconds: float | None = 0.0
    still_unavailable: int = 0  # outages still running when the timeline ended
    cycling: bool = False  # follow-up rebalances came back to an input they had met: tasks went back and forth
    cross_rack_tasks: int | None = None  # after the event's last assignment (racks modelled only)
    per_task: dict[int, float] = field(default_factory=dict, repr=False)  # task -> seconds without an active

    def add_outage(self, task: int, seconds: float) -> None:
        total = self.per_task.get(task, 0.0) + seconds
        self.per_task[task] = total
        self.unavailable_task_seconds += seconds
        self.unavailable_tasks = len(self.per_task)
        if total > self.unavailable_seconds:
            self.unavailable_seconds = total

    def to_json(self, task_name=None, racks: bool = False) -> dict[str, Any]:
        doc = {
            "index": self.index, "at": self.at, "kind": self.kind, "description": self.description,
            "instances": list(self.instances), "rebalances": self.rebalances, "probing_rebalances": self.probing,
            "followup_rebalances": self.followups, "moved": self.moved, "warmups": self.warmups,
            "restored_bytes": int(round(self.restored_bytes)),
            "unavailable_tasks": self.unavailable_tasks,
            "unavailable_seconds": round(self.unavailable_seconds, 6),
            "unavailable_task_seconds": round(self.unavailable_task_seconds, 6),
            "settle_seconds": None if self.settle_seconds is None else round(self.settle_seconds, 6),
            "still_unavailable": self.still_unavailable,
            "cycling": self.cycling,
        }
        if racks:
            doc["cross_rack_tasks"] = self.cross_rack_tasks
        if task_name is not None:
            doc["unavailable_per_task"] = {task_name(t): round(s, 6) for t, s in sorted(self.per_task.items())}
        return doc


@dataclass
class Segment:
    """One replica's state over a stretch of time, for the per-task timeline charts."""

    task: int
    instance: str
    state: str  # active, restoring, warm-up, standby
    start: float
    end: float


@dataclass
class Outage:
    task: int
    start: float
    end: float
    record: int


@dataclass
class StreamsRun:
    """One strategy played over one timeline."""

    strategy: str
    kafka_version: str
    records: list[StreamsEventRecord]
    end: float  # where the clock stopped
    unsettled_seconds: float = 0.0
    elapsed_seconds: float = 0.0
    segments: list[Segment] = field(default_factory=list, repr=False)
    outages: list[Outage] = field(default_factory=list, repr=False)
    task_names: list[str] = field(default_factory=list, repr=False)
    stateful: list[bool] = field(default_factory=list, repr=False)
    num_standby_replicas: int = 0
    capped: bool = False  # the clock stopped at the safety cap before the group settled
    cross_rack_task_seconds: float | None = None  # None: the timeline gives no partition racks
    rack_strategy: str | None = None  # the rack-aware strategy played ("ignored" for optimal)

    @property
    def racks_modelled(self) -> bool:
        return self.cross_rack_task_seconds is not None

    def cross_rack_mean(self) -> float:
        """Cross-rack active tasks, on average over the timeline."""
        return self.cross_rack_task_seconds / self.end if self.end > 0 else float(self.records[0].cross_rack_tasks or 0)

    def totals(self) -> dict[str, Any]:
        records = self.records
        per_task: Counter = Counter()
        for record in records:
            per_task.update(record.per_task)
        racks = {"cross_rack_tasks_mean": round(self.cross_rack_mean(), 6)} if self.racks_modelled else {}
        return {
            "rebalances": sum(r.rebalances for r in records),
            "probing_rebalances": sum(r.probing for r in records),
            "followup_rebalances": sum(r.followups for r in records),
            "moved": sum(r.moved for r in records),
            "warmups": sum(r.warmups for r in records),
            "restored_bytes": int(round(sum(r.restored_bytes for r in records))),
            "unavailable_tasks": len(per_task),
            "unavailable_seconds": round(max(per_task.values(), default=0.0), 6),
            "unavailable_task_seconds": round(sum(r.unavailable_task_seconds for r in records), 6),
            "unsettled_seconds": round(self.unsettled_seconds, 6),
            **racks,
        }

    def to_json(self) -> dict[str, Any]:
        name = self.task_names.__getitem__ if self.task_names else None
        return {
            "strategy": self.strategy,
            "kafka_version": self.kafka_version,
            "num_standby_replicas": self.num_standby_replicas,
            "end_seconds": round(self.end, 6),
            "capped": self.capped,
            "totals": self.totals(),
            **({"rack_aware_assignment_strategy": self.rack_strategy} if self.racks_modelled else {}),
            "events": [r.to_json(name, self.racks_modelled) for r in self.records],
            "elapsed_seconds": round(self.elapsed_seconds, 4),
        }


# One sentence per metric, for the tables' readers and the HTML report.
METRIC_MEANINGS = {
    "rebalances": "rebalances the event caused, probing and follow-up ones included",
    "probing_rebalances": "probing rebalances: the leader asked for one to see whether warm-ups had caught up",
    "followup_rebalances": "immediate rebalances that hand a revoked active task to its new owner",
    "moved": "active tasks the leader gave to another instance than before",
    "warmups": "warm-up replicas created to move a task to an instance without its state",
    "restored_bytes": "changelog bytes read into state stores by restoring tasks, new standbys and warm-ups",
    "unavailable_tasks": "stateful tasks that were without a running active task for a while",
    "unavailable_seconds": "the longest time one stateful task had no running active task (restored, caught up)",
    "unavailable_task_seconds": "those times added up over all stateful tasks",
    "unsettled_seconds": "time a further rebalance (probing or follow-up) was pending or running",
    "settle_seconds": "from the event until the assignment asked for no further rebalance",
    "cross_rack_tasks": "active tasks reading a source partition with no replica in their instance's rack "
                        "(per event: after its last assignment; in total: the mean over time)",
}

_KIND_WORDS = {"restart": ("an instance restart", "instance restarts"), "crash": ("a crash", "crashes"),
               "stop": ("a graceful stop", "graceful stops"), "start": ("an instance start", "instance starts"),
               "scale_out": ("a scale-out", "scale-outs"), "scale_in": ("a scale-in", "scale-ins")}


def _tasks(n: int) -> str:
    return f"{n:,} stateful task" + ("" if n == 1 else "s")


_NUMBERS = {1: "one", 2: "two", 3: "three"}


def strategy_label(strategy: str) -> str:
    """``high-availability:standbys=1`` as a sentence says it: ``high-availability with one standby``;
    ``sticky:rack=none``: ``sticky without rack-aware assignment``."""
    name, *options = strategy.split(":")
    said = []
    for option in options:
        key, _, value = option.partition("=")
        if key == "standbys":
            n = int(value)
            said.append("without standbys" if n == 0
                        else f"with {_NUMBERS.get(n, str(n))} standby" + ("" if n == 1 else "s"))
        elif key == "rack":
            said.append("without rack-aware assignment" if value == "none" else f"with rack-aware {value}")
    return " and ".join([f"{name} {said[0]}", *said[1:]]) if said else name


def _run_label(run: StreamsRun) -> str:
    return strategy_label(run.strategy)


def cost_phrase(records: list[StreamsEventRecord]) -> str:
    """``4 min 10 s of unavailability on 12 stateful tasks``, for one event or the mean of several."""
    if not records:
        return "nothing"
    worst = max(r.unavailable_seconds for r in records)
    tasks = sum(r.unavailable_tasks for r in records) / len(records)
    if worst == 0:
        return "0 s of unavailability"
    mean_worst = sum(r.unavailable_seconds for r in records) / len(records)
    tasks_text = _tasks(round(tasks)) if len(records) == 1 or tasks.is_integer() else f"{tasks:,.1f} stateful tasks"
    if len(records) == 1:
        return f"{human_seconds(worst)} of unavailability on {tasks_text}"
    return f"{human_seconds(mean_worst)} of unavailability on {tasks_text} (the worst {human_seconds(worst)})"


def summary_sentences(runs: list[StreamsRun]) -> list[str]:
    """The terminal's summary in words: per kind of event, what it costs under each strategy, e.g.
    "an instance restart costs 4 min 10 s of unavailability on 12 stateful tasks under
    high-availability, 0 s under high-availability:standbys=1"."""
    if not runs:
        return []
    lines = []
    kinds = list(dict.fromkeys(r.kind for r in runs[0].records if r.index > 0))
    for kind in kinds:
        one, many_ = _KIND_WORDS.get(kind, (kind, kind))
        by_run = [(run, [r for r in run.records if r.kind == kind and r.index > 0]) for run in runs]
        count = len(by_run[0][1])
        head = one if count == 1 else f"each of the {count:,} {many_}"
        verb = "costs" if count == 1 else "costs on average"
        parts = []
        for i, (run, records) in enumerate(by_run):
            phrase = cost_phrase(records)
            if i and phrase.startswith("0 s"):
                phrase = "0 s"
            parts.append(f"{phrase} under {_run_label(run)}")
        lines.append(f"{head} {verb} " + ", ".join(parts))
    for run in runs:
        t = run.totals()
        settle = [r.settle_seconds for r in run.records if r.index > 0 and r.settle_seconds is not None]
        settled = f"; the assignment settles at most {human_seconds(max(settle))} after an event" if settle else ""
        racks = (f", {t['cross_rack_tasks_mean']:,.1f} of {len(run.task_names):,} tasks reading across racks on "
                 "average" if run.racks_modelled else "")
        lines.append(f"{_run_label(run)}: {t['rebalances']:,} rebalances ({t['probing_rebalances']:,} probing), "
                     f"{t['moved']:,} active tasks moved, {human_bytes(t['restored_bytes'])} restored, "
                     f"{human_seconds(t['unavailable_task_seconds'])} of task unavailability in all{racks}{settled}")
    ignored = [_run_label(run) for run in runs if run.rack_strategy == "ignored"]
    played = {run.rack_strategy for run in runs if run.rack_strategy not in (None, "ignored", "none")}
    if ignored and played:
        lines.append(f"{' and '.join(ignored)} ignore{'s' if len(ignored) == 1 else ''} rack-aware assignment "
                     f"({', '.join(sorted(played))}): kassign's optimal places tasks without looking at racks")
    return lines
