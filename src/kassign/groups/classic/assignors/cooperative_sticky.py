"""CooperativeStickyAssignor: the sticky rule under the cooperative (incremental) protocol.

Rule. Same target as ``StickyAssignor`` (balanced, then as few moves as
possible), but members keep consuming while they rebalance, so a partition may
not go straight from one member to another: this round withholds it (assigned to
nobody) while its old owner revokes it, and the follow-up rebalance hands it to
its new owner. Members report owned partitions and generation in the
subscription itself (protocol v1+); when the generation field is absent (-1) it
is read from the user data, a single int32 that this assignor writes.

Example. C0 owns t0p0..t0p3 (generation 4), C1 joins fresh::

    this round:   C0: t0p0 t0p1   C1: (nothing; t0p2 and t0p3 are being revoked)
    next round:   C0: t0p0 t0p1   C1: t0p2 t0p3

Releases (``kafka_version``, default the newest): as ``sticky`` (racks from 3.5.0, the
newest generation alone before 3.4.1, the partitions listed first kept before 3.7.1).
Before 3.7.1 (KAFKA-15170) a rack-aware group differs twice more: an owned partition
on the wrong rack goes straight to its new owner (no round withholds it), and the
rack round robin can hand out more extra partitions than there are, where Kafka
throws ``IllegalStateException`` and kassign raises ``KafkaAssignorError``.

Hot path on integers: see ``sticky.engine``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kassign.groups.classic.assignors.sticky.claims import Claim
from kassign.groups.classic.assignors.sticky.engine import EngineAssignor, GroupView
from kassign.groups.classic.assignors.sticky.userdata import (
    DEFAULT_GENERATION,
    UserDataError,
    decode_cooperative_user_data,
    encode_cooperative_user_data,
)
from kassign.groups.classic.assignors.base import COOPERATIVE, EAGER, Assignment, Subscription, TopicPartition
from kassign.groups.classic.assignors import options
from kassign.core.releases import DEFAULT_KAFKA_VERSION, KafkaRelease

log = logging.getLogger("kassign.groups.classic.assignors.sticky")


def read_subscription_claim(member: str, subscription: Subscription, topics: frozenset[str] | None = None) -> Claim:
    """Owned partitions from the subscription; generation from its field, else from the user data.
    ``topics``: the subscription's topic set, when the caller already has it."""
    generation = subscription.generation
    if generation == DEFAULT_GENERATION and subscription.user_data:
        try:
            generation = decode_cooperative_user_data(subscription.user_data)
        except UserDataError as err:
            log.warning("ignoring unreadable cooperative-sticky user data of member %s: %s", member, err)
    subscribed = subscription.topics if topics is None else topics
    return Claim.from_pairs(member, generation, subscribed, subscription.owned_partitions)


def read_subscription_claims(view: GroupView) -> list[Claim]:
    return [read_subscription_claim(m, view.subscriptions[m], view.topic_set(m)) for m in view.members]


class CooperativeStickyAssignor(EngineAssignor):
    name = "cooperative-sticky"
    supported_protocols = (COOPERATIVE, EAGER)
    cooperative = True

    def __init__(self, prefer_rack_aware: bool = False, kafka_version: str | KafkaRelease = DEFAULT_KAFKA_VERSION) -> None:
        self.prefer_rack_aware = options.flag(self.name, "prefer_rack_aware", prefer_rack_aware)
        self.release = options.release(self.name, kafka_version)
        self._generation = DEFAULT_GENERATION

    def subscription_user_data(
        self, topics: Sequence[str], owned_partitions: Sequence[TopicPartition], generation: int
    ) -> bytes:
        return encode_cooperative_user_data(generation if generation != DEFAULT_GENERATION else self._generation)

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self._generation = generation

    def read_claims(self, view: GroupView) -> list[Claim]:
        return read_subscription_claims(view)
