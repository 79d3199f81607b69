"""What the sticky assignors of one Kafka release do differently: the switches the shared machinery reads.

Kafka's AbstractStickyAssignor changed three times in the 3.x releases (:mod:`kassign.core.releases` names
which release has which rule; this module only turns a release into switches):

* ``rack_aware`` (KIP-881, KAFKA-14452, 3.5.0 and later): members' and partitions' racks count. Before,
  a rack changes nothing.
* ``highest_generation_only`` (3.0.0 to 3.4.0, before KAFKA-14639): where every member subscribes alike,
  only the claims of the members of the highest generation count; an older member keeps nothing, even a
  partition nobody else claims. From KAFKA-14639 on every claim counts and a higher generation wins a
  partition claimed twice.
* ``weigh_against_last_claimant`` (3.4.1 to 3.5.1, before KAFKA-15106): where every member subscribes
  alike, a claim to a partition is weighed against the generation of the last member that claimed it, even
  one whose claim lost to an older holder's; from 3.5.2 and 3.6.0 on, against the holder. Before, a third
  claimant can come to hold a partition beside its holder.
* ``sorted_owned`` (KAFKA-16277, 3.7.1 and later): a member keeps the first of its owned partitions sorted
  by partition number, then topic. Before, it keeps the first in the order it listed them.
* ``kafka_15170`` (3.7.1 and later): the rack-aware round robin counts the members it fills up to the
  maximum and stops offering extras once enough members have one, a member giving up an owned partition
  whose racks do not match its own is counted as revoking it, and a partition handed back to the member
  that gave it up is not in flight. Before, a rack-aware group can hand out too many extras and then fail
  as Kafka's ``IllegalStateException`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from kassign.core.releases import (
    BEFORE_KAFKA_14639,
    BEFORE_KAFKA_15106,
    CLASSIC_CLAIMS,
    CLASSIC_RACKS,
    CLASSIC_STICKY,
    KAFKA_16277,
    LATEST,
    RACK_AWARE,
    KafkaRelease,
    rule,
)


@dataclass(frozen=True)
class StickyRules:
    """The switches of one release (see the module docstring); ``release`` is the release asked for."""

    release: KafkaRelease
    rack_aware: bool
    highest_generation_only: bool
    weigh_against_last_claimant: bool
    sorted_owned: bool
    kafka_15170: bool


@lru_cache(maxsize=64)
def sticky_rules(release: KafkaRelease = LATEST) -> StickyRules:
    sticky = rule(release, CLASSIC_STICKY)
    return StickyRules(
        release=release,
        rack_aware=rule(release, CLASSIC_RACKS) == RACK_AWARE,
        highest_generation_only=sticky == BEFORE_KAFKA_14639,
        weigh_against_last_claimant=rule(release, CLASSIC_CLAIMS) == BEFORE_KAFKA_15106,
        sorted_owned=sticky == KAFKA_16277,
        kafka_15170=sticky == KAFKA_16277,
    )
