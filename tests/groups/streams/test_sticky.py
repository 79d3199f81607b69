"""Streams groups' broker assignor ``sticky`` (KIP-1071) against Kafka 4.3.1 and Kafka 4.4.

Kafka's own vectors of both releases, invariants over random groups, cases after Kafka's
StickyTaskAssignorTest (translated one for one in ``test_sticky_kafka44.py``), what changed in 4.4, and
what the scenario reader refuses or takes as Kafka takes it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core.errors import KassignError, ScenarioError, UnknownAssignorError
from kassign.groups.streams import sticky as sticky_module
from kassign.groups.streams import tasks as tasks_module
from kassign.groups.streams.sticky import assign_streams, check_streams_release
from tests.conftest import vector_params

VECTORS = "kafka-4.3/assign-streams.jsonl"
VECTORS_44 = "kafka-4.4/assign-streams.jsonl"
NATIVE = tasks_module.native


@contextlib.contextmanager
def python_edges() -> Iterator[None]:
    """The pure-Python reader and answer builder, as where the C edges are not built."""
    saved = tasks_module.native, sticky_module.native
    tasks_module.native = sticky_module.native = None
    try:
        yield
    finally:
        tasks_module.native, sticky_module.native = saved


@pytest.fixture(params=["native", "python"])
def edges(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each test twice: with the C edges (skipped where not built) and with the Python ones."""
    if request.param == "native":
        if NATIVE is None:
            pytest.skip("kassign.groups.streams._native is not built")
        yield request.param
    else:
        with python_edges():
            yield request.param


def check_vector(line: dict, versions: tuple[str | None, ...]) -> None:
    """The line's answer asked as each of ``versions`` (None: kassign's default release)."""
    for version in versions:
        asked = {} if version is None else {"kafka_version": version}
        if "expected_error" in line:
            with pytest.raises(KassignError):
                assign_streams(line["strategy"], line["scenario"], **asked)
        else:
            assert assign_streams(line["strategy"], line["scenario"], **asked) == line["expected"], version


@pytest.mark.parametrize("line", vector_params(VECTORS))
def test_kafka_vector(line: dict, edges: str) -> None:
    check_vector(line, ("4.3", "4.3.1", "4.2"))  # 4.2.0 to 4.3.1 run one assignor


@pytest.mark.parametrize("line", vector_params(VECTORS_44))
def test_kafka_44_vector(line: dict, edges: str) -> None:
    check_vector(line, ("4.4", "4.4.0", None))


# --- invariants over random groups ------------------------------------------------------------------


@st.composite
def groups(draw, min_members: int = 1, with_previous: bool = True, with_offsets: bool = False) -> dict:
    ids = draw(st.lists(st.sampled_from(["0", "1", "2", "10", "3", "a", "sub-b"]), min_size=1, max_size=5,
                        unique=True))
    subtopologies = {sid: {"partitions": draw(st.integers(0, 12)), "stateful": draw(st.booleans())} for sid in ids}
    processes = [f"process-{i}" for i in range(draw(st.integers(1, 6)))]
    count = draw(st.integers(min_members, 14))
    members = {f"member-{i}-{draw(st.integers(0, 999))}": {"process_id": draw(st.sampled_from(processes))}
               for i in range(count)}
    if with_previous and members:
        names = list(members)
        for sid, spec in subtopologies.items():
            for p in range(spec["partitions"]):
                holder = draw(st.sampled_from([None, *names]))
                if holder is not None:
                    members[holder].setdefault("active", {}).setdefault(sid, []).append(p)
                for other in draw(st.lists(st.sampled_from(names), max_size=2, unique=True)):
                    members[other].setdefault("standby", {}).setdefault(sid, []).append(p)
    if with_offsets and members:
        names = list(members)
        for sid, spec in subtopologies.items():
            for p in range(spec["partitions"]):
                for other in draw(st.lists(st.sampled_from(names), max_size=2, unique=True)):
                    sums = members[other].setdefault("offset_sums", {})
                    sums[f"{sid}_{p}"] = draw(st.sampled_from([0, 7, 100, 2**63 - 1]))
    return {"subtopologies": subtopologies, "num_standby_replicas": draw(st.integers(0, 3)), "members": members}


def replicas(scenario: dict, answer: dict) -> dict[tuple[str, int], tuple[list[str], list[str]]]:
    """Each task's (active members, standby members)."""
    out = {(sid, p): ([], []) for sid, spec in scenario["subtopologies"].items() for p in range(spec["partitions"])}
    for member, tasks in answer.items():
        for slot, kind in enumerate(("active", "standby")):
            for sid, partitions in tasks[kind].items():
                for p in partitions:
                    out[(sid, p)][slot].append(member)
    return out


