"""Old import paths that keep working after kassign's modules moved.

kassign's tree was reorganised by question (``groups``, ``producer``, ``replicas``, ``kafka``); modules the
manual once told users to import from (``kassign.simulate``, ``kassign.plan``, ``kassign.live``, ...) moved with
it. A module finder answers the old names with the module that now holds the code: the very same module object, so classes compare equal and ``isinstance`` holds
across both paths.

Example: ``from kassign.simulate import parse_sim_scenario`` imports ``kassign.groups.simulate`` and hands over
its ``parse_sim_scenario``; ``import kassign.plan; kassign.plan.kafka_generate_document`` is
``kassign.replicas.plan.kafka_generate_document``; ``kassign.simulate.engine`` is
``kassign.groups.simulate.engine``.

The short public paths for what users subclass or plug into consumers are real packages, not entries here:
``kassign.assignors`` and ``kassign.clients``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

# old module (and everything under it) -> where it lives now
MOVED: dict[str, str] = {
    "kassign.errors": "kassign.core.errors",
    "kassign.releases": "kassign.core.releases",
    "kassign.scenario": "kassign.groups.scenario",
    "kassign.flat": "kassign.groups.flat",
    "kassign.partitioner": "kassign.producer.partitioner",
    "kassign.client_partitioners": "kassign.producer.clients",
    "kassign.keys": "kassign.producer.keys",
    "kassign.hashing": "kassign.producer.hashing",
    "kassign.simulate": "kassign.groups.simulate",
    "kassign.protocol": "kassign.groups.classic.protocol",
    "kassign.kstreams": "kassign.groups.streams.classic",
    "kassign.plan": "kassign.replicas.plan",
    "kassign.brokers": "kassign.replicas.brokers",
    "kassign.live": "kassign.kafka.metadata",
    "kassign.spark.submit": "kassign.cli.submit",
    # the submodules of the old assignors package (the package itself is kassign.assignors, a real one)
    "kassign.assignors.base": "kassign.groups.classic.assignors.base",
    "kassign.assignors.range": "kassign.groups.classic.assignors.range",
    "kassign.assignors.roundrobin": "kassign.groups.classic.assignors.roundrobin",
    "kassign.assignors.eager_sticky": "kassign.groups.classic.assignors.eager_sticky",
    "kassign.assignors.cooperative_sticky": "kassign.groups.classic.assignors.cooperative_sticky",
    "kassign.assignors.load_aware": "kassign.groups.classic.assignors.load_aware",
    "kassign.assignors.random": "kassign.groups.classic.assignors.random",
    "kassign.assignors.broadcast": "kassign.groups.classic.assignors.broadcast",
    "kassign.assignors.sticky": "kassign.groups.classic.assignors.sticky",
    "kassign.assignors.options": "kassign.groups.classic.assignors.options",
}


def new_home(name: str) -> str | None:
    """Where the module once called ``name`` lives now, or None if it never moved."""
    for old, new in MOVED.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        # the module was already run under its new name; running it again would make a second copy
        pass


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds an old module name by importing the module that replaced it."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        home = new_home(fullname)
        if home is None:
            return None
        real = importlib.util.find_spec(home)
        if real is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(home), is_package=real.submodule_search_locations is not None)


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once. First, because a moved package's submodules would
    otherwise be found by the path finder through the new package's folder and run a second time under the old
    name; it answers only the names of :data:`MOVED`, none of which is a module of its own any more."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
