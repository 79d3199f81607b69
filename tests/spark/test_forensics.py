"""Forensics (kassign.spark.forensics) against brute force: every partitioner's records and keys, unexplained
records and keys, split keys and the best, for key figures cut into pieces the way the digest hands them over
(every row of a key in one piece, rows in any order)."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign.producer.clients import NAMES
from kassign.spark.forensics import Forensics

KEYS = st.one_of(st.binary(max_size=6), st.sampled_from([b"", b"user-8", b"a", b"order-7"]))


def _figures(draw_keys: list[bytes], counts: dict[str, int], rng: random.Random) -> list[dict]:
    """Rows (topic, key, partition, records, bytes, hash): each key on one to three partitions, placed by a
    random client's rule or anywhere."""
    rows = []
    for topic, n in counts.items():
        for key in dict.fromkeys(draw_keys):
            partitions = set()
            for _ in range(rng.choice([1, 1, 1, 2, 3])):
                rule = rng.choice([*NAMES, None])
                p = kassign.partition_for_key(key, n, rule) if rule else rng.randrange(n)
                partitions.add(p if p >= 0 else rng.randrange(n))
            for p in sorted(partitions):
                records = rng.randint(1, 9)
                rows.append({"topic": topic, "key": key, "partition": p, "records": records,
                             "bytes": records * (len(key) + 3), "key_display": key.hex(),
                             "hash": kassign.murmur2(key) & 0x7FFFFFFF})
    return rows


def _brute(rows: list[dict], counts: dict[str, int]) -> dict:
    expected = {}
    for topic, n in counts.items():
        mine = [r for r in rows if r["topic"] == topic]
        by_key: dict[bytes, list[dict]] = {}
        for r in mine:
            by_key.setdefault(r["key"], []).append(r)

        def explains(name: str, r: dict) -> bool:
            return kassign.partition_for_key(r["key"], n, name) == r["partition"]

        partitioners = {name: {"records": sum(r["records"] for r in mine if explains(name, r)),
                               "keys": sum(1 for rs in by_key.values() if all(explains(name, r) for r in rs))}
                        for name in NAMES}
        unexplained = [r for r in mine if not any(explains(name, r) for name in NAMES)]
        best = max(NAMES, key=lambda name: (partitioners[name]["records"], -NAMES.index(name)))
        expected[topic] = {
            "keyed_records": sum(r["records"] for r in mine), "partitioners": partitioners,
            "unexplained_records": sum(r["records"] for r in unexplained),
            "unexplained_keys": len({r["key"] for r in unexplained}),
            "split_keys": sum(1 for rs in by_key.values() if len(rs) > 1), "best": best,
            "distinct_keys": len(by_key)}
    return expected


@settings(max_examples=40, deadline=None)
@given(keys=st.lists(KEYS, min_size=1, max_size=40), seed=st.integers(0, 2**32 - 1),
       counts=st.dictionaries(st.sampled_from(["t", "u"]), st.integers(1, 13), min_size=1, max_size=2))
def test_forensics_equal_brute_force(tmp_path_factory, keys, seed, counts):
    rng = random.Random(seed)
    rows = _figures(keys, counts, rng)
    # pieces as the digest reads them: a key's rows never straddle two pieces, rows in any order
    owner = {(r["topic"], r["key"]): rng.randrange(3) for r in rows}
    out = tmp_path_factory.mktemp("forensics")
    forensics = Forensics(counts, out / "keys")
    for piece in range(3):
        mine = [r for r in rows if owner[(r["topic"], r["key"])] == piece]
        rng.shuffle(mine)
        if mine:
            table = pa.Table.from_pylist(mine, schema=pa.schema([
                ("topic", pa.string()), ("key", pa.binary()), ("partition", pa.int32()), ("records", pa.int64()),
                ("bytes", pa.int64()), ("key_display", pa.string()), ("hash", pa.int64())]))
            first = forensics.add(table)
            # one row of each key is marked, in the piece's row order
            marked = [(r["topic"], r["key"]) for r, f in zip(mine, first.tolist()) if f]
            assert sorted(marked) == sorted({(r["topic"], r["key"]) for r in mine})
    forensics.close()
    summary = forensics.summary()
    expected = _brute(rows, counts)
    for topic, want in expected.items():
        got = summary[topic]
        assert {k: got[k] for k in want} == want
        if want["split_keys"]:
            assert f"{want['split_keys']:,} key" in got["verdict"]
        # the explanation's first family is the best, and the families' gains never exceed what is keyed
        if got["explanation"]:
            assert got["best"] in got["explanation"][0]["partitioners"]
            assert sum(f["gain"] for f in got["explanation"]) <= want["keyed_records"]
    # the keys table: exactly the split and unexplained keys, with their partitions and records
    table = pq.read_table(out / "keys").to_pylist()
    listed = {(r["topic"], r["key"]): r for r in table}
    for (topic, key) in {(r["topic"], r["key"]) for r in rows}:
        mine = sorted((r for r in rows if r["topic"] == topic and r["key"] == key), key=lambda r: r["partition"])
        split = len(mine) > 1
        unexplained = any(not any(kassign.partition_for_key(key, counts[topic], name) == r["partition"]
                                  for name in NAMES) for r in mine)
        if not (split or unexplained):
            assert (topic, key) not in listed
            continue
        entry = listed[(topic, key)]
        assert (entry["split"], entry["unexplained"]) == (split, unexplained)
        got = sorted(zip(entry["partitions"], entry["records"], entry["bytes"]))
        assert got == [(r["partition"], r["records"], r["bytes"]) for r in mine]
        for p, names in zip(entry["partitions"], entry["explained_by"]):
            assert names == [n for n in NAMES if kassign.partition_for_key(key, counts[topic], n) == p]


