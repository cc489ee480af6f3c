"""An engine that fails while the window listens, with real faults: a built-in engine decode
that raises inside CTranslate2 mid-utterance (:mod:`tests.engine.failing_decoder`), and a
remote server that takes the stream's connection and never answers (a real loopback proxy that
stops passing its answers, :mod:`tests.engine.silencing_proxy`). The window keeps the
transcript, says what happened in one sentence, offers to restart the engine, and the restart
builds a new engine through the engine factory that really transcribes what is said next."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.engine.failing_decoder import FailingDecoder
from tests.engine.silencing_proxy import Silence, SilencingProxy
from tests.recognition import assert_heard_in, assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.app.engines import build_engine
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import ControllerEvent, EngineState, Problem, UtteranceFinal
from voxdesk.app.settings import EngineSettings, Settings
from voxdesk.app.textnorm import normalize_text
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.session import StreamingEngine
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.server.realtime.server import ServerConfig, running_server
from voxdesk.ui.main_window import MainWindow

ENGINE_TIMEOUT_MS = 60_000
SPEECH_TIMEOUT_MS = 30_000
SILENCE_TIMEOUT_MS = 40_000  # the remote engine's default limits (10 s) and the phrase around them
FIRST, SECOND, BETWEEN, THIRD = "command00-slt", "command13-slt", "command02-slt", "command01-slt"


class Rig:
    """A window on a controller whose engines come from the real factory, each one kept."""

    def __init__(self, qtbot: QtBot, settings: Settings) -> None:
        self.qtbot = qtbot
        self.built: list[StreamingEngine] = []
        self.events: list[ControllerEvent] = []
        self.controller = Controller(settings, engine_factory=self._build)
        self.controller.subscribe(self.events.append)
        self.window = MainWindow(self.controller)
        qtbot.addWidget(self.window)
        self.window.show()

    def _build(self, choice: EngineSettings) -> StreamingEngine:
        engine = build_engine(choice)
        self.built.append(engine)
        return engine

    def run(self, coroutine: Coroutine[Any, Any, Any], timeout_ms: int = ENGINE_TIMEOUT_MS) -> Any:
        task = self.window.spawn(coroutine)
        self.qtbot.waitUntil(task.done, timeout=timeout_ms)
        return task.result()

    def finals(self) -> list[str]:
        return [e.utterance.committed for e in self.events if isinstance(e, UtteranceFinal)]

    def outcomes(self) -> int:
        """Final texts and engine failures told so far."""
        return sum(isinstance(e, UtteranceFinal) or (isinstance(e, Problem) and e.offers_restart) for e in self.events)

    def listen(self) -> None:
        self.qtbot.waitUntil(
            lambda: self.controller.engine_status.state == EngineState.READY, timeout=ENGINE_TIMEOUT_MS
        )
        self.qtbot.mouseClick(self.window.listen_button, Qt.MouseButton.LeftButton)
        self.qtbot.waitUntil(lambda: self.controller.listening, timeout=10_000)

    def say(self, mic: VirtualMic, fixture: Fixture) -> str:
        """Play a phrase into the microphone; the final text it produced."""
        before = len(self.finals())
        player = mic.play(fixture_path(fixture))
        self.qtbot.waitUntil(lambda: len(self.finals()) > before, timeout=SPEECH_TIMEOUT_MS)
        self.qtbot.waitUntil(lambda: player.poll() is not None, timeout=SPEECH_TIMEOUT_MS)
        return self.finals()[-1]

    def restart(self) -> None:
        """Press *Restart engine*; return once the new engine listens."""
        assert self.window.restart_button.isVisible()
        built = len(self.built)
        self.qtbot.mouseClick(self.window.restart_button, Qt.MouseButton.LeftButton)
        self.qtbot.waitUntil(  # a new engine from the factory, loaded and listening
            lambda: (
                len(self.built) > built
                and self.controller.engine_status.state == EngineState.READY
                and self.controller.listening
            ),
            timeout=ENGINE_TIMEOUT_MS,
        )
        assert len(self.built) == built + 1
        assert not self.window.restart_button.isVisible() and not self.window.problem_banner.isVisible()
        assert self.window.listen_button.isChecked()

    def close(self) -> None:
        self.run(self.controller.aclose())


def test_a_decode_failing_mid_utterance_is_told_and_restarting_the_engine_transcribes_again(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, speech: dict[str, Fixture]
) -> None:
    rig = Rig(qtbot, Settings())
    try:
        decode_fails_then_restart(rig, qtbot, virtual_mic, speech)
    finally:
        rig.close()


def decode_fails_then_restart(rig: Rig, qtbot: QtBot, virtual_mic: VirtualMic, speech: dict[str, Fixture]) -> None:
    assert rig.run(rig.controller.load_engine())
    (engine,) = rig.built
    assert isinstance(engine, BuiltinEngine) and engine._decoder is not None
    engine._decoder = FailingDecoder(engine._decoder)  # type: ignore[assignment]  # its next utterance fails
    rig.listen()
    assert_recognized(speech[FIRST], rig.say(virtual_mic, speech[FIRST]))

    player = virtual_mic.play(fixture_path(speech[SECOND]))  # its first partial decode raises
    window = rig.window
    qtbot.waitUntil(window.restart_button.isVisible, timeout=SPEECH_TIMEOUT_MS)
    banner = window.problem_banner.text()
    assert window.problem_banner.isVisible()
    assert banner.startswith("The built-in engine failed while transcribing (ValueError: "), banner
    assert "\n" not in banner and "Traceback" not in banner
    assert_heard_in(speech[FIRST], window.transcript_view.committed_text())  # the transcript stays
    qtbot.waitUntil(lambda: player.poll() is not None, timeout=SPEECH_TIMEOUT_MS)

    # Only that session failed: listening goes on, and what is said next reaches the same engine
    # in a new stream (transcribed, or failed at its first partial again if the rest of the
    # failed phrase got a final: the decoder fails the first partial after each final).
    assert rig.controller.listening and rig.built == [engine]
    outcomes = rig.outcomes()
    player = virtual_mic.play(fixture_path(speech[BETWEEN]))
    qtbot.waitUntil(lambda: rig.outcomes() > outcomes, timeout=SPEECH_TIMEOUT_MS)
    qtbot.waitUntil(lambda: player.poll() is not None, timeout=SPEECH_TIMEOUT_MS)

    rig.restart()
    assert_recognized(speech[THIRD], rig.say(virtual_mic, speech[THIRD]))
    text = window.transcript_view.committed_text()
    assert_heard_in(speech[FIRST], text)
    assert_heard_in(speech[THIRD], text)


def test_a_remote_server_that_stops_answering_is_told_and_restarting_the_engine_transcribes_again(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, speech: dict[str, Fixture]
) -> None:
    """The remote engine with its default time limits, on a Voxdesk server whose engine is a
    FAKE that ticks (the test is about the fault and the restart, not the words)."""
    stack = contextlib.AsyncExitStack()
    settings = Settings()
    settings.engine = EngineSettings(kind=EngineKind.REMOTE)
    rig = Rig(qtbot, settings)
    server = rig.run(stack.enter_async_context(running_server(FakeTickEngine(), ServerConfig(port=0))))
    proxy = rig.run(stack.enter_async_context(SilencingProxy(server.port)))
    try:
        settings.engine.server_url = f"ws://127.0.0.1:{proxy.port}"
        assert rig.run(rig.controller.load_engine())
        rig.listen()
        first = rig.say(virtual_mic, speech[FIRST])
        assert first.split() and set(first.split()) == {"tick"}, first

        proxy.silence = Silence.AFTER_HANDSHAKE  # the next stream's connection is taken, then nothing
        player = virtual_mic.play(fixture_path(speech[SECOND]))
        window = rig.window
        qtbot.waitUntil(window.restart_button.isVisible, timeout=SILENCE_TIMEOUT_MS)
        url = f"ws://127.0.0.1:{proxy.port}/v1/realtime"
        expected = f"The speech server at {url} stopped answering: it sent nothing within 10 s of connecting"
        assert window.problem_banner.isVisible() and window.problem_banner.text() == expected
        assert "failed" in window.engine_status.text()
        qtbot.waitUntil(lambda: not window.listen_button.isChecked(), timeout=10_000)  # it stopped listening
        assert normalize_text(first) in normalize_text(window.transcript_view.committed_text())
        qtbot.waitUntil(lambda: player.poll() is not None, timeout=SPEECH_TIMEOUT_MS)

        proxy.silence = Silence.NONE  # the server answers again
        rig.restart()
        third = rig.say(virtual_mic, speech[THIRD])
        assert third.split() and set(third.split()) == {"tick"}, third
    finally:
        rig.close()
        rig.run(stack.aclose())
