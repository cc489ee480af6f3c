"""The streaming-session interface every Voxdesk speech engine implements.

This module is the contract between engines (the built-in one on the CPU, in-process vLLM, and
client engines for a remote server of each dialect: vLLM's ``/v1/realtime``, OpenAI Realtime,
Wyoming) and their callers (``voxdesk transcribe``, the server, the desktop app).

The shape follows vLLM's streaming input, where ``AsyncLLM.generate`` takes an async
generator of ``StreamingInput`` chunks and yields outputs while input keeps arriving:

.. code-block:: python

    engine = BuiltinEngine()                          # voxdesk.engine.whisper.builtin
    await engine.load()
    async for event in engine.stream(audio_chunks):   # one session = one call
        ...
    await engine.aclose()

Audio in
    ``audio_chunks`` is any async iterable of 1-D ``float32`` NumPy arrays: mono, 16 kHz
    (:data:`SAMPLE_RATE`), samples nominally in [-1, 1], any chunk size (empty chunks are
    allowed). The session reads chunks as they come and keeps producing events while the
    caller is still sending. Ending the iterable ends the stream: the engine finishes the
    utterance in progress and the event iterator ends after its ``UtteranceDone``.
    :class:`AudioFeed` turns push-style producers (a microphone callback, a WebSocket) into
    such an iterable.

Events out (:mod:`voxdesk.engine.events`)
    - ``TextDelta``: committed text, append-only. The deltas of one utterance (after its last
      ``TextRetracted``, if any) concatenate exactly to that utterance's final text. It may be
      ``""``: the vLLM engine yields one delta per model step, as vLLM's server sends them.
    - ``ProvisionalText``: the engine's current guess after the committed text; each one
      replaces the previous one, ``""`` clears it. Engines that never revise text (vLLM)
      do not send it.
    - ``TextRetracted``: the utterance in progress lost its text (committed and provisional);
      its audio is transcribed again and new deltas follow. Only the remote engines send it,
      after moving to another server mid-utterance.
    - ``UtteranceDone``: the final text of one utterance, its detected speech bounds and
      stats. A stream holds any number of utterances one after another. Engines without
      their own voice-activity detection (vLLM, remote) make the whole stream one utterance
      and report its bounds as the start and end of the stream.
    - ``StreamError``: something failed; text already yielded stays valid. A fatal error
      ends the session.

    Every event has ``audio_time``, seconds from the first sample of the stream, and it
    never decreases along a session.

Session options
    ``engine.stream(audio)`` runs a session as the engine is configured. An engine that can
    do more for one session (:class:`TakesSessionOptions`: the built-in one) also has
    ``stream_with(audio, options)``, with :class:`SessionOptions` for that session, e.g. the
    vocabulary it biases its decoder with; :func:`open_stream` uses it where the engine has it.
    Engines that cannot be biased ignore the vocabulary, and callers correct their committed
    text after the fact instead.

Lifetime
    An engine holds the model; sessions are cheap and several may run at once. Leaving the
    ``async for`` early (``break``, cancellation) ends the session and frees what it holds.
    Bad audio makes the session raise :class:`~voxdesk.engine.errors.AudioFormatError` from the
    event iterator; text already yielded is kept by the caller.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from voxdesk.engine.errors import AudioBufferFull, AudioFormatError
from voxdesk.engine.events import EngineEvent

__all__ = [
    "SAMPLE_RATE",
    "AudioFeed",
    "ProgressCallback",
    "SessionOptions",
    "StreamingEngine",
    "TakesSessionOptions",
    "check_chunk",
    "open_stream",
]

SAMPLE_RATE = 16_000

_GAP_MEMORY_SECONDS = 60.0  # engines report times at most one utterance (Whisper: 30 s) back

ProgressCallback = Callable[[str, float], None]
"""Called during loading with a human-readable step and the fraction done (0 to 1)."""


@runtime_checkable
class StreamingEngine(Protocol):
    """A speech engine that turns streams of audio into streams of text events."""

    name: str
    detects_speech: bool
    """Whether the engine splits a stream into utterances itself (voice-activity detection).
    Callers gate audio into one stream per utterance for engines that do not."""

    async def load(self, progress: ProgressCallback | None = None) -> None:
        """Load models; slow, call once before ``stream``.

        Raises:
            EngineUnavailable: the engine cannot run here; the message says why.
        """
        ...

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        """Open one session over ``audio`` and yield its events until the audio ends."""
        ...

    async def aclose(self) -> None:
        """Release the model and every resource the engine holds."""
        ...


@dataclass(frozen=True)
class SessionOptions:
    """What a caller asks of one session besides its audio."""

    vocabulary: tuple[str, ...] = ()
    """Words and phrases to write as given (names, product words), most relevant first."""

    def adding(self, vocabulary: tuple[str, ...]) -> SessionOptions:
        """These options with ``vocabulary`` first (more relevant) and these after it."""
        return SessionOptions(vocabulary + self.vocabulary)


@runtime_checkable
class TakesSessionOptions(Protocol):
    """An engine whose sessions can be given :class:`SessionOptions`."""

    session_options: SessionOptions
    """What ``stream(audio)`` uses: the engine's defaults (``voxdesk serve --vocabulary``)."""

    def stream_with(self, audio: AsyncIterable[np.ndarray], options: SessionOptions) -> AsyncIterator[EngineEvent]:
        """Open one session over ``audio`` with ``options`` instead of :attr:`session_options`."""
        ...


def open_stream(
    engine: StreamingEngine, audio: AsyncIterable[np.ndarray], vocabulary: tuple[str, ...] = ()
) -> AsyncIterator[EngineEvent]:
    """One session of ``engine``; where it takes options, with ``vocabulary`` before the
    engine's own (a session's own words are the most relevant)."""
    if vocabulary and isinstance(engine, TakesSessionOptions):
        return engine.stream_with(audio, engine.session_options.adding(vocabulary))
    return engine.stream(audio)


