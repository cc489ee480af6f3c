"""The OpenAI Realtime engine: the streaming-session interface over an OpenAI Realtime
*transcription* session (OpenAI's hosted API, ``voxdesk serve``'s OpenAI dialect).

It connects as the official SDK does (``<base>/realtime?intent=transcription``,
``Authorization: Bearer``, no compression; ``shared/docs/openai-realtime-reference.md`` §1),
sends ``session.update`` with manual turns (``turn_detection: null``) without waiting for
``session.created``, streams the audio as base64 PCM16 at 24 kHz with
``input_audio_buffer.append`` and ends the stream with one ``input_audio_buffer.commit``: the
caller's voice detection ends utterances, so one stream is one turn (§9, client checklist).
The item's ``…transcription.delta`` events become ``TextDelta``\\ s and ``…completed`` the
``UtteranceDone``; OpenAI sends text only once a turn is committed, so all text comes after
the end of the stream's audio.

Several servers may be given (``url`` lists them, separated by commas). A refused (other than
for the key) or dropped connection is a non-fatal ``StreamError`` (``connection_lost``) and the
turn moves to the next server, with backoff once every server has failed in a row
(:mod:`voxdesk.engine.failover`): text the lost server had sent is withdrawn
(``TextRetracted``) and the new session gets the whole turn's audio again, so nothing the
server had not transcribed is lost and its transcript is the whole final text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import soxr
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.events import EngineEvent, StreamError, StreamErrorCode, TextDelta, UtteranceDone, UtteranceStats
from voxdesk.engine.failover import Failover, HeardAudio, ServerLost, Servers, split_urls
from voxdesk.engine.remote.realtime import encode_audio
from voxdesk.engine.remote.refusals import REFUSED_KEY, KeyRefused, refused_or_lost
from voxdesk.engine.session import SAMPLE_RATE, ProgressCallback
from voxdesk.engine.wire.openai.events import RATE

__all__ = ["OPENAI_REALTIME_URL", "OpenAIRealtimeEngine", "OpenAISettings", "openai_realtime_url"]

OPENAI_REALTIME_URL = "wss://api.openai.com/v1/realtime?intent=transcription"
"""OpenAI's own endpoint for transcription sessions (§1.1: no ``model`` in the URL)."""

_MIN_COMMIT = RATE // 10  # OpenAI refuses to commit less than 100 ms (§6)
_REPLAY_CHUNK = SAMPLE_RATE // 2  # audio sent again after a reconnect, per append
# Errors after which the session goes on (the server drops one chunk, or closes and we reconnect).
_NON_FATAL_CODES = {StreamErrorCode.BUFFER_FULL, StreamErrorCode.SERVER_SHUTDOWN, StreamErrorCode.IDLE_TIMEOUT}


@dataclass(frozen=True)
class OpenAISettings:
    """Where the OpenAI Realtime server is and what to ask it for."""

    url: str = OPENAI_REALTIME_URL  # a realtime URL or a base (ws://HOST:PORT, .../v1); several: comma-separated
    model: str = ""  # the transcription model (e.g. gpt-4o-transcribe); "" is the server's default
    api_key: str | None = None
    language: str | None = None  # an ISO-639-1 code; None lets the model detect it
    max_retries: int = 5
    open_timeout: float = 10.0
    ca_file: str | None = None  # extra CA certificate(s) to trust for wss://


def openai_realtime_url(url: str) -> str:
    """``url`` as the SDK builds it: ``<base path>/realtime`` with ``intent=transcription``.

    ``http(s)://`` becomes ``ws(s)://``; a URL without a path gets ``/v1/realtime``; other
    query parameters (``model=`` for speaches) are kept.
    """
    parts = urlsplit(url.strip())
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/") or "/v1"
    if not path.endswith("/realtime"):
        path += "/realtime"
    query = parse_qsl(parts.query, keep_blank_values=True)
    if not any(key == "intent" for key, _ in query):
        query.append(("intent", "transcription"))
    return urlunsplit((scheme, parts.netloc, path, urlencode(query), ""))


def _stream_code(code: Any) -> StreamErrorCode:
    try:
        return StreamErrorCode(code or StreamErrorCode.ERROR)
    except ValueError:
        return StreamErrorCode.ERROR


def _error_text(error: Any) -> tuple[StreamErrorCode, str]:
    """The code and message of an ``error`` event's body (OpenAI's object, or vLLM's string)."""
    if isinstance(error, dict):
        return _stream_code(error.get("code")), str(error.get("message") or error.get("code") or "server error")
    return StreamErrorCode.ERROR, str(error)


