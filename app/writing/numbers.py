"""Numbers, times and percentages written as digits: "three thirty pm" -> "3:30 PM".

Table-driven (:class:`NumberWords`; English in :data:`ENGLISH`, the only table so far). The rules:

- a run of number words that makes one number is written in digits when it is
  ``spelled_below`` (10) or more, has a scale word or a decimal point ("one hundred and
  twelve" -> "112", "two point five" -> "2.5"); one to nine stay words ("five minutes"), as
  style guides write them. Groups of three digits are separated from ``group_from`` on
  ("twelve thousand five hundred" -> "12,500", but "two thousand twenty six" -> "2026");
- a run that does not make one number ("nineteen ninety", "five five five") is left as said;
- an hour (one to twelve) followed by minutes (ten to fifty-nine, or "oh" and a digit) is a
  time: "three thirty" -> "3:30", "nine oh five" -> "9:05"; an hour or a time followed by
  "am"/"pm" (also "a m", "a.m.") takes it in capitals: "seven pm" -> "7 PM";
- a number followed by "percent" (or "per cent") is written with "%": "five percent" -> "5%";
- digits the recognizer wrote are tidied the same way: "25 percent" -> "25%", "3:30 p.m." ->
  "3:30 PM", and a time written with a dot ("3 .30", or "3.30" after "at", "by", ...) -> "3:30".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from voxdesk.app.textnorm import number_to_words
from voxdesk.app.writing.tokens import Token, replace_runs, tokenize

__all__ = ["ENGLISH", "NUMBER_TABLES", "NumberWords", "format_numbers", "parse_number_words"]


@dataclass(frozen=True)
class NumberWords:
    """How one language says numbers, times and percentages."""

    units: Mapping[str, int]  # zero to nineteen
    tens: Mapping[str, int]  # twenty to ninety
    scales: Mapping[str, int]  # hundred, thousand, ...
    joiners: frozenset[str]  # "and" in "one hundred and twelve"
    point: str
    oh: frozenset[str]  # "oh" in "nine oh five"
    percent: tuple[tuple[str, ...], ...]
    meridiem: Mapping[tuple[str, ...], str]  # ("p", "m") -> "PM"
    time_words: frozenset[str] = field(default_factory=frozenset)  # "at 3.30" is a time
    spelled_below: int = 10
    group_from: int = 10_000
    group_separator: str = ","
    decimal_separator: str = "."


ENGLISH = NumberWords(
    units={number_to_words(n): n for n in range(20)},
    tens={number_to_words(n): n for n in range(20, 100, 10)},
    scales={"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000},
    joiners=frozenset({"and"}),
    point="point",
    oh=frozenset({"oh", "o"}),
    percent=(("percent",), ("per", "cent")),
    meridiem={("am",): "AM", ("a", "m"): "AM", ("pm",): "PM", ("p", "m"): "PM"},
    time_words=frozenset({"at", "by", "until", "till", "from", "before", "after", "around", "about"}),
)
NUMBER_TABLES: dict[str, NumberWords] = {"en": ENGLISH}
"""The number tables by language code."""

_DIGIT_TIME = re.compile(r"^(\d{1,2})(?:\.|:)(\d{2})$")


def parse_number_words(words: list[str], table: NumberWords = ENGLISH) -> int | float | None:
    """The number ``words`` make together ("one hundred and twelve" -> 112), or ``None``."""
    if table.point in words:
        at = words.index(table.point)
        whole = parse_number_words(words[:at], table) if at else 0
        digits = [table.units.get(word) for word in words[at + 1 :]]
        if whole is None or isinstance(whole, float) or not digits or any(d is None or d > 9 for d in digits):
            return None
        return float(f"{whole}.{''.join(str(d) for d in digits)}")
    total = current = 0
    smallest_scale = None  # scales above a hundred must come in falling order
    last = ""  # what the previous word was: "unit", "ten", "hundred", "scale", "and"
    for word in words:
        starts_group = last in ("", "hundred", "scale", "and") and current % 100 == 0
        if word in table.tens and starts_group:
            current += table.tens[word]
            last = "ten"
        elif word in table.units and (starts_group or (last == "ten" and 0 < table.units[word] < 10)):
            current += table.units[word]
            last = "unit"
        elif word in table.scales and (last in ("unit", "ten") or (last == "hundred" and table.scales[word] > 100)):
            scale = table.scales[word]
            if scale == 100:
                if current >= 100:
                    return None  # "five hundred two hundred"
                current *= 100
                last = "hundred"
                continue
            else:
                if smallest_scale is not None and scale >= smallest_scale:
                    return None  # "two thousand three million"
                total, current, smallest_scale = total + current * scale, 0, scale
            last = "scale"
        elif word in table.joiners and last in ("hundred", "scale"):
            last = "and"
        else:
            return None
    return None if last in ("", "and") else total + current


def format_numbers(text: str, table: NumberWords = ENGLISH) -> str:
    """``text`` with its numbers, times and percentages written as digits (see the module's rules)."""
    tokens = tokenize(text)
    runs: list[tuple[int, int, str]] = []
    i = 0
    while i < len(tokens):
        found = _time(tokens, i, table) or _number(tokens, i, table) or _digits(tokens, i, table)
        if found is None:
            words = _words(tokens, i, table)
            i = words[-1][1] + 1 if words else i + 1  # a run that is not one number stays as said, whole
            continue
        last, written, trail = found
        runs.append((i, last, tokens[i].lead + written + trail))
        i = last + 1
    return replace_runs(text, tokens, runs)


_Found = tuple[int, str, str]
"""The last token of a run, its new text, and the punctuation to keep after it."""


def _words(tokens: list[Token], first: int, table: NumberWords) -> list[tuple[str, int]]:
    """The number words from ``first`` on that may make one number, each with its token's index;
    the run stops at punctuation."""
    known = {*table.units, *table.tens, *table.scales, *table.joiners, *table.oh, table.point}
    words: list[tuple[str, int]] = []
    for index in range(first, len(tokens)):
        token = tokens[index]
        parts = token.word.split("-")  # "twenty-five"
        if (index > first and token.lead) or not all(part in known for part in parts):
            break
        words += [(part, index) for part in parts]
        if token.trail:
            break
    while words and (words[-1][0] in table.joiners or words[-1][0] in table.oh or words[-1][0] == table.point):
        words.pop()  # "one hundred and" is "one hundred" and a word after it
    return words


def _number(tokens: list[Token], first: int, table: NumberWords) -> _Found | None:
    words = _words(tokens, first, table)
    if not words or words[0][0] in table.scales:
        return None  # "a hundred" is left as said
    value = parse_number_words([word for word, _ in words], table)
    if value is None:
        return None
    last = words[-1][1]
    percent = _suffix(tokens, last, table.percent)
    if percent is not None:
        return percent, _digits_of(value, table) + "%", tokens[percent].trail
    scaled = any(word in table.scales for word, _ in words)
    if value < table.spelled_below and not scaled and not isinstance(value, float):
        return None
    return last, _digits_of(value, table), tokens[last].trail


def _time(tokens: list[Token], first: int, table: NumberWords) -> _Found | None:
    words = _words(tokens, first, table)
    said = [word for word, _ in words] + ["", ""]
    hour = table.units.get(said[0], 0)
    if not 1 <= hour <= 12:
        return None
    minutes, used = None, 1
    if said[1] in table.oh and 0 < table.units.get(said[2], 0) < 10:
        minutes, used = table.units[said[2]], 3
    elif said[1] in table.tens or 10 <= table.units.get(said[1], 0) <= 19:
        minutes, used = table.tens.get(said[1]) or table.units[said[1]], 2
        if minutes >= 60:
            return None
        if minutes >= 20 and 0 < table.units.get(said[2], 0) < 10:
            minutes, used = minutes + table.units[said[2]], 3
    if used < len(words):
        return None  # more number words follow: "three thirty five hundred" is not a time
    last = words[used - 1][1]
    written = f"{hour}" if minutes is None else f"{hour}:{minutes:02d}"
    meridiem = _meridiem(tokens, last, table)
    if meridiem is not None:
        return meridiem[0], f"{written} {meridiem[1]}", meridiem[2]
    return None if minutes is None else (last, written, tokens[last].trail)  # a lone hour is a number


def _digits(tokens: list[Token], first: int, table: NumberWords) -> _Found | None:
    """What the recognizer wrote in digits: a percentage, a time with a dot, a time before am/pm."""
    core, last = tokens[first].core, first
    spaced = _spaced_time(tokens, first)
    if spaced is not None:
        core, last = spaced, first + 1
    if not re.fullmatch(r"\d[\d,]*(?:\.\d+)?|\d{1,2}:\d{2}", core):
        return None
    percent = _suffix(tokens, last, table.percent)
    if percent is not None and ":" not in core:
        return percent, core + "%", tokens[percent].trail
    time = _DIGIT_TIME.match(core)
    if time and (int(time.group(1)) > 23 or int(time.group(2)) > 59):
        time = None
    written = f"{int(time.group(1))}:{time.group(2)}" if time else core
    meridiem = _meridiem(tokens, last, table)
    if meridiem is not None and (time or re.fullmatch(r"0?[1-9]|1[0-2]", core)):
        return meridiem[0], f"{written} {meridiem[1]}", meridiem[2]
    previous = tokens[first - 1].word if first else ""
    if time and (spaced is not None or (previous in table.time_words and not tokens[first - 1].trail)):
        return last, written, tokens[last].trail
    return None


def _spaced_time(tokens: list[Token], first: int) -> str | None:
    """A time the recognizer wrote with a spaced dot, "3 .30", as "3:30"."""
    if first + 1 >= len(tokens) or tokens[first].trail or not re.fullmatch(r"\d{1,2}", tokens[first].core):
        return None
    following = tokens[first + 1]
    minutes = re.fullmatch(r"\.(\d{2})", following.lead + following.core)
    if minutes is None or int(tokens[first].core) > 12 or int(minutes.group(1)) > 59:
        return None
    return f"{int(tokens[first].core)}:{minutes.group(1)}"


def _suffix(tokens: list[Token], last: int, phrases: tuple[tuple[str, ...], ...]) -> int | None:
    """The last token of one of ``phrases`` right after ``tokens[last]``, if one follows."""
    if tokens[last].trail:
        return None
    for phrase in phrases:
        run = tokens[last + 1 : last + 1 + len(phrase)]
        joined = len(run) == len(phrase) and not run[0].lead and all(not t.trail for t in run[:-1])
        if joined and [t.word for t in run] == list(phrase):
            return last + len(phrase)
    return None


def _meridiem(tokens: list[Token], last: int, table: NumberWords) -> _Found | None:
    """Where an "am"/"pm" after ``tokens[last]`` ends, how it is written and the punctuation after it."""
    if tokens[last].trail:
        return None
    for phrase, written in table.meridiem.items():
        run = tokens[last + 1 : last + 1 + len(phrase)]
        if len(run) != len(phrase) or run[0].lead or any(t.trail for t in run[:-1]):
            continue
        said = [t.word for t in run]
        dotted = len(run) == 1 and said[0].replace(".", "") == "".join(phrase) and "." in said[0]  # "p.m."
        if said == list(phrase) or dotted:
            end = last + len(phrase)
            trail = tokens[end].trail
            if dotted and end + 1 < len(tokens):
                trail = trail.removeprefix(".")  # the dot was the abbreviation's, not a sentence end
            return end, written, trail
    return None


def _digits_of(value: int | float, table: NumberWords) -> str:
    if isinstance(value, float):
        whole, _, fraction = f"{value}".partition(".")
        return _grouped(int(whole), table) + table.decimal_separator + fraction
    return _grouped(value, table)


def _grouped(value: int, table: NumberWords) -> str:
    return str(value) if value < table.group_from else f"{value:,}".replace(",", table.group_separator)
