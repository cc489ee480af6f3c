"""The whole-text touches: each row text -> result."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from voxdesk.app.writing.tidy import drop_auto_punctuation, drop_start_capital, drop_trailing_period

ROWS: list[tuple[Callable[[str], str], str, str]] = [
    (drop_auto_punctuation, "Yes, it is. Is it?", "Yes it is Is it"),
    (drop_auto_punctuation, "¿Qué? ¡Sí!", "Qué Sí"),
    (drop_auto_punctuation, "at 3:30, don't (maybe).", "at 3:30 don't (maybe)"),
    (drop_trailing_period, "Git status.", "Git status"),
    (drop_trailing_period, "One. Two.", "One. Two"),
    (drop_trailing_period, "Wait...", "Wait..."),
    (drop_trailing_period, "Really?", "Really?"),
    (drop_start_capital, "Git status", "git status"),
    (drop_start_capital, '"Quoted" text', '"quoted" text'),
    (drop_start_capital, "I think so", "I think so"),
    (drop_start_capital, "I'm here", "I'm here"),
    (drop_start_capital, "NASA rocks", "NASA rocks"),
    (drop_start_capital, "GitHub issues", "GitHub issues"),
    (drop_start_capital, "", ""),
]


@pytest.mark.parametrize(("touch", "text", "result"), ROWS)
def test_touches(touch: Callable[[str], str], text: str, result: str) -> None:
    assert touch(text) == result
