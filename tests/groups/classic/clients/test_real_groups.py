"""Real consumer groups on a real broker (tansu on 127.0.0.1) running kassign's assignors.

Group formation takes seconds on tansu, so these tests are few and each checks many
things on one group. The slow ones are marked ``slow`` (``pytest -m slow`` runs them).
"""

from __future__ import annotations

import time

import pytest

import kassign
from tests.groups.classic.clients.groups import KafkaPythonMember, settled, wait_until

pytest.importorskip("kafka", reason="kafka-python is an optional extra: pip install 'kassign[kafka-python]'")
from kafka import KafkaProducer  # noqa: E402

from kassign.groups.classic.clients.kafka_python import RangeAssignor, RoundRobinAssignor, StickyAssignor  # noqa: E402

GROUP_TIMEOUT = 90


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int, tag: str) -> set[tuple[str, int, bytes]]:
    """``per_partition`` records to every partition; returns (topic, partition, value) of each."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1)
    sent = set()
    for p in range(partitions):
        for i in range(per_partition):
            value = f"{tag}-{p}-{i}".encode()
            producer.send(topic, value=value, partition=p)
            sent.add((topic, p, value))
    producer.flush(30)
    producer.close()
    return sent


def history_scenario(topic: str, partitions: int, members: list[KafkaPythonMember],
                     previous: dict[str, tuple[list[tuple[str, int]], int]]) -> dict:
    """The scenario document of the group's last rebalance: its members, what each held before, and when."""
    doc: dict = {"topics": {topic: partitions}, "members": {}}
    for m in members:
        spec: dict = {"topics": [topic]}
        if m.member_id in previous:
            owned, generation = previous[m.member_id]
            spec.update(owned=[list(tp) for tp in owned], generation=generation)
        doc["members"][m.member_id] = spec
    return doc


def snapshot(members: list[KafkaPythonMember]) -> dict[str, tuple[list[tuple[str, int]], int]]:
    return {m.member_id: (sorted(m.owned()), m.assignor.kassign.generation) for m in members}


@pytest.mark.slow
def test_kafka_python_sticky_group_leave_and_join(tansu, topic_name):
    """kafka-python members on kassign's sticky: one leaves, one joins; every record consumed exactly
    once, the final assignment is kassign.assign("sticky") for that history, and each consumer's
    adapter kept its own history (four consumers, one process)."""
    topic, n = topic_name, 6
    tansu.create_topic(topic, n)
    everything = {(topic, p) for p in range(n)}
    sent = produce(tansu.bootstrap, topic, n, 5, "a")
    timings = {}
    members = [KafkaPythonMember(tansu.bootstrap, topic, [topic], StickyAssignor()) for _ in range(3)]
    try:
        timings["form"] = wait_until(settled(members, everything), GROUP_TIMEOUT, "3 members to settle", members)
        sent |= produce(tansu.bootstrap, topic, n, 5, "b")

        leaving = members.pop(1)
        leaving.leave()
        timings["leave"] = wait_until(settled(members, everything), GROUP_TIMEOUT, "2 members to settle", members)
        sent |= produce(tansu.bootstrap, topic, n, 5, "c")
        before_join = snapshot(members)

        members.append(KafkaPythonMember(tansu.bootstrap, topic, [topic], StickyAssignor()))
        timings["join"] = wait_until(settled(members, everything), GROUP_TIMEOUT, "3 members to settle", members)
        sent |= produce(tansu.bootstrap, topic, n, 5, "d")

        everyone = [*members, leaving]
        wait_until(lambda: sum(len(m.consumed) for m in everyone) >= len(sent), GROUP_TIMEOUT,
                   "every record to be consumed", members)
        time.sleep(1)  # a duplicate, if any, would arrive now

        consumed = [rec for m in everyone for rec in m.consumed]
        assert len(consumed) == len(set(consumed)) == len(sent), "every record exactly once"
        assert {(t, p) for t, p, _ in consumed} == everything

        expected = kassign.assign("sticky", history_scenario(topic, n, members, before_join))
        actual = {m.member_id: sorted(m.owned()) for m in members}
        assert actual == {k: sorted(v) for k, v in expected.items()}

        # each adapter's history is its own consumer's assignment, not a neighbour's
        for m in members:
            assert m.owned() == {(tp.topic, tp.partition) for tp in m.consumer.assignment()}
        assert len({id(m.assignor) for m in everyone}) == len(everyone)
        print(f"\nkafka-python sticky group timings (s): {timings}")
    finally:
        for m in members:
            m.leave()


