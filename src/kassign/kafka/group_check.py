"""A live group checked against kassign: the coordinator's assignment beside what kassign computes for the
same members, subscriptions, topic ids and current assignment, with the group's own assignor and release.

The rule, per group type (``group_check`` in ``describe-group --json`` and summary.json):

- **consumer** (KIP-848): the coordinator keeps a *target* assignment and recomputes it from the previous
  target whenever the group changes. kassign runs the group's assignor (``uniform`` or ``range``) on the
  members as described, each member's current target as ``owned``: where nothing changed since, the answer is
  the target itself. Members go in the order the coordinator lists them (its map's order; a newcomer is last).
- **share** (KIP-932): the same with the ``simple`` assignor; the partitions whose share state exists
  (DescribeShareGroupOffsets answers a start offset for them) are the ``initialized`` ones.
- **streams** (KIP-1071): the ``sticky`` task assignor on the topology the coordinator describes: a
  subtopology has as many tasks as its source topics have partitions, and it is stateful when it has
  changelog topics. The standby count is a group setting ``StreamsGroupDescribe`` does not carry: it is taken
  as the most standbys any task holds (said in ``notes``). Each member's current tasks are what the release's
  coordinator hands its assignor: Kafka 4.2 and 4.3 its target, 4.4 what it is assigned now and the task
  offset sums it reported (the describe answer carries both; ``notes`` says which were used).
- **classic**: the leader's assignor, named by the group's protocol, on the subscriptions the members sent
  when they joined (topics, owned partitions, generation, rack): the answer is what the leader handed out.

Example: a stable uniform group of three members on a 7-partition topic, targets {b: 0-1, c: 4-6, a: 2-3}.
kassign, given those targets as ``owned``, keeps each member's partitions (the quotas are 2, 2 and 3 and c
holds the extra one): ``{"kafka_version": "4.3", "equal": true, "differs": {}}``.

A group kassign cannot check (an assignor it does not know, a regular-expression subscription, a member
without a subscription) gets ``"equal": null`` and ``why``: never a silent verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kassign.core.errors import KassignError
from kassign.core.releases import (
    DEFAULT_KAFKA_VERSION,
    KAFKA_20665,
    STREAMS_COORDINATOR,
    ReleaseLike,
    parse_release,
    rule,
)
from kassign.kafka.groups import GroupDescription

CLASSIC_ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")

def group_scenario(group: GroupDescription, partitions: Mapping[str, int],
                   initialized: Mapping[str, list[int]] | None = None,
                   kafka_version: ReleaseLike = DEFAULT_KAFKA_VERSION) -> dict[str, Any]:
    """The scenario document of ``group``'s members as the coordinator holds them (the group type's scenario of
    [the formats page](formats.md#scenario-documents));
    ``partitions``: every subscribed topic's partition count (a live cluster's metadata); ``kafka_version``: the
    release whose coordinator hands the assignor a streams group's members (4.4: current tasks, offset sums)."""
    if group.type == "streams":
        return _streams_scenario(group, partitions, _hands_over_current(kafka_version))
    members: dict[str, Any] = {}
    for member_id, member in group.members.items():
        spec: dict[str, Any] = {"topics": list(member.topics)}
        held = member.target if group.type in ("consumer", "share") else (member.owned or [])
        if held:
            spec["owned"] = [list(tp) for tp in held]
        if group.type == "classic" and member.generation is not None:
            spec["generation"] = member.generation
        if member.rack:
            spec["rack"] = member.rack
        if member.instance_id:
            spec["instance_id"] = member.instance_id
        members[member_id] = spec
    named = {t for m in group.members.values() for t in m.topics} | {
        tp[0] for m in group.members.values() for tp in (m.target or []) if isinstance(tp, (list, tuple))}
    doc: dict[str, Any] = {"topics": {t: partitions[t] for t in sorted(named) if t in partitions}, "members": members}
    if group.type in ("consumer", "share") and group.topic_ids:
        doc["topic_ids"] = {t: i for t, i in group.topic_ids.items()}
    if group.type == "share" and initialized is not None:
        doc["initialized"] = {t: sorted(ps) for t, ps in initialized.items() if t in doc["topics"]}
    return doc


def _hands_over_current(kafka_version: ReleaseLike) -> bool:
    """Whether the release's streams coordinator hands its assignor each member's current tasks and offset sums
    (Kafka 4.4), rather than its previous target (4.2, 4.3). A release without streams groups: the former."""
    release = parse_release(kafka_version)
    return release.at_least(4, 2) and rule(release, STREAMS_COORDINATOR) == KAFKA_20665


def _streams_scenario(group: GroupDescription, partitions: Mapping[str, int], current: bool) -> dict[str, Any]:
    topology = (group.topology or {}).get("subtopologies", {})
    subtopologies = {}
    for sub_id, sub in topology.items():
        counts = [partitions[t] for t in sub.get("source_topics", []) if t in partitions]
        counts += [r.get("partitions", 0) for r in (sub.get("repartition_source_topics") or {}).values()]
        subtopologies[str(sub_id)] = {"partitions": max(counts, default=0),
                                      "stateful": bool(sub.get("state_changelog_topics"))}
    members = {}
    for member_id, member in group.members.items():
        spec: dict[str, Any] = {"process_id": member.process_id or member_id}
        held = member.assignment if current else member.target
        for kind in ("active", "standby", "warmup"):
            tasks = (held or {}).get(kind, {}) if isinstance(held, Mapping) else {}
            if tasks:
                spec[kind] = {str(s): sorted(ps) for s, ps in tasks.items()}
        if current and member.task_offsets:
            spec["offset_sums"] = dict(member.task_offsets)
        if member.instance_id:
            spec["instance_id"] = member.instance_id
        if member.rack:
            spec["rack"] = member.rack
        if member.client_tags:
            spec["client_tags"] = dict(member.client_tags)
        members[member_id] = spec
    return {"subtopologies": subtopologies, "num_standby_replicas": _standbys_seen(group), "members": members}


