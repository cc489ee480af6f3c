"""Windows typing through SendInput with KEYEVENTF_UNICODE (any character, any layout)."""

from __future__ import annotations

import asyncio
import sys

from voxdesk.app.actions.keys import KeyCombo
from voxdesk.app.actions.ports import ActionError

__all__ = ["SendInputKeyboard"]

_VIRTUAL_KEYS = {
    "ctrl": 0x11,
    "shift": 0x10,
    "alt": 0x12,
    "super": 0x5B,
    "Return": 0x0D,
    "Escape": 0x1B,
    "Tab": 0x09,
    "space": 0x20,
    "BackSpace": 0x08,
    "Delete": 0x2E,
    "Insert": 0x2D,
    "Up": 0x26,
    "Down": 0x28,
    "Left": 0x25,
    "Right": 0x27,
    "Home": 0x24,
    "End": 0x23,
    "Prior": 0x21,
    "Next": 0x22,
    **{f"F{n}": 0x6F + n for n in range(1, 13)},
    **{c: ord(c.upper()) for c in "abcdefghijklmnopqrstuvwxyz0123456789"},
}


def _virtual_key(name: str) -> int:
    try:
        return _VIRTUAL_KEYS[name]
    except KeyError:
        raise ActionError(f"cannot press the key {name!r}") from None


if sys.platform == "win32":
    import ctypes
    from ctypes import wintypes

    _KEYEVENTF_KEYUP = 0x0002
    _KEYEVENTF_UNICODE = 0x0004
    _INPUT_KEYBOARD = 1

    class _KEYBDINPUT(ctypes.Structure):
        _fields_ = [
            ("wVk", wintypes.WORD),
            ("wScan", wintypes.WORD),
            ("dwFlags", wintypes.DWORD),
            ("time", wintypes.DWORD),
            ("dwExtraInfo", ctypes.POINTER(ctypes.c_ulong)),
        ]

    class _MOUSEINPUT(ctypes.Structure):
        _fields_ = [
            ("dx", wintypes.LONG),
            ("dy", wintypes.LONG),
            ("mouseData", wintypes.DWORD),
            ("dwFlags", wintypes.DWORD),
            ("time", wintypes.DWORD),
            ("dwExtraInfo", ctypes.POINTER(ctypes.c_ulong)),
        ]

    class _UNION(ctypes.Union):
        _fields_ = [("ki", _KEYBDINPUT), ("mi", _MOUSEINPUT)]

    class _INPUT(ctypes.Structure):
        _fields_ = [("type", wintypes.DWORD), ("union", _UNION)]

    def _key_event(vk: int, scan: int, flags: int) -> _INPUT:
        event = _INPUT(type=_INPUT_KEYBOARD)
        event.union.ki = _KEYBDINPUT(wVk=vk, wScan=scan, dwFlags=flags, time=0, dwExtraInfo=None)
        return event

    def _send(events: list[_INPUT]) -> None:
        array = (_INPUT * len(events))(*events)
        sent = ctypes.windll.user32.SendInput(len(events), array, ctypes.sizeof(_INPUT))
        if sent != len(events):
            raise ActionError("Windows refused the keystrokes (another program may block simulated input)")

    def _type_sync(text: str) -> None:
        events: list[_INPUT] = []
        data = text.replace("\r\n", "\n").encode("utf-16-le")
        for index in range(0, len(data), 2):
            unit = int.from_bytes(data[index : index + 2], "little")
            if unit == 0x0A:  # a newline is the Enter key, not a character
                events += [_key_event(0x0D, 0, 0), _key_event(0x0D, 0, _KEYEVENTF_KEYUP)]
            else:
                events += [
                    _key_event(0, unit, _KEYEVENTF_UNICODE),
                    _key_event(0, unit, _KEYEVENTF_UNICODE | _KEYEVENTF_KEYUP),
                ]
        _send(events)

    def _press_sync(codes: list[int]) -> None:
        _send([_key_event(c, 0, 0) for c in codes] + [_key_event(c, 0, _KEYEVENTF_KEYUP) for c in reversed(codes)])


class SendInputKeyboard:
    """Windows: SendInput with KEYEVENTF_UNICODE."""

    name = "SendInput"

    async def type_text(self, text: str) -> None:
        if sys.platform == "win32":
            await asyncio.to_thread(_type_sync, text)
        else:
            raise ActionError("SendInput typing only works on Windows")

    async def press(self, combo: KeyCombo) -> None:
        codes = [_virtual_key(k) for k in (*combo.modifiers, combo.key)]
        if sys.platform == "win32":
            await asyncio.to_thread(_press_sync, codes)
        else:
            raise ActionError("SendInput typing only works on Windows")

    async def backspace(self, count: int) -> None:
        if sys.platform == "win32":
            for _ in range(count):
                await asyncio.to_thread(_press_sync, [0x08])
        else:
            raise ActionError("SendInput typing only works on Windows")

    async def focused_window(self) -> str | None:
        return None  # not asked on Windows yet
