"""The driver's digest of the key figures (no Spark): totals, hot keys and the sweep against brute force."""

from __future__ import annotations

import random
from collections import defaultdict

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.spark.digest import HOT_KEY_ORDER, KEY_STATS_COLUMNS, _top_keys, digest_figures, hot_key_contenders

SCHEMA = pa.schema([("topic", pa.string()), ("key", pa.string()), ("partition", pa.int32()), ("reason", pa.string()),
                    ("records", pa.int64()), ("bytes", pa.int64()), ("key_display", pa.string()), ("hash", pa.int64())])


def write_figures(path, rows, files):
    """``rows`` split over ``files`` Parquet files, so the digest merges across batches."""
    path.mkdir()
    for i in range(files):
        part = rows[i::files]
        pq.write_table(pa.Table.from_pylist(part, schema=SCHEMA), (path / f"part-{i}.parquet").as_posix())


def figure_rows(seed):
    rng = random.Random(seed)
    rows = []
    for topic in ("a", "b"):
        for k in range(rng.randint(0, 40)):
            h = rng.randrange(2**31)
            rows.append({"topic": topic, "key": f"{topic}{k}", "partition": h % 6, "reason": None,
                         "records": rng.randint(1, 9), "bytes": rng.choice([1, 5, 5, 100, 2**40]),
                         "key_display": f"{topic}{k}", "hash": h})
        for p in rng.sample(range(6), rng.randint(0, 3)):  # keyless records of some partitions
            rows.append({"topic": topic, "key": None, "partition": p, "reason": None, "records": rng.randint(1, 5),
                         "bytes": rng.randint(0, 50), "key_display": None, "hash": None})
    for reason in rng.sample(["size is negative", "line is not a JSON object"], rng.randint(0, 2)):
        rows.append({"topic": None, "key": None, "partition": None, "reason": reason, "records": rng.randint(1, 4),
                     "bytes": None, "key_display": None, "hash": None})
    rng.shuffle(rows)
    return rows


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), files=st.integers(1, 4), max_partitions=st.integers(1, 9))
def test_digest_equals_brute_force(tmp_path_factory, seed, files, max_partitions):
    rows = figure_rows(seed)
    root = tmp_path_factory.mktemp("digest")
    write_figures(root / "figures", rows, files)
    digest = digest_figures(root / "figures", root / "key_stats", max_partitions, hot_keys=3)

    good = [r for r in rows if r["reason"] is None]
    keyed = [r for r in good if r["key"] is not None]
    reasons = defaultdict(int)
    for r in rows:
        if r["reason"] is not None:
            reasons[r["reason"]] += r["records"]
    assert digest.reasons == dict(reasons)

    per_partition = defaultdict(lambda: [0, 0, 0, 0])
    for r in good:
        entry = per_partition[(r["topic"], r["partition"])]
        entry[0] += r["records"]
        entry[1] += r["bytes"]
        if r["key"] is not None:
            entry[2] += r["records"]
            entry[3] += 1
    assert {tp: [f.records, f.bytes, f.keyed_records, f.distinct_keys] for tp, f in digest.partitions.items()} == \
        dict(per_partition)

    for topic in {r["topic"] for r in keyed}:
        mine = [r for r in keyed if r["topic"] == topic]
        for n in range(1, max_partitions + 1):
            expected = [0] * n
            for r in mine:
                expected[r["hash"] % n] += r["bytes"]
            assert digest.sweep[topic][n - 1].tolist() == expected
    assert set(digest.sweep) == {r["topic"] for r in keyed}

    for tp in per_partition:
        mine = sorted((r for r in keyed if (r["topic"], r["partition"]) == tp),
                      key=lambda r: (-r["bytes"], r["key_display"]))[:3]
        assert [h["key"] for h in digest.hot_keys.get(tp, [])] == [r["key_display"] for r in mine]
        for h, r in zip(digest.hot_keys.get(tp, []), mine):
            assert h["share"] == pytest.approx(r["bytes"] / per_partition[tp][1], abs=1e-6)

    written = pq.read_table((root / "key_stats").as_posix())
    assert written.column_names == list(KEY_STATS_COLUMNS)
    assert sorted(written.column("key").to_pylist()) == sorted(r["key"] for r in keyed)


def test_no_keyed_record_still_writes_an_empty_key_stats_table(tmp_path):
    rows = [{"topic": "t", "key": None, "partition": 0, "reason": None, "records": 3, "bytes": 30,
             "key_display": None, "hash": None}]
    write_figures(tmp_path / "figures", rows, 1)
    digest = digest_figures(tmp_path / "figures", tmp_path / "key_stats", 4, hot_keys=3)
    assert digest.topics() == {"t": {"records": 3, "bytes": 30, "null_bytes": 30}}
    assert digest.sweep == {} and digest.hot_keys == {}
    table = pq.read_table((tmp_path / "key_stats").as_posix())
    assert table.num_rows == 0 and table.column_names == list(KEY_STATS_COLUMNS)


def _top_by_sorting_everything(table: pa.Table, hot_keys: int) -> list[dict]:
    ordered = table.sort_by(HOT_KEY_ORDER).to_pylist()
    taken: dict[tuple, int] = defaultdict(int)
    top = []
    for row in ordered:
        slot = (row["topic"], row["partition"])
        if taken[slot] < hot_keys:
            taken[slot] += 1
            top.append(row)
    return top


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 3),
                               st.sampled_from([0, 5, 5, 7, 2**40]),
                               st.text("xyz", max_size=3)), min_size=8, max_size=80),
       hot_keys=st.integers(0, 3), null_bytes=st.booleans())
def test_hot_keys_from_the_contenders_equal_sorting_every_row(rows, hot_keys, null_bytes):
    """Ties on bytes at the cut, a null among the bytes, and fewer rows than hot keys (keyed rows always have a
    topic and a partition)."""
    sizes = [r[2] for r in rows]
    if null_bytes:
        sizes[len(sizes) // 2] = None
    table = pa.table({"topic": pa.array([r[0] for r in rows], pa.string()),
                      "partition": pa.array([r[1] for r in rows], pa.int32()),
                      "key_bytes": pa.array(sizes, pa.int64()),
                      "key_display": pa.array([r[3] for r in rows], pa.string())})
    contenders = hot_key_contenders(table, hot_keys)
    assert _top_keys(table, hot_keys).to_pylist() == _top_by_sorting_everything(table, hot_keys)
    assert _top_by_sorting_everything(contenders, hot_keys) == _top_by_sorting_everything(table, hot_keys)
    if table["key_bytes"].null_count == 0 and hot_keys and table.num_rows > 4 * hot_keys:
        per_partition = defaultdict(int)
        for row in contenders.to_pylist():
            per_partition[(row["topic"], row["partition"])] += 1
        ties = defaultdict(int)  # a partition keeps more than hot_keys rows only for ties at the cut
        for row in table.to_pylist():
            ties[(row["topic"], row["partition"], row["key_bytes"])] += 1
        assert all(n <= hot_keys or n <= hot_keys + max(ties.values()) for n in per_partition.values())


def test_a_key_stats_write_that_fails_fails_the_digest(tmp_path):
    rows = [{"topic": "t", "key": "k", "partition": 0, "reason": None, "records": 3, "bytes": 30,
             "key_display": "k", "hash": 7}]
    write_figures(tmp_path / "figures", rows, 1)
    (tmp_path / "key_stats" / "part-0.parquet").mkdir(parents=True)  # where the file must go: a directory
    with pytest.raises(OSError):
        digest_figures(tmp_path / "figures", tmp_path / "key_stats", 4, hot_keys=3)
