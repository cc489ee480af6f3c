"""An utterance's language: kept by the live transcript and written to history as it is final."""

from __future__ import annotations

from pathlib import Path

from voxdesk.app.history.live import LiveHistory
from voxdesk.app.history.store import HistoryStore
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import ListeningChanged, UtteranceFinal
from voxdesk.app.listening.transcript import Transcript
from voxdesk.app.settings import Settings


def test_a_final_utterance_keeps_the_language_it_was_decoded_in() -> None:
    transcript = Transcript()
    german, unknown = transcript.open(), transcript.open()
    transcript.finish(german.id, "guten Tag", 0.0, 1.0, "de")
    transcript.finish(unknown.id, "hello", 1.0, 2.0)
    assert [u.language for u in transcript.utterances()] == ["de", None]


def test_live_history_records_the_language_of_each_final(tmp_path: Path) -> None:
    controller = Controller(Settings())
    transcript = Transcript()
    utterance = transcript.open()
    final = transcript.finish(utterance.id, "guten Tag", 0.0, 1.0, "de")
    assert final is not None
    with HistoryStore.open(tmp_path / "history.sqlite3") as store:
        LiveHistory(controller, store)
        controller.report(ListeningChanged(True))
        controller.report(UtteranceFinal(final))
        controller.report(ListeningChanged(False))
        (session,) = store.sessions()
        assert [u.language for u in store.utterances(session.id)] == ["de"]
