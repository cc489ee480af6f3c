"""One Wyoming request on the engine: audio into an engine session, its committed text back
out as ``transcript-chunk`` events, then one ``transcript`` once the client sent ``audio-stop``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

import numpy as np

from voxdesk.engine.events import StreamError, TextDelta, UtteranceDone
from voxdesk.engine.session import AudioFeed, StreamingEngine
from voxdesk.engine.wire.wyoming.events import ErrorCode
from voxdesk.engine.wire.wyoming.protocol import ServerProtocol

__all__ = ["Recognition"]


class Recognition:
    """One engine session serving one request; it starts running at once.

    ``flush`` writes what the protocol queued; it may raise ``ConnectionError``.
    """

    def __init__(
        self,
        engine: StreamingEngine,
        protocol: ServerProtocol,
        flush: Callable[[], Awaitable[None]],
        log: logging.LoggerAdapter[logging.Logger],
        max_engine_backlog: float,
        language: str | None,
    ) -> None:
        self._engine = engine
        self._protocol = protocol
        self._flush = flush
        self._log = log
        self._language = language
        self._feed = AudioFeed(max_engine_backlog)
        self._stopped = asyncio.Event()
        self.task = asyncio.create_task(self._run())

    @property
    def streaming(self) -> bool:
        """Whether the request still takes audio (no ``audio-stop`` yet)."""
        return not self._stopped.is_set()

    async def feed(self, samples: np.ndarray) -> None:
        """Hand audio to the engine; waits while the engine is behind, which stops the caller
        reading the socket, so TCP slows a client sending faster than real time."""
        await self._feed.put(samples)

    def end_audio(self) -> None:
        """``audio-stop`` (or shutdown): the engine finishes, then the transcript goes out."""
        self._stopped.set()
        self._feed.end()

    async def cancel(self) -> None:
        """Stop the engine session, whatever state it is in, and wait until it is freed."""
        if not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def _run(self) -> None:
        try:
            text, language = await self._recognize()
            await self._flush()  # an engine failure's error goes out at once
            await self._stopped.wait()  # exactly one transcript, and only after audio-stop (§3)
            self._protocol.send_transcript(text, language or self._language)
            await self._flush()
        except ConnectionError:
            self._log.debug("client gone before its transcript")

    async def _recognize(self) -> tuple[str, str | None]:
        """Run the engine session; the text so far and its language, also when it fails."""
        text, language, boundary = "", None, False
        try:
            async for event in self._engine.stream(self._feed):
                if isinstance(event, TextDelta):
                    piece = (" " if boundary and text else "") + event.text
                    boundary = False
                    text += piece
                    self._protocol.send_text(piece)
                    await self._flush()
                elif isinstance(event, UtteranceDone):
                    boundary = True
                    language = event.language or language
                elif isinstance(event, StreamError) and event.fatal:
                    self._log.warning("engine failed: %s", event.message)
                    self._protocol.send_error(ErrorCode.PROCESSING_ERROR, "Transcription failed")
                    break
        except ConnectionError:
            raise
        except Exception:
            self._log.exception("Wyoming request failed")
            self._protocol.send_error(ErrorCode.PROCESSING_ERROR, "Internal error during transcription")
        finally:
            self._feed.end()  # releases a reader waiting for room in it
        return text, language
