"""Kafka 4.4's own unit tests of the broker's streams ``sticky`` assignor, translated one for one.

Each test below is one test of ``StickyTaskAssignorTest`` on Kafka's 4.4 branch (Apache commit 87943b2ff8,
group-coordinator), in the same order, with the same inputs and the facts it asserts, asked of kassign as
Kafka 4.4. Of its 46 tests, 41 were already in Kafka 4.3.1 with the same inputs and facts (only the Java API
around them changed); the five that came with 4.4 say so in their docstrings: one with KAFKA-20899 (among a
task's previous standby owners, skip the processes that already hold it) and four with KAFKA-20719 (the
members' task offset sums, the scenario's ``offset_sums``).

Kafka's tests list their members in a ``LinkedHashMap`` (or a ``HashMap``); kassign takes the members in the
order the scenario lists them and iterates them as the group coordinator's ``HashMap`` does, so where Kafka's
assertion allows more than one answer the facts are asserted as Kafka asserts them, not a single answer.
"""

from __future__ import annotations

import pytest

from kassign.api import assign_tasks
from kassign.core.errors import UnknownAssignorError
from kassign.groups.streams.sticky import STRATEGIES

SUB = "test-subtopology"
SUB1, SUB2 = "test-subtopology1", "test-subtopology2"


def member(process: str, active: dict | None = None, standby: dict | None = None,
           offsets: dict | None = None) -> dict:
    """A member of ``process``: its current active and standby tasks ({subtopology: partitions}) and the
    offset sums it reports ({subtopology: {partition: sum}}, written as the scenario's ``offset_sums``)."""
    spec: dict = {"process_id": process}
    if active:
        spec["active"] = {sid: sorted(ps) for sid, ps in active.items()}
    if standby:
        spec["standby"] = {sid: sorted(ps) for sid, ps in standby.items()}
    if offsets:
        spec["offset_sums"] = {f"{sid}_{p}": value for sid, sums in offsets.items() for p, value in sums.items()}
    return spec


def assign(members: dict, tasks: int, stateful: bool, subtopologies: tuple[str, ...] = (SUB,),
           standbys: int = 0) -> dict:
    """Kafka 4.4's answer for ``members`` over subtopologies of ``tasks`` partitions each."""
    scenario = {"subtopologies": {sid: {"partitions": tasks, "stateful": stateful} for sid in subtopologies},
                "num_standby_replicas": standbys, "members": members}
    return assign_tasks("sticky", scenario, protocol="streams", kafka_version="4.4")


def active_tasks(answer: dict, sid: str, *members: str) -> set[int]:
    return {p for m in members for p in answer[m]["active"].get(sid, [])}


def standby_tasks(answer: dict, sid: str, *members: str) -> set[int]:
    return {p for m in members for p in answer[m]["standby"].get(sid, [])}


def active_ids(answer: dict, *members: str) -> list[int]:
    """Every active partition of these members, over all subtopologies (as Kafka's test helper lists them)."""
    return [p for m in (members or answer) for ps in answer[m]["active"].values() for p in ps]


def standby_ids(answer: dict, *members: str) -> list[int]:
    return [p for m in (members or answer) for ps in answer[m]["standby"].values() for p in ps]


def active_count(answer: dict, *members: str) -> int:
    return len(active_ids(answer, *members))


def merged(answer: dict, kind: str, *members: str) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for m in members or answer:
        for sid, ps in answer[m][kind].items():
            out.setdefault(sid, set()).update(ps)
    return out


def test_to_string_returns_name() -> None:
    # testToStringReturnsName: the assignor's name is "sticky", the one kassign takes and names
    assert STRATEGIES == ("sticky",)
    with pytest.raises(UnknownAssignorError, match="'sticky'"):
        assign_tasks("balanced", {"subtopologies": {}, "members": {}}, protocol="streams", kafka_version="4.4")


