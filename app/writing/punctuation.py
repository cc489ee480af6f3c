"""Spoken punctuation and formatting commands: "comma", "full stop", "new paragraph", "all caps".

Table-driven (:class:`PunctuationTable`; English in :data:`ENGLISH`, the only table so far).
The recognizer punctuates by itself, so an explicit mark wins: the punctuation it put right
before a mark that attaches to the word before ("Hello, comma") and on the mark's own words
("comma,") is dropped; before a line or paragraph break it stays. After a mark that ends a
sentence, a line or a paragraph the next word gets a capital; after one that does not, a
capital the recognizer gave the next word because it thought a sentence ended there ("comma.
How") is taken back.

Several mark words are ordinary words too ("a period of time", "the colon", "a new line of
products"). The rule: this step runs only in modes that turn spoken punctuation on, and even
there a mark right after an article, a possessive or a quantifier (``ordinary_after``: "a",
"the", "this", "my", "every", ...) or right before "of" (``ordinary_before``) is left as words.
"""

from __future__ import annotations

from dataclasses import dataclass

from voxdesk.app.writing.tokens import ALWAYS_CAPITAL, Token, tokenize

__all__ = ["ENGLISH", "PUNCTUATION_TABLES", "PunctuationTable", "SpokenMark", "apply_spoken_punctuation"]

_AUTO = ".,;:!?"  # what the recognizer puts at the end of words by itself


@dataclass(frozen=True)
class SpokenMark:
    """A phrase said for a mark and how the mark sits between words."""

    said: str  # "question mark"
    text: str  # "?"
    space_before: bool = False
    space_after: bool = True
    capitalize_next: bool = False  # it ends a sentence, a line or a paragraph

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.said.split())


@dataclass(frozen=True)
class PunctuationTable:
    """One language's spoken marks and the words that make a mark word an ordinary one."""

    marks: tuple[SpokenMark, ...]
    all_caps: tuple[str, ...]  # the phrase that writes the next word in capitals
    ordinary_after: frozenset[str]
    ordinary_before: frozenset[str]

    def longest_first(self) -> list[SpokenMark]:
        return sorted(self.marks, key=lambda mark: -len(mark.words))


def _ends(said: str, text: str) -> SpokenMark:
    return SpokenMark(said, text, capitalize_next=True)


def _breaks(said: str, text: str) -> SpokenMark:
    return SpokenMark(said, text, space_after=False, capitalize_next=True)


_DETERMINERS = "a an the this that these those my your his her its our their each every any some no per another which"

ENGLISH = PunctuationTable(
    marks=(
        SpokenMark("comma", ","),
        _ends("period", "."),
        _ends("full stop", "."),
        _ends("question mark", "?"),
        _ends("exclamation mark", "!"),
        _ends("exclamation point", "!"),
        SpokenMark("colon", ":"),
        SpokenMark("semicolon", ";"),
        SpokenMark("semi colon", ";"),
        SpokenMark("dash", "\N{EN DASH}", space_before=True),
        SpokenMark("hyphen", "-", space_after=False),
        SpokenMark("ellipsis", "…"),
        SpokenMark("open quote", '"', space_before=True, space_after=False),
        SpokenMark("close quote", '"'),
        SpokenMark("open paren", "(", space_before=True, space_after=False),
        SpokenMark("open parenthesis", "(", space_before=True, space_after=False),
        SpokenMark("close paren", ")"),
        SpokenMark("close parenthesis", ")"),
        SpokenMark("no space", "", space_after=False),
        _breaks("new line", "\n"),
        _breaks("newline", "\n"),
        _breaks("new paragraph", "\n\n"),
    ),
    all_caps=("all", "caps"),
    ordinary_after=frozenset(_DETERMINERS.split()),
    ordinary_before=frozenset({"of"}),
)
PUNCTUATION_TABLES: dict[str, PunctuationTable] = {"en": ENGLISH}
"""The spoken punctuation tables by language code."""


@dataclass
class _Piece:
    text: str
    mark: SpokenMark | None = None


def apply_spoken_punctuation(text: str, table: PunctuationTable = ENGLISH) -> str:
    """``text`` with its spoken marks and formatting commands written out (see the module's rules)."""
    tokens = tokenize(text)
    pieces: list[_Piece] = []
    marks = table.longest_first()
    capitalize = lowercase = upper = False
    i = 0
    while i < len(tokens):
        mark = _mark_at(tokens, i, marks, table)
        if mark is not None:
            said = tokens[i : i + len(mark.words)]
            if mark.text.strip() and not mark.space_before and pieces and pieces[-1].mark is None:
                pieces[-1].text = pieces[-1].text.rstrip(_AUTO)  # the spoken mark wins
            pieces.append(_Piece(mark.text, mark))
            capitalize = mark.capitalize_next
            lowercase = not mark.capitalize_next and any(c in said[-1].trail for c in ".!?")
            i += len(mark.words)
            continue
        if _says(tokens, i, table.all_caps) and i + len(table.all_caps) < len(tokens):
            upper, i = True, i + len(table.all_caps)
            continue
        token = tokens[i]
        core = token.core.upper() if upper else token.core
        if capitalize and core:
            core = core[0].upper() + core[1:]
        elif lowercase and core[:1].isupper() and core[1:].islower() and token.word not in ALWAYS_CAPITAL:
            core = core[0].lower() + core[1:]
        pieces.append(_Piece(token.lead + core + token.trail))
        capitalize = lowercase = upper = False
        i += 1
    return _joined(pieces)


def _says(tokens: list[Token], i: int, words: tuple[str, ...]) -> bool:
    run = tokens[i : i + len(words)]
    return len(run) == len(words) and all(t.word == w and not t.lead for t, w in zip(run, words, strict=True))


def _mark_at(tokens: list[Token], i: int, marks: list[SpokenMark], table: PunctuationTable) -> SpokenMark | None:
    for mark in marks:
        if not _says(tokens, i, mark.words):
            continue
        before = tokens[i - 1] if i else None
        after = tokens[i + len(mark.words)] if i + len(mark.words) < len(tokens) else None
        if before is not None and not before.trail and before.word in table.ordinary_after:
            return None  # "a period of", "the colon"
        if after is not None and not tokens[i + len(mark.words) - 1].trail and after.word in table.ordinary_before:
            return None
        return mark
    return None


def _joined(pieces: list[_Piece]) -> str:
    out = ""
    glue = False  # the previous piece wants no space after it
    for piece in pieces:
        mark = piece.mark
        spaced = mark.space_before if mark is not None else not glue
        if out and spaced and not out.endswith(("\n", " ")):
            out += " "
        out += piece.text
        glue = mark is not None and not mark.space_after
    return out.strip(" ")
