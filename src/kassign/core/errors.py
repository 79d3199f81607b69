"""The one exception family kassign raises for bad input.

Every message is written for a person: it names what was wrong and what to do.
The CLI prints it on one line and exits with status 2.
"""

from __future__ import annotations

import json
from typing import Any


def shown(value: Any) -> str:
    """A bad value as an error message shows it: JSON-like, at most 60 characters, and never an
    attempt to print an integer of thousands of digits (Python refuses beyond 4300)."""
    if isinstance(value, int) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class KassignError(Exception):
    """Bad input or an impossible request; the message says what to fix."""


class ScenarioError(KassignError):
    """A scenario document (topics, members, racks) is malformed."""


class UnknownAssignorError(KassignError):
    """No assignor answers to the requested name or dotted path."""


class LiveClusterError(KassignError):
    """A live cluster could not be read: unreachable, unknown topic, refused credentials, bad settings."""


class InvalidPartitionError(KassignError):
    """A record names a partition outside the topic's range."""


class ReplicaPlacementError(KassignError):
    """Replica placement was refused, exactly where Kafka refuses it.

    ``kafka_exception`` is the name of the exception Kafka raises in the same case.
    """

    def __init__(self, message: str, kafka_exception: str) -> None:
        super().__init__(message)
        self.kafka_exception = kafka_exception


class KafkaAssignorError(KassignError):
    """The Kafka release asked for fails on this group: its assignor throws where kassign says so.

    ``kafka_exception`` is the name of the exception Kafka throws (``IllegalStateException``), and the message
    quotes Kafka's own.
    """

    def __init__(self, message: str, kafka_exception: str) -> None:
        super().__init__(message)
        self.kafka_exception = kafka_exception


class Interrupted(BaseException):
    """The command was stopped by a signal (SIGINT, SIGTERM): a BaseException, like KeyboardInterrupt, so
    no ``except Exception`` swallows it, and cleanup in ``finally`` blocks still runs."""

    def __init__(self, signal_name: str, exit_code: int) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name
        self.exit_code = exit_code
