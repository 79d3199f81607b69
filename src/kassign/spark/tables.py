"""The pipeline summary as tables for people: the terminal (``print_table``) and report.html (``html_table``)
show the same rows. Bytes in binary units, counts with thousands separators, shares as percentages;
summary.json and ``--json`` keep the raw integers.

Each builder returns ``(title, columns, rows, caption)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kassign.core.releases import DEFAULT_KAFKA_VERSION
from kassign.core.units import Figure, count, human_bytes, percent
from kassign.kafka.group_words import check_assignor, checked_assignment, group_type_words

Table = tuple[str, list[str], list[list[Any]], "str | None"]


def ratio(value: float) -> Figure:
    """A max/mean ratio: ``1.16×`` (1.00× is perfectly even)."""
    return Figure(f"{value:.2f}×")


def _located(first: Mapping[str, Any]) -> str:
    if not first or first.get("line") is None:
        return "-"
    name = str(first.get("file") or "").rsplit("/", 1)[-1]
    return f"{name}:{first['line']:,}" if name else f"line {first['line']:,}"


def _short(text: Any, width: int = 60) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def rows_table(summary: Mapping[str, Any]) -> Table:
    rows = summary["rows"]
    body = [["input", count(rows["input"])]]
    body += [[f"set aside: {k}", count(v)] for k, v in rows["set_aside"].items()]
    body += [[k, count(v)] for k, v in rows["per_stage"].items()]
    offsets = rows.get("offsets")
    if offsets:
        body = [["offsets spanned", count(offsets["spanned"])], ["offsets read (records)", count(offsets["read"])]] \
            + [[f"offsets not read: {_NOT_READ.get(k, k)}", count(v)] for k, v in offsets["not_read"].items()] + body
    unconsumed = {k: v for k, v in rows.get("unconsumed_records", {}).items() if v}
    caption = "every record accounted for" if rows["accounted"] else "RECORDS LOST: a stage does not add up"
    if offsets:
        caption = ("every offset and record accounted for" if rows["accounted"]
                   else "OFFSETS OR RECORDS LOST: a stage does not add up")
    if unconsumed:
        caption += f"; not consumed (no subscriber): {', '.join(f'{k} {v:,}' for k, v in unconsumed.items())}"
    return "rows per stage", ["stage", "rows"], body, caption


def set_aside_table(summary: Mapping[str, Any]) -> Table | None:
    entries = summary.get("set_aside") or []
    if not entries:
        return None
    body = [[e["reason"], count(e["rows"]), _located(e.get("first") or {}), _short((e.get("first") or {}).get("raw"))]
            for e in entries]
    return ("rows set aside", ["reason", "rows", "first at", "first raw row"], body,
            "all of them, with file and line, in the set_aside table")


def sweep_table(summary: Mapping[str, Any]) -> Table:
    body = []
    for topic, s in summary["sweep"].items():
        now = next((c for c in s["curve"] if c["partitions"] == summary["partitions"].get(topic)), None)
        chosen = next((c for c in s["curve"] if c["partitions"] == s["recommended_partitions"]), None)
        body.append([topic, count(summary["partitions"].get(topic, 0)),
                     ratio(now["skew"]) if now else "-", percent(now["hottest_share"]) if now else "-",
                     count(s["recommended_partitions"]) if s["recommended_partitions"] else "none",
                     percent(chosen.get("moved_keys_share", 0.0)) if chosen else "-",
                     percent(s["target_share"]), percent(s.get("hottest_key_share", 0.0))])
    return ("partition-count sweep",
            ["topic", "partitions", "skew now", "hottest partition", "recommended partitions", "keys that move",
             "target share", "hottest key"], body,
            "skew: hottest partition / mean; recommended: the smallest count whose hottest partition stays "
            "under the target share of the bytes (a live topic: from today's count up, as topics only grow); keys "
            "that move: keys whose records would land on another partition than today under that count")


def hot_partitions_table(summary: Mapping[str, Any], limit: int | None = 8) -> Table:
    totals: dict[str, int] = {}
    for r in summary["partition_load"]:
        totals[r["topic"]] = totals.get(r["topic"], 0) + (r["bytes"] or 0)
    rows = sorted(summary["partition_load"], key=lambda r: (-(r["bytes"] or 0), r["topic"], r["partition"]))
    shown = rows if limit is None else rows[:limit]
    body = []
    for r in shown:
        keys = ", ".join(f"{_short(h['key'], 24)} ({percent(h['share'])})" for h in r.get("hot_keys") or []) or "-"
        body.append([r["topic"], count(r["partition"]), count(r["records"]), human_bytes(r["bytes"] or 0),
                     percent((r["bytes"] or 0) / totals[r["topic"]]) if totals.get(r["topic"]) else percent(0),
                     count(r["distinct_keys"]), keys])
    title = "hot keys per partition" if limit is None else f"hottest partitions (top {len(shown)} of {len(rows)})"
    return (title, ["topic", "partition", "records", "bytes", "share of topic", "keys",
                    "hottest keys (share of partition)"], body, None)


def consumer_table(summary: Mapping[str, Any]) -> Table:
    rebalance = summary.get("rebalance", {})

    def moved(strategy: str, event: str) -> Any:
        if strategy.startswith("share:"):
            return "no barrier"
        value = rebalance.get(strategy, {}).get(event)
        return human_bytes(value["bytes"]) if value else "-"

    body = [[s, ratio(c["bytes_spread"]["max_over_mean"]), human_bytes(c["bytes_spread"]["max_minus_min"]),
             moved(s, "member_leaves"), moved(s, "member_joins")] for s, c in summary["consumers"].items()]
    caption = ("max/mean: the busiest member's bytes over the mean (1.00× is even); moved: bytes whose partition "
               "changes owner when the last member leaves or one joins")
    if summary["consumers"]:
        caption += (f"; every strategy answers as Kafka {summary.get('kafka_version', DEFAULT_KAFKA_VERSION)}"
                    f" ({summary.get('kafka_version_from', 'default')})")
    if any(s.startswith("share:") for s in summary["consumers"]):
        caption += ("; share: a share group, whose members split a shared partition's records (counted evenly) and "
                    "keep fetching while the assignment changes (no rebalance barrier, nothing revoked first)")
    return ("consumer load by strategy", ["strategy", "max/mean bytes", "max-min bytes", "moved on leave",
                                          "moved on join"], body, caption)


def broker_table(summary: Mapping[str, Any]) -> Table:
    placement = summary["brokers"]
    body = [[b, v["rack"] or "-", count(v["leader_partitions"]), human_bytes(v["leader_bytes"]), count(v["replicas"]),
             human_bytes(v["replica_bytes"])] for b, v in placement["brokers"].items()]
    return ("broker load", ["broker", "rack", "leaders", "leader bytes", "replicas", "replica bytes"], body,
            f"replicas placed by the {placement['placer']} placer, seed {placement['seed']}")


def rack_table(summary: Mapping[str, Any]) -> Table:
    racks = summary["brokers"]["racks"]
    total = sum(v["replica_bytes"] for v in racks.values())
    body = [[rack, human_bytes(v["leader_bytes"]), human_bytes(v["replica_bytes"]),
             percent(v["replica_bytes"] / total) if total else percent(0)] for rack, v in racks.items()]
    return "bytes per rack", ["rack", "leader bytes", "replica bytes", "share of replica bytes"], body, None


def keyless_racks_table(summary: Mapping[str, Any]) -> Table | None:
    """Rack-aware producers (--partitioner-rack-aware): each rack's partitions and the keyless load on them."""
    found = summary.get("keyless_racks")
    if not found:
        return None
    body = []
    for topic, entry in found.items():
        for rack, v in sorted(entry["racks"].items()):
            body.append([topic, rack, "yes" if v["producers"] else "no", count(len(v["partitions"])),
                         count(v["keyless_records"]), human_bytes(v["keyless_bytes"]),
                         human_bytes(v["keyless_bytes"] / len(v["partitions"])) if v["partitions"] else "-"])
    model = summary.get("null_key_model") or {}
    return ("keyless records by the rack leading their partition",
            ["topic", "rack", "producers there", "partitions led", "keyless records", "keyless bytes",
             "per partition"], body,
            f"Kafka {model.get('kafka_version')} producers with partitioner.rack.aware (KIP-1123) in "
            f"{', '.join(model.get('client_racks') or [])}; leaders: {model.get('leader_racks_from', 'given')}")