class OpenAIRealtimeEngine:
    """A speech engine on an OpenAI Realtime transcription server. See :mod:`voxdesk.engine.session`."""

    name = "openai"
    detects_speech = False

    def __init__(self, settings: OpenAISettings) -> None:
        self.settings = settings
        urls = split_urls(settings.url) or [settings.url]
        self.servers = Servers([openai_realtime_url(url) for url in urls])

    @property
    def url(self) -> str:
        """The server turns start on now: the last one that answered."""
        return self.servers.url

    async def load(self, progress: ProgressCallback | None = None) -> None:
        """Open one session and configure it, to check the server, the key and the settings;
        the first server that answers becomes current.

        Raises:
            EngineUnavailable: no server reachable, a refused key, or a session configuration
                the server refuses (its error message is given).
        """

        async def probe() -> None:
            if progress:
                progress(f"connecting to {self.url}", 0.0)
            with refused_or_lost(self._refusal, f"cannot reach the OpenAI Realtime server at {self.url}"):
                async with self.connect() as socket:
                    await socket.send(self.session_update())
                    await asyncio.wait_for(self._until_updated(socket), self.settings.open_timeout)

        await self.servers.first_answering(probe)
        if progress:
            progress("connected", 1.0)

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        """Open one turn over ``audio``; see :mod:`voxdesk.engine.session`."""
        return _OpenAISession(self, audio).run()

    async def aclose(self) -> None:
        """Nothing to release: connections live only as long as their stream."""

    def connect(self) -> connect:
        """A connection to the realtime URL, with the SDK's transport options (use with ``async with``)."""
        headers = {"Authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
        context = ssl.create_default_context(cafile=self.settings.ca_file) if self.url.startswith("wss://") else None
        return connect(
            self.url,
            additional_headers=headers,
            open_timeout=self.settings.open_timeout,
            max_size=None,
            compression=None,
            ssl=context,
        )

    def session_update(self) -> str:
        """The GA ``session.update`` for a manual-turn transcription session at 24 kHz (§3.1)."""
        transcription: dict[str, str] = {}
        if self.settings.model:
            transcription["model"] = self.settings.model
        if self.settings.language:
            transcription["language"] = self.settings.language
        audio_input = {
            "format": {"type": "audio/pcm", "rate": RATE},
            "transcription": transcription,
            "turn_detection": None,
        }
        return json.dumps(
            {"type": "session.update", "session": {"type": "transcription", "audio": {"input": audio_input}}}
        )

    def _refusal(self, refused: InvalidStatus) -> str:
        status = refused.response.status_code
        if status in REFUSED_KEY:
            return f"the OpenAI Realtime server at {self.url} refused the API key (HTTP {status})"
        return f"the OpenAI Realtime server at {self.url} refused the connection (HTTP {status})"

    async def _until_updated(self, socket: ClientConnection) -> None:
        while True:
            event = json.loads(await socket.recv())
            if event.get("type") == "session.updated":
                return
            if event.get("type") == "error":
                _, message = _error_text(event.get("error"))
                raise EngineUnavailable(f"the OpenAI Realtime server at {self.url} refused the session: {message}")


class _OpenAISession:
    """One turn over as many connections, to as many servers, as it takes."""

    def __init__(self, engine: OpenAIRealtimeEngine, audio: AsyncIterable[np.ndarray]) -> None:
        self._engine = engine
        self._audio = HeardAudio(audio)  # the whole turn, sent again to a new server
        self._failover = Failover(engine.servers, engine.settings.max_retries, "OpenAI Realtime server")
        self._text = ""  # the deltas yielded on this connection
        self._committed = False  # the commit went out on the current connection

    def run(self) -> AsyncIterator[EngineEvent]:
        return self._failover.run(self._attempt, self._audio)

    async def _attempt(self) -> AsyncIterator[EngineEvent]:
        """One connection to the current server and the turn on it, from the turn's first sample.

        Raises:
            ServerLost: the server refused the connection (other than for the key) or dropped it.
        """
        self._text = ""  # the new server transcribes the whole turn again
        try:
            with refused_or_lost(self._engine._refusal):
                async with self._engine.connect() as socket:
                    async for event in self._turn(socket):
                        yield event
        except KeyRefused as refused:
            yield StreamError(StreamErrorCode.UNAUTHORIZED, str(refused), self._audio.seconds)

    async def _turn(self, socket: ClientConnection) -> AsyncIterator[EngineEvent]:
        await socket.send(self._engine.session_update())
        self._committed = False
        sender = asyncio.create_task(self._send_audio(socket))
        received = ""  # this connection's transcript so far
        try:
            while True:
                event = json.loads(await self._receive(socket, sender))
                kind = event.get("type")
                if kind == "conversation.item.input_audio_transcription.delta":
                    received += str(event.get("delta") or "")
                    if piece := self._beyond_yielded(received, final=False):
                        yield TextDelta(piece, self._audio.seconds)
                elif kind == "conversation.item.input_audio_transcription.completed":
                    if piece := self._beyond_yielded(str(event.get("transcript") or ""), final=True):
                        yield TextDelta(piece, self._audio.seconds)
                    yield self._done()
                    return
                elif kind == "conversation.item.input_audio_transcription.failed":
                    _, message = _error_text(event.get("error"))
                    yield StreamError(StreamErrorCode.PROCESSING_ERROR, message, self._audio.seconds)
                    return
                elif kind == "error":
                    code, message = _error_text(event.get("error"))
                    if code == StreamErrorCode.SERVER_SHUTDOWN and not self._committed:
                        # The server would transcribe only the audio it has: another one gets all of it.
                        raise ServerLost(f"the server is shutting down: {message}")
                    fatal = code not in _NON_FATAL_CODES
                    yield StreamError(code, message, self._audio.seconds, fatal=fatal)
                    if fatal:
                        return
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await sender

    def _beyond_yielded(self, transcript: str, final: bool) -> str:
        """What of ``transcript`` (this connection's text) was not yielded yet.

        A final transcript that differs from the deltas yielded adds its words past as many
        words as were yielded.
        """
        self._text, piece = _extend(self._text, transcript, final)
        return piece

    async def _receive(self, socket: ClientConnection, sender: asyncio.Task[None]) -> str | bytes:
        """The next frame; re-raises a failure of the audio sender (bad audio) at once."""
        receiving = asyncio.ensure_future(socket.recv())
        waiting: set[asyncio.Future[Any]] = {receiving}
        if not sender.done():
            waiting.add(sender)
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if sender.done() and not sender.cancelled() and (error := sender.exception()) is not None:
            receiving.cancel()
            raise error
        try:
            return await receiving
        except ConnectionClosed as closed:
            raise ServerLost(f"closed with code {closed.rcvd.code if closed.rcvd else 1006}") from closed

    async def _send_audio(self, socket: ClientConnection) -> None:
        """The turn's audio so far again (on a new server), then the rest as it comes, then commit."""
        resampler = soxr.ResampleStream(SAMPLE_RATE, RATE, 1, "float32")
        sent = 0  # 24 kHz samples on this connection
        for piece in self._audio.replay(_REPLAY_CHUNK):
            sent += await self._append(socket, resampler.resample_chunk(piece))
        while (chunk := await self._audio.next()) is not None:
            sent += await self._append(socket, resampler.resample_chunk(chunk))
        tail = resampler.resample_chunk(np.zeros(0, np.float32), last=True)
        tail = np.concatenate([tail, np.zeros(max(0, _MIN_COMMIT - sent - len(tail)), np.float32)])
        await self._append(socket, tail)
        await socket.send('{"type":"input_audio_buffer.commit"}')
        self._committed = True

    @staticmethod
    async def _append(socket: ClientConnection, samples: np.ndarray) -> int:
        if len(samples):
            await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": encode_audio(samples)}))
        return len(samples)

    def _done(self) -> UtteranceDone:
        stats = UtteranceStats(audio_seconds=self._audio.seconds, decode_seconds=None, partial_decodes=0)
        return UtteranceDone(self._text, self._audio.seconds, 0.0, self._audio.seconds, stats)


def _extend(kept: str, transcript: str, final: bool) -> tuple[str, str]:
    """``kept`` extended by what ``transcript`` has beyond it, and that extension.

    A transcript that starts with ``kept`` adds its rest. One that disagrees with ``kept`` adds
    nothing until it is final; a final one then adds its words after the first
    ``len(kept.split())`` (the kept words stand, as they were already shown).
    """
    if transcript.startswith(kept):
        return transcript, transcript[len(kept) :]
    if not final or kept.startswith(transcript):
        return kept, ""
    words = transcript.split()[len(kept.split()) :]
    if not words:
        return kept, ""
    piece = ("" if kept.endswith(" ") or not kept else " ") + " ".join(words)
    return kept + piece, piece
