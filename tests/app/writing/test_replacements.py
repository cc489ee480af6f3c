"""Replacement rules: the text format and how rules apply, row by row."""

from __future__ import annotations

import pytest

from voxdesk.app.writing.replacements import (
    Replacement,
    apply_replacements,
    format_replacements,
    parse_replacements,
)

APPLIED = [
    # whole words, any case, the case of what was said kept
    (["btw => by the way"], "btw I saw it", "by the way I saw it"),
    (["btw => by the way"], "Btw, I saw it", "By the way, I saw it"),
    (["btw => by the way"], "BTW I saw it", "BY THE WAY I saw it"),
    (["btw => by the way"], "subtwo btwx", "subtwo btwx"),
    # a replacement with capitals of its own is written as given
    (["git hub => GitHub"], "push to git  hub now", "push to GitHub now"),
    (["gh => GitHub"], "GH issues", "GitHub issues"),
    # anywhere: inside words too
    (["[anywhere] teh => the"], "tehre is teh end", "there is the end"),
    # match case: only that spelling
    (["[match case] US => United States"], "US and us", "United States and us"),
    (["[anywhere, match case] JS => TypeScript"], "NodeJS and js", "NodeTypeScript and js"),
    # rules apply in order, each on the text the ones before left
    (["cat => dog", "dog => bird"], "a cat", "a bird"),
    # an empty replacement deletes, with the space before it
    (["um =>"], "so um I think um", "so I think"),
    # punctuation in what is said is matched literally
    (["smiley face => :)", ":) => 🙂"], "nice smiley face", "nice 🙂"),
]


@pytest.mark.parametrize(("lines", "text", "written"), APPLIED)
def test_rules_apply_in_order(lines: list[str], text: str, written: str) -> None:
    rules, problems = parse_replacements(lines)
    assert problems == []
    assert apply_replacements(text, rules) == written


def test_the_text_format_round_trips() -> None:
    rules = [
        Replacement("btw", "by the way"),
        Replacement("teh", "the", whole_word=False),
        Replacement("US", "United States", match_case=True),
        Replacement("JS", "TypeScript", whole_word=False, match_case=True),
        Replacement("um", ""),
    ]
    text = format_replacements(rules)
    assert text.splitlines()[1] == "[anywhere] teh => the"
    assert parse_replacements(text.splitlines()) == (rules, [])


def test_a_bad_line_is_a_problem_of_its_own_and_the_others_still_count() -> None:
    lines = [
        "# comment",
        "",
        "no arrow here",
        " => nothing said",
        "[sometimes] a => b",
        "[anywhere a => b",
        "ok => fine",
    ]
    rules, problems = parse_replacements(lines)
    assert rules == [Replacement("ok", "fine")]
    assert [p.split(":")[0] for p in problems] == ["line 3", "line 4", "line 5", "line 6"]
    assert "sometimes" in problems[2] and "closing ]" in problems[3]