@pytest.mark.slow
def test_aiokafka_sticky_group_leave_and_join(tansu, topic_name):
    """The same story for aiokafka consumers (one event loop, one process): exactly once, and the
    final assignment is kassign.assign("sticky") for the history the members report."""
    import asyncio

    pytest.importorskip("aiokafka", reason="aiokafka is an optional extra: pip install 'kassign[aiokafka]'")
    from kassign.groups.classic.clients.aiokafka import StickyAssignor as AioSticky
    from tests.groups.classic.clients.groups import AiokafkaMember, async_wait_until

    topic, n = topic_name, 6
    tansu.create_topic(topic, n)
    everything = {(topic, p) for p in range(n)}

    async def scenario() -> None:
        sent = produce(tansu.bootstrap, topic, n, 5, "a")
        members = [AiokafkaMember(tansu.bootstrap, topic, [topic], AioSticky()) for _ in range(3)]
        leaving = members[1]
        try:
            for m in members:
                await m.start()
            timings = {"form": await async_wait_until(settled(members, everything), GROUP_TIMEOUT, "3 to settle", members)}
            members.remove(leaving)
            await leaving.leave()
            timings["leave"] = await async_wait_until(settled(members, everything), GROUP_TIMEOUT, "2 to settle", members)
            sent_more = await asyncio.to_thread(produce, tansu.bootstrap, topic, n, 5, "b")
            before_join = snapshot(members)
            joining = AiokafkaMember(tansu.bootstrap, topic, [topic], AioSticky())
            members.append(joining)
            await joining.start()
            timings["join"] = await async_wait_until(settled(members, everything), GROUP_TIMEOUT, "3 to settle", members)
            everyone = [*members, leaving]
            total = len(sent | sent_more)
            await async_wait_until(lambda: sum(len(m.consumed) for m in everyone) >= total, GROUP_TIMEOUT,
                                   "every record", members)
            await asyncio.sleep(1)
            consumed = [rec for m in everyone for rec in m.consumed]
            assert len(consumed) == len(set(consumed)) == total
            expected = kassign.assign("sticky", history_scenario(topic, n, members, before_join))
            assert {m.member_id: sorted(m.owned()) for m in members} == {k: sorted(v) for k, v in expected.items()}
            for m in members:
                assert m.owned() == {(tp.topic, tp.partition) for tp in m.consumer.assignment()}
            print(f"\naiokafka sticky group timings (s): {timings}")
        finally:
            for m in members:
                await m.leave()

    asyncio.run(scenario())


def _covered_once(members: list, partitions: set[tuple[str, int]]):
    def check() -> bool:
        owned = [m.owned() for m in members]
        return all(owned) and sum(map(len, owned)) == len(partitions) and set().union(*owned) == partitions
    return check


KASSIGN_ADAPTERS = {"range": RangeAssignor, "roundrobin": RoundRobinAssignor}


@pytest.mark.parametrize("strategy, leader", [
    pytest.param("range", "kassign", id="range-kassign-leads"),
    pytest.param("roundrobin", "librdkafka", id="roundrobin-librdkafka-leads"),
    pytest.param("range", "librdkafka", id="range-librdkafka-leads", marks=pytest.mark.slow),
    pytest.param("roundrobin", "kassign", id="roundrobin-kassign-leads", marks=pytest.mark.slow),
])
def test_mixed_group_with_librdkafka(tansu, topic_name, strategy, leader):
    """kafka-python members on kassign's range/roundrobin and confluent-kafka members on librdkafka's
    built-in one form one group; whoever leads, every member ends with kassign.assign(strategy)."""
    pytest.importorskip("confluent_kafka", reason="confluent-kafka is an optional extra")
    from tests.groups.classic.clients.groups import ConfluentMember

    topics = [f"{topic_name}-a", f"{topic_name}-b"]
    counts = {topics[0]: 5, topics[1]: 3}
    for t, n in counts.items():
        tansu.create_topic(t, n)
    everything = {(t, p) for t, n in counts.items() for p in range(n)}

    def kassign_member():
        return KafkaPythonMember(tansu.bootstrap, topic_name, topics, KASSIGN_ADAPTERS[strategy]())

    def librdkafka_member():
        return ConfluentMember(tansu.bootstrap, topic_name, topics, strategy)

    first, second = (kassign_member, librdkafka_member) if leader == "kassign" else (librdkafka_member, kassign_member)
    members = [first()]
    try:
        wait_until(_covered_once(members, everything), GROUP_TIMEOUT, "the first member alone", members)
        members += [second(), first(), second()]
        took = wait_until(_covered_once(members, everything), GROUP_TIMEOUT, "4 mixed members", members)
        time.sleep(2)  # still the same a little later: the group has settled, not passed through
        assert _covered_once(members, everything)()

        led = [m for m in members if isinstance(m, KafkaPythonMember) and m.assignor.kassign.assignments_led]
        if leader == "kassign":
            assert led, "a kassign adapter should have led the group"
        else:
            assert not any(m.assignor.kassign.assignments_led for m in members if isinstance(m, KafkaPythonMember))

        doc = {"topics": counts, "members": {m.member_id: {"topics": topics} for m in members}}
        expected = kassign.assign(strategy, doc)
        assert {m.member_id: sorted(m.owned()) for m in members} == {k: sorted(v) for k, v in expected.items()}
        print(f"\nmixed {strategy} group ({leader} leads) settled in {took:.1f} s")
    finally:
        for m in members:
            m.leave()


