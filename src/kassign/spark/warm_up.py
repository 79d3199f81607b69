"""The driver's warm-up: what the pipeline's last stages load, loaded while the driver only waits.

The report's charting script and the assignors' compiled kernels take about a second to load. The CLI starts
this while the JVM starts, the one pass while Spark counts; the consumer stage joins it before it assigns.
For example, ``prepare_driver_meanwhile(["range", "sticky"])`` returns a started thread, and the same thread
again for the same strategies later in the process.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from kassign.spark import loads as stage_loads
from kassign.spark import startup

log = logging.getLogger(__name__)

_warm_ups: dict[tuple[str, ...], threading.Thread] = {}


def prepare_driver_meanwhile(strategies: Sequence[str]) -> threading.Thread:
    """Load the report's charting script and the assignors' compiled kernels (together about a
    second) in a background thread, by importing them and assigning a two-partition group once
    with every strategy. Started while the driver only waits (for the JVM to start, or for
    Spark's pass); once per process and strategy list."""
    key = tuple(strategies)
    if key in _warm_ups:
        return _warm_ups[key]

    def prepare() -> None:
        startup.yield_to_spark()  # 3% shorter pipeline over 6 alternating pairs
        import kassign.spark.report_html  # noqa: F401
        from kassign.core.page import _plotly_js_packed

        _plotly_js_packed()  # the page's packed charting script, made once per process

        tiny = {"topics": {"t": 2}, "members": {"a": {"topics": ["t"]}, "b": {"topics": ["t"]}}}
        try:
            built_in = [s for s in strategies if s in stage_loads.STRATEGIES]  # no warnings twice for the others
            stage_loads.consumer_load(tiny, built_in, {("t", 0): (1, 1), ("t", 1): (1, 1)})
        except Exception:  # a warm-up only: the real stage reports any problem itself
            log.debug("driver warm-up failed", exc_info=True)

    thread = threading.Thread(target=prepare, name="kassign-driver-warm-up", daemon=True)
    thread.start()
    _warm_ups[key] = thread
    return thread
