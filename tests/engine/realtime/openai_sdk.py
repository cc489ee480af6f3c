"""The official ``openai`` SDK as the client of ``voxdesk serve``'s OpenAI dialect: connecting,
appending fixture audio, and reading server events checked against the SDK's strict models."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
import soxr
from openai import AsyncOpenAI
from openai.resources.realtime.realtime import AsyncRealtimeConnection
from openai.types.realtime import (
    ConversationItemAdded,
    ConversationItemDone,
    ConversationItemInputAudioTranscriptionCompletedEvent,
    ConversationItemInputAudioTranscriptionDeltaEvent,
    InputAudioBufferClearedEvent,
    InputAudioBufferCommittedEvent,
    InputAudioBufferSpeechStartedEvent,
    InputAudioBufferSpeechStoppedEvent,
    RealtimeErrorEvent,
    SessionCreatedEvent,
    SessionUpdatedEvent,
)
from pydantic import BaseModel

from voxdesk.engine.session import SAMPLE_RATE

Event = dict[str, Any]

RATE = 24_000
SESSION = {
    "type": "transcription",
    "audio": {
        "input": {
            "format": {"type": "audio/pcm", "rate": RATE},
            "transcription": {"model": "gpt-4o-transcribe", "language": "en"},
            "turn_detection": None,
        }
    },
}
MODELS: dict[str, type[BaseModel]] = {
    "session.created": SessionCreatedEvent,
    "session.updated": SessionUpdatedEvent,
    "input_audio_buffer.committed": InputAudioBufferCommittedEvent,
    "input_audio_buffer.cleared": InputAudioBufferClearedEvent,
    "input_audio_buffer.speech_started": InputAudioBufferSpeechStartedEvent,
    "input_audio_buffer.speech_stopped": InputAudioBufferSpeechStoppedEvent,
    "conversation.item.added": ConversationItemAdded,
    "conversation.item.done": ConversationItemDone,
    "conversation.item.input_audio_transcription.delta": ConversationItemInputAudioTranscriptionDeltaEvent,
    "conversation.item.input_audio_transcription.completed": ConversationItemInputAudioTranscriptionCompletedEvent,
    "error": RealtimeErrorEvent,
}


@asynccontextmanager
async def sdk_session(port: int, key: str = "sk-test") -> AsyncIterator[AsyncRealtimeConnection]:
    """The SDK connected to ``voxdesk serve`` on ``port`` as its docs say for transcription,
    past ``session.created``."""
    client = AsyncOpenAI(
        api_key=key,
        base_url=f"http://127.0.0.1:{port}/v1",
        websocket_base_url=f"ws://127.0.0.1:{port}/v1",
    )
    async with client.realtime.connect(extra_query={"intent": "transcription"}) as conn:
        assert (await next_event(conn))["type"] == "session.created"
        yield conn


async def next_event(conn: AsyncRealtimeConnection) -> Event:
    """The next server event, raw, after checking it against the SDK's strict model for its type."""
    event: Event = json.loads(await conn.recv_bytes())
    assert event["event_id"], event
    model = MODELS.get(event["type"])
    if model is not None:
        model.model_validate(event)
    return event


async def until(conn: AsyncRealtimeConnection, kind: str) -> list[Event]:
    """Events up to and including the first of type ``kind``."""
    events = [await next_event(conn)]
    while events[-1]["type"] != kind:
        events.append(await next_event(conn))
    return events


async def append(conn: AsyncRealtimeConnection, samples: np.ndarray, chunk_ms: int = 100) -> None:
    """16 kHz fixture audio as the SDK's appends of 24 kHz PCM16."""
    pcm = (np.clip(soxr.resample(samples, SAMPLE_RATE, RATE), -1, 1) * 32767).astype("<i2").tobytes()
    step = RATE * chunk_ms // 1000 * 2
    for start in range(0, len(pcm), step):
        await conn.input_audio_buffer.append(audio=base64.b64encode(pcm[start : start + step]).decode())


def transcripts(events: list[Event]) -> dict[str, str]:
    """Completed transcripts by item id; each item's deltas must add up to its transcript."""
    deltas: dict[str, str] = {}
    done: dict[str, str] = {}
    for event in events:
        if event["type"] == "conversation.item.input_audio_transcription.delta":
            assert event["item_id"] not in done, "a delta after its item completed"
            deltas[event["item_id"]] = deltas.get(event["item_id"], "") + event["delta"]
        elif event["type"] == "conversation.item.input_audio_transcription.completed":
            done[event["item_id"]] = event["transcript"]
            assert deltas.get(event["item_id"], "") == event["transcript"], event
    return done
