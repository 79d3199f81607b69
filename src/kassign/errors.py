"""The one exception family kassign raises for bad input.

Every message is written for a person: it names what was wrong and what to do.
The CLI prints it on one line and exits with status 2.
"""

from __future__ import annotations


class KassignError(Exception):
    """Bad input or an impossible request; the message says what to fix."""


class ScenarioError(KassignError):
    """A scenario document (topics, members, racks) is malformed."""


class UnknownAssignorError(KassignError):
    """No assignor answers to the requested name or dotted path."""


class InvalidPartitionError(KassignError):
    """A record names a partition outside the topic's range."""


class ReplicaPlacementError(KassignError):
    """Replica placement was refused, exactly where Kafka refuses it.

    ``kafka_exception`` is the name of the exception Kafka raises in the same case.
    """

    def __init__(self, message: str, kafka_exception: str) -> None:
        super().__init__(message)
        self.kafka_exception = kafka_exception
