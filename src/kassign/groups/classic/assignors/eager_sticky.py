"""StickyAssignor: balanced first, then keep as many partitions where they were (eager protocol).

Rule. Every member ends as balanced as its subscription allows; among balanced
assignments the one that moves the fewest partitions away from their rightful
previous owner is chosen. Under the eager protocol a member gives up everything
before it re-joins, so its history travels in its subscription user data, in
Kafka's own byte format (``sticky.userdata``: owned partitions by topic, plus
the generation since version 1). When two members claim one partition the higher
generation wins; same-generation twins both lose it (``sticky.claims``).

* Every member subscribes to the same topics: output identical to Kafka's
  (``sticky.uniform``), racks included (KIP-881).
* Different subscriptions: the optimal general algorithm (``sticky.optimal``).

Example. C0, C1, C2 all subscribe to t0..t3, two partitions each::

    fresh:            C0: t0p0 t1p1 t3p0   C1: t0p1 t2p0 t3p1   C2: t1p0 t2p1
    C1 leaves:        C0: t0p0 t0p1 t1p1 t3p0                  C2: t1p0 t2p0 t2p1 t3p1

C0 and C2 keep all they had and share C1's three partitions.

Releases (``kafka_version``, default the newest; ``sticky.rules`` has the switches).
Where every member subscribes alike the answer is the release's own:

* 3.0.0 to 3.4.0: only the members of the newest generation keep their claims
  (KAFKA-14639 came with 3.4.1 and 3.5.0); racks count for nothing before 3.5.0.
* to 3.7.0: a member over its quota keeps the partitions it listed first, in the order
  its user data lists them (topics in the order Kafka's member groups them); 3.7.1
  and later keep the lowest partition numbers (KAFKA-16277). Example: C0 owned t0-3,
  t0-0, t0-1, t0-2 (listed so), C1 joins: 3.6 leaves C0 t0-0 and t0-3, 3.7.1 t0-0, t0-1.
* 3.4.1 to 3.5.1 weigh a claim against the last claimant (KAFKA-15106 fixed it in
  3.5.2 and 3.6.0); where two members would then keep one partition, Kafka's answer is
  broken and kassign says so.

With different subscriptions the optimal general algorithm serves every release.

Hot path on integers: see ``sticky.engine``; every member's user data is decoded
in one numba pass straight into integer arrays (``sticky.userdata.decode_many``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from kassign.groups.classic.assignors.sticky.claims import Claim
from kassign.groups.classic.assignors.sticky.engine import EngineAssignor, GroupView
from kassign.groups.classic.assignors.sticky.userdata import (
    DEFAULT_GENERATION,
    UserDataError,
    decode_sticky_user_data,
    encode_many,
    encode_sticky_user_data,
)
from kassign.groups.classic.assignors.sticky.userdata import BROKEN, OK_V1, decode_many
from kassign.groups.classic.assignors.base import EAGER, Assignment, TopicPartition
from kassign.groups.classic.assignors import options
from kassign.core.releases import DEFAULT_KAFKA_VERSION, KafkaRelease

log = logging.getLogger("kassign.groups.classic.assignors.sticky")


def read_user_data_claims(view: GroupView) -> list[Claim]:
    """Every member's claim from its StickyAssignor user data; unreadable bytes count as no history."""
    subscriptions = [view.subscriptions[m] for m in view.members]
    if not any(s.user_data for s in subscriptions):  # a new group: nobody has history to decode
        return [Claim(member, DEFAULT_GENERATION, view.topic_set(member)) for member in view.members]
    batch = decode_many([s.user_data for s in subscriptions], view.layout.topics)
    claims = []
    for i, (member, subscription) in enumerate(zip(view.members, subscriptions)):
        topics = view.topic_set(member)
        if not subscription.user_data:
            claims.append(Claim(member, DEFAULT_GENERATION, topics))  # a new member: no history
            continue
        if batch.status[i] == BROKEN:
            try:
                decode_sticky_user_data(subscription.user_data)  # only to say what is wrong
                reason = "not readable"
            except UserDataError as err:
                reason = str(err)
            log.warning("ignoring unreadable sticky user data of member %s: %s", member, reason)
            claims.append(Claim(member, DEFAULT_GENERATION, topics))
            continue
        e0, e1 = batch.entry_offsets[i], batch.entry_offsets[i + 1]
        p0, p1 = batch.part_offsets[i], batch.part_offsets[i + 1]
        generation = int(batch.generation[i]) if batch.status[i] == OK_V1 else DEFAULT_GENERATION
        claims.append(
            Claim(member, generation, topics, entry_sizes=batch.entry_size[e0:e1],
                  partitions=batch.partitions[p0:p1], entry_topic_index=batch.entry_topic[e0:e1])
        )
    return claims


class StickyAssignor(EngineAssignor):
    name = "sticky"
    supported_protocols = (EAGER,)

    def __init__(self, prefer_rack_aware: bool = False, kafka_version: str | KafkaRelease = DEFAULT_KAFKA_VERSION) -> None:
        self.prefer_rack_aware = options.flag(self.name, "prefer_rack_aware", prefer_rack_aware)
        self.release = options.release(self.name, kafka_version)
        # What this member was last given, sent back in its next subscription (Kafka's memberAssignment).
        self._last_partitions: tuple[TopicPartition, ...] | None = None
        self._last_generation = DEFAULT_GENERATION

    def subscription_user_data(
        self, topics: Sequence[str], owned_partitions: Sequence[TopicPartition], generation: int
    ) -> bytes:
        if owned_partitions or generation != DEFAULT_GENERATION:
            return encode_sticky_user_data(owned_partitions, generation)
        if self._last_partitions is None:
            return b""  # a new member has no history (Kafka sends null)
        return encode_sticky_user_data(self._last_partitions, self._last_generation)

    def batch_user_data(self, owned_start: np.ndarray, owned_code: np.ndarray, owned_names: Sequence[str],
                        owned_partitions: np.ndarray, generations: Sequence[int]) -> list[bytes] | None:
        """:meth:`subscription_user_data` of every member, encoded in one pass (:func:`encode_many`)."""
        if type(self).subscription_user_data is not StickyAssignor.subscription_user_data:
            return None  # a subclass says what its members send
        data = encode_many(owned_start, owned_code, owned_names, owned_partitions, generations)
        # a member with nothing to tell sends what subscription_user_data sends then
        silent = np.flatnonzero((np.diff(owned_start) == 0) & (np.asarray(generations) == DEFAULT_GENERATION))
        if len(silent):
            said = b"" if self._last_partitions is None else encode_sticky_user_data(self._last_partitions,
                                                                                      self._last_generation)
            for m in silent.tolist():
                data[m] = said
        return data

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self._last_partitions = tuple(assignment.partitions)
        self._last_generation = generation

    def read_claims(self, view: GroupView) -> list[Claim]:
        return read_user_data_claims(view)
