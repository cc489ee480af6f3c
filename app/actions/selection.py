"""The text selected in the focused application, read through the clipboard and the app's own Copy.

No platform lets one program read another's selection directly everywhere (X11's PRIMARY
selection stays with the last app that selected, so it can be text long deselected). What every
app does is copy its selection on Ctrl+C (Cmd+C on macOS): so the clipboard is set to a marker,
the copy key is pressed, and what replaced the marker is the selection. With nothing selected
the marker stays. The clipboard is put back as it was either way.

In a terminal Ctrl+C interrupts the program running there, so terminals get their own Copy key
(Ctrl+Shift+C), and the ones that have none (xterm, rxvt, st: they copy on select) get no key at
all: their selection is not read.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid

from voxdesk.app.actions.focus import FocusedApp
from voxdesk.app.actions.keys import KeyCombo
from voxdesk.app.actions.ports import Clipboard, Keyboard

__all__ = ["COPY_WAIT_S", "copy_combo", "read_selection"]

COPY_WAIT_S = 0.5
"""How long the focused app has to answer Copy: a busy editor is not instant, and with nothing
selected this is what an edit of the last dictated text waits."""

_POLL_S = 0.02


# WM_CLASS names (X11) and executables (Windows), compared in lower case.
_TERMINALS_WITH_COPY_KEY = frozenset(
    {
        "gnome-terminal-server",
        "konsole",
        "xfce4-terminal",
        "mate-terminal",
        "tilix",
        "terminator",
        "alacritty",
        "kitty",
        "foot",
        "org.wezfurlong.wezterm",
        "wezterm-gui",
        "windowsterminal",
    }
)
_TERMINALS_WITHOUT_COPY_KEY = frozenset({"xterm", "uxterm", "urxvt", "rxvt", "st", "st-256color"})


def copy_combo(app: FocusedApp | None = None, platform: str = sys.platform) -> KeyCombo | None:
    """The key that copies the selection in ``app``: Cmd+C on macOS (terminals included), Ctrl+C
    elsewhere, Ctrl+Shift+C in terminals; None for a terminal that has no Copy key."""
    if platform == "darwin":
        return KeyCombo(("super",), "c")
    names = {name.lower() for name in app.names} if app is not None else set()
    if names & _TERMINALS_WITHOUT_COPY_KEY:
        return None
    if names & _TERMINALS_WITH_COPY_KEY:
        return KeyCombo(("ctrl", "shift"), "c")
    return KeyCombo(("ctrl",), "c")


async def read_selection(
    clipboard: Clipboard, keyboard: Keyboard, app: FocusedApp | None, wait_s: float = COPY_WAIT_S
) -> str | None:
    """The selected text of the focused ``app``, or None when nothing is selected (the app copied
    nothing within ``wait_s``) or it cannot be copied safely; the clipboard holds what it held before."""
    combo = copy_combo(app)
    if combo is None:
        return None
    saved = clipboard.text()
    marker = f"voxdesk-selection-{uuid.uuid4().hex}"
    clipboard.set_text(marker)
    try:
        await keyboard.press(combo)
        deadline = time.monotonic() + wait_s
        while (copied := clipboard.text()) == marker and time.monotonic() < deadline:
            await asyncio.sleep(_POLL_S)  # the app answers Copy in its own time; nothing to wait on
    finally:
        clipboard.set_text(saved)
    return copied if copied != marker and copied else None
