"""Who rightfully owned what before this rebalance: one rule for every sticky path.

Each member claims the partitions it held and the generation it held them in.
Claims are read member by member, in the order given (the sticky assignors pass
Kafka's own iteration order), and settled like Kafka's AbstractStickyAssignor:

* a partition nobody claimed yet goes to the claimant;
* a claimant of a higher generation takes it from the earlier one (KIP-341);
* a lower generation loses to the earlier claim;
* two claims in the *same* generation cannot both be right, so the partition is
  taken from both and marked ``contested``: nobody keeps it, and the cooperative
  protocol treats it as in flight.

Claims that cannot stand are dropped with a logged warning, never an error: a
topic the cluster no longer has or the member no longer subscribes to, a
partition number outside the topic, the same partition listed twice by one
member. (Kafka drops the first two silently and would keep an out-of-range
partition; keeping it would assign a partition that does not exist.)

Hot path on integers: partitions are global indexes into ``TopicLayout`` (topics
in Java string order, partitions in order within each topic), claims are int
arrays, and settling a member's claims is a handful of numpy operations.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kassign.groups.classic.assignors.base import TopicPartition, new_topic_partition
from kassign.core.javaorder import java_string_key

log = logging.getLogger("kassign.groups.classic.assignors.sticky")

NO_OWNER = -1

# No partitions: one read-only empty array shared by every claim and member that has none (a new group of
# two thousand members would otherwise make four thousand).
NO_IDS = np.zeros(0, dtype=np.int64)
NO_IDS.flags.writeable = False

# Builds a TopicPartition from a (topic, partition) tuple without NamedTuple's argument parsing.


class TopicLayout:
    """Every partition of the assigned topics numbered 0..N-1: topics in Java order, then partition number.

    Ascending global index is exactly Kafka's "sorted by topic, then partition" order.
    """

    def __init__(self, partition_counts: Mapping[str, int]) -> None:
        self.topics: list[str] = sorted((t for t, n in partition_counts.items() if n > 0), key=java_string_key)
        self.index: dict[str, int] = {t: i for i, t in enumerate(self.topics)}
        self.counts = np.array([partition_counts[t] for t in self.topics], dtype=np.int64)
        self.offsets = np.zeros(len(self.topics) + 1, dtype=np.int64)
        np.cumsum(self.counts, out=self.offsets[1:])
        self.total = int(self.offsets[-1])
        self._topic_of: np.ndarray | None = None

    @property
    def topic_of(self) -> np.ndarray:
        """Topic index of every global partition (int32 [N])."""
        if self._topic_of is None:
            self._topic_of = np.repeat(np.arange(len(self.topics), dtype=np.int32), self.counts)
        return self._topic_of

    def partition_of(self, global_ids: np.ndarray) -> np.ndarray:
        return global_ids - self.offsets[self.topic_of[global_ids]]

    def global_ids(self, pairs: Iterable[tuple[str, int]]) -> np.ndarray:
        """Global indexes of (topic, partition) pairs that exist in the layout; others are skipped."""
        out = []
        for topic, partition in pairs:
            t = self.index.get(topic)
            if t is not None and 0 <= partition < self.counts[t]:
                out.append(self.offsets[t] + partition)
        return np.array(out, dtype=np.int64)

    def materialize(self, global_ids: np.ndarray) -> tuple[TopicPartition, ...]:
        """(topic, partition) objects for an array of global indexes: only at the edge."""
        if len(global_ids) == 0:
            return ()
        topic_idx = self.topic_of[global_ids]
        parts = (global_ids - self.offsets[topic_idx]).tolist()
        names = map(self.topics.__getitem__, topic_idx.tolist())
        return tuple(map(new_topic_partition, zip(names, parts)))


@dataclass
class Claim:
    """One member's claim: parallel topic entries (name, how many partitions) and the flat partition numbers."""

    member: str
    generation: int
    subscribed: frozenset[str]
    entry_topics: list[str] = field(default_factory=list)
    entry_sizes: list[int] = field(default_factory=list)
    partitions: np.ndarray = field(default_factory=lambda: NO_IDS)
    # Layout topic index per entry when already known (batch decoding), -1 for unknown topics.
    entry_topic_index: np.ndarray | None = None

    @classmethod
    def from_pairs(
        cls, member: str, generation: int, subscribed: Iterable[str], pairs: Sequence[tuple[str, int]]
    ) -> Claim:
        return cls(
            member,
            generation,
            frozenset(subscribed),
            [tp[0] for tp in pairs],
            [1] * len(pairs),
            np.fromiter((tp[1] for tp in pairs), dtype=np.int64, count=len(pairs)),
        )

    @classmethod
    def from_chunks(
        cls, member: str, generation: int, subscribed: Iterable[str], chunks: Sequence[tuple[str, np.ndarray]]
    ) -> Claim:
        parts = np.concatenate([c[1] for c in chunks]).astype(np.int64) if chunks else np.zeros(0, dtype=np.int64)
        return cls(member, generation, frozenset(subscribed), [c[0] for c in chunks], [len(c[1]) for c in chunks], parts)


