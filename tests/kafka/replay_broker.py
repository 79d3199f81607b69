"""A pretend Kafka broker on 127.0.0.1 that answers with bytes the test gives it (captured or built).

It frames requests (header v1, or v2 for flexible versions), answers ApiVersions v0 with the version
ranges it was given, FindCoordinator (every version) with itself as node ``node_id``, and any other
API from ``answers``: ``{api_key: body bytes, or handler(version, body) -> body bytes or None}``
(None closes the connection; a handler may also sleep to stall). An API it has no answer for closes
the connection, as a broker does for an API it does not speak. The response header is v0 or v1 as
Kafka writes it, with the request's correlation id. ``requests`` records (api_key, version, body).

Example::

    broker = ReplayBroker({16: (0, 5), 69: (0, 1)}, {16: list_groups_body, 69: describe_body})
    ...  # kassign connects to broker.bootstrap
    broker.stop()
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Mapping

from kassign.kafka.flexible import FlexReader, FlexWriter, is_flexible

Answer = bytes | Callable[[int, bytes], bytes | None]


def capture_body(api_key: int, version: int, frame: bytes) -> bytes:
    """A captured answer's body: the frame without its correlation id and header tagged fields."""
    return frame[5:] if is_flexible(api_key, version) and api_key != 18 else frame[4:]


def list_offsets_asked(version: int, body: bytes) -> list[tuple[str, list[tuple[int, int]]]]:
    """A ListOffsets request (v1-v5, not flexible) as ``[(topic, [(partition, timestamp), ...]), ...]``."""
    r = FlexReader(body, False)
    r.int32()  # replica id
    if version >= 2:
        r.int8()  # isolation level
    asked = []
    for _ in range(r.int32()):
        name = r.text()
        parts = []
        for _ in range(r.int32()):
            index = r.int32()
            if version >= 4:
                r.int32()  # current leader epoch
            parts.append((index, r.int64()))
        asked.append((name, parts))
    return asked


def api_versions_v0(versions: Mapping[int, tuple[int, int]]) -> bytes:
    w = FlexWriter(False).int16(0)
    w.array(sorted(versions.items()), lambda w, kv: w.int16(kv[0]).int16(kv[1][0]).int16(kv[1][1]))
    return w.bytes()


def find_coordinator_answer(version: int, key: str, node: int, host: str, port: int, error: int = 0) -> bytes:
    w = FlexWriter(is_flexible(10, version))
    if version >= 1:
        w.int32(0)
    if version <= 3:
        w.int16(error)
        if version >= 1:
            w.string(None)
        w.int32(node).string(host).int32(port)
    else:
        w.array([key], lambda w, k: w.string(k).int32(node).string(host).int32(port).int16(error).string(None).tags())
    return w.tags().bytes()


class ReplayBroker:
    def __init__(self, versions: Mapping[int, tuple[int, int]], answers: Mapping[int, Answer],
                 node_id: int = 1) -> None:
        self.versions = {18: (0, 0), 10: (0, 6), **versions}
        self.answers = dict(answers)
        self.node_id = node_id
        self.requests: list[tuple[int, int, bytes]] = []
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self.bootstrap = f"127.0.0.1:{self.port}"
        self._stopping = threading.Event()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self) -> None:
        self._stopping.set()
        self._listener.close()
        for sock in self._sockets:
            try:
                sock.close()
            except OSError:
                pass

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            self._sockets.append(sock)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    @staticmethod
    def _read(sock: socket.socket, size: int) -> bytes | None:
        data = bytearray()
        while len(data) < size:
            try:
                chunk = sock.recv(size - len(data))
            except OSError:
                return None
            if not chunk:
                return None
            data += chunk
        return bytes(data)

    def _serve(self, sock: socket.socket) -> None:
        with sock:
            while True:
                head = self._read(sock, 4)
                if head is None:
                    return
                frame = self._read(sock, struct.unpack(">i", head)[0])
                if frame is None:
                    return
                reader = FlexReader(frame, False)
                api_key, version, correlation = reader.int16(), reader.int16(), reader.int32()
                reader.string()
                if is_flexible(api_key, version):
                    reader.flexible = True
                    reader.tags()
                body = frame[reader.pos:]
                self.requests.append((api_key, version, body))
                answer = self._answer(api_key, version, body)
                if answer is None:
                    return
                header = struct.pack(">i", correlation)
                if is_flexible(api_key, version) and api_key != 18:
                    header += b"\x00"
                try:
                    sock.sendall(struct.pack(">i", len(header) + len(answer)) + header + answer)
                except OSError:
                    return

    def _answer(self, api_key: int, version: int, body: bytes) -> bytes | None:
        if api_key == 18 and version == 0:
            return api_versions_v0(self.versions)
        if api_key == 10 and 10 not in self.answers:
            reader = FlexReader(body, is_flexible(10, version))
            if version <= 3:
                key = reader.text()
            else:
                reader.int8()  # key type
                key = reader.strings()[0]
            return find_coordinator_answer(version, key, self.node_id, "127.0.0.1", self.port)
        answer = self.answers.get(api_key)
        if answer is None or isinstance(answer, bytes):
            return answer
        return answer(version, body)
