"""The built-in CPU engine: Silero VAD gating Whisper tiny.en in pseudo-streaming mode.

While speech goes on, the utterance's audio is re-decoded greedily about every
``partial_interval`` seconds; words two partials agree on are committed
(:mod:`voxdesk.engine.whisper.agreement`), the rest is provisional. When the VAD hears ``silence_seconds`` of
silence the utterance gets a beam-search final decode that continues the committed words;
that decode starts speculatively after ``early_final_silence`` (``early_final_after_sentence``
when the text shown so far ends like a finished sentence) and is used when the pause
turns out to be the end of speech, which takes its cost off the final latency. When that
speculative final ends like a finished sentence (``.``, ``?`` or ``!`` after a word that does
not leave the sentence hanging, such as "the" or "and") and the speaker is still silent when
it is ready, the pause ends the utterance there and then instead of after ``silence_seconds``.
Utterances longer than ``max_utterance_seconds`` are cut at a Whisper segment boundary.
When the background is loud (an SNR estimate from the VAD's speech and non-speech windows
below ``noisy_snr_db``), partials commit nothing: in noise two greedy decodes agree on wrong
words too often, and the beam-search final decides every word. A session's vocabulary
(:class:`~voxdesk.engine.session.SessionOptions`) biases every decode of it, partials and
finals (:mod:`voxdesk.engine.whisper.prompt`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from voxdesk.engine.audio.endpoint import EndpointSettings
from voxdesk.engine.audio.gate import GateAudio, GateStarted, SpeechGate
from voxdesk.engine.audio.noise_level import NoiseLevel
from voxdesk.engine.audio.silero import SileroVad
from voxdesk.engine.errors import AudioFormatError, one_line
from voxdesk.engine.events import (
    EngineEvent,
    EngineFault,
    ProvisionalText,
    StreamError,
    StreamErrorCode,
    TextDelta,
    UtteranceDone,
    UtteranceStats,
)
from voxdesk.engine.session import SAMPLE_RATE, ProgressCallback, SessionOptions, check_chunk
from voxdesk.engine.whisper.agreement import StablePrefix, join_words
from voxdesk.engine.whisper.batch import BatchSettings, BatchTranscriber
from voxdesk.engine.whisper.decode_queue import DecodeQueue
from voxdesk.engine.whisper.decoder import DecoderSettings, WhisperDecoder
from voxdesk.engine.whisper.models import resolve_model
from voxdesk.engine.whisper.prompt import VocabularyPrompt

__all__ = ["BuiltinEngine", "BuiltinSettings", "ends_a_sentence"]

_T = TypeVar("_T")
_PROMPTS_KEPT = 32  # vocabularies whose prompts are kept (each session of the OpenAI dialect may bring its own)
logger = logging.getLogger(__name__)

_SENTENCE_ENDS = (".", "?", "!")
# fmt: off
_HANGING_WORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "so", "of", "to", "for", "with", "from", "in", "on", "at",
    "by", "into", "about", "my", "your", "our", "their", "his", "her", "its", "is", "are", "was",
    "were", "be", "this", "that", "these", "those", "if", "because", "than", "then", "when", "while",
})
# fmt: on
"""Words after which a full stop more likely marks a pause for thought than the end of a sentence."""


def ends_a_sentence(words: list[str]) -> bool:
    """Whether text ends like a finished sentence: a final stop, question or exclamation mark
    after a word that does not leave it hanging."""
    if not words or not words[-1].endswith(_SENTENCE_ENDS):
        return False
    return words[-1].rstrip(".?!").lower() not in _HANGING_WORDS


@dataclass(frozen=True)
class BuiltinSettings:
    """Tunables of the built-in engine; defaults are the measured recommendation."""

    endpoint: EndpointSettings = field(default_factory=EndpointSettings)
    decoder: DecoderSettings = field(default_factory=DecoderSettings)
    partial_interval: float = 0.6  # once text shows; 0.5 s cost 0.02-0.03 more CPU-s per audio-s in dictation
    partial_headroom: float = 2.0  # the next partial waits at least this many times the last one's decode
    first_partial_delay: float = 0.1  # speech heard before the first partial is decoded
    first_text_interval: float = 0.1  # partial cadence until the utterance has shown text
    early_final_silence: float = 0.2  # pause after which the final decode starts, speculatively
    early_final_after_sentence: float = 0.15  # the same pause when the shown text already ends a sentence
    end_at_finished_sentence: bool = True  # a speculative final that ends a sentence ends the utterance
    holdback_words: int = 2
    window_seconds: float | None = 6.0  # a partial's audio longer than this starts after settled words (None: never)
    window_keep_seconds: float = 2.0  # audio a trimmed window keeps before its end
    commit_min_logprob: float = -0.6  # a partial less sure than this (mean log-probability) commits nothing
    noisy_snr_db: float = 12.0  # below this estimated SNR partials commit nothing: the final decides every word
    pre_roll_seconds: float = 0.3  # audio before speech start that its utterance begins with
    post_roll_seconds: float = 0.2
    max_utterance_seconds: float = 20.0
    cut_retry_seconds: float = 2.0
    hard_limit_seconds: float = 28.0  # Whisper sees at most 30 s at once


class BuiltinEngine:
    """Streaming speech recognition on the CPU, offline. See :mod:`voxdesk.engine.session`."""

    name = "builtin"
    detects_speech = True

    def __init__(
        self,
        settings: BuiltinSettings | None = None,
        decodes: DecodeQueue | None = None,
        session_options: SessionOptions | None = None,
    ) -> None:
        """``decodes``: the decoding threads (a test's own, on its clock); decode and queue
        times are measured on their clock. ``session_options``: what ``stream`` uses."""
        self.settings = settings or BuiltinSettings()
        self.session_options = session_options or SessionOptions()
        self._decodes = decodes or DecodeQueue()
        self._decoder: WhisperDecoder | None = None
        self._prompts: dict[tuple[str, ...], VocabularyPrompt] = {}

    async def load(self, progress: ProgressCallback | None = None) -> None:
        """Load the Whisper model (tiny.en: about half a second). Raises ``EngineUnavailable``."""
        if self._decoder is not None:
            return
        decoder = self.settings.decoder
        if progress:
            progress(f"loading Whisper {decoder.model} ({decoder.device} device)", 0.0)
            loop = asyncio.get_running_loop()
            # A hub model not in the cache downloads here, reporting its bytes from the worker thread.
            await self._run(resolve_model, decoder.model, lambda *step: loop.call_soon_threadsafe(progress, *step))
        self._decoder = await self._run(WhisperDecoder, decoder, self._decodes.shares_cpu)
        self._decodes.lanes = self._decoder.parallel_decodes
        logger.info("built-in engine: %s", self._decoder.description)
        if progress:
            progress(f"ready: {self._decoder.description}", 1.0)

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        """Open one session over ``audio`` with :attr:`session_options`; see :mod:`voxdesk.engine.session`."""
        return self.stream_with(audio, self.session_options)

    def stream_with(self, audio: AsyncIterable[np.ndarray], options: SessionOptions) -> AsyncIterator[EngineEvent]:
        """Open one session over ``audio``, its decodes biased with ``options.vocabulary``."""
        if self._decoder is None:
            raise RuntimeError("call load() before stream()")
        return _Session(self, self._decoder, self.vocabulary_prompt(options.vocabulary)).run(audio)

    def vocabulary_prompt(self, vocabulary: tuple[str, ...]) -> VocabularyPrompt:
        """The entries of ``vocabulary`` that fit Whisper's prompt, and those left out (logged
        once per vocabulary); the engine must be loaded."""
        if self._decoder is None:
            raise RuntimeError("call load() before vocabulary_prompt()")
        prompt = self._prompts.get(vocabulary)
        if prompt is None:
            if len(self._prompts) >= _PROMPTS_KEPT:
                self._prompts.clear()
            prompt = self._prompts[vocabulary] = self._decoder.vocabulary_prompt(list(vocabulary))
        return prompt

    def batch_transcriber(self, settings: BatchSettings | None = None) -> BatchTranscriber:
        """Batched whole-file decoding with this engine's model, device and language (:mod:`.batch`)."""
        if self._decoder is None:
            raise RuntimeError("call load() before batch_transcriber()")
        decoder = self._decoder
        return BatchTranscriber(decoder.model, settings, language=decoder.language, task=decoder.settings.task)

    async def aclose(self) -> None:
        """Stop the decode thread and drop the model."""
        self._decodes.close()
        self._decoder = None

    async def _run(self, fn: Callable[..., _T], *args: Any, waits: list[float] | None = None) -> _T:
        """Run ``fn`` on the decoding thread, before any partial that waits there; the time it
        waited to start is appended to ``waits``."""
        return await self._timed(self._decodes.run_final, waits, fn, *args)

    async def _run_partial(self, fn: Callable[..., _T], *args: Any, waits: list[float]) -> _T | None:
        """Run ``fn`` on the decoding thread after waiting finals; ``None`` once it waited
        longer than a partial interval (a later partial will say more)."""
        within = self.settings.partial_interval
        return await self._timed(lambda call, *a: self._decodes.run_partial(within, call, *a), waits, fn, *args)

    def clock(self) -> float:
        """Seconds on the decode queue's clock (monotonic), which times every decode."""
        return self._decodes.clock()

    async def _timed(
        self, submit: Callable[..., Awaitable[_T]], waits: list[float] | None, fn: Callable[..., Any], *args: Any
    ) -> _T:
        queued, started = self.clock(), []

        def call(*call_args: Any) -> Any:
            started.append(self.clock())
            return fn(*call_args)

        try:
            return await submit(call, *args)
        finally:
            if waits is not None:
                waits.append((started[0] if started else self.clock()) - queued)


