"""Kafka Streams' classic task assignment (SPEC section 8): the high-availability assignor and the
split over stream threads, against Kafka 4.3.1's own answers, its unit tests' facts, and invariants."""

from __future__ import annotations

import copy
import json
import random
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core.errors import KassignError, ScenarioError, UnknownAssignorError
from kassign.groups.streams.classic import assign_streams_classic
from kassign.groups.streams.classic.high_availability import _movement_order, task_hash
from kassign.core.javaqueue import JavaPriorityQueue
from kassign.core.javasets import hash_set_order
from kassign.groups.streams.classic.threads import assign_tasks_to_threads
from tests.conftest import vector_params

VECTORS = "kafka-4.3/assign-streams-client.jsonl"
LONG_MAX = 2**63 - 1


def pid(n: int) -> str:
    """Kafka's test process ids: ``new UUID(0, n)``."""
    return str(uuid.UUID(int=n))


# --- Kafka 4.3.1's own answers ----------------------------------------------------------------


@pytest.mark.parametrize("line", vector_params(VECTORS))
def test_vector(line: dict) -> None:
    got = assign_streams_classic(line["strategy"], line["scenario"], kafka_version="4.3.1")
    expected = line["expected"]
    assert got == expected
    # clients in signed UUID order, consumers by member id, as the file lists them
    assert list(got["clients"]) == list(expected["clients"])
    assert list(got["consumers"]) == list(expected["consumers"])


RARE = "kafka-4.3/assign-streams-client-rare.jsonl"


@pytest.mark.parametrize("version", ["4.3", "3.3", "3.4.0", "3.9", "4.4"])
@pytest.mark.parametrize("line", vector_params(RARE))
def test_rare_vector(line: dict, version: str) -> None:
    """Two standby replicas: two standbys of one task can both need moving to a caught-up client. 3.3 to 4.4 run the
    same steps (3.0 to 3.2 take the movements in another order)."""
    assert assign_streams_classic(line["strategy"], line["scenario"], kafka_version=version) == line["expected"]


def test_movements_of_one_task_leave_the_queue_in_heap_order() -> None:
    # Kafka's PriorityQueue of movements orders by (caught-up clients, task) only: three standbys of task 0 to
    # move (destinations 0, 1, 2, offered in that order) come out 0, 2, 1, as the heap's array has them; a fourth
    # movement polled first reorders the rest (java.util.PriorityQueue gives these orders, JDK 17)
    assert _movement_order([(1, 0, 0), (1, 0, 1), (1, 0, 2)]) == [(1, 0, 0), (1, 0, 2), (1, 0, 1)]
    moves = [(1, 0, 0), (1, 0, 1), (1, 0, 2), (0, 5, 3)]
    assert _movement_order(moves) == [(0, 5, 3), (1, 0, 1), (1, 0, 2), (1, 0, 0)]
    assert _movement_order([(2, 1, 0), (1, 1, 1)]) == [(1, 1, 1), (2, 1, 0)]


# --- helpers for hand-written scenarios ---------------------------------------------------------


def scenario(tasks: dict[int, tuple[int, bool]], clients: dict[str, dict], **settings_) -> dict:
    """``tasks``: subtopology -> (partitions, stateful); ``clients``: uuid -> {member: offset_sums}
    (or uuid -> {"consumers": ..., "client_tags": ...})."""
    doc: dict = {
        "subtopologies": {str(s): {"partitions": n, "stateful": stateful} for s, (n, stateful) in tasks.items()},
        "clients": {},
    }
    for process, spec in clients.items():
        if "consumers" in spec:
            doc["clients"][process] = spec
        else:
            doc["clients"][process] = {"consumers": {m: {"owned": [], "offset_sums": sums} for m, sums in spec.items()}}
    doc.update(settings_)
    return doc


