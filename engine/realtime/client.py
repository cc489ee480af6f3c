"""The remote engine: the streaming-session interface over any ``/v1/realtime`` server.

Works against vLLM's server and ``voxdesk serve`` alike, following the client checklist
(``docs/realtime-protocol.md`` §16): ``session.update`` without waiting for an answer, one
non-final commit per stream, audio as base64 PCM16 at 16 kHz, then ``final`` and a wait for
``transcription.done``.

A dropped connection is reported as a non-fatal ``StreamError`` (``connection_lost``) and
retried with backoff; every delta received before the drop stays committed, and the stream
goes on in a new generation. Audio sent to the lost connection whose text had not come back
yet is not transcribed.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import random
import ssl
import urllib.error
import urllib.request
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

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
from voxdesk.engine.realtime.events import (
    ErrorEvent,
    InputAudioBufferAppend,
    InputAudioBufferCommit,
    SessionUpdate,
    TranscriptionDelta,
    TranscriptionDone,
    TranscriptionProvisional,
    parse_server_event,
)
from voxdesk.engine.session import SAMPLE_RATE, ProgressCallback, check_chunk

__all__ = ["RemoteEngine", "RemoteSettings", "backoff", "encode_audio"]

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

    url: str  # ws://host:port or wss://host:port, with or without /v1/realtime
    model: str = ""
    api_key: str | None = None
    provisional: bool = True  # ask for Voxdesk's provisional-text extension (vLLM ignores it)
    max_retries: int = 5
    open_timeout: float = 10.0
    ca_file: str | None = None  # extra CA certificate(s) to trust for wss:// (e.g. a self-signed server)


def backoff(initial: float = 0.5, factor: float = 2.0, cap: float = 10.0, jitter: float = 0.2) -> Iterator[float]:
    """Reconnect delays: exponential, capped, each randomized by ±``jitter`` (a fraction)."""
    delay = initial
    while True:
        yield delay * random.uniform(1 - jitter, 1 + jitter)
        delay = min(cap, delay * factor)


def encode_audio(samples: np.ndarray) -> str:
    """Float32 samples in [-1, 1] to base64 PCM16 little-endian, as vLLM's clients do."""
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2")
    return base64.b64encode(pcm.tobytes()).decode("ascii")


def realtime_url(url: str) -> str:
    """``url`` with the ``/v1/realtime`` path added when it has none."""
    base = url.rstrip("/")
    return base if base.endswith("/v1/realtime") else base + "/v1/realtime"


class _ConnectionLost(Exception):
    """The socket went away in the middle of a generation."""


