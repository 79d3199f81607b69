"""The order in which a plan's moves are carried out: batches that respect a per-broker concurrency and every
broker's disk limit at every moment.

A *move* is one partition going from its current replica list to its target list. It *adds* the brokers of the
target that do not hold it and *removes* those of the current list that the target leaves out; it *touches* both.
While it runs, the new replicas are being copied and the old ones are still there, so it counts on both sides:
``size`` bytes more on every adding broker from its start, ``size`` bytes less on every removing broker only once
it is done. A move whose replica set does not change (only its order, for the leader) touches no broker and
copies nothing: it goes into the first batch.

Rules, for ``concurrency`` c and per broker a disk ``used`` (bytes now) and ``limit`` (bytes it may hold; a broker
already above it may stay there, never go higher: its limit is then its bytes now):

1. each batch holds at most c moves touching any one broker (moves in and out counted together);
2. at the start of batch k every move of batches 1..k-1 is done, and for every broker
   ``used + sum(size of moves done onto it) - sum(size of moves done off it) + sum(size of batch k's moves onto
   it) <= limit``: the disk is never above its limit at any moment of the batch, whatever finishes first;
3. the largest moves are spread: the moves, largest first, are dealt over the batches in a snake (1, 2, ... B,
   B, ... 2, 1, 1, 2, ...) where B is the least number of batches rule 1 allows (the busiest broker's touches
   divided by c, rounded up), each going to the first batch from its turn on where its brokers have room, so every
   batch carries a similar share of the bytes and of each broker's moves;
4. where disk is tight, a batch first takes the moves that free space on a broker whose remaining incoming moves
   do not all fit yet, and a move that does not fit waits for a later batch. If no remaining move fits at all, the
   moves are ordered one at a time instead: up to 12 moves, every order is searched; more, the smallest move that
   fits goes next. Where that finds no order, one line names the broker and the move that would take it over
   (for up to 12 moves: no order exists).

Worked example: concurrency 1, brokers 1 and 2 with a 100-byte limit, broker 1 holding 90 bytes; move a (60 bytes)
takes t-0 [2] -> [1], move b (50 bytes) takes t-1 [1] -> [2]. a alone would put broker 1 at 150; b first frees
50 there (and puts broker 2 at its own bytes + 50), then a fits (40 + 60 = 100): batches ``[[b], [a]]``, and
broker 1's peak is 100.

Everything here is pure (no network): :func:`plan_batches` takes the moves and the disks and returns a
:class:`Schedule`; 10,000 moves over 100 brokers take a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kassign.core.errors import KassignError

EXHAUSTIVE_UP_TO = 12  # moves searched one order at a time when the greedy order finds none


@dataclass(frozen=True)
class Move:
    """One partition's move, with the bytes of one of its replicas. ``adding``, ``removing`` and ``brokers`` (those
    it touches: adding, then removing) are worked out once."""

    topic: str
    partition: int
    current: tuple[int, ...]
    target: tuple[int, ...]
    size: int = 0
    adding: tuple[int, ...] = field(init=False, repr=False, compare=False)
    removing: tuple[int, ...] = field(init=False, repr=False, compare=False)
    brokers: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        current, target = tuple(self.current), tuple(self.target)
        adding = tuple(b for b in target if b not in current)
        removing = tuple(b for b in current if b not in target)
        for name, value in (("current", current), ("target", target), ("adding", adding), ("removing", removing),
                            ("brokers", adding + removing)):
            object.__setattr__(self, name, value)

    @property
    def bytes_to_copy(self) -> int:
        return self.size * len(self.adding)

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class Disk:
    """One broker's disk: bytes on it now and the most it may hold (None: no limit)."""

    used: int
    limit: int | None = None


@dataclass
class Schedule:
    batches: list[list[Move]]
    concurrency: int
    least_batches: int  # the fewest batches rule 1 allows
    peak: dict[int, int] = field(default_factory=dict)  # per broker with a disk: its highest bytes at any moment
    searched: bool = False  # the exhaustive search found the order

    def to_json(self) -> dict[str, Any]:
        return {"concurrency": self.concurrency, "least_batches": self.least_batches,
                "batches": [[m.name for m in batch] for batch in self.batches],
                "peak_bytes": {str(b): v for b, v in sorted(self.peak.items())}}


def moves_between(current: Mapping[tuple[str, int], Sequence[int]], target: Mapping[tuple[str, int], Sequence[int]],
                  sizes: Mapping[tuple[str, int], int] | None = None) -> list[Move]:
    """The moves from ``current`` to ``target`` replica lists ((topic, partition) -> brokers, leader first): every
    partition whose list differs (its set, or only its order); ``sizes``: a replica's bytes (0 where not given)."""
    moves = []
    for key, wanted in target.items():
        now = current.get(key)
        if now is None:
            raise KassignError(f"{key[0]}-{key[1]} is in the plan but not in the current assignment")
        if list(now) != list(wanted):
            moves.append(Move(key[0], key[1], tuple(now), tuple(wanted), int((sizes or {}).get(key, 0))))
    return moves


