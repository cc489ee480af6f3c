"""Spoken punctuation and formatting commands, English table: each row said -> written."""

from __future__ import annotations

import pytest

from voxdesk.app.writing.punctuation import ENGLISH, apply_spoken_punctuation

WRITTEN = [
    ("Hello comma how are you question mark", "Hello, how are you?"),
    # the recognizer's own punctuation around a spoken mark gives way to it
    ("Hello, comma, how are you? Question mark.", "Hello, how are you?"),
    ("Well comma. How is it", "Well, how is it"),
    ("It ended period", "It ended."),
    ("It ended full stop and then", "It ended. And then"),
    ("Stop exclamation mark", "Stop!"),
    ("Note colon buy milk semicolon eggs", "Note: buy milk; eggs"),
    ("She said open quote hi close quote and left.", 'She said "hi" and left.'),
    ("see open paren below close paren", "see (below)"),
    ("well dash maybe", "well \N{EN DASH} maybe"),
    ("one hyphen two", "one-two"),
    ("email john no space doe", "email johndoe"),
    ("use all caps nasa now", "use NASA now"),
    # lines and paragraphs: the punctuation before them stays, the next word gets a capital
    ("Dear John, new paragraph. Thanks for the note period.", "Dear John,\n\nThanks for the note."),
    ("first new line second", "first\nSecond"),
    # mark words that are ordinary words here
    ("It lasted a period of time.", "It lasted a period of time."),
    ("I waited for a period", "I waited for a period"),
    ("The colon is an organ.", "The colon is an organ."),
    ("We launched a new line of products", "We launched a new line of products"),
    ("Put this comma here", "Put this comma here"),
    ("No marks at all.", "No marks at all."),
]


@pytest.mark.parametrize(("said", "written"), WRITTEN)
def test_spoken_marks_are_written_out(said: str, written: str) -> None:
    assert apply_spoken_punctuation(said) == written


def test_every_english_mark_is_written_when_said_between_two_words() -> None:
    for mark in ENGLISH.marks:
        written = apply_spoken_punctuation(f"one {mark.said} two")
        assert mark.said not in written and mark.text in written, (mark.said, written)
