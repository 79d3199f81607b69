"""The driver JVM's class-data-sharing archive (kassign.spark.startup): when it is written, adopted, used."""

from __future__ import annotations

import os
import subprocess
import sys

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
