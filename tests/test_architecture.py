"""Import contract: which layers may import which, read from the source with ast (nothing is imported).

ui and cli sit on app and server, app on engine, server on engine; ui/launcher.py may start
the cli. Inside engine, the wire cores (engine/wire) do no I/O, and client engines
(engine/remote) and servers (server/) never import each other. Qt stays in ui, the old
top-level names (``app``, ``engine``, ``ui``) are gone, and modules of the namespace form no cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("app", "cli", "engine", "server", "ui")
QT = ("PySide6", "qasync")
FORBIDDEN = {
    "engine": ("voxdesk.app", "voxdesk.cli", "voxdesk.server", "voxdesk.ui", *QT),
    "server": ("voxdesk.app", "voxdesk.cli", "voxdesk.ui", "voxdesk.engine.remote", *QT),
    "app": ("voxdesk.ui", "voxdesk.cli", "voxdesk.server", *QT),
    "cli": ("voxdesk.ui",),
    "ui": (),
}
OLD_NAMES = ("app", "engine", "ui")
WIRE = "voxdesk.engine.wire"
WIRE_FORBIDDEN = (
    # I/O and concurrency: the cores take bytes and return bytes
    "asyncio",
    "socket",
    "ssl",
    "selectors",
    "threading",
    "websockets",
    "urllib.request",
    "http",
    # models: a core never loads one
    "onnxruntime",
    "ctranslate2",
    "faster_whisper",
    "vllm",
    "torch",
    "voxdesk.engine.audio.silero",  # the server gives a core its speech scorer
    # the layers around the cores
    "voxdesk.engine.remote",
    "voxdesk.engine.whisper",
    "voxdesk.engine.vllm",
)
CLIENTS = "voxdesk.engine.remote"


def module_name(path: Path, root: Path = ROOT) -> str:
    """The installed name of a source file, e.g. app/files/jobs.py -> voxdesk.app.files.jobs."""
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("voxdesk", *parts))


def sources(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the layers under ``root``, by installed name."""
    return {module_name(path, root): path for layer in LAYERS for path in sorted((root / layer).rglob("*.py"))}


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


def violations(rules: dict[str, tuple[str, ...]], root: Path = ROOT) -> list[str]:
    """Every import of a module under a key of ``rules`` (a module prefix) that falls under one
    of its forbidden prefixes, as ``file:line imports target``."""
    return [
        f"{path.relative_to(root)}:{line} imports {target}"
        for name, path in sources(root).items()
        for layer, forbidden in rules.items()
        if under(name, layer)
        for line, target in imports(path, name)
        for prefix in forbidden
        if under(target, prefix)
    ]


RULES: dict[str, dict[str, tuple[str, ...]]] = {
    "layers": {f"voxdesk.{layer}": forbidden for layer, forbidden in FORBIDDEN.items()},
    "wire": {WIRE: WIRE_FORBIDDEN},
    "clients": {CLIENTS: ("voxdesk.server",), "voxdesk.server": (CLIENTS,)},
}


def test_layers_import_only_downward() -> None:
    """engine < app, server < cli/ui, and Qt only in ui."""
    assert violations(RULES["layers"]) == []


def test_wire_cores_do_no_io_and_load_no_model() -> None:
    """The three dialects' cores are sans-I/O: no sockets, event loops, threads or models."""
    assert violations(RULES["wire"]) == []


def test_client_engines_and_servers_do_not_import_each_other() -> None:
    """A client engine is not built on a server, nor a server on a client (engine never imports server)."""
    assert violations(RULES["clients"]) == []


@pytest.mark.parametrize(
    ("module", "source", "rule"),
    [
        ("engine/wire/realtime/protocol.py", "import asyncio", "wire"),
        ("engine/wire/wyoming/framing.py", "from websockets.asyncio.server import serve", "wire"),
        ("engine/wire/openai/protocol.py", "from voxdesk.engine.whisper.builtin import BuiltinEngine", "wire"),
        ("engine/wire/openai/protocol.py", "from voxdesk.engine.audio.silero import SileroVad", "wire"),
        ("engine/remote/realtime.py", "from voxdesk.server.connection import Connection", "clients"),
        ("server/connection.py", "from voxdesk.engine.remote import realtime", "clients"),
        ("engine/session.py", "from voxdesk.app import settings", "layers"),
        ("app/settings.py", "import PySide6.QtCore", "layers"),
        ("server/http.py", "from voxdesk.app.history import store", "layers"),
    ],
)
def test_each_rule_fails_when_broken(tmp_path: Path, module: str, source: str, rule: str) -> None:
    """A forbidden import added to a copy of a real module is caught by the rule that owns it."""
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            target = tmp_path / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    broken = tmp_path / module
    broken.write_text(broken.read_text(encoding="utf-8") + f"\n{source}\n", encoding="utf-8")
    caught = [line for line in violations(RULES[rule], tmp_path) if line.startswith(module)]
    assert caught, f"{rule} did not catch {source!r} in {module}"


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