def rebalance_table(summary: Mapping[str, Any]) -> Table:
    body = [[s, e.replace("_", " "), count(v["partitions"]), human_bytes(v["bytes"])]
            for s, events in summary["rebalance"].items() for e, v in events.items()]
    return "rebalance cost", ["strategy", "event", "partitions moved", "bytes moved"], body, None


def producers_table(summary: Mapping[str, Any]) -> Table | None:
    producers = summary.get("producers")
    if not producers:
        return None
    body = [[r["producer"], percent(r["records_moved_share"]), percent(r["keyed_records_moved_share"]),
             percent(r["keys_moved_share"]), percent(r["bytes_moved_share"]), ratio(r["max_over_mean_bytes"]),
             r["null_keys"]] for r in producers["agreement"]]
    return (f"producer agreement: share moved off {producers['reference']}'s partition",
            ["producer", "records", "keyed records", "keys", "bytes", "max/mean bytes", "null keys"], body,
            "max/mean bytes: hottest partition over the mean, under that producer")


def _moves(point: Mapping[str, Any] | None) -> str:
    if not point or (not point.get("keys_share") and not point.get("bytes_share")):
        return ""
    return (f"; {point['keys_share']:.0%} of keys and {point['bytes_share']:.0%} of keyed bytes would then land "
            "on another partition than today (their order across the change is not kept)")


