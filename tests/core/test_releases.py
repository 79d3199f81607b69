"""kassign.core.releases: which Kafka releases kassign models, per feature, and which rule each uses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kassign
from kassign.api import assign_flat
from kassign.core.releases import (
    EXTRAS_TO_FIRST,
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
    with pytest.raises(UnsupportedReleaseError, match=r"kafka_version .* such as \"4.3\" or \"4.0.0\"") as caught:
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
    ("consumer", ["4.0.0", "4.0.1", "4.0", "4.0.2", "4.1", "4.1.1", "4.2", "4.3", "4.3.1"],
     ["4.4", "3.9", "5.0", "4.10"]),
    ("share", ["4.1", "4.1.0", "4.1.1", "4.2", "4.2.0", "4.3", "4.3.1"], ["4.0", "4.0.0", "4.0.1", "4.4", "3.9"]),
    ("streams", ["4.2", "4.2.0", "4.3", "4.3.1"], ["4.1", "4.1.1", "4.0", "4.4", "3.9"]),
    ("classic", ["4.0.0", "4.0", "4.1", "4.3", "4.4", "4.9.2"], ["3.9", "3.9.1", "5.0", "2.8"]),
])
def test_each_feature_accepts_its_releases(feature: str, accepted: list[str], refused: list[str]) -> None:
    for text in accepted:
        assert release_for(text, feature) == parse_release(text)
    for text in refused:
        with pytest.raises(UnsupportedReleaseError):
            release_for(text, feature)


@pytest.mark.parametrize("version", ["4.4", "3.9", "5.0"])
def test_an_unmodelled_consumer_release_names_the_releases_modelled(version: str) -> None:
    with pytest.raises(UnsupportedReleaseError) as caught:
        release_for(version, "consumer")
    message = str(caught.value)
    assert f"Kafka {version} is not a release kassign models" in message
    for modelled in ("4.0.0", "4.0.1", "4.1", "4.2", "4.3"):
        assert modelled in message
    assert "kafka_version" in message and "--kafka-version" in message


@pytest.mark.parametrize("feature, version, modelled", [
    ("share", "4.0", ["4.1", "4.2", "4.3"]),
    ("share", "4.0.1", ["4.1", "4.2", "4.3"]),
    ("streams", "4.1", ["4.2", "4.3"]),
])
def test_early_access_releases_are_said_to_be_early_access(feature: str, version: str, modelled: list[str]) -> None:
    with pytest.raises(UnsupportedReleaseError, match="early access, which kassign does not model") as caught:
        release_for(version, feature)
    assert all(m in str(caught.value) for m in modelled)


@pytest.mark.parametrize("version, expected", [
    ("4.1", HASH_THEN_ROUND_ROBIN), ("4.1.0", HASH_THEN_ROUND_ROBIN), ("4.1.2", HASH_THEN_ROUND_ROBIN),
    ("4.2", SHARING_QUOTAS), ("4.2.0", SHARING_QUOTAS), ("4.3", SHARING_QUOTAS), ("4.3.1", SHARING_QUOTAS),
])
def test_share_simple_rule_per_release(version: str, expected: str) -> None:
    # every 4.1 patch keeps the hash-then-round-robin rule: KAFKA-19362/19363 went to 4.2 only
    assert rule(release_for(version, "share"), SHARE_SIMPLE) == expected


def test_share_groups_of_4_0_name_4_1_among_the_releases_modelled() -> None:
    with pytest.raises(UnsupportedReleaseError, match="early access") as caught:
        release_for("4.0.1", "share")
    assert "Kafka 4.1, 4.2 and 4.3" in str(caught.value)


def test_classic_names_every_4x() -> None:
    with pytest.raises(UnsupportedReleaseError, match=r"every Kafka 4\.x release"):
        release_for("3.9", "classic")


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


# -- the API ---------------------------------------------------------------------------------------

def test_the_api_defaults_to_43_and_takes_the_release() -> None:
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


@pytest.mark.parametrize("protocol, version", [("consumer", "4.4"), ("consumer", "3.9"), ("classic", "3.9"),
                                               ("consumer", "latest"), ("classic", "")])
def test_the_api_refuses_releases_it_does_not_model(protocol: str, version: str) -> None:
    for call in (kassign.assign, kassign.assign_table, assign_flat):
        with pytest.raises(kassign.KassignError, match="kafka_version"):
            call("range", FRESH, protocol=protocol, kafka_version=version)


@pytest.mark.parametrize("version", ["4.0.0", "4.0", "4.1", "4.2", "4.3", "4.4"])
def test_classic_answers_alike_in_every_4x(version: str) -> None:
    for strategy in ("range", "roundrobin", "cooperative-sticky"):
        assert kassign.assign(strategy, FRESH, kafka_version=version) == kassign.assign(strategy, FRESH)