def caught_up(process: int, tasks: list[str], *, threads: int = 1, lag: int = 0, end: int = LONG_MAX) -> dict:
    """A client whose consumers report state ``lag`` behind ``end`` for ``tasks`` (first thread)."""
    members = {f"c{process}-t{i}": {} for i in range(threads)}
    members[f"c{process}-t0"] = {t: end - lag for t in tasks}
    return members


def ends(tasks: list[str], end: int = LONG_MAX) -> dict:
    return {t: end for t in tasks}


def names(n: int, sub: int = 0) -> list[str]:
    return [f"{sub}_{p}" for p in range(n)]


# --- facts from Kafka's HighAvailabilityTaskAssignorTest -----------------------------------------


def test_at_most_max_warmup_replicas() -> None:
    # Client 1 is caught up on all four tasks, client 2 on none; one warm-up at a time.
    tasks = names(4)
    doc = scenario({0: (4, True)}, {pid(1): caught_up(1, tasks), pid(2): {"c2-t0": {}}},
                   end_offset_sums=ends(tasks), acceptable_recovery_lag=100, max_warmup_replicas=1)
    got = assign_streams_classic("high-availability", doc)
    assert got["clients"][pid(1)] == {"active": tasks, "standby": []}
    assert got["clients"][pid(2)]["active"] == []
    assert len(got["clients"][pid(2)]["standby"]) == 1
    assert got["probing_rebalance"] is True


def test_warmup_and_standby_never_share_a_client() -> None:
    tasks = names(4)
    doc = scenario({0: (4, True)}, {pid(1): caught_up(1, tasks), pid(2): {"c2-t0": {}}},
                   end_offset_sums=ends(tasks), acceptable_recovery_lag=100, max_warmup_replicas=1,
                   num_standby_replicas=1)
    got = assign_streams_classic("high-availability", doc)
    assert got["clients"][pid(1)] == {"active": tasks, "standby": []}
    assert got["clients"][pid(2)] == {"active": [], "standby": tasks}
    assert got["probing_rebalance"] is True


def test_no_standbys_without_another_client() -> None:
    tasks = names(2)
    doc = scenario({0: (2, True)}, {pid(1): caught_up(1, tasks)}, end_offset_sums=ends(tasks),
                   acceptable_recovery_lag=100, num_standby_replicas=1)
    got = assign_streams_classic("high-availability", doc)
    assert got["clients"][pid(1)] == {"active": tasks, "standby": []}
    assert got["probing_rebalance"] is False


def test_actives_go_to_a_lagging_client_when_none_is_caught_up() -> None:
    tasks = names(2)
    doc = scenario({0: (2, True)}, {pid(1): {"c1-t0": {}}}, end_offset_sums=ends(tasks),
                   acceptable_recovery_lag=100, num_standby_replicas=1)
    got = assign_streams_classic("high-availability", doc)
    assert got["clients"][pid(1)] == {"active": tasks, "standby": []}
    assert got["probing_rebalance"] is False


def test_unbounded_recovery_lag_skips_warmups() -> None:
    # acceptable.recovery.lag = Long.MAX_VALUE: every client counts as caught up, so the dealt
    # assignment stands: 9 actives and 9 standbys over 3 one-thread clients, 6 each.
    tasks = names(3, 0) + names(3, 1) + names(3, 2)
    doc = scenario({0: (3, True), 1: (3, True), 2: (3, True)},
                   {pid(1): caught_up(1, tasks), pid(2): {"c2-t0": {}}, pid(3): {"c3-t0": {}}},
                   end_offset_sums=ends(tasks), acceptable_recovery_lag=LONG_MAX, max_warmup_replicas=1,
                   num_standby_replicas=1)
    got = assign_streams_classic("high-availability", doc)
    for p in (1, 2, 3):
        client = got["clients"][pid(p)]
        assert len(client["active"]) + len(client["standby"]) == 6
    assert got["probing_rebalance"] is False


