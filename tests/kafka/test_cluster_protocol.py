"""DescribeLogDirs, DescribeCluster and DescribeConfigs: the real bytes of a 3-broker Kafka 4.3.1 cluster
(``shared/captures/kafka-4.3.1-cluster/``) decode to every fact their files record (what Kafka's Java AdminClient
made of them), kassign's requests are the AdminClient's byte for byte, and every version encodes and decodes back
to the same answer (hypothesis), older versions saying "not told" where they lack a field."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.kafka import cluster_protocol as C
from kassign.kafka import groups_protocol as G
from kassign.kafka.flexible import FlexReader, encode_request
from tests.kafka.replay_balance import CAPTURES, DECODERS, encode_metadata_answer, have_captures, load

needs_captures = pytest.mark.skipif(not have_captures(), reason=f"Kafka 4.3.1 cluster captures not found at {CAPTURES}")
LOG_DIR_FILES = ["describe-log-dirs-broker-1.json", "describe-log-dirs-broker-2.json",
                 "describe-log-dirs-broker-3.json", "describe-log-dirs-during-move.json"]
CONFIG_FILES = ["describe-configs-broker.json", "describe-configs-topic.json"]
REASSIGNMENT_FILES = ["list-partition-reassignments-done.json", "list-partition-reassignments-named.json",
                      "list-partition-reassignments-ongoing.json"]
ALL_FILES = LOG_DIR_FILES + CONFIG_FILES + REASSIGNMENT_FILES + ["describe-cluster.json", "metadata-racks.json"]


def answer_of(name: str):
    doc = load(name)
    request, response = base64.b64decode(doc["request_b64"]), base64.b64decode(doc["response_b64"])
    correlation, answer = G.decode_response(doc["api_key"], doc["api_version"], response, DECODERS)
    assert correlation == int.from_bytes(request[4:8], "big")
    return doc, answer


def request_body(doc: dict) -> FlexReader:
    reader = FlexReader(base64.b64decode(doc["request_b64"]), False)
    assert (reader.int16(), reader.int16()) == (doc["api_key"], doc["api_version"])
    reader.int32()
    assert reader.string() == doc["client_id"]
    reader.flexible = True
    reader.tags()
    return reader


# -- the facts of each file ---------------------------------------------------------------------------------------

@needs_captures
@pytest.mark.parametrize("name", LOG_DIR_FILES)
def test_log_dirs_capture_has_its_facts(name):
    doc, answer = answer_of(name)
    want = doc["decoded"]["log_dirs"]
    assert answer.error == 0
    assert [d.path for d in answer.log_dirs] == list(want)
    for d in answer.log_dirs:
        facts = want[d.path]
        assert d.error == 0 and facts["error"] is None
        assert (d.total_bytes, d.usable_bytes, d.cordoned) == (facts["total_bytes"], facts["usable_bytes"],
                                                               facts["is_cordoned"])
        got = sorted((r.topic, r.partition, r.size, r.offset_lag, r.is_future) for r in d.replicas)
        assert got == sorted((r["topic"], r["partition"], r["size"], r["offset_lag"], r["is_future"])
                             for r in facts["replicas"])


@needs_captures
def test_log_dirs_during_move_show_the_new_replica_partly_copied():
    doc, answer = answer_of("describe-log-dirs-during-move.json")
    sizes = {(r.topic, r.partition): (d.path, r.size, r.is_future) for d in answer.log_dirs for r in d.replicas}
    assert sizes[("kc-move", 0)] == ("/var/lib/kafka/node-3/data-0", 1046348, False)
    assert doc["decoded"]["leader_size_of_kc-move-0"] == 2118143


@needs_captures
def test_log_dirs_sizes_hold_the_written_bytes():
    """Every replica holds at least the value bytes written to it (1000-byte values plus batch overhead)."""
    for broker in (1, 2, 3):
        doc, answer = answer_of(f"describe-log-dirs-broker-{broker}.json")
        written = doc["decoded"]["written"]
        for d in answer.log_dirs:
            for r in d.replicas:
                facts = written.get(f"{r.topic}-{r.partition}")
                if facts:
                    assert facts["value_bytes"] <= r.size < facts["value_bytes"] * 1.1


@needs_captures
def test_describe_cluster_capture_has_its_facts():
    doc, answer = answer_of("describe-cluster.json")
    want = doc["decoded"]
    assert (answer.error, answer.cluster_id, answer.controller) == (0, want["cluster_id"], want["controller"])
    assert [(b.node_id, b.host, b.port, b.rack) for b in answer.brokers] == [
        (n["id"], n["host"], n["port"], n["rack"]) for n in want["nodes"]]
    assert not any(b.fenced for b in answer.brokers)


@needs_captures
@pytest.mark.parametrize("name", CONFIG_FILES)
def test_describe_configs_capture_has_its_facts(name):
    doc, answer = answer_of(name)
    (key, want), = doc["decoded"]["configs"].items()
    kind, _, resource = key.partition(":")
    (result,) = answer
    assert (result.error, result.resource_type, result.name) == (0, {"topic": C.TOPIC, "broker": C.BROKER}[kind],
                                                                 resource)
    got = sorted((c.name, c.value, c.source_name, c.sensitive, c.read_only) for c in result.configs)
    assert got == sorted((c["name"], c["value"], c["source"], c["sensitive"], c["read_only"]) for c in want)


@needs_captures
def test_describe_configs_shows_the_throttles():
    _, (broker,) = answer_of("describe-configs-broker.json")
    rates = {c.name: (c.value, c.source_name) for c in broker.configs if c.name.endswith("throttled.rate")}
    assert rates == {"leader.replication.throttled.rate": ("100000", "DYNAMIC_BROKER_CONFIG"),
                     "follower.replication.throttled.rate": ("100000", "DYNAMIC_BROKER_CONFIG")}
    assert len(broker.configs) == 342
    _, (topic,) = answer_of("describe-configs-topic.json")
    replicas = {c.name: c.value for c in topic.configs if c.name.endswith("throttled.replicas")}
    assert replicas == {"leader.replication.throttled.replicas": "0:1,0:2,1:2,1:3,2:1,2:3",
                        "follower.replication.throttled.replicas": "0:3,1:1,2:2"}


@needs_captures
def test_metadata_capture_has_racks_and_isr():
    doc, answer = answer_of("metadata-racks.json")
    want = doc["decoded"]
    assert {b.node_id: b.rack for b in answer.brokers} == {1: "rack-a", 2: "rack-b", 3: "rack-c"}
    for topic in answer.topics:
        facts = want["topics"][topic.name]
        assert topic.topic_id == facts["id"]
        for part, pf in zip(sorted(topic.partitions, key=lambda p: p.partition), facts["partitions"]):
            assert part.partition == pf["partition"]
            assert part.leader == pf["leader"]["id"]
            assert part.replicas == [n["id"] for n in pf["replicas"]]
            assert part.isr == [n["id"] for n in pf["isr"]]


@needs_captures
@pytest.mark.parametrize("name", REASSIGNMENT_FILES)
def test_reassignments_capture_has_its_facts(name):
    doc, answer = answer_of(name)
    assert (answer.error, answer.message) == (0, None)
    assert [(r.topic, r.partition, r.replicas, r.adding, r.removing) for r in answer.reassignments] == [
        (r["topic"], r["partition"], r["replicas"], r["adding_replicas"], r["removing_replicas"])
        for r in doc["decoded"]["reassignments"]]


@needs_captures
def test_reassignments_named_request_asks_for_one_partition():
    doc = load("list-partition-reassignments-named.json")
    reader = request_body(doc)
    topics, timeout = C.decode_list_partition_reassignments_request(reader, 0)
    assert topics == [("kc-move", [2])] and timeout > 0


# -- requests byte for byte, answers re-encoded byte for byte -----------------------------------------------------

@needs_captures
@pytest.mark.parametrize("name", LOG_DIR_FILES + CONFIG_FILES + REASSIGNMENT_FILES + ["describe-cluster.json"])
def test_request_encodes_byte_for_byte(name):
    doc = load(name)
    key, version = doc["api_key"], doc["api_version"]
    reader = request_body(doc)
    asked = C.REQUEST_DECODERS[key](reader, version)
    reader.end()
    if key == 35:
        body = C.encode_describe_log_dirs_request(version, asked)
    elif key == 60:
        body = C.encode_describe_cluster_request(version, *asked)
    elif key == 46:
        body = C.encode_list_partition_reassignments_request(version, *asked)
    else:
        body = C.encode_describe_configs_request(version, *asked)
    captured = base64.b64decode(doc["request_b64"])
    correlation = int.from_bytes(captured[4:8], "big")
    assert encode_request(key, version, correlation, doc["client_id"], body) == captured


@needs_captures
@pytest.mark.parametrize("name", ALL_FILES)
def test_answer_reencodes_byte_for_byte(name):
    doc, answer = answer_of(name)
    key, version = doc["api_key"], doc["api_version"]
    if key == 35:
        body = C.encode_describe_log_dirs(version, answer)
    elif key == 60:
        body = C.encode_describe_cluster(version, answer)
    elif key == 32:
        body = C.encode_describe_configs(version, answer)
    elif key == 46:
        body = C.encode_list_partition_reassignments(version, answer)
    else:
        body = encode_metadata_answer(version, answer)
    assert body == base64.b64decode(doc["response_b64"])[5:]


@needs_captures
@pytest.mark.parametrize("name", ALL_FILES)
def test_answer_cut_short_is_one_malformed_line(name):
    doc = load(name)
    frame = base64.b64decode(doc["response_b64"])
    for cut in range(5, len(frame), max(1, len(frame) // 200)):
        with pytest.raises(G.MalformedAnswer, match=r"v\d+ does not parse"):
            G.decode_response(doc["api_key"], doc["api_version"], frame[:cut], DECODERS)
    with pytest.raises(G.MalformedAnswer, match="left over"):
        G.decode_response(doc["api_key"], doc["api_version"], frame + b"\x00", DECODERS)


# -- older versions -----------------------------------------------------------------------------------------------

@needs_captures
@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_older_log_dirs_versions_do_not_tell_what_they_lack(version):
    _, answer = answer_of("describe-log-dirs-broker-3.json")
    again = C.decode_describe_log_dirs(FlexReader(C.encode_describe_log_dirs(version, answer), version >= 2), version)
    for old, new in zip(answer.log_dirs, again.log_dirs):
        assert new.replicas == old.replicas
        told = version >= 4
        assert (new.total_bytes, new.usable_bytes) == ((old.total_bytes, old.usable_bytes) if told else (-1, -1))
        assert new.cordoned is False


def test_offline_log_dir_decodes_with_its_error():
    answer = C.LogDirsAnswer(0, [C.LogDir(C.KAFKA_STORAGE_ERROR, "/data/bad", [], -1, -1),
                                 C.LogDir(0, "/data/good", [C.ReplicaLog("t", 0, 10, 0, False)], 100, 50)])
    for version in range(6):
        reader = FlexReader(C.encode_describe_log_dirs(version, answer), version >= 2)
        again = C.decode_describe_log_dirs(reader, version)
        reader.end()
        assert again.log_dirs[0].error == C.KAFKA_STORAGE_ERROR and again.log_dirs[0].replicas == []


# -- round trips, every version -----------------------------------------------------------------------------------

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)


@st.composite
def log_dirs_answers(draw, version: int):
    def log_dir():
        topics = draw(st.dictionaries(names, st.lists(st.tuples(int32, int64, int64, st.booleans()), max_size=3),
                                      max_size=3))
        replicas = [C.ReplicaLog(t, *p) for t, parts in topics.items() for p in parts]
        total, usable = (draw(int64), draw(int64)) if version >= 4 else (-1, -1)
        return C.LogDir(draw(st.integers(-1, 120)), draw(names), replicas, total, usable,
                        draw(st.booleans()) if version >= 5 else False)

    dirs = [log_dir() for _ in range(draw(st.integers(0, 3)))]
    return C.LogDirsAnswer(draw(st.integers(0, 100)) if version >= 3 else 0, dirs, draw(st.integers(0, 2**31 - 1)))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_log_dirs_round_trip_every_version(data):
    version = data.draw(st.integers(0, 5))
    answer = data.draw(log_dirs_answers(version))
    reader = FlexReader(C.encode_describe_log_dirs(version, answer), version >= 2)
    again = C.decode_describe_log_dirs(reader, version)
    reader.end()
    # replicas of one topic listed apart come back together (the wire groups them by topic)
    for d in answer.log_dirs:
        d.replicas = [r for t in dict.fromkeys(r.topic for r in d.replicas) for r in d.replicas if r.topic == t]
    assert again == answer
    topics = data.draw(st.one_of(st.none(), st.lists(st.tuples(names, st.lists(int32, max_size=3)), max_size=3)))
    reader = FlexReader(C.encode_describe_log_dirs_request(version, topics), version >= 2)
    assert C.decode_describe_log_dirs_request(reader, version) == topics
    reader.end()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_describe_cluster_round_trip_every_version(data):
    version = data.draw(st.integers(0, 2))
    brokers = [C.ClusterBroker(data.draw(int32), data.draw(names), data.draw(int32),
                               data.draw(st.one_of(st.none(), names)),
                               data.draw(st.booleans()) if version >= 2 else False)
               for _ in range(data.draw(st.integers(0, 4)))]
    answer = C.ClusterAnswer(data.draw(st.integers(-1, 100)), data.draw(st.one_of(st.none(), names)),
                             data.draw(names), data.draw(int32), brokers,
                             data.draw(st.integers(1, 2)) if version >= 1 else 1, data.draw(int32),
                             data.draw(st.integers(0, 2**31 - 1)))
    reader = FlexReader(C.encode_describe_cluster(version, answer), True)
    assert C.decode_describe_cluster(reader, version) == answer
    reader.end()
    asked = (data.draw(st.booleans()), data.draw(st.integers(1, 2)) if version >= 1 else 1,
             data.draw(st.booleans()) if version >= 2 else False)
    reader = FlexReader(C.encode_describe_cluster_request(version, *asked), True)
    assert C.decode_describe_cluster_request(reader, version) == asked


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_describe_configs_round_trip_every_version(data):
    version = data.draw(st.integers(0, 4))

    def entry():
        source = data.draw(st.integers(0, 8)) if version >= 1 else -1
        is_default = data.draw(st.booleans()) if version == 0 else source == 5
        synonyms = tuple(C.ConfigSynonym(data.draw(names), data.draw(st.one_of(st.none(), names)),
                                         data.draw(st.integers(0, 8)))
                         for _ in range(data.draw(st.integers(0, 2)))) if version >= 1 else ()
        return C.ConfigEntry(data.draw(names), data.draw(st.one_of(st.none(), names)), data.draw(st.booleans()),
                             is_default, source, data.draw(st.booleans()), synonyms,
                             data.draw(st.integers(0, 9)) if version >= 3 else 0,
                             data.draw(st.one_of(st.none(), names)) if version >= 3 else None)

    resources = [C.ConfigResource(data.draw(st.integers(-1, 100)), data.draw(st.one_of(st.none(), names)),
                                  data.draw(st.sampled_from([C.TOPIC, C.BROKER])), data.draw(names),
                                  [entry() for _ in range(data.draw(st.integers(0, 3)))])
                 for _ in range(data.draw(st.integers(0, 3)))]
    reader = FlexReader(C.encode_describe_configs(version, resources), version >= 4)
    assert C.decode_describe_configs(reader, version) == resources
    reader.end()
    wanted = [C.ConfigsWanted(data.draw(st.sampled_from([C.TOPIC, C.BROKER])), data.draw(names),
                              data.draw(st.one_of(st.none(), st.lists(names, max_size=3).map(tuple))))
              for _ in range(data.draw(st.integers(0, 3)))]
    flags = (data.draw(st.booleans()) if version >= 1 else False, data.draw(st.booleans()) if version >= 3 else False)
    reader = FlexReader(C.encode_describe_configs_request(version, wanted, *flags), version >= 4)
    assert C.decode_describe_configs_request(reader, version) == (wanted, *flags)
    reader.end()


def test_log_dirs_partition_with_unknown_tagged_fields_is_read_past_them():
    from kassign.kafka.flexible import FlexWriter

    w = FlexWriter(True).int32(0).int16(0)
    w.array([0], lambda w, _: (
        w.int16(0).string("/d"),
        w.array(["t"], lambda w, t: (
            w.string(t),
            w.array([(0, 5), (1, 7)], lambda w, p: w.int32(p[0]).int64(p[1]).int64(0).boolean(True).tags(
                {3: b"\x01\x02"} if p[0] == 0 else None)),
            w.tags())),
        w.int64(100).int64(50).boolean(False).tags()))
    reader = FlexReader(w.tags().bytes(), True)
    answer = C.decode_describe_log_dirs(reader, 5)
    reader.end()
    assert answer.log_dirs[0].replicas == [C.ReplicaLog("t", 0, 5, 0, True), C.ReplicaLog("t", 1, 7, 0, True)]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_reassignments_round_trip(data):
    ids = st.lists(int32, max_size=4)
    topics = data.draw(st.dictionaries(names, st.lists(st.tuples(int32, ids, ids, ids), max_size=3), max_size=3))
    answer = C.ReassignmentsAnswer(data.draw(st.integers(-1, 100)), data.draw(st.one_of(st.none(), names)),
                                   [C.OngoingReassignment(t, *p) for t, parts in topics.items() for p in parts],
                                   data.draw(st.integers(0, 2**31 - 1)))
    reader = FlexReader(C.encode_list_partition_reassignments(0, answer), True)
    assert C.decode_list_partition_reassignments(reader, 0) == answer
    reader.end()
    asked = data.draw(st.one_of(st.none(), st.lists(st.tuples(names, st.lists(int32, max_size=3)), max_size=3)))
    reader = FlexReader(C.encode_list_partition_reassignments_request(0, asked, 30000), True)
    assert C.decode_list_partition_reassignments_request(reader, 0) == (asked, 30000)
