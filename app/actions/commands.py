"""Voice commands: phrase patterns with typed slots, loaded from TOML.

The defaults live in ``resources/commands.toml``; the user's own file is
``config_dir() / "commands.toml"``. A user command with the name of a default replaces it.
Only the user's file may define ``run`` commands (an argument list, never a shell string).

A phrase is words with slots in braces: ``open {app}``, ``set a timer for {n:number}
{unit:minutes|seconds|hours}``. Slot types: ``text`` (the default: the words said, edge
punctuation stripped), ``raw`` (verbatim), ``number``, ``keys`` (a key combination such as
"control shift t") and enumerations written ``a|b|c``.

A mistake in a file costs only what it touches: a command that is not valid is skipped, and a
TOML syntax error only the ``[commands.NAME]`` table it is in. Each is reported as
``FILE:LINE: what is wrong``.
"""

from __future__ import annotations

import logging
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxdesk.app.actions.kinds import Action, SlotKind
from voxdesk.app.actions.registry import ACTIONS
from voxdesk.app.resources import resource_path
from voxdesk.app.settings import config_dir
from voxdesk.app.textnorm import normalize_text
from voxdesk.engine.errors import VoxdeskError

__all__ = [
    "DEFAULTS_PATH",
    "Command",
    "CommandFileError",
    "CommandSource",
    "Literal",
    "Pattern",
    "Slot",
    "load_command_file",
    "parse_commands",
    "parse_pattern",
    "problem_summary",
    "user_commands_path",
]

logger = logging.getLogger("voxdesk.actions")


def _defaults_path() -> Path:
    return resource_path("commands.toml")


DEFAULTS_PATH = _defaults_path()

# The slot types a phrase may name; enumerations are written ``a|b|c`` instead.
SLOT_TYPES = (SlotKind.TEXT, SlotKind.RAW, SlotKind.NUMBER, SlotKind.KEYS)
# The actions a command file may name; ``run`` commands are written with a ``run`` list instead.
_FILE_ACTIONS = tuple(a for a in Action if a not in (Action.RUN, Action.PLAN))
_SLOT = re.compile(r"\{(\w+)(?::([^}]*))?\}")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_HEADER = re.compile(r"^\s*\[\[?([^\]#]*)")  # a table header's dotted key, even one missing its "]"
_KEY = re.compile(r'^\s*("[^"]*"|[A-Za-z0-9_-]+)\s*[.=]')  # a key=value line's first key
_TOML_POSITION = re.compile(r"\s*\(at (?:line (\d+), column \d+|end of document)\)$")


class CommandFileError(VoxdeskError):
    """A command file that cannot be read or parsed at all."""


@dataclass(frozen=True)
class Literal:
    """Words that must be said (normalized)."""

    words: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.words)


@dataclass(frozen=True)
class Slot:
    """A typed gap in a phrase; ``options`` holds the choices of an enumeration."""

    name: str
    kind: SlotKind
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pattern:
    """One phrasing of a command."""

    source: str
    parts: tuple[Literal | Slot, ...]

    @property
    def slots(self) -> tuple[Slot, ...]:
        return tuple(p for p in self.parts if isinstance(p, Slot))

    @property
    def literal_chars(self) -> int:
        return sum(len(p.text) for p in self.parts if isinstance(p, Literal))


@dataclass(frozen=True)
class Command:
    """A voice command: what to say, what to do, and whether to ask first."""

    name: str
    action: Action
    phrases: tuple[Pattern, ...]
    args: Mapping[str, str] = field(default_factory=dict)
    run: tuple[str, ...] | None = None
    confirm: bool = False
    dictation: bool = False  # also recognized in dictation mode
    description: str = ""
    origin: str = "defaults"

    @property
    def slots(self) -> dict[str, Slot]:
        """Every slot of every phrasing, by name."""
        return {s.name: s for p in self.phrases for s in p.slots}

    @property
    def required_slots(self) -> set[str]:
        """Slots present in every phrasing."""
        sets = [{s.name for s in p.slots} for p in self.phrases]
        return set.intersection(*sets) if sets else set()


