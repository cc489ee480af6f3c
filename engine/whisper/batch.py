"""Whole-file transcription for throughput: VAD segments decoded in batches (no streaming).

faster-whisper's ``BatchedInferencePipeline`` runs over the same ``WhisperModel`` the built-in
engine loaded: its Silero VAD (shipped inside faster-whisper, nothing downloaded) groups speech
into chunks of up to 30 s, and those chunks are decoded several at once with beam search and
word timestamps. The words are then cut into utterances at pauses, as the live engine would
cut them, so history rows and subtitle cues look the same as for a streamed file.

Blocking: call :meth:`BatchTranscriber.utterances` from a worker thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["BatchSettings", "BatchTranscriber", "TimedWord", "TranscribedUtterance", "group_words"]


@dataclass(frozen=True)
class BatchSettings:
    """Knobs of the batched path (measured in ``benchmarks/files.py``)."""

    batch_size: int = 4
    beam_size: int = 5
    pause_seconds: float = 0.6  # a pause at least this long between words ends an utterance
    max_utterance_seconds: float = 20.0  # longer stretches are cut after a sentence, else a word


@dataclass(frozen=True)
class TimedWord:
    """One recognized word and where it was spoken, in seconds from the start of the file."""

    text: str
    start: float
    end: float


@dataclass(frozen=True)
class TranscribedUtterance:
    """Words spoken without a long pause; ``end`` is also how far the file has been transcribed."""

    words: tuple[TimedWord, ...]
    language: str | None = None  # the Whisper language code the file was decoded in

    @property
    def text(self) -> str:
        """The words joined with spaces."""
        return " ".join(word.text for word in self.words)

    @property
    def start(self) -> float:
        """Start of the first word, in seconds."""
        return self.words[0].start

    @property
    def end(self) -> float:
        """End of the last word, in seconds."""
        return self.words[-1].end


class BatchTranscriber:
    """Batched decoding of whole recordings with a loaded ``faster_whisper.WhisperModel``."""

    def __init__(
        self, model: Any, settings: BatchSettings | None = None, language: str | None = "en", task: str = "transcribe"
    ) -> None:
        """``language``: a Whisper language code, or ``None`` to detect it from the first audio;
        ``task``: ``transcribe``, or ``translate`` for English text (multilingual models)."""
        from faster_whisper import BatchedInferencePipeline

        self.settings = settings or BatchSettings()
        self._language = language
        self.task = task
        self._pipeline = BatchedInferencePipeline(model)

    def utterances(self, audio: np.ndarray) -> Generator[TranscribedUtterance, None, None]:
        """Transcribe ``audio`` (16 kHz mono float32), yielding utterances in order as batches finish.

        Each VAD chunk (up to 30 s of speech) is cut into utterances on its own. The VAD pass
        over the whole file runs before the first one; close the generator to cancel.
        """
        if len(audio) < SAMPLE_RATE // 10:
            return
        segments, info = self._pipeline.transcribe(
            audio,
            language=self._language,
            task=self.task,
            beam_size=self.settings.beam_size,
            batch_size=self.settings.batch_size,
            word_timestamps=True,
            vad_filter=True,
        )
        for segment in segments:
            words = [
                TimedWord(w.word.strip(), float(w.start), float(w.end)) for w in segment.words or () if w.word.strip()
            ]
            for utterance in group_words(words, self.settings):
                yield dataclasses.replace(utterance, language=info.language)


def group_words(words: list[TimedWord], settings: BatchSettings) -> list[TranscribedUtterance]:
    """Cut ``words`` into utterances at pauses, and over-long ones after a sentence or word."""
    groups: list[TranscribedUtterance] = []
    current: list[TimedWord] = []
    for word in words:
        if current and (word.start - current[-1].end >= settings.pause_seconds):
            groups.append(TranscribedUtterance(tuple(current)))
            current = []
        elif current and word.end - current[0].start > settings.max_utterance_seconds:
            cut = _last_sentence_end(current) or len(current)
            groups.append(TranscribedUtterance(tuple(current[:cut])))
            current = current[cut:]
        current.append(word)
    if current:
        groups.append(TranscribedUtterance(tuple(current)))
    return groups


def _last_sentence_end(words: list[TimedWord]) -> int | None:
    """How many words make up the sentences that end within ``words`` (``None``: none ends)."""
    for index in range(len(words), 0, -1):
        if words[index - 1].text.endswith((".", "?", "!")):
            return index
    return None
