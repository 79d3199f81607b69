"""A TCP proxy on 127.0.0.1 that forwards bytes to a real broker and injects faults on demand.

It listens before the broker starts (``port`` is known at once), so the broker can advertise
the proxy's address in its metadata and every client connection, bootstrap and by node id,
goes through the proxy. Each accepted connection gets one upstream connection and two
forwarding threads.

A :class:`Fault` says what to do and when:

- ``kind``: ``"drop"`` (close the client's connection with a FIN), ``"reset"`` (close it with a
  TCP RST), ``"stall"`` (stop forwarding broker-to-client bytes, keep the socket open) or
  ``"refuse"`` (accept, then close at once without connecting upstream);
- ``api_key``: the fault is armed on a connection when the client sends a request with this
  API key (1 is Fetch) and disarmed by its next request of another key; None arms it on every
  connection accepted from then on, from its first byte;
- ``after``: bytes forwarded broker-to-client after arming, before the fault strikes (a
  ``drop`` with ``after`` smaller than the answer cuts it mid-response);
- ``times``: how many connections the fault hits, the first ones where it is armed (None: all).

``cut()`` closes every connection open at once (an RST by default), as a broker killed.

Requests are framed only while a fault with an ``api_key`` is set, so set faults while the
client is idle (between its calls), as the tests do. ``hits`` counts the faults injected, so a
test can check that its fault really happened.

Example::

    proxy = FaultProxy()                      # listening on 127.0.0.1:proxy.port
    proxy.upstream = ("127.0.0.1", broker_port)
    proxy.set_fault(Fault("drop", api_key=1, after=5000, times=1))  # the first Fetch answer is cut at 5000 bytes
    ...
    proxy.stop()
"""

from __future__ import annotations

import socket
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

from tests.brokers import Tansu


@dataclass
class Fault:
    kind: str  # "drop", "reset", "stall" or "refuse"
    api_key: int | None = None
    after: int = 0
    times: int | None = None


class _Link:
    """One client connection and its upstream connection."""

    def __init__(self, client: socket.socket, upstream: socket.socket | None) -> None:
        self.client, self.upstream = client, upstream
        self.armed = False  # the fault applies to this connection's current response
        self.forwarded = 0  # broker-to-client bytes forwarded since it was armed
        self.header = bytearray()  # the start (size, API key) of the client's next request
        self.skip = 0  # bytes of the client's current request still to come
        self.closed = False


class FaultProxy:
    """Forwards 127.0.0.1:``port`` to ``upstream``, with ``fault`` applied (None: plain forwarding)."""

    def __init__(self) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port: int = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.upstream: tuple[str, int] | None = None
        self.fault: Fault | None = None
        self.hits = 0
        self.accepted = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._links: list[_Link] = []
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, name=f"proxy-{self.port}", daemon=True)
        self._acceptor.start()

    # -- control ----------------------------------------------------------------------------------------------------

    def set_fault(self, fault: Fault | None) -> None:
        with self._lock:
            self.fault, self.hits = fault, 0

    def _take_hit(self) -> bool:
        """Whether the fault may hit one more connection (and count it)."""
        with self._lock:
            fault = self.fault
            if fault is None or (fault.times is not None and self.hits >= fault.times):
                return False
            self.hits += 1
            return True

    def cut(self, reset: bool = True) -> int:
        """Close every connection open now (with an RST, or a FIN), as a broker killed; returns how many."""
        with self._lock:
            links = [link for link in self._links if not link.closed]
        for link in links:
            self._close(link, reset=reset)
        return len(links)

    def stop(self) -> None:
        """Close the listener and every connection; join the threads."""
        self._stopping.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the acceptor's accept() (close alone does not)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            links = list(self._links)
        for link in links:
            self._close(link)
        self._acceptor.join(5)
        for thread in list(self._threads):
            thread.join(5)

    # -- forwarding -------------------------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.accepted += 1
            fault = self.fault
            if fault is not None and fault.kind == "refuse" and self._take_hit():
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.upstream, timeout=5) if self.upstream else None
            except OSError:
                upstream = None
            if upstream is None:
                client.close()
                continue
            upstream.settimeout(None)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(client, upstream)
            if fault is not None and fault.api_key is None and fault.kind != "refuse":
                link.armed = True
            with self._lock:
                self._links.append(link)
            for target in (self._client_to_broker, self._broker_to_client):
                thread = threading.Thread(target=target, args=(link,), daemon=True)
                self._threads.append(thread)
                thread.start()

    def _close(self, link: _Link, reset: bool = False) -> None:
        with self._lock:
            if link.closed:
                return
            link.closed = True
        for sock in (link.client, link.upstream):
            if sock is None:
                continue
            try:
                if reset and sock is link.client:
                    # linger 0: the close sends an RST; SHUT_RD wakes the thread blocked in recv on this
                    # socket (the kernel closes it only when that call returns) without sending a FIN
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    sock.shutdown(socket.SHUT_RD)
                else:
                    sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                sock.close()
            except OSError:
                pass

    def _client_to_broker(self, link: _Link) -> None:
        while not link.closed:
            try:
                data = link.client.recv(65536)
            except OSError:
                data = b""
            if not data:
                self._close(link)
                return
            self._watch_requests(link, data)
            try:
                link.upstream.sendall(data)
            except OSError:
                self._close(link)
                return

    def _watch_requests(self, link: _Link, data: bytes) -> None:
        """Frame the client's requests (int32 size, int16 API key, ...): a request with the fault's API
        key arms the fault for its response, any other request disarms it (the reader sends one
        request at a time, so the bytes that follow are that request's response)."""
        fault = self.fault
        if fault is None or fault.api_key is None:
            return
        view = memoryview(data)
        while view:
            if link.skip:
                n = min(link.skip, len(view))
                link.skip -= n
                view = view[n:]
                continue
            need = 6 - len(link.header)
            link.header += view[:need]
            view = view[need:]
            if len(link.header) == 6:
                size, api_key = struct.unpack(">ih", link.header)
                link.armed, link.forwarded = api_key == fault.api_key, 0
                link.skip = max(size - 2, 0)
                link.header.clear()

    def _broker_to_client(self, link: _Link) -> None:
        while not link.closed:
            try:
                data = link.upstream.recv(65536)
            except OSError:
                data = b""
            if not data:
                self._close(link)
                return
            fault = self.fault
            if link.armed and fault is not None and fault.kind in ("drop", "reset", "stall"):
                room = fault.after - link.forwarded
                if len(data) >= room and self._take_hit():
                    try:
                        link.client.sendall(data[:max(room, 0)])
                    except OSError:
                        pass
                    if fault.kind == "stall":
                        while not link.closed and not self._stopping.wait(0.05):
                            pass  # both sockets stay open, nothing more is forwarded
                        self._close(link)
                        return
                    self._close(link, reset=fault.kind == "reset")
                    return
                link.forwarded += len(data)
            try:
                link.client.sendall(data)
            except OSError:
                self._close(link)
                return


class RoutedTansu(Tansu):
    """tansu listening on 127.0.0.1:``port`` and advertising the proxy's 127.0.0.1:``proxy.port``: every client
    connection, bootstrap and by node id, goes through ``proxy``."""

    def __init__(self, binary: str, log_path: Path) -> None:
        self.proxy = FaultProxy()
        try:
            super().__init__(binary, log_path, advertised_port=self.proxy.port)
        except Exception:
            self.proxy.stop()
            raise
        self.proxy.upstream = ("127.0.0.1", self.port)

    def stop(self) -> None:
        super().stop()
        self.proxy.stop()
