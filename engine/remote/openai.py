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
(:mod:`voxdesk.engine.remote.session`): text the lost server had sent is withdrawn
(``TextRetracted``) and the new session gets the whole turn's audio again, so nothing the
server had not transcribed is lost and its transcript is the whole final text.

A server that takes the connection and stays silent is noticed: at load, no ``session.updated``
within ``open_timeout``; in a stream, nothing for ``read_timeout`` once the turn is committed
(:mod:`voxdesk.engine.remote.session` says what follows).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.events import EngineEvent, StreamError, StreamErrorCode, TextDelta
from voxdesk.engine.failover import split_urls
from voxdesk.engine.remote.session import ClientEngine, ClientSession, Link, stream_code, within
from voxdesk.engine.remote.transports import UnreadableFrame, WebSocketTransport
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.jsontext import loads_unicode
from voxdesk.engine.wire.openai.events import RATE
from voxdesk.engine.wire.pcm import Resampler, encode_audio

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
    open_timeout: float = 10.0  # the longest wait for the handshake, and at load for session.updated
    ca_file: str | None = None  # extra CA certificate(s) to trust for wss://
    read_timeout: float = 30.0  # the longest silence once the turn is committed, before its transcript


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


def _error_text(error: Any) -> tuple[StreamErrorCode, str]:
    """The code and message of an ``error`` event's body (OpenAI's object, or vLLM's string)."""
    if isinstance(error, dict):
        return stream_code(error.get("code")), str(error.get("message") or error.get("code") or "server error")
    return StreamErrorCode.ERROR, str(error)


class OpenAIRealtimeEngine(ClientEngine[str]):
    """A speech engine on an OpenAI Realtime transcription server. See :mod:`voxdesk.engine.session`."""

    name = "openai"
    kind = "OpenAI Realtime server"

    def __init__(self, settings: OpenAISettings) -> None:
        # The SDK's transport options: any frame size, no compression.
        transport = WebSocketTransport(
            self.kind, settings.api_key, settings.open_timeout, settings.ca_file, max_size=None, compression=None
        )
        urls = split_urls(settings.url) or [settings.url]
        super().__init__([openai_realtime_url(url) for url in urls], transport, settings.max_retries)
        self.settings = settings

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

    async def _probe(self, link: Link[str]) -> None:
        """The server takes the session's configuration (``session.updated``), within the open timeout."""
        await link.send(self.session_update())
        seconds = self.settings.open_timeout
        await within(seconds, self._until_updated(link), f"it did not confirm the session within {seconds:g} s")

    def _session(self, audio: AsyncIterable[np.ndarray]) -> _OpenAISession:
        return _OpenAISession(self, audio)

    async def _until_updated(self, link: Link[str]) -> None:
        while (frame := await link.receive()) is not None:
            event = _event(frame)
            if event.get("type") == "session.updated":
                return
            if event.get("type") == "error":
                _, message = _error_text(event.get("error"))
                raise EngineUnavailable(f"the OpenAI Realtime server at {self.url} refused the session: {message}")
        raise ConnectionResetError("the server closed the connection without answering session.update")


class _OpenAISession(ClientSession[str]):
    """One turn: the whole of it on each connection, committed once all its audio went out."""

    engine: OpenAIRealtimeEngine

    def __init__(self, engine: OpenAIRealtimeEngine, audio: AsyncIterable[np.ndarray]) -> None:
        super().__init__(engine, audio)
        self.read_timeout = engine.settings.read_timeout  # for the transcript after the commit
        self._text = ""  # the deltas yielded on this connection
        self._received = ""  # this connection's transcript so far

    async def _open(self, link: Link[str]) -> None:
        self._text = self._received = ""
        await link.send(self.engine.session_update())

    async def _send_audio(self, link: Link[str]) -> None:
        """The audio resampled to 24 kHz, padded to the shortest commit, then the commit."""
        resampler = Resampler(SAMPLE_RATE, RATE)
        sent = 0  # 24 kHz samples on this connection
        async for chunk in self._chunks(_REPLAY_CHUNK):
            sent += await _append(link, resampler.resample(chunk))
        tail = resampler.flush()
        tail = np.concatenate([tail, np.zeros(max(0, _MIN_COMMIT - sent - len(tail)), np.float32)])
        await _append(link, tail)
        await link.send('{"type":"input_audio_buffer.commit"}')

    def _events(self, frame: str) -> Iterator[EngineEvent]:
        event = _event(frame)
        kind = event.get("type")
        if kind == "conversation.item.input_audio_transcription.delta":
            self._received += str(event.get("delta") or "")
            if piece := self._beyond_yielded(self._received, final=False):
                yield TextDelta(piece, self.audio.seconds)
        elif kind == "conversation.item.input_audio_transcription.completed":
            if piece := self._beyond_yielded(str(event.get("transcript") or ""), final=True):
                yield TextDelta(piece, self.audio.seconds)
            yield self._done(self._text)
        elif kind == "conversation.item.input_audio_transcription.failed":
            _, message = _error_text(event.get("error"))
            yield StreamError(StreamErrorCode.PROCESSING_ERROR, message, self.audio.seconds)
        elif kind == "error":
            code, message = _error_text(event.get("error"))
            yield self._server_error(code, message, fatal=code not in _NON_FATAL_CODES)

    def _beyond_yielded(self, transcript: str, final: bool) -> str:
        """What of ``transcript`` (this connection's text) was not yielded yet.

        A final transcript that differs from the deltas yielded adds its words past as many
        words as were yielded.
        """
        self._text, piece = _extend(self._text, transcript, final)
        return piece


def _event(frame: str) -> dict[str, Any]:
    """A server's event.

    Raises:
        UnreadableFrame: not a JSON object (nested past the parser included), or text in it that
            is not Unicode (a lone surrogate).
    """
    try:
        event = loads_unicode(frame)
    except ValueError as bad:
        raise UnreadableFrame(str(bad)) from None
    if not isinstance(event, dict):
        raise UnreadableFrame(f"a JSON {type(event).__name__}, not an object")
    return event


async def _append(link: Link[str], samples: np.ndarray) -> int:
    if len(samples):
        await link.send(json.dumps({"type": "input_audio_buffer.append", "audio": encode_audio(samples)}))
    return len(samples)


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
