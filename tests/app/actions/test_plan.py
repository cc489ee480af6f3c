"""Requests of several steps: found by phrase or by the LLM, shown as a plan that waits for
confirmation, run in order with a wait for the started app's window, stopped at the first
failure, undone together. With recording fakes; the real X11 run is in test_typing_x11.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingKeyboard, RecordingLauncher, RecordingOpener, StaticProbe
from tests.fake_llm import FakeLlm
from voxdesk.app.actions import plan
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.ports import ActionError
from voxdesk.app.actions.services import Services
from voxdesk.app.settings import ActionSettings


class WindowLauncher(RecordingLauncher):
    """A FAKE launcher whose app's window takes the recording keyboard's focus (or never does)."""

    def __init__(self, keyboard: RecordingKeyboard, takes_focus: bool = True, fails: str = "") -> None:
        super().__init__()
        self.keyboard, self.takes_focus, self.fails = keyboard, takes_focus, fails

    async def launch(self, app: str) -> str:
        if self.fails:
            raise ActionError(self.fails)
        started = await super().launch(app)
        if self.takes_focus:
            self.keyboard.window = f"{app} window"
        return started


def desk(
    tmp_path: Path, launcher_kwargs: dict[str, object] | None = None, settings: ActionSettings | None = None
) -> tuple[ActionCenter, RecordingKeyboard, WindowLauncher]:
    keyboard = RecordingKeyboard()
    keyboard.window = "Text Editor"
    launcher = WindowLauncher(keyboard, **(launcher_kwargs or {}))  # type: ignore[arg-type]
    services = Services(open_url=RecordingOpener(), launcher=launcher, keyboard=keyboard, focus=StaticProbe(None))
    center = ActionCenter(settings or ActionSettings(), services, commands=CommandSource(user_path=tmp_path / "c.toml"))
    return center, keyboard, launcher


@pytest.mark.parametrize(
    ("said", "parts"),
    [
        ("open the terminal and type ls", ["open the terminal", "type ls"]),
        ("Open the terminal, then type ls.", ["Open the terminal", "type ls"]),
        ("open the browser and then search for weather", ["open the browser", "search for weather"]),
        ("type hello", ["type hello"]),
        ("brand new", ["brand new"]),  # "and" inside a word joins nothing
    ],
)
def test_a_request_splits_at_and_and_then(said: str, parts: list[str]) -> None:
    assert plan.split_steps(said) == parts


def test_two_commands_said_as_one_are_a_plan_shown_before_it_runs_and_typed_into_the_started_app(
    tmp_path: Path,
) -> None:
    center, keyboard, launcher = desk(tmp_path)

    async def scenario() -> None:
        record = await center.handle_utterance("open the terminal and type ls")
        assert record is not None and (record.command, record.status) == ("plan", ActionStatus.WAITING)
        assert record.preview == "1. Open the application “the terminal”; 2. Type “ls”", record.preview
        assert launcher.apps == [] and keyboard.text == ""  # shown, not run
        done = await center.confirm(record.id)
        assert done.status is ActionStatus.DONE, done
        assert launcher.apps == ["the terminal"] and keyboard.text == "ls"
        started = "1. started recorded the terminal (“the terminal window” has the focus)"
        assert done.message.startswith(f"{started}; 2. typed 2 characters into “the terminal window”"), done.message

    asyncio.run(scenario())


def test_words_that_only_look_like_steps_stay_one_command(tmp_path: Path) -> None:
    center, keyboard, _ = desk(tmp_path)
    record = asyncio.run(center.handle_utterance("type salt and pepper"))
    assert record is not None and record.command == "type_text" and keyboard.text == "salt and pepper"


def test_a_step_that_fails_stops_the_rest_and_says_which(tmp_path: Path) -> None:
    center, keyboard, _ = desk(tmp_path, {"fails": "no terminal application is installed"})

    async def scenario() -> None:
        record = await center.handle_utterance("open the terminal and type ls")
        assert record is not None
        done = await center.confirm(record.id)
        assert done.status is ActionStatus.FAILED
        assert done.message == "step 1, Open the application “the terminal”: no terminal application is installed"
        assert keyboard.text == ""

    asyncio.run(scenario())


def test_nothing_is_typed_when_the_started_app_never_takes_the_focus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plan, "FOCUS_WAIT_S", 0.3)
    center, keyboard, _ = desk(tmp_path, {"takes_focus": False})

    async def scenario() -> None:
        record = await center.handle_utterance("open the terminal and type ls")
        assert record is not None
        done = await center.confirm(record.id)
        assert done.status is ActionStatus.FAILED
        assert "no new window took the focus within 0.3 s, so nothing was typed" in done.message
        assert "(done: 1. started recorded the terminal)" in done.message
        assert keyboard.text == ""

    asyncio.run(scenario())


def test_undo_takes_back_every_step_that_can_be_undone(tmp_path: Path) -> None:
    center, keyboard, _ = desk(tmp_path)

    async def scenario() -> None:
        record = await center.handle_utterance("type hello and then type world")
        assert record is not None
        done = await center.confirm(record.id)
        assert keyboard.text == "helloworld" and done.can_undo
        undone = await center.undo(done.id)
        assert undone.status is ActionStatus.UNDONE and keyboard.text == ""
        assert undone.message == "took back Type “hello”; Type “world”"

    asyncio.run(scenario())


def test_a_cancelled_plan_never_runs(tmp_path: Path) -> None:
    center, keyboard, launcher = desk(tmp_path)
    record = asyncio.run(center.handle_utterance("open the terminal and type ls"))
    assert record is not None
    assert center.cancel(record.id).status is ActionStatus.CANCELLED
    assert launcher.apps == [] and keyboard.text == ""


def test_the_llms_several_tool_calls_are_one_plan(tmp_path: Path, fake_llm: FakeLlm) -> None:
    fake_llm.tool_calls = [
        {"name": "open_app", "arguments": json.dumps({"app": "terminal"})},
        {"name": "type_text", "arguments": json.dumps({"text": "ls"})},
    ]
    settings = ActionSettings(llm_fallback=True, llm_url=fake_llm.url, llm_model="fake-model")
    center, keyboard, launcher = desk(tmp_path, settings=settings)

    async def scenario() -> None:
        record = await center.handle_utterance("get me a shell and list the files")
        assert record is not None and (record.command, record.source) == ("plan", "llm")
        assert record.preview == "1. Open the application “terminal”; 2. Type “ls”"
        await center.confirm(record.id)
        assert launcher.apps == ["terminal"] and keyboard.text == "ls"

    asyncio.run(scenario())


def test_a_plan_with_one_call_the_commands_do_not_have_is_no_plan(tmp_path: Path, fake_llm: FakeLlm) -> None:
    fake_llm.tool_calls = [
        {"name": "open_app", "arguments": json.dumps({"app": "terminal"})},
        {"name": "format_disk", "arguments": "{}"},
    ]
    settings = ActionSettings(llm_fallback=True, llm_url=fake_llm.url, llm_model="fake-model")
    center, _, launcher = desk(tmp_path, settings=settings)
    record = asyncio.run(center.handle_utterance("get me a shell and wipe the disk"))
    assert record is not None and record.status is ActionStatus.NOT_UNDERSTOOD
    assert launcher.apps == []