def test_one_active_task_to_each_process_when_task_count_same_as_process_count() -> None:
    answer = assign({"member1": member("process1"), "member2": member("process2"), "member3": member("process3")},
                    3, False)
    assert len(answer) == 3
    for m in ("member1", "member2", "member3"):
        assert len(answer[m]["active"]) == 1
    assert active_tasks(answer, SUB, "member1", "member2", "member3") == {0, 1, 2}


MEMBERS_3X2 = ("member1_1", "member1_2", "member2_1", "member2_2", "member3_1", "member3_2")


def three_processes_of_two() -> dict:
    return {m: member(f"process{m[6]}") for m in MEMBERS_3X2}


def test_topic_group_id_evenly_across_clients_with_no_standby_tasks() -> None:
    answer = assign(three_processes_of_two(), 3, False, (SUB1, SUB2))
    for m in MEMBERS_3X2:
        assert active_count(answer, m) == 1
    assert merged(answer, "active", *MEMBERS_3X2) == {SUB1: {0, 1, 2}, SUB2: {0, 1, 2}}


def test_topic_group_id_evenly_across_clients_with_standby_tasks() -> None:
    answer = assign(three_processes_of_two(), 3, True, (SUB1, SUB2), standbys=1)
    for m in MEMBERS_3X2:
        assert active_count(answer, m) == 1
    assert merged(answer, "active", *MEMBERS_3X2) == {SUB1: {0, 1, 2}, SUB2: {0, 1, 2}}


def test_not_migrate_active_task_to_other_process() -> None:
    answer = assign({"member1": member("process1", {SUB: {0}}), "member2": member("process2", {SUB: {1}})}, 3, False)
    assert 0 in answer["member1"]["active"][SUB] and 1 in answer["member2"]["active"][SUB]
    assert len(answer["member1"]["active"][SUB]) + len(answer["member2"]["active"][SUB]) == 3
    # the previous active tasks flipped around: member3 (process1) held 2
    answer = assign({"member2": member("process2", {SUB: {1}}), "member3": member("process1", {SUB: {2}})}, 3, False)
    assert 1 in answer["member2"]["active"][SUB] and 2 in answer["member3"]["active"][SUB]
    assert len(answer["member2"]["active"][SUB]) + len(answer["member3"]["active"][SUB]) == 3


def test_migrate_active_tasks_to_new_process_without_changing_all_assignments() -> None:
    answer = assign({"member1": member("process1", {SUB: {0, 2}}), "member2": member("process2", {SUB: {1}}),
                     "member3": member("process3")}, 3, False)
    assert {0, 2} & set(answer["member1"]["active"][SUB])
    assert 1 in answer["member2"]["active"][SUB]
    assert {0, 2} & set(answer["member3"]["active"][SUB])
    assert sum(len(answer[m]["active"][SUB]) for m in ("member1", "member2", "member3")) == 3


def test_assign_based_on_capacity() -> None:
    answer = assign({"member1": member("process1"), "member2_1": member("process2"), "member2_2": member("process2")},
                    3, False)
    for m in ("member1", "member2_1", "member2_2"):
        assert len(answer[m]["active"][SUB]) == 1


def test_tasks_evenly_with_unequal_topic_group_sizes() -> None:
    # TopologyDescriberImpl2: test-subtopology1 has 6 partitions, test-subtopology2 one, both stateless
    previous = {SUB1: {0, 1, 2, 3, 4, 5}, SUB2: {0}}
    scenario = {"subtopologies": {SUB1: {"partitions": 6}, SUB2: {"partitions": 1}},
                "members": {"member1": member("process1", previous), "member2": member("process2")}}
    answer = assign_tasks("sticky", scenario, protocol="streams", kafka_version="4.4")
    assert active_count(answer, "member1") == 4
    assert active_count(answer, "member2") == 3
    assert merged(answer, "active", "member1", "member2") == previous


