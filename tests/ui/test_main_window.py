"""The main window shows what the controller reports (events pushed through the real bridge)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from voxdesk.app.listening.capture import AudioLevel, CaptureState, CaptureStatus
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import (
    AudioDropped,
    Concern,
    EngineSpeed,
    EngineState,
    EngineStatus,
    ListeningChanged,
    Problem,
    TranscriptChanged,
    UtteranceFinal,
)
from voxdesk.app.listening.level import MeterReading
from voxdesk.app.listening.transcript import Utterance
from voxdesk.app.settings import Settings
from voxdesk.ui.main_window import MainWindow


def make_window(qtbot: QtBot) -> tuple[Controller, MainWindow]:
    controller = Controller(Settings())
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()
    return controller, window


def cell(window: MainWindow, row: int, column: int) -> str:
    """The text of one cell of the utterance list."""
    item = window.utterance_list.topLevelItem(row)
    assert item is not None, f"no row {row}"
    return item.text(column)


def provisional_fragments(window: MainWindow) -> list[str]:
    """Text shown italic in the provisional colour (and not in the normal text colour)."""
    view = window.transcript_view
    normal = view.palette().color(QPalette.ColorRole.Text)
    found = []
    block = view.document().begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            char_format = fragment.charFormat()
            if char_format.fontItalic():
                assert char_format.foreground().color() == view.provisional_colour() != normal
                found.append(fragment.text())
            iterator += 1
        block = block.next()
    return found


def test_provisional_tail_is_shown_apart_from_committed_text(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    controller.report(TranscriptChanged(Utterance(1, committed="Open the", provisional="brow")))
    assert window.transcript_view.committed_text() == "Open the"
    assert window.transcript_view.provisional_text() == "brow"
    assert provisional_fragments(window) == ["brow"]  # italic and greyed; the committed text is not
    assert cell(window, 0, 1) == "Open the brow"

    final = Utterance(1, committed="Open the browser.", start=1.2, end=2.1, final=True)
    controller.report(TranscriptChanged(final))
    assert window.transcript_view.provisional_text() == ""
    assert provisional_fragments(window) == []
    assert cell(window, 0, 0) == "00:01.2 - 00:02.1"


def test_latency_readout_shows_the_last_utterance_and_the_session_median(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    for number, (first, final) in enumerate([(0.40, 0.70), (0.50, 0.90), (0.45, 0.80)], start=1):
        utterance = Utterance(number, "x", start=0, end=1, final=True, first_partial_latency=first, final_latency=final)
        controller.report(TranscriptChanged(utterance))
        controller.report(UtteranceFinal(utterance))
    text = window.latency_label.text()
    assert "first text 0.45 s" in text and "final 0.80 s" in text and "median 0.80 s over 3" in text
    assert cell(window, 1, 2) == "0.50 s"
    assert cell(window, 1, 3) == "0.90 s"


def test_engine_status_loading_progress_then_failure_in_plain_words(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    controller.report(EngineStatus(EngineState.LOADING, "local GPU (vLLM, m)", "importing vLLM", 0.25))
    assert window.engine_progress.isVisible() and window.engine_progress.value() == 25
    assert "loading: importing vLLM" in window.engine_status.text()
    message = "local GPU mode needs vLLM: install it with pip install 'voxdesk[gpu]'"
    controller.report(EngineStatus(EngineState.FAILED, "local GPU (vLLM, m)", message))
    controller.report(Problem(message, concern=Concern.ENGINE))  # as the controller reports a failed load
    assert not window.engine_progress.isVisible()
    assert "failed" in window.engine_status.text()
    assert window.problem_banner.isVisible() and "Local GPU mode needs vLLM" in window.problem_banner.text()
    controller.report(EngineStatus(EngineState.READY, "built-in CPU engine", "ready"))
    assert not window.problem_banner.isVisible()


def test_a_model_too_slow_for_the_machine_is_shown_until_it_keeps_up_or_another_loads(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    slow = "built-in engine (Whisper small.en, device cpu) is too slow for this machine: real-time factor 1.30"
    controller.report(EngineSpeed(True, slow, 1.3))
    assert window.speed_banner.isVisible() and window.speed_banner.text() == slow
    controller.report(EngineSpeed(False, "keeps up: real-time factor 0.40", 0.4))
    assert not window.speed_banner.isVisible()
    controller.report(EngineSpeed(True, slow, 1.3))
    controller.report(EngineStatus(EngineState.LOADING, "built-in engine (Whisper base.en)", "starting", 0.0))
    assert not window.speed_banner.isVisible()


def test_reconnecting_remote_engine_is_shown(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    controller.report(EngineStatus(EngineState.RECONNECTING, "remote server ws://h:8000", "connection lost"))
    assert "reconnecting" in window.engine_status.text()


def test_lost_microphone_is_shown_and_text_stays(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    controller.report(TranscriptChanged(Utterance(1, committed="keep this", final=True)))
    controller.report(CaptureStatus(CaptureState.LOST, "USB mic", "the microphone 'USB mic' stopped working"))
    assert window.problem_banner.isVisible() and "stopped working" in window.problem_banner.text()
    assert window.device_label.text() == "the microphone 'USB mic' stopped working"
    assert window.transcript_view.committed_text() == "keep this"
    controller.report(CaptureStatus(CaptureState.OPEN, "USB mic", "listening on USB mic"))
    assert not window.problem_banner.isVisible()
    controller.report(ListeningChanged(False))
    assert window.device_label.text() == "not listening"  # not still "listening on USB mic"


def test_a_problem_with_a_file_stays_when_the_engine_gets_ready_and_a_microphone_one_until_it_opens(
    qtbot: QtBot,
) -> None:
    controller, window = make_window(qtbot)
    warning = "the settings file settings.toml is not UTF-8: its damaged copy is settings.toml.damaged"
    window.show_problem(warning)  # as the desktop shows what it found at startup
    controller.report(EngineStatus(EngineState.READY, "built-in CPU engine", "ready"))
    controller.report(CaptureStatus(CaptureState.OPEN, "USB mic", "listening on USB mic"))
    assert window.problem_banner.isVisible() and "settings.toml is not UTF-8" in window.problem_banner.text()

    controller.report(CaptureStatus(CaptureState.LOST, "USB mic", "the microphone 'USB mic' stopped working"))
    controller.report(EngineStatus(EngineState.READY, "built-in CPU engine", "ready"))
    assert window.problem_banner.isVisible() and "stopped working" in window.problem_banner.text()
    controller.report(CaptureStatus(CaptureState.OPEN, "USB mic", "listening on USB mic"))
    assert window.problem_banner.text() == warning[:1].upper() + warning[1:]  # the file's problem stays


def test_dropped_audio_is_shown_in_the_status_bar_until_listening_starts_again(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    assert not window.dropped_label.isVisible()
    controller.report(AudioDropped(1.23))
    assert window.dropped_label.isVisible()
    assert window.dropped_label.text() == "Dropped 1.2 s of audio: the engine could not keep up"
    assert window.dropped_label.accessibleName() == "Dropped audio"
    controller.report(ListeningChanged(True))  # a new session counts from nothing
    assert not window.dropped_label.isVisible()


def test_listening_state_and_level_meter(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    controller.report(ListeningChanged(True))
    assert window.listen_button.isChecked() and window.listen_button.text() == "Stop"
    controller.report(AudioLevel(rms=0.1, peak=0.5))
    reading = window.meter.reading
    assert (round(reading.rms_db), round(reading.peak_db), round(reading.held_peak_db)) == (-20, -6, -6)
    assert window.meter.accessibleDescription() == "-20 dB, peak -6 dB"
    controller.report(ListeningChanged(False))
    assert not window.listen_button.isChecked() and window.listen_button.text() == "Listen"
    assert window.meter.reading == MeterReading()


def test_transcript_follows_new_text_until_the_user_scrolls_up(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    view = window.transcript_view
    for number in range(1, 60):
        controller.report(TranscriptChanged(Utterance(number, committed=f"line {number}", final=True)))
    bar = view.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    bar.setValue(0)
    controller.report(TranscriptChanged(Utterance(60, committed="line 60", final=True)))
    assert bar.value() == 0  # reading older text is not interrupted
    bar.setValue(bar.maximum())
    controller.report(TranscriptChanged(Utterance(61, committed="line 61", final=True)))
    assert bar.value() == bar.maximum()


def test_controls_have_accessible_names(qtbot: QtBot) -> None:
    _, window = make_window(qtbot)
    for widget in (
        window.listen_button,
        window.engine_selector,
        window.engine_status,
        window.meter,
        window.transcript_view,
        window.utterance_list,
        window.latency_label,
    ):
        assert widget.accessibleName(), widget


def test_copy_puts_the_transcript_on_the_clipboard(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    for number, text in enumerate(["Open the browser.", "Search for cats."], start=1):
        utterance = controller.transcript.open()
        controller.transcript.finish(utterance.id, text, number, number + 1)
    window.copy_transcript()
    assert QApplication.clipboard().text() == "Open the browser.\nSearch for cats."
    window.clear_transcript()
    assert controller.transcript.text() == "" and window.utterance_list.topLevelItemCount() == 0


def test_provisional_text_stays_greyed_in_a_dark_palette(qtbot: QtBot) -> None:
    _, window = make_window(qtbot)
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#f0f0f0"))
    window.transcript_view.setPalette(dark)
    grey = window.transcript_view.provisional_colour()
    assert 0x1E < grey.red() < 0xF0 and grey.red() == grey.green() == grey.blue()


def test_problems_stay_together_until_dismissed_or_resolved(qtbot: QtBot) -> None:
    controller, window = make_window(qtbot)
    window.show_problem("ignored listening.silence_ms: expected int, got str")
    window.show_problem("ignored unknown setting engine.modle")
    controller.report(CaptureStatus(CaptureState.LOST, "USB mic", "the microphone 'USB mic' stopped working"))
    controller.report(CaptureStatus(CaptureState.LOST, "USB mic", "no microphone can be opened"))
    controller.report(EngineStatus(EngineState.READY, "built-in engine"))  # resolves no settings warning
    assert window.problem_banner.text().splitlines() == [
        "Ignored listening.silence_ms: expected int, got str",
        "Ignored unknown setting engine.modle",
        "No microphone can be opened",  # the newer microphone problem replaced the older one
    ]
    controller.report(CaptureStatus(CaptureState.OPEN, "USB mic", "listening on USB mic"))
    assert len(window.problem_banner.text().splitlines()) == 2 and window.problem_banner.isVisible()
    qtbot.mouseClick(window.dismiss_problems_button, Qt.MouseButton.LeftButton)
    assert not window.problem_banner.isVisible()
