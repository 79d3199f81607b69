"""The classic assignors as each Kafka 3.x release runs them: every line of ``kafka-3.x/RELEASE/`` asked as that
release and as the releases its README says answer alike, 3.4.1 between 3.4.0 and 3.5, and the release reaching
every place the classic assignors run."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kassign
from kassign.core.errors import KafkaAssignorError, KassignError, UnknownAssignorError
from kassign.groups.classic.assignors import (
    ConsumerPartitionAssignor,
    answers_per_release,
    get_assignor,
    takes_kafka_version,
)
from kassign.groups.classic.assignors.cooperative_sticky import CooperativeStickyAssignor
from kassign.groups.classic.assignors.eager_sticky import StickyAssignor
from kassign.groups.classic.assignors.range import RangeAssignor
from kassign.groups.classic.assignors.roundrobin import RoundRobinAssignor
from tests.conftest import load_vectors, vector_params

STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")

# each folder's release, and the releases its README names as answering every line alike
# (a release without a patch number is its line's newest patch)
SIBLINGS = {
    "3.9.2": ("3.9.0", "3.9", "4.0.0", "4.3.1", "4.4"),
    "3.8.1": ("3.8.0", "3.8"),
    "3.7.2": ("3.7.1", "3.7"),
    "3.6.2": ("3.5.0", "3.5.2", "3.6.0", "3.6", "3.7.0"),
    "3.5.1": ("3.5.0", "3.5", "3.6.2", "3.7.0"),
    "3.4.0": ("3.0.0", "3.1", "3.2", "3.3.2"),
    "3.0.2": ("3.0.0", "3.3", "3.4.0"),
}


def _sorted(assignment: dict) -> dict:
    return {m: sorted(tuple(tp) for tp in parts) for m, parts in assignment.items()}


def _same_subscriptions(scenario: dict) -> bool:
    return len({frozenset(spec["topics"]) for spec in scenario["members"].values()}) == 1


def _spread(assignment: dict, members) -> int:
    counts = [len(assignment.get(m, [])) for m in members]
    return max(counts) - min(counts)


def _moved(assignment: dict, scenario: dict) -> int:
    previous = {tuple(tp): m for m, spec in scenario["members"].items() for tp in spec.get("owned", [])}
    return sum(1 for m, parts in assignment.items() for tp in parts if previous.get(tuple(tp), m) != m)


def _handed_over(assignment: dict, scenario: dict) -> list:
    previous = {tuple(tp): m for m, spec in scenario["members"].items() for tp in spec.get("owned", [])}
    return [(tuple(tp), m) for m, parts in assignment.items() for tp in parts if previous.get(tuple(tp), m) != m]


def check_line(line: dict, release: str) -> None:
    """One vector line asked as ``release``: what its kind of line promises."""
    strategy, scenario = line["strategy"], line["scenario"]
    if "expected_error" in line:
        with pytest.raises(KafkaAssignorError) as caught:
            kassign.assign(strategy, scenario, kafka_version=release)
        exception, _, message = line["expected_error"].partition(": ")
        assert caught.value.kafka_exception == exception
        assert message in str(caught.value) and f"Kafka {release}" in str(caught.value)
        assert "\n" not in str(caught.value)
        return
    got = kassign.assign(strategy, scenario, kafka_version=release)
    if "expected" in line:
        assert _sorted(got) == _sorted(line["expected"])
        return
    kafka = line["kafka_result"]
    if _same_subscriptions(scenario):  # Kafka's constrained path: kassign's answer is Kafka's
        assert _sorted(got) == _sorted(kafka)
        return
    owners = Counter(tuple(tp) for parts in got.values() for tp in parts)
    assert all(n == 1 for n in owners.values())
    for member, parts in got.items():
        assert {t for t, _ in parts} <= set(scenario["members"][member]["topics"])
    if strategy == "cooperative-sticky":  # a round withholds what changes owner
        assert _handed_over(got, scenario) == []
        return
    members = scenario["members"]
    ours, theirs = _spread(got, members), _spread(kafka, members)
    assert ours <= theirs
    if ours == theirs:
        assert _moved(got, scenario) <= _moved(kafka, scenario)


def _folder_params():
    params = []
    for folder in SIBLINGS:
        for strategy in STRATEGIES:
            for param in vector_params(f"kafka-3.x/{folder}/assign-{strategy}.jsonl"):
                line = param.values[0]
                params.append(pytest.param(folder, line, id=f"{folder}-{strategy}-{param.id}", marks=param.marks))
    return params


@pytest.mark.parametrize("folder, line", _folder_params())
def test_every_line_as_its_release_and_the_releases_that_answer_alike(folder: str, line: dict) -> None:
    for release in (folder, *SIBLINGS[folder]):
        check_line(line, release)


# -- where the folders differ, and why -------------------------------------------------------------

def _counts_differing(folder: str, strategy: str, release: str) -> int:
    """Lines of one folder (every member subscribing alike) where ``release``'s answer is not the folder's."""
    lines = [ln for ln in load_vectors(f"kafka-3.x/{folder}/assign-{strategy}.jsonl")
             if _same_subscriptions(ln["scenario"]) and "expected_error" not in ln]
    differ = 0
    for line in lines:
        try:
            got = _sorted(kassign.assign(strategy, line["scenario"], kafka_version=release))
        except KafkaAssignorError:
            differ += 1
            continue
        differ += got != _sorted(line.get("expected", line.get("kafka_result")))
    return differ


@pytest.mark.parametrize("folder, release, strategy", [
    ("3.4.0", "3.9.2", "range"), ("3.4.0", "3.9.2", "sticky"), ("3.4.0", "3.9.2", "cooperative-sticky"),
    ("3.6.2", "3.9.2", "sticky"), ("3.6.2", "3.9.2", "cooperative-sticky"),
    ("3.9.2", "3.6.2", "sticky"), ("3.9.2", "3.4.0", "cooperative-sticky"),
])
def test_the_rules_that_changed_show_on_the_folders(folder: str, release: str, strategy: str) -> None:
    # the releases do differ on these files: asked as another release, kassign misses some lines
    assert _counts_differing(folder, strategy, release) > 0


def test_roundrobin_never_changed() -> None:
    for folder in SIBLINGS:
        for line in load_vectors(f"kafka-3.x/{folder}/assign-roundrobin.jsonl")[:60]:
            answers = {json.dumps(_sorted(kassign.assign("roundrobin", line["scenario"], kafka_version=v)))
                       for v in ("3.0.0", "3.4.0", "3.6.2", "3.9.2", "4.4")}
            assert len(answers) == 1


@pytest.mark.parametrize("name", ["assign-range.jsonl", "assign-roundrobin.jsonl", "assign-sticky.jsonl",
                                  "assign-cooperative-sticky.jsonl"])
def test_the_4x_files_stay_exact_at_every_4x_release(name: str) -> None:
    lines = [ln for ln in load_vectors(name) if "expected" in ln]
    for release in ("4.0.0", "4.2", "4.4"):
        for line in lines[::4]:
            got = kassign.assign(line["strategy"], line["scenario"], kafka_version=release)
            assert _sorted(got) == _sorted(line["expected"])


# -- 3.4.1: 3.4.0 where racks matter, 3.5 elsewhere (KAFKA-14639 backported) ------------------------------

def _without_rack_lines(folder: str, strategy: str) -> list:
    return [ln for ln in load_vectors(f"kafka-3.x/{folder}/assign-{strategy}.jsonl")
            if "partition_racks" not in ln["scenario"] and (strategy == "range" or _same_subscriptions(ln["scenario"]))]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_341_answers_the_35_lines_without_racks(strategy: str) -> None:
    lines = _without_rack_lines("3.5.1", strategy)
    assert len(lines) > 50
    for line in lines:
        want = line.get("expected", line.get("kafka_result"))
        assert _sorted(kassign.assign(strategy, line["scenario"], kafka_version="3.4.1")) == _sorted(want)


def _one_generation(scenario: dict) -> bool:
    """Every member that owned something owned it in one generation, and nothing twice: KAFKA-14639 then
    changes nothing."""
    generations = {spec.get("generation") for spec in scenario["members"].values() if spec.get("owned")}
    claimed = Counter(tuple(tp) for spec in scenario["members"].values() for tp in spec.get("owned", []))
    return len(generations) <= 1 and all(n == 1 for n in claimed.values())


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_341_answers_the_340_lines_with_racks(strategy: str) -> None:
    lines = [ln for ln in load_vectors(f"kafka-3.x/3.4.0/assign-{strategy}.jsonl")
             if "partition_racks" in ln["scenario"] and _one_generation(ln["scenario"])
             and (strategy == "range" or _same_subscriptions(ln["scenario"]))]
    assert len(lines) >= 20
    for line in lines:
        want = line.get("expected", line.get("kafka_result"))
        assert _sorted(kassign.assign(strategy, line["scenario"], kafka_version="3.4.1")) == _sorted(want)
        # the same groups as 3.5.1 asks them are rack-aware: some answers differ there
    racked = [ln for ln in load_vectors("kafka-3.x/3.5.1/assign-range.jsonl") if "partition_racks" in ln["scenario"]]
    assert sum(_sorted(kassign.assign("range", ln["scenario"], kafka_version="3.4.1")) != _sorted(ln["expected"])
               for ln in racked) > 0


def test_341_matches_neither_folder() -> None:
    assert _counts_differing("3.4.0", "sticky", "3.4.1") > 0
    assert _counts_differing("3.4.0", "cooperative-sticky", "3.4.1") > 0
    assert _counts_differing("3.5.1", "cooperative-sticky", "3.4.1") > 0  # the rack lines


# -- each rule on its own ------------------------------------------------------------------------------

def test_before_kafka_14639_only_the_newest_generation_keeps_its_claims() -> None:
    # A owned t-0..t-2 in generation 3, B owned t-3 in generation 2 and nobody else claims it: 3.4.0 drops
    # all of B's claim (B is not of the newest generation), so t-3 goes to the round robin; 3.4.1 keeps it
    group = {"topics": {"t": 6}, "members": {
        "A": {"topics": ["t"], "owned": [["t", 0], ["t", 1], ["t", 2]], "generation": 3},
        "B": {"topics": ["t"], "owned": [["t", 3]], "generation": 2},
        "C": {"topics": ["t"]}}}
    old = kassign.assign("sticky", group, kafka_version="3.4.0")
    new = kassign.assign("sticky", group, kafka_version="3.4.1")
    assert old == {"A": [("t", 0), ("t", 1)], "B": [("t", 2), ("t", 4)], "C": [("t", 3), ("t", 5)]}
    assert new == {"A": [("t", 0), ("t", 1)], "B": [("t", 2), ("t", 3)], "C": [("t", 4), ("t", 5)]}
    assert kassign.assign("sticky", group, kafka_version="3.4") == new  # "3.4" is the 3.4 line's newest patch


def test_before_kafka_16277_a_member_keeps_what_it_listed_first() -> None:
    group = {"topics": {"t0": 2, "t1": 2}, "members": {
        "A": {"topics": ["t0", "t1"], "owned": [["t1", 1], ["t0", 1], ["t0", 0], ["t1", 0]], "generation": 5},
        "B": {"topics": ["t0", "t1"], "generation": 5}}}
    for release in ("3.0.0", "3.4.0", "3.4.1", "3.6.2", "3.7.0"):
        got = kassign.assign("cooperative-sticky", group, kafka_version=release)
        assert got == {"A": [("t0", 1), ("t1", 1)], "B": []}  # t0-0 and t1-0 are being revoked
    for release in ("3.7.1", "3.9", "4.4"):
        got = kassign.assign("cooperative-sticky", group, kafka_version=release)
        assert got == {"A": [("t0", 0), ("t1", 0)], "B": []}


def test_before_kafka_15106_two_members_can_hold_one_partition() -> None:
    # A (generation 5) holds t-3; B (generation 3) claims it too and loses; C (generation 4) is weighed against
    # B, not A, so to 3.5.1 both A and C hold t-3 and both keep it: Kafka's answer is broken, kassign says so
    group = {"topics": {"t": 4}, "members": {
        "A": {"topics": ["t"], "owned": [["t", 3], ["t", 0]], "generation": 5},
        "B": {"topics": ["t"], "owned": [["t", 3]], "generation": 3},
        "C": {"topics": ["t"], "owned": [["t", 3]], "generation": 4},
        "D": {"topics": ["t"]}}}
    for release in ("3.4.1", "3.5.0", "3.5.1"):
        with pytest.raises(KassignError, match=r"keeps partition t-3 for both A and C") as caught:
            kassign.assign("sticky", group, kafka_version=release)
        assert not isinstance(caught.value, KafkaAssignorError)  # Kafka throws nothing: it answers wrongly
    # (Kafka 3.4.1 and 3.5.1 answer A: t-3, B: t-0 t-2, C: t-3, D: t-1)
    for release in ("3.5.2", "3.6.0", "3.7.0"):  # C is weighed against A and loses
        assert kassign.assign("sticky", group, kafka_version=release) == \
            {"A": [("t", 3)], "B": [("t", 0)], "C": [("t", 1)], "D": [("t", 2)]}
    # from 3.7.1 A keeps its lowest partition (KAFKA-16277)
    assert kassign.assign("sticky", group) == {"A": [("t", 0)], "B": [("t", 1)], "C": [("t", 2)], "D": [("t", 3)]}
    # 3.4.0 counts only A's claims (the newest generation): A keeps the first it listed, t-3
    assert kassign.assign("sticky", group, kafka_version="3.4.0") == \
        {"A": [("t", 3)], "B": [("t", 0)], "C": [("t", 1)], "D": [("t", 2)]}


def test_before_kafka_15170_the_rack_round_robin_can_fail_as_kafka_does() -> None:
    line = next(ln for ln in load_vectors("kafka-3.x/3.6.2/assign-cooperative-sticky.jsonl") if "expected_error" in ln)
    for release in ("3.5.0", "3.6.2", "3.7.0"):
        with pytest.raises(KafkaAssignorError, match="KAFKA-15170") as caught:
            kassign.assign("cooperative-sticky", line["scenario"], kafka_version=release)
        assert caught.value.kafka_exception == "IllegalStateException"
    assert kassign.assign("cooperative-sticky", line["scenario"], kafka_version="3.7.1")
    # before 3.5.0 racks count for nothing: no rack round robin, nothing to fail
    assert kassign.assign("cooperative-sticky", line["scenario"], kafka_version="3.4.0")


RACK_GROUP = {"topics": {"t": 4}, "partition_racks": {"t": [["r0"], ["r1"], ["r0"], ["r1"]]},
              "members": {"A": {"topics": ["t"], "rack": "r1"}, "B": {"topics": ["t"], "rack": "r0"}}}


@pytest.mark.parametrize("strategy", ["range", "sticky", "cooperative-sticky"])
def test_racks_count_from_350(strategy: str) -> None:
    plain = {**RACK_GROUP, "members": {m: {"topics": ["t"]} for m in RACK_GROUP["members"]}}
    aware = {"A": [("t", 1), ("t", 3)], "B": [("t", 0), ("t", 2)]}
    for release in ("3.0.0", "3.3", "3.4.0", "3.4.1"):
        assert kassign.assign(strategy, RACK_GROUP, kafka_version=release) == \
            kassign.assign(strategy, plain, kafka_version=release) != aware
    for release in ("3.5.0", "3.6.2", "3.7.0", "3.9", "4.4"):
        assert kassign.assign(strategy, RACK_GROUP, kafka_version=release) == aware


GROUPS = st.fixed_dictionaries({
    "topics": st.dictionaries(st.sampled_from(["t0", "t1", "t2"]), st.integers(1, 7), min_size=1),
    "members": st.integers(1, 5),
    "racks": st.booleans(),
    "seed": st.integers(0, 10**6),
})


def _fresh(spec: dict) -> dict:
    import random

    rng = random.Random(spec["seed"])
    topics = spec["topics"]
    scenario: dict = {"topics": topics, "members": {
        f"m{rng.randint(0, 999)}-{i}": {"topics": list(topics), **({"rack": rng.choice("ab")} if spec["racks"] else {})}
        for i in range(spec["members"])}}
    if spec["racks"]:
        scenario["partition_racks"] = {t: [[rng.choice("ab")] for _ in range(n)] for t, n in topics.items()}
    return scenario


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GROUPS)
def test_a_new_group_without_racks_is_assigned_alike_in_every_release(spec: dict) -> None:
    scenario = _fresh({**spec, "racks": False})
    for strategy in ("sticky", "cooperative-sticky", "range"):
        answers = {json.dumps(kassign.assign(strategy, scenario, kafka_version=v))
                   for v in ("3.0.0", "3.4.0", "3.4.1", "3.6.2", "3.7.1", "4.4")}
        assert len(answers) == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GROUPS)
def test_before_350_racks_change_nothing(spec: dict) -> None:
    scenario = _fresh({**spec, "racks": True})
    plain = {"topics": scenario["topics"], "members": {m: {"topics": s["topics"]} for m, s in scenario["members"].items()}}
    for strategy in ("sticky", "cooperative-sticky", "range"):
        for release in ("3.0.0", "3.4.0", "3.4.1"):
            assert kassign.assign(strategy, scenario, kafka_version=release) == \
                kassign.assign(strategy, plain, kafka_version=release)


# -- the release reaches the assignors ---------------------------------------------------------------

@pytest.mark.parametrize("name, cls", [("range", RangeAssignor), ("roundrobin", RoundRobinAssignor),
                                       ("sticky", StickyAssignor), ("cooperative-sticky", CooperativeStickyAssignor),
                                       ("org.apache.kafka.clients.consumer.StickyAssignor", StickyAssignor)])
def test_get_assignor_passes_the_release_to_kafkas_assignors(name: str, cls: type) -> None:
    assignor = get_assignor(name, kafka_version="3.4.0")
    assert isinstance(assignor, cls) and assignor.kafka_version == "3.4.0"
    assert get_assignor(name).kafka_version == "4.4"
    assert answers_per_release(name) and takes_kafka_version(cls)


def test_kassigns_own_assignors_are_built_without_a_release() -> None:
    for name in ("random", "broadcast", "load-aware"):
        assignor = get_assignor(name, kafka_version="3.4.0")
        assert not answers_per_release(name) and not hasattr(assignor, "kafka_version")


def test_a_users_class_without_kafka_version_keeps_working(tmp_path, monkeypatch) -> None:
    module = tmp_path / "mine_3x.py"
    module.write_text(
        "from kassign.groups.classic.assignors import AbstractPartitionAssignor\n"
        "class Mine(AbstractPartitionAssignor):\n"
        "    name = 'mine'\n"
        "    def __init__(self, spread=1):\n"
        "        self.spread = spread\n"
        "    def assign_partitions(self, counts, subscriptions, cluster):\n"
        "        first = sorted(subscriptions)[0]\n"
        "        out = {m: [] for m in subscriptions}\n"
        "        out[first] = [(t, p) for t, n in counts.items() for p in range(n)]\n"
        "        return out\n"
        "class Aware(Mine):\n"
        "    def __init__(self, kafka_version='4.4'):\n"
        "        self.kafka_version = kafka_version\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    group = {"topics": {"t": 2}, "members": {"A": {"topics": ["t"]}, "B": {"topics": ["t"]}}}
    assert kassign.assign("mine_3x:Mine", group, kafka_version="3.4.0") == {"A": [("t", 0), ("t", 1)], "B": []}
    assert get_assignor("mine_3x:Mine", kafka_version="3.4.0", spread=2).spread == 2
    assert get_assignor("mine_3x:Aware", kafka_version="3.4.0").kafka_version == "3.4.0"
    with pytest.raises(UnknownAssignorError, match="does not accept options"):
        get_assignor("mine_3x:Mine", colour="red")


def test_an_assignor_object_answers_as_its_release_and_refuses_another() -> None:
    line = next(ln for ln in load_vectors("kafka-3.x/3.4.0/assign-sticky.jsonl") if "expected" in ln
                and kassign.assign("sticky", ln["scenario"], kafka_version="3.4.0")
                != kassign.assign("sticky", ln["scenario"]))
    old = StickyAssignor(kafka_version="3.4.0")
    assert _sorted(kassign.assign(old, line["scenario"], kafka_version="3.4.0")) == _sorted(line["expected"])
    assert _sorted(kassign.assign(old, line["scenario"], kafka_version="3.3.2")) == _sorted(line["expected"])
    with pytest.raises(KassignError, match=r"answers as Kafka 3.4.0, but kafka_version asks for Kafka 4.4"):
        kassign.assign(old, line["scenario"])
    # roundrobin follows no rule that changed: any release's object answers for any other
    assert kassign.assign(RoundRobinAssignor(kafka_version="3.0.0"), line["scenario"], kafka_version="4.4")


@pytest.mark.parametrize("bad", ["2.8", "4.5", "three"])
def test_a_release_outside_30_44_is_refused_by_the_assignors(bad: str) -> None:
    for cls in (RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor):
        with pytest.raises(KassignError, match="kafka_version"):
            cls(kafka_version=bad)


def test_assign_flat_and_assign_table_answer_as_the_release() -> None:
    line = next(ln for ln in load_vectors("kafka-3.x/3.4.0/assign-range.jsonl") if "partition_racks" in ln["scenario"]
                and _sorted(kassign.assign("range", ln["scenario"])) != _sorted(ln["expected"]))
    flat = kassign.api.assign_flat("range", line["scenario"], kafka_version="3.4.0")
    assert _sorted(flat.to_dict(list(line["scenario"]["members"]))) == _sorted(line["expected"])
    table = kassign.assign_table("range", line["scenario"], kafka_version="3.4.0").to_pylist()
    rows = {}
    for row in table:
        rows.setdefault(row["member"], []).append((row["topic"], row["partition"]))
    assert {m: sorted(v) for m, v in rows.items()} == {m: v for m, v in _sorted(line["expected"]).items() if v}


def test_the_member_side_sends_the_same_bytes_in_every_release() -> None:
    # the user data a member sends does not depend on the leader's release
    for release in ("3.0.0", "3.4.0", "4.4"):
        sub = StickyAssignor(kafka_version=release).subscription(["t0", "t1"], owned_partitions=[("t1", 0), ("t0", 1)],
                                                                 generation=3)
        assert sub.user_data == StickyAssignor().subscription(["t0", "t1"], owned_partitions=[("t1", 0), ("t0", 1)],
                                                             generation=3).user_data
    assert isinstance(get_assignor("sticky", kafka_version="3.6"), ConsumerPartitionAssignor)


def test_the_client_adapters_take_the_release_as_an_assignor_option() -> None:
    from kassign.groups.classic.clients._core import resolve

    assert resolve("sticky", {"kafka_version": "3.4.0"}).kafka_version == "3.4.0"
    assert resolve(CooperativeStickyAssignor, {"kafka_version": "3.6"}).kafka_version == "3.6"
    assert resolve("cooperative-sticky", {}).kafka_version == "4.4"
