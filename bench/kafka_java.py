"""Kafka's own assignors, timed in the same run as kassign (bench/java/KafkaAssignorBench.java).

The benchmarks take ``--kafka-classpath PATH``: Kafka's compiled classes and what they need at run time,
as ``java -cp`` takes it, e.g. ``'kafka_2.13-3.9.0/libs/*'`` from a Kafka download (kafka-clients,
kafka-group-coordinator, kafka-group-coordinator-api, kafka-server-common, slf4j-api). The harness is
compiled against that classpath into a temporary folder, started once, and fed the scenario kassign
runs; its JVM stays up, so kassign's runs and Kafka's alternate and each side is timed warm.

Without a classpath the benchmarks print "Kafka's figure needs --kafka-classpath" and keep their
documented reference figure only as a labelled note.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kassign.groups.consumer.group import derived_topic_id

HARNESS = Path(__file__).resolve().parent / "java" / "KafkaAssignorBench.java"
NEEDS_CLASSPATH = "Kafka's figure needs --kafka-classpath"


def write_scenario_file(scenario: Mapping[str, Any], path: Path) -> None:
    """The scenario in the harness's whitespace-separated format (see the harness's class comment).

    Topic ids are the scenario's ``topic_ids``, else the ones kassign derives from the names, so
    both sides order topics alike. Every subscribed or owned topic must be in ``topics``."""
    topics = list(scenario["topics"])
    index = {name: i for i, name in enumerate(topics)}
    stated_ids = scenario.get("topic_ids", {})
    lines = [f"topics {len(topics)}"]
    lines += [f"{name} {scenario['topics'][name]} {stated_ids.get(name) or derived_topic_id(name)}" for name in topics]
    subscription_number: dict[tuple[str, ...], int] = {}
    member_lines = []
    for member_id, spec in scenario["members"].items():
        number = subscription_number.setdefault(tuple(spec["topics"]), len(subscription_number))
        owned = spec.get("owned", ())
        pairs = " ".join(f"{index[topic]} {partition}" for topic, partition in owned)
        member_lines.append(f"{member_id} {number} {spec.get('generation', -1)} {len(owned)} {pairs}")
    lines.append(f"subscriptions {len(subscription_number)}")
    lines += [f"{len(names)} " + " ".join(str(index[name]) for name in names) for names in subscription_number]
    lines.append(f"members {len(member_lines)}")
    path.write_text("\n".join(lines + member_lines) + "\n", encoding="utf-8")


def assignment_digest(assignment: Mapping[str, Iterable[tuple[str, int]]]) -> str:
    """SHA-256 of ``member TAB topic TAB partition`` lines, sorted: the harness's ``digest``."""
    sha = hashlib.sha256()
    for member in sorted(assignment):
        sha.update("".join(f"{member}\t{topic}\t{partition}\n" for topic, partition in sorted(assignment[member]))
                   .encode())
    return sha.hexdigest()


