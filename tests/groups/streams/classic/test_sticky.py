"""Kafka Streams' own StickyTaskAssignor (``task.assignor.class``): facts from Kafka's
CustomStickyTaskAssignorTest (4.3.1's, and the 4.4 branch's KAFKA-20198 cases), the docstring's example,
and invariants. Each fact is asked as 4.3 and as 4.4 where both releases give it; where the room rule of
KAFKA-20198 changes the answer, each release's answer is pinned."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings

from kassign.core.errors import KassignError
from kassign.groups.streams.classic import assign_streams_classic
from tests.groups.streams.classic.test_high_availability import pid, scenarios


def doc(tasks: dict[int, tuple[int, bool]], clients: list[tuple[int, int, list[str], list[str]]], standbys: int = 0) -> dict:
    """``clients``: (process number, threads, previous actives (owned), previous standbys)."""
    out = {"subtopologies": {str(s): {"partitions": n, "stateful": st} for s, (n, st) in tasks.items()},
           "clients": {}, "num_standby_replicas": standbys}
    for n, threads, active, standby in clients:
        consumers = {f"c{n}-t{t}": {"owned": [], "offset_sums": {}} for t in range(threads)}
        consumers[f"c{n}-t0"] = {"owned": active, "offset_sums": {t: 5 for t in standby}}
        out["clients"][pid(n)] = {"consumers": consumers}
    return out


def sticky(document: dict, version: str = "4.4") -> dict:
    return assign_streams_classic("sticky", document, kafka_version=version)


def sticky_as(version: str, document: dict) -> dict:
    return sticky(document, version)


BOTH = pytest.mark.parametrize("version", ["4.3", "4.4"])


def tasks_of(answer: dict, n: int) -> tuple[list[str], list[str]]:
    client = answer["clients"][pid(n)]
    return client["active"], client["standby"]


@BOTH
def test_active_tasks_stay_put(version: str) -> None:
    got = sticky_as(version, doc({0: (3, False)}, [(1, 1, ["0_0"], []), (2, 1, ["0_1"], [])]))
    assert "0_0" in tasks_of(got, 1)[0] and "0_1" in tasks_of(got, 2)[0]
    got = sticky_as(version, doc({0: (3, False)}, [(1, 1, ["0_1"], []), (2, 1, ["0_0"], [])]))
    assert "0_1" in tasks_of(got, 1)[0] and "0_0" in tasks_of(got, 2)[0]
    assert got["probing_rebalance"] is False


@BOTH
def test_a_new_client_takes_one_task_without_moving_the_rest(version: str) -> None:
    got = sticky_as(version, doc({0: (3, False)}, [(1, 1, ["0_0", "0_2"], []), (2, 1, ["0_1"], []), (3, 1, [], [])]))
    assert [len(tasks_of(got, n)[0]) for n in (1, 2, 3)] == [1, 1, 1]
    assert tasks_of(got, 2)[0] == ["0_1"]


@BOTH
def test_more_threads_more_tasks(version: str) -> None:
    got = sticky_as(version, doc({0: (3, False)}, [(1, 1, [], []), (2, 2, [], [])]))
    assert [len(tasks_of(got, n)[0]) for n in (1, 2)] == [1, 2]
    got = sticky_as(version, doc({0: (3, False), 1: (3, False), 2: (3, False), 3: (3, False)}, [(1, 1, [], []), (2, 2, [], [])]))
    assert [len(tasks_of(got, n)[0]) for n in (1, 2)] == [4, 8]


@BOTH
def test_stickiness_with_more_clients_than_tasks(version: str) -> None:
    got = sticky_as(version, doc({0: (3, False)}, [(1, 1, ["0_0"], []), (2, 1, ["0_2"], []), (3, 1, ["0_1"], []),
                                       (4, 1, [], []), (5, 1, [], [])]))
    assert [tasks_of(got, n)[0] for n in range(1, 6)] == [["0_0"], ["0_2"], ["0_1"], [], []]


@BOTH
def test_previous_standbys_become_actives(version: str) -> None:
    got = sticky_as(version, doc({0: (3, False)}, [(1, 1, [], ["0_2"]), (2, 1, [], ["0_1"]), (3, 1, [], ["0_0"])]))
    assert [tasks_of(got, n)[0] for n in (1, 2, 3)] == [["0_2"], ["0_1"], ["0_0"]]


@BOTH
def test_capacity_decides_between_previous_standbys(version: str) -> None:
    got = sticky_as(version, doc({0: (3, False)}, [(1, 1, ["0_0"], ["0_1"]), (2, 2, ["0_2"], ["0_1"])]))
    assert tasks_of(got, 1) == (["0_0"], [])
    assert tasks_of(got, 2) == (["0_1", "0_2"], [])


@BOTH
def test_two_standbys_each(version: str) -> None:
    got = sticky_as(version, doc({0: (3, True)}, [(1, 1, ["0_0"], []), (2, 1, ["0_1"], []), (3, 1, ["0_2"], [])], standbys=2))
    assert [tasks_of(got, n) for n in (1, 2, 3)] == [
        (["0_0"], ["0_1", "0_2"]), (["0_1"], ["0_0", "0_2"]), (["0_2"], ["0_0", "0_1"])]


@BOTH
def test_no_standby_without_another_client(version: str) -> None:
    got = sticky_as(version, doc({0: (1, True)}, [(1, 1, ["0_0"], [])], standbys=2))
    assert tasks_of(got, 1) == (["0_0"], [])


@BOTH
def test_every_client_gets_work_when_it_can(version: str) -> None:
    got = sticky_as(version, doc({0: (3, False)}, [(1, 3, [], []), (2, 1, [], []), (3, 1, [], [])]))
    assert [len(tasks_of(got, n)[0]) for n in (1, 2, 3)] == [1, 1, 1]
    got = sticky_as(version, doc({0: (3, True)}, [(n, 1, [], []) for n in range(1, 7)], standbys=1))
    assert all(c["active"] or c["standby"] for c in got["clients"].values())


@BOTH
def test_no_two_hosts_with_the_same_tasks(version: str) -> None:
    got = sticky_as(version, doc({0: (4, True)}, [(n, 1, [], []) for n in range(1, 5)], standbys=1))
    held = [frozenset(c["active"] + c["standby"]) for c in got["clients"].values()]
    assert len(set(held)) == 4


@pytest.mark.parametrize("version, a, b", [
    # 4.3: A's room is 1 x (3 // 2) = 1: A keeps 0_1 (its hash bucket comes first), 0_0 goes to the empty B, 0_2
    # to the first client in HashSet order of the two (both hold one task), A
    ("4.3", ["0_1", "0_2"], ["0_0"]), ("3.8", ["0_1", "0_2"], ["0_0"]),
    # 4.4: A's room is ceil(3 x 1 / 2) = 2: A keeps both, 0_2 goes to the empty B
    ("4.4", ["0_0", "0_1"], ["0_2"]),
])
def test_the_docstring_example(version: str, a: list[str], b: list[str]) -> None:
    got = sticky(doc({0: (3, False)}, [(1, 1, ["0_0", "0_1"], []), (2, 1, [], [])]), version)
    assert tasks_of(got, 1) == (a, []) and tasks_of(got, 2) == (b, [])


# --- KAFKA-20198 (the 4.4 branch's CustomStickyTaskAssignorTest) ------------------------------------

SCALED = {0: (450, False)}
FIRST_HALF = [f"0_{p}" for p in range(225)]


@pytest.mark.parametrize("version, kept", [("4.4", 225), ("4.3", 220), ("3.8", 220)])
def test_fair_share_of_previous_tasks_is_kept_when_scaling_up(version: str, kept: int) -> None:
    # shouldRetainFairShareOfPreviousTasksWhenScalingUp: 450 stateless tasks, two instances of 10 threads, the
    # first ran tasks 0..224. 4.4 keeps all 225 there; 4.3 only 10 x (450 // 20) = 220 (not Kafka's test:
    # the release before the fix, for contrast)
    got = sticky(doc(SCALED, [(1, 10, FIRST_HALF, []), (2, 10, [], [])]), version)
    assert len(set(tasks_of(got, 1)[0]) & set(FIRST_HALF)) == kept
    assert [len(tasks_of(got, n)[0]) for n in (1, 2)] == [225, 225]


@pytest.mark.parametrize("version, rounds", [("4.4", 2), ("4.3", 5)])
def test_scaling_up_settles_within_two_rounds(version: str, rounds: int) -> None:
    # shouldConvergeWithinTwoRoundsWhenScalingUp: the first instance ran all 450 tasks, a second of 10 threads
    # joins; each round feeds the answer back. 4.4 settles in round 2; 4.3 in round 5 (the ticket's own
    # measurement before the fix: 5 rounds)
    first, second = [f"0_{p}" for p in range(450)], []
    for round_ in range(1, 10):
        got = sticky(doc(SCALED, [(1, 10, first, []), (2, 10, second, [])]), version)
        new_first, new_second = tasks_of(got, 1)[0], tasks_of(got, 2)[0]
        if sorted(new_first) == sorted(first) and sorted(new_second) == sorted(second):
            break
        first, second = new_first, new_second
    assert round_ == rounds


@pytest.mark.parametrize("version, one", [("4.3", 4), ("4.4", 4)])
def test_unequal_subtopology_sizes_split_four_and_three(version: str, one: int) -> None:
    # shouldAssignTasksEvenlyWithUnequalTopicGroupSizes: one instance ran all 7 tasks (0_0..0_5 and 1_0), a second
    # joins; one gets 3 and the other 4, together all 7. The room differs (4.3: 3, 4.4: 4), the split does not:
    # in 4.3 the first keeps 3 and takes 0_x back in step 3 once both hold 3
    tasks = [f"0_{p}" for p in range(6)] + ["1_0"]
    got = sticky(doc({0: (6, False), 1: (1, False)}, [(1, 1, tasks, []), (2, 1, [], [])]), version)
    first, second = tasks_of(got, 1)[0], tasks_of(got, 2)[0]
    assert (len(first), len(second)) == (one, 7 - one) and sorted(first + second) == sorted(tasks)


@pytest.mark.parametrize("version", ["3.0", "3.4", "3.7.2"])
def test_releases_before_3_8_have_no_sticky_task_assignor(version: str) -> None:
    with pytest.raises(KassignError, match=r"no sticky task assignor .*KIP-924, came with 3\.8") as err:
        sticky(doc({0: (3, False)}, [(1, 1, [], [])]), version)
    assert "\n" not in str(err.value)


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_invariants(document: dict) -> None:
    got = sticky(document)
    assert got == sticky(copy.deepcopy(document))
    every = {f"{s}_{p}" for s, spec in document["subtopologies"].items() for p in range(spec["partitions"])}
    stateful = {f"{s}_{p}" for s, spec in document["subtopologies"].items() if spec["stateful"]
                for p in range(spec["partitions"])}
    assert sorted(t for c in got["clients"].values() for t in c["active"]) == sorted(every)
    copies = {t: 0 for t in stateful}
    for client in got["clients"].values():
        assert not set(client["active"]) & set(client["standby"])
        assert set(client["standby"]) <= stateful
        for t in client["standby"]:
            copies[t] += 1
    assert all(n <= document["num_standby_replicas"] for n in copies.values())  # no warm-ups here
    assert got["probing_rebalance"] is False
    for process, spec in document["clients"].items():
        mine = [got["consumers"][m] for m in spec["consumers"]]
        assert sorted(t for m in mine for t in m["active"]) == got["clients"][process]["active"]
        assert sorted(t for m in mine for t in m["standby"]) == got["clients"][process]["standby"]