def test_sticky_for_active_and_standby_while_warming_up() -> None:
    # Client 1 ran everything (lag 0), client 2 kept standbys 10 behind, client 3 has nothing;
    # acceptable lag 11: clients 1 and 2 keep all nine tasks each, client 3 gets two warm-ups.
    tasks = names(3, 0) + names(3, 1) + names(3, 2)
    doc = scenario({0: (3, True), 1: (3, True), 2: (3, True)},
                   {pid(1): caught_up(1, tasks), pid(2): caught_up(2, tasks, lag=10), pid(3): {"c3-t0": {}}},
                   end_offset_sums=ends(tasks), acceptable_recovery_lag=11, max_warmup_replicas=2,
                   num_standby_replicas=1)
    got = assign_streams_classic("high-availability", doc)
    sizes = {p: len(got["clients"][pid(p)]["active"]) + len(got["clients"][pid(p)]["standby"]) for p in (1, 2, 3)}
    assert sizes == {1: 9, 2: 9, 3: 2}
    assert got["probing_rebalance"] is True


def test_previous_assignment_reused_needs_no_probing() -> None:
    # The stateful tasks are dealt round robin: 0_0, 0_2 to client 1 and 0_1, 0_3 to client 2,
    # just where each is caught up, so nothing moves.
    doc = scenario({0: (4, True)}, {pid(1): caught_up(1, ["0_0", "0_2"]), pid(2): caught_up(2, ["0_1", "0_3"])},
                   end_offset_sums=ends(names(4)), acceptable_recovery_lag=100)
    got = assign_streams_classic("high-availability", doc)
    assert got["clients"][pid(1)] == {"active": ["0_0", "0_2"], "standby": []}
    assert got["clients"][pid(2)] == {"active": ["0_1", "0_3"], "standby": []}
    assert got["probing_rebalance"] is False


def test_tasks_dealt_elsewhere_move_back_through_warmups() -> None:
    # The deal disagrees with where the state is: 0_2 and 0_3 move back to their caught-up
    # clients, and the clients they were dealt to keep warm-ups, so a probing rebalance follows.
    doc = scenario({0: (4, True)}, {pid(1): caught_up(1, ["0_0", "0_3"]), pid(2): caught_up(2, ["0_1", "0_2"])},
                   end_offset_sums=ends(names(4)), acceptable_recovery_lag=100)
    got = assign_streams_classic("high-availability", doc)
    assert got["clients"][pid(1)] == {"active": ["0_0", "0_3"], "standby": ["0_2"]}
    assert got["clients"][pid(2)] == {"active": ["0_1", "0_2"], "standby": ["0_3"]}
    assert got["probing_rebalance"] is True


def test_stateless_tasks_balance_the_total_load() -> None:
    # Only client 1 is caught up on the stateful tasks, so it keeps them all and client 2 gets
    # warm-ups and all the stateless tasks.
    stateful = names(4)
    doc = scenario({0: (4, True), 1: (3, False)}, {pid(1): caught_up(1, stateful), pid(2): {"c2-t0": {}}},
                   end_offset_sums=ends(stateful), acceptable_recovery_lag=100, num_standby_replicas=1)
    got = assign_streams_classic("high-availability", doc)
    assert got["clients"][pid(1)]["active"] == stateful
    assert got["clients"][pid(2)]["active"] == ["1_0", "1_1", "1_2"]
    assert got["probing_rebalance"] is True


def test_the_docstring_example() -> None:
    doc = scenario({0: (2, True)}, {pid(1): {"a": {"0_0": -2, "0_1": -2}}, pid(2): {"b": {}}},
                   end_offset_sums={"0_0": 100, "0_1": 100}, acceptable_recovery_lag=10)
    got = assign_streams_classic("high-availability", doc)
    assert got["clients"] == {pid(1): {"active": ["0_0", "0_1"], "standby": []},
                              pid(2): {"active": [], "standby": ["0_1"]}}
    assert got["probing_rebalance"] is True
    # B catches up on 0_1: the next rebalance leaves 0_1 with B, no probing needed
    doc["clients"][pid(1)]["consumers"]["a"]["offset_sums"] = {"0_0": -2, "0_1": -2}
    doc["clients"][pid(2)]["consumers"]["b"]["offset_sums"] = {"0_1": 95}
    got = assign_streams_classic("high-availability", doc)
    assert got["clients"][pid(1)] == {"active": ["0_0"], "standby": []}
    assert got["clients"][pid(2)] == {"active": ["0_1"], "standby": []}
    assert got["probing_rebalance"] is False


