"""Match a final utterance against the command set, fuzzily, and fill the slots.

The utterance is split into tokens; each keeps its original text (slot values are taken from
it, so "type Hello, World" types "Hello, World") and its normalized words (lowercase, no
punctuation, digits spelled: "5" and "five" are the same word). A phrase is aligned with the
tokens by trying every split: each literal part is compared with the tokens it covers by
rapidfuzz's ``fuzz.ratio``, each slot checks its type (a number parses, a key combination is
valid, an enumeration option is close). The score of an alignment is the literal parts'
similarity weighted by their length; the best phrase scoring at least ``threshold`` wins, a
more specific phrase (more literal characters and typed slots) winning near-ties.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from voxdesk.app.actions.commands import Command, Literal, Pattern, Slot
from voxdesk.app.actions.keys import parse_keys
from voxdesk.app.actions.kinds import SlotKind, SlotValue
from voxdesk.app.textnorm import normalize_text, number_to_words

__all__ = [
    "DEFAULT_THRESHOLD",
    "WAKE_THRESHOLD",
    "Match",
    "Token",
    "closest_commands",
    "match_utterance",
    "parse_number",
    "strip_wake_phrase",
    "tokenize",
]

DEFAULT_THRESHOLD = 85.0
WAKE_THRESHOLD = 80.0
_PART_MINIMUM = 60.0  # one literal part below this sinks the alignment, however good the rest
_ENUM_MINIMUM = 75.0
_SPECIFICITY_BONUS_MAX = 5.0

_FILLERS = {"um", "uh", "uhm", "umm", "erm", "er", "ah", "hmm", "mm", "mhm"}
_LEADING = [
    "can you please",
    "could you please",
    "would you please",
    "will you please",
    "can you",
    "could you",
    "would you",
    "will you",
    "go ahead and",
    "i want to",
    "i'd like to",
    "i would like to",
    "let's",
    "please",
    "okay",
    "ok",
    "so",
    "now",
    "and",
    "hey",
]
_TRAILING = ["please", "thanks", "thank you", "for me", "for me please"]
_EDGE_PUNCTUATION = " \t\n.,!?;:\"'()\u201c\u201d\u2018\u2019\u2026"  # with curly quotes and the ellipsis

_UNITS = {number_to_words(n): n for n in range(20)} | {number_to_words(n): n for n in range(20, 100, 10)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}


@dataclass(frozen=True)
class Token:
    """One word of the utterance as said and as normalized (possibly several words: "25")."""

    raw: str
    norm: str


@dataclass(frozen=True)
class Match:
    """A command recognized in an utterance, with its slot values."""

    command: Command
    slots: dict[str, SlotValue]
    score: float
    phrase: str


def tokenize(text: str) -> list[Token]:
    """Tokens of ``text`` without hesitations ("um", "uh"); pure punctuation joins a neighbour."""
    tokens: list[Token] = []
    pending = ""  # punctuation said before the first word ("& co"): kept in the next token's text
    for raw in text.split():
        norm = normalize_text(raw)
        if norm in _FILLERS:
            continue
        if not norm:
            # Pure punctuation ("&", "—") has no words to match but stays in slot values.
            if tokens:
                tokens[-1] = Token(f"{tokens[-1].raw} {raw}", tokens[-1].norm)
            else:
                pending = f"{pending}{raw} "
            continue
        tokens.append(Token(pending + raw, norm))
        pending = ""
    return tokens


def _strip_politeness(tokens: list[Token]) -> list[Token]:
    changed = True
    while changed and tokens:
        changed = False
        for phrase in _LEADING:
            words = phrase.split()
            if len(tokens) > len(words) and [t.norm for t in tokens[: len(words)]] == words:
                tokens, changed = tokens[len(words) :], True
                break
        for phrase in _TRAILING:
            words = phrase.split()
            if len(tokens) > len(words) and [t.norm for t in tokens[-len(words) :]] == words:
                tokens, changed = tokens[: -len(words)], True
                break
    return tokens


def parse_number(words: Sequence[str]) -> int | float | None:
    """``["twenty", "five"]`` → 25, ``["two", "point", "five"]`` → 2.5; None if not a number."""
    if not words:
        return None
    if len(words) == 1 and words[0] in ("a", "an"):
        return 1
    if "point" in words:
        point = list(words).index("point")
        whole = parse_number(words[:point]) if point else 0
        digits = [_UNITS.get(w) for w in words[point + 1 :]]
        if whole is None or not digits or any(d is None or d > 9 for d in digits):
            return None
        return float(f"{whole}.{''.join(str(d) for d in digits)}")
    total, current, last = 0, 0, None
    for word in words:
        if word in _UNITS:
            value = _UNITS[word]
            # "twenty five" adds; "five five" or "twenty thirty" is not one number.
            if last == "unit" and not (current % 100 >= 20 and current % 10 == 0 and value < 10):
                return None
            current += value
            last = "unit"
        elif word in _SCALES and last == "unit":
            scale = _SCALES[word]
            if scale == 100:
                current *= 100
            else:
                total += current * scale
                current = 0
            last = "scale"
        else:
            return None
    return total + current


def _join(tokens: Sequence[Token]) -> str:
    return " ".join(t.norm for t in tokens)


def _slot_value(slot: Slot, tokens: Sequence[Token]) -> tuple[SlotValue, float] | None:
    """The slot's value from ``tokens`` and a similarity for enumerations (100 otherwise)."""
    if slot.kind is SlotKind.RAW:
        return " ".join(t.raw for t in tokens), 100.0
    if slot.kind is SlotKind.TEXT:
        value = " ".join(t.raw for t in tokens).strip(_EDGE_PUNCTUATION)
        return (value, 100.0) if value else None
    if slot.kind is SlotKind.NUMBER:
        number = parse_number(_join(tokens).split())
        return None if number is None else (number, 100.0)
    if slot.kind is SlotKind.KEYS:
        combo = parse_keys(_join(tokens))
        return None if combo is None else (str(combo), 100.0)
    said = _join(tokens)
    best, best_score = "", 0.0
    for option in slot.options:
        score = fuzz.ratio(said, option)
        # "min", "sec", "hour" for "minutes", "seconds", "hours".
        if len(said) >= 3 and (option.startswith(said) or said.startswith(option)):
            score = max(score, 95.0)
        if score > best_score:
            best, best_score = option, score
    return (best, best_score) if best_score >= _ENUM_MINIMUM else None


