"""The sticky assignors' machinery, shared by the eager and the cooperative assignor.

* ``claims``: who owned what before (user data or ``owned``), generations deciding conflicts;
* ``userdata``: Kafka's StickyAssignor byte format, one blob or every member's at once;
* ``racks``: when racks count and what a rack mismatch is (KIP-881), one definition for every path;
* ``uniform``: Kafka's constrained algorithm when every member subscribes alike (racks included);
* ``optimal`` and ``flow``: the optimal general algorithm, a min-cost flow over classes of partitions;
* ``round``: what a cooperative round hands out now and what it withholds;
* ``engine``: the path from subscriptions to an assignment, choosing among the above.

The assignors themselves are thin modules beside this package:
:mod:`kassign.groups.classic.assignors.eager_sticky` (``sticky``) and
:mod:`kassign.groups.classic.assignors.cooperative_sticky` (``cooperative-sticky``).
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # ``from kassign.groups.classic.assignors.sticky import StickyAssignor`` keeps working; imported late,
    # since that module itself imports this package's parts.
    if name == "StickyAssignor":
        from kassign.groups.classic.assignors.eager_sticky import StickyAssignor

        return StickyAssignor
    raise AttributeError(name)
