"""Cooperative rounds, evened out: who consumes what *while* partitions are handed over.

Under the cooperative protocol a partition that changes owner is withheld for one
round. The general (different-subscriptions) target is optimal for the final
ownership, but several optimal targets can exist, and they may differ in how even
this round is: a member that receives many moved partitions sits nearly idle until
the follow-up rebalance. This module picks, among targets with the same final
per-member counts, the same kept partitions and no more rack mismatches (as Kafka
counts them, ``sticky.racks``), one whose current round is more even.

The move that allows it: member A holds a *free* partition y (nobody owned it, so A
consumes it at once) and member B holds a *withheld* partition x (B waits for it).
If A may take x and B may take y, swapping them leaves final counts and kept
partitions unchanged and (when checked) adds no rack mismatch, while A's current load
drops by one and B's rises by one. Swaps are made while some pair's current loads
differ by two or more; each one lowers the sum of squared round loads, so it ends.

Data layout: owner and flags are numpy arrays over global partition ids; members are
indexes; the search keeps per-member lists of free and withheld partition ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

NO_OWNER = -1


def even_out_round(
    owner: np.ndarray,
    withheld: np.ndarray,
    listed: np.ndarray,
    listers: Callable[[int], frozenset[int]],
    topic_of: np.ndarray,
    subscribed: Sequence[frozenset[int]],
    mismatch: Callable[[int, int], bool] | None,
) -> np.ndarray:
    """A copy of ``owner`` with free and withheld partitions swapped between members to even out this round.

    ``withheld``: global ids withheld this round. ``listed``: bool per partition, some member
    listed it as owned. ``listers(p)``: members that listed ``p``. ``subscribed[m]``: topic
    indexes member ``m`` may take. ``mismatch(m, p)``: whether ``p`` at ``m`` is a rack mismatch
    (``RackContext.mismatch``; None when racks play no part).
    """
    owner = owner.copy()
    members = len(subscribed)
    if members < 2 or len(withheld) == 0:
        return owner
    is_withheld = np.zeros(len(owner), dtype=bool)
    is_withheld[withheld] = True
    free_of: list[list[int]] = [[] for _ in range(members)]
    waiting_of: list[list[int]] = [[] for _ in range(members)]
    for p in np.flatnonzero((owner != NO_OWNER) & ~listed).tolist():
        free_of[owner[p]].append(p)
    for p in withheld.tolist():
        waiting_of[owner[p]].append(p)
    round_load = np.bincount(owner[(owner != NO_OWNER) & ~is_withheld], minlength=members).astype(np.int64)

    for _ in range(len(withheld)):  # every swap turns one withheld slot into a free one elsewhere: bounded
        swap = _find_swap(round_load, free_of, waiting_of, listers, topic_of, subscribed, mismatch)
        if swap is None:
            break
        a, y, b, x = swap
        free_of[a].remove(y)
        waiting_of[b].remove(x)
        free_of[b].append(y)
        waiting_of[a].append(x)
        owner[y], owner[x] = b, a
        round_load[a] -= 1
        round_load[b] += 1
    return owner


def _find_swap(
    round_load: np.ndarray,
    free_of: list[list[int]],
    waiting_of: list[list[int]],
    listers: Callable[[int], frozenset[int]],
    topic_of: np.ndarray,
    subscribed: Sequence[frozenset[int]],
    mismatch: Callable[[int, int], bool] | None,
) -> tuple[int, int, int, int] | None:
    """The first swap between a busiest-first member A and a least-busy-first member B that helps."""
    busiest = np.argsort(-round_load, kind="stable").tolist()
    idlest = busiest[::-1]
    for a in busiest:
        if not free_of[a]:
            continue
        for b in idlest:
            if round_load[a] - round_load[b] < 2:
                break
            for x in waiting_of[b]:
                # A must be allowed x, and must not have listed it (then x would be kept, not withheld).
                if topic_of[x] not in subscribed[a] or a in listers(x):
                    continue
                for y in free_of[a]:
                    if topic_of[y] not in subscribed[b]:
                        continue
                    if mismatch is not None and (
                        mismatch(a, x) + mismatch(b, y) > mismatch(b, x) + mismatch(a, y)
                    ):
                        continue  # the swap would add a rack mismatch
                    return a, y, b, x
    return None
