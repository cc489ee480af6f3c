"""Vocabulary biasing on the streaming path: ``python -m benchmarks.vocabulary``.

The sentences with names and product words (``tests.speech_fixtures``: the tuning set and the
held-out set, both voices) and the 14 commands (both voices, which contain none of the words)
are streamed through the built-in engine in 100 ms chunks, as fast as it goes, each in a
session of its own, under four conditions:

- *raw*: no vocabulary;
- *corrected*: the raw text corrected after the fact (``app.writing.correction``);
- *biased*: the session's vocabulary as Whisper previous text, with the insertion guard off;
- *guarded*: biased with the guard on (the engine as it ships);
- *guarded+corrected*: guarded, then corrected: what ``voxdesk transcribe --vocabulary`` writes.

The vocabulary of every session is the held-out words followed by the tuning words (21
entries), so each sentence has words listed that it does not contain. Per set: listed words
said and written right, listed words written where they were not said (insertions), the WER
of the whole sentences, and CPU-seconds per audio-second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

from tests import speech_fixtures
from tests.recognition import listed_words, wer
from tests.speech_fixtures import Fixture
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import transcribe_audio
from voxdesk.app.writing.correction import VocabularyCorrector
from voxdesk.app.writing.vocabulary import VocabularyEntry, parse_vocabulary
from voxdesk.engine.session import SessionOptions
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.engine.whisper.decoder import WhisperDecoder

CONDITIONS = ("raw", "corrected", "biased", "guarded", "guarded+corrected")


@dataclass
class Row:
    """One set of fixtures under one condition."""

    fixtures: str
    condition: str
    listed_said: int
    listed_right: int
    inserted: int
    wer: float
    cpu_per_audio_second: float | None


@contextmanager
def guard_off() -> Iterator[None]:
    """The insertion guard disabled: every biased decode is taken as it is."""
    kept = WhisperDecoder._biased_decode_kept
    WhisperDecoder._biased_decode_kept = lambda *_: True  # type: ignore[method-assign]
    try:
        yield
    finally:
        WhisperDecoder._biased_decode_kept = kept  # type: ignore[method-assign]


async def stream(engine: BuiltinEngine, fixtures: list[Fixture]) -> tuple[list[str], float]:
    """Each fixture's streamed text, and CPU-seconds per audio-second over them all."""
    texts: list[str] = []
    cpu = audio_seconds = 0.0
    for fixture in fixtures:
        audio = read_audio(speech_fixtures.DEFAULT_DIR / fixture.path)
        report = await transcribe_audio(engine, audio, realtime=False)
        texts.append(report.text)
        cpu += report.cpu_seconds or 0.0
        audio_seconds += report.audio_seconds
    return texts, cpu / audio_seconds


async def measure(sets: dict[str, list[Fixture]], entries: list[VocabularyEntry]) -> list[Row]:
    """Every set under every condition, the conditions alternated set by set."""
    engine = BuiltinEngine()
    await engine.load()
    vocabulary = SessionOptions(tuple(entry.text for entry in entries))
    prompt = engine.vocabulary_prompt(vocabulary.vocabulary)
    print(f"prompt: {len(prompt.entries)} entries, {len(prompt.tokens)} tokens; left out: {prompt.left_out}")
    corrector = VocabularyCorrector(entries)
    rows: list[Row] = []
    try:
        for name, fixtures in sets.items():
            references = [f.text for f in fixtures]
            results: dict[str, tuple[list[str], float | None]] = {}
            engine.session_options = SessionOptions()
            results["raw"] = await stream(engine, fixtures)
            results["corrected"] = ([corrector.correct(t) for t in results["raw"][0]], None)
            engine.session_options = vocabulary
            with guard_off():
                results["biased"] = await stream(engine, fixtures)
            results["guarded"] = await stream(engine, fixtures)
            results["guarded+corrected"] = ([corrector.correct(t) for t in results["guarded"][0]], None)
            for condition in CONDITIONS:
                texts, cpu = results[condition]
                said, right, inserted = listed_words([e.text for e in entries], references, texts)
                rows.append(Row(name, condition, said, right, inserted, wer(references, texts), cpu))
                print(json.dumps(asdict(rows[-1])), flush=True)
            by_fixture = zip(*(results[c][0] for c in CONDITIONS), strict=True)
            for reference, outputs in zip(references, by_fixture, strict=True):
                print(f"  {reference!r}: " + " | ".join(outputs), flush=True)
    finally:
        await engine.aclose()
    return rows


def table(rows: list[Row]) -> str:
    """The rows as the Markdown table of benchmarks/README.md."""
    lines = [
        "| fixtures | condition | listed words right | inserted | WER | CPU-s per audio-s |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        cpu = "" if row.cpu_per_audio_second is None else f"{row.cpu_per_audio_second:.2f}"
        right = f"{row.listed_right}/{row.listed_said}" if row.listed_said else ""
        lines.append(f"| {row.fixtures} | {row.condition} | {right} | {row.inserted} | {row.wer:.3f} | {cpu} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Build the fixtures, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sets", default="held-out,tuning,commands", help="comma-separated: held-out, tuning, commands"
    )
    args = parser.parse_args(argv)
    fixtures = speech_fixtures.build() + speech_fixtures.build_vocabulary()
    kinds: dict[str, Callable[[Fixture], bool]] = {
        "held-out": lambda f: f.kind == "held-out-vocabulary",
        "tuning": lambda f: f.kind == "vocabulary",
        "commands": lambda f: f.kind == "command",
    }
    chosen = [s.strip() for s in args.sets.split(",") if s.strip()]
    if unknown := [s for s in chosen if s not in kinds]:
        parser.error(f"unknown set {unknown[0]!r} (the sets: {', '.join(kinds)})")
    sets = {name: [f for f in fixtures if kinds[name](f)] for name in chosen}
    lines = speech_fixtures.HELD_OUT_VOCABULARY_LINES + speech_fixtures.VOCABULARY_LINES
    entries, _ = parse_vocabulary(lines)
    began = time.perf_counter()
    rows = asyncio.run(measure(sets, entries))
    print(f"\n{table(rows)}\n\n({time.perf_counter() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
