"""One engine session serving one client request, in every dialect: audio in, and the
engine's events folded into the request's text, which each dialect words on its wire."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

import numpy as np

from voxdesk.engine.events import EngineFault, ProvisionalText, StreamError, TextDelta, UtteranceDone
from voxdesk.engine.session import AudioFeed, StreamingEngine, open_stream

__all__ = ["INTERNAL_ERROR", "Channel", "EngineJob"]

INTERNAL_ERROR = "Internal error during transcription"
"""What a client is told when serving its request raised: never the exception itself."""


@dataclass(frozen=True)
class Channel:
    """What a request's engine session is run with: given by its connection."""

    engine: StreamingEngine
    flush: Callable[[], Awaitable[None]]
    """Writes what the dialect queued; raises one of :attr:`gone` when the client has left."""
    gone: tuple[type[Exception], ...]
    log: logging.LoggerAdapter[logging.Logger]
    max_engine_backlog: float


P = TypeVar("P")


class EngineJob(ABC, Generic[P]):
    """One engine session serving one request; it starts running at once.

    The engine's text deltas are joined into :attr:`text`, a space between utterances, and
    handed to the dialect as they come (:meth:`_delta`, :meth:`_provisional`,
    :meth:`_utterance_done`), to be queued on its wire core, ``protocol``; after each event
    the channel's ``flush`` writes them.
    """

    engine_failed: ClassVar[str]
    """What the client is told when the engine ends the session with a fatal error."""

    engine_stopped: ClassVar[str]
    """What the client is told when the engine stopped for good (the server goes away to be restarted)."""

    def __init__(self, channel: Channel, protocol: P, vocabulary: tuple[str, ...] = ()) -> None:
        """``vocabulary``: words the request asked the engine to be biased towards (before the engine's own)."""
        self._channel = channel
        self._vocabulary = vocabulary
        self._protocol = protocol
        self._log = channel.log
        self._feed = AudioFeed(channel.max_engine_backlog)
        self._boundary = False  # an utterance ended since the last delta
        self.text = ""
        """The request's text so far."""
        self.task = asyncio.create_task(self._run())

    @property
    @abstractmethod
    def interruptible(self) -> bool:
        """Whether a shutdown interrupts the request: its client is told, and its audio ended."""

    async def feed(self, samples: np.ndarray) -> bool:
        """Hand audio to the engine; ``False`` if the session's audio is over (it is dropped).

        When the engine is behind this waits, and so stops the caller reading the socket:
        TCP slows a client that sends faster than real time."""
        return await self._feed.put(samples)

    def end_audio(self) -> None:
        """No more audio: the engine finishes what it has."""
        self._feed.end()

    async def cancel(self) -> None:
        """Stop the engine session, whatever state it is in, and wait until it is freed."""
        if not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    @abstractmethod
    async def _run(self) -> None:
        """The request from start to end: :meth:`_fold`, then the dialect's last word."""

    async def _fold(self) -> bool:
        """Run the engine session to its end; whether it ended without failing. A failure is
        told the client through :meth:`_fail`; the text heard before it stays."""
        try:
            async for event in open_stream(self._channel.engine, self._feed, self._vocabulary):
                if isinstance(event, TextDelta):
                    piece = (" " if self._boundary and self.text else "") + event.text
                    self._boundary = False
                    self.text += piece
                    self._delta(piece, event)
                elif isinstance(event, ProvisionalText):
                    separate = self._boundary and self.text and event.text
                    self._provisional((" " if separate else "") + event.text)
                elif isinstance(event, UtteranceDone):
                    self._boundary = True
                    self._utterance_done(event)
                elif isinstance(event, StreamError) and event.fatal:
                    self._fail(self._failed(event))
                    return False
                elif isinstance(event, StreamError):
                    self._log.info("engine recovered from: %s", event.message)
                await self._channel.flush()
        except self._channel.gone:
            raise
        except Exception:
            self._log.exception("transcription failed")
            self._fail(INTERNAL_ERROR)
            return False
        finally:
            self._feed.end()  # releases a reader waiting for room in it
        return True

    def _failed(self, error: StreamError) -> str:
        """Log a fatal engine error; what the client is told (never the engine's own words)."""
        if error.engine_fault is EngineFault.ENGINE:
            self._log.error("engine stopped: %s", error.message)
            return self.engine_stopped
        if error.engine_fault is EngineFault.SESSION:
            self._log.error("engine failed this session: %s", error.message)
        else:
            self._log.warning("engine failed: %s", error.message)
        return self.engine_failed

    @abstractmethod
    def _delta(self, piece: str, event: TextDelta) -> None:
        """Queue ``piece``, the text ``event`` appends (with its leading space, if any)."""

    @abstractmethod
    def _provisional(self, text: str) -> None:
        """Queue text that may still change (with its leading space, if any)."""

    @abstractmethod
    def _utterance_done(self, event: UtteranceDone) -> None:
        """Take note of an utterance's end (its usage, its language)."""

    @abstractmethod
    def _fail(self, message: str) -> None:
        """Queue the dialect's error for a failed request."""
