"""Rewriting the last dictated text by voice: replaced in place, undone to what it was, and left
alone when the LLM's answer is no rewrite. Against the fake server (tests/fake_llm.py); the real
text field on Xvfb is in test_edit_x11.py, real vLLM in test_llm_vllm.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.app.actions.fakes import (
    MemoryClipboard,
    RecordingKeyboard,
    RecordingLauncher,
    RecordingOpener,
    StaticProbe,
)
from tests.fake_llm import FakeLlm
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.focus import FocusedApp
from voxdesk.app.actions.services import Services
from voxdesk.app.settings import ActionSettings, WritingSettings


def desk(tmp_path: Path, url: str) -> tuple[ActionCenter, RecordingKeyboard]:
    keyboard = RecordingKeyboard()
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard, focus=StaticProbe(None)
    )
    settings = ActionSettings(mode="dictation", llm_url=url, llm_model="fake-model", llm_timeout_s=2)
    commands = CommandSource(user_path=tmp_path / "c.toml")
    return ActionCenter(settings, services, commands=commands, writing=WritingSettings(mode="plain")), keyboard


@pytest.mark.parametrize(
    ("said", "instruction"),
    [
        ("Make that shorter.", "Make it shorter"),
        ("Translate that to French.", "Translate it to french"),
        ("Rewrite that as a list.", "Rewrite it as a list"),
        ("Fix the grammar.", "Fix its grammar and spelling"),
    ],
)
def test_an_edit_replaces_the_last_text_in_place_and_undo_types_it_as_it_was(
    tmp_path: Path, fake_llm: FakeLlm, said: str, instruction: str
) -> None:
    center, keyboard = desk(tmp_path, fake_llm.url)
    fake_llm.content = json.dumps({"text": "Short."})

    async def scenario() -> None:
        await center.handle_utterance("First one.")
        await center.handle_utterance("The meeting that we had planned for today is moved to Friday.")
        edit = await center.handle_utterance(said)
        assert edit is not None and edit.status is ActionStatus.DONE, edit
        assert keyboard.text == "First one. Short. "
        (request,) = fake_llm.requests
        assert instruction.casefold() in request["messages"][0]["content"].casefold()
        assert request["messages"][1]["content"] == "The meeting that we had planned for today is moved to Friday."
        await center.undo(edit.id)
        assert keyboard.text == "First one. The meeting that we had planned for today is moved to Friday. "
        await center.handle_utterance("scratch that")
        assert keyboard.text == "First one. "

    asyncio.run(scenario())


def test_scratch_that_after_an_edit_removes_the_rewritten_text(tmp_path: Path, fake_llm: FakeLlm) -> None:
    center, keyboard = desk(tmp_path, fake_llm.url)
    fake_llm.content = json.dumps({"text": "Bonjour."})

    async def scenario() -> None:
        await center.handle_utterance("Hello there.")
        await center.handle_utterance("translate that to French")
        assert keyboard.text == "Bonjour. "
        await center.handle_utterance("scratch that")
        assert keyboard.text == ""
        edit = center.records[1]
        assert edit.command == "edit_translate" and edit.can_undo
        refused = await center.undo(edit.id)  # its text is gone: nothing is typed back
        assert refused.message == "could not undo: the rewritten text was removed or rewritten again since"
        assert keyboard.text == ""

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("Here you go: short.", "the LLM's answer is not JSON with a text"),
        (json.dumps({"text": ""}), "the LLM answered an empty text"),
        (json.dumps({"text": "x" * 500}), "the LLM wrote 500 characters for 12"),
    ],
)
def test_an_answer_that_is_no_rewrite_leaves_the_text_and_says_why(
    tmp_path: Path, fake_llm: FakeLlm, answer: str, why: str
) -> None:
    center, keyboard = desk(tmp_path, fake_llm.url)
    fake_llm.content = answer

    async def scenario() -> None:
        await center.handle_utterance("Hello there.")
        edit = await center.handle_utterance("make that shorter")
        assert edit is not None and edit.status is ActionStatus.FAILED and edit.message.startswith(why)
        assert keyboard.text == "Hello there. "

    asyncio.run(scenario())


def test_a_slow_llm_or_nothing_to_edit_fails_plainly(tmp_path: Path, fake_llm: FakeLlm) -> None:
    center, keyboard = desk(tmp_path, fake_llm.url)
    fake_llm.content, fake_llm.delay = json.dumps({"text": "late"}), 4.0

    async def scenario() -> None:
        nothing = await center.handle_utterance("make that shorter")
        assert nothing is not None and nothing.message == "there is no typed text to rewrite"
        await center.handle_utterance("Hello there.")
        slow = await center.handle_utterance("make that shorter")
        assert slow is not None and slow.status is ActionStatus.FAILED
        assert slow.message == f"the LLM at {fake_llm.url} did not answer within 2 s"
        assert keyboard.text == "Hello there. "

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("app", "copy_keys"),
    [
        (FocusedApp("gedit", "Gedit"), ["ctrl+c"]),
        (FocusedApp("gnome-terminal-server", "Gnome-terminal"), ["ctrl+shift+c"]),
        (FocusedApp("kitty", "kitty"), ["ctrl+shift+c"]),
        (FocusedApp("xterm", "XTerm"), []),  # no Copy key: Ctrl+C there would interrupt the program
    ],
)
def test_the_selection_is_copied_with_the_apps_own_key_and_never_with_an_interrupt_in_a_terminal(
    tmp_path: Path, fake_llm: FakeLlm, app: FocusedApp, copy_keys: list[str]
) -> None:
    """The FAKE keyboard copies nothing, so each edit goes on to the last dictated text."""
    center, keyboard = desk(tmp_path, fake_llm.url)
    clipboard = MemoryClipboard("what the user had copied")
    center.services.clipboard, center.services.focus = clipboard, StaticProbe(app)
    fake_llm.content = json.dumps({"text": "Friday."})

    async def scenario() -> None:
        nothing = await center.handle_utterance("make that shorter")
        assert nothing is not None and nothing.status is ActionStatus.FAILED
        assert nothing.message == "nothing selected could be copied and there is no typed text to rewrite"
        await center.handle_utterance("The meeting moves to Friday.")
        edit = await center.handle_utterance("make that shorter")
        assert edit is not None and edit.status is ActionStatus.DONE, edit
        assert keyboard.pressed == copy_keys * 2
        assert keyboard.text == "Friday. "
        assert clipboard.text() == "what the user had copied"

    asyncio.run(scenario())
