"""Benchmark of the built-in engine on the speech fixtures: ``python -m benchmarks``.

Every fixture is streamed at real-time pace (100 ms chunks), as from a microphone. Latencies
are measured against the true speech bounds the synthesizer produced, on the wall clock:

- first partial: first text shown for an utterance, after the audio at its true onset was
  delivered;
- final: ``UtteranceDone``, after the audio at its true end of speech was delivered (this
  includes the engine's 0.6 s end-of-speech silence).

A spoken stretch that the engine splits into several utterances (the passages) counts
from its first shown text to the final of its last utterance.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import jiwer

from tests import speech_fixtures
from tests.speech_fixtures import Fixture
from voxdesk.app.files.pacing import paced_chunks
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import percentile
from voxdesk.app.textnorm import normalize_text
from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.events import EngineEvent, ProvisionalText, TextDelta, UtteranceDone
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings


@dataclass
class FileResult:
    """One fixture streamed through the engine."""

    name: str
    group: str
    audio_s: float
    cpu_s: float
    decode_s: float
    text: str
    reference: str
    first_partial_s: list[float] = field(default_factory=list)
    final_s: list[float] = field(default_factory=list)


BEFORE_ISSUE_15 = BuiltinSettings(
    partial_interval=0.5,
    first_partial_delay=0.2,
    first_text_interval=0.5,
    early_final_silence=0.3,
    early_final_after_sentence=0.3,
    end_at_finished_sentence=False,
)
"""The built-in engine's scheduling before issue 15: first partial after 0.2 s of speech, then
every 0.5 s, the speculative final after 0.3 s of pause, and the configured 0.6 s of silence always."""


async def measure(engine: BuiltinEngine, fixture: Fixture, realtime: bool, variant: str = "") -> FileResult:
    """Stream one fixture; return its text, latencies against the true bounds, and costs."""
    audio = read_audio(speech_fixtures.DEFAULT_DIR / fixture.path)
    clock = DeliveryClock()
    timeline: list[tuple[float, EngineEvent]] = []
    cpu = time.process_time()
    async for event in engine.stream(paced_chunks(audio, clock, 0.1, realtime)):
        timeline.append((time.perf_counter(), event))
    finals = [e for _, e in timeline if isinstance(e, UtteranceDone) and e.text]
    result = FileResult(
        name=fixture.name,
        group=f"{variant}{fixture.kind}/{fixture.voice}",
        audio_s=fixture.duration,
        cpu_s=time.process_time() - cpu,
        decode_s=sum(f.stats.decode_seconds or 0.0 for f in finals),
        text=" ".join(f.text for f in finals),
        reference=fixture.text,
    )
    for start, end in fixture.speech:
        shown = [
            t for t, e in timeline if isinstance(e, TextDelta | ProvisionalText) and e.text and e.audio_time > start
        ]
        done = [
            t for t, e in timeline if isinstance(e, UtteranceDone) and e.text and start - 0.5 < e.speech_start < end
        ]
        if shown and done:
            result.first_partial_s.append(shown[0] - clock.delivered_at(start))
            result.final_s.append(done[-1] - clock.delivered_at(end))
    return result


def summarize(results: list[FileResult]) -> list[dict[str, object]]:
    """One row per fixture group: word error rate, latency median and p90, costs."""
    groups: dict[str, list[FileResult]] = defaultdict(list)
    for result in results:
        groups[result.group].append(result)
    rows: list[dict[str, object]] = []
    for group, members in groups.items():
        audio = sum(m.audio_s for m in members)
        first = [x for m in members for x in m.first_partial_s]
        final = [x for m in members for x in m.final_s]
        pairs = [(normalize_text(m.reference), normalize_text(m.text)) for m in members]
        spoken = [(reference, hypothesis or "<empty>") for reference, hypothesis in pairs if reference]
        rows.append(
            {
                "group": group,
                "files": len(members),
                "audio_s": round(audio, 1),
                "wer": round(jiwer.wer([r for r, _ in spoken], [h for _, h in spoken]), 3) if spoken else None,
                "false_words": sum(len(hypothesis.split()) for reference, hypothesis in pairs if not reference),
                "first_partial_median_s": _round(percentile(first, 50)),
                "first_partial_p90_s": _round(percentile(first, 90)),
                "final_median_s": _round(percentile(final, 50)),
                "final_p90_s": _round(percentile(final, 90)),
                "rtf": round(sum(m.decode_s for m in members) / audio, 3),
                "cpu_s_per_audio_s": round(sum(m.cpu_s for m in members) / audio, 3),
            }
        )
    return rows


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def print_table(rows: list[dict[str, object]]) -> None:
    columns = list(rows[0])
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    print("  ".join(c.ljust(widths[c]) for c in columns))
    for row in rows:
        print("  ".join(str(row[c]).ljust(widths[c]) for c in columns))


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="feed audio as fast as possible (latency meaningless)")
    parser.add_argument("--only", default="", help="run only fixtures whose name contains this text")
    parser.add_argument("--json", type=Path, help="also write every per-file result to this file")
    parser.add_argument(
        "--compare", action="store_true", help="also run the scheduling from before issue 15, file by file alternated"
    )
    args = parser.parse_args(argv)
    fixtures = [f for f in speech_fixtures.build() if args.only in f.name]
    engine = BuiltinEngine()
    began = time.perf_counter()
    await engine.load()
    load_s = time.perf_counter() - began
    rss_after_load = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    engines = {"": engine}
    if args.compare:
        engines = {"now ": engine, "before ": BuiltinEngine(BEFORE_ISSUE_15)}
        await engines["before "].load()
    results = []
    for fixture in fixtures:
        for variant, each in engines.items():
            results.append(await measure(each, fixture, not args.fast, variant))
            print(f"{variant}{fixture.name:18s} {results[-1].text:.90}", file=sys.stderr)
    for each in engines.values():
        await each.aclose()
    rows = summarize(results)
    print(
        f"\nbuilt-in engine (Whisper tiny.en int8, beam {engine.settings.decoder.final_beam} finals), "
        f"{'fast' if args.fast else 'real-time'} feed, 100 ms chunks"
    )
    print(
        f"load {load_s:.2f} s; peak RSS after load {rss_after_load:.0f} MB, "
        f"at the end {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB\n"
    )
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "results": [asdict(r) for r in results]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
