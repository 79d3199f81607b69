"""Kafka's own unit tests of the classic assignors, as Kafka 3.4.0 and 3.6.2 state them, asked as that release.

One kassign test per Kafka test, named after it: those of AbstractStickyAssignorTest (run by Kafka for both
StickyAssignor and CooperativeStickyAssignor), StickyAssignorTest, CooperativeStickyAssignorTest and
RangeAssignorTest that are new or state other facts in 3.4.0 or 3.6.2 than in 3.9.2, and the rack-aware ones
of 3.6.2. Their inputs and expected facts are restated here in kassign's terms (scenario documents); nothing
of Kafka's test code is.

Kafka's sticky tests read the assignment before the cooperative assignor withholds what changes owner, and the
partitions it withholds (``partitionsTransferringOwnership``) separately: here the eager ``sticky`` answer is
the first, and ``cooperative-sticky``'s answer is the first without the second.
"""

from __future__ import annotations

import pytest

import kassign

ALL_RACKS = "abcdef"


def racks(count: int) -> list[str | None]:
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(count)]


def null_racks(count: int) -> list[str | None]:
    return [None] * count


def tp(topic: str, partition: int) -> tuple[str, int]:
    return (topic, partition)


def _sorted(assignment: dict) -> dict:
    return {m: sorted(parts) for m, parts in assignment.items()}


def _withheld(eager: dict, transferring: dict) -> dict:
    """The cooperative round: the eager answer without the partitions in flight (partition -> new owner)."""
    return {m: sorted(p for p in parts if transferring.get(p) != m) for m, parts in eager.items()}


# -- the rack-aware tests' groups (Kafka's AbstractPartitionAssignorTest.verifyRackAssignment) ------------

def rack_group(topics: dict[str, int], replication: int, broker_racks: list, consumer_racks: list,
               consumer_topics: list[list[str]], owned: list[str] | None = None) -> dict:
    """Members consumer0, consumer1, ... with these topics and racks (None: no rack), and ``owned`` as
    "t1-0, t1-3" strings (nothing when None); the topics' partitions on brokers 0..B-1 whose racks are
    ``broker_racks``: replica j of partition p of the k-th topic on broker (p + j + n) mod B, n the partitions
    of the topics before it (racks of None are no rack)."""
    members = {}
    for i, (subscribed, rack) in enumerate(zip(consumer_topics, consumer_racks)):
        spec: dict = {"topics": list(subscribed)}
        if rack is not None:
            spec["rack"] = rack
        if owned and i < len(owned):
            spec["owned"] = [[name.rsplit("-", 1)[0], int(name.rsplit("-", 1)[1])] for name in owned[i].split(", ")]
        members[f"consumer{i}"] = spec
    placed, before = {}, 0
    for topic, count in topics.items():
        placed[topic] = [sorted({r for j in range(replication)
                                 if (r := broker_racks[(p + j + before) % len(broker_racks)]) is not None})
                         for p in range(count)]
        before += count
    return {"topics": dict(topics), "members": members, "partition_racks": placed}


def as_strings(assignment: dict) -> list[str]:
    """Each member's partitions as Kafka's test prints them: "t1-0, t1-3", sorted as strings."""
    members = sorted(assignment, key=lambda m: int(m.removeprefix("consumer")))
    return [", ".join(sorted(f"{t}-{p}" for t, p in assignment[m])) for m in members]


def mismatched(scenario: dict, assignment: dict) -> int:
    """Partitions a member with a rack holds although no replica is on its rack."""
    count = 0
    for member, parts in assignment.items():
        rack = scenario["members"][member].get("rack")
        if rack is not None:
            count += sum(rack not in scenario["partition_racks"][t][p] for t, p in parts)
    return count


def verify_rack_assignment(strategy: str, release: str, topics: dict, replication: int, broker_racks: list,
                           consumer_racks: list, consumer_topics: list, expected: list[str], mismatches: int,
                           owned: list[str] | None = None, prefer: bool = False) -> dict:
    """One of Kafka's verifyRackAssignment calls. Kafka's eager test members send no user data, so an eager
    member's ``owned`` counts for nothing there (and is not given here)."""
    scenario = rack_group(topics, replication, broker_racks, consumer_racks, consumer_topics,
                          None if strategy == "sticky" else owned)
    got = kassign.assign(strategy, scenario, kafka_version=release, prefer_rack_aware=prefer)
    assert as_strings(got) == expected
    if mismatches >= 0:
        assert mismatched(scenario, got) == mismatches
    return got


