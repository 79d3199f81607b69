"""Benchmark: the batch path of every client partitioner beside Kafka's murmur2 path, on the same keys.

Target (issue #11): every partitioner in the same speed class as the murmur2 (java) path,
numba over Arrow buffers. Prints ns per key for each partitioner on a pyarrow binary array
of random keys, the ratio to the java path measured on the same array, and the same for
int64 keys serialised as Kafka's LongSerializer does (8 big-endian bytes). For scale, the
Python standard library's C ``zlib.crc32`` called per key on the same keys.

    python bench/bench_partitioners.py [--keys 2000000] [--key-bytes 16] [--partitions 100]
"""

from __future__ import annotations

import argparse
import zlib

import numpy as np
import pyarrow as pa

from kassign.producer.clients import NAMES
from kassign.producer.partitioner import partition_for_key, partitions_for_keys

from _timing import best_of


def paired(repeats: int, ours, baseline) -> tuple[float, float]:
    """Best time of ``ours`` and of ``baseline``, run alternately."""
    best_ours = best_base = float("inf")
    for _ in range(repeats):
        best_base = min(best_base, best_of(1, baseline))
        best_ours = min(best_ours, best_of(1, ours))
    return best_ours, best_base


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=2_000_000)
    parser.add_argument("--key-bytes", type=int, default=16)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=(args.keys, args.key_bytes), dtype=np.uint8)
    keys = pa.array([row.tobytes() for row in raw], pa.binary())
    longs = pa.array(rng.integers(-(2**63), 2**63 - 1, size=args.keys, dtype=np.int64))
    n = args.partitions
    for name in NAMES:  # compile (or load numba's cache) and check batch == scalar outside the timings
        sample = keys.slice(0, 200).to_pylist()
        assert partitions_for_keys(sample, n, name).tolist() == [partition_for_key(k, n, name) for k in sample], name

    print(f"\nbatch path, {args.keys:,} keys, {n} partitions, one core, best of {args.repeat}")
    print("(java is re-timed next to each partitioner, alternating, so a busy machine slows both alike)\n")
    print(f"{'partitioner':<32}{f'{args.key_bytes}-byte keys ns/key':>24}{'vs java':>9}"
          f"{'int64 keys ns/key':>20}{'vs java':>9}")
    worst = 0.0
    for name in NAMES:
        ratios = []
        cells = []
        for batch in (keys, longs):
            ours, java = paired(args.repeat, lambda: partitions_for_keys(batch, n, name),
                                lambda: partitions_for_keys(batch, n))
            ratios.append(ours / java)
            cells.append(f"{ours / args.keys * 1e9:>{24 if batch is keys else 20}.1f}{ours / java:>8.2f}x")
        worst = max(worst, *ratios)
        print(f"{name:<32}{''.join(cells)}")
    few = keys.slice(0, 200_000).to_pylist()
    stdlib = best_of(3, lambda: [zlib.crc32(k) % n for k in few]) / len(few)
    print(f"\nfor scale: zlib.crc32(key) % n in a Python loop (C CRC, one call per key): {stdlib * 1e9:.1f} ns/key")
    print(f"slowest partitioner: {worst:.2f}x the java path's time per key")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
