"""The desktop app switched to an OpenAI Realtime server transcribes through ``voxdesk serve``'s
OpenAI dialect: the real window, the virtual microphone, a real server process with a key."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.recognition import assert_heard_in
from tests.serve_process import start_serve
from tests.speech_fixtures import Fixture
from tests.ui.test_desktop_live import listen, play_and_wait_for_final, start_desktop, stop_desktop
from voxdesk.app.listening.events import UtteranceFinal
from voxdesk.app.settings import Settings
from voxdesk.engine import EngineKind

KEY = "sk-desktop-test"


@pytest.fixture
def keyed_serve_port() -> Iterator[int]:
    process, port = start_serve("--api-key", KEY)
    yield port
    process.terminate()
    process.wait(timeout=30)


def test_openai_realtime_kind_with_url_and_key_transcribes_through_serve(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    virtual_mic: VirtualMic,
    speech: dict[str, Fixture],
    keyed_serve_port: int,
) -> None:
    command = speech["command00-slt"]
    settings = Settings()
    settings.engine.kind, settings.engine.server_dialect = EngineKind.REMOTE, "openai"
    settings.engine.server_url = f"ws://127.0.0.1:{keyed_serve_port}/v1"
    settings.engine.server_model, settings.engine.api_key = "gpt-4o-transcribe", KEY
    desktop, recorder, run = start_desktop(qtbot, settings)
    status = desktop.window.engine_status.text()
    assert "OpenAI Realtime server" in status and "connected" in status, status
    listen(qtbot, desktop)
    play_and_wait_for_final(qtbot, virtual_mic, recorder, fixture_path(command))
    assert_heard_in(command, desktop.window.transcript_view.committed_text())
    (_, final), *_ = recorder.of(UtteranceFinal)
    assert isinstance(final, UtteranceFinal)
    assert final.utterance.final_latency is not None and 0 < final.utterance.final_latency < 5
    stop_desktop(qtbot, desktop, run)
