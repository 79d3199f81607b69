"""The Kafka releases kassign models, 3.0 to 4.4, and which rule each release uses.

kassign answers as the Kafka release the user runs: ``kafka_version`` (API) and ``--kafka-version`` (CLI) take
``"MAJOR.MINOR"`` or ``"MAJOR.MINOR.PATCH"``; the default is ``"4.4"``, the newest release. Every release line from
3.0 to 4.4 is modelled. Most of what kassign reproduces is the same in all of them; where a rule changed, this
module is the one place that says which release uses which rule (:data:`RULE_CHANGES`, :func:`rule`), with the
Kafka ticket that changed it, and which releases have which group types (:data:`FEATURES`, :func:`release_for`).

A release without a patch number stands for its line's latest patch: ``"3.4"`` means a 3.4 release with every fix
of the 3.4 line (3.4.1 has KAFKA-14639), ``"4.0"`` one with KAFKA-18688 (4.0.1 and later); ask for ``"3.4.0"`` or
``"4.0.0"`` to get the first patch's rules. kassign keeps no list of published patch numbers: any patch of a
modelled line is accepted, and answers as the rules below say for it.

Where a fix reached an older line in a patch release after a newer line's first release (KAFKA-14639 came with
3.5.0 and was backported to 3.4.1), a rule change lists one first release per line: ``((3, 4, 1), (3, 5, 0))``
reads "3.4.1 and later 3.4 patches, and every release from 3.5.0 on".

What each group type accepts (:data:`FEATURES`):

- ``classic``: the classic protocol's assignors, Kafka Streams' classic assignors, the producer, replica
  placement: every release from 3.0 to 4.4;
- ``consumer``, the group coordinator's assignors (KIP-848, ``uniform`` and ``range``): 4.0 to 4.4 (3.7 to 3.9
  had it as early access, which is not modelled, and saying so is the error);
- ``share``, share groups (KIP-932, ``simple``): 4.1 to 4.4 (4.0's early access is not modelled);
- ``streams``, streams groups (KIP-1071, ``sticky``): 4.2 to 4.4 (4.1's early access is not modelled).

Example::

    >>> rule(release_for("3.4.0", "classic"), CLASSIC_STICKY), rule(release_for("3.4", "classic"), CLASSIC_STICKY)
    ('before-kafka-14639', 'kafka-14639')
    >>> rule(release_for("3.9", "classic"), CLASSIC_RACKS), rule(release_for("3.4", "classic"), CLASSIC_RACKS)
    ('rack-aware', 'rack-unaware')
    >>> release_for("4.0.0", "consumer").has_kafka_18688, release_for("4.0", "consumer").has_kafka_18688
    (False, True)
    >>> release_for("3.9", "share")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kassign.core.releases.UnsupportedReleaseError: Kafka 3.9 has no share groups (KIP-932 came with 4.0 ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Union

from kassign.core.errors import KassignError, shown

DEFAULT_KAFKA_VERSION = "4.4"

OLDEST_LINE = (3, 0)
NEWEST_LINE = (4, 4)
# every release line kassign models, oldest first (3.9 was the last 3.x line)
LINES: tuple[tuple[int, int], ...] = tuple((3, minor) for minor in range(10)) + tuple((4, minor) for minor in range(5))

# a patch number above every real one: "4.0" (no patch) is the 4.0 line's latest release
_LINE_LATEST = 1 << 30

_VERSION = re.compile(r"(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?")

Triple = tuple[int, int, int]


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
        """Whether this release is ``major.minor.patch`` or later in version order (a line without a patch
        number counts as its latest patch). Backports across lines are :func:`has_change`'s business."""
        mine = (self.major, self.minor, _LINE_LATEST if self.patch is None else self.patch)
        return mine >= (major, minor, patch)

    @property
    def has_kafka_18688(self) -> bool:
        """Whether the uniform assignor's homogeneous path lets members keep their extra partition."""
        return rule(self, UNIFORM_HOMOGENEOUS) == KAFKA_18688

    def __str__(self) -> str:
        return self.label


ReleaseLike = Union[str, KafkaRelease]


def has_change(release: KafkaRelease, since: tuple[Triple, ...]) -> bool:
    """Whether ``release`` has a change that first shipped in ``since``: one first release per line where it was
    backported, the last of them (the newest) standing for every later line too."""
    if not since:
        return True
    *backports, newest = sorted(since)
    if release.at_least(*newest):
        return True
    return any(release.line == first[:2] and release.at_least(*first) for first in backports)


# -- where rules changed ---------------------------------------------------------------------------