def _recommendation(topic: str, n: int | None, summary: Mapping[str, Any]) -> str:
    sweep = summary["sweep"][topic]
    share = sweep["target_share"]
    now = summary["partitions"][topic]
    if not n:
        why = sweep.get("why_none") or f"no count keeps the hottest partition under {share:.0%}"
        return f"{topic}: {why}."
    point = next((c for c in sweep["curve"] if c["partitions"] == n), None)
    moves = {"keys_share": point.get("moved_keys_share", 0.0), "bytes_share": point.get("moved_bytes_share", 0.0)} \
        if point else None
    if "current_partitions" in sweep:  # a live topic: it can only grow
        if n == now:
            return (f"{topic}: keep {now:,} partitions: the hottest carries {point['hottest_share']:.1%} of the bytes, "
                    f"within the {share:.0%} target.")
        return (f"{topic}: grow to {n:,} partitions (now {now:,}), the smallest count from today up whose hottest "
                f"partition carries at most {share:.0%} of the bytes{_moves(moves)}.")
    text = (f"{topic}: use {n:,} partitions, the smallest count whose hottest partition carries at most "
            f"{share:.0%} of the bytes (now {now:,})")
    return text + (_moves(moves) if n != now else "") + "."


def verdict_lines(summary: Mapping[str, Any]) -> list[str]:
    """A few sentences: how many partitions, which strategy, where the worst skew is; for live topics also
    which producers put the records where they are, and the consumer lag."""
    verdict = summary.get("verdict") or {}
    lines = [_recommendation(topic, n, summary) for topic, n in (verdict.get("recommended_partitions") or {}).items()]
    for topic, text in (verdict.get("producers") or {}).items():
        lines.append(f"{topic}: {text}")
    for topic, text in (verdict.get("keyless_placement") or {}).items():
        lines.append(f"{topic}: {text}")
    lines += list((verdict.get("keyless_racks") or {}).values())
    if verdict.get("best_strategy"):
        lines.append(f"{verdict['best_strategy']} balances this data best over the consumers: the busiest member "
                     f"gets {verdict['best_strategy_max_over_mean']:.2f}× the mean bytes"
                     f"{_join_cost(verdict['best_strategy'], summary)}.")
    lag = verdict.get("lag")
    if lag:
        least = lag["least_behind_strategy"]
        member = lag["furthest_behind"][least]
        lines.append(f"group {summary['input'].get('group', '')}: {lag['total']:,} records behind in all; "
                     f"{least} keeps its furthest-behind member lowest ({member['member']}: {member['lag']:,} "
                     "records).")
    check = summary.get("group_check")
    group = summary.get("group") or {}
    if group.get("described") is False:
        lines.append(f"group {group['id']}: kassign cannot describe it ({group.get('why')}); the consumer stages "
                     "ran on assumed members.")
    elif check is not None:
        lines.append(group_check_sentence(group, check))
    worst = verdict.get("biggest_skew")
    if worst:
        lines.append(f"biggest skew: topic {worst['topic']}, whose hottest partition carries "
                     f"{worst['hottest_share']:.1%} of its bytes, {worst['skew']:.2f}× the mean of its "
                     f"{worst['partitions']:,} partitions (its hottest key alone: {worst['hottest_key_share']:.1%}).")
    return lines


