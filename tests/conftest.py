"""Shared fixtures: synthesized speech, one loaded built-in engine, cached transcriptions, a
virtual microphone and X display, and settings kept away from the user's own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest

from tests import speech_fixtures
from tests.desktop_rig import (
    NotificationDaemon,
    RigUnavailable,
    SessionBus,
    VirtualMic,
    WindowManager,
    XvfbDisplay,
)
from tests.llm_support import CHAT_MODEL_NAME, start_llm_server, tiny_text_model
from tests.speech_fixtures import Fixture
from tests.text_field import TextField
from tests.vllm_support import EngineLoop, build_tiny_model, start_vllm_server, stop
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import TranscriptionReport, transcribe_audio
from voxdesk.app.llm.client import Llm, OpenAiCompatibleLlm
from voxdesk.app.llm.in_process import InProcessLlm
from voxdesk.engine.whisper.builtin import BuiltinEngine

pytest_plugins = ["tests.fake_llm"]  # its fake_llm fixture

T = TypeVar("T")


@pytest.fixture(scope="session")
def speech() -> dict[str, Fixture]:
    """Every synthesized fixture by name (built on first use, then reused)."""
    return {f.name: f for f in speech_fixtures.build()}


@pytest.fixture(scope="session")
def fixture_audio(speech: dict[str, Fixture]) -> dict[str, np.ndarray]:
    """Decoded 16 kHz audio of every fixture."""
    return {name: read_audio(fixture_path(f)) for name, f in speech.items()}


def fixture_path(fixture: Fixture) -> Path:
    return speech_fixtures.DEFAULT_DIR / fixture.path


@pytest.fixture(scope="session")
def engine() -> Iterator[BuiltinEngine]:
    """One loaded built-in engine for the whole run (loading takes about a second)."""
    built = BuiltinEngine()
    asyncio.run(built.load())
    yield built
    asyncio.run(built.aclose())


@pytest.fixture(scope="session")
def fast_transcripts(engine: BuiltinEngine, fixture_audio: dict[str, np.ndarray]) -> dict[str, TranscriptionReport]:
    """Each fixture transcribed once, audio fed as fast as the engine takes it (lazily)."""

    class Cache(dict[str, TranscriptionReport]):
        def __missing__(self, name: str) -> TranscriptionReport:
            report = asyncio.run(transcribe_audio(engine, fixture_audio[name], realtime=False))
            self[name] = report
            return report

    return Cache()


RIG_FIXTURES = frozenset(
    {
        "engine",
        "fast_transcripts",
        "speech",
        "fixture_audio",
        "virtual_mic",
        "x_display",
        "x_desktop",
        "notification_daemon",
        "vllm_server",
        "llm_server",
        "chat_runtime",
    }
)
"""Fixtures that load a model, synthesize speech or start a device or display: a test using one
is an integration test, left out of ``make check``."""


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before pytest-qt creates the QApplication


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a rig fixture ``integration`` (modules that start processes or
    load models mark themselves)."""
    for item in items:
        if RIG_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)


_MIC_NEEDED = False


def pytest_collection_finish(session: pytest.Session) -> None:
    global _MIC_NEEDED
    _MIC_NEEDED = any("virtual_mic" in getattr(item, "fixturenames", ()) for item in session.items)


