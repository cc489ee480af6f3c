"""The history panel, driven through its widgets with pytest-qt (offscreen)."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import srt
import webvtt
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QTextCursor
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from tests.app.history.samples import record_two_sessions
from tests.fake_llm import FakeLlm
from voxdesk.app.actions.center import ActionCenter
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.services import Services
from voxdesk.app.history.store import HistoryError, HistoryStore
from voxdesk.app.settings import ActionSettings
from voxdesk.app.writing.modes import DEFAULT_MODES
from voxdesk.ui.history_panel import HistoryPanel


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "history.sqlite3"


@pytest.fixture
def writer(path: Path) -> Iterator[HistoryStore]:
    """Another connection, as the live controller would have, with two sessions already recorded."""
    store = HistoryStore.open(path)
    record_two_sessions(store)
    yield store
    store.close()


@pytest.fixture
def panel(qtbot: QtBot, path: Path, writer: HistoryStore) -> Iterator[HistoryPanel]:
    widget = HistoryPanel(path, poll_ms=0)
    qtbot.addWidget(widget)
    widget.show()
    yield widget
    widget.close_store()


def listed(panel: HistoryPanel) -> list[int]:
    items = [panel.session_list.item(row) for row in range(panel.session_list.count())]
    return [int(item.data(Qt.ItemDataRole.UserRole)) for item in items]


def answer(monkeypatch: pytest.MonkeyPatch, button: QMessageBox.StandardButton) -> list[str]:
    asked: list[str] = []

    def question(parent: QWidget, title: str, text: str, *args: object) -> QMessageBox.StandardButton:
        asked.append(text)
        return button

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def test_shows_sessions_newest_first_and_the_selected_transcript(panel: HistoryPanel) -> None:
    assert listed(panel) == [2, 1]
    assert "Open the browser." in panel.session_list.item(0).text()
    assert panel.view.toPlainText() == ""
    assert not panel.delete_button.isEnabled() and not panel.copy_button.isEnabled()
    assert panel.select_session(1)
    assert panel.view.toPlainText() == "The weather today is sunny.\nTomorrow it will rain.\n"
    assert "weather.wav" in panel.heading.text()
    assert panel.delete_button.isEnabled() and panel.copy_button.isEnabled()


def test_controls_have_accessible_names(panel: HistoryPanel) -> None:
    controls = [
        panel.search_box,
        panel.session_list,
        panel.view,
        panel.copy_button,
        panel.export_button,
        panel.delete_button,
        panel.delete_all_button,
    ]
    names = [c.accessibleName() for c in controls]
    assert all(names) and len(set(names)) == len(names)


def test_search_filters_sessions_and_shows_the_hits(panel: HistoryPanel, qtbot: QtBot) -> None:
    qtbot.keyClicks(panel.search_box, "rain")
    assert listed(panel) == [1]
    assert panel.view.toPlainText().rstrip().endswith("00:00:03.500] Tomorrow it will rain.")
    assert "1 matching utterance" in panel.heading.text()
    panel.search_box.setText("zzz")
    assert listed(panel) == [] and panel.view.toPlainText() == ""
    panel.search_box.clear()
    assert listed(panel) == [2, 1]


@pytest.mark.parametrize("words", ['"', "NEAR(", "*", "-", "(open", 'the" OR "x'])
def test_search_box_takes_fts_syntax(panel: HistoryPanel, words: str) -> None:
    panel.search_box.setText(words)  # must not raise
    assert all("open" in panel.session_list.item(r).text().lower() for r in range(panel.session_list.count()))


def test_delete_asks_and_removes(panel: HistoryPanel, monkeypatch: pytest.MonkeyPatch, qtbot: QtBot) -> None:
    panel.select_session(1)
    asked = answer(monkeypatch, QMessageBox.StandardButton.No)
    qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    assert asked and listed(panel) == [2, 1]

    answer(monkeypatch, QMessageBox.StandardButton.Yes)
    qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    assert listed(panel) == [2]
    assert panel.selected_session_id() is None and panel.view.toPlainText() == ""
    with HistoryStore.open(panel._store.path) as check:
        assert [s.id for s in check.sessions()] == [2]
        assert check.search("weather") == []


def test_delete_everything_asks_first(panel: HistoryPanel, monkeypatch: pytest.MonkeyPatch, qtbot: QtBot) -> None:
    asked = answer(monkeypatch, QMessageBox.StandardButton.No)
    qtbot.mouseClick(panel.delete_all_button, Qt.MouseButton.LeftButton)
    assert "all 2 sessions (3 utterances)" in asked[0]
    assert listed(panel) == [2, 1]
    answer(monkeypatch, QMessageBox.StandardButton.Yes)
    qtbot.mouseClick(panel.delete_all_button, Qt.MouseButton.LeftButton)
    assert listed(panel) == []
    assert not panel.delete_all_button.isEnabled()
    with HistoryStore.open(panel._store.path) as check:
        assert check.counts() == (0, 0)


def test_refresh_shows_a_new_utterance_of_the_live_session(panel: HistoryPanel, writer: HistoryStore) -> None:
    panel.select_session(2)
    writer.add_utterance(2, "Search for cheap flights.", 3.0, 4.5)
    assert "cheap flights" not in panel.view.toPlainText()
    panel.refresh()
    assert panel.view.toPlainText() == "Open the browser.\nSearch for cheap flights.\n"
    assert panel.selected_session_id() == 2
    assert "·  2\n" in panel.session_list.item(0).text()


def test_polling_picks_up_writes_from_another_connection(qtbot: QtBot, path: Path, writer: HistoryStore) -> None:
    panel = HistoryPanel(lambda: HistoryStore.open(path), poll_ms=50)
    qtbot.addWidget(panel)
    try:
        panel.select_session(2)
        writer.add_utterance(2, "Play some music.", 3.0, 4.0)
        qtbot.waitUntil(lambda: "Play some music." in panel.view.toPlainText(), timeout=10_000)
        third = writer.start_session("live", "builtin", "whisper-tiny.en", "USB microphone")
        writer.add_utterance(third, "Hello there.", 0.0, 1.0)
        qtbot.waitUntil(lambda: listed(panel) == [third, 2, 1], timeout=10_000)
    finally:
        panel.close_store()


def test_a_live_session_without_words_is_not_listed(panel: HistoryPanel, writer: HistoryStore) -> None:
    empty_live = writer.start_session("live", "builtin", "whisper-tiny.en", "USB microphone")
    silent_file = writer.start_session("file", "builtin", "whisper-tiny.en", "silence.wav")
    panel.refresh()
    assert listed(panel) == [silent_file, 2, 1] and empty_live not in listed(panel)


def test_copy_puts_the_transcript_on_the_clipboard(panel: HistoryPanel, qtbot: QtBot) -> None:
    panel.select_session(1)
    qtbot.mouseClick(panel.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "The weather today is sunny.\nTomorrow it will rain.\n"


def test_export_writes_the_format_of_the_extension(
    panel: HistoryPanel, monkeypatch: pytest.MonkeyPatch, qtbot: QtBot, tmp_path: Path
) -> None:
    panel.select_session(1)
    chosen = [(str(tmp_path / "weather.srt"), ""), (str(tmp_path / "weather"), "WebVTT subtitles (*.vtt)")]
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args, **kwargs: chosen.pop(0))
    qtbot.mouseClick(panel.export_button, Qt.MouseButton.LeftButton)
    cues = list(srt.parse((tmp_path / "weather.srt").read_text()))
    assert [(c.start.total_seconds(), c.content) for c in cues] == [
        (0.5, "The weather today is sunny."),
        (3.5, "Tomorrow it will rain."),
    ]
    qtbot.mouseClick(panel.export_button, Qt.MouseButton.LeftButton)  # no extension: the chosen filter's
    assert [c.end for c in webvtt.read(str(tmp_path / "weather.vtt")).captions] == ["00:00:02.250", "00:00:05.000"]


def test_export_of_search_results_and_a_failed_export(
    panel: HistoryPanel, monkeypatch: pytest.MonkeyPatch, qtbot: QtBot, tmp_path: Path
) -> None:
    panel.search_box.setText("weather OR browser")  # plain words: both must appear, so nothing matches
    assert listed(panel) == []
    panel.search_box.setText("the")
    target = tmp_path / "hits.txt"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args, **kwargs: (str(target), ""))
    qtbot.mouseClick(panel.export_button, Qt.MouseButton.LeftButton)
    lines = target.read_text().splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == ["The weather today is sunny.", "Open the browser."]

    warnings: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text, *a: warnings.append(text))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args, **kwargs: (str(tmp_path / "x.docx"), ""))
    qtbot.mouseClick(panel.export_button, Qt.MouseButton.LeftButton)
    assert warnings and "name it" in warnings[0]


def test_a_failing_store_is_reported_not_raised(
    panel: HistoryPanel, monkeypatch: pytest.MonkeyPatch, qtbot: QtBot
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise HistoryError("the history database failed: disk I/O error")

    monkeypatch.setattr(panel._store, "sessions", broken)
    monkeypatch.setattr(panel._store, "data_version", broken)
    monkeypatch.setattr(panel._store, "delete_session", broken)
    panel.refresh()
    assert "disk I/O error" in panel.heading.text()
    panel._poll()
    warnings: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text, *a: warnings.append(text))
    answer(monkeypatch, QMessageBox.StandardButton.Yes)
    panel.select_session(1)
    qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    assert warnings == ["the history database failed: disk I/O error"]


def test_run_again_on_the_selected_lines_with_another_model_rewrites_only_those_utterances(
    panel: HistoryPanel, fake_llm: FakeLlm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel.rewriter = center_on(tmp_path, fake_llm.url).rewrite
    assert panel.select_session(1)
    cursor = panel.view.textCursor()
    cursor.setPosition(panel.view.document().findBlockByNumber(1).position() + 3)  # inside the second line
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
    panel.view.setTextCursor(cursor)
    fake_llm.content = json.dumps({"text": "Rain tomorrow."})
    run_again_by_the_button(panel, monkeypatch, "An edit, said in words…", "make it short", model="other-model")
    assert panel.again_view.toPlainText() == "Rain tomorrow."
    assert panel.again_heading.text() == (
        "Session 1, utterance 2 run again, edited: “make it short” by other-model (not saved)"
    )
    [request] = fake_llm.requests
    assert request["model"] == "other-model" and "Tomorrow it will rain." in request["messages"][-1]["content"]
    # No selection: the whole session, by the model of the settings.
    panel.view.setTextCursor(QTextCursor(panel.view.document()))
    run_again_by_the_button(panel, monkeypatch, "An edit, said in words…", "make it short")
    assert [r["model"] for r in fake_llm.requests[1:]] == ["fake-model", "fake-model"]


def center_on(tmp_path: Path, url: str) -> ActionCenter:
    """The assistant's action center with its LLM at ``url`` (what the window gives the panel)."""
    settings = ActionSettings(llm_url=url, llm_model="fake-model", llm_timeout_s=2)
    return ActionCenter(settings, Services(), commands=CommandSource(user_path=tmp_path / "c.toml"))


