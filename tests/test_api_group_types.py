"""The public API answers for every group type (SPEC sections 3, 6, 7, 8): each vector line of Kafka 4.3.1
through ``kassign.assign`` / ``assign_table`` / ``assign_tasks`` exactly as through the group type's own entry."""

from __future__ import annotations

import pytest

import kassign
from tests.conftest import vector_params


def _as_sets(assignment) -> dict:
    return {member: sorted(map(tuple, partitions)) for member, partitions in assignment.items()}


@pytest.mark.parametrize("line", vector_params("kafka-4.3/assign-share.jsonl"))
def test_share_vectors_through_assign(line: dict) -> None:
    if "expected_error" in line:
        with pytest.raises(kassign.KassignError):
            kassign.assign("simple", line["scenario"], protocol="share")
        return
    answer = kassign.assign("simple", line["scenario"], protocol="share")
    assert _as_sets(answer) == _as_sets(line["expected"])
    table = kassign.assign_table("simple", line["scenario"], protocol="share", kafka_version="4.2")
    rows = {}
    for member, topic, partition in zip(*(table.column(c).to_pylist() for c in ("member", "topic", "partition"))):
        rows.setdefault(member, []).append((topic, partition))
    assert rows == {m: ps for m, ps in answer.items() if ps}


@pytest.mark.parametrize("line", vector_params("kafka-4.3/assign-streams.jsonl"))
def test_streams_vectors_through_assign_tasks(line: dict) -> None:
    if "expected_error" in line:
        with pytest.raises(kassign.KassignError):
            kassign.assign_tasks("sticky", line["scenario"], protocol="streams")
        return
    assert kassign.assign_tasks("sticky", line["scenario"], protocol="streams", kafka_version="4.3.1") == \
        line["expected"]


@pytest.mark.parametrize("line", vector_params("kafka-4.4/assign-streams.jsonl"))
def test_streams_44_vectors_through_assign_tasks(line: dict) -> None:
    assert kassign.assign_tasks("sticky", line["scenario"], protocol="streams", kafka_version="4.4") == \
        line["expected"]
    assert kassign.assign_tasks("sticky", line["scenario"], protocol="streams") == line["expected"]  # the default


@pytest.mark.parametrize("line", vector_params("kafka-4.3/assign-streams-client.jsonl"))
def test_kafka_streams_vectors_through_assign_tasks(line: dict) -> None:
    if "expected_error" in line:
        with pytest.raises(kassign.KassignError):
            kassign.assign_tasks(line["strategy"], line["scenario"])
        return
    assert kassign.assign_tasks(line["strategy"], line["scenario"], protocol="classic") == line["expected"]


SHARE = {"topics": {"t0": 4}, "members": {"A": {"topics": ["t0"]}, "B": {"topics": ["t0"]}}}


@pytest.mark.parametrize(("call", "message"), [
    (lambda: kassign.assign("simple", SHARE, protocol="share", kafka_version="4.0"), "early access"),
    (lambda: kassign.assign("simple", SHARE, protocol="share", kafka_version="5.0"), "every release from 3.0 to 4.4"),
    (lambda: kassign.assign("simple", SHARE, protocol="share", seed=3), "take no options"),
    (lambda: kassign.assign("uniform", SHARE, protocol="share"), "simple"),
    (lambda: kassign.assign("simple", SHARE, protocol="streams"), "protocol must be one of"),
    (lambda: kassign.assign_tasks("sticky", {"subtopologies": {}, "members": {}}, protocol="share"),
     "protocol must be one of classic, streams"),
    (lambda: kassign.assign_tasks("sticky", {"subtopologies": {}, "members": {}}, protocol="streams",
                                  kafka_version="4.1"), "early access"),
])
def test_wrong_group_type_release_or_strategy_is_one_clear_error(call, message: str) -> None:
    with pytest.raises(kassign.KassignError, match=message):
        call()
