"""The vLLM realtime engine: the streaming-session interface over a server speaking vLLM's
``/v1/realtime`` dialect (vLLM's server and ``voxdesk serve`` alike), following the client checklist
(``docs/realtime-protocol.md`` §16): ``session.update`` without waiting for an answer, one
non-final commit per stream, audio as base64 PCM16 at 16 kHz, then ``final`` and a wait for
``transcription.done``.

Several servers may be given (``url`` lists them, separated by commas). A refused or dropped
connection is reported as a non-fatal ``StreamError`` (``connection_lost``) and the session
moves to the next server, with backoff once every server has failed in a row
(:mod:`voxdesk.engine.remote.session`, shared with the other client engines). Nothing heard is lost:
the client keeps the stream's audio until the server finalizes it (``transcription.done``),
and on a new connection it sends ``TextRetracted`` (the lost server's unfinished text is
withdrawn) and replays that audio, so the new server's deltas make the whole final text.

A server that takes the connection and stays silent is noticed: no ``session.created`` within
``open_timeout`` of connecting, or nothing for ``read_timeout`` while the final text is due
(:mod:`voxdesk.engine.remote.session` says what follows).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterable, Iterator
from dataclasses import dataclass

import numpy as np

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.events import EngineEvent, ProvisionalText, StreamErrorCode, TextDelta
from voxdesk.engine.failover import backoff, split_urls
from voxdesk.engine.remote.session import ClientEngine, ClientSession, Link, stream_code, within
from voxdesk.engine.remote.transports import WebSocketTransport, ssl_context
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.pcm import encode_audio
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

__all__ = ["VllmRealtimeEngine", "VllmRealtimeSettings", "backoff", "encode_audio", "split_urls"]

_REPLAY_SAMPLES = SAMPLE_RATE  # audio per append message when replaying to a new server

# Errors after which retrying the same generation cannot help.
_FATAL_CODES = {
    StreamErrorCode.MODEL_NOT_FOUND,
    StreamErrorCode.INVALID_EVENT,
    StreamErrorCode.MODEL_NOT_VALIDATED,
    StreamErrorCode.PROCESSING_ERROR,
}


@dataclass(frozen=True)
class VllmRealtimeSettings:
    """Where the server is and how to talk to it."""

    url: str  # ws://host:port or wss://host:port, with or without /v1/realtime; several: comma-separated
    model: str = ""
    api_key: str | None = None
    provisional: bool = True  # ask for Voxdesk's provisional-text extension (vLLM ignores it)
    max_retries: int = 5  # failed rounds over every server in a row before the session gives up
    open_timeout: float = 10.0  # the longest wait for the handshake, then for session.created
    ca_file: str | None = None  # extra CA certificate(s) to trust for wss:// (e.g. a self-signed server)
    read_timeout: float = 30.0  # the longest silence once all audio is sent, before transcription.done


def realtime_url(url: str) -> str:
    """``url`` with the ``/v1/realtime`` path added when it has none."""
    base = url.rstrip("/")
    return base if base.endswith("/v1/realtime") else base + "/v1/realtime"


class VllmRealtimeEngine(ClientEngine[str]):
    """A speech engine on servers speaking vLLM's ``/v1/realtime`` dialect. See :mod:`voxdesk.engine.session`."""

    name = "remote"  # what history records; EngineKind.REMOTE's value
    kind = "speech server"
    transport: WebSocketTransport

    def __init__(self, settings: VllmRealtimeSettings) -> None:
        transport = WebSocketTransport(
            self.kind, settings.api_key, settings.open_timeout, settings.ca_file, max_size=2**24
        )
        urls = [realtime_url(url) for url in split_urls(settings.url) or [settings.url]]
        super().__init__(urls, transport, settings.max_retries)
        self.settings = settings

    async def _probe(self, link: Link[str]) -> None:
        """The server answers with ``session.created`` within the open timeout."""
        await self.first_answer(link)

    async def first_answer(self, link: Link[str]) -> str | None:
        """What a server sends first on a connection (``session.created``), within the open timeout."""
        seconds = self.settings.open_timeout
        return await within(seconds, link.receive(), f"it sent nothing within {seconds:g} s of connecting")

    async def _loaded(self) -> None:
        """The server serves the settings' model, where it lists its models."""
        if not self.settings.model:
            return
        served = await asyncio.to_thread(self._served_models)
        if served is not None and self.settings.model not in served:
            raise EngineUnavailable(
                f"the server does not serve model {self.settings.model!r}; it serves: {', '.join(served)}"
            )

    def _session(self, audio: AsyncIterable[np.ndarray]) -> _VllmSession:
        return _VllmSession(self, audio)

    def _served_models(self) -> list[str] | None:
        """Model ids from ``GET /v1/models``; ``None`` when the server has no such endpoint."""
        http_url = self.url.replace("ws", "http", 1).removesuffix("/realtime") + "/models"
        request = urllib.request.Request(http_url, headers=self.transport.headers)
        context = ssl_context(self.url, self.settings.ca_file)
        try:
            with urllib.request.urlopen(request, timeout=self.settings.open_timeout, context=context) as response:
                return [str(m["id"]) for m in json.load(response)["data"]]
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError):
            return None


class _VllmSession(ClientSession[str]):
    """One stream: a generation per connection, finalized by the server with ``done``."""

    engine: VllmRealtimeEngine

    def __init__(self, engine: VllmRealtimeEngine, audio: AsyncIterable[np.ndarray]) -> None:
        super().__init__(engine, audio)
        self.read_timeout = engine.settings.read_timeout  # for transcription.done after the final commit
        self._text = ""  # this connection's deltas

    async def _open(self, link: Link[str]) -> None:
        """After ``session.created``: ``session.update`` and the non-final commit that starts the generation."""
        self._text = ""
        await self.engine.first_answer(link)  # session.created
        settings = self.engine.settings
        await link.send(SessionUpdate(model=settings.model, provisional=settings.provisional).to_json())
        await link.send(InputAudioBufferCommit(final=False).to_json())

    async def _send_audio(self, link: Link[str]) -> None:
        async for chunk in self._chunks(_REPLAY_SAMPLES):
            if len(chunk):
                await link.send(InputAudioBufferAppend(audio=encode_audio(chunk)).to_json())
        await link.send(InputAudioBufferCommit(final=True).to_json())

    def _events(self, frame: str) -> Iterator[EngineEvent]:
        event = parse_server_event(frame)
        if isinstance(event, TranscriptionDelta) and event.delta:
            self._text += event.delta
            yield TextDelta(event.delta, self.audio.seconds)
        elif isinstance(event, TranscriptionProvisional):
            yield ProvisionalText(event.text, self.audio.seconds)
        elif isinstance(event, TranscriptionDone):
            tokens = (0, 0) if (usage := event.usage) is None else (usage.prompt_tokens, usage.completion_tokens or 0)
            yield self._done(self._text, *tokens)
        elif isinstance(event, ErrorEvent):
            yield self._server_error(stream_code(event.code), event.error, fatal=event.code in _FATAL_CODES)
