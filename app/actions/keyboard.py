"""Typing into the focused window: one backend per desktop, chosen at run time.

Text always travels as one argument of an argument list (after ``--`` where the tool takes
options), never through a shell and never interpolated into a script.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

from voxdesk.app.actions.focus import read_output
from voxdesk.app.actions.keys import KeyCombo
from voxdesk.app.actions.ports import ActionError, Keyboard, ProcessRunner
from voxdesk.app.actions.process import run_process

__all__ = [
    "OsascriptKeyboard",
    "WtypeKeyboard",
    "XdotoolKeyboard",
    "YdotoolKeyboard",
    "choose_keyboard",
]

_WAIT_S = 60.0


async def _run(runner: ProcessRunner, argv: Sequence[str]) -> None:
    result = await runner(argv, wait_s=_WAIT_S)
    if result.returncode is None:
        raise ActionError(f"{argv[0]} did not finish typing within {_WAIT_S:.0f} s")
    if result.returncode != 0:
        detail = f": {result.stderr.splitlines()[-1]}" if result.stderr else ""
        raise ActionError(f"{argv[0]} failed (exit status {result.returncode}){detail}")


class XdotoolKeyboard:
    """X11 through xdotool."""

    name = "xdotool"

    def __init__(self, delay_ms: int = 12, runner: ProcessRunner = run_process, remap_delay_ms: int = 200) -> None:
        self.delay_ms = delay_ms
        self.remap_delay_ms = remap_delay_ms
        self._runner = runner

    async def type_text(self, text: str) -> None:
        # A character missing from the keymap ("ü" on a US layout) makes xdotool bind a spare
        # keycode to it, press it, and unbind it half a delay later. The application looks the
        # keycode up when it handles the mapping change; if that comes after the unbind, the
        # character is lost. At 60 ms a fresh machine under load lost "ö" and "é" (Xvfb, Qt), so
        # such runs get a delay that leaves the application a tenth of a second per character.
        for run in re.findall(r"[\x00-\x7f]+|[^\x00-\x7f]+", text):
            delay = str(self.delay_ms if run.isascii() else max(self.delay_ms, self.remap_delay_ms))
            await _run(self._runner, ["xdotool", "type", "--clearmodifiers", "--delay", delay, "--", run])

    async def press(self, combo: KeyCombo) -> None:
        await _run(self._runner, ["xdotool", "key", "--clearmodifiers", "--", str(combo)])

    async def backspace(self, count: int) -> None:
        if count > 0:
            argv = ["xdotool", "key", "--clearmodifiers", "--delay", "5", "--repeat", str(count), "BackSpace"]
            await _run(self._runner, argv)

    async def focused_window(self) -> str | None:
        return await read_output(["xdotool", "getwindowfocus", "getwindowname"]) or None


class WtypeKeyboard:
    """Wayland compositors with the virtual-keyboard protocol (wlroots, KDE) through wtype."""

    name = "wtype"
    _MODIFIERS: ClassVar[dict[str, str]] = {"ctrl": "ctrl", "shift": "shift", "alt": "alt", "super": "logo"}

    def __init__(self, runner: ProcessRunner = run_process) -> None:
        self._runner = runner

    async def type_text(self, text: str) -> None:
        await _run(self._runner, ["wtype", "--", text])

    async def press(self, combo: KeyCombo) -> None:
        argv = ["wtype"]
        for modifier in combo.modifiers:
            argv += ["-M", self._MODIFIERS[modifier]]
        argv += ["-k", combo.key]
        for modifier in reversed(combo.modifiers):
            argv += ["-m", self._MODIFIERS[modifier]]
        await _run(self._runner, argv)

    async def backspace(self, count: int) -> None:
        if count > 0:
            await _run(self._runner, ["wtype", *(["-k", "BackSpace"] * count)])

    async def focused_window(self) -> str | None:
        return None  # not asked on this desktop yet


# Linux input event codes (linux/input-event-codes.h) for ydotool's key command.
_LINUX_KEYCODES: dict[str, int] = {
    **{c: code for code, c in enumerate("1234567890", start=2)},
    **{c: code for code, c in enumerate("qwertyuiop", start=16)},
    **{c: code for code, c in enumerate("asdfghjkl", start=30)},
    **{c: code for code, c in enumerate("zxcvbnm", start=44)},
    **{f"F{n}": 58 + n for n in range(1, 11)},
    "F11": 87,
    "F12": 88,
    "Return": 28,
    "Escape": 1,
    "Tab": 15,
    "space": 57,
    "BackSpace": 14,
    "Delete": 111,
    "Insert": 110,
    "Up": 103,
    "Down": 108,
    "Left": 105,
    "Right": 106,
    "Home": 102,
    "End": 107,
    "Prior": 104,
    "Next": 109,
    "ctrl": 29,
    "shift": 42,
    "alt": 56,
    "super": 125,
}


class YdotoolKeyboard:
    """Any Wayland compositor through ydotool (needs the ydotoold daemon)."""

    name = "ydotool"

    def __init__(self, runner: ProcessRunner = run_process) -> None:
        self._runner = runner

    async def type_text(self, text: str) -> None:
        await _run(self._runner, ["ydotool", "type", "--", text])

    async def press(self, combo: KeyCombo) -> None:
        codes = [_LINUX_KEYCODES[k] for k in (*combo.modifiers, combo.key) if k in _LINUX_KEYCODES]
        if len(codes) != len(combo.modifiers) + 1:
            raise ActionError(f"ydotool cannot press {combo}")
        events = [f"{c}:1" for c in codes] + [f"{c}:0" for c in reversed(codes)]
        await _run(self._runner, ["ydotool", "key", *events])

    async def backspace(self, count: int) -> None:
        if count > 0:
            await _run(self._runner, ["ydotool", "key", *(["14:1", "14:0"] * count)])

    async def focused_window(self) -> str | None:
        return None  # not asked on this desktop yet


# macOS virtual key codes for keys that have no character.
_MAC_KEYCODES = {
    "Return": 36,
    "Tab": 48,
    "space": 49,
    "BackSpace": 51,
    "Escape": 53,
    "Delete": 117,
    "Home": 115,
    "End": 119,
    "Prior": 116,
    "Next": 121,
    "Left": 123,
    "Right": 124,
    "Down": 125,
    "Up": 126,
    **dict(zip([f"F{n}" for n in range(1, 13)], [122, 120, 99, 118, 96, 97, 98, 100, 101, 109, 103, 111], strict=True)),
}
_MAC_MODIFIERS = {"ctrl": "control down", "shift": "shift down", "alt": "option down", "super": "command down"}


class OsascriptKeyboard:
    """macOS through System Events (needs the Accessibility permission).

    The text is an argument of the script's run handler. It gets one leading character that
    the script drops, so text starting with "-" is never read as an osascript option.
    """

    name = "osascript"

    def __init__(self, runner: ProcessRunner = run_process) -> None:
        self._runner = runner

    def _script(self, *lines: str) -> list[str]:
        argv = ["osascript", "-e", "on run argv"]
        for line in lines:
            argv += ["-e", line]
        return [*argv, "-e", "end run"]

    async def type_text(self, text: str) -> None:
        script = self._script('tell application "System Events" to keystroke (text 2 thru -1 of (item 1 of argv))')
        await _run(self._runner, [*script, "x" + text])

    async def press(self, combo: KeyCombo) -> None:
        using = ", ".join(_MAC_MODIFIERS[m] for m in combo.modifiers)
        suffix = f" using {{{using}}}" if using else ""
        if combo.key in _MAC_KEYCODES:
            line = f'tell application "System Events" to key code {_MAC_KEYCODES[combo.key]}{suffix}'
        else:
            line = f'tell application "System Events" to keystroke (text 2 thru -1 of (item 1 of argv)){suffix}'
        await _run(self._runner, [*self._script(line), "x" + combo.key])

    async def backspace(self, count: int) -> None:
        if count > 0:
            script = self._script(
                "repeat ((text 2 thru -1 of (item 1 of argv)) as integer) times",
                'tell application "System Events" to key code 51',
                "end repeat",
            )
            await _run(self._runner, [*script, f"x{count}"])

    async def focused_window(self) -> str | None:
        return None  # not asked on this desktop yet


def choose_keyboard(
    environ: Mapping[str, str] | None = None,
    platform: str = sys.platform,
    which: Callable[[str], str | None] = shutil.which,
) -> Keyboard:
    """The typing backend that works on this desktop, or ActionError saying what to install."""
    environ = os.environ if environ is None else environ
    if platform == "darwin":
        return OsascriptKeyboard()
    if platform == "win32":
        from voxdesk.app.actions.keyboard_windows import SendInputKeyboard

        return SendInputKeyboard()
    if environ.get("WAYLAND_DISPLAY"):
        if which("wtype"):
            return WtypeKeyboard()
        if which("ydotool"):
            return YdotoolKeyboard()
        raise ActionError(
            "typing on Wayland needs wtype (or ydotool with its ydotoold service); "
            "install it with: sudo apt install wtype"
        )
    if environ.get("DISPLAY"):
        if which("xdotool"):
            return XdotoolKeyboard()
        raise ActionError("typing needs xdotool on X11; install it with: sudo apt install xdotool")
    raise ActionError("typing needs a graphical session, and neither DISPLAY nor WAYLAND_DISPLAY is set")