def _check(moves: Sequence[Move], concurrency: int) -> None:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise KassignError(f"--concurrency must be a whole number of moves, at least 1, got {concurrency!r}")
    seen: set[tuple[str, int]] = set()
    for m in moves:
        if (m.topic, m.partition) in seen:
            raise KassignError(f"{m.name} is moved twice; each partition may appear once")
        seen.add((m.topic, m.partition))
        if m.size < 0:
            raise KassignError(f"{m.name}: a size of {m.size} bytes; sizes are at least 0")
        if len(set(m.target)) != len(m.target):
            raise KassignError(f"{m.name}: target {list(m.target)} lists a broker twice")


def plan_batches(moves: Iterable[Move], concurrency: int = 5, disks: Mapping[int, Disk] | None = None) -> Schedule:
    """Batches for ``moves`` (see the module's rules). Raises :class:`KassignError` (one line) for a concurrency
    below 1 or an order that no search finds within the disk limits."""
    moves = list(moves)
    _check(moves, concurrency)
    disks = dict(disks or {})
    limit = {b: (max(d.limit, d.used) if d.limit is not None else None) for b, d in disks.items()}
    used = {b: d.used for b, d in disks.items()}
    free = [m for m in moves if not m.brokers]
    work = [m for m in moves if m.brokers]
    touches: dict[int, int] = {}
    for m in work:
        for b in m.brokers:
            touches[b] = touches.get(b, 0) + 1
    least = max((-(-t // concurrency) for t in touches.values()), default=1 if free else 0)
    preferred = _deal(work, concurrency, max(least, 1))
    batches = _build(work, preferred, concurrency, used, limit)
    searched = False
    if batches is None:  # one move at a time: every order where there are few, else the smallest that fits first
        exhaustive = len(work) <= EXHAUSTIVE_UP_TO
        order = _search(work, used, limit) if exhaustive else None
        if order is None:
            order, left, state = _sequential(work, used, limit)
            if left:
                raise KassignError(_stuck_line(left, state, limit, exhaustive))
        batches, searched = [[m] for m in order], True
    if free:
        if batches:
            batches[0] = free + batches[0]
        else:
            batches = [free]
    return Schedule(batches, concurrency, least, _peaks(batches, used, limit), searched)


def _deal(work: list[Move], concurrency: int, least: int) -> dict[int, int]:
    """Rule 3: each move's preferred batch (index into ``work`` -> batch)."""
    order = sorted(range(len(work)), key=lambda i: (-work[i].size, work[i].topic, work[i].partition))
    counts: list[dict[int, int]] = [{} for _ in range(least)]
    preferred: dict[int, int] = {}
    for rank, i in enumerate(order):
        lap, turn = divmod(rank, least)
        start = turn if lap % 2 == 0 else least - 1 - turn
        brokers = work[i].brokers
        chosen = None
        for step in range(len(counts)):
            k = (start + step) % len(counts)
            room = counts[k]
            if all(room.get(b, 0) < concurrency for b in brokers):
                chosen = k
                break
        if chosen is None:
            counts.append({})
            chosen = len(counts) - 1
        for b in brokers:
            counts[chosen][b] = counts[chosen].get(b, 0) + 1
        preferred[i] = chosen
    return preferred


def _build(work: list[Move], preferred: dict[int, int], concurrency: int, used: dict[int, int],
           limit: dict[int, int | None]) -> list[list[Move]] | None:
    """Rules 1, 2 and 4: batches in order, each from the moves waiting, or None when no waiting move fits."""
    state = dict(used)
    limited = {b for b, v in limit.items() if v is not None}
    waiting = sorted(range(len(work)), key=lambda i: (preferred[i], -work[i].size))
    # per limited broker: the waiting moves adding to it, largest first (a pointer skips those placed)
    incoming: dict[int, list[int]] = {b: [] for b in limited}
    outgoing: dict[int, list[int]] = {b: [] for b in limited}
    for i, m in enumerate(work):
        for b in m.adding:
            if b in limited:
                incoming[b].append(i)
        for b in m.removing:
            if b in limited:
                outgoing[b].append(i)
    for todo in incoming.values():
        todo.sort(key=lambda i: -work[i].size)
    head = dict.fromkeys(limited, 0)
    placed = [False] * len(work)
    batches: list[list[Move]] = []
    k = 0
    while waiting:
        count: dict[int, int] = {}
        adds: dict[int, int] = {}
        chosen: list[int] = []

        def fits(i: int) -> bool:
            m = work[i]
            if any(count.get(b, 0) >= concurrency for b in m.brokers):
                return False
            for b in m.adding:
                cap = limit.get(b)
                if cap is not None and state.get(b, 0) + adds.get(b, 0) + m.size > cap:
                    return False
            return True

        def take(i: int) -> None:
            m = work[i]
            for b in m.brokers:
                count[b] = count.get(b, 0) + 1
            for b in m.adding:
                adds[b] = adds.get(b, 0) + m.size
            placed[i] = True
            chosen.append(i)

        # rule 4: free space first where a broker's largest waiting incoming move does not fit yet
        for b in sorted(limited):
            todo = incoming[b]
            while head[b] < len(todo) and placed[todo[head[b]]]:
                head[b] += 1
            if head[b] < len(todo) and state.get(b, 0) + work[todo[head[b]]].size > limit[b]:  # type: ignore[operator]
                for i in outgoing[b]:
                    if not placed[i] and fits(i):
                        take(i)
        # then the waiting moves in order: those dealt to this batch or earlier, and the next batch's to fill room
        for i in waiting:
            if preferred[i] > k + 1:
                break
            if not placed[i] and fits(i):
                take(i)
        if not chosen:
            for i in waiting:  # nothing dealt this far fits: any waiting move that does
                if not placed[i] and fits(i):
                    take(i)
        if not chosen:
            return None
        for i in chosen:
            m = work[i]
            for b in m.adding:
                state[b] = state.get(b, 0) + m.size
            for b in m.removing:
                state[b] = state.get(b, 0) - m.size
        batches.append([work[i] for i in chosen])
        waiting = [i for i in waiting if not placed[i]]
        k += 1
    return batches


def _search(work: list[Move], used: dict[int, int], limit: dict[int, int | None]) -> list[Move] | None:
    """One move at a time, every order (depth first, each set of done moves tried once): an order within the
    limits, or None where there is none."""
    failed: set[frozenset[int]] = set()

    def fits(m: Move, state: dict[int, int]) -> bool:
        return all(limit.get(b) is None or state.get(b, 0) + m.size <= limit[b] for b in m.adding)  # type: ignore

    def visit(done: frozenset[int], state: dict[int, int], trail: list[int]) -> list[int] | None:
        if len(done) == len(work):
            return trail
        if done in failed:
            return None
        for i, m in enumerate(work):
            if i in done or not fits(m, state):
                continue
            after = dict(state)
            for b in m.adding:
                after[b] = after.get(b, 0) + m.size
            for b in m.removing:
                after[b] = after.get(b, 0) - m.size
            found = visit(done | {i}, after, trail + [i])
            if found is not None:
                return found
        failed.add(done)
        return None

    order = visit(frozenset(), dict(used), [])
    return None if order is None else [work[i] for i in order]


def _sequential(work: list[Move], used: dict[int, int], limit: dict[int, int | None]) -> tuple[list[Move], list[Move],
                                                                                             dict[int, int]]:
    """One move at a time, smallest first, each that fits as soon as it fits, until none does: (the order, the moves
    left, the disks then)."""
    state = dict(used)
    waiting = sorted(work, key=lambda m: (m.size, m.topic, m.partition))
    order: list[Move] = []
    progress = True
    while progress and waiting:
        progress = False
        for m in list(waiting):
            if all(limit.get(b) is None or state.get(b, 0) + m.size <= limit[b] for b in m.adding):  # type: ignore
                for b in m.adding:
                    state[b] = state.get(b, 0) + m.size
                for b in m.removing:
                    state[b] = state.get(b, 0) - m.size
                waiting.remove(m)
                order.append(m)
                progress = True
    return order, waiting, state


def _stuck_line(waiting: list[Move], state: dict[int, int], limit: dict[int, int | None], searched: bool) -> str:
    """The one line for a plan no order carries out within the disk limits: the broker that blocks the smallest
    move left once every move that fits has been done (one at a time, smallest first)."""
    m = waiting[0]
    broker = next(b for b in m.adding if limit.get(b) is not None
                  and state.get(b, 0) + m.size > limit[b])  # type: ignore[operator]
    cap = limit[broker]
    assert cap is not None
    how = "no order of the moves" if searched else "kassign finds no order of the moves that"
    return (f"{how} keeps broker {broker} within its disk limit ({cap:,} bytes): moving {m.name} "
            f"({m.size:,} bytes) onto it needs {state.get(broker, 0) + m.size - cap:,} bytes more than it has once "
            "every move that frees space there is done; raise the limit or plan fewer moves onto it")


def _peaks(batches: list[list[Move]], used: dict[int, int], limit: dict[int, int | None]) -> dict[int, int]:
    """Per broker with a disk: its highest bytes at any moment (a batch's incoming copies on top of the state
    before it)."""
    state = dict(used)
    peak = dict(used)
    for batch in batches:
        adds: dict[int, int] = {}
        for m in batch:
            for b in m.adding:
                adds[b] = adds.get(b, 0) + m.size
        for b, v in adds.items():
            if b in peak:
                peak[b] = max(peak[b], state.get(b, 0) + v)
        for m in batch:
            for b in m.adding:
                state[b] = state.get(b, 0) + m.size
            for b in m.removing:
                state[b] = state.get(b, 0) - m.size
    return peak
