"""Our JVM code (Kafka's murmur2 and every client partitioner as UDFs; the pipeline's per-key
counting): compiled once with javac into a cache dir, shipped to Spark as a jar.

Why a JVM UDF: a Python UDF, even one moving Arrow batches to a numba kernel, pays for
serialising every key to a Python worker and back; hashing inside the executor JVM costs
about as much as Spark's own ``hash()``. When no ``javac`` is available (or compiling
fails) ``udf_jar()`` returns None and callers fall back to the Arrow path.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

log = logging.getLogger(__name__)

JAVA_SOURCES = (Path(__file__).with_name("KassignMurmur2.java"), Path(__file__).with_name("KassignKeyFigures.java"))
JAVA_CLASS = "kassign.spark.KassignMurmur2"
SQL_FUNCTION = "kassign_murmur2"
PARTITION_CLASS = "kassign.spark.KassignMurmur2$Partition"
PARTITION_FUNCTION = "kassign_partition"
# (SQL name, Java class) of every UDF the jar provides, registered together.
FUNCTIONS = ((SQL_FUNCTION, JAVA_CLASS), (PARTITION_FUNCTION, PARTITION_CLASS))
_COMPILE_TIMEOUT_S = 120


def cache_dir() -> Path:
    """Where compiled jars live: $KASSIGN_CACHE, else $XDG_CACHE_HOME/kassign, else ~/.cache/kassign."""
    explicit = os.environ.get("KASSIGN_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kassign"


def spark_jars_dir() -> Path | None:
    """Spark's own jars (to compile against): $SPARK_HOME/jars, else the pip-installed pyspark's."""
    candidates = []
    if os.environ.get("SPARK_HOME"):
        candidates.append(Path(os.environ["SPARK_HOME"]) / "jars")
    try:
        import pyspark

        candidates.append(Path(pyspark.__file__).parent / "jars")
    except ImportError:  # pragma: no cover - pyspark is a dependency
        pass
    return next((c for c in candidates if c.is_dir()), None)


def _jar_name() -> str:
    import pyspark

    sources = b"".join(source.read_bytes() for source in JAVA_SOURCES)
    digest = hashlib.sha256(sources + pyspark.__version__.encode()).hexdigest()[:12]
    return f"kassign-murmur2-{digest}.jar"


def _compile(target: Path, jars_dir: Path, javac: str) -> None:
    with tempfile.TemporaryDirectory(prefix="kassign-javac-") as work:
        classes = Path(work) / "classes"
        classes.mkdir()
        command = [javac, "-nowarn", "--release", "17", "-cp", str(jars_dir / "*"), "-d", str(classes),
                   *(str(source) for source in JAVA_SOURCES)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=_COMPILE_TIMEOUT_S)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "javac failed")
        partial = Path(work) / target.name
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: kassign\n\n")
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        target.parent.mkdir(parents=True, exist_ok=True)
        # Rename last, so a concurrent process never picks up a half-written jar.
        tmp_target = target.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(partial, tmp_target)
        os.replace(tmp_target, target)


def udf_jar() -> Path | None:
    """Path of the compiled UDF jar, compiling it on first use; None when that is impossible.

    Set KASSIGN_NO_JVM_UDF=1 to force the Arrow fallback everywhere.
    """
    if os.environ.get("KASSIGN_NO_JVM_UDF") == "1":
        return None
    jars_dir = spark_jars_dir()
    if jars_dir is None or not all(source.exists() for source in JAVA_SOURCES):
        return None
    target = cache_dir() / _jar_name()
    if target.exists():
        return target
    javac = shutil.which("javac")
    if javac is None:
        log.warning("javac not found: kafka_partition falls back to the slower Arrow UDF")
        return None
    try:
        _compile(target, jars_dir, javac)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as err:
        log.warning("compiling kassign's murmur2 UDF failed (%s): falling back to the Arrow UDF", err)
        return None
    return target