def _cooperative_rounds(topic: str, partitions: int, members: list[KafkaPythonMember],
                        before: dict[str, tuple[list[tuple[str, int]], int]]) -> tuple[dict, dict]:
    """What kassign's cooperative-sticky computes for this group: the first round (partitions that
    change owner withheld while their owner revokes them) and the follow-up round that hands them over."""
    first = kassign.assign("cooperative-sticky", history_scenario(topic, partitions, members, before))
    generation = max([g for _, g in before.values()], default=0) + 1
    after_first = {m: (owned, generation) for m, owned in first.items()}
    second = kassign.assign("cooperative-sticky", history_scenario(topic, partitions, members, after_first))
    return first, second


@pytest.mark.slow
def test_kafka_python_cooperative_sticky_group(tansu, topic_name):
    """kafka-python members on kassign's cooperative-sticky (KIP-429 incremental rebalancing): one
    leaves, one joins. Every record is consumed exactly once; members keep the partitions they keep
    (a survivor revokes nothing when a member leaves, and only what moves when one joins); the group
    ends with kassign.assign("cooperative-sticky") for that membership and history (both rounds)."""
    from kassign.groups.classic.clients.kafka_python import CooperativeStickyAssignor
    from tests.groups.classic.clients.groups import RecordingListener

    topic, n = topic_name, 6
    tansu.create_topic(topic, n)
    everything = {(topic, p) for p in range(n)}
    sent = produce(tansu.bootstrap, topic, n, 4, "a")
    timings = {}

    def member() -> KafkaPythonMember:
        return KafkaPythonMember(tansu.bootstrap, topic, [topic], CooperativeStickyAssignor(),
                                 listener=RecordingListener())

    members = [member() for _ in range(3)]
    try:
        timings["form"] = wait_until(settled(members, everything), GROUP_TIMEOUT, "3 members to settle", members)
        assert all(m.consumer._coordinator._rebalance_protocol.name == "COOPERATIVE" for m in members)
        sent |= produce(tansu.bootstrap, topic, n, 4, "b")

        # a member leaves: the survivors take its partitions and give up none of their own
        before_leave = snapshot(members)
        marks = {m.member_id: m.listener.mark() for m in members}
        leaving = members.pop(1)
        leaving.leave()
        timings["leave"] = wait_until(settled(members, everything), GROUP_TIMEOUT, "2 members to settle", members)
        for m in members:
            kept = set(before_leave[m.member_id][0])
            assert kept <= m.owned(), "a survivor lost a partition it held"
            revoked = [p for kind, p in m.listener.since(marks[m.member_id]) if kind in ("revoked", "lost") and p]
            assert not revoked, f"a survivor revoked {revoked} when a member left"
        first, second = _cooperative_rounds(topic, n, members, {k: v for k, v in before_leave.items()
                                                                if k in {m.member_id for m in members}})
        assert {m.member_id: sorted(m.owned()) for m in members} == {k: sorted(v) for k, v in second.items()}
        sent |= produce(tansu.bootstrap, topic, n, 4, "c")

        # a member joins: partitions go to it in two rounds; the others revoke only those
        before_join = snapshot(members)
        marks = {m.member_id: m.listener.mark() for m in members}
        members.append(member())
        timings["join"] = wait_until(settled(members, everything), GROUP_TIMEOUT, "3 members to settle", members)
        sent |= produce(tansu.bootstrap, topic, n, 4, "d")
        first, second = _cooperative_rounds(topic, n, members, before_join)
        actual = {m.member_id: sorted(m.owned()) for m in members}
        assert actual == {k: sorted(v) for k, v in second.items()}
        newcomer = members[-1].member_id
        assert first[newcomer] == [], "round one withholds what moves (kassign's first round)"
        for m in members[:-1]:
            moved = set(before_join[m.member_id][0]) - m.owned()
            assert set(first[m.member_id]) == m.owned(), "an old member kept exactly its round-one share"
            revoked = set().union(*(p for kind, p in m.listener.since(marks[m.member_id]) if kind == "revoked"))
            assert revoked == moved, f"{m.member_id} revoked {revoked}, but only {moved} moved"
        moved_total = sum(len(set(before_join[m.member_id][0]) - m.owned()) for m in members[:-1])
        assert moved_total == 2  # 3 + 3 -> 2 + 2 + 2
        old = members[0]
        assert old.assignor.kassign.generation >= before_join[old.member_id][1] + 2, "a follow-up rebalance ran"

        everyone = [*members, leaving]
        wait_until(lambda: sum(len(m.consumed) for m in everyone) >= len(sent), GROUP_TIMEOUT,
                   "every record to be consumed", members)
        time.sleep(1)  # a duplicate, if any, would arrive now
        consumed = [rec for m in everyone for rec in m.consumed]
        assert len(consumed) == len(set(consumed)) == len(sent), "every record exactly once"
        print(f"\nkafka-python cooperative-sticky group timings (s): {timings}; {moved_total} partitions moved on join")
    finally:
        for m in members:
            m.leave()


