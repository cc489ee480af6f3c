"""The controller without a window: real microphone path (virtual PulseAudio mic), real
engines, a real ``voxdesk serve`` for remote mode, real dropped connections."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests import speech_fixtures
from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.random_whisper import random_whisper
from tests.recognition import assert_heard_in, assert_recognized, listed_words
from tests.serve_process import start_serve
from tests.speech_fixtures import Fixture
from tests.tcp_proxy import CuttableProxy
from tests.vllm_support import free_port
from voxdesk.app.listening.capture import AudioLevel
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import (
    ControllerEvent,
    EngineSpeed,
    EngineState,
    EngineStatus,
    ListeningChanged,
    Problem,
    UtteranceFinal,
)
from voxdesk.app.settings import EngineSettings, Settings
from voxdesk.app.textnorm import normalize_text
from voxdesk.engine import EngineKind
from voxdesk.engine.whisper.catalog import language_codes

pytestmark = pytest.mark.integration  # voxdesk serve processes and Whisper models

SPEECH_TIMEOUT = 30.0


class Events:
    """Every event the controller reported, and a way to wait for one."""

    def __init__(self, controller: Controller) -> None:
        self.seen: list[ControllerEvent] = []
        self._changed = asyncio.Event()
        controller.subscribe(self._add)

    def _add(self, event: ControllerEvent) -> None:
        if not isinstance(event, AudioLevel):
            self.seen.append(event)
            self._changed.set()

    def finals(self) -> list[str]:
        return [normalize_text(e.utterance.committed) for e in self.seen if isinstance(e, UtteranceFinal)]

    def problems(self) -> list[str]:
        return [e.message for e in self.seen if isinstance(e, Problem)]

    def states(self) -> list[EngineState]:
        return [e.state for e in self.seen if isinstance(e, EngineStatus)]

    async def until(self, condition: object, timeout: float = SPEECH_TIMEOUT) -> None:
        async def wait() -> None:
            while not condition():  # type: ignore[operator]
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), timeout)


async def say(mic: VirtualMic, events: Events, fixture: Fixture) -> str:
    """Play a phrase into the microphone; the final text it produced."""
    before = len(events.finals())
    mic.play(fixture_path(fixture))
    await events.until(lambda: len(events.finals()) > before)
    return events.finals()[-1]


@pytest.fixture(scope="module")
def serve_port() -> Iterator[int]:
    process, port = start_serve("--api-key", "sesame")
    yield port
    process.terminate()
    process.wait(timeout=30)


def remote(port: int, api_key: str = "sesame") -> EngineSettings:
    return EngineSettings(kind=EngineKind.REMOTE, server_url=f"ws://127.0.0.1:{port}", api_key=api_key)


def test_switching_engines_while_listening_keeps_listening_and_the_transcript(
    virtual_mic: VirtualMic, speech: dict[str, Fixture], serve_port: int
) -> None:
    async def scenario() -> None:
        controller = Controller(Settings())
        events = Events(controller)
        assert await controller.load_engine()
        controller.start_listening()
        assert_recognized(speech["command00-slt"], await say(virtual_mic, events, speech["command00-slt"]))

        assert await controller.switch_engine(remote(serve_port))
        assert controller.listening and controller.engine_status.state == EngineState.READY
        assert [e.listening for e in events.seen if isinstance(e, ListeningChanged)] == [True, False, True]
        assert_recognized(speech["command01-slt"], await say(virtual_mic, events, speech["command01-slt"]))

        assert await controller.switch_engine(EngineSettings(kind=EngineKind.BUILTIN))
        assert_recognized(speech["command02-slt"], await say(virtual_mic, events, speech["command02-slt"]))
        for name in ("command00-slt", "command01-slt", "command02-slt"):
            assert_heard_in(speech[name], controller.transcript.text())
        await controller.aclose()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("make_choice", "expected"),
    [
        (lambda port: remote(port, api_key="wrong"), "refused the API key"),
        (lambda port: remote(free_port()), "cannot reach the speech server"),
        (lambda port: EngineSettings(kind=EngineKind.VLLM, vllm_model="no/such-model"), ""),
        (lambda port: EngineSettings(kind=EngineKind.REMOTE, server_url=f"tcp://h:10300,ws://h:{port}"), "mix Wyoming"),
    ],
    ids=["wrong-api-key", "unreachable-server", "vllm-unavailable", "mixed-server-kinds"],
)
def test_an_engine_that_cannot_start_is_a_plain_problem_not_a_crash(
    make_choice: object, expected: str, serve_port: int
) -> None:
    async def scenario() -> None:
        settings = Settings()
        settings.engine = make_choice(serve_port)  # type: ignore[operator]
        controller = Controller(settings)
        events = Events(controller)
        assert not await controller.load_engine()
        assert controller.engine_status.state == EngineState.FAILED
        (problem,) = events.problems()
        assert expected in problem and "Traceback" not in problem
        controller.start_listening()  # nothing to listen with: said so, nothing raised
        assert not controller.listening and "no speech engine is running" in events.problems()[-1]
        assert await controller.switch_engine(EngineSettings(kind=EngineKind.BUILTIN))  # the user picks another one
        await controller.aclose()

    asyncio.run(scenario())


def test_remote_connection_dropped_mid_utterance_reconnects_and_loses_no_words(
    virtual_mic: VirtualMic, speech: dict[str, Fixture], serve_port: int
) -> None:
    async def scenario() -> None:
        async with CuttableProxy(serve_port) as proxy:
            settings = Settings()
            settings.engine = remote(proxy.port)
            controller = Controller(settings)
            events = Events(controller)
            assert await controller.load_engine()
            controller.start_listening()
            first = await say(virtual_mic, events, speech["command00-slt"])
            virtual_mic.play(fixture_path(speech["command01-slt"]))
            await asyncio.sleep(1.2)  # into the phrase: its stream is open
            proxy.cut()
            await events.until(lambda: EngineState.RECONNECTING in events.states())
            await events.until(lambda: len(events.finals()) >= 2)
            await events.until(lambda: controller.engine_status.state == EngineState.READY)
            after = await say(virtual_mic, events, speech["command02-slt"])
            assert_recognized(speech["command00-slt"], first)
            assert_recognized(speech["command01-slt"], events.finals()[1])  # its audio was replayed
            assert_recognized(speech["command02-slt"], after)
            assert first in normalize_text(controller.transcript.text())
            await controller.aclose()

    asyncio.run(scenario())


def test_hold_to_talk_listens_while_held_and_finishes_the_utterance_on_release(
    virtual_mic: VirtualMic, speech: dict[str, Fixture]
) -> None:
    async def scenario() -> None:
        controller = Controller(Settings())
        events = Events(controller)
        loading = asyncio.ensure_future(controller.load_engine())
        await events.until(lambda: EngineState.LOADING in events.states())
        controller.hold_pressed()  # pressed while the engine loads: listening starts once it is ready
        await loading
        await events.until(lambda: controller.listening)
        player = virtual_mic.play(fixture_path(speech["command09-slt"]))
        await asyncio.to_thread(player.wait)
        controller.hold_released()  # straight after the phrase, before the silence that would end it
        await events.until(lambda: not controller.listening and len(events.finals()) == 1)
        assert_recognized(speech["command09-slt"], events.finals()[0])
        controller.toggle_listening()
        assert controller.listening
        controller.hold_released()  # not started by holding: releasing does not stop it
        assert controller.listening
        await controller.aclose()

    asyncio.run(scenario())


def test_a_model_too_slow_for_the_limit_is_reported_with_its_real_time_factor(
    virtual_mic: VirtualMic, speech: dict[str, Fixture]
) -> None:
    """A limit of 0 s makes tiny.en "too slow" on any machine; the real decode times are reported."""

    async def scenario() -> None:
        controller = Controller(Settings(), final_latency_limit=0.0)
        events = Events(controller)
        assert await controller.load_engine()
        assert " int8" in controller.engine_status.detail or "float16" in controller.engine_status.detail
        controller.start_listening()
        for name in ("command00-slt", "command01-slt"):
            await say(virtual_mic, events, speech[name])
        assert not [e for e in events.seen if isinstance(e, EngineSpeed)]  # two utterances are not enough
        await say(virtual_mic, events, speech["command02-slt"])
        (speed,) = [e for e in events.seen if isinstance(e, EngineSpeed)]
        assert speed.too_slow and 0.0 < speed.real_time_factor < 5.0
        assert "is too slow for this machine" in speed.message and f"{speed.real_time_factor:.2f}" in speed.message
        await controller.aclose()

    asyncio.run(scenario())


def test_the_multilingual_random_model_detects_a_language_for_each_utterance_from_the_microphone(
    virtual_mic: VirtualMic, speech: dict[str, Fixture]
) -> None:
    """Its words are meaningless; the detected language, one of the model's codes, is what is checked."""
    settings = Settings()
    settings.engine.whisper_model = str(random_whisper("tiny"))

    async def scenario() -> None:
        controller = Controller(settings)
        events = Events(controller)
        assert await controller.load_engine()
        controller.start_listening()
        mic_text = await say(virtual_mic, events, speech["command01-slt"])
        await controller.aclose()
        (final,) = [e.utterance for e in events.seen if isinstance(e, UtteranceFinal)]
        assert mic_text and final.language in language_codes()

    asyncio.run(scenario())