@settings(max_examples=150, deadline=None)
@given(groups(with_offsets=True), st.sampled_from(["4.3", "4.4"]))
def test_every_task_has_one_active_member_and_standbys_on_other_processes(scenario: dict, version: str) -> None:
    answer = assign_streams("sticky", scenario, version)
    assert set(answer) == set(scenario["members"])
    process = {m: spec["process_id"] for m, spec in scenario["members"].items()}
    num_processes = len(set(process.values()))
    k = scenario["num_standby_replicas"]
    for (sid, _), (active, standby) in replicas(scenario, answer).items():
        assert len(active) == 1
        holders = [process[m] for m in active + standby]
        assert len(set(holders)) == len(holders)  # no two replicas (active or standby) on one process
        # a stateful task gets every standby there is room for; a stateless one none
        assert len(standby) == (min(k, num_processes - 1) if scenario["subtopologies"][sid]["stateful"] else 0)
    assert all(not tasks["warmup"] for tasks in answer.values())
    for tasks in answer.values():  # SPEC's shape: sorted, no empty lists
        for kind in ("active", "standby"):
            assert list(tasks[kind]) == sorted(tasks[kind]) or not tasks[kind]
            assert all(ps == sorted(set(ps)) and ps for ps in tasks[kind].values())


@settings(max_examples=100, deadline=None)
@given(groups(with_offsets=True))
def test_deterministic(scenario: dict) -> None:
    first = assign_streams("sticky", scenario)
    assert assign_streams("sticky", json.loads(json.dumps(scenario))) == first
    assert assign_streams("sticky", scenario, kafka_version="4.4.1") == first
    assert assign_streams("sticky", scenario, kafka_version="4.2.1") == assign_streams("sticky", scenario, "4.3")


@settings(max_examples=100, deadline=None)
@given(groups(with_offsets=True))
def test_offset_sums_change_nothing_before_kafka_44(scenario: dict) -> None:
    without = {m: {k: v for k, v in spec.items() if k != "offset_sums"} for m, spec in scenario["members"].items()}
    for version in ("4.2", "4.3", "4.3.1"):
        assert assign_streams("sticky", scenario, version) == assign_streams("sticky", dict(scenario, members=without),
                                                                            version)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8), st.integers(1, 4), st.integers(1, 4), st.randoms(use_true_random=False))
def test_kafka_44_hands_each_member_the_state_it_reported(members: int, per_member: int, processes: int,
                                                          rng) -> None:
    # a group that starts with nothing assigned, the tasks dealt evenly as state on the members' disks, each task
    # reported by one member: 4.4 gives every member exactly the tasks it reported (step 2, within its quota)
    tasks = list(range(members * per_member))
    rng.shuffle(tasks)
    names = [f"m{i}" for i in range(members)]
    scenario = {"subtopologies": {"0": {"partitions": len(tasks), "stateful": True}},
                "members": {name: {"process_id": f"p{rng.randrange(processes)}",
                                   "offset_sums": {f"0_{t}": rng.randrange(10**6)
                                                   for t in tasks[i * per_member:(i + 1) * per_member]}}
                            for i, name in enumerate(names)}}
    answer = assign_streams("sticky", scenario, "4.4")
    for name, spec in scenario["members"].items():
        assert answer[name]["active"] == {"0": sorted(int(t[2:]) for t in spec["offset_sums"])}


@settings(max_examples=100, deadline=None)
@given(groups(with_previous=False), st.sampled_from(["4.3", "4.4"]))
def test_fresh_group_spreads_active_tasks_evenly_over_members(scenario: dict, version: str) -> None:
    answer = assign_streams("sticky", scenario, version)
    counts = [sum(map(len, tasks["active"].values())) for tasks in answer.values()]
    assert max(counts) - min(counts) <= 1


class Text(str):
    """A str subclass: the C reader declines it and the Python reader takes it."""


def unusual(scenario: dict, draw) -> dict:
    """The same group in shapes the C reader leaves to the Python one (same answer expected)."""
    odd = json.loads(json.dumps(scenario))
    for spec in odd["members"].values():
        choice = draw(st.integers(0, 6))
        if choice == 1:
            spec["process_id"] = Text(spec["process_id"])
        elif choice == 2 and spec.get("active"):
            spec["active"] = {sid: [np.int64(p) for p in ps] for sid, ps in spec["active"].items()}
        elif choice == 3 and spec.get("standby"):
            spec["standby"] = {sid: tuple(ps) for sid, ps in spec["standby"].items()}
        elif choice == 4:
            spec["warmup"] = None
        elif choice == 5 and spec.get("active"):
            spec["active"] = {Text(sid): ps for sid, ps in spec["active"].items()}
        elif choice == 6 and spec.get("offset_sums"):
            spec["offset_sums"] = {Text(task): np.int64(n) for task, n in spec["offset_sums"].items()}
    return odd