def group_check_sentence(group: Mapping[str, Any], check: Mapping[str, Any]) -> str:
    """``group billing (a consumer group (KIP-848 protocol)): its target assignment is exactly what uniform gives for
    these members at Kafka 4.3.`` or which members differ, or why it was not checked."""
    kind = group_type_words(group.get("type"))
    head = f"group {group.get('id')} ({kind}, {len(group.get('members') or {})} members)"
    assignor, held = check_assignor(check), checked_assignment(group.get("type"))
    release = f"Kafka {check['kafka_version']}"
    if check.get("equal") is None:
        return f"{head}: its assignment was not checked: {check.get('why')}."
    if check["equal"]:
        return f"{head}: its {held} is exactly what {assignor} gives for these members at {release}."
    differs = list(check.get("differs") or {})
    shown = ", ".join(differs[:3]) + (f" and {len(differs) - 3} more" if len(differs) > 3 else "")
    return (f"{head}: {len(differs)} member{'s' if len(differs) != 1 else ''} hold{'s' if len(differs) == 1 else ''} "
            f"another {held} than {assignor} gives at {release} ({shown}); summary.json group_check says what each "
            "holds and what kassign computes.")


_STICKY = ("cooperative-sticky", "sticky")  # the assignors made to move little; the first wins a tie


def _join_cost(best: str, summary: Mapping[str, Any]) -> str:
    """``, but moves 3.1 MiB when a member joins, where cooperative-sticky moves 1.0 MiB`` when the strategy that
    balances best moves more bytes on a member join than a sticky assignor does; otherwise nothing."""
    rebalance = summary.get("rebalance") or {}
    joins = {s: events["member_joins"]["bytes"] for s, events in rebalance.items()
             if (events or {}).get("member_joins") and events["member_joins"].get("bytes") is not None}
    if best not in joins:
        return ""
    sticky = [s for s in _STICKY if s in joins and s != best]
    if not sticky:
        return ""
    least = min(sticky, key=lambda s: (joins[s], _STICKY.index(s)))
    if joins[best] <= joins[least]:
        return ""
    return (f", but moves {human_bytes(joins[best])} when a member joins, where {least} moves "
            f"{human_bytes(joins[least])}")


_NOT_READ = {"control": "transaction markers", "aborted": "aborted transactions", "retention": "deleted meanwhile",
             "topic deleted": "topic deleted", "truncated": "truncated", "compacted": "compacted away"}


def source_table(summary: Mapping[str, Any]) -> Table | None:
    source = summary.get("source")
    if not source:
        return None
    body = []
    for name, t in source["topics"].items():
        spanned = sum(e - s for s, e in zip(t["start_offsets"], t["end_offsets"]))
        not_read = ", ".join(f"{_NOT_READ.get(k, k)} {v:,}" for k, v in t["offsets_not_read"].items() if v) or "-"
        body.append([name, count(t["partitions"]), count(spanned), count(t["records"]), not_read])
    return ("read from " + source["bootstrap"], ["topic", "partitions", "offsets", "records read", "offsets not read"],
            body, f"from each partition's start to its end offset when reading started ({source['end_offsets_from']}, "
                  f"{source['isolation_level']})")


def forensics_table(summary: Mapping[str, Any]) -> Table | None:
    forensics = summary.get("forensics")
    if not forensics:
        return None
    body = []
    for topic, f in forensics.items():
        keyed = f["keyed_records"]
        for family in f.get("explanation", []):
            is_best = f["best"] in family["partitioners"]
            names = ", ".join(family["partitioners"])
            body.append([topic, _short(names, 70) + (" (best)" if is_best else ""), count(family["records"]),
                         percent(family["records"] / keyed) if keyed else percent(0),
                         "-" if is_best else count(family["gain"]), count(family["keys"])])
        body.append([topic, "unexplained", count(f["unexplained_records"]),
                     percent(f["unexplained_records"] / keyed) if keyed else percent(0), "-",
                     count(f["unexplained_keys"])])
        body.append([topic, "split keys (on 2+ partitions)", "-", "-", "-", count(f["split_keys"])])
    return ("which producer put the keyed records there",
            ["topic", "partitioners (same placement here)", "records", "share", "not explained above", "keys"],
            body, "records: keyed records on the partition those partitioners pick for their key; the best first, "
                  "then each that explains records the ones above do not (more than chance would); every partitioner's "
                  "figures are in summary.json, the split and unexplained keys in the forensics_keys table")


