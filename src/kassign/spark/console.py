"""What a Spark run shows on the terminal: kassign's own progress line, never the JVM's chatter.

The JVM that PySpark starts writes to the standard error it inherits: a start-up notice
("Using incubator modules"), log4j warnings, its console progress bar, and every Python
worker's traceback. A command whose failure must be one line (or whose output must stay
readable) starts the JVM with its standard error sent to a log file instead (``jvm_stderr_to``),
and shows progress itself (``progress``): one line, rewritten in place on a terminal, with the
job kassign is running and the tasks done in its stages; nothing when standard error is not a
terminal (a log, a pipe, CI).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def jvm_stderr_to(path: Path) -> Iterator[None]:
    """While inside, file descriptor 2 is ``path`` (appended): a JVM started now keeps it as its stderr.
    Python's own ``sys.stderr`` is flushed first and writes to the terminal again afterwards."""
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.dup2(target, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


def _line(spark: Any) -> str | None:
    tracker = spark.sparkContext.statusTracker()
    stages = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
    stages = [s for s in stages if s is not None]
    if not stages:
        return None
    done = sum(s.numCompletedTasks for s in stages)
    total = sum(s.numTasks for s in stages)
    what = spark.sparkContext.getLocalProperty("spark.job.description") or "Spark"
    return f"{what}: {done}/{total} tasks"


@contextlib.contextmanager
def progress(spark: Any, interval: float = 0.5) -> Iterator[None]:
    """A progress line on a terminal's stderr while inside (cleared on the way out)."""
    if not sys.stderr.isatty():
        yield
        return
    stop = threading.Event()
    width = [0]

    def show() -> None:
        while not stop.wait(interval):
            try:
                text = _line(spark)
            except Exception:  # the session is stopping, or py4j is gone: nothing to show
                text = None
            if text is None:
                continue
            text = text[: max(20, os.get_terminal_size(2).columns - 1)] if sys.stderr.isatty() else text
            sys.stderr.write("\r" + text.ljust(width[0]))
            sys.stderr.flush()
            width[0] = len(text)

    thread = threading.Thread(target=show, name="kassign-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(2)
        if width[0]:
            sys.stderr.write("\r" + " " * width[0] + "\r")
            sys.stderr.flush()
