"""The remote engine: the streaming-session interface over any ``/v1/realtime`` server.

Works against vLLM's server and ``voxdesk serve`` alike, following the client checklist
(``docs/realtime-protocol.md`` §16): ``session.update`` without waiting for an answer, one
non-final commit per stream, audio as base64 PCM16 at 16 kHz, then ``final`` and a wait for
``transcription.done``.

Several servers may be given (``url`` lists them, separated by commas). A refused or dropped
connection is reported as a non-fatal ``StreamError`` (``connection_lost``) and the session
moves to the next server, with backoff once every server has failed in a row
(:mod:`voxdesk.engine.failover`, shared with the other client engines). Nothing heard is lost:
the client keeps the stream's audio until the server finalizes it (``transcription.done``),
and on a new connection it sends ``TextRetracted`` (the lost server's unfinished text is
withdrawn) and replays that audio, so the new server's deltas make the whole final text.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import ssl
import urllib.error
import urllib.request
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.events import (
    EngineEvent,
    ProvisionalText,
    StreamError,
    StreamErrorCode,
    TextDelta,
    UtteranceDone,
    UtteranceStats,
)
from voxdesk.engine.failover import Failover, HeardAudio, ServerLost, Servers, backoff, split_urls
from voxdesk.engine.remote.refusals import KeyRefused, refused_or_lost
from voxdesk.engine.session import SAMPLE_RATE, ProgressCallback
from voxdesk.engine.wire.realtime.events import (
    ErrorEvent,
    InputAudioBufferAppend,
    InputAudioBufferCommit,
    SessionUpdate,
    TranscriptionDelta,
    TranscriptionDone,
    TranscriptionProvisional,
    parse_server_event,
)

__all__ = ["RemoteEngine", "RemoteSettings", "backoff", "encode_audio", "split_urls"]

_REPLAY_SAMPLES = SAMPLE_RATE  # audio per append message when replaying to a new server

# Errors after which retrying the same request cannot help.
_FATAL_CODES = {StreamErrorCode.MODEL_NOT_FOUND, StreamErrorCode.INVALID_EVENT, StreamErrorCode.MODEL_NOT_VALIDATED}


def _stream_code(code: str | None) -> StreamErrorCode:
    """A server's ``error.code`` as a stream error code; one Voxdesk does not know is ``error``."""
    try:
        return StreamErrorCode(code or StreamErrorCode.ERROR)
    except ValueError:
        return StreamErrorCode.ERROR


@dataclass(frozen=True)
class RemoteSettings:
    """Where the server is and how to talk to it."""

    url: str  # ws://host:port or wss://host:port, with or without /v1/realtime; several: comma-separated
    model: str = ""
    api_key: str | None = None
    provisional: bool = True  # ask for Voxdesk's provisional-text extension (vLLM ignores it)
    max_retries: int = 5  # failed rounds over every server in a row before the session gives up
    open_timeout: float = 10.0
    ca_file: str | None = None  # extra CA certificate(s) to trust for wss:// (e.g. a self-signed server)


def encode_audio(samples: np.ndarray) -> str:
    """Float32 samples in [-1, 1] to base64 PCM16 little-endian, as vLLM's clients do."""
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2")
    return base64.b64encode(pcm.tobytes()).decode("ascii")


def realtime_url(url: str) -> str:
    """``url`` with the ``/v1/realtime`` path added when it has none."""
    base = url.rstrip("/")
    return base if base.endswith("/v1/realtime") else base + "/v1/realtime"


class RemoteEngine:
    """A speech engine on a ``/v1/realtime`` server. See :mod:`voxdesk.engine.session`."""

    name = "remote"
    detects_speech = False

    def __init__(self, settings: RemoteSettings) -> None:
        self.settings = settings
        self.servers = Servers([realtime_url(url) for url in split_urls(settings.url)] or [realtime_url(settings.url)])

    @property
    def url(self) -> str:
        """The server sessions start on now: the last one that answered."""
        return self.servers.url

    async def load(self, progress: ProgressCallback | None = None) -> None:
        """Check that a server answers (the first that does becomes current), accepts the key
        and serves the model.

        Raises:
            EngineUnavailable: no server reachable, a refused key, or a model it does not serve.
        """

        async def probe() -> None:
            if progress:
                progress(f"connecting to {self.url}", 0.0)
            with refused_or_lost(self._refusal, f"cannot reach the speech server at {self.url}"):
                async with self.connect() as socket:
                    await socket.recv()  # session.created

        await self.servers.first_answering(probe)
        if self.settings.model:
            served = await asyncio.to_thread(self._served_models)
            if served is not None and self.settings.model not in served:
                raise EngineUnavailable(
                    f"the server does not serve model {self.settings.model!r}; it serves: {', '.join(served)}"
                )
        if progress:
            progress("connected", 1.0)

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        """Open one session over ``audio``; see :mod:`voxdesk.engine.session`."""
        return _RemoteSession(self, audio).run()

    async def aclose(self) -> None:
        """Nothing to release: connections live only as long as their session."""

    def connect(self) -> connect:
        """A connection to the server's ``/v1/realtime`` (use with ``async with``)."""
        return connect(
            self.url,
            additional_headers=self._http_headers(),
            open_timeout=self.settings.open_timeout,
            max_size=2**24,
            ssl=self._ssl_context(),
        )

    def _ssl_context(self) -> ssl.SSLContext | None:
        if not self.url.startswith("wss://"):
            return None
        return ssl.create_default_context(cafile=self.settings.ca_file)

    def _refusal(self, refused: InvalidStatus) -> str:
        status = refused.response.status_code
        if status == 401:
            return f"the speech server at {self.url} refused the API key (HTTP 401)"
        return f"the speech server at {self.url} refused the connection (HTTP {status})"

    def _served_models(self) -> list[str] | None:
        """Model ids from ``GET /v1/models``; ``None`` when the server has no such endpoint."""
        http_url = self.url.replace("ws", "http", 1).removesuffix("/realtime") + "/models"
        request = urllib.request.Request(http_url, headers=self._http_headers())
        try:
            with urllib.request.urlopen(
                request, timeout=self.settings.open_timeout, context=self._ssl_context()
            ) as response:
                return [str(m["id"]) for m in json.load(response)["data"]]
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError):
            return None

    def _http_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}


