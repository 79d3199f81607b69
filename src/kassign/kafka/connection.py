"""One connection to one broker: TCP (or TLS), SASL login, version negotiation, requests with deadlines.

Every call takes a ``deadline`` (``time.monotonic()`` seconds) and never blocks past it: the
socket's timeout is set to the time left before each send and receive. A broker that closes
the connection, answers with another correlation id, or sends something that is not a Kafka
response (an HTTP server's "HTTP/1.1 400" read as a 1.2 GB size) ends the call with
:class:`BrokerError`, one line that names the broker.

Versions: on connecting, ApiVersions v0 tells which versions the broker speaks; ``version()``
picks the highest one both sides know (see ``kassign.kafka.wire`` for kassign's ranges).

SASL: PLAIN and SCRAM-SHA-256/512 (RFC 5802, with the server's signature checked), through
SaslHandshake v1 and SaslAuthenticate (KIP-152), after TLS where the protocol is SASL_SSL.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import secrets
import socket
import ssl
import struct
import time

from kassign.core.errors import LiveClusterError
from kassign.kafka.config import ClientSettings
from kassign.kafka.flexible import FlexReader, is_flexible, request_header
from kassign.kafka.wire import MalformedResponse, Reader, Writer

API_FETCH, API_LIST_OFFSETS, API_METADATA = 1, 2, 3
API_OFFSET_FETCH, API_FIND_COORDINATOR, API_DESCRIBE_GROUPS = 9, 10, 15
API_SASL_HANDSHAKE, API_API_VERSIONS, API_SASL_AUTHENTICATE = 17, 18, 36
API_LIST_GROUPS, API_CONSUMER_GROUP_DESCRIBE, API_SHARE_GROUP_DESCRIBE = 16, 69, 77
API_STREAMS_GROUP_DESCRIBE, API_DESCRIBE_SHARE_GROUP_OFFSETS = 89, 90
API_DESCRIBE_CONFIGS, API_DESCRIBE_LOG_DIRS, API_DESCRIBE_CLUSTER = 32, 35, 60
API_LIST_PARTITION_REASSIGNMENTS = 46
API_ELECT_LEADERS, API_INCREMENTAL_ALTER_CONFIGS, API_ALTER_PARTITION_REASSIGNMENTS = 43, 44, 45
API_NAMES = {API_FETCH: "Fetch", API_LIST_OFFSETS: "ListOffsets", API_METADATA: "Metadata",
             API_OFFSET_FETCH: "OffsetFetch", API_FIND_COORDINATOR: "FindCoordinator", API_DESCRIBE_GROUPS: "DescribeGroups",
             API_SASL_HANDSHAKE: "SaslHandshake", API_API_VERSIONS: "ApiVersions",
             API_SASL_AUTHENTICATE: "SaslAuthenticate", API_LIST_GROUPS: "ListGroups",
             API_CONSUMER_GROUP_DESCRIBE: "ConsumerGroupDescribe", API_SHARE_GROUP_DESCRIBE: "ShareGroupDescribe",
             API_STREAMS_GROUP_DESCRIBE: "StreamsGroupDescribe",
             API_DESCRIBE_SHARE_GROUP_OFFSETS: "DescribeShareGroupOffsets", API_DESCRIBE_CONFIGS: "DescribeConfigs",
             API_DESCRIBE_LOG_DIRS: "DescribeLogDirs", API_DESCRIBE_CLUSTER: "DescribeCluster",
             API_LIST_PARTITION_REASSIGNMENTS: "ListPartitionReassignments", API_ELECT_LEADERS: "ElectLeaders",
             API_INCREMENTAL_ALTER_CONFIGS: "IncrementalAlterConfigs",
             API_ALTER_PARTITION_REASSIGNMENTS: "AlterPartitionReassignments"}
MAX_RESPONSE = 1 << 30  # a bigger "size" is not a Kafka response (HTTP's "HTTP" reads as 1.2e9)
_SIZE = struct.Struct(">i")
_correlation = itertools.count(1)


class BrokerError(LiveClusterError):
    """A broker could not be reached, refused us, or answered something unusable."""


class AuthenticationError(BrokerError):
    """The broker refused the login."""


class CertificateError(AuthenticationError):
    """The broker's TLS certificate is not trusted (or the broker refused ours): retrying cannot help."""


class NotKafka(BrokerError):
    """The other end does not speak Kafka's protocol (an HTTP server, a wrong port): retrying cannot help."""


class ConnectionLost(BrokerError):
    """The broker closed or reset the connection during a request (worth one retry on a new one)."""


def remaining(deadline: float) -> float:
    return deadline - time.monotonic()