def test_clients_in_signed_uuid_order() -> None:
    # 8000...-... has its top bit set: a negative most significant long sorts first in Java
    high, low = "80000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000001"
    doc = scenario({0: (2, False)}, {low: {"x": {}}, high: {"y": {}}})
    got = assign_streams_classic("high-availability", doc)
    assert list(got["clients"]) == [high, low]
    assert got["clients"][high]["active"] == ["0_0"]  # dealt first


# --- facts from Kafka's StreamsPartitionAssignorTest (the split over threads) --------------------

# Tasks 0_0..0_3, 1_0..1_3 as indexes 0..7 (TaskId order); consumers c1, c2, c3, c4 as 0..3.
PREVIOUS = {0: [0, 5, 7], 1: [3, 4], 2: [1, 2, 6]}


def test_threads_keep_their_tasks_when_nothing_changes() -> None:
    got = assign_tasks_to_threads(list(range(8)), True, [0, 1, 2], PREVIOUS, {})
    assert {c: set(ts) for c, ts in got.items()} == {c: set(ts) for c, ts in PREVIOUS.items()}


def test_new_task_goes_to_the_thread_below_its_share() -> None:
    got = assign_tasks_to_threads(list(range(9)), True, [0, 1, 2], PREVIOUS, {})
    assert {c: set(ts) for c, ts in got.items()} == {0: {0, 5, 7}, 1: {3, 4, 8}, 2: {1, 2, 6}}


def test_threads_stay_sticky_when_a_thread_joins() -> None:
    got = assign_tasks_to_threads(list(range(8)), True, [0, 1, 2, 3], {**PREVIOUS, 3: []}, {})
    assert all(len(ts) == 2 for ts in got.values())
    assert set(got[0]) <= set(PREVIOUS[0]) and set(got[2]) <= set(PREVIOUS[2])
    assert set(got[1]) == set(PREVIOUS[1])


def test_new_tasks_interleave_by_subtopology() -> None:
    # 0_0..0_3, 1_0..1_2, 2_0, 2_1 as 0..8, given shuffled; no thread held anything before
    tasks = list(range(9))
    random.Random(4).shuffle(tasks)
    got = assign_tasks_to_threads(tasks, True, [0, 1, 2], {}, {})
    assert got == {0: [0, 3, 6], 1: [1, 4, 7], 2: [2, 5, 8]}


def test_leftovers_follow_the_priority_queue_array() -> None:
    # 5 stateless tasks over 2 threads: min 2, so thread 0 gets 0, 2 and thread 1 gets 1, 3 round
    # robin; task 4 is left and goes to the first thread at min.
    got = assign_tasks_to_threads([4, 3, 2, 1, 0], False, [0, 1], {}, {})
    assert got == {0: [0, 2, 4], 1: [1, 3]}


def test_java_priority_queue_iterates_its_heap_array() -> None:
    queue = JavaPriorityQueue(lambda x: x)
    for x in (5, 3, 4):
        queue.offer(x)
    assert list(queue) == [3, 5, 4]
    # a weight changed while queued: Java's array (checked against java.util.PriorityQueue, JDK 17)
    weight = {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0}
    queue = JavaPriorityQueue(lambda c: (weight[c], c), [1, 2, 3, 4])
    weight[1] = 5.0
    queue.remove(3)  # 4 fills the hole and climbs above the now heavier 1
    assert list(queue) == [4, 2, 1]
    assert [queue.poll() for _ in range(3)] == [4, 2, 1]  # not sorted: the heap is stale


