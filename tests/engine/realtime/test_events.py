"""The event models against vLLM's exact JSON (docs/realtime-protocol.md §2)."""

from __future__ import annotations

import json

import pytest

from voxdesk.engine.wire.codes import ProtocolError, WireCode
from voxdesk.engine.wire.realtime.events import (
    ErrorEvent,
    InputAudioBufferAppend,
    InputAudioBufferCommit,
    SessionCreated,
    SessionUpdate,
    TranscriptionDelta,
    TranscriptionDone,
    TranscriptionProvisional,
    Usage,
    parse_client_event,
    parse_server_event,
)

# Lines as vLLM 0.33 serializes them (reference §2.2).
VLLM_LINES = [
    '{"type":"session.created","id":"sess-a41b6692d7acb277","created":1795988509}',
    '{"type":"transcription.delta","delta":" Mary"}',
    '{"type":"transcription.done","text":" First words I spoke ...","usage":{"prompt_tokens":39,"total_tokens":175,'
    '"completion_tokens":136,"prompt_tokens_details":null,"completion_tokens_details":null}}',
    '{"type":"error","error":"Invalid JSON","code":"invalid_json"}',
]


@pytest.mark.parametrize("line", VLLM_LINES)
def test_server_events_round_trip_byte_for_byte(line: str) -> None:
    event = parse_server_event(line)
    assert event is not None
    assert event.to_json() == line


def test_server_events_serialize_like_vllm() -> None:
    assert TranscriptionDelta(delta="").to_json() == '{"type":"transcription.delta","delta":""}'
    assert ErrorEvent(error="x").to_json() == '{"type":"error","error":"x","code":null}'
    done = TranscriptionDone(text="", usage=Usage())
    assert done.to_json() == (
        '{"type":"transcription.done","text":"","usage":{"prompt_tokens":0,"total_tokens":0,'
        '"completion_tokens":0,"prompt_tokens_details":null,"completion_tokens_details":null}}'
    )
    created = json.loads(SessionCreated().to_json())
    assert list(created) == ["type", "id", "created"]
    assert created["id"].startswith("sess-") and len(created["id"]) == 21
    assert TranscriptionProvisional(text=" tail").to_json() == '{"type":"transcription.provisional","text":" tail"}'


def test_client_events_serialize_as_vllm_reads_them() -> None:
    assert SessionUpdate(model="m").to_json() == '{"type":"session.update","model":"m"}'
    assert SessionUpdate(model="m", provisional=True).to_json() == (
        '{"type":"session.update","model":"m","provisional":true}'
    )
    assert InputAudioBufferCommit().to_json() == '{"type":"input_audio_buffer.commit","final":false}'
    assert InputAudioBufferAppend(audio="AAA=").to_json() == '{"type":"input_audio_buffer.append","audio":"AAA="}'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"type":"session.update","model":"m","extra":1}', SessionUpdate(model="m")),
        ('{"type":"session.update","model":"m","provisional":true}', SessionUpdate(model="m", provisional=True)),
        ('{"type":"session.update","model":""}', SessionUpdate(model="")),
        ('{"type":"input_audio_buffer.append","audio":"AAA="}', InputAudioBufferAppend(audio="AAA=")),
        ('{"type":"input_audio_buffer.commit"}', InputAudioBufferCommit(final=False)),
        ('{"type":"input_audio_buffer.commit","final":"yes"}', InputAudioBufferCommit(final=True)),
        ('{"type":"input_audio_buffer.commit","final":0}', InputAudioBufferCommit(final=False)),
    ],
)
def test_client_events_parse(text: str, expected: object) -> None:
    assert parse_client_event(text) == expected


@pytest.mark.parametrize(
    ("text", "code", "message"),
    [
        ("{not json", WireCode.INVALID_JSON, "Invalid JSON"),
        ("[]", WireCode.PROCESSING_ERROR, "'list' object has no attribute 'get'"),
        ("5", WireCode.PROCESSING_ERROR, "'int' object has no attribute 'get'"),
        ('{"type":"response.create"}', WireCode.UNKNOWN_EVENT, "Unknown event type: response.create"),
        ("{}", WireCode.UNKNOWN_EVENT, "Unknown event type: None"),
        ('{"type":"session.update"}', WireCode.INVALID_EVENT, "Missing required field: model"),
        ('{"type":"session.update","model":null}', WireCode.INVALID_EVENT, "Missing required field: model"),
        ('{"type":"input_audio_buffer.append"}', WireCode.PROCESSING_ERROR, "audio: Field required"),
        ('{"type":"input_audio_buffer.commit","final":"maybe"}', WireCode.PROCESSING_ERROR, "final"),
    ],
)
def test_bad_client_events_map_to_vllm_codes(text: str, code: WireCode, message: str) -> None:
    with pytest.raises(ProtocolError) as raised:
        parse_client_event(text)
    assert raised.value.code is code
    assert message in raised.value.message


def test_unknown_server_events_are_skipped_and_usage_keys_filtered() -> None:
    assert parse_server_event('{"type":"session.updated"}') is None
    done = parse_server_event('{"type":"transcription.done","text":"a","usage":{"prompt_tokens":1,"other":2}}')
    assert done == TranscriptionDone(text="a", usage=Usage(prompt_tokens=1))
