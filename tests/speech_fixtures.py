"""Synthesized speech fixtures for tests and benchmarks.

Two offline synthesizers from Debian make every phrase: espeak-ng (formant synthesis, very
robotic: a worst case) and Festival with the HTS voice cmu_us_slt_arctic_hts (trained on
recorded speech, closer to a person). Files are 16 kHz mono 16-bit WAV with known silence
around the speech, so the true speech onset and end are known for latency measurements.

Run ``python -m tests.speech_fixtures [DIR]`` to build them (default ``build/speech-fixtures``);
a manifest (``manifest.json``) lists every file with its text and speech bounds. Building is
skipped when the manifest matches the catalogue below.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "build" / "speech-fixtures"
RATE = 16_000
LEAD_SECONDS = 0.5
TRAIL_SECONDS = 1.0
PAUSE_SECONDS = 1.2  # between sentences of the long recording: longer than the endpoint silence

COMMANDS = [
    "open the browser",
    "search for weather in paris",
    "turn up the volume",
    "what time is it",
    "take a screenshot",
    "new email to john",
    "play some music",
    "stop",
    "close the window",
    "set a timer for five minutes",
    "set a timer for twenty five minutes",
    "remind me to call mom at three thirty",
    "open the calendar for next week",
    "search for cheap flights to london",
]

HELD_OUT_COMMANDS = [
    "open the downloads folder",
    "play the next song",
    "mute the microphone",
    "show me my calendar",
    "send a message to sarah",
    "what is the weather tomorrow",
    "turn off the lights",
    "pause the video",
    "search for pizza near me",
    "copy that to the clipboard",
    "open a new tab",
    "close all windows",
    "read my last email",
    "set an alarm for seven",
    "call david on his mobile",
    "scroll down",
    "go back to the previous page",
    "lower the brightness",
    "start a new document",
    "save the file",
    "how far is the airport",
    "translate hello into french",
    "minimize this window",
    "take a note",
    "add milk to the shopping list",
    "what is on my schedule today",
    "open the terminal",
    "switch to the music app",
    "find the report from last week",
    "restart the computer",
]
"""More commands, never used to tune the engine: a larger sample for judging its word error
rate, where one misheard command of the 14 :data:`COMMANDS` moves it by up to 0.05."""

PASSAGE = (
    "Dear team, thank you for the update on the project. I read the report this morning and I "
    "think we are in good shape for the release next month. There are still a few open questions "
    "about the budget, so please send me the latest numbers before the meeting on Thursday. I would "
    "also like to hear how the new design tested with customers. Let us keep the demo short and "
    "focus on the features that matter most. Best regards, and see you all next week."
)

LONG_SENTENCES = [
    "The weather today is sunny with a light breeze from the west.",
    "Please remember to water the plants in the kitchen before you leave.",
    "The library will be closed on Monday for the public holiday.",
    "Our train leaves the station at a quarter past nine in the morning.",
    "She bought fresh bread, a bag of apples and some cheese at the market.",
    "The children played football in the park until it got dark.",
    "We need to finish the slides before the meeting starts tomorrow.",
    "He left his umbrella at the office and got wet on the way home.",
    "The museum has a new exhibition about the history of flight.",
    "Turn left at the next corner and the bakery is on your right.",
    "My sister is learning to play the piano and practices every evening.",
    "The old bridge over the river was repaired last summer.",
    "The coffee machine on the third floor is broken again.",
    "Tomorrow we will drive to the coast and spend the day at the beach.",
]

VOCABULARY_SENTENCES = [
    "Please send the invoice to Xochitl before Friday.",
    "We deploy the service on Kubernetes every night.",
    "Ask Priyanka to add the new dashboard in Grafana.",
    "Doctor Okonkwo will move the meeting to Thursday.",
    "Connect the laptop through Tailscale first.",
    "Renew the Cloudflare certificate this week.",
    "Siobhan will review the pull request tomorrow.",
    "The orders table lives in PostgreSQL.",
    "Saoirse booked a table for half past seven.",
    "Open the Figma file that Priyanka shared.",
]
"""Sentences with names and product words, used while tuning vocabulary biasing."""

HELD_OUT_VOCABULARY_SENTENCES = [
    "Send the quarterly report to Aoife by Monday.",
    "Niamh fixed the login bug in Terraform yesterday.",
    "We moved the build cache to Redis last week.",
    "Please book a call with Oluwaseun on Thursday.",
    "The new logo was drawn in Inkscape.",
    "Ask Tadhg to restart the Nginx server.",
    "Our meeting notes live in Obsidian now.",
    "Rahul will demo the Jupyter notebook after lunch.",
]
"""Sentences with other names and product words, never used while tuning: the figures of
benchmarks/vocabulary.py are measured on these."""

VOCABULARY_LINES = [
    "Xochitl = so chee tl",
    "Siobhan = shiv awn",
    "Kubernetes = koo ber net eez",
    "Tailscale",
    "Cloudflare",
    "Priyanka = pree yahn kah",
    "Saoirse = seer sha",
    "Okonkwo = oh konk woh",
    "Grafana",
    "PostgreSQL = post gres Q L",
    "Figma",
]
"""The vocabulary of :data:`VOCABULARY_SENTENCES`, in a vocabulary file's syntax."""

