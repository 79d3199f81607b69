"""The tree is the architecture: kassign's packages import only downwards, and no module imports
itself back through others (issue #31). Read from the source, so a new import that breaks either
fails here with the two modules named."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "kassign"

# Each top-level part and its layer: a part imports only parts of lower layers (core at the bottom),
# and the three questions (producer, groups, replicas) stay independent of one another.
LAYERS = {"core": 0, "_accel": 0, "_native": 0, "producer": 1, "groups": 1, "replicas": 1,
          "kafka": 2, "api": 3, "spark": 3, "assignors": 3, "clients": 3, "cli": 4, "": 5}
PEERS_APART = {"producer", "groups", "replicas"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports() -> dict[str, set[str]]:
    """Every kassign module -> the kassign modules it imports anywhere (top level or inside a function)."""
    found: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        module = _module_name(path)
        targets: set[str] = set()
        tree = ast.parse(path.read_text())
        # imports a type checker alone sees (``if TYPE_CHECKING:``) never run, so they make no circle
        typing_only = {id(inner) for node in ast.walk(tree)
                       if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                       for inner in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "kassign":
                if node.module == "kassign":
                    targets.update(f"kassign.{alias.name}" for alias in node.names)
                else:
                    targets.add(node.module)
                    targets.update(f"{node.module}.{alias.name}" for alias in node.names
                                   if (SRC.parent / node.module.replace(".", "/") / f"{alias.name}.py").exists())
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names if alias.name.split(".")[0] == "kassign")
        found[module] = targets
    return found


def _part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else ""


def test_every_part_imports_only_downwards() -> None:
    wrong = sorted(
        (module, target)
        for module, targets in _imports().items() for target in targets
        if LAYERS[_part(target)] > LAYERS[_part(module)]
        or (_part(module) in PEERS_APART and _part(target) in PEERS_APART and _part(module) != _part(target))
    )
    assert wrong == []


def test_no_module_imports_itself_back() -> None:
    graph = {module: {t for t in targets if t in _imports_cache and t != module}
             for module, targets in _imports_cache.items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1 and not module.startswith(target + "."):  # a package's own modules may use its __init__
                cycles.append(trail[trail.index(target):] + [target] if target in trail else [module, target])
            elif target not in state:
                visit(target, trail + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_the_known_parts_are_all_there() -> None:
    parts = {_part(module) for module in _imports()}
    assert parts <= set(LAYERS), f"a new top-level part needs a layer: {sorted(parts - set(LAYERS))}"


_imports_cache = _imports()
