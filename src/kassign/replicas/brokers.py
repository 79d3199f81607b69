"""Broker lists as users write them (``0:rack-a,1:rack-b,2``) and as the API takes them, checked.

Kept apart from the placers (:mod:`kassign.replicas.placement`, :mod:`kassign.replicas.striped`), whose Java-order
kernels load numba: the pipeline's command reads ``--brokers`` before Spark's JVM starts, and a bad list
must be refused there in a moment.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from kassign.core.cluster import broker_entries
from kassign.core.errors import KassignError
from kassign.core.limits import is_whole_number, whole_number
from kassign.core.text import utf8_problem

Broker = tuple[int, "str | None"]
StripedBroker = tuple[int, "str | None", bool]

INT_MAX = (1 << 31) - 1


def normalise_brokers(brokers: Any, *, ordered: bool = True, error: type[KassignError] = KassignError,
                      context: str = "") -> list[Broker]:
    """``[(id, rack_or_None), ...]`` checked, from such pairs, bare ids or a dict of id -> rack_or_None: ids
    whole numbers in Java's int range, racks non-empty UTF-8 text or None, no id twice. ``ordered``: a set
    is refused (placement follows the order given); each problem raises ``error``, its message prefixed by
    ``context`` (a plan says ``"brokers: "``)."""
    result: list[Broker] = []
    seen: set[int] = set()
    for entry in broker_entries(brokers, ordered=ordered, error=error):
        if is_whole_number(entry):
            broker_id, rack = entry, None
        elif isinstance(entry, (tuple, list)) and len(entry) == 2:
            broker_id, rack = entry
        else:
            raise error(f"{context}a broker must be an (id, rack_or_None) pair, got {entry!r}")
        try:
            broker_id = whole_number(broker_id, "broker id", low=0)
        except KassignError as err:
            raise error(f"{context}{err}") from None
        if rack is not None and (not isinstance(rack, str) or not rack):
            raise error(f"{context}broker {broker_id}: rack must be a non-empty string or None, got {rack!r}")
        if rack is not None and utf8_problem(rack, "rack"):  # Kafka's racks are UTF-8 text
            raise error(f"{context}broker {broker_id}: {utf8_problem(rack, 'rack')}")
        if broker_id in seen:
            raise error(f"{context}broker {broker_id} is listed twice")
        seen.add(broker_id)
        result.append((broker_id, rack))
    return result


def normalise_striped_brokers(brokers: Iterable[Any]) -> list[StripedBroker]:
    """``[(id, rack_or_None, fenced), ...]`` checked; ``(id, rack)`` pairs and bare ids are unfenced."""
    result: list[StripedBroker] = []
    seen: set[int] = set()
    for entry in broker_entries(brokers, fenced=True):
        if is_whole_number(entry):
            fields: tuple[Any, ...] = (entry, None, False)
        elif isinstance(entry, (tuple, list)) and len(entry) in (2, 3):
            fields = tuple(entry) if len(entry) == 3 else (entry[0], entry[1], False)
        else:
            raise KassignError(f"a broker must be (id, rack_or_None, fenced) or (id, rack_or_None), got {entry!r}")
        broker_id, rack, fenced = fields
        if not is_whole_number(broker_id) or not 0 <= broker_id <= INT_MAX:
            raise KassignError(f"broker id must be a whole number from 0 to {INT_MAX}, got {broker_id!r}")
        broker_id = int(broker_id)
        if rack is not None and (not isinstance(rack, str) or not rack):
            raise KassignError(f"broker {broker_id}: rack must be a non-empty string or None, got {rack!r}")
        if rack is not None and utf8_problem(rack, "rack"):  # Kafka's racks are UTF-8 text
            raise KassignError(f"broker {broker_id}: {utf8_problem(rack, 'rack')}")
        if not isinstance(fenced, (bool, np.bool_)):
            raise KassignError(f"broker {broker_id}: fenced must be True or False, got {fenced!r}")
        fenced = bool(fenced)
        if broker_id in seen:
            raise KassignError(f"broker {broker_id} is listed twice")
        seen.add(broker_id)
        result.append((broker_id, rack, fenced))
    return result


def parse_broker_list(text: str) -> list[Broker]:
    """``0:rack1,1:rack3,2`` -> ``[(0, 'rack1'), (1, 'rack3'), (2, None)]``."""
    brokers: list[Broker] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise KassignError(f"bad broker list {text!r}: empty entry; write id or id:rack, comma-separated")
        broker_text, _, rack = item.partition(":")
        try:
            broker_id = int(broker_text)
        except ValueError:
            raise KassignError(f"bad broker list {text!r}: {broker_text!r} is not a broker id; write id or id:rack") from None
        if ":" in item and not rack:
            raise KassignError(f"bad broker list {text!r}: broker {broker_id} has an empty rack after ':'")
        brokers.append((broker_id, rack or None))
    return normalise_brokers(brokers)


def parse_striped_broker_list(text: str) -> list[tuple[int, str | None, bool]]:
    """``0:rack1,1:rack1:fenced,2,3::fenced`` -> ``[(0, 'rack1', False), (1, 'rack1', True),
    (2, None, False), (3, None, True)]``: a ``:fenced`` suffix marks a fenced broker (so a rack
    cannot be called ``fenced``; ``3:fenced`` and ``3::fenced`` both mean rack-less and fenced);
    the rest is read as in ``parse_broker_list``."""
    brokers: list[tuple[int, str | None, bool]] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise KassignError(f"bad broker list {text!r}: empty entry; write id, id:rack, id:rack:fenced or id::fenced")
        fenced = item.endswith(":fenced")
        head = item[: -len(":fenced")] if fenced else item
        broker_text, colon, rack = head.partition(":")
        try:
            broker_id = int(broker_text)
        except ValueError:
            raise KassignError(
                f"bad broker list {text!r}: {broker_text!r} is not a broker id; write id, id:rack, id:rack:fenced "
                "or id::fenced"
            ) from None
        if colon and not rack and not fenced:
            raise KassignError(f"bad broker list {text!r}: broker {broker_id} has an empty rack after ':'")
        brokers.append((broker_id, rack or None, fenced))
    return normalise_striped_brokers(brokers)
