"""What the eager and cooperative sticky assignors share: claims in, assignment out.

The two assignors differ only in where a member's history comes from (user data
bytes for eager, the subscription's own fields for cooperative) and in whether
partitions that change owner are withheld for a round. Everything else runs here:

1. number every subscribed partition (``TopicLayout``) and order the members the
   way Kafka's HashMap walks them;
2. settle previous ownership with ``resolve_previous_owners``;
3. same subscriptions everywhere: Kafka's constrained algorithm (``sticky.uniform``);
   otherwise the optimal general algorithm (``sticky.optimal.assign_general``);
4. cooperative: withhold every partition another member must first give up (general path: first
   pick, among equally optimal targets, one whose current round is most even, ``sticky.round``);
5. only now build ``TopicPartition`` objects.

Hot path on integers: one int32 owner array for the whole group; member ids and
topic names appear only in steps 1 and 5.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

import numpy as np

from kassign import _accel
from kassign.groups.classic.assignors.base import (
    Assignment,
    ConsumerPartitionAssignor,
    Subscription,
    TopicPartition,
    subscribed_partition_counts,
)
from kassign.groups.classic.assignors.sticky.claims import (
    NO_OWNER,
    Claim,
    ResolvedOwnership,
    TopicLayout,
    resolve_previous_owners,
)
from kassign.groups.classic.assignors.sticky.racks import RackContext, rack_context
from kassign.groups.classic.assignors.sticky.round import even_out_round
from kassign.groups.classic.assignors.sticky.rules import StickyRules, sticky_rules
from kassign.groups.classic.assignors.sticky.uniform import SharedPartitionError, StickyInvariantError, assign_uniform
from kassign.core.cluster import Cluster
from kassign.core.errors import KafkaAssignorError, KassignError
from kassign.core.releases import CLASSIC_CLAIMS, CLASSIC_RACKS, CLASSIC_STICKY, LATEST, KafkaRelease
from kassign.groups.flat import (
    FlatAssignment,
    group_by_owner,
    no_cyclic_gc,
    pairs_by_member,
)
from kassign.core.javaorder import java_sorted_positions, java_string_hash_order

log = logging.getLogger("kassign.groups.classic.assignors.sticky")

ClaimReader = Callable[["GroupView"], list[Claim]]  # every member's claim, in view.members order


class GroupView:
    """The group in integer form: members in Kafka's walk order, partitions numbered by ``layout``."""

    def __init__(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> None:
        self.cluster = cluster
        self.subscriptions = subscriptions
        self._topic_sets: dict[tuple[str, ...], frozenset[str]] = {}
        self._topic_sets_by_identity: dict[int, tuple[tuple[str, ...], frozenset[str]]] = {}
        self.members: list[str] = java_string_hash_order(subscriptions)
        self.layout = TopicLayout(subscribed_partition_counts(cluster, subscriptions))
        ranks = java_sorted_positions(self.members)
        self.name_rank = np.empty(len(self.members), dtype=np.int64)
        self.name_rank[ranks] = np.arange(len(self.members))

    def topic_set(self, member: str) -> frozenset[str]:
        """The member's subscribed topics as a set, one shared object per distinct subscription
        (two thousand members listing the same 500 topics build one set, not two thousand)."""
        topics = self.subscriptions[member].topics
        kept = self._topic_sets_by_identity.get(id(topics))
        if kept is not None:  # hashing a tuple of 500 names each time would cost more than the rest
            return kept[1]
        try:
            found = self._topic_sets.get(topics)
        except TypeError:  # an unhashable list of topics
            return frozenset(topics)
        if found is None:
            found = self._topic_sets[topics] = frozenset(topics)
        self._topic_sets_by_identity[id(topics)] = (topics, found)  # holding topics keeps its id unique
        return found

    def same_subscriptions(self) -> bool:
        return len({self.topic_set(m) for m in self.members}) <= 1

    def partition_racks(self) -> list[list[frozenset[str]]]:
        return [list(self.cluster.replica_racks(t)) for t in self.layout.topics]

    def member_racks(self) -> list[str | None]:
        return [self.subscriptions[m].rack for m in self.members]

    def racks(self, prefer_rack_aware: bool, rules: StickyRules | None = None) -> RackContext | None:
        """Rack data when Kafka assigns rack-aware (``sticky.racks``), else None (always None for a
        release before 3.5.0, whose sticky assignors ignore racks)."""
        if (rules is not None and not rules.rack_aware) or not any(self.member_racks()):
            return None
        return rack_context(self.member_racks(), self.partition_racks(), prefer_rack_aware)


def previous_ownership(view: GroupView, read_claims: ClaimReader, rules: StickyRules | None = None,
                       uniform: bool | None = None) -> ResolvedOwnership:
    """Every member's claim, read the way its assignor reads it, settled in Kafka's walk order: as
    ``rules``' release settles them where every member subscribes alike (``uniform``; None: find out),
    with every claim counting (a higher generation winning) where they do not, in every release, since
    kassign's general algorithm keeps what it can of any claim."""
    rules = sticky_rules() if rules is None else rules
    if uniform is None:
        uniform = view.same_subscriptions()
    return resolve_previous_owners(view.layout, read_claims(view),
                                   highest_generation_only=uniform and rules.highest_generation_only,
                                   weigh_against_last_claimant=uniform and rules.weigh_against_last_claimant)


def _general_owner(view: GroupView, resolved: ResolvedOwnership, racks: RackContext | None) -> np.ndarray:
    try:
        from kassign.groups.classic.assignors.sticky.optimal import assign_general
    except ImportError:
        raise KassignError(
            "sticky assignment for members with different subscriptions is not available in this build "
            "(kassign.groups.classic.assignors.sticky.optimal is missing); give every member the same topics"
        ) from None
    layout = view.layout
    subs = [
        np.array(sorted({layout.index[t] for t in view.subscriptions[m].topics if t in layout.index}), dtype=np.int32)
        for m in view.members
    ]
    previous = [resolved.owner[layout.offsets[t] : layout.offsets[t + 1]] for t in range(len(layout.topics))]
    per_topic = assign_general(layout.counts.copy(), subs, previous, racks=racks)
    if not per_topic:
        return np.zeros(0, dtype=np.int32)
    return np.concatenate([np.asarray(a, dtype=np.int32) for a in per_topic])


def _raw_claims(view: GroupView) -> list[np.ndarray]:
    """Per member (view order), the global ids of the partitions its subscription lists as owned."""
    return [view.layout.global_ids(view.subscriptions[member].owned_partitions) for member in view.members]


def _raw_transfers(view: GroupView, owner: np.ndarray, claims: list[np.ndarray] | None = None) -> np.ndarray:
    """Partitions given to a member that did not list them while some lister loses them (raw owned lists)."""
    kept = np.zeros(view.layout.total, dtype=bool)
    given_up = np.zeros(view.layout.total, dtype=bool)
    for m, ids in enumerate(_raw_claims(view) if claims is None else claims):
        if len(ids):
            mine = owner[ids] == m
            kept[ids[mine]] = True
            given_up[ids[~mine]] = True
    return np.flatnonzero((owner != NO_OWNER) & ~kept & given_up)


def _cooperative_general(view: GroupView, owner: np.ndarray, racks: RackContext | None) -> tuple[np.ndarray, np.ndarray]:
    """The optimal target, evened out for this round (``sticky.round``), and what it withholds."""
    claims = _raw_claims(view)
    transferring = _raw_transfers(view, owner, claims)
    if len(transferring) == 0:
        return owner, transferring
    layout = view.layout
    listed = np.zeros(layout.total, dtype=bool)
    listers: dict[int, set[int]] = {}
    for m, ids in enumerate(claims):
        listed[ids] = True
        for p in ids.tolist():
            listers.setdefault(p, set()).add(m)
    subscribed = [frozenset(layout.index[t] for t in view.subscriptions[m].topics if t in layout.index)
                  for m in view.members]
    evened = even_out_round(owner, transferring, listed, lambda p: listers.get(p, frozenset()), layout.topic_of,
                            subscribed, racks.mismatch if racks is not None else None)
    return evened, _raw_transfers(view, evened, claims)


def sticky_assign(
    cluster: Cluster,
    subscriptions: Mapping[str, Subscription],
    read_claims: ClaimReader,
    *,
    cooperative: bool,
    prefer_rack_aware: bool = False,
    rules: StickyRules | None = None,
    name: str = "sticky",
) -> dict[str, Assignment]:
    if not subscriptions:
        return {}
    with no_cyclic_gc():
        view, owner = _sticky_owner(cluster, subscriptions, read_claims, cooperative, prefer_rack_aware, rules, name)
        return _materialize(view, owner)


def sticky_assign_flat(
    cluster: Cluster,
    subscriptions: Mapping[str, Subscription],
    read_claims: ClaimReader,
    *,
    cooperative: bool,
    prefer_rack_aware: bool = False,
    rules: StickyRules | None = None,
    name: str = "sticky",
) -> FlatAssignment:
    """The same assignment as :func:`sticky_assign`, left as arrays."""
    if not subscriptions:
        return FlatAssignment([], [], np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    with no_cyclic_gc():  # as in sticky_assign: thousands of claims and sets, none of them in a cycle
        view, owner = _sticky_owner(cluster, subscriptions, read_claims, cooperative, prefer_rack_aware, rules, name)
    return FlatAssignment(view.members, view.layout.topics, view.layout.offsets, owner)


def _sticky_owner(
    cluster: Cluster,
    subscriptions: Mapping[str, Subscription],
    read_claims: ClaimReader,
    cooperative: bool,
    prefer_rack_aware: bool,
    rules: StickyRules | None = None,
    name: str = "sticky",
) -> tuple[GroupView, np.ndarray]:
    """Each partition's owner this round (``NO_OWNER`` for none), by ``view.layout`` index."""
    rules = sticky_rules() if rules is None else rules
    view = GroupView(cluster, subscriptions)
    uniform = view.same_subscriptions()
    resolved = previous_ownership(view, read_claims, rules, uniform)
    racks = view.racks(prefer_rack_aware, rules)
    owner = None
    if uniform:
        try:
            result = assign_uniform(view.layout, resolved.owned, range(len(view.members)), view.name_rank,
                                    resolved.contested, racks, rules, shared=resolved.shared)
            owner, transferring = result.owner, result.transferring
        except SharedPartitionError as err:
            p = int(err.partition)
            topic, number = view.layout.topics[view.layout.topic_of[p]], p - int(view.layout.offsets[view.layout.topic_of[p]])
            raise KassignError(
                f"Kafka {rules.release.label}'s {name} assignor keeps partition {topic}-{number} for both "
                f"{view.members[err.members[0]]} and {view.members[err.members[1]]}: it weighs a claim against the "
                f"last claim that lost rather than the member holding the partition (fixed in 3.5.2 and 3.6.0), and "
                f"its answer is then broken (partitions given twice, others to nobody); kassign cannot answer as "
                f"that release for this group") from None
        except StickyInvariantError as err:
            if not rules.kafka_15170:  # Kafka before 3.7.1 throws here, and so does kassign asked as that release
                said = err.kafka_message % view.members[err.member] if "%s" in err.kafka_message else err.kafka_message
                raise KafkaAssignorError(
                    f"Kafka {rules.release.label}'s {name} assignor fails on this group with IllegalStateException: "
                    f"{said} (its rack-aware round robin hands out too many extra partitions; KAFKA-15170 fixed it "
                    f"in 3.7.1)", "IllegalStateException") from None
            # Kafka's own builder fails here; the general algorithm still finds a balanced answer.
            log.warning("constrained sticky assignment failed (%s); using the general algorithm", err)
    if owner is None:
        owner = _general_owner(view, resolved, racks)
        if cooperative:
            owner, transferring = _cooperative_general(view, owner, racks)
        else:
            transferring = np.zeros(0, dtype=np.int64)
    if cooperative and len(transferring):
        owner = owner.copy()
        owner[transferring] = NO_OWNER
    return view, owner


def _materialize(view: GroupView, owner: np.ndarray) -> dict[str, Assignment]:
    """Each member's ``Assignment``, partitions in layout order (Kafka's: topic, then partition): one
    counting sort by owner, then every ``TopicPartition`` built in one pass (:func:`pairs_by_member`)."""
    layout = view.layout
    members = np.arange(len(view.members), dtype=np.int64)
    native = _accel.native
    if native is not None and native.PAIR_TYPES:  # straight from the owner array (see FlatAssignment._native_dict)
        owners = np.ascontiguousarray(owner)
        if owners.dtype != np.int32:
            owners = owners.astype(np.int64, copy=False)
        per_member = native.owner_pairs(list(view.members), members, owners, np.arange(len(layout.topics)),
                                        np.ascontiguousarray(layout.offsets, dtype=np.int64), list(layout.topics),
                                        None, TopicPartition)
    else:
        bounds, topic, partition = group_by_owner(owner, layout.offsets, members)
        per_member = pairs_by_member(view.members, bounds, layout.topics, topic, partition, TopicPartition)
    return {member: Assignment(tuple(per_member[member])) for member in view.subscriptions}


class EngineAssignor(ConsumerPartitionAssignor):
    """What the eager and the cooperative sticky assignors share: both run this engine and
    differ only in where a member's history comes from (``read_claims``) and whether a
    round withholds the partitions that change owner (``cooperative``). ``release`` is the
    Kafka release they answer as (``sticky.rules`` says what it changes)."""

    cooperative: bool = False
    prefer_rack_aware: bool = False
    release: KafkaRelease = LATEST
    release_rules = (CLASSIC_RACKS, CLASSIC_STICKY, CLASSIC_CLAIMS)  # the rules of core.releases they follow

    @property
    def kafka_version(self) -> str:
        """The Kafka release this assignor answers as, as the user named it."""
        return self.release.label

    @property
    def rules(self) -> StickyRules:
        return sticky_rules(self.release)

    def read_claims(self, view: GroupView) -> list[Claim]:
        raise NotImplementedError

    def assign(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        return sticky_assign(cluster, subscriptions, self.read_claims, cooperative=self.cooperative,
                             prefer_rack_aware=self.prefer_rack_aware, rules=self.rules, name=self.name)

    def assign_flat(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> FlatAssignment:
        return sticky_assign_flat(cluster, subscriptions, self.read_claims, cooperative=self.cooperative,
                                  prefer_rack_aware=self.prefer_rack_aware, rules=self.rules, name=self.name)

    def previous_ownership(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> ResolvedOwnership:
        """Who rightfully owned what before this rebalance, as this assignor (and its release) settles it."""
        return previous_ownership(GroupView(cluster, subscriptions), self.read_claims, self.rules)
