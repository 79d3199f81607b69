"""One local Spark session for every Spark test (starting one costs ~10 s)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from kassign.spark.session import spark_session

    session = spark_session("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.ui.showConsoleProgress": "false",
                                         "spark.default.parallelism": "2"}, app_name="kassign-tests")
    yield session
    session.stop()