def parse_pattern(phrase: str) -> Pattern:
    """``"search for {query}"`` as literals and slots; ValueError on a bad slot."""
    parts: list[Literal | Slot] = []
    position = 0
    for match in _SLOT.finditer(phrase):
        words = normalize_text(phrase[position : match.start()]).split()
        if words:
            parts.append(Literal(tuple(words)))
        name, spec = match.group(1), (match.group(2) or "text").strip()
        if "|" in spec:
            slot = Slot(name, SlotKind.ENUM, tuple(normalize_text(o) for o in spec.split("|") if normalize_text(o)))
        elif spec in SLOT_TYPES:
            slot = Slot(name, SlotKind(spec))
        else:
            raise ValueError(f"unknown slot type {spec!r} in {phrase!r}")
        previous = parts[-1] if parts else None
        if isinstance(previous, Slot) and {previous.kind, slot.kind} & {SlotKind.TEXT, SlotKind.RAW}:
            raise ValueError(f"a text slot needs words between it and the next slot in {phrase!r}")
        parts.append(slot)
        position = match.end()
    words = normalize_text(phrase[position:]).split()
    if words:
        parts.append(Literal(tuple(words)))
    if "{" in _SLOT.sub("", phrase) or "}" in _SLOT.sub("", phrase):
        raise ValueError(f"unbalanced braces in {phrase!r}")
    if not any(isinstance(p, Literal) for p in parts):
        raise ValueError(f"phrase {phrase!r} has no words to recognize it by")
    return Pattern(phrase, tuple(parts))


def _command(name: str, entry: Any, origin: str, allow_run: bool) -> Command:
    if not _NAME.match(name):
        raise ValueError("names may only use letters, digits, _ and -")
    if not isinstance(entry, dict):
        raise ValueError("must be a table")
    known = {"action", "phrases", "args", "run", "confirm", "safe", "dictation", "description"}
    unknown = set(entry) - known
    if unknown:
        raise ValueError(f"unknown keys {', '.join(sorted(unknown))}")
    phrases = entry.get("phrases")
    if not isinstance(phrases, list) or not phrases or not all(isinstance(p, str) for p in phrases):
        raise ValueError('needs phrases = ["...", ...]')
    patterns = tuple(parse_pattern(p) for p in phrases)
    args = entry.get("args", {})
    if not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
        raise ValueError("args must be a table of strings")
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise ValueError("description must be a string")
    for key in ("confirm", "safe", "dictation"):
        if not isinstance(entry.get(key, False), bool):
            raise ValueError(f"{key} must be true or false")
    run = entry.get("run")
    if run is not None:
        if not allow_run:
            raise ValueError("run commands are only allowed in your own commands.toml")
        if not isinstance(run, list) or not run or not all(isinstance(a, str) for a in run):
            raise ValueError('run must be a list of arguments, e.g. run = ["prog", "{slot}"] (no shell strings)')
        if "action" in entry and entry["action"] != "run":
            raise ValueError("a command with run has no other action")
        slot_names = {s.name for p in patterns for s in p.slots}
        for argument in run:
            for used in _SLOT.findall(argument):
                if used[0] not in slot_names:
                    raise ValueError(f"run uses {{{used[0]}}}, which no phrase defines")
        # Shell commands ask first unless the user marked them safe.
        return Command(
            name, Action.RUN, patterns, args, tuple(run), not entry.get("safe", False), False, description, origin
        )
    name_given = entry.get("action")
    if name_given not in _FILE_ACTIONS:
        raise ValueError(f"action must be one of {', '.join(_FILE_ACTIONS)}")
    action = Action(name_given)
    for pattern in patterns:
        missing = ACTIONS[action].needs - {s.name for s in pattern.slots} - set(args)
        if missing:
            raise ValueError(f"phrase {pattern.source!r} does not give {', '.join(sorted(missing))}")
    return Command(
        name,
        action,
        patterns,
        args,
        None,
        bool(entry.get("confirm", False)),
        bool(entry.get("dictation", False)),
        description,
        origin,
    )