class BrokerConnection:
    """A connected, logged-in broker connection. Not thread-safe: one request at a time."""

    def __init__(self, host: str, port: int, settings: ClientSettings, deadline: float) -> None:
        self.host, self.port, self.settings = host, port, settings
        self.address = f"{host}:{port}"
        self.versions: dict[int, tuple[int, int]] = {}
        self._sock = self._connect(deadline)
        try:
            self.versions = self._api_versions(deadline)
            if settings.uses_sasl:
                self._login(deadline)
        except BaseException:
            self.close()
            raise

    # -- transport ------------------------------------------------------------------------------------------------

    def _connect(self, deadline: float) -> socket.socket:
        left = remaining(deadline)
        if left <= 0:
            raise BrokerError(f"no time left to connect to {self.address}")
        try:
            sock = socket.create_connection((self.host, self.port), timeout=left)
        except socket.timeout:
            raise BrokerError(f"cannot connect to {self.address}: no answer within the deadline") from None
        except OSError as err:
            raise BrokerError(f"cannot connect to {self.address}: {err.strerror or err}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not self.settings.uses_tls:
            return sock
        try:
            sock.settimeout(max(remaining(deadline), 0.001))
            return self.settings.ssl_context().wrap_socket(sock, server_hostname=self.host)
        except ssl.SSLCertVerificationError as err:
            sock.close()
            why = err.verify_message or err.reason or str(err)
            raise CertificateError(f"TLS with {self.address} failed: its certificate is not trusted: {why}") from None
        except (ssl.SSLError, ssl.CertificateError) as err:
            sock.close()
            raise BrokerError(f"TLS with {self.address} failed: {getattr(err, 'reason', None) or err}") from None
        except (socket.timeout, OSError) as err:
            sock.close()
            raise BrokerError(f"TLS with {self.address} failed: {err.strerror or err or 'timed out'}") from None

    def close(self) -> None:
        sock, self._sock = getattr(self, "_sock", None), None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    def _io_timeout(self, deadline: float, what: str) -> None:
        left = remaining(deadline)
        if left <= 0:
            raise BrokerError(f"{self.address} did not answer {what} within the deadline")
        self._sock.settimeout(left)

    def _receive_exactly(self, size: int, deadline: float, what: str) -> bytearray:
        buffer = bytearray(size)
        view = memoryview(buffer)
        got = 0
        while got < size:
            self._io_timeout(deadline, what)
            try:
                n = self._sock.recv_into(view[got:], min(size - got, 1 << 22))
            except socket.timeout:
                raise BrokerError(f"{self.address} did not answer {what} within the deadline") from None
            except (ssl.SSLError, OSError) as err:
                raise ConnectionLost(f"{self.address} dropped the connection during {what}: "
                                     f"{getattr(err, 'strerror', None) or err}") from None
            if n == 0:
                raise ConnectionLost(f"{self.address} closed the connection during {what}")
            got += n
        return buffer

    def request(self, api_key: int, version: int, body: bytes, deadline: float) -> FlexReader:
        """Send one request and return a reader over its response body (after the response header).
        Flexible versions (``kassign.kafka.flexible``) get header v2, their answer's header v1 is read past,
        and the reader reads compact types."""
        if self._sock is None:
            raise ConnectionLost(f"connection to {self.address} is closed")
        what = f"{API_NAMES.get(api_key, f'API {api_key}')} v{version}"
        correlation = next(_correlation) & 0x7FFFFFFF
        payload = request_header(api_key, version, correlation, self.settings.client_id) + body
        try:
            self._io_timeout(deadline, what)
            self._sock.sendall(_SIZE.pack(len(payload)) + payload)
        except socket.timeout:
            self.close()
            raise BrokerError(f"{self.address} did not take {what} within the deadline") from None
        except (ssl.SSLError, OSError) as err:
            self.close()
            raise ConnectionLost(f"{self.address} dropped the connection sending {what}: "
                                 f"{getattr(err, 'strerror', None) or err}") from None
        try:
            raw = self._receive_exactly(4, deadline, what)
            size = _SIZE.unpack(raw)[0]
            if not 4 <= size <= MAX_RESPONSE:
                shown = bytes(raw).decode("ascii", "replace")
                raise NotKafka(f"{self.address} is not a Kafka broker (its answer to {what} begins {shown!r})")
            response = self._receive_exactly(size, deadline, what)
        except BaseException:
            self.close()  # a half-read response leaves the stream unusable
            raise
        reader = FlexReader(response, False)
        if reader.int32() != correlation:
            self.close()
            raise NotKafka(f"{self.address} answered {what} out of turn (correlation id mismatch)")
        reader.flexible = is_flexible(api_key, version)
        if reader.flexible and api_key != API_API_VERSIONS:  # ApiVersions answers with header v0 at every version
            try:
                reader.tags()
            except MalformedResponse as err:
                raise NotKafka(f"{self.address} sent a malformed response header to {what}: {err}") from None
        return reader

    # -- versions -------------------------------------------------------------------------------------------------

    def _api_versions(self, deadline: float) -> dict[int, tuple[int, int]]:
        reader = self.request(API_API_VERSIONS, 0, b"", deadline)
        try:
            error = reader.int16()
            entries = reader.array(lambda r: (r.int16(), r.int16(), r.int16()))
        except MalformedResponse as err:
            raise NotKafka(f"{self.address} sent a malformed ApiVersions response: {err}") from None
        if error != 0:
            raise BrokerError(f"{self.address} refused ApiVersions (error {error})")
        return {key: (low, high) for key, low, high in entries}

    def version(self, api_key: int, lowest: int, highest: int) -> int:
        """The highest version of ``api_key`` in ``[lowest, highest]`` that the broker speaks."""
        low, high = self.versions.get(api_key, (-1, -1))
        chosen = min(high, highest)
        if chosen < max(low, lowest):
            name = API_NAMES.get(api_key, str(api_key))
            spoken = f"v{low}-v{high}" if high >= 0 else "no version"
            raise BrokerError(f"{self.address} speaks {name} {spoken}; kassign's reader needs one of "
                              f"v{lowest}-v{highest}")
        return chosen

    # -- SASL -----------------------------------------------------------------------------------------------------

    def _login(self, deadline: float) -> None:
        mechanism = self.settings.sasl_mechanism or "PLAIN"
        try:
            reader = self.request(API_SASL_HANDSHAKE, self.version(API_SASL_HANDSHAKE, 1, 1),
                                  Writer().string(mechanism).bytes(), deadline)
        except ConnectionLost:  # tansu closes the connection on a mechanism it does not offer
            raise AuthenticationError(f"authentication failed at {self.address}: it closed the connection on the "
                                      f"SASL {mechanism} handshake (it may not offer {mechanism}; check "
                                      "sasl.mechanism)") from None
        error = reader.int16()
        offered = reader.array(Reader.string)
        if error == 33:
            raise AuthenticationError(f"{self.address} does not offer SASL {mechanism} (it offers "
                                      f"{', '.join(m for m in offered if m) or 'none'})")
        if error != 0:
            raise AuthenticationError(f"{self.address} refused the SASL handshake (error {error})")
        user, password = self.settings.username or "", self.settings.password or ""
        try:
            if mechanism == "PLAIN":
                self._authenticate(f"\0{user}\0{password}".encode(), deadline)
                return
            self._scram(mechanism, user, password, deadline)
        except ConnectionLost:
            raise AuthenticationError(f"authentication failed at {self.address}: it closed the connection during "
                                      f"the SASL {mechanism} login (check the credentials)") from None

    def _authenticate(self, data: bytes, deadline: float) -> bytes:
        version = self.version(API_SASL_AUTHENTICATE, 0, 1)
        reader = self.request(API_SASL_AUTHENTICATE, version, Writer().blob(data).bytes(), deadline)
        error = reader.int16()
        message = reader.string()
        answer = reader.blob()
        if error != 0:
            why = " ".join((message or f"error {error}").split())
            raise AuthenticationError(f"authentication failed at {self.address}: {why}")
        return bytes(answer or b"")

    def _scram(self, mechanism: str, user: str, password: str, deadline: float) -> None:
        digest = hashlib.sha256 if mechanism == "SCRAM-SHA-256" else hashlib.sha512
        name = user.replace("=", "=3D").replace(",", "=2C")
        client_nonce = base64.b64encode(secrets.token_bytes(24)).decode()
        first_bare = f"n={name},r={client_nonce}"
        server_first = self._authenticate(f"n,,{first_bare}".encode(), deadline).decode("utf-8", "replace")
        fields = dict(part.split("=", 1) for part in server_first.split(",") if "=" in part)
        if "e" in fields:
            raise AuthenticationError(f"authentication failed at {self.address}: {fields['e']}")
        try:
            nonce, salt, rounds = fields["r"], base64.b64decode(fields["s"]), int(fields["i"])
        except (KeyError, ValueError):
            raise AuthenticationError(f"{self.address} sent a malformed SCRAM challenge") from None
        if not nonce.startswith(client_nonce) or not 1 <= rounds <= 10_000_000:
            raise AuthenticationError(f"{self.address} sent an invalid SCRAM challenge")
        salted = hashlib.pbkdf2_hmac(digest().name, password.encode("utf-8"), salt, rounds)
        client_key = hmac.new(salted, b"Client Key", digest).digest()
        final_bare = f"c={base64.b64encode(b'n,,').decode()},r={nonce}"
        auth_message = f"{first_bare},{server_first},{final_bare}".encode()
        signature = hmac.new(digest(client_key).digest(), auth_message, digest).digest()
        proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature))).decode()
        server_final = self._authenticate(f"{final_bare},p={proof}".encode(), deadline).decode("utf-8", "replace")
        server_key = hmac.new(salted, b"Server Key", digest).digest()
        expected = base64.b64encode(hmac.new(server_key, auth_message, digest).digest()).decode()
        if server_final.startswith("e="):
            raise AuthenticationError(f"authentication failed at {self.address}: {server_final[2:]}")
        if server_final != f"v={expected}":
            raise AuthenticationError(f"{self.address} could not prove it knows the SCRAM credentials")
