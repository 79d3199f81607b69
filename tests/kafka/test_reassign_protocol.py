"""AlterPartitionReassignments, IncrementalAlterConfigs and ElectLeaders: the real bytes of a 3-broker Kafka 4.3.1
cluster (``shared/captures/kafka-4.3.1-cluster/``) decode to every fact their files record, kassign's requests
are the Java AdminClient's byte for byte, answers re-encode byte for byte, and every version round-trips
(hypothesis)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.kafka import groups_protocol as G
from kassign.kafka import reassign_protocol as R
from kassign.kafka.flexible import FlexReader, encode_request
from tests.kafka.replay_balance import CAPTURES, have_captures, load

needs_captures = pytest.mark.skipif(not have_captures(), reason=f"Kafka 4.3.1 cluster captures not found at {CAPTURES}")
ALTER_FILES = ["alter-partition-reassignments-cancel.json", "alter-partition-reassignments-errors.json",
               "alter-partition-reassignments-start.json"]
CONFIG_FILES = [f"incremental-alter-configs-{what}-{whom}.json" for what in ("throttle", "clear")
                for whom in ("broker-1", "broker-2", "broker-3", "topic")]
ELECT_FILES = ["elect-leaders-preferred.json"]
ALL_FILES = ALTER_FILES + CONFIG_FILES + ELECT_FILES
# the Java AdminClient's exception class for each error code the captures hold
JAVA_ERRORS = {None: 0, "UnknownTopicOrPartitionException": 3, "InvalidReplicaAssignmentException": 39,
               "ElectionNotNeededException": 84}


def answer_of(name: str):
    doc = load(name)
    request, response = base64.b64decode(doc["request_b64"]), base64.b64decode(doc["response_b64"])
    correlation, answer = G.decode_response(doc["api_key"], doc["api_version"], response, R.DECODERS)
    assert correlation == int.from_bytes(request[4:8], "big")
    return doc, answer


def request_of(doc: dict):
    reader = FlexReader(base64.b64decode(doc["request_b64"]), False)
    assert (reader.int16(), reader.int16()) == (doc["api_key"], doc["api_version"])
    reader.int32()
    assert reader.string() == doc["client_id"]
    reader.flexible = True
    reader.tags()
    asked = R.REQUEST_DECODERS[doc["api_key"]](reader, doc["api_version"])
    reader.end()
    return asked


# -- the facts of each file ---------------------------------------------------------------------------------------

@needs_captures
@pytest.mark.parametrize("name", ALTER_FILES)
def test_alter_reassignments_capture_has_its_facts(name):
    doc, answer = answer_of(name)
    want = doc["decoded"]
    assert (answer.error, answer.message, answer.allow_replication_factor_change) == (0, None, True)
    assert [(r.topic, r.partition, r.error, r.message) for r in answer.results] == [
        (r["topic"], r["partition"], JAVA_ERRORS[r["error"]], r["message"]) for r in want["results"]]
    moves, timeout, allow = request_of(doc)
    assert [(m.topic, m.partition, m.replicas) for m in moves] == [
        (m["topic"], m["partition"], m["replicas"]) for m in want["request"]["moves"]]
    assert allow is want["request"].get("allow_rf_change", True) and timeout > 0


@needs_captures
def test_cancel_sends_a_null_replica_list():
    moves, _, _ = request_of(load("alter-partition-reassignments-cancel.json"))
    assert moves == [R.Reassignment("kc-move", 2, None)]


@needs_captures
def test_alter_reassignments_errors_name_the_codes():
    _, answer = answer_of("alter-partition-reassignments-errors.json")
    assert [(r.topic, R.error_name(r.error)) for r in answer.results] == [
        ("kc-no-such-topic", "UNKNOWN_TOPIC_OR_PARTITION"), ("kc-small", "INVALID_REPLICA_ASSIGNMENT")]


@needs_captures
@pytest.mark.parametrize("name", CONFIG_FILES)
def test_incremental_alter_configs_capture_has_its_facts(name):
    doc, answer = answer_of(name)
    want = doc["decoded"]
    kinds = {"topic": R.TOPIC, "broker": R.BROKER}
    assert [(r.resource_type, r.name, r.error, r.message) for r in answer] == [
        (kinds[key.partition(":")[0]], key.partition(":")[2], JAVA_ERRORS[v["error"]], v["message"])
        for key, v in want["results"].items()]
    resources, validate = request_of(doc)
    assert validate is False
    assert {f"{ {R.TOPIC: 'topic', R.BROKER: 'broker'}[r.resource_type]}:{r.name}":
            [{"name": c.name, "value": c.value, "op": R.OPERATIONS[c.operation]} for c in r.changes]
            for r in resources} == want["request"]


@needs_captures
def test_elect_leaders_capture_has_its_facts():
    doc, answer = answer_of("elect-leaders-preferred.json")
    want = doc["decoded"]
    assert answer.error == 0
    assert sorted((r.topic, r.partition, r.error, r.message) for r in answer.results) == sorted(
        (r["topic"], r["partition"], JAVA_ERRORS[r["error"]], r["message"]) for r in want["results"])
    partitions, election, timeout = request_of(doc)
    assert election == R.PREFERRED and timeout > 0
    assert sorted((t, p) for t, parts in partitions for p in parts) == sorted(
        tuple(name.rsplit("-", 1)[0:1]) + (int(name.rsplit("-", 1)[1]),) for name in want["before"])


# -- requests byte for byte, answers re-encoded byte for byte -----------------------------------------------------

@needs_captures
@pytest.mark.parametrize("name", ALL_FILES)
def test_request_encodes_byte_for_byte(name):
    doc = load(name)
    key, version = doc["api_key"], doc["api_version"]
    asked = request_of(doc)
    if key == 45:
        moves, timeout, allow = asked
        body = R.encode_alter_partition_reassignments_request(version, moves, timeout, allow)
    elif key == 44:
        body = R.encode_incremental_alter_configs_request(version, *asked)
    else:
        partitions, election, timeout = asked
        body = R.encode_elect_leaders_request(version, partitions, election, timeout)
    captured = base64.b64decode(doc["request_b64"])
    correlation = int.from_bytes(captured[4:8], "big")
    assert encode_request(key, version, correlation, doc["client_id"], body) == captured


@needs_captures
@pytest.mark.parametrize("name", ALL_FILES)
def test_answer_reencodes_byte_for_byte(name):
    doc, answer = answer_of(name)
    key, version = doc["api_key"], doc["api_version"]
    body = {45: R.encode_alter_partition_reassignments, 44: R.encode_incremental_alter_configs,
            43: R.encode_elect_leaders}[key](version, answer)
    assert body == base64.b64decode(doc["response_b64"])[5:]


@needs_captures
@pytest.mark.parametrize("name", ALL_FILES)
def test_answer_cut_short_is_one_malformed_line(name):
    doc = load(name)
    frame = base64.b64decode(doc["response_b64"])
    for cut in range(5, len(frame), max(1, len(frame) // 100)):
        with pytest.raises(G.MalformedAnswer, match=r"v\d+ does not parse"):
            G.decode_response(doc["api_key"], doc["api_version"], frame[:cut], R.DECODERS)
    with pytest.raises(G.MalformedAnswer, match="left over"):
        G.decode_response(doc["api_key"], doc["api_version"], frame + b"\x00", R.DECODERS)


# -- round trips, every version -----------------------------------------------------------------------------------

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
int32 = st.integers(-(2**31), 2**31 - 1)
messages = st.one_of(st.none(), names)


def grouped(items: list, key=lambda item: item[0]) -> list:
    """Items of one topic listed apart come back together: the wire groups them by topic."""
    return [i for t in dict.fromkeys(key(i) for i in items) for i in items if key(i) == t]


def results(draw) -> list[R.ItemResult]:
    return grouped(draw(st.lists(st.builds(R.ItemResult, names, int32, st.integers(-1, 120), messages), max_size=5)))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_alter_reassignments_round_trip_every_version(data):
    version = data.draw(st.integers(0, 1))
    allow = data.draw(st.booleans()) if version >= 1 else True
    moves = grouped(data.draw(st.lists(st.builds(R.Reassignment, names, int32,
                                                 st.one_of(st.none(), st.lists(int32, max_size=4))), max_size=5)))
    timeout = data.draw(int32)
    reader = FlexReader(R.encode_alter_partition_reassignments_request(version, moves, timeout, allow), True)
    assert R.decode_alter_partition_reassignments_request(reader, version) == (moves, timeout, allow)
    reader.end()
    answer = R.AlterReassignmentsAnswer(data.draw(st.integers(-1, 120)), data.draw(messages), results(data.draw),
                                        allow, data.draw(st.integers(0, 2**31 - 1)))
    reader = FlexReader(R.encode_alter_partition_reassignments(version, answer), True)
    assert R.decode_alter_partition_reassignments(reader, version) == answer
    reader.end()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_incremental_alter_configs_round_trip_every_version(data):
    version = data.draw(st.integers(0, 1))
    change = st.builds(R.ConfigChange, names, st.sampled_from(sorted(R.OPERATIONS)), messages)
    resources = data.draw(st.lists(st.builds(R.ConfigAlteration, st.sampled_from([R.TOPIC, R.BROKER]), names,
                                             st.lists(change, max_size=3)), max_size=4))
    validate = data.draw(st.booleans())
    reader = FlexReader(R.encode_incremental_alter_configs_request(version, resources, validate), version >= 1)
    assert R.decode_incremental_alter_configs_request(reader, version) == (resources, validate)
    reader.end()
    answer = data.draw(st.lists(st.builds(R.ResourceResult, st.integers(-1, 120), messages,
                                          st.sampled_from([R.TOPIC, R.BROKER]), names), max_size=4))
    reader = FlexReader(R.encode_incremental_alter_configs(version, answer), version >= 1)
    assert R.decode_incremental_alter_configs(reader, version) == answer
    reader.end()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_elect_leaders_round_trip_every_version(data):
    version = data.draw(st.integers(0, 2))
    election = data.draw(st.sampled_from([R.PREFERRED, R.UNCLEAN])) if version >= 1 else R.PREFERRED
    partitions = data.draw(st.one_of(st.none(), st.lists(st.tuples(names, st.lists(int32, max_size=3)),
                                                         max_size=3)))
    timeout = data.draw(int32)
    reader = FlexReader(R.encode_elect_leaders_request(version, partitions, election, timeout), version >= 2)
    assert R.decode_elect_leaders_request(reader, version) == (partitions, election, timeout)
    reader.end()
    answer = R.ElectionAnswer(data.draw(st.integers(-1, 120)) if version >= 1 else 0, results(data.draw),
                              data.draw(st.integers(0, 2**31 - 1)))
    reader = FlexReader(R.encode_elect_leaders(version, answer), version >= 2)
    assert R.decode_elect_leaders(reader, version) == answer
    reader.end()


def test_elect_leaders_v0_knows_only_the_preferred_election():
    with pytest.raises(ValueError, match="preferred"):
        R.encode_elect_leaders_request(0, None, R.UNCLEAN)
