"""The OpenAI dialect's sans-I/O protocol: how its events map onto the shared generation state.

Each test feeds :class:`OpenAIServerProtocol` client frames and engine output and checks the
frames it would write and the actions it asks of the server.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

from tests.engine.fake_scorer import FakeScorer, script
from tests.engine.realtime.openai_sdk import MODELS
from voxdesk.engine.wire.core import AudioReceived, EndOfAudio
from voxdesk.engine.wire.openai.protocol import OpenAIServerProtocol
from voxdesk.engine.wire.session_core import Generation, StartGeneration

Event = dict[str, Any]

SECOND = base64.b64encode(np.zeros(24_000, "<i2").tobytes()).decode()  # one second of 24 kHz PCM16


def opened(**options: Any) -> OpenAIServerProtocol:
    protocol = OpenAIServerProtocol("voxdesk-builtin", **options)
    protocol.accept()
    [created] = events(protocol)
    assert created["type"] == "session.created"
    return protocol


def send(protocol: OpenAIServerProtocol, *frames: Event) -> list[Event]:
    """Feed ``frames``; the events the protocol would write, each valid for the SDK's models."""
    for frame in frames:
        protocol.receive_text(json.dumps(frame))
    return events(protocol)


def events(protocol: OpenAIServerProtocol) -> list[Event]:
    written = [json.loads(frame) for frame in protocol.data_to_send()]
    for event in written:
        model = MODELS.get(event["type"])
        if model is not None:
            model.model_validate(event)
    return written


APPEND = {"type": "input_audio_buffer.append", "audio": SECOND}
COMMIT = {"type": "input_audio_buffer.commit"}
CLEAR = {"type": "input_audio_buffer.clear"}
SERVER_VAD = {"type": "session.update", "session": {"audio": {"input": {"turn_detection": {"type": "server_vad"}}}}}
PADDING = 4800  # server_vad's default prefix_padding_ms, 300 ms, in 16 kHz samples


def test_text_before_the_commit_waits_for_the_item_then_completes_it() -> None:
    protocol = opened()
    assert send(protocol, APPEND) == []
    assert isinstance(protocol.events_received()[0], StartGeneration)
    protocol.send_delta("Hello")
    assert events(protocol) == []  # no item to key it on yet
    committed, added, delta = send(protocol, COMMIT)
    assert committed["type"] == "input_audio_buffer.committed" and added["type"] == "conversation.item.added"
    assert delta["delta"] == "Hello" and delta["item_id"] == committed["item_id"]
    assert isinstance(protocol.events_received()[-1], EndOfAudio)
    protocol.send_done("Hello")
    completed, done = events(protocol)
    assert completed["transcript"] == "Hello" and completed["item_id"] == committed["item_id"]
    assert completed["usage"]["type"] == "duration" and 0.9 < completed["usage"]["seconds"] <= 1.0
    assert done["type"] == "conversation.item.done"
    assert protocol.generation is Generation.IDLE


def test_a_turn_committed_while_one_finalizes_waits_then_follows() -> None:
    protocol = opened()
    send(protocol, APPEND, COMMIT, APPEND, COMMIT)
    first = protocol.events_received()
    assert [type(a) for a in first if not isinstance(a, AudioReceived)] == [StartGeneration, EndOfAudio]
    protocol.send_done("one")
    assert events(protocol)[0]["type"] == "conversation.item.input_audio_transcription.completed"
    second = protocol.events_received()  # replayed on done: the second turn, whole
    assert isinstance(second[0], StartGeneration) and isinstance(second[-1], EndOfAudio)
    assert sum(len(a.samples) for a in second if isinstance(a, AudioReceived)) == 16_000