# --- client tags ----------------------------------------------------------------------------------


def test_standbys_go_to_another_zone() -> None:
    zones = {pid(1): "a", pid(2): "a", pid(3): "b", pid(4): "b"}
    clients = {p: {"client_tags": {"zone": z}, "consumers": {f"m{p[-1]}": {}}} for p, z in zones.items()}
    doc = scenario({0: (8, True)}, clients, num_standby_replicas=1, rack_aware_assignment_tags=["zone"])
    got = assign_streams_classic("high-availability", doc)
    home = {t: p for p, c in got["clients"].items() for t in c["active"]}
    for p, client in got["clients"].items():
        for task in client["standby"]:
            assert zones[home[task]] != zones[p]


def test_docstring_example_of_client_tags() -> None:
    zones = {pid(1): "a", pid(2): "a", pid(3): "b"}
    clients = {p: {"client_tags": {"zone": z}, "consumers": {f"m{p[-1]}": {}}} for p, z in zones.items()}
    doc = scenario({0: (3, True)}, clients, num_standby_replicas=1, rack_aware_assignment_tags=["zone"])
    got = assign_streams_classic("high-availability", doc)
    assert got["clients"] == {
        pid(1): {"active": ["0_0"], "standby": ["0_2"]},
        pid(2): {"active": ["0_1"], "standby": []},
        pid(3): {"active": ["0_2"], "standby": ["0_0", "0_1"]},
    }


# --- invariants -----------------------------------------------------------------------------------


@st.composite
def scenarios(draw) -> dict:
    subs = draw(st.dictionaries(st.integers(0, 6), st.tuples(st.integers(1, 6), st.booleans()), min_size=1, max_size=4))
    stateful = [f"{s}_{p}" for s, (n, flag) in subs.items() if flag for p in range(n)]
    every = [f"{s}_{p}" for s, (n, _) in subs.items() for p in range(n)]
    n_clients = draw(st.integers(1, 6))
    uuids = draw(st.lists(st.uuids(), min_size=n_clients, max_size=n_clients, unique=True))
    end_offsets = {t: draw(st.integers(0, 2_000)) for t in stateful}
    clients = {}
    for ci, u in enumerate(uuids):
        consumers = {}
        for ti in range(draw(st.integers(1, 4))):
            reported = draw(st.lists(st.sampled_from(stateful), unique=True, max_size=6)) if stateful else []
            sums = {t: draw(st.sampled_from([-2, 0, end_offsets[t], max(0, end_offsets[t] - 50), end_offsets[t] + 7]))
                    for t in reported}
            owned = draw(st.lists(st.sampled_from(every), unique=True, max_size=3))
            consumers[f"app-{u}-StreamThread-{ti}-consumer-{ci}"] = {"owned": owned, "offset_sums": sums}
        # one consumer per client reports a task, so merging order never decides a sum
        seen: set[str] = set()
        for spec in consumers.values():
            spec["offset_sums"] = {t: v for t, v in spec["offset_sums"].items() if t not in seen}
            seen |= set(spec["offset_sums"])
        clients[str(u)] = {"consumers": consumers}
    tags = draw(st.booleans())
    if tags:  # client-tag-aware standbys: every client carries the tag keys named
        for spec in clients.values():
            spec["client_tags"] = {"zone": draw(st.sampled_from("abc")), "rack": draw(st.sampled_from("xy"))}
    return {
        "rack_aware_assignment_tags": draw(st.sampled_from([["zone"], ["zone", "rack"]])) if tags else [],
        "subtopologies": {str(s): {"partitions": n, "stateful": flag} for s, (n, flag) in subs.items()},
        "end_offset_sums": end_offsets,
        "clients": clients,
        "num_standby_replicas": draw(st.integers(0, 3)),
        "max_warmup_replicas": draw(st.integers(1, 3)),
        "acceptable_recovery_lag": draw(st.sampled_from([0, 10, 100, 1000, LONG_MAX])),
    }


