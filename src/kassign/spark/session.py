"""A Spark session set up for kassign: our UDF jar on the classpath, quiet logs, progress bar on."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

from kassign.core.errors import KassignError
from kassign.spark import jvm, startup
from kassign.spark.console import jvm_stderr_to

LOG_CONFIG = Path(__file__).with_name("log4j2-kassign.properties")


def parse_conf(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["k=v", ...]`` -> dict, with a one-line error for a pair without '='."""
    conf: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise KassignError(f"--conf expects KEY=VALUE, got {pair!r}")
        conf[key.strip()] = value
    return conf


def spark_session(master: str | None = None, conf: Mapping[str, str] | None = None,
                  app_name: str = "kassign", jvm_log: Path | None = None) -> SparkSession:
    """Get or create the session: ``local[*]`` unless ``master`` or an outer spark-submit says otherwise.

    ``jvm_log``: where a JVM started here writes its standard error (start-up notices, log4j, Python
    workers' tracebacks) instead of the terminal; its console progress bar is then off (the caller
    shows progress with ``kassign.spark.console.progress``)."""
    # Executors must run the same Python as the driver (our Arrow UDF imports kassign).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # PySpark 4.x warns on every pandas 3 import although the Arrow paths we use work; keep stderr readable.
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    builder = SparkSession.builder.appName(app_name)
    settings = {
        "spark.ui.showConsoleProgress": "true",
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.ui.enabled": "false",
        # Input splits must not depend on the core count: each split is one producer in the null-key model.
        "spark.sql.files.minPartitionNum": "8",
    }
    if master:
        builder = builder.master(master)
    elif "PYSPARK_GATEWAY_PORT" not in os.environ and "spark.master" not in (conf or {}):
        # Not under spark-submit (which passes its gateway in that variable): run embedded.
        builder = builder.master("local[*]")
    jar = jvm.udf_jar()
    user_conf = dict(conf or {})
    if jar is not None:
        jars = [j for j in (user_conf.pop("spark.jars", ""), ) if j] + [jar.as_posix()]
        settings["spark.jars"] = ",".join(jars)
    if "spark.driver.extraJavaOptions" not in user_conf and SparkSession.getActiveSession() is None \
            and "PYSPARK_GATEWAY_PORT" not in os.environ:
        # Applies when PySpark launches the driver JVM itself (not under spark-submit).
        options = [f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}" if LOG_CONFIG.exists() else "",
                   startup.java_options(jvm.cache_dir(), jar, user_conf)]
        settings["spark.driver.extraJavaOptions"] = " ".join(o for o in options if o)
    quiet = jvm_log is not None and SparkSession.getActiveSession() is None
    if quiet:
        settings["spark.ui.showConsoleProgress"] = "false"
    settings.update(user_conf)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        with jvm_stderr_to(jvm_log) if quiet else contextlib.nullcontext():
            spark = builder.getOrCreate()
        gateway_proc = getattr(spark.sparkContext._gateway, "proc", None)
        startup.note_jvm(settings.get("spark.driver.extraJavaOptions", ""), getattr(gateway_proc, "pid", None))
    except Exception as err:
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise KassignError(f"cannot start Spark (master {master or 'local[*]'}): {message}") from None
    spark.sparkContext.setLogLevel("WARN")
    return spark
