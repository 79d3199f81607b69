"""The Kafka release a broker runs, inferred from its ApiVersions answer: for every release line from 3.0 to 4.4, in
KRaft and (3.x) ZooKeeper mode, an ApiVersions v3 answer built from that release's facts (``data/api-versions-by-
release.json``: what its request schemas, MetadataVersion and BrokerFeatures say a broker lists) is encoded,
decoded by kassign's client as a broker's bytes would be, and must name its own line; the real answer of a Kafka
4.3.1 broker (``../shared/captures/kafka-4.3.1/api-versions.json``) must name 4.3."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest

from kassign.kafka import groups
from kassign.kafka import groups_protocol as G
from kassign.kafka.flexible import FlexWriter
from kassign.kafka.release_inference import infer, infer_release
from tests.conftest import REPO

FACTS = json.loads((Path(__file__).parent / "data" / "api-versions-by-release.json").read_text())
CAPTURE = REPO.parent / "shared" / "captures" / "kafka-4.3.1" / "api-versions.json"
KRAFT_LINES = list(FACTS["kraft"])  # 3.0 ... 3.9, 4.0.0, 4.0, 4.1 ... 4.4
ZK_LINES = list(FACTS["zookeeper"])  # 3.0 ... 3.9


def encoded_answer(versions: dict, supported: dict | None = None, finalized: dict | None = None) -> bytes:
    """An ApiVersions v3 answer as a broker sends it (after the size): correlation id, then the body with the
    supported features (tag 0), the finalized epoch (tag 1) and finalized features (tag 2) as tagged fields."""
    w = FlexWriter(True).int16(0)
    w.array(sorted((int(k), v) for k, v in versions.items()),
            lambda w, e: w.int16(e[0]).int16(e[1][0]).int16(e[1][1]).tags())
    w.int32(0)
    fields = {}
    if supported:
        fields[0] = FlexWriter(True).array(sorted(supported.items()),
                                           lambda w, e: w.string(e[0]).int16(e[1][0]).int16(e[1][1]).tags()).bytes()
        fields[1] = struct.pack(">q", 12)
        fields[2] = FlexWriter(True).array(sorted((finalized or {}).items()),
                                           lambda w, e: w.string(e[0]).int16(e[1][1]).int16(e[1][0]).tags()).bytes()
    w.tags(fields)
    return struct.pack(">i", 7) + w.bytes()


def hints(versions: dict, metadata_version: list | None = None) -> dict:
    supported = {"metadata.version": tuple(metadata_version)} if metadata_version else None
    finalized = {"metadata.version": (metadata_version[1], metadata_version[1])} if metadata_version else None
    _, answer = G.decode_response(18, 3, encoded_answer(versions, supported, finalized))
    return groups.hints_from(answer, "broker:9092", 3)


def line_of(release: str) -> str:
    return ".".join(release.split(".")[:2])


# -- one answer per release line -------------------------------------------------------------------------------------

@pytest.mark.parametrize("release", KRAFT_LINES)
def test_a_kraft_broker_names_its_release(release: str) -> None:
    found = infer(hints(FACTS["kraft"][release], FACTS["metadata_version"].get(release, [None])[0]))
    assert (found.release, found.mode) == (release, "kraft"), found.why
    assert f"Kafka {line_of(release)}" in found.why
    if release in ("3.0", "3.1", "3.2"):
        assert "early access" in found.why and "names no metadata.version" in found.why
    else:
        assert "metadata.version up to level" in found.why


@pytest.mark.parametrize("release", ZK_LINES)
def test_a_zookeeper_mode_broker_names_its_release(release: str) -> None:
    found = infer(hints(FACTS["zookeeper"][release]))
    assert (found.release, found.mode) == (release, "zookeeper"), found.why
    assert found.why.startswith("a ZooKeeper-mode broker") and f"Kafka {release}" in found.why


@pytest.mark.parametrize("release", [r for r in KRAFT_LINES if r in FACTS["metadata_version"]])
def test_unstable_feature_versions_still_name_the_release(release: str) -> None:
    # unstable.feature.versions.enable offers a newer line's metadata.version levels; the API versions settle it
    found = infer(hints(FACTS["kraft"][release], FACTS["metadata_version"][release][1]))
    assert found.release == release, found.why
    if FACTS["metadata_version"][release][1] != FACTS["metadata_version"][release][0]:
        assert "unstable.feature.versions.enable" in found.why


@pytest.mark.parametrize("release", KRAFT_LINES)
def test_unstable_api_versions_alone_still_name_the_release(release: str) -> None:
    mv = FACTS["metadata_version"].get(release, [None])[0]
    found = infer(hints(FACTS["kraft_unstable_apis"][release], mv))
    assert found.release == release, found.why


@pytest.mark.parametrize("release, named", [("3.5", "3.6"), ("3.6", "3.7")])
def test_where_unstable_api_versions_make_two_zookeeper_lines_alike_the_reason_says_so(release, named) -> None:
    # ZooKeeper-mode 3.5 offers AddPartitionsToTxn v4 (3.6's only new version) with unstable.api.versions.enable;
    # 3.6 likewise offers OffsetCommit v9: the newer line is named, and the reason says what would make it older
    found = infer(hints(FACTS["zookeeper_unstable_apis"][release]))
    assert found.release == named and "unless the broker enables unstable API versions" in found.why


def test_4_1_with_both_testing_settings_is_the_one_answer_that_cannot_be_told_and_says_so() -> None:
    found = infer(hints(FACTS["kraft_unstable_apis"]["4.1"], FACTS["metadata_version"]["4.1"][1]))
    assert found.release == "4.2" and "unless the broker enables unstable API versions" in found.why


# -- patch releases ----------------------------------------------------------------------------------------------------

def test_4_0_0_is_told_from_later_4_0_patches_by_joingroup() -> None:
    first = infer(hints(FACTS["kraft"]["4.0.0"], FACTS["metadata_version"]["4.0.0"][0]))
    later = infer(hints(FACTS["kraft"]["4.0"], FACTS["metadata_version"]["4.0"][0]))
    assert (first.release, later.release) == ("4.0.0", "4.0")
    assert "KAFKA-19444" in first.why and "4.0.1 or later" in later.why


@pytest.mark.parametrize("release", ["3.4", "3.7"])
def test_patches_that_answer_alike_are_said_so(release: str) -> None:
    found = infer(hints(FACTS["kraft"][release], FACTS["metadata_version"][release][0]))
    assert found.release == release and "patch release not told apart" in found.why
    assert infer(hints(FACTS["zookeeper"][release])).why.endswith("latest rule is used)")


# -- answers that name no release ------------------------------------------------------------------------------------

def test_a_level_newer_than_4_4_is_not_named() -> None:
    found, why = infer_release(hints(FACTS["kraft"]["4.4"], [7, 40]))
    assert found is None and "newer than 4.4" in why


@pytest.mark.parametrize("top", [22, 24, 28, 32])
def test_a_top_level_no_release_offers_is_not_named(top: int) -> None:
    found, why = infer_release(hints(FACTS["kraft"]["4.0"], [7, top]))
    assert found is None and f"level {top}" in why and "no Kafka release" in why


def test_metadata_version_and_api_versions_that_disagree_are_not_named() -> None:
    found, why = infer_release(hints(FACTS["kraft"]["4.3"], [7, 25]))  # 4.0's level, 4.3's APIs
    assert found is None and "disagree" in why


def test_a_kraft_answer_of_3_3_or_later_without_metadata_version_is_not_apache_kafka() -> None:
    found, why = infer_release(hints(FACTS["kraft"]["3.9"]))
    assert found is None and "names no metadata.version" in why and "not Apache Kafka" in why


def test_an_answer_missing_a_lines_versions_is_not_named() -> None:
    versions = {k: v for k, v in FACTS["kraft"]["4.3"].items() if k not in ("1", "3")}  # no Fetch, no Metadata
    found, why = infer_release(hints(versions, [7, 30]))
    assert found is None and "not those of any Kafka release" in why


def test_brokers_that_are_not_kafka() -> None:
    assert infer_release({"supported_features": {}, "api_versions": {}})[0] is None
    found, why = infer_release({"supported_features": {}, "api_versions": {3: [0, 12]}})  # librdkafka's mock
    assert found is None and "names no metadata.version" in why
    older = {k: v for k, v in FACTS["zookeeper"]["3.0"].items()}
    older.update({"2": [0, 6], "9": [0, 7], "10": [0, 3], "65": None, "66": None})  # 2.8's versions
    older = {k: v for k, v in older.items() if v is not None}
    found, why = infer_release(hints(older))
    assert found is None and "older than Kafka 3.0" in why


def test_string_keys_as_json_gives_them_are_read_as_api_keys() -> None:
    facts = {"api_versions": FACTS["kraft"]["4.4"], "supported_features": {"metadata.version": [7, 30]}}
    assert infer_release(facts)[0] == "4.4"


# -- the real answer of a Kafka 4.3.1 broker ---------------------------------------------------------------------------

def test_the_captured_kafka_4_3_1_answer_names_4_3() -> None:
    if not CAPTURE.exists():
        pytest.skip(f"captures not found at {CAPTURE}")
    doc = json.loads(CAPTURE.read_text())
    _, answer = G.decode_response(18, 4, base64.b64decode(doc["response_b64"]))
    found = infer(groups.hints_from(answer, "127.0.0.1:9092", 4))
    assert (found.release, found.mode) == ("4.3", "kraft")
    assert "level 30 (4.3-IV0)" in found.why and "DescribeLogDirs v5, first in 4.3" in found.why
    assert "not ApiVersions v5, first in 4.4" in found.why
    # the facts file agrees with the real broker on every API it lists (kassign's own decoder, the same bytes)
    assert {int(k): tuple(v) for k, v in FACTS["kraft"]["4.3"].items()} == answer.versions


# -- what is inferred reaches the answers about a live cluster ----------------------------------------------------------

@pytest.mark.parametrize("mode, release", [("zookeeper", "3.6"), ("kraft", "3.1"), ("kraft", "4.0.0"),
                                           ("kraft", "4.4")])
def test_a_live_cluster_is_answered_as_the_release_its_broker_names(mode: str, release: str) -> None:
    from kassign.kafka.client import Cluster
    from kassign.kafka.config import ClientSettings
    from kassign.kafka.live_group import choose_release
    from tests.kafka.replay_broker import ReplayBroker

    table = FACTS[mode][release]
    versions = {int(k): tuple(v) for k, v in table.items()}
    mv = FACTS["metadata_version"].get(release, [None])[0] if mode == "kraft" else None
    supported = {"metadata.version": tuple(mv)} if mv else None
    body = encoded_answer(table, supported, {"metadata.version": (mv[1], mv[1])} if mv else None)[4:]
    broker = ReplayBroker(versions, {18: body})
    try:
        with Cluster(broker.bootstrap, ClientSettings(request_timeout=5)) as cluster:
            found, source, why = choose_release(cluster, None)
        assert (found, source) == (release, "inferred") and f"Kafka {line_of(release)}" in why
        # the API versions kassign asked with: its own newest that the broker speaks (v3 for every 3.x broker)
        assert [v for k, v, _ in broker.requests if k == 18][-1] == min(3 if release < "3.9" else 4, 4)
        with Cluster(broker.bootstrap, ClientSettings(request_timeout=5)) as cluster:
            assert choose_release(cluster, "3.9.2") == ("3.9.2", "given", "as given (--kafka-version)")
    finally:
        broker.stop()