@dataclass
class ResolvedOwnership:
    """Outcome of claim resolution, on global partition indexes."""

    layout: TopicLayout
    members: list[str]
    owned: list[np.ndarray]  # per member (claim order): partitions it rightfully keeps claim to
    contested: np.ndarray  # partitions claimed twice in one generation: owned by nobody
    owner: np.ndarray  # int32 [N], read-only: rightful previous owner member index, or NO_OWNER
    # partitions two or more members still hold (in ``owned``): only where claims are weighed against the last
    # claimant (Kafka to 3.5.1, ``weigh_against_last_claimant``); ``owner`` names the one holding it last
    shared: np.ndarray = field(default_factory=lambda: NO_IDS)

    def owned_partitions(self) -> dict[str, tuple[TopicPartition, ...]]:
        return {m: self.layout.materialize(ids) for m, ids in zip(self.members, self.owned)}


def _claim_global_ids(layout: TopicLayout, claim: Claim) -> np.ndarray:
    """The claim's valid partitions as global ids, first occurrence order; drops the rest with a warning."""
    if claim.entry_topic_index is not None:
        entry_topic = claim.entry_topic_index.copy()
        subscribed = np.array([layout.index[t] for t in claim.subscribed if t in layout.index], dtype=np.int64)
        entry_topic[(entry_topic >= 0) & ~np.isin(entry_topic, subscribed)] = -2
    elif claim.entry_topics:
        index = layout.index
        entry_topic = np.array(
            [index.get(t, -1) if t in claim.subscribed or t not in index else -2 for t in claim.entry_topics],
            dtype=np.int64,
        )
    else:
        return np.zeros(0, dtype=np.int64)
    topic_idx = np.repeat(entry_topic, claim.entry_sizes)
    parts = claim.partitions
    known = topic_idx >= 0
    safe_topic = np.where(known, topic_idx, 0)
    counts = layout.counts[safe_topic] if len(layout.topics) else np.zeros(len(parts), dtype=np.int64)
    in_range = known & (parts >= 0) & (parts < counts)
    ids = layout.offsets[safe_topic] + parts
    valid_ids = ids[in_range]
    unique_ids, first = np.unique(valid_ids, return_index=True)
    if len(unique_ids) < len(valid_ids):
        log.warning("member %s listed %d owned partition(s) more than once; duplicates ignored",
                    claim.member, len(valid_ids) - len(unique_ids))
        valid_ids = valid_ids[np.sort(first)]
    _warn_dropped(claim, topic_idx, known & (parts < 0), known & (parts >= counts))
    return valid_ids


def _warn_dropped(claim: Claim, topic_idx: np.ndarray, negative: np.ndarray, beyond: np.ndarray) -> None:
    unsubscribed = int(np.count_nonzero(topic_idx == -2))
    no_metadata = int(np.count_nonzero(topic_idx == -1))
    below_zero = int(np.count_nonzero(negative))
    out_of_range = int(np.count_nonzero(beyond))
    if unsubscribed:
        log.warning("member %s claims %d partition(s) of topics it no longer subscribes to; ignored",
                    claim.member, unsubscribed)
    if no_metadata:
        log.warning("member %s claims %d partition(s) of topics the cluster does not have; ignored",
                    claim.member, no_metadata)
    if below_zero:
        log.warning("member %s claims %d negative partition number(s); ignored", claim.member, below_zero)
    if out_of_range:
        log.warning("member %s claims %d partition number(s) beyond its topic's partition count; ignored",
                    claim.member, out_of_range)


def _lists_entries(claim: Claim) -> bool:
    """Whether the claim names any topic entry (a claim without one claims nothing)."""
    return bool(claim.entry_topics) or (claim.entry_topic_index is not None and len(claim.entry_topic_index) > 0)