def verify_twice(strategy: str, release: str, topics: dict, replication: int, broker_racks: list, consumer_racks: list,
                 consumer_topics: list, expected: list[str], mismatches: int, prefer: bool = False) -> None:
    """Kafka's verifyUniformSubscription / verifyNonEqualSubscription: a new group, then the same members
    owning the expected assignment, which they keep."""
    for owned in (None, expected):
        verify_rack_assignment(strategy, release, topics, replication, broker_racks, consumer_racks, consumer_topics,
                               expected, mismatches, owned, prefer)


T3 = {"t1": 6, "t2": 7, "t3": 2}
ALL3 = ["t1", "t2", "t3"]


# -- AbstractStickyAssignorTest ---------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
@pytest.mark.parametrize("release, rack_config", [("3.4.0", None), ("3.6.2", "NO_BROKER_RACK"),
                                                  ("3.6.2", "NO_CONSUMER_RACK"), ("3.6.2", "BROKER_AND_CONSUMER_RACK")])
def test_testAddRemoveTwoConsumersTwoTopics(strategy: str, release: str, rack_config: str | None) -> None:
    # 3.6.2 runs it in three rack set-ups: three replicas on racks a, b, c (or none) and the consumers on
    # racks a, b, c, d (or none); every partition has a replica on every rack, so racks change nothing
    def members(owned: dict[str, list]) -> dict:
        out = {}
        for i, (member, parts) in enumerate(owned.items()):
            spec: dict = {"topics": ["topic1", "topic2"]}
            if rack_config in ("NO_BROKER_RACK", "BROKER_AND_CONSUMER_RACK"):
                spec["rack"] = ALL_RACKS[i % (3 if rack_config == "BROKER_AND_CONSUMER_RACK" else 6)]
            if parts is not None:
                spec["owned"] = [list(p) for p in parts]
                spec["generation"] = 1
            out[member] = spec
        return out

    def group(owned: dict[str, list]) -> dict:
        doc: dict = {"topics": {"topic1": 3, "topic2": 4}, "members": members(owned)}
        if rack_config in ("NO_CONSUMER_RACK", "BROKER_AND_CONSUMER_RACK"):
            doc["partition_racks"] = {t: [["a", "b", "c"]] * n for t, n in doc["topics"].items()}
        return doc

    def ask(owned: dict[str, list]) -> dict:
        return kassign.assign(strategy, group(owned), kafka_version=release,
                              prefer_rack_aware=rack_config is not None)

    first = ask({"consumer1": None, "consumer2": None})
    # Kafka lists what it hands out in the order its round robin dealt it; a member lists what it owns so
    c1 = [tp("topic1", 0), tp("topic1", 2), tp("topic2", 1), tp("topic2", 3)]
    c2 = [tp("topic1", 1), tp("topic2", 0), tp("topic2", 2)]
    assert _sorted(first) == {"consumer1": sorted(c1), "consumer2": sorted(c2)}

    # two consumers join
    second = ask({"consumer1": c1, "consumer2": c2, "consumer3": [], "consumer4": []})
    eager = {"consumer1": [tp("topic1", 0), tp("topic1", 2)], "consumer2": [tp("topic1", 1), tp("topic2", 0)],
             "consumer3": [tp("topic2", 1), tp("topic2", 3)], "consumer4": [tp("topic2", 2)]}
    transferring = {tp("topic2", 1): "consumer3", tp("topic2", 3): "consumer3", tp("topic2", 2): "consumer4"}
    assert _sorted(second) == (_sorted(eager) if strategy == "sticky" else _withheld(eager, transferring))

    # the first two leave: consumer3 and consumer4 own (eagerly) what they were given
    third = ask({"consumer3": eager["consumer3"], "consumer4": eager["consumer4"]})
    assert _sorted(third) == {"consumer3": sorted([tp("topic2", 1), tp("topic2", 3), tp("topic1", 0), tp("topic2", 0)]),
                              "consumer4": sorted([tp("topic2", 2), tp("topic1", 1), tp("topic1", 2)])}


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration(strategy: str) -> None:
    owned = [["topic", 0], ["topic", 2], ["topic2", 1]]
    group = {"topics": {"topic": 3, "topic2": 3}, "members": {
        "consumer1": {"topics": ["topic", "topic2"], "owned": owned, "generation": 10},
        "consumer2": {"topics": ["topic", "topic2"], "owned": owned, "generation": 9}}}
    got = kassign.assign(strategy, group, kafka_version="3.4.0")
    # consumer2's stale claims count for nothing in 3.4.0: nothing is in flight, the cooperative round hands
    # out everything
    assert got == {"consumer1": [("topic", 0), ("topic", 2), ("topic2", 1)],
                   "consumer2": [("topic", 1), ("topic2", 0), ("topic2", 2)]}


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_testOwnedPartitionsAreInvalidatedForConsumerWithNoGeneration(strategy: str) -> None:
    owned = [["topic", 0], ["topic", 2], ["topic2", 1]]
    group = {"topics": {"topic": 3, "topic2": 3}, "members": {
        "consumer1": {"topics": ["topic", "topic2"], "owned": owned, "generation": 10},
        "consumer2": {"topics": ["topic", "topic2"], "owned": owned}}}
    got = kassign.assign(strategy, group, kafka_version="3.4.0")
    assert got == {"consumer1": [("topic", 0), ("topic", 2), ("topic2", 1)],
                   "consumer2": [("topic", 1), ("topic2", 0), ("topic2", 2)]}


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_testPartitionsTransferringOwnershipIncludeThePartitionClaimedByMultipleConsumersInSameGeneration(
        strategy: str) -> None:
    group = {"topics": {"topic": 3}, "members": {
        "consumer1": {"topics": ["topic"], "owned": [["topic", 0], ["topic", 1]], "generation": 1},
        "consumer2": {"topics": ["topic"], "owned": [["topic", 0], ["topic", 2]], "generation": 1},
        "consumer3": {"topics": ["topic"], "generation": 1}}}
    eager = {"consumer1": [tp("topic", 1)], "consumer2": [tp("topic", 2)], "consumer3": [tp("topic", 0)]}
    got = kassign.assign(strategy, group, kafka_version="3.4.0")
    assert _sorted(got) == (eager if strategy == "sticky" else _withheld(eager, {tp("topic", 0): "consumer3"}))


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_testRackAwareAssignmentWithUniformSubscription(strategy: str) -> None:
    release = "3.6.2"
    plain = ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"]
    topics = [ALL3, ALL3, ALL3]
    verify_twice(strategy, release, T3, 3, null_racks(3), racks(3), topics, plain, -1)
    verify_twice(strategy, release, T3, 3, racks(3), null_racks(3), topics, plain, -1)
    verify_twice(strategy, release, T3, 3, racks(3), racks(3), topics, plain, 0, prefer=True)
    verify_twice(strategy, release, T3, 4, racks(4), racks(3), topics, plain, 0, prefer=True)
    verify_twice(strategy, release, T3, 3, racks(3), racks(3), topics, plain, 0)
    verify_twice(strategy, release, T3, 3, racks(3), ["d", "e", "f"], topics, plain, -1)
    verify_twice(strategy, release, T3, 3, racks(3), [None, "e", "f"], topics, plain, -1)
    # one or two replicas: the racks hold subsets of the partitions, and the assignment is aligned with them
    verify_twice(strategy, release, T3, 1, racks(3), racks(3), topics, plain, 0)
    verify_twice(strategy, release, T3, 2, racks(3), racks(3), topics, plain, 0)
    # a consumer on a rack without partitions: balance first, with five partitions on other racks
    verify_twice(strategy, release, T3, 3, racks(2), racks(3), topics, plain, 5)
    # owned partitions on the wrong racks move to the right ones; 3.6.2's cooperative assignor hands them
    # over at once (KAFKA-15170 made 3.7.1 first revoke them), so both strategies give the whole assignment
    owned = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3", "t2-4, t2-5, t2-6, t3-0, t3-1"]
    verify_rack_assignment(strategy, release, T3, 1, racks(3), racks(3), topics, plain, 0, owned)
    # owned partitions on the right racks stay
    verify_rack_assignment(strategy, release, T3, 3, racks(3), racks(3), topics, plain, 0, plain, prefer=True)