def parse_commands(
    data: Mapping[str, Any], origin: str, *, allow_run: bool, lines: Mapping[str, int] | None = None
) -> tuple[list[Command], list[str]]:
    """Commands from parsed TOML (``[commands.NAME]`` tables), and one warning per command skipped.

    ``lines`` gives the line each table starts on (``"commands.NAME"``, ``"NAME"``) for the warnings.
    """
    lines = lines or {}

    def where(key: str) -> str:
        return f"{origin}:{lines[key]}" if key in lines else origin

    warnings: list[str] = []
    table = data.get("commands", {})
    if not isinstance(table, dict):
        return [], [f"{where('commands')}: [commands] must be a table"]
    for extra in sorted(set(data) - {"commands"}):
        warnings.append(f"{where(extra)}: ignored unknown section [{extra}]")
    commands: list[Command] = []
    for name, entry in table.items():
        try:
            commands.append(_command(name, entry, origin, allow_run))
        except ValueError as error:
            warnings.append(f"{where(f'commands.{name}')}: ignored command {name!r}: {error}")
    return commands, warnings


def load_command_file(path: Path, *, allow_run: bool) -> tuple[list[Command], list[str]]:
    """Commands from one TOML file, and one ``FILE:LINE: ...`` warning per part skipped.

    Raises:
        CommandFileError: the file cannot be read, is not UTF-8, or no part of it is valid TOML.
    """
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise CommandFileError(f"could not read {path}: {error}") from error
    except UnicodeDecodeError as error:
        raise CommandFileError(f"could not read {path}: not UTF-8 text (byte {error.start})") from error
    data, syntax_errors = _parse_tables(text)
    if data is None:
        line, _, message = syntax_errors[0]
        raise CommandFileError(f"could not read {path}:{line}: not valid TOML: {message}")
    skipped = [
        f"{path}:{line}: skipped {f'[{table}]' if table else 'the lines before the first table'}, "
        f"which is not valid TOML: {message}"
        for line, table, message in syntax_errors
    ]
    commands, warnings = parse_commands(data, str(path), allow_run=allow_run, lines=_table_lines(text))
    return commands, skipped + warnings


def _parse_tables(text: str) -> tuple[dict[str, Any] | None, list[tuple[int, str, str]]]:
    """``text`` as TOML; on a syntax error, each top table (``[commands.NAME]`` with its
    subtables) parsed alone so the valid ones still load. The data (``None`` when no table
    parsed) and each syntax error's line, table and message."""
    try:
        return tomllib.loads(text), []
    except tomllib.TOMLDecodeError:
        pass
    # Each table is parsed from the file with every other table's lines blanked, so the line
    # numbers in its errors are the file's. (A multi-line string whose lines look like table
    # headers would be cut, but only in a file that is broken already.)
    lines = text.splitlines()
    owner: list[str] = []
    current = ""
    for line in lines:
        header = _HEADER.match(line)
        if header:
            current = _top_table(header.group(1))
        owner.append(current)
    data: dict[str, Any] = {}
    errors: list[tuple[int, str, str]] = []
    parsed_any = False
    for table in dict.fromkeys(owner):
        alone = "\n".join(line if key == table else "" for line, key in zip(lines, owner, strict=True))
        try:
            _merge(data, tomllib.loads(alone))
            parsed_any = True
        except tomllib.TOMLDecodeError as error:
            number, message = _toml_error(error, len(lines))
            errors.append((number, table, message))
    return (data if parsed_any else None), errors


def _top_table(key: str) -> str:
    """The table a header belongs to: ``commands.NAME`` for ``[commands.NAME.args]``."""
    parts = [part.strip().strip("\"'") for part in key.split(".")]
    return ".".join(parts[:2] if parts[0] == "commands" else parts[:1])