def _standbys_seen(group: GroupDescription) -> int:
    per_task: dict[tuple[str, int], int] = {}
    for member in group.members.values():
        target = member.target if isinstance(member.target, Mapping) else {}
        for sub, parts in target.get("standby", {}).items():
            for p in parts:
                per_task[(str(sub), p)] = per_task.get((str(sub), p), 0) + 1
    return max(per_task.values(), default=0)


def check_group(group: GroupDescription, partitions: Mapping[str, int], kafka_version: str = DEFAULT_KAFKA_VERSION,
                initialized: Mapping[str, list[int]] | None = None) -> dict[str, Any]:
    """The ``group_check`` object: ``{"kafka_version", "assignor", "equal", "differs", "notes"}`` (and ``why``
    where ``equal`` is null because kassign cannot compute this group's answer)."""
    release = parse_release(kafka_version)
    out: dict[str, Any] = {"kafka_version": release.label, "assignor": group.assignor, "equal": None, "differs": {},
                           "notes": []}
    why = _cannot_check(group)
    if why:
        out["why"] = why
        return out
    scenario = group_scenario(group, partitions, initialized, release)
    try:
        ours, theirs = _compute(group, scenario, release.label, out["notes"])
    except KassignError as err:
        out["why"] = f"kassign cannot compute this group's assignment: {err}"
        return out
    if group.type == "streams":
        handed = ("its current assignment and reported task offset sums" if _hands_over_current(release)
                  else "its target assignment as its current tasks")
        out["notes"].append(f"the assignor given each member's {handed}, as Kafka {release.label}'s coordinator "
                            "hands them over")
    for member_id in group.members:
        if ours.get(member_id) != theirs.get(member_id):
            out["differs"][member_id] = {"kassign": ours.get(member_id), "coordinator": theirs.get(member_id)}
    out["equal"] = not out["differs"]
    return out


def _cannot_check(group: GroupDescription) -> str | None:
    if not group.members:
        return "the group has no members"
    if group.type == "classic":
        if group.protocol_type not in ("consumer", None, ""):
            return f"a classic group of protocol type {group.protocol_type!r} (not a consumer group)"
        if any(not m.topics for m in group.members.values()):
            return "the coordinator's answer holds no subscription for some member, so its input is unknown"
        if not group.assignor:
            return "the coordinator's answer names no assignor for the group"
        if group.assignor not in CLASSIC_ASSIGNORS:
            return f"its assignor {group.assignor!r} is not one kassign knows ({', '.join(CLASSIC_ASSIGNORS)})"
    if group.type == "consumer":
        if group.assignor not in ("uniform", "range"):
            return f"its assignor {group.assignor!r} is not one of Kafka's (uniform, range)"
        regex = [m for m, spec in group.members.items() if spec.subscribed_regex]
        if regex:
            return f"member {regex[0]} subscribes by regular expression, which the describe answer does not resolve"
    return None


def _compute(group: GroupDescription, scenario: dict[str, Any], version: str,
             notes: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """kassign's answer and the coordinator's, member by member, in one comparable shape."""
    if group.type == "streams":
        from kassign.groups.streams.sticky import assign_streams

        notes.append(f"standby replicas per stateful task taken as {scenario['num_standby_replicas']}, the most any "
                     "task holds (the group's num.standby.replicas is not in the describe answer)")
        ours = assign_streams("sticky", scenario, version)
        theirs = {m: _task_map(spec.target) for m, spec in group.members.items()}
        return {m: _task_map(a) for m, a in ours.items()}, theirs
    if group.type == "share":
        from kassign.groups.share import assign_share

        ours_pairs = assign_share("simple", scenario, version)
        theirs_pairs = {m: spec.assignment for m, spec in group.members.items()}
    elif group.type == "consumer":
        from kassign.groups.consumer.assignors import assign_server_side
        from kassign.groups.scenario import parse_scenario

        parsed = parse_scenario(scenario)
        ours_pairs = assign_server_side(group.assignor, parsed, version).to_dict(parsed.members.ids)
        theirs_pairs = {m: spec.target for m, spec in group.members.items()}
    else:
        from kassign.groups.classic.assignors import assign_scenario, get_assignor
        from kassign.groups.scenario import parse_scenario

        parsed = parse_scenario(scenario)
        ours_pairs = assign_scenario(get_assignor(group.assignor, kafka_version=version),
                                     parsed).to_dict(parsed.members.ids)
        theirs_pairs = {m: spec.assignment for m, spec in group.members.items()}
    return ({m: _pairs(ps) for m, ps in ours_pairs.items()}, {m: _pairs(ps) for m, ps in theirs_pairs.items()})


def _pairs(partitions: Any) -> list[list[Any]]:
    return sorted([str(t), int(p)] for t, p in (partitions or []))


def _task_map(tasks: Any) -> dict[str, dict[str, list[int]]]:
    tasks = tasks if isinstance(tasks, Mapping) else {}
    return {kind: {str(s): sorted(int(p) for p in ps) for s, ps in sorted(tasks.get(kind, {}).items()) if ps}
            for kind in ("active", "standby", "warmup")}
