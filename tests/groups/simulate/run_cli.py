"""`kassign` as a user runs it, for the simulator's CLI tests: a real subprocess."""

from __future__ import annotations

import subprocess
import sys


def kassign(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kassign.cli.main", *args], capture_output=True, text=True,
                          timeout=300, input=stdin)
