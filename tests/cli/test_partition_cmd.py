"""``kassign partition`` with client partitioners, --compare, key types and keys from stdin or a file (subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import kassign


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", "partition", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


def run_json(*args: str, stdin: str | None = None) -> dict:
    result = run(*args, "--json", stdin=stdin)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


COMPARED = ["java", "librdkafka:consistent_random", "sarama:hash"]


def test_compare_table_has_a_column_per_client_and_marks_disagreement() -> None:
    keys = ["user-1", "user-8", "order-7", ""]
    result = run("-n", "12", "--compare", ",".join(COMPARED), *keys)
    assert result.returncode == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if "java" in line and "differs" in line)
    assert all(name in header for name in COMPARED)
    expected = {k: [kassign.partition_for_key(k.encode(), 12, partitioner=p) for p in COMPARED] for k in keys}
    for key in ("user-1", "user-8", "order-7"):
        line = next(line for line in result.stdout.splitlines() if f" {key} " in line)
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        assert cells[1:4] == [str(v) for v in expected[key]]
        assert cells[4] == ("" if len(set(expected[key])) == 1 else "*")
    # user-1 goes to 8 under java and librdkafka, 0 under Sarama; the empty key is random for librdkafka.
    assert expected["user-1"] == [8, 8, 0] and expected[""][1] == -1
    assert "4 of 4 keys land on different partitions" in result.stdout
    assert "does not hash the key" in result.stdout


def test_compare_json_and_agreement_flag() -> None:
    doc = run_json("-n", "12", "--compare", "java,librdkafka:murmur2", "user-1", "x")
    assert doc["partitioners"] == ["java", "librdkafka:murmur2"]
    assert all(row["agree"] for row in doc["keys"]) and doc["differing_keys"] == 0
    assert doc["keys"][0]["partitions"] == {"java": 8, "librdkafka:murmur2": 8}


def test_single_partitioner_shows_its_hash() -> None:
    doc = run_json("-n", "12", "--partitioner", "librdkafka:consistent_random", "user-8", "")
    assert doc["partitioner"] == "librdkafka:consistent_random"
    assert doc["keys"] == [{"key": "user-8", "crc32": 133889712, "partition": 0},
                           {"key": "", "crc32": 0, "partition": -1}]
    default = run_json("-n", "12", "user-1")  # the Java default keeps its original document shape
    assert default == {"partitions": 12, "keys": [{"key": "user-1", "murmur2": 1404122828, "partition": 8}]}


def test_keys_from_stdin_and_from_a_file(tmp_path) -> None:
    lines = "user-1\r\nuser-8\n\norder-7\n"
    keys = ["user-1", "user-8", "", "order-7"]
    from_stdin = run_json("-n", "7", "-P", "sarama:hash", "-", stdin=lines)
    (tmp_path / "keys.txt").write_text(lines)
    from_file = run_json("-n", "7", "-P", "sarama:hash", "--keys-file", str(tmp_path / "keys.txt"))
    assert [r["key"] for r in from_stdin["keys"]] == keys
    assert from_stdin == from_file
    assert [r["partition"] for r in from_file["keys"]] == [
        kassign.partition_for_key(k.encode(), 7, partitioner="sarama:hash") for k in keys]


def test_many_keys_take_the_batch_path_with_the_same_answers(tmp_path) -> None:
    keys = [str(i) for i in range(-600, 1400)]  # 2000 keys: above the batch threshold
    (tmp_path / "ids.txt").write_text("\n".join(keys) + "\n")
    doc = run_json("-n", "24", "--compare", "java,kafkajs:legacy", "--key-type", "int", "--keys-file",
                   str(tmp_path / "ids.txt"))
    for row in doc["keys"][::97]:
        value = int(row["key"])
        assert row["partitions"] == {p: kassign.partition_for_key(value, 24, partitioner=p, key_type="int")
                                     for p in ("java", "kafkajs:legacy")}
    assert doc["differing_keys"] == sum(not r["agree"] for r in doc["keys"]) > 1500


def test_key_types() -> None:
    result = run("-n", "12", "--json", "--key-type", "long", "--", "42", "-1")  # '--': -1 is a key, not an option
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [r["partition"] for r in doc["keys"]] == [kassign.partition_for_key(v, 12, key_type="long") for v in (42, -1)]
    as_int = run_json("-n", "12", "--key-type", "int", "42")
    assert as_int["keys"][0]["partition"] == kassign.partition_for_key(b"\x00\x00\x00\x2a", 12)
    as_bytes = run_json("-n", "12", "--key-type", "bytes", "0000002a")
    assert as_bytes["keys"][0]["partition"] == as_int["keys"][0]["partition"]


BAD = [
    (["-n", "3", "--partitioner", "sarama:fnv", "k"], "unknown partitioner 'sarama:fnv': use one of java, librdkafka"),
    (["-n", "3", "--compare", "java,nope", "k"], "unknown partitioner 'nope'"),
    (["-n", "3", "--compare", "java", "--partitioner", "java", "k"], "not both"),
    (["-n", "3", "--key-type", "int", "abc"], "not a whole number"),
    (["-n", "3", "--key-type", "int", "4294967296"], "does not fit a Java int"),
    (["-n", "3", "--key-type", "long", "--hex", "00"], "does not go with --key-type long"),
    (["-n", "3", "--keys-file", "/nonexistent/keys.txt"], "cannot read --keys-file"),
    (["-n", "3", "--keys-file", "/dev/null", "k"], "not both"),
    (["-n", "3", "-"], "no keys on stdin"),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = run(*args, stdin="")
    assert result.returncode == 2, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kassign: error: ") and message in lines[0], result.stderr
    assert result.stdout == ""


def test_hex_with_base64_is_refused_and_raw_argv_bytes_are_hashed_as_typed() -> None:
    import subprocess
    import sys

    both = subprocess.run([sys.executable, "-m", "kassign.cli.main", "partition", "-n", "12", "--hex", "--base64",
                           "aa"], capture_output=True, text=True, timeout=60)
    assert both.returncode == 2 and both.stderr.strip() == "kassign: error: give --hex or --base64, not both"
    raw = subprocess.run([sys.executable.encode(), b"-m", b"kassign.cli.main", b"partition", b"-n", b"12",
                          b"--json", b"ab\xff"], capture_output=True, timeout=60)
    assert raw.returncode == 0, raw.stderr
    import json

    assert json.loads(raw.stdout)["keys"][0]["partition"] == kassign.partition_for_key(b"ab\xff", 12)


def test_lone_surrogates_are_a_kassign_error() -> None:
    with pytest.raises(kassign.KassignError, match="lone surrogate"):
        kassign.partition_for_key("lone\udc80", 12)
    with pytest.raises(kassign.KassignError, match="lone surrogate"):
        kassign.partitions_for_keys(["ok", "b\ud800"], 12)


# --- partition counts Kafka cannot have (issue #20) -------------------------------------------------

@pytest.mark.parametrize("args", [
    ["-n", "2147483648", "k"],
    ["-n", "99999999999999999999999", "k"],
    ["-n", "2147483648", "--compare", "java,sarama:hash", "k"],
    ["-n", "4294967296", "--key-type", "int", "--", "5"],
])
def test_partition_counts_beyond_a_java_int_are_one_line_errors(args: list[str]) -> None:
    result = run(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("kassign: error: ") and len(result.stderr.strip().splitlines()) == 1
    assert "--partitions must be from 1 to 2147483647" in result.stderr
    assert result.stdout == ""


def test_the_largest_partition_count_kafka_allows_is_taken() -> None:
    document = run_json("-n", "2147483647", "k")
    assert document["keys"][0]["partition"] == kassign.partition_for_key(b"k", 2**31 - 1)