def test_keep_active_task_stickiness_when_more_clients_than_active_tasks() -> None:
    names = ("member1", "member2", "member3", "member4", "member5")
    previous = {"member1": {0}, "member2": {2}, "member3": {1}}
    answer = assign({m: member(f"process{m[-1]}", {SUB: previous[m]} if m in previous else None) for m in names},
                    3, False)
    assert [answer[m]["active"].get(SUB) for m in names] == [[0], [2], [1], None, None]
    # the assignment changed up: still sticky
    previous = {"member2": {0}, "member4": {2}, "member5": {1}}
    answer = assign({m: member(f"process{m[-1]}", {SUB: previous[m]} if m in previous else None) for m in names},
                    3, False)
    assert [answer[m]["active"].get(SUB) for m in names] == [None, [0], None, [2], [1]]


def test_tasks_to_client_with_previous_standby_tasks() -> None:
    answer = assign({"member1": member("process1", standby={SUB: {2}}),
                     "member2": member("process2", standby={SUB: {1}}),
                     "member3": member("process3", standby={SUB: {0}})}, 3, False)
    assert [answer[m]["active"][SUB] for m in ("member1", "member2", "member3")] == [[2], [1], [0]]


def test_no_standby_to_client_with_previous_standby_and_current_active() -> None:
    answer = assign({"member1": member("process1", standby={SUB: {0}}),
                     "member2": member("process2", standby={SUB: {1}})},
                    2, True, standbys=1)
    assert answer["member1"]["active"][SUB] == [0] and answer["member1"]["standby"][SUB] == [1]
    assert answer["member2"]["active"][SUB] == [1] and answer["member2"]["standby"][SUB] == [0]


def test_assign_based_on_capacity_when_multiple_clients_have_standby_tasks() -> None:
    answer = assign({"member1": member("process1", {SUB: {0}}, {SUB: {1}}),
                     "member2_1": member("process2", {SUB: {2}}, {SUB: {1}}), "member2_2": member("process2")},
                    3, False)
    assert answer["member1"]["active"][SUB] == [0]
    assert answer["member2_1"]["active"][SUB] == [2]
    assert answer["member2_2"]["active"][SUB] == [1]


def test_standby_tasks_to_different_client_than_corresponding_active() -> None:
    names = ("member1", "member2", "member3", "member4")
    answer = assign({m: member(f"process{i + 1}", {SUB: {i}}) for i, m in enumerate(names)}, 4, True, standbys=1)
    non_empty = 0
    for i, m in enumerate(names):
        ids = standby_ids(answer, m)
        assert i not in ids
        assert len(ids) <= 2
        non_empty += bool(ids)
    assert non_empty >= 3
    assert merged(answer, "standby") == {SUB: {0, 1, 2, 3}}


def test_multiple_replicas_of_standby_task() -> None:
    names = ("member1", "member2", "member3")
    answer = assign({m: member(f"process{i + 1}", {SUB: {i}}) for i, m in enumerate(names)}, 3, True, standbys=2)
    assert [set(standby_ids(answer, m)) for m in names] == [{1, 2}, {0, 2}, {0, 1}]


def test_no_standby_replicas_when_no_client_without_the_task() -> None:
    answer = assign({"member1": member("process1")}, 1, True, standbys=1)
    assert answer["member1"]["standby"] == {}


def test_active_and_standby_tasks() -> None:
    answer = assign({"member1": member("process1"), "member2": member("process2"), "member3": member("process3")},
                    3, True, standbys=1)
    assert set(active_ids(answer)) == {0, 1, 2}
    assert set(standby_ids(answer)) == {0, 1, 2}


def test_at_least_one_task_to_each_client_if_possible() -> None:
    answer = assign({"member1_1": member("process1"), "member1_2": member("process1"), "member1_3": member("process1"),
                     "member2": member("process2"), "member3": member("process3")}, 3, False)
    assert len(active_ids(answer, "member1_1", "member1_2", "member1_3")) == 1
    assert len(active_ids(answer, "member2")) == 1
    assert len(active_ids(answer, "member3")) == 1


