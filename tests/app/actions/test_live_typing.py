"""Live typing: the fewest keystrokes from what was typed to the newest target, targets merged
while keys are on their way, and dictation typing each utterance in its mode as it grows."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingKeyboard, RecordingLauncher, RecordingOpener, StaticProbe
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.dictation import Dictation, ModeChoice
from voxdesk.app.actions.focus import FocusedApp, NoFocusProbe
from voxdesk.app.actions.live_typing import LiveTyper, keystrokes
from voxdesk.app.actions.ports import ActionError
from voxdesk.app.actions.services import Services
from voxdesk.app.listening.transcript import Utterance
from voxdesk.app.settings import ActionSettings, WritingSettings


@pytest.mark.parametrize(
    ("typed", "target", "erase", "text"),
    [
        ("", "Hello", 0, "Hello"),
        ("Hello wor", "Hello world", 0, "ld"),  # a committed word grows: only the rest
        ("Hello world", "Hello, world", 6, ", world"),  # spoken punctuation changed an earlier word
        ("open the browser", "", 16, ""),  # a retraction, or a command after all
        ("same", "same", 0, ""),
        ("Grüße", "Grüß", 1, ""),
    ],
)
def test_keystrokes_keep_the_common_start_and_retype_only_the_rest(
    typed: str, target: str, erase: int, text: str
) -> None:
    assert keystrokes(typed, target) == (erase, text)


class GatedKeyboard(RecordingKeyboard):
    """FAKE keyboard (a field model, as RecordingKeyboard) whose keys wait for ``gate``: keys on their way."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.sending = asyncio.Event()
        self.calls: list[str] = []

    async def type_text(self, text: str) -> None:
        self.calls.append(text)
        self.sending.set()
        await self.gate.wait()
        await super().type_text(text)

    async def backspace(self, count: int) -> None:
        self.calls.append(f"<{count}")
        self.sending.set()
        await self.gate.wait()
        await super().backspace(count)


def test_targets_asked_for_while_keys_are_sent_are_merged_into_the_newest() -> None:
    times = iter([1.0, 1.5, 2.0, 4.0])  # asked, asked (while sending), first keys out, second keys out

    async def scenario() -> tuple[GatedKeyboard, LiveTyper]:
        keyboard = GatedKeyboard()
        typer = LiveTyper(keyboard, clock=lambda: next(times))
        typer.want("Hello")
        await keyboard.sending.wait()
        typer.want("Hello wo")  # not typed: a newer target comes before the keys are free
        typer.want("Hello, world")
        keyboard.gate.set()
        assert await typer.settle() == "Hello, world"
        return keyboard, typer

    keyboard, typer = asyncio.run(scenario())
    assert keyboard.calls == ["Hello", ", world"]
    assert keyboard.text == "Hello, world"
    assert typer.latencies == [1.0, 2.5]  # each from the first target its keys served


class FailingKeyboard(RecordingKeyboard):
    """FAKE keyboard whose typing fails after the first call, as a backend that went away."""

    async def type_text(self, text: str) -> None:
        if self.text:
            raise ActionError("xdotool stopped")
        await super().type_text(text)


def test_a_keyboard_failure_is_raised_once_and_typing_stops_where_the_keys_went() -> None:
    async def scenario() -> tuple[LiveTyper, str]:
        typer = LiveTyper(FailingKeyboard())
        typer.want("Hello")
        await typer.settle()
        typer.want("Hello world")
        with pytest.raises(ActionError, match="xdotool stopped"):
            await typer.settle()
        return typer, await typer.settle()  # said once

    typer, after = asyncio.run(scenario())
    assert typer.typed == after == "Hello"


def make_dictation(app: FocusedApp | None, mode: str = "prose") -> tuple[Dictation, RecordingKeyboard, StaticProbe]:
    keyboard, probe = RecordingKeyboard(), StaticProbe(app)
    return Dictation(WritingSettings(mode=mode), lambda: keyboard, lambda: probe), keyboard, probe


