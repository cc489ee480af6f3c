"""What actions need from the desktop, as small Protocols the caller injects.

``app/`` never imports Qt: the clipboard and notifications come from the window (see
``ui/desktop_services.py``); stopping the microphone is a plain callback from the controller.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from voxdesk.engine.errors import VoxdeskError

if TYPE_CHECKING:
    from voxdesk.app.actions.keyboard import Keyboard

__all__ = [
    "ActionError",
    "AppLauncher",
    "Clipboard",
    "Notifier",
    "ProcessResult",
    "ProcessRunner",
    "Services",
    "UrlOpener",
    "run_process",
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

    def __call__(self, url: str) -> None: ...


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


async def run_process(argv: Sequence[str], *, wait_s: float) -> ProcessResult:
    """Start ``argv`` without a shell and wait up to ``wait_s`` seconds for it to end.

    A program still running after the wait keeps running on its own (an application that
    was launched); its result has ``returncode`` None.
    """
    # stderr goes to a file, not a pipe: a launched application that keeps running must never
    # block on a full pipe nobody reads.
    with tempfile.TemporaryFile() as errors:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=errors,
                start_new_session=os.name == "posix",
            )
        except FileNotFoundError as error:
            raise ActionError(f"{argv[0]} is not installed or not on the PATH") from error
        except OSError as error:
            raise ActionError(f"could not start {argv[0]}: {error.strerror or error}") from error
        try:
            returncode = await asyncio.wait_for(process.wait(), wait_s)
        except TimeoutError:
            return ProcessResult(None)
        errors.seek(0)
        return ProcessResult(returncode, errors.read(64_000).decode(errors="replace").strip())


def _default_opener() -> UrlOpener:
    from voxdesk.app.actions.launcher import open_url_in_browser

    return open_url_in_browser


def _default_launcher() -> AppLauncher:
    from voxdesk.app.actions.launcher import SystemAppLauncher

    return SystemAppLauncher()


@dataclass
class Services:
    """Everything the executors use from outside; tests replace any of it with recording fakes."""

    clipboard: Clipboard | None = None
    notifier: Notifier | None = None
    stop_listening: Callable[[], None] | None = None
    open_url: UrlOpener = field(default_factory=_default_opener)
    launcher: AppLauncher = field(default_factory=_default_launcher)
    keyboard: Keyboard | None = None  # None: the backend for this desktop, chosen at first use
    run_process: ProcessRunner = run_process
