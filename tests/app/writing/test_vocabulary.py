"""Vocabulary entries: the text format, import and export as a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxdesk.app.writing.vocabulary import (
    VocabularyEntry,
    format_vocabulary,
    parse_vocabulary,
    read_vocabulary_file,
    write_vocabulary_file,
)

ENTRIES = [
    VocabularyEntry("Xochitl", ("so chee tl", "so cheetle")),
    VocabularyEntry("Cloudflare Workers"),
    VocabularyEntry("Siobhan", ("shiv awn",)),
]


def test_the_text_format_round_trips() -> None:
    text = format_vocabulary(ENTRIES)
    assert text == "Xochitl = so chee tl, so cheetle\nCloudflare Workers\nSiobhan = shiv awn\n"
    assert parse_vocabulary(text.splitlines()) == (ENTRIES, [])


def test_spaces_comments_and_empty_spellings_are_forgiven() -> None:
    lines = ["# names", "", "  Xochitl=so chee tl ,, so cheetle  ", "Cloudflare Workers =", "Siobhan = shiv awn"]
    assert parse_vocabulary(lines) == (ENTRIES, [])


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("= so chee", "no word before '='"),
        ("42 = forty two", "no word before '='"),
        ("Zoe = 42", "'42' is not a spelling"),
        ("xochitl", "already listed on line 1"),
    ],
)
def test_a_bad_line_is_a_problem_of_its_own(line: str, problem: str) -> None:
    entries, problems = parse_vocabulary(["Xochitl", line, "Siobhan"])
    assert [e.text for e in entries] == ["Xochitl", "Siobhan"]
    assert len(problems) == 1 and problems[0].startswith("line 2: ") and problem in problems[0]


def test_export_then_import_through_a_file(tmp_path: Path) -> None:
    path = tmp_path / "words.txt"
    write_vocabulary_file(path, [*ENTRIES, VocabularyEntry("Zoë")])
    assert read_vocabulary_file(path) == ([*ENTRIES, VocabularyEntry("Zoë")], [])


def test_a_file_names_its_problems_with_its_path_and_line(tmp_path: Path) -> None:
    path = tmp_path / "words.txt"
    path.write_text("Xochitl\n= oops\n", encoding="utf-8")
    assert read_vocabulary_file(path) == ([VocabularyEntry("Xochitl")], [f"{path}:2: no word before '=': '= oops'"])


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "words.txt"
    path.write_bytes("Zoë\n".encode("latin-1"))
    with pytest.raises(UnicodeDecodeError):
        read_vocabulary_file(path)