@settings(max_examples=100, deadline=None)
@given(groups(with_offsets=True), st.data())
def test_c_and_python_edges_agree(scenario: dict, data: st.DataObject) -> None:
    odd = unusual(scenario, data.draw)
    with python_edges():
        expected = assign_streams("sticky", scenario)
        assert assign_streams("sticky", odd) == expected
    assert assign_streams("sticky", scenario) == expected
    assert assign_streams("sticky", odd) == expected
    assert list(assign_streams("sticky", scenario)) == list(expected) == sorted(expected)


@pytest.mark.parametrize("edges", ["native", "python"], indirect=True)
def test_answer_lists_members_sorted_by_code_point(edges: str) -> None:
    ids = ["e", "\u00e9", "ea", "\u20ac", "\U0001f600", "", "a\x00", "a", "Z", "\u00e9\u20ac", "\u20ac\u00e9",
           "zz\U0001f600"]
    scenario = {"subtopologies": {"0": {"partitions": 20, "stateful": True}}, "num_standby_replicas": 1,
                "members": {m: {"process_id": f"p{i % 3}"} for i, m in enumerate(ids)}}
    answer = assign_streams("sticky", scenario)
    assert list(answer) == sorted(ids)


@pytest.mark.skipif(NATIVE is None, reason="kassign.groups.streams._native is not built")
@pytest.mark.parametrize("member", [
    {"process_id": Text("p")}, {"process_id": "p", "active": {"0": [True]}}, {"process_id": "p", "active": {"0": [-1]}},
    {"process_id": "p", "active": {"0": [2**31]}}, {"process_id": "p", "active": {"0": [1.0]}},
    {"process_id": "p", "active": {"0": "1"}}, {"process_id": "p", "active": [["0", 1]]}, {"process_id": "p", "x": 1},
    {"process_id": "p", "rack": 3}, {"process_id": "p", "client_tags": {"zone": 1}}, {"active": {}}, "p",
    *({"process_id": "p", "offset_sums": sums} for sums in (
        [["0_1", 3]], {"0_1": -1}, {"0_1": 2**63}, {"0_1": 1.5}, {"0_1": True}, {"0_1": np.int64(3)},
        {Text("0_1"): 3}, {"01": 1}, {"0_+1": 1}, {"0_01": 1}, {"0_00": 1}, {"0_2147483648": 1}, {"0_99999999999": 1},
        {"_1": 1}, {"0_": 1}, {"0_\u0661": 1}, {"0_1 ": 1}, {1: 1})),
])
def test_c_reader_declines_what_it_does_not_read_exactly(member: object) -> None:
    assert NATIVE.read_members({"m": member}, {"0": 0}, [0, 4]) is None


@pytest.mark.skipif(NATIVE is None, reason="kassign.groups.streams._native is not built")
def test_c_reader_reads_offset_sums() -> None:
    members = {"m": {"process_id": "p", "offset_sums": {"0_1": 3, "gone_0": 7, "0_4": 9, "a_b_2147483647": 0}},
               "n": {"process_id": "p", "offset_sums": None}, "o": {"process_id": "q", "offset_sums": {}},
               "r": {"process_id": "q", "rack": "r1", "offset_sums": {"a_b_0": 2**63 - 1, "0_0": 5}}}
    read = NATIVE.read_members(members, {"0": 0, "a_b": 1}, [0, 4, 6])
    assert [np.frombuffer(column, dtype=np.int64).tolist() for column in read[5]] == [[1, 4, 0], [0, 3, 3],
                                                                                       [3, 2**63 - 1, 5]]
    assert NATIVE.read_members({"n": members["n"], "o": {"process_id": "q"}}, {"0": 0}, [0, 4])[5] is None
    assert NATIVE.read_members({"o": members["o"]}, {"0": 0}, [0, 4])[5] == (bytearray(),) * 3


@settings(max_examples=100, deadline=None)
@given(groups(with_offsets=True), st.lists(st.tuples(st.sampled_from(["0", "a", "gone", "a_0"]), st.integers(0, 20))))
def test_c_and_python_readers_read_the_same_offset_sums(scenario: dict, extra: list) -> None:
    if NATIVE is None:
        pytest.skip("kassign.groups.streams._native is not built")
    first = next(iter(scenario["members"].values()))
    first.setdefault("offset_sums", {}).update({f"{sid}_{p}": p for sid, p in extra})  # some no longer exist
    ids, partitions, _ = tasks_module._subtopologies(scenario["subtopologies"])
    starts = [0, *np.cumsum(partitions).tolist()]
    assert NATIVE.read_members(scenario["members"], {sid: s for s, sid in enumerate(ids)}, starts) is not None
    read = tasks_module.parse_streams_group(scenario)
    with python_edges():
        expected = tasks_module.parse_streams_group(scenario)
    assert [column.tolist() for column in read.task_offsets] == [column.tolist() for column in expected.task_offsets]


def follow_up(scenario: dict, answer: dict) -> dict:
    """The next round: the same members, the answer as their current target assignment."""
    members = {m: dict(spec, active=answer[m]["active"], standby=answer[m]["standby"])
               for m, spec in scenario["members"].items()}
    return dict(scenario, members=members)


