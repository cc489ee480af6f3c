"""Languages and partial files in the window: the utterance list's Language column, the History tab's mark."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from voxdesk.app.history.store import HistoryStore
from voxdesk.app.listening.transcript import Utterance
from voxdesk.ui.history_panel import HistoryPanel
from voxdesk.ui.utterance_list import LANGUAGE_COLUMN, UtteranceList


def test_the_language_column_shows_only_once_an_utterance_has_a_language(qtbot: QtBot) -> None:
    view = UtteranceList()
    qtbot.addWidget(view)
    view.show_utterance(Utterance(1, committed="hello", final=True, start=0.0, end=1.0))
    assert view.isColumnHidden(LANGUAGE_COLUMN)
    view.show_utterance(Utterance(2, committed="guten Tag", final=True, start=1.0, end=2.0, language="de"))
    assert not view.isColumnHidden(LANGUAGE_COLUMN)
    rows = [view.topLevelItem(row) for row in range(2)]
    assert [row.text(LANGUAGE_COLUMN) for row in rows if row is not None] == ["", "de"]
    view.clear_utterances()
    assert view.isColumnHidden(LANGUAGE_COLUMN)


def test_a_partial_file_session_is_marked_in_the_session_list(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore.open(path) as store:
        stopped = store.start_session("file", "builtin", "m", "/recordings/long.wav")
        store.add_utterance(stopped, "stopped halfway", 0.0, 1.0)
        finished = store.start_session("file", "builtin", "m", "/recordings/short.wav")
        store.add_utterance(finished, "all of it", 0.0, 1.0)
        store.end_session(finished)
        live = store.start_session("live", "builtin", "m", "mic")
        store.add_utterance(live, "still listening", 0.0, 1.0)
    panel = HistoryPanel(path, poll_ms=0)
    qtbot.addWidget(panel)
    labels = [panel.session_list.item(row).text() for row in range(panel.session_list.count())]
    panel.close_store()
    assert [label.endswith("(partial) stopped halfway") for label in labels] == [False, False, True]
    assert labels[0].endswith("\nstill listening") and labels[1].endswith("\nall of it")