SIX = tuple(f"member{i}" for i in range(1, 7))


def test_each_active_task_to_one_client_when_more_clients_than_tasks() -> None:
    answer = assign({m: member(f"process{m[-1]}") for m in SIX}, 3, False)
    assert len(active_ids(answer, *SIX)) == 3
    assert active_tasks(answer, SUB, *SIX) == {0, 1, 2}


def test_balance_active_and_standby_tasks_across_available_clients() -> None:
    answer = assign({m: member(f"process{m[-1]}") for m in SIX}, 3, True, standbys=1)
    for m in answer:
        # Kafka counts the member's standby subtopologies (one here) plus its active partitions
        assert len(answer[m]["standby"]) + len(active_ids(answer, m)) == 1


def test_more_tasks_to_client_with_more_capacity() -> None:
    answer = assign({"member1": member("process1"), "member2_1": member("process2"), "member2_2": member("process2")},
                    3, False, ("test-subtopology0", "test-subtopology1", "test-subtopology2", "test-subtopology3"))
    assert active_count(answer, "member2_1", "member2_2") == 8
    assert active_count(answer, "member1") == 4


def test_rebalance_across_all_clients_when_capacity_and_task_count_the_same() -> None:
    answer = assign({"member1": member("process1"), "member2": member("process2"),
                     "member3": member("process3", {SUB: {0, 1, 2, 3}}), "member4": member("process4")}, 4, False)
    assert [active_count(answer, m) for m in ("member1", "member2", "member3", "member4")] == [1, 1, 1, 1]


def test_rebalance_across_clients_when_capacity_less_than_task_count() -> None:
    answer = assign({"member1": member("process1"), "member2": member("process2"),
                     "member3": member("process3", {SUB: {0, 1, 2, 3}})}, 4, False)
    assert [active_count(answer, m) for m in ("member1", "member2", "member3")] == [1, 1, 2]


def test_rebalance_tasks_to_clients_based_on_capacity() -> None:
    answer = assign({"member2": member("process2", {SUB: {0, 3, 2}}), "member3_1": member("process3"),
                     "member3_2": member("process3")}, 3, False)
    assert active_count(answer, "member2") == 1
    assert active_count(answer, "member3_1", "member3_2") == 2


def test_move_minimal_tasks_when_previously_above_capacity_and_new_client_added() -> None:
    p1_previous, p2_previous = {0, 2}, {1, 3}
    answer = assign({"member1": member("process1", {SUB: p1_previous}),
                     "member2": member("process2", {SUB: p2_previous}),
                     "member3": member("process3")}, 4, False)
    assert active_count(answer, "member3") == 1
    taken = set(active_ids(answer, "member3"))
    if p1_previous & taken:
        assert set(active_ids(answer, "member2")) == p2_previous
    else:
        assert set(active_ids(answer, "member1")) == p1_previous


def test_not_move_any_tasks_when_new_tasks_added() -> None:
    answer = assign({"member1": member("process1", {SUB: {0, 1}}), "member2": member("process2", {SUB: {2, 3}})},
                    6, False)
    assert {0, 1} <= set(active_ids(answer, "member1"))
    assert {2, 3} <= set(active_ids(answer, "member2"))


def test_new_tasks_to_new_client_when_previous_tasks_assigned_to_old_clients() -> None:
    answer = assign({"member1": member("process1", {SUB: {2, 1}}), "member2": member("process2", {SUB: {0, 3}}),
                     "member3": member("process3")}, 6, False)
    assert {2, 1} <= set(active_ids(answer, "member1"))
    assert {0, 3} <= set(active_ids(answer, "member2"))
    assert {4, 5} <= set(active_ids(answer, "member3"))


