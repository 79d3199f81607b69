"""Random simulator timelines for hypothesis: one generator of events for every protocol's tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

EVENT_KINDS = ["join", "leave", "crash", "restart", "subscribe", "add", "create", "delete"]


def draw_topics(draw: Callable) -> dict[str, int]:
    return {f"t{i}": draw(st.integers(1, 5)) for i in range(draw(st.integers(1, 3)))}


def draw_events(draw: Callable, topics: dict[str, int], members: dict[str, Any], *,
                gaps: Sequence[float], downs: Sequence[float], recreate: bool) -> list[dict]:
    """Up to eight membership and topic events at increasing times.

    ``gaps``: seconds between events; ``downs``: how long a restarting member is away;
    ``recreate``: whether a deleted topic may be created again under its old name."""
    names = list(topics)
    alive, events, t, fresh, existing = set(members), [], 0.0, 0, set(topics)
    subscription = st.lists(st.sampled_from(names), unique=True)
    for _ in range(draw(st.integers(1, 8))):
        t += draw(st.sampled_from(list(gaps)))
        kind = draw(st.sampled_from(EVENT_KINDS))
        pick = sorted(alive)
        if kind == "join" or not pick and kind in ("leave", "crash", "restart", "subscribe"):
            name = f"N{fresh}"
            fresh += 1
            events.append({"at": t, "type": "join", "member": name,
                           "topics": draw(st.lists(st.sampled_from(names), min_size=1, unique=True))})
            alive.add(name)
        elif kind in ("leave", "crash"):
            name = draw(st.sampled_from(pick))
            events.append({"at": t, "type": kind, "member": name})
            alive.discard(name)
        elif kind == "restart":
            events.append({"at": t, "type": "restart", "member": draw(st.sampled_from(pick)),
                           "down": draw(st.sampled_from(list(downs)))})
        elif kind == "subscribe":
            events.append({"at": t, "type": "subscribe", "member": draw(st.sampled_from(pick)),
                           "topics": draw(subscription)})
        elif kind == "add" and existing:
            events.append({"at": t, "type": "add_partitions", "topic": draw(st.sampled_from(sorted(existing))),
                           "add": draw(st.integers(1, 3))})
        elif kind == "create":
            reusable = [n for n in names if n not in existing] if recreate else []
            new = draw(st.sampled_from([f"x{len(events)}"] + reusable))
            if new in existing:
                continue
            if new not in names:
                names.append(new)
            existing.add(new)
            events.append({"at": t, "type": "create_topic", "topic": new, "partitions": draw(st.integers(1, 4))})
        elif kind == "delete" and existing:
            gone = draw(st.sampled_from(sorted(existing)))
            existing.discard(gone)
            events.append({"at": t, "type": "delete_topic", "topic": gone})
    return events