def resolve_previous_owners(layout: TopicLayout, claims: Sequence[Claim], *,
                            highest_generation_only: bool = False,
                            weigh_against_last_claimant: bool = False) -> ResolvedOwnership:
    """Settle every member's claims (see module docstring); claims are read in the order given.

    ``highest_generation_only`` (Kafka 3.0.0 to 3.4.0, before KAFKA-14639): only the claims of the members
    whose generation is the highest of the group count; an older member's claims are dropped whole.

    ``weigh_against_last_claimant`` (Kafka 3.4.1 to 3.5.1, before KAFKA-15106): a claim is weighed against
    the last member that claimed the partition, even one whose older claim lost. The member holding it
    keeps holding it, so a third claim newer than the loser's (though older than the holder's) makes two
    members hold one partition (``shared``)."""
    n = layout.total
    if highest_generation_only and claims:
        newest = max(c.generation for c in claims)
        stale = [c.member for c in claims if c.generation != newest and _lists_entries(c)]
        if stale:
            log.warning("%s claim%s partitions of a generation older than the newest (%d): Kafka before 3.4.1 "
                        "counts only the newest generation's claims, so %s none of them",
                        ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else ""),
                        "" if len(stale) > 1 else "s", newest, "they keep" if len(stale) > 1 else "it keeps")
            claims = [c if c.generation == newest else Claim(c.member, c.generation, c.subscribed) for c in claims]
    if not any(map(_lists_entries, claims)):  # a new group: nothing claimed, nothing to settle or warn about
        nobody = np.broadcast_to(np.int32(NO_OWNER), (n,))  # read-only, and no memory for a million partitions
        return ResolvedOwnership(layout, [c.member for c in claims], [NO_IDS] * len(claims), NO_IDS, nobody)
    owner = np.full(n, NO_OWNER, dtype=np.int32)
    holds = np.zeros(n, dtype=bool)  # False when the last claimant lost it to a same-generation tie
    contested = np.zeros(n, dtype=bool)
    generations = np.array([c.generation for c in claims], dtype=np.int64)
    claimed: list[np.ndarray] = []
    stranded: dict[int, set[int]] = {}  # partition -> members still holding it while the last claimant lost it
    for m, claim in enumerate(claims):
        ids = _claim_global_ids(layout, claim)
        claimed.append(ids)
        if len(ids) == 0:
            continue
        previous = owner[ids]
        free = previous == NO_OWNER
        other_gen = generations[np.where(free, 0, previous)]
        tie = ~free & (other_gen == claim.generation)
        newer = ~free & (claim.generation > other_gen)
        older = ~free & ~tie & ~newer
        owner[ids[free | tie | newer]] = m
        holds[ids[free | newer]] = True
        holds[ids[tie]] = False
        contested[ids[tie]] = True
        if weigh_against_last_claimant and older.any():
            lost = ids[older]
            for p in lost[holds[lost]].tolist():  # its holder holds on, while the loser becomes the last claimant
                stranded.setdefault(p, set()).add(int(owner[p]))
            owner[lost] = m
            holds[lost] = False
        for reason, mask in (("same", tie), ("newer", newer), ("older", older)):
            if mask.any():
                others = ", ".join(claims[o].member for o in np.unique(previous[mask]).tolist())
                _warn_conflict(reason, claim, others, int(mask.sum()))
    if not any(map(len, claimed)):  # nobody claims anything (a new group): nothing to settle
        owner.flags.writeable = False
        return ResolvedOwnership(layout, [c.member for c in claims], claimed, NO_IDS, owner)
    rightful = np.where(holds & ~contested, owner, NO_OWNER).astype(np.int32)
    shared = NO_IDS
    if stranded:
        return _with_stranded(layout, claims, claimed, rightful, contested, stranded)
    rightful.flags.writeable = False
    owned = [ids[rightful[ids] == m] for m, ids in enumerate(claimed)]
    return ResolvedOwnership(layout, [c.member for c in claims], owned, np.flatnonzero(contested), rightful, shared)


def _with_stranded(layout: TopicLayout, claims: Sequence[Claim], claimed: list[np.ndarray], rightful: np.ndarray,
                   contested: np.ndarray, stranded: dict[int, set[int]]) -> ResolvedOwnership:
    """The outcome where some members hold partitions the last claimant lost (``weigh_against_last_claimant``):
    each keeps its claim (unless the partition ended contested), beside whoever else holds it."""
    holders_of: dict[int, set[int]] = {}
    for p, members in stranded.items():
        if contested[p]:
            continue
        holders = set(members)
        if rightful[p] != NO_OWNER:
            holders.add(int(rightful[p]))
        else:
            rightful[p] = min(members)
        holders_of[p] = holders
    owned = []
    for m, ids in enumerate(claimed):
        mine = rightful[ids] == m
        extra = [i for i, p in enumerate(ids.tolist()) if m in holders_of.get(p, ())]
        mine[extra] = True
        owned.append(ids[mine])
    shared = np.array(sorted(p for p, holders in holders_of.items() if len(holders) > 1), dtype=np.int64)
    for p in shared.tolist():
        names = ", ".join(sorted(claims[m].member for m in holders_of[p]))
        log.warning("members %s all still hold partition %s-%d: each weighed its claim against a claim that had "
                    "lost (Kafka before 3.5.2 and 3.6.0)", names, layout.topics[layout.topic_of[p]],
                    int(layout.partition_of(np.array([p]))[0]))
    rightful.flags.writeable = False
    return ResolvedOwnership(layout, [c.member for c in claims], owned, np.flatnonzero(contested), rightful, shared)


def _warn_conflict(reason: str, claim: Claim, others: str, count: int) -> None:
    if reason == "same":
        log.warning("members %s and %s claim %d partition(s) in the same generation %d; nobody keeps them",
                    claim.member, others, count, claim.generation)
    elif reason == "newer":
        log.warning("member %s (generation %d) takes %d partition(s) also claimed by %s with an older generation",
                    claim.member, claim.generation, count, others)
    else:
        log.warning("member %s (generation %d) loses %d partition claim(s) to %s with a newer generation",
                    claim.member, claim.generation, count, others)
