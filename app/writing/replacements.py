"""Replacement rules, "say this, write that", applied to committed text in order.

As text, in a file or a settings list, one rule per line::

    btw => by the way
    [match case] US => United States
    [anywhere] teh => the

A rule matches whole words unless marked ``[anywhere]``, and ignores case unless marked
``[match case]``; flags go in one bracket, comma-separated (``[anywhere, match case]``). Case
is kept where the rule writes lowercase: "Btw" becomes "By the way", "BTW" "BY THE WAY"; a
replacement with capitals of its own ("GitHub") is written as given. An empty replacement
deletes what it matches. Each rule sees the text the rules before it left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

__all__ = ["Replacement", "apply_replacements", "format_replacements", "parse_replacements"]

_ARROW = "=>"
_ANYWHERE = "anywhere"
_MATCH_CASE = "match case"


@dataclass(frozen=True)
class Replacement:
    """One rule: what was said (``say``) and what to write instead."""

    say: str
    write: str
    whole_word: bool = True
    match_case: bool = False

    @property
    def line(self) -> str:
        """The rule as a line of a replacements file."""
        flags = [name for name, on in ((_ANYWHERE, not self.whole_word), (_MATCH_CASE, self.match_case)) if on]
        prefix = f"[{', '.join(flags)}] " if flags else ""
        return f"{prefix}{self.say} {_ARROW} {self.write}".rstrip()

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern of ``say``: any run of spaces matches any other."""
        body = r"\s+".join(re.escape(word) for word in self.say.split())
        if self.whole_word:
            body = rf"(?<!\w){body}(?!\w)"
        if not self.write:
            body = rf"[ \t]*{body}"  # a deletion takes the space before it along
        return re.compile(body, 0 if self.match_case else re.IGNORECASE)

    def apply(self, text: str) -> str:
        """``text`` with this rule applied everywhere it matches."""
        return self.pattern.sub(self._written, text)

    def _written(self, match: re.Match[str]) -> str:
        said, write = match.group(0).strip(), self.write
        if self.match_case or write != write.lower() or not write:
            return write
        if len(said) > 1 and said.isupper():
            return write.upper()
        return write[0].upper() + write[1:] if said[:1].isupper() else write


def apply_replacements(text: str, rules: tuple[Replacement, ...] | list[Replacement]) -> str:
    """``text`` with ``rules`` applied one after the other."""
    for rule in rules:
        text = rule.apply(text)
    return text


def parse_replacements(lines: list[str]) -> tuple[list[Replacement], list[str]]:
    """The rules of replacement ``lines`` (``#`` starts a comment line), and one problem per line
    that is not a rule (``"line 3: ..."``, numbered from 1)."""
    rules: list[Replacement] = []
    problems: list[str] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        flags: set[str] = set()
        if line.startswith("["):
            inside, closed, line = line[1:].partition("]")
            flags = {flag.strip().lower() for flag in inside.split(",") if flag.strip()}
            unknown = ", ".join(sorted(flags - {_ANYWHERE, _MATCH_CASE}))
            if not closed or unknown:
                wrong = f"not {unknown}" if closed else "and need a closing ]"
                problems.append(f"line {number}: flags can be [{_ANYWHERE}] and [{_MATCH_CASE}], {wrong}")
                continue
        say, arrow, write = (part.strip() for part in line.partition(_ARROW))
        if not arrow:
            problems.append(f"line {number}: no '{_ARROW}' between what is said and what to write: {raw.strip()!r}")
            continue
        if not say:
            problems.append(f"line {number}: nothing before '{_ARROW}'")
            continue
        rules.append(Replacement(say, write, whole_word=_ANYWHERE not in flags, match_case=_MATCH_CASE in flags))
    return rules, problems


def format_replacements(rules: list[Replacement]) -> str:
    """``rules`` as the text of a replacements file, one line each."""
    return "".join(f"{rule.line}\n" for rule in rules)
