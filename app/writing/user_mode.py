"""The mode the user's ``[writing]`` settings ask for, with their own vocabulary and rules.

In ``settings.toml``::

    [writing]
    mode = "prose"
    vocabulary = ["Xochitl = so chee tl", "Kubernetes"]
    replacements = ["btw => by the way"]

Each vocabulary item is a line of a vocabulary file (:mod:`voxdesk.app.writing.vocabulary`),
each rule a line of a replacements file (:mod:`voxdesk.app.writing.replacements`). They apply
in every mode, after the mode's own. A bad item costs only itself, as a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from voxdesk.app.settings import WritingSettings
from voxdesk.app.writing.modes import DEFAULT_MODES, Mode, mode_named
from voxdesk.app.writing.replacements import parse_replacements
from voxdesk.app.writing.vocabulary import parse_vocabulary

__all__ = ["user_mode"]


def user_mode(
    settings: WritingSettings, name: str | None = None, modes: Iterable[Mode] = DEFAULT_MODES
) -> tuple[Mode, list[str]]:
    """The mode called ``name`` (default: the settings' mode) with the settings' vocabulary and
    replacements added, and one warning per setting that could not be used.

    An unknown mode name in the settings is a warning and gives the first of ``modes``.
    """
    modes = tuple(modes)
    warnings: list[str] = []
    mode = mode_named(name or settings.mode, modes)
    if mode is None:
        known = ", ".join(m.name for m in modes)
        warnings.append(f"ignored writing.mode: {settings.mode!r} is not one of {known}")
        mode = modes[0]
    vocabulary, problems = parse_vocabulary(_lines(settings.vocabulary, "writing.vocabulary", warnings))
    warnings += [f"ignored writing.vocabulary item {problem.removeprefix('line ')}" for problem in problems]
    rules, problems = parse_replacements(_lines(settings.replacements, "writing.replacements", warnings))
    warnings += [f"ignored writing.replacements item {problem.removeprefix('line ')}" for problem in problems]
    return mode.adding(vocabulary, rules), warnings


def _lines(items: Sequence[object], name: str, warnings: list[str]) -> list[str]:
    """The items as lines, numbered as in the list: an item that is not text, or holds a line
    break, is a warning and counts as an empty line."""
    lines = []
    for number, item in enumerate(items, start=1):
        if isinstance(item, str) and "\n" not in item:
            lines.append(item)
        else:
            warnings.append(f"ignored {name} item {number}: {item!r} is not one line of text")
            lines.append("")
    return lines
