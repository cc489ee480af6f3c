"""What every client engine does alike, whatever its dialect: the engine over its servers
(:class:`ClientEngine`) and one stream over as many connections as it takes (:class:`ClientSession`).

A dialect subclasses both and keeps only its wire mapping: what :meth:`ClientEngine._probe`
asks a server at load, what a connection opens with (:meth:`ClientSession._open`), how the
audio goes out (:meth:`ClientSession._send_audio`) and what each received frame means
(:meth:`ClientSession._events`). The rest is here: connecting through a :class:`Transport`
(WebSocket or TCP, :mod:`~voxdesk.engine.remote.transports`), a refused key reported as
``unauthorized``, receiving while the audio is still being sent, the connection ended at the
stream's ``UtteranceDone`` or a fatal ``StreamError``, and failing over between servers
(:mod:`voxdesk.engine.failover`): each connection gets the stream's audio from its first sample.

A server that takes the connection and then stops answering (no handshake answer, no first
frame, no final transcript within the dialect's time limits) raises ``TimeoutError`` with what
it left unanswered (:func:`within`). Loading then tries the next server; a stream moves on to
the next server, and once every server of the engine went silent on it, it ends with one
fatal ``connection_lost`` naming the last: a hung server is not retried round after round while
the speaker waits, and restarting the engine (``restart_helps``) can find an answering one.
A server that sends a frame the client cannot read (:class:`UnreadableFrame`: JSON nested past
the parser, text that is not Unicode, not its dialect's events) is broken, and left the same way.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Iterable
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from voxdesk.engine.events import (
    EngineEvent,
    EngineFault,
    StreamError,
    StreamErrorCode,
    UtteranceDone,
    UtteranceStats,
)
from voxdesk.engine.failover import Failover, HeardAudio, ServerLost, Servers
from voxdesk.engine.remote.transports import KeyRefused, UnreadableFrame
from voxdesk.engine.session import ProgressCallback

__all__ = ["ClientEngine", "ClientSession", "Link", "Transport", "stream_code", "within"]

FrameT = TypeVar("FrameT")
_T = TypeVar("_T")


class Link(Protocol[FrameT]):
    """One open connection to a server, in its dialect's frames."""

    async def send(self, frame: FrameT) -> None:
        """Send one frame."""

    async def receive(self) -> FrameT | None:
        """The next frame; ``None`` once the server ended the stream."""


class Transport(Protocol[FrameT]):
    """How a dialect's connections are opened."""

    def connect(self, url: str, unreachable: str = "") -> AbstractAsyncContextManager[Link[FrameT]]:
        """A connection to ``url`` for the length of an ``async with``.

        Raises:
            KeyRefused: the server refused the API key.
            ServerLost: any other refusal, an unreachable server, or a connection that failed
                while in use (the message after ``unreachable``, when given).
            TimeoutError: the server took the connection but did not answer its handshake in
                time; one raised inside the ``async with`` (:func:`within`) passes through.
        """


async def within(seconds: float, step: Awaitable[_T], unanswered: str) -> _T:
    """``step``'s result, once the server answered it within ``seconds``.

    Raises:
        TimeoutError: it did not; the message is ``unanswered`` ("it sent nothing within 10 s
            of connecting"), the end of a sentence that names the server.
    """
    try:
        return await asyncio.wait_for(step, seconds)
    except TimeoutError as late:
        raise TimeoutError(unanswered) from late


def stream_code(code: str | None) -> StreamErrorCode:
    """A server's error code as a stream error code; one Voxdesk does not know is ``error``."""
    try:
        return StreamErrorCode(code or StreamErrorCode.ERROR)
    except ValueError:
        return StreamErrorCode.ERROR