def check_chunk(chunk: object) -> np.ndarray:
    """Return ``chunk`` as a contiguous 1-D float32 array, or raise ``AudioFormatError``."""
    if not isinstance(chunk, np.ndarray):
        raise AudioFormatError(f"audio chunk must be a NumPy array, got {type(chunk).__name__}")
    if chunk.ndim != 1:
        raise AudioFormatError(f"audio chunk must be mono (1-D), got shape {chunk.shape}")
    if chunk.dtype != np.float32:
        raise AudioFormatError(f"audio chunk must be float32 samples, got {chunk.dtype}")
    if not np.all(np.isfinite(chunk)):
        raise AudioFormatError("audio chunk contains NaN or infinite samples")
    return np.ascontiguousarray(chunk)


class AudioFeed:
    """A bounded push-to-pull adapter: push chunks in, iterate them out.

    At most ``max_buffered_seconds`` of audio waits unread (a single longer chunk is let into
    an empty feed). Beyond the bound ``push`` never blocks: it raises :class:`AudioBufferFull`
    and keeps what it already holds, or, in a feed made with ``drop_oldest``, drops the oldest
    unread chunks to make room and counts them in :attr:`dropped_seconds` (for producers that
    cannot wait and must stay live, like a microphone). ``put`` waits for room instead (for
    producers that can be slowed down, like a socket); in a ``drop_oldest`` feed it never waits.
    Call ``end`` when the audio is over; iteration then finishes after the buffered chunks.
    """

    def __init__(self, max_buffered_seconds: float = 30.0, *, drop_oldest: bool = False) -> None:
        self._queue: asyncio.Queue[np.ndarray | None] = asyncio.Queue()
        self._max_samples = int(max_buffered_seconds * SAMPLE_RATE)
        self._drop_oldest = drop_oldest
        self._buffered = 0
        self._read = 0  # samples iterated out
        self._dropped = 0
        # (samples read when a drop happened, samples dropped up to then), the last minute's worth
        self._gaps: collections.deque[tuple[int, int]] = collections.deque()
        self._ended = False
        self._room = asyncio.Event()

    @property
    def buffered_seconds(self) -> float:
        """Seconds of audio pushed but not yet read."""
        return self._buffered / SAMPLE_RATE

    @property
    def dropped_seconds(self) -> float:
        """Seconds of the oldest audio a ``drop_oldest`` feed dropped to make room, in all."""
        return self._dropped / SAMPLE_RATE

    def pushed_seconds(self, read_seconds: float) -> float:
        """Where a time in the audio read out of the feed lies in the audio pushed in: later by
        what was dropped before it (exact for the last minute of reading)."""
        sample = read_seconds * SAMPLE_RATE
        dropped = next((total for at, total in reversed(self._gaps) if at <= sample), 0)
        return (sample + dropped) / SAMPLE_RATE

    def push(self, chunk: np.ndarray) -> None:
        """Queue one chunk (checked with :func:`check_chunk`); beyond the bound, drop the oldest
        audio (``drop_oldest``) or raise ``AudioBufferFull``."""
        if self._ended:
            raise RuntimeError("push() after end()")
        chunk = check_chunk(chunk)
        if not self._drop_oldest and not self._fits(chunk):
            raise AudioBufferFull(f"more than {self._max_samples / SAMPLE_RATE:g} s of audio waiting for the engine")
        self._make_room(chunk)
        self._enqueue(chunk)

    async def put(self, chunk: np.ndarray) -> bool:
        """Queue one chunk, first waiting until it fits (or dropping the oldest audio, in a
        ``drop_oldest`` feed). Returns ``False`` (chunk dropped) if the feed ended while
        waiting or before."""
        chunk = check_chunk(chunk)
        if self._drop_oldest and not self._ended:
            self._make_room(chunk)
        while not self._ended and not self._fits(chunk):
            self._room.clear()
            await self._room.wait()
        if self._ended:
            return False
        self._enqueue(chunk)
        return True

    def end(self) -> None:
        """Mark the end of the audio; idempotent. Wakes producers waiting in ``put``."""
        if not self._ended:
            self._ended = True
            self._queue.put_nowait(None)
            self._room.set()

    def __aiter__(self) -> AsyncIterator[np.ndarray]:
        return self._chunks()

    def _fits(self, chunk: np.ndarray) -> bool:
        return self._buffered == 0 or self._buffered + len(chunk) <= self._max_samples

    def _make_room(self, chunk: np.ndarray) -> None:
        """Drop the oldest unread chunks until ``chunk`` fits; they would have been read next,
        so the reader's audio skips them where it stands now."""
        if self._fits(chunk):
            return
        while not self._fits(chunk):
            oldest = self._queue.get_nowait()
            assert oldest is not None  # nothing is pushed after end()
            self._buffered -= len(oldest)
            self._dropped += len(oldest)
        if self._gaps and self._gaps[-1][0] == self._read:
            self._gaps.pop()
        self._gaps.append((self._read, self._dropped))
        while len(self._gaps) > 1 and self._gaps[1][0] < self._read - _GAP_MEMORY_SECONDS * SAMPLE_RATE:
            self._gaps.popleft()

    def _enqueue(self, chunk: np.ndarray) -> None:
        self._buffered += len(chunk)
        self._queue.put_nowait(chunk)

    async def _chunks(self) -> AsyncIterator[np.ndarray]:
        while (chunk := await self._queue.get()) is not None:
            self._buffered -= len(chunk)
            self._read += len(chunk)
            self._room.set()
            yield chunk