@settings(max_examples=150, deadline=None)
@given(groups(), st.sampled_from(["4.3", "4.4"]))
def test_follow_up_round_moves_no_active_task_when_tasks_divide_evenly(scenario: dict, version: str) -> None:
    # With the active quota a whole number, each member ends a round with exactly that many active
    # tasks, and the next round lets each keep all of them. (Otherwise the quota shrinks as members
    # reach it, and Kafka can move an active task in a follow-up round: see the case below.)
    tasks = sum(spec["partitions"] for spec in scenario["subtopologies"].values())
    if tasks % len(scenario["members"]):
        scenario = dict(scenario, subtopologies=dict(scenario["subtopologies"], extra={
            "partitions": len(scenario["members"]) - tasks % len(scenario["members"]), "stateful": False}))
    first = assign_streams("sticky", scenario, version)
    second = assign_streams("sticky", follow_up(scenario, first), version)
    assert {m: a["active"] for m, a in second.items()} == {m: a["active"] for m, a in first.items()}


@pytest.mark.parametrize("version", ["4.3", "4.4"])
def test_follow_up_round_can_move_an_active_task_as_kafka_does(version: str) -> None:
    # Kafka 4.3.1's and 4.4's StickyTaskAssignor give these active tasks (checked against their classes; 4.4
    # places two standbys elsewhere): 10 active tasks,
    # 8 members, quota 2; m4, then m6 reach 2 and the quota drops to 1, m0 reaching 1 keeps it there,
    # so m1's second task (2_3, met last in partition order) goes to m3, which held it as a standby.
    members = {
        "m0": ("p2", {"0": [3]}, {"2": [1, 2]}), "m1": ("p1", {"0": [1], "2": [3]}, {"1": [1]}),
        "m2": ("p1", {"2": [1]}, {"1": [0], "2": [0]}), "m3": ("p4", {}, {"1": [0], "2": [1, 3]}),
        "m4": ("p0", {"1": [0], "2": [0]}, {"1": [1]}), "m5": ("p3", {"0": [2]}, {"2": [0, 3]}),
        "m6": ("p4", {"0": [0], "2": [2]}, {}), "m7": ("p3", {"1": [1]}, {"2": [2]}),
    }
    scenario = {
        "subtopologies": {"0": {"partitions": 4, "stateful": False}, "1": {"partitions": 2, "stateful": True},
                          "2": {"partitions": 4, "stateful": True}},
        "num_standby_replicas": 2,
        "members": {m: {"process_id": p, "active": a, "standby": s} for m, (p, a, s) in members.items()},
    }
    answer = assign_streams("sticky", scenario, version)
    assert answer["m1"]["active"] == {"0": [1]}
    assert answer["m3"]["active"] == {"2": [3]}
    assert {m: answer[m]["active"] for m in members if m not in ("m1", "m3")} == \
        {m: a for m, (_, a, _) in members.items() if m not in ("m1", "m3")}


# --- cases after Kafka 4.3.1's StickyTaskAssignorTest, asked as 4.3 (4.4's: test_sticky_kafka44.py) --------


def assign_43(scenario: dict) -> dict:
    return assign_streams("sticky", scenario, "4.3")


def group(tasks: int, stateful: bool, standbys: int = 0, subtopologies: tuple[str, ...] = ("test-subtopology",),
          **members: tuple) -> dict:
    """``members``: name -> (process, previous active partitions, previous standby partitions) of the
    subtopologies, each partition list applying to every subtopology."""
    def held(partitions):
        return {sid: list(partitions) for sid in subtopologies} if partitions else {}
    return {
        "subtopologies": {sid: {"partitions": tasks, "stateful": stateful} for sid in subtopologies},
        "num_standby_replicas": standbys,
        "members": {m: {"process_id": spec[0], "active": held(spec[1] if len(spec) > 1 else ()),
                        "standby": held(spec[2] if len(spec) > 2 else ())} for m, spec in members.items()},
    }


def active_of(answer: dict, member: str, sid: str = "test-subtopology") -> list[int]:
    return answer[member]["active"].get(sid, [])


def standby_of(answer: dict, member: str, sid: str = "test-subtopology") -> list[int]:
    return answer[member]["standby"].get(sid, [])


def test_one_task_per_process_when_as_many_tasks_as_processes() -> None:
    answer = assign_43(group(3, False, member1=("p1",), member2=("p2",), member3=("p3",)))
    assert sorted(p for m in answer for p in active_of(answer, m)) == [0, 1, 2]
    assert all(len(active_of(answer, m)) == 1 for m in answer)


def test_active_tasks_stay_on_their_process() -> None:
    answer = assign_43(group(3, False, member1=("process1", [0]), member2=("process2", [1])))
    assert 0 in active_of(answer, "member1") and 1 in active_of(answer, "member2")
    assert len(active_of(answer, "member1")) + len(active_of(answer, "member2")) == 3
    # member1 left, member3 joined process1 holding task 2
    answer = assign_43(group(3, False, member2=("process2", [1]), member3=("process1", [2])))
    assert 1 in active_of(answer, "member2") and 2 in active_of(answer, "member3")