class ClientEngine(ABC, Generic[FrameT]):
    """A speech engine on servers of one dialect, failed over in order. See :mod:`voxdesk.engine.session`.

    Args:
        urls: the servers, in the order sessions try them.
        transport: how connections to them are opened.
        max_retries: failed rounds over every server in a row before a stream gives up.
    """

    name: str
    detects_speech = False
    kind: str
    """What the servers are, for messages ("speech server", "Wyoming server")."""

    def __init__(self, urls: list[str], transport: Transport[FrameT], max_retries: int) -> None:
        self.servers = Servers(urls)
        self.transport = transport
        self.max_retries = max_retries

    @property
    def url(self) -> str:
        """The server streams start on now: the last one that answered."""
        return self.servers.url

    async def load(self, progress: ProgressCallback | None = None) -> None:
        """Check the servers in order until one answers (it becomes current); see :meth:`_probe`.

        Raises:
            EngineUnavailable: no server reachable or answering in time, a refused key, or a
                server that cannot serve the settings (the message says which).
        """

        async def probe() -> None:
            url = self.url
            if progress:
                progress(f"connecting to {url}", 0.0)
            try:
                async with self.transport.connect(url, f"cannot reach the {self.kind} at {url}") as link:
                    await self._probe(link)
            except TimeoutError as silence:
                raise ServerLost(f"the {self.kind} at {url} does not answer: {silence}") from silence
            except UnreadableFrame as bad:
                raise ServerLost(f"the {self.kind} at {url} {_unreadable(bad)}") from bad

        await self.servers.first_answering(probe)
        await self._loaded()
        if progress:
            progress("connected", 1.0)

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        """Open one stream over ``audio``; see :mod:`voxdesk.engine.session`."""
        return self._session(audio).run()

    async def aclose(self) -> None:
        """Nothing to release: connections live only as long as their stream."""

    @abstractmethod
    async def _probe(self, link: Link[FrameT]) -> None:
        """At load, on a connection to :attr:`url`: check that the server serves the settings.

        Raises:
            ServerLost: the server failed; the next one is tried.
            TimeoutError: the server did not answer in time (:func:`within`); the next one is tried.
            EngineUnavailable: the server refused the settings; loading fails.
        """

    async def _loaded(self) -> None:
        """After a server answered at load: any check beyond the connection (none by default)."""

    @abstractmethod
    def _session(self, audio: AsyncIterable[np.ndarray]) -> ClientSession[FrameT]:
        """One stream's session over ``audio``."""


