"""Which application has the focus: xprop's, osascript's and Windows' answers read, a mode found
by the app's class, and the probe chosen by the desktop (the real X11 probe is driven in
test_typing_x11; the macOS and Windows probes cannot run here)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from voxdesk.app.actions.focus import (
    FocusedApp,
    MacFocus,
    NoFocusProbe,
    WindowsFocus,
    X11Focus,
    choose_focus_probe,
    foreground_app,
    mode_for_app,
    parse_frontmost,
    parse_wm_class,
    read_output,
)
from voxdesk.app.writing.modes import DEFAULT_MODES


@pytest.mark.parametrize(
    ("line", "app"),
    [
        ('WM_CLASS(STRING) = "xterm", "XTerm"', FocusedApp("xterm", "XTerm")),
        (
            'WM_CLASS(STRING) = "gnome-terminal-server", "Gnome-terminal"',
            FocusedApp("gnome-terminal-server", "Gnome-terminal"),
        ),
        ('WM_CLASS(STRING) = "a, b", "Odd"', FocusedApp("a, b", "Odd")),
        ("WM_CLASS:  not found.", None),
        ('WM_CLASS(STRING) = "only-one"', None),
        ("", None),
    ],
)
def test_xprops_wm_class_line_becomes_the_instance_and_class(line: str, app: FocusedApp | None) -> None:
    assert parse_wm_class(line) == app


def test_a_mode_is_found_by_the_apps_class_or_instance_in_any_case() -> None:
    assert getattr(mode_for_app(FocusedApp("xterm", "XTerm"), DEFAULT_MODES), "name", None) == "code"
    assert getattr(mode_for_app(FocusedApp("code", "code"), DEFAULT_MODES), "name", None) == "code"
    assert getattr(mode_for_app(FocusedApp("slack", "Slack"), DEFAULT_MODES), "name", None) == "message"
    assert mode_for_app(FocusedApp("gimp", "Gimp"), DEFAULT_MODES) is None
    assert mode_for_app(None, DEFAULT_MODES) is None


def test_the_users_app_modes_come_before_the_built_in_ones() -> None:
    app_modes = {"gimp": "prose", "XTerm": "plain", "slack": "no-such-mode"}
    assert getattr(mode_for_app(FocusedApp("gimp", "Gimp"), DEFAULT_MODES, app_modes), "name", None) == "prose"
    assert getattr(mode_for_app(FocusedApp("xterm", "XTerm"), DEFAULT_MODES, app_modes), "name", None) == "plain"
    assert getattr(mode_for_app(FocusedApp("slack", "Slack"), DEFAULT_MODES, app_modes), "name", None) == "message"


@pytest.mark.parametrize(
    ("environ", "platform", "reason"),
    [
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", "Wayland does not tell programs which window has the focus"),
        ({}, "linux", "there is no graphical session"),
        ({"PATH": "/nonexistent"}, "darwin", "osascript is not on the PATH"),
        ({"DISPLAY": ":0", "PATH": "/nonexistent"}, "linux", "needs xdotool and xprop"),
    ],
)
def test_a_desktop_that_cannot_tell_the_focused_app_says_why(
    environ: dict[str, str], platform: str, reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "PATH" in environ:
        monkeypatch.setenv("PATH", environ["PATH"])
    probe = choose_focus_probe(environ, platform)
    assert isinstance(probe, NoFocusProbe)
    assert reason in (probe.unsupported or "")


@pytest.mark.parametrize(
    ("answer", "app"),
    [
        ("com.tinyspeck.slackmacgap, Slack", FocusedApp("com.tinyspeck.slackmacgap", "Slack")),
        ("com.apple.Terminal, Terminal", FocusedApp("com.apple.Terminal", "Terminal")),
        ("missing value, Some Helper", FocusedApp("missing value", "Some Helper")),
        ("", None),
        ("com.example.nameless, ", None),
    ],
)
def test_the_frontmost_mac_application_is_its_bundle_and_name(answer: str, app: FocusedApp | None) -> None:
    assert parse_frontmost(answer) == app


def test_the_mac_probe_asks_system_events_and_a_refusal_is_no_app() -> None:
    asked: list[list[str]] = []

    async def osascript(argv: Sequence[str]) -> str | None:  # a fake: there is no macOS here
        asked.append(list(argv))
        return "com.microsoft.VSCode, Code" if len(asked) == 1 else None

    probe = MacFocus(osascript)
    first, refused = asyncio.run(probe.focused_app()), asyncio.run(probe.focused_app())
    assert getattr(mode_for_app(first, DEFAULT_MODES), "name", None) == "code" and refused is None
    assert asked[0][:2] == ["osascript", "-e"] and "frontmost is true" in asked[0][2]


@pytest.mark.parametrize(
    ("executable", "window_class", "mode"),
    [
        (r"C:\Users\ann\AppData\Local\slack\slack.exe", "Chrome_WidgetWin_1", "message"),
        (
            r"C:\Program Files\WindowsApps\Microsoft.WindowsTerminal\WindowsTerminal.exe",
            "CASCADIA_HOSTING_WINDOW_CLASS",
            "code",
        ),
        ("", "Notepad", None),
    ],
)
def test_a_windows_program_is_found_by_its_executable(executable: str, window_class: str, mode: str | None) -> None:
    app = foreground_app(executable, window_class)
    assert getattr(mode_for_app(app, DEFAULT_MODES), "name", None) == mode
    assert foreground_app("", "") is None


def test_windows_and_macos_get_their_probes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert isinstance(choose_focus_probe({}, "win32"), WindowsFocus)
    assert asyncio.run(WindowsFocus().focused_app()) is None  # not on Windows

    async def win32(path: str = r"C:\Apps\Code.exe") -> tuple[str, str] | None:  # a fake: there is no Windows here
        return path, "Chrome_WidgetWin_1"

    assert asyncio.run(WindowsFocus(win32).focused_app()) == FocusedApp("Code", "Chrome_WidgetWin_1")
    (tmp_path / "osascript").write_text("#!/bin/sh\n")
    (tmp_path / "osascript").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert isinstance(choose_focus_probe({}, "darwin"), MacFocus)


def test_x11_with_both_tools_gets_the_x11_probe() -> None:
    probe = choose_focus_probe({"DISPLAY": ":0"}, "linux")
    assert isinstance(probe, X11Focus) and probe.unsupported is None


def test_no_focused_window_or_an_odd_answer_is_no_app() -> None:
    async def answers(argv: Sequence[str]) -> str | None:  # FAKE xdotool/xprop: what a broken session prints
        return {"xdotool": "Error: no window", "xprop": 'WM_CLASS(STRING) = "x", "X"'}[argv[0]]

    assert asyncio.run(X11Focus(answers).focused_app()) is None


def test_a_command_that_fails_or_is_missing_reads_as_nothing() -> None:
    assert asyncio.run(read_output(["sh", "-c", "echo hi; exit 3"])) is None
    assert asyncio.run(read_output(["/nonexistent/tool"])) is None
    assert asyncio.run(read_output(["sh", "-c", "echo ' hi '"])) == "hi"
