"""Kafka Streams' client-tag-aware standby placement (KIP-708, ``rack.aware.assignment.tags``).

Kafka 3.2 brought it; 3.2 to 4.4 place standbys by tags alike (3.0 and 3.1 have no tags: asking
them for ``rack_aware_assignment_tags`` is a :class:`~kassign.core.errors.KassignError`).

With ``rack_aware_assignment_tags`` set (say ``["zone"]``), each client carries tags (say
``{"zone": "eu-1a"}``) and the high-availability assignor places standbys by them: for each
stateful task in order, starting from the client running it, it picks the least loaded client
(weight ``assigned tasks / threads``, ties by UUID) that has no copy of the task and shares no
tag value already used by a copy, one standby after another. A tag key whose values are all
used up (no more distinct values than copies placed so far) stops counting, so placement
degrades to the keys that can still differ. Standbys that find no such client are placed
afterwards on the least loaded clients without a copy, tasks in ``HashMap`` order of their
hash codes. Balancing then moves standbys only between clients whose tags are all equal.

Example: clients A (zone a), B (zone a), C (zone b), one thread each; tasks ``0_0`` active on
A, ``0_1`` on B, ``0_2`` on C; one standby each. ``0_0``: zone a is used, so C takes it. ``0_1``:
zone a used, C (load 2) is the only client in zone b, so C takes it (3). ``0_2``: zone b used,
A and B qualify with load 1 each; A has the lower UUID. Balancing moves nothing from C to a
client of another zone, so C keeps three tasks: Kafka prefers spreading copies over zones to
spreading load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kassign.core.errors import KassignError
from kassign.groups.streams.classic.scenario import task_hash
from kassign.core.javasets import hash_set_order, may_have_tree_bins

if TYPE_CHECKING:  # the assignor calls in here: its class is named for type checkers only
    from kassign.groups.streams.classic.high_availability import HighAvailabilityAssignor


def same_tags(source: dict[str, str], destination: dict[str, str]) -> bool:
    """Whether a standby may move from source to destination: every tag of the source has the same
    value at the destination."""
    return all(destination.get(key) == value for key, value in source.items())


def assign_tag_aware_standbys(assignor: HighAvailabilityAssignor) -> None:
    """Place ``num_standby_replicas`` standbys per stateful task by client tags, falling back to
    the least loaded clients."""
    scenario, clients = assignor.scenario, assignor.clients
    wanted = scenario.num_standby_replicas
    tag_keys = set(scenario.rack_aware_assignment_tags)
    tags = [c.client_tags for c in scenario.clients]
    n = len(clients)

    values_of_key: dict[str, set[str]] = {}
    clients_of_entry: dict[tuple[str, str], set[int]] = {}
    for c in range(n):
        for key, value in tags[c].items():
            values_of_key.setdefault(key, set()).add(value)
            clients_of_entry.setdefault((key, value), set()).add(c)

    # Kafka's map of standbys still to place: a HashMap filled with every stateful task in order,
    # from which fully placed tasks are removed; the fallback walks what is left in its order.
    remaining = {task: wanted for task in assignor.stateful}
    by_load = assignor.least_loaded_without_copy()

    for task in assignor.stateful:
        home = next(c for c in range(n) if task in clients.active[c])
        by_load.offer_all(range(n))
        used_clients = 1  # the active's client counts as used
        left = remaining[task]
        used: dict[tuple[str, str], set[int]] = {}
        last = home
        while True:
            for key, value in tags[last].items():
                if key not in tag_keys:
                    continue  # Kafka logs that the tag is ignored
                values = values_of_key[key]
                if len(values) <= used_clients:
                    for each in values:
                        used.pop((key, each), None)
                else:
                    used[(key, value)] = clients_of_entry[(key, value)]
            free = np.ones(n, dtype=bool)
            for members in used.values():
                free[list(members)] = False
            chosen = by_load.poll(task, free)
            if chosen is None:
                break
            used_clients += 1
            left -= 1
            clients.add_standby(chosen, task)
            last = chosen
            if left <= 0:
                break
        if left > 0:
            remaining[task] = left  # Kafka logs that rack awareness could not place them all
        else:
            del remaining[task]

    if remaining:
        by_load.offer_all(range(n))
        hashes = [task_hash(*scenario.tasks[t]) for t in assignor.stateful]
        if len(remaining) < len(assignor.stateful):
            spread = np.asarray(hashes, dtype=np.int64)
            if may_have_tree_bins(spread ^ (spread >> 16)):
                # Removing a key from a tree bin can move another key of that bin to its front.
                raise KassignError(
                    "kassign cannot reproduce the order in which Kafka Streams places the standbys that client "
                    "tags could not place here (its HashMap of tasks holds tree bins, and removals reorder "
                    "them); fewer stateful tasks per subtopology, or client tags with more distinct values, "
                    "avoid it")
        for task in hash_set_order(hashes, assignor.stateful):
            if task in remaining:
                assignor.assign_standbys_least_loaded(task, remaining[task], by_load)
