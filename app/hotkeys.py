"""System-wide shortcuts: a start/stop key combination, a hold-to-talk key and a combination
per writing mode (pynput).

They work on X11, Windows and macOS (which asks the user to allow input monitoring). On
Wayland a program cannot see keys pressed in other windows; :func:`unavailable_reason` says
so, and the in-window shortcuts and tray icon remain.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["GlobalHotkeys", "to_pynput_combination", "unavailable_reason"]

logger = logging.getLogger("voxdesk.hotkeys")

_NAMES = {"ctrl": "<ctrl>", "control": "<ctrl>", "alt": "<alt>", "shift": "<shift>", "meta": "<cmd>"}


def unavailable_reason() -> str | None:
    """Why system-wide shortcuts cannot work in this session, or ``None`` when they can."""
    if not sys.platform.startswith("linux"):
        return None
    if os.environ.get("XDG_SESSION_TYPE") == "wayland" or (
        os.environ.get("WAYLAND_DISPLAY") and not os.environ.get("DISPLAY")
    ):
        return (
            "System-wide shortcuts are not available on Wayland (programs cannot see keys pressed in "
            "other windows). Use the shortcuts inside the Voxdesk window or the tray icon."
        )
    if not os.environ.get("DISPLAY"):
        return "System-wide shortcuts need an X11 display."
    return None


def to_pynput_combination(sequence: str) -> str:
    """A Qt key sequence such as ``Ctrl+Alt+Space`` in pynput's form, ``<ctrl>+<alt>+<space>``."""
    parts = []
    for part in sequence.split("+"):
        name = part.strip().lower()
        if not name:
            raise ValueError(f"cannot use {sequence!r} as a shortcut")
        parts.append(_NAMES.get(name, name if len(name) == 1 else f"<{name}>"))
    return "+".join(parts)


def _pynput_key(name: str) -> Any:
    from pynput import keyboard

    lowered = name.strip().lower()
    if len(lowered) == 1:
        return keyboard.KeyCode.from_char(lowered)
    try:
        return keyboard.Key[lowered]
    except KeyError:
        raise ValueError(f"cannot use {name!r} as a hold-to-talk key") from None


class GlobalHotkeys:
    """Listens system-wide; calls back on the event loop that called :meth:`start`."""

    def __init__(
        self,
        toggle_shortcut: str,
        hold_key: str,
        *,
        on_toggle: Callable[[], None],
        on_hold_press: Callable[[], None],
        on_hold_release: Callable[[], None],
        mode_shortcuts: Mapping[str, str] | None = None,
        on_mode: Callable[[str], None] = lambda name: None,
    ) -> None:
        self.toggle_shortcut = toggle_shortcut
        self.hold_key = hold_key
        self.mode_shortcuts = dict(mode_shortcuts or {})
        self._on_mode = on_mode
        self._on_toggle = on_toggle
        self._on_hold_press = on_hold_press
        self._on_hold_release = on_hold_release
        self._listeners: list[Any] = []
        self._held = False

    def start(self) -> str | None:
        """Start listening; returns why it could not, or which mode shortcuts it left out (in
        plain words), or ``None``."""
        if reason := unavailable_reason():
            return reason
        loop = asyncio.get_running_loop()
        combinations, left_out = self._mode_combinations(loop)
        try:
            from pynput import keyboard

            if self.toggle_shortcut:
                combination = to_pynput_combination(self.toggle_shortcut)
                combinations[combination] = lambda: loop.call_soon_threadsafe(self._on_toggle)
            if combinations:
                self._listeners.append(keyboard.GlobalHotKeys(combinations))
            if self.hold_key:
                self._listeners.append(self._hold_listener(keyboard, _pynput_key(self.hold_key), loop))
            for listener in self._listeners:
                listener.start()
                listener.wait()
        except Exception as exc:  # pynput raises backend-specific errors (Xlib, permissions)
            self.stop()
            logger.warning("global shortcuts unavailable: %s", exc)
            return f"System-wide shortcuts are unavailable here ({exc}); use the in-window shortcuts."
        return "; ".join(left_out) or None

    def _mode_combinations(self, loop: asyncio.AbstractEventLoop) -> tuple[dict[str, Callable[[], object]], list[str]]:
        """pynput's combinations for the mode shortcuts, and a line for each that cannot be one."""
        combinations: dict[str, Callable[[], object]] = {}
        left_out = []
        for mode, shortcut in self.mode_shortcuts.items():
            try:
                combination = to_pynput_combination(shortcut)
            except (ValueError, AttributeError):  # AttributeError: a shortcut that is not text
                left_out.append(f"ignored writing.mode_shortcuts.{mode}: cannot use {shortcut!r} as a shortcut")
                continue
            combinations[combination] = functools.partial(loop.call_soon_threadsafe, self._on_mode, mode)
        return combinations, left_out

    def _hold_listener(self, keyboard: Any, key: Any, loop: asyncio.AbstractEventLoop) -> Any:
        def pressed(pressed_key: Any) -> None:
            if pressed_key == key and not self._held:  # auto-repeat sends more presses
                self._held = True
                loop.call_soon_threadsafe(self._on_hold_press)

        def released(released_key: Any) -> None:
            if released_key == key and self._held:
                self._held = False
                loop.call_soon_threadsafe(self._on_hold_release)

        return keyboard.Listener(on_press=pressed, on_release=released)

    def stop(self) -> None:
        # On X11 a stopped listener's thread ends at the next key event; it is a daemon thread.
        for listener in self._listeners:
            listener.stop()
        self._listeners.clear()