def test_clear_drops_only_uncommitted_audio() -> None:
    protocol = opened()
    send(protocol, APPEND, COMMIT, APPEND)
    protocol.events_received()
    [cleared] = send(protocol, CLEAR)
    assert cleared["type"] == "input_audio_buffer.cleared"
    protocol.send_done("one")
    events(protocol)
    assert protocol.events_received() == []  # the cleared turn never starts
    [error] = send(protocol, COMMIT)
    assert error["error"]["code"] == "input_audio_buffer_commit_empty"


def test_clear_of_a_streaming_turn_discards_its_output() -> None:
    protocol = opened()
    send(protocol, APPEND, CLEAR)
    assert isinstance(protocol.events_received()[-1], EndOfAudio)
    protocol.send_delta("lost")
    protocol.send_done("lost")
    assert events(protocol) == []


def test_engine_failure_after_the_commit_is_the_items_failed_event() -> None:
    protocol = opened()
    [committed, _] = send(protocol, APPEND, COMMIT)
    protocol.generation_failed("Transcription failed")
    [failed] = events(protocol)
    assert failed["type"] == "conversation.item.input_audio_transcription.failed"
    assert failed["item_id"] == committed["item_id"] and failed["error"]["type"] == "server_error"


def test_the_session_audio_limit_is_buffer_full_in_openai_shape() -> None:
    protocol = opened(max_session_samples=16_000)
    assert send(protocol, APPEND) == []
    [error] = send(protocol, {**APPEND, "event_id": "e9"})
    assert error["error"]["code"] == "buffer_full" and error["error"]["event_id"] == "e9"


def vad_opened(probabilities: np.ndarray) -> OpenAIServerProtocol:
    """A session with server_vad over a FAKE scorer of scripted per-window probabilities."""
    protocol = opened(scorers=lambda: FakeScorer(probabilities))
    [updated] = send(protocol, SERVER_VAD)
    assert updated["type"] == "session.updated"
    return protocol


def received_samples(protocol: OpenAIServerProtocol) -> int:
    return sum(len(a.samples) for a in protocol.events_received() if isinstance(a, AudioReceived))


def test_server_vad_is_refused_by_a_session_given_no_speech_scorer() -> None:
    protocol = opened()
    [error] = send(protocol, SERVER_VAD)
    assert error["error"]["code"] == "unsupported_turn_detection"
    assert protocol.settings.turn_detection is None


def test_server_vad_announces_a_turn_from_its_padding_and_commits_it_when_speech_stops() -> None:
    protocol = vad_opened(script((0.0, 20), (0.9, 30), (0.0, 25)))  # speech in windows 20 to 49
    started, stopped, committed, added = send(protocol, APPEND, APPEND, APPEND)
    assert started["type"] == "input_audio_buffer.speech_started"
    assert started["audio_start_ms"] == (20 * 512 - PADDING) * 1000 // 16_000
    assert stopped["type"] == "input_audio_buffer.speech_stopped" and stopped["audio_end_ms"] == 50 * 512 // 16
    assert committed["type"] == "input_audio_buffer.committed" and added["type"] == "conversation.item.added"
    assert committed["item_id"] == started["item_id"] == stopped["item_id"]
    received = protocol.events_received()
    assert isinstance(received[0], StartGeneration) and isinstance(received[-1], EndOfAudio)


def test_a_commit_in_speech_ends_the_turn_and_the_next_turns_padding_starts_after_it() -> None:
    protocol = vad_opened(script((0.0, 20), (0.9, 200)))
    [started] = send(protocol, APPEND)
    committed_to = 20 * 512 - PADDING + received_samples(protocol)  # the turn's audio: padding to here
    stopped, committed, _ = send(protocol, COMMIT)
    assert stopped["audio_end_ms"] == committed_to // 512 * 512 * 1000 // 16_000  # the last voiced window
    assert committed["item_id"] == started["item_id"]
    [restarted] = send(protocol, APPEND)
    assert restarted["type"] == "input_audio_buffer.speech_started"
    assert restarted["audio_start_ms"] == committed_to * 1000 // 16_000  # none of the committed audio again
