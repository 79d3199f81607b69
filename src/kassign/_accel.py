"""The compiled edges of the dict API, when they were built: ``native`` is the module
:mod:`kassign._native` (``src/kassign/_native.c``), or None.

None where the install found no C compiler (the build of that one extension is optional), or where
``KASSIGN_NO_NATIVE=1`` is set (to compare, or to rule it out). Every caller has a pure-Python path
with the same results; the native one only reads or builds Python objects faster, and declines
(returns None) whatever it does not read exactly as the Python path does."""

from __future__ import annotations

import os
from types import ModuleType

native: ModuleType | None
if os.environ.get("KASSIGN_NO_NATIVE", "") not in ("", "0"):
    native = None
else:
    try:
        from kassign import _native as native
    except ImportError:
        native = None
