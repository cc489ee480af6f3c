"""The assistant without a window: a final utterance reaches the action center and the history."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tests.app.actions.fakes import RecordingKeyboard, RecordingLauncher, recording_services
from voxdesk.app.actions import ActionStatus
from voxdesk.app.actions.commands import user_commands_path
from voxdesk.app.assistant import Assistant
from voxdesk.app.history.store import HistoryStore
from voxdesk.app.listening.events import ListeningChanged, Problem, UtteranceFinal
from voxdesk.app.listening.transcript import Utterance
from voxdesk.app.settings import Settings


def test_a_spoken_command_runs_and_is_noted_on_its_history_row(tmp_path: Path) -> None:
    async def scenario() -> None:
        services = recording_services()
        assistant = Assistant(Settings(), services, HistoryStore.open(tmp_path / "history.db"))
        # What the controller reports while listening, without an engine or a microphone.
        assistant.controller.report(ListeningChanged(True))
        utterance = Utterance(id=1, committed="Open the browser.", start=0.0, end=1.0, final=True)
        assistant.controller.report(UtteranceFinal(utterance))
        assistant.controller.report(ListeningChanged(False))
        for _ in range(100):
            if assistant.center.records and assistant.center.records[0].status is ActionStatus.DONE:
                break
            await asyncio.sleep(0.01)

        assert isinstance(services.launcher, RecordingLauncher) and services.launcher.apps == ["browser"]
        (record,) = assistant.center.records
        assert (record.command, record.status, record.utterance_id) == ("open_browser", ActionStatus.DONE, 1)
        history = assistant.history
        assert history is not None
        (row,) = history.store.utterances(history.store.sessions()[0].id)
        assert row.text == "Open the browser."
        assert row.action == f"{record.preview} ({ActionStatus.DONE})"
        assert services.stop_listening == assistant.controller.request_stop
        await assistant.aclose()

    asyncio.run(scenario())


def test_without_a_history_store_actions_still_run(tmp_path: Path) -> None:
    async def scenario() -> None:
        services = recording_services()
        assistant = Assistant(Settings(), services)
        assistant.controller.report(UtteranceFinal(Utterance(id=1, committed="Open the browser.", final=True)))
        await assistant.aclose()  # lets the action in progress finish

        assert assistant.history is None
        assert isinstance(services.launcher, RecordingLauncher) and services.launcher.apps == ["browser"]

    asyncio.run(scenario())


def test_mistakes_in_the_users_commands_reach_the_window_as_problems() -> None:
    user = user_commands_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[commands.boom]\nphrases = ["boom"]\naction = "explode"\n')

    async def scenario() -> list[str]:
        assistant = Assistant(Settings(), recording_services())
        problems: list[str] = []
        assistant.controller.subscribe(
            lambda event: problems.append(event.message) if isinstance(event, Problem) else None
        )
        await assistant.start()  # what the window does once it listens
        user.write_text('[commands.boom]\nphrases = ["boom"\n')
        stamp = user.stat().st_mtime_ns + 1_000_000_000
        os.utime(user, ns=(stamp, stamp))
        assert "boom" not in {c.name for c in assistant.center.commands}  # as the next utterance would
        await assistant.aclose()
        return problems

    first, second = [problem for problem in asyncio.run(scenario()) if problem.startswith("voice commands: ")]
    assert first.startswith(f"voice commands: {user}:1: ignored command 'boom': action must be one of")
    assert second.startswith(f"voice commands: could not read {user}:2: not valid TOML")


def test_a_dictated_utterance_keeps_its_raw_text_and_notes_what_its_mode_wrote(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = Settings()
        settings.actions.mode, settings.writing.mode = "dictation", "prose"
        services = recording_services()
        assistant = Assistant(settings, services, HistoryStore.open(tmp_path / "history.db"))
        assistant.controller.report(ListeningChanged(True))
        said = "Meet at three thirty pm comma Siobhan."
        assistant.controller.report(UtteranceFinal(Utterance(id=1, committed=said, start=0.0, end=2.0, final=True)))
        assistant.controller.report(ListeningChanged(False))
        await assistant.aclose()  # lets the utterance in progress be typed and noted, and closes the history

        assert (
            isinstance(services.keyboard, RecordingKeyboard) and services.keyboard.text == "Meet at 3:30 PM, Siobhan. "
        )
        store = HistoryStore.open(tmp_path / "history.db")
        (row,) = store.utterances(store.sessions()[0].id)
        store.close()
        assert row.text == said
        assert row.action == "Type “Meet at 3:30 PM, Siobhan.” (prose mode) (done)"

    asyncio.run(scenario())
