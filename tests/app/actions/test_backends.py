"""Typing backends and launchers build the right argument lists, and say what is missing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingRunner
from voxdesk.app.actions.keyboard import (
    OsascriptKeyboard,
    WtypeKeyboard,
    XdotoolKeyboard,
    YdotoolKeyboard,
    choose_keyboard,
)
from voxdesk.app.actions.keys import KeyCombo, parse_keys
from voxdesk.app.actions.launcher import SystemAppLauncher, normalize_url, search_url, spoken_app_name
from voxdesk.app.actions.ports import ActionError, ProcessResult

CTRL_SHIFT_T = KeyCombo(("ctrl", "shift"), "t")


def _available(*names: str) -> object:
    return lambda name: f"/usr/bin/{name}" if name in names else None


@pytest.mark.parametrize(
    ("environ", "platform", "installed", "expected"),
    [
        ({"DISPLAY": ":0"}, "linux", ("xdotool",), XdotoolKeyboard),
        ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, "linux", ("wtype", "xdotool"), WtypeKeyboard),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", ("ydotool",), YdotoolKeyboard),
        ({}, "darwin", (), OsascriptKeyboard),
    ],
)
def test_backend_choice(environ: dict[str, str], platform: str, installed: tuple[str, ...], expected: type) -> None:
    assert isinstance(choose_keyboard(environ, platform, _available(*installed)), expected)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"DISPLAY": ":0"}, "typing needs xdotool on X11; install it with: sudo apt install xdotool"),
        ({"WAYLAND_DISPLAY": "w"}, "typing on Wayland needs wtype (or ydotool"),
        ({}, "typing needs a graphical session"),
    ],
)
def test_no_backend_says_what_to_do(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ActionError) as error:
        choose_keyboard(environ, "linux", lambda name: None)
    assert message in str(error.value)


def test_xdotool_arguments() -> None:
    runner = RecordingRunner()
    keyboard = XdotoolKeyboard(runner=runner)
    asyncio.run(keyboard.type_text("naïve -x"))
    asyncio.run(keyboard.press(CTRL_SHIFT_T))
    asyncio.run(keyboard.backspace(3))
    assert runner.calls == [
        ["xdotool", "type", "--clearmodifiers", "--delay", "12", "--", "na"],
        ["xdotool", "type", "--clearmodifiers", "--delay", "200", "--", "ï"],
        ["xdotool", "type", "--clearmodifiers", "--delay", "12", "--", "ve -x"],
        ["xdotool", "key", "--clearmodifiers", "--", "ctrl+shift+t"],
        ["xdotool", "key", "--clearmodifiers", "--delay", "5", "--repeat", "3", "BackSpace"],
    ]


def test_wtype_arguments() -> None:
    runner = RecordingRunner()
    keyboard = WtypeKeyboard(runner=runner)
    asyncio.run(keyboard.type_text("-k x"))
    asyncio.run(keyboard.press(KeyCombo(("ctrl", "super"), "Return")))
    asyncio.run(keyboard.backspace(2))
    assert runner.calls == [
        ["wtype", "--", "-k x"],
        ["wtype", "-M", "ctrl", "-M", "logo", "-k", "Return", "-m", "logo", "-m", "ctrl"],
        ["wtype", "-k", "BackSpace", "-k", "BackSpace"],
    ]


def test_ydotool_arguments() -> None:
    runner = RecordingRunner()
    keyboard = YdotoolKeyboard(runner=runner)
    asyncio.run(keyboard.type_text("hi"))
    asyncio.run(keyboard.press(KeyCombo(("ctrl",), "a")))
    assert runner.calls == [["ydotool", "type", "--", "hi"], ["ydotool", "key", "29:1", "30:1", "30:0", "29:0"]]


def test_osascript_passes_text_as_an_argument_not_in_the_script() -> None:
    runner = RecordingRunner()
    keyboard = OsascriptKeyboard(runner=runner)
    text = '" & do shell script "reboot" & "'
    asyncio.run(keyboard.type_text(text))
    asyncio.run(keyboard.press(KeyCombo(("super",), "c")))
    asyncio.run(keyboard.press(KeyCombo((), "Return")))
    typed, combo, enter = runner.calls
    assert typed[-1] == "x" + text and all(text not in part for part in typed[:-1])
    assert "using {command down}" in combo[-4] and combo[-1] == "xc"
    assert "key code 36" in enter[-4]


def test_a_failing_tool_is_an_action_error() -> None:
    async def failing(argv: object, *, wait_s: float) -> ProcessResult:
        return ProcessResult(1, "Error: Can't open display: :99")

    with pytest.raises(ActionError, match=r"xdotool failed \(exit status 1\): Error: Can't open display"):
        asyncio.run(XdotoolKeyboard(runner=failing).type_text("x"))


@pytest.mark.parametrize(
    ("spoken", "combo"),
    [
        ("control a", "ctrl+a"),
        ("Ctrl+Shift+T", "ctrl+shift+t"),
        ("alt f four", "alt+F4"),
        ("command plus c", "super+c"),
        ("page down", "Next"),
        ("escape", "Escape"),
        ("control alt delete", "ctrl+alt+Delete"),
    ],
)
def test_spoken_keys(spoken: str, combo: str) -> None:
    parsed = parse_keys(spoken)
    assert parsed is not None and str(parsed) == combo


@pytest.mark.parametrize("spoken", ["shift", "a b", "the any key", "conference", ""])
def test_not_keys(spoken: str) -> None:
    assert parse_keys(spoken) is None


@pytest.mark.parametrize(
    ("spoken", "url"),
    [
        ("example.com", "https://example.com"),
        ("Example dot com", "https://Example.com"),
        ("docs dot python dot org slash three", "https://docs.python.org/three"),
        ("http://localhost:8000/x", "http://localhost:8000/x"),
        ("www.python.org.", "https://www.python.org"),
    ],
)
def test_urls(spoken: str, url: str) -> None:
    assert normalize_url(spoken) == url


@pytest.mark.parametrize("spoken", ["file:///etc/passwd", "javascript:alert(1)", "hello world", "ftp://x.org", "x"])
def test_not_web_addresses(spoken: str) -> None:
    with pytest.raises(ActionError):
        normalize_url(spoken)


def test_search_url_encodes() -> None:
    assert search_url("https://s.example/?q={query}&x=1", "a&b c/d") == "https://s.example/?q=a%26b+c%2Fd&x=1"
    with pytest.raises(ActionError, match=r"no \{query\}"):
        search_url("https://s.example/", "x")


@pytest.mark.parametrize(
    ("spoken", "name"), [("the Web Browser", "browser"), ("my file manager", "files"), ("Editor", "text editor")]
)
def test_spoken_app_names(spoken: str, name: str) -> None:
    assert spoken_app_name(spoken) == name


def test_linux_launcher_picks_the_first_installed_program() -> None:
    runner = RecordingRunner()
    launcher = SystemAppLauncher("linux", runner, _available("firefox", "xterm"))  # type: ignore[arg-type]
    assert asyncio.run(launcher.launch("the browser")) == "firefox"
    asyncio.run(launcher.launch("a terminal"))
    assert runner.calls == [["firefox"], ["xterm"]]
    with pytest.raises(ActionError, match="no text editor application is installed"):
        asyncio.run(launcher.launch("text editor"))


def test_linux_launcher_uses_desktop_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    applications = tmp_path / "applications"
    applications.mkdir()
    (applications / "org.gnome.Rhythmbox3.desktop").write_text("[Desktop Entry]\nName=Rhythmbox\nExec=rhythmbox\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "none"))
    runner = RecordingRunner()
    launcher = SystemAppLauncher("linux", runner, _available("gtk-launch"))  # type: ignore[arg-type]
    asyncio.run(launcher.launch("rhythm box"))
    assert runner.calls == [["gtk-launch", "org.gnome.Rhythmbox3"]]
    with pytest.raises(ActionError, match="I don't know an application called 'the door'"):
        asyncio.run(launcher.launch("the door"))


def test_macos_launcher_uses_open_a() -> None:
    runner = RecordingRunner()
    launcher = SystemAppLauncher("darwin", runner)
    asyncio.run(launcher.launch("the browser"))
    asyncio.run(launcher.launch("spotify"))
    assert runner.calls == [["open", "-a", "Safari"], ["open", "-a", "Spotify"]]


def test_a_launch_that_fails_at_once_is_reported() -> None:
    async def failing(argv: object, *, wait_s: float) -> ProcessResult:
        return ProcessResult(2, "cannot open display")

    launcher = SystemAppLauncher("linux", failing, _available("xterm"))  # type: ignore[arg-type]
    with pytest.raises(ActionError, match=r"xterm failed \(exit status 2\): cannot open display"):
        asyncio.run(launcher.launch("terminal"))
