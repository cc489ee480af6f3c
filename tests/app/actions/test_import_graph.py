"""The modules of voxdesk.app.actions import one way: no cycle, and no TYPE_CHECKING import to hide one."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import voxdesk.app.actions

PACKAGE = "voxdesk.app.actions"
FOLDER = Path(next(iter(voxdesk.app.actions.__path__)))


def _trees() -> dict[str, ast.Module]:
    return {
        f"{PACKAGE}.{path.stem}": ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(FOLDER.glob("*.py"))
        if path.stem != "__init__"
    }


def _imported(tree: ast.Module) -> set[str]:
    """Every module of the package the tree imports, at the top, in functions or under TYPE_CHECKING."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith(PACKAGE + ".")}


def test_the_modules_import_each_other_without_a_cycle() -> None:
    trees = _trees()
    graph = {name: _imported(tree) & set(trees) for name, tree in trees.items()}
    assert f"{PACKAGE}.center" in graph
    # Raises CycleError naming the modules of a cycle.
    order = list(graphlib.TopologicalSorter(graph).static_order())
    assert set(order) == set(graph)


def test_no_module_imports_under_type_checking() -> None:
    users = [
        name
        for name, tree in _trees().items()
        if any(isinstance(node, ast.Name) and node.id == "TYPE_CHECKING" for node in ast.walk(tree))
    ]
    assert users == []
