"""The set-up dialog on the first start, with the real virtual microphone: its level while a
phrase plays, playback of the last 3 s (heard again through the virtual microphone, whose sink
is the default output), the engine choice and a real connection test against voxdesk serve."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from tests.app.actions.fakes import recording_services
from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.serve_process import REPO, start_serve
from tests.speech_fixtures import Fixture
from voxdesk.app.first_run import cuda_device, is_first_run
from voxdesk.app.listening.capture import list_input_devices
from voxdesk.app.settings import Settings, settings_path
from voxdesk.engine.kinds import EngineKind
from voxdesk.ui.desktop import Desktop
from voxdesk.ui.first_run import FirstRunDialog

SCREENSHOT = REPO / "build" / "screenshots" / "voxdesk-first-run.png"


def open_dialog(qtbot: QtBot, settings: Settings | None = None) -> FirstRunDialog:
    devices = [d.name for d in list_input_devices(refresh=True)]
    dialog = FirstRunDialog(settings or Settings(), devices, cuda_device())
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_the_microphone_level_shows_speech_and_playback_is_heard_again(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, speech: dict[str, Fixture]
) -> None:
    dialog = open_dialog(qtbot)
    shown: list[float] = []  # the meter's RMS level, sampled every 20 ms
    sampler = QTimer(dialog, interval=20)
    sampler.timeout.connect(lambda: shown.append(dialog.meter.reading.rms_db))
    sampler.start()
    qtbot.waitUntil(lambda: dialog.mic_status.text().startswith("Listening on"), timeout=5_000)
    player = virtual_mic.play(fixture_path(speech["command00-slt"]))
    qtbot.waitUntil(lambda: dialog.mic_status.text() == "The microphone hears you.", timeout=5_000)
    qtbot.waitUntil(lambda: max(shown) > -35, timeout=5_000)
    dialog.grab().save(str(SCREENSHOT))
    qtbot.waitUntil(lambda: player.poll() is not None, timeout=10_000)
    qtbot.wait(300)
    shown.clear()
    qtbot.wait(300)
    assert max(shown) == -60.0  # the phrase is over: silence
    with virtual_mic.echo_path():  # the default output, the loudspeaker, is heard by the microphone
        qtbot.mouseClick(dialog.play_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: max(shown, default=-60) > -35, timeout=5_000)
        qtbot.waitUntil(lambda: dialog.mic_status.text() == "Played 3.0 s on the default output.", timeout=10_000)
    dialog.reject()


@pytest.fixture
def serve_port() -> Iterator[int]:
    process, port = start_serve()
    yield port
    process.terminate()
    process.wait(timeout=30)


def test_remote_choice_tests_the_connection_for_real(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, serve_port: int
) -> None:
    dialog = open_dialog(qtbot)
    assert dialog.builtin.isChecked() and not dialog.server_url.isEnabled()
    dialog.remote.setChecked(True)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed_port = unused.getsockname()[1]
    dialog.server_url.setText(f"ws://127.0.0.1:{closed_port}")
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.server_status.text().startswith("Cannot reach"), timeout=15_000)
    dialog.server_url.setText(f"ws://127.0.0.1:{serve_port}")
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.server_status.text() == f"Connected to ws://127.0.0.1:{serve_port}", timeout=15_000)
    chosen = dialog.settings()
    assert (chosen.engine.kind, chosen.engine.server_url) == (EngineKind.REMOTE, f"ws://127.0.0.1:{serve_port}")
    dialog.reject()


def test_local_gpu_is_offered_only_with_a_cuda_device(qtbot: QtBot, qloop: asyncio.AbstractEventLoop) -> None:
    dialog = FirstRunDialog(Settings(), [], None)
    qtbot.addWidget(dialog)
    assert not dialog.gpu.isEnabled() and dialog.gpu.text() == "Local GPU (no CUDA device found)"
    named = FirstRunDialog(Settings(), [], "NVIDIA H200")
    qtbot.addWidget(named)
    assert named.gpu.isEnabled() and "NVIDIA H200" in named.gpu.text()
    named.gpu.setChecked(True)
    assert named.settings().engine.kind == EngineKind.VLLM
    if cuda_device() is None:  # this machine: the driver's answer is "none"
        assert not open_dialog(qtbot).gpu.isEnabled()


def test_first_start_opens_it_skip_saves_the_defaults_and_the_menu_opens_it_again(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic
) -> None:
    assert is_first_run()
    desktop = Desktop(Settings(), [], save_changes=True, action_services=recording_services(), first_run=True)
    qtbot.addWidget(desktop.window)
    run = asyncio.ensure_future(desktop.run())
    qtbot.waitUntil(lambda: desktop.setup_dialog is not None and desktop.setup_dialog.isVisible(), timeout=10_000)
    dialog = desktop.setup_dialog
    assert dialog is not None
    qtbot.mouseClick(dialog.skip_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible() and settings_path().exists() and not is_first_run()
    desktop.window.setup_action.trigger()
    again = desktop.setup_dialog
    assert again is not None and again is not dialog and again.isVisible()
    again.reject()
    desktop.quit()
    qtbot.waitUntil(run.done, timeout=30_000)
    run.result()


def test_a_language_model_can_be_set_up_here_and_is_left_alone_otherwise(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop
) -> None:
    dialog = FirstRunDialog(Settings(), [], None)
    qtbot.addWidget(dialog)
    assert not dialog.llm_box.isChecked() and dialog.llm.isHidden()
    dialog.llm.url.setText("http://127.0.0.1:11434/v1")
    assert dialog.settings().actions == Settings().actions  # not ticked: nothing changes
    dialog.llm_box.setChecked(True)
    dialog.llm.model.setText("llama3.2")
    actions = dialog.settings().actions
    assert (actions.llm_url, actions.llm_model) == ("http://127.0.0.1:11434/v1", "llama3.2")
    shown = " ".join(label.text() for label in dialog.llm.findChildren(QLabel))
    for command in ("ollama pull llama3.2", "llama-server -m MODEL.gguf --port 8080 --jinja", "vllm serve MODEL"):
        assert command in shown