def test_an_utterance_is_typed_as_it_grows_and_its_final_corrects_what_the_mode_writes_otherwise() -> None:
    async def scenario() -> tuple[list[str], str, str]:
        dictation, keyboard, _ = make_dictation(None, mode="prose")
        seen = []
        for committed in ["Dear Sam", "Dear Sam comma", "Dear Sam comma see you"]:
            dictation.committed(1, committed)
            await dictation.caught_up(1)
            seen.append(keyboard.text)
        written = await dictation.finish(1, "Dear Sam comma see you at three thirty pm")
        return seen, keyboard.text, written.text

    seen, field, written = asyncio.run(scenario())
    assert seen == ["Dear Sam", "Dear Sam,", "Dear Sam, see you"]  # live, before the final
    assert written == "Dear Sam, see you at 3:30 PM"
    assert field == written + " "


def test_the_focused_apps_mode_writes_and_a_terminal_is_typed_only_at_the_end() -> None:
    async def scenario() -> tuple[str, str, list[ModeChoice]]:
        dictation, keyboard, probe = make_dictation(FocusedApp("xterm", "XTerm"))
        choices: list[ModeChoice] = []
        dictation.add_choice_listener(choices.append)
        dictation.committed(1, "List the files.")
        await dictation.caught_up(1)
        live = keyboard.text
        await dictation.finish(1, "List the files.")
        in_terminal = keyboard.text
        probe.app = FocusedApp("slack", "Slack")
        dictation.committed(2, "See you soon.")
        await dictation.finish(2, "See you soon.")
        return live, in_terminal + "|" + keyboard.text[len(in_terminal) :], choices

    live, typed, choices = asyncio.run(scenario())
    assert live == ""  # the code mode does not type live: keys have side effects in a terminal
    assert typed == "list the files |See you soon "  # code: no capital, no punctuation; message: no period
    assert [c.label for c in choices] == ["code (XTerm)", "message (Slack)"]


def test_a_mode_chosen_by_hotkey_wins_over_the_focused_app_until_it_is_cleared() -> None:
    async def scenario() -> list[str]:
        dictation, _, _ = make_dictation(FocusedApp("xterm", "XTerm"))
        dictation.choose("prose")
        written = [(await dictation.finish(1, "Meet at three thirty pm")).text]
        dictation.choose(None)
        written.append((await dictation.finish(2, "Meet at three thirty pm.")).text)
        return written

    assert asyncio.run(scenario()) == ["Meet at 3:30 PM", "meet at three thirty pm"]
    dictation, _, _ = make_dictation(None)
    with pytest.raises(ValueError, match="'poetry' is not a mode; the modes are plain, prose, clean, message, code"):
        dictation.choose("poetry")


def test_a_mode_shortcut_pressed_twice_gives_the_choice_back_to_the_focused_app() -> None:
    warnings: list[str] = []
    dictation = Dictation(WritingSettings(mode="plain"), RecordingKeyboard, lambda: StaticProbe(None), warnings.append)
    dictation.toggle("Code")
    assert (dictation.chosen, dictation.choice.label) == ("Code", "Code (hotkey)")
    dictation.toggle("code")
    assert (dictation.chosen, dictation.choice.label) == (None, "plain")
    dictation.toggle("prose")
    dictation.toggle("poetry")  # a shortcut for a mode that is gone: said, and the choice stays
    assert dictation.chosen == "prose"
    assert warnings == ["the mode shortcut: 'poetry' is not a mode; the modes are plain, prose, clean, message, code"]


def test_a_desktop_that_cannot_tell_the_focused_app_is_said_once_and_the_default_mode_writes() -> None:
    warnings: list[str] = []
    probe = NoFocusProbe("Wayland does not tell programs which window has the focus")
    dictation = Dictation(WritingSettings(mode="prose"), RecordingKeyboard, lambda: probe, warnings.append)

    async def scenario() -> list[str]:
        return [(await dictation.finish(n, "three thirty pm")).text for n in (1, 2)]

    assert asyncio.run(scenario()) == ["3:30 PM", "3:30 PM"]
    assert warnings == [
        "the mode is not picked by the focused application here: "
        "Wayland does not tell programs which window has the focus"
    ]


def center_with(keyboard: RecordingKeyboard, tmp_path: Path) -> ActionCenter:
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard, focus=StaticProbe(None)
    )
    center = ActionCenter(
        ActionSettings(), services, commands=CommandSource(user_path=tmp_path / "c.toml"), writing=WritingSettings()
    )
    center.set_mode("dictation")
    return center


