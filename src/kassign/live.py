"""Read a live Kafka cluster's metadata (confluent-kafka's AdminClient): partition counts, replica
lists with leaders and broker racks, and the current assignment in kafka-reassign-partitions.sh's
JSON shape. Every call ends within ``timeout`` seconds with the data or one :class:`LiveClusterError`.

Example::

    from kassign import live
    live.partition_counts("broker:9092", ["orders"])            # {"orders": 12}
    layout = live.read_layout("broker:9092", ["orders"])
    layout.brokers                                              # {1: "rack-a", 2: "rack-b", 3: None}
    live.current_assignment("broker:9092", ["orders"])          # {"version": 1, "partitions": [...]}

``config`` takes client properties (``--command-config FILE``, read with
:func:`read_command_config`): librdkafka names, plus the common Java names translated
(``sasl.mechanism``, ``sasl.jaas.config`` with a username and password, ``ssl.truststore.location``
of a PEM file).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kassign.errors import LiveClusterError

DEFAULT_TIMEOUT = 10.0
_FIRST_ATTEMPT = 0.5  # seconds; each metadata attempt waits twice as long as the last (a refused login ends early)
_AUTH_CODES = {"_AUTHENTICATION", "SASL_AUTHENTICATION_FAILED", "_SSL", "TOPIC_AUTHORIZATION_FAILED",
               "CLUSTER_AUTHORIZATION_FAILED"}


@dataclass(frozen=True)
class PartitionLayout:
    partition: int
    leader: int | None  # None: no leader right now
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass
class ClusterLayout:
    """Brokers (id -> rack or None) and, per topic, its partitions in order."""

    brokers: dict[int, str | None] = field(default_factory=dict)
    topics: dict[str, list[PartitionLayout]] = field(default_factory=dict)


# ---------------------------------------------------------------- settings


def _librdkafka_settings(config: Mapping[str, str]) -> dict[str, str]:
    """Java client property names translated to librdkafka's where they differ."""
    out: dict[str, str] = {}
    for key, value in config.items():
        if key == "sasl.mechanism":
            out["sasl.mechanisms"] = value
        elif key == "sasl.jaas.config":
            user = re.search(r'username\s*=\s*"([^"]*)"', value)
            password = re.search(r'password\s*=\s*"([^"]*)"', value)
            if user:
                out["sasl.username"] = user.group(1)
            if password:
                out["sasl.password"] = password.group(1)
        elif key == "ssl.truststore.location":
            out["ssl.ca.location"] = value
        elif key in ("ssl.truststore.type", "ssl.truststore.password", "client.dns.lookup"):
            continue  # no librdkafka equivalent needed for a PEM trust store
        else:
            out[key] = value
    return out


class _Errors:
    """What librdkafka reported while we waited: its asynchronous errors (``error_cb``) and the
    connection failures it logged, to explain a failure in one line. Both arrive when the client
    is polled (:func:`_drain`)."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.closed_by_peer = 0  # connections the broker closed after accepting them
        self.failures: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, err: Any) -> None:
        with self.lock:
            self.seen.append(err)

    def log(self, message: str) -> None:
        with self.lock:
            if "connection closed by peer" in message or "connection reset by peer" in message:
                self.closed_by_peer += 1
            self.failures.append(message)

    def authentication(self) -> str | None:
        """librdkafka's own words for the last refused login, or None."""
        with self.lock:
            auth = [e for e in self.seen if e.name() in _AUTH_CODES]
        return _one_line(auth[-1].str()) if auth else None

    def explain(self) -> str | None:
        with self.lock:
            chosen = next((e for e in reversed(self.seen) if e.name() != "_ALL_BROKERS_DOWN"), None)
            failure = self.failures[-1] if self.failures else None
        if chosen is not None:
            return _one_line(chosen.str())
        return _one_line(failure) if failure else None


class _LogTap(logging.Logger):
    """A logger for librdkafka that keeps its connection failures in ``errors`` and prints nothing."""

    def __init__(self, errors: _Errors) -> None:
        super().__init__("kassign.live.librdkafka")
        self.addHandler(logging.NullHandler())
        self.propagate = False
        self.errors = errors

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:  # type: ignore[override]
        text = str(msg) % args if args else str(msg)
        if level >= logging.WARNING or "FAIL" in text:
            self.errors.log(text)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _admin(bootstrap: str, config: Mapping[str, str] | None, timeout: float, errors: _Errors) -> Any:
    try:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient
    except ImportError:
        raise LiveClusterError("reading a cluster needs confluent-kafka: pip install 'kassign[confluent]'") from None
    settings: dict[str, Any] = {
        **_librdkafka_settings(config or {}),
        "bootstrap.servers": bootstrap,
        "error_cb": errors,
        "logger": _LogTap(errors),  # librdkafka's connection chatter is summarised in our one error
        "socket.connection.setup.timeout.ms": max(1000, int(timeout * 1000)),
    }
    try:
        return AdminClient(settings)
    except (KafkaException, ValueError, TypeError) as err:
        raise LiveClusterError(f"bad client settings: {_message(err)}") from None


def _drain(admin: Any) -> None:
    """Serve librdkafka's queued callbacks (errors, logs) on this thread."""
    try:
        admin.poll(0)
    except Exception:  # a callback's own failure must not hide the error being explained
        pass