@dataclass
class _Utterance:
    start: int  # stream sample where its audio starts (speech start minus pre-roll)
    speech_start: int
    agreement: StablePrefix
    since_partial: int
    next_cut: int  # stream sample from which cutting an over-long utterance is tried
    partials: int = 0
    decode_seconds: float = 0.0
    last_partial_seconds: float = 0.0  # decode time of its latest partial
    waits: list[float] = field(default_factory=list)  # how long each of its decodes waited to start
    window_start: int = 0  # stream sample where its decodes' audio starts (after settled words)
    window_words: int = 0  # committed words said before window_start: previous text, not prefix
    shown_text: bool = False  # whether a partial has given it words yet
    language: str | None = None  # detected from its first second of speech ("auto", multilingual model)


@dataclass(frozen=True)
class _Partial:
    utterance: _Utterance
    words: list[str]
    audio_time: float
    sure: bool = True  # confident enough to commit agreed words
    skipped: bool = False  # waited too long behind other decodes and was not run


@dataclass(frozen=True)
class _EarlyFinal:
    """A final decode started during a pause, before the pause is long enough to end speech."""

    utterance: _Utterance
    speech_end: int
    committed: int  # words committed when it started; more would make it stale
    words: list[str]
    seconds: float


class _Session:
    """One stream: its speech gate, the open utterance and its audio (from ``_audio_start`` on)."""

    def __init__(self, engine: BuiltinEngine, decoder: WhisperDecoder, vocabulary: VocabularyPrompt) -> None:
        self._engine = engine
        self._decoder = decoder
        self._vocabulary = vocabulary if vocabulary else None
        self._settings = engine.settings
        self._vad = SileroVad()
        self._noise = NoiseLevel()
        self._gate = SpeechGate(self._score, self._settings.endpoint, self._settings.pre_roll_seconds)
        self._audio = np.zeros(0, np.float32)
        self._audio_start = 0
        self._utterance: _Utterance | None = None
        self._partial: asyncio.Future[_Partial] | None = None
        self._early: asyncio.Future[_EarlyFinal] | None = None
        self._early_for: tuple[_Utterance, int, int] | None = None  # utterance, speech end, words committed
        self._early_judged: asyncio.Future[_EarlyFinal] | None = None

    @property
    def _position(self) -> int:
        return self._gate.position

    def _score(self, chunk: np.ndarray) -> np.ndarray:
        """The gate's speech probabilities, which the noise estimate reads too."""
        probabilities = self._vad.probabilities(chunk)
        self._noise.add(chunk, probabilities)
        return probabilities

    async def run(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        chunks = aiter(audio)
        next_chunk: asyncio.Future[np.ndarray] = asyncio.ensure_future(anext(chunks))
        try:
            while True:
                async for event in self._end_at_finished_sentence():
                    yield event
                waiting: set[asyncio.Future[Any]] = {next_chunk} | ({self._partial} if self._partial else set())
                if self._early is not None and not self._early.done():
                    waiting.add(self._early)
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if self._partial in done:
                    for event in self._take_partial(self._partial.result()):
                        yield event
                    self._partial = None
                if next_chunk in done:
                    try:
                        chunk = check_chunk(next_chunk.result())
                    except StopAsyncIteration:
                        break
                    async for event in self._consume(chunk):
                        yield event
                    next_chunk = asyncio.ensure_future(anext(chunks))
                self._start_decodes()
            if self._utterance is not None:
                async for event in self._finish(self._position, self._gate.endpointer.last_voiced_end):
                    yield event
        except AudioFormatError:
            raise
        except Exception as exc:
            # A decode (or the VAD) raised: this session's state is lost midway, but the model and the
            # decode threads the sessions share are unharmed, so this session fails alone.
            logger.exception("built-in engine session failed")
            seconds = self._position / SAMPLE_RATE
            message = (
                f"The built-in engine failed while transcribing ({one_line(exc)}): this session ended after "
                f"{seconds:.1f} s of audio (the engine still takes new sessions)"
            )
            yield StreamError(StreamErrorCode.PROCESSING_ERROR, message, seconds, engine_fault=EngineFault.SESSION)
        finally:
            next_chunk.cancel()

    async def _end_at_finished_sentence(self) -> AsyncIterator[EngineEvent]:
        """End the utterance now when the speculative final just decoded ends a sentence and
        the speaker has stayed silent since it started."""
        early, utterance = self._early, self._utterance
        if early is None or not early.done() or early is self._early_judged or utterance is None:
            return
        self._early_judged = early
        result = early.result()
        if not (
            self._settings.end_at_finished_sentence
            and result.utterance is utterance
            and result.committed == len(utterance.agreement.committed)
            and self._gate.endpointer.in_speech
            and self._gate.endpointer.last_voiced_end == result.speech_end
            and ends_a_sentence(utterance.agreement.committed + result.words)
        ):
            return
        stopped = self._gate.end()
        assert stopped is not None  # in speech, checked above
        async for event in self._finish(self._speech_audio_end(stopped.sample), stopped.sample):
            yield event

    async def _consume(self, chunk: np.ndarray) -> AsyncIterator[EngineEvent]:
        """Add a chunk; start, cut and finish utterances at the points it makes."""
        if self._utterance is not None:
            self._utterance.since_partial += len(chunk)
        for step in self._gate.feed(chunk):
            if isinstance(step, GateAudio):
                self._audio = np.concatenate([self._audio, step.samples])
            elif isinstance(step, GateStarted):
                self._audio, self._audio_start = np.zeros(0, np.float32), step.audio_start
                self._open_utterance(step.audio_start, step.sample)
            elif self._utterance is not None:
                async for event in self._finish(self._speech_audio_end(step.sample), step.sample):
                    yield event
        if self._utterance is not None and self._position > self._utterance.next_cut:
            async for event in self._cut_long_utterance():
                yield event
        self._forget_old_audio()

    def _open_utterance(self, start: int, speech_start: int) -> None:
        settings = self._settings
        self._utterance = _Utterance(
            start=start,
            speech_start=speech_start,
            agreement=StablePrefix(holdback=settings.holdback_words),
            since_partial=int((settings.partial_interval - settings.first_partial_delay) * SAMPLE_RATE),
            next_cut=start + int(settings.max_utterance_seconds * SAMPLE_RATE),
            window_start=start,
        )

    def _forget_old_audio(self) -> None:
        """Drop audio before the open utterance (the gate holds the next one's pre-roll)."""
        keep_from = self._position if self._utterance is None else self._utterance.start
        if keep_from > self._audio_start:
            self._audio = self._audio[keep_from - self._audio_start :]
            self._audio_start = keep_from

    def _slice(self, start: int, end: int) -> np.ndarray:
        return self._audio[start - self._audio_start : end - self._audio_start]

    def _speech_audio_end(self, speech_end: int) -> int:
        """Where the audio of speech that ended at ``speech_end`` stops: a little after it."""
        return min(self._position, speech_end + int(self._settings.post_roll_seconds * SAMPLE_RATE))

    def _start_decodes(self) -> None:
        """Start a partial or an early final when one is due and the decoder is free."""
        utterance = self._utterance
        if utterance is None or self._partial is not None:
            return
        silence = self._gate.endpointer.trailing_silence_seconds
        if silence >= self._early_final_silence(utterance):
            # Once per pause, and again should a partial that was still running commit more words.
            key = (utterance, self._gate.endpointer.last_voiced_end, len(utterance.agreement.committed))
            if self._early_for != key and (self._early is None or self._early.done()):  # never two queued
                self._early_for = key
                self._early = asyncio.ensure_future(self._decode_early_final(utterance, key[1]))
        elif self._partial_due(utterance, silence):
            self._partial = asyncio.ensure_future(self._decode_partial(utterance))

    def _partial_due(self, utterance: _Utterance, silence: float) -> bool:
        """Whether to start a partial now, at a cadence the decoder keeps up with.

        Until the utterance has shown words, partials come every ``first_text_interval`` or as
        soon as the last one is done (the first after ``first_partial_delay`` of speech), then
        every ``partial_interval``. A slow model stretches that to ``partial_headroom`` times
        its last partial's decode time, so partials never queue behind the microphone; during a
        pause, a partial that would still run when the early final is due is skipped (the final
        supersedes it).
        """
        settings = self._settings
        expected = utterance.last_partial_seconds
        if utterance.shown_text:
            interval = max(settings.partial_interval, settings.partial_headroom * expected)
        else:  # nothing shown yet: decode again as soon as there is new audio and the decoder is free
            interval = settings.first_text_interval
        if utterance.since_partial < interval * SAMPLE_RATE:
            return False
        return silence == 0.0 or silence + expected < self._early_final_silence(utterance)

    def _early_final_silence(self, utterance: _Utterance) -> float:
        """The pause after which the final decode starts: shorter when the text shown so far
        ends like a finished sentence ("Open the browser.")."""
        shown = utterance.agreement.committed + utterance.agreement.provisional
        if ends_a_sentence(shown):
            return self._settings.early_final_after_sentence
        return self._settings.early_final_silence

    async def _decode_partial(self, utterance: _Utterance) -> _Partial:
        utterance.since_partial = 0
        end = self._position
        start, context, committed = self._window(utterance)
        window = self._settings.window_seconds
        align = window is not None and end - start > window * SAMPLE_RATE and len(committed) > 1
        language = await self._language_of(utterance)
        began = self._engine.clock()
        guess = await self._engine._run_partial(
            self._decoder.partial,
            self._slice(start, end),
            committed,
            language,
            context,
            align,
            utterance.shown_text,
            self._vocabulary,
            waits=utterance.waits,
        )
        if guess is None:
            return _Partial(utterance, [], end / SAMPLE_RATE, skipped=True)
        utterance.partials += 1
        utterance.last_partial_seconds = self._engine.clock() - began
        utterance.decode_seconds += utterance.last_partial_seconds
        if guess.committed_ends:
            self._trim_window(utterance, start, (end - start) / SAMPLE_RATE, guess.committed_ends)
        snr = self._noise.snr_db
        noisy = snr is not None and snr < self._settings.noisy_snr_db
        sure = guess.mean_logprob >= self._settings.commit_min_logprob and not noisy
        return _Partial(utterance, guess.words, end / SAMPLE_RATE, sure)

    def _window(self, utterance: _Utterance) -> tuple[int, list[str], list[str]]:
        """Where the utterance's decodes start, the committed words before that (previous
        text) and those after it (the forced prefix)."""
        committed = utterance.agreement.committed
        split = utterance.window_words
        return utterance.window_start, committed[:split], committed[split:]

    def _trim_window(self, utterance: _Utterance, start: int, seconds: float, ends: list[float]) -> None:
        """Start later decodes after the last committed word that ends ``window_keep_seconds``
        before the end of the audio just decoded, so a partial's cost stops growing with the utterance."""
        settled = [i for i, end in enumerate(ends) if end <= seconds - self._settings.window_keep_seconds]
        if settled and utterance.window_start == start:
            last = settled[-1]
            utterance.window_start = start + int(ends[last] * SAMPLE_RATE)
            utterance.window_words += last + 1

    async def _decode_early_final(self, utterance: _Utterance, speech_end: int) -> _EarlyFinal:
        start, context, committed = self._window(utterance)
        audio = self._slice(start, self._speech_audio_end(speech_end))
        language = await self._language_of(utterance)
        began = self._engine.clock()
        words = await self._engine._run(
            self._decoder.final, audio, committed, language, context, self._vocabulary, waits=utterance.waits
        )
        return _EarlyFinal(
            utterance, speech_end, len(utterance.agreement.committed), words, self._engine.clock() - began
        )

    async def _language_of(self, utterance: _Utterance) -> str | None:
        """The utterance's language: detected once, from its first second of speech, when the
        decoder detects languages; until that second is heard each decode detects its own."""
        if utterance.language is None and self._decoder.language is None:
            first_second = utterance.speech_start + SAMPLE_RATE
            if self._position >= first_second:
                audio = self._slice(utterance.start, first_second)
                utterance.language = await self._engine._run(
                    self._decoder.detect_language, audio, waits=utterance.waits
                )
        return utterance.language

    def _take_partial(self, partial: _Partial) -> list[EngineEvent]:
        if partial.utterance is not self._utterance or partial.skipped:
            return []  # that utterance was finished while the partial ran, or it never ran
        words, audio_time = partial.words, partial.audio_time
        partial.utterance.shown_text = partial.utterance.shown_text or bool(words)
        agreement = partial.utterance.agreement
        before = list(agreement.committed)
        newly, tail = agreement.update(words, partial.sure)
        events: list[EngineEvent] = []
        if newly:
            events.append(TextDelta(join_words(newly, before), audio_time))
        events.append(ProvisionalText(join_words(tail, agreement.committed), audio_time))
        return events

    async def _settle_decodes(self) -> _EarlyFinal | None:
        """Wait for decodes in flight; return the early final if one was running."""
        if self._partial is not None:
            await self._partial  # its result is taken (or dropped as stale) by the run loop
        early, self._early, self._early_for = self._early, None, None
        return await early if early is not None else None

    async def _finish(self, end: int, speech_end: int) -> AsyncIterator[EngineEvent]:
        """Final decode of the open utterance's audio up to ``end``, then close it."""
        utterance = self._utterance
        assert utterance is not None
        early = await self._settle_decodes()
        committed = list(utterance.agreement.committed)
        if (
            early is not None
            and early.utterance is utterance
            and early.speech_end == speech_end
            and early.committed == len(committed)
        ):
            words, seconds = early.words, early.seconds
        else:
            language = await self._language_of(utterance)
            began = self._engine.clock()
            start, context, in_window = self._window(utterance)
            audio = self._slice(start, end)
            words = await self._engine._run(
                self._decoder.final, audio, in_window, language, context, self._vocabulary, waits=utterance.waits
            )
            seconds = self._engine.clock() - began
        utterance.decode_seconds += seconds
        for event in self._close_utterance(words, end, speech_end, seconds):
            yield event

    async def _cut_long_utterance(self) -> AsyncIterator[EngineEvent]:
        """Finish the first part of an over-long utterance; the rest opens a new one."""
        utterance = self._utterance
        assert utterance is not None
        await self._settle_decodes()
        if self._position - utterance.start > self._settings.hard_limit_seconds * SAMPLE_RATE:
            async for event in self._finish(self._position, self._position):
                yield event
            self._open_utterance(self._position, self._position)
            return
        start, _, committed = self._window(utterance)
        language = await self._language_of(utterance)
        began = self._engine.clock()
        split = await self._engine._run(
            self._decoder.split, self._slice(start, self._position), committed, language, waits=utterance.waits
        )
        seconds = self._engine.clock() - began
        utterance.decode_seconds += seconds
        if split is None:
            utterance.next_cut = self._position + int(self._settings.cut_retry_seconds * SAMPLE_RATE)
            return
        cut = start + int(split.seconds * SAMPLE_RATE)
        events = self._close_utterance(split.words, cut, cut, seconds)
        self._open_utterance(cut, cut)
        for event in events:
            yield event

    def _close_utterance(self, words: list[str], end: int, speech_end: int, seconds: float) -> list[EngineEvent]:
        """End the open utterance with its final ``words`` (decoded in ``seconds``)."""
        utterance = self._utterance
        assert utterance is not None
        self._utterance = None
        committed = utterance.agreement.committed
        now = self._position / SAMPLE_RATE
        events: list[EngineEvent] = []
        if words:
            events.append(TextDelta(join_words(words, committed), now))
        text = " ".join(committed + words)
        stats = UtteranceStats(
            audio_seconds=(end - utterance.start) / SAMPLE_RATE,
            decode_seconds=utterance.decode_seconds,
            partial_decodes=utterance.partials,
            final_decode_seconds=seconds,
            queue_seconds=sum(utterance.waits),
        )
        speech_end = max(utterance.speech_start, speech_end)
        language = utterance.language or self._decoder.language
        bounds = (utterance.speech_start / SAMPLE_RATE, speech_end / SAMPLE_RATE)
        events.append(UtteranceDone(text, now, *bounds, stats, language))
        return events