def test_testRackAwareAssignmentWithUniformSubscription_as_371_and_later_withholds_the_moved_ones() -> None:
    # 3.9.2's version of the same test: the cooperative assignor withholds the partitions that change owner
    owned = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3", "t2-4, t2-5, t2-6, t3-0, t3-1"]
    for release in ("3.7.1", "3.9.2"):
        verify_rack_assignment("cooperative-sticky", release, T3, 1, racks(3), racks(3), [ALL3, ALL3, ALL3],
                               ["t1-0, t1-3", "t2-1", "t2-5, t3-1"], 0, owned)


def _spread(assignment: dict) -> int:
    counts = [len(parts) for parts in assignment.values()]
    return max(counts) - min(counts)


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_testRackAwareAssignmentWithNonEqualSubscription(strategy: str) -> None:
    # members subscribe to different topics: Kafka's general algorithm is a heuristic, kassign's is optimal
    # (balanced first, then as few rack mismatches, then as few moves as possible), so where Kafka's answer
    # is not the only best one kassign's may be another; what Kafka's test states about it holds for
    # kassign's: as balanced, and no more partitions on the wrong rack
    release = "3.6.2"
    topics = [ALL3, ALL3, ["t1", "t3"]]
    plain = ["t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-4, t3-1"]
    cases = [
        (3, null_racks(3), racks(3), plain, -1, False), (3, racks(3), null_racks(3), plain, -1, False),
        (3, racks(3), racks(3), plain, 0, True), (4, racks(4), racks(3), plain, 0, True),
        (3, racks(3), racks(3), plain, 0, False), (3, racks(3), ["d", "e", "f"], plain, -1, False),
        (3, racks(3), [None, "e", "f"], plain, -1, False),
        (1, racks(3), racks(3), ["t1-3, t2-0, t2-2, t2-3, t2-6", "t1-4, t2-1, t2-4, t2-5, t3-0",
                                 "t1-0, t1-1, t1-2, t1-5, t3-1"], 4, False),
        (2, racks(3), racks(3), ["t1-3, t2-0, t2-2, t2-5, t2-6", "t1-0, t2-1, t2-3, t2-4, t3-0",
                                 "t1-1, t1-2, t1-4, t1-5, t3-1"], 0, False),
        (3, racks(2), racks(3), plain, 5, False),
    ]
    for replication, brokers, consumers, kafka, mismatches, prefer in cases:
        scenario = rack_group(T3, replication, brokers, consumers, topics)
        got = kassign.assign(strategy, scenario, kafka_version=release, prefer_rack_aware=prefer)
        sizes = [len(held.split(", ")) for held in kafka]
        assert _spread(got) <= max(sizes) - min(sizes)
        if mismatches >= 0:
            assert mismatched(scenario, got) <= mismatches
        for member, parts in got.items():  # every partition once, to a subscriber
            assert {t for t, _ in parts} <= set(scenario["members"][member]["topics"])
        assert sorted(p for parts in got.values() for p in parts) == sorted(
            (t, p) for t, n in T3.items() for p in range(n))


