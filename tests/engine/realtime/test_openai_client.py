"""Voxdesk's OpenAI Realtime engine against ``voxdesk serve``'s OpenAI dialect, through real sockets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator

import numpy as np
import pytest

from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from tests.tcp_proxy import CuttableProxy
from voxdesk.app.files.transcription import transcribe_audio
from voxdesk.engine import EngineUnavailable, StreamError, TextDelta, TextRetracted, UtteranceDone
from voxdesk.engine.events import EngineEvent
from voxdesk.engine.remote.openai import OpenAIRealtimeEngine, OpenAISettings, openai_realtime_url
from voxdesk.engine.session import ProgressCallback
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.server.realtime.server import ServerConfig, running_server


class SlowFinalEngine:
    """FAKE engine: :class:`FakeTickEngine`'s ticks, then after the audio ends a pause and one
    more delta, so that a test can cut the connection between the first text and the last."""

    name = "fake-slow-final"
    detects_speech = False

    def __init__(self, pause: float) -> None:
        self.pause = pause

    async def load(self, progress: ProgressCallback | None = None) -> None:
        """Nothing to load."""

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        return self._run(audio)

    async def _run(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        text = ""
        async for event in FakeTickEngine().stream(audio):
            if isinstance(event, UtteranceDone):
                await asyncio.sleep(self.pause)
                yield TextDelta("end.", event.audio_time)
                yield UtteranceDone(text + "end.", event.audio_time, 0.0, event.audio_time)
            else:
                text += event.text if isinstance(event, TextDelta) else ""
                yield event

    async def aclose(self) -> None:
        """Nothing to release."""


def _paced(audio: np.ndarray, pause: float = 0.02) -> AsyncIterator[np.ndarray]:
    async def chunks() -> AsyncIterator[np.ndarray]:
        for start in range(0, len(audio), 1600):
            await asyncio.sleep(pause)
            yield audio[start : start + 1600]

    return chunks()


def test_urls_are_built_as_the_sdk_builds_them() -> None:
    assert openai_realtime_url("ws://127.0.0.1:8000") == "ws://127.0.0.1:8000/v1/realtime?intent=transcription"
    assert openai_realtime_url("ws://h:1/v1/") == "ws://h:1/v1/realtime?intent=transcription"
    assert openai_realtime_url("http://h:1/v1") == "ws://h:1/v1/realtime?intent=transcription"
    assert openai_realtime_url("https://h/realtime?model=m") == "wss://h/realtime?model=m&intent=transcription"
    url = "wss://api.openai.com/v1/realtime?intent=transcription"
    assert openai_realtime_url(url) == url


def test_openai_engine_transcribes_through_voxdesk_serve(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    name = "command09-slt"

    async def scenario() -> list[EngineEvent]:
        async with running_server(engine, ServerConfig(port=0, api_key="sk-right")) as server:
            settings = OpenAISettings(
                url=f"ws://127.0.0.1:{server.port}/v1", model="gpt-4o-transcribe", api_key="sk-right"
            )
            remote = OpenAIRealtimeEngine(settings)
            await remote.load()
            report = await transcribe_audio(remote, fixture_audio[name], realtime=False)
            return [t.event for t in report.timeline]

    events = asyncio.run(scenario())
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert not [e for e in events if isinstance(e, StreamError)]
    assert "".join(deltas) == done.text
    assert_recognized(speech[name], done.text)


def test_a_refused_key_and_an_unreachable_server_are_clear_errors() -> None:
    async def scenario() -> None:
        async with running_server(FakeTickEngine(), ServerConfig(port=0, api_key="sk-right")) as server:
            url = f"ws://127.0.0.1:{server.port}"
            with pytest.raises(EngineUnavailable, match="refused the API key"):
                await OpenAIRealtimeEngine(OpenAISettings(url=url, api_key="sk-wrong")).load()
            port = server.port
        with pytest.raises(EngineUnavailable, match="cannot reach"):
            await OpenAIRealtimeEngine(OpenAISettings(url=f"ws://127.0.0.1:{port}")).load()

    asyncio.run(scenario())


def test_empty_and_very_short_audio_end_with_an_empty_utterance() -> None:
    async def scenario() -> list[str]:
        async with running_server(FakeTickEngine(), ServerConfig(port=0)) as server:
            remote = OpenAIRealtimeEngine(OpenAISettings(url=f"ws://127.0.0.1:{server.port}"))
            texts = []
            for audio in (np.zeros(0, np.float32), np.zeros(160, np.float32)):  # nothing; 10 ms
                events = [e async for e in remote.stream(_paced(audio))]
                assert not [e for e in events if isinstance(e, StreamError)], events
                texts += [e.text for e in events if isinstance(e, UtteranceDone)]
            return texts

    assert asyncio.run(scenario()) == ["tick ", "tick "]  # padded to OpenAI's 100 ms minimum commit


def test_a_connection_dropped_before_the_commit_loses_no_audio() -> None:
    audio = np.full(16_000 * 3, 0.1, np.float32)  # 3 s: 37 ticks

    async def scenario() -> tuple[list[EngineEvent], int]:
        async with (
            running_server(FakeTickEngine(), ServerConfig(port=0)) as server,
            CuttableProxy(server.port) as proxy,
        ):
            remote = OpenAIRealtimeEngine(OpenAISettings(url=f"ws://127.0.0.1:{proxy.port}"))

            async def cut_midway() -> None:
                await asyncio.sleep(1.0)
                proxy.cut()

            cutting = asyncio.create_task(cut_midway())
            events = [e async for e in remote.stream(_paced(audio, pause=0.1))]  # real time: 3 s
            await cutting
            return events, proxy.cuts

    events, cuts = asyncio.run(scenario())
    assert cuts == 1
    lost = [e for e in events if isinstance(e, StreamError)]
    assert [(e.code, e.fatal) for e in lost] == [("connection_lost", False)]
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert done.text == "tick " * 37, "audio sent before the drop was lost"


def test_text_received_before_a_drop_is_retracted_and_the_new_session_gives_the_whole_text() -> None:
    audio = np.full(16_000 * 2, 0.1, np.float32)  # 2 s of ticks, then "end." after a pause

    async def scenario() -> tuple[list[EngineEvent], int]:
        async with (
            running_server(SlowFinalEngine(pause=1.0), ServerConfig(port=0)) as server,
            CuttableProxy(server.port) as proxy,
        ):
            remote = OpenAIRealtimeEngine(OpenAISettings(url=f"ws://127.0.0.1:{proxy.port}"))
            events: list[EngineEvent] = []
            async for event in remote.stream(_paced(audio, pause=0.0)):
                events.append(event)
                if isinstance(event, TextDelta) and proxy.cuts == 0:
                    proxy.cut()
            return events, proxy.cuts

    events, cuts = asyncio.run(scenario())
    assert cuts == 1
    assert [(e.code, e.fatal) for e in events if isinstance(e, StreamError)] == [("connection_lost", False)]
    [retracted] = [i for i, e in enumerate(events) if isinstance(e, TextRetracted)]
    before = "".join(e.text for e in events[:retracted] if isinstance(e, TextDelta))
    after = "".join(e.text for e in events[retracted:] if isinstance(e, TextDelta))
    assert before == "tick " * before.count("tick") and before.count("tick") >= 24, "the text before the drop"
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert after == done.text == "tick " * done.text.count("tick") + "end.", "the new session's text is not whole"
    assert done.text.count("tick") >= before.count("tick"), "audio was lost in the replay"
