"""A sound-alike key for English spellings, so "so chill" and "Xochitl" compare as near misses.

Metaphone-ish: letters become the consonant sounds they usually spell in English ("ch" and
"sh" one sound, "ph" the sound of "f", a soft "c" an "s", silent letters dropped), voiced and
voiceless pairs fold together (b/p, d/t, g/k, v/f, z/s), every run of vowels becomes one
``A`` and doubled sounds one. The key is computed on the letters with the spaces removed, as
the recognizer splits unknown words at arbitrary places ("tail scale", "Huber needs").
"""

from __future__ import annotations

import unicodedata

__all__ = ["letters", "sound_key"]

_VOWELS = frozenset("aeiouy")
_FRONT = frozenset("eiy")  # a c or g before these is soft
_SILENT_START = {"kn": "n", "gn": "n", "pn": "n", "wr": "r", "ps": "s", "x": "s", "wh": "w"}
_PLAIN = {"b": "P", "d": "T", "f": "F", "j": "J", "k": "K", "l": "L", "m": "M", "n": "N", "p": "P"}
_PLAIN |= {"q": "K", "r": "R", "s": "S", "t": "T", "v": "F", "z": "S"}


def letters(text: str) -> str:
    """The lowercase ASCII letters of ``text``, accents removed, everything else dropped."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if "a" <= c <= "z")


def sound_key(text: str) -> str:
    """The sound-alike key of ``text`` (any spacing or punctuation): "Xochitl" -> "SAXATL"."""
    word = letters(text)
    for start, replacement in _SILENT_START.items():
        if word.startswith(start):
            word = replacement + word[len(start) :]
            break
    key: list[str] = []
    i = 0
    while i < len(word):
        sound, used = _sound_at(word, i)
        for symbol in sound:
            if not key or key[-1] != symbol:
                key.append(symbol)
        i += used
    return "".join(key)


def _sound_at(word: str, i: int) -> tuple[str, int]:
    """The sound the letters at ``word[i]`` spell, and how many letters that took."""
    c, rest = word[i], word[i + 1 :]
    after = rest[:1]
    if c in _VOWELS and not (c == "y" and after in _VOWELS):
        if c == "e" and i == len(word) - 1 and i > 1:
            return "", 1  # a final silent e: "flare" sounds as "flair"
        return "A", 1
    if c in "cst" and after == "h":
        return {"c": "X", "s": "X", "t": "0"}[c], 2
    if c == "p" and after == "h":
        return "F", 2
    if c == "c":
        if after == "k":
            return "K", 2
        return ("S" if after in _FRONT else "K"), 1
    if c == "g":
        if after == "h":
            return ("K" if i == 0 else ""), 2  # "ghost", but "night", "though"
        return ("J" if after in _FRONT else "K"), 1
    if c == "d" and rest.startswith("ge"):
        return "J", 3
    if c == "x":
        return "KS", 1
    if c == "h":  # sounded only where it starts a syllable: "ahead", not "Siobhan" or "oh"
        sounded = after in _VOWELS and (i == 0 or word[i - 1] in _VOWELS)
        return ("H" if sounded else ""), 1
    if c in "wy":
        return (c.upper() if after in _VOWELS else ""), 1
    return _PLAIN[c], 1