class RemoteEngine:
    """A speech engine on a ``/v1/realtime`` server. See :mod:`voxdesk.engine.session`."""

    name = "remote"
    detects_speech = False

    def __init__(self, settings: RemoteSettings) -> None:
        self.settings = settings
        self.url = realtime_url(settings.url)

    async def load(self, progress: ProgressCallback | None = None) -> None:
        """Check that the server answers, accepts the key and serves the model.

        Raises:
            EngineUnavailable: unreachable server, refused key, or a model it does not serve.
        """
        if progress:
            progress(f"connecting to {self.url}", 0.0)
        try:
            async with self.connect() as socket:
                await socket.recv()  # session.created
        except InvalidStatus as refused:
            raise EngineUnavailable(self._refusal(refused)) from refused
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError, ConnectionClosed) as exc:
            raise EngineUnavailable(f"cannot reach the speech server at {self.url}: {exc}") from exc
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
        return _RemoteSession(self).run(audio)

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
    """One stream over as many connections as it takes."""

    def __init__(self, engine: RemoteEngine) -> None:
        self._engine = engine
        self._sent = 0  # samples sent, over all connections
        self._text = ""  # every delta yielded so far
        self._new_generation = False  # the next delta starts a new server generation
        self._tokens = (0, 0)
        self._reading: asyncio.Future[np.ndarray] | None = None  # survives reconnects
        self._unsent: np.ndarray | None = None  # a chunk whose send was cut off

    async def run(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        try:
            async for event in self._connections(aiter(audio)):
                yield event
        finally:
            if self._reading is not None:
                self._reading.cancel()

    async def _connections(self, chunks: AsyncIterator[np.ndarray]) -> AsyncIterator[EngineEvent]:
        """One generation per connection until ``done``, reconnecting with backoff after drops."""
        delays = backoff()
        failures = 0
        while True:
            try:
                async with self._engine.connect() as socket:
                    failures = 0
                    async for event in self._generation(socket, chunks):
                        yield event
                    return
            except InvalidStatus as refused:
                yield StreamError(StreamErrorCode.UNAUTHORIZED, self._engine._refusal(refused), self._time())
                return
            except (_ConnectionLost, ConnectionClosed, OSError, InvalidHandshake, TimeoutError) as lost:
                failures += 1
                if failures > self._engine.settings.max_retries:
                    yield StreamError(
                        StreamErrorCode.CONNECTION_LOST,
                        f"gave up reconnecting to {self._engine.url}: {lost}",
                        self._time(),
                    )
                    return
                yield StreamError(
                    StreamErrorCode.CONNECTION_LOST,
                    f"connection to the speech server lost ({lost}); reconnecting",
                    self._time(),
                    fatal=False,
                )
                self._new_generation = bool(self._text)
                await asyncio.sleep(next(delays))

    async def _generation(
        self, socket: ClientConnection, chunks: AsyncIterator[np.ndarray]
    ) -> AsyncIterator[EngineEvent]:
        settings = self._engine.settings
        await socket.recv()  # session.created
        await socket.send(SessionUpdate(model=settings.model, provisional=settings.provisional).to_json())
        await socket.send(InputAudioBufferCommit(final=False).to_json())
        sender = asyncio.create_task(self._send_audio(socket, chunks))
        try:
            while True:
                frame = await self._receive(socket, sender)
                event = parse_server_event(frame)
                if isinstance(event, TranscriptionDelta) and event.delta:
                    piece = (" " if self._new_generation and not event.delta.startswith(" ") else "") + event.delta
                    self._new_generation = False
                    self._text += piece
                    yield TextDelta(piece, self._time())
                elif isinstance(event, TranscriptionProvisional):
                    yield ProvisionalText(event.text, self._time())
                elif isinstance(event, TranscriptionDone):
                    if event.usage is not None:
                        self._tokens = (event.usage.prompt_tokens, event.usage.completion_tokens or 0)
                    yield self._done()
                    return
                elif isinstance(event, ErrorEvent):
                    fatal = event.code in _FATAL_CODES or event.code == StreamErrorCode.PROCESSING_ERROR
                    yield StreamError(_stream_code(event.code), event.error, self._time(), fatal=fatal)
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
            raise _ConnectionLost(f"closed with code {closed.rcvd.code if closed.rcvd else 1006}") from closed
        return frame if isinstance(frame, str) else frame.decode()

    async def _send_audio(self, socket: ClientConnection, chunks: AsyncIterator[np.ndarray]) -> None:
        while True:
            if self._unsent is None:
                try:
                    self._unsent = check_chunk(await self._next_chunk(chunks))
                except StopAsyncIteration:
                    break
            if len(self._unsent):
                await socket.send(InputAudioBufferAppend(audio=encode_audio(self._unsent)).to_json())
                self._sent += len(self._unsent)
            self._unsent = None
        await socket.send(InputAudioBufferCommit(final=True).to_json())

    async def _next_chunk(self, chunks: AsyncIterator[np.ndarray]) -> np.ndarray:
        """The next input chunk. Shielded: a sender cancelled by a lost connection must not
        close the caller's audio iterator, which the next connection goes on reading."""
        if self._reading is None:
            self._reading = asyncio.ensure_future(anext(chunks))
        chunk = await asyncio.shield(self._reading)
        self._reading = None
        return chunk

    def _time(self) -> float:
        return self._sent / SAMPLE_RATE

    def _done(self) -> UtteranceDone:
        prompt, completion = self._tokens
        stats = UtteranceStats(
            audio_seconds=self._time(),
            decode_seconds=None,
            partial_decodes=0,
            prompt_tokens=prompt,
            completion_tokens=completion,
        )
        return UtteranceDone(self._text, self._time(), 0.0, self._time(), stats)