# -- StickyAssignorTest and CooperativeStickyAssignorTest --------------------------------------------------

@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithEqualPartitionsPerConsumer(
        strategy: str) -> None:
    group = {"topics": {"topic": 3}, "members": {
        "consumer1": {"topics": ["topic"], "owned": [["topic", 0], ["topic", 1]], "generation": 1},
        "consumer2": {"topics": ["topic"], "owned": [["topic", 0], ["topic", 2]], "generation": 1},
        "consumer3": {"topics": ["topic"], "generation": 1}}}
    got = kassign.assign(strategy, group, kafka_version="3.4.0")
    # topic-0 was claimed twice: the cooperative assignor hands it out only once both have given it up
    assert got == {"consumer1": [("topic", 1)], "consumer2": [("topic", 2)],
                   "consumer3": [("topic", 0)] if strategy == "sticky" else []}


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithUnequalPartitionsPerConsumer(
        strategy: str) -> None:
    group = {"topics": {"topic": 4}, "members": {
        "consumer1": {"topics": ["topic"], "owned": [["topic", 0], ["topic", 1]], "generation": 1},
        "consumer2": {"topics": ["topic"], "owned": [["topic", 0], ["topic", 2]], "generation": 1},
        "consumer3": {"topics": ["topic"], "generation": 1}}}
    got = kassign.assign(strategy, group, kafka_version="3.4.0")
    assert got == {"consumer1": [("topic", 1), ("topic", 3)], "consumer2": [("topic", 2)],
                   "consumer3": [("topic", 0)] if strategy == "sticky" else []}


