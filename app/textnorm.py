"""Text normalization for comparing transcripts: case, punctuation, numbers.

"Set a timer for 5 minutes." and "set a timer for five minutes" normalize to the same
words, so word error rates count recognition errors, not spelling conventions.
"""

from __future__ import annotations

import re

__all__ = ["normalize_text", "number_to_words"]

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = ((1_000_000_000, "billion"), (1_000_000, "million"), (1_000, "thousand"), (100, "hundred"))
_SPELLING = {"e-mail": "email", "screen shot": "screenshot", "ok": "okay", "o'clock": "oclock"}


def number_to_words(n: int) -> str:
    """Spell a non-negative integer in English words, without "and": 125 → "one hundred twenty five"."""
    if n < 0:
        raise ValueError("negative numbers are not spelled")
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f" {_ONES[ones]}" if ones else "")
    for scale, name in _SCALES:
        if n >= scale:
            high, rest = divmod(n, scale)
            return f"{number_to_words(high)} {name}" + (f" {number_to_words(rest)}" if rest else "")
    raise AssertionError("unreachable")


def _spell_number(match: re.Match[str]) -> str:
    digits = match.group(0).replace(",", "")
    if "." in digits:
        whole, fraction = digits.split(".", 1)
        return f"{number_to_words(int(whole))} point " + " ".join(_ONES[int(d)] for d in fraction)
    return number_to_words(int(digits))


def _spell_clock_time(match: re.Match[str]) -> str:
    hours, minutes = int(match.group(1)), int(match.group(2))
    if minutes == 0:
        return number_to_words(hours)
    spoken_minutes = number_to_words(minutes) if minutes >= 10 else f"oh {number_to_words(minutes)}"
    return f"{number_to_words(hours)} {spoken_minutes}"


def normalize_text(text: str) -> str:
    """Lowercase, spell out numbers and clock times, drop punctuation and collapse spaces.

    Clock times ("3:30", "3.30") are spelled the way they are said: "three thirty".
    """
    text = text.lower()
    for written, canonical in _SPELLING.items():
        text = re.sub(rf"\b{re.escape(written)}\b", canonical, text)  # whole words: "book" holds "ok"
    text = re.sub(r"\b([01]?\d|2[0-3])[:.]([0-5]\d)\b(?![.,]?\d)", _spell_clock_time, text)
    text = re.sub(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", _spell_number, text)
    text = text.replace("-", " ")
    text = re.sub(r"[^\w\s']|_", " ", text)
    text = re.sub(r"'(?!\w)|(?<!\w)'", " ", text)
    return " ".join(text.split())
