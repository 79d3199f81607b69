"""The capacity document: what each broker can hold and carry, where the Kafka protocol cannot tell.

The rule: a document ``{"default": {...}, "brokers": {"ID": {...}}}``, each entry any of four fields, each a
positive whole number: ``disk_bytes`` (the disk the broker's replicas may fill), ``network_in_bytes_per_s`` and
``network_out_bytes_per_s`` (what its network carries each way) and ``max_replicas`` (the most replicas it may
hold). A broker's value of a field is its own entry's, else the default's, else none (``null`` is the same as
absent). Where the document gives no ``disk_bytes``, a live read fills it in from the broker's log dirs
(DescribeLogDirs v4 and later). Anything else is refused with one line naming it: an unknown field, a broker id
that is not a whole number (or, when the cluster's brokers are known, not one of them), a value that is not a
positive whole number.

Worked example::

    {"default": {"disk_bytes": 1000000000000, "max_replicas": 4000},
     "brokers": {"3": {"disk_bytes": 500000000000, "network_in_bytes_per_s": 125000000}}}

gives broker 3 ``disk_bytes`` 500 GB, ``max_replicas`` 4000 and ``network_in_bytes_per_s`` 125 MB/s, and every
other broker 1 TB and 4000 replicas with no network figure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from kassign.core.documents import load_json
from kassign.core.errors import KassignError, shown
from kassign.core.limits import JAVA_INT_MAX, is_whole_number

__all__ = ["FIELDS", "BrokerCapacity", "Capacity", "CapacityError", "parse_capacity"]

FIELDS = ("disk_bytes", "network_in_bytes_per_s", "network_out_bytes_per_s", "max_replicas")
_LONG_MAX = 2**63 - 1


class CapacityError(KassignError):
    """A capacity document that cannot be used."""


@dataclass(frozen=True)
class BrokerCapacity:
    """One broker's limits; None: not given."""

    disk_bytes: int | None = None
    network_in_bytes_per_s: int | None = None
    network_out_bytes_per_s: int | None = None
    max_replicas: int | None = None

    def over(self, base: BrokerCapacity) -> BrokerCapacity:
        """This entry's values, ``base``'s where this one gives none."""
        return BrokerCapacity(*(getattr(self, f) if getattr(self, f) is not None else getattr(base, f)
                                for f in FIELDS))

    def to_json(self) -> dict[str, int]:
        """The fields given (a capacity document's entry)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


@dataclass(frozen=True)
class Capacity:
    """A checked capacity document: the default entry, each broker's own entry, and where it came from."""

    default: BrokerCapacity
    brokers: dict[int, BrokerCapacity]
    source: str  # "FILE" or "a dict"

    def check_brokers(self, brokers: Iterable[int]) -> None:
        """Refuse entries for brokers the cluster does not have (a typing mistake would otherwise leave the real
        broker without its limits)."""
        known = set(brokers)
        strangers = sorted(set(self.brokers) - known)
        if strangers:
            where = "capacity" if self.source == "a dict" else f"capacity file {self.source!r}"
            raise CapacityError(f"{where}: unknown broker id{'s' if len(strangers) > 1 else ''} "
                                f"{', '.join(map(str, strangers))} (the cluster's brokers: "
                                f"{', '.join(map(str, sorted(known)))})")

    def for_broker(self, broker: int) -> BrokerCapacity:
        return self.brokers.get(broker, BrokerCapacity()).over(self.default)

    def resolve(self, brokers: Iterable[int]) -> dict[int, BrokerCapacity]:
        """Every broker of ``brokers`` with its values (own entry over the default)."""
        return {b: self.for_broker(b) for b in sorted(brokers)}

    def to_json(self) -> dict[str, Any]:
        """The document again, in its own shape (what ``plan_reassignment(capacity=...)`` takes)."""
        return {"default": self.default.to_json(),
                "brokers": {str(b): c.to_json() for b, c in sorted(self.brokers.items())}}


def _entry(value: Any, where: str) -> BrokerCapacity:
    if not isinstance(value, Mapping):
        raise CapacityError(f"{where} must be an object of {', '.join(FIELDS)}, got {shown(value)}")
    unknown = sorted(str(k) for k in value if k not in FIELDS)
    if unknown:
        raise CapacityError(f"{where}: unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                            f"(a capacity entry has {', '.join(FIELDS)})")
    found: dict[str, int] = {}
    for name in FIELDS:
        number = value.get(name)
        if number is None:
            continue
        if isinstance(number, float) and number.is_integer() and 0 < number <= _LONG_MAX:
            hint = f" (write {int(number)}, not {number!r})"
        else:
            hint = ""
        high = JAVA_INT_MAX if name == "max_replicas" else _LONG_MAX
        if not is_whole_number(number) or not 0 < number <= high:
            raise CapacityError(f"{where}.{name} must be a positive whole number up to {high}, got "
                                f"{shown(number)}{hint}")
        found[name] = int(number)
    return BrokerCapacity(**found)


def _broker_id(key: Any, where: str) -> int:
    text = str(key).strip()
    if is_whole_number(key):
        number = int(key)
    elif isinstance(key, str) and text.isascii() and text.isdigit():
        number = int(text)
    else:
        raise CapacityError(f"{where}: broker id {json.dumps(str(key))} is not a whole number")
    if not 0 <= number <= JAVA_INT_MAX:
        raise CapacityError(f"{where}: broker id {shown(number)} is out of range (0 to {JAVA_INT_MAX})")
    return number


def parse_capacity(document: Mapping[str, Any] | str | Path, brokers: Iterable[int] | None = None) -> Capacity:
    """A capacity document (a dict, or the path of its JSON file) checked; ``brokers``: the cluster's broker ids,
    when known, so that an entry for a broker the cluster does not have is refused (a typing mistake would
    otherwise leave the real broker without its limits). Raises :class:`CapacityError` with one line."""
    if isinstance(document, (str, Path)):
        path = str(document)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as err:
            raise CapacityError(f"cannot read capacity file {path!r}: {err.strerror or err}") from None
        except UnicodeDecodeError:
            raise CapacityError(f"capacity file {path!r} is not UTF-8 text") from None
        source = path
        where = f"capacity file {path!r}"
        try:
            doc = load_json(text, where)
        except KassignError as err:
            raise CapacityError(str(err)) from None
    elif isinstance(document, Mapping):
        source, where, doc = "a dict", "capacity", document
    else:
        raise CapacityError(f"capacity must be a document (dict) or the path of its JSON file, got "
                            f"{type(document).__name__}")
    if not isinstance(doc, Mapping):
        raise CapacityError(f"{where} must be a JSON object {{\"default\": {{...}}, \"brokers\": {{...}}}}, got "
                            f"{shown(doc)}")
    unknown = sorted(str(k) for k in doc if k not in ("default", "brokers"))
    if unknown:
        raise CapacityError(f"{where}: unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                            "(a capacity document has default and brokers)")
    default = _entry({} if doc.get("default") is None else doc["default"], f"{where}: default")
    given = {} if doc.get("brokers") is None else doc["brokers"]
    if not isinstance(given, Mapping):
        raise CapacityError(f"{where}: brokers must be an object of broker id -> entry, got {shown(given)}")
    entries: dict[int, BrokerCapacity] = {}
    for key, value in given.items():
        broker = _broker_id(key, f"{where}: brokers")
        if broker in entries:
            raise CapacityError(f"{where}: broker {broker} is given twice")
        entries[broker] = _entry(value, f"{where}: brokers.{broker}")
    capacity = Capacity(default, entries, source)
    if brokers is not None:
        capacity.check_brokers(brokers)
    return capacity