def lag_table(summary: Mapping[str, Any], limit: int | None = 12) -> Table | None:
    lag = summary.get("lag")
    if not lag:
        return None
    rows = [(t, p, v["committed"][p], v["end_offsets"][p], v["lag"][p]) for t, v in lag.items()
            for p in range(len(v["lag"]))]
    rows.sort(key=lambda r: (-r[4], r[0], r[1]))
    shown = rows if limit is None else rows[:limit]
    body = [[t, count(p), "-" if c is None else count(c), count(e), count(n)] for t, p, c, e, n in shown]
    title = "consumer lag per partition" + ("" if limit is None or len(rows) <= limit else f" (top {limit} of {len(rows)})")
    return (title, ["topic", "partition", "committed", "end offset", "lag"], body,
            "lag: end offset minus committed offset; '-': nothing committed (lag counts from the partition's start)")


def group_table(summary: Mapping[str, Any]) -> Table | None:
    group = summary.get("group")
    if not group or not group.get("members"):
        return None
    assumed = set(group.get("members_with_assumed_topics") or [])
    body = []
    for member_id, m in group["members"].items():
        held = m.get("assignment")
        if isinstance(held, dict):  # a streams group: tasks
            shown = " ".join(f"{kind[0]}:{s}_{p}" for kind, tasks in held.items() for s, ps in tasks.items()
                             for p in ps) or "-"
        else:
            shown = ", ".join(f"{t}-{p}" for t, p in held or []) or "-"
        subscribed = "(not kept by the broker: every topic read)" if member_id in assumed else \
            ", ".join(m.get("topics") or []) or "-"
        body.append([_short(member_id, 48), m.get("client_id") or "-", m.get("host") or "-", subscribed,
                     _short(shown, 60)])
    used = "used for the consumer stages" if group.get("members_used_for_consumer_load") else \
        "not used (--scenario or --members given)"
    kind = group_type_words(group.get("type"))
    return (f"group {group['id']}: {kind}, {group.get('state') or 'state unknown'}, assignor "
            f"{group.get('assignor') or ('sticky' if group.get('type') == 'streams' else 'unknown')}",
            ["member", "client id", "host", "subscribed", "holds"], body, f"its members: {used}")


def group_check_table(summary: Mapping[str, Any]) -> Table | None:
    """The members whose assignment differs from kassign's, side by side (None: nothing to show)."""
    check = summary.get("group_check")
    if not check or not check.get("differs"):
        return None

    def shown(value: Any) -> str:
        if isinstance(value, dict):
            return " ".join(f"{kind}:{s}_{p}" for kind, tasks in value.items() for s, ps in tasks.items()
                            for p in ps) or "-"
        return ", ".join(f"{t}-{p}" for t, p in value or []) or "-"

    body = [[_short(m, 48), _short(shown(both["coordinator"]), 70), _short(shown(both["kassign"]), 70)]
            for m, both in check["differs"].items()]
    return ("members whose assignment differs", ["member", "the coordinator holds", "kassign computes"], body,
            f"kassign: the group's assignor ({check.get('assignor') or 'sticky'}) on the same members at Kafka "
            f"{check['kafka_version']}")


def lag_by_strategy_table(summary: Mapping[str, Any]) -> Table | None:
    if not summary.get("lag"):
        return None
    body = [[s, c["lag"]["furthest_behind"] or "-", count(c["lag"]["max_lag"]), count(c["lag"]["total"])]
            for s, c in summary["consumers"].items() if "lag" in c]
    return ("lag by strategy", ["strategy", "furthest behind", "its lag", "group lag"], body,
            "each member's lag is the sum over the partitions that strategy gives it")


def terminal_tables(summary: Mapping[str, Any]) -> list[Table]:
    tables = [source_table(summary), rows_table(summary), set_aside_table(summary), forensics_table(summary),
              sweep_table(summary), hot_partitions_table(summary), consumer_table(summary),
              group_table(summary), lag_table(summary), lag_by_strategy_table(summary), broker_table(summary),
              rack_table(summary), keyless_racks_table(summary),
              producers_table(summary)]
    return [t for t in tables if t is not None]