class ClientSession(ABC, Generic[FrameT]):
    """One stream over as many connections, to as many servers, as it takes.

    Each connection opens (:meth:`_open`), then sends the stream's audio from its first sample
    (:meth:`_send_audio`) while its frames become events (:meth:`_events`); the connection
    ends with the stream's ``UtteranceDone`` or a fatal ``StreamError``.
    """

    read_timeout: float | None = None
    """The longest wait for a frame once all audio is sent (``None``: no limit)."""

    def __init__(self, engine: ClientEngine[FrameT], audio: AsyncIterable[np.ndarray]) -> None:
        self.engine = engine
        self.audio = HeardAudio(audio)  # kept until the server's final text, sent again to a new server
        self.committed = False  # all audio went out on the current connection
        self._failover = Failover(engine.servers, engine.max_retries, engine.kind)
        self._left: set[str] = set()  # the servers that stopped answering this stream or sent what cannot be read

    def run(self) -> AsyncIterator[EngineEvent]:
        """The stream's events, across as many servers as it takes."""
        return self._failover.run(self._attempt, self.audio)

    @abstractmethod
    async def _open(self, link: Link[FrameT]) -> None:
        """Start the stream on a new connection, before any audio (the new server transcribes
        the whole stream again). Raises ``TimeoutError`` (:func:`within`) for a server that
        does not answer in time."""

    @abstractmethod
    async def _send_audio(self, link: Link[FrameT]) -> None:
        """Send the stream's audio (:meth:`_chunks`), then the end of it."""

    @abstractmethod
    def _events(self, frame: FrameT) -> Iterable[EngineEvent]:
        """What one frame from the server means.

        Raises:
            ServerLost: to go on with the next server.
            ValueError: a frame that cannot be read (the server is broken).
        """

    async def _chunks(self, replay_size: int) -> AsyncIterator[np.ndarray]:
        """The audio heard so far (a new server's replay, in pieces of ``replay_size`` samples),
        then the rest as it comes."""
        for piece in self.audio.replay(replay_size):
            yield piece
        while (chunk := await self.audio.next()) is not None:
            yield chunk

    def _server_error(self, code: StreamErrorCode, message: str, fatal: bool) -> StreamError:
        """A server's error as a ``StreamError``.

        Raises:
            ServerLost: the server is shutting down before it had all the audio; it would
                finish with only what it has, another server transcribes all of it instead.
        """
        if code == StreamErrorCode.SERVER_SHUTDOWN and not self.committed:
            raise ServerLost(f"the server is shutting down: {message}")
        return StreamError(code, message, self.audio.seconds, fatal=fatal)

    def _done(self, text: str, prompt_tokens: int = 0, completion_tokens: int = 0) -> UtteranceDone:
        """The stream's one utterance, ``text`` its final text."""
        seconds = self.audio.seconds
        stats = UtteranceStats(
            audio_seconds=seconds,
            decode_seconds=None,
            partial_decodes=0,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )
        return UtteranceDone(text, seconds, 0.0, seconds, stats)

    async def _attempt(self) -> AsyncIterator[EngineEvent]:
        """One connection to the current server, from the stream's first sample.

        Raises:
            ServerLost: the server refused the connection (other than for the key), dropped
                it, or closed it before the final text; or it stopped answering and another
                server is left to try (:meth:`_leave`); or it sent a frame that cannot be read (the same).
        """
        url = self.engine.url
        try:
            async with self.engine.transport.connect(url) as link:
                self.committed = False
                await self._open(link)
                sender = asyncio.create_task(self._send_all(link))
                try:
                    while (frame := await _receive(link, sender, self.read_timeout)) is not None:
                        for event in self._read(frame):
                            yield event
                            if isinstance(event, UtteranceDone) or (isinstance(event, StreamError) and event.fatal):
                                return
                finally:
                    await _stop(sender)
            raise ServerLost("it closed the connection before the transcript")
        except KeyRefused as refused:
            yield StreamError(StreamErrorCode.UNAUTHORIZED, str(refused), self.audio.seconds)
        except TimeoutError as silence:
            yield self._leave(url, str(silence), f"stopped answering: {silence}")
        except UnreadableFrame as bad:
            yield self._leave(url, _unreadable(bad), _unreadable(bad))

    def _read(self, frame: FrameT) -> list[EngineEvent]:
        """:meth:`_events` of ``frame``. Raises :class:`UnreadableFrame` for a frame it cannot read."""
        try:
            return list(self._events(frame))
        except ValueError as bad:
            raise UnreadableFrame(str(bad)) from None

    def _leave(self, url: str, lost: str, what: str) -> StreamError:
        """The stream's end, the server at ``url`` having stopped answering or sent what cannot
        be read (``what`` says which, after the server's name).

        Raises:
            ServerLost: some server was not left by this stream: it goes on with the next one
                (``lost`` says why).
        """
        self._left.add(url)
        if len(self._left) < len(self.engine.servers.urls):
            raise ServerLost(lost)
        message = f"the {self.engine.kind} at {url} {what}"
        return StreamError(
            StreamErrorCode.CONNECTION_LOST, message, self.audio.seconds, engine_fault=EngineFault.ENGINE
        )

    async def _send_all(self, link: Link[FrameT]) -> None:
        await self._send_audio(link)
        self.committed = True


def _unreadable(bad: UnreadableFrame) -> str:
    """What a server did that sent ``bad``, after its name."""
    return f"sent a frame that cannot be read: {bad}"


async def _receive(link: Link[FrameT], sender: asyncio.Task[None], timeout: float | None) -> FrameT | None:
    """The next frame while ``sender`` sends the audio. Re-raises a failure of the sender (bad
    audio, a dropped connection) at once; once it is done, waits at most ``timeout``.

    Raises:
        TimeoutError: nothing came within ``timeout`` of the end of the audio (or of the last frame).
    """
    reading = asyncio.ensure_future(link.receive())
    try:
        while True:
            if sender.done() and not sender.cancelled() and (error := sender.exception()) is not None:
                raise error
            if reading.done():
                return reading.result()
            waiting: set[asyncio.Future[Any]] = {reading} if sender.done() else {reading, sender}
            limit = timeout if sender.done() else None
            done, _ = await asyncio.wait(waiting, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
            if not done:
                raise TimeoutError(f"it sent nothing for {limit:g} s while its final transcript was due")
    finally:
        reading.cancel()


async def _stop(sender: asyncio.Task[None]) -> None:
    """Cancel ``sender`` and wait until it ended. A failure of its own was raised already by
    :func:`_receive`, or came after the connection's end, where it no longer matters."""
    sender.cancel()
    await asyncio.wait({sender})
    if not sender.cancelled():
        sender.exception()  # retrieved, so that asyncio does not log it as never retrieved
