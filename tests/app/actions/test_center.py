"""The action center with recording services: matching to records, confirmation, undo, modes."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.app.actions.fakes import (
    MemoryClipboard,
    RecordingKeyboard,
    RecordingLauncher,
    RecordingNotifier,
    RecordingOpener,
)
from voxdesk.app.actions.center import ActionCenter, ActionRecord, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.ports import ActionError
from voxdesk.app.actions.services import Services
from voxdesk.app.actions.summary import action_line
from voxdesk.app.settings import ActionSettings


class Desk:
    """A center wired to recording services, with every record change collected."""

    def __init__(self, tmp_path: Path, clock: Callable[[], float] = time.time, **settings: object) -> None:
        self.opener = RecordingOpener()
        self.launcher = RecordingLauncher()
        self.notifier = RecordingNotifier()
        self.clipboard = MemoryClipboard("before")
        self.keyboard = RecordingKeyboard()
        self.stopped = 0
        services = Services(
            clipboard=self.clipboard,
            notifier=self.notifier,
            stop_listening=self.stop,
            open_url=self.opener,
            launcher=self.launcher,
            keyboard=self.keyboard,
        )
        self.center = ActionCenter(
            ActionSettings(**settings),  # type: ignore[arg-type]
            services,
            commands=CommandSource(user_path=tmp_path / "commands.toml"),
            clock=clock,
        )
        self.changes: list[ActionRecord] = []
        self.modes: list[str] = []
        self.center.add_record_listener(self.changes.append)
        self.center.add_mode_listener(self.modes.append)

    def stop(self) -> None:
        self.stopped += 1

    def say(self, text: str) -> ActionRecord | None:
        return asyncio.run(self.center.handle_utterance(text, utterance_id=7))


@pytest.fixture
def desk(tmp_path: Path) -> Desk:
    return Desk(tmp_path)


def test_open_the_browser_uses_the_injected_launcher(desk: Desk) -> None:
    record = desk.say("Open the browser.")
    assert record is not None
    assert (record.command, record.status, record.utterance_id) == ("open_browser", ActionStatus.DONE, 7)
    assert desk.launcher.apps == ["browser"]
    assert [c.status for c in desk.changes] == [ActionStatus.RUNNING, ActionStatus.DONE]
    assert record.preview == "Open the application “browser”"


def test_search_url_encodes_the_query(desk: Desk) -> None:
    record = desk.say("search for cats & dogs?")
    assert record is not None and record.status is ActionStatus.DONE
    (url,) = desk.opener.urls
    assert url.startswith("https://duckduckgo.com/?q=")
    assert parse_qs(urlsplit(url).query)["q"] == ["cats & dogs"]


def test_open_website_reaches_the_opener_as_https(desk: Desk) -> None:
    desk.say("open website python dot org")
    assert desk.opener.urls == ["https://python.org"]


def test_a_non_web_address_fails_in_plain_words(desk: Desk) -> None:
    record = desk.say("open website file:///etc/passwd")
    assert record is not None and record.status is ActionStatus.FAILED
    assert "only web addresses" in record.message
    assert desk.opener.urls == []


def test_typing_then_scratch_that(desk: Desk) -> None:
    typed = desk.say("type Hello, world")
    assert typed is not None and typed.can_undo
    assert desk.keyboard.text == "Hello, world"
    scratch = desk.say("scratch that")
    assert scratch is not None and scratch.status is ActionStatus.DONE
    assert desk.keyboard.text == ""
    assert desk.center.record(typed.id).status is ActionStatus.UNDONE
    again = desk.say("scratch that")
    assert again is not None and again.status is ActionStatus.FAILED
    assert again.message == "there is no typed text to scratch"


def test_key_combination(desk: Desk) -> None:
    desk.say("press control shift t")
    assert desk.keyboard.pressed == ["ctrl+shift+t"]


def test_copy_that_copies_the_last_typed_text_and_undo_restores(desk: Desk) -> None:
    desk.say("type meeting at noon")
    record = desk.say("copy that")
    assert record is not None and record.status is ActionStatus.DONE
    assert desk.clipboard.content == "meeting at noon"
    undone = asyncio.run(desk.center.undo(record.id))
    assert undone.status is ActionStatus.UNDONE and desk.clipboard.content == "before"


def test_copy_that_copies_the_last_utterance_that_was_no_command(desk: Desk) -> None:
    said = desk.say("buy milk and eggs")
    assert said is not None and said.status is ActionStatus.NOT_UNDERSTOOD
    desk.say("copy that")
    assert desk.clipboard.content == "buy milk and eggs"


def test_copy_that_with_nothing_said_before_fails_plainly(desk: Desk) -> None:
    record = desk.say("copy that")
    assert record is not None and record.status is ActionStatus.FAILED
    assert record.message == "there is nothing to copy yet"


def test_copy_text(desk: Desk) -> None:
    desk.say("copy my phone number")
    assert desk.clipboard.content == "my phone number"


def test_timer_fires_a_notification_and_undo_cancels_another(desk: Desk) -> None:
    async def scenario() -> None:
        first = await desk.center.handle_utterance("set a timer for 1 second")
        second = await desk.center.handle_utterance("set a timer for two seconds")
        assert first is not None and second is not None
        assert first.message == "timer set for 1 second"
        await desk.center.undo(second.id)
        await asyncio.sleep(1.3)
        assert desk.notifier.notifications == [("Timer", "Your 1 second timer is up")]
        await asyncio.sleep(1.0)
        assert len(desk.notifier.notifications) == 1
        assert not desk.center.record(first.id).can_undo  # gone off: nothing left to undo
        assert [change.can_undo for change in desk.changes if change.id == first.id][-2:] == [True, False]
        late = await desk.center.undo(first.id)
        assert late.status is ActionStatus.DONE and late.message == "timer set for 1 second"

    asyncio.run(scenario())


def test_a_failing_notifier_does_not_break_the_timer(desk: Desk, caplog: pytest.LogCaptureFixture) -> None:
    class BrokenNotifier:
        def notify(self, title: str, message: str) -> None:
            raise RuntimeError("no notification daemon")

    desk.center.services.notifier = BrokenNotifier()

    async def scenario() -> None:
        await desk.center.handle_utterance("set a timer for one second")
        await asyncio.sleep(1.2)

    with caplog.at_level(logging.ERROR, logger="voxdesk.actions"):
        asyncio.run(scenario())
    assert "notification failed" in caplog.text


def test_stop_listening_calls_back(desk: Desk) -> None:
    desk.say("stop listening")
    assert desk.stopped == 1


def test_dictation_mode_types_everything_but_control_commands(desk: Desk) -> None:
    desk.say("switch to dictation mode")
    assert desk.center.mode == "dictation" and desk.modes == ["dictation"]
    desk.say("Open the browser.")
    desk.say("Then search for cats.")
    assert desk.launcher.apps == [] and desk.opener.urls == []
    assert desk.keyboard.text == "Open the browser. Then search for cats. "
    desk.say("scratch that")
    assert desk.keyboard.text == "Open the browser. "
    desk.say("switch to command mode")
    assert desk.center.mode == "command"
    desk.say("open the browser")
    assert desk.launcher.apps == ["browser"]


def test_mode_switch_can_be_undone(desk: Desk) -> None:
    record = desk.say("dictation mode")
    assert record is not None
    asyncio.run(desk.center.undo(record.id))
    assert desk.center.mode == "command" and desk.modes == ["dictation", "command"]


def test_wake_phrase(tmp_path: Path) -> None:
    desk = Desk(tmp_path, wake_phrase="computer")
    assert desk.say("open the browser") is None
    record = desk.say("Computer, open the browser.")
    assert record is not None and desk.launcher.apps == ["browser"]
    desk.center.set_mode("dictation")
    desk.say("scratch that")  # dictation: no wake phrase, so it is text
    assert desk.keyboard.text == "scratch that "
    desk.say("computer scratch that")
    assert desk.keyboard.text == ""


def test_no_match_says_it_was_not_understood(desk: Desk) -> None:
    record = desk.say("What's the weather in Lisbon?")
    assert record is not None and record.status is ActionStatus.NOT_UNDERSTOOD
    assert record.message == (
        "no command matches it (an LLM can be asked: [actions] llm_fallback); perhaps: “what's the time” (say "
        "what time it is), “what's the date” (say today's date)"
    )
    assert action_line(record) == f"not understood — {record.message}"
    nothing_like = desk.say("Xyzzy plugh.")
    assert nothing_like is not None and nothing_like.message.endswith("llm_fallback)")  # no command offered
    assert desk.center.records[0] == record and not record.can_undo and not record.can_confirm
    assert desk.center.log[-2].endswith(": not understood: " + record.message)


def test_what_time_and_date_are_answered_from_the_clock(tmp_path: Path) -> None:
    clock = [time.mktime((2026, 12, 7, 9, 5, 0, 0, 0, -1))]  # local time
    desk = Desk(tmp_path, clock=lambda: clock[0])
    record = desk.say("What time is it?")
    assert record is not None and (record.command, record.status) == ("what_time", ActionStatus.DONE)
    assert record.message == "It is 9:05 AM."
    assert action_line(record) == "what_time (question: time) — done: It is 9:05 AM."
    for hour, said in [(0, "12:05 AM"), (12, "12:05 PM"), (21, "9:05 PM")]:
        clock[0] = time.mktime((2026, 12, 7, hour, 5, 0, 0, 0, -1))
        later = desk.say("What time is it?")
        assert later is not None and later.message == f"It is {said}."
    date = desk.say("What's the date today?")
    assert date is not None and date.message == "It is Monday, 7 December 2026."


def test_how_long_is_left_on_the_timers(tmp_path: Path) -> None:
    clock = [1_000_000.0]
    desk = Desk(tmp_path, clock=lambda: clock[0])
    none = desk.say("how long is left on my timer")
    assert none is not None and none.message == "No timer is running."

    async def scenario() -> list[str]:
        await desk.center.handle_utterance("set a timer for 5 minutes")
        await desk.center.handle_utterance("set a timer for 2 hours")
        clock[0] += 48
        answered = [await desk.center.handle_utterance("how much time is left on my timer")]
        desk.center.close()  # cancels the timers
        answered.append(await desk.center.handle_utterance("how long is left on my timer"))
        return [record.message for record in answered if record is not None]

    assert asyncio.run(scenario()) == [
        "4 min 12 s left of the timer for 5 minutes. 1 h 59 min left of the timer for 2 hours.",
        "No timer is running.",
    ]


def test_failures_never_escape(tmp_path: Path) -> None:
    class BrokenLauncher:
        async def launch(self, app: str) -> str:
            raise RuntimeError("boom")

    class RefusingLauncher:
        async def launch(self, app: str) -> str:
            raise ActionError("no terminal application is installed")

    desk = Desk(tmp_path)
    desk.center.services.launcher = BrokenLauncher()
    record = desk.say("open the terminal")
    assert record is not None and record.status is ActionStatus.FAILED and "boom" in record.message
    desk.center.services.launcher = RefusingLauncher()
    record = desk.say("open the terminal")
    assert record is not None and record.message == "no terminal application is installed"
    desk.center.services.clipboard = None
    record = desk.say("copy this text")
    assert record is not None and record.status is ActionStatus.FAILED
    assert record.message == "the clipboard is not available"


def test_log_lines_and_logger(desk: Desk, caplog: pytest.LogCaptureFixture) -> None:
    lines: list[str] = []
    desk.center.add_log_listener(lines.append)
    with caplog.at_level(logging.INFO, logger="voxdesk.actions"):
        desk.say("open the browser")
        desk.say("open website nonsense")
    assert len(desk.center.log) == 2 == len(lines)
    assert "open_browser(app='browser'): done" in lines[0]
    messages = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "voxdesk.actions"]
    assert messages[0][0] == "INFO" and messages[1][0] == "WARNING" and "failed" in messages[1][1]


def test_a_failing_listener_does_not_break_the_flow(desk: Desk) -> None:
    def broken(record: ActionRecord) -> None:
        raise ValueError("listener bug")

    desk.center.add_record_listener(broken)
    record = desk.say("open the browser")
    assert record is not None and record.status is ActionStatus.DONE


def test_listener_can_be_removed(desk: Desk) -> None:
    seen: list[ActionRecord] = []
    remove = desk.center.add_record_listener(seen.append)
    remove()
    desk.say("open the browser")
    assert seen == []


def test_broken_user_file_warning_reaches_the_log(tmp_path: Path) -> None:
    user = tmp_path / "commands.toml"
    user.write_text("[[[")
    center = ActionCenter(ActionSettings(), Services(), commands=CommandSource(user_path=user))
    assert any("could not read" in line for line in center.log)


def test_two_quick_undos_undo_once(desk: Desk) -> None:
    desk.say("type abc")
    desk.say("type def")
    record = desk.center.records[-1]

    async def scenario() -> None:
        await asyncio.gather(desk.center.undo(record.id), desk.center.undo(record.id))

    asyncio.run(scenario())
    assert desk.keyboard.text == "abc"


def test_a_failed_undo_can_be_retried(desk: Desk) -> None:
    class FlakyKeyboard(RecordingKeyboard):
        fail = True

        async def backspace(self, count: int) -> None:
            if self.fail:
                self.fail = False
                raise ActionError("xdotool failed (exit status 1)")
            await super().backspace(count)

    desk.center.services.keyboard = desk.keyboard = FlakyKeyboard()
    record = desk.say("type hello")
    assert record is not None
    first = asyncio.run(desk.center.undo(record.id))
    assert first.status is ActionStatus.DONE and first.can_undo and first.message.startswith("could not undo")
    second = asyncio.run(desk.center.undo(record.id))
    assert second.status is ActionStatus.UNDONE and desk.keyboard.text == ""
