"""``kassign partition --bootstrap-server``: the leaders' racks come from the cluster's metadata (librdkafka's mock
cluster, three brokers in rack-a, rack-b, rack-c)."""

from __future__ import annotations

import json
import subprocess
import sys

from kassign.kafka.metadata import read_layout


def test_keyless_targets_follow_the_leaders_the_cluster_names(mock3):
    mock3.create_topic("keyless-racks", 7, 1)
    layout = read_layout(mock3.bootstrap, ["keyless-racks"])
    leaders = [layout.brokers[p.leader] for p in layout.topics["keyless-racks"]]
    result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "partition", "--bootstrap-server",
                             mock3.bootstrap, "--topic", "keyless-racks", "--client-rack", "rack-b",
                             "--partitioner-rack-aware", "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    keyless = json.loads(result.stdout)["keyless"]
    assert keyless["leader_racks"] == leaders
    assert keyless["partitions"] == [p for p, r in enumerate(leaders) if r == "rack-b"]
    assert keyless["rule"] == "kip-1123"


def test_a_broker_rack_that_leads_no_partition_falls_back_to_every_partition(mock3):
    mock3.create_topic("keyless-one", 1, 1)
    layout = read_layout(mock3.bootstrap, ["keyless-one"])
    leader_rack = layout.brokers[layout.topics["keyless-one"][0].leader]
    other = next(r for r in ("rack-a", "rack-b", "rack-c") if r != leader_rack)
    result = subprocess.run([sys.executable, "-m", "kassign.cli.main", "partition", "--bootstrap-server",
                             mock3.bootstrap, "--topic", "keyless-one", "--client-rack", other,
                             "--partitioner-rack-aware", "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    keyless = json.loads(result.stdout)["keyless"]
    assert keyless["partitions"] == [0] and f"no partition is led in {other}" in keyless["why"]
