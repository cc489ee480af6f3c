"""The mode the user's ``[writing]`` settings ask for, with their own vocabulary and rules.

In ``settings.toml``::

    [writing]
    mode = "prose"
    vocabulary = ["Xochitl = so chee tl", "Kubernetes"]
    replacements = ["btw => by the way"]

    [writing.mode_vocabulary]
    code = ["kubectl = cube control", "nginx = engine x"]

    [writing.mode_replacements]
    code = ["dash dash => --"]

    [writing.live_typing]
    message = false

Each vocabulary item is a line of a vocabulary file (:mod:`voxdesk.app.writing.vocabulary`),
each rule a line of a replacements file (:mod:`voxdesk.app.writing.replacements`). The first
two lists apply in every mode, after the mode's own; a mode's own lists come after them. A bad
item costs only itself, as a warning.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from voxdesk.app.settings import WritingSettings
from voxdesk.app.writing.modes import DEFAULT_MODES, CleanupStyle, Mode, mode_named
from voxdesk.app.writing.replacements import parse_replacements
from voxdesk.app.writing.vocabulary import parse_vocabulary

__all__ = ["every_mode_vocabulary", "user_mode"]

T = TypeVar("T")


def user_mode(
    settings: WritingSettings, name: str | None = None, modes: Iterable[Mode] = DEFAULT_MODES
) -> tuple[Mode, list[str]]:
    """The mode called ``name`` (default: the settings' mode) with the settings' vocabulary and
    replacements added and their live typing choice, and one warning per setting that could not be used.

    An unknown mode name in the settings is a warning and gives the first of ``modes``.
    """
    modes = tuple(modes)
    warnings: list[str] = []
    mode = mode_named(name or settings.mode, modes)
    known = ", ".join(m.name for m in modes)
    if mode is None:
        warnings.append(f"ignored writing.mode: {settings.mode!r} is not one of {known}")
        mode = modes[0]
    for unknown in sorted({*settings.mode_vocabulary, *settings.mode_replacements} - {m.name for m in modes}):
        warnings.append(f"ignored the words of mode {unknown!r}: it is not one of {known}")
    for app, unknown in settings.app_modes.items():
        if mode_named(unknown, modes) is None:
            warnings.append(f"ignored writing.app_modes.{app}: {unknown!r} is not one of {known}")
    for vocabulary_items, rule_items, setting in (
        (settings.vocabulary, settings.replacements, ""),
        (settings.mode_vocabulary.get(mode.name, []), settings.mode_replacements.get(mode.name, []), mode.name),
    ):
        vocabulary = _parsed(parse_vocabulary, vocabulary_items, _name("vocabulary", setting), warnings)
        rules = _parsed(parse_replacements, rule_items, _name("replacements", setting), warnings)
        mode = mode.adding(vocabulary, rules)
    for unknown in sorted(set(settings.live_typing) - {m.name for m in modes}):
        warnings.append(f"ignored writing.live_typing.{unknown}: it is not one of {known}")
    live = settings.live_typing.get(mode.name, mode.live_typing)
    cleanup, prompt = _cleanup(settings, mode, modes, warnings)
    return dataclasses.replace(mode, live_typing=live, cleanup=cleanup, cleanup_prompt=prompt), warnings


def _cleanup(
    settings: WritingSettings, mode: Mode, modes: tuple[Mode, ...], warnings: list[str]
) -> tuple[CleanupStyle, str]:
    """The mode's cleanup style and prompt as the settings change them; a bad one is a warning."""
    names = [m.name for m in modes]
    for unknown in sorted({*settings.cleanup, *settings.cleanup_prompts} - set(names)):
        warnings.append(f"ignored the cleanup of mode {unknown!r}: it is not one of {', '.join(names)}")
    prompt = settings.cleanup_prompts.get(mode.name, mode.cleanup_prompt).strip()
    name = settings.cleanup.get(mode.name)
    if name is None:
        return mode.cleanup, prompt
    try:
        style = CleanupStyle(name)
    except ValueError:
        warnings.append(f"ignored writing.cleanup.{mode.name}: {name!r} is not one of {', '.join(CleanupStyle)}")
        return mode.cleanup, prompt
    if style is CleanupStyle.CUSTOM and not prompt:
        warnings.append(f"ignored writing.cleanup.{mode.name}: custom needs writing.cleanup_prompts.{mode.name}")
        return mode.cleanup, prompt
    return style, prompt


def every_mode_vocabulary(settings: WritingSettings, modes: Iterable[Mode] = DEFAULT_MODES) -> tuple[str, ...]:
    """The vocabulary of every mode with the settings' words, each entry once: what a listening
    session is biased towards, since its utterances' modes are picked only as they are written."""
    texts: dict[str, str] = {}
    for mode in modes:
        for entry in user_mode(settings, mode.name, modes)[0].vocabulary:
            texts.setdefault(entry.text.casefold(), entry.text)
    return tuple(texts.values())


def _name(kind: str, mode: str) -> str:
    """The setting's name in warnings: ``writing.vocabulary`` or ``writing.mode_vocabulary.code``."""
    return f"writing.mode_{kind}.{mode}" if mode else f"writing.{kind}"


def _parsed(
    parse: Callable[[list[str]], tuple[list[T], list[str]]], items: Sequence[object], name: str, warnings: list[str]
) -> list[T]:
    """The items parsed, one warning per item that is not one."""
    parsed, problems = parse(_lines(items, name, warnings))
    warnings += [f"ignored {name} item {problem.removeprefix('line ')}" for problem in problems]
    return parsed


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