def _sticky(subscribed: dict[str, list[str]], topics: dict[str, int], owned: dict[str, tuple[list, int]]) -> dict:
    """The eager assignor as 3.4.0 over these members: ``owned`` member -> (its partitions, their generation)."""
    members = {}
    for member, wanted in subscribed.items():
        spec: dict = {"topics": wanted}
        if member in owned:
            parts, generation = owned[member]
            spec.update(owned=[list(p) for p in parts], generation=generation)
        members[member] = spec
    got = kassign.assign("sticky", {"topics": topics, "members": members}, kafka_version="3.4.0")
    # valid: every partition once, each to a member subscribing to its topic
    assert sorted(p for parts in got.values() for p in parts) == sorted((t, p) for t, n in topics.items() for p in range(n))
    for member, parts in got.items():
        assert {t for t, _ in parts} <= set(subscribed[member])
    return got


@pytest.mark.parametrize("all_equal", [True, False])
def test_testAssignmentWithMultipleGenerations1(all_equal: bool) -> None:
    every = ["topic", "topic2"]
    topics = {"topic": 6, "topic2": 6}
    subscribed = {"consumer1": every, "consumer2": every if all_equal else ["topic"], "consumer3": every}
    r1 = _sticky(subscribed, topics, {})
    assert [len(r1[m]) for m in subscribed] == [4, 4, 4]
    # consumer3 misses a rebalance (generation 1 to 2)
    r2 = _sticky({m: subscribed[m] for m in ("consumer1", "consumer2")}, topics,
                 {"consumer1": (r1["consumer1"], 1), "consumer2": (r1["consumer2"], 1)})
    assert [len(r2[m]) for m in ("consumer1", "consumer2")] == [6, 6]
    if all_equal:
        assert set(r1["consumer1"]) <= set(r2["consumer1"])
    assert set(r1["consumer2"]) <= set(r2["consumer2"])
    if all_equal:
        assert set(r2["consumer2"]) & set(r1["consumer3"])
    # (with differing subscriptions Kafka's first round gives consumer3 topic-5 beside three of topic2, which
    # consumer2 takes over here; kassign's general algorithm deals another balanced first round, consumer3
    # holding topic2 only, so that fact is about Kafka's heuristic, not a rule)
    # consumer1 leaves; consumer3 comes back with its generation-1 partitions, consumer2 holds its of generation 2
    r3 = _sticky({m: subscribed[m] for m in ("consumer2", "consumer3")}, topics,
                 {"consumer2": (r2["consumer2"], 2), "consumer3": (r1["consumer3"], 1)})
    assert [len(r3[m]) for m in ("consumer2", "consumer3")] == [6, 6]
    assert not set(r3["consumer2"]) & set(r3["consumer3"])


@pytest.mark.parametrize("all_equal", [True, False])
def test_testAssignmentWithMultipleGenerations2(all_equal: bool) -> None:
    every = ["topic", "topic2", "topic3"]
    topics = {"topic": 4, "topic2": 4, "topic3": 4}
    subscribed = {"consumer1": every if all_equal else ["topic"], "consumer2": every,
                  "consumer3": every if all_equal else ["topic", "topic2"]}
    r1 = _sticky(subscribed, topics, {})
    assert [len(r1[m]) for m in subscribed] == [4, 4, 4]
    r2 = _sticky({"consumer2": every}, topics, {"consumer2": (r1["consumer2"], 1)})
    assert len(r2["consumer2"]) == 12 and set(r1["consumer2"]) <= set(r2["consumer2"])
    r3 = _sticky(subscribed, topics, {"consumer1": (r1["consumer1"], 1), "consumer2": (r2["consumer2"], 2),
                                      "consumer3": (r1["consumer3"], 1)})
    assert [len(r3[m]) for m in subscribed] == [4, 4, 4]


