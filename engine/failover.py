"""Failing over between several servers, shared by the client engines (the vLLM dialect's
``VllmRealtimeEngine``, the OpenAI Realtime engine and the Wyoming engine).

An engine keeps one :class:`Servers`: its URLs in order and the one sessions start on (the
last one that answered). Each stream reads its audio through :class:`HeardAudio`, which keeps
every chunk until the server has finalized the text, and runs its connections through a
:class:`Failover`: one attempt per connection, which raises :class:`ServerLost` when the
server refuses or drops it. The failover then reports the loss (a non-fatal ``StreamError``,
``connection_lost``), withdraws the text the lost server had shown (``TextRetracted``) and
starts the next attempt on the next server, which gets the heard audio again; after each
round over every server it waits a :func:`backoff` delay first. Every lost connection counts,
whatever text it showed first (that text is withdrawn: it was no progress), so a server that
answers and then drops each connection is given up on like one that never answers.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator

import numpy as np

from voxdesk.engine.errors import EngineUnavailable, VoxdeskError
from voxdesk.engine.events import EngineEvent, ProvisionalText, StreamError, StreamErrorCode, TextDelta, TextRetracted
from voxdesk.engine.session import SAMPLE_RATE, check_chunk

__all__ = ["Failover", "HeardAudio", "ServerLost", "Servers", "backoff", "split_urls"]


def backoff(initial: float = 0.5, factor: float = 2.0, cap: float = 10.0, jitter: float = 0.2) -> Iterator[float]:
    """Reconnect delays: exponential, capped, each randomized by ±``jitter`` (a fraction)."""
    delay = initial
    while True:
        yield delay * random.uniform(1 - jitter, 1 + jitter)
        delay = min(cap, delay * factor)


def split_urls(urls: str) -> list[str]:
    """The server URLs in a comma-separated list, blanks dropped."""
    return [url.strip() for url in urls.split(",") if url.strip()]


class ServerLost(VoxdeskError):
    """The server refused a stream's connection, or dropped it before the final text: the
    stream goes on with the next server. The message says what happened."""


class Servers:
    """The servers an engine fails over between, in order; sessions start on the current one."""

    def __init__(self, urls: list[str]) -> None:
        if not urls:
            raise ValueError("no server URL given")
        self.urls = urls
        self._current = 0

    @property
    def url(self) -> str:
        """The server sessions start on now."""
        return self.urls[self._current]

    def move_on(self) -> str:
        """Make the next server in the list current; its URL."""
        self._current = (self._current + 1) % len(self.urls)
        return self.url

    async def first_answering(self, probe: Callable[[], Awaitable[None]]) -> None:
        """Run ``probe`` against the current server, then the next ones, until it succeeds; the
        server that answered stays current.

        ``probe`` talks to :attr:`url` and raises :class:`ServerLost` to try the next server;
        anything else it raises (e.g. ``EngineUnavailable`` for a refused key) ends the search.

        Raises:
            EngineUnavailable: no server answered; the message gives each one's failure.
        """
        failures: list[str] = []
        for _ in self.urls:
            try:
                await probe()
                return
            except ServerLost as lost:
                failures.append(str(lost))
            self.move_on()
        raise EngineUnavailable("; ".join(failures))


class HeardAudio:
    """A stream's audio as read from the caller, kept so that it can be replayed to another
    server. Reads are shielded: a sender cancelled by a lost connection must not close the
    caller's audio iterator, which the next connection goes on reading."""

    def __init__(self, audio: AsyncIterable[np.ndarray]) -> None:
        self._chunks = aiter(audio)
        self._heard: list[np.ndarray] = []
        self._reading: asyncio.Future[np.ndarray] | None = None  # survives a cancelled sender
        self.ended = False
        self.samples = 0  # samples read so far

    @property
    def seconds(self) -> float:
        """How much audio was read so far: the stream's audio time."""
        return self.samples / SAMPLE_RATE

    async def next(self) -> np.ndarray | None:
        """The next chunk, checked (``check_chunk``) and kept; ``None`` once the audio ended."""
        if self.ended:
            return None
        if self._reading is None:
            self._reading = asyncio.ensure_future(anext(self._chunks))
        reading = self._reading
        try:
            raw = await asyncio.shield(reading)
        except asyncio.CancelledError:
            # This read was cancelled (its sender's connection lost): the reading, even one
            # that got its chunk meanwhile, is the next read's, so that no chunk is lost.
            if reading.cancelled():
                self._reading = None
            raise
        except StopAsyncIteration:
            self._reading = None
            self.ended = True
            return None
        except Exception:
            self._reading = None
            raise
        self._reading = None
        chunk = check_chunk(raw)
        if len(chunk):
            self._heard.append(chunk)
            self.samples += len(chunk)
        return chunk

    def replay(self, size: int) -> Iterator[np.ndarray]:
        """The audio read so far, in pieces of at most ``size`` samples."""
        heard = np.concatenate(self._heard) if self._heard else np.zeros(0, np.float32)
        for start in range(0, len(heard), size):
            yield heard[start : start + size]

    def close(self) -> None:
        """Cancel a read still waiting for the caller's next chunk."""
        if self._reading is not None:
            self._reading.cancel()


