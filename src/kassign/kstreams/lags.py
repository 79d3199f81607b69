"""What each client reports about its task state, merged per client, and the lags that follow.

The group leader (``StreamsPartitionAssignor``) folds the subscriptions of a client's consumers
together, meeting them in its ``HashMap`` of member ids: a later consumer's offset sum for a
task replaces an earlier one's. A client's lag on a stateful task is then

* ``-2`` (``Task.LATEST_OFFSET``) when the client reports ``-2``: it runs the task as active;
* the task's end offset sum when the client reports nothing (an absent sum counts as 0) or
  more than the end offset sum (its state is probably corrupt, so it counts as none);
* otherwise end offset sum minus offset sum.

Example: end offset sum 1000; client A reports 900 (lag 100), client B nothing (lag 1000),
client C -2 (lag -2, caught up whatever the acceptable recovery lag).

Which tasks a consumer owns does not enter: the high-availability assignor keeps a task where
it ran through the ``-2`` lag alone. (Ownership only matters to what a consumer may receive in
the same round under cooperative rebalancing, see :mod:`kassign.kstreams.threads`.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kassign.kstreams.scenario import LATEST_OFFSET, StreamsClassicScenario


@dataclass
class ClientHistory:
    """One client's merged subscription: what the assignor knows of its past."""

    offset_sums: dict[int, int] = field(default_factory=dict)  # task -> merged offset sum
    lags: dict[int, int] = field(default_factory=dict)  # stateful task -> lag


def client_histories(scenario: StreamsClassicScenario) -> list[ClientHistory]:
    """Per client (in the scenario's client order), its merged offset sums and its lags."""
    histories = [ClientHistory() for _ in scenario.clients]
    for ci, mi in scenario.subscription_order:
        histories[ci].offset_sums.update(scenario.clients[ci].consumers[mi].offset_sums)

    stateful_tasks = [t for t, stateful in enumerate(scenario.stateful) if stateful]
    for history in histories:
        sums = history.offset_sums
        for task in stateful_tasks:
            end = scenario.end_offset_sums[task]
            offset = sums.get(task, 0)
            if offset == LATEST_OFFSET:
                history.lags[task] = LATEST_OFFSET
            elif end < offset:
                history.lags[task] = end
            else:
                history.lags[task] = end - offset
    return histories