@pytest.mark.parametrize("version", ["4.4", "3.2", "3.1", "3.0"])
@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_invariants(version: str, doc: dict) -> None:
    if doc["rack_aware_assignment_tags"] and version in ("3.0", "3.1"):
        with pytest.raises(KassignError, match="came with 3.2"):
            assign_streams_classic("high-availability", doc, kafka_version=version)
        return
    got = assign_streams_classic("high-availability", doc, kafka_version=version)
    stateful = {f"{s}_{p}" for s, spec in doc["subtopologies"].items() if spec["stateful"]
                for p in range(spec["partitions"])}
    every = {f"{s}_{p}" for s, spec in doc["subtopologies"].items() for p in range(spec["partitions"])}
    clients = got["clients"]
    assert set(clients) == set(doc["clients"])

    actives = [t for c in clients.values() for t in c["active"]]
    assert sorted(actives) == sorted(every)  # every task has exactly one active client
    standby_count = {t: 0 for t in stateful}
    for client in clients.values():
        assert not set(client["active"]) & set(client["standby"])  # no standby beside its active
        assert set(client["standby"]) <= stateful  # standbys and warm-ups only for stateful tasks
        assert len(set(client["standby"])) == len(client["standby"])
        for task in client["standby"]:
            standby_count[task] += 1
    # copies beyond num_standby_replicas are warm-ups: at most max_warmup_replicas of them at once
    extra = sum(max(0, n - doc["num_standby_replicas"]) for n in standby_count.values())
    assert extra <= doc["max_warmup_replicas"]
    if extra:
        assert got["probing_rebalance"]  # a warm-up is always followed by a probing rebalance
    # (not conversely: a movement that swaps an active with a caught-up standby, or one made after
    # the warm-ups ran out, asks for probing without a new copy; 30 of Kafka's 300 lines do)
    if doc["acceptable_recovery_lag"] == LONG_MAX:
        assert not got["probing_rebalance"]  # everyone is caught up: nothing to move
    if not got["probing_rebalance"]:
        assert extra == 0

    # the consumers split exactly their client's tasks
    for process, spec in doc["clients"].items():
        members = got["consumers"]
        mine = [members[m] for m in spec["consumers"]]
        assert sorted(t for m in mine for t in m["active"]) == clients[process]["active"]
        assert sorted(t for m in mine for t in m["standby"]) == clients[process]["standby"]
    assert list(got["consumers"]) == sorted(got["consumers"])


@settings(max_examples=100, deadline=None)
@given(scenarios())
def test_releases_3_3_to_4_4_answer_alike(doc: dict) -> None:
    """Without rack-aware assignment every release from 3.3 to 4.4 runs the same steps."""
    answer = assign_streams_classic("high-availability", doc)
    for version in ("3.3", "3.5.1", "3.7.0", "3.9", "4.3"):
        assert assign_streams_classic("high-availability", doc, kafka_version=version) == answer


@settings(max_examples=120, deadline=None)
@given(scenarios(), st.randoms(use_true_random=False))
def test_deterministic_and_independent_of_listing_order(doc: dict, rnd) -> None:
    first = assign_streams_classic("high-availability", doc)
    assert assign_streams_classic("high-availability", copy.deepcopy(doc)) == first
    shuffled = copy.deepcopy(doc)
    items = list(shuffled["clients"].items())
    rnd.shuffle(items)
    for _, spec in items:
        consumers = list(spec["consumers"].items())
        rnd.shuffle(consumers)
        spec["consumers"] = dict(consumers)
    shuffled["clients"] = dict(items)
    again = assign_streams_classic("high-availability", shuffled)
    assert again["clients"] == first["clients"] and again["consumers"] == first["consumers"]
    assert again["probing_rebalance"] == first["probing_rebalance"]
    assert json.dumps(again) == json.dumps(first)  # same order too


