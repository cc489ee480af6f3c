"""Voxdesk's Wyoming engine against servers built on the official ``wyoming`` package: one
shaped like wyoming-faster-whisper's ``DispatchEventHandler`` (reference §7: no streaming,
connection closed after ``transcript``), one that fails in each way a server can."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pytest
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import AsrModel, AsrProgram, Attribution, Describe, Info
from wyoming.server import AsyncEventHandler, AsyncTcpServer

from voxdesk.engine import EngineUnavailable, StreamError, StreamErrorCode, TextDelta, UtteranceDone
from voxdesk.engine.events import EngineEvent
from voxdesk.engine.remote.wyoming import WyomingEngine, WyomingSettings

ATTRIBUTION = Attribution(name="test", url="https://example.org")
INFO = Info(
    asr=[
        AsrProgram(
            name="faster-whisper",
            attribution=ATTRIBUTION,
            installed=True,
            description=None,
            version="3.5.0",
            models=[
                AsrModel(
                    name="tiny",
                    attribution=ATTRIBUTION,
                    installed=True,
                    description=None,
                    version=None,
                    languages=["de", "en", "fr"],
                )
            ],
        )
    ]
)


@dataclass
class Received:
    """What the server saw."""

    language: str | None = None
    formats: list[tuple[int, int, int]] = field(default_factory=list)
    audio_bytes: int = 0


class FasterWhisperLike(AsyncEventHandler):
    """wyoming-faster-whisper's handler shape, with a fixed answer instead of a model."""

    def __init__(self, answer: Callable[[Received], list[Event] | None], seen: Received, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.answer = answer
        self.seen = seen

    async def handle_event(self, event: Event) -> bool:
        if Describe.is_type(event.type):
            await self.write_event(INFO.event())
        elif Transcribe.is_type(event.type):
            self.seen.language = Transcribe.from_event(event).language
        elif AudioStart.is_type(event.type) or AudioChunk.is_type(event.type):
            chunk = AudioChunk.from_event(event) if AudioChunk.is_type(event.type) else AudioStart.from_event(event)
            self.seen.formats.append((chunk.rate, chunk.width, chunk.channels))
            self.seen.audio_bytes += len(getattr(chunk, "audio", b""))
        elif AudioStop.is_type(event.type):
            events = self.answer(self.seen)
            for reply in events or []:
                await self.write_event(reply)
            return False  # closes the connection, as wyoming-faster-whisper does
        return True


@contextlib.asynccontextmanager
async def library_server(answer: Callable[[Received], list[Event] | None]) -> AsyncIterator[tuple[int, Received]]:
    seen = Received()
    server = AsyncTcpServer("127.0.0.1", 0)
    await server.start(partial(FasterWhisperLike, answer, seen))
    assert isinstance(server._server, asyncio.Server)
    try:
        yield server._server.sockets[0].getsockname()[1], seen
    finally:
        await server.stop()


async def run_engine(port: int | str, **settings: Any) -> list[EngineEvent]:
    """One second of audio through a loaded engine (``port``: one, or several comma-separated)."""
    url = ",".join(f"tcp://127.0.0.1:{one}" for one in str(port).split(","))
    engine = WyomingEngine(WyomingSettings(url=url, read_timeout=10, **settings))
    await engine.load()

    async def audio() -> AsyncIterator[np.ndarray]:
        for _ in range(10):
            yield np.full(1600, 0.25, np.float32)

    return [event async for event in engine.stream(audio())]


def test_a_faster_whisper_style_server_transcribes() -> None:
    async def scenario() -> tuple[list[EngineEvent], Received]:
        async with library_server(lambda seen: [Transcript(text=" Hallo Welt.").event()]) as (port, seen):
            return await run_engine(port, language="de"), seen

    events, seen = asyncio.run(scenario())
    delta, done = events
    assert isinstance(delta, TextDelta) and isinstance(done, UtteranceDone)
    assert delta.text == done.text == " Hallo Welt." and done.audio_time == pytest.approx(1.0)
    assert seen.language == "de" and set(seen.formats) == {(16000, 2, 1)} and seen.audio_bytes == 32000


def test_errors_before_the_transcript_are_reported_and_the_text_still_arrives() -> None:
    answer = [Error(text="model busy", code="processing_error").event(), Transcript(text="ok").event()]

    async def scenario() -> list[EngineEvent]:
        async with library_server(lambda seen: answer) as (port, _):
            return await run_engine(port)

    error, delta, done = asyncio.run(scenario())
    assert isinstance(error, StreamError) and not error.fatal and error.code == StreamErrorCode.PROCESSING_ERROR
    assert isinstance(delta, TextDelta) and isinstance(done, UtteranceDone) and done.text == "ok"


def test_a_server_that_closes_without_a_transcript_is_a_lost_connection() -> None:
    async def scenario() -> list[EngineEvent]:
        async with library_server(lambda seen: None) as (port, _):
            return await run_engine(port, max_retries=0)

    (error,) = asyncio.run(scenario())
    assert isinstance(error, StreamError) and error.fatal and error.code == StreamErrorCode.CONNECTION_LOST


def test_the_request_goes_on_whole_with_the_next_server_when_one_closes_without_a_transcript() -> None:
    async def scenario() -> tuple[list[EngineEvent], Received, Received]:
        async with (
            library_server(lambda seen: None) as (failing, lost),
            library_server(lambda seen: [Transcript(text="ok").event()]) as (answering, seen),
        ):
            return await run_engine(f"{failing},{answering}", max_retries=1), lost, seen

    events, lost, seen = asyncio.run(scenario())
    error, delta, done = events
    assert isinstance(error, StreamError) and not error.fatal and error.code == StreamErrorCode.CONNECTION_LOST
    assert "going on with tcp://127.0.0.1:" in error.message
    assert isinstance(delta, TextDelta) and isinstance(done, UtteranceDone) and done.text == "ok"
    assert lost.audio_bytes == seen.audio_bytes == 32000, "the second server did not get the whole second"


def test_loading_checks_the_language_and_the_model() -> None:
    async def scenario(**settings: str) -> str:
        async with library_server(lambda seen: None) as (port, _):
            with pytest.raises(EngineUnavailable) as refused:
                await run_engine(port, **settings)
            return str(refused.value)

    assert "has no model for language ja" in asyncio.run(scenario(language="ja"))
    assert "has no model large-v3; it offers: tiny (de en fr)" in asyncio.run(scenario(model="large-v3"))


def test_an_unreachable_server_cannot_load() -> None:
    engine = WyomingEngine(WyomingSettings(url="tcp://127.0.0.1:9", connect_timeout=5))
    with pytest.raises(EngineUnavailable, match="cannot reach the Wyoming server"):
        asyncio.run(engine.load())
