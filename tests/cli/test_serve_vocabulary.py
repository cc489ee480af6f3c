"""``voxdesk serve --vocabulary FILE`` biases every session of the built-in engine, and an
OpenAI-dialect session's transcription ``prompt`` biases that session (the official SDK)."""

from __future__ import annotations

import asyncio
import copy
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests import speech_fixtures
from tests.cli.test_transcribe_vocabulary import transcribed
from tests.engine.realtime.openai_sdk import SESSION, append, next_event, sdk_session, transcripts, until
from tests.recognition import listed_words
from tests.serve_process import start_serve
from voxdesk.app.files.reading import read_audio

# Held-out sentences whose listed words the engine gets wrong without a vocabulary
# (benchmarks/README.md): 5 listed words, 1 of them right unbiased; 4 biased on this machine.
SAID = [
    "We moved the build cache to Redis last week.",
    "Please book a call with Oluwaseun on Thursday.",
    "Ask Tadhg to restart the Nginx server.",
    "Rahul will demo the Jupyter notebook after lunch.",
]
LINES = speech_fixtures.HELD_OUT_VOCABULARY_LINES + speech_fixtures.VOCABULARY_LINES
ENTRIES = [line.split("=")[0].strip() for line in LINES]
RIGHT = 3  # of the 5: one word of margin for another machine


def spoken_files() -> list[Path]:
    fixtures = {f.text: f for f in speech_fixtures.build_vocabulary() if f.voice == "slt"}
    return [speech_fixtures.DEFAULT_DIR / fixtures[text].path for text in SAID]


def right_of(heard: list[str]) -> int:
    said, right, inserted = listed_words(ENTRIES, [" ".join(SAID)], [" ".join(heard)])
    assert said == 5 and inserted == 0, heard
    return right


def stopped(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


@pytest.fixture
def plain_server() -> Iterator[int]:
    process, port = start_serve(drain=True)
    yield port
    stopped(process)


def test_serve_vocabulary_biases_every_session_and_a_server_without_one_does_not(
    tmp_path: Path, plain_server: int
) -> None:
    words = tmp_path / "words.txt"
    words.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    process, port = start_serve("--vocabulary", str(words), drain=True)
    try:
        biased = transcribed(spoken_files(), "--server", f"ws://127.0.0.1:{port}")
    finally:
        stopped(process)
    plain = transcribed(spoken_files(), "--server", f"ws://127.0.0.1:{plain_server}")
    assert right_of(biased) >= RIGHT > right_of(plain), (biased, plain)


def openai_transcripts(port: int, prompt: str | None) -> list[str]:
    """Each sentence committed as one turn of one OpenAI-dialect session, with ``prompt``."""
    session = copy.deepcopy(SESSION)
    if prompt is not None:
        session["audio"]["input"]["transcription"]["prompt"] = prompt  # type: ignore[index]
    audio: list[np.ndarray] = [read_audio(path) for path in spoken_files()]

    async def scenario() -> list[str]:
        heard: list[str] = []
        async with sdk_session(port, key="sk-dummy") as conn:
            await conn.session.update(session=session)  # type: ignore[arg-type]
            assert (await next_event(conn))["type"] == "session.updated"
            for samples in audio:
                await append(conn, samples)
                await conn.input_audio_buffer.commit()
                events = await until(conn, "conversation.item.input_audio_transcription.completed")
                heard += transcripts(events).values()
        return heard

    return asyncio.run(asyncio.wait_for(scenario(), 120))


def test_an_openai_session_prompt_biases_that_session_only(plain_server: int) -> None:
    biased = openai_transcripts(plain_server, ", ".join(ENTRIES))
    plain = openai_transcripts(plain_server, None)
    assert right_of(biased) >= RIGHT > right_of(plain), (biased, plain)