def test_sticky_when_more_members_than_tasks() -> None:
    answer = assign_43(group(3, False, member1=("process1", [0]), member2=("process2", [2]),
                                            member3=("process3", [1]), member4=("process4",), member5=("process5",)))
    assert [active_of(answer, m) for m in ("member1", "member2", "member3", "member4", "member5")] == \
        [[0], [2], [1], [], []]


def test_previous_standby_owner_gets_the_active_task() -> None:
    answer = assign_43(group(3, False, member1=("process1", [], [2]), member2=("process2", [], [1]),
                                            member3=("process3", [], [0])))
    assert [active_of(answer, m) for m in ("member1", "member2", "member3")] == [[2], [1], [0]]


def test_multiple_standby_replicas() -> None:
    answer = assign_43(group(3, True, 2, member1=("process1", [0]), member2=("process2", [1]),
                                            member3=("process3", [2])))
    assert [standby_of(answer, m) for m in ("member1", "member2", "member3")] == [[1, 2], [0, 2], [0, 1]]


def test_no_standby_without_another_process() -> None:
    answer = assign_43(group(10, True, 3, member1=("process1",)))
    assert active_of(answer, "member1") == list(range(10))
    assert answer["member1"]["standby"] == {}


def test_standby_goes_back_to_its_previous_owner_below_quota() -> None:
    # 2 active tasks and 2 standbys over 3 members: quota 2; member1 keeps active 0 and standby 1
    answer = assign_43(group(2, True, 1, member1=("process1", [0], [1]), member2=("process2", [1]),
                                            member3=("process3",)))
    assert active_of(answer, "member1") == [0]
    assert standby_of(answer, "member1") == [1]


def test_range_style_when_starting_empty() -> None:
    answer = assign_43(group(2, True, 1, ("test-subtopology1", "test-subtopology2"),
                                            member1=("process1",), member2=("process2",)))
    for member in ("member1", "member2"):
        for sid in ("test-subtopology1", "test-subtopology2"):
            assert len(active_of(answer, member, sid)) == 1
            assert len(standby_of(answer, member, sid)) == 1


@pytest.mark.parametrize("version", ["4.3", "4.4"])
def test_member_maps_with_tree_bins(version: str) -> None:
    # The twelve ids' String hash codes share their low 6 bits (after HashMap's spreading): in the
    # coordinator's member maps they end up in one bucket of a 64-bucket table, which Java turns into a
    # tree, and the tree decides the order. Kafka 4.3.1's answer, and 4.4's (checked against their classes):
    members = ["member-18", "member-161", "member-183", "member-260", "member-282", "member-381", "member-480",
               "member-1019", "member-1118", "member-1217", "member-1239", "member-1316"]
    scenario = {"subtopologies": {"0": {"partitions": 15}}, "members": {m: {"process_id": "p"} for m in members}}
    answer = assign_streams("sticky", scenario, version)
    assert {m: a["active"]["0"] for m, a in answer.items()} == {
        "member-18": [9], "member-161": [2], "member-183": [0], "member-260": [6, 14], "member-282": [10, 12],
        "member-381": [11, 13], "member-480": [4], "member-1019": [5], "member-1118": [7], "member-1217": [8],
        "member-1239": [1], "member-1316": [3]}


@pytest.mark.parametrize("version", ["4.2", "4.3", "4.4"])
def test_docstring_example(version: str) -> None:
    scenario = {"subtopologies": {"0": {"partitions": 3, "stateful": True}}, "num_standby_replicas": 1,
                "members": {"a": {"process_id": "P", "active": {"0": [0]}},
                            "b": {"process_id": "Q", "standby": {"0": [1]}}}}
    assert assign_streams("sticky", scenario, version) == {
        "a": {"active": {"0": [0, 2]}, "standby": {"0": [1]}, "warmup": {}},
        "b": {"active": {"0": [1]}, "standby": {"0": [0, 2]}, "warmup": {}},
    }


def test_docstring_example_where_43_and_44_differ() -> None:
    # the two processes share a bucket of the process map: 4.4's computeIfAbsent puts "east" before "west"
    scenario = {"subtopologies": {"0": {"partitions": 3, "stateful": True}}, "num_standby_replicas": 1,
                "members": {"east-t1": {"process_id": "east"}, "west-t1": {"process_id": "west"}}}
    first, second = {"active": {"0": [0, 2]}, "standby": {"0": [1]}, "warmup": {}}, \
        {"active": {"0": [1]}, "standby": {"0": [0, 2]}, "warmup": {}}
    assert assign_streams("sticky", scenario, "4.3") == {"east-t1": second, "west-t1": first}
    assert assign_streams("sticky", scenario, "4.4") == {"east-t1": first, "west-t1": second}


