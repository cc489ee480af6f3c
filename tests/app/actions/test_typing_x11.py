"""Real typing under Xvfb (the ``x_display`` rig): xdotool keystrokes arrive in a Qt text field in another process."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingLauncher, RecordingOpener
from tests.fake_llm import FakeLlm
from tests.text_field import TextField
from tests.x11_clipboard import XclipClipboard
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.keyboard import XdotoolKeyboard, choose_keyboard
from voxdesk.app.actions.keys import parse_keys
from voxdesk.app.actions.services import Services
from voxdesk.app.hotkeys import GlobalHotkeys
from voxdesk.app.settings import ActionSettings, WritingSettings

pytestmark = pytest.mark.skipif(shutil.which("xdotool") is None, reason="xdotool is not installed")
needs_xclip = pytest.mark.skipif(
    shutil.which("xclip") is None, reason="xclip is not installed (scripts/setup.sh --test installs it)"
)


@pytest.fixture
def center(tmp_path: Path, field: TextField) -> ActionCenter:
    keyboard = choose_keyboard()  # DISPLAY is set and xdotool installed: the X11 backend
    assert isinstance(keyboard, XdotoolKeyboard)
    services = Services(open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard)
    return ActionCenter(ActionSettings(), services, commands=CommandSource(user_path=tmp_path / "c.toml"))


def test_typed_text_arrives_and_scratch_that_removes_it(center: ActionCenter, field: TextField) -> None:
    text = "Hello, World; rm -rf ~ $(reboot) `id` && \"q\" 'x'"
    record = asyncio.run(center.handle_utterance(f"type {text}"))
    assert record is not None and record.status is ActionStatus.DONE, record
    assert "into “voxdesk-test-field” with xdotool" in record.message  # where the text went
    field.wait_for(text.rstrip("'"))  # the text slot drops edge quotes and punctuation
    scratch = asyncio.run(center.handle_utterance("scratch that"))
    assert scratch is not None and scratch.status is ActionStatus.DONE
    field.wait_for("")


def test_key_combination_arrives(center: ActionCenter, field: TextField) -> None:
    async def scenario() -> None:
        await center.handle_utterance("type first draft")
        await asyncio.to_thread(field.wait_for, "first draft")
        pressed = await center.handle_utterance("press control a")
        assert pressed is not None and pressed.status is ActionStatus.DONE
        await center.handle_utterance("type replaced")

    asyncio.run(scenario())
    field.wait_for("replaced")


def test_dictation_types_unicode_and_undo_by_record(center: ActionCenter, field: TextField) -> None:
    async def scenario() -> None:
        center.set_mode("dictation")
        first = await center.handle_utterance("Grüße aus Köln.")
        await center.handle_utterance("Café au lait?")
        await asyncio.to_thread(field.wait_for, "Grüße aus Köln. Café au lait? ")
        assert first is not None
        await center.handle_utterance("scratch that")
        await asyncio.to_thread(field.wait_for, "Grüße aus Köln. ")

    asyncio.run(scenario())


def test_an_edit_by_voice_replaces_the_text_in_the_field_and_undo_restores_it(
    tmp_path: Path, field: TextField, fake_llm: FakeLlm
) -> None:
    """The rewrite comes from the fake LLM server: what is checked is the field (real keystrokes)."""
    keyboard = choose_keyboard()
    settings = ActionSettings(mode="dictation", llm_url=fake_llm.url, llm_model="fake-model")
    services = Services(open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard)
    center = ActionCenter(settings, services, commands=CommandSource(user_path=tmp_path / "c.toml"))
    fake_llm.content = json.dumps({"text": "Treffen am Freitag."})

    async def scenario() -> None:
        await center.handle_utterance("Keep this.")
        await center.handle_utterance("The meeting moves to Friday.")
        await asyncio.to_thread(field.wait_for, "Keep this. The meeting moves to Friday. ")
        edit = await center.handle_utterance("Translate that to German.")
        assert edit is not None and edit.status is ActionStatus.DONE, edit
        await asyncio.to_thread(field.wait_for, "Keep this. Treffen am Freitag. ")
        await center.undo(edit.id)
        await asyncio.to_thread(field.wait_for, "Keep this. The meeting moves to Friday. ")

    asyncio.run(scenario())


@needs_xclip
def test_an_edit_by_voice_rewrites_the_selection_in_another_app_and_puts_the_clipboard_back(
    tmp_path: Path, field: TextField, fake_llm: FakeLlm, x_display: str
) -> None:
    """Text the user typed themselves (not Voxdesk), part of it selected; the selection is read
    with the field's own Ctrl+C through the real X clipboard, rewritten in place, and undone."""
    clipboard = XclipClipboard(x_display)
    clipboard.set_text("what the user had copied")
    keyboard = choose_keyboard()
    settings = ActionSettings(mode="dictation", llm_url=fake_llm.url, llm_model="fake-model")
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard, clipboard=clipboard
    )
    center = ActionCenter(settings, services, commands=CommandSource(user_path=tmp_path / "c.toml"))
    fake_llm.content = json.dumps({"text": "Friday."})
    written = "Note: the meeting moves to Friday afternoon."

    async def press(*keys: str) -> None:
        for key in keys:
            combo = parse_keys(key)
            assert combo is not None, key
            await keyboard.press(combo)

    async def scenario() -> None:
        await keyboard.type_text(written)  # as the user typed it: no record of it in Voxdesk
        await asyncio.to_thread(field.wait_for, written)
        await press("home", *["right"] * len("Note: "), "shift end")  # "the meeting moves to Friday afternoon."
        edit = await center.handle_utterance("make that shorter")
        assert edit is not None and edit.status is ActionStatus.DONE, edit
        assert "rewrote the selection “the meeting moves to Friday afternoon.”" in edit.message, edit.message
        await asyncio.to_thread(field.wait_for, "Note: Friday.")
        assert fake_llm.requests[-1]["messages"][-1]["content"] == "the meeting moves to Friday afternoon."
        assert clipboard.text() == "what the user had copied"
        await center.undo(edit.id)
        await asyncio.to_thread(field.wait_for, written)

    asyncio.run(scenario())