def run_again_by_the_button(
    panel: HistoryPanel, monkeypatch: pytest.MonkeyPatch, choice: str, edit: str = "", model: str = ""
) -> None:
    """Click *Run again…*, answer its questions (the way, the edit, the model), and wait for the
    result to be shown."""
    monkeypatch.setattr(QInputDialog, "getItem", lambda *args: (choice, True))
    monkeypatch.setattr(QInputDialog, "getText", lambda *args: (model if args[2].startswith("Model") else edit, True))

    async def scenario() -> None:
        panel.again_heading.clear()  # an earlier run's last word is not this one's
        panel.again_button.click()
        deadline = time.monotonic() + 10
        while "(not saved)" not in panel.again_heading.text():  # the run's own last word
            assert time.monotonic() < deadline, panel.again_heading.text()
            await asyncio.sleep(0.01)

    asyncio.run(scenario())


def test_run_again_writes_a_session_through_a_modes_cleanup_and_keeps_the_history(
    panel: HistoryPanel, fake_llm: FakeLlm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert panel.select_session(1) and not panel.again_button.isEnabled()  # no assistant yet
    panel.rewriter = center_on(tmp_path, fake_llm.url).rewrite
    panel.refresh()
    assert panel.again_button.isEnabled()
    fake_llm.content = json.dumps({"text": "Sunny today."})
    clean = next(mode for mode in DEFAULT_MODES if mode.name == "clean")
    run_again_by_the_button(panel, monkeypatch, f"clean: {clean.description}")
    assert panel.again_view.toPlainText() == "Sunny today.\nSunny today."
    assert panel.again_heading.text() == "Session 1 run again, in the clean mode (not saved)"
    assert [r["messages"][-1]["content"] for r in fake_llm.requests] == [
        "The weather today is sunny.",
        "Tomorrow it will rain.",
    ]
    assert panel.view.toPlainText() == "The weather today is sunny.\nTomorrow it will rain.\n"


def test_run_again_as_an_edit_keeps_each_utterance_the_llm_could_not_rewrite(
    panel: HistoryPanel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    panel.rewriter = center_on(tmp_path, f"http://127.0.0.1:{port}/v1").rewrite
    assert panel.select_session(1)
    run_again_by_the_button(panel, monkeypatch, "An edit, said in words…", "make it formal")
    assert panel.again_view.toPlainText() == "The weather today is sunny.\nTomorrow it will rain."
    assert panel.again_heading.text() == (
        "Session 1 run again, edited: “make it formal” (not saved); 2 kept as they were (the LLM did not rewrite them)"
    )