S0, S1_, S2_ = "test-subtopology0", "test-subtopology1", "test-subtopology2"
THREE = (S0, S1_, S2_)
ACTIVE1 = {S0: {1}, S1_: {2, 3}}
STANDBY1 = {S0: {0}, S1_: {1}, S2_: {0, 1, 3}}
ACTIVE2 = {S0: {0}, S1_: {1}, S2_: {2}}
STANDBY2 = {S0: {1, 2, 3}, S1_: {0, 2, 3}, S2_: {0, 1, 3}}


def as_lists(tasks: dict) -> dict:
    return {sid: sorted(ps) for sid, ps in tasks.items()}


def test_tasks_not_previously_active_to_new_client() -> None:
    answer = assign({"member1": member("process1", ACTIVE1, STANDBY1), "member2": member("process2", ACTIVE2, STANDBY2),
                     "member3": member("process3", {S2_: {0, 1, 3}}, {S0: {2}, S1_: {2}}),
                     "newMember": member("process4", None, {S0: {0, 1, 2, 3}, S1_: {0, 1, 2, 3}, S2_: {0, 1, 2, 3}})},
                    4, False, THREE)
    assert answer["member1"]["active"] == as_lists(ACTIVE1)
    assert answer["member2"]["active"] == as_lists(ACTIVE2)
    assert answer["member3"]["active"] == {S2_: [0, 1, 3]}
    assert answer["newMember"]["active"] == {S0: [2, 3], S1_: [0]}


def test_tasks_not_previously_active_to_multiple_new_clients() -> None:
    answer = assign({"member1": member("process1", ACTIVE1, STANDBY1), "member2": member("process2", ACTIVE2, STANDBY2),
                     "bounce_member1": member("bounce1", None, {S2_: {0, 1, 3}}),
                     "bounce_member2": member("bounce2", None, {S0: {2, 3}, S1_: {0}})}, 4, False, THREE)
    assert answer["member1"]["active"] == as_lists(ACTIVE1)
    assert answer["member2"]["active"] == as_lists(ACTIVE2)
    assert answer["bounce_member1"]["active"] == {S2_: [0, 1, 3]}
    assert answer["bounce_member2"]["active"] == {S0: [2, 3], S1_: [0]}


def test_tasks_to_new_client() -> None:
    answer = assign({"member1": member("process1", {SUB: {1, 2}}), "member2": member("process2")}, 2, False)
    assert active_count(answer, "member1") == 1


def test_tasks_to_new_client_without_flipping_assignment_between_existing_clients() -> None:
    answer = assign({"member1": member("process1", {SUB: {0, 1, 2}}), "member2": member("process2", {SUB: {3, 4, 5}}),
                     "newMember": member("process3")}, 6, False)
    first, second = active_ids(answer, "member1"), active_ids(answer, "member2")
    assert not {3, 4, 5} & set(first) and len(first) == 2
    assert not {0, 1, 2} & set(second) and len(second) == 2
    assert len(active_ids(answer, "newMember")) == 2


def test_tasks_to_new_client_without_flipping_between_existing_and_bounced_clients() -> None:
    answer = assign({"member1": member("process1", {SUB: {0, 1, 2, 6}}),
                     "member2": member("process2", None, {SUB: {3, 4, 5}}),
                     "newMember": member("newProcess")}, 7, False)
    first, second = active_ids(answer, "member1"), active_ids(answer, "member2")
    assert not {3, 4, 5} & set(first) and len(first) == 3
    assert not {0, 1, 2} & set(second) and len(second) == 2
    assert len(active_ids(answer, "newMember")) == 2


def fresh(clients: int) -> dict:
    return {f"member{i}": member(f"process{i}") for i in range(clients)}


def test_large_number_of_tasks_with_standby_assignment() -> None:
    answer = assign(fresh(5), 100, True, standbys=2)
    assert len(set(active_ids(answer))) == 100
    standbys = set(standby_ids(answer))
    assert 0 < len(standbys) <= 100 * min(2, 5 - 1)
    for m in answer:
        assert not set(active_ids(answer, m)) & set(standby_ids(answer, m))
    counts = [active_count(answer, m) for m in answer]
    assert min(counts) == 20 and max(counts) == 20
    assert max(len(standby_ids(answer, m)) for m in answer) > 0


