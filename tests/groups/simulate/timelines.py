"""Random simulator timelines for hypothesis: one generator of events for every protocol's tests."""

from __future__ import annotations

import copy
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


STREAMS_EVENT_KINDS = ("restart", "crash", "stop", "start", "scale_out")


def draw_streams_events(draw: Callable, names: Sequence[str], *, kinds: Sequence[str] = STREAMS_EVENT_KINDS,
                        gaps: Sequence[float] = (0, 1, 5, 30, 90), downs: Sequence[float] = (1, 20, 100),
                        keep_one: bool = True, flags: bool = False) -> list[dict]:
    """Up to six events of a Kafka Streams timeline for the instances ``names``, in order, each valid when it
    comes (a restarting instance is back before the next event). ``keep_one``: never stop the last running
    instance; ``flags``: also draw ``leave_group`` and ``state_lost`` where an event takes them, and
    ``scale_in`` when ``kinds`` names it."""
    events: list[dict] = []
    running, down = set(names), set()
    at = 0.0
    for _ in range(draw(st.integers(1, 6))):
        at += draw(st.sampled_from(list(gaps)))
        kind = draw(st.sampled_from(list(kinds)))
        if kind in ("restart", "crash", "stop", "scale_in") and len(running) > (1 if keep_one else 0):
            name = draw(st.sampled_from(sorted(running)))
            event = {"at": at, "type": kind, **({"instances": [name]} if kind == "scale_in" else {"instance": name})}
            if flags and kind != "crash":
                event["leave_group"] = draw(st.booleans())
            if kind == "restart":
                event["down"] = draw(st.sampled_from(list(downs)))
                event["state_lost"] = draw(st.booleans())
                at += event["down"]  # keep later events clear of its return
            else:
                if flags and kind == "crash":
                    event["state_lost"] = draw(st.booleans())
                running.discard(name)
                down.add(name)
            events.append(event)
        elif kind == "start" and down:
            name = draw(st.sampled_from(sorted(down)))
            down.discard(name)
            running.add(name)
            events.append({"at": at, "type": "start", "instance": name,
                           **({"state_lost": draw(st.booleans())} if flags else {})})
        elif kind == "scale_out":
            events.append({"at": at, "type": "scale_out", "add": 1, "prefix": f"n{at:g}-"})
            if flags:  # the newcomer may stop later (two at one instant: the second is n...-2, left alone)
                running.add(f"n{at:g}-1")
    return events


def changed(base: dict, **changes: Any) -> dict:
    """A deep copy of ``base`` with changes by path (``a__b__c=value``; ``None`` removes the key)."""
    document = copy.deepcopy(base)
    for path, value in changes.items():
        target = document
        *head, last = path.split("__")
        for key in head:
            target = target[key]
        if value is None:
            target.pop(last, None)
        else:
            target[last] = value
    return document
