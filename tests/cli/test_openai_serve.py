"""The official ``openai`` SDK transcribes through a real ``voxdesk serve`` process on loopback."""

from __future__ import annotations

import asyncio
import signal

import numpy as np

from tests.engine.realtime.openai_sdk import SESSION, append, next_event, sdk_session, transcripts, until
from tests.recognition import assert_recognized
from tests.serve_process import start_serve
from tests.speech_fixtures import Fixture


def test_openai_sdk_transcribes_through_voxdesk_serve(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    """``AsyncOpenAI(websocket_base_url="ws://127.0.0.1:PORT/v1")`` with a dummy key and
    ``?intent=transcription``, one committed turn: its completed transcript is the phrase."""
    process, port = start_serve()
    name = "command09-slt"  # "set a timer for five minutes"

    async def scenario() -> str:
        async with sdk_session(port, key="sk-dummy") as conn:
            await conn.session.update(session=SESSION)  # type: ignore[arg-type]
            assert (await next_event(conn))["type"] == "session.updated"
            await append(conn, fixture_audio[name])
            await conn.input_audio_buffer.commit()
            events = await until(conn, "conversation.item.input_audio_transcription.completed")
            [transcript] = transcripts(events).values()
            return transcript

    try:
        transcript = asyncio.run(asyncio.wait_for(scenario(), 60))
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    assert_recognized(speech[name], transcript)
