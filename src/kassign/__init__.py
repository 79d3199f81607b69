"""kassign: where Kafka puts your data, computed exactly as Kafka does.

key -> partition (the producer's murmur2 partitioner), partition -> consumer (the
assignors of every group type -- classic, consumer, share, streams, and Kafka Streams'
task assignment -- and the protocols around them), replica -> broker (Kafka's replica
placement), and a Spark pipeline that applies them to real data; each as the Kafka
release the user runs (``kafka_version``: every release from 3.0 to 4.4, default 4.4).

Write your own assignor from :mod:`kassign.assignors`; run kassign's assignors inside kafka-python or aiokafka
consumers from :mod:`kassign.clients`. Modules that moved keep their old import paths (:mod:`kassign.core.moved`).

The public names below are loaded on first use (PEP 562), so that importing one part of
kassign (the CLI, which starts Spark's JVM as early as it can) does not load every other part.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kassign.core.lazy import lazy_names
from kassign.core.moved import install as _keep_old_paths

_keep_old_paths()

if TYPE_CHECKING:  # what static tools (type checkers, the API docs) see; loaded lazily at run time
    from kassign.api import assign, assign_table, assign_tasks
    from kassign.core.errors import KassignError
    from kassign.kafka.plan_inputs import read_plan_inputs
    from kassign.producer.partitioner import murmur2, partition_for_key, partitions_for_keys
    from kassign.replicas.plan import plan_reassignment
    from kassign.replicas.placement import assign_replicas

_HOMES = {
    "assign": "kassign.api",
    "assign_table": "kassign.api",
    "assign_tasks": "kassign.api",
    "KassignError": "kassign.core.errors",
    "murmur2": "kassign.producer.partitioner",
    "partition_for_key": "kassign.producer.partitioner",
    "partitions_for_keys": "kassign.producer.partitioner",
    "plan_reassignment": "kassign.replicas.plan",
    "read_plan_inputs": "kassign.kafka.plan_inputs",
    "assign_replicas": "kassign.replicas.placement",
}

__all__ = [
    "KassignError",
    "assign",
    "assign_table",
    "assign_tasks",
    "assign_replicas",
    "murmur2",
    "partition_for_key",
    "partitions_for_keys",
    "plan_reassignment",
    "read_plan_inputs",
]
__version__ = "0.1.0"


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
