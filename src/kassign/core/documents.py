"""Reading the JSON and YAML documents users hand kassign, strictly.

Python's decoders accept things a careful Kafka tool should not: a key given twice
(the last one silently wins, so a member or topic disappears), nesting deep enough
to exhaust the interpreter's stack, and integers of thousands of digits. Here each is
an input error with a one-line message that says where (:class:`ScenarioError`),
never an internal error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import yaml

from kassign.core.errors import ScenarioError


def _no_duplicates(pairs: Iterable[tuple[Any, Any]]) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Duplicate(key)
        result[key] = value
    return result


class _Duplicate(ValueError):
    def __init__(self, key: Any) -> None:
        super().__init__(key)
        self.key = key


def load_json(text: str, source: str) -> Any:
    """Decode JSON ``text``; ``source`` names it in errors ("scenario file 'x.json'", "stdin")."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate as dup:
        raise ScenarioError(f"{source}: key {json.dumps(str(dup.key))} appears twice in one object; "
                            "give each member, topic or field once") from None
    except json.JSONDecodeError as err:
        raise ScenarioError(f"{source} is not valid JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    except RecursionError:
        raise ScenarioError(f"{source}: JSON nested too deeply to be a kassign document") from None
    except ValueError as err:  # e.g. an integer beyond Python's 4300-digit conversion limit
        raise ScenarioError(f"{source} is not usable JSON: {_first_line(err)}") from None


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that gives one key twice."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: the base loader reports it
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} appears twice in one mapping", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str, source: str) -> Any:
    """Decode YAML (JSON is YAML too) with the same strictness as :func:`load_json`."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None)
        detail = f": {problem}" if problem else ""
        raise ScenarioError(f"{source} is not valid YAML{where}{detail}") from None
    except RecursionError:
        raise ScenarioError(f"{source}: YAML nested too deeply to be a kassign document") from None
    except ValueError as err:
        raise ScenarioError(f"{source} is not usable YAML: {_first_line(err)}") from None


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
