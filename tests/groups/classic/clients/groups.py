"""Consumers of a real group, one thread each, and waiting for the group to settle.

Each :class:`KafkaPythonMember` polls in its own thread, records every (partition,
offset) it consumes and commits synchronously after each batch, so a partition that
moves on a rebalance is resumed by its next owner exactly where the last one stopped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any


class KafkaPythonMember:
    """A kafka-python consumer in ``group`` using ``assignor``, polling in a thread until :meth:`leave`."""

    def __init__(self, bootstrap: str, group: str, topics: Iterable[str], assignor: Any, *,
                 listener: Any = None, **config: Any) -> None:
        from kafka import KafkaConsumer

        self.assignor = assignor
        self.listener = listener
        self.consumed: list[tuple[str, int, int]] = []
        self.error: BaseException | None = None
        settings = dict(
            bootstrap_servers=bootstrap, group_id=group, partition_assignment_strategy=[assignor],
            enable_auto_commit=False, auto_offset_reset="earliest", session_timeout_ms=6000,
            heartbeat_interval_ms=300, max_poll_interval_ms=8000, request_timeout_ms=15000,
            metadata_max_age_ms=2000,
        )
        settings.update(config)
        self.consumer = KafkaConsumer(**settings)
        if listener is None:
            self.consumer.subscribe(list(topics))
        else:
            self.consumer.subscribe(list(topics), listener=listener)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                batches = self.consumer.poll(timeout_ms=100)
                for records in batches.values():
                    self.consumed.extend((r.topic, r.partition, r.offset) for r in records)
                if batches:
                    self.consumer.commit()
        except BaseException as err:  # surfaced by the test, which reads .error
            self.error = err
        finally:
            self.consumer.close()

    @property
    def member_id(self) -> str:
        # kafka-python keeps the broker-given member id on its coordinator's generation
        return self.consumer._coordinator._generation.member_id

    def owned(self) -> set[tuple[str, int]]:
        return set(self.assignor.kassign.owned)

    def leave(self) -> None:
        self._stop.set()
        self._thread.join(30)


try:  # kafka-python insists on its own base class for listeners
    from kafka import ConsumerRebalanceListener as _ListenerBase
except ImportError:  # the tests that need it skip without kafka-python
    _ListenerBase = object


class RecordingListener(_ListenerBase):
    """A kafka-python ConsumerRebalanceListener that keeps every callback, in order, with its partitions."""

    def __init__(self) -> None:
        self.events: list[tuple[str, frozenset[tuple[str, int]]]] = []
        self._lock = threading.Lock()

    def _record(self, kind: str, partitions: Iterable[Any]) -> None:
        with self._lock:
            self.events.append((kind, frozenset((tp.topic, tp.partition) for tp in partitions)))

    def on_partitions_revoked(self, revoked: Iterable[Any]) -> None:
        self._record("revoked", revoked)

    def on_partitions_assigned(self, assigned: Iterable[Any]) -> None:
        self._record("assigned", assigned)

    def on_partitions_lost(self, lost: Iterable[Any]) -> None:
        self._record("lost", lost)

    def since(self, mark: int) -> list[tuple[str, frozenset[tuple[str, int]]]]:
        with self._lock:
            return list(self.events[mark:])

    def mark(self) -> int:
        with self._lock:
            return len(self.events)


def wait_until(condition: Callable[[], bool], timeout: float, what: str, members: Iterable[Any] = ()) -> float:
    """Seconds waited until ``condition()`` holds; fails after ``timeout`` or when a member thread failed."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        for member in members:
            if getattr(member, "error", None) is not None:
                raise AssertionError(f"a consumer failed while waiting for {what}: {member.error!r}")
        if condition():
            return time.monotonic() - start
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def settled(members: list[Any], partitions: set[tuple[str, int]]) -> Callable[[], bool]:
    """The group holds every partition exactly once, every member at one generation."""

    def check() -> bool:
        owned = [m.owned() for m in members]
        generations = {m.assignor.kassign.generation for m in members}
        return (len(generations) == 1 and -1 not in generations and sum(map(len, owned)) == len(partitions)
                and set().union(*owned) == partitions)

    return check


class AiokafkaMember:
    """An aiokafka consumer in ``group`` using ``assignor``, polling as an asyncio task until :meth:`leave`."""

    def __init__(self, bootstrap: str, group: str, topics: Iterable[str], assignor: Any) -> None:
        self.bootstrap, self.group, self.topics, self.assignor = bootstrap, group, list(topics), assignor
        self.consumed: list[tuple[str, int, int]] = []
        self.error: BaseException | None = None
        self.consumer: Any = None
        self._task: Any = None

    async def start(self) -> None:
        import asyncio

        from aiokafka import AIOKafkaConsumer

        self.consumer = AIOKafkaConsumer(
            *self.topics, bootstrap_servers=self.bootstrap, group_id=self.group,
            partition_assignment_strategy=[self.assignor], enable_auto_commit=False,
            auto_offset_reset="earliest", session_timeout_ms=6000, heartbeat_interval_ms=300,
            max_poll_interval_ms=8000, metadata_max_age_ms=2000, request_timeout_ms=15000)
        await self.consumer.start()
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        try:
            while True:
                batches = await self.consumer.getmany(timeout_ms=100)
                for records in batches.values():
                    self.consumed.extend((r.topic, r.partition, r.offset) for r in records)
                if batches:
                    await self.consumer.commit()
        except BaseException as err:  # cancellation on leave lands here too
            if not isinstance(err, __import__("asyncio").CancelledError):
                self.error = err

    @property
    def member_id(self) -> str:
        # aiokafka keeps the broker-given member id on its coordinator
        return self.consumer._coordinator.member_id

    def owned(self) -> set[tuple[str, int]]:
        return set(self.assignor.kassign.owned)

    async def leave(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except BaseException:
                pass
        if self.consumer is not None:
            await self.consumer.stop()


async def async_wait_until(condition: Callable[[], bool], timeout: float, what: str, members: Iterable[Any] = ()) -> float:
    """:func:`wait_until` for asyncio tests: yields to the loop while waiting."""
    import asyncio

    start = time.monotonic()
    while time.monotonic() - start < timeout:
        for member in members:
            if getattr(member, "error", None) is not None:
                raise AssertionError(f"a consumer failed while waiting for {what}: {member.error!r}")
        if condition():
            return time.monotonic() - start
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class ConfluentMember:
    """A confluent-kafka (librdkafka) consumer with librdkafka's own ``strategy``, polling in a thread."""

    def __init__(self, bootstrap: str, group: str, topics: Iterable[str], strategy: str) -> None:
        from confluent_kafka import Consumer

        self.assigned: set[tuple[str, int]] = set()
        self.error: BaseException | None = None
        self.member_id = ""
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "partition.assignment.strategy": strategy,
            "enable.auto.commit": False, "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 300, "max.poll.interval.ms": 8000, "topic.metadata.refresh.interval.ms": 2000,
        })
        self.consumer.subscribe(list(topics), on_assign=self._on_assign, on_revoke=self._on_revoke)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        self.assigned = {(tp.topic, tp.partition) for tp in partitions}
        self.member_id = consumer.memberid()

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        self.assigned = set()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.consumer.poll(0.1)
        except BaseException as err:  # surfaced by the test
            self.error = err
        finally:
            self.consumer.close()

    def owned(self) -> set[tuple[str, int]]:
        return set(self.assigned)

    def leave(self) -> None:
        self._stop.set()
        self._thread.join(30)
