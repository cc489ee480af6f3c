"""The ports of voice actions: what a keyboard, launcher, opener, clipboard, notifier and process
runner can do, as Protocols, and the error an action raises.

``app/`` never imports Qt: the clipboard and notifications come from the window (see
``ui/desktop_services.py``). Implementations import this module; it imports none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from voxdesk.app.actions.keys import KeyCombo
from voxdesk.engine.errors import VoxdeskError

__all__ = [
    "ActionError",
    "AppLauncher",
    "Clipboard",
    "Keyboard",
    "Notifier",
    "ProcessResult",
    "ProcessRunner",
    "UrlOpener",
]


class ActionError(VoxdeskError):
    """An action could not be done; the message is meant for the user, in plain words."""


class Clipboard(Protocol):
    """The system clipboard's text."""

    def text(self) -> str: ...

    def set_text(self, text: str) -> None: ...


class Notifier(Protocol):
    """Shows a desktop notification."""

    def notify(self, title: str, message: str) -> None: ...


class UrlOpener(Protocol):
    """Opens a web address in the browser; raises ActionError when it cannot."""

    async def __call__(self, url: str) -> None: ...


class AppLauncher(Protocol):
    """Starts an application from its spoken name; returns what it started, raises ActionError."""

    async def launch(self, app: str) -> str: ...


@dataclass(frozen=True)
class ProcessResult:
    """How a program ended; ``returncode`` is None while it is still running after the wait."""

    returncode: int | None
    stderr: str = ""


class ProcessRunner(Protocol):
    """Runs an argument list (never through a shell)."""

    async def __call__(self, argv: Sequence[str], *, wait_s: float) -> ProcessResult: ...


class Keyboard(Protocol):
    """Sends keystrokes to the focused window."""

    name: str

    async def type_text(self, text: str) -> None: ...

    async def press(self, combo: KeyCombo) -> None: ...

    async def backspace(self, count: int) -> None: ...

    async def focused_window(self) -> str | None:
        """The title of the window keystrokes go to, where the desktop says; else None."""
        ...
