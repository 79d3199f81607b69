"""The driver JVM's class-data-sharing archive (kassign.spark.startup): when it is written, adopted, used."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kassign.spark import startup


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_written_then_adopted_once_its_jvm_is_gone(tmp_path, monkeypatch):
    monkeypatch.delenv("KASSIGN_JVM_CDS", raising=False)
    first = startup.java_options(tmp_path, None, {})
    assert first.startswith("-XX:ArchiveClassesAtExit=") and "-Xlog:cds=off" in first
    target = first.split()[0].split("=", 1)[1]
    assert target.endswith(f".{os.getpid()}.tmp")
    # the JVM writes the archive; while it lives, nobody else writes or uses one
    open(target, "wb").write(b"x" * 10)
    startup.note_jvm(first, os.getpid())
    assert startup.java_options(tmp_path, None, {}) == ""
    # once that JVM is gone, the next start adopts it
    startup.note_jvm(first, _dead_pid())
    adopted = startup.java_options(tmp_path, None, {})
    assert adopted.startswith("-XX:SharedArchiveFile=") and adopted.split()[0].endswith(".jsa")
    assert not list(tmp_path.glob("*.tmp*"))
    assert startup.java_options(tmp_path, None, {}) == adopted


def test_without_a_note_the_archive_waits_a_minute(tmp_path):
    first = startup.java_options(tmp_path, None, {})
    target = first.split()[0].split("=", 1)[1]
    open(target, "wb").write(b"x")
    assert startup.java_options(tmp_path, None, {}) == ""
    old = os.stat(target).st_mtime - 120
    os.utime(target, (old, old))
    assert startup.java_options(tmp_path, None, {}).startswith("-XX:SharedArchiveFile=")


def test_one_archive_per_classpath_and_off_on_request(tmp_path, monkeypatch):
    a = startup.java_options(tmp_path, None, {})
    b = startup.java_options(tmp_path, None, {"spark.jars": "/opt/extra.jar"})
    assert a.split()[0].split("=", 1)[1].split(".jsa")[0] != b.split()[0].split("=", 1)[1].split(".jsa")[0]
    monkeypatch.setenv("KASSIGN_JVM_CDS", "0")
    assert startup.java_options(tmp_path, None, {}) == ""


def test_an_unwritable_cache_means_no_sharing(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert startup.java_options(blocked / "cache", None, {}) == ""


def test_a_new_archive_once_the_jdk_writes_its_own_again(tmp_path, monkeypatch):
    """Ours extends the JDK's own archive (lib/server/classes.jsa), which the JVM then refuses as a base once
    that is written again (``java -Xshare:dump``) even though the launcher is unchanged: a new one is made."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "lib" / "server").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    base = home / "lib" / "server" / "classes.jsa"
    base.write_bytes(b"base")
    monkeypatch.setenv("JAVA_HOME", str(home))
    cache = tmp_path / "cache"

    def archive_name() -> str:
        return startup.java_options(cache, None, {}).split()[0].split("=", 1)[1].split(".jsa")[0]

    before = archive_name()
    assert archive_name() == before
    os.utime(base, ns=(base.stat().st_atime_ns, base.stat().st_mtime_ns + 10**9))
    assert archive_name() != before


def test_a_second_archive_written_beside_the_adopted_one_is_deleted_once_finished(tmp_path):
    """Two first runs at once both write an archive; the one not adopted would stay on disk (about 180 MB)."""
    first = startup.java_options(tmp_path, None, {})
    mine = first.split()[0].split("=", 1)[1]
    open(mine, "wb").write(b"x" * 10)
    startup.note_jvm(first, _dead_pid())
    adopted = startup.java_options(tmp_path, None, {})
    final = adopted.split()[0].split("=", 1)[1]
    other = f"{final}.999999.tmp"  # another run's copy, written meanwhile
    open(other, "wb").write(b"y" * 10)
    with open(other + ".jvm", "w") as note:
        note.write(str(os.getpid()))  # still being written: kept
    assert startup.java_options(tmp_path, None, {}) == adopted
    assert os.path.exists(other)
    with open(other + ".jvm", "w") as note:
        note.write(str(_dead_pid()))  # finished: deleted, and its note with it
    assert startup.java_options(tmp_path, None, {}) == adopted
    assert sorted(p.name for p in tmp_path.iterdir()) == [os.path.basename(final)]


def test_archives_unused_for_two_weeks_are_deleted_and_the_used_one_is_marked(tmp_path):
    first = startup.java_options(tmp_path, None, {})
    open(first.split()[0].split("=", 1)[1], "wb").write(b"x")
    startup.note_jvm(first, _dead_pid())
    adopted = startup.java_options(tmp_path, None, {})
    used = adopted.split()[0].split("=", 1)[1]
    stale, recent = tmp_path / "spark-driver-0000000000000000.jsa", tmp_path / "spark-driver-1111111111111111.jsa"
    stale.write_bytes(b"old kassign")
    recent.write_bytes(b"the other installation")
    month_ago = os.stat(used).st_mtime - 30 * 86400
    for path in (stale, used):
        os.utime(path, (month_ago, month_ago))
    os.utime(recent, (month_ago + 20 * 86400, month_ago + 20 * 86400))  # ten days ago
    assert startup.java_options(tmp_path, None, {}) == adopted
    assert not stale.exists() and recent.exists()
    assert os.stat(used).st_mtime > month_ago + 29 * 86400  # used now


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
def test_a_thread_that_yields_to_spark_gets_the_lowest_priority_and_others_keep_theirs():
    import threading

    from kassign.spark.startup import yield_to_spark

    seen = {}

    def warm_up() -> None:
        yield_to_spark()
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    thread = threading.Thread(target=warm_up)
    thread.start()
    thread.join()
    assert seen["nice"] == 19
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before


def test_an_old_keys_unadopted_copy_and_its_note_go_with_it_but_not_a_copy_still_being_written(tmp_path):
    """A finished copy of another key's archive that no start adopted is as big as an archive: after two weeks
    it goes, with its note; so does a note whose copy is gone. A copy whose JVM still runs stays, however old."""
    first = startup.java_options(tmp_path, None, {})
    open(first.split()[0].split("=", 1)[1], "wb").write(b"x")
    startup.note_jvm(first, _dead_pid())
    adopted = startup.java_options(tmp_path, None, {})
    old = "spark-driver-0000000000000000.jsa"
    finished, finished_note = tmp_path / f"{old}.123.tmp", tmp_path / f"{old}.123.tmp.jvm"
    writing, writing_note = tmp_path / f"{old}.456.tmp", tmp_path / f"{old}.456.tmp.jvm"
    orphan_note = tmp_path / f"{old}.789.tmp.jvm"
    recent, recent_note = tmp_path / f"{old}.321.tmp", tmp_path / f"{old}.321.tmp.jvm"
    for path in (finished, writing, recent):
        path.write_bytes(b"a copy")
    finished_note.write_text(str(_dead_pid()))
    writing_note.write_text(str(os.getpid()))  # alive: this test's own process
    orphan_note.write_text(str(_dead_pid()))
    recent_note.write_text(str(_dead_pid()))
    month_ago = time.time() - 30 * 86400
    for path in (finished, finished_note, writing, writing_note, orphan_note):
        os.utime(path, (month_ago, month_ago))
    assert startup.java_options(tmp_path, None, {}) == adopted
    assert not finished.exists() and not finished_note.exists() and not orphan_note.exists()
    assert writing.exists() and writing_note.exists()
    assert recent.exists() and recent_note.exists()  # ten minutes old: another key's, left alone