def test_verdict_names_the_mixed_producers():
    """The issue's example: mostly Java placement, some librdkafka default placement, split keys."""
    rng = random.Random(7)
    counts = {"orders": 12}
    rows = []
    for i in range(600):
        key = f"user-{i}".encode()
        java = kassign.partition_for_key(key, 12)
        crc = kassign.partition_for_key(key, 12, "librdkafka:consistent_random")
        rows.append({"topic": "orders", "key": key, "partition": java, "records": 24, "bytes": 240,
                     "key_display": key.decode(), "hash": kassign.murmur2(key) & 0x7FFFFFFF})
        if i % 6 == 0:
            if crc == java:
                rows[-1]["records"] += 1
            else:
                rows.append({**rows[-1], "partition": crc, "records": 1, "bytes": 10})
    rng.shuffle(rows)
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        forensics = Forensics(counts, Path(folder) / "keys")
        forensics.add(pa.Table.from_pylist(rows))
        forensics.close()
        entry = forensics.summary()["orders"]
    assert entry["best"] == "java"
    assert entry["also"]["partitioner"] == "librdkafka:consistent_random"
    split = entry["split_keys"]
    assert split == sum(1 for i in range(0, 600, 6)
                        if kassign.partition_for_key(f"user-{i}".encode(), 12) !=
                        kassign.partition_for_key(f"user-{i}".encode(), 12, "librdkafka:consistent_random"))
    text = entry["verdict"]
    assert text.startswith(">99% of keyed records are where Kafka's Java producer puts them and <1% where "
                           "librdkafka's default (CRC32) does: a librdkafka-based producer")
    assert "without partitioner=murmur2_random" in text and f"{split} keys sit on two partitions" in text
    assert np.isclose(entry["partitioners"]["java"]["records"] / entry["keyed_records"], 0.99, atol=0.01)


# -- keyless records: rack-aware producers or plain sticky ones ----------------------------------------------------

def test_keyless_records_only_where_one_rack_leads_are_rack_aware_producers():
    from kassign.spark.forensics import keyless_placement

    racks = ["a", "b", "c", "a", "b", "c"]
    keyless = [(0, 0), (1000, 1_000_000), (0, 0), (0, 0), (1000, 1_000_000), (0, 0)]
    found = keyless_placement(keyless, racks)
    assert found["placement"] == "rack-aware" and found["producer_racks"] == ["b"]
    assert found["draws_at_least"] == 61 and found["chance_plain"] == float(f"{(2 / 6) ** 61:.3g}")
    assert "rack-aware producers (partitioner.rack.aware, Kafka 4.4) in b" in found["verdict"]
    # the same spread over every rack's partitions: plain sticky producers
    spread = keyless_placement([(10, 100_000)] * 6, racks)
    assert spread["placement"] == "spread"
    # few keyless bytes: a plain producer would often stay in one rack's partitions by chance
    few = keyless_placement([(0, 0), (3, 40_000), (0, 0), (0, 0), (0, 0), (0, 0)], racks)
    assert few["placement"] == "undetermined" and "too few" in few["verdict"]
    # every partition led in one rack, or no racks: nothing to tell
    assert keyless_placement(keyless, ["a"] * 6)["placement"] == "undetermined"
    assert keyless_placement(keyless, [None] * 6)["placement"] == "undetermined"
    assert keyless_placement([(0, 0)] * 6, racks) is None