class _MemberProcess:
    """A member in its own process (tests/groups/classic/clients/member_process.py), read back from its log."""

    def __init__(self, bootstrap: str, group: str, topic: str, log) -> None:
        import subprocess
        import sys

        self.log = log
        self.process = subprocess.Popen([sys.executable, "-m", "tests.groups.classic.clients.member_process", bootstrap, group, topic,
                                         str(log)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def _lines(self) -> list[dict]:
        import json

        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.endswith("}")]

    def state(self) -> tuple[str | None, int, set[tuple[str, int]]]:
        last = next((d for d in reversed(self._lines()) if "member" in d), None)
        if last is None:
            return None, -1, set()
        return last["member"], last["generation"], {tuple(tp) for tp in last["owned"]}

    def consumed(self) -> list[tuple[str, int, int]]:
        return [tuple(r) for d in self._lines() for r in d.get("consumed", [])]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


def test_a_member_killed_without_leaving(tansu, topic_name, tmp_path):
    """Three members (each a process) on kassign's cooperative-sticky; one is killed with SIGKILL, so it never
    leaves. Once its session times out the survivors settle to what kassign.assign gives them for that history
    (the dead member's partitions handed over, none of their own revoked), and every record is consumed at
    least once."""
    topic, n = topic_name, 6
    tansu.create_topic(topic, n)
    everything = {(topic, p) for p in range(n)}
    sent = produce(tansu.bootstrap, topic, n, 5, "a")
    members = [_MemberProcess(tansu.bootstrap, topic, topic, tmp_path / f"member-{i}.log") for i in range(3)]

    def group_settled(alive: list[_MemberProcess]) -> bool:
        states = [m.state() for m in alive]
        owned = [s[2] for s in states]
        return (len({s[1] for s in states}) == 1 and states[0][1] >= 0 and sum(map(len, owned)) == n
                and set().union(*owned) == everything)

    try:
        wait_until(lambda: group_settled(members), GROUP_TIMEOUT, "3 member processes to settle")
        sent |= produce(tansu.bootstrap, topic, n, 5, "b")
        before = {m.state()[0]: (sorted(m.state()[2]), m.state()[1]) for m in members}
        victim = members.pop(0)
        victim.process.send_signal(__import__("signal").SIGKILL)
        victim.process.wait(10)
        took = wait_until(lambda: group_settled(members) and members[0].state()[1] > before[members[0].state()[0]][1],
                          GROUP_TIMEOUT, "the survivors to settle")
        assert took >= 3, "the survivors waited for the dead member's session to time out"
        survivors = {m.state()[0]: m.state() for m in members}
        doc = {"topics": {topic: n}, "members": {
            member: {"topics": [topic], "owned": [list(tp) for tp in before[member][0]], "generation": before[member][1]}
            for member in survivors}}
        expected = kassign.assign("cooperative-sticky", doc)
        assert {m: sorted(s[2]) for m, s in survivors.items()} == {m: sorted(v) for m, v in expected.items()}
        for member, (_, _, owned) in survivors.items():
            assert set(before[member][0]) <= owned, "a survivor lost a partition it held"
        sent |= produce(tansu.bootstrap, topic, n, 5, "c")
        want = {(t, p) for t, p, _ in sent}
        counts = {tp: sum(1 for t, p, _ in sent if (t, p) == tp) for tp in want}

        def consumed_all() -> bool:
            offsets = {(t, p, o) for m in (*members, victim) for t, p, o in m.consumed()}
            return all(sum(1 for t, p, _ in offsets if (t, p) == tp) >= counts[tp] for tp in want)

        wait_until(consumed_all, GROUP_TIMEOUT, "every record to be consumed at least once")
    finally:
        for m in members:
            m.stop()