HELD_OUT_VOCABULARY_LINES = [
    "Aoife = ee fa",
    "Niamh = neev",
    "Terraform",
    "Redis",
    "Oluwaseun = oh loo wah shay oon",
    "Inkscape",
    "Tadhg = tige",
    "Nginx = engine x",
    "Obsidian",
    "Jupyter",
]
"""The words of :data:`HELD_OUT_VOCABULARY_SENTENCES` ("Rahul" is said but not listed)."""

VOICES = ("espeak", "slt")


@dataclass(frozen=True)
class Fixture:
    """One synthesized recording and what is known about it."""

    name: str
    path: str
    text: str
    voice: str
    # "command", "held-out", "passage", "long", "silence", "noise", "vocabulary", "held-out-vocabulary", "phrase"
    kind: str
    duration: float
    speech: list[tuple[float, float]]  # true (start, end) of each spoken stretch, seconds


def catalogue_key() -> str:
    """Changes whenever the catalogue, the layout or the synthesizers change."""
    parts = [
        json.dumps([COMMANDS, HELD_OUT_COMMANDS, PASSAGE, LONG_SENTENCES, VOICES]),
        json.dumps([LEAD_SECONDS, TRAIL_SECONDS, PAUSE_SECONDS]),
        _tool_version(["espeak-ng", "--version"]),
        _tool_version(["festival", "--version"]),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _tool_version(command: list[str]) -> str:
    if shutil.which(command[0]) is None:
        raise RuntimeError(f"{command[0]} is not installed; run scripts/setup.sh --test")
    return subprocess.run(command, capture_output=True, text=True, check=False).stdout.strip()


def synthesize(text: str, voice: str) -> np.ndarray:
    """Speech for ``text`` as 16 kHz mono float32, trimmed to the voiced part."""
    import soundfile
    import soxr

    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "speech.wav"
        if voice == "espeak":
            subprocess.run(["espeak-ng", "-v", "en-us", "-s", "165", "-w", str(wav), text], check=True)
        elif voice == "slt":
            subprocess.run(
                ["text2wave", "-eval", "(voice_cmu_us_slt_arctic_hts)", "-o", str(wav)],
                input=text.encode(),
                check=True,
            )
        else:
            raise ValueError(f"unknown voice {voice!r}")
        samples, rate = soundfile.read(str(wav), dtype="float32", always_2d=True)
    audio = soxr.resample(samples.mean(axis=1), rate, RATE).astype(np.float32)
    return _trim(audio)


def _trim(audio: np.ndarray, threshold: float = 0.01) -> np.ndarray:
    loud = np.flatnonzero(np.abs(audio) > threshold)
    return audio[loud[0] : loud[-1] + 1] if len(loud) else audio[:0]


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), np.float32)


def _write(directory: Path, name: str, audio: np.ndarray) -> tuple[str, float]:
    import soundfile

    path = directory / f"{name}.wav"
    soundfile.write(str(path), audio, RATE, subtype="PCM_16")
    return str(path.relative_to(directory)), len(audio) / RATE


