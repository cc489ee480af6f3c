"""Bigger Whisper models on two cores: ``python -m benchmarks.whisper_models``.

The built-in engine with tiny.en and with the random-weight base.en- and small.en-sized
models of ``scripts/make_random_whisper.py`` (``build/random-whisper``), each fed the same
Festival commands and dictation passage at real-time pace. Random weights make the text
meaningless but the cost real; they never stop early, so every decode runs to its length
bound, which makes their figures an upper bound for the real models of those sizes.

A model *keeps up* when the final text comes within 1.5 s of the end of speech (p90, the
engine's 0.6 s end-of-speech silence included) and the first provisional text within 1.5 s
of speech onset (p90).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from benchmarks.__main__ import FileResult, measure, print_table, summarize
from tests import speech_fixtures
from tests.random_whisper import MODELS_DIR
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings
from voxdesk.engine.whisper.decoder import DecoderSettings

KEEPS_UP_S = 1.5
FIXTURES = ("command", "passage")  # kinds of fixture streamed, Festival voice only


def models() -> dict[str, str]:
    """Label -> ``--whisper-model`` value of every model measured."""
    return {
        "tiny.en": "tiny.en",
        "base.en-sized (random)": str(MODELS_DIR / "base.en"),
        "small.en-sized (random)": str(MODELS_DIR / "small.en"),
    }


async def run_model(label: str, model: str, only: str) -> list[dict[str, object]]:
    """One row per fixture group for ``model``, with the model's label and whether it keeps up."""
    engine = BuiltinEngine(BuiltinSettings(decoder=DecoderSettings(model=model, device="cpu")))
    await engine.load()
    fixtures = [f for f in speech_fixtures.build() if f.voice == "slt" and f.kind in FIXTURES and only in f.name]
    results: list[FileResult] = []
    try:
        for fixture in fixtures:
            results.append(await measure(engine, fixture, realtime=True))
            print(f"{label:24s} {fixture.name:14s} {results[-1].text:.70}", file=sys.stderr)
    finally:
        await engine.aclose()
    rows = summarize(results)
    for row in rows:
        del row["wer"], row["false_words"], row["files"]
        first, final = row["first_partial_p90_s"], row["final_p90_s"]
        keeps_up = isinstance(first, float) and isinstance(final, float) and max(first, final) <= KEEPS_UP_S
        row.update(model=label, keeps_up="yes" if keeps_up else "no")
    return rows


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.whisper_models", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only fixtures whose name contains this text")
    args = parser.parse_args(argv)
    missing = [model for model in models().values() if model != "tiny.en" and not Path(model).is_dir()]
    if missing:
        sys.exit(f"random-weight models missing ({', '.join(missing)}): run scripts/random-whisper.sh")
    rows = []
    for label, model in models().items():
        rows += await run_model(label, model, args.only)
    print("\nbuilt-in engine, real-time feed, 100 ms chunks, cpu int8, 2 threads")
    print_table([{"model": row.pop("model"), **row} for row in rows])
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
