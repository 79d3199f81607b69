"""``kassign.assign``: run a strategy over a scenario document (SPEC section 3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kassign.assignors import ConsumerPartitionAssignor, get_assignor
from kassign.assignors.server import assign_server_side
from kassign.errors import KassignError
from kassign.scenario import Scenario, parse_scenario, sorted_assignment


PROTOCOLS = ("classic", "consumer")


def assign(
    strategy: str | ConsumerPartitionAssignor,
    scenario: Mapping[str, Any] | Scenario,
    protocol: str = "classic",
    **options: Any,
) -> dict[str, list[tuple[str, int]]]:
    """Assign the scenario's partitions with ``strategy``.

    Returns ``{member: [(topic, partition), ...]}`` sorted, with every member present.
    ``protocol="classic"`` runs a client-side assignor (``range``, ``sticky``, ...; the
    members' ``owned`` are what they held); ``protocol="consumer"`` runs the Kafka 4
    group coordinator's (``uniform`` or ``range``; ``owned`` is each member's current
    target). ``options`` go to a classic assignor's constructor (e.g. ``seed`` for ``random``).
    """
    parsed = parse_scenario(scenario)
    if protocol == "consumer":
        if options:
            raise KassignError(f"the consumer protocol's assignors take no options, got {sorted(options)}")
        return assign_server_side(strategy, parsed)
    if protocol != "classic":
        raise KassignError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    assignor = get_assignor(strategy, **options)
    subscriptions = parsed.subscriptions(assignor)
    result = assignor.assign(parsed.cluster(), subscriptions)
    if not isinstance(result, Mapping):
        raise KassignError(f"assignor {assignor.name!r} returned {type(result).__name__}, expected a mapping of member -> Assignment")
    strangers = set(result) - set(parsed.members)
    if strangers:
        raise KassignError(f"assignor {assignor.name!r} assigned partitions to unknown members {sorted(strangers)}")
    return sorted_assignment(result, parsed.members)