# the consumer protocol's uniform assignor, every member subscribing to the same topics
UNIFORM_HOMOGENEOUS = "uniform-homogeneous"
EXTRAS_TO_FIRST = "extras-to-first"  # Kafka 4.0.0
KAFKA_18688 = "kafka-18688"  # Kafka 4.0.1, 4.1.0 and later

# share groups' simple assignor
SHARE_SIMPLE = "share-simple"
HASH_THEN_ROUND_ROBIN = "hash-then-round-robin"  # Kafka 4.1 (every 4.1 patch: the rewrite was not backported)
SHARING_QUOTAS = "sharing-quotas"  # Kafka 4.2.0 and later: KAFKA-19362 (homogeneous), KAFKA-19363 (heterogeneous)

# the classic protocol's range, sticky and cooperative-sticky: do members' and partitions' racks count (KIP-881)
CLASSIC_RACKS = "classic-racks"
RACK_UNAWARE = "rack-unaware"  # 3.0.0 to 3.4.x: racks change nothing
RACK_AWARE = "rack-aware"  # 3.5.0 and later: KAFKA-14451, KAFKA-14891 (range), KAFKA-14452 (sticky)

# the classic sticky and cooperative-sticky assignors (AbstractStickyAssignor)
CLASSIC_STICKY = "classic-sticky"
BEFORE_KAFKA_14639 = "before-kafka-14639"  # 3.0.0 to 3.4.0
KAFKA_14639 = "kafka-14639"  # 3.4.1, 3.5.0 to 3.7.0: a partition is not revoked and assigned in one round
KAFKA_16277 = "kafka-16277"  # 3.7.1 and later, with KAFKA-15170: owned partitions sorted, rack-aware fix

# the classic sticky assignors' check of a partition several members claim, where every member subscribes alike
CLASSIC_CLAIMS = "classic-claims"
BEFORE_KAFKA_15106 = "before-kafka-15106"  # to 3.5.1: a claim is weighed against the last claimant, even one that lost
KAFKA_15106 = "kafka-15106"  # 3.5.2, 3.6.0 and later: against the member that holds the partition

# the producer's partition for a record without a key
KEYLESS = "keyless"
KIP_480 = "kip-480"  # 3.0 to 3.2: the sticky partitioner (a new batch picks a new partition)
KIP_794 = "kip-794"  # 3.3 and later: the built-in partitioner (sticky by bytes, adaptive to queue sizes)

# the built-in partitioner's rack awareness (partitioner.rack.aware with client.rack)
KEYLESS_RACKS = "keyless-racks"
NO_PRODUCER_RACKS = "no-producer-racks"  # 3.0 to 4.3: the producer has no partitioner.rack.aware
KIP_1123 = "kip-1123"  # 4.4 and later: the sticky partition is drawn among those led in the producer's rack

# streams groups' sticky assignor (the broker's, KIP-1071)
STREAMS_STICKY = "streams-sticky"
STREAMS_STICKY_42 = "streams-sticky-4.2"  # 4.2, 4.3
KAFKA_20719 = "kafka-20719"  # 4.4: task offset sums, another process map (tie order), KAFKA-20899 (standbys)

# streams groups' coordinator (KIP-1071): what it hands the assignor, and how a member reconciles a role change
STREAMS_COORDINATOR = "streams-coordinator"
TARGET_THEN_REVOKE = "target-then-revoke"  # 4.2, 4.3: the assignor sees each member's previous target; a task
# changing role on a member (standby to active, active to standby) is revoked first, then assigned again
KAFKA_20665 = "kafka-20665"  # 4.4: roles change in place (KAFKA-20665); the assignor sees each member's current
# assignment (KAFKA-20790) and the task offset sums it reported (KAFKA-20116)

# Kafka Streams' classic sticky task assignor (KIP-924, task.assignor.class): an instance's room for actives
KSTREAMS_STICKY_ROOM = "kstreams-sticky-room"
THREADS_TIMES_FLOOR = "threads-times-floor"  # 3.8 to 4.3: its threads x floor(tasks / all threads)
KAFKA_20198 = "kafka-20198"  # 4.4: fewer than ceil(tasks x its threads / all threads)

# Kafka Streams' rack-aware task assignment (KIP-925): the min-cost-flow solver
KSTREAMS_RACK_FLOW = "kstreams-rack-flow"
BEFORE_KAFKA_15022 = "before-kafka-15022"  # 3.6: no balance_subtopology, the older Graph.java
KAFKA_15022 = "kafka-15022"  # 3.7.0 and later: balance_subtopology, negative cycles from one source

