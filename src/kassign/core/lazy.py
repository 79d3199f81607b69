"""Public names of a package loaded on first use (PEP 562), for packages whose parts are costly to import.

``lazy_names(package, homes)`` returns the package's ``__getattr__`` and ``__dir__``: ``homes`` maps each
public name to the module that defines it; the first lookup imports that module and keeps the value in the
package, so later lookups are plain attribute reads. Example: with ``{"murmur2": "kassign.producer.partitioner"}``,
``kassign.murmur2`` imports ``kassign.producer.partitioner`` the first time it is asked for, and not before.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, homes: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, loading each name of ``homes`` from its module when first used."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(homes))

    return __getattr__, __dir__
