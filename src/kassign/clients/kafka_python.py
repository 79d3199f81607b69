"""kassign's assignors for kafka-python consumers: put one in ``partition_assignment_strategy``.

Example::

    from kafka import KafkaConsumer
    from kassign.clients.kafka_python import StickyAssignor

    consumer = KafkaConsumer("orders", group_id="billing", bootstrap_servers="localhost:9092",
                             partition_assignment_strategy=[StickyAssignor()])

The classes are those of ``kassign.groups.classic.clients.kafka_python`` (the same objects), whose docstring says
what each one does.
"""

from __future__ import annotations

from kassign.groups.classic.clients.kafka_python import (
    CooperativeStickyAssignor,
    KassignAssignor,
    LoadAwareAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
    kassign_assignor,
)

__all__ = ["CooperativeStickyAssignor", "KassignAssignor", "LoadAwareAssignor", "RangeAssignor",
           "RoundRobinAssignor", "StickyAssignor", "kassign_assignor"]