def test_docstring_example_of_offset_sums() -> None:
    scenario = {"subtopologies": {"0": {"partitions": 4, "stateful": True}},
                "members": {"m1": {"process_id": "P", "offset_sums": {"0_0": 100, "0_1": 100}},
                            "m2": {"process_id": "Q", "offset_sums": {"0_2": 100, "0_3": 100}}}}
    assert assign_streams("sticky", scenario, "4.4")["m1"]["active"] == {"0": [0, 1]}
    assert assign_streams("sticky", scenario, "4.3")["m1"]["active"] == {"0": [0, 2]}


def test_kafka_20899_skips_standby_owners_whose_process_holds_the_task() -> None:
    # Task 0_0's previous standby owners: s1 (process P, now running 0_0 after step 2 of the actives) is
    # listed first, s2 (process R) next. 4.3 gives up on the standby there and places it by load (on Q,
    # whose member a held 0_1 active); 4.4 passes over s1 and hands the standby back to s2.
    scenario = {"subtopologies": {"0": {"partitions": 2, "stateful": True}}, "num_standby_replicas": 1,
                "members": {"s1": {"process_id": "P", "standby": {"0": [0]}},
                            "s2": {"process_id": "R", "standby": {"0": [0]}},
                            "a": {"process_id": "Q", "active": {"0": [1]}}}}
    for version in ("4.3", "4.4"):
        answer = assign_streams("sticky", scenario, version)
        assert answer["s1"]["active"] == {"0": [0]} and answer["a"]["active"] == {"0": [1]}
    assert assign_streams("sticky", scenario, "4.4")["s2"]["standby"] == {"0": [0]}
    assert assign_streams("sticky", scenario, "4.3")["s2"]["standby"] != {"0": [0]}


def test_a_process_state_goes_to_its_first_member_only() -> None:
    # Kafka 4.4's answer (checked against its classes): each process's two members report the same state; the
    # coordinator lists a-1 before a-2, and a-2 never replaces a-1 as the candidate (same process load), so once
    # a-1 holds 0_0 (quota 1), 0_1 goes by load, here to a member of instance-b
    members = {f"app-{p}-thread-{k}-new": {"process_id": f"instance-{p}", "offset_sums": sums}
               for p, sums in (("a", {"0_0": 52000, "0_1": 48100}), ("b", {"0_2": 50730, "0_3": 49900}))
               for k in (1, 2)}
    answer = assign_streams("sticky", {"subtopologies": {"0": {"partitions": 4, "stateful": True}},
                                       "members": members}, "4.4")
    assert {m: a["active"]["0"] for m, a in answer.items()} == {
        "app-a-thread-1-new": [0], "app-a-thread-2-new": [3], "app-b-thread-1-new": [2], "app-b-thread-2-new": [1]}


def test_offset_sums_rank_after_standbys_then_by_sum() -> None:
    # 4 tasks, 4 members: active quota 1; a keeps 0_1, b keeps 0_2. 0_0's previous standby owners in 4.4:
    # b (a standby, no reported sum), then d (sum 9), then c (5). d replaces b (lower process load and
    # count) and is below quota: d gets 0_0. 0_3's only candidate, d, is at quota: the heap gives it to c.
    # (Checked against Kafka 4.4's classes.)
    members = {"a": {"process_id": "A", "active": {"0": [1]}},
               "b": {"process_id": "B", "active": {"0": [2]}, "standby": {"0": [0]}},
               "c": {"process_id": "C", "offset_sums": {"0_0": 5}},
               "d": {"process_id": "D", "offset_sums": {"0_0": 9, "0_3": 1}}}
    scenario = {"subtopologies": {"0": {"partitions": 4, "stateful": True}}, "members": members}
    answer = assign_streams("sticky", scenario, "4.4")
    assert answer["d"]["active"] == {"0": [0]}
    assert answer["c"]["active"] == {"0": [3]}


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 8), st.integers(1, 6), st.data())
def test_previous_standby_owners_ranked_as_kafka_20719_ranks_them(num_tasks: int, width: int,
                                                                  data: st.DataObject) -> None:
    # The compiled ranking against its definition, written plainly: per task, the distinct members
    # holding it as a standby, then those only reporting an offset sum of it; each part by sum, highest
    # first (0 where none was reported), then rank.
    pair = st.tuples(st.integers(0, max(num_tasks - 1, 0)), st.integers(0, width - 1))
    held = data.draw(st.lists(pair, max_size=20)) if num_tasks else []
    reported = data.draw(st.dictionaries(pair, st.sampled_from([0, 1, 7, 2**63 - 1]), max_size=20)) if num_tasks else {}
    reported = dict(data.draw(st.permutations(list(reported.items()))))
    column = lambda values: np.array(values, dtype=np.int64)  # noqa: E731
    for with_sums in (False, True):
        sums = reported if with_sums else {}
        start, owners = sticky_module._standby_owners(
            num_tasks, width, column([t for t, _ in held]), column([m for _, m in held]),
            column([t for t, _ in sums]), column([m for _, m in sums]), column(list(sums.values())))
        for task in range(num_tasks):
            holding = {m for t, m in held if t == task}
            only = {m for (t, m) in sums if t == task} - holding
            expected = sorted(holding | only, key=lambda m: (m in only, -sums.get((task, m), 0), m))
            assert owners[start[task]:start[task + 1]].tolist() == expected
        assert start[num_tasks] == len(owners)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=8))
