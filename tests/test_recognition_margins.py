"""The margin of every text assertion in the suite, proven by perturbing its audio.

Each fixture named in :mod:`tests.recognition` is transcribed again with its audio 3 % faster
and slower, 6 dB louder and quieter, and with pink noise at 25 dB SNR; the bound the suite's
tests put on it must hold for every variant. Each variant is transcribed both ways a file
goes: streamed as fast as the engine takes the audio (about 12 s of decoding per variant here),
and decoded whole in batches, ``voxdesk transcribe``'s default (about 5 s).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np
import pytest

from tests.recognition import (
    ACCURACY,
    EDGES,
    PERTURBATIONS,
    PHRASES,
    SAMPLE,
    edge_problem,
    heard_in_problem,
    phrase_problem,
    wer,
)
from tests.speech_fixtures import Fixture
from voxdesk.app.files.job import FileTranscription
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import transcribe_audio
from voxdesk.engine.whisper.builtin import BuiltinEngine

VARIANTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"unchanged": lambda audio: audio, **PERTURBATIONS}


def test_perturbations_change_the_audio_by_the_stated_amount() -> None:
    tone = (0.1 * np.sin(2 * np.pi * 220 * np.arange(16_000) / 16_000)).astype(np.float32)
    rms = float(np.sqrt(np.mean(tone**2)))
    assert len(PERTURBATIONS["3% faster"](tone)) == pytest.approx(16_000 / 1.03, abs=2)
    assert len(PERTURBATIONS["3% slower"](tone)) == pytest.approx(16_000 / 0.97, abs=2)
    assert float(np.sqrt(np.mean(PERTURBATIONS["+6 dB"](tone) ** 2))) == pytest.approx(rms * 2, rel=0.01)
    assert float(np.sqrt(np.mean(PERTURBATIONS["-6 dB"](tone) ** 2))) == pytest.approx(rms / 2, rel=0.01)
    noise = PERTURBATIONS["pink noise at 25 dB SNR"](tone) - tone
    snr = 20 * np.log10(rms / float(np.sqrt(np.mean(noise**2))))
    assert snr == pytest.approx(25, abs=0.5)


@pytest.mark.parametrize("batched", [False, True], ids=["streamed", "batched"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_text_assertion_holds_with_the_audio_perturbed(
    variant: str,
    batched: bool,
    engine: BuiltinEngine,
    speech: dict[str, Fixture],
    fixture_audio: dict[str, np.ndarray],
) -> None:
    fixtures = {**speech, SAMPLE.name: SAMPLE}
    audio = {**fixture_audio, SAMPLE.name: read_audio(SAMPLE.path)}
    wanted = set(PHRASES) | set(EDGES) | {name for bound in ACCURACY.values() for name in bound.fixtures}

    async def transcribe_all() -> dict[str, str]:
        heard = {}
        for name in sorted(wanted):
            perturbed = VARIANTS[variant](audio[name])
            if batched:
                report = await FileTranscription(engine, perturbed).run()
            else:
                report = await transcribe_audio(engine, perturbed, realtime=False)
            heard[name] = report.text
        return heard

    heard = asyncio.run(transcribe_all())
    problems = [
        heard_in_problem(SAMPLE, heard[name]) if name == SAMPLE.name else phrase_problem(fixtures[name], heard[name])
        for name in sorted(PHRASES)
    ]
    for name in sorted(EDGES):
        problems += [edge_problem(fixtures[name], heard[name], end=True)]
        problems += [edge_problem(fixtures[name], heard[name], end=False)]
    for label, bound in ACCURACY.items():
        error_rate = wer([fixtures[n].text for n in bound.fixtures], [heard[n] for n in bound.fixtures])
        if error_rate > bound.max_wer:
            problems.append(f"{label}: WER {error_rate:.3f} > {bound.max_wer}")
    assert [p for p in problems if p] == [], variant
