"""Kafka Streams' own StickyTaskAssignor (``task.assignor.class``): facts from Kafka's
CustomStickyTaskAssignorTest, the docstring's example, and invariants."""

from __future__ import annotations

import copy

from hypothesis import given, settings

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


def sticky(document: dict) -> dict:
    return assign_streams_classic("sticky", document)


def tasks_of(answer: dict, n: int) -> tuple[list[str], list[str]]:
    client = answer["clients"][pid(n)]
    return client["active"], client["standby"]


def test_active_tasks_stay_put() -> None:
    got = sticky(doc({0: (3, False)}, [(1, 1, ["0_0"], []), (2, 1, ["0_1"], [])]))
    assert "0_0" in tasks_of(got, 1)[0] and "0_1" in tasks_of(got, 2)[0]
    got = sticky(doc({0: (3, False)}, [(1, 1, ["0_1"], []), (2, 1, ["0_0"], [])]))
    assert "0_1" in tasks_of(got, 1)[0] and "0_0" in tasks_of(got, 2)[0]
    assert got["probing_rebalance"] is False


def test_a_new_client_takes_one_task_without_moving_the_rest() -> None:
    got = sticky(doc({0: (3, False)}, [(1, 1, ["0_0", "0_2"], []), (2, 1, ["0_1"], []), (3, 1, [], [])]))
    assert [len(tasks_of(got, n)[0]) for n in (1, 2, 3)] == [1, 1, 1]
    assert tasks_of(got, 2)[0] == ["0_1"]


def test_more_threads_more_tasks() -> None:
    got = sticky(doc({0: (3, False)}, [(1, 1, [], []), (2, 2, [], [])]))
    assert [len(tasks_of(got, n)[0]) for n in (1, 2)] == [1, 2]
    got = sticky(doc({0: (3, False), 1: (3, False), 2: (3, False), 3: (3, False)}, [(1, 1, [], []), (2, 2, [], [])]))
    assert [len(tasks_of(got, n)[0]) for n in (1, 2)] == [4, 8]


def test_stickiness_with_more_clients_than_tasks() -> None:
    got = sticky(doc({0: (3, False)}, [(1, 1, ["0_0"], []), (2, 1, ["0_2"], []), (3, 1, ["0_1"], []),
                                       (4, 1, [], []), (5, 1, [], [])]))
    assert [tasks_of(got, n)[0] for n in range(1, 6)] == [["0_0"], ["0_2"], ["0_1"], [], []]


def test_previous_standbys_become_actives() -> None:
    got = sticky(doc({0: (3, False)}, [(1, 1, [], ["0_2"]), (2, 1, [], ["0_1"]), (3, 1, [], ["0_0"])]))
    assert [tasks_of(got, n)[0] for n in (1, 2, 3)] == [["0_2"], ["0_1"], ["0_0"]]


def test_capacity_decides_between_previous_standbys() -> None:
    got = sticky(doc({0: (3, False)}, [(1, 1, ["0_0"], ["0_1"]), (2, 2, ["0_2"], ["0_1"])]))
    assert tasks_of(got, 1) == (["0_0"], [])
    assert tasks_of(got, 2) == (["0_1", "0_2"], [])


def test_two_standbys_each() -> None:
    got = sticky(doc({0: (3, True)}, [(1, 1, ["0_0"], []), (2, 1, ["0_1"], []), (3, 1, ["0_2"], [])], standbys=2))
    assert [tasks_of(got, n) for n in (1, 2, 3)] == [
        (["0_0"], ["0_1", "0_2"]), (["0_1"], ["0_0", "0_2"]), (["0_2"], ["0_0", "0_1"])]


def test_no_standby_without_another_client() -> None:
    got = sticky(doc({0: (1, True)}, [(1, 1, ["0_0"], [])], standbys=2))
    assert tasks_of(got, 1) == (["0_0"], [])


def test_every_client_gets_work_when_it_can() -> None:
    got = sticky(doc({0: (3, False)}, [(1, 3, [], []), (2, 1, [], []), (3, 1, [], [])]))
    assert [len(tasks_of(got, n)[0]) for n in (1, 2, 3)] == [1, 1, 1]
    got = sticky(doc({0: (3, True)}, [(n, 1, [], []) for n in range(1, 7)], standbys=1))
    assert all(c["active"] or c["standby"] for c in got["clients"].values())


def test_no_two_hosts_with_the_same_tasks() -> None:
    got = sticky(doc({0: (4, True)}, [(n, 1, [], []) for n in range(1, 5)], standbys=1))
    held = [frozenset(c["active"] + c["standby"]) for c in got["clients"].values()]
    assert len(set(held)) == 4


def test_the_docstring_example() -> None:
    got = sticky(doc({0: (3, False)}, [(1, 1, ["0_0", "0_1"], []), (2, 1, [], [])]))
    # 0_1 stays with A (its hash bucket comes first), 0_0 goes to the empty B, 0_2 to the first
    # client in HashSet order of the two (both hold one task)
    assert "0_1" in tasks_of(got, 1)[0] and "0_0" in tasks_of(got, 2)[0]
    assert sorted(tasks_of(got, 1)[0] + tasks_of(got, 2)[0]) == ["0_0", "0_1", "0_2"]


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
