"""The built-in engine's targets, now and before, and WhisperLive, from one run:
``python -m benchmarks.scoreboard``.

One process measures, in order, on the same audio:

1. every command (the 14 and the 30 held out) and passage fixture streamed at real-time pace
   through the engine as it is and as it was before issue 15 (:data:`BEFORE`), alternated
   file by file;
2. the 14 commands and the passages with pink noise at 10 dB SNR, streamed both ways and
   decoded offline (beam 5, whole file) with the same model;
3. ``voxdesk serve`` and WhisperLive's server, each in its own process, on the Festival
   commands, the passages and N concurrent passages (:mod:`benchmarks.whisperlive`).

It prints one table: each target of issue 15 with its value now, before and for WhisperLive.
About 30 minutes on two cores; ``--quick`` (a few files, fewer concurrent sessions) for a
first look, whose figures are not the table's.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from benchmarks import noise, whisperlive
from benchmarks.__main__ import BEFORE_ISSUE_15, FileResult, measure, summarize
from tests import speech_fixtures
from tests.speech_fixtures import Fixture
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.engine.whisper.decoder import DecoderSettings

BEFORE = replace(
    BEFORE_ISSUE_15,
    window_seconds=None,
    commit_min_logprob=float("-inf"),
    noisy_snr_db=float("-inf"),
    decoder=DecoderSettings(steady_threads=0),
)
"""The engine with issue 15's changes that settings can turn off, off: the old scheduling
(:data:`BEFORE_ISSUE_15`), partials re-decoding the whole utterance on two threads, committing
whatever they agree on however unsure or noisy. The one decoding thread shared by sessions
(finals first), the shorter feature computation and NumPy's BLAS on one thread stay."""

Row = dict[str, object]


async def streamed(fixtures: list[Fixture]) -> dict[str, Row]:
    """Part 1: the summary rows, keyed ``now command/slt``, ``before passage/espeak`` and so on."""
    engines = {"now ": BuiltinEngine(), "before ": BuiltinEngine(BEFORE)}
    for engine in engines.values():
        await engine.load()
    results: list[FileResult] = []
    try:
        for index, fixture in enumerate(fixtures):
            order = list(engines.items()) if index % 2 == 0 else list(engines.items())[::-1]
            for variant, engine in order:
                results.append(await measure(engine, fixture, True, variant))
                print(f"{variant}{fixture.name:18s} {results[-1].text:.80}", file=sys.stderr)
    finally:
        for engine in engines.values():
            await engine.aclose()
    return {str(row["group"]): row for row in summarize(results)}


def noisy_ratios(results: list[noise.NoisyResult], kind: str) -> tuple[float, float]:
    """Streamed WER over offline beam-5 WER for one kind of fixture: now and before."""
    now, offline, before = noise.group_wers([r for r in results if r.kind == kind])
    return noise.wer_ratio(now, offline), noise.wer_ratio(before, offline)


def _wer(value: float) -> str:
    return f"{value:.3f}"


def _cpu(value: float) -> str:
    return f"{value:.2f}"


def _pair(rows: dict[str, Row], variant: str, kind: str, column: str, style: Callable[[Any], str]) -> str:
    """Festival / espeak-ng."""
    return " / ".join(style(rows[f"{variant} {kind}/{voice}"][column]) for voice in ("slt", "espeak"))


def print_table(
    rows: dict[str, Row],
    noisy: dict[str, tuple[float, float]],
    voxdesk: whisperlive.ServerRun,
    theirs: whisperlive.ServerRun,
) -> None:
    """The scoreboard, as Markdown."""
    first, final = "first_partial_median_s", "final_median_s"
    wl_commands, wl_passages = theirs.commands, theirs.passages
    table = [
        ("commands: first partial after onset, Festival / espeak-ng", "command", first, whisperlive.seconds,
         whisperlive.seconds(whisperlive.median([r.first_text_s for r in wl_commands])), "≤ 0.30 s"),
        ("commands: final after end of speech", "command", final, whisperlive.seconds,
         whisperlive.seconds(whisperlive.median([r.final_s for r in wl_commands])), "≤ 0.50 s"),
        ("commands: WER", "command", "wer", _wer, f"{whisperlive.final_wer(wl_commands):.3f}", "not worse than before"),
        ("held-out commands (30 per voice, never tuned on): first partial", "held-out", first, whisperlive.seconds, "",
         "≤ 0.30 s"),
        ("held-out commands: final after end of speech", "held-out", final, whisperlive.seconds, "", "≤ 0.50 s"),
        ("held-out commands: WER", "held-out", "wer", _wer, "", "not worse than before"),
        ("passage: CPU-s per audio-s", "passage", "cpu_s_per_audio_s", _cpu,
         f"{sum(r.cpu_per_audio_s for r in wl_passages) / len(wl_passages):.2f} (server, with 8 s of silence)",
         "≤ 0.6"),
        ("passage: final of the last sentence", "passage", final, whisperlive.seconds,
         whisperlive.seconds(whisperlive.median([r.final_s for r in wl_passages])), "≤ 0.8 s"),
        ("passage: WER", "passage", "wer", _wer, f"{whisperlive.final_wer(wl_passages):.3f}", "not worse than before"),
    ]  # fmt: skip
    print("| target (median of the run) | now | before | WhisperLive | goal |")
    print("|---|---|---|---|---|")
    for label, kind, column, style, theirs_value, goal in table:
        now, before = _pair(rows, "now", kind, column, style), _pair(rows, "before", kind, column, style)
        print(f"| {label} | {now} | {before} | {theirs_value} | {goal} |")
    for kind, (now_ratio, before_ratio) in noisy.items():
        label = f"{kind}s at 10 dB SNR: streamed WER / offline beam-5 WER"
        print(f"| {label} | {now_ratio:.2f} | {before_ratio:.2f} | | ≤ 1.2 |")
    print(
        f"| `voxdesk serve`: concurrent passages, every final ≤ {whisperlive.HELD_LAG} s after its speech "
        f"| {voxdesk.held} | | {theirs.held} | ≥ 4 and more than WhisperLive |"
    )


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scoreboard", description=__doc__.splitlines()[0])
    quick = "two commands and one held-out command per voice, the passages, N up to 2"
    parser.add_argument("--quick", action="store_true", help=quick)
    args = parser.parse_args(argv)
    kept = ("command00", "command01", "heldout00", "passage") if args.quick else ("command", "heldout", "passage")
    fixtures = [f for f in speech_fixtures.build() if f.name.startswith(kept)]
    rows = await streamed(fixtures)
    noisy_kinds = ("command", "passage")
    noisy_results = await noise.measure([f for f in fixtures if f.kind in noisy_kinds], True, BEFORE)
    noisy = {kind: noisy_ratios(noisy_results, kind) for kind in noisy_kinds}
    server_args = argparse.Namespace(
        voice="slt", commands=2 if args.quick else 14, sessions=[1, 2] if args.quick else [1, 2, 4, 6, 8]
    )
    voxdesk, theirs = await whisperlive.both_servers(server_args)
    whisperlive.print_comparison(voxdesk, theirs, server_args.voice)
    print()
    print_table(rows, noisy, voxdesk, theirs)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
