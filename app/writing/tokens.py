"""Words of a text with the punctuation around them, where they are in it, and a way to rewrite runs of them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ALWAYS_CAPITAL", "Token", "replace_runs", "tokenize"]

ALWAYS_CAPITAL = frozenset({"i", "i'm", "i'll", "i've", "i'd"})
"""English words written with a capital wherever they stand, in lowercase."""

_WORD = re.compile(r"\S+")
_PARTS = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)


@dataclass(frozen=True)
class Token:
    """One whitespace-separated piece of text: ``lead`` + ``core`` + ``trail`` at ``start:end``.

    ``core`` starts and ends with a letter, digit or underscore (inner punctuation stays in it:
    "don't", "3.30"); ``lead`` and ``trail`` hold the punctuation before and after it.
    """

    start: int
    end: int
    lead: str
    core: str
    trail: str

    @property
    def word(self) -> str:
        """The core in lowercase, for comparing with a table."""
        return self.core.lower()


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, in order."""
    tokens = []
    for match in _WORD.finditer(text):
        parts = _PARTS.match(match.group(0))
        assert parts is not None  # the pattern matches any string
        tokens.append(Token(match.start(), match.end(), *parts.groups()))
    return tokens


def replace_runs(text: str, tokens: list[Token], runs: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each run of ``tokens[first..last]`` (not overlapping) replaced by its new text."""
    for first, last, new in sorted(runs, reverse=True):  # from the end, so earlier offsets stay valid
        text = text[: tokens[first].start] + new + text[tokens[last].end :]
    return text
