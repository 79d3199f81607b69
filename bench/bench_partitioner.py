"""Benchmark: key -> partition on a batch of keys, kassign against Java's per-key loop, same keys, same run.

Target (issue #22): the batch at most half of Java's per-key time on 2M 16-byte keys. Java's side
is bench/java/Murmur2PerKey.java in a warm JVM started by this script: one key at a time, as a
producer partitions, through kassign's own Java murmur2 (the class compiled for the Spark column,
``KassignMurmur2.hash``; the same algorithm as Kafka's ``Utils.murmur2``, checked against the same
vectors), then ``& 0x7fffffff`` and ``% partitions``. kassign and Java alternate round by round, so
what else the machine does reaches both alike; best and median are printed. Both sides' partitions
are compared by checksum.

Why the batch can beat Java: Java hashes one key at a time, each 4-byte block waiting on the
multiply before it. kassign runs a tile of keys in lockstep (``kassign.producer.kernels``), every key's
block k at once in vector registers, on both cores. The floor is memory: the batch must read the
key bytes and offsets and write one int32 per key; the "memory floor" line times a pass that only
reads and writes those bytes on both cores, so the distance to it is what is left to gain.

    python bench/bench_partitioner.py [--keys 2000000] [--key-bytes 16] [--partitions 100] [--rounds 9]

Also printed: text keys of mixed length ("user-0" .. "user-1999999"), the batch on one thread,
and kafka-python's pure-Python murmur2 on a prefix (for the 100x target of an earlier issue).
Exits non-zero if kassign, Java and kafka-python disagree on any partition.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import pyarrow as pa

import kassign
from kassign.producer.partitioner import partitions_for_keys

from _timing import best_of

HARNESS = Path(__file__).resolve().parent / "java" / "Murmur2PerKey.java"


@numba.njit(parallel=True, nogil=True, cache=True)
def _touch(data, offsets, out, chunks):
    """Read every key byte and offset once and write one int32 per key: the traffic the batch cannot avoid."""
    n = out.shape[0]
    size = (n + chunks - 1) // chunks
    words = data.shape[0] // 8
    wide = data[: words * 8].view(np.uint64)
    for c in numba.prange(chunks):
        lo = c * size
        hi = min(n, lo + size)
        w_lo = words * lo // n
        w_hi = words * hi // n
        acc = np.uint64(0)
        for w in range(w_lo, w_hi):
            acc ^= wide[w]
        for i in range(lo, hi):
            out[i] = np.int32(offsets[i] + (acc & np.uint64(1)))


class JavaPerKey:
    """The warm JVM running Murmur2PerKey over the same keys; ``run()`` times one pass."""

    def __init__(self, arrow_keys: pa.Array, partitions: int, work: Path) -> None:
        from kassign.spark.jvm import spark_jars_dir, udf_jar

        jar, jars, javac = udf_jar(), spark_jars_dir(), shutil.which("javac")
        if jar is None or jars is None or javac is None:
            raise RuntimeError("needs javac and pyspark's jars (kassign's UDF jar is compiled from them)")
        classpath = f"{jar}:{jars}/*"
        subprocess.run([javac, "-nowarn", "-cp", classpath, "-d", str(work), str(HARNESS)], check=True)
        _, offsets, data = arrow_keys.buffers()
        (work / "keys.bin").write_bytes(data.to_pybytes())
        (work / "offsets.bin").write_bytes(np.frombuffer(offsets, dtype="<i4")[: len(arrow_keys) + 1].tobytes())
        self.process = subprocess.Popen(
            ["java", "-Xmx4g", "-cp", f"{work}:{classpath}", "Murmur2PerKey", str(work / "keys.bin"),
             str(work / "offsets.bin"), str(partitions)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.process.stdout.readline().split()
        if not ready or ready[0] != "ready":
            raise RuntimeError("the Java harness did not start")
        self.checksum = int(ready[1])

    def run(self) -> float:
        self.process.stdin.write("run\n")
        self.process.stdin.flush()
        nanos, checksum = self.process.stdout.readline().split()
        if int(checksum) != self.checksum:
            raise RuntimeError("Java's partitions changed between runs")
        return int(nanos) / 1e9

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def checksum(partitions: np.ndarray) -> int:
    """Java's checksum (sum * 31 + p, wrapping as a long) of kassign's partitions."""
    total = 0
    for p in partitions.tolist():
        total = (total * 31 + p) & 0xFFFFFFFFFFFFFFFF
    return total - (1 << 64) if total >= 1 << 63 else total


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(label: str, keys: list[bytes], n: int, rounds: int, work: Path) -> bool:
    arrow_keys = pa.array(keys, pa.binary())
    count = len(keys)
    ours = partitions_for_keys(arrow_keys, n)  # also compiles (or loads numba's cache) outside the timings
    data, offsets = np.frombuffer(arrow_keys.buffers()[2], dtype=np.uint8), np.frombuffer(
        arrow_keys.buffers()[1], dtype=np.int32)[: count + 1]
    floor_out = np.empty(count, dtype=np.int32)
    chunks = numba.get_num_threads() * 4
    _touch(data, offsets, floor_out, chunks)
    java = JavaPerKey(arrow_keys, n, work)
    agree = java.checksum == checksum(ours)
    times: dict[str, list[float]] = {"batch": [], "batch, one thread": [], "java": [], "floor": []}
    threads = numba.get_num_threads()
    try:
        for _ in range(rounds):
            times["batch"].append(timed(lambda: partitions_for_keys(arrow_keys, n)))
            times["java"].append(java.run())
            numba.set_num_threads(1)
            times["batch, one thread"].append(timed(lambda: partitions_for_keys(arrow_keys, n)))
            numba.set_num_threads(threads)
            times["floor"].append(timed(lambda: _touch(data, offsets, floor_out, chunks)))
    finally:
        java.close()
    per_key = {name: (min(t) / count * 1e9, statistics.median(t) / count * 1e9) for name, t in times.items()}
    java_best, java_median = per_key["java"]
    print(f"\n{label}: {count:,} keys, {n} partitions, {rounds} alternating rounds "
          f"({data.nbytes / 1e6:.0f} MB of key bytes)")
    print(f"  {'':<44}{'best ns/key':>12}{'median':>9}{'x Java (best, median)':>24}")
    rows = [("kassign batch, " + f"{threads} threads", "batch"), ("kassign batch, one thread", "batch, one thread"),
            ("Java per key, one thread (warm JVM)", "java"), ("memory floor (read keys, write int32)", "floor")]
    for title, name in rows:
        best, median = per_key[name]
        ratio = "" if name == "java" else f"{best / java_best:.2f}x, {median / java_median:.2f}x"
        print(f"  {title:<44}{best:>12.2f}{median:>9.2f}{ratio:>24}")
    best, median = per_key["batch"]
    verdict = "met" if median / java_median <= 0.5 else "NOT met"
    print(f"  target: batch <= half of Java's per-key time -> {verdict} "
          f"(median {median / java_median:.2f}x, best {best / java_best:.2f}x; "
          f"{median / per_key['floor'][1]:.1f}x the memory floor)")
    if not agree:
        print("  MISMATCH: Java's partitions differ from kassign's", file=sys.stderr)
    return agree


def kafka_python_check(keys: list[bytes], n: int, prefix: int) -> bool:
    try:
        from kafka.partitioner.default import murmur2 as kp_murmur2
    except ImportError:
        print("\n(kafka-python not installed: pip install kafka-python to compare)")
        return True
    few = keys[:prefix]
    t_peer = best_of(1, lambda: [(kp_murmur2(k) & 0x7FFFFFFF) % n for k in few]) / len(few)
    t_scalar = best_of(1, lambda: [kassign.partition_for_key(k, n) for k in few]) / len(few)
    t_batch = best_of(5, lambda: partitions_for_keys(keys, n)) / len(keys)
    print(f"\nagainst kafka-python's pure-Python murmur2 ({len(few):,} keys):")
    print(f"  kafka-python per key          {t_peer * 1e9:10.1f} ns/key")
    print(f"  kassign partition_for_key     {t_scalar * 1e9:10.1f} ns/key")
    print(f"  kassign batch, list of bytes  {t_batch * 1e9:10.1f} ns/key  ({t_peer / t_batch:,.0f}x kafka-python)")
    theirs = [(kp_murmur2(k) & 0x7FFFFFFF) % n for k in few]
    return partitions_for_keys(few, n).tolist() == theirs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=2_000_000)
    parser.add_argument("--key-bytes", type=int, default=16)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--kafka-python-keys", type=int, default=100_000, help="kafka-python is slow: time it on a prefix")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    fixed = [row.tobytes() for row in rng.integers(0, 256, size=(args.keys, args.key_bytes), dtype=np.uint8)]
    text = [f"user-{i}".encode() for i in range(args.keys)]
    with tempfile.TemporaryDirectory(prefix="kassign-bench-murmur2-") as work:
        ok = compare(f"{args.key_bytes}-byte random keys", fixed, args.partitions, args.rounds, Path(work))
        ok &= compare("text keys of mixed length (user-0 ..)", text, args.partitions, args.rounds, Path(work))
    ok &= kafka_python_check(fixed, args.partitions, args.kafka_python_keys)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
