"""Everything the executors use from outside, injected by the caller (tests inject recording fakes)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from voxdesk.app.actions.focus import FocusProbe
from voxdesk.app.actions.launcher import SystemAppLauncher, SystemUrlOpener
from voxdesk.app.actions.ports import AppLauncher, Clipboard, Keyboard, Notifier, ProcessRunner, UrlOpener
from voxdesk.app.actions.process import run_process

__all__ = ["Services"]


@dataclass
class Services:
    """The desktop pieces actions use; stopping the microphone is a plain callback from the controller."""

    clipboard: Clipboard | None = None
    notifier: Notifier | None = None
    stop_listening: Callable[[], None] | None = None
    open_url: UrlOpener = field(default_factory=SystemUrlOpener)
    launcher: AppLauncher = field(default_factory=SystemAppLauncher)
    keyboard: Keyboard | None = None  # None: the backend for this desktop, chosen at first use
    run_process: ProcessRunner = run_process
    focus: FocusProbe | None = None  # None: the probe for this desktop, chosen at first use
