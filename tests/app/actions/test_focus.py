"""Which application has the focus: xprop's answer read, a mode found by the app's class, and
the probe chosen by the desktop (the real X11 probe is driven in test_typing_x11)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from voxdesk.app.actions.focus import (
    FocusedApp,
    NoFocusProbe,
    X11Focus,
    choose_focus_probe,
    mode_for_app,
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
        ({"DISPLAY": ":0"}, "darwin", "not supported on this system yet"),
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
