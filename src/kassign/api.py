"""``kassign.assign``: run a strategy over a scenario document (SPEC section 3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kassign.assignors import ConsumerPartitionAssignor, get_assignor
from kassign.errors import KassignError
from kassign.scenario import Scenario, parse_scenario, sorted_assignment


def assign(
    strategy: str | ConsumerPartitionAssignor,
    scenario: Mapping[str, Any] | Scenario,
    **options: Any,
) -> dict[str, list[tuple[str, int]]]:
    """Assign the scenario's partitions with ``strategy``.

    Returns ``{member: [(topic, partition), ...]}`` sorted, with every member present.
    ``options`` go to the assignor's constructor (e.g. ``seed`` for ``random``).
    """
    parsed = parse_scenario(scenario)
    assignor = get_assignor(strategy, **options)
    subscriptions = parsed.subscriptions(assignor)
    result = assignor.assign(parsed.cluster(), subscriptions)
    if not isinstance(result, Mapping):
        raise KassignError(f"assignor {assignor.name!r} returned {type(result).__name__}, expected a mapping of member -> Assignment")
    strangers = set(result) - set(parsed.members)
    if strangers:
        raise KassignError(f"assignor {assignor.name!r} assigned partitions to unknown members {sorted(strangers)}")
    return sorted_assignment(result, parsed.members)
