"""kassign.core.releases: which Kafka releases kassign models, per feature, and which rule each uses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kassign
from kassign.api import assign_flat
from kassign.core.releases import (
    BEFORE_KAFKA_14639,
    BEFORE_KAFKA_15022,
    BEFORE_KAFKA_15106,
    CLASSIC_CLAIMS,
    CLASSIC_RACKS,
    CLASSIC_STICKY,
    EXTRAS_TO_FIRST,
    KAFKA_14639,
    KAFKA_15022,
    KAFKA_15106,
    KAFKA_16277,
    KAFKA_20198,
    KAFKA_20665,
    KAFKA_20719,
    KEYLESS,
    KIP_480,
    KIP_794,
    KRAFT,
    KRAFT_EARLY_ACCESS,
    KIP_1123,
    KEYLESS_RACKS,
    NO_PRODUCER_RACKS,
    KRAFT_ONLY,
    KSTREAMS_CLIENT_TAGS,
    KSTREAMS_MOVEMENTS,
    KSTREAMS_RACK_AWARE,
    KRAFT_PRODUCTION,
    ADMIN_UTILS,
    FENCED_OR_REGISTERED,
    KAFKA_18798,
    KAFKA_19774,
    REASSIGN_GENERATE,
    STRIPED_MESSAGES,
    KSTREAMS_RACK_FLOW,
    KSTREAMS_STICKY_ROOM,
    KSTREAMS_TASK_ASSIGNORS,
    KSTREAMS_THREAD_SPLIT,
    BALANCE_SUBTOPOLOGY,
    BEFORE_KAFKA_12648,
    BEFORE_KAFKA_13600,
    HIGH_AVAILABILITY_ONLY,
    KAFKA_12648,
    KAFKA_12959,
    KAFKA_13600,
    KIP_708,
    KIP_924,
    MIN_TRAFFIC_ONLY,
    MOVEMENTS_POLLED,
    NO_CLIENT_TAGS,
    NO_RACK_AWARE,
    LINES,
    PLACEMENT,
    RACK_AWARE,
    RACK_UNAWARE,
    RULE_CHANGES,
    STREAMS_COORDINATOR,
    STREAMS_STICKY,
    STREAMS_STICKY_42,
    TARGET_THEN_REVOKE,
    THREADS_TIMES_FLOOR,
    ZOOKEEPER_OR_KRAFT,
    has_change,
    rule_at_least,
    FEATURES,
    HASH_THEN_ROUND_ROBIN,
    KAFKA_18688,
    SHARE_SIMPLE,
    SHARING_QUOTAS,
    UNIFORM_HOMOGENEOUS,
    KafkaRelease,
    UnsupportedReleaseError,
    parse_release,
    release_for,
    rule,
)

# 5 partitions, 3 members iterating A, B, C: 4.0.0 gives the extras to A and B, later releases to B and C
FRESH = {"topics": {"t": 5}, "members": {m: {"topics": ["t"]} for m in "ABC"}}


# -- parsing ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, release, label", [
    ("4.3", KafkaRelease(4, 3), "4.3"),
    ("4.0.0", KafkaRelease(4, 0, 0), "4.0.0"),
    ("4.0", KafkaRelease(4, 0), "4.0"),
    ("4.3.1", KafkaRelease(4, 3, 1), "4.3.1"),
    (" 4.1 ", KafkaRelease(4, 1), "4.1"),
    ("04.02", KafkaRelease(4, 2), "4.2"),
])
def test_accepted_strings(text: str, release: KafkaRelease, label: str) -> None:
    assert parse_release(text) == release
    assert release.label == label == str(release)


@pytest.mark.parametrize("bad", ["", "4", "4.", "4.3.", "4.3.1.2", "v4.3", "4.3-rc1", "4.3.x", "four", "4,3",
                                 None, 4.3, 4, ["4.3"], {"v": "4.3"}])
def test_malformed_releases_say_the_form(bad: object) -> None:
    with pytest.raises(UnsupportedReleaseError, match=r"kafka_version .* such as \"4.4\" or \"3.9.2\"") as caught:
        release_for(bad, "consumer")  # type: ignore[arg-type]
    assert isinstance(caught.value, kassign.KassignError)
    assert "\n" not in str(caught.value)


@given(st.integers(0, 9999), st.integers(0, 9999), st.none() | st.integers(0, 9999))
def test_any_number_triple_round_trips(major: int, minor: int, patch: int | None) -> None:
    text = f"{major}.{minor}" if patch is None else f"{major}.{minor}.{patch}"
    release = parse_release(text)
    assert (release.major, release.minor, release.patch) == (major, minor, patch)
    assert release.label == text


# -- what each feature accepts ---------------------------------------------------------------------

@pytest.mark.parametrize("feature, accepted, refused", [
    ("consumer", ["4.0.0", "4.0.1", "4.0", "4.0.2", "4.1", "4.1.1", "4.2", "4.3", "4.3.1", "4.4", "4.4.0"],
     ["3.9", "3.7", "3.0", "4.5", "5.0", "4.10", "2.8"]),
    ("share", ["4.1", "4.1.0", "4.1.1", "4.2", "4.2.0", "4.3", "4.3.1", "4.4"],
     ["4.0", "4.0.0", "4.0.1", "4.5", "3.9"]),
    ("streams", ["4.2", "4.2.0", "4.3", "4.3.1", "4.4", "4.4.0"], ["4.1", "4.1.1", "4.0", "4.5", "3.9"]),
    ("classic", ["3.0", "3.0.0", "3.4.1", "3.9", "3.9.2", "4.0.0", "4.0", "4.1", "4.3", "4.4", "4.4.7"],
     ["2.8", "2.8.2", "4.5", "5.0", "3.10", "1.0"]),
])
def test_each_feature_accepts_its_releases(feature: str, accepted: list[str], refused: list[str]) -> None:
    for text in accepted:
        assert release_for(text, feature) == parse_release(text)
    for text in refused:
        with pytest.raises(UnsupportedReleaseError):
            release_for(text, feature)


@pytest.mark.parametrize("version", ["2.8", "4.5", "5.0", "3.10", "0.11"])
def test_a_release_outside_3_0_to_4_4_names_the_range(version: str) -> None:
    for feature in FEATURES:
        with pytest.raises(UnsupportedReleaseError) as caught:
            release_for(version, feature)
        message = str(caught.value)
        assert message.startswith(f"Kafka {version} is not a release kassign models")
        assert "every release from 3.0 to 4.4" in message
        assert "kafka_version" in message and "--kafka-version" in message and "\n" not in message


@pytest.mark.parametrize("feature, version, lead, modelled", [
    ("consumer", "3.9", "Kafka 3.9's consumer protocol (KIP-848) was early access, which kassign does not model",
     "Kafka 4.0 (4.0.0, and 4.0.1 and later), 4.1, 4.2, 4.3 and 4.4"),
    ("consumer", "3.7.0", "Kafka 3.7.0's consumer protocol (KIP-848) was early access", "4.1, 4.2, 4.3 and 4.4"),
    ("consumer", "3.6", "Kafka 3.6 has no consumer protocol (KIP-848 came with 3.7 as early access",
     "4.1, 4.2, 4.3 and 4.4"),
    ("share", "4.0", "Kafka 4.0's share groups (KIP-932) were early access, which kassign does not model",
     "Kafka 4.1, 4.2, 4.3 and 4.4"),
    ("share", "4.0.1", "Kafka 4.0.1's share groups (KIP-932) were early access", "Kafka 4.1, 4.2, 4.3 and 4.4"),
    ("share", "3.9", "Kafka 3.9 has no share groups (KIP-932 came with 4.0", "Kafka 4.1, 4.2, 4.3 and 4.4"),
    ("streams", "4.1", "Kafka 4.1's streams groups (KIP-1071) were early access", "Kafka 4.2, 4.3 and 4.4"),
    ("streams", "3.4.0", "Kafka 3.4.0 has no streams groups", "Kafka 4.2, 4.3 and 4.4"),
])
def test_a_feature_the_release_lacks_says_what_the_release_has(feature: str, version: str, lead: str,
                                                                modelled: str) -> None:
    with pytest.raises(UnsupportedReleaseError) as caught:
        release_for(version, feature)
    message = str(caught.value)
    assert message.startswith(lead) and modelled in message and "\n" not in message
    assert f"Kafka {version} has the classic protocol's assignors" in message
    assert "--kafka-version" in message


def test_what_each_release_has_grows_with_the_release() -> None:
    from kassign.core.releases import what_release_has

    assert "consumer protocol" not in what_release_has(parse_release("3.9"))
    assert "consumer protocol" in what_release_has(parse_release("4.0.0"))
    assert "share groups" not in what_release_has(parse_release("4.0"))
    assert "share groups" in what_release_has(parse_release("4.1"))
    assert "streams groups" not in what_release_has(parse_release("4.1"))
    assert "streams groups" in what_release_has(parse_release("4.4"))


@pytest.mark.parametrize("version, expected", [
    ("4.1", HASH_THEN_ROUND_ROBIN), ("4.1.0", HASH_THEN_ROUND_ROBIN), ("4.1.2", HASH_THEN_ROUND_ROBIN),
    ("4.2", SHARING_QUOTAS), ("4.2.0", SHARING_QUOTAS), ("4.3", SHARING_QUOTAS), ("4.3.1", SHARING_QUOTAS),
    ("4.4", SHARING_QUOTAS),
])
def test_share_simple_rule_per_release(version: str, expected: str) -> None:
    # every 4.1 patch keeps the hash-then-round-robin rule: KAFKA-19362/19363 went to 4.2 only
    assert rule(release_for(version, "share"), SHARE_SIMPLE) == expected


def test_unknown_feature_is_an_error() -> None:
    with pytest.raises(kassign.KassignError, match="consumer, share, streams, classic"):
        release_for("4.3", "kraft")
    assert set(FEATURES) == {"consumer", "share", "streams", "classic"}


# -- which rule each release uses ------------------------------------------------------------------

@pytest.mark.parametrize("version, expected", [
    ("4.0.0", EXTRAS_TO_FIRST),
    ("4.0.1", KAFKA_18688),
    ("4.0.2", KAFKA_18688),
    ("4.0", KAFKA_18688),  # a line without a patch is its latest patch
    ("4.1", KAFKA_18688),
    ("4.1.0", KAFKA_18688),
    ("4.2", KAFKA_18688),
    ("4.3", KAFKA_18688),
    ("4.3.1", KAFKA_18688),
])
def test_uniform_homogeneous_rule_per_release(version: str, expected: str) -> None:
    release = release_for(version, "consumer")
    assert rule(release, UNIFORM_HOMOGENEOUS) == expected
    assert release.has_kafka_18688 == (expected == KAFKA_18688)


def test_at_least_treats_a_bare_line_as_its_latest_patch() -> None:
    assert KafkaRelease(4, 0).at_least(4, 0, 1) and KafkaRelease(4, 0).at_least(4, 0, 99)
    assert not KafkaRelease(4, 0).at_least(4, 1)
    assert KafkaRelease(4, 0, 1).at_least(4, 0, 1) and not KafkaRelease(4, 0, 0).at_least(4, 0, 1)
    assert KafkaRelease(4, 1, 0).at_least(4, 0, 1) and KafkaRelease(4, 3).at_least(4, 3, 1)


def test_unknown_rule_is_an_error() -> None:
    with pytest.raises(kassign.KassignError, match="uniform-homogeneous"):
        rule(KafkaRelease(4, 3), "sticky")


@pytest.mark.parametrize("version, racks, sticky", [
    ("3.0.0", RACK_UNAWARE, BEFORE_KAFKA_14639), ("3.0", RACK_UNAWARE, BEFORE_KAFKA_14639),
    ("3.3.2", RACK_UNAWARE, BEFORE_KAFKA_14639), ("3.4.0", RACK_UNAWARE, BEFORE_KAFKA_14639),
    ("3.4.1", RACK_UNAWARE, KAFKA_14639), ("3.4", RACK_UNAWARE, KAFKA_14639),  # the backport
    ("3.5.0", RACK_AWARE, KAFKA_14639), ("3.5.1", RACK_AWARE, KAFKA_14639), ("3.6.2", RACK_AWARE, KAFKA_14639),
    ("3.6", RACK_AWARE, KAFKA_14639), ("3.7.0", RACK_AWARE, KAFKA_14639),
    ("3.7.1", RACK_AWARE, KAFKA_16277), ("3.7", RACK_AWARE, KAFKA_16277), ("3.9.2", RACK_AWARE, KAFKA_16277),
    ("4.0.0", RACK_AWARE, KAFKA_16277), ("4.4", RACK_AWARE, KAFKA_16277),
])
def test_classic_rules_per_release(version: str, racks: str, sticky: str) -> None:
    release = release_for(version, "classic")
    assert rule(release, CLASSIC_RACKS) == racks and rule(release, CLASSIC_STICKY) == sticky
    assert rule_at_least(release, CLASSIC_STICKY, KAFKA_14639) == (sticky != BEFORE_KAFKA_14639)


@pytest.mark.parametrize("version, claims", [
    ("3.0.0", BEFORE_KAFKA_15106), ("3.4.0", BEFORE_KAFKA_15106), ("3.4.1", BEFORE_KAFKA_15106),
    ("3.4", BEFORE_KAFKA_15106), ("3.5.0", BEFORE_KAFKA_15106), ("3.5.1", BEFORE_KAFKA_15106),
    ("3.5.2", KAFKA_15106), ("3.5", KAFKA_15106),  # the backport to the 3.5 line
    ("3.6.0", KAFKA_15106), ("3.7.0", KAFKA_15106), ("3.9", KAFKA_15106), ("4.4", KAFKA_15106),
])
def test_classic_claims_rule_per_release(version: str, claims: str) -> None:
    assert rule(release_for(version, "classic"), CLASSIC_CLAIMS) == claims


@pytest.mark.parametrize("version, keyless, placement", [
    ("3.0", KIP_480, ZOOKEEPER_OR_KRAFT), ("3.2.3", KIP_480, ZOOKEEPER_OR_KRAFT),
    ("3.3.0", KIP_794, ZOOKEEPER_OR_KRAFT), ("3.9", KIP_794, ZOOKEEPER_OR_KRAFT),
    ("4.0.0", KIP_794, KRAFT_ONLY), ("4.4", KIP_794, KRAFT_ONLY),
])
def test_producer_and_placement_rules_per_release(version: str, keyless: str, placement: str) -> None:
    release = release_for(version, "classic")
    assert rule(release, KEYLESS) == keyless and rule(release, PLACEMENT) == placement


@pytest.mark.parametrize("version, racks", [
    ("3.0", NO_PRODUCER_RACKS), ("3.3", NO_PRODUCER_RACKS), ("4.3", NO_PRODUCER_RACKS),
    ("4.3.1", NO_PRODUCER_RACKS), ("4.4.0", KIP_1123), ("4.4", KIP_1123),
])
def test_the_producers_rack_awareness_came_with_4_4(version: str, racks: str) -> None:
    release = release_for(version, "classic")
    assert rule(release, KEYLESS_RACKS) == racks
    assert rule(release, KEYLESS) == (KIP_480 if version == "3.0" else KIP_794)  # KIP-1123 builds on KIP-794


# KRaft early access before 3.3 (KIP-833); the striped placer's reworded refusals from 4.3.0 (KAFKA-19774, not in any
# 4.2 patch: 4.2.1's StripedReplicaPlacer still has the old words); --generate on the striped placer from 4.1.0
# (KAFKA-18798: every 4.0 patch, 4.0.2 included, still calls AdminUtils)
@pytest.mark.parametrize("version, kraft, messages, generate", [
    ("3.0", KRAFT_EARLY_ACCESS, FENCED_OR_REGISTERED, ADMIN_UTILS),
    ("3.2.3", KRAFT_EARLY_ACCESS, FENCED_OR_REGISTERED, ADMIN_UTILS),
    ("3.3.0", KRAFT_PRODUCTION, FENCED_OR_REGISTERED, ADMIN_UTILS),
    ("3.9", KRAFT_PRODUCTION, FENCED_OR_REGISTERED, ADMIN_UTILS),
    ("4.0", KRAFT_PRODUCTION, FENCED_OR_REGISTERED, ADMIN_UTILS),
    ("4.0.2", KRAFT_PRODUCTION, FENCED_OR_REGISTERED, ADMIN_UTILS),
    ("4.1.0", KRAFT_PRODUCTION, FENCED_OR_REGISTERED, KAFKA_18798),
    ("4.2", KRAFT_PRODUCTION, FENCED_OR_REGISTERED, KAFKA_18798),
    ("4.3.0", KRAFT_PRODUCTION, KAFKA_19774, KAFKA_18798),
    ("4.4", KRAFT_PRODUCTION, KAFKA_19774, KAFKA_18798),
])
def test_kraft_and_replica_placement_rules_per_release(version: str, kraft: str, messages: str, generate: str) -> None:
    release = release_for(version, "classic")
    assert rule(release, KRAFT) == kraft
    assert rule(release, STRIPED_MESSAGES) == messages and rule(release, REASSIGN_GENERATE) == generate


@pytest.mark.parametrize("version, streams, room, flow, coordinator", [
    ("4.2", STREAMS_STICKY_42, THREADS_TIMES_FLOOR, KAFKA_15022, TARGET_THEN_REVOKE),
    ("4.3.1", STREAMS_STICKY_42, THREADS_TIMES_FLOOR, KAFKA_15022, TARGET_THEN_REVOKE),
    ("4.4", KAFKA_20719, KAFKA_20198, KAFKA_15022, KAFKA_20665),
    ("4.4.0", KAFKA_20719, KAFKA_20198, KAFKA_15022, KAFKA_20665),
])
def test_streams_rules_per_release(version: str, streams: str, room: str, flow: str, coordinator: str) -> None:
    release = release_for(version, "streams")
    assert rule(release, STREAMS_STICKY) == streams and rule(release, STREAMS_COORDINATOR) == coordinator
    assert rule(release, KSTREAMS_STICKY_ROOM) == room and rule(release, KSTREAMS_RACK_FLOW) == flow


def test_kafka_streams_rack_flow_changed_in_3_7() -> None:
    assert rule(release_for("3.6.2", "classic"), KSTREAMS_RACK_FLOW) == BEFORE_KAFKA_15022
    assert rule(release_for("3.7.0", "classic"), KSTREAMS_RACK_FLOW) == KAFKA_15022


@pytest.mark.parametrize("version, assignors, tags, racks, movements, split", [
    ("3.0.0", HIGH_AVAILABILITY_ONLY, NO_CLIENT_TAGS, NO_RACK_AWARE, BEFORE_KAFKA_13600, BEFORE_KAFKA_12648),
    ("3.0", HIGH_AVAILABILITY_ONLY, NO_CLIENT_TAGS, NO_RACK_AWARE, BEFORE_KAFKA_13600, BEFORE_KAFKA_12648),
    ("3.1.0", HIGH_AVAILABILITY_ONLY, NO_CLIENT_TAGS, NO_RACK_AWARE, BEFORE_KAFKA_13600, KAFKA_12648),
    ("3.2.0", HIGH_AVAILABILITY_ONLY, KIP_708, NO_RACK_AWARE, KAFKA_13600, KAFKA_12959),
    ("3.2", HIGH_AVAILABILITY_ONLY, KIP_708, NO_RACK_AWARE, KAFKA_13600, KAFKA_12959),
    ("3.3.0", HIGH_AVAILABILITY_ONLY, KIP_708, NO_RACK_AWARE, MOVEMENTS_POLLED, KAFKA_12959),
    ("3.5.1", HIGH_AVAILABILITY_ONLY, KIP_708, NO_RACK_AWARE, MOVEMENTS_POLLED, KAFKA_12959),
    ("3.6.0", HIGH_AVAILABILITY_ONLY, KIP_708, MIN_TRAFFIC_ONLY, MOVEMENTS_POLLED, KAFKA_12959),
    ("3.7.0", HIGH_AVAILABILITY_ONLY, KIP_708, BALANCE_SUBTOPOLOGY, MOVEMENTS_POLLED, KAFKA_12959),
    ("3.8.0", KIP_924, KIP_708, BALANCE_SUBTOPOLOGY, MOVEMENTS_POLLED, KAFKA_12959),
    ("4.4", KIP_924, KIP_708, BALANCE_SUBTOPOLOGY, MOVEMENTS_POLLED, KAFKA_12959),
])
def test_kafka_streams_classic_rules_per_release(version: str, assignors: str, tags: str, racks: str, movements: str,
                                                 split: str) -> None:
    release = release_for(version, "classic")
    assert rule(release, KSTREAMS_TASK_ASSIGNORS) == assignors and rule(release, KSTREAMS_CLIENT_TAGS) == tags
    assert rule(release, KSTREAMS_RACK_AWARE) == racks and rule(release, KSTREAMS_MOVEMENTS) == movements
    assert rule(release, KSTREAMS_THREAD_SPLIT) == split
    assert rule_at_least(release, KSTREAMS_MOVEMENTS, KAFKA_13600) == (movements != BEFORE_KAFKA_13600)


@given(st.sampled_from(LINES), st.none() | st.integers(0, 12))
def test_a_line_without_a_patch_answers_as_its_newest_patch(line: tuple[int, int], patch: int | None) -> None:
    # every rule of "3.4" is the rule of a high enough 3.4 patch, and no rule goes back within a line
    bare = KafkaRelease(*line)
    high = KafkaRelease(*line, 99)
    for name in RULE_CHANGES:
        assert rule(bare, name) == rule(high, name)
        if patch is not None:
            assert rule_at_least(high, name, rule(KafkaRelease(*line, patch), name))


def test_has_change_reads_backports_per_line() -> None:
    since = ((3, 4, 1), (3, 5, 0))
    assert not has_change(KafkaRelease(3, 4, 0), since) and has_change(KafkaRelease(3, 4, 1), since)
    assert not has_change(KafkaRelease(3, 3), since) and has_change(KafkaRelease(3, 5, 0), since)
    assert has_change(KafkaRelease(4, 4), since) and has_change(KafkaRelease(3, 0), ())


# -- the API ---------------------------------------------------------------------------------------

def test_the_api_defaults_to_44_and_takes_the_release() -> None:
    new = {"A": [("t", 0)], "B": [("t", 1), ("t", 2)], "C": [("t", 3), ("t", 4)]}
    old = {"A": [("t", 0), ("t", 1)], "B": [("t", 2), ("t", 3)], "C": [("t", 4)]}
    assert kassign.assign("uniform", FRESH, protocol="consumer") == new
    assert kassign.assign("uniform", FRESH, protocol="consumer", kafka_version="4.3") == new
    assert kassign.assign("uniform", FRESH, protocol="consumer", kafka_version="4.0") == new
    assert kassign.assign("uniform", FRESH, protocol="consumer", kafka_version="4.0.1") == new
    assert kassign.assign("uniform", FRESH, protocol="consumer", kafka_version="4.0.0") == old
    table = kassign.assign_table("uniform", FRESH, protocol="consumer", kafka_version="4.0.0")
    assert table.column("member").to_pylist() == ["A", "A", "B", "B", "C"]
    flat = assign_flat("uniform", FRESH, protocol="consumer", kafka_version="4.0.0")
    assert flat.to_dict(["A", "B", "C"]) == old


@pytest.mark.parametrize("protocol, version", [("consumer", "4.5"), ("consumer", "3.9"), ("classic", "2.8"),
                                               ("consumer", "latest"), ("classic", ""), ("classic", "4.5")])
def test_the_api_refuses_releases_it_does_not_model(protocol: str, version: str) -> None:
    for call in (kassign.assign, kassign.assign_table, assign_flat):
        with pytest.raises(kassign.KassignError, match="kafka_version"):
            call("range", FRESH, protocol=protocol, kafka_version=version)


@pytest.mark.parametrize("version", ["4.0.0", "4.0", "4.1", "4.2", "4.3", "4.4"])
def test_classic_answers_alike_in_every_4x(version: str) -> None:
    for strategy in ("range", "roundrobin", "cooperative-sticky"):
        assert kassign.assign(strategy, FRESH, kafka_version=version) == kassign.assign(strategy, FRESH)
