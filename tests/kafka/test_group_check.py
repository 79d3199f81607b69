"""kassign's check of a live group (``group_check``) and the release inferred from a broker, on the real answers
of a Kafka 4.3.1 broker (``../shared/captures/kafka-4.3.1/``): its consumer, share and streams groups are exactly
what kassign computes for the same members at 4.3, and the consumer group is not at 4.0.0 (KAFKA-18688)."""

from __future__ import annotations

import base64
import copy
import json

import pytest

from kassign.cli.describe_group_cmd import check_lines, show
from kassign.kafka import groups
from kassign.kafka import groups_protocol as G
from kassign.kafka.group_check import check_group, group_scenario
from kassign.kafka.release_inference import infer_release
from tests.conftest import REPO

CAPTURES = REPO.parent / "shared" / "captures" / "kafka-4.3.1"


def answer(name: str):
    path = CAPTURES / f"{name}.json"
    if not path.exists():
        pytest.skip(f"captures not found at {CAPTURES} (they ship beside the checkout in CI as shared/captures/)")
    doc = json.loads(path.read_text())
    _, decoded = G.decode_response(doc["api_key"], doc["api_version"], base64.b64decode(doc["response_b64"]), G.DECODERS)
    return decoded


def stable():
    return groups.from_consumer_group(answer("consumer-group-describe-stable")[0], 1)


def test_a_stable_uniform_group_is_exactly_what_uniform_gives_at_4_3() -> None:
    check = check_group(stable(), {"rk43-b11-p7": 7}, "4.3")
    assert check == {"kafka_version": "4.3", "assignor": "uniform", "equal": True, "differs": {}, "notes": []}


def test_the_same_group_asked_as_4_0_0_names_the_members_the_old_rule_moves() -> None:
    group = stable()
    check = check_group(group, {"rk43-b11-p7": 7}, "4.0.0")
    assert check["equal"] is False and check["kafka_version"] == "4.0.0"
    # 7 partitions over 3 members: the member holding 3 keeps them from 4.0.1 on; 4.0.0 gives the extra to the first
    holder = next(m for m, spec in group.members.items() if len(spec.target) == 3)
    assert holder in check["differs"]
    assert len(check["differs"][holder]["kassign"]) == 2 and len(check["differs"][holder]["coordinator"]) == 3


def test_a_reconciling_group_target_is_what_uniform_gives() -> None:
    group = groups.from_consumer_group(answer("consumer-group-describe-reconciling")[0], 1)
    assert group.state == "Reconciling"
    assert check_group(group, {"rk43-b11-q5": 5, "rk43-b11-q6": 6})["equal"] is True


def test_a_changed_target_is_named_member_by_member() -> None:
    group = copy.deepcopy(stable())
    first, second = list(group.members)[:2]
    moved = group.members[first].target[0]
    group.members[first].target = group.members[first].target[1:]
    group.members[second].target = sorted([*group.members[second].target, moved])
    check = check_group(group, {"rk43-b11-p7": 7})
    assert check["equal"] is False and set(check["differs"]) <= {first, second} and check["differs"]
    lines = check_lines({"group_check": check, "group": group.to_json(), "kafka_version": "4.3",
                         "kafka_version_from": "given", "kafka_version_why": "as given"})
    assert "differ from what uniform gives" in lines[0] and any(first in line or second in line for line in lines[1:])


def test_a_share_group_with_its_start_offsets_as_initialized_partitions() -> None:
    share = groups.from_share_group(answer("share-group-describe")[0], 1)
    offsets = answer("describe-share-group-offsets")[0]
    initialized = {t.name: [p.partition for p in t.partitions if p.start_offset >= 0] for t in offsets.topics}
    scenario = group_scenario(share, {"rk43-t3": 4}, initialized)
    assert scenario["initialized"] == {"rk43-t3": [0, 1, 2, 3]} and scenario["topic_ids"]
    assert check_group(share, {"rk43-t3": 4}, "4.3", initialized)["equal"] is True
    as_4_1 = check_group(share, {"rk43-t3": 4}, "4.1", initialized)  # Kafka 4.1's rule: answered, not refused
    assert as_4_1["kafka_version"] == "4.1" and as_4_1["equal"] is not None and "why" not in as_4_1
    unmodelled = check_group(share, {"rk43-t3": 4}, "4.0", initialized)
    assert unmodelled["equal"] is None and "early access" in unmodelled["why"]


def test_a_streams_group_and_the_standby_count_it_assumes() -> None:
    streams = groups.from_streams_group(answer("streams-group-describe")[0], 1)
    check = check_group(streams, {"rk43-b13-in": 4}, "4.3")  # the broker's release
    assert check["equal"] is True and "standby replicas per stateful task taken as 0" in check["notes"][0]
    assert check["kafka_version"] == "4.3" and "target assignment as its current tasks" in check["notes"][1]
    assert group_scenario(streams, {"rk43-b13-in": 4})["subtopologies"] == {"0": {"partitions": 4, "stateful": False}}
    as_44 = check_group(streams, {"rk43-b13-in": 4})  # the default: Kafka 4.4's coordinator and assignor
    assert as_44["kafka_version"] == "4.4" and as_44["equal"] is True
    assert "current assignment and reported task offset sums" in as_44["notes"][1]