# Kafka Streams' classic task assignment (the group leader's StreamsPartitionAssignor): what each release offers
KSTREAMS_TASK_ASSIGNORS = "kstreams-task-assignors"
HIGH_AVAILABILITY_ONLY = "high-availability-only"  # 3.0 to 3.7: no task.assignor.class
KIP_924 = "kip-924"  # 3.8 and later: task.assignor.class, Kafka Streams' own StickyTaskAssignor

KSTREAMS_CLIENT_TAGS = "kstreams-client-tags"
NO_CLIENT_TAGS = "no-client-tags"  # 3.0, 3.1: no rack.aware.assignment.tags
KIP_708 = "kip-708"  # 3.2 and later: standbys placed by client tags (rack.aware.assignment.tags)

KSTREAMS_RACK_AWARE = "kstreams-rack-aware"
NO_RACK_AWARE = "no-rack-aware"  # 3.0 to 3.5: no rack.aware.assignment.strategy
MIN_TRAFFIC_ONLY = "min-traffic-only"  # 3.6 (KIP-925): none or min_traffic
BALANCE_SUBTOPOLOGY = "balance-subtopology"  # 3.7.0 and later: balance_subtopology too

# how the high-availability assignor moves tasks to caught-up clients (TaskMovement)
KSTREAMS_MOVEMENTS = "kstreams-movements"
BEFORE_KAFKA_13600 = "before-kafka-13600"  # 3.0, 3.1: only to caught-up clients; movements in the heap's array order
KAFKA_13600 = "kafka-13600"  # 3.2: else to the most caught-up client; movements still in the heap's array order
MOVEMENTS_POLLED = "movements-polled"  # 3.3.0 and later (#12585): movements polled in priority order

# how StreamsPartitionAssignor spreads a client's tasks over its stream threads
KSTREAMS_THREAD_SPLIT = "kstreams-thread-split"
BEFORE_KAFKA_12648 = "before-kafka-12648"  # 3.0: actives, then standbys; a reported stateless task fails it
KAFKA_12648 = "kafka-12648"  # 3.1: the same, reported tasks without a lag skipped
KAFKA_12959 = "kafka-12959"  # 3.2 and later: stateful actives, standbys, stateless actives, one thread load

# replica placement: which placers a release creates topics with
PLACEMENT = "placement"
ZOOKEEPER_OR_KRAFT = "zookeeper-or-kraft"  # 3.x: AdminUtils for ZooKeeper-mode clusters, the striped placer for KRaft
KRAFT_ONLY = "kraft-only"  # 4.x: the striped placer only (no ZooKeeper mode)

# KRaft itself: 3.0 to 3.2 shipped it as early access (not for production); KIP-833 made it production-ready in 3.3
KRAFT = "kraft"
KRAFT_EARLY_ACCESS = "kraft-early-access"  # 3.0 to 3.2 (the striped placer already places as in 3.3 and later)
KRAFT_PRODUCTION = "kraft-production"  # 3.3 and later

# the striped placer's refusals: two of its three messages were reworded when log directories could be cordoned
STRIPED_MESSAGES = "striped-messages"
FENCED_OR_REGISTERED = "fenced-or-registered"  # 3.0 to 4.2: "All brokers are currently fenced." and "... registered."
KAFKA_19774 = "kafka-19774"  # 4.3.0 and later (KIP-1066): both also name brokers whose log directories are cordoned

# kafka-reassign-partitions.sh --generate: which placer proposes its new replica lists
REASSIGN_GENERATE = "reassign-generate"
ADMIN_UTILS = "admin-utils"  # 3.0 to 4.0: AdminUtils, as ZooKeeper-mode topic creation
KAFKA_18798 = "kafka-18798"  # 4.1.0 and later: the controller's striped placer (all brokers unfenced, one Random)

