"""The whole desktop app on the real microphone path: synthesized speech played into a
virtual PulseAudio microphone, captured through PortAudio, transcribed, shown in the window."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import re
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSystemTrayIcon
from pytestqt.qtbot import QtBot

from tests.app.actions.fakes import RecordingLauncher, recording_services
from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.recognition import PHRASE_ERRORS, assert_heard_in, errors_within, hour_problem, words
from tests.serve_process import REPO, start_serve
from tests.speech_fixtures import Fixture, speak
from tests.ui.screenshots import assert_looks_like_a_window, take_screenshot
from voxdesk.app.actions import ActionStatus
from voxdesk.app.actions.commands import user_commands_path
from voxdesk.app.actions.services import Services
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import transcribe_audio
from voxdesk.app.listening.capture import CaptureState, CaptureStatus
from voxdesk.app.listening.events import ControllerEvent, EngineState, TranscriptChanged, UtteranceFinal
from voxdesk.app.settings import Settings
from voxdesk.app.speaking.replies import ReplyKind
from voxdesk.app.textnorm import normalize_text
from voxdesk.engine import EngineKind
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.ui.actions_panel import ActionsPanel
from voxdesk.ui.desktop import Desktop

ENGINE_TIMEOUT_MS = 60_000
SPEECH_TIMEOUT_MS = 30_000


class Recorder:
    """Every controller event with the time it arrived."""

    def __init__(self) -> None:
        self.events: list[tuple[float, ControllerEvent]] = []

    def __call__(self, event: ControllerEvent) -> None:
        self.events.append((time.perf_counter(), event))

    def of(self, kind: type) -> list[tuple[float, ControllerEvent]]:
        return [(at, event) for at, event in self.events if isinstance(event, kind)]


def start_desktop(
    qtbot: QtBot, settings: Settings, warnings: tuple[str, ...] = (), services: Services | None = None
) -> tuple[Desktop, Recorder, asyncio.Task[None]]:
    """The desktop app with its engine ready; its actions record unless ``services`` are given."""
    desktop = Desktop(settings, list(warnings), save_changes=False, action_services=services or recording_services())
    qtbot.addWidget(desktop.window)
    recorder = Recorder()
    desktop.controller.subscribe(recorder)
    run = asyncio.ensure_future(desktop.run())
    qtbot.waitUntil(lambda: desktop.controller.engine_status.state == EngineState.READY, timeout=ENGINE_TIMEOUT_MS)
    return desktop, recorder, run


def stop_desktop(qtbot: QtBot, desktop: Desktop, run: asyncio.Task[None]) -> None:
    desktop.quit()
    qtbot.waitUntil(run.done, timeout=SPEECH_TIMEOUT_MS)
    run.result()  # re-raises anything that went wrong while shutting down


def listen(qtbot: QtBot, desktop: Desktop) -> None:
    qtbot.mouseClick(desktop.window.listen_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: desktop.window.device_label.text().startswith("listening on"), timeout=10_000)
    gc.collect()  # tasks held only by the loop's weak references would die here


def answer_meridiem(moment: time.struct_time) -> str:
    return "AM" if moment.tm_hour < 12 else "PM"


def recognized(engine: BuiltinEngine, recording: Path) -> str:
    """What the built-in engine hears in a recording (on a thread of its own: the window's
    loop is running here)."""
    audio = read_audio(recording)
    with concurrent.futures.ThreadPoolExecutor(1) as worker:
        return worker.submit(asyncio.run, transcribe_audio(engine, audio, realtime=False)).result().text


def said(text: str) -> str:
    return normalize_text(text)


def play_and_wait_for_final(qtbot: QtBot, mic: VirtualMic, recorder: Recorder, recording: Path) -> None:
    before = len(recorder.of(UtteranceFinal))
    mic.play(recording)
    qtbot.waitUntil(lambda: len(recorder.of(UtteranceFinal)) > before, timeout=SPEECH_TIMEOUT_MS)


@pytest.fixture
def command(speech: dict[str, Fixture]) -> Fixture:
    fixture = speech["command00-slt"]
    assert fixture.text == "open the browser"
    return fixture


def check_live_transcript(desktop: Desktop, recorder: Recorder, command: Fixture) -> None:
    """The words are in the window, text showed before the final, and latency was measured."""
    assert_heard_in(command, desktop.window.transcript_view.committed_text())
    (final_at, final), *_ = recorder.of(UtteranceFinal)
    assert isinstance(final, UtteranceFinal)
    changes = recorder.of(TranscriptChanged)
    early = [at for at, e in changes if isinstance(e, TranscriptChanged) and not e.utterance.final]
    assert early and early[0] < final_at, "no text was shown while the phrase was still being spoken"
    assert final.utterance.first_partial_latency is not None and 0 < final.utterance.first_partial_latency < 5
    assert final.utterance.final_latency is not None and 0 < final.utterance.final_latency < 5
    row = desktop.window.utterance_list.topLevelItem(0)
    assert row is not None
    assert said(row.text(1)) == said(final.utterance.committed) and row.text(3).endswith(" s")
    assert "session median" in desktop.window.latency_label.text()


def test_phrase_spoken_into_the_microphone_appears_in_the_window(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, command: Fixture
) -> None:
    desktop, recorder, run = start_desktop(qtbot, Settings())
    listen(qtbot, desktop)
    play_and_wait_for_final(qtbot, virtual_mic, recorder, fixture_path(command))
    check_live_transcript(desktop, recorder, command)
    # The live session is in the history panel while it is still going (its own connection).
    panel = desktop.history_panel
    assert panel is not None
    qtbot.waitUntil(lambda: panel.session_list.count() == 1, timeout=5_000)
    panel.session_list.setCurrentRow(0)
    assert_heard_in(command, panel.view.toPlainText())
    stop_desktop(qtbot, desktop, run)


def test_spoken_open_the_browser_becomes_the_action_in_the_panel(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, command: Fixture
) -> None:
    desktop, recorder, run = start_desktop(qtbot, Settings())
    launcher = desktop.assistant.center.services.launcher
    assert isinstance(launcher, RecordingLauncher)
    listen(qtbot, desktop)
    play_and_wait_for_final(qtbot, virtual_mic, recorder, fixture_path(command))
    qtbot.waitUntil(lambda: launcher.apps == ["browser"], timeout=10_000)
    (record,) = desktop.assistant.center.records
    assert (record.command, record.status) == ("open_browser", ActionStatus.DONE)
    tabs = desktop.window.tabs
    (panel,) = [tabs.widget(i) for i in range(tabs.count()) if tabs.tabText(i) == "&Actions"]
    assert isinstance(panel, ActionsPanel)
    assert panel.table.rowCount() == 1 and panel.status_text(record.id) == str(ActionStatus.DONE)
    history = desktop.assistant.history
    assert history is not None
    (row,) = history.store.utterances(history.store.sessions()[0].id)
    assert row.action is not None and "browser" in row.action.lower()
    stop_desktop(qtbot, desktop, run)


def test_what_time_is_it_is_answered_aloud_and_an_unknown_request_is_not_understood(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, engine: BuiltinEngine, tmp_path: Path
) -> None:
    """Both through the microphone, without an LLM: the time comes from Voxdesk's own clock, is
    shown in the transcript and said on the loudspeaker, whose recording is recognized again."""
    question = speak(tmp_path, "what-time", "What time is it?")
    request = speak(tmp_path, "weather", "Tell me a joke about penguins.")
    settings = Settings()
    settings.speech.backend, settings.speech.voice = "festival", "cmu_us_slt_arctic_hts"
    desktop, recorder, run = start_desktop(qtbot, settings)
    center, speaker = desktop.assistant.center, desktop.assistant.speaker
    listen(qtbot, desktop)
    loudspeaker = virtual_mic.record_speaker(tmp_path / "reply.wav")
    play_and_wait_for_final(qtbot, virtual_mic, recorder, tmp_path / question.path)
    qtbot.waitUntil(lambda: any(r.status is ActionStatus.DONE for r in center.records), timeout=10_000)
    (answer,) = center.records
    assert answer.command == "what_time"
    shown = desktop.window.transcript_view.toPlainText()
    clock = re.search(r"It is (\d{1,2}):(\d{2}) (AM|PM)\.", shown)
    assert clock is not None, shown
    asked = time.localtime(answer.created_at)
    assert (int(clock[1]), int(clock[2]), clock[3]) == (asked.tm_hour % 12 or 12, asked.tm_min, answer_meridiem(asked))
    qtbot.waitUntil(lambda: not speaker.speaking, timeout=SPEECH_TIMEOUT_MS)
    virtual_mic.finish_recording(loudspeaker, tmp_path / "reply.wav")
    heard = recognized(engine, tmp_path / "reply.wav")
    problem = hour_problem(heard, asked.tm_hour % 12 or 12)
    assert problem is None, problem

    play_and_wait_for_final(qtbot, virtual_mic, recorder, tmp_path / request.path)
    qtbot.waitUntil(lambda: len(center.records) == 2, timeout=10_000)
    assert center.records[1].status is ActionStatus.NOT_UNDERSTOOD
    assert "not understood — no command matches it" in desktop.window.transcript_view.toPlainText()
    stop_desktop(qtbot, desktop, run)


def test_a_timer_alarm_without_a_tray_shows_in_the_window_chimes_and_is_said(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, engine: BuiltinEngine, tmp_path: Path
) -> None:
    services = recording_services()
    services.notifier = None  # the desktop's own, the tray's, which offscreen Qt has not
    settings = Settings()
    settings.speech.backend, settings.speech.voice = "festival", "cmu_us_slt_arctic_hts"
    desktop, _, run = start_desktop(qtbot, settings, services=services)
    assert not QSystemTrayIcon.isSystemTrayAvailable()
    center, speaker, window = desktop.assistant.center, desktop.assistant.speaker, desktop.window
    loudspeaker = virtual_mic.record_speaker(tmp_path / "alarm.wav")
    said = asyncio.ensure_future(center.handle_utterance("set a timer for 2 seconds"))
    qtbot.waitUntil(said.done)
    timer = said.result()
    assert timer is not None
    if timer.status is ActionStatus.WAITING:
        confirmed = asyncio.ensure_future(center.confirm(timer.id))
        qtbot.waitUntil(confirmed.done)
    qtbot.waitUntil(window.alarm_row.isVisible, timeout=10_000)
    assert window.alarm_banner.text() == "Your 2 seconds timer is up"
    assert speaker.speaking  # told with the window, by the same alarm
    qtbot.waitUntil(lambda: not speaker.speaking, timeout=SPEECH_TIMEOUT_MS)
    virtual_mic.finish_recording(loudspeaker, tmp_path / "alarm.wav")
    played = read_audio(tmp_path / "alarm.wav")
    assert chime_pitch(played) == pytest.approx(880, rel=0.03)
    heard = words(recognized(engine, tmp_path / "alarm.wav"))
    assert errors_within(words("your 2 seconds timer is up"), heard) <= PHRASE_ERRORS, heard
    qtbot.mouseClick(window.dismiss_alarm_button, Qt.MouseButton.LeftButton)
    assert not window.alarm_row.isVisible()  # it stayed until dismissed
    stop_desktop(qtbot, desktop, run)


LONG_REPLY = " ".join(
    [
        "Voxdesk listens to the microphone and shows what you say while you are still speaking.",
        "It writes your words into the application in front of you and turns requests into actions.",
        "It answers questions about the time, the date and your timers from its own state.",
        "A language model can clean up what you dictate and rewrite it when you ask.",
    ]
    * 3
)


def test_with_the_loudspeaker_heard_by_the_microphone_a_long_reply_is_not_taken_for_speech(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, command: Fixture
) -> None:
    settings = Settings()
    settings.speech.max_sentences = 20
    desktop, recorder, run = start_desktop(qtbot, settings)
    center, speaker = desktop.assistant.center, desktop.assistant.speaker
    levels: list[float] = []
    desktop.controller.subscribe_levels(lambda level: levels.append(level.peak))
    listen(qtbot, desktop)
    with virtual_mic.echo_path():
        started = time.monotonic()
        speaker.announce(LONG_REPLY, ReplyKind.ANSWER)
        qtbot.waitUntil(lambda: not speaker.speaking, timeout=90_000)
        said_for = time.monotonic() - started
        heard_loud = max(levels, default=0.0)
        play_and_wait_for_final(qtbot, virtual_mic, recorder, fixture_path(command))  # the microphone is back
    assert said_for > 30 and heard_loud > 0.1  # a long reply, and the microphone heard it
    texts = [
        said(event.utterance.text) for _, event in recorder.of(UtteranceFinal) if isinstance(event, UtteranceFinal)
    ]
    assert len(texts) == 1, texts  # the command only: nothing of the reply
    assert errors_within(words(command.text), words(texts[0])) <= PHRASE_ERRORS, texts
    assert [record.command for record in center.records] == ["open_browser"]
    stop_desktop(qtbot, desktop, run)


def chime_pitch(audio: np.ndarray, rate: int = 16_000) -> float:
    """The pitch (Hz) of the first beep in a recording: its loudest frequency."""
    onset = int(np.flatnonzero(np.abs(audio) > 0.05)[0])
    beep = audio[onset + rate // 50 : onset + rate // 50 + rate // 10]  # 100 ms inside the 180 ms beep
    spectrum = np.abs(np.fft.rfft(beep * np.hanning(len(beep)), n=8 * len(beep)))
    return float(np.argmax(spectrum) * rate / (8 * len(beep)))


@pytest.fixture
def serve_port() -> Iterator[int]:
    process, port = start_serve()
    yield port
    process.terminate()
    process.wait(timeout=30)


def test_a_startup_warning_stays_in_view_once_the_engine_is_ready(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop
) -> None:
    warning = "the settings file settings.toml is not UTF-8: its damaged copy is settings.toml.damaged"
    desktop, _, run = start_desktop(qtbot, Settings(), (warning,))
    assert (
        desktop.window.problem_banner.isVisible()
        and "settings.toml is not UTF-8" in desktop.window.problem_banner.text()
    )
    stop_desktop(qtbot, desktop, run)


def test_remote_mode_against_voxdesk_serve(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, command: Fixture, serve_port: int
) -> None:
    settings = Settings()
    settings.engine.kind, settings.engine.server_url = EngineKind.REMOTE, f"ws://127.0.0.1:{serve_port}"
    desktop, recorder, run = start_desktop(qtbot, settings)
    assert "remote server" in desktop.window.engine_status.text() and "connected" in desktop.window.engine_status.text()
    listen(qtbot, desktop)
    play_and_wait_for_final(qtbot, virtual_mic, recorder, fixture_path(command))
    check_live_transcript(desktop, recorder, command)
    stop_desktop(qtbot, desktop, run)


def test_microphone_vanishing_mid_utterance_keeps_the_text_and_recovers(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, speech: dict[str, Fixture]
) -> None:
    passage = speech["passage-slt"]
    desktop, recorder, run = start_desktop(qtbot, Settings())
    listen(qtbot, desktop)
    virtual_mic.play(fixture_path(passage))
    qtbot.waitUntil(lambda: len(said(desktop.window.transcript_view.committed_text()).split()) >= 4, timeout=20_000)
    virtual_mic.kill_daemon()  # the sound server dies under the open stream, mid-sentence
    try:
        qtbot.waitUntil(lambda: desktop.window.problem_banner.isVisible(), timeout=10_000)
        assert "stopped working" in desktop.window.problem_banner.text()
        # What was heard before the loss is finished and kept, and the window still works.
        qtbot.waitUntil(lambda: bool(recorder.of(UtteranceFinal)), timeout=SPEECH_TIMEOUT_MS)
        kept = said(desktop.window.transcript_view.committed_text()).split()
        assert len(kept) >= 4 and errors_within(kept[:4], words(passage.text)) <= PHRASE_ERRORS, kept
        assert desktop.controller.listening
        qtbot.mouseClick(desktop.window.tabs.tabBar(), Qt.MouseButton.LeftButton)
    finally:
        lost = len(recorder.events)
        virtual_mic.start()  # the device comes back
    qtbot.waitUntil(
        lambda: any(isinstance(e, CaptureStatus) and e.state == CaptureState.OPEN for _, e in recorder.events[lost:]),
        timeout=15_000,
    )
    assert not desktop.window.problem_banner.isVisible()
    finals_before = len(recorder.of(UtteranceFinal))
    play_and_wait_for_final(qtbot, virtual_mic, recorder, fixture_path(speech["command01-slt"]))
    assert len(recorder.of(UtteranceFinal)) > finals_before
    assert_heard_in(speech["command01-slt"], desktop.window.transcript_view.committed_text())
    assert " ".join(kept) in said(desktop.window.transcript_view.committed_text())  # nothing lost
    stop_desktop(qtbot, desktop, run)


def test_screenshot_of_the_real_window_under_xvfb(
    virtual_mic: VirtualMic, x_display: str, speech: dict[str, Fixture]
) -> None:
    out = REPO / "build" / "screenshots" / "voxdesk-window.png"
    recordings = [fixture_path(speech[name]) for name in ("command00-slt", "command01-slt")]
    # The search asks first, so the picture shows an action waiting with its Confirm and Cancel.
    user_commands_path().parent.mkdir(parents=True, exist_ok=True)
    user_commands_path().write_text(
        '[commands.search]\naction = "search"\nphrases = ["search for {query}"]\nconfirm = true\n'
    )
    transcript = take_screenshot("tests.ui.window_screenshot", out, recordings, x_display)
    assert_heard_in(speech["command00-slt"], transcript)
    assert_heard_in(speech["command01-slt"], transcript)
    for picture in (out, out.with_suffix(".window.png")):
        assert_looks_like_a_window(picture)
