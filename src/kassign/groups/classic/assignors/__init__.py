"""Assignors by name, the way ``partition.assignment.strategy`` names them.

A strategy is either a registered short name (``range``, ``roundrobin``,
``sticky``, ``cooperative-sticky``, ``random``, ``broadcast``), one of Kafka's
Java class names for the same strategies, or the dotted path of a user's own
class, ``package.module:Class`` (``package.module.Class`` works too). A user's
class must implement :class:`ConsumerPartitionAssignor` (subclass it, or provide
``name`` and ``assign(cluster, subscriptions)``).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kassign.groups.classic.assignors.base import (
    COOPERATIVE,
    EAGER,
    AbstractPartitionAssignor,
    Assignment,
    ConsumerPartitionAssignor,
    MemberInfo,
    Subscription,
    TopicPartition,
)
from kassign.core.errors import KassignError, UnknownAssignorError
from kassign.core.releases import KafkaRelease, release_for, rule

if TYPE_CHECKING:  # the scenario module names the assignor interface itself
    from kassign.groups.flat import FlatAssignment
    from kassign.groups.scenario import Scenario

__all__ = [
    "COOPERATIVE",
    "EAGER",
    "AbstractPartitionAssignor",
    "Assignment",
    "ConsumerPartitionAssignor",
    "MemberInfo",
    "Subscription",
    "TopicPartition",
    "answers_per_release",
    "assignor_factory",
    "available_assignors",
    "get_assignor",
    "takes_kafka_version",
    "load_assignor_class",
    "register_assignor",
]

_BUILTIN: dict[str, str] = {
    "range": "kassign.groups.classic.assignors.range:RangeAssignor",
    "roundrobin": "kassign.groups.classic.assignors.roundrobin:RoundRobinAssignor",
    "sticky": "kassign.groups.classic.assignors.eager_sticky:StickyAssignor",
    "cooperative-sticky": "kassign.groups.classic.assignors.cooperative_sticky:CooperativeStickyAssignor",
    "random": "kassign.groups.classic.assignors.random:RandomAssignor",
    "broadcast": "kassign.groups.classic.assignors.broadcast:BroadcastAssignor",
    "load-aware": "kassign.groups.classic.assignors.load_aware:LoadAwareAssignor",
}

_KAFKA_CLASS_NAMES: dict[str, str] = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}

_registered: dict[str, Callable[..., ConsumerPartitionAssignor]] = {}


def register_assignor(name: str, factory: Callable[..., ConsumerPartitionAssignor]) -> None:
    """Make ``name`` resolve to ``factory`` (a class or any callable returning an assignor)."""
    _registered[name] = factory


def available_assignors() -> list[str]:
    return sorted(set(_BUILTIN) | set(_registered))


def _is_assignor_class(obj: Any) -> bool:
    if not inspect.isclass(obj):
        return False
    if issubclass(obj, ConsumerPartitionAssignor):
        return not inspect.isabstract(obj)
    return callable(getattr(obj, "assign", None)) and isinstance(getattr(obj, "name", None), str)


def load_assignor_class(path: str) -> type:
    """Import ``package.module:Class`` (or ``package.module.Class``) and check it is an assignor."""
    if ":" in path:
        module_name, _, class_name = path.partition(":")
    else:
        module_name, _, class_name = path.rpartition(".")
    if not module_name or not class_name:
        raise UnknownAssignorError(
            f"unknown assignor {path!r}: use one of {', '.join(available_assignors())} or package.module:Class"
        )
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())  # a user's module in the working directory, as `python -m` would find it
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise UnknownAssignorError(f"cannot load assignor {path!r}: no module named {err.name!r}") from None
    except Exception as err:  # the user's module failed while importing
        raise UnknownAssignorError(
            f"cannot load assignor {path!r}: importing {module_name!r} failed with {type(err).__name__}: {err}"
        ) from None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise UnknownAssignorError(f"cannot load assignor {path!r}: module {module_name!r} has no {class_name!r}")
    if inspect.isclass(cls) and inspect.isabstract(cls):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise UnknownAssignorError(f"{path!r} is not an assignor yet: it does not implement {missing}")
    if not _is_assignor_class(cls):
        raise UnknownAssignorError(
            f"{path!r} is not an assignor: subclass kassign.groups.classic.assignors.ConsumerPartitionAssignor "
            "(or give the class a `name` and an `assign(cluster, subscriptions)` method)"
        )
    return cls


def assignor_factory(strategy: str) -> Callable[..., ConsumerPartitionAssignor]:
    """What builds the assignor a name (a short name, a Kafka class name, or ``package.module:Class``) stands for."""
    name = _KAFKA_CLASS_NAMES.get(strategy, strategy)
    if name in _registered:
        return _registered[name]
    if name in _BUILTIN:
        return load_assignor_class(_BUILTIN[name])
    if ":" in name or "." in name:
        return load_assignor_class(name)
    raise UnknownAssignorError(
        f"unknown assignor {strategy!r}: use one of {', '.join(available_assignors())} or package.module:Class"
    )


def answers_per_release(strategy: str | ConsumerPartitionAssignor) -> bool:
    """Whether the assignor ``strategy`` names answers as a chosen Kafka release (it takes ``kafka_version``):
    then an answer says which release it is for."""
    if not isinstance(strategy, str):
        return isinstance(getattr(strategy, "release", None), KafkaRelease)
    return takes_kafka_version(assignor_factory(strategy))


def takes_kafka_version(factory: Callable[..., Any]) -> bool:
    """Whether ``factory`` (an assignor class or any callable) names a ``kafka_version`` parameter: kassign's
    ``range``, ``roundrobin``, ``sticky`` and ``cooperative-sticky`` do, and so may a user's own class."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin or an object without a signature
        return False
    found = parameters.get("kafka_version")
    return found is not None and found.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def get_assignor(strategy: str | ConsumerPartitionAssignor, kafka_version: Any = None,
                 **options: Any) -> ConsumerPartitionAssignor:
    """An assignor instance for a name, a Kafka class name, or ``package.module:Class``.

    ``kafka_version``: the Kafka release the assignor answers as (:mod:`kassign.core.releases`), given to
    an assignor whose constructor takes ``kafka_version`` (kassign's Kafka assignors, or a user's class
    that asks for it); an assignor that does not take it is built without it, since its answer does
    not depend on the release. None: the assignor's own default (the newest release)."""
    if not isinstance(strategy, str):
        if isinstance(strategy, ConsumerPartitionAssignor) or (
                callable(getattr(strategy, "assign", None)) and isinstance(getattr(strategy, "name", None), str)):
            if kafka_version is not None:
                _check_release(strategy, kafka_version)
            return strategy
        raise UnknownAssignorError(f"strategy must be an assignor name such as 'range' or an assignor object, "
                                   f"got {strategy!r} ({type(strategy).__name__})")
    factory = assignor_factory(strategy)
    if kafka_version is not None and takes_kafka_version(factory):
        options = {**options, "kafka_version": kafka_version}
    try:
        return factory(**options)
    except KassignError:
        raise
    except TypeError as err:
        raise UnknownAssignorError(f"assignor {strategy!r} does not accept options {sorted(options)}: {err}") from None
    except Exception as err:  # a user's constructor failed
        raise UnknownAssignorError(f"assignor {strategy!r} could not be created: {type(err).__name__}: {err}") from None