# rule name -> ((first releases using it, the rule), ...), oldest first; () is "from the oldest release modelled"
RULE_CHANGES: dict[str, tuple[tuple[tuple[Triple, ...], str], ...]] = {
    UNIFORM_HOMOGENEOUS: ((((4, 0, 0),), EXTRAS_TO_FIRST), (((4, 0, 1),), KAFKA_18688)),
    SHARE_SIMPLE: ((((4, 1, 0),), HASH_THEN_ROUND_ROBIN), (((4, 2, 0),), SHARING_QUOTAS)),
    CLASSIC_RACKS: (((), RACK_UNAWARE), (((3, 5, 0),), RACK_AWARE)),
    CLASSIC_STICKY: (((), BEFORE_KAFKA_14639), (((3, 4, 1), (3, 5, 0)), KAFKA_14639), (((3, 7, 1),), KAFKA_16277)),
    CLASSIC_CLAIMS: (((), BEFORE_KAFKA_15106), (((3, 5, 2), (3, 6, 0)), KAFKA_15106)),
    KEYLESS: (((), KIP_480), (((3, 3, 0),), KIP_794)),
    KEYLESS_RACKS: (((), NO_PRODUCER_RACKS), (((4, 4, 0),), KIP_1123)),
    STREAMS_STICKY: ((((4, 2, 0),), STREAMS_STICKY_42), (((4, 4, 0),), KAFKA_20719)),
    STREAMS_COORDINATOR: ((((4, 2, 0),), TARGET_THEN_REVOKE), (((4, 4, 0),), KAFKA_20665)),
    KSTREAMS_STICKY_ROOM: ((((3, 8, 0),), THREADS_TIMES_FLOOR), (((4, 4, 0),), KAFKA_20198)),
    KSTREAMS_RACK_FLOW: ((((3, 6, 0),), BEFORE_KAFKA_15022), (((3, 7, 0),), KAFKA_15022)),
    KSTREAMS_TASK_ASSIGNORS: (((), HIGH_AVAILABILITY_ONLY), (((3, 8, 0),), KIP_924)),
    KSTREAMS_CLIENT_TAGS: (((), NO_CLIENT_TAGS), (((3, 2, 0),), KIP_708)),
    KSTREAMS_RACK_AWARE: (((), NO_RACK_AWARE), (((3, 6, 0),), MIN_TRAFFIC_ONLY), (((3, 7, 0),), BALANCE_SUBTOPOLOGY)),
    KSTREAMS_MOVEMENTS: (((), BEFORE_KAFKA_13600), (((3, 2, 0),), KAFKA_13600), (((3, 3, 0),), MOVEMENTS_POLLED)),
    KSTREAMS_THREAD_SPLIT: (((), BEFORE_KAFKA_12648), (((3, 1, 0),), KAFKA_12648), (((3, 2, 0),), KAFKA_12959)),
    PLACEMENT: (((), ZOOKEEPER_OR_KRAFT), (((4, 0, 0),), KRAFT_ONLY)),
    KRAFT: (((), KRAFT_EARLY_ACCESS), (((3, 3, 0),), KRAFT_PRODUCTION)),
    STRIPED_MESSAGES: (((), FENCED_OR_REGISTERED), (((4, 3, 0),), KAFKA_19774)),
    REASSIGN_GENERATE: (((), ADMIN_UTILS), (((4, 1, 0),), KAFKA_18798)),
}


def rule(release: KafkaRelease, name: str) -> str:
    """The rule ``release`` uses where :data:`RULE_CHANGES` says rule ``name`` changed."""
    try:
        changes = RULE_CHANGES[name]
    except KeyError:
        raise KassignError(f"no rule called {name!r}; kassign tracks {', '.join(sorted(RULE_CHANGES))}") from None
    chosen = changes[0][1]
    for since, which in changes:
        if has_change(release, since):
            chosen = which
    return chosen


def rule_at_least(release: KafkaRelease, name: str, which: str) -> bool:
    """Whether ``release`` uses rule ``which`` of ``name`` or a later one (for a rule that changed more than once)."""
    order = [value for _, value in RULE_CHANGES[name]]
    return order.index(rule(release, name)) >= order.index(which)


# -- what each release has -------------------------------------------------------------------------

@dataclass(frozen=True)
class Feature:
    """Which releases kassign models for one group type: ``first`` (major, minor) and every line after it up to
    :data:`NEWEST_LINE`; ``early_access`` the lines that had it as early access (not modelled); ``came`` says
    when it came, for messages to a release without it."""

    name: str
    what: str
    first: tuple[int, int]
    early_access: tuple[tuple[int, int], ...] = ()
    came: str = ""
    shown: tuple[tuple[tuple[int, int], str], ...] = ()

    @property
    def lines(self) -> tuple[tuple[int, int], ...]:
        return tuple(line for line in LINES if line >= self.first)

    def modelled(self) -> str:
        """The releases modelled, in words, for messages."""
        if self.first == OLDEST_LINE:
            return f"every release from {_dotted(OLDEST_LINE)} to {_dotted(NEWEST_LINE)}"
        shown = dict(self.shown)
        names = [shown.get(line, _dotted(line)) for line in self.lines]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        return f"Kafka {listed}"


