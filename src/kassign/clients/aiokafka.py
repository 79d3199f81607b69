"""kassign's assignors for aiokafka consumers: put one in ``partition_assignment_strategy``.

Example::

    from aiokafka import AIOKafkaConsumer
    from kassign.clients.aiokafka import StickyAssignor

    consumer = AIOKafkaConsumer("orders", group_id="billing", bootstrap_servers="localhost:9092",
                                partition_assignment_strategy=[StickyAssignor()])

The classes are those of ``kassign.groups.classic.clients.aiokafka`` (the same objects), whose docstring says what
each one does.
"""

from __future__ import annotations

from kassign.groups.classic.clients.aiokafka import (
    KassignAssignor,
    LoadAwareAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
    kassign_assignor,
)

__all__ = ["KassignAssignor", "LoadAwareAssignor", "RangeAssignor", "RoundRobinAssignor", "StickyAssignor",
           "kassign_assignor"]