def _spoken(directory: Path, name: str, pieces: list[np.ndarray], text: str, voice: str, kind: str) -> Fixture:
    """Lead silence, the pieces separated by pauses, trail silence; records each piece's bounds."""
    audio, speech, cursor = [_silence(LEAD_SECONDS)], [], LEAD_SECONDS
    for index, piece in enumerate(pieces):
        if index:
            audio.append(_silence(PAUSE_SECONDS))
            cursor += PAUSE_SECONDS
        audio.append(piece)
        speech.append((round(cursor, 3), round(cursor + len(piece) / RATE, 3)))
        cursor += len(piece) / RATE
    audio.append(_silence(TRAIL_SECONDS))
    path, duration = _write(directory, name, np.concatenate(audio))
    return Fixture(name, path, text, voice, kind, duration, speech)


def speak(directory: Path, name: str, text: str, voice: str = "slt") -> Fixture:
    """One phrase a test needs beside the catalogue, synthesized into ``directory`` like the
    catalogue's (lead and trail silence); its ``path`` is relative to ``directory``."""
    return _spoken(directory, name, [synthesize(text, voice)], text, voice, "phrase")


def build(directory: Path = DEFAULT_DIR) -> list[Fixture]:
    """Make every fixture in ``directory`` (or reuse them) and return the catalogue."""
    directory.mkdir(parents=True, exist_ok=True)
    manifest = directory / "manifest.json"
    key = catalogue_key()
    if manifest.exists():
        stored = json.loads(manifest.read_text())
        if stored.get("key") == key and all((directory / f["path"]).exists() for f in stored["fixtures"]):
            return [Fixture(**{**f, "speech": [tuple(s) for s in f["speech"]]}) for f in stored["fixtures"]]
    fixtures: list[Fixture] = []
    for voice in VOICES:
        for prefix, kind, texts in (("command", "command", COMMANDS), ("heldout", "held-out", HELD_OUT_COMMANDS)):
            for index, text in enumerate(texts):
                name = f"{prefix}{index:02d}-{voice}"
                fixtures.append(_spoken(directory, name, [synthesize(text, voice)], text, voice, kind))
        fixtures.append(_spoken(directory, f"passage-{voice}", [synthesize(PASSAGE, voice)], PASSAGE, voice, "passage"))
    long_pieces = [synthesize(sentence, "slt") for sentence in LONG_SENTENCES]
    fixtures.append(_spoken(directory, "long-slt", long_pieces, " ".join(LONG_SENTENCES), "slt", "long"))
    rng = np.random.default_rng(20261129)
    path, duration = _write(directory, "silence", _silence(5.0))
    fixtures.append(Fixture("silence", path, "", "none", "silence", duration, []))
    noise = np.clip(rng.normal(0.0, 0.1, 5 * RATE), -1, 1).astype(np.float32)
    path, duration = _write(directory, "noise", noise)
    fixtures.append(Fixture("noise", path, "", "none", "noise", duration, []))
    manifest.write_text(json.dumps({"key": key, "fixtures": [asdict(f) for f in fixtures]}, indent=1))
    return fixtures


def build_vocabulary(directory: Path = DEFAULT_DIR) -> list[Fixture]:
    """Make the vocabulary sentences (kinds ``vocabulary`` and ``held-out-vocabulary``) in
    ``directory`` beside the main catalogue, with a manifest of their own
    (``vocabulary.json``), so adding them leaves the main catalogue's files as they are."""
    directory.mkdir(parents=True, exist_ok=True)
    manifest = directory / "vocabulary.json"
    sets = (
        ("vocab", "vocabulary", VOCABULARY_SENTENCES),
        ("vocabheld", "held-out-vocabulary", HELD_OUT_VOCABULARY_SENTENCES),
    )
    key = hashlib.sha256(f"{catalogue_key()}\n{json.dumps(sets)}".encode()).hexdigest()[:16]
    if manifest.exists():
        stored = json.loads(manifest.read_text())
        if stored.get("key") == key and all((directory / f["path"]).exists() for f in stored["fixtures"]):
            return [Fixture(**{**f, "speech": [tuple(s) for s in f["speech"]]}) for f in stored["fixtures"]]
    fixtures = [
        _spoken(directory, f"{prefix}{index:02d}-{voice}", [synthesize(text, voice)], text, voice, kind)
        for voice in VOICES
        for prefix, kind, texts in sets
        for index, text in enumerate(texts)
    ]
    manifest.write_text(json.dumps({"key": key, "fixtures": [asdict(f) for f in fixtures]}, indent=1))
    return fixtures


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIR
    built = build(target) + build_vocabulary(target)
    print(f"{len(built)} fixtures in {target}")
