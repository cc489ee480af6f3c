"""Whole-text touches a mode can ask for: without the recognizer's own punctuation, without a
period at the end, without a capital at the start (for terminals and code, where "Git status."
should be "git status")."""

from __future__ import annotations

import re

from voxdesk.app.writing.tokens import ALWAYS_CAPITAL, replace_runs, tokenize

__all__ = ["drop_auto_punctuation", "drop_start_capital", "drop_trailing_period"]

_SENTENCE_MARKS = ".,;:!?"
_OPENING_MARKS = "¿¡"


def drop_auto_punctuation(text: str) -> str:
    """``text`` without the sentence punctuation at the ends of its words ("Yes, it is." ->
    "Yes it is"); what is inside a word stays ("3:30", "don't", "e.g" keeps its inner dot)."""
    tokens = tokenize(text)
    runs = [
        (index, index, token.lead.lstrip(_OPENING_MARKS) + token.core + token.trail.rstrip(_SENTENCE_MARKS))
        for index, token in enumerate(tokens)
    ]
    return replace_runs(text, tokens, runs)


def drop_trailing_period(text: str) -> str:
    """``text`` without one period at its very end; an ellipsis stays."""
    stripped = text.rstrip()
    if stripped.endswith(".") and not stripped.endswith(".."):
        return stripped[:-1]
    return text


def drop_start_capital(text: str) -> str:
    """``text`` with a lowercase first letter when its first word is merely capitalized
    ("Git status" -> "git status"); "I", "NASA" and "GitHub" keep theirs."""
    match = re.match(r"(\W*)([A-Z])([a-z']*)(?=\W|$)", text)
    if match is None or (match.group(2) + match.group(3)).lower() in ALWAYS_CAPITAL:
        return text
    return match.group(1) + match.group(2).lower() + text[match.end(2) :]
