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
it ran through the ``-2`` lag alone. (The sticky assignor counts owned tasks as previous actives,
see :mod:`kassign.groups.streams.classic.sticky`.)
"""

from __future__ import annotations

import numpy as np

from kassign.groups.streams.classic.scenario import LATEST_OFFSET, StreamsClassicScenario


def lag_of(offset_sum: int | None, end_offset_sum: int) -> int:
    """A client's lag on a stateful task from what it reported (None: nothing)."""
    if offset_sum is None:
        return end_offset_sum
    if offset_sum == LATEST_OFFSET:
        return LATEST_OFFSET
    return end_offset_sum if end_offset_sum < offset_sum else end_offset_sum - offset_sum


def merged_offset_sums(scenario: StreamsClassicScenario) -> list[dict[int, int]]:
    """Per client, the offset sums of its consumers folded together as the leader meets them."""
    merged: list[dict[int, int]] = [{} for _ in scenario.clients]
    for ci, mi in scenario.subscription_order:
        merged[ci].update(scenario.clients[ci].consumers[mi].offset_sums)
    return merged


def lag_matrix(scenario: StreamsClassicScenario, merged: list[dict[int, int]]) -> np.ndarray:
    """Lags as an int64 array [client, task]: a row starts as the end offset sums (no state) and
    the reported stateful tasks are filled in. Entries of stateless tasks mean nothing."""
    ends = scenario.end_offset_sums
    lags = np.tile(np.array(ends, dtype=np.int64), (len(scenario.clients), 1))
    stateful = scenario.stateful
    for ci, sums in enumerate(merged):
        row = lags[ci]
        for task, offset in sums.items():
            if stateful[task]:
                row[task] = lag_of(offset, ends[task])
    return lags
