"""Transcribing a recording as a file: ``python -m benchmarks.files``.

A recording of about ten minutes is made by concatenating the speech fixtures (commands in
both voices, the passages and the 65 s recording with pauses, 1 s of silence between them)
until it is long enough. Side by side in one run, on the same audio and the same loaded model:

- batched: the built-in engine's whole-file path (``voxdesk transcribe``'s default:
  VAD segments, batched beam search, word timestamps);
- streamed: the same engine fed the file as fast as it takes it (what ``--fast`` did before,
  and what vLLM and remote engines still do);
- the CLI: ``voxdesk transcribe`` as a process, start and model load included.

Speed is audio seconds per wall-clock second (x real time); WER against the fixtures' texts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile

from tests import speech_fixtures
from tests.recognition import wer
from voxdesk.app.files.job import FileTranscription
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import transcribe_audio
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.builtin import BuiltinEngine

_GAP = np.zeros(SAMPLE_RATE, np.float32)


def long_recording(minutes: float) -> tuple[np.ndarray, str]:
    """Speech fixtures end to end until ``minutes`` long: the audio and what is said in it."""
    fixtures = [f for f in speech_fixtures.build() if f.text]
    parts: list[np.ndarray] = []
    texts: list[str] = []
    while sum(len(p) for p in parts) < minutes * 60 * SAMPLE_RATE:
        for fixture in fixtures:
            parts += [read_audio(speech_fixtures.DEFAULT_DIR / fixture.path), _GAP]
            texts.append(fixture.text)
    return np.concatenate(parts), " ".join(texts)


def row(
    name: str, audio_seconds: float, wall: float, cpu: float | None, text: str, reference: str
) -> dict[str, object]:
    return {
        "path": name,
        "audio_s": round(audio_seconds, 1),
        "wall_s": round(wall, 1),
        "speed_x_real_time": round(audio_seconds / wall, 1),
        "cpu_s_per_audio_s": None if cpu is None else round(cpu / audio_seconds, 3),
        "wer": round(wer([reference], [text]), 4),
    }


async def measure(audio: np.ndarray, reference: str) -> list[dict[str, object]]:
    engine = BuiltinEngine()
    await engine.load()
    seconds = len(audio) / SAMPLE_RATE
    rows = []
    try:
        batched = await FileTranscription(engine, audio).run()
        rows.append(
            row("batched (default)", seconds, batched.wall_seconds, batched.cpu_seconds, batched.text, reference)
        )
        streamed = await transcribe_audio(engine, audio, realtime=False)
        rows.append(
            row("streamed, fast feed", seconds, streamed.wall_seconds, streamed.cpu_seconds, streamed.text, reference)
        )
    finally:
        await engine.aclose()
    return rows


def measure_cli(audio: np.ndarray, reference: str) -> dict[str, object]:
    """``voxdesk transcribe`` as a process: start, load, read and transcribe."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "recording.flac"
        soundfile.write(str(path), audio, SAMPLE_RATE)
        output = Path(folder) / "recording.txt"
        began = time.perf_counter()
        command = [sys.executable, "-m", "voxdesk.cli.main", "transcribe", "--no-history", str(path), "-o", str(output)]
        subprocess.run(command, check=True, capture_output=True)
        wall = time.perf_counter() - began
        text = " ".join(output.read_text().splitlines())
    return row("voxdesk transcribe (process)", len(audio) / SAMPLE_RATE, wall, None, text, reference)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.files", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the recording (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    args = parser.parse_args(argv)
    audio, reference = long_recording(args.minutes)
    rows = asyncio.run(measure(audio, reference))
    rows.append(measure_cli(audio, reference))
    print("| path | audio | wall | speed | CPU-s per audio-s | WER |")
    print("|---|---|---|---|---|---|")
    for item in rows:
        cpu = item["cpu_s_per_audio_s"]
        print(
            f"| {item['path']} | {item['audio_s']} s | {item['wall_s']} s | {item['speed_x_real_time']}x | "
            f"{'' if cpu is None else cpu} | {item['wer']:.3f} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
