"""vLLM's own ``/v1/realtime`` server and ``voxdesk serve --engine vllm``, both on the tiny model.

The conformance check here is differential: the same client script goes to both servers and
the frames that come back must be the same, byte for byte (session id and time masked;
``processing_error`` texts, which are pydantic's wording in vLLM, compared by code only).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.vllm_support import (
    OUTPUTS_FOR_4S,
    PROMPT_TOKENS,
    SERVED_NAME,
    as_float,
    audio_frames,
    build_tiny_model,
    chirp_pcm16,
    launch_voxdesk_vllm_server,
    realtime_frames,
    requires_vllm,
    stop,
)
from voxdesk.app.files.transcription import transcribe_audio
from voxdesk.engine import TextDelta, UtteranceDone
from voxdesk.engine.remote.realtime import VllmRealtimeEngine, VllmRealtimeSettings

pytestmark = [pytest.mark.vllm, requires_vllm]

UPDATE = json.dumps({"type": "session.update", "model": SERVED_NAME})
COMMIT = json.dumps({"type": "input_audio_buffer.commit"})
FINAL = json.dumps({"type": "input_audio_buffer.commit", "final": True})
END = json.dumps({"type": "session.update", "model": "end-of-script"})  # answered by model_not_found
ERROR_ROWS = [
    "{not json",
    "[]",
    json.dumps({"type": "response.create"}),
    json.dumps({}),
    json.dumps({"type": "session.update"}),
    json.dumps({"type": "session.update", "model": "not-served"}),
    json.dumps({"type": "input_audio_buffer.append"}),
    json.dumps({"type": "input_audio_buffer.append", "audio": "QQ"}),
    json.dumps({"type": "input_audio_buffer.append", "audio": "QUFB"}),
    json.dumps({"type": "input_audio_buffer.append", "audio": ""}),
]
SCRIPTS = {
    "a transcription": ([UPDATE, COMMIT, *audio_frames(chirp_pcm16(4.0)), FINAL], "transcription.done"),
    "audio before the commit": ([UPDATE, *audio_frames(chirp_pcm16(2.0)), COMMIT, FINAL], "transcription.done"),
    "an empty utterance": ([UPDATE, COMMIT, FINAL], "transcription.done"),
    "commits before session.update": ([COMMIT, FINAL, END], "end-of-script"),
    "every error row": ([*ERROR_ROWS, END], "end-of-script"),
    "errors, then a transcription": ([*ERROR_ROWS, UPDATE, COMMIT, *audio_frames(chirp_pcm16(2.0)), FINAL], "done"),
}


@dataclass(frozen=True)
class Servers:
    """The ports of vLLM's own server and of ``voxdesk serve --engine vllm``."""

    vllm: int
    voxdesk: int


@pytest.fixture(scope="module")
def servers(request: pytest.FixtureRequest) -> Iterator[Servers]:
    """Both servers, started at the same time (a start is mostly single-threaded imports): voxdesk's
    is launched, then the session's ``vllm_server`` is set up while it starts. That one is taken here
    rather than as a test argument because pytest sets session fixtures up before module ones."""
    voxdesk = launch_voxdesk_vllm_server(build_tiny_model())
    try:
        vllm_port = request.getfixturevalue("vllm_server")
        voxdesk.healthy()
        yield Servers(vllm_port, voxdesk.port)
    finally:
        stop(voxdesk.process)


def comparable(frame: str) -> str:
    event = json.loads(frame)
    if event.get("code") == "processing_error":
        event["error"] = "<processing_error>"
    return json.dumps(event)


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_voxdesk_serve_answers_exactly_like_vllm(name: str, servers: Servers) -> None:
    script, until = SCRIPTS[name]
    theirs = asyncio.run(realtime_frames(servers.vllm, script, until))
    ours = asyncio.run(realtime_frames(servers.voxdesk, script, until))
    assert [comparable(f) for f in ours] == [comparable(f) for f in theirs]
    assert len(theirs) > 1


def test_a_transcription_has_vllms_delta_count_and_usage(servers: Servers) -> None:
    script, until = SCRIPTS["a transcription"]
    frames = [json.loads(f) for f in asyncio.run(realtime_frames(servers.voxdesk, script, until))]
    deltas = [f["delta"] for f in frames if f["type"] == "transcription.delta"]
    done = frames[-1]
    assert len(deltas) == OUTPUTS_FOR_4S
    assert done["text"] == "".join(deltas)
    assert done["usage"]["prompt_tokens"] == PROMPT_TOKENS
    assert done["usage"]["completion_tokens"] == OUTPUTS_FOR_4S


def test_the_remote_engine_transcribes_through_vllms_server(vllm_server: int) -> None:
    async def scenario() -> list[object]:
        remote = VllmRealtimeEngine(VllmRealtimeSettings(url=f"ws://127.0.0.1:{vllm_server}", model=SERVED_NAME))
        await remote.load()
        report = await transcribe_audio(remote, as_float(chirp_pcm16(4.0)), realtime=False)
        return [t.event for t in report.timeline]

    events = asyncio.run(scenario())
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert done.text.strip() and done.text == "".join(deltas)
    assert done.stats.prompt_tokens == PROMPT_TOKENS
    assert done.stats.completion_tokens == OUTPUTS_FOR_4S
