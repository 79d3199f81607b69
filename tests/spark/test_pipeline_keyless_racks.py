"""The pipeline with rack-aware producers (Kafka 4.4, KIP-1123) and with each release's keyless rule, on the sample.

Producers in a rack that leads fewer partitions put their keyless records on those few: the partitions led there
get hotter. Checked against the placement the brokers stage reports and against the Python model record by record
(the partitioned table)."""

from __future__ import annotations

from collections import defaultdict

import pyarrow.parquet as pq
import pytest

from kassign.core.errors import KassignError
from kassign.spark.pipeline import PipelineOptions, run_pipeline

# brokers 0..4: rack-a leads 4 of 10 partitions, rack-c 3 (the striped placer's leaders with seed 42)
BROKERS = [(0, "rack-a"), (1, "rack-b"), (2, "rack-c"), (3, "rack-a"), (4, "rack-b")]


def _options(out, **extra) -> PipelineOptions:
    base = dict(out=str(out), rows=60_000, keys=500, null_share=0.5, partitions=10, members=2, max_partitions=12,
                brokers=BROKERS, replication_factor=2, batch_size=4000, write_partitioned=True, write_sample=False,
                strategies=("range",))
    base.update(extra)
    return PipelineOptions(**base)


def test_rack_aware_producers_heat_the_partitions_of_the_rack_with_fewer_leaders(spark, tmp_path):
    summary = run_pipeline(spark, _options(tmp_path / "aware", client_racks=["rack-c", "rack-a"],
                                           partitioner_rack_aware=True))
    model = summary["null_key_model"]
    assert (model["kafka_version"], model["rule"], model["partitioner_rack_aware"]) == ("4.4", "kip-1123", True)
    placement = summary["brokers"]["placement"]["events"]
    racks = dict(BROKERS)
    leaders = [racks[placement[str(p)][0]] for p in range(10)]
    assert model["leader_racks"] == {"events": leaders}  # the leaders the brokers table reports
    led = defaultdict(list)
    for p, rack in enumerate(leaders):
        led[rack].append(p)
    assert len(led["rack-c"]) < len(led["rack-a"])
    keyless = defaultdict(int)
    table = pq.read_table(tmp_path / "aware" / "partitioned").to_pylist()
    for row in table:
        if row["key"] is None:
            keyless[row["partition"]] += row["bytes"]
    assert set(keyless) <= set(led["rack-a"] + led["rack-c"])  # never a partition led in rack-b
    per_partition = {rack: sum(keyless[p] for p in led[rack]) / len(led[rack]) for rack in ("rack-a", "rack-c")}
    assert per_partition["rack-c"] > per_partition["rack-a"]  # fewer leaders, hotter partitions
    found = summary["keyless_racks"]["events"]
    assert found["racks"]["rack-c"]["keyless_bytes"] == sum(keyless[p] for p in led["rack-c"])
    assert found["racks"]["rack-b"]["keyless_bytes"] == 0
    assert found["hottest_partition"]["rack"] in ("rack-a", "rack-c")
    assert "rack-aware producers (Kafka 4.4, KIP-1123)" in summary["verdict"]["keyless_racks"]["events"]
    # the same sample without rack awareness spreads keyless records over every partition
    plain = run_pipeline(spark, _options(tmp_path / "plain", client_racks=["rack-c", "rack-a"]))
    assert "keyless_racks" not in plain and plain["null_key_model"]["rule"] == "kip-794"
    spread = {r["partition"] for r in pq.read_table(tmp_path / "plain" / "partitioned").to_pylist() if r["key"] is None}
    assert spread & set(led["rack-b"])


def test_kafka_3_2s_rule_places_keyless_records_and_says_so(spark, tmp_path):
    summary = run_pipeline(spark, _options(tmp_path / "old", kafka_version="3.2"))
    assert (summary["null_key_model"]["kafka_version"], summary["null_key_model"]["rule"]) == ("3.2", "kip-480")
    assert summary["kafka_version"] == "3.2"
    rows = pq.read_table(tmp_path / "old" / "partitioned").to_pylist()
    assert all(0 <= r["partition"] < 10 for r in rows)


@pytest.mark.parametrize("extra, message", [
    ({"kafka_version": "4.3", "client_racks": ["rack-a"], "partitioner_rack_aware": True},
     "partitioner.rack.aware came with Kafka 4.4"),
    ({"client_racks": ["rack-z"], "partitioner_rack_aware": True}, "'rack-z' is no broker's rack"),
    ({"partitioner_rack_aware": True}, "needs client.rack"),
    ({"client_racks": ["rack-a"], "partitioner_rack_aware": True, "null_key_model": "round-robin"},
     "does not go with --null-keys round-robin"),
    ({"client_racks": ["rack-a"], "partitioner_rack_aware": True, "leader_racks": {"events": "rack-a"}},
     "must list one rack per partition"),
])
def test_bad_producer_racks_are_one_line_before_spark(tmp_path, extra, message):
    from kassign.spark.options import check_options

    with pytest.raises(KassignError, match=message) as err:
        check_options(_options(tmp_path / "x", **extra))
    assert "\n" not in str(err.value)