def _check_release(assignor: Any, kafka_version: Any) -> None:
    """An assignor object built for one release, asked to answer as another where a rule it follows
    (its ``release_rules``) differs, is an error (the answer would be the other release's); an object
    without a ``release`` answers alike in all."""
    own = getattr(assignor, "release", None)
    if not isinstance(own, KafkaRelease):
        return
    asked = release_for(kafka_version, "classic")
    names = getattr(assignor, "release_rules", ())
    if any(rule(own, name) != rule(asked, name) for name in names):
        name = getattr(assignor, "name", type(assignor).__name__)
        raise KassignError(
            f"this {name} assignor answers as Kafka {own.label}, but kafka_version asks for Kafka {asked.label}, "
            f"whose {name} differs; build it with kafka_version={asked.label!r}, or pass its name {name!r}")


def assign_scenario(assignor: ConsumerPartitionAssignor, scenario: Scenario) -> FlatAssignment:
    """``assignor`` (a kassign class, a user's subclass, or any object with ``name`` and ``assign``) run
    on a parsed scenario, as the group leader would run it. A user's assignor that fails raises a
    :class:`KassignError` naming it; kassign's own failures propagate as they are."""
    from kassign.groups.flat import no_cyclic_gc  # here: the assignors' names load without numba

    ours = type(assignor).__module__.startswith("kassign.")
    try:
        with no_cyclic_gc():  # thousands of subscriptions, read from a young document (see kassign.api._read)
            subscriptions = scenario.subscriptions(assignor)
        if isinstance(assignor, ConsumerPartitionAssignor):
            return assignor.assign_flat(scenario.cluster(), subscriptions)
        # an assignor by shape only (a `name` and an `assign`): the base class's conversion serves it too
        return ConsumerPartitionAssignor.assign_flat(assignor, scenario.cluster(), subscriptions)  # type: ignore[arg-type]
    except KassignError:
        raise
    except Exception as err:
        if ours:
            raise
        name = getattr(assignor, "name", type(assignor).__name__)
        raise KassignError(f"assignor {name!r} failed: {type(err).__name__}: {err}") from err
