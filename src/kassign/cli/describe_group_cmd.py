"""``kassign describe-group``: a live group of any type, its members, assignment and offsets, and kassign's check
of its assignment, without Spark.

The tables are worded as Kafka's own tools word them (``kafka-consumer-groups.sh --describe``,
``kafka-share-groups.sh --describe``, ``kafka-streams-groups.sh --describe --members``); below them, in words,
what kassign computes for the same members with the group's assignor and the broker's release.
"""

from __future__ import annotations

from typing import Any

import click

from kassign.cli.common import compact_partitions, emit_json, json_option, print_table


@click.command("describe-group")
@click.option("--bootstrap-server", "bootstrap", required=True, metavar="HOST:PORT[,HOST:PORT...]",
              help="Brokers to ask.")
@click.option("--group", "group_id", required=True, metavar="G", help="The group id (any group type).")
@click.option("--command-config", default=None, metavar="FILE",
              help="Client properties (security settings), as the Kafka tools take them.")
@click.option("--kafka-version", default=None, metavar="MAJOR.MINOR[.PATCH]",
              help="The Kafka release the broker runs. Default: inferred from the broker's ApiVersions where it "
                   "names one release, 3.0 to 4.4 (else 4.4, and the answer says why).")
@click.option("--timeout", default=10.0, show_default=True, metavar="SECONDS",
              help="Deadline of each request to the cluster.")
@json_option
def command(bootstrap: str, group_id: str, command_config: str | None, kafka_version: str | None, timeout: float,
            as_json: bool) -> None:
    """Describe group G on the cluster: members, assignment, lag, and whether the assignment is exactly what
    the group's assignor gives for these members (the broker's Kafka release)."""
    from kassign.core.releases import parse_release
    from kassign.kafka.config import read_command_config
    from kassign.kafka.live_group import deadline_after, open_cluster, read_group

    if kafka_version is not None:
        parse_release(kafka_version)  # a usage error before any connection
    config = read_command_config(command_config) if command_config else None
    with open_cluster(bootstrap, config, timeout) as cluster:
        found = read_group(cluster, group_id, kafka_version, deadline_after(timeout))
    if as_json:
        emit_json(found)
        return
    show(found)


def show(found: dict[str, Any]) -> None:
    """The group as tables and the check in words, on the terminal."""
    from kassign.kafka.group_words import group_type_words

    group = found["group"]
    epoch = f", group epoch {group['epoch']}" if group.get("epoch") is not None else ""
    assignor = group.get("assignor") or ("sticky" if group["type"] == "streams" else "-")
    click.echo(f"Group {group['id']}: {group_type_words(group['type'])}, state {group['state']}, assignor "
               f"{assignor}{epoch}, {len(group['members'])} member{'s' if len(group['members']) != 1 else ''}")
    if group["type"] == "streams":
        _streams_members(group)
    else:
        _partitions(group, found["lag"])
    for line in check_lines(found):
        click.echo(line)
    for warning in found["warnings"]:
        click.echo(f"warning: {warning}", err=True)


def _owner_of(group: dict[str, Any]) -> dict[tuple[str, int], list[str]]:
    owners: dict[tuple[str, int], list[str]] = {}
    for member_id, member in group["members"].items():
        for topic, partition in member["assignment"]:
            owners.setdefault((topic, partition), []).append(member_id)
    return owners


def _partitions(group: dict[str, Any], lag: dict[str, Any]) -> None:
    owners = _owner_of(group)
    members = group["members"]
    share = group["type"] == "share"
    # Kafka's tool repeats the group on every row; the table's title names it once
    columns = ["TOPIC", "PARTITION", "START-OFFSET" if share else "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
               "CONSUMER-ID" if not share else "MEMBER-IDS", "HOST", "CLIENT-ID"]
    rows = []
    for topic, entry in lag.items():
        for p, (mark, end, behind) in enumerate(zip(entry["committed"], entry["end_offsets"], entry["lag"])):
            who = owners.get((topic, p), [])
            first = members[who[0]] if who else None
            rows.append([topic, p, "-" if mark is None else mark, end, behind,
                         ",".join(who) if who else "-", first["host"] if first else "-",
                         first["client_id"] if first else "-"])
    held = {(t, p) for t, e in lag.items() for p in range(len(e["lag"]))}
    for (topic, p), who in sorted(owners.items()):
        if (topic, p) not in held:  # a partition whose topic has no metadata: shown without offsets
            rows.append([topic, p, "-", "-", "-", ",".join(who), members[who[0]]["host"],
                         members[who[0]]["client_id"]])
    total = sum(sum(e["lag"]) for e in lag.values())
    print_table(f"{group['id']} ({group['type']} group)", columns, rows, f"total lag {total:,} records")


def _tasks(tasks: dict[str, list[int]]) -> str:
    return " ".join(f"{s}_{p}" for s, parts in sorted(tasks.items()) for p in parts) or "-"


def _streams_members(group: dict[str, Any]) -> None:
    rows = [[member_id, member.get("process_id") or "-", member["client_id"],
             _tasks(member["assignment"].get("active", {})), _tasks(member["assignment"].get("standby", {})),
             _tasks(member["assignment"].get("warmup", {}))]
            for member_id, member in group["members"].items()]
    print_table(f"{group['id']} (streams group)", ["MEMBER", "PROCESS", "CLIENT-ID", "ACTIVE-TASKS",
                                                   "STANDBY-TASKS", "WARMUP-TASKS"], rows)


def check_lines(found: dict[str, Any]) -> list[str]:
    """kassign's check of the group in words: the release it holds for, and what differs."""
    check = found["group_check"]
    group = found["group"]
    release = f"Kafka {found['kafka_version']}, {found['kafka_version_from']}: {found['kafka_version_why']}"
    from kassign.kafka.group_words import check_assignor, checked_assignment

    assignor, held = check_assignor(check), checked_assignment(group["type"])
    if check["equal"] is None:
        return [f"check ({release}): not checked: {check['why']}"]
    if check["equal"]:
        lines = [f"check ({release}): the coordinator's {held} is exactly what {assignor} gives for these members"]
    else:
        lines = [f"check ({release}): {len(check['differs'])} member{'s' if len(check['differs']) != 1 else ''} "
                 f"differ from what {assignor} gives for these members:"]
        for member_id, both in check["differs"].items():
            lines.append(f"  {member_id}: coordinator {_shown(both['coordinator'])}, kassign {_shown(both['kassign'])}")
    return lines + [f"note: {note}" for note in check.get("notes", [])]


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{kind} {_tasks(tasks)}" for kind, tasks in value.items() if tasks) or "nothing"
    return compact_partitions([tuple(tp) for tp in value or []]) or "nothing"
