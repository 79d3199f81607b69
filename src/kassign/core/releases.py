"""The Kafka releases kassign models, and which rule each release uses (SPEC section 4, "Kafka releases").

kassign answers as the Kafka release the user runs: ``kafka_version`` (API) and
``--kafka-version`` (CLI) take ``"MAJOR.MINOR"`` or ``"MAJOR.MINOR.PATCH"``; the default is
``"4.3"``, the newest release kassign models. Most of what kassign reproduces is the same in
every Kafka 4 release; where a rule changed, this module is the one place that says which
release uses which rule (:data:`RULE_CHANGES`, :func:`rule`).

What each feature accepts (:data:`FEATURES`, :func:`release_for`):

- ``consumer``, the group coordinator's assignors (KIP-848, ``uniform`` and ``range``):
  4.0 (4.0.0, and 4.0.1 and later patches), 4.1, 4.2, 4.3;
- ``share``, share groups (KIP-932, ``simple``): 4.1, 4.2, 4.3 (4.0's early access is
  not modelled, and saying so is the error);
- ``streams``, streams groups (KIP-1071): 4.2, 4.3 (4.1's early access is not modelled);
- ``classic``, everything else (the classic protocol's assignors, partitioners, striped
  placement, Kafka Streams' classic assignors): any 4.x.

The rules that changed between modelled releases:

- the ``uniform`` assignor of the consumer protocol when every member subscribes to the same
  topics. Kafka 4.0.0 gives the extra partitions (partitions mod members) to the first members
  in the coordinator's iteration order; KAFKA-18688, shipped in 4.0.1 and 4.1.0, lets a member
  that already holds its quota plus one keep the extra slot and gives the rest to the last
  members (:mod:`kassign.groups.consumer.uniform` states both rules with examples);
- the ``simple`` assignor of share groups. Kafka 4.1 places each member on one partition by
  the hash of its id, keeps current holdings up to a count, and deals the rest round robin;
  4.2 (KAFKA-19362, KAFKA-19363) replaced it by counts per member and a number of members per
  partition (:mod:`kassign.groups.share.simple` states both rules with examples).

A release without a patch number stands for its line's latest patch: ``"4.0"`` means a 4.0
release with every fix of the 4.0 line, so it has KAFKA-18688 (4.0.1 and later); ask for
``"4.0.0"`` to get 4.0.0's rule. kassign does not keep a list of published patch numbers: any
patch of a modelled line is accepted, and a patch answers as the rules say for it.

Example::

    >>> release_for("4.0.0", "consumer").has_kafka_18688
    False
    >>> release_for("4.0", "consumer").has_kafka_18688, release_for("4.0", "consumer").label
    (True, '4.0')
    >>> rule(release_for("4.1.0", "share"), SHARE_SIMPLE), rule(release_for("4.3", "share"), SHARE_SIMPLE)
    ('hash-then-round-robin', 'sharing-quotas')
    >>> release_for("4.4", "consumer")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kassign.core.releases.UnsupportedReleaseError: Kafka 4.4 is not a release kassign models for the consumer ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Union

from kassign.core.errors import KassignError, shown

DEFAULT_KAFKA_VERSION = "4.3"

# a patch number above every real one: "4.0" (no patch) is the 4.0 line's latest release
_LINE_LATEST = 1 << 30

_VERSION = re.compile(r"(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?")


class UnsupportedReleaseError(KassignError):
    """A Kafka release that kassign does not model for the feature asked about, or not a release at all."""


@dataclass(frozen=True)
class KafkaRelease:
    """One Kafka release, as the user named it: ``patch`` None means the line's latest patch."""

    major: int
    minor: int
    patch: int | None = None

    @property
    def label(self) -> str:
        """As the user wrote it, normalised: ``"4.3"`` or ``"4.0.0"``."""
        base = f"{self.major}.{self.minor}"
        return base if self.patch is None else f"{base}.{self.patch}"

    @property
    def line(self) -> tuple[int, int]:
        return self.major, self.minor

    def at_least(self, major: int, minor: int, patch: int = 0) -> bool:
        """Whether this release has everything ``major.minor.patch`` shipped (a line without a
        patch number counts as its latest patch)."""
        mine = (self.major, self.minor, _LINE_LATEST if self.patch is None else self.patch)
        return mine >= (major, minor, patch)

    @property
    def has_kafka_18688(self) -> bool:
        """Whether the uniform assignor's homogeneous path lets members keep their extra partition."""
        return rule(self, UNIFORM_HOMOGENEOUS) == KAFKA_18688

    def __str__(self) -> str:
        return self.label


ReleaseLike = Union[str, KafkaRelease]


# -- where rules changed ---------------------------------------------------------------------------

UNIFORM_HOMOGENEOUS = "uniform-homogeneous"
EXTRAS_TO_FIRST = "extras-to-first"  # Kafka 4.0.0
KAFKA_18688 = "kafka-18688"  # Kafka 4.0.1, 4.1.0 and later

SHARE_SIMPLE = "share-simple"
HASH_THEN_ROUND_ROBIN = "hash-then-round-robin"  # Kafka 4.1 (every 4.1 patch: the rewrite was not backported)
SHARING_QUOTAS = "sharing-quotas"  # Kafka 4.2.0 and later: KAFKA-19362 (homogeneous), KAFKA-19363 (heterogeneous)

