"""Which Kafka release a broker runs, from its ApiVersions answer, where the answer names one release line.

The rule, in three facts a broker's ApiVersions answer carries (each release's own source, read at its release
commit: ``MetadataVersion``, ``BrokerFeatures`` and the ``validVersions`` of every request schema):

1. **metadata.version** (KRaft brokers from 3.3). Among its *supported* features a KRaft broker lists the
   ``metadata.version`` levels its software can run. The highest one names the release line, because every line
   adds levels and, from 3.7, offers the newest of them only with ``unstable.feature.versions.enable`` (3.7:
   ``unstable.metadata.versions.enable``), a testing setting:

   | release | highest level offered | with unstable versions enabled |
   | --- | --- | --- |
   | 3.3 | 7 (3.3-IV3) | the same (3.3 to 3.6 offer every level they define) |
   | 3.4 | 8 (3.4-IV0) | the same |
   | 3.5 | 11 (3.5-IV2) | the same |
   | 3.6 | 14 (3.6-IV2) | the same |
   | 3.7 | 19 (3.7-IV4) | 20 (3.8-IV0) |
   | 3.8 | 20 (3.8-IV0) | 21 (3.9-IV0) |
   | 3.9 | 21 (3.9-IV0) | 23 (4.0-IV1) |
   | 4.0 | 25 (4.0-IV3) | 26 (4.1-IV0) |
   | 4.1 | 27 (4.1-IV1) | 29 (4.2-IV1) |
   | 4.2 | 29 (4.2-IV1) | 30 (4.3-IV0) |
   | 4.3 | 30 (4.3-IV0) | 31 (4.4-IV0) |
   | 4.4 | 30 (4.3-IV0: the 4.4 branch as stored still offers 4.3's newest level) | 33 (4.4-IV2) |

   So a level alone can name two lines (20: 3.8, or 3.7 with unstable versions; 30: 4.2 with unstable versions,
   4.3 or 4.4). The *finalized* level (what the cluster was upgraded to) is not used: a cluster upgraded to new
   software may still run an older metadata version, while its group coordinator already runs the new assignors.

2. **API versions.** Every line raises the highest version of some APIs. For each line, kassign keeps the
   (API, version) pairs that first appear in it, among APIs a broker always answers itself (not those it
   forwards to the KRaft controller, whose versions it intersects with the controller's, nor the inter-broker
   or optional ones), separately for the two kinds of broker, whose API lists differ:

   - a ZooKeeper-mode broker (3.x) lists LeaderAndIsr (API 4), which no KRaft broker does, and no
     metadata.version (its features are empty);
   - a KRaft broker (3.0 to 3.2 were early access and list no features either).

   A broker is at least the newest line whose pairs it meets, and older than the next line that has pairs it does
   not meet. Pairs that an older line offers with ``unstable.api.versions.enable`` (also a testing setting) are
   weaker evidence: ZooKeeper-mode 3.6 differs from 3.5 only by AddPartitionsToTxn v4, which 3.5 offers with
   that setting, so such an answer is 3.6 "unless the broker enables unstable API versions". Where the API
   versions do not move between two lines (KRaft 3.3 and 3.4), metadata.version tells them apart. A broker that
   does not meet some pair of every line below the one it meets is not answering as Apache Kafka does, and no
   release is named.

3. **Patch releases.** Kafka 4.0.0 lists JoinGroup from v2; 4.0.1 brought v0 and v1 back (KAFKA-19444), so
   "4.0.0" and "4.0" (4.0.1 or later) are told apart, which matters for the consumer protocol's ``uniform``
   assignor (KAFKA-18688 came with 4.0.1). No other patch release changes what ApiVersions says: 3.4.0 and 3.4.1,
   3.7.0 and 3.7.1 (whose classic sticky assignors differ) cannot be told apart, and the line's latest patch is
   taken, the reason says so.

Combined: metadata.version (where there is one) gives the candidate lines, and the API versions pick among them;
without one, the API versions alone give the line (ZooKeeper mode: 3.0 to 3.9; KRaft: 3.0 to 3.2). A broker
whose two facts disagree, or whose highest level no release offers, is not named.

Example: a Kafka 4.3.1 broker supports metadata.version 7 to 30 (4.2 with unstable versions, 4.3 or 4.4) and
lists DescribeLogDirs up to v5 (first in 4.3) but ApiVersions only up to v4 (v5 came with 4.4), so
``infer_release`` gives ``"4.3"`` with the reason ``"the broker supports metadata.version up to level 30
(4.3-IV0) and its API versions are 4.3's (DescribeLogDirs v5, first in 4.3; not ApiVersions v5, first in 4.4):
Kafka 4.3"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# every release line kassign names, oldest first
_LINES = ("3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1", "4.2", "4.3", "4.4")

# release line -> (highest metadata.version level offered by default, highest with unstable feature versions)
_METADATA_TOP: dict[str, tuple[int, int]] = {
    "3.3": (7, 7), "3.4": (8, 8), "3.5": (11, 11), "3.6": (14, 14), "3.7": (19, 20), "3.8": (20, 21),
    "3.9": (21, 23), "4.0": (25, 26), "4.1": (27, 29), "4.2": (29, 30), "4.3": (30, 31), "4.4": (30, 33),
}

# metadata.version level -> its name
_LEVEL_NAMES = {level: name for level, name in enumerate(
    ["", "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1",
     "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0",
     "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1", "4.3-IV0",
     "4.4-IV0", "4.4-IV1", "4.4-IV2"]) if name}

_API_NAMES = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 4: "LeaderAndIsr", 5: "StopReplica",
              6: "UpdateMetadata", 8: "OffsetCommit", 9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup",
              13: "LeaveGroup", 15: "DescribeGroups", 16: "ListGroups", 18: "ApiVersions", 22: "InitProducerId",
              24: "AddPartitionsToTxn", 25: "AddOffsetsToTxn", 26: "EndTxn", 28: "TxnOffsetCommit",
              29: "DescribeAcls", 35: "DescribeLogDirs", 41: "DescribeDelegationToken", 42: "DeleteGroups",
              48: "DescribeClientQuotas", 50: "DescribeUserScramCredentials", 60: "DescribeCluster",
              65: "DescribeTransactions", 66: "ListTransactions"}

Pairs = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class _Marks:
    """(API key, highest version) pairs that first appear in a release line: ``strong`` ones no older line offers
    even with unstable API versions enabled, ``weak`` ones an older line offers only with that setting."""

    strong: Pairs = ()
    weak: Pairs = ()


# ZooKeeper-mode brokers (the APIs of the "zkBroker" listener), 3.0 to 3.9; 3.0's pairs are new since 2.8
_ZK_MARKS: dict[str, _Marks] = {
    "3.0": _Marks(((2, 7), (9, 8), (10, 4), (65, 0), (66, 0))),
    "3.1": _Marks(((1, 13), (3, 12))),
    "3.2": _Marks(((4, 6), (11, 9), (13, 5), (35, 3))),
    "3.3": _Marks(((29, 3), (35, 4), (41, 3))),
    "3.4": _Marks(((4, 7), (5, 4), (6, 8))),
    "3.5": _Marks(((1, 15), (2, 8))),
    "3.6": _Marks((), ((24, 4),)),
    "3.7": _Marks(((0, 10), (1, 16), (9, 9), (60, 1)), ((8, 9),)),
    "3.8": _Marks(((0, 11), (10, 5), (16, 5), (22, 5), (24, 5), (25, 4), (26, 4), (28, 4), (66, 1))),
    "3.9": _Marks(((1, 17), (2, 9), (10, 6), (18, 4))),
}

# KRaft brokers (the "broker" listener), 3.0 to 4.4; 3.4 offers exactly 3.3's versions
_KRAFT_MARKS: dict[str, _Marks] = {
    "3.0": _Marks(((2, 7), (9, 8), (10, 4), (22, 4), (24, 3), (25, 3), (26, 3), (28, 3), (29, 2), (48, 1), (65, 0),
                   (66, 0))),
    "3.1": _Marks(((1, 13), (3, 12))),
    "3.2": _Marks(((11, 9), (13, 5), (35, 3))),
    "3.3": _Marks(((29, 3), (35, 4))),
    "3.4": _Marks(),
    "3.5": _Marks(((1, 15), (2, 8), (50, 0))),
    "3.6": _Marks(((41, 3),), ((24, 4),)),
    "3.7": _Marks(((0, 10), (1, 16), (9, 9), (60, 1)), ((8, 9),)),
    "3.8": _Marks(((0, 11), (10, 5), (16, 5), (22, 5), (24, 5), (25, 4), (26, 4), (28, 4), (66, 1))),
    "3.9": _Marks(((1, 17), (2, 9), (10, 6), (18, 4))),
    "4.0": _Marks(((0, 12), (2, 10), (3, 13), (15, 6), (26, 5), (28, 5), (60, 2))),
    "4.1": _Marks(((0, 13), (1, 18), (66, 2))),
    "4.2": _Marks(((2, 11),), ((8, 10), (9, 10))),
    "4.3": _Marks(((35, 5),)),
    "4.4": _Marks(((18, 5), (28, 6), (42, 3))),
}

_LEADER_AND_ISR = 4
_JOIN_GROUP = 11
_PATCH_NOTES = {
    "3.4": "3.4.0 and 3.4.1 (KAFKA-14639, classic sticky assignors) answer ApiVersions alike: the 3.4 line's "
           "latest rule is used",
    "3.7": "3.7.0 and 3.7.1 (KAFKA-16277 and KAFKA-15170, classic sticky assignors) answer ApiVersions alike: "
           "the 3.7 line's latest rule is used",
}


@dataclass(frozen=True)
class Inferred:
    """What :func:`infer` found: ``release`` (``"4.3"``, ``"4.0.0"``, or None where no one release is named),
    ``mode`` (``"kraft"``, ``"zookeeper"`` or None) and ``why``, one sentence saying from what."""

    release: str | None
    why: str
    mode: str | None = None


@dataclass(frozen=True)
class _Window:
    """What the API versions say: at least ``low`` (None: not even 3.0), at most ``high``; ``sure``: the newest line
    whose strong pairs are met (``low`` is newer where it rests on weak pairs only, which an older line offers with
    unstable API versions); ``evidence``: the pairs met at ``low``; ``missing``: a line below ``low`` none of whose
    pairs is met (the answer is not Apache Kafka's); ``next_pair``: one pair of the next line, not met."""

    low: str | None
    sure: str | None
    high: str
    evidence: Pairs
    missing: str | None
    next_pair: tuple[str, tuple[int, int]] | None

    @property
    def weak(self) -> bool:
        return self.low != self.sure


def infer_release(hints: Mapping[str, Any]) -> tuple[str | None, str]:
    """``(release or None, why)`` from :func:`kassign.kafka.groups.release_hints`'s answer; None where the
    broker's answer does not name one release kassign models."""
    found = infer(hints)
    return found.release, found.why


def infer(hints: Mapping[str, Any]) -> Inferred:
    """The release a broker runs, from :func:`kassign.kafka.groups.release_hints`'s answer (see the module
    docstring for the rule)."""
    versions = _versions(hints.get("api_versions") or {})
    supported = (hints.get("supported_features") or {}).get("metadata.version")
    if not versions:
        return Inferred(None, "the broker listed no API versions, so its release cannot be told")
    if supported:
        return _kraft(versions, int(supported[1]))
    if _LEADER_AND_ISR in versions:
        return _zookeeper(versions)
    return _early_kraft(versions)


def _versions(raw: Mapping[Any, Any]) -> dict[int, tuple[int, int]]:
    return {int(k): (int(v[0]), int(v[1])) for k, v in raw.items()}


def _window(versions: Mapping[int, tuple[int, int]], marks: Mapping[str, _Marks]) -> _Window:
    lines = list(marks)

    def met(pairs: Pairs) -> Pairs:
        return tuple((k, v) for k, v in pairs if k in versions and versions[k][1] >= v)

    low, sure, evidence = None, None, ()
    for line in lines:
        strong, weak_met = met(marks[line].strong), met(marks[line].weak)
        if strong:
            sure = line
        if strong or weak_met:
            low, evidence = line, strong or weak_met
    missing = None
    if low is not None:
        for line in lines[:lines.index(low)]:
            pairs = marks[line].strong + marks[line].weak
            if pairs and not met(pairs):
                missing = line
                break
    high, next_pair = lines[-1], None
    start = 0 if low is None else lines.index(low) + 1
    for line in lines[start:]:
        pairs = marks[line].strong + marks[line].weak
        if pairs:
            high = lines[lines.index(line) - 1] if lines.index(line) > 0 else line
            next_pair = (line, pairs[0])
            break
    return _Window(low, sure, high, evidence, missing, next_pair)


def _pair(pair: tuple[int, int]) -> str:
    key, version = pair
    return f"{_API_NAMES.get(key, f'API {key}')} v{version}"


def _api_words(window: _Window) -> str:
    """What the API versions showed, for a reason: the pairs met, and the next line's pair not met."""
    words = f"{_pair(window.evidence[0])}, first in {window.low}"
    if window.next_pair is not None:
        line, pair = window.next_pair
        words += f"; not {_pair(pair)}, first in {line}"
    return words


def _patch(line: str, versions: Mapping[int, tuple[int, int]]) -> tuple[str, str]:
    """The release to answer as within ``line``, and what the reason adds about its patch."""
    if line == "4.0":
        if versions.get(_JOIN_GROUP, (0, 0))[0] >= 2:
            return "4.0.0", " (JoinGroup from v2: 4.0.0, since 4.0.1 lists v0 and v1 again, KAFKA-19444)"
        return "4.0", " (JoinGroup from v0: 4.0.1 or later, KAFKA-19444)"
    note = _PATCH_NOTES.get(line)
    return line, f" (patch release not told apart: {note})" if note else ""


def _unstable_api_words(window: _Window) -> str:
    if not window.weak:
        return ""
    return (f", unless the broker enables unstable API versions (then it may be the line before: "
            f"{_pair(window.evidence[0])} is offered by an older line only with unstable.api.versions.enable)")


def _kraft(versions: Mapping[int, tuple[int, int]], top: int) -> Inferred:
    level = f"level {top}" + (f" ({_LEVEL_NAMES[top]})" if top in _LEVEL_NAMES else "")
    lead = f"the broker supports metadata.version up to {level}"
    candidates = [(line, False) for line, (default, _) in _METADATA_TOP.items() if default == top]
    candidates += [(line, True) for line, (default, unstable) in _METADATA_TOP.items()
                   if unstable == top and default != top]
    if not candidates:
        newest = max(unstable for _, unstable in _METADATA_TOP.values())
        if top > newest:
            return Inferred(None, f"{lead}: a release newer than 4.4, which kassign does not model", "kraft")
        return Inferred(None, f"{lead}, the highest level of no Kafka release from 3.3 to 4.4 (with or without "
                              "unstable feature versions)", "kraft")
    window = _window(versions, _KRAFT_MARKS)
    if window.low is None or window.missing is not None:
        return Inferred(None, f"{lead}, but its API versions are not those of any Kafka release (none of "
                              f"{window.missing or '3.0'}'s), so its release cannot be told", "kraft")
    order = list(_KRAFT_MARKS)
    floor = order.index(window.sure if window.sure is not None else window.low)
    fits = [(line, unstable) for line, unstable in candidates if floor <= order.index(line) <= order.index(window.high)]
    default = [line for line, unstable in candidates if not unstable]
    names = " and ".join(default) if default else ""
    offered = (f", which {names} offer{'s' if len(default) == 1 else ''}" if default else "") + "".join(
        f"{' (and' if default else ', which'} {line} offers with unstable feature versions{')' if default else ''}"
        for line, unstable in candidates if unstable)
    if not fits:
        return Inferred(None, f"{lead}{offered}, but its API versions are {window.low}'s or later "
                              f"({_api_words(window)}): the two disagree, so its release cannot be told", "kraft")
    # the API versions' own line before one that rests on unstable API versions; a default configuration first
    line, unstable = min(fits, key=lambda fit: (order.index(fit[0]) < order.index(window.low), fit[1]))
    release, patch = _patch(line, versions)
    setting = " (a testing setting: unstable.feature.versions.enable)" if unstable else ""
    if len(candidates) == 1 and not unstable:
        why = f"{lead}: Kafka {line}{patch}"
    elif line != window.low:
        why = (f"{lead}{offered}, and its API versions include {_pair(window.evidence[0])}, which {line} offers "
               f"only with unstable.api.versions.enable (first offered by default in {window.low}): Kafka {line}"
               f"{setting}{patch}")
    else:
        why = (f"{lead}{offered}, and its API versions are {line}'s ({_api_words(window)}): Kafka {line}{setting}"
               f"{patch}{_unstable_api_words(window)}")
    return Inferred(release, why, "kraft")


def _zookeeper(versions: Mapping[int, tuple[int, int]]) -> Inferred:
    lead = "a ZooKeeper-mode broker (it lists LeaderAndIsr and no metadata.version)"
    window = _window(versions, _ZK_MARKS)
    if window.low is None:
        return Inferred(None, f"{lead} older than Kafka 3.0, which kassign does not model", "zookeeper")
    if window.missing is not None:
        return Inferred(None, f"{lead} whose API versions are not those of any Kafka release (none of "
                              f"{window.missing}'s), so its release cannot be told", "zookeeper")
    release, patch = _patch(window.low, versions)
    return Inferred(release, f"{lead} with {window.low}'s API versions ({_api_words(window)}): Kafka {window.low}"
                             f"{patch}{_unstable_api_words(window)}", "zookeeper")


def _early_kraft(versions: Mapping[int, tuple[int, int]]) -> Inferred:
    lead = "the broker names no metadata.version and lists no LeaderAndIsr"
    window = _window(versions, _KRAFT_MARKS)
    if window.low is None or window.missing is not None:
        return Inferred(None, f"{lead}, and its API versions are not those of any Kafka release from 3.0 (not an "
                              "Apache Kafka broker, or one older than 3.0), so its release cannot be told")
    order = list(_KRAFT_MARKS)
    if order.index(window.low) > order.index("3.2"):
        return Inferred(None, f"{lead}, yet its API versions are {window.low}'s ({_api_words(window)}): every KRaft "
                              "broker from 3.3 names its metadata.version, so this is not Apache Kafka, and its "
                              "release cannot be told")
    release, patch = _patch(window.low, versions)
    return Inferred(release, f"{lead}: a KRaft broker of 3.0 to 3.2 (KRaft's early access), with {window.low}'s API "
                             f"versions ({_api_words(window)}): Kafka {window.low}{patch}", "kraft")