class JavaHarness:
    """One JVM running a harness from ``bench/java`` (its class is named after the file), compiled against
    ``classpath`` into a temporary folder; it answers one line per command line on stdin, ``error ...`` on
    failure. Subclasses write their scenario into :attr:`folder`, then :meth:`start` the JVM."""

    def __init__(self, classpath: str, harness: Path, heap: str = "4g") -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="kassign-kafka-bench-")
        self.folder = Path(self._folder.name)
        compiled = subprocess.run(["javac", "-nowarn", "-d", str(self.folder), "-cp", classpath, str(harness)],
                                  capture_output=True, text=True, check=False)
        if compiled.returncode != 0:
            self._folder.cleanup()
            raise RuntimeError(f"compiling the Kafka harness against {classpath!r} failed:\n{compiled.stderr}")
        self._command = ["java", f"-Xmx{heap}", "-cp", f"{self.folder}:{classpath}", harness.stem]
        self._jvm: subprocess.Popen | None = None
        self._log = open(self.folder / "jvm.log", "w+")  # noqa: SIM115 (open for the JVM's life; closed in close())

    def start(self, *args: str) -> None:
        """Starts the JVM with ``args`` and waits for its ``ready``."""
        self._jvm = subprocess.Popen([*self._command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, text=True)
        self._answer(expect="ready")

    def _answer(self, expect: str | None = None) -> str:
        line = self._jvm.stdout.readline().strip() if self._jvm and self._jvm.stdout else ""
        if not line or line.startswith("error") or (expect and line != expect):
            self._log.seek(0)
            raise RuntimeError(f"Kafka harness answered {line!r}; its log:\n{self._log.read()[-4000:]}")
        return line

    def _ask(self, command: str, expect: str | None = None) -> str:
        assert self._jvm is not None and self._jvm.stdin is not None
        self._jvm.stdin.write(command + "\n")
        self._jvm.stdin.flush()
        return self._answer(expect)

    def digest(self) -> str:
        """The harness's digest of Kafka's last result."""
        return self._ask("digest")

    def close(self) -> None:
        if self._jvm is not None and self._jvm.poll() is None and self._jvm.stdin is not None:
            self._jvm.stdin.write("quit\n")
            self._jvm.stdin.close()
            try:
                self._jvm.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._jvm.kill()
                self._jvm.wait()
        self._log.close()
        self._folder.cleanup()


class KafkaHarness(JavaHarness):
    """One JVM running Kafka's ``assignor`` (``sticky`` or ``uniform``) over one scenario."""

    def __init__(self, classpath: str, assignor: str, scenario: Mapping[str, Any], heap: str = "4g",
                 harness: Path = HARNESS) -> None:
        """``harness``: the Java source to run (its class is named after the file), e.g.
        ``java/KafkaShareAssignorBench.java`` for share groups."""
        super().__init__(classpath, harness, heap)
        scenario_file = self.folder / "scenario.txt"
        write_scenario_file(scenario, scenario_file)
        self.start(assignor, str(scenario_file))

    def run(self) -> float:
        """Seconds Kafka's assignor took for one assignment (timed inside the JVM)."""
        return float(self._ask("run"))

    def digest(self) -> str:
        """:func:`assignment_digest` of Kafka's last result."""
        return self._ask("digest")


@dataclass(frozen=True)
class FromJson:
    """A call timed on a document decoded afresh for every timed call: ``json.loads(text)``, untimed,
    then ``call(document)`` on the clock. Real input (the CLI's JSON, a live describe, a user's own
    dicts) gives every member its own lists and strings; a document built once in Python and reused
    shares them, and identity shortcuts would then skip work real input needs."""

    text: str
    call: Callable[[Any], object]
    prepare: Callable[[Any], Any] | None = None  # also untimed, on the decoded document (e.g. parse_scenario)

    @classmethod
    def of(cls, document: Any, call: Callable[[Any], object],
           prepare: Callable[[Any], Any] | None = None) -> FromJson:
        """``call`` on fresh decodings of ``document`` serialised once, beforehand."""
        return cls(json.dumps(document), call, prepare)

    def fresh(self) -> Any:
        """A new decoding of the text (and ``prepare`` of it): what one timed call gets."""
        document = json.loads(self.text)
        return document if self.prepare is None else self.prepare(document)


# Untimed calls of Kafka's assignor before any timed one: HotSpot compiles a method with its optimising
# compiler (C2) only after thousands of invocations or loop iterations, and until then the assignor runs
# interpreted or C1-compiled. On this project's machine (2026-11-29, Kafka 4.4's classes, calls back to back)
# the uniform assignor took 12 ms per call on the 10,001-member join in a new JVM and 2.5 ms after about 50
# calls, 25 ms on 1,000 members with differing subscriptions and 5.6 ms after about 175; share groups'
# simple assignor and streams groups' sticky one settled after 75 to 150 calls, at a half to a third of
# their first calls' time.
JIT_WARMUP_CALLS, JIT_WARMUP_SECONDS = 300, 15.0


def warm_jvm(run: Callable[[], float], calls: int = JIT_WARMUP_CALLS, seconds: float = JIT_WARMUP_SECONDS) -> int:
    """Untimed ``run()`` calls (Kafka's assignor in the harness's JVM) until ``calls`` of them or ``seconds``
    of wall time, whichever comes first, so that the timed calls meet the JIT-compiled assignor, as a
    broker or a Streams leader that has run for a while does; returns how many ran."""
    deadline = time.perf_counter() + seconds
    done = 0
    while done < calls and time.perf_counter() < deadline:
        run()
        done += 1
    return done


def alternate(ours: Mapping[str, Callable[[], object] | FromJson], kafka: KafkaHarness | None, runs: int,
              warmups: int = 2, jit_warmup: bool = True) -> dict[str, list[float]]:
    """Seconds of ``runs`` calls of each of ``ours`` (name -> call, or a :class:`FromJson`, whose
    document is decoded before the clock starts) and of Kafka's assignor (under ``"Kafka"``), one of
    each in turn, so that every side sees the same load on a shared machine; after ``warmups`` untimed
    rounds (numba, caches), and before them, with ``jit_warmup``, :func:`warm_jvm`'s untimed Kafka calls
    (back to back; the timed ones alternate, so each side meets caches the other has just used). Kafka's
    time is measured inside its JVM (its collector may run inside a timed call, hence its spread);
    kassign's result is freed after its clock stops."""
    times: dict[str, list[float]] = {name: [] for name in ours}
    if kafka is not None:
        times["Kafka"] = []
        if jit_warmup:
            warm_jvm(kafka.run)
    for round_number in range(warmups + runs):
        took = {}
        for name, entry in ours.items():
            if isinstance(entry, FromJson):
                document = entry.fresh()  # not timed
                start = time.perf_counter()
                result = entry.call(document)
                took[name] = time.perf_counter() - start
                del document
            else:
                start = time.perf_counter()
                result = entry()
                took[name] = time.perf_counter() - start
            del result  # freed after the clock stops: the call is timed, not the caller dropping its result
        if kafka is not None:
            took["Kafka"] = kafka.run()
        if round_number >= warmups:
            for name, seconds in took.items():
                times[name].append(seconds)
    return times


def best_and_median(times: list[float], unit: float = 1.0, digits: int = 3) -> str:
    """``best / median`` in ``unit`` seconds (unit=1e-3 for milliseconds)."""
    return f"{min(times) / unit:.{digits}f} / {statistics.median(times) / unit:.{digits}f}"


def ratio(ours: list[float], kafka: list[float]) -> str:
    """Best against best and median against median, as ``0.85x / 0.90x`` (below 1: kassign is faster)."""
    return f"{min(ours) / min(kafka):.2f}x / {statistics.median(ours) / statistics.median(kafka):.2f}x"