def test_odd_number_of_clients_with_standby_tasks() -> None:
    answer = assign(fresh(7), 14, True, standbys=1)
    assert len(set(active_ids(answer))) == 14
    assert len(set(standby_ids(answer))) == 14
    counts = [active_count(answer, m) for m in answer]
    assert counts.count(2) == 7 and counts.count(3) == 0


def test_high_standby_replica_count() -> None:
    answer = assign(fresh(3), 6, True, standbys=5)
    assert len(set(active_ids(answer))) == 6
    assert 0 < len(set(standby_ids(answer))) <= 6 * min(5, 3 - 1)


def test_large_number_of_subtopologies_with_standby_tasks() -> None:
    subtopologies = tuple(f"subtopology-{i}" for i in range(10))
    answer = assign(fresh(4), 5, True, subtopologies, standbys=1)
    assert set().union(*(answer[m]["active"] for m in answer)) == set(subtopologies)
    assert set().union(*(answer[m]["standby"] for m in answer)) == set(subtopologies)


def test_single_client_and_multiple_standby_replicas() -> None:
    answer = assign({"member1": member("process1")}, 10, True, standbys=3)
    assert active_count(answer, "member1") == 10
    assert standby_ids(answer, "member1") == []


def test_more_standby_replicas_than_available_clients() -> None:
    answer = assign(fresh(2), 4, True, standbys=5)
    assert len(set(active_ids(answer))) == 4
    assert len(set(standby_ids(answer))) == 4


def test_reassign_tasks_when_new_node_joins_with_existing_active_and_standby() -> None:
    answer = assign({"member1": member("process1", {SUB: {0, 1}}, {SUB: {2, 3}}),
                     "member2": member("process2", {SUB: {2, 3}}, {SUB: {0, 1}}), "member3": member("process3")},
                    4, True, standbys=1)
    names = ("member1", "member2", "member3")
    assert set(active_ids(answer, *names)) == {0, 1, 2, 3}
    assert set(standby_ids(answer, *names)) == {0, 1, 2, 3}
    for m in names:
        assert 1 <= len(active_ids(answer, m)) <= 2
        assert len(active_ids(answer, m)) + len(standby_ids(answer, m)) <= 3


def check_range_assignment(previous: dict | None) -> None:
    answer = assign({"member1": member("process1", previous), "member2": member("process2")}, 2, True, (SUB1, SUB2),
                    standbys=1)
    for sid in (SUB1, SUB2):
        assert len(answer["member1"]["active"][sid]) == 1 and len(answer["member2"]["active"][sid]) == 1
        assert active_tasks(answer, sid, "member1", "member2") == {0, 1}
        assert len(answer["member1"]["standby"][sid]) == 1 and len(answer["member2"]["standby"][sid]) == 1


def test_range_assign_tasks_when_scaling_up() -> None:
    check_range_assignment({SUB1: {0, 1}, SUB2: {0, 1}})  # member1 held all four tasks; member2 is new


def test_range_assign_tasks_when_starting_empty() -> None:
    check_range_assignment(None)


def test_standby_task_to_previous_owner_based_on_below_quota_condition() -> None:
    # 2 active tasks and 2 standbys over 3 members: quota 2; member1 keeps active 0 and gets standby 1 back
    answer = assign({"member1": member("process1", {SUB: {0}}, {SUB: {1}}), "member2": member("process2", {SUB: {1}}),
                     "member3": member("process3")}, 2, True, standbys=1)
    assert 0 in answer["member1"]["active"][SUB]
    assert 1 in answer["member1"]["standby"].get(SUB, [])
    assert 1 not in answer["member1"]["active"][SUB]
    assert len(answer["member1"]["active"][SUB]) + len(answer["member1"]["standby"][SUB]) <= 2


