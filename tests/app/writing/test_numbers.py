"""Numbers, times and percentages as digits, English table: each row said -> written."""

from __future__ import annotations

import pytest

from voxdesk.app.writing.numbers import format_numbers, parse_number_words

WRITTEN = [
    # cardinals: digits from ten on, or with a scale word or a decimal point
    ("one hundred and twelve people", "112 people"),
    ("twenty five minutes", "25 minutes"),
    ("twenty-five minutes", "25 minutes"),
    ("ten", "10"),
    ("six hundred", "600"),
    ("one hundred five", "105"),
    ("two thousand twenty six", "2026"),
    ("twelve thousand five hundred", "12,500"),
    ("one million two hundred thousand", "1,200,000"),
    ("two point five", "2.5"),
    # one to nine stay words; runs that are not one number stay as said
    ("five minutes", "five minutes"),
    ("I am one of them", "I am one of them"),
    ("the one and only", "the one and only"),
    ("nineteen ninety", "nineteen ninety"),
    ("five five five", "five five five"),
    ("five hundred two hundred", "five hundred two hundred"),
    ("a hundred times", "a hundred times"),
    ("zero", "zero"),
    # times
    ("call mom at three thirty", "call mom at 3:30"),
    ("meet at three thirty pm.", "meet at 3:30 PM."),
    ("eleven forty five a m", "11:45 AM"),
    ("nine oh five", "9:05"),
    ("one twenty-five", "1:25"),
    ("at seven p.m. and then", "at 7 PM and then"),
    ("seven pm.", "7 PM."),
    ("call me at seven.", "call me at seven."),
    ("three thirty five hundred", "three thirty five hundred"),
    # percentages
    ("twenty five percent of it", "25% of it"),
    ("five per cent", "5%"),
    ("ninety nine percent.", "99%."),
    # what the recognizer wrote in digits
    ("25 percent", "25%"),
    ("Remind me to call mom at 3 .30", "Remind me to call mom at 3:30"),
    ("at 3.30 tomorrow", "at 3:30 tomorrow"),
    ("the 3:30 p.m. train", "the 3:30 PM train"),
    ("it weighs 3.30 kg", "it weighs 3.30 kg"),
    ("in 1990 we", "in 1990 we"),
    # punctuation ends a run
    ("twenty, five", "20, five"),
]


@pytest.mark.parametrize(("said", "written"), WRITTEN)
def test_numbers_are_written_as_digits_where_the_rules_say(said: str, written: str) -> None:
    assert format_numbers(said) == written


@pytest.mark.parametrize(
    ("words", "value"),
    [
        ("one hundred and twelve", 112),
        ("ninety nine", 99),
        ("three point one four", 3.14),
        ("two hundred and fifty thousand", 250_000),
        ("twenty twenty", None),
        ("one hundred and", None),
        ("thousand", None),
        ("two thousand three million", None),
    ],
)
def test_number_words_parse_to_one_value_or_none(words: str, value: float | None) -> None:
    assert parse_number_words(words.split()) == value