# --- bad input ------------------------------------------------------------------------------------

GOOD = scenario({0: (2, True), 1: (1, False)}, {pid(1): {"m1": {"0_0": -2}}, pid(2): {"m2": {}}},
                end_offset_sums={"0_0": 10, "0_1": 20})


def broken(change) -> dict:
    doc = copy.deepcopy(GOOD)
    change(doc)
    return doc


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["clients"][pid(1)]["consumers"]["m1"].update(owned=["7_0"]), "subtopology 7"),
    (lambda d: d["clients"][pid(1)]["consumers"]["m1"].update(owned=["0_2"]), "does not exist"),
    (lambda d: d["clients"][pid(1)]["consumers"]["m1"].update(owned=["0-1"]), "is not a task"),
    (lambda d: d["clients"][pid(1)]["consumers"]["m1"].update(offset_sums={"0_1": -3}), "offset sum of 0_1"),
    (lambda d: d["clients"][pid(1)]["consumers"]["m1"].update(offset_sums={"0_1": 1.5}), "whole number"),
    (lambda d: d["clients"][pid(1)]["consumers"]["m1"].update(offset_sums={"0_1": True}), "whole number"),
    (lambda d: d["clients"][pid(2)]["consumers"].update(m1={}), "listed under clients"),
    (lambda d: d["clients"].update({"not-a-uuid": {"consumers": {"x": {}}}}), "process UUID"),
    (lambda d: d["clients"].update({"abcdef00-0000-0000-0000-000000000000": {"consumers": {"x": {}}},
                                    "ABCDEF00-0000-0000-0000-000000000000": {"consumers": {"y": {}}}}),
     "same process UUID"),
    (lambda d: d["clients"][pid(2)].update(consumers={}), "has no consumers"),
    (lambda d: d.update(clients={}), "at least one client"),
    (lambda d: d["end_offset_sums"].update({"1_0": 5}), "stateless"),
    (lambda d: d["end_offset_sums"].update({"0_0": -1}), "end_offset_sums: 0_0"),
    (lambda d: d.update(num_standby_replicas=-1), "num_standby_replicas"),
    (lambda d: d.update(max_warmup_replicas=0), "max_warmup_replicas"),
    (lambda d: d.update(acceptable_recovery_lag=2**63), "acceptable_recovery_lag"),
    (lambda d: d.update(probing_rebalance_interval_ms=59_999), "probing_rebalance_interval_ms"),
    (lambda d: d.update(rack_aware_assignment_tags=["zone"]), "no such client tag"),
    (lambda d: d["clients"][pid(1)].update(client_tags={"k" * 21: "v"}), "longer than 20"),
    (lambda d: d["subtopologies"].update({"01": {"partitions": 1}}), "leading zeros"),
    (lambda d: d["subtopologies"]["0"].update(partitions=0), "partitions"),
    (lambda d: d["subtopologies"]["0"].update(stateful="yes"), "true or false"),
    (lambda d: d.update(topics={}), "unknown field"),
    (lambda d: d["clients"][pid(1)]["consumers"]["m1"].update(racks="r"), "unknown field"),
    (lambda d: d.pop("clients"), 'missing "clients"'),
])
def test_bad_input(change, message) -> None:
    with pytest.raises(ScenarioError, match=message) as err:
        assign_streams_classic("high-availability", broken(change))
    assert "\n" not in str(err.value)


def test_unknown_strategy_names_the_choices() -> None:
    with pytest.raises(UnknownAssignorError, match="high-availability"):
        assign_streams_classic("balanced", GOOD)


@pytest.mark.parametrize("version", ["2.8", "4.5", "5.0", "4", "latest", 4.3])
def test_kafka_versions_outside_3_0_to_4_4_are_refused(version) -> None:
    with pytest.raises(KassignError, match="kafka_version") as err:
        assign_streams_classic("high-availability", GOOD, kafka_version=version)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("version", ["3.3", "3.4.0", "3.9.2", "4.0", "4.1.1", "4.3", "4.4"])