def test_tasks_in_partition_then_subtopology_order(partitions: list[int]) -> None:
    task_start = np.array([0, *np.cumsum(partitions, dtype=np.int64).tolist()], dtype=np.int64)
    sub = np.repeat(np.arange(len(partitions)), partitions)
    expected = sorted(range(int(task_start[-1])), key=lambda t: (t - task_start[sub[t]], sub[t]))
    assert sticky_module._by_partition(task_start).tolist() == expected


# --- releases, strategies, input -----------------------------------------------------------------


@pytest.mark.parametrize("version", ["4.2", "4.3", "4.2.0", "4.2.1", "4.3.0", "4.3.1", "4.4", "4.4.0"])
def test_modelled_releases(version: str) -> None:
    assert check_streams_release(version).label == version


def test_default_release_is_44() -> None:
    scenario = {"subtopologies": {"0": {"partitions": 3, "stateful": True}}, "num_standby_replicas": 1,
                "members": {"east-t1": {"process_id": "east"}, "west-t1": {"process_id": "west"}}}
    assert assign_streams("sticky", scenario) == assign_streams("sticky", scenario, "4.4") != \
        assign_streams("sticky", scenario, "4.3")


def test_release_4_1_is_early_access() -> None:
    with pytest.raises(KassignError, match="early access"):
        assign_streams("sticky", group(1, False, m=("p",)), kafka_version="4.1")


@pytest.mark.parametrize("version", ["4.0", "3.9"])
def test_other_releases_name_the_modelled_ones(version: str) -> None:
    with pytest.raises(KassignError, match="4.2, 4.3 and 4.4"):
        assign_streams("sticky", group(1, False, m=("p",)), kafka_version=version)


@pytest.mark.parametrize("version", ["5", "latest", "4.3.x"])
def test_what_is_no_release_says_the_form(version: str) -> None:
    with pytest.raises(KassignError, match="MAJOR.MINOR"):
        assign_streams("sticky", group(1, False, m=("p",)), kafka_version=version)


def test_unknown_strategy_names_sticky() -> None:
    with pytest.raises(UnknownAssignorError, match="'sticky'"):
        assign_streams("uniform", group(1, False, m=("p",)))


def test_no_members_and_no_tasks() -> None:
    assert assign_streams("sticky", {"subtopologies": {"0": {"partitions": 0}}, "members": {}}) == {}


def test_no_members_with_tasks_fails_as_kafka_does() -> None:
    with pytest.raises(KassignError, match="No process available to assign active task 1_0"):
        assign_streams("sticky", {"subtopologies": {"0": {"partitions": 0}, "1": {"partitions": 2}}, "members": {}})


def test_defaults_stateless_and_no_standbys() -> None:
    answer = assign_streams("sticky", {"subtopologies": {"0": {"partitions": 2}},
                                       "members": {"a": {"process_id": "p"}, "b": {"process_id": "q"}}})
    assert answer == {"a": {"active": {"0": [0]}, "standby": {}, "warmup": {}},
                      "b": {"active": {"0": [1]}, "standby": {}, "warmup": {}}}


def test_tasks_that_no_longer_exist_are_dropped(edges: str) -> None:
    # after a topology change the coordinator hands over leftovers; Kafka's assignor never looks them up
    base = group(2, True, 1, member1=("p1", [0]), member2=("p2", [1], [0]), member3=("p2", [], [0]))
    odd = json.loads(json.dumps(base))
    odd["members"]["member1"]["active"]["test-subtopology"] += [5, 0]  # beyond the 2 partitions; 0 twice
    odd["members"]["member2"]["standby"] = {"gone": [0], "test-subtopology": [0, 7, 0]}
    assert assign_streams("sticky", odd) == assign_streams("sticky", base)


def test_offset_sums_of_tasks_that_no_longer_exist_are_dropped(edges: str) -> None:
    base = {"subtopologies": {"a_b": {"partitions": 2, "stateful": True}},
            "members": {"m": {"process_id": "p", "offset_sums": {"a_b_1": 3}}, "n": {"process_id": "q"}}}
    odd = json.loads(json.dumps(base))
    odd["members"]["n"]["offset_sums"] = {"gone_0": 7, "a_b_2": 9, "a_0": 1}  # no subtopology "gone"/"a"; a_b has 2
    assert assign_streams("sticky", odd) == assign_streams("sticky", base)
    assert assign_streams("sticky", base)["m"]["active"] == {"a_b": [1]}  # the subtopology id holds "_" itself