def _metadata(admin: Any, bootstrap: str, timeout: float, deadline: float, errors: _Errors) -> Any:
    """The cluster's metadata, retried until ``deadline``; a refused login or a broker that keeps
    closing fresh connections ends the wait at once with its reason."""
    from confluent_kafka import KafkaException

    last: BaseException | None = None
    attempt = _FIRST_ATTEMPT
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            # All topics in one request: asking for a named topic may make the broker auto-create it.
            return admin.list_topics(timeout=min(remaining, attempt))
        except KafkaException as err:
            last = err
        attempt *= 2
        _drain(admin)
        refused = errors.authentication()
        if refused is not None:
            raise LiveClusterError(f"authentication failed at {bootstrap}: {refused}")
        if errors.closed_by_peer >= 2:
            raise LiveClusterError(
                f"{bootstrap} closed every connection right after accepting it: the cluster may require "
                "authentication or TLS (put security settings in --command-config)")
        time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
    _drain(admin)
    refused = errors.authentication()
    if refused is not None:
        raise LiveClusterError(f"authentication failed at {bootstrap}: {refused}")
    reason = errors.explain() or (_message(last) if last is not None else "no answer")
    raise LiveClusterError(f"cannot read metadata from {bootstrap} within {timeout:g} s: {reason}")


def _message(err: BaseException) -> str:
    inner = err.args[0] if err.args else err
    return _one_line(inner.str() if hasattr(inner, "str") else str(inner))


# ---------------------------------------------------------------- reading


def read_layout(bootstrap: str, topics: Iterable[str] | None = None, *, config: Mapping[str, str] | None = None,
                timeout: float = DEFAULT_TIMEOUT) -> ClusterLayout:
    """Brokers with racks and, for ``topics`` (all non-internal topics when None), every partition's
    leader, replicas and in-sync replicas. Unknown topics raise :class:`LiveClusterError`."""
    deadline = time.monotonic() + timeout
    errors = _Errors()
    admin = _admin(bootstrap, config, timeout, errors)
    metadata = _metadata(admin, bootstrap, timeout, deadline, errors)
    wanted = [t for t in metadata.topics if not t.startswith("__")] if topics is None else list(dict.fromkeys(topics))
    missing = [t for t in wanted if t not in metadata.topics or metadata.topics[t].error is not None]
    if missing:
        raise LiveClusterError(f"unknown topic{'s' if len(missing) > 1 else ''} on {bootstrap}: {', '.join(missing)}")
    layout = ClusterLayout(brokers=_broker_racks(admin, metadata, deadline))
    for name in wanted:
        parts = metadata.topics[name].partitions
        layout.topics[name] = [
            PartitionLayout(p, parts[p].leader if parts[p].leader >= 0 else None, tuple(parts[p].replicas),
                            tuple(parts[p].isrs))
            for p in sorted(parts)
        ]
    return layout


def _broker_racks(admin: Any, metadata: Any, deadline: float) -> dict[int, str | None]:
    """Broker id -> rack, or None where unknown.

    confluent-kafka's metadata carries no racks, so they come from DescribeCluster, which
    librdkafka sends to the controller. A cluster whose metadata names no controller among its
    brokers (librdkafka's mock cluster reports controller 0 beside brokers 1..N) would only make
    that request wait out the timeout, so it is not asked; nor when no time is left."""
    racks: dict[int, str | None] = {b: None for b in sorted(metadata.brokers)}
    remaining = deadline - time.monotonic()
    if metadata.controller_id not in metadata.brokers or remaining <= 0.05:
        return racks
    try:
        described = admin.describe_cluster(request_timeout=remaining).result(timeout=remaining + 1)
    except Exception:  # an older broker without DescribeCluster: racks stay unknown
        return racks
    for node in described.nodes:
        racks[node.id] = node.rack or None
    return racks


def partition_counts(bootstrap: str, topics: Iterable[str], *, config: Mapping[str, str] | None = None,
                     timeout: float = DEFAULT_TIMEOUT) -> dict[str, int]:
    """Topic -> partition count, from the cluster's metadata (for ``kassign partition --bootstrap-server``)."""
    layout = read_layout(bootstrap, topics, config=config, timeout=timeout)
    return {t: len(parts) for t, parts in layout.topics.items()}


def current_assignment(bootstrap: str, topics: Iterable[str] | None = None, *,
                       config: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """The current replica assignment in kafka-reassign-partitions.sh's JSON shape (for ``kassign plan``)."""
    layout = read_layout(bootstrap, topics, config=config, timeout=timeout)
    return {"version": 1, "partitions": [
        {"topic": t, "partition": p.partition, "replicas": list(p.replicas)}
        for t, parts in layout.topics.items() for p in parts
    ]}


def brokers(bootstrap: str, *, config: Mapping[str, str] | None = None,
            timeout: float = DEFAULT_TIMEOUT) -> list[tuple[int, str | None]]:
    """``[(broker id, rack or None), ...]``, the shape ``plan_reassignment`` and ``assign_replicas`` take."""
    return sorted(read_layout(bootstrap, [], config=config, timeout=timeout).brokers.items())


def rack_problems(layout: ClusterLayout) -> list[str]:
    """Partitions whose replicas could spread over more racks than they do (only when every broker has a rack)."""
    racks = layout.brokers
    if not racks or any(r is None for r in racks.values()):
        return []
    available = len(set(racks.values()))
    problems = []
    for topic, parts in layout.topics.items():
        for p in parts:
            used = {racks.get(b) for b in p.replicas}
            best = min(available, len(p.replicas))
            if len(used) < best:
                problems.append(f"{topic}-{p.partition}: replicas {list(p.replicas)} on {len(used)} rack(s), "
                                f"{best} possible")
    return problems
