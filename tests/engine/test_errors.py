"""One error tree: every deliberate error is a VoxdeskError and is drawn in engine/errors.py."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pytest

import voxdesk.app
import voxdesk.cli
import voxdesk.engine
import voxdesk.server
from voxdesk.engine import errors
from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.wire.realtime.events import WIRE_ERROR_CODES

# Modules that need a missing optional dependency (vLLM, a platform API) are skipped; a broken
# import of our own fails the test. ui/ is left out because it needs Qt and defines no errors.
_PACKAGES = (voxdesk.app, voxdesk.cli, voxdesk.engine, voxdesk.server)


def _modules() -> list[ModuleType]:
    modules: list[ModuleType] = []
    for package in _PACKAGES:
        modules.append(package)
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            try:
                modules.append(importlib.import_module(info.name))
            except ModuleNotFoundError as missing:
                if (missing.name or "").startswith("voxdesk"):
                    raise
    return modules


def _exceptions_defined_in(module: ModuleType) -> list[type[BaseException]]:
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__
    ]


@pytest.fixture(scope="module")
def exceptions() -> list[type[BaseException]]:
    return [error for module in _modules() for error in _exceptions_defined_in(module)]


def _tree() -> dict[str, str]:
    """Each error's name in the docstring's tree, with the code or exit status beside it."""
    assert errors.__doc__ is not None
    rows = re.findall(r"^\s+(?:[├└]── )?(\w+)\s+(\S+(?: \S+)*?)\s{2,}", errors.__doc__, re.MULTILINE)
    return dict(rows)


def test_the_walk_finds_errors_across_the_layers(exceptions: list[type[BaseException]]) -> None:
    names = {error.__name__ for error in exceptions}
    assert {"EngineUnavailable", "ProtocolError", "HistoryError", "MicrophoneUnavailable", "ActionError"} <= names


def test_every_public_error_is_a_voxdesk_error(exceptions: list[type[BaseException]]) -> None:
    public = [e for e in exceptions if not e.__name__.startswith("_")]  # private ones never leave their module
    assert [f"{e.__module__}.{e.__name__}" for e in public if not issubclass(e, VoxdeskError)] == []


def test_every_voxdesk_error_is_drawn_in_the_tree_with_what_it_maps_to(
    exceptions: list[type[BaseException]],
) -> None:
    tree = _tree()
    defined = {e.__name__ for e in exceptions if issubclass(e, VoxdeskError)}
    assert defined == set(tree)
    exit_or_window = re.compile(r"^(exit \d+|window|its own code)$")
    unmapped = [(name, where) for name, where in tree.items() if not exit_or_window.match(where)]
    assert [(name, where) for name, where in unmapped if where not in WIRE_ERROR_CODES] == []


def test_builtin_bases_are_kept_for_older_callers() -> None:
    from voxdesk.engine.errors import AudioFormatError
    from voxdesk.server.realtime.server import InsecureBindError

    assert issubclass(AudioFormatError, ValueError) and issubclass(InsecureBindError, RuntimeError)