def test_every_release_from_3_3_answers_alike_here(version) -> None:
    assert assign_streams_classic("high-availability", GOOD, kafka_version=version) == \
        assign_streams_classic("high-availability", GOOD)


def test_kafka_tolerances_are_kept() -> None:
    # An offset sum above the end offset sum counts as no state (Kafka logs a corrupt task); a task
    # owned twice is accepted (Kafka logs it); offset sums of stateless tasks change nothing.
    doc = broken(lambda d: d["clients"][pid(2)]["consumers"]["m2"].update(owned=["0_0"], offset_sums={"0_1": 999}))
    same = broken(lambda d: None)
    assert assign_streams_classic("high-availability", doc) == assign_streams_classic("high-availability", same)
    doc = broken(lambda d: d["clients"][pid(2)]["consumers"]["m2"].update(offset_sums={"1_0": 5}))
    assert assign_streams_classic("high-availability", doc) == assign_streams_classic("high-availability", same)


def test_the_threads_docstring_example() -> None:
    # C2 reported state for 0_2 (lag 5) and 0_0 (lag 50): it keeps 0_2, and 0_0 goes to C1 with 0_1
    got = assign_tasks_to_threads([0, 1, 2], True, [0, 1], {1: [2, 0]}, {})
    assert got == {0: [0, 1], 1: [2]}


def test_hash_set_of_tasks_with_a_tree_bin() -> None:
    # s_p and (s+1)_(p-31) share TaskId's hash code: ten tasks in one bucket of a 128-bucket table
    # make a tree bin, ordered by compareTo, its root first (java.util.HashSet, JDK 17)
    tasks = sorted([(s, 279 - 31 * s) for s in range(10)] + [(20, p) for p in range(45)])
    hashes = [task_hash(s, p) for s, p in tasks]
    order = [f"{s}_{p}" for s, p in (tasks[i] for i in hash_set_order(hashes, list(range(len(tasks)))))]
    assert " ".join(order) == (
        "20_17 20_13 20_42 20_9 20_38 20_5 20_34 20_1 20_30 20_26 20_22 20_18 20_14 3_186 0_279 1_248 2_217 "
        "4_155 5_124 6_93 7_62 8_31 9_0 20_43 20_10 20_39 20_6 20_35 20_2 20_31 20_27 20_23 20_19 20_15 20_44 "
        "20_11 20_40 20_7 20_36 20_3 20_32 20_28 20_24 20_20 20_16 20_12 20_41 20_8 20_37 20_4 20_33 20_0 "
        "20_29 20_25 20_21")
    # without crowding, the fast path: buckets in order, insertion order within one
    assert hash_set_order([20, 3], ["a", "b"]) == ["b", "a"]
    assert hash_set_order([17, 1, 33], ["x", "y", "z"]) == ["x", "y", "z"]


@settings(max_examples=100, deadline=None)
@given(stateful=st.lists(st.integers(0, 60), unique=True, max_size=20),
       standby=st.lists(st.integers(61, 90), unique=True, max_size=10),
       stateless=st.lists(st.integers(91, 120), unique=True, max_size=20),
       reported=st.lists(st.integers(0, 90), unique=True, max_size=15))
def test_one_thread_takes_its_client_s_tasks_whole(stateful: list[int], standby: list[int], stateless: list[int],
                                                   reported: list[int]) -> None:
    """Why the split may skip a client of one stream thread: the three passes give it every task,
    whatever their order and whatever it reported, and never fail."""
    load: dict[int, int] = {}
    got = [assign_tasks_to_threads(tasks, kind != "stateless", [0], {0: reported}, load)[0]
           for kind, tasks in (("stateful", stateful), ("standby", standby), ("stateless", stateless))]
    assert [sorted(g) for g in got] == [sorted(stateful), sorted(standby), sorted(stateless)]
