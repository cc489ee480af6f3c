"""The three sans-I/O server cores under fuzzed frames (``VOXDESK_FUZZ_FRAMES`` each: 3,000 in
``make test``, 100,000 in ``make soak``): each frame gets a normal result or its dialect's
documented error, never an exception, and a valid session still works after them
(:mod:`tests.fuzz.cores` says what is checked). Below it, the bugs the fuzzing found, one test each."""

from __future__ import annotations

import base64
import json

import pytest

from tests.engine.fake_scorer import FakeScorer, script
from tests.engine.wyoming.wire import library_events
from tests.fuzz.cores import DIALECTS, fuzz
from tests.fuzz.counts import FRAMES, SEED
from voxdesk.engine.wire.core import AudioReceived, EndOfAudio
from voxdesk.engine.wire.openai.protocol import OpenAIServerProtocol
from voxdesk.engine.wire.realtime.protocol import ServerProtocol
from voxdesk.engine.wire.session_core import Generation, StartGeneration
from voxdesk.engine.wire.wyoming.framing import Event
from voxdesk.engine.wire.wyoming.protocol import ServerProtocol as WyomingProtocol

INFO = Event("info")
VAD = {"type": "server_vad"}
DEEP = ["[" * 100_000 + "]" * 100_000, '{"type":' * 995 + "1" + "}" * 995]


@pytest.mark.parametrize("text", DEEP, ids=["array", "object"])
def test_json_nested_past_the_recursion_limit_is_invalid_json_in_both_realtime_dialects(text: str) -> None:
    for core in (ServerProtocol("m"), OpenAIServerProtocol("m")):
        core.receive_text(text)
        (error,) = (json.loads(frame) for frame in core.data_to_send())
        assert json.dumps(error).count("invalid_json") == 1, error


@pytest.mark.parametrize("text", DEEP, ids=["array", "object"])
def test_json_nested_past_the_recursion_limit_closes_a_wyoming_connection(text: str) -> None:
    header = WyomingProtocol(INFO)
    header.receive_data(text.encode()[:60_000] + b"\n")
    block = WyomingProtocol(INFO)
    block.receive_data(json.dumps({"type": "transcribe", "data_length": len(text)}).encode() + b"\n" + text.encode())
    assert header.closed and block.closed


def test_a_lone_surrogate_a_client_escaped_is_echoed_as_valid_utf8() -> None:
    vllm = ServerProtocol("m")
    vllm.receive_text('{"type": "\\ud800"}')
    openai = OpenAIServerProtocol("m")
    openai.receive_text('{"type": "session.update", "event_id": "\\udfff", "session": []}')
    for core in (vllm, openai):
        (frame,) = core.data_to_send()
        assert frame.encode().count(b"\\ud") == 1  # the escape, as UTF-8 the socket can write
    wyoming = WyomingProtocol(INFO)
    wyoming.receive_data(b'{"type": "ping", "data": {"text": "\\ud800"}}\n')
    (pong,) = library_events(wyoming.data_to_send())
    assert pong.type == "pong" and pong.data == {"text": "\ud800"}


def test_a_server_vad_turn_the_engine_failed_before_its_speech_stopped_fails_its_item_and_the_next_runs() -> None:
    core = OpenAIServerProtocol("m", scorers=lambda: FakeScorer(script((0.9, 10_000))))
    core.receive_text(json.dumps({"type": "session.update", "session": {"audio": {"input": {"turn_detection": VAD}}}}))
    second = json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(bytes(48_000)).decode()})
    core.receive_text(second)
    assert [type(a) for a in core.events_received()][:2] == [StartGeneration, AudioReceived]  # speech started
    core.generation_failed("the decoder broke")  # before the speech stopped
    core.receive_text('{"type": "input_audio_buffer.commit"}')  # it stops now
    assert core.events_received() == []  # no end of audio for a generation that is over
    kinds = [json.loads(frame)["type"] for frame in core.data_to_send()]
    assert kinds[-1] == "conversation.item.input_audio_transcription.failed"
    assert core.generation is Generation.IDLE  # not waiting for a text that never comes
    core.receive_text(second)
    core.receive_text('{"type": "input_audio_buffer.commit"}')
    actions = [type(a) for a in core.events_received()]
    assert actions[0] is StartGeneration and actions[-1] is EndOfAudio


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_fuzzed_frames_get_a_result_or_a_protocol_error_and_a_valid_session_still_works(dialect: str) -> None:
    report = fuzz(dialect, FRAMES, SEED)
    print(f"\n{report.summary()}")
    assert report.total >= FRAMES and report.valid_sessions == report.connections - len(report.failures)
    assert not report.failures, f"{len(report.failures)} failures; the first:\n\n" + "\n\n".join(report.failures[:3])