@pytest.mark.parametrize("all_equal", [True, False])
def test_testAssignmentWithConflictingPreviousGenerations(all_equal: bool) -> None:
    every = ["topic", "topic2", "topic3"]
    topics = {"topic": 4, "topic2": 4, "topic3": 4}
    subscribed = {"consumer1": every if all_equal else ["topic"],
                  "consumer2": every if all_equal else ["topic", "topic2"], "consumer3": every}
    c1 = ([tp("topic", 0), tp("topic", 1), tp("topic", 2), tp("topic2", 2), tp("topic2", 3), tp("topic3", 0)]
          if all_equal else [tp("topic", p) for p in range(4)])
    c2 = [tp("topic", 0), tp("topic", 1)] + [tp("topic2", p) for p in range(4)]
    c3 = [tp("topic", 2), tp("topic", 3)] + [tp("topic3", p) for p in range(4)]
    got = _sticky(subscribed, topics, {"consumer1": (c1, 1), "consumer2": (c2, 2), "consumer3": (c3, 2)})
    assert [len(got[m]) for m in subscribed] == [4, 4, 4]
    assert set(got["consumer2"]) <= set(c2) and set(got["consumer3"]) <= set(c3)


# -- RangeAssignorTest (3.6.2's rack-aware tests) ----------------------------------------------------------

def verify_non_rack_aware(release: str, topics: dict, consumer_topics: list, expected: list[str]) -> None:
    """Kafka's RangeAssignorTest.verifyNonRackAwareAssignment: the set-ups where racks play no part."""
    for replication, brokers, consumers, mismatches, prefer in (
            (3, null_racks(3), racks(3), -1, False), (3, racks(3), null_racks(3), -1, False),
            (3, racks(3), racks(3), 0, False), (4, racks(4), racks(3), 0, False),
            (3, racks(3), ["d", "e", "f"], -1, False), (3, racks(3), [None, "e", "f"], -1, False),
            (3, racks(3), racks(3), 0, True)):
        verify_rack_assignment("range", release, topics, replication, brokers, consumers, consumer_topics, expected,
                               mismatches, prefer=prefer)


def test_testRackAwareAssignmentWithUniformSubscription_range() -> None:
    topics = [ALL3, ALL3, ALL3]
    plain = ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]
    verify_non_rack_aware("3.6.2", T3, topics, plain)
    verify_rack_assignment("range", "3.6.2", T3, 1, racks(3), racks(3), topics,
                           ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0",
                            "t1-2, t1-5, t2-2, t2-5, t3-1"], 0)
    verify_rack_assignment("range", "3.6.2", T3, 2, racks(3), racks(3), topics,
                           ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0",
                            "t1-4, t1-5, t2-5, t2-6"], 1)
    verify_rack_assignment("range", "3.6.2", T3, 3, racks(2), racks(3), topics, plain, 4)
    # before 3.5.0 the same groups get the plain ranges, racks or not
    for replication in (1, 2):
        verify_rack_assignment("range", "3.4.0", T3, replication, racks(3), racks(3), topics, plain, -1)


def test_testRackAwareAssignmentWithNonEqualSubscription_range() -> None:
    topics = [ALL3, ALL3, ["t1", "t3"]]
    plain = ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"]
    verify_non_rack_aware("3.6.2", T3, topics, plain)
    verify_rack_assignment("range", "3.6.2", T3, 1, racks(3), racks(3), topics,
                           ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0",
                            "t1-2, t1-5, t3-1"], 2)
    verify_rack_assignment("range", "3.6.2", T3, 2, racks(3), racks(3), topics,
                           ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0",
                            "t1-4, t1-5"], 0)
    verify_rack_assignment("range", "3.6.2", T3, 3, racks(2), racks(3), topics, plain, 2)
    verify_rack_assignment("range", "3.4.0", T3, 1, racks(3), racks(3), topics, plain, -1)


def test_testRackAwareAssignmentWithUniformPartitions() -> None:
    topics5 = {"t1": 5, "t2": 5, "t3": 5}
    topics = [ALL3, ALL3, ALL3]
    plain = ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"]
    verify_non_rack_aware("3.6.2", topics5, topics, plain)
    # co-partitioning comes before rack alignment
    verify_rack_assignment("range", "3.6.2", topics5, 1, racks(3), racks(3), topics, plain, 10)
    verify_rack_assignment("range", "3.6.2", topics5, 2, racks(3), racks(3), topics, plain, 5)
    verify_rack_assignment("range", "3.6.2", topics5, 3, racks(2), racks(3), topics, plain, 3)


