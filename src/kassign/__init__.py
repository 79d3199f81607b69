"""kassign: where Kafka puts your data, computed exactly as Kafka does.

key -> partition (the producer's murmur2 partitioner), partition -> consumer (the
group assignors and the rebalance protocol around them), replica -> broker
(Kafka's replica placement), and a Spark pipeline that applies them to real data.
"""

from kassign.api import assign, assign_table
from kassign.errors import KassignError
from kassign.partitioner import murmur2, partition_for_key, partitions_for_keys
from kassign.plan import plan_reassignment
from kassign.replicas import assign_replicas

__all__ = [
    "KassignError",
    "assign",
    "assign_table",
    "assign_replicas",
    "murmur2",
    "partition_for_key",
    "partitions_for_keys",
    "plan_reassignment",
]
__version__ = "0.1.0"
