"""Command files: the shipped defaults, the user's file, reloading, and what is refused."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from voxdesk.app.actions.commands import (
    DEFAULTS_PATH,
    CommandSource,
    load_command_file,
    parse_pattern,
    problem_summary,
)


def _write(path: Path, text: str) -> None:
    path.write_text(text)
    # mtime granularity can be coarse; make every write visible as a change.
    stamp = path.stat().st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(stamp, stamp))


def test_defaults_cover_the_required_commands(command_source: CommandSource) -> None:
    names = {c.name for c in command_source.commands()}
    assert {
        "open_browser",
        "open_app",
        "open_website",
        "search",
        "type_text",
        "press_keys",
        "copy_that",
        "copy_text",
        "timer",
        "stop_listening",
        "scratch_that",
        "dictation_mode",
        "command_mode",
    } <= names
    assert command_source.warnings == []


def test_defaults_contain_no_programs_to_run() -> None:
    data = tomllib.loads(DEFAULTS_PATH.read_text())
    assert all("run" not in entry for entry in data["commands"].values())


def test_run_commands_in_a_defaults_file_are_rejected(tmp_path: Path) -> None:
    defaults = tmp_path / "defaults.toml"
    defaults.write_text(
        '[commands.wipe]\nphrases = ["wipe it"]\nrun = ["rm", "-rf", "/"]\n'
        '[commands.hello]\nphrases = ["say hello"]\naction = "type"\nargs = { text = "hello" }\n'
    )
    commands, warnings = load_command_file(defaults, allow_run=False)
    assert [c.name for c in commands] == ["hello"]
    assert len(warnings) == 1 and "wipe" in warnings[0] and "only allowed in your own" in warnings[0]
    source = CommandSource(defaults_path=defaults, user_path=tmp_path / "none.toml")
    assert "wipe" not in {c.name for c in source.commands()}


def test_user_run_commands_confirm_unless_safe(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    user.write_text(
        '[commands.backup]\nphrases = ["back up {folder}"]\nrun = ["rsync", "-a", "{folder}", "/mnt/b"]\n'
        '[commands.lock]\nphrases = ["lock the screen"]\nrun = ["loginctl", "lock-session"]\nsafe = true\n'
        '[commands.sneaky]\nphrases = ["sneaky"]\nrun = ["sh", "-c", "echo hi"]\nconfirm = false\n'
    )
    commands = {c.name: c for c in CommandSource(user_path=user).commands()}
    assert commands["backup"].confirm and commands["backup"].run == ("rsync", "-a", "{folder}", "/mnt/b")
    assert not commands["lock"].confirm
    assert commands["sneaky"].confirm  # confirm = false is not enough: only safe = true skips it


def test_run_must_be_an_argument_list(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    user.write_text('[commands.bad]\nphrases = ["do it"]\nrun = "rm -rf ~"\n')
    warnings: list[str] = []
    source = CommandSource(user_path=user, on_warning=warnings.append)
    assert "bad" not in {c.name for c in source.commands()}
    assert any("list of arguments" in w for w in warnings)


def test_user_file_overrides_adds_and_reloads(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    source = CommandSource(user_path=user)
    assert "note" not in {c.name for c in source.commands()}
    _write(user, '[commands.note]\nphrases = ["take a note {text}"]\naction = "type"\n')
    assert "note" in {c.name for c in source.commands()}
    _write(
        user,
        '[commands.search]\nphrases = ["find {query}"]\naction = "search"\n',
    )
    commands = {c.name: c for c in source.commands()}
    assert "note" not in commands
    assert [p.source for p in commands["search"].phrases] == ["find {query}"]
    user.unlink()
    search = {c.name: c for c in source.commands()}["search"]
    assert search.phrases[0].source == "search for {query}"


def test_broken_user_file_warns_and_keeps_previous_commands(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    _write(user, '[commands.note]\nphrases = ["take a note {text}"]\naction = "type"\n')
    warnings: list[str] = []
    source = CommandSource(user_path=user, on_warning=warnings.append)
    assert "note" in {c.name for c in source.commands()}
    _write(user, "[commands.note\nphrases = [")
    assert "note" in {c.name for c in source.commands()}
    assert len(warnings) == 1 and "could not read" in warnings[0] and "keeping your previous commands" in warnings[0]
    source.commands()
    assert len(warnings) == 1  # reported once, not on every use


def test_broken_user_file_at_start_keeps_defaults(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    user.write_text("not toml at all = = =")
    warnings: list[str] = []
    source = CommandSource(user_path=user, on_warning=warnings.append)
    assert "open_browser" in {c.name for c in source.commands()}
    assert "keeping the default commands" in warnings[0]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('phrases = ["x {a:colour}"]\naction = "type"', "unknown slot type"),
        ('phrases = ["{a} {b}"]\naction = "type"', "needs words"),
        ('phrases = ["open it"]\naction = "explode"', "action must be one of"),
        ('phrases = ["open it"]\naction = "open_url"', "does not give url"),
        ('phrases = []\naction = "type"', "needs phrases"),
        ('phrases = ["go"]\nrun = ["x", "{nothing}"]', "no phrase defines"),
    ],
)
def test_bad_entries_are_skipped_with_a_reason(tmp_path: Path, entry: str, problem: str) -> None:
    user = tmp_path / "commands.toml"
    user.write_text(f"[commands.bad]\n{entry}\n")
    commands, warnings = load_command_file(user, allow_run=True)
    assert commands == [] and problem in warnings[0]


def test_pattern_parts() -> None:
    pattern = parse_pattern("Set a timer for {n:number} {unit:minutes|seconds}")
    assert [getattr(p, "words", None) or (p.name, p.kind) for p in pattern.parts] == [  # type: ignore[union-attr]
        ("set", "a", "timer", "for"),
        ("n", "number"),
        ("unit", "enum"),
    ]


def test_missing_defaults_file_warns_and_keeps_user_commands(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    user.write_text('[commands.note]\nphrases = ["take a note {text}"]\naction = "type"\n')
    warnings: list[str] = []
    source = CommandSource(defaults_path=tmp_path / "missing.toml", user_path=user, on_warning=warnings.append)
    assert [c.name for c in source.commands()] == ["note"]
    assert "the default commands are unavailable" in warnings[0]


MIXED = (
    '[commands.note]\nphrases = ["take a note {text}"]\naction = "type"\n\n'  # lines 1-4
    '[commands.broken]\nphrases = ["oops"\naction = "type"\n\n'  # lines 5-8: not TOML
    '[commands.boom]\nphrases = ["boom"]\naction = "explode"\n\n'  # lines 9-12: no such action
    '[commands.jot]\nphrases = ["jot {text}"]\naction = "type"\n'  # lines 13-15
    "[commands.jot.args]\n"
)


def test_a_syntax_error_costs_only_its_own_table_and_each_problem_has_its_line(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    user.write_text(MIXED)
    commands, warnings = load_command_file(user, allow_run=True)
    assert [c.name for c in commands] == ["note", "jot"]
    assert warnings[0].startswith(f"{user}:7: skipped [commands.broken], which is not valid TOML: ")
    assert warnings[1].startswith(f"{user}:9: ignored command 'boom': action must be one of")
    assert len(warnings) == 2


def test_a_command_in_a_commands_table_is_named_by_its_key_line(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    user.write_text('[commands]\nfine = { phrases = ["fine"], action = "stop_listening" }\nbad = { phrases = ["x"] }\n')
    commands, [warning] = load_command_file(user, allow_run=True)
    assert [c.name for c in commands] == ["fine"] and warning.startswith(f"{user}:3: ignored command 'bad'")


def test_a_file_that_is_not_utf8_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    user.write_bytes('[commands.café]\nphrases = ["café"]\naction = "type"\n'.encode("latin-1"))
    problems: list[list[str]] = []
    source = CommandSource(user_path=user, on_warning=lambda _: None, on_problems=problems.append)
    assert "open_browser" in {c.name for c in source.commands()}
    [[problem]] = problems
    assert problem == source.problems[0] and f"could not read {user}: not UTF-8 text (byte 13)" in problem


def test_each_load_reports_its_problems_together_and_a_fixed_file_clears_them(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    _write(user, MIXED)
    loads: list[list[str]] = []
    source = CommandSource(user_path=user, on_warning=lambda _: None, on_problems=loads.append)
    assert len(loads) == 1 and len(loads[0]) == 2 and source.problems == loads[0]
    _write(user, '[commands.note]\nphrases = ["take a note {text}"]\naction = "type"\n')
    assert "note" in {c.name for c in source.commands()}
    assert source.problems == [] and len(loads) == 1
    assert problem_summary(loads[0]).startswith(f"voice commands: {user}:7: skipped [commands.broken]")
    assert problem_summary(loads[0]).endswith("(and 1 more: `voxdesk commands check` lists them)")