FEATURES: dict[str, Feature] = {
    "consumer": Feature("consumer", "the consumer protocol's assignors (KIP-848)", (4, 0),
                        early_access=((3, 7), (3, 8), (3, 9)),
                        came="KIP-848 came with 3.7 as early access and with 4.0 for production",
                        shown=(((4, 0), "4.0 (4.0.0, and 4.0.1 and later)"),)),
    # 4.1's simple assignor is an earlier rule than 4.2's (rule(release, SHARE_SIMPLE) picks it)
    "share": Feature("share", "share groups (KIP-932)", (4, 1), early_access=((4, 0),),
                     came="KIP-932 came with 4.0 as early access and with 4.1 for production"),
    "streams": Feature("streams", "streams groups (KIP-1071)", (4, 2), early_access=((4, 1),),
                       came="KIP-1071 came with 4.1 as early access and with 4.2 for production"),
    "classic": Feature("classic", "the classic protocol's assignors", OLDEST_LINE),
}

# what a message calls each group type, and whether that is a plural
_NOUNS = {"consumer": ("consumer protocol (KIP-848)", False), "share": ("share groups (KIP-932)", True),
          "streams": ("streams groups (KIP-1071)", True)}


def has_feature(release: KafkaRelease, feature: str) -> bool:
    """Whether kassign models ``feature`` for ``release`` (a release line kassign models)."""
    return release.line in FEATURES[feature].lines


def what_release_has(release: KafkaRelease) -> str:
    """What kassign models of ``release``, in words: ``"Kafka 3.9 has the classic protocol's assignors, ..."``."""
    parts = ["the classic protocol's assignors", "Kafka Streams' classic task assignors",
             "the producer's partitioners", "replica placement"]
    parts += [FEATURES[name].what for name in ("consumer", "share", "streams") if has_feature(release, name)]
    return f"Kafka {release.label} has " + ", ".join(parts[:-1]) + " and " + parts[-1]


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
            f"\"MAJOR.MINOR.PATCH\", such as \"{DEFAULT_KAFKA_VERSION}\" or \"3.9.2\"; got {shown(version)}")
    major, minor, patch = match.groups()
    return KafkaRelease(int(major), int(minor), None if patch is None else int(patch))


def modelled_release(version: ReleaseLike) -> KafkaRelease:
    """The release ``version`` names, checked to be one of the lines kassign models (3.0 to 4.4)."""
    release = _parse(version)
    if release.line not in LINES:
        newer = release.line > NEWEST_LINE
        raise UnsupportedReleaseError(
            f"Kafka {release.label} is not a release kassign models: it models every release from "
            f"{_dotted(OLDEST_LINE)} to {_dotted(NEWEST_LINE)} (3.0-3.9, 4.0-4.4)"
            f"{', and 4.4 is the newest it knows' if newer else ''}; pass one of those as kafka_version "
            f"(--kafka-version)")
    return release


def release_for(version: ReleaseLike, feature: str) -> KafkaRelease:
    """The release ``version`` names, checked to be one kassign models for ``feature`` (a key of
    :data:`FEATURES`); otherwise :class:`UnsupportedReleaseError`, saying what that release has."""
    try:
        spec = FEATURES[feature]
    except KeyError:
        raise KassignError(f"no feature called {feature!r}; kassign models {', '.join(FEATURES)}") from None
    release = modelled_release(version)
    if release.line in spec.lines:
        return release
    noun, plural = _NOUNS[feature]
    if release.line in spec.early_access:
        lead = f"Kafka {release.label}'s {noun} {'were' if plural else 'was'} early access, which kassign does not model"
    else:
        lead = f"Kafka {release.label} has no {noun.split(' (')[0]} ({spec.came})"
    raise UnsupportedReleaseError(
        f"{lead}; kassign models {spec.what} in {spec.modelled()}; {what_release_has(release)}; "
        f"pass another kafka_version (--kafka-version)")


def _parse(version: ReleaseLike) -> KafkaRelease:
    # lru_cache needs a hashable argument; anything else is simply not a release
    try:
        hash(version)
    except TypeError:
        raise UnsupportedReleaseError(
            f"kafka_version (--kafka-version) must be a Kafka release such as \"{DEFAULT_KAFKA_VERSION}\" or "
            f"\"3.9.2\"; got {shown(version)}") from None
    return parse_release(version)


def _dotted(line: tuple[int, int]) -> str:
    return f"{line[0]}.{line[1]}"


LATEST = parse_release(DEFAULT_KAFKA_VERSION)