def test_a_streams_group_as_kafka_4_4_hands_it_over() -> None:
    # 4.4's coordinator hands the assignor the members' current tasks and offset sums: a member still holding a
    # task its target no longer has (mid-reconciliation) counts as its previous owner, and a reported offset sum
    # counts as state; 4.3's hands over the targets
    streams = copy.deepcopy(groups.from_streams_group(answer("streams-group-describe")[0], 1))
    first, second = streams.members.values()
    first.assignment = {"active": {"0": [1, 2, 3]}, "standby": {}, "warmup": {}}
    second.assignment = {"active": {"0": [0]}, "standby": {}, "warmup": {}}
    second.task_offsets = {"0_1": 900}
    doc = group_scenario(streams, {"rk43-b13-in": 4}, kafka_version="4.4")
    assert doc["members"][first.member_id]["active"] == {"0": [1, 2, 3]}
    assert doc["members"][second.member_id] == {"process_id": second.process_id, "active": {"0": [0]},
                                                "offset_sums": {"0_1": 900}}
    older = group_scenario(streams, {"rk43-b13-in": 4}, kafka_version="4.3")
    assert older["members"][first.member_id]["active"] == {"0": [2, 3]} and \
        "offset_sums" not in older["members"][second.member_id]
    assert check_group(streams, {"rk43-b13-in": 4}, "4.3")["equal"] is True  # the targets are a fixed point
    check = check_group(streams, {"rk43-b13-in": 4}, "4.4")
    assert check["equal"] is not None and "why" not in check


@pytest.mark.parametrize(("change", "why"), [
    (lambda g: setattr(g, "assignor", "my-own"), "not one of Kafka's"),
    (lambda g: setattr(next(iter(g.members.values())), "subscribed_regex", "rk43-.*"), "regular expression"),
    (lambda g: g.members.clear(), "no members"),
])
def test_what_cannot_be_checked_says_why(change, why: str) -> None:
    group = copy.deepcopy(stable())
    change(group)
    check = check_group(group, {"rk43-b11-p7": 7})
    assert check["equal"] is None and why in check["why"]
    assert "not checked" in check_lines({"group_check": check, "group": group.to_json(), "kafka_version": "4.3",
                                         "kafka_version_from": "default", "kafka_version_why": "x"})[0]


def test_the_describe_table_reads_like_kafkas_tool(capfd) -> None:
    group = stable()
    lag = {"rk43-b11-p7": {"committed": [5, None, 7, 7, 0, 0, 1], "end_offsets": [9] * 7,
                           "lag": [4, 9, 2, 2, 9, 9, 8]}}
    show({"group": group.to_json(), "group_check": check_group(group, {"rk43-b11-p7": 7}), "kafka_version": "4.3",
          "kafka_version_from": "inferred", "kafka_version_why": "level 30", "lag": lag, "warnings": []})
    out = capfd.readouterr().out
    assert "Group rk43-cap-uniform: a consumer group (KIP-848 protocol), state Stable, assignor uniform" in out
    for word in ("CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "CLIENT-ID", "total lag 43 records"):
        assert word in " ".join(out.split())
    assert "is exactly what uniform gives for these members" in out


def test_the_release_of_a_kafka_4_3_1_broker_is_inferred() -> None:
    versions = answer("api-versions")
    hints = groups.hints_from(versions, "127.0.0.1:9092", 4)
    line, why = infer_release(hints)
    assert line == "4.3" and "level 30" in why


def test_the_manuals_check_line_is_what_describe_group_prints_for_the_captured_broker() -> None:
    line, why = infer_release(groups.hints_from(answer("api-versions"), "127.0.0.1:9092", 4))
    found = {"group_check": check_group(stable(), {"rk43-b11-p7": 7}, line), "group": stable().to_json(),
             "kafka_version": line, "kafka_version_from": "inferred", "kafka_version_why": why}
    page = (REPO / "docs" / "group-types.md").read_text()
    assert check_lines(found)[0] in page.splitlines()


# every release line from 3.0 to 4.4, ZooKeeper mode and KRaft: tests/kafka/test_release_inference.py


def _classic_sticky_group(assignment: dict[str, list]) -> groups.GroupDescription:
    """A classic sticky group: C1 missed a rebalance (generation 2) and still owns t0-3, C0 owns t0-0..2 in
    generation 3, C2 joined; ``assignment`` is what the leader handed out."""
    owned = {"C0": ([("t0", 0), ("t0", 1), ("t0", 2)], 3), "C1": ([("t0", 3)], 2), "C2": (None, None)}
    members = {m: groups.GroupMember(m, "client", "/10.0.0.1", None, None, ["t0"], assignment[m], assignment[m],
                                     owned=held, generation=generation)
               for m, (held, generation) in owned.items()}
    return groups.GroupDescription("billing", "classic", "Stable", "sticky", None, members, protocol_type="consumer")


def test_a_classic_group_is_checked_as_the_release_its_clients_run() -> None:
    # the leader ran Kafka 3.4.0's sticky assignor: C1's claim of an older generation counted for nothing
    as_340 = {"C0": [("t0", 0), ("t0", 1)], "C1": [("t0", 2), ("t0", 4)], "C2": [("t0", 3), ("t0", 5)]}
    group = _classic_sticky_group(as_340)
    assert check_group(group, {"t0": 6}, "3.4.0")["equal"] is True
    later = check_group(group, {"t0": 6}, "4.4")
    assert later["equal"] is False and later["kafka_version"] == "4.4"
    assert later["differs"]["C1"] == {"kassign": [["t0", 2], ["t0", 3]], "coordinator": [["t0", 2], ["t0", 4]]}
