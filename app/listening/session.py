"""One listening session: microphone → engine streams → transcript, with per-utterance latency.

Engines that find utterances themselves (the built-in one) get one continuous stream. For
engines that make a whole stream one utterance (vLLM, ``/v1/realtime`` servers) a voice-activity
gate opens a stream at each speech onset (with some audio from just before it) and ends it
after the configured silence, so each utterance gets its final text, and a realtime server
its ``final`` commit, shortly after the speaker stops.

Latency is measured against the wall-clock time at which PortAudio handed over the audio:
first partial = first text of an utterance minus capture of its speech onset; final = final
text minus capture of its speech end (so it includes the endpoint silence).

Audio waits for the engine in one place: the stream's :class:`~voxdesk.engine.session.AudioFeed`,
which holds at most ``MAX_BACKLOG_SECONDS`` and drops the oldest audio beyond that. The session
hands each chunk over without waiting, so capture never backs up behind a slow engine; what was
dropped is reported as :class:`~voxdesk.app.listening.events.AudioDropped`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import numpy as np

from voxdesk.app.listening.capture import AudioCapture, MicrophoneUnavailable
from voxdesk.app.listening.events import (
    AudioDropped,
    Concern,
    ControllerEvent,
    Problem,
    TranscriptChanged,
    UtteranceFinal,
)
from voxdesk.app.listening.transcript import Transcript, Utterance
from voxdesk.engine.audio.endpoint import EndpointSettings
from voxdesk.engine.audio.gate import GateAudio, GateEvent, GateStarted, GateStopped, SpeechGate
from voxdesk.engine.audio.silero import SileroVad
from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.errors import AudioFormatError, one_line
from voxdesk.engine.events import (
    EngineFault,
    ProvisionalText,
    StreamError,
    StreamErrorCode,
    TextDelta,
    TextRetracted,
    UtteranceDone,
)
from voxdesk.engine.session import SAMPLE_RATE, AudioFeed, StreamingEngine, open_stream

__all__ = ["ListeningSession"]

logger = logging.getLogger("voxdesk.listening")

PRE_ROLL_SECONDS = 0.4  # audio before a detected onset that a gated stream starts with
FINISH_TIMEOUT_SECONDS = 30.0  # how long stopping waits for the last final texts
# Audio an engine may fall behind before the oldest is dropped: over three times the final
# latency at which a model counts as too slow (speed.FINAL_LATENCY_LIMIT), so stalls of an
# engine that keeps up on the whole (a long final decode, a remote reconnect's backoff and
# replay) lose nothing, while text never trails the speaker by more than this. 320 kB a stream.
MAX_BACKLOG_SECONDS = 5.0
DROP_REPORT_SECONDS = 0.1  # a run of drops is reported in steps of this (the precision shown), then in full


@dataclass
class _Stream:
    """One engine stream and where it sits in the session's audio."""

    offset: int  # session sample of the stream's first sample
    feed: AudioFeed = field(default_factory=lambda: AudioFeed(MAX_BACKLOG_SECONDS, drop_oldest=True))
    speech_start: float | None = None  # session seconds, when a gate found them
    speech_end: float | None = None