def test_testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription() -> None:
    topics5 = {"t1": 5, "t2": 5, "t3": 5}
    topics = [ALL3, ALL3, ["t1", "t3"]]
    verify_non_rack_aware("3.6.2", topics5, topics, ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
                                                     "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"])
    verify_rack_assignment("range", "3.6.2", topics5, 1, racks(3), racks(3), topics,
                           ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
                            "t1-4, t3-4"], 9)
    verify_rack_assignment("range", "3.6.2", topics5, 2, racks(3), racks(3), topics,
                           ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3",
                            "t1-1, t1-4, t3-1, t3-4"], 0)
    verify_rack_assignment("range", "3.6.2", topics5, 3, racks(2), racks(3), topics,
                           ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
                            "t1-4, t3-4"], 2)


def test_testRackAwareAssignmentWithCoPartitioning() -> None:
    topics4 = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
    consumers = ["a", "b", "b", "a"]
    split = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
    plain = ["t1-0, t1-1, t1-2, t2-0, t2-1, t2-2", "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5", "t3-0, t4-0", "t3-1, t4-1"]
    verify_rack_assignment("range", "3.6.2", topics4, 3, racks(2), consumers, split, plain, -1)
    verify_rack_assignment("range", "3.6.2", topics4, 2, racks(2), consumers, split, plain, 0)
    verify_rack_assignment("range", "3.6.2", topics4, 1, racks(2), consumers, split,
                           ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5",
                            "t3-1, t4-1", "t3-0, t4-0"], 0)
    everything = [["t1", "t2", "t3", "t4"]] * 4
    plain = ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0", "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1", "t1-4, t2-4", "t1-5, t2-5"]
    verify_rack_assignment("range", "3.6.2", topics4, 3, racks(2), consumers, everything, plain, -1)
    verify_rack_assignment("range", "3.6.2", topics4, 2, racks(2), consumers, everything, plain, 0)
    verify_rack_assignment("range", "3.6.2", topics4, 1, racks(2), consumers, everything,
                           ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1",
                            "t1-5, t2-5", "t1-4, t2-4"], 0)
    verify_rack_assignment("range", "3.6.2", topics4, 1, racks(3), consumers, everything,
                           ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1",
                            "t1-2, t2-2", "t1-5, t2-5"], 6)
    # 3.4.0 deals the plain ranges whatever the racks
    verify_rack_assignment("range", "3.4.0", topics4, 1, racks(2), consumers, everything, plain, -1)


def test_testRackAwareStaticMemberRangeAssignmentPersistentAfterMemberIdChanges() -> None:
    # two replicas over six brokers on racks a, b, c, a, b, c: partition p on the racks of brokers p and p+1
    placed = [sorted({"abc"[p % 3], "abc"[(p + 1) % 3]}) for p in range(5)]
    def group(ids: dict[str, str]) -> dict:
        return {"topics": {"topic1": 5, "topic2": 5}, "partition_racks": {"topic1": placed, "topic2": placed},
                "members": {member: {"topics": ["topic1", "topic2"], "instance_id": instance,
                                     "rack": {"instance1": "a", "instance2": "b", "instance3": "c"}[instance]}
                            for member, instance in ids.items()}}

    expected = {"instance1": [tp("topic1", 0), tp("topic1", 2), tp("topic2", 0), tp("topic2", 2)],
                "instance2": [tp("topic1", 1), tp("topic1", 3), tp("topic2", 1), tp("topic2", 3)],
                "instance3": [tp("topic1", 4), tp("topic2", 4)]}
    before = {"consumer1": "instance1", "consumer2": "instance2", "consumer3": "instance3"}
    after = {"consumer1": "instance1", "consumer4": "instance3", "consumer5": "instance2"}
    for ids in (before, after):
        got = kassign.assign("range", group(ids), kafka_version="3.6.2", prefer_rack_aware=True)
        assert {ids[m]: sorted(parts) for m, parts in got.items()} == expected
