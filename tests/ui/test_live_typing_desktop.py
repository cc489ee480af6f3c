"""Live typing end to end: speech played into the virtual microphone, the desktop app in dictation
mode, and the text typed by xdotool into a real text field in another process on Xvfb."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.cli.test_failover import audio_received
from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.recognition import ACCURACY, wer
from tests.serve_process import start_serve
from tests.speech_fixtures import Fixture, speak
from tests.text_field import TextField, dictation_settings, typing_services
from tests.ui.test_desktop_live import SPEECH_TIMEOUT_MS, Recorder, listen, start_desktop, stop_desktop
from voxdesk.app.actions import ActionStatus
from voxdesk.app.listening.events import UtteranceFinal
from voxdesk.app.settings import Settings
from voxdesk.app.writing.pipeline import write_text
from voxdesk.app.writing.user_mode import user_mode
from voxdesk.engine import EngineKind
from voxdesk.ui.desktop import Desktop

pytestmark = pytest.mark.skipif(shutil.which("xdotool") is None, reason="xdotool is not installed")

PASSAGE_TIMEOUT_MS = 90_000  # the passage is about 30 s of speech


@pytest.fixture
def passage(speech: dict[str, Fixture]) -> Fixture:
    return speech["passage-slt"]


def finals(recorder: Recorder) -> list[UtteranceFinal]:
    return [event for _, event in recorder.of(UtteranceFinal) if isinstance(event, UtteranceFinal)]


def written(settings: Settings, recorder: Recorder, upto: int | None = None) -> str:
    """What the field must hold: each final with text (the first ``upto``) as the mode writes
    it, and a space."""
    mode, _ = user_mode(settings.writing)
    texts = [final.utterance.committed.strip() for final in finals(recorder)[:upto]]
    return "".join(write_text(text, mode) + " " for text in texts if text)


def wait_until_written(qtbot: QtBot, desktop: Desktop, player: subprocess.Popen[bytes], recorder: Recorder) -> None:
    """Once the recording has played: stop listening (which finishes the utterance in progress)
    and wait until every utterance with text is typed."""
    qtbot.waitUntil(lambda: player.poll() is not None, timeout=PASSAGE_TIMEOUT_MS)
    stopped = asyncio.ensure_future(desktop.controller.stop_listening())
    qtbot.waitUntil(stopped.done, timeout=SPEECH_TIMEOUT_MS)
    stopped.result()
    center = desktop.assistant.center

    def typed_all() -> bool:
        spoken = [f for f in finals(recorder) if f.utterance.committed.strip()]
        done = [r for r in center.records if r.command == "dictation" and r.status is ActionStatus.DONE]
        return bool(spoken) and len(done) == len(spoken)

    qtbot.waitUntil(typed_all, timeout=SPEECH_TIMEOUT_MS)


def test_dictation_is_typed_into_another_window_while_spoken_and_scratch_that_takes_the_last_back(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    virtual_mic: VirtualMic,
    field: TextField,
    passage: Fixture,
    tmp_path: Path,
) -> None:
    settings = dictation_settings()
    desktop, recorder, run = start_desktop(qtbot, settings, services=typing_services())
    at_finals: list[int] = []  # characters in the field as each final arrives, before it is typed
    desktop.controller.subscribe(
        lambda e: at_finals.append(len(field.text())) if isinstance(e, UtteranceFinal) else None
    )
    listen(qtbot, desktop)
    player = virtual_mic.play(fixture_path(passage))
    wait_until_written(qtbot, desktop, player, recorder)
    qtbot.waitUntil(lambda: field.text() == written(settings, recorder), timeout=10_000)
    before = [len(written(settings, recorder, upto=n)) for n in range(len(at_finals))]
    live = [held - typed for held, typed in zip(at_finals, before, strict=True)]
    # Each utterance's live keys follow the one before's final keys, so a short utterance can end
    # before any of its own are typed; across the passage's utterances some must have been.
    assert any(chars > 0 for chars in live), f"nothing was typed before an utterance ended: {live}"
    assert wer([passage.text], [field.text()]) <= ACCURACY[passage.name].max_wer, field.text()

    before_last = field.text()
    last = finals(recorder)[-1].utterance.committed.strip()
    scratch = speak(tmp_path, "scratch", "scratch that")
    listen(qtbot, desktop)
    virtual_mic.play(tmp_path / scratch.path)
    expected = before_last[: -len(write_text(last, user_mode(settings.writing)[0]) + " ")]
    qtbot.waitUntil(lambda: field.text() == expected, timeout=SPEECH_TIMEOUT_MS)
    stop_desktop(qtbot, desktop, run)


@pytest.fixture
def two_servers() -> Iterator[tuple[subprocess.Popen[str], int, int]]:
    first, first_port = start_serve(drain=True)
    second, second_port = start_serve(drain=True)
    yield first, first_port, second_port
    for process in (first, second):
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


def test_a_server_killed_mid_utterance_still_leaves_the_field_holding_the_finals(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    virtual_mic: VirtualMic,
    field: TextField,
    passage: Fixture,
    two_servers: tuple[subprocess.Popen[str], int, int],
) -> None:
    first, first_port, second_port = two_servers
    settings = dictation_settings()
    settings.engine.kind = EngineKind.REMOTE
    settings.engine.server_url = f"ws://127.0.0.1:{first_port},ws://127.0.0.1:{second_port}"
    desktop, recorder, run = start_desktop(qtbot, settings, services=typing_services())
    listen(qtbot, desktop)
    player = virtual_mic.play(fixture_path(passage))
    # Mid-utterance: the field holds more than the finals so far wrote, the live keys of one still open.
    qtbot.waitUntil(lambda: len(field.text()) > len(written(settings, recorder)), timeout=SPEECH_TIMEOUT_MS)
    os.kill(first.pid, signal.SIGKILL)
    wait_until_written(qtbot, desktop, player, recorder)
    qtbot.waitUntil(lambda: field.text() == written(settings, recorder), timeout=10_000)
    assert audio_received(second_port) >= passage.duration - 0.5, "the second server did not get the whole passage"
    assert wer([passage.text], [field.text()]) <= ACCURACY[passage.name].max_wer, field.text()
    stop_desktop(qtbot, desktop, run)
