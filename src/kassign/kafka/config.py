"""Client properties for kassign's Kafka reader: the ``--command-config`` file of the Kafka tools.

Java client names are read as the Kafka tools read them, and librdkafka's spellings of the same
settings are accepted too (``sasl.mechanisms``, ``sasl.username``/``sasl.password``,
``ssl.ca.location``...). What the reader cannot honour is an error that says so, never a silent
plaintext connection: SASL mechanisms other than PLAIN and SCRAM-SHA-256/512, JKS or PKCS12
stores (give PEM files).

Example (``client.properties``)::

    security.protocol=SASL_SSL
    sasl.mechanism=SCRAM-SHA-512
    sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";
    ssl.truststore.location=/etc/kafka/ca.pem

``read_command_config(path)`` gives the properties, ``ClientSettings.from_properties`` checks them.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kassign.core.errors import LiveClusterError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
ISOLATION_LEVELS = {"read_uncommitted": 0, "read_committed": 1}
DEFAULT_REQUEST_TIMEOUT = 30.0  # seconds, Java's request.timeout.ms
DEFAULT_FETCH_MAX_BYTES = 50 * 1024 * 1024  # Java's fetch.max.bytes
DEFAULT_PARTITION_FETCH_BYTES = 8 * 1024 * 1024  # larger than Java's 1 MiB: one partition per request here


def read_command_config(path: str | Path) -> dict[str, str]:
    """Client properties from a Java-style ``.properties`` file (``key=value``, ``#`` and ``!`` comments)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        detail = getattr(err, "strerror", None) or str(err)
        raise LiveClusterError(f"cannot read --command-config {path}: {detail}") from None
    props: dict[str, str] = {}
    lines = enumerate(text.splitlines(), 1)
    for number, line in lines:
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        while (len(line) - len(line.rstrip("\\"))) % 2:  # an odd number of backslashes: it goes on (as in Java)
            line = line[:-1] + next(lines, (number, ""))[1].lstrip()
        match = re.match(r"([^=:\s]+)\s*[=:]\s*(.*)$", line)
        if match is None:
            raise LiveClusterError(f"--command-config {path} line {number}: expected key=value, got {line!r}")
        props[match.group(1)] = match.group(2)
    return props


def _jaas_credentials(value: str) -> tuple[str | None, str | None]:
    user = re.search(r'username\s*=\s*"([^"]*)"', value)
    password = re.search(r'password\s*=\s*"([^"]*)"', value)
    return (user.group(1) if user else None), (password.group(1) if password else None)


def _whole(props: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    text = props.get(name)
    if text is None:
        return default
    try:
        value = int(str(text).strip())
    except ValueError:
        raise LiveClusterError(f"client property {name} must be a whole number, got {text!r}") from None
    if not low <= value <= high:
        raise LiveClusterError(f"client property {name} must be between {low} and {high}, got {value}")
    return value


def _pem_only(props: Mapping[str, str], kind: str) -> None:
    store_type = props.get(f"ssl.{kind}.type", "PEM").strip().upper()
    location = props.get(f"ssl.{kind}.location", "")
    if store_type != "PEM" or location.lower().endswith((".jks", ".p12", ".pfx")):
        raise LiveClusterError(f"ssl.{kind}.location must be a PEM file for kassign's reader (got "
                               f"{store_type if store_type != 'PEM' else location}); convert it, e.g. "
                               "keytool -exportcert -rfc or openssl pkcs12 -nodes")


@dataclass(frozen=True)
class ClientSettings:
    """What a connection needs: security, credentials, timeouts and fetch sizes."""

    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = None
    ssl_ca: str | None = None
    ssl_certificate: str | None = None
    ssl_key: str | None = None
    ssl_key_password: str | None = None
    check_hostname: bool = True
    isolation_level: int = 0
    client_id: str = "kassign"
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    fetch_max_bytes: int = DEFAULT_FETCH_MAX_BYTES
    partition_fetch_bytes: int = DEFAULT_PARTITION_FETCH_BYTES
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol.startswith("SASL_")

    @classmethod
    def from_properties(cls, props: Mapping[str, str] | None) -> ClientSettings:
        """Checked settings from client properties (Java or librdkafka names)."""
        props = {str(k).strip(): str(v).strip() for k, v in (props or {}).items()}
        for name, value in props.items():  # error messages quote values: each must be one line
            if name != "sasl.jaas.config" and ("\n" in name + value or "\r" in name + value):
                raise LiveClusterError(f"client property {name!r} must be on one line (it holds a line break)")
        protocol = props.get("security.protocol", "PLAINTEXT").upper()
        if protocol not in PROTOCOLS:
            raise LiveClusterError(f"security.protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
        mechanism = (props.get("sasl.mechanism") or props.get("sasl.mechanisms") or "GSSAPI").upper()
        username, password = _jaas_credentials(props.get("sasl.jaas.config", ""))
        username = props.get("sasl.username", username)
        password = props.get("sasl.password", password)
        if protocol.startswith("SASL_"):
            if mechanism not in MECHANISMS:
                raise LiveClusterError(f"sasl.mechanism {mechanism} is not supported by kassign's reader; "
                                       f"use one of {', '.join(MECHANISMS)}")
            if username is None or password is None:
                raise LiveClusterError("SASL needs a username and password: sasl.jaas.config with username=\"...\" "
                                       "password=\"...\" (or sasl.username and sasl.password)")
        if "ssl.truststore.location" in props:
            _pem_only(props, "truststore")
        if "ssl.keystore.location" in props:
            _pem_only(props, "keystore")
        isolation = props.get("isolation.level", "read_uncommitted").lower()
        if isolation not in ISOLATION_LEVELS:
            raise LiveClusterError(f"isolation.level must be read_uncommitted or read_committed, got {isolation!r}")
        settings = cls(
            security_protocol=protocol,
            sasl_mechanism=mechanism if protocol.startswith("SASL_") else None,
            username=username, password=password,
            ssl_ca=props.get("ssl.truststore.location") or props.get("ssl.ca.location"),
            ssl_certificate=props.get("ssl.keystore.location") or props.get("ssl.certificate.location"),
            ssl_key=props.get("ssl.key.location") or props.get("ssl.keystore.location"),
            ssl_key_password=props.get("ssl.key.password"),
            check_hostname=props.get("ssl.endpoint.identification.algorithm", "https").lower() == "https",
            isolation_level=ISOLATION_LEVELS[isolation],
            client_id=props.get("client.id", "kassign") or "kassign",
            request_timeout=_whole(props, "request.timeout.ms", int(DEFAULT_REQUEST_TIMEOUT * 1000), 100,
                                   3_600_000) / 1000,
            fetch_max_bytes=_whole(props, "fetch.max.bytes", DEFAULT_FETCH_MAX_BYTES, 1024, 1 << 30),
            partition_fetch_bytes=_whole(props, "max.partition.fetch.bytes", DEFAULT_PARTITION_FETCH_BYTES, 1024,
                                         1 << 30),
            extra=props,
        )
        if settings.uses_tls:
            settings.ssl_context()  # unreadable files fail here, before any connection
        return settings

    def ssl_context(self) -> ssl.SSLContext:
        """A TLS context from the PEM files named (the system's CAs when none is)."""
        try:
            context = ssl.create_default_context(cafile=self.ssl_ca)
            context.check_hostname = self.check_hostname
            if not self.check_hostname:
                context.verify_mode = ssl.CERT_REQUIRED if self.ssl_ca else ssl.CERT_NONE
            if self.ssl_certificate:
                context.load_cert_chain(self.ssl_certificate, self.ssl_key, self.ssl_key_password)
        except (OSError, ssl.SSLError, ValueError) as err:
            raise LiveClusterError(f"cannot set up TLS from the client properties: {err}") from None
        return context

    def as_properties(self) -> dict[str, str]:
        """The properties these settings came from (to hand to Spark executors)."""
        return dict(self.extra)
