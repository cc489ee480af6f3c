"""The server protocol core, with no socket and no event loop."""

from __future__ import annotations

import json

import numpy as np
import pytest

from voxdesk.engine.events import StreamErrorCode
from voxdesk.engine.remote.realtime import encode_audio
from voxdesk.engine.wire.codes import ProtocolError
from voxdesk.engine.wire.core import AudioReceived, EndOfAudio
from voxdesk.engine.wire.pcm import decode_audio
from voxdesk.engine.wire.realtime.events import Usage
from voxdesk.engine.wire.realtime.protocol import (
    FINAL_WITHOUT_GENERATION_MESSAGE,
    MODEL_NOT_VALIDATED_MESSAGE,
    ServerProtocol,
)
from voxdesk.engine.wire.session_core import Generation, StartGeneration


def frames(protocol: ServerProtocol) -> list[dict[str, object]]:
    return [json.loads(frame) for frame in protocol.data_to_send()]


def send(protocol: ServerProtocol, **event: object) -> list[dict[str, object]]:
    protocol.receive_text(json.dumps(event))
    return frames(protocol)


def append(protocol: ServerProtocol, seconds: float = 0.1) -> list[dict[str, object]]:
    return send(protocol, type="input_audio_buffer.append", audio=encode_audio(np.full(int(seconds * 16_000), 0.25)))


@pytest.fixture
def protocol() -> ServerProtocol:
    created = ServerProtocol("voxdesk-builtin")
    created.accept()
    assert [f["type"] for f in frames(created)] == ["session.created"]
    return created


def test_session_update_is_silent_and_validates(protocol: ServerProtocol) -> None:
    assert send(protocol, type="session.update", model="voxdesk-builtin") == []
    assert protocol.model_validated


def test_wrong_model_keeps_an_earlier_validation(protocol: ServerProtocol) -> None:
    send(protocol, type="session.update", model="voxdesk-builtin")
    [error] = send(protocol, type="session.update", model="gpt-4o")
    assert error == {"type": "error", "error": "The model `gpt-4o` does not exist.", "code": "model_not_found"}
    assert protocol.model_validated


def test_commit_before_validation_is_refused(protocol: ServerProtocol) -> None:
    for final in (False, True):
        [error] = send(protocol, type="input_audio_buffer.commit", final=final)
        assert error == {"type": "error", "error": MODEL_NOT_VALIDATED_MESSAGE, "code": "model_not_validated"}
    assert protocol.events_received() == []


def test_audio_before_the_commit_waits_and_then_starts_the_generation(protocol: ServerProtocol) -> None:
    append(protocol, 0.1)
    append(protocol, 0.2)
    assert protocol.events_received() == []
    send(protocol, type="session.update", model="")
    send(protocol, type="input_audio_buffer.commit")
    actions = protocol.events_received()
    assert isinstance(actions[0], StartGeneration)
    assert [len(a.samples) for a in actions[1:] if isinstance(a, AudioReceived)] == [1600, 3200]
    append(protocol, 0.05)
    [audio] = protocol.events_received()
    assert isinstance(audio, AudioReceived) and np.allclose(audio.samples, 0.25, atol=1e-4)


def state(protocol: ServerProtocol) -> Generation:
    """The generation state, read afresh (mypy would keep the narrowing of an earlier assert)."""
    return protocol.generation


def test_full_generation_cycle_then_a_second_one(protocol: ServerProtocol) -> None:
    send(protocol, type="session.update", model="voxdesk-builtin")
    for _ in range(2):
        send(protocol, type="input_audio_buffer.commit")
        assert protocol.generation is Generation.STREAMING
        send(protocol, type="input_audio_buffer.commit")  # ignored while streaming, as in vLLM
        append(protocol)
        send(protocol, type="input_audio_buffer.commit", final=True)
        append(protocol)  # after final: discarded
        assert [type(a) for a in protocol.events_received()] == [StartGeneration, AudioReceived, EndOfAudio]
        protocol.send_delta("Hello")
        protocol.send_done("Hello", Usage())
        assert [f["type"] for f in frames(protocol)] == ["transcription.delta", "transcription.done"]
        assert state(protocol) is Generation.IDLE


def test_stray_final_commit_does_not_end_the_next_generation(protocol: ServerProtocol) -> None:
    send(protocol, type="session.update", model="")
    [error] = send(protocol, type="input_audio_buffer.commit", final=True)
    assert error == {"type": "error", "error": FINAL_WITHOUT_GENERATION_MESSAGE, "code": "invalid_event"}
    send(protocol, type="input_audio_buffer.commit")
    append(protocol)
    assert [type(a) for a in protocol.events_received()] == [StartGeneration, AudioReceived]


def test_provisional_text_only_for_clients_that_ask(protocol: ServerProtocol) -> None:
    send(protocol, type="session.update", model="")
    protocol.send_provisional("maybe")
    assert frames(protocol) == []
    send(protocol, type="session.update", model="", provisional=True)
    protocol.send_provisional("maybe")
    assert frames(protocol) == [{"type": "transcription.provisional", "text": "maybe"}]


@pytest.mark.parametrize("audio", ["!!!", "QQ", "QUFB", ""])
def test_undecodable_odd_or_empty_audio_is_invalid_audio(protocol: ServerProtocol, audio: str) -> None:
    [error] = send(protocol, type="input_audio_buffer.append", audio=audio)
    assert error == {"type": "error", "error": "Invalid audio data", "code": "invalid_audio"}


def test_per_message_and_per_session_limits() -> None:
    protocol = ServerProtocol("m", max_message_samples=16_000, max_session_samples=24_000)
    [error] = append(protocol, 1.5)
    assert error["code"] == "invalid_audio"
    assert append(protocol, 1.0) == []
    [error] = append(protocol, 1.0)
    assert error["code"] == StreamErrorCode.BUFFER_FULL
    assert protocol.samples_received == 16_000


def test_waiting_audio_is_bounded() -> None:
    protocol = ServerProtocol("m", max_pending_samples=16_000)
    assert append(protocol, 1.0) == []
    [error] = append(protocol, 0.1)
    assert error["code"] == "buffer_full"


def test_binary_frames_get_an_error_instead_of_a_dropped_socket(protocol: ServerProtocol) -> None:
    protocol.receive_binary(b"")
    [error] = frames(protocol)
    assert error["code"] == "invalid_event"


def test_engine_failure_ends_the_generation_without_done(protocol: ServerProtocol) -> None:
    send(protocol, type="session.update", model="")
    send(protocol, type="input_audio_buffer.commit")
    protocol.generation_failed("Transcription failed")
    assert frames(protocol) == [{"type": "error", "error": "Transcription failed", "code": "processing_error"}]
    assert protocol.generation is Generation.IDLE


def test_decode_audio_is_pcm16_little_endian() -> None:
    samples = decode_audio("AIAAAP9/", max_samples=10)  # -32768, 0, 32767
    assert samples.dtype == np.float32
    assert samples.tolist() == pytest.approx([-1.0, 0.0, 32767 / 32768])
    with pytest.raises(ProtocolError):
        decode_audio("AIAAAP9/", max_samples=2)
