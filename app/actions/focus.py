"""Which application has the keyboard focus, and the writing mode meant for it.

One interface, :class:`FocusProbe`; :class:`X11Focus` reads the focused window's ``WM_CLASS``
(instance and class) with xdotool and xprop, :class:`MacFocus` the frontmost application's
bundle identifier and name from System Events, and
:class:`~voxdesk.app.actions.focus_windows.WindowsFocus` the foreground window's executable
and class. Elsewhere :class:`NoFocusProbe` says plainly that it cannot tell, and dictation uses
the settings' mode.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PureWindowsPath
from typing import Protocol

from voxdesk.app.actions.focus_windows import foreground_window
from voxdesk.app.writing.modes import Mode, mode_named

__all__ = [
    "FocusProbe",
    "FocusedApp",
    "MacFocus",
    "NoFocusProbe",
    "WindowsFocus",
    "X11Focus",
    "choose_focus_probe",
    "foreground_app",
    "mode_for_app",
    "parse_frontmost",
]

_WAIT_S = 2.0


@dataclass(frozen=True)
class FocusedApp:
    """The focused window's application: its ``WM_CLASS`` instance and class on X11; bundle
    identifier and name on macOS; executable and window class on Windows."""

    instance: str
    app_class: str

    @property
    def names(self) -> tuple[str, str]:
        return self.instance, self.app_class


class FocusProbe(Protocol):
    """Tells which application has the focus."""

    unsupported: str | None  # why this desktop cannot tell, in plain words; None when it can

    async def focused_app(self) -> FocusedApp | None:
        """The focused application, or None when there is none or it cannot be told."""
        ...


class NoFocusProbe:
    """A desktop where Voxdesk cannot tell the focused application (yet)."""

    def __init__(self, reason: str) -> None:
        self.unsupported: str | None = reason

    async def focused_app(self) -> FocusedApp | None:
        return None


class X11Focus:
    """X11: the focused window (xdotool) and its ``WM_CLASS`` property (xprop)."""

    unsupported: str | None = None

    def __init__(self, output: Callable[[Sequence[str]], Awaitable[str | None]] | None = None) -> None:
        self._output = output or read_output

    async def focused_app(self) -> FocusedApp | None:
        window = await self._output(["xdotool", "getwindowfocus"])
        if window is None or not window.isdigit():
            return None
        answer = await self._output(["xprop", "-id", window, "WM_CLASS"])
        return parse_wm_class(answer) if answer is not None else None


class WindowsFocus:
    """Windows: the foreground window's process's executable and its window class."""

    unsupported: str | None = None

    def __init__(self, window: Callable[[], Awaitable[tuple[str, str] | None]] = foreground_window) -> None:
        self._window = window

    async def focused_app(self) -> FocusedApp | None:
        found = await self._window()
        return foreground_app(*found) if found is not None else None


def foreground_app(executable: str, window_class: str) -> FocusedApp | None:
    """The program ``C:\\...\\slack.exe`` with window class ``Chrome_WidgetWin_1`` as
    FocusedApp(``slack``, ``Chrome_WidgetWin_1``): modes name Windows programs by their executable."""
    name = PureWindowsPath(executable).stem if executable else ""
    return FocusedApp(name, window_class) if name or window_class else None


_FRONTMOST = (
    'tell application "System Events" to get {bundle identifier, name} of first process whose frontmost is true'
)


class MacFocus:
    """macOS: the frontmost application, asked of System Events with osascript (macOS asks the
    user once to let Voxdesk control System Events; refused, the settings' mode is used)."""

    unsupported: str | None = None

    def __init__(self, output: Callable[[Sequence[str]], Awaitable[str | None]] | None = None) -> None:
        self._output = output or read_output

    async def focused_app(self) -> FocusedApp | None:
        answer = await self._output(["osascript", "-e", _FRONTMOST])
        return parse_frontmost(answer) if answer is not None else None


def parse_frontmost(line: str) -> FocusedApp | None:
    """osascript's ``com.tinyspeck.slackmacgap, Slack`` as a FocusedApp; None without a name."""
    bundle, _, name = line.partition(", ")
    return FocusedApp(bundle.strip(), name.strip()) if name.strip() else None


async def read_output(argv: Sequence[str]) -> str | None:
    """What ``argv`` prints (stripped) when it ends well within a short wait; None otherwise."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
        )
    except OSError:
        return None
    try:
        out, _ = await asyncio.wait_for(process.communicate(), _WAIT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        return None
    return out.decode(errors="replace").strip() if process.returncode == 0 else None


def parse_wm_class(line: str) -> FocusedApp | None:
    """xprop's ``WM_CLASS(STRING) = "xterm", "XTerm"`` as a FocusedApp; None without one."""
    _, _, value = line.partition("=")
    parts = [part.strip().strip('"') for part in value.split('",')]
    if len(parts) < 2 or not parts[1]:
        return None
    return FocusedApp(parts[0], parts[1])


def mode_for_app(
    app: FocusedApp | None, modes: Iterable[Mode], app_modes: Mapping[str, str] | None = None
) -> Mode | None:
    """The mode the user's ``app_modes`` name for the app's class or instance, else the first of
    ``modes`` whose ``app_classes`` name it (any case). A name in ``app_modes`` that is no mode is passed over."""
    if app is None:
        return None
    modes = tuple(modes)
    names = {name.casefold() for name in app.names if name}
    for app_name, mode_name in (app_modes or {}).items():
        if app_name.casefold() in names and (chosen := mode_named(mode_name, modes)) is not None:
            return chosen
    return next((m for m in modes if names & {c.casefold() for c in m.app_classes}), None)


def choose_focus_probe(environ: Mapping[str, str] | None = None, platform: str = sys.platform) -> FocusProbe:
    """The probe for this desktop; one that says why where it cannot tell."""
    environ = os.environ if environ is None else environ
    if platform == "win32":
        return WindowsFocus()
    if platform == "darwin":
        return MacFocus() if shutil.which("osascript") else NoFocusProbe("osascript is not on the PATH")
    if environ.get("WAYLAND_DISPLAY") and not environ.get("DISPLAY"):
        return NoFocusProbe("Wayland does not tell programs which window has the focus")
    if not environ.get("DISPLAY"):
        return NoFocusProbe("there is no graphical session")
    missing = [tool for tool in ("xdotool", "xprop") if shutil.which(tool) is None]
    if missing:
        return NoFocusProbe(f"picking the mode by the focused application needs {' and '.join(missing)}")
    return X11Focus()
