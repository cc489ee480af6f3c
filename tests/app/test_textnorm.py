import pytest

from voxdesk.app.textnorm import normalize_text, number_to_words


@pytest.mark.parametrize(
    ("number", "words"),
    [
        (0, "zero"),
        (7, "seven"),
        (15, "fifteen"),
        (25, "twenty five"),
        (90, "ninety"),
        (100, "one hundred"),
        (305, "three hundred five"),
        (2026, "two thousand twenty six"),
        (1_000_001, "one million one"),
    ],
)
def test_numbers_are_spelled(number: int, words: str) -> None:
    assert number_to_words(number) == words


def test_negative_numbers_are_refused() -> None:
    with pytest.raises(ValueError, match="negative numbers"):
        number_to_words(-1)


@pytest.mark.parametrize(
    ("written", "normalized"),
    [
        ("Set a timer for 5 minutes.", "set a timer for five minutes"),
        ("set a timer for five minutes", "set a timer for five minutes"),
        ("Remind me at 3.30", "remind me at three thirty"),
        ("Meet at 10:05!", "meet at ten oh five"),
        ("It costs 1,250 dollars", "it costs one thousand two hundred fifty dollars"),
        ("Pi is 3.14159", "pi is three point one four one five nine"),
        ("New E-mail to John", "new email to john"),
        ("Take a screen shot, please", "take a screenshot please"),
        ("What's the time?", "what's the time"),
        ("  spaced   out  ", "spaced out"),
        ("round-trip 'quoted'", "round trip quoted"),
        ("OK, okay: open the notebook and look", "okay okay open the notebook and look"),  # words, not letters
    ],
)
def test_case_punctuation_and_numbers_are_normalized(written: str, normalized: str) -> None:
    assert normalize_text(written) == normalized