@pytest.fixture(scope="session", autouse=True)
def sound_server_first(request: pytest.FixtureRequest) -> None:
    """When any test of the run uses the virtual microphone, it starts before the first test:
    PortAudio sees only the sound servers that run when it initializes, and any test may be the
    first to initialize it (a spoken reply plays through it)."""
    if _MIC_NEEDED:
        with contextlib.suppress(pytest.skip.Exception):  # no rig: the tests that need it skip, saying why
            request.getfixturevalue("virtual_mic")


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Settings, commands, history and logs in a fresh folder, never the user's own, and API keys
    in no keyring (keyring's ``fail`` backend); the ``voxdesk`` logger as it was before the test."""
    home = tmp_path_factory.mktemp("voxdesk-home")
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("VOXDESK_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("VOXDESK_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("VOXDESK_LOG_DIR", str(home / "logs"))
    monkeypatch.delenv("VOXDESK_LOG", raising=False)
    voxdesk_logger = logging.getLogger("voxdesk")
    handlers, level = list(voxdesk_logger.handlers), voxdesk_logger.level
    yield
    for handler in set(voxdesk_logger.handlers) - set(handlers):
        voxdesk_logger.removeHandler(handler)
        handler.close()
    voxdesk_logger.setLevel(level)


def _rig_unavailable(reason: str) -> None:
    if os.environ.get("REQUIRE_VMIC") == "1":
        pytest.fail(f"the desktop test rig is required (REQUIRE_VMIC=1) but unavailable: {reason}")
    pytest.skip(f"desktop test rig unavailable: {reason}")


@pytest.fixture(scope="session")
def virtual_mic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VirtualMic]:
    """A PulseAudio virtual microphone, the default input device while the session runs."""
    mic = VirtualMic(tmp_path_factory.mktemp("vmic"))
    try:
        mic.start()
    except RigUnavailable as exc:
        _rig_unavailable(str(exc))
    os.environ.update(mic.environment)
    yield mic
    mic.stop()


@pytest.fixture(scope="session")
def x_display(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An Xvfb display; its DISPLAY value."""
    display = XvfbDisplay(tmp_path_factory.mktemp("xvfb"))
    try:
        value = display.start()
    except RigUnavailable as exc:
        _rig_unavailable(str(exc))
    yield value
    display.stop()


@pytest.fixture(scope="session")
def x_desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An Xvfb display with a window manager that focuses new windows; its DISPLAY value."""
    directory = tmp_path_factory.mktemp("x-desktop")
    display = XvfbDisplay(directory)
    try:
        value = display.start()
        manager = WindowManager(directory, value)
        manager.start()
    except RigUnavailable as exc:
        display.stop()
        _rig_unavailable(str(exc))
    yield value
    manager.stop()
    display.stop()


@pytest.fixture
def notification_daemon(
    x_display: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[NotificationDaemon]:
    """dunst on its own session bus (``DBUS_SESSION_BUS_ADDRESS`` set to it) and the X display."""
    directory = tmp_path_factory.mktemp("notifications")
    bus = SessionBus(directory)
    address = bus.start()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    daemon = NotificationDaemon(directory, x_display, address)
    try:
        daemon.start()
    except RigUnavailable as exc:
        bus.stop()
        _rig_unavailable(str(exc))
    yield daemon
    daemon.stop()
    bus.stop()


@pytest.fixture
def field(x_display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TextField]:
    """A real text field in another process on the Xvfb display, focused; DISPLAY points there."""
    monkeypatch.setenv("DISPLAY", x_display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    opened = TextField(x_display, tmp_path / "field.txt")
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def vllm_server() -> Iterator[int]:
    """vLLM's own server (``vllm.entrypoints.openai.api_server``) with the tiny model; its port."""
    process, port = start_vllm_server(build_tiny_model())
    yield port
    stop(process)


@pytest.fixture(scope="session")
def llm_server() -> Iterator[str]:
    """vLLM's OpenAI-compatible server on the tiny chat model; its API's base URL."""
    process, url = start_llm_server()
    yield url
    stop(process)


@dataclass
class ChatRuntime:
    """One runtime of the assistant's LLM on the tiny chat model: the model, the name it goes by,
    and the loop to ask it on (an in-process model is bound to the loop it loaded on)."""

    name: str
    llm: Llm
    model: str
    runner: EngineLoop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.runner.run(coroutine)


@pytest.fixture(scope="session")
def in_process_llm() -> Iterator[tuple[InProcessLlm, EngineLoop]]:
    """The tiny chat model loaded once by vLLM in this process, and its loop."""
    llm, runner = InProcessLlm(tiny_text_model()), EngineLoop()
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)  # it would override kv_cache_memory_bytes
        patch.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # about 0.5 GB less, as for the server
        runner.run(llm.prepare())
    yield llm, runner
    runner.run(llm.aclose())


@pytest.fixture(params=["server", "in-process"])
def chat_runtime(request: pytest.FixtureRequest) -> Iterator[ChatRuntime]:
    """Each runtime in turn: vLLM's OpenAI-compatible server through the SDK, then vLLM in this process."""
    if request.param == "in-process":
        llm, runner = request.getfixturevalue("in_process_llm")
        yield ChatRuntime("in-process", llm, llm.settings.model, runner)
        return
    server = OpenAiCompatibleLlm(request.getfixturevalue("llm_server"))  # no model named: the server's only one
    runtime = ChatRuntime("server", server, CHAT_MODEL_NAME, EngineLoop())
    yield runtime
    runtime.run(server.aclose())
    runtime.runner.loop.close()