# rule name -> ((first release using it, the rule), ...), oldest first
RULE_CHANGES: dict[str, tuple[tuple[tuple[int, int, int], str], ...]] = {
    UNIFORM_HOMOGENEOUS: (((4, 0, 0), EXTRAS_TO_FIRST), ((4, 0, 1), KAFKA_18688)),
    SHARE_SIMPLE: (((4, 1, 0), HASH_THEN_ROUND_ROBIN), ((4, 2, 0), SHARING_QUOTAS)),
}


def rule(release: KafkaRelease, name: str) -> str:
    """The rule ``release`` uses where :data:`RULE_CHANGES` says rule ``name`` changed."""
    try:
        changes = RULE_CHANGES[name]
    except KeyError:
        raise KassignError(f"no rule called {name!r}; kassign tracks {', '.join(sorted(RULE_CHANGES))}") from None
    chosen = changes[0][1]
    for first, which in changes:
        if release.at_least(*first):
            chosen = which
    return chosen


# -- what each feature accepts ----------------------------------------------------------------------

@dataclass(frozen=True)
class Feature:
    """Which releases kassign models for one feature: ``lines`` (major, minor), or None for any
    release of ``major``; ``not_modelled`` says why a line that had the feature is left out;
    ``shown`` names a line in messages where its patches differ."""

    name: str
    what: str
    lines: tuple[tuple[int, int], ...] | None
    not_modelled: tuple[tuple[tuple[int, int], str], ...] = ()
    shown: tuple[tuple[tuple[int, int], str], ...] = ()
    major: int = 4

    def modelled(self) -> str:
        """The releases modelled, in words, for messages."""
        if self.lines is None:
            return f"every Kafka {self.major}.x release"
        shown = dict(self.shown)
        names = [shown.get(line, f"{line[0]}.{line[1]}") for line in self.lines]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        return f"Kafka {listed}"


FEATURES: dict[str, Feature] = {
    "consumer": Feature("consumer", "the consumer protocol's assignors (KIP-848)",
                        ((4, 0), (4, 1), (4, 2), (4, 3)),
                        shown=(((4, 0), "4.0 (4.0.0, and 4.0.1 and later)"),)),
    # 4.1's simple assignor is an earlier rule than 4.2's (rule(release, SHARE_SIMPLE) picks it)
    "share": Feature("share", "share groups (KIP-932)", ((4, 1), (4, 2), (4, 3)),
                     (((4, 0), "Kafka 4.0's share groups were early access"),)),
    "streams": Feature("streams", "streams groups (KIP-1071)", ((4, 2), (4, 3)),
                       (((4, 1), "Kafka 4.1's streams groups were early access"),)),
    "classic": Feature("classic", "the classic protocol's assignors", None),
}


@lru_cache(maxsize=64)
def parse_release(version: ReleaseLike) -> KafkaRelease:
    """``"MAJOR.MINOR"`` or ``"MAJOR.MINOR.PATCH"`` as a :class:`KafkaRelease` (not yet checked
    against any feature: :func:`release_for` does that)."""
    if isinstance(version, KafkaRelease):
        return version
    match = _VERSION.fullmatch(version.strip()) if isinstance(version, str) else None
    if match is None:
        raise UnsupportedReleaseError(
            f"kafka_version (--kafka-version) must be a Kafka release as \"MAJOR.MINOR\" or "
            f"\"MAJOR.MINOR.PATCH\", such as \"{DEFAULT_KAFKA_VERSION}\" or \"4.0.0\"; got {shown(version)}")
    major, minor, patch = match.groups()
    return KafkaRelease(int(major), int(minor), None if patch is None else int(patch))


def release_for(version: ReleaseLike, feature: str) -> KafkaRelease:
    """The release ``version`` names, checked to be one kassign models for ``feature`` (a key of
    :data:`FEATURES`); otherwise :class:`UnsupportedReleaseError`, naming the releases modelled."""
    try:
        spec = FEATURES[feature]
    except KeyError:
        raise KassignError(f"no feature called {feature!r}; kassign models {', '.join(FEATURES)}") from None
    release = _parse(version)
    if release.major == spec.major and (spec.lines is None or release.line in spec.lines):
        return release
    reason = dict(spec.not_modelled).get(release.line)
    lead = f"{reason}, which kassign does not model; for {spec.what} it models" if reason else \
        f"Kafka {release.label} is not a release kassign models for {spec.what}; it models"
    raise UnsupportedReleaseError(f"{lead} {spec.modelled()}; pass one of those as kafka_version (--kafka-version)")


def _parse(version: ReleaseLike) -> KafkaRelease:
    # lru_cache needs a hashable argument; anything else is simply not a release
    try:
        hash(version)
    except TypeError:
        raise UnsupportedReleaseError(
            f"kafka_version (--kafka-version) must be a Kafka release such as \"{DEFAULT_KAFKA_VERSION}\" or "
            f"\"4.0.0\"; got {shown(version)}") from None
    return parse_release(version)


LATEST = parse_release(DEFAULT_KAFKA_VERSION)
