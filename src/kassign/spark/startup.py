"""A faster driver JVM: a class-data-sharing (CDS) archive of the classes Spark loads when it starts.

Why: every ``kassign pipeline`` starts a JVM that loads some 20,000 classes of Spark and its
dependencies before the first query runs; most of that is the same work every time. The JVM can
write what it loaded to an archive when it exits (``-XX:ArchiveClassesAtExit``) and map it in at
the next start (``-XX:SharedArchiveFile``). Measured on this project's 2-core machine, a pipeline on
1,000 rows: session start 4.3 s -> 2.4 s, its first run 4.6 s -> 2.8 s.

The rule:

- one archive per JVM, pyspark and classpath (our jar, the user's ``spark.jars`` and driver class
  path), in kassign's cache folder (``kassign.spark.jvm.cache_dir``), about 180 MB;
- the first start without one writes it, under a name with its Python process id, when the JVM
  exits (``note_jvm`` records that JVM's process id beside it); a later start adopts a written archive
  once that JVM is gone (without the note: once the file is a minute old). A JVM killed while
  writing leaves a file the next JVM refuses and ignores: sharing is then simply off, never an error;
- an archive no start has used for two weeks is deleted (an upgrade's predecessor), as is a second copy
  that another first run finished writing after one was adopted;
- the JVM's own notes about the archive are silenced; ``KASSIGN_JVM_CDS=0`` turns all of it off.

Only for a JVM that PySpark starts itself (not under spark-submit, where the JVM already runs).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

_QUIET = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
_SETTLE_SECONDS = 60
_STALE_DAYS = 14


def _key(jar: Path | None, conf: Mapping[str, str]) -> str:
    import pyspark

    java = shutil.which("java", path=os.path.join(os.environ["JAVA_HOME"], "bin")) if os.environ.get("JAVA_HOME") \
        else shutil.which("java")
    real = Path(os.path.realpath(java)) if java else None
    parts = [pyspark.__version__, str(real) if real else "java?", str(real.stat().st_mtime) if real else "",
             _base_archive_stamp(real), str(jar or ""), conf.get("spark.jars", ""),
             conf.get("spark.driver.extraClassPath", "")]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _base_archive_stamp(java: Path | None) -> str:
    """When the JDK's own archive was written (``java``: the launcher, links resolved): ours is an extension of
    it, refused once it is written again (``java -Xshare:dump``, or a JDK update that leaves the launcher
    alone), so a new one must be made then."""
    if java is None:
        return ""
    home = java.parent.parent
    stamps = []
    for base in (home / "lib" / "server" / "classes.jsa", home / "lib" / "server" / "classes_nocoops.jsa"):
        try:
            stamps.append(str(base.stat().st_mtime_ns))
        except OSError:
            stamps.append("")
    return ",".join(stamps)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _written(archive: Path) -> bool:
    """Whether the JVM that writes ``archive`` has finished (exited)."""
    note = archive.with_name(archive.name + ".jvm")
    try:
        return not _alive(int(note.read_text().strip()))
    except (OSError, ValueError):  # no note (or an unreadable one): go by age
        return time.time() - archive.stat().st_mtime > _SETTLE_SECONDS


def _drop_unused_copies(final: Path) -> None:
    """Delete the archives other runs finished writing after ``final`` was adopted (two first runs at once
    both write one): never used, and each as big as ``final``."""
    for written in final.parent.glob(final.name + ".*.tmp"):
        try:
            _delete_if_written(written)
        except OSError:  # another user's: left alone
            pass


def _delete_if_written(copy: Path) -> None:
    """Delete an archive copy and its note once its JVM has finished writing it (never while it writes)."""
    if _written(copy):
        copy.unlink(missing_ok=True)
        copy.with_name(copy.name + ".jvm").unlink(missing_ok=True)


def _forget_stale_archives(used: Path) -> None:
    """Mark ``used`` as used now (its modification time) and delete the archives of other JVMs, pyspark
    releases or class paths that no start has used for ``_STALE_DAYS`` days: an upgrade of kassign leaves
    its predecessor's archive behind, and two installations used in turn must not delete each other's.
    Their copies go too: a finished copy that no start adopted (as big as an archive) with its note, and a
    note whose copy is gone; never a copy whose JVM still writes it."""
    try:  # housekeeping only: a cache shared read-only still serves its archive
        os.utime(used)
        oldest = time.time() - _STALE_DAYS * 86400
        for other in used.parent.glob("spark-driver-*"):
            if other.name.startswith(used.name) or other.stat().st_mtime >= oldest:
                continue  # the archive in use and its own copies (``_drop_unused_copies``), or used lately
            if other.name.endswith(".tmp"):
                _delete_if_written(other)
            elif other.name.endswith(".jvm"):
                if not other.with_name(other.name[:-len(".jvm")]).exists():
                    other.unlink(missing_ok=True)
            elif other.name.endswith(".jsa"):
                other.unlink(missing_ok=True)
    except OSError:
        pass


def note_jvm(options: str, jvm_pid: int | None) -> None:
    """Record the process id of the JVM that will write the archive named in ``options`` (if it writes one)."""
    for option in options.split():
        if option.startswith("-XX:ArchiveClassesAtExit=") and jvm_pid:
            target = Path(option.split("=", 1)[1])
            try:
                target.with_name(target.name + ".jvm").write_text(str(jvm_pid))
            except OSError:
                pass


def java_options(cache: Path, jar: Path | None, conf: Mapping[str, str]) -> str:
    """The driver JVM's options for class-data sharing ("" when off or when another run is writing one)."""
    if os.environ.get("KASSIGN_JVM_CDS", "1") == "0":
        return ""
    try:
        cache.mkdir(parents=True, exist_ok=True)
        name = f"spark-driver-{_key(jar, conf)}.jsa"
        final = cache / name
        if final.is_file() and final.stat().st_size > 0:
            _drop_unused_copies(final)
            _forget_stale_archives(final)
            return f"-XX:SharedArchiveFile={final} {_QUIET}"
        for written in cache.glob(name + ".*.tmp"):
            if _written(written):
                os.replace(written, final)
                written.with_name(written.name + ".jvm").unlink(missing_ok=True)
                return f"-XX:SharedArchiveFile={final} {_QUIET}"
            return ""  # another run is writing one
        return f"-XX:ArchiveClassesAtExit={cache / (name + f'.{os.getpid()}.tmp')} {_QUIET}"
    except (OSError, ValueError):  # an unwritable cache: start without sharing
        return ""


def yield_to_spark() -> None:
    """Give the calling thread the lowest CPU priority (Linux, where a thread has its own nice value): work
    that is only needed later then runs on what the JVM's start and Spark's tasks leave idle (the scan's
    last wave of tasks, say) instead of taking its share of both cores."""
    if sys.platform == "linux":
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:
            pass
