"""A tour of kassign's three questions on small inputs: key -> partition, partition -> consumer,
replica -> broker. Run with ./run demo (or python examples/demo.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KASSIGN = [sys.executable, "-m", "kassign.cli.main"]

STEPS = [
    ("key -> partition: Kafka's default partitioner", ["partition", "--partitions", "12", "user-1", "user-2", "order-7"]),
    ("key -> partition: where other producer clients put the same keys",
     ["partition", "--partitions", "12", "--compare", "java,librdkafka:consistent_random,sarama:hash,kafkajs:legacy",
      "user-1", "user-2", "order-7"]),
    ("partition -> consumer: range (the seeds' 2 members x 2 topics x 3 partitions)",
     ["assign", "--strategy", "range", str(HERE / "seeds-range.json")]),
    ("partition -> consumer: roundrobin on the same group", ["assign", "--strategy", "roundrobin", str(HERE / "seeds-range.json")]),
    ("replica -> broker: rack-aware placement", ["replicas", "--brokers", "0:rack-a,1:rack-a,2:rack-b,3:rack-b,4:rack-c",
                                                  "--partitions", "6", "--replication-factor", "3", "--start-index", "0"]),
    ("replica -> broker: the fewest moves after adding broker 3 (rack-a), beside Kafka's --generate",
     ["plan", "--current", str(HERE / "reassignment-current.json"), "--brokers", "0:rack-a,1:rack-b,2:rack-c,3:rack-a"]),
    ("partition -> consumer: Kafka 4's server-side uniform assignor (KIP-848)",
     ["assign", "--protocol", "consumer", "--strategy", "uniform", str(HERE / "kafka4-uniform-heterogeneous.json")]),
]

for title, args in STEPS:
    print(f"\n== {title}\n$ kassign {' '.join(args)}", flush=True)
    subprocess.run(KASSIGN + args, check=True)