def test_the_writing_vocabulary_biases_what_the_built_in_engine_hears_from_the_microphone(
    virtual_mic: VirtualMic,
) -> None:
    # The held-out sentences whose listed words the engine gets wrong without a vocabulary
    # (benchmarks/README.md: "read us", "Olu as soon", "Tad ... jinx", "jump-highter").
    said = ["We moved the build cache to Redis last week.", "Please book a call with Oluwaseun on Thursday."]
    said += ["Ask Tadhg to restart the Nginx server.", "Rahul will demo the Jupyter notebook after lunch."]
    fixtures = {f.text: f for f in speech_fixtures.build_vocabulary() if f.voice == "slt"}
    settings = Settings()
    settings.writing.vocabulary = speech_fixtures.HELD_OUT_VOCABULARY_LINES + speech_fixtures.VOCABULARY_LINES
    entries = [line.split("=")[0].strip() for line in settings.writing.vocabulary]

    async def scenario() -> list[str]:
        controller = Controller(settings)
        events = Events(controller)
        assert await controller.load_engine()
        controller.start_listening()
        for text in said:
            player = virtual_mic.play(fixture_path(fixtures[text]))
            await asyncio.to_thread(player.wait)
        await controller.stop_listening()  # the utterance in progress is finished
        await controller.aclose()
        return [e.utterance.committed for e in events.seen if isinstance(e, UtteranceFinal)]

    heard = asyncio.run(scenario())
    listed, right, inserted = listed_words(entries, [" ".join(said)], [" ".join(heard)])
    # 4 of the 5 on this machine through the file path; one of margin for the microphone's.
    assert listed == 5 and right >= 3 and inserted == 0, heard
