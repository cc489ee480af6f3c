"""Import contract: which layers may import which, read from the source with ast (nothing is imported).

ui and cli sit on app, app on engine; ui/launcher.py may start the cli. Qt stays in ui, the old
top-level names (``app``, ``engine``, ``ui``) are gone, and modules of the namespace form no cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("app", "cli", "engine", "ui")
FORBIDDEN = {
    "engine": ("voxdesk.app", "voxdesk.cli", "voxdesk.ui", "PySide6", "qasync"),
    "app": ("voxdesk.ui", "voxdesk.cli", "PySide6", "qasync"),
    "cli": ("voxdesk.ui",),
    "ui": (),
}
OLD_NAMES = ("app", "engine", "ui")


def module_name(path: Path) -> str:
    """The installed name of a source file, e.g. app/files/jobs.py -> voxdesk.app.files.jobs."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("voxdesk", *parts))


def sources() -> dict[str, Path]:
    """Every module of the layers, by installed name."""
    return {module_name(path): path for layer in LAYERS for path in sorted((ROOT / layer).rglob("*.py"))}


def imports(path: Path, name: str) -> Iterator[tuple[int, str]]:
    """(line, absolute module) for every import in the file, including TYPE_CHECKING and function bodies.

    ``from package import name`` yields both the package and ``package.name`` (the submodule, if it
    is one); relative imports are resolved against the module's own package.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0]
                base = f"{anchor}.{base}" if base else anchor
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_layers_import_only_downward() -> None:
    """engine < app < cli/ui, and Qt only in ui."""
    violations = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for name, path in sources().items()
        for line, target in imports(path, name)
        for prefix in FORBIDDEN[name.split(".")[1]]
        if under(target, prefix)
    ]
    assert violations == []


def test_no_old_top_level_names() -> None:
    """Everything imports through the voxdesk namespace."""
    violations = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for name, path in sources().items()
        for line, target in imports(path, name)
        if any(under(target, old) for old in OLD_NAMES)
    ]
    assert violations == []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: each strongly connected component of more than one module, sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for successor in graph[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_cycles() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"b"}, "d": {"d"}}) == [["b", "c"]]


def test_no_import_cycles() -> None:
    """The modules of the namespace import each other without a cycle (a package counts as its __init__)."""
    modules = sources()
    graph = {
        name: {target for _, target in imports(path, name) if target in modules and target != name}
        for name, path in modules.items()
    }
    found = cycles(graph)
    assert not found, "import cycles among: " + "; ".join(", ".join(component) for component in found)


@pytest.mark.parametrize(
    ("filename", "name", "source", "expected"),
    [
        ("jobs.py", "voxdesk.app.files.jobs", "from . import x", "voxdesk.app.files"),
        ("settings.py", "voxdesk.app.settings", "from ..engine import vad", "voxdesk.engine"),
        ("__init__.py", "voxdesk.app.actions", "from .. import y", "voxdesk.app"),
    ],
)
def test_relative_imports_resolve(tmp_path: Path, filename: str, name: str, source: str, expected: str) -> None:
    path = tmp_path / filename
    path.write_text(source, encoding="utf-8")
    assert next(imports(path, name)) == (1, expected)
