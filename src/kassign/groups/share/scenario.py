"""A share group's scenario: the consumer protocol's scenario document plus ``initialized``.

``initialized`` maps a topic to the partitions whose share-group state exists; only those may
be assigned (Kafka's coordinator initialises a partition's share state before it lets the
assignor hand it out). Absent (or null): every partition of every topic in ``topics``. A topic
of ``topics`` that ``initialized`` leaves out has no partition initialised.

Example::

    {"topics": {"t0": 4, "t1": 2},
     "members": {"A": {"topics": ["t0", "t1"], "owned": [["t0", 0]]},
                 "B": {"topics": ["t0"], "owned": [["t0", 0]]}},
     "initialized": {"t0": [0, 1, 2]}}

``t0-0`` is in the current target of both A and B (share groups allow that); ``t0-3`` and
both partitions of ``t1`` may not be assigned yet.

The rest of the document is read by :func:`kassign.groups.scenario.parse_scenario`, unchanged for the
other protocols. One more check applies here: an owned partition number must lie within its
topic (0 .. count-1; at least 0 for a topic that no longer exists). The consumer protocol's
assignors drop such a claim, but Kafka's share assignor would keep it and count it, and a real
coordinator can never hold one (a topic's partitions are never taken away), so kassign refuses
it rather than guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kassign.core.errors import ScenarioError, shown
from kassign.core.limits import is_whole_number
from kassign.groups.scenario import Scenario, parse_scenario


@dataclass(frozen=True)
class ShareScenario:
    """A checked share-group scenario. ``initialized``: topic -> its initialised partitions
    (sorted, distinct), or None when every partition may be assigned."""

    scenario: Scenario
    initialized: dict[str, np.ndarray] | None = None

    def assignable(self, topic_names: list[str], offsets: np.ndarray) -> np.ndarray:
        """Per flat partition id of the layout (``topic_names`` with ``offsets``), whether it may be assigned."""
        total = int(offsets[-1])
        if self.initialized is None:
            return np.ones(total, dtype=bool)
        mask = np.zeros(total, dtype=bool)
        for t, name in enumerate(topic_names):
            partitions = self.initialized.get(name)
            if partitions is not None:
                mask[offsets[t] + partitions] = True
        return mask


def parse_share_scenario(doc: Any) -> ShareScenario:
    """Check a share-group scenario (a document, a :class:`Scenario`, or a :class:`ShareScenario`)."""
    if isinstance(doc, ShareScenario):
        return doc
    raw = None
    if isinstance(doc, Mapping) and "initialized" in doc:
        raw = doc["initialized"]
        doc = {key: value for key, value in doc.items() if key != "initialized"}
    scenario = parse_scenario(doc)
    _check_owned_partitions(scenario)
    return ShareScenario(scenario, None if raw is None else _parse_initialized(raw, scenario.topics))


def _parse_initialized(doc: Any, topics: Mapping[str, int]) -> dict[str, np.ndarray]:
    if not isinstance(doc, Mapping):
        raise ScenarioError('scenario initialized: expected an object of topic -> initialized partitions, '
                            'e.g. {"t0": [0, 1]}')
    result: dict[str, np.ndarray] = {}
    for topic, partitions in doc.items():
        path = f"scenario initialized.{topic}"
        if not isinstance(topic, str):
            raise ScenarioError(f"scenario initialized: topic names must be strings, got {shown(topic)}")
        if topic not in topics:
            raise ScenarioError(f"{path}: no topic {topic!r} in topics; initialized lists partitions of "
                                "existing topics only")
        if isinstance(partitions, (str, bytes)) or not isinstance(partitions, (list, tuple, np.ndarray)):
            raise ScenarioError(f"{path}: expected a list of partition numbers, e.g. [0, 1], got {shown(partitions)}")
        values = list(partitions.tolist() if isinstance(partitions, np.ndarray) else partitions)
        for value in values:
            if not is_whole_number(value) or not 0 <= value < topics[topic]:
                raise ScenarioError(f"{path}: {shown(value)} is not a partition of {topic!r} "
                                    f"({_partitions_of(topic, topics[topic])})")
        result[topic] = np.unique(np.array(values, dtype=np.int64))
    return result


def _check_owned_partitions(scenario: Scenario) -> None:
    """Every owned partition number within its topic (at least 0 for a topic that no longer exists)."""
    members = scenario.members
    if not len(members.owned_partitions):
        return
    names, code = members.owned_topics_coded()
    limit = np.array([scenario.topics.get(name, 2**31) for name in names], dtype=np.int64)
    partitions = np.asarray(members.owned_partitions, dtype=np.int64)
    bad = np.flatnonzero((partitions < 0) | (partitions >= limit[code]))
    if not len(bad):
        return
    j = int(bad[0])
    member = members.ids[int(np.searchsorted(members.owned_start, j, side="right")) - 1]
    topic, partition = names[int(code[j])], int(partitions[j])
    if topic in scenario.topics:
        problem = f"partition {partition} of {topic!r} ({_partitions_of(topic, scenario.topics[topic])})"
    else:
        problem = f"partition {partition} of {topic!r}; partition numbers are at least 0"
    raise ScenarioError(f"scenario members.{member}.owned: {problem} (a share group's target assignment only "
                        "holds partitions that exist)")


def _partitions_of(topic: str, count: int) -> str:
    return f"{topic!r} has partitions 0..{count - 1}" if count else f"{topic!r} has no partitions"
