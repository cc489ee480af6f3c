"""Real typing under Xvfb (the ``x_display`` rig): xdotool keystrokes arrive in a Qt text field in another process."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingLauncher, RecordingOpener
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.keyboard import XdotoolKeyboard, choose_keyboard
from voxdesk.app.actions.services import Services
from voxdesk.app.settings import ActionSettings

pytestmark = pytest.mark.skipif(shutil.which("xdotool") is None, reason="xdotool is not installed")


class TextField:
    """The text field process and what it currently holds."""

    def __init__(self, display: str, out: Path) -> None:
        self.out = out
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        script = Path(__file__).with_name("x11_text_field.py")
        self.process = subprocess.Popen(
            [sys.executable, str(script), str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == b"READY"
        # No window manager runs under Xvfb: give the field the input focus explicitly.
        subprocess.run(
            ["xdotool", "search", "--sync", "--name", "voxdesk-test-field", "windowfocus", "--sync"],
            env=env,
            check=True,
            timeout=10,
        )

    def text(self) -> str:
        return self.out.read_text(encoding="utf-8") if self.out.exists() else ""

    def wait_for(self, expected: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self.text() != expected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.text() == expected

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def field(x_display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TextField]:
    monkeypatch.setenv("DISPLAY", x_display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    opened = TextField(x_display, tmp_path / "field.txt")
    yield opened
    opened.close()


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


def test_no_typing_backend_says_what_to_install() -> None:
    from voxdesk.app.actions.ports import ActionError

    with pytest.raises(ActionError, match=r"typing needs xdotool on X11; install it with: sudo apt install xdotool"):
        choose_keyboard({"DISPLAY": ":9"}, "linux", lambda name: None)
