"""Spoken key combinations: "control shift t" → KeyCombo(("ctrl", "shift"), "t")."""

from __future__ import annotations

from dataclasses import dataclass

from voxdesk.app.textnorm import normalize_text, number_to_words

__all__ = ["KeyCombo", "parse_keys"]

MODIFIERS = {
    "control": "ctrl",
    "ctrl": "ctrl",
    "shift": "shift",
    "alt": "alt",
    "option": "alt",
    "super": "super",
    "windows": "super",
    "win": "super",
    "meta": "super",
    "command": "super",
    "cmd": "super",
}
# Canonical names are X keysyms, which the backends translate where they differ.
NAMED_KEYS = {
    "enter": "Return",
    "return": "Return",
    "escape": "Escape",
    "esc": "Escape",
    "tab": "Tab",
    "space": "space",
    "spacebar": "space",
    "space bar": "space",
    "backspace": "BackSpace",
    "back space": "BackSpace",
    "delete": "Delete",
    "del": "Delete",
    "insert": "Insert",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "home": "Home",
    "end": "End",
    "page up": "Prior",
    "page down": "Next",
    "pageup": "Prior",
    "pagedown": "Next",
}
_DIGITS = {number_to_words(d): str(d) for d in range(10)}
_FUNCTION_KEYS = {f"f {number_to_words(n)}": f"F{n}" for n in range(1, 13)} | {
    f"f{number_to_words(n)}": f"F{n}" for n in range(1, 13)
}
_SEPARATORS = {"plus", "and"}


@dataclass(frozen=True)
class KeyCombo:
    """Modifiers held while one key is pressed."""

    modifiers: tuple[str, ...]
    key: str

    def __str__(self) -> str:
        return "+".join((*self.modifiers, self.key))


def parse_keys(spoken: str) -> KeyCombo | None:
    """A key combination from spoken or written words ("ctrl+a", "control a"); None if it is not one."""
    words = normalize_text(spoken.replace("+", " ")).split()
    modifiers: list[str] = []
    key: str | None = None
    index = 0
    while index < len(words):
        pair = " ".join(words[index : index + 2])
        word = words[index]
        if len(words) > index + 1 and (pair in NAMED_KEYS or pair in _FUNCTION_KEYS):
            found, index = NAMED_KEYS.get(pair) or _FUNCTION_KEYS[pair], index + 2
        elif word in MODIFIERS:
            if MODIFIERS[word] not in modifiers:
                modifiers.append(MODIFIERS[word])
            index += 1
            continue
        elif word in _SEPARATORS and modifiers and key is None:
            index += 1
            continue
        elif word in NAMED_KEYS or word in _FUNCTION_KEYS:
            found, index = NAMED_KEYS.get(word) or _FUNCTION_KEYS[word], index + 1
        elif word in _DIGITS:
            found, index = _DIGITS[word], index + 1
        elif len(word) == 1 and word.isalnum():
            found, index = word, index + 1
        else:
            return None
        if key is not None:
            return None
        key = found
    if key is None:
        return None
    return KeyCombo(tuple(modifiers), key)