class _RemoteSession:
    """One stream over as many connections, to as many servers, as it takes."""

    def __init__(self, engine: RemoteEngine, audio: AsyncIterable[np.ndarray]) -> None:
        self._engine = engine
        self._audio = HeardAudio(audio)  # the server finalizes it only with done
        self._failover = Failover(engine.servers, engine.settings.max_retries, "speech server")
        self._text = ""  # this connection's deltas
        self._tokens = (0, 0)
        self._committed = False  # the final commit went out on the current connection

    def run(self) -> AsyncIterator[EngineEvent]:
        return self._failover.run(self._attempt, self._audio)

    async def _attempt(self) -> AsyncIterator[EngineEvent]:
        """One connection to the current server and its generation, from the first sample heard.

        Raises:
            ServerLost: the server refused the connection (other than for the key) or dropped it.
        """
        engine = self._engine
        self._text = ""  # the new server transcribes the whole stream again
        try:
            with refused_or_lost(engine._refusal):
                async with engine.connect() as socket:
                    await socket.recv()  # session.created
                    async for event in self._generation(socket):
                        yield event
        except KeyRefused as refused:
            yield StreamError(StreamErrorCode.UNAUTHORIZED, str(refused), self._audio.seconds)

    async def _generation(self, socket: ClientConnection) -> AsyncIterator[EngineEvent]:
        settings = self._engine.settings
        await socket.send(SessionUpdate(model=settings.model, provisional=settings.provisional).to_json())
        await socket.send(InputAudioBufferCommit(final=False).to_json())
        self._committed = False
        sender = asyncio.create_task(self._send_audio(socket))
        try:
            while True:
                frame = await self._receive(socket, sender)
                event = parse_server_event(frame)
                if isinstance(event, TranscriptionDelta) and event.delta:
                    self._text += event.delta
                    yield TextDelta(event.delta, self._audio.seconds)
                elif isinstance(event, TranscriptionProvisional):
                    yield ProvisionalText(event.text, self._audio.seconds)
                elif isinstance(event, TranscriptionDone):
                    if event.usage is not None:
                        self._tokens = (event.usage.prompt_tokens, event.usage.completion_tokens or 0)
                    yield self._done()
                    return
                elif isinstance(event, ErrorEvent):
                    if event.code == StreamErrorCode.SERVER_SHUTDOWN and not self._committed:
                        # The server ends the utterance early with what it has: another one
                        # transcribes all of it instead.
                        raise ServerLost(f"the server is shutting down: {event.error}")
                    fatal = event.code in _FATAL_CODES or event.code == StreamErrorCode.PROCESSING_ERROR
                    yield StreamError(_stream_code(event.code), event.error, self._audio.seconds, fatal=fatal)
                    if fatal:
                        return
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await sender

    @staticmethod
    async def _receive(socket: ClientConnection, sender: asyncio.Task[None]) -> str:
        """The next text frame; re-raises a failure of the audio sender (bad audio) at once."""
        receiving = asyncio.ensure_future(socket.recv())
        waiting: set[asyncio.Future[Any]] = {receiving}
        if not sender.done():
            waiting.add(sender)
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if sender.done() and not sender.cancelled() and sender.exception() is not None:
            receiving.cancel()
            raise sender.exception()  # type: ignore[misc]
        try:
            frame = await receiving
        except ConnectionClosed as closed:
            raise ServerLost(f"closed with code {closed.rcvd.code if closed.rcvd else 1006}") from closed
        return frame if isinstance(frame, str) else frame.decode()

    async def _send_audio(self, socket: ClientConnection) -> None:
        """The audio heard so far (a new server's replay), then the rest as it comes, then the final commit."""
        for piece in self._audio.replay(_REPLAY_SAMPLES):
            await socket.send(InputAudioBufferAppend(audio=encode_audio(piece)).to_json())
        while (chunk := await self._audio.next()) is not None:
            if len(chunk):
                await socket.send(InputAudioBufferAppend(audio=encode_audio(chunk)).to_json())
        await socket.send(InputAudioBufferCommit(final=True).to_json())
        self._committed = True

    def _done(self) -> UtteranceDone:
        prompt, completion = self._tokens
        stats = UtteranceStats(
            audio_seconds=self._audio.seconds,
            decode_seconds=None,
            partial_decodes=0,
            prompt_tokens=prompt,
            completion_tokens=completion,
        )
        return UtteranceDone(self._text, self._audio.seconds, 0.0, self._audio.seconds, stats)