def _shows_text(event: EngineEvent) -> bool:
    return isinstance(event, TextDelta | ProvisionalText) and bool(event.text)


class Failover:
    """One stream's way through the servers: attempts, one per connection, until one ends
    without losing its server.

    Args:
        servers: the engine's servers; a loss moves them on, so the next stream starts where
            this one ended.
        max_retries: rounds over every server the stream tries after its first connection,
            each connection lost before the final text, before it gives up.
        kind: what the servers are, for messages ("speech server", "Wyoming server").
    """

    def __init__(self, servers: Servers, max_retries: int, kind: str) -> None:
        self._servers = servers
        self._max_retries = max_retries
        self._kind = kind
        self._failures = 0  # connections of this stream lost before its final text

    async def run(
        self, attempt: Callable[[], AsyncIterator[EngineEvent]], audio: HeardAudio
    ) -> AsyncIterator[EngineEvent]:
        """The events of ``attempt()`` against :attr:`Servers.url`, and of new attempts after
        each :class:`ServerLost`, with the loss reported and shown text retracted between them.

        ``attempt`` must start from the beginning of ``audio`` (the kept audio replayed), whose
        audio time the events this adds carry; ``audio`` is closed when the stream ends. After
        ``max_retries`` more rounds over the servers, each connection lost, the stream ends with
        a fatal ``connection_lost``.
        """
        try:
            async for event in self._attempts(attempt, audio):
                yield event
        finally:
            audio.close()

    async def _attempts(
        self, attempt: Callable[[], AsyncIterator[EngineEvent]], audio: HeardAudio
    ) -> AsyncIterator[EngineEvent]:
        delays = backoff()
        while True:
            shown = False
            try:
                async for event in attempt():
                    shown = shown or _shows_text(event)
                    yield event
                return
            except ServerLost as lost:
                reason = lost
            self._failures += 1
            servers = self._servers
            if self._failures > self._max_retries * len(servers.urls):
                dropped = f"{self._failures} lost connection{'s' if self._failures > 1 else ''}"
                message = f"gave up reconnecting to {', '.join(servers.urls)} after {dropped}: {reason}"
                yield StreamError(StreamErrorCode.CONNECTION_LOST, message, audio.seconds)
                return
            lost_url, next_url = servers.url, servers.move_on()
            message = f"{self._kind} {lost_url} lost ({reason}); going on with {next_url}"
            yield StreamError(StreamErrorCode.CONNECTION_LOST, message, audio.seconds, fatal=False)
            if shown:
                yield TextRetracted(audio.seconds)
            if self._failures % len(servers.urls) == 0:  # a round over every server failed: wait first
                await asyncio.sleep(next(delays))
