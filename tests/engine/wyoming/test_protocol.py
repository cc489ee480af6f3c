"""The Wyoming server state machine with no I/O: the client's bytes from the official
``wyoming`` package in, actions and the events the library reads back out."""

from __future__ import annotations

import numpy as np
import pytest
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event as LibraryEvent
from wyoming.info import Describe, Info
from wyoming.ping import Ping

from tests.engine.wyoming.wire import library_bytes, library_events
from voxdesk.engine.wire.core import AudioReceived, EndOfAudio
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.engine.wire.wyoming.protocol import Request, ServerProtocol, StartRequest

INFO = ServiceInfo(AsrModel("tiny.en", ("en",)), "0.1.0", {"name": "OpenAI", "url": "https://example.org"})


def pcm(seconds: float, rate: int = 16000, channels: int = 1) -> bytes:
    samples = (np.sin(np.arange(int(seconds * rate)) / 10) * 8000).astype("<i2")
    return np.repeat(samples, channels).tobytes()


def chunk(audio: bytes, rate: int = 16000, width: int = 2, channels: int = 1) -> LibraryEvent:
    return AudioChunk(rate=rate, width=width, channels=channels, audio=audio).event()


def start(rate: int = 16000) -> LibraryEvent:
    return AudioStart(rate=rate, width=2, channels=1).event()


def receive(protocol: ServerProtocol, *events: LibraryEvent) -> list[object]:
    protocol.receive_data(library_bytes(*events))
    return list(protocol.events_received())


def replies(protocol: ServerProtocol) -> list[tuple[str, dict[str, object]]]:
    return [(event.type, event.data) for event in library_events(protocol.data_to_send())]


@pytest.fixture
def protocol() -> ServerProtocol:
    return ServerProtocol(INFO.to_event())


def test_describe_is_answered_with_an_info_home_assistant_accepts(protocol: ServerProtocol) -> None:
    receive(protocol, Describe().event())
    (event,) = library_events(protocol.data_to_send())
    asr = Info.from_event(event).asr
    assert len(asr) == 1 and asr[0].installed and asr[0].supports_transcript_streaming
    assert [(m.name, m.languages, m.installed) for m in asr[0].models] == [("tiny.en", ["en"], True)]
    assert set(event.data) == {"asr", "tts", "handle", "intent", "wake", "mic", "snd"}


def test_a_request_runs_transcribe_audio_stop_and_streams_its_transcript(protocol: ServerProtocol) -> None:
    actions = receive(protocol, Transcribe(language="en").event(), start(), chunk(pcm(0.1)), AudioStop().event())
    assert actions[0] == StartRequest("en")
    assert isinstance(actions[1], AudioReceived) and len(actions[1].samples) == 1600
    assert actions[2:] == [EndOfAudio()]
    assert protocol.request.value == Request.FINALIZING.value
    protocol.send_text("Hello")
    protocol.send_text(" there.")
    protocol.send_transcript("Hello there.", "en")
    assert replies(protocol) == [
        ("transcript-start", {"language": "en"}),
        ("transcript-chunk", {"text": "Hello"}),
        ("transcript-chunk", {"text": " there."}),
        ("transcript", {"text": "Hello there.", "language": "en"}),
        ("transcript-stop", {}),
    ]
    assert protocol.request.value == Request.IDLE.value
    assert receive(protocol, chunk(pcm(0.1)))[0] == StartRequest(None)  # the next request, language reset


def test_audio_chunk_before_audio_start_opens_the_request(protocol: ServerProtocol) -> None:
    actions = receive(protocol, chunk(pcm(0.05)), AudioStop().event())
    assert [type(a) for a in actions] == [StartRequest, AudioReceived, EndOfAudio]


def test_audio_stop_without_audio_gets_an_empty_transcript_at_once(protocol: ServerProtocol) -> None:
    assert receive(protocol, Transcribe(language="en").event(), AudioStop().event()) == []
    assert [event for event, _ in replies(protocol)] == ["transcript-start", "transcript", "transcript-stop"]


def test_other_formats_are_converted_to_16_khz_mono(protocol: ServerProtocol) -> None:
    actions = receive(protocol, start(48000), *(chunk(pcm(0.1, 48000, 2), 48000, 2, 2) for _ in range(10)))
    actions += receive(protocol, AudioStop().event())
    samples = np.concatenate([a.samples for a in actions if isinstance(a, AudioReceived)])
    assert samples.dtype == np.float32 and abs(len(samples) - 16000) <= 16
    assert 0.2 < float(np.abs(samples).max()) < 0.3  # 8000 / 32768, unchanged by the conversion


def test_an_unsupported_format_is_refused_once_and_the_request_still_ends(protocol: ServerProtocol) -> None:
    actions = receive(protocol, start(), chunk(b"\x00" * 4, width=1), chunk(b"\x00" * 4, width=1), chunk(pcm(0.1)))
    assert [type(a) for a in actions] == [StartRequest]  # audio after the refusal is dropped
    ((event, data),) = replies(protocol)
    assert event == "error" and data["code"] == "invalid_audio" and "width 1" in str(data["text"])
    assert receive(protocol, AudioStop().event()) == [EndOfAudio()]


@pytest.mark.parametrize(
    "bad", [chunk(b"\x00" * 3), LibraryEvent("audio-chunk", {"rate": 16000}, b"\x00\x00"), chunk(pcm(0.01), rate=100)]
)
def test_malformed_audio_is_an_invalid_audio_error(protocol: ServerProtocol, bad: LibraryEvent) -> None:
    receive(protocol, start(), bad)
    assert [(event, data["code"]) for event, data in replies(protocol)] == [("error", "invalid_audio")]
    assert not protocol.closed


def test_unknown_events_are_ignored_and_ping_is_answered(protocol: ServerProtocol) -> None:
    assert receive(protocol, LibraryEvent("select-program", {"name": "voxdesk"}), LibraryEvent("future-thing")) == []
    assert replies(protocol) == []
    receive(protocol, Ping(text="hi").event())
    assert replies(protocol) == [("pong", {"text": "hi"})]


def test_audio_while_the_transcript_is_pending_is_an_invalid_event(protocol: ServerProtocol) -> None:
    receive(protocol, chunk(pcm(0.05)), AudioStop().event())
    assert receive(protocol, chunk(pcm(0.05))) == []
    assert [(event, data["code"]) for event, data in replies(protocol)] == [("error", "invalid_event")]
    receive(protocol, Describe().event())  # describe still works
    assert [event for event, _ in replies(protocol)] == ["info"]


def test_audio_beyond_the_connection_limit_is_refused() -> None:
    protocol = ServerProtocol(INFO.to_event(), max_connection_samples=16000)
    actions = receive(protocol, chunk(pcm(0.75)), chunk(pcm(0.75)))
    assert [type(a) for a in actions] == [StartRequest, AudioReceived]
    assert [(event, data["code"]) for event, data in replies(protocol)] == [("error", "buffer_full")]


@pytest.mark.parametrize("garbage", [b"not json\n", b'{"data": {}}\n', b"x" * 70_000])
def test_malformed_framing_closes_the_connection(protocol: ServerProtocol, garbage: bytes) -> None:
    protocol.receive_data(garbage)
    assert protocol.closed and protocol.data_to_send() == b""
    protocol.receive_data(library_bytes(Describe().event()))  # nothing more is read
    assert protocol.data_to_send() == b""


def test_an_unknown_model_name_is_served_by_the_one_model(protocol: ServerProtocol) -> None:
    actions = receive(protocol, Transcribe(name="nope", language="en").event(), start())
    assert actions == [StartRequest("en")] and replies(protocol) == []
