"""Forensics of keyless records on a live topic: records placed by kassign's rack-aware producer model (Kafka 4.4,
KIP-1123, with the leaders' racks the cluster names) are recognised as rack-aware; a plain sticky producer's are
not; a few records are said to be too few. librdkafka's mock cluster: three brokers in rack-a, rack-b, rack-c."""

from __future__ import annotations

import numpy as np
import pytest

from kassign.kafka.metadata import read_layout
from kassign.producer.keyless import KeylessProducer
from kassign.spark.pipeline import PipelineOptions, run_pipeline
from tests.docs.reference import fields, undocumented

pytest.importorskip("confluent_kafka", reason="real producers need confluent-kafka")


@pytest.fixture(scope="module")
def racked():
    from tests.mock_cluster import MockCluster

    mock = MockCluster(3, {1: "rack-a", 2: "rack-b", 3: "rack-c"})
    try:
        yield mock
    finally:
        mock.stop()


def _write(bootstrap: str, topic: str, partitions: list[int], size: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for p in partitions:
        producer.produce(topic, value=b"v" * size, partition=int(p))
    assert producer.flush(30) == 0


def test_keyless_records_of_rack_aware_producers_are_recognised(racked, spark, tmp_path):
    sizes = np.full(2500, 1000)
    topics = {"keyless-aware": True, "keyless-plain": False}
    leaders = {}
    for topic, aware in topics.items():
        racked.create_topic(topic, 6, 1)
        layout = read_layout(racked.bootstrap, [topic])
        leaders[topic] = [layout.brokers[p.leader] for p in layout.topics[topic]]
        model = KeylessProducer(6, leaders=leaders[topic], client_rack="rack-b", rack_aware=aware, seed=11)
        _write(racked.bootstrap, topic, model.place(sizes).tolist(), 1000)
    racked.create_topic("keyless-few", 6, 1)
    few_layout = read_layout(racked.bootstrap, ["keyless-few"])
    in_b = [p.partition for p in few_layout.topics["keyless-few"] if few_layout.brokers[p.leader] == "rack-b"]
    _write(racked.bootstrap, "keyless-few", [in_b[0]] * 20, 1000)
    summary = run_pipeline(spark, PipelineOptions(out=str(tmp_path / "out"), bootstrap=racked.bootstrap,
                                                  topics=[*topics, "keyless-few"], write_partitioned=False,
                                                  write_sample=False, strategies=("range",)))
    aware = summary["forensics"]["keyless-aware"]["keyless"]
    assert aware["placement"] == "rack-aware" and aware["producer_racks"] == ["rack-b"]
    assert aware["records"] == 2500 and aware["racks"]["rack-b"]["keyless_records"] == 2500
    assert aware["racks"]["rack-b"]["partitions"] == [p for p, r in enumerate(leaders["keyless-aware"]) if r == "rack-b"]
    assert summary["forensics"]["keyless-plain"]["keyless"]["placement"] == "spread"
    few = summary["forensics"]["keyless-few"]["keyless"]
    assert few["placement"] == "undetermined" and "too few" in few["verdict"]
    assert "rack-aware producers" in summary["verdict"]["keyless_placement"]["keyless-aware"]
    assert not undocumented(summary, fields("outputs.md", "summary.json"))  # the manual states every field
