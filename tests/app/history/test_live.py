"""A live session in the history names the model the chosen engine runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxdesk.app.history.live import LiveHistory
from voxdesk.app.history.store import HistoryStore
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import ListeningChanged
from voxdesk.app.settings import EngineSettings, Settings
from voxdesk.engine.kinds import EngineKind


@pytest.mark.parametrize(
    ("choice", "model"),
    [
        (EngineSettings(whisper_model="base.en"), "whisper-base.en"),
        (EngineSettings(whisper_model="/models/faster-whisper-small"), "whisper-/models/faster-whisper-small"),
        (EngineSettings(whisper_model=""), "whisper-tiny.en"),
        (EngineSettings(EngineKind.VLLM, vllm_model="org/voxtral"), "org/voxtral"),
        (EngineSettings(EngineKind.REMOTE, server_model="gpt-4o-transcribe"), "gpt-4o-transcribe"),
    ],
)
def test_a_live_session_records_the_model_of_the_chosen_engine(
    tmp_path: Path, choice: EngineSettings, model: str
) -> None:
    controller = Controller(Settings(engine=choice))
    with HistoryStore.open(tmp_path / "history.sqlite3") as store:
        LiveHistory(controller, store)
        controller.report(ListeningChanged(True))
        controller.report(ListeningChanged(False))
        (session,) = store.sessions()
        assert (session.kind, session.model) == ("live", model)
