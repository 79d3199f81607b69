"""``kassign partition`` on keyless records: where each release's producer can put them, rack-aware or not."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", "partition", *args], capture_output=True,
                          text=True, timeout=120)


def run_json(*args: str) -> dict:
    result = run(*args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


RACKS = "rack-a,rack-b,rack-c,rack-a,rack-b,rack-c"


def test_a_rack_aware_producer_lands_only_on_partitions_led_in_its_rack():
    doc = run_json("--leader-racks", RACKS, "--client-rack", "rack-b", "--partitioner-rack-aware")
    keyless = doc["keyless"]
    assert doc["partitions"] == 6 and keyless["partitions"] == [1, 4]
    assert (keyless["kafka_version"], keyless["rule"]) == ("4.4", "kip-1123")
    assert "Kafka 4.4" in keyless["why"] and "led in rack-b" in keyless["why"]
    table = run("--leader-racks", RACKS, "--client-rack", "rack-b", "--partitioner-rack-aware")
    assert table.returncode == 0 and "KIP-1123" in table.stdout
    rows = [line.split("│")[1:4] for line in table.stdout.splitlines() if line.startswith("│")]
    assert [(int(p), rack.strip(), land.strip()) for p, rack, land in rows] == [
        (0, "rack-a", "no"), (1, "rack-b", "yes"), (2, "rack-c", "no"), (3, "rack-a", "no"), (4, "rack-b", "yes"),
        (5, "rack-c", "no")]


def test_rack_unaware_and_older_releases_use_every_partition_with_a_leader():
    plain = run_json("--leader-racks", "rack-a,-,rack-b", "--client-rack", "rack-b")["keyless"]
    assert plain["partitions"] == [0, 2] and plain["rule"] == "kip-794" and plain["leaderless"] == [1]
    old = run_json("-n", "4", "--keyless", "--kafka-version", "3.2")["keyless"]
    assert old["partitions"] == [0, 1, 2, 3] and (old["kafka_version"], old["rule"]) == ("3.2", "kip-480")
    no_rack = run_json("--leader-racks", "rack-a,rack-b,,rack-a", "--client-rack", "rack-b",
                       "--partitioner-rack-aware", "--kafka-version", "4.4.0")["keyless"]
    assert no_rack["partitions"] == [1]  # a leader without a rack is in no rack


def test_keys_and_keyless_records_together():
    doc = run_json("-n", "12", "--keyless", "user-8")
    assert doc["keys"][0]["partition"] == 9 and doc["keyless"]["partitions"] == list(range(12))


@pytest.mark.parametrize("args, message", [
    (["--leader-racks", RACKS, "--client-rack", "rack-b", "--partitioner-rack-aware", "--kafka-version", "4.3"],
     "partitioner.rack.aware came with Kafka 4.4"),
    (["--leader-racks", RACKS, "--partitioner-rack-aware"], "needs client.rack"),
    (["--leader-racks", RACKS, "--client-rack", "rack-z", "--partitioner-rack-aware"], "'rack-z' is no broker's rack"),
    (["-n", "6", "--client-rack", "rack-a", "--partitioner-rack-aware"], "needs the leaders' racks"),
    (["-n", "5", "--leader-racks", RACKS], "names 6 partitions; the topic has 5"),
    (["--keyless", "-n", "3", "--kafka-version", "2.8"], "not a release kassign models"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = run(*args)
    assert result.returncode == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_queue_sizes_weigh_the_draw_adaptive():
    """KIP-794's adaptive draw: weight = longest queue + 1 - queue (Kafka's adaptivePartitionsTest's queues)."""
    keyless = run_json("--queue-sizes", "5,0,3,0,1")["keyless"]
    assert keyless["weights"] == [1, 6, 3, 6, 5] and keyless["partitions"] == [0, 1, 2, 3, 4]
    assert keyless["shares"][1] == round(6 / 21, 6) and "weight = 6 - queue" in keyless["why"]
    table = run("--queue-sizes", "5,0,3,0,1")
    assert table.returncode == 0 and "6/21 = 28.6%" in table.stdout and "share of draws" in table.stdout


def test_unavailable_partitions_and_what_kafkas_pass_does_with_them():
    keyless = run_json("--leader-racks", "a,b,a,b,-", "--queue-sizes", "5,0,3,0,1", "--unavailable", "0,3")["keyless"]
    assert keyless["weights"] == [0, 1, 3, 6, 0] and keyless["partitions"] == [1, 2, 3]
    assert keyless["counted_queue_sizes"] == [-1, 5, 3, 0, -1]
    assert "left out, past partitioner.availability.timeout.ms: 0" in keyless["why"]
    assert "not left out, nothing queued: 3" in keyless["why"] and "1 as 5" in keyless["why"]


def test_queue_sizes_rack_aware_and_equal():
    aware = run_json("--leader-racks", "a,b,a,b", "--queue-sizes", "1,9,3,0", "--client-rack", "a",
                     "--partitioner-rack-aware")["keyless"]
    assert aware["weights"] == [3, 0, 1, 0] and "longest queue led in a" in aware["why"]
    equal = run_json("-n", "3", "--queue-sizes", "2,2,2")["keyless"]
    assert equal["weights"] == [1, 1, 1] and "weighted alike" in equal["why"]


@pytest.mark.parametrize("args, message", [
    (["--queue-sizes", "1,2,3", "--kafka-version", "3.2"], "adaptive partitioning (queue sizes) came with Kafka 3.3"),
    (["-n", "3", "--queue-sizes", "1,2"], "--queue-sizes names 2 partitions; the topic has 3"),
    (["--queue-sizes", "1,x,3"], "--queue-sizes takes whole numbers separated by commas"),
    (["--queue-sizes", "1,-2,3"], "a queue size is a number of batches"),
    (["-n", "3", "--unavailable", "1"], "--unavailable needs --queue-sizes"),
    (["--queue-sizes", "1,2,3", "--unavailable", "3"], "unavailable partition 3 is not one of the topic's 3"),
])
def test_bad_queue_sizes_are_one_line_and_exit_2(args, message):
    result = run(*args)
    assert result.returncode == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
