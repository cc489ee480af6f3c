"""The user's vocabulary: words and phrases to write their way, and how each may sound.

As text, in a file or a settings list, one entry per line::

    # names and product words (a line starting with # is a comment)
    Xochitl = so chee tl, so cheetle
    Kubernetes = koo ber net eez
    Cloudflare Workers
    Siobhan = shiv awn

The text before ``=`` is the entry as it is written, a word or a phrase; after it, optional
"sounds like" spellings, separated by commas: how the word is said, spelled as English words.
Files are UTF-8. A line that cannot be an entry (nothing before ``=``, an entry listed twice)
is a problem for that line only; the other entries still count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from voxdesk.app.writing.phonetic import letters

__all__ = ["VocabularyEntry", "format_vocabulary", "parse_vocabulary", "read_vocabulary_file", "write_vocabulary_file"]


@dataclass(frozen=True)
class VocabularyEntry:
    """One word or phrase as it is written, and spellings of how it sounds."""

    text: str
    sounds_like: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        """The entry as a line of a vocabulary file."""
        return f"{self.text} = {', '.join(self.sounds_like)}" if self.sounds_like else self.text


def parse_vocabulary(lines: list[str]) -> tuple[list[VocabularyEntry], list[str]]:
    """The entries of vocabulary ``lines``, and one problem per line that is not an entry
    (``"line 3: ..."``, numbered from 1)."""
    entries: list[VocabularyEntry] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        text, _, sounds = (part.strip() for part in line.partition("="))
        if not letters(text):
            problems.append(f"line {number}: no word before '=': {line!r}")
            continue
        if text.casefold() in seen:
            problems.append(f"line {number}: {text!r} is already listed on line {seen[text.casefold()]}")
            continue
        spellings = tuple(s.strip() for s in sounds.split(",") if s.strip())
        if unspelled := [s for s in spellings if not letters(s)]:
            problems.append(f"line {number}: {unspelled[0]!r} is not a spelling (no letters)")
            continue
        seen[text.casefold()] = number
        entries.append(VocabularyEntry(text, spellings))
    return entries, problems


def format_vocabulary(entries: list[VocabularyEntry]) -> str:
    """``entries`` as the text of a vocabulary file, one line each."""
    return "".join(f"{entry.line}\n" for entry in entries)


def read_vocabulary_file(path: Path) -> tuple[list[VocabularyEntry], list[str]]:
    """The entries of a vocabulary file, and its problems as ``"PATH:LINE: ..."``.

    Raises:
        OSError: the file cannot be read.
        UnicodeDecodeError: it is not UTF-8 text.
    """
    entries, problems = parse_vocabulary(path.read_bytes().decode("utf-8").splitlines())
    return entries, [f"{path}:{problem.removeprefix('line ')}" for problem in problems]


def write_vocabulary_file(path: Path, entries: list[VocabularyEntry]) -> None:
    """Export ``entries`` to ``path`` as a vocabulary file (UTF-8)."""
    path.write_text(format_vocabulary(entries), encoding="utf-8")
