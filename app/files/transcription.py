"""Streaming one recording through an engine and measuring what came out when."""

from __future__ import annotations

import statistics
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import numpy as np

from voxdesk.app.files.pacing import paced_chunks
from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.events import EngineEvent, ProvisionalText, StreamError, StreamErrorCode, TextDelta, UtteranceDone
from voxdesk.engine.session import SAMPLE_RATE, StreamingEngine, open_stream

__all__ = ["TimedEvent", "TranscriptionReport", "UtteranceReport", "percentile", "transcribe_audio"]


@dataclass(frozen=True)
class TimedEvent:
    """An engine event and when it arrived, in seconds since the stream started."""

    event: EngineEvent
    wall_time: float


@dataclass(frozen=True)
class UtteranceReport:
    """One final utterance and its latencies (seconds, wall clock).

    ``first_text_latency``: from the moment the audio at speech onset was delivered to the
    first text shown for the utterance (provisional or committed). ``final_latency``: from the
    moment the audio at the end of speech was delivered to ``UtteranceDone``. Both are ``None``
    for a file decoded as a whole (:mod:`voxdesk.app.files.job`), where nothing was live.
    """

    done: UtteranceDone
    first_text_latency: float | None
    final_latency: float | None


@dataclass
class TranscriptionReport:
    """Everything one transcription produced, with timings.

    ``partial``: it was stopped before the end; ``transcribed_seconds`` says how far it got.
    """

    audio_seconds: float
    transcribed_seconds: float = 0.0
    partial: bool = False
    timeline: list[TimedEvent] = field(default_factory=list)
    utterances: list[UtteranceReport] = field(default_factory=list)
    errors: list[StreamError] = field(default_factory=list)
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0

    @property
    def text(self) -> str:
        """All non-empty final texts, space-separated."""
        return " ".join(u.done.text for u in self.utterances if u.done.text)

    @property
    def lost_words(self) -> bool:
        """Whether an error may have cost words: any but a connection loss the engine recovered
        from (the remote engine replays the lost server's unfinished audio to the next one)."""
        return any(e.fatal or e.code != StreamErrorCode.CONNECTION_LOST for e in self.errors)

    @property
    def decode_seconds(self) -> float | None:
        """Time the engine spent decoding, over all utterances; ``None`` if it does not say."""
        times = [u.done.stats.decode_seconds for u in self.utterances]
        return None if None in times else sum(t for t in times if t is not None)

    @property
    def speed(self) -> float:
        """Audio transcribed per wall-clock second (x real time)."""
        return self.transcribed_seconds / max(self.wall_seconds, 1e-9)

    def summary(self) -> dict[str, float | int | bool | list[str] | None]:
        """Latency medians and p90s, real-time factors, CPU cost and the languages heard, for printing or JSON."""
        first = [u.first_text_latency for u in self.utterances if u.done.text and u.first_text_latency is not None]
        final = [u.final_latency for u in self.utterances if u.done.text and u.final_latency is not None]
        audio = max(self.audio_seconds, 1e-9)
        return {
            "audio_seconds": round(self.audio_seconds, 3),
            "transcribed_seconds": round(self.transcribed_seconds, 3),
            "partial": self.partial,
            "speed": round(self.speed, 2),
            "utterances": sum(1 for u in self.utterances if u.done.text),
            "first_partial_latency_median_s": _rounded(percentile(first, 50)),
            "first_partial_latency_p90_s": _rounded(percentile(first, 90)),
            "final_latency_median_s": _rounded(percentile(final, 50)),
            "final_latency_p90_s": _rounded(percentile(final, 90)),
            "real_time_factor": None if self.decode_seconds is None else round(self.decode_seconds / audio, 3),
            "wall_real_time_factor": round(self.wall_seconds / audio, 3),
            "cpu_seconds_per_audio_second": round(self.cpu_seconds / audio, 3),
            "languages": sorted({u.done.language for u in self.utterances if u.done.text and u.done.language}),
        }


def percentile(values: list[float], q: float) -> float | None:
    """The ``q``-th percentile (linear interpolation), ``None`` for no values."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if q < 100 else max(values)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


async def transcribe_audio(
    engine: StreamingEngine,
    audio: np.ndarray,
    realtime: bool = True,
    on_event: Callable[[TimedEvent], None] | None = None,
    chunk_seconds: float = 0.1,
    should_stop: Callable[[], bool] | None = None,
    on_position: Callable[[float], None] | None = None,
    vocabulary: tuple[str, ...] = (),
) -> TranscriptionReport:
    """Stream ``audio`` (16 kHz mono float32) through a loaded engine and time every event.

    With ``realtime`` the audio is delivered at the pace it would be spoken. Once
    ``should_stop()`` is true no more audio is delivered: the engine finishes what it heard and
    the report is marked partial. ``on_position`` gets the seconds of audio delivered so far.
    An engine that takes session options is biased towards ``vocabulary``.
    """
    clock = DeliveryClock()
    report = TranscriptionReport(audio_seconds=len(audio) / SAMPLE_RATE)
    start, cpu_start = time.perf_counter(), time.process_time()
    first_text: float | None = None

    async def delivered() -> AsyncIterator[np.ndarray]:
        async for chunk in paced_chunks(audio, clock, chunk_seconds, realtime):
            if should_stop is not None and should_stop():
                report.partial = True
                return
            report.transcribed_seconds += len(chunk) / SAMPLE_RATE
            if on_position is not None:
                on_position(report.transcribed_seconds)
            yield chunk

    async for event in open_stream(engine, delivered(), vocabulary):
        now = time.perf_counter()
        timed = TimedEvent(event, now - start)
        report.timeline.append(timed)
        if on_event:
            on_event(timed)
        if isinstance(event, TextDelta | ProvisionalText) and event.text and first_text is None:
            first_text = now
        elif isinstance(event, UtteranceDone):
            onset = clock.delivered_at(event.speech_start)
            report.utterances.append(
                UtteranceReport(
                    done=event,
                    first_text_latency=(first_text if first_text is not None else now) - onset,
                    final_latency=now - clock.delivered_at(event.speech_end),
                )
            )
            first_text = None
        elif isinstance(event, StreamError):
            report.errors.append(event)
    report.wall_seconds = time.perf_counter() - start
    report.cpu_seconds = time.process_time() - cpu_start
    return report