class ListeningSession:
    """Runs until its :meth:`run` task is cancelled; reports through ``emit``. Never raises to its caller."""

    def __init__(
        self,
        engine: StreamingEngine,
        capture: AudioCapture,
        transcript: Transcript,
        emit: Callable[[ControllerEvent], None],
        *,
        silence_seconds: float = 0.6,
        on_stream_error: Callable[[StreamError], None] = lambda error: None,
        on_engine_alive: Callable[[], None] = lambda: None,
        vocabulary: tuple[str, ...] = (),
        own_voice_at: Callable[[float], bool] = lambda captured_at: False,
    ) -> None:
        """``vocabulary``: words each stream is biased towards, where the engine takes them.
        Audio captured while ``own_voice_at`` its capture time is heard as silence: the
        microphone may hear Voxdesk's spoken reply, which is no one speaking to it."""
        self._engine = engine
        self._own_voice_at = own_voice_at
        self._vocabulary = vocabulary
        self._capture = capture
        self._transcript = transcript
        self._emit = emit
        self._on_stream_error = on_stream_error
        self._on_engine_alive = on_engine_alive
        self._clock = DeliveryClock()
        self._samples = 0
        self._stream: _Stream | None = None
        self._consumers: set[asyncio.Task[None]] = set()
        self._dirty: set[int] = set()  # utterances changed since the last report
        self._dropped = 0.0  # seconds of audio dropped in all streams so far
        self._reported_dropped = 0.0
        self._gate = None if engine.detects_speech else _SpeechGate(silence_seconds)

    async def run(self) -> None:
        """Capture and transcribe until cancelled (listening stops) or no microphone can be opened."""
        try:
            async with contextlib.aclosing(self._capture.chunks()) as chunks:
                async for chunk, captured_at in chunks:
                    self._take(chunk, captured_at)
        except MicrophoneUnavailable as exc:
            self._emit(Problem(str(exc), concern=Concern.MICROPHONE))

    def break_stream(self) -> None:
        """End the stream in progress so its utterance gets a final text (the microphone went
        away); the next audio opens a new one."""
        if self._stream is not None:
            self._stream.feed.end()
            self._stream = None
        if self._gate is not None:
            self._gate.reset()

    async def wait_for_finals(self, timeout: float = FINISH_TIMEOUT_SECONDS) -> None:
        """After capture stopped: end the open stream and wait for its last events."""
        self.break_stream()
        if self._consumers:
            _, late = await asyncio.wait(set(self._consumers), timeout=timeout)
            for task in late:
                task.cancel()

    def _take(self, chunk: np.ndarray, captured_at: float) -> None:
        if self._own_voice_at(captured_at):
            chunk = np.zeros_like(chunk)
        start = self._samples
        self._samples += len(chunk)
        self._clock.record(self._samples, captured_at)
        if self._gate is None:
            if self._stream is None:
                self._open(_Stream(offset=start))
            assert self._stream is not None
            self._push(chunk)
            return
        for step in self._gate.feed(chunk, start):
            if isinstance(step, GateStarted) and self._stream is None:
                self._open(_Stream(offset=step.audio_start, speech_start=step.sample / SAMPLE_RATE))
            elif isinstance(step, GateAudio) and self._stream is not None:
                self._push(step.samples)
            elif isinstance(step, GateStopped) and self._stream is not None:
                self._stream.speech_end = step.sample / SAMPLE_RATE
                self._stream.feed.end()
                self._stream = None

    def _push(self, samples: np.ndarray) -> None:
        """Hand audio to the open stream's feed, reporting what it dropped to make room."""
        assert self._stream is not None
        feed = self._stream.feed
        before = feed.dropped_seconds
        feed.push(samples)
        dropped = feed.dropped_seconds - before
        if dropped and not self._dropped:
            logger.warning("the engine fell %g s behind; dropping the oldest audio", MAX_BACKLOG_SECONDS)
        self._dropped += dropped
        unreported = self._dropped - self._reported_dropped
        if unreported and (not dropped or not self._reported_dropped or unreported >= DROP_REPORT_SECONDS):
            self._reported_dropped = self._dropped
            self._emit(AudioDropped(self._dropped))

    def _open(self, stream: _Stream) -> None:
        self._stream = stream
        task = asyncio.ensure_future(self._consume(stream))
        self._consumers.add(task)
        task.add_done_callback(self._consumers.discard)

    async def _consume(self, stream: _Stream) -> None:
        """Engine events of one stream → transcript updates and latencies."""
        offset = stream.offset / SAMPLE_RATE
        utterance: Utterance | None = None
        first_text_at = 0.0
        try:
            events: AsyncIterator[object] = aiter(open_stream(self._engine, stream.feed, self._vocabulary))
            async for event in events:
                now = time.perf_counter()
                if isinstance(event, TextDelta | ProvisionalText):
                    if utterance is None and not event.text.strip():
                        continue
                    if utterance is None:
                        utterance, first_text_at = self._transcript.open(), now
                    if isinstance(event, TextDelta):
                        self._transcript.commit(utterance.id, event.text)
                    else:
                        self._transcript.set_provisional(utterance.id, event.text)
                    self._changed(utterance.id)
                    self._on_engine_alive()
                elif isinstance(event, TextRetracted) and utterance is not None:
                    self._transcript.retract(utterance.id)
                    self._changed(utterance.id)
                elif isinstance(event, UtteranceDone):
                    at = stream.feed.pushed_seconds  # the engine's times skip audio the feed dropped
                    start = stream.speech_start if stream.speech_start is not None else offset + at(event.speech_start)
                    end = stream.speech_end if stream.speech_end is not None else offset + at(event.speech_end)
                    if not event.text.strip():
                        if utterance is not None:
                            self._transcript.discard(utterance.id)
                        utterance = None
                        continue
                    if utterance is None:
                        utterance, first_text_at = self._transcript.open(), now
                    self._final(utterance.id, event, start, end, first_text_at, now)
                    utterance = None
                elif isinstance(event, StreamError):
                    self._on_stream_error(event)
        except AudioFormatError as exc:
            self._emit(Problem(f"the microphone sent audio the engine cannot use: {exc}", concern=Concern.MICROPHONE))
        except Exception as exc:
            logger.exception("engine stream failed")
            seconds = self._samples / SAMPLE_RATE - offset
            message = f"the speech engine failed: {one_line(exc)}"
            self._on_stream_error(
                StreamError(StreamErrorCode.PROCESSING_ERROR, message, seconds, engine_fault=EngineFault.SESSION)
            )
        finally:
            if self._stream is stream:  # the engine ended it (it failed): the next audio opens a new one
                self._stream = None

    def _changed(self, utterance_id: int) -> None:
        """Report a change once the events already waiting are applied: an engine commits a
        word and shrinks its provisional tail in two events, and a window should not show
        the word twice in between."""
        if not self._dirty:
            asyncio.get_running_loop().call_soon(self._report_changes)
        self._dirty.add(utterance_id)

    def _report_changes(self) -> None:
        dirty, self._dirty = self._dirty, set()
        for utterance_id in sorted(dirty):
            utterance = self._transcript.get(utterance_id)
            if utterance is not None and not utterance.final:
                self._emit(TranscriptChanged(_copy(utterance)))

    def _final(
        self, utterance_id: int, done: UtteranceDone, start: float, end: float, first_at: float, now: float
    ) -> None:
        utterance = self._transcript.finish(utterance_id, done.text, start, end, done.language)
        if utterance is None:  # cleared while it was being spoken
            return
        utterance.first_partial_latency = first_at - self._clock.delivered_at(start)
        utterance.final_latency = now - self._clock.delivered_at(end)
        self._clock.forget_before(start)
        self._emit(TranscriptChanged(_copy(utterance)))
        self._emit(UtteranceFinal(_copy(utterance), done.stats))


def _copy(utterance: Utterance) -> Utterance:
    return Utterance(**vars(utterance))


class _SpeechGate:
    """The session's speech gate: Silero VAD, the configured end-of-speech silence and
    ``PRE_ROLL_SECONDS`` of pre-roll, in session samples; :meth:`reset` starts it afresh."""

    def __init__(self, silence_seconds: float) -> None:
        self._vad = SileroVad()
        self._endpoint = EndpointSettings(silence_seconds=silence_seconds)
        self._gate: SpeechGate | None = None  # made at the first chunk after a reset

    def reset(self) -> None:
        """Forget all audio: the next chunk starts a new stream for the VAD."""
        self._vad.reset()
        self._gate = None

    def feed(self, chunk: np.ndarray, start: int) -> list[GateEvent]:
        """The gate's events for ``chunk``, which starts at session sample ``start``."""
        if self._gate is None:
            self._gate = SpeechGate(self._vad.probabilities, self._endpoint, PRE_ROLL_SECONDS, start)
        return self._gate.feed(chunk)
