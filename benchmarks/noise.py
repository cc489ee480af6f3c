"""Streaming against offline decoding in noise: ``python -m benchmarks.noise``.

The commands (both voices) and the dictation passages get pink noise at 10 dB SNR (as
``tests.recognition.noise_at`` makes it). Each noisy file is decoded twice with the same
Whisper tiny.en model: streamed through the built-in engine at real-time pace in 100 ms
chunks, and offline by faster-whisper with beam 5 over the whole file. Where the stream
loses words, three causes are told apart per file:

- *VAD*: true speech the engine's utterances do not cover (the speech gate missed it);
- *cut*: the stream split one spoken stretch into several utterances;
- *decode*: what is left, words lost although the audio was decoded.

``--compare`` also streams each file with partial commits in noise allowed (the engine before
the noise rule, ``noisy_snr_db`` = -inf), alternated file by file with the current engine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from tests import speech_fixtures
from tests.recognition import noise_at, wer
from tests.speech_fixtures import Fixture
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import TranscriptionReport, transcribe_audio
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings
from voxdesk.engine.whisper.models import model_directory

SNR_DB = 10.0


def covered(fixture: Fixture, report: TranscriptionReport) -> float:
    """The share of the fixture's true speech that lies inside the stream's utterances."""
    total = sum(end - start for start, end in fixture.speech)
    spans = [(u.done.speech_start, u.done.speech_end) for u in report.utterances if u.done.text]
    inside = sum(max(0.0, min(end, b) - max(start, a)) for start, end in fixture.speech for a, b in spans)
    return inside / total if total else 1.0


@dataclass
class NoisyResult:
    """One noisy fixture decoded both ways."""

    name: str
    kind: str
    reference: str
    streamed: str
    offline: str
    speech_covered: float
    utterances: int
    spoken_stretches: int
    streamed_before: str | None = None  # with --compare: partials allowed to commit in noise


NOISE_RULE_OFF = replace(BuiltinSettings(), noisy_snr_db=float("-inf"))
"""The engine before the noise rule: partials commit agreed words whatever the background."""


async def measure(
    fixtures: list[Fixture], realtime: bool, before_settings: BuiltinSettings | None = None
) -> list[NoisyResult]:
    """Every fixture with noise, streamed and decoded offline; also streamed with
    ``before_settings`` when given (``streamed_before``)."""
    from faster_whisper import WhisperModel

    offline = WhisperModel(str(model_directory()), device="cpu", compute_type="int8", cpu_threads=2)
    compare = before_settings is not None
    engine = BuiltinEngine()
    before = BuiltinEngine(before_settings)
    await engine.load()
    if compare:
        await before.load()
    results: list[NoisyResult] = []
    try:
        for fixture in fixtures:
            audio = noise_at(SNR_DB)(read_audio(speech_fixtures.DEFAULT_DIR / fixture.path))
            streamed = await transcribe_audio(engine, audio, realtime=realtime)
            streamed_before = (await transcribe_audio(before, audio, realtime=realtime)).text if compare else None
            segments, _ = offline.transcribe(audio, beam_size=5, language="en", vad_filter=False)
            offline_text = " ".join(segment.text.strip() for segment in segments)
            results.append(
                NoisyResult(
                    fixture.name,
                    fixture.kind,
                    fixture.text,
                    streamed.text,
                    offline_text,
                    covered(fixture, streamed),
                    len([u for u in streamed.utterances if u.done.text]),
                    len(fixture.speech),
                    streamed_before,
                )
            )
            print(f"{fixture.name:18s} {streamed.text[:50]!r:54} {offline_text[:50]!r}", file=sys.stderr)
    finally:
        await engine.aclose()
        await before.aclose()
    return results


def summarize(results: list[NoisyResult]) -> None:
    compared = all(result.streamed_before is not None for result in results)
    columns = ["streamed WER", "offline beam-5 WER", "ratio", "speech in utterances", "utterances per stretch"]
    columns += ["streamed WER before", "ratio before"] if compared else []
    print(f"| fixtures at {SNR_DB:.0f} dB SNR | {' | '.join(columns)} |")
    print("|---" * (len(columns) + 1) + "|")
    for kind in dict.fromkeys(result.kind for result in results):
        group = [result for result in results if result.kind == kind]
        streamed, offline, earlier = group_wers(group)
        ratio = wer_ratio(streamed, offline)
        coverage = float(np.mean([result.speech_covered for result in group]))
        pieces = sum(result.utterances for result in group) / sum(result.spoken_stretches for result in group)
        row = (
            f"| {kind}s ({len(group)}) | {streamed:.3f} | {offline:.3f} | {ratio:.2f} | {coverage:.0%} | {pieces:.2f} |"
        )
        if compared:
            row += f" {earlier:.3f} | {wer_ratio(earlier, offline):.2f} |"
        print(row)


def group_wers(group: list[NoisyResult]) -> tuple[float, float, float]:
    """Word error rates of a group of files: streamed, offline and streamed before (a file
    not streamed before counts as nothing heard)."""
    references = [result.reference for result in group]
    return (
        wer(references, [result.streamed for result in group]),
        wer(references, [result.offline for result in group]),
        wer(references, [result.streamed_before or "" for result in group]),
    )


def wer_ratio(streamed: float, offline: float) -> float:
    """Streamed WER over offline WER (1.0 when both are 0)."""
    return streamed / offline if offline else float("inf") if streamed else 1.0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.noise", description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="stream as fast as the engine takes it")
    parser.add_argument("--json", type=Path, help="also write every file's texts to this file")
    parser.add_argument("--compare", action="store_true", help="also stream with partial commits allowed in noise")
    parser.add_argument("--kind", choices=["command", "passage"], action="append", help="only these fixtures")
    args = parser.parse_args(argv)
    kinds = args.kind or ["command", "passage"]
    fixtures = [f for f in speech_fixtures.build() if f.kind in kinds]
    results = asyncio.run(measure(fixtures, not args.fast, NOISE_RULE_OFF if args.compare else None))
    summarize(results)
    if args.json:
        args.json.write_text(json.dumps([asdict(result) for result in results], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