def test_dictation_mode_types_committed_text_live_and_scratch_that_restores_the_field(tmp_path: Path) -> None:
    keyboard = RecordingKeyboard()
    keyboard.text = "Notes: "

    async def scenario() -> tuple[list[str], str, str]:
        center = center_with(keyboard, tmp_path)
        live = []
        for committed in ["Open", "Open the door", ""]:  # "" : a failover retracted it
            center.transcript_changed(Utterance(4, committed=committed, provisional="and"))
            await center.dictation.caught_up(4)
            live.append(keyboard.text)
        center.transcript_changed(Utterance(4, committed="Open the door, please"))
        record = await center.handle_utterance("Open the door, please.", utterance_id=4)
        assert record is not None and record.status is ActionStatus.DONE, record
        assert record.slots == {"text": "Open the door, please. ", "mode": "plain"}
        final = keyboard.text
        await center.handle_utterance("scratch that", utterance_id=5)
        return live, final, keyboard.text

    live, final, restored = asyncio.run(scenario())
    assert live == ["Notes: Open", "Notes: Open the door", "Notes: "]
    assert final == "Notes: Open the door, please. "
    assert restored == "Notes: "


def test_a_spoken_control_command_takes_back_what_it_typed_live(tmp_path: Path) -> None:
    keyboard = RecordingKeyboard()

    async def scenario() -> str:
        center = center_with(keyboard, tmp_path)
        center.transcript_changed(Utterance(1, committed="Hello there."))
        await center.handle_utterance("Hello there.", utterance_id=1)
        center.transcript_changed(Utterance(2, committed="Scratch that"))
        await center.dictation.caught_up(2)
        assert keyboard.text == "Hello there. Scratch that"
        await center.handle_utterance("Scratch that.", utterance_id=2)
        return keyboard.text

    assert asyncio.run(scenario()) == ""


def test_the_next_utterance_waits_to_type_until_the_one_before_is_written(tmp_path: Path) -> None:
    keyboard = RecordingKeyboard()

    async def scenario() -> list[str]:
        center = center_with(keyboard, tmp_path)
        center.transcript_changed(Utterance(1, committed="Dear Sam"))
        await center.dictation.caught_up(1)
        seen = [keyboard.text]
        center.transcript_changed(Utterance(2, committed="See you"))  # spoken before 1's final is handled
        assert await center.dictation.caught_up(2) == ""  # its mode is picked, and it waits
        seen.append(keyboard.text)
        await center.handle_utterance("Dear Sam, hello.", utterance_id=1)
        await center.dictation.caught_up(2)
        seen.append(keyboard.text)
        await center.handle_utterance("See you soon.", utterance_id=2)
        seen.append(keyboard.text)
        return seen

    assert asyncio.run(scenario()) == [
        "Dear Sam",
        "Dear Sam",
        "Dear Sam, hello. See you",
        "Dear Sam, hello. See you soon. ",
    ]


def test_an_utterance_that_ends_with_no_text_takes_back_what_it_typed_and_lets_the_next_type(
    tmp_path: Path,
) -> None:
    keyboard = RecordingKeyboard()

    async def scenario() -> str:
        center = center_with(keyboard, tmp_path)
        center.transcript_changed(Utterance(1, committed="Um"))
        await center.dictation.caught_up(1)
        assert keyboard.text == "Um"
        center.transcript_changed(Utterance(2, committed="Hello"))
        assert await center.handle_utterance("", utterance_id=1) is None  # its final came out empty
        await center.dictation.caught_up(2)
        return keyboard.text

    assert asyncio.run(scenario()) == "Hello"


class GatedProbe:
    """FAKE focus probe that answers (no application) only once the test opens its gate."""

    unsupported: str | None = None

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def focused_app(self) -> FocusedApp | None:
        await self.gate.wait()
        return None


def test_an_utterance_whose_mode_is_still_being_picked_when_the_one_before_is_written_types_once_picked(
    tmp_path: Path,
) -> None:
    keyboard = RecordingKeyboard()

    async def scenario() -> str:
        center = center_with(keyboard, tmp_path)
        center.transcript_changed(Utterance(1, committed="Dear Sam"))
        await center.dictation.caught_up(1)
        probe = GatedProbe()
        center.services.focus = probe  # the next utterance's pick waits on the focus probe
        center.transcript_changed(Utterance(2, committed="See you"))
        record = await center.handle_utterance("Dear Sam.", utterance_id=1)
        assert record is not None and record.status is ActionStatus.DONE, record
        probe.gate.set()
        await center.dictation.caught_up(2)
        return keyboard.text

    assert asyncio.run(scenario()) == "Dear Sam. See you"