def test_standby_to_previous_standby_that_does_not_hold_the_active_task() -> None:
    """New in Kafka 4.4 (KAFKA-20899): task 2's previous standby owners are member1 (which now runs it) and
    member2; 4.3 gave up on member2 because member1, listed first, holds the task."""
    answer = assign({"member1": member("process1", None, {SUB: {2}}),
                     "member2": member("process2", {SUB: {0}}, {SUB: {2}}),
                     "member3": member("process3", {SUB: {1}}), "member4": member("process4")}, 3, True, standbys=1)
    names = ("member1", "member2", "member3", "member4")
    assert [active_tasks(answer, SUB, m) for m in names] == [{2}, {0}, {1}, set()]
    assert standby_ids(answer, "member2") == [2]
    # one of the three outcomes Kafka's test allows (member1's standbys decide which)
    allowed = [([], [0], [1]), ([1], [], [0]), ([0], [], [1])]
    assert (standby_ids(answer, "member1"), standby_ids(answer, "member3"), standby_ids(answer, "member4")) in allowed


def test_tasks_to_members_reporting_task_offsets_on_cold_start() -> None:
    """New in Kafka 4.4 (KAFKA-20719): fresh members with nothing assigned report the offset sums of the
    state on their disks, and get those tasks back."""
    answer = assign({"member1": member("process1", offsets={SUB: {0: 100, 1: 100}}),
                     "member2": member("process2", offsets={SUB: {2: 100, 3: 100}})}, 4, True)
    assert active_tasks(answer, SUB, "member1") == {0, 1}
    assert active_tasks(answer, SUB, "member2") == {2, 3}


def test_tasks_to_processes_reporting_task_offsets_with_multiple_members_per_process() -> None:
    """New in Kafka 4.4 (KAFKA-20719): the members of one process share its state directory and report the
    same offset sums; the tasks stay on that process, spread over its members."""
    process1 = {SUB: {0: 100, 1: 100}}
    process2 = {SUB: {2: 100, 3: 100}}
    answer = assign({"member1_1": member("process1", offsets=process1),
                     "member1_2": member("process1", offsets=process1),
                     "member2_1": member("process2", offsets=process2),
                     "member2_2": member("process2", offsets=process2)},
                    4, True)
    assert merged(answer, "active", "member1_1", "member1_2") == {SUB: {0, 1}}
    assert merged(answer, "active", "member2_1", "member2_2") == {SUB: {2, 3}}


def test_current_owners_rank_ahead_of_reported_offsets_most_caught_up_first() -> None:
    """New in Kafka 4.4 (KAFKA-20719): member3 reports the highest offset sums of tasks 0 and 1 but the
    current active owner keeps 0 and the current standby owner is promoted for 1; of the two members known
    only through their offset sums, the more caught-up one gets task 2, the other task 3."""
    answer = assign({"member1": member("process1", {SUB: {0}}), "member2": member("process2", None, {SUB: {0, 1}}),
                     "member3": member("process3", offsets={SUB: {0: 1_000_000, 1: 1_000_000, 2: 100}}),
                     "member4": member("process4", offsets={SUB: {2: 50}})}, 4, True)
    assert [active_tasks(answer, SUB, m) for m in ("member1", "member2", "member3", "member4")] == [{0}, {1}, {2}, {3}]


def test_standbys_away_from_process_holding_state_on_cold_start() -> None:
    """New in Kafka 4.4 (KAFKA-20719): with standbys, the active tasks follow the reported state and each
    standby goes to the other process."""
    answer = assign({"member1": member("process1", offsets={SUB: {0: 100}}),
                     "member2": member("process2", offsets={SUB: {1: 100}})}, 2, True, standbys=1)
    assert active_tasks(answer, SUB, "member1") == {0} and active_tasks(answer, SUB, "member2") == {1}
    assert standby_tasks(answer, SUB, "member1") == {1} and standby_tasks(answer, SUB, "member2") == {0}