def test_offset_sums_none_is_no_report(edges: str) -> None:
    base = {"subtopologies": {"0": {"partitions": 2}}, "members": {"m": {"process_id": "p"}, "n": {"process_id": "q"}}}
    odd = json.loads(json.dumps(base))
    odd["members"]["m"]["offset_sums"] = None
    odd["members"]["n"]["offset_sums"] = {}
    assert assign_streams("sticky", odd) == assign_streams("sticky", base)


def offsets(sums: object) -> dict:
    return {"subtopologies": {"0": {"partitions": 2}}, "members": {"m": {"process_id": "p", "offset_sums": sums}}}


BAD = {
    "offset sums not an object": (offsets([["0_1", 3]]), "members.m.offset_sums"),
    "offset sum negative": (offsets({"0_1": -2}), "from 0 to"),
    "offset sum too large": (offsets({"0_1": 2**63}), "from 0 to"),
    "offset sum not whole": (offsets({"0_1": 1.5}), "whole number"),
    "offset sum a bool": (offsets({"0_1": True}), "whole number"),
    "offset sum of no task": (offsets({"01": 1}), "SUBTOPOLOGY_PARTITION"),
    "offset sum partition with sign": (offsets({"0_+1": 1}), "SUBTOPOLOGY_PARTITION"),
    "offset sum partition leading zero": (offsets({"0_01": 1}), "SUBTOPOLOGY_PARTITION"),
    "offset sum partition beyond int": (offsets({"0_2147483648": 1}), "SUBTOPOLOGY_PARTITION"),
    "offset sum no subtopology": (offsets({"_1": 1}), "SUBTOPOLOGY_PARTITION"),
    "not an object": ([], "expected an object"),
    "unknown field": ({"subtopologies": {}, "members": {}, "standbys": 1}, "unknown field"),
    "no subtopologies": ({"members": {}}, 'missing "subtopologies"'),
    "no members": ({"subtopologies": {}}, 'missing "members"'),
    "partitions missing": ({"subtopologies": {"0": {"stateful": True}}, "members": {}}, 'missing "partitions"'),
    "negative partitions": ({"subtopologies": {"0": {"partitions": -1}}, "members": {}}, "subtopologies.0.partitions"),
    "partitions not whole": ({"subtopologies": {"0": {"partitions": 2.5}}, "members": {}}, "whole number"),
    "stateful not bool": ({"subtopologies": {"0": {"partitions": 1, "stateful": "yes"}}, "members": {}},
                          "true or false"),
    "subtopology field": ({"subtopologies": {"0": {"partitions": 1, "tasks": 1}}, "members": {}}, "unknown field"),
    "negative standbys": ({"subtopologies": {}, "num_standby_replicas": -1, "members": {}}, "num_standby_replicas"),
    "standbys a bool": ({"subtopologies": {}, "num_standby_replicas": True, "members": {}}, "whole number"),
    "no process id": ({"subtopologies": {}, "members": {"m": {"active": {}}}}, "process id"),
    "process id not text": ({"subtopologies": {}, "members": {"m": {"process_id": 7}}}, "process id"),
    "member field": ({"subtopologies": {}, "members": {"m": {"process_id": "p", "owned": []}}}, "unknown field"),
    "member not an object": ({"subtopologies": {}, "members": {"m": "p"}}, "members.m"),
    "active twice": ({"subtopologies": {"0": {"partitions": 2}},
                      "members": {"a": {"process_id": "p", "active": {"0": [1]}},
                                  "b": {"process_id": "q", "active": {"0": [1, 0]}}}}, "0_1 is active on two members"),
    "partition not whole": ({"subtopologies": {"0": {"partitions": 2}},
                             "members": {"a": {"process_id": "p", "standby": {"0": ["1"]}}}}, "whole number"),
    "partition a bool": ({"subtopologies": {"0": {"partitions": 2}},
                          "members": {"a": {"process_id": "p", "active": {"0": [True]}}}}, "whole number"),
    "negative partition": ({"subtopologies": {"0": {"partitions": 2}},
                            "members": {"a": {"process_id": "p", "warmup": {"0": [-1]}}}}, "out of range"),
    "partitions not a list": ({"subtopologies": {"0": {"partitions": 2}},
                               "members": {"a": {"process_id": "p", "active": {"0": 1}}}}, "list of partition"),
    "client tags": ({"subtopologies": {}, "members": {"a": {"process_id": "p", "client_tags": ["zone"]}}},
                    "client_tags"),
    "too many replicas": ({"subtopologies": {"0": {"partitions": 3, "stateful": True}},
                           "num_standby_replicas": 2**31 - 2, "members": {}}, "task replicas"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input(case: str, edges: str) -> None:
    scenario, message = BAD[case]
    with pytest.raises(ScenarioError, match=message):
        assign_streams("sticky", scenario)
