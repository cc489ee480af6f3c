"""One generation on the engine: audio from the socket into an engine session, the session's
events back out as protocol events (deltas, provisional text, one ``done`` with usage)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

import numpy as np
from websockets.exceptions import ConnectionClosed

from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.events import ProvisionalText, StreamError, TextDelta, UtteranceDone
from voxdesk.engine.session import SAMPLE_RATE, AudioFeed, StreamingEngine
from voxdesk.engine.wire.realtime.events import Usage
from voxdesk.engine.wire.realtime.protocol import ServerProtocol
from voxdesk.server.metrics import RealtimeMetrics

__all__ = ["Transcription"]


class Transcription:
    """One engine session serving one generation; it starts running at once.

    ``flush`` writes what the protocol queued to the socket; it may raise ``ConnectionClosed``.
    """

    def __init__(
        self,
        engine: StreamingEngine,
        protocol: ServerProtocol,
        flush: Callable[[], Awaitable[None]],
        log: logging.LoggerAdapter[logging.Logger],
        metrics: RealtimeMetrics,
        max_engine_backlog: float,
    ) -> None:
        self._engine = engine
        self._protocol = protocol
        self._flush = flush
        self._log = log
        self._metrics = metrics
        self._feed = AudioFeed(max_engine_backlog)
        self._clock = DeliveryClock()
        self._fed_samples = 0
        self._first_delta_pending = True
        self.running = True
        """Whether the engine session is still open (audio fed now is still transcribed)."""
        self.task = asyncio.create_task(self._run())

    async def feed(self, samples: np.ndarray) -> None:
        """Hand audio to the engine. When the engine is behind this waits, and so stops the
        caller reading the socket: TCP slows a client that streams a file faster than real time."""
        if not self.running or not await self._feed.put(samples):
            return  # the generation ended (engine failure, shutdown): its audio is moot
        self._metrics.audio_seconds.inc(len(samples) / SAMPLE_RATE)
        self._fed_samples += len(samples)
        if self._first_delta_pending:  # the clock only times the first delta
            self._clock.record(self._fed_samples, time.perf_counter())

    def end_audio(self) -> None:
        """No more audio: the engine finishes what it has."""
        self._feed.end()

    async def cancel(self) -> None:
        """Stop the engine session, whatever state it is in, and wait until it is freed."""
        if not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def _run(self) -> None:
        """Run the engine session and report it as deltas and one ``done``."""
        protocol, clock = self._protocol, self._clock
        text, usage, boundary = "", Usage(), False
        self._metrics.sessions_active.inc()
        try:
            async for event in self._engine.stream(self._feed):
                if isinstance(event, TextDelta):
                    piece = (" " if boundary and text else "") + event.text
                    boundary = False
                    text += piece
                    protocol.send_delta(piece)
                    if self._first_delta_pending and piece.strip():
                        self._first_delta_pending = False
                        self._metrics.first_delta_latency.observe(
                            time.perf_counter() - clock.delivered_at(event.audio_time)
                        )
                elif isinstance(event, ProvisionalText):
                    separate = boundary and text and event.text
                    protocol.send_provisional((" " if separate else "") + event.text)
                elif isinstance(event, UtteranceDone):
                    boundary = True
                    usage = _add_usage(usage, event)
                    if event.stats.queue_seconds is not None:
                        self._metrics.engine_queue.observe(event.stats.queue_seconds)
                elif isinstance(event, StreamError):
                    self._log.warning("engine failed: %s", event.message)
                    protocol.generation_failed("Transcription failed; start a new commit")
                    return
                await self._flush()
            protocol.send_done(text, usage)
            self._log.debug("generation done (%d characters)", len(text))
        except ConnectionClosed:
            return
        except Exception:
            self._log.exception("realtime generation failed")
            protocol.generation_failed("Internal error during transcription")
        finally:
            self._metrics.sessions_active.dec()
            self._feed.end()  # releases a reader waiting for room in it
            self.running = False
            with contextlib.suppress(ConnectionClosed):
                await self._flush()


def _add_usage(usage: Usage, done: UtteranceDone) -> Usage:
    prompt = usage.prompt_tokens or done.stats.prompt_tokens  # vLLM counts the first prompt only
    completion = (usage.completion_tokens or 0) + done.stats.completion_tokens
    return Usage(prompt_tokens=prompt, total_tokens=prompt + completion, completion_tokens=completion)