@needs_xclip
def test_with_nothing_selected_an_edit_rewrites_the_last_dictated_text(
    tmp_path: Path, field: TextField, fake_llm: FakeLlm, x_display: str
) -> None:
    clipboard = XclipClipboard(x_display)
    clipboard.set_text("kept")
    settings = ActionSettings(mode="dictation", llm_url=fake_llm.url, llm_model="fake-model")
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=choose_keyboard(), clipboard=clipboard
    )
    center = ActionCenter(settings, services, commands=CommandSource(user_path=tmp_path / "c.toml"))
    fake_llm.content = json.dumps({"text": "Friday."})

    async def scenario() -> None:
        await center.handle_utterance("The meeting moves to Friday.")
        await asyncio.to_thread(field.wait_for, "The meeting moves to Friday. ")
        edit = await center.handle_utterance("make that shorter")
        assert edit is not None and edit.status is ActionStatus.DONE, edit
        await asyncio.to_thread(field.wait_for, "Friday. ")
        assert clipboard.text() == "kept"

    asyncio.run(scenario())


def test_a_plan_opens_an_app_and_types_into_its_window_not_the_one_focused_before(
    tmp_path: Path, x_desktop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "open the voxdesk notes and type hello world" on a display with a window manager: a real
    launch (an executable on PATH, found by the system launcher) whose window the manager
    focuses; the plan waits for that and types there."""
    monkeypatch.setenv("DISPLAY", x_desktop)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    field = TextField(x_desktop, tmp_path / "field.txt")
    notes, pid_file, bin_dir = tmp_path / "notes.txt", tmp_path / "notes.pid", tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "voxdesk-notes"
    script = Path(__file__).parents[2] / "x11_text_field.py"
    program.write_text(  # on X, not the offscreen platform these tests' own Qt uses
        f"#!/bin/sh\necho $$ > {pid_file}\n"
        f"QT_QPA_PLATFORM=xcb exec {sys.executable} {script} {notes} voxdesk-notes >/dev/null\n"
    )
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    services = Services(open_url=RecordingOpener(), keyboard=choose_keyboard())
    center = ActionCenter(ActionSettings(), services, commands=CommandSource(user_path=tmp_path / "c.toml"))

    async def scenario() -> None:
        record = await center.handle_utterance("open the voxdesk notes and type hello world")
        assert record is not None and record.status is ActionStatus.WAITING, record
        assert record.preview == "1. Open the application “the voxdesk notes”; 2. Type “hello world”"
        done = await center.confirm(record.id)
        assert done.status is ActionStatus.DONE, done
        assert "(“voxdesk-notes” has the focus)" in done.message, done.message

    try:
        asyncio.run(scenario())
        deadline = time.monotonic() + 10
        while (typed := notes.read_text(encoding="utf-8") if notes.exists() else "") != "hello world":
            assert time.monotonic() < deadline, typed
            time.sleep(0.05)  # the field writes its file when its text changes
        assert field.text() == ""  # nothing went to the window focused before
    finally:
        field.close()
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


def test_no_typing_backend_says_what_to_install() -> None:
    from voxdesk.app.actions.ports import ActionError

    with pytest.raises(ActionError, match=r"typing needs xdotool on X11; install it with: sudo apt install xdotool"):
        choose_keyboard({"DISPLAY": ":9"}, "linux", lambda name: None)


def test_each_window_gets_its_applications_mode_and_a_mode_shortcut_switches(
    x_display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two real X11 windows posing as a terminal and a chat app; the mode is read from the
    focused window's WM_CLASS (xdotool, xprop), and a system-wide mode shortcut (pynput) wins.
    "Kubernetes" is every mode's word, "Grafana" the message mode's only."""
    monkeypatch.setenv("DISPLAY", x_display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    terminal = TextField(x_display, tmp_path / "terminal.txt", "voxdesk-terminal", ("xterm", "XTerm"))
    chat = TextField(x_display, tmp_path / "chat.txt", "voxdesk-chat", ("slack", "Slack"))
    services = Services(open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=choose_keyboard())
    writing = WritingSettings(vocabulary=["Kubernetes"], mode_vocabulary={"message": ["Grafana"]})
    center = ActionCenter(
        ActionSettings(mode="dictation"),
        services,
        commands=CommandSource(user_path=tmp_path / "c.toml"),
        writing=writing,
    )

    async def scenario() -> list[str]:
        modes = []
        terminal.focus()
        modes.append(await dictate(center, "List the Cooper Netties pods of graph fauna."))
        await asyncio.to_thread(terminal.wait_for, "list the Kubernetes pods of graph fauna ")
        chat.focus()
        modes.append(await dictate(center, "Open graph fauna at three thirty pm."))
        await asyncio.to_thread(chat.wait_for, "Open Grafana at 3:30 PM ")

        switched = asyncio.Event()

        def on_mode(name: str) -> None:
            center.dictation.toggle(name)
            switched.set()

        hotkeys = GlobalHotkeys(
            "",
            "",
            on_toggle=print,
            on_hold_press=print,
            on_hold_release=print,
            mode_shortcuts={"prose": "Ctrl+Alt+P"},
            on_mode=on_mode,
        )
        assert hotkeys.start() is None
        try:
            await asyncio.to_thread(subprocess.run, ["xdotool", "key", "ctrl+alt+p"], env=terminal.env, check=True)
            await asyncio.wait_for(switched.wait(), 10)
        finally:
            hotkeys.stop()
        terminal.focus()
        modes.append(await dictate(center, "Meet at three thirty pm."))
        await asyncio.to_thread(terminal.wait_for, "list the Kubernetes pods of graph fauna Meet at 3:30 PM. ")
        return modes

    try:
        assert asyncio.run(scenario()) == ["code", "message", "prose"]
        assert center.dictation.choice.label == "prose (hotkey)"
    finally:
        terminal.close()
        chat.close()


async def dictate(center: ActionCenter, text: str) -> str:
    """Dictate ``text`` as one final utterance; the mode it was written in."""
    record = await center.handle_utterance(text)
    assert record is not None and record.status is ActionStatus.DONE, record
    return str(record.slots["mode"])