_MAX_SPAN = {SlotKind.NUMBER: 6, SlotKind.KEYS: 6, SlotKind.ENUM: 2}


def _align(pattern: Pattern, tokens: Sequence[Token]) -> tuple[float, dict[str, SlotValue]] | None:
    """Best alignment of ``pattern`` with all of ``tokens``: weighted score and slot values."""
    parts = pattern.parts
    weights = [len(p.text) if isinstance(p, Literal) else 5.0 if p.kind is SlotKind.ENUM else 0.0 for p in parts]
    total_weight = sum(weights)
    memo: dict[tuple[int, int], tuple[float, dict[str, SlotValue]] | None] = {}

    def best(i: int, j: int) -> tuple[float, dict[str, SlotValue]] | None:
        if i == len(parts):
            return (0.0, {}) if j == len(tokens) else None
        if (i, j) in memo:
            return memo[i, j]
        part = parts[i]
        remaining = len(tokens) - j
        if isinstance(part, Literal):
            spans = range(max(1, len(part.words) - 2), len(part.words) + 3)
        else:
            spans = range(1, min(remaining, _MAX_SPAN.get(part.kind, remaining)) + 1)
        result: tuple[float, dict[str, SlotValue]] | None = None
        for span in spans:
            if span > remaining:
                break
            covered = tokens[j : j + span]
            if isinstance(part, Literal):
                similarity = fuzz.ratio(part.text, _join(covered))
                if similarity < _PART_MINIMUM:
                    continue
                values: dict[str, SlotValue] = {}
            else:
                filled = _slot_value(part, covered)
                if filled is None:
                    continue
                values, similarity = {part.name: filled[0]}, filled[1]
            rest = best(i + 1, j + span)
            if rest is None:
                continue
            score = rest[0] + similarity * weights[i]
            if result is None or score > result[0]:
                result = (score, values | rest[1])
        memo[i, j] = result
        return result

    found = best(0, 0)
    if found is None or total_weight == 0:
        return None
    return found[0] / total_weight, found[1]


def match_utterance(text: str, commands: Sequence[Command], *, threshold: float = DEFAULT_THRESHOLD) -> Match | None:
    """The command ``text`` asks for, or None when no phrase scores at least ``threshold``."""
    tokens = _strip_politeness(tokenize(text))
    if not tokens:
        return None
    best: tuple[float, Match] | None = None
    for command in commands:
        for pattern in command.phrases:
            aligned = _align(pattern, tokens)
            if aligned is None or aligned[0] < threshold:
                continue
            typed_slots = sum(1 for s in pattern.slots if s.kind not in (SlotKind.TEXT, SlotKind.RAW))
            specificity = (pattern.literal_chars + 5 * typed_slots) / 5
            rank = aligned[0] + min(specificity, _SPECIFICITY_BONUS_MAX)
            if best is None or rank > best[0]:
                best = (rank, Match(command, aligned[1], aligned[0], pattern.source))
    return best[1] if best else None


def strip_wake_phrase(text: str, wake_phrase: str) -> str | None:
    """``text`` after the wake phrase, or None when it does not start with it (fuzzily)."""
    wake = normalize_text(wake_phrase)
    if not wake:
        return text
    tokens = tokenize(text)
    count = len(wake.split())
    best_span, best_score = 0, 0.0
    for span in range(max(1, count - 1), count + 2):
        if span > len(tokens):
            break
        score = fuzz.ratio(wake, _join(tokens[:span]))
        if score > best_score:
            best_span, best_score = span, score
    if best_score < WAKE_THRESHOLD:
        return None
    return " ".join(t.raw for t in tokens[best_span:]).lstrip(_EDGE_PUNCTUATION)


CLOSEST_MINIMUM = 50.0
"""How like a phrase (rapidfuzz's token set ratio, 0 to 100) an utterance must be for the
phrase to be offered as what was perhaps meant."""


def closest_commands(text: str, commands: Sequence[Command], count: int = 2) -> list[tuple[Command, str]]:
    """The ``count`` commands most like ``text`` though none matched, each with its phrase most
    like it as a user says it (slots as "…"): what to offer after "not understood"."""
    said = normalize_text(text)
    scored: list[tuple[float, Command, str]] = []
    for command in commands:
        phrases = [_sayable(pattern) for pattern in command.phrases]
        if phrases:
            score, phrase = max((fuzz.token_set_ratio(said, phrase), phrase) for phrase in phrases)
            if score >= CLOSEST_MINIMUM:
                scored.append((score, command, phrase))
    scored.sort(key=lambda found: -found[0])
    return [(command, phrase) for _, command, phrase in scored[:count]]


def _sayable(pattern: Pattern) -> str:
    """A phrase as a user says it: its words, each run of slots as one "…"."""
    spoken = " ".join(part.text if isinstance(part, Literal) else "…" for part in pattern.parts)
    return re.sub(r"…( …)+", "…", spoken)
