"""One generation on the engine, worded for ``/v1/realtime``: deltas, provisional text, one
``done`` with usage, and the server's metrics of it."""

from __future__ import annotations

import contextlib
import time

import numpy as np
from websockets.exceptions import ConnectionClosed

from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.events import TextDelta, UtteranceDone
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.realtime.events import Usage
from voxdesk.engine.wire.session_core import SessionCore
from voxdesk.server.metrics import RealtimeMetrics
from voxdesk.server.serving import Channel, EngineJob

__all__ = ["Transcription"]


class Transcription(EngineJob[SessionCore]):
    """One engine session serving one generation; it starts running at once, and is counted
    in the server's metrics: sessions, audio, first-delta latency, engine queueing."""

    engine_failed = "Transcription failed; start a new commit"
    engine_stopped = "Transcription failed: the engine stopped; retry once the server is restarted"

    def __init__(self, channel: Channel, protocol: SessionCore, metrics: RealtimeMetrics) -> None:
        self._metrics = metrics
        self._clock = DeliveryClock()
        self._fed_samples = 0
        self._first_delta_pending = True
        self._usage = Usage()
        self.running = True
        """Whether the engine session is still open (audio fed now is still transcribed)."""
        super().__init__(channel, protocol, protocol.vocabulary)

    @property
    def interruptible(self) -> bool:
        """A generation is interrupted by a shutdown for as long as it runs."""
        return self.running

    async def feed(self, samples: np.ndarray) -> bool:
        """Hand audio to the engine, and count it; ``False`` once the generation's audio is over."""
        if not await super().feed(samples):
            return False  # the generation ended (final commit, engine failure, shutdown): its audio is moot
        self._metrics.audio_seconds.inc(len(samples) / SAMPLE_RATE)
        self._fed_samples += len(samples)
        if self._first_delta_pending:  # the clock only times the first delta
            self._clock.record(self._fed_samples, time.perf_counter())
        return True

    async def _run(self) -> None:
        """Run the engine session and report it as deltas and one ``done``."""
        self._metrics.sessions_active.inc()
        try:
            with contextlib.suppress(ConnectionClosed):
                if await self._fold():
                    self._protocol.send_done(self.text, self._usage)
                    self._log.debug("generation done (%d characters)", len(self.text))
        finally:
            self._metrics.sessions_active.dec()
            self.running = False
            with contextlib.suppress(ConnectionClosed):
                await self._channel.flush()

    def _delta(self, piece: str, event: TextDelta) -> None:
        self._protocol.send_delta(piece)
        if self._first_delta_pending and piece.strip():
            self._first_delta_pending = False
            latency = time.perf_counter() - self._clock.delivered_at(event.audio_time)
            self._metrics.first_delta_latency.observe(latency)

    def _provisional(self, text: str) -> None:
        self._protocol.send_provisional(text)

    def _utterance_done(self, event: UtteranceDone) -> None:
        self._usage = _add_usage(self._usage, event)
        if event.stats.queue_seconds is not None:
            self._metrics.engine_queue.observe(event.stats.queue_seconds)

    def _fail(self, message: str) -> None:
        self._protocol.generation_failed(message)


def _add_usage(usage: Usage, done: UtteranceDone) -> Usage:
    prompt = usage.prompt_tokens or done.stats.prompt_tokens  # vLLM counts the first prompt only
    completion = (usage.completion_tokens or 0) + done.stats.completion_tokens
    return Usage(prompt_tokens=prompt, total_tokens=prompt + completion, completion_tokens=completion)