def _merge(into: dict[str, Any], data: Mapping[str, Any]) -> None:
    for key, value in data.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _toml_error(error: tomllib.TOMLDecodeError, last_line: int) -> tuple[int, str]:
    message = str(error)
    position = _TOML_POSITION.search(message)
    if position is None:
        return 1, message
    return int(position.group(1) or last_line), message[: position.start()]


def _table_lines(text: str) -> dict[str, int]:
    """The line each table starts on: ``NAME`` for ``[NAME]``, ``commands.NAME`` for a command
    (its own header, or its key in ``[commands]``)."""
    found: dict[str, int] = {}
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            current = _top_table(header.group(1))
            found.setdefault(current, number)
            found.setdefault(current.split(".")[0], number)
        elif current == "commands" and (key := _KEY.match(line)):
            found.setdefault(f"commands.{key.group(1).strip(chr(34))}", number)
    return found


def problem_summary(problems: Sequence[str]) -> str:
    """One line for the user about the problems of the command files."""
    more = f" (and {len(problems) - 1} more: `voxdesk commands check` lists them)" if len(problems) > 1 else ""
    return f"voice commands: {problems[0]}{more}"


def user_commands_path() -> Path:
    """The user's own command file."""
    return config_dir() / "commands.toml"


class CommandSource:
    """The current command set: defaults plus the user's file, reloaded when that file changes.

    Each call to :meth:`commands` checks the user file's modification time (one ``stat``). Each
    problem of a load is reported once through ``on_warning``, and the load's problems together
    through ``on_problems``; :attr:`problems` holds those of the command set in effect. A file
    that cannot be parsed at all leaves the commands loaded before in use.
    """

    def __init__(
        self,
        defaults_path: Path = DEFAULTS_PATH,
        user_path: Path | None = None,
        on_warning: Callable[[str], None] | None = None,
        on_problems: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.defaults_path = defaults_path
        self.user_path = user_path if user_path is not None else user_commands_path()
        self.on_warning = on_warning  # None: warnings go to the "voxdesk.actions" logger
        self.on_problems = on_problems
        self.warnings: list[str] = []
        try:
            defaults, warnings = load_command_file(defaults_path, allow_run=False)
        except CommandFileError as error:  # a broken installation: the user's own commands still work
            defaults, warnings = [], [f"{error}; the default commands are unavailable"]
        self._default_problems = warnings
        self.problems = list(warnings)
        self._warn(warnings)
        self._defaults = {c.name: c for c in defaults}
        self._user: dict[str, Command] = {}
        self._stamp: tuple[int, int] | None = None
        self._commands: tuple[Command, ...] = tuple(self._defaults.values())
        self.commands()

    def _warn(self, warnings: list[str]) -> None:
        for warning in warnings:
            self.warnings.append(warning)
            if self.on_warning:
                self.on_warning(warning)
            else:
                logger.warning("%s", warning)

    def _loaded(self, user_problems: list[str]) -> None:
        self._warn(user_problems)
        self.problems = [*self._default_problems, *user_problems]
        if self.problems and self.on_problems:
            self.on_problems(list(self.problems))

    def commands(self) -> tuple[Command, ...]:
        """The commands in effect now."""
        try:
            stat = self.user_path.stat()
            stamp: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            stamp = None
        if stamp != self._stamp:
            self._stamp = stamp
            self._reload(stamp is not None)
        return self._commands

    def _reload(self, exists: bool) -> None:
        if not exists:
            self._user = {}
            self._loaded([])
        else:
            try:
                user, warnings = load_command_file(self.user_path, allow_run=True)
            except CommandFileError as error:
                kept = "your previous commands" if self._user else "the default commands"
                self._loaded([f"{error}; keeping {kept}"])
                return
            self._loaded(warnings)
            self._user = {c.name: c for c in user}
        merged = dict(self._defaults)
        merged.update(self._user)
        self._commands = tuple(merged.values())
